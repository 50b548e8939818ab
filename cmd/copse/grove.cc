// `copse grove`: the Grove backend alone, against any API server; in a
// cluster, the operator Deployment of deploy/manifests.
//   copse grove (--kubeconfig F | --in-cluster) [--config operator-config.yaml]
//               [--namespace NS] [--install-crds] [--initc-image IMG] [--workers N]
//               [--leader-elect [--lease-namespace NS] [--lease-name N]]
//               [--webhook-port P [--webhook-cert F --webhook-key F
//                | --register-webhook [--webhook-url URL]
//                | --webhook-namespace NS --webhook-secret S --webhook-service SVC
//                  --webhook-configuration C]] [-v N]
// Without --webhook-cert or --register-webhook the webhook's certificate is
// made and rotated in a Secret (grove/webhook/cert_rotator.h).
// `copse initc`: the startup-order init container grove puts into pods.
//   copse initc --podcliques=<pclq>:<minAvailable>[,...] [--namespace NS]
//               [--kubeconfig F] [--timeout-seconds S]
// and the `grove` benchmark scenario (RunGroveBench) for `copse bench`.
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <boost/program_options.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <future>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "apiserver/apiserver.h"
#include "apiserver/node_simulator.h"
#include "apiserver/store.h"
#include "apiserver/synthetic.h"
#include "bench/bench.h"
#include "cmd/copse/commands.h"
#include "cmd/copse/version.h"
#include "core/log.h"
#include "core/quantity.h"
#include "grove/api/crds.h"
#include "grove/api/names.h"
#include "grove/api/types.h"
#include "grove/backend/manager.h"
#include "grove/initc/image.h"
#include "grove/initc/initc.h"
#include "grove/operator.h"
#include "grove/webhook/cert_rotator.h"
#include "grove/webhook/webhook.h"
#include "kube/api_access.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "kube/leader_election.h"
#include "scheduler/config/ops_server.h"
#include "scheduler/scheduler.h"

namespace copse::cmd {
using namespace copse::scheduler;  // the commands wire the scheduler library together

namespace po = boost::program_options;

namespace {

std::string ReadFile(const std::string& path, bool* ok) {
  std::ifstream in(path);
  *ok = static_cast<bool>(in);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

Result<kube::ClientConfig> LoadClientConfig(const std::string& kubeconfig, bool in_cluster) {
  if (in_cluster) return kube::LoadInClusterConfig();
  if (!kubeconfig.empty()) return kube::LoadKubeconfigFile(kubeconfig);
  return kube::LoadDefaultKubeconfig();
}

// The startup-order init container's image (grove/initc/image.h): by default
// the image this operator runs from, read from its own Pod.
std::string InitcImage(const std::string& explicit_image, bool in_cluster,
                       const std::string& service_account_namespace, kube::IoThread& io,
                       kube::Client& client) {
  grove::initc::ImageSources sources;
  sources.explicit_image = explicit_image;
  sources.version = std::string(Version());
  if (const char* env = std::getenv("GROVE_INIT_CONTAINER_IMAGE")) {
    sources.grove_env_repository = env;
  }
  if (explicit_image.empty() && sources.grove_env_repository.empty()) {
    const char* pod_name = std::getenv("POD_NAME");
    const char* pod_namespace = std::getenv("POD_NAMESPACE");
    char host[256] = {0};
    gethostname(host, sizeof(host) - 1);
    // A pod's hostname is its name unless its spec sets another.
    const std::string name = pod_name != nullptr ? pod_name : (in_cluster ? host : "");
    const std::string pod_ns =
        pod_namespace != nullptr ? pod_namespace : (in_cluster ? service_account_namespace : "");
    if (!name.empty() && !pod_ns.empty()) {
      auto pod = io.Run(client.Get(kube::resources::kPods, pod_ns, name));
      if (pod.ok()) {
        sources.own_pod_json = std::move(pod).value();
      } else {
        LogWarning("grove", "reading the operator's own pod " + pod_ns + "/" + name +
                                " for the init container's image: " + pod.error().message);
      }
    }
  }
  const grove::initc::ResolvedImage image = grove::initc::ResolveImage(sources);
  Log(0, "grove", "startup-order init container image " + image.image + " (" + image.source + ")");
  return image.image;
}

}  // namespace

int RunGrove(int argc, char** argv) {
  std::string kubeconfig, config_path, ns, initc_image;
  std::string webhook_cert, webhook_key, webhook_url, webhook_address = "0.0.0.0";
  std::string webhook_namespace = "copse-system", webhook_secret = "copse-grove-webhook-cert";
  std::string webhook_service = "copse-grove-webhook", webhook_configuration = "copse-grove";
  std::string lease_namespace = "copse-system", lease_name = "copse-grove";
  bool in_cluster = false, install_crds = false, register_webhook = false, leader_elect = false;
  int workers = 4, webhook_port = 0, verbosity = 1, ops_port = 0;
  std::string ops_address = "0.0.0.0";
  po::options_description desc("copse grove [flags]");
  desc.add_options()("help,h", "show this help")(
      "kubeconfig", po::value(&kubeconfig),
      "kubeconfig file (default: $KUBECONFIG, ~/.kube/config)")(
      "in-cluster", po::bool_switch(&in_cluster), "use the pod's service account")(
      "config", po::value(&config_path),
      "OperatorConfiguration (YAML) with scheduler.profiles; default: copse-scheduler")(
      "namespace", po::value(&ns), "watch one namespace (default: all)")(
      "install-crds", po::bool_switch(&install_crds), "create the grove CRDs if missing")(
      "initc-image", po::value(&initc_image),
      "image of the startup-order init container (runs copse initc); default: "
      "$GROVE_INIT_CONTAINER_IMAGE:<version>, else the operator's own image (read from its "
      "Pod), else ghcr.io/copse-dev/copse:<version>")(
      "workers", po::value(&workers)->default_value(workers), "workers per controller")(
      "webhook-port", po::value(&webhook_port)->default_value(0),
      "serve the validating webhook on this HTTPS port (0: off)")(
      "webhook-address", po::value(&webhook_address)->default_value(webhook_address),
      "address the webhook listens on")(
      "webhook-cert", po::value(&webhook_cert),
      "serving certificate (PEM file, e.g. from cert-manager); default: made and rotated in "
      "the Secret --webhook-secret")("webhook-key", po::value(&webhook_key),
                                     "serving key (PEM file)")(
      "webhook-namespace", po::value(&webhook_namespace)->default_value(webhook_namespace),
      "namespace of the webhook's Secret and Service")(
      "webhook-secret", po::value(&webhook_secret)->default_value(webhook_secret),
      "Secret holding the webhook's CA and serving certificate (ca.crt, ca.key, tls.crt, "
      "tls.key)")("webhook-service", po::value(&webhook_service)->default_value(webhook_service),
                  "Service the API server calls the webhook through (the certificate names "
                  "<service>.<namespace>.svc)")(
      "webhook-configuration",
      po::value(&webhook_configuration)->default_value(webhook_configuration),
      "ValidatingWebhookConfiguration whose caBundle is kept current")(
      "register-webhook", po::bool_switch(&register_webhook),
      "outside a cluster: a self-signed certificate in memory, and create/update the "
      "ValidatingWebhookConfiguration with --webhook-url")(
      "webhook-url", po::value(&webhook_url),
      "URL the API server calls (default https://127.0.0.1:<port>/webhooks/validate-podcliqueset)")(
      "v", po::value(&verbosity)->default_value(verbosity),
      "log level (0 errors, 1 actions, 2 details)")(
      "leader-elect", po::bool_switch(&leader_elect),
      "run the operator and webhook only while holding the Lease (for several replicas)")(
      "lease-namespace", po::value(&lease_namespace)->default_value(lease_namespace),
      "namespace of the leader Lease")(
      "lease-name", po::value(&lease_name)->default_value(lease_name), "name of the leader Lease")(
      "ops-port", po::value(&ops_port)->default_value(ops_port),
      "serve /healthz, /livez and /readyz over plain HTTP on this port (0: off); every replica "
      "answers /healthz, /readyz passes once this replica leads and serves")(
      "ops-address", po::value(&ops_address)->default_value(ops_address),
      "address the ops endpoint listens on");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(desc).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "copse grove: " << e.what() << "\n" << desc;
    return 2;
  }
  if (vm.count("help")) {
    std::cout << desc;
    return 0;
  }
  auto bad_flag = [](const std::string& message) {
    std::cerr << "copse grove: " << message << "\n";
    return 2;
  };
  if (workers < 1 || workers > 64) return bad_flag("--workers: must be between 1 and 64");
  if (webhook_port < 0 || webhook_port > 65535)
    return bad_flag("--webhook-port: must be between 0 and 65535");
  if (ops_port < 0 || ops_port > 65535) return bad_flag("--ops-port: must be between 0 and 65535");
  if (register_webhook && webhook_port == 0)
    return bad_flag("--register-webhook: needs --webhook-port");
  if (webhook_cert.empty() != webhook_key.empty()) {
    return bad_flag("--webhook-cert/--webhook-key: give both or neither");
  }
  if (register_webhook && !webhook_cert.empty()) {
    return bad_flag("--register-webhook: not with --webhook-cert (it makes its own certificate)");
  }
  if (webhook_namespace.empty() || webhook_secret.empty() || webhook_service.empty() ||
      webhook_configuration.empty()) {
    return bad_flag(
        "--webhook-namespace/--webhook-secret/--webhook-service/--webhook-configuration: must not "
        "be empty");
  }
  grove::OperatorOptions options;
  if (!config_path.empty()) {
    bool ok = false;
    std::string text = ReadFile(config_path, &ok);
    if (!ok) return bad_flag("--config: cannot read " + config_path);
    auto parsed = grove::backend::ParseOperatorConfiguration(text);
    if (!parsed.ok()) return bad_flag("--config " + config_path + ": " + parsed.error().message);
    options.scheduler = *parsed;
  }
  std::string cert_pem, key_pem;
  if (!webhook_cert.empty()) {
    bool cert_ok = false, key_ok = false;
    cert_pem = ReadFile(webhook_cert, &cert_ok);
    key_pem = ReadFile(webhook_key, &key_ok);
    if (!cert_ok || !key_ok)
      return bad_flag("--webhook-cert/--webhook-key: cannot read both files");
  }
  auto client_config = LoadClientConfig(kubeconfig, in_cluster);
  if (!client_config.ok()) return bad_flag("--kubeconfig: " + client_config.error().message);
  options.namespace_ = ns;
  options.install_crds = install_crds;
  options.workers = workers;
  options.log_level = verbosity;
  SetLogVerbosity(verbosity);

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  kube::IoThread io(2);
  // Every call copse grove makes is in its table (and so in its ClusterRole).
  client_config->api_access = &kube::GroveApiAccess();
  client_config->max_connections = 64;
  // The operator creates many pods at once: their writes are pipelined.
  client_config->pipelined_connections = kube::kCopsePipelinedConnections;
  auto client = kube::Client::Create(*client_config, io.executor());
  if (!client.ok()) {
    std::cerr << "copse grove: client: " << client.error().ToString() << "\n";
    return 1;
  }
  // With --leader-elect only the holder of the Lease reconciles (and serves
  // the webhook; a follower's closed port keeps it out of the Service).
  // Losing the lease exits with status 1, as `copse run` does.
  std::atomic<bool> lost{false};
  std::unique_ptr<kube::LeaderElector> elector;
  std::thread election;
  auto stop_election = [&] {
    if (elector) elector->Stop();
    if (election.joinable()) election.join();
  };
  // Every return below ends the election (and releases a held lease) first.
  struct ElectionGuard {
    std::function<void()> stop;
    ~ElectionGuard() { stop(); }
  } election_guard{stop_election};
  // The ops endpoint runs on every replica, leader or not: a follower is
  // alive (its liveness probe must not restart it) but not ready (it does
  // not serve the webhook, so the Service must not send it requests).
  std::atomic<bool> serving{false};
  std::unique_ptr<scheduler::config::OpsServer> ops;
  if (ops_port != 0) {
    scheduler::config::OpsServerOptions ops_options;
    ops_options.address = ops_address;
    ops_options.port = static_cast<uint16_t>(ops_port);
    auto ops_started = scheduler::config::OpsServer::Start(ops_options);
    if (!ops_started.ok()) {
      std::cerr << "copse grove: ops server: " << ops_started.error().ToString() << "\n";
      return 1;
    }
    ops = std::move(ops_started).value();
    (void)ops->AddHealthzCheck("ping", [] { return Status::Ok(); });
    (void)ops->AddLivezCheck("ping", [] { return Status::Ok(); });
    (void)ops->AddReadyzCheck("leading-and-serving", [&serving, leader_elect]() -> Status {
      if (serving) return Status::Ok();
      return MakeError(ErrorCode::kUnavailable, leader_elect
                                                    ? "waiting for the leader lease"
                                                    : "the operator and webhook are starting");
    });
    std::cout << "copse grove: ops server " << ops->url() << std::endl;
  }
  if (leader_elect) {
    std::promise<void> leading;
    std::future<void> became_leader = leading.get_future();
    char host[256] = {0};
    gethostname(host, sizeof(host) - 1);
    kube::LeaderElectionOptions le;
    le.lease_namespace = lease_namespace;
    le.lease_name = lease_name;
    le.identity = std::string(host) + "_" + std::to_string(std::random_device{}());
    le.on_started_leading = [&leading] { leading.set_value(); };
    le.on_stopped_leading = [&lost] {
      std::cerr << "copse grove: lost the leader lease" << std::endl;
      lost = true;
      kill(getpid(), SIGTERM);
    };
    elector = std::make_unique<kube::LeaderElector>(*client, io, le);
    election = std::thread([&] { elector->Run(); });
    std::cout << "copse grove: waiting for the leader lease " << lease_namespace << "/"
              << lease_name << std::endl;
    while (became_leader.wait_for(std::chrono::milliseconds(200)) != std::future_status::ready) {
      const timespec now{0, 0};
      if (sigtimedwait(&signals, nullptr, &now) > 0) return 0;
    }
    std::cout << "copse grove: leading as " << le.identity << std::endl;
  }
  options.initc_image =
      InitcImage(initc_image, in_cluster, client_config->namespace_, io, **client);
  auto started = grove::Operator::Start(*client, options);
  if (!started.ok()) {
    std::cerr << "copse grove: " << started.error().ToString() << "\n";
    return 1;
  }
  std::unique_ptr<grove::Operator> op = std::move(started).value();
  std::unique_ptr<grove::webhook::Server> webhook;
  std::unique_ptr<grove::webhook::CertRotator> rotator;
  if (webhook_port != 0) {
    grove::webhook::ServerOptions server_options;
    server_options.address = webhook_address;
    server_options.port = static_cast<uint16_t>(webhook_port);
    server_options.cert_pem = cert_pem;
    server_options.key_pem = key_pem;
    grove::Operator* validator = op.get();
    auto server = grove::webhook::Server::Start(
        [validator](std::string_view object, std::string_view old) {
          return validator->ValidatePodCliqueSet(object, old);
        },
        server_options);
    if (!server.ok()) {
      std::cerr << "copse grove: webhook: " << server.error().ToString() << "\n";
      return 1;
    }
    webhook = std::move(server).value();
    if (register_webhook) {
      std::string url = webhook_url.empty() ? webhook->url() : webhook_url;
      std::string body = grove::webhook::ValidatingWebhookConfiguration(webhook_configuration, url,
                                                                        webhook->ca_pem());
      const kube::ResourceRef& configs = grove::webhook::kValidatingWebhookConfigurations;
      auto created = io.Run((*client)->Create(configs, "", body));
      if (!created.ok() && created.error().code == ErrorCode::kAlreadyExists) {
        auto current = io.Run((*client)->Get(configs, "", webhook_configuration));
        if (current.ok()) {
          nlohmann::json next = nlohmann::json::parse(body);
          next["metadata"]["resourceVersion"] =
              nlohmann::json::parse(*current)["metadata"]["resourceVersion"];
          created = io.Run((*client)->Update(configs, "", webhook_configuration, next.dump()));
        }
      }
      if (!created.ok()) {
        std::cerr << "copse grove: registering the webhook: " << created.error().ToString() << "\n";
        return 1;
      }
    } else if (cert_pem.empty()) {
      // In a cluster: the certificate lives in a Secret. This process (the
      // leader, or the only replica) makes and rotates it, keeps the caBundle
      // current, and serves the Secret's certificate as soon as it is there.
      grove::webhook::CertRotatorOptions rotator_options;
      rotator_options.secret_namespace = webhook_namespace;
      rotator_options.secret_name = webhook_secret;
      rotator_options.service_name = webhook_service;
      rotator_options.service_namespace = webhook_namespace;
      rotator_options.webhook_configuration = webhook_configuration;
      grove::webhook::Server* serving = webhook.get();
      auto made = grove::webhook::CertRotator::Start(
          *client, rotator_options, [serving](const std::string& cert, const std::string& key) {
            return serving->SetCertificate(cert, key);
          });
      if (!made.ok()) {
        std::cerr << "copse grove: webhook certificate: " << made.error().ToString() << "\n";
        return 1;
      }
      rotator = std::move(made).value();
      rotator->StartWriting();
      // Until then the webhook serves a self-signed certificate the API
      // server does not trust: wait a while, so "running" means serving.
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (!rotator->Serving() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      if (!rotator->Serving()) {
        LogWarning("grove", "the webhook does not serve the certificate of Secret " +
                                webhook_namespace + "/" + webhook_secret +
                                " yet (see the errors above); it keeps trying");
      }
    }
  }
  std::cout << "copse grove: operator running (default backend "
            << op->backends().GetDefault().Name() << ")"
            << (webhook ? ", webhook on port " + std::to_string(webhook->port()) : "") << std::endl;
  int sig = 0;
  serving = true;
  sigwait(&signals, &sig);
  std::cout << "copse grove: shutting down (signal " << sig << ")" << std::endl;
  if (rotator) rotator->Stop();
  if (webhook) webhook->Stop();
  op->Stop();
  if (ops) ops->Stop();
  op.reset();
  stop_election();
  return lost ? 1 : 0;
}

int RunInitc(int argc, char** argv) {
  std::vector<std::string> podcliques;
  std::string ns, kubeconfig;
  int64_t timeout_seconds = 0;
  po::options_description desc("copse initc --podcliques=<pclq>:<minAvailable>[,...]");
  desc.add_options()("help,h", "show this help")(
      "podcliques", po::value(&podcliques)->composing(),
      "PodCliques to wait for, each with the Ready pods it needs")(
      "namespace", po::value(&ns),
      "namespace (default: $GROVE_POD_NAMESPACE or the pod-info volume)")(
      "kubeconfig", po::value(&kubeconfig), "kubeconfig file (default: in-cluster)")(
      "timeout-seconds", po::value(&timeout_seconds)->default_value(0), "give up after (0: never)");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(desc).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "copse initc: " << e.what() << "\n" << desc;
    return 2;
  }
  if (vm.count("help")) {
    std::cout << desc;
    return 0;
  }
  auto deps = grove::initc::ParsePodCliques(podcliques);
  if (!deps.ok()) {
    std::cerr << "copse initc: " << deps.error().message << "\n";
    return 2;
  }
  if (ns.empty()) {
    if (const char* env = std::getenv("GROVE_POD_NAMESPACE")) ns = env;
  }
  if (ns.empty()) {
    bool ok = false;
    ns = ReadFile("/var/run/grove/pod-info/namespace", &ok);
    while (!ns.empty() && (ns.back() == '\n' || ns.back() == ' ')) ns.pop_back();
  }
  if (ns.empty()) {
    std::cerr << "copse initc: --namespace: not given and not found in the environment\n";
    return 2;
  }
  auto config =
      kubeconfig.empty() ? kube::LoadInClusterConfig() : kube::LoadKubeconfigFile(kubeconfig);
  if (!config.ok()) {
    std::cerr << "copse initc: " << config.error().message << "\n";
    return 2;
  }
  kube::IoThread io(1);
  auto client = kube::Client::Create(*config, io.executor());
  if (!client.ok()) {
    std::cerr << "copse initc: " << client.error().ToString() << "\n";
    return 1;
  }
  auto timeout = timeout_seconds > 0 ? std::chrono::milliseconds(timeout_seconds * 1000)
                                     : std::chrono::milliseconds(std::chrono::hours(24 * 365));
  Status waited = io.Run(grove::initc::Wait(*client, ns, *deps, timeout));
  if (!waited.ok()) {
    std::cerr << "copse initc: " << waited.error().message << "\n";
    return 1;
  }
  std::cout << "copse initc: dependencies ready" << std::endl;
  return 0;
}

}  // namespace copse::cmd
