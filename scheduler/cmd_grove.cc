// `copse grove`: the Grove backend alone, against any API server.
//   copse grove --kubeconfig F [--config operator-config.yaml] [--namespace NS]
//               [--install-crds] [--initc-image IMG] [--workers N]
//               [--webhook-port P [--webhook-cert F --webhook-key F]
//                [--register-webhook --webhook-url URL]] [-v N]
// `copse initc`: the startup-order init container grove puts into pods.
//   copse initc --podcliques=<pclq>:<minAvailable>[,...] [--namespace NS]
//               [--kubeconfig F] [--timeout-seconds S]
// and the `grove` benchmark scenario (RunGroveBench) for `copse bench`.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
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
#include "kube/apiserver/apiserver.h"
#include "kube/apiserver/node_simulator.h"
#include "kube/apiserver/store.h"
#include "kube/apiserver/synthetic.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "scheduler/commands.h"
#include "scheduler/scheduler.h"

namespace copse::scheduler {

int RunGrove(int argc, char** argv);
int RunInitc(int argc, char** argv);

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
  bool in_cluster = false, install_crds = false, register_webhook = false;
  int workers = 4, webhook_port = 0, verbosity = 1;
  po::options_description desc("copse grove [flags]");
  desc.add_options()("help,h", "show this help")(
      "kubeconfig", po::value(&kubeconfig), "kubeconfig file (default: $KUBECONFIG, ~/.kube/config)")(
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
      "address the webhook listens on")(
      "webhook-cert", po::value(&webhook_cert), "serving certificate (PEM); default self-signed")(
      "webhook-key", po::value(&webhook_key), "serving key (PEM)")(
      "register-webhook", po::bool_switch(&register_webhook),
      "create/update the ValidatingWebhookConfiguration copse-grove")(
      "webhook-url", po::value(&webhook_url),
      "URL the API server calls (default https://127.0.0.1:<port>/webhooks/validate-podcliqueset)")(
      "v", po::value(&verbosity)->default_value(verbosity), "log level (0 errors, 1 actions, 2 details)");
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
  client_config->max_connections = 64;
  auto client = kube::Client::Create(*client_config, io.executor());
  if (!client.ok()) {
    std::cerr << "copse grove: client: " << client.error().ToString() << "\n";
    return 1;
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
  return 0;
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

// ------------------------------------------------------------------ bench

namespace {

namespace api = copse::kube::apiserver;
using SteadyClock = std::chrono::steady_clock;

double ThreadsCpuSeconds(const std::string& name) {
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  double total = 0;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return 0;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    const std::string base = std::string("/proc/self/task/") + entry->d_name;
    std::ifstream comm(base + "/comm");
    std::string thread_name;
    std::getline(comm, thread_name);
    if (thread_name != name) continue;
    std::ifstream stat(base + "/stat");
    std::string content((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const size_t close = content.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(content.substr(close + 2));
    std::string field;
    unsigned long long utime = 0, stime = 0;
    for (int i = 3; i <= 15 && fields >> field; ++i) {
      if (i == 14) utime = std::stoull(field);
      if (i == 15) stime = std::stoull(field);
    }
    total += static_cast<double>(utime + stime) / ticks;
  }
  closedir(dir);
  return total;
}

std::string DisaggregatedPcs(int i) {
  auto clique = [](const std::string& name, int replicas) {
    return nlohmann::json{
        {"name", name},
        {"spec",
         {{"roleName", name},
          {"replicas", replicas},
          {"podSpec",
           {{"containers",
             nlohmann::json::array({{{"name", name},
                                     {"image", "nginx"},
                                     {"resources",
                                      {{"requests", {{"cpu", "1"}, {"memory", "4Gi"}, {"nvidia.com/gpu", "1"}}},
                                       {"limits", {{"nvidia.com/gpu", "1"}}}}}}})}}}}}};
  };
  nlohmann::json pcs = {
      {"apiVersion", "grove.io/v1alpha1"},
      {"kind", "PodCliqueSet"},
      {"metadata", {{"name", "disagg-" + std::to_string(i)}, {"namespace", "bench"}}},
      {"spec",
       {{"replicas", 1},
        {"template",
         {{"cliques", nlohmann::json::array({clique("pleader", 1), clique("pworker", 4),
                                            clique("dleader", 1), clique("dworker", 2)})},
          {"podCliqueScalingGroups",
           nlohmann::json::array({{{"name", "prefill"}, {"cliqueNames", {"pleader", "pworker"}}, {"replicas", 2}},
                                  {{"name", "decode"}, {"cliqueNames", {"dleader", "dworker"}}, {"replicas", 1}}})}}}}}};
  return pcs.dump();
}

// First time each pod was seen bound, and Ready.
class PodWatcher {
 public:
  explicit PodWatcher(api::Store& store) {
    api::WatchOptions options;
    options.ns = "bench";
    auto watch = store.Watch(kube::resources::kPods, options);
    if (watch.ok()) stream_ = *watch;
    thread_ = std::thread([this] { Run(); });
  }
  ~PodWatcher() {
    if (stream_) stream_->Close();
    if (thread_.joinable()) thread_.join();
  }
  int64_t created() const { return created_.load(); }
  int64_t ungated() const { return ungated_.load(); }
  int64_t bound() const { return bound_.load(); }
  int64_t ready() const { return ready_.load(); }
  // When the n-th pod was created / ungated / bound (the last of each phase).
  SteadyClock::time_point last_created() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_created_;
  }
  SteadyClock::time_point last_ungated() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_ungated_;
  }
  SteadyClock::time_point last_bound() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_bound_;
  }
  std::vector<int64_t> CreateToBoundNs() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<int64_t> out;
    for (const auto& [name, t] : bound_at_) {
      auto c = created_at_.find(name);
      if (c != created_at_.end()) {
        out.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(t - c->second).count());
      }
    }
    return out;
  }
  SteadyClock::time_point last_ready() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_ready_;
  }

 private:
  void Run() {
    if (!stream_) return;
    std::mutex wake_mu;
    std::condition_variable wake;
    bool pending = false;
    stream_->SetNotify([&] {
      std::lock_guard<std::mutex> lock(wake_mu);
      pending = true;
      wake.notify_one();
    });
    std::vector<api::WatchEvent> events;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(wake_mu);
        wake.wait_for(lock, std::chrono::milliseconds(50), [&] { return pending; });
        pending = false;
      }
      events.clear();
      bool open = stream_->Take(&events);
      auto now = SteadyClock::now();
      std::lock_guard<std::mutex> lock(mu_);
      for (const auto& e : events) {
        if (e.type == api::WatchEventType::kBookmark || !e.object) continue;
        const std::string& name = e.object->name;
        if (created_at_.emplace(name, now).second) {
          created_.fetch_add(1);
          last_created_ = now;
        }
        if (e.object->json.find("podgang-pending-creation") == std::string::npos &&
            ungated_set_.emplace(name).second) {
          ungated_.fetch_add(1);
          last_ungated_ = now;
        }
        if (!e.object->node_name.empty() && bound_at_.emplace(name, now).second) {
          bound_.fetch_add(1);
          last_bound_ = now;
        }
        if (e.object->pod_ready && ready_set_.emplace(name).second) {
          ready_.fetch_add(1);
          last_ready_ = now;
        }
      }
      if (!open) return;
    }
  }
  std::shared_ptr<api::WatchStream> stream_;
  std::thread thread_;
  std::mutex mu_;
  std::unordered_map<std::string, SteadyClock::time_point> created_at_, bound_at_;
  std::unordered_set<std::string> ready_set_, ungated_set_;
  SteadyClock::time_point last_ready_{}, last_created_{}, last_ungated_{}, last_bound_{};
  std::atomic<int64_t> created_{0}, ungated_{0}, bound_{0}, ready_{0};
};

// Counts the writes (watch events) per resource during the run.
class WriteCounter {
 public:
  WriteCounter(api::Store& store, const std::vector<kube::ResourceRef>& refs) {
    for (const auto& ref : refs) {
      api::WatchOptions options;
      options.resource_version = store.CurrentResourceVersion();
      auto watch = store.Watch(ref, options);
      if (watch.ok()) streams_.push_back({ref.resource, *watch});
    }
  }
  ~WriteCounter() {
    for (auto& [name, stream] : streams_) stream->Close();
  }
  std::map<std::string, int64_t> Take() {
    std::map<std::string, int64_t> out;
    for (auto& [name, stream] : streams_) {
      std::vector<api::WatchEvent> events;
      stream->Take(&events);
      for (const auto& e : events) {
        if (e.type != api::WatchEventType::kBookmark) ++out[name];
      }
    }
    return out;
  }

 private:
  std::vector<std::pair<std::string, std::shared_ptr<api::WatchStream>>> streams_;
};

}  // namespace

// `copse bench grove`: 500 PodCliqueSets of the disaggregated shape (prefill:
// 2 replicas of 1 leader + 4 workers; decode: 1 replica of 1 leader + 2
// workers; 13 GPU pods each) on 2,000 nodes with 8 GPUs, through the real
// HTTP path: the Grove operator and the copse scheduler are clients of the
// embedded API server, the node simulator makes bound pods Ready. Reports the
// time from the last PodCliqueSet create to every pod bound and Ready
// (target <= 10 s) and the operator's CPU per PodCliqueSet (grove-worker threads).
Result<bench::BenchResult> RunGroveBench(const bench::BenchOptions& options, bench::Progress& progress) {
  const int64_t nodes = options.nodes > 0 ? options.nodes : 2000;
  const int64_t sets = options.pods > 0 ? std::max<int64_t>(1, options.pods / 13) : 500;
  const int64_t pods = sets * 13;
  api::StoreOptions store_options;
  store_options.watch_history = 1'000'000;
  auto store = api::NewStore(store_options);
  for (const auto& crd : grove::api::CrdManifests()) {
    auto created = store->Create(kube::resources::kCustomResourceDefinitions, "", crd);
    if (!created.ok()) return created.error();
  }
  nlohmann::json pg_crd = {
      {"apiVersion", "apiextensions.k8s.io/v1"},
      {"kind", "CustomResourceDefinition"},
      {"metadata", {{"name", "podgroups.scheduling.copse.dev"}}},
      {"spec",
       {{"group", "scheduling.copse.dev"},
        {"names", {{"plural", "podgroups"}, {"singular", "podgroup"}, {"kind", "PodGroup"}, {"listKind", "PodGroupList"}}},
        {"scope", "Namespaced"},
        {"versions",
         nlohmann::json::array({{{"name", "v1alpha1"}, {"served", true}, {"storage", true},
                                 {"subresources", {{"status", nlohmann::json::object()}}},
                                 {"schema", {{"openAPIV3Schema", {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}}}}}})}}}};
  auto pg = store->Create(kube::resources::kCustomResourceDefinitions, "", pg_crd.dump());
  if (!pg.ok() && pg.error().code != ErrorCode::kAlreadyExists) return pg.error();
  auto ns = store->Create(kube::resources::kNamespaces, "",
                          R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"bench"}})");
  if (!ns.ok()) return ns.error();

  api::NodeSimulatorOptions sim_options;
  sim_options.pod_start_delay = std::chrono::milliseconds(0);
  sim_options.manage_disruption_budgets = false;
  api::NodeSimulator simulator(store, sim_options);
  auto shape = ParseResourceList("cpu=64,memory=512Gi,nvidia.com/gpu=8");
  auto node_objects = api::MakeSyntheticNodes(static_cast<int>(nodes), *shape, {});
  if (!node_objects.ok()) return node_objects.error();
  if (Status s = simulator.CreateNodes(*node_objects); !s.ok()) return s.error();
  simulator.Start();

  api::Options server_options;
  server_options.store = store;
  server_options.threads = 2;
  server_options.serve_https = options.tls;
  auto server = api::ApiServer::Start(server_options);
  if (!server.ok()) return server.error();

  kube::IoThread scheduler_io(2);
  kube::ClientConfig config;
  config.server = (*server)->http_url();
  config.max_connections = 64;
  auto scheduler_client = kube::Client::Create(config, scheduler_io.executor());
  if (!scheduler_client.ok()) return scheduler_client.error();
  auto scheduler = Scheduler::Create(*scheduler_client, SchedulerOptions());
  if (!scheduler.ok()) return scheduler.error();
  (*scheduler)->Start();
  if (!(*scheduler)->WaitForSync(std::chrono::seconds(60))) {
    return MakeError(ErrorCode::kTimeout, "scheduler informers did not sync");
  }

  kube::IoThread grove_io(2);
  auto grove_client = kube::Client::Create(config, grove_io.executor());
  if (!grove_client.ok()) return grove_client.error();
  grove::OperatorOptions grove_options;
  grove_options.workers = 8;
  auto op = grove::Operator::Start(*grove_client, grove_options);
  if (!op.ok()) return op.error();

  PodWatcher watcher(*store);
  const kube::ResourceRef copse_pod_groups{"scheduling.copse.dev", "v1alpha1", "podgroups", true};
  WriteCounter writes(*store, {kube::resources::kPods, grove::api::resources::kPodCliques,
                               grove::api::resources::kPodGangs, grove::api::resources::kPodCliqueSets,
                               grove::api::resources::kPodCliqueScalingGroups, copse_pod_groups});
  double cpu_before = ThreadsCpuSeconds("grove-worker");
  auto start = SteadyClock::now();
  for (int64_t i = 0; i < sets; ++i) {
    auto created = store->Create(grove::api::resources::kPodCliqueSets, "bench", DisaggregatedPcs(static_cast<int>(i)));
    if (!created.ok()) return created.error();
    progress.Update("create PodCliqueSets", i + 1, sets);
  }
  auto last_create = SteadyClock::now();
  progress.Done("create PodCliqueSets", sets,
                std::chrono::duration<double>(last_create - start).count());
  auto deadline = last_create + std::chrono::seconds(300);
  while (watcher.ready() < pods && SteadyClock::now() < deadline) {
    progress.Update("pods bound and Ready", watcher.ready(), pods);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  bool complete = watcher.ready() >= pods;
  auto end = complete ? watcher.last_ready() : SteadyClock::now();
  double seconds = std::chrono::duration<double>(end - last_create).count();
  progress.Done("pods bound and Ready", watcher.ready(), seconds);
  double cpu = ThreadsCpuSeconds("grove-worker") - cpu_before;

  bench::BenchResult result;
  result.scenario = "grove";
  result.nodes = nodes;
  result.pods = watcher.ready();
  result.pods_per_second =
      seconds > 0 ? static_cast<double>(watcher.ready()) /
                        std::chrono::duration<double>(end - start).count()
                  : 0;
  auto latencies = watcher.CreateToBoundNs();
  result.p50_ms = bench::PercentileMs(latencies, 50);
  result.p99_ms = bench::PercentileMs(latencies, 99);
  result.peak_rss_bytes = bench::PeakRssBytes();
  result.extras["podcliquesets"] = static_cast<double>(sets);
  result.extras["last_create_to_all_ready_seconds"] = seconds;
  auto since = [&](SteadyClock::time_point t) {
    return std::chrono::duration<double>(t - last_create).count();
  };
  result.extras["last_create_to_all_pods_created_seconds"] = since(watcher.last_created());
  result.extras["last_create_to_all_ungated_seconds"] = since(watcher.last_ungated());
  result.extras["last_create_to_all_bound_seconds"] = since(watcher.last_bound());
  result.extras["operator_cpu_seconds"] = cpu;
  result.extras["operator_cpu_ms_per_podcliqueset"] = sets > 0 ? cpu * 1000.0 / static_cast<double>(sets) : 0;
  for (const auto& [resource, count] : writes.Take()) {
    result.extras["writes_" + resource] = static_cast<double>(count);
  }
  result.extras["operator_reconciles"] = static_cast<double>((*op)->stats().reconciles);
  result.targets["all pods bound and Ready"] = complete;
  result.targets["<= 10 s from last create to all Ready"] = complete && seconds <= 10.0;

  (*op)->Stop();
  (*scheduler)->Stop();
  (*server)->Stop();
  simulator.Stop();
  return result;
}

}  // namespace copse::scheduler
