#include "grove/webhook/cert_rotator.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "core/log.h"
#include "kube/certificates.h"
#include "kube/controller/sync.h"
#include "kube/informer.h"
#include "kube/kubeconfig.h"

namespace copse::grove::webhook {
namespace {

using Json = nlohmann::json;
using SystemTime = std::chrono::system_clock::time_point;

constexpr const char* kLog = "webhook-cert";

// The four keys of the Secret, decoded.
struct SecretData {
  std::string ca_crt, ca_key, tls_crt, tls_key;
};

std::string DataField(const Json& data, const char* key) {
  auto it = data.find(key);
  if (it == data.end() || !it->is_string()) return {};
  auto decoded = kube::DecodeBase64(it->get<std::string>());
  return decoded.ok() ? std::move(decoded).value() : std::string();
}

SecretData ReadData(const Json& secret) {
  SecretData out;
  auto data = secret.find("data");
  if (data == secret.end() || !data->is_object()) return out;
  out.ca_crt = DataField(*data, "ca.crt");
  out.ca_key = DataField(*data, "ca.key");
  out.tls_crt = DataField(*data, "tls.crt");
  out.tls_key = DataField(*data, "tls.key");
  return out;
}

// The first PEM certificate block of a bundle.
std::string FirstPem(const std::string& bundle) {
  constexpr std::string_view kEnd = "-----END CERTIFICATE-----";
  const size_t end = bundle.find(kEnd);
  if (end == std::string::npos) return {};
  size_t stop = end + kEnd.size();
  if (stop < bundle.size() && bundle[stop] == '\n') ++stop;
  return bundle.substr(0, stop);
}

}  // namespace

struct CertRotator::Impl : std::enable_shared_from_this<CertRotator::Impl> {
  std::shared_ptr<kube::Client> client;
  CertRotatorOptions options;
  OnCertificate on_certificate;
  std::shared_ptr<const Clock> clock;
  std::string dns_name;
  std::vector<std::string> dns_names;

  std::unique_ptr<kube::Informer> secrets;
  std::unique_ptr<kube::Informer> configs;

  mutable std::mutex mu;
  std::condition_variable cv;
  bool writing = false;
  bool stopping = false;
  bool dirty = false;
  std::thread writer;
  std::string served_cert;  // what on_certificate got last
  bool serving = false;
  bool reported_missing_config = false;
  CertRotatorStats stats;

  void Wake() {
    std::lock_guard lock(mu);
    dirty = true;
    cv.notify_all();
  }

  // Step 1: every replica serves the Secret's certificate.
  void OnSecret(const kube::ObjectPtr& object) {
    const Json secret = Json::parse(object->raw, nullptr, false);
    SecretData data = secret.is_object() ? ReadData(secret) : SecretData{};
    bool changed = false;
    {
      std::lock_guard lock(mu);
      changed = !data.tls_crt.empty() && !data.tls_key.empty() && data.tls_crt != served_cert;
    }
    if (changed) {
      // A pair that does not load is left as it is: the leader replaces it.
      Status served = on_certificate(data.tls_crt, data.tls_key);
      if (served.ok()) {
        Log(1, kLog,
            "serving the certificate of Secret " + options.secret_namespace + "/" +
                options.secret_name);
        std::lock_guard lock(mu);
        served_cert = data.tls_crt;
        serving = true;
        ++stats.certificates_served;
      } else {
        LogWarning(kLog, "the certificate in Secret " + options.secret_namespace + "/" +
                             options.secret_name + " cannot be served: " + served.error().message);
      }
    }
    Wake();
  }

  kube::CertificateRequest ServingRequest(SystemTime now) const {
    kube::CertificateRequest request;
    request.common_name = dns_name;
    request.dns_names = dns_names;
    request.ip_addresses = options.ip_addresses;
    request.server_auth = true;
    request.not_before = now - std::chrono::hours(1);  // clock skew between nodes
    request.not_after = now + options.cert_validity;
    return request;
  }

  // Step 2: the Secret holds a CA and a serving certificate valid `lookahead` from now.
  // Returns the CA bundle (ca.crt) it holds afterwards.
  Result<std::string> EnsureSecret() {
    const kube::ResourceRef& ref = kSecrets;
    Result<std::string> got = kube::controller::Await(
        *client, client->Get(ref, options.secret_namespace, options.secret_name));
    if (!got.ok() && got.error().code != ErrorCode::kNotFound) return got.error();
    Json secret;
    SecretData data;
    if (got.ok()) {
      secret = Json::parse(*got, nullptr, false);
      if (!secret.is_object()) return MakeError(ErrorCode::kInternal, "the Secret is not JSON");
      data = ReadData(secret);
    }
    const SystemTime now = clock->WallNow();
    const SystemTime ahead = now + options.lookahead;

    // The signing CA is the bundle's first certificate; it must sign itself and last.
    const std::string signing_ca = FirstPem(data.ca_crt);
    const bool ca_ok = !signing_ca.empty() &&
                       kube::VerifyCertificate(signing_ca, data.ca_key, signing_ca, "", ahead).ok();
    const bool cert_ok =
        ca_ok &&
        kube::VerifyCertificate(data.tls_crt, data.tls_key, signing_ca, dns_name, ahead).ok();
    if (ca_ok && cert_ok) return data.ca_crt;

    SecretData next = data;
    if (!ca_ok) {
      kube::CertificateRequest request;
      request.common_name = "copse-grove-webhook-ca";
      request.is_ca = true;
      request.not_before = now - std::chrono::hours(1);
      request.not_after = now + options.ca_validity;
      auto ca = kube::IssueCertificate(request);
      if (!ca.ok()) return ca.error();
      next.ca_crt = ca->cert_pem;
      next.ca_key = ca->key_pem;
      // The old CA stays trusted while it is valid: replicas still serving a
      // certificate it signed keep working until they load the new one.
      if (!signing_ca.empty() &&
          kube::VerifyCertificate(signing_ca, data.ca_key, signing_ca, "", now).ok()) {
        next.ca_crt += signing_ca;
      }
      std::lock_guard lock(mu);
      ++stats.ca_generations;
    }
    kube::CertificateAndKey issuer{FirstPem(next.ca_crt), next.ca_key};
    auto cert = kube::IssueCertificate(ServingRequest(now), &issuer);
    if (!cert.ok()) return cert.error();
    next.tls_crt = cert->cert_pem;
    next.tls_key = cert->key_pem;
    {
      std::lock_guard lock(mu);
      ++stats.cert_generations;
    }
    Log(0, kLog,
        std::string(got.ok() ? "renewing" : "creating") + " the webhook certificate in Secret " +
            options.secret_namespace + "/" + options.secret_name +
            (ca_ok ? "" : " (with a new CA)") + " for " + dns_name);

    Json encoded = {{"ca.crt", kube::EncodeBase64(next.ca_crt)},
                    {"ca.key", kube::EncodeBase64(next.ca_key)},
                    {"tls.crt", kube::EncodeBase64(next.tls_crt)},
                    {"tls.key", kube::EncodeBase64(next.tls_key)}};
    Result<std::string> written = MakeError(ErrorCode::kInternal, "not written");
    if (got.ok()) {
      if (!secret["data"].is_object()) secret["data"] = Json::object();
      for (auto it = encoded.begin(); it != encoded.end(); ++it) secret["data"][it.key()] = *it;
      // metadata.resourceVersion is kept: the update is conditional.
      written = kube::controller::Await(
          *client,
          client->Update(ref, options.secret_namespace, options.secret_name, secret.dump()));
    } else {
      Json fresh = {{"apiVersion", "v1"},
                    {"kind", "Secret"},
                    {"metadata",
                     {{"name", options.secret_name},
                      {"namespace", options.secret_namespace},
                      {"labels", {{"app.kubernetes.io/managed-by", "copse-grove"}}}}},
                    {"type", "kubernetes.io/tls"},
                    {"data", encoded}};
      written = kube::controller::Await(
          *client, client->Create(ref, options.secret_namespace, fresh.dump()));
    }
    if (!written.ok()) return written.error();
    std::lock_guard lock(mu);
    ++stats.secret_writes;
    return next.ca_crt;
  }

  // Step 3: every webhook of the configuration trusts `bundle`.
  Status EnsureBundle(const std::string& bundle) {
    if (options.webhook_configuration.empty()) return Status::Ok();
    Result<std::string> got = kube::controller::Await(
        *client, client->Get(kValidatingWebhookConfigurations, "", options.webhook_configuration));
    if (!got.ok()) {
      if (got.error().code != ErrorCode::kNotFound) return got.error();
      std::lock_guard lock(mu);
      if (!reported_missing_config) {
        reported_missing_config = true;
        LogWarning(kLog, "ValidatingWebhookConfiguration " + options.webhook_configuration +
                             " does not exist (yet): its caBundle is set once it is created");
      }
      return Status::Ok();
    }
    Json config = Json::parse(*got, nullptr, false);
    if (!config.is_object())
      return MakeError(ErrorCode::kInternal, "the configuration is not JSON");
    const std::string encoded = kube::EncodeBase64(bundle);
    bool changed = false;
    if (auto webhooks = config.find("webhooks"); webhooks != config.end() && webhooks->is_array()) {
      for (auto& webhook : *webhooks) {
        if (!webhook.is_object()) continue;
        Json& client_config = webhook["clientConfig"];
        if (!client_config.is_object()) client_config = Json::object();
        if (client_config.value("caBundle", "") != encoded) {
          client_config["caBundle"] = encoded;
          changed = true;
        }
      }
    }
    if (!changed) return Status::Ok();
    Result<std::string> written = kube::controller::Await(
        *client, client->Update(kValidatingWebhookConfigurations, "", options.webhook_configuration,
                                config.dump()));
    if (!written.ok()) return written.error();
    Log(0, kLog,
        "set the caBundle of ValidatingWebhookConfiguration " + options.webhook_configuration);
    std::lock_guard lock(mu);
    ++stats.bundle_writes;
    reported_missing_config = false;
    return Status::Ok();
  }

  Status Reconcile() {
    auto bundle = EnsureSecret();
    if (!bundle.ok()) return bundle.error();
    return EnsureBundle(*bundle);
  }

  // Step 4.
  void WriterLoop() {
    std::chrono::milliseconds backoff = options.retry_initial;
    std::unique_lock lock(mu);
    while (writing && !stopping) {
      dirty = false;
      lock.unlock();
      Status status = Reconcile();
      lock.lock();
      ++stats.checks;
      std::chrono::milliseconds wait = options.check_interval;
      if (status.ok()) {
        backoff = options.retry_initial;
      } else {
        LogWarning(kLog, "webhook certificate: " + status.error().ToString() + "; retrying in " +
                             std::to_string(backoff.count()) + " ms");
        wait = backoff;
        backoff = std::min(backoff * 2, options.retry_max);
      }
      cv.wait_for(lock, wait, [&] { return dirty || !writing || stopping; });
    }
  }
};

CertRotator::CertRotator(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

CertRotator::~CertRotator() { Stop(); }

Result<std::unique_ptr<CertRotator>> CertRotator::Start(std::shared_ptr<kube::Client> client,
                                                        CertRotatorOptions options,
                                                        OnCertificate on_certificate) {
  if (client == nullptr) return MakeError(ErrorCode::kInvalid, "webhook certificate: no client");
  if (options.secret_namespace.empty() || options.secret_name.empty()) {
    return MakeError(ErrorCode::kInvalid,
                     "webhook certificate: the Secret's namespace and name are required");
  }
  if (options.service_name.empty()) {
    return MakeError(ErrorCode::kInvalid,
                     "webhook certificate: the webhook Service's name is required");
  }
  if (options.service_namespace.empty()) options.service_namespace = options.secret_namespace;
  auto impl = std::make_shared<Impl>();
  impl->client = client;
  impl->options = options;
  impl->on_certificate = std::move(on_certificate);
  impl->clock = options.clock;
  if (impl->clock == nullptr) {
    impl->clock = std::shared_ptr<const Clock>(&RealClock::Get(), [](const Clock*) {});
  }
  const std::string& svc = options.service_name;
  const std::string& ns = options.service_namespace;
  impl->dns_name = svc + "." + ns + ".svc";
  impl->dns_names = {impl->dns_name, impl->dns_name + ".cluster.local", svc + "." + ns, svc};
  for (const auto& extra : options.extra_dns_names) impl->dns_names.push_back(extra);

  Impl* raw = impl.get();
  kube::InformerOptions secret_options;
  secret_options.resource = kSecrets;
  secret_options.namespace_ = options.secret_namespace;
  secret_options.field_selector = "metadata.name=" + options.secret_name;
  secret_options.on_error = [](const Error& e) {
    LogWarning(kLog, "watching the Secret: " + e.message);
  };
  impl->secrets = std::make_unique<kube::Informer>(client, secret_options);
  kube::EventHandler on_secret;
  on_secret.on_add = [raw](const kube::ObjectPtr& o) { raw->OnSecret(o); };
  on_secret.on_update = [raw](const kube::ObjectPtr&, const kube::ObjectPtr& o) {
    raw->OnSecret(o);
  };
  on_secret.on_delete = [raw](const kube::ObjectPtr&) { raw->Wake(); };
  impl->secrets->AddEventHandler(std::move(on_secret));
  impl->secrets->Start();

  if (!options.webhook_configuration.empty()) {
    kube::InformerOptions config_options;
    config_options.resource = kValidatingWebhookConfigurations;
    config_options.field_selector = "metadata.name=" + options.webhook_configuration;
    config_options.on_error = [](const Error& e) {
      LogWarning(kLog, "watching the webhook configuration: " + e.message);
    };
    impl->configs = std::make_unique<kube::Informer>(client, config_options);
    kube::EventHandler on_config;
    on_config.on_add = [raw](const kube::ObjectPtr&) { raw->Wake(); };
    on_config.on_update = [raw](const kube::ObjectPtr&, const kube::ObjectPtr&) { raw->Wake(); };
    impl->configs->AddEventHandler(std::move(on_config));
    impl->configs->Start();
  }
  return std::unique_ptr<CertRotator>(new CertRotator(std::move(impl)));
}

void CertRotator::StartWriting() {
  std::lock_guard lock(impl_->mu);
  if (impl_->writing || impl_->stopping) return;
  impl_->writing = true;
  impl_->dirty = true;
  impl_->writer = std::thread([impl = impl_] { impl->WriterLoop(); });
}

void CertRotator::StopWriting() {
  std::thread writer;
  {
    std::lock_guard lock(impl_->mu);
    impl_->writing = false;
    impl_->cv.notify_all();
    writer = std::move(impl_->writer);
  }
  if (writer.joinable()) writer.join();
}

void CertRotator::Stop() {
  if (!impl_) return;
  {
    std::lock_guard lock(impl_->mu);
    if (impl_->stopping) return;
    impl_->stopping = true;
  }
  StopWriting();
  if (impl_->configs) impl_->configs->Stop();
  if (impl_->secrets) impl_->secrets->Stop();
}

bool CertRotator::Serving() const {
  std::lock_guard lock(impl_->mu);
  return impl_->serving;
}

std::string CertRotator::DnsName() const { return impl_->dns_name; }

CertRotatorStats CertRotator::stats() const {
  std::lock_guard lock(impl_->mu);
  return impl_->stats;
}

}  // namespace copse::grove::webhook
