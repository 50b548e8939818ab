// Scenario "grove": the Grove operator and the copse scheduler, both clients
// of the embedded API server over HTTP, bring up 500 PodCliqueSets of the
// disaggregated-inference shape (see RunGroveBench below).
#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
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
#include "bench/harness.h"
#include "bench/pod_watch.h"
#include "core/quantity.h"
#include "grove/api/crds.h"
#include "grove/api/names.h"
#include "grove/api/types.h"
#include "grove/backend/manager.h"
#include "grove/operator.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "scheduler/scheduler.h"

namespace copse::bench {

using scheduler::Scheduler;
using scheduler::SchedulerOptions;

namespace {

namespace api = copse::apiserver;
using SteadyClock = std::chrono::steady_clock;

std::string DisaggregatedPcs(int i) {
  auto clique = [](const std::string& name, int replicas) {
    return nlohmann::json{
        {"name", name},
        {"spec",
         {{"roleName", name},
          {"replicas", replicas},
          {"podSpec",
           {{"containers",
             nlohmann::json::array(
                 {{{"name", name},
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
           nlohmann::json::array(
               {{{"name", "prefill"}, {"cliqueNames", {"pleader", "pworker"}}, {"replicas", 2}},
                {{"name", "decode"},
                 {"cliqueNames", {"dleader", "dworker"}},
                 {"replicas", 1}}})}}}}}};
  return pcs.dump();
}

// First time each pod was seen bound, and Ready.
class PodWatcher {
 public:
  explicit PodWatcher(api::Store& store)
      : watch_(store, "bench",
               [this](const std::vector<api::WatchEvent>& events, SteadyClock::time_point now) {
                 Record(events, now);
               }) {}
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
  void Record(const std::vector<api::WatchEvent>& events, SteadyClock::time_point now) {
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
  }
  std::mutex mu_;
  std::unordered_map<std::string, SteadyClock::time_point> created_at_, bound_at_;
  std::unordered_set<std::string> ready_set_, ungated_set_;
  SteadyClock::time_point last_ready_{}, last_created_{}, last_ungated_{}, last_bound_{};
  std::atomic<int64_t> created_{0}, ungated_{0}, bound_{0}, ready_{0};
  PodWatchThread watch_;  // last: stopped before the records go
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
Result<BenchResult> RunGroveBench(const BenchOptions& options, Progress& progress) {
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
        {"names",
         {{"plural", "podgroups"},
          {"singular", "podgroup"},
          {"kind", "PodGroup"},
          {"listKind", "PodGroupList"}}},
        {"scope", "Namespaced"},
        {"versions",
         nlohmann::json::array(
             {{{"name", "v1alpha1"},
               {"served", true},
               {"storage", true},
               {"subresources", {{"status", nlohmann::json::object()}}},
               {"schema",
                {{"openAPIV3Schema",
                  {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}}}}}})}}}};
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

  // Threads are told apart by name for the CPU figures: the API server's,
  // the scheduler's and the operator's (grove-worker) each count separately.
  NameThisThread(kServerThreadName);
  api::Options server_options;
  server_options.store = store;
  server_options.threads = 2;
  server_options.serve_https = options.tls;
  server_options.serve_http = !options.tls;
  auto server = api::ApiServer::Start(server_options);
  if (!server.ok()) return server.error();

  NameThisThread(kSchedulerThreadName);
  kube::IoThread scheduler_io(2);
  kube::ClientConfig config;
  config.server = options.tls ? (*server)->https_url() : (*server)->http_url();
  config.ca_pem = (*server)->ca_pem();
  config.max_connections = 64;
  config.pipelined_connections = kube::kCopsePipelinedConnections;
  auto scheduler_client = kube::Client::Create(config, scheduler_io.executor());
  if (!scheduler_client.ok()) return scheduler_client.error();
  auto scheduler = Scheduler::Create(*scheduler_client, SchedulerOptions());
  if (!scheduler.ok()) return scheduler.error();
  (*scheduler)->Start();
  NameThisThread(kBenchThreadName);
  if (!(*scheduler)->WaitForSync(std::chrono::seconds(60))) {
    return MakeError(ErrorCode::kTimeout, "scheduler informers did not sync");
  }

  NameThisThread("grove-operator");
  kube::IoThread grove_io(2);
  auto grove_client = kube::Client::Create(config, grove_io.executor());
  if (!grove_client.ok()) return grove_client.error();
  grove::OperatorOptions grove_options;
  grove_options.workers = 8;
  auto op = grove::Operator::Start(*grove_client, grove_options);
  if (!op.ok()) return op.error();
  NameThisThread(kBenchThreadName);
  // The benchmark's own client: PodCliqueSets are created over HTTP as a user would.
  kube::IoThread bench_io(1);
  kube::ClientConfig bench_config = config;
  bench_config.pipelined_connections = 0;
  auto bench_client = kube::Client::Create(bench_config, bench_io.executor());
  if (!bench_client.ok()) return bench_client.error();

  PodWatcher watcher(*store);
  const kube::ResourceRef copse_pod_groups{"scheduling.copse.dev", "v1alpha1", "podgroups", true};
  WriteCounter writes(*store,
                      {kube::resources::kPods, grove::api::resources::kPodCliques,
                       grove::api::resources::kPodGangs, grove::api::resources::kPodCliqueSets,
                       grove::api::resources::kPodCliqueScalingGroups, copse_pod_groups});
  std::vector<std::string> bodies;
  for (int64_t i = 0; i < sets; ++i) bodies.push_back(DisaggregatedPcs(static_cast<int>(i)));
  double cpu_before = NamedThreadsCpuSeconds("grove-worker");
  const double sched_cpu_before = NamedThreadsCpuSeconds(kSchedulerThreadName);
  const double api_cpu_before = NamedThreadsCpuSeconds(kServerThreadName);
  auto start = SteadyClock::now();
  for (int64_t i = 0; i < sets; ++i) {
    auto created = bench_io.Run((*bench_client)
                                    ->Create(grove::api::resources::kPodCliqueSets, "bench",
                                             bodies[static_cast<size_t>(i)]));
    if (!created.ok()) return created.error();
    progress.Update("create PodCliqueSets", i + 1, sets);
  }
  auto last_create = SteadyClock::now();
  progress.Done("create PodCliqueSets", sets,
                std::chrono::duration<double>(last_create - start).count());
  auto deadline = last_create +
                  std::chrono::seconds(options.timeout_seconds > 0 ? options.timeout_seconds : 300);
  while (watcher.ready() < pods && SteadyClock::now() < deadline) {
    progress.Update("pods bound and Ready", watcher.ready(), pods);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  bool complete = watcher.ready() >= pods;
  auto end = complete ? watcher.last_ready() : SteadyClock::now();
  double seconds = std::chrono::duration<double>(end - last_create).count();
  progress.Done("pods bound and Ready", watcher.ready(), seconds);
  double cpu = NamedThreadsCpuSeconds("grove-worker") - cpu_before;
  const double sched_cpu = NamedThreadsCpuSeconds(kSchedulerThreadName) - sched_cpu_before;
  const double api_cpu = NamedThreadsCpuSeconds(kServerThreadName) - api_cpu_before;

  BenchResult result;
  result.scenario = "grove";
  result.nodes = nodes;
  result.pods = pods;
  result.pods_bound = watcher.bound();
  result.timed_out = !complete;
  result.scheduler_cpu_seconds = sched_cpu;
  result.api_server_cpu_seconds = api_cpu;
  // Ready pods over first create -> last Ready (the pods are the operator's).
  const double run_seconds = std::chrono::duration<double>(end - start).count();
  if (watcher.ready() > 0 && run_seconds > 0) {
    result.pods_per_second = static_cast<double>(watcher.ready()) / run_seconds;
  }
  // From each pod's creation (by the operator, first seen on the watch) to its bind.
  auto latencies = watcher.CreateToBoundNs();
  if (!latencies.empty()) {
    result.p50_ms = PercentileMs(latencies, 50);
    result.p99_ms = PercentileMs(latencies, 99);
  }
  result.peak_rss_bytes = PeakRssBytes();
  result.extras["podcliquesets"] = static_cast<double>(sets);
  result.extras["last_create_to_all_ready_seconds"] = seconds;
  auto since = [&](SteadyClock::time_point t) {
    return std::chrono::duration<double>(t - last_create).count();
  };
  result.extras["last_create_to_all_pods_created_seconds"] = since(watcher.last_created());
  result.extras["last_create_to_all_ungated_seconds"] = since(watcher.last_ungated());
  result.extras["last_create_to_all_bound_seconds"] = since(watcher.last_bound());
  result.extras["operator_cpu_seconds"] = cpu;
  result.extras["operator_cpu_ms_per_podcliqueset"] =
      sets > 0 ? cpu * 1000.0 / static_cast<double>(sets) : 0;
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

}  // namespace copse::bench
