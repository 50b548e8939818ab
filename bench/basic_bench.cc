// Scenario "basic": kube-scheduler's scheduler_perf SchedulingBasic
// (5000Nodes_10000Pods) end to end through the embedded API server.
//
//  1. A store with `nodes` nodes of scheduler_perf's node template (4 cpu,
//     32Gi, 110 pods) and the HTTP server; the scheduler connects over
//     loopback HTTP like any client (list+watch, pods/binding, events).
//  2. Warm-up: 1,000 init pods (pod-default template: 100m cpu, 500Mi) are
//     created and bound (not measured).
//  3. Measure: `pods` pods are created in the store as fast as it takes them;
//     a store watch records when each gets its nodeName. pods/s = measured
//     pods / (last bound - first created); latency = created -> bound.
//  4. Scheduler CPU: user+system time of the scheduler's threads only (its
//     loop, oneTBB workers and its client/informer I/O threads, told apart
//     from the API server's by thread name) over the measured phase.
// No kubelet simulator runs (scheduler_perf has none either): bound pods stay
// Pending, so the watch traffic is the scheduler's own.
// Targets (issue 3): >= 20,000 pods/s and <= 0.15 ms of scheduler CPU per pod.
#include <dirent.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "apiserver/apiserver.h"
#include "apiserver/store.h"
#include "apiserver/synthetic.h"
#include "bench/bench.h"
#include "bench/pod_watch.h"
#include "core/quantity.h"
#include "kube/client.h"
#include "scheduler/scheduler.h"

namespace copse::bench {
namespace {

namespace api = copse::apiserver;
using SteadyClock = std::chrono::steady_clock;

constexpr const char* kSchedulerThreadName = "copse-sched";
constexpr const char* kServerThreadName = "copse-api";

std::string BenchPodJson(std::string_view prefix, int64_t i) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + std::string(prefix) +
         std::to_string(i) +
         R"(","namespace":"bench"},"spec":{"schedulerName":"copse-scheduler","containers":[{"name":"pause","image":"registry.k8s.io/pause:3.10","resources":{"requests":{"cpu":"100m","memory":"500Mi"},"limits":{"cpu":"100m","memory":"500Mi"}}}]}})";
}

// Records the first time each pod is seen with a nodeName.
class BoundWatcher {
 public:
  explicit BoundWatcher(api::Store& store)
      : watch_(store, "bench",
               [this](const std::vector<api::WatchEvent>& events, SteadyClock::time_point now) {
                 Record(events, now);
               }) {}
  int64_t bound() const { return bound_.load(); }
  // name -> bound time
  std::unordered_map<std::string, SteadyClock::time_point> Times() {
    std::lock_guard lock(mu_);
    return times_;
  }

 private:
  void Record(const std::vector<api::WatchEvent>& events, SteadyClock::time_point now) {
    std::lock_guard lock(mu_);
    for (const api::WatchEvent& e : events) {
      if (!e.object || e.object->node_name.empty()) continue;
      if (times_.emplace(e.object->name, now).second) bound_.fetch_add(1);
    }
  }

  std::mutex mu_;
  std::unordered_map<std::string, SteadyClock::time_point> times_;
  std::atomic<int64_t> bound_{0};
  PodWatchThread watch_;  // last: stopped before the records go
};

}  // namespace

Result<BenchResult> RunBasicBench(const BenchOptions& options, Progress& progress) {
  const int64_t pods = options.pods > 0 ? options.pods : 10'000;
  const int64_t nodes = options.nodes > 0 ? options.nodes : 5'000;
  const int64_t init_pods = 1'000;

  NameThisThread(kServerThreadName);
  api::StoreOptions store_options;
  store_options.watch_history = static_cast<size_t>(pods + init_pods) * 4 + 1024;
  auto store = api::NewStore(store_options);
  auto shape = ParseResourceList("cpu=4,memory=32Gi,pods=110");
  if (!shape.ok()) return shape.error();
  auto node_objects = api::MakeSyntheticNodes(static_cast<int>(nodes), *shape, {});
  if (!node_objects.ok()) return node_objects.error();
  for (const auto& node : *node_objects) {
    auto created = store->Create(kube::resources::kNodes, "", std::string_view(node));
    if (!created.ok()) return created.error();
  }
  {
    auto ns = store->Create(
        kube::resources::kNamespaces, "",
        std::string_view(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"bench"}})"));
    if (!ns.ok()) return ns.error();
  }
  api::Options server_options;
  server_options.store = store;
  server_options.threads = 1;
  server_options.serve_https = options.tls;
  server_options.serve_http = !options.tls;
  auto server = api::ApiServer::Start(server_options);
  if (!server.ok()) return server.error();

  // Threads created from here on (scheduler I/O, loop, oneTBB workers) carry
  // the scheduler's name.
  NameThisThread(kSchedulerThreadName);
  kube::ClientConfig config;
  config.server = options.tls ? (*server)->https_url() : (*server)->http_url();
  config.ca_pem = (*server)->ca_pem();
  config.max_connections = 128;
  config.pipelined_connections = kube::kCopsePipelinedConnections;
  auto io = std::make_unique<kube::IoThread>(1);
  auto client = kube::Client::Create(config, io->executor());
  if (!client.ok()) return client.error();
  scheduler::SchedulerOptions scheduler_options;
  scheduler_options.record_events =
      getenv("COPSE_BENCH_EVENTS") == nullptr || std::string(getenv("COPSE_BENCH_EVENTS")) != "0";
  auto created = scheduler::Scheduler::Create(*client, scheduler_options);
  if (!created.ok()) return created.error();
  std::unique_ptr<scheduler::Scheduler> sched = std::move(created).value();
  sched->Start();
  NameThisThread("copse-bench");
  if (!sched->WaitForSync(std::chrono::seconds(60))) {
    return MakeError(ErrorCode::kInternal, "scheduler informers did not sync");
  }

  BoundWatcher watcher(*store);
  auto wait_bound = [&](int64_t target, std::string_view phase,
                        std::chrono::seconds timeout) -> Status {
    const auto deadline = SteadyClock::now() + timeout;
    while (watcher.bound() < target) {
      if (SteadyClock::now() > deadline) {
        return MakeError(ErrorCode::kInternal, std::string(phase) + ": only " +
                                                   std::to_string(watcher.bound()) + "/" +
                                                   std::to_string(target) + " pods bound");
      }
      progress.Update(phase, watcher.bound(), target);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return Status::Ok();
  };

  // 2. Warm-up.
  for (int64_t i = 0; i < init_pods; ++i) {
    auto c = store->Create(kube::resources::kPods, "bench", BenchPodJson("init-", i));
    if (!c.ok()) return c.error();
  }
  if (Status s = wait_bound(init_pods, "warm-up", std::chrono::seconds(120)); !s.ok()) {
    return s.error();
  }

  // 3. Measure.
  std::vector<std::string> bodies;
  bodies.reserve(static_cast<size_t>(pods));
  for (int64_t i = 0; i < pods; ++i) bodies.push_back(BenchPodJson("pod-", i));
  std::vector<SteadyClock::time_point> created_at(static_cast<size_t>(pods));
  const double cpu_before = NamedThreadsCpuSeconds(kSchedulerThreadName);
  const double process_cpu_before = ProcessCpuSeconds();
  const scheduler::SchedulerStats stats_before = sched->stats();
  const auto start = SteadyClock::now();
  for (int64_t i = 0; i < pods; ++i) {
    created_at[static_cast<size_t>(i)] = SteadyClock::now();
    auto c = store->Create(kube::resources::kPods, "bench", bodies[static_cast<size_t>(i)]);
    if (!c.ok()) return c.error();
  }
  if (Status s = wait_bound(init_pods + pods, "schedule", std::chrono::seconds(300)); !s.ok()) {
    return s.error();
  }
  const double cpu = NamedThreadsCpuSeconds(kSchedulerThreadName) - cpu_before;
  const double process_cpu = ProcessCpuSeconds() - process_cpu_before;
  const scheduler::SchedulerStats stats_after = sched->stats();
  auto times = watcher.Times();
  std::vector<int64_t> latencies;
  latencies.reserve(static_cast<size_t>(pods));
  SteadyClock::time_point last = start;
  for (int64_t i = 0; i < pods; ++i) {
    auto it = times.find("pod-" + std::to_string(i));
    if (it == times.end()) continue;
    last = std::max(last, it->second);
    latencies.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(
                            it->second - created_at[static_cast<size_t>(i)])
                            .count());
  }
  const double seconds = std::chrono::duration<double>(last - start).count();
  progress.Done("schedule", pods, seconds);
  sched->Stop();

  BenchResult result;
  result.scenario = "basic";
  result.nodes = nodes;
  result.pods = pods;
  result.pods_per_second = seconds > 0 ? static_cast<double>(pods) / seconds : 0;
  result.p50_ms = PercentileMs(latencies, 50);
  result.p99_ms = PercentileMs(latencies, 99);
  result.scheduler_cpu_seconds = cpu;
  result.peak_rss_bytes = PeakRssBytes();
  const double cpu_ms_per_pod = pods > 0 ? cpu * 1000.0 / static_cast<double>(pods) : 0;
  result.extras["scheduler_cpu_ms_per_pod"] = cpu_ms_per_pod;
  result.extras["scheduler_cpu_s_per_1000_pods"] = cpu_ms_per_pod;
  // Everything in the process (scheduler, API server, the benchmark's
  // creating and watching threads): what the 2 cores have to share.
  result.extras["process_cpu_ms_per_pod"] =
      pods > 0 ? process_cpu * 1000.0 / static_cast<double>(pods) : 0;
  result.extras["loop_seconds"] = stats_after.scheduling_seconds - stats_before.scheduling_seconds;
  result.extras["batched_pods"] = static_cast<double>(stats_after.batched - stats_before.batched);
  result.extras["attempts"] = static_cast<double>(stats_after.attempts - stats_before.attempts);
  // Why a pod took more than one attempt.
  result.extras["unschedulable"] =
      static_cast<double>(stats_after.unschedulable - stats_before.unschedulable);
  result.extras["errors"] = static_cast<double>(stats_after.errors - stats_before.errors);
  result.extras["bind_failures"] =
      static_cast<double>(stats_after.bind_failures - stats_before.bind_failures);
  result.targets["pods_per_second >= 20000"] = result.pods_per_second >= 20'000;
  result.targets["scheduler_cpu_ms_per_pod <= 0.15"] = cpu_ms_per_pod <= 0.15;
  return result;
}

}  // namespace copse::bench
