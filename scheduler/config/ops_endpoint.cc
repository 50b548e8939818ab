#include "scheduler/config/ops_endpoint.h"

#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "core/log.h"
#include "kube/api_access.h"
#include "kube/client.h"
#include "net/cert.h"

namespace copse::scheduler::config {

namespace {

constexpr std::string_view kEndpointLog = "ops";

Result<std::string> ReadFile(const std::string& field, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return MakeError(ErrorCode::kNotFound, field + ": cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct FileCertificate {
  std::string cert_pem;
  std::string key_pem;
};

Result<FileCertificate> ReadCertificateFiles(
    const OpsServerConfig& config, const std::function<std::string(std::string_view)>& name) {
  auto cert = ReadFile(name("tlsCertFile"), config.tls_cert_file);
  if (!cert.ok()) return std::move(cert).error();
  auto key = ReadFile(name("tlsPrivateKeyFile"), config.tls_private_key_file);
  if (!key.ok()) return std::move(key).error();
  if (Status pair = net::CheckKeyPair(*cert, *key); !pair.ok()) {
    return MakeError(ErrorCode::kInvalid, name("tlsCertFile") + " " + config.tls_cert_file +
                                              " and " + name("tlsPrivateKeyFile") + " " +
                                              config.tls_private_key_file + ": " +
                                              pair.error().message);
  }
  return FileCertificate{std::move(cert).value(), std::move(key).value()};
}

Result<net::Certificate> SelfSigned() {
  net::CertificateOptions options;
  options.common_name = "copse-scheduler";
  options.organization = "copse";
  options.dns_names = {"localhost"};
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) == 0 && host[0] != '\0' &&
      std::string_view(host) != "localhost") {
    options.dns_names.emplace_back(host);
  }
  options.ip_addresses = {"127.0.0.1", "::1"};
  options.validity = std::chrono::hours(24 * 365);
  return net::SelfSignedCertificate(options);
}

// A client for the ops port's API calls: kube's settings for delegated
// authentication and authorization (200/s, burst 400, 10 s), the
// scheduler's access table.
Result<kube::ClientConfig> DelegationConnection(const std::string& kubeconfig,
                                                const std::string& field,
                                                const kube::ClientConfig& fallback) {
  kube::ClientConfig config = fallback;
  if (!kubeconfig.empty()) {
    auto loaded = kube::LoadKubeconfigFile(kubeconfig);
    if (!loaded.ok()) {
      Error error = std::move(loaded).error();
      error.message = field + " " + kubeconfig + ": " + error.message;
      return error;
    }
    config = std::move(loaded).value();
  }
  config.api_access = &kube::SchedulerApiAccess();
  config.qps = 200;
  config.burst = 400;
  config.timeout = std::chrono::seconds(10);
  config.max_connections = 4;
  config.pipelined_connections = 0;
  return config;
}

}  // namespace

struct OpsEndpoint::Impl {
  std::unique_ptr<DelegatedAuth> auth;
  std::shared_ptr<kube::Client> authentication_client;
  std::shared_ptr<kube::Client> authorization_client;
  std::unique_ptr<ClientCaWatcher> ca_watcher;
  std::unique_ptr<OpsServer> secure;
  std::unique_ptr<OpsServer> plain;
  std::vector<OpsServer*> servers;

  mutable std::mutex cert_mu;
  std::string cert_pem;

  // The certificate files' reloader.
  std::thread reloader;
  std::mutex reload_mu;
  std::condition_variable reload_cv;
  bool stopping = false;
  std::atomic<uint64_t> checks{0};

  void Reload(const OpsServerConfig& config, std::chrono::milliseconds interval,
              std::function<std::string(std::string_view)> name);
};

void OpsEndpoint::Impl::Reload(const OpsServerConfig& config, std::chrono::milliseconds interval,
                               std::function<std::string(std::string_view)> name) {
  std::string last_error;
  std::unique_lock<std::mutex> lock(reload_mu);
  while (!reload_cv.wait_for(lock, interval, [this] { return stopping; })) {
    struct Counted {
      std::atomic<uint64_t>& checks;
      ~Counted() { checks.fetch_add(1); }
    } counted{checks};
    auto files = ReadCertificateFiles(config, name);
    if (!files.ok()) {
      // Once per distinct problem: a file being replaced may be missing for a moment.
      if (files.error().message != last_error) {
        LogWarning(kEndpointLog, "serving certificate not reloaded: " + files.error().message);
      }
      last_error = files.error().message;
      continue;
    }
    last_error.clear();
    {
      std::lock_guard<std::mutex> cert_lock(cert_mu);
      if (files->cert_pem == cert_pem) continue;
    }
    if (Status set = secure->SetCertificate(files->cert_pem, files->key_pem); !set.ok()) {
      LogWarning(kEndpointLog, "serving certificate not reloaded: " + set.error().message);
      continue;
    }
    std::lock_guard<std::mutex> cert_lock(cert_mu);
    cert_pem = files->cert_pem;
    Log(0, kEndpointLog, "serving the new certificate of " + config.tls_cert_file);
  }
}

OpsEndpoint::OpsEndpoint(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

OpsEndpoint::~OpsEndpoint() { Stop(); }

Result<std::unique_ptr<OpsEndpoint>> OpsEndpoint::Start(const OpsServerConfig& config,
                                                        const kube::ClientConfig& connection,
                                                        kube::IoThread& io,
                                                        OpsEndpointOptions options) {
  std::function<std::string(std::string_view)> name = options.name;
  if (!name) name = [](std::string_view field) { return "opsServer." + std::string(field); };
  auto impl = std::make_unique<Impl>();

  // The serving certificate.
  std::string cert_pem;
  std::string key_pem;
  if (!config.tls_cert_file.empty()) {
    auto files = ReadCertificateFiles(config, name);
    if (!files.ok()) return std::move(files).error();
    cert_pem = std::move(files->cert_pem);
    key_pem = std::move(files->key_pem);
  } else {
    auto made = SelfSigned();
    if (!made.ok()) return std::move(made).error();
    cert_pem = std::move(made->cert_pem);
    key_pem = std::move(made->key_pem);
  }
  impl->cert_pem = cert_pem;

  // The API calls of delegation.
  const OpsAuthenticationConfig& authn = config.authentication;
  const OpsAuthorizationConfig& authz = config.authorization;
  auto authn_config =
      DelegationConnection(authn.kubeconfig, name("authentication.kubeconfig"), connection);
  if (!authn_config.ok()) return std::move(authn_config).error();
  auto authn_client = kube::Client::Create(*authn_config, io.executor());
  if (!authn_client.ok()) return std::move(authn_client).error();
  impl->authentication_client = std::move(authn_client).value();
  if (authz.kubeconfig == authn.kubeconfig) {
    impl->authorization_client = impl->authentication_client;
  } else {
    auto authz_config =
        DelegationConnection(authz.kubeconfig, name("authorization.kubeconfig"), connection);
    if (!authz_config.ok()) return std::move(authz_config).error();
    auto authz_client = kube::Client::Create(*authz_config, io.executor());
    if (!authz_client.ok()) return std::move(authz_client).error();
    impl->authorization_client = std::move(authz_client).value();
  }

  DelegatedAuthOptions auth_options;
  auth_options.token_cache_ttl = authn.token_cache_ttl;
  auth_options.allow_cache_ttl = authz.allow_cache_ttl;
  auth_options.deny_cache_ttl = authz.deny_cache_ttl;
  auth_options.always_allow_paths = authz.always_allow_paths;
  auth_options.always_allow_groups = authz.always_allow_groups;
  auth_options.max_in_flight = std::max<size_t>(options.max_in_flight, 1);
  auth_options.clock = options.clock;
  impl->auth = std::make_unique<DelegatedAuth>(
      std::move(auth_options),
      ApiReviewers(impl->authentication_client, impl->authorization_client, io));

  // The client CA: a file, or the cluster's (looked up once, then watched).
  if (!authn.client_ca_file.empty()) {
    auto ca = ReadFile(name("authentication.clientCAFile"), authn.client_ca_file);
    if (!ca.ok()) return std::move(ca).error();
    auto checked = net::InspectCertificate(*ca);
    if (!checked.ok()) {
      return MakeError(ErrorCode::kInvalid, name("authentication.clientCAFile") + " " +
                                                authn.client_ca_file + ": " +
                                                checked.error().message);
    }
    impl->auth->SetClientCa(std::move(ca).value());
  } else if (!authn.skip_lookup) {
    const kube::ResourceRef config_maps{"", "v1", "configmaps", true};
    Result<std::string> found = io.Run(impl->authentication_client->Get(
        config_maps, std::string(kAuthenticationConfigMapNamespace),
        std::string(kAuthenticationConfigMapName)));
    if (found.ok()) {
      impl->auth->SetClientCa(ClientCaOf(*found));
      if (!impl->auth->client_ca().empty()) {
        Log(1, kEndpointLog,
            "client certificates are verified against the cluster's client CA (ConfigMap "
            "kube-system/extension-apiserver-authentication)");
      }
    } else if (found.error().code != ErrorCode::kNotFound) {
      const std::string message =
          "cannot read ConfigMap kube-system/extension-apiserver-authentication (the cluster's "
          "client CA): " +
          found.error().ToString() +
          ". Bind the Role kube-system/extension-apiserver-authentication-reader to copse's "
          "user, or set " +
          name("authentication.skipLookup");
      if (!authn.tolerate_lookup_failure) return MakeError(found.error().code, message);
      LogWarning(kEndpointLog, message + "; going on without client certificates until it can");
    }
    impl->ca_watcher = std::make_unique<ClientCaWatcher>(impl->authentication_client, *impl->auth);
    impl->ca_watcher->Start();
  }

  OpsServerOptions secure;
  secure.address = config.bind_address;
  secure.port = config.secure_port;
  // One thread more than the calls that may wait on the API server: the
  // probes' paths are always answered.
  secure.threads = static_cast<int>(std::max<size_t>(options.max_in_flight, 1)) + 1;
  secure.tls_cert_pem = cert_pem;
  secure.tls_key_pem = key_pem;
  DelegatedAuth* auth = impl->auth.get();
  secure.authorize = [auth](const AccessRequest& request) { return auth->Decide(request); };
  auto started = OpsServer::Start(std::move(secure));
  if (!started.ok()) {
    Error error = std::move(started).error();
    error.message = name("securePort") + ": " + error.message;
    return error;
  }
  impl->secure = std::move(started).value();
  impl->servers.push_back(impl->secure.get());
  if (config.port != 0) {
    OpsServerOptions plain;
    plain.address = config.address;
    plain.port = config.port;
    auto plain_started = OpsServer::Start(std::move(plain));
    if (!plain_started.ok()) {
      Error error = std::move(plain_started).error();
      error.message = name("port") + ": " + error.message;
      return error;
    }
    impl->plain = std::move(plain_started).value();
    impl->servers.push_back(impl->plain.get());
  }
  if (!config.tls_cert_file.empty()) {
    Impl* raw = impl.get();
    impl->reloader = std::thread([raw, config, interval = options.certificate_reload_interval,
                                  name] { raw->Reload(config, interval, name); });
  }
  return std::unique_ptr<OpsEndpoint>(new OpsEndpoint(std::move(impl)));
}

void OpsEndpoint::Stop() {
  if (!impl_) return;
  {
    std::lock_guard<std::mutex> lock(impl_->reload_mu);
    impl_->stopping = true;
  }
  impl_->reload_cv.notify_all();
  if (impl_->reloader.joinable()) impl_->reloader.join();
  for (OpsServer* server : impl_->servers) server->Stop();
  if (impl_->ca_watcher) impl_->ca_watcher->Stop();
}

copse::Status OpsEndpoint::AddHealthzCheck(std::string name, OpsServer::Check check) {
  for (OpsServer* server : impl_->servers) {
    if (Status s = server->AddHealthzCheck(name, check); !s.ok()) return s;
  }
  return Status::Ok();
}

copse::Status OpsEndpoint::AddLivezCheck(std::string name, OpsServer::Check check) {
  for (OpsServer* server : impl_->servers) {
    if (Status s = server->AddLivezCheck(name, check); !s.ok()) return s;
  }
  return Status::Ok();
}

copse::Status OpsEndpoint::AddReadyzCheck(std::string name, OpsServer::Check check) {
  for (OpsServer* server : impl_->servers) {
    if (Status s = server->AddReadyzCheck(name, check); !s.ok()) return s;
  }
  return Status::Ok();
}

void OpsEndpoint::SetMetricsHandler(OpsServer::MetricsHandler handler) {
  for (OpsServer* server : impl_->servers) server->SetMetricsHandler(handler);
}

std::string OpsEndpoint::secure_url() const { return impl_->secure->url(); }

std::string OpsEndpoint::plain_url() const { return impl_->plain ? impl_->plain->url() : ""; }

std::string OpsEndpoint::certificate_pem() const {
  std::lock_guard<std::mutex> lock(impl_->cert_mu);
  return impl_->cert_pem;
}

DelegatedAuth& OpsEndpoint::auth() { return *impl_->auth; }

uint64_t OpsEndpoint::certificate_checks() const { return impl_->checks.load(); }

}  // namespace copse::scheduler::config
