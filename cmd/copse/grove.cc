// `copse grove`: the Grove backend alone, against any API server.
//   copse grove --kubeconfig F [--config operator-config.yaml] [--namespace NS]
//               [--install-crds] [--initc-image IMG] [--workers N]
//               [--leader-elect [--lease-namespace NS] [--lease-name N]]
//               [--webhook-port P [--webhook-cert F --webhook-key F]
//                [--register-webhook --webhook-url URL]] [-v N]
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

#include "bench/bench.h"
#include "core/quantity.h"
#include "grove/api/crds.h"
#include "grove/api/names.h"
#include "grove/api/types.h"
#include "grove/backend/manager.h"
#include "grove/initc/initc.h"
#include "grove/operator.h"
#include "grove/webhook/webhook.h"
#include "kube/api_access.h"
#include "apiserver/apiserver.h"
#include "apiserver/node_simulator.h"
#include "apiserver/store.h"
#include "apiserver/synthetic.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "kube/leader_election.h"
#include "cmd/copse/commands.h"
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

}  // namespace

int RunGrove(int argc, char** argv) {
  std::string kubeconfig, config_path, ns, initc_image = "ghcr.io/copse-dev/copse:latest";
  std::string webhook_cert, webhook_key, webhook_url, webhook_address = "0.0.0.0";
  std::string lease_namespace = "copse-system", lease_name = "copse-grove";
  bool in_cluster = false, install_crds = false, register_webhook = false, leader_elect = false;
  int workers = 4, webhook_port = 0, verbosity = 1;
  po::options_description desc("copse grove [flags]");
  desc.add_options()("help,h", "show this help")(
      "kubeconfig", po::value(&kubeconfig),
      "kubeconfig file (default: $KUBECONFIG, ~/.kube/config)")(
      "in-cluster", po::bool_switch(&in_cluster), "use the pod's service account")(
      "config", po::value(&config_path),
      "OperatorConfiguration (YAML) with scheduler.profiles; default: copse-scheduler")(
      "namespace", po::value(&ns), "watch one namespace (default: all)")(
      "install-crds", po::bool_switch(&install_crds), "create the grove CRDs if missing")(
      "initc-image", po::value(&initc_image)->default_value(initc_image),
      "image of the startup-order init container (runs copse initc)")(
      "workers", po::value(&workers)->default_value(workers), "workers per controller")(
      "webhook-port", po::value(&webhook_port)->default_value(0),
      "serve the validating webhook on this HTTPS port (0: off)")(
      "webhook-address", po::value(&webhook_address)->default_value(webhook_address),
      "address the webhook listens on")("webhook-cert", po::value(&webhook_cert),
                                        "serving certificate (PEM); default self-signed")(
      "webhook-key", po::value(&webhook_key), "serving key (PEM)")(
      "register-webhook", po::bool_switch(&register_webhook),
      "create/update the ValidatingWebhookConfiguration copse-grove")(
      "webhook-url", po::value(&webhook_url),
      "URL the API server calls (default https://127.0.0.1:<port>/webhooks/validate-podcliqueset)")(
      "v", po::value(&verbosity)->default_value(verbosity),
      "log level (0 errors, 1 actions, 2 details)")(
      "leader-elect", po::bool_switch(&leader_elect),
      "run the operator and webhook only while holding the Lease (for several replicas)")(
      "lease-namespace", po::value(&lease_namespace)->default_value(lease_namespace),
      "namespace of the leader Lease")(
      "lease-name", po::value(&lease_name)->default_value(lease_name), "name of the leader Lease");
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
  if (webhook_port < 0 || webhook_port > 65535) return bad_flag("--webhook-port: must be between 0 and 65535");
  if (register_webhook && webhook_port == 0) return bad_flag("--register-webhook: needs --webhook-port");
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
  if (!webhook_cert.empty() || !webhook_key.empty()) {
    bool cert_ok = false, key_ok = false;
    cert_pem = ReadFile(webhook_cert, &cert_ok);
    key_pem = ReadFile(webhook_key, &key_ok);
    if (!cert_ok || !key_ok) return bad_flag("--webhook-cert/--webhook-key: cannot read both files");
  }
  auto client_config = LoadClientConfig(kubeconfig, in_cluster);
  if (!client_config.ok()) return bad_flag("--kubeconfig: " + client_config.error().message);
  options.namespace_ = ns;
  options.install_crds = install_crds;
  options.initc_image = initc_image;
  options.workers = workers;
  options.log_level = verbosity;

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
  auto started = grove::Operator::Start(*client, options);
  if (!started.ok()) {
    std::cerr << "copse grove: " << started.error().ToString() << "\n";
    return 1;
  }
  std::unique_ptr<grove::Operator> op = std::move(started).value();
  std::unique_ptr<grove::webhook::Server> webhook;
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
      std::string body =
          grove::webhook::ValidatingWebhookConfiguration("copse-grove", url, webhook->ca_pem());
      const kube::ResourceRef configs{"admissionregistration.k8s.io", "v1",
                                      "validatingwebhookconfigurations", false};
      auto created = io.Run((*client)->Create(configs, "", body));
      if (!created.ok() && created.error().code == ErrorCode::kAlreadyExists) {
        auto current = io.Run((*client)->Get(configs, "", "copse-grove"));
        if (current.ok()) {
          nlohmann::json next = nlohmann::json::parse(body);
          next["metadata"]["resourceVersion"] =
              nlohmann::json::parse(*current)["metadata"]["resourceVersion"];
          created = io.Run((*client)->Update(configs, "", "copse-grove", next.dump()));
        }
      }
      if (!created.ok()) {
        std::cerr << "copse grove: registering the webhook: " << created.error().ToString() << "\n";
        return 1;
      }
    }
  }
  std::cout << "copse grove: operator running (default backend "
            << op->backends().GetDefault().Name() << ")"
            << (webhook ? ", webhook on port " + std::to_string(webhook->port()) : "") << std::endl;
  int sig = 0;
  sigwait(&signals, &sig);
  std::cout << "copse grove: shutting down (signal " << sig << ")" << std::endl;
  if (webhook) webhook->Stop();
  op->Stop();
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
      "namespace", po::value(&ns), "namespace (default: $GROVE_POD_NAMESPACE or the pod-info volume)")(
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
  auto config = kubeconfig.empty() ? kube::LoadInClusterConfig() : kube::LoadKubeconfigFile(kubeconfig);
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
