// Gang scenarios (issue 4), end to end through the embedded API server like
// `basic`: the scheduler connects over loopback HTTP (list+watch, bindings,
// status, events, evictions); the benchmark writes objects straight into the
// store and a store watch records when each pod gets its nodeName (and when
// it is deleted). No kubelet simulator runs: bound pods stay Pending.
// Gangs are scheduling.k8s.io/v1alpha2 PodGroups (gang.minCount = the gang's
// size); pods join with spec.schedulingGroup.podGroupName. Every PodGroup is
// created before its pods, as a workload controller does.
//
//   gang          kube-scheduler's GangScheduling perf shape: 5,000 nodes
//                 (4 cpu, 32Gi, 110 pods), 100 warm-up gangs, then 3,000
//                 gangs x 3 pods (100m, 500Mi) measured.
//                 Targets: <= 0.2 ms per gang attempt, >= 15,000 pods/s.
//   gang-large    5,000 nodes with 8 GPUs each (64 cpu, 512Gi,
//                 nvidia.com/gpu=8), 100 gangs x 256 pods of 1 GPU (1 cpu,
//                 4Gi). Target: <= 20 ms per gang attempt. Also reports
//                 stranded_accelerators (free GPUs on nodes where no pending
//                 pod fits: at the end and the mean over the binds) and first
//                 fit's at the end on the same gangs (issue 21).
//   gang-preempt  1,000 nodes (3 cpu, 12Gi) filled by 1,000 low-priority
//                 gangs x 3 pods of 1 cpu (terminationGracePeriodSeconds 0,
//                 so an eviction removes the pod at once); then 100
//                 high-priority gangs x 8 pods of 1 cpu, each of which needs
//                 victims, plus 5 doomed high-priority gangs of 8 whose pods
//                 may only use 2 nodes (6 slots): they never fit, so they
//                 must evict nobody. Reports the time until every placeable
//                 high gang is bound, the evictions per placed gang, how
//                 many victim gangs went whole or were split, and checks
//                 that every victim was evicted for a gang that is now bound
//                 and that no node holds more than 3 pods.
//
// Figures: pods/s = measured pods / (last bound - first created); latency =
// pod created -> bound; gang attempt time = the scheduler's
// SchedulerStats::scheduling_seconds / attempts over the measured phase (in
// these scenarios every unit is a PodGroup, so every attempt is a gang
// attempt); scheduler CPU = user+system time of the scheduler's threads
// (loop, oneTBB workers, client I/O), told apart from the API server's by
// thread name, over the measured phase. api_writes_per_pod counts the store
// writes (resourceVersions) beyond the pods' creation while they were
// scheduled: binds, PodScheduled patches, events, PodGroup status.
// gangs_placed / gangs_offered: measured gangs bound whole, of those created.
#include <dirent.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
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
#include "kube/object.h"
#include "kube/pod_group.h"
#include "scheduler/config/metrics.h"
#include "scheduler/scheduler.h"
#include "topology/gang_packing.h"

namespace copse::bench {
namespace {

namespace api = copse::apiserver;
using json = nlohmann::json;
using SteadyClock = std::chrono::steady_clock;
using TimePoint = SteadyClock::time_point;

constexpr const char* kSchedulerThreadName = "copse-sched";
constexpr const char* kServerThreadName = "copse-api";
constexpr const char* kNamespace = "bench";

// copse_podgroup_attempt_duration_seconds by result ("scheduled",
// "unschedulable", "error"): the scheduler loop's time per pod group unit it
// popped. A unit popped while every member is already assumed or bound
// (nothing to place) counts as "error": neither scheduled nor unschedulable.
struct GroupCycles {
  std::map<std::string, double> seconds;
  std::map<std::string, double> count;
};

GroupCycles ReadGroupCycles(const scheduler::config::SchedulerMetrics& metrics) {
  GroupCycles out;
  std::istringstream text(metrics.Serialize());
  std::string line;
  constexpr std::string_view kName = "copse_podgroup_attempt_duration_seconds_";
  while (std::getline(text, line)) {
    if (!line.starts_with(kName)) continue;
    const std::string rest = line.substr(kName.size());
    const bool sum = rest.starts_with("sum{");
    if (!sum && !rest.starts_with("count{")) continue;
    const size_t at = rest.find("result=\"");
    if (at == std::string::npos) continue;
    const size_t end = rest.find('"', at + 8);
    const size_t space = rest.rfind(' ');
    if (end == std::string::npos || space == std::string::npos) continue;
    const std::string result = rest.substr(at + 8, end - at - 8);
    (sum ? out.seconds : out.count)[result] = std::atof(rest.c_str() + space + 1);
  }
  return out;
}

// ---------------------------------------------------------------- objects

std::string PodGroupJson(const std::string& name, int min_count) {
  return R"({"apiVersion":"scheduling.k8s.io/v1alpha2","kind":"PodGroup","metadata":{"name":")" +
         name + R"(","namespace":"bench"},"spec":{"schedulingPolicy":{"gang":{"minCount":)" +
         std::to_string(min_count) + "}}}}";
}

struct MemberTemplate {
  std::string resources;  // the body of requests (and limits), e.g. "cpu":"100m"
  std::string priority_class;
  bool grace_zero = false;
  std::string extra_spec;  // ,"affinity":{...}
};

std::string MemberPodJson(const std::string& name, const std::string& group,
                          const MemberTemplate& t) {
  std::string s =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
      R"(","namespace":"bench","labels":{"gang":")" + group +
      R"("}},"spec":{"schedulerName":"copse-scheduler","schedulingGroup":{"podGroupName":")" +
      group + "\"}";
  if (!t.priority_class.empty()) s += R"(,"priorityClassName":")" + t.priority_class + "\"";
  if (t.grace_zero) s += R"(,"terminationGracePeriodSeconds":0)";
  s += t.extra_spec;
  s +=
      R"(,"containers":[{"name":"main","image":"registry.k8s.io/pause:3.10","resources":{"requests":{)" +
      t.resources + R"(},"limits":{)" + t.resources + "}}}]}}";
  return s;
}

std::string PriorityClassJson(const std::string& name, int value) {
  return R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":")" +
         name + R"("},"value":)" + std::to_string(value) + "}";
}

// ---------------------------------------------------------------- watcher

// What the store watch saw happen to each pod of the bench namespace.
struct PodRecord {
  bool bound = false;
  TimePoint bound_at{};
  std::string node;
  bool deleted = false;
  TimePoint deleted_at{};
  std::string preempted_for;  // "ns/group" from a DisruptionTarget condition
};

// "…pod group bench/high-7" -> "bench/high-7"; "" when the deleted pod
// carries no DisruptionTarget condition.
std::string PreemptedFor(const std::string& pod_json) {
  json pod = json::parse(pod_json, nullptr, false);
  if (!pod.is_object()) return {};
  const json* conditions = nullptr;
  if (auto s = pod.find("status"); s != pod.end() && s->is_object()) {
    if (auto c = s->find("conditions"); c != s->end() && c->is_array()) conditions = &*c;
  }
  if (conditions == nullptr) return {};
  for (const json& c : *conditions) {
    if (c.value("type", "") != kube::kDisruptionTarget) continue;
    const std::string message = c.value("message", "");
    constexpr std::string_view kMarker = "pod group ";
    const size_t at = message.rfind(kMarker);
    return at == std::string::npos ? std::string("?") : message.substr(at + kMarker.size());
  }
  return {};
}

class PodWatcher {
 public:
  explicit PodWatcher(api::Store& store)
      : watch_(store, kNamespace,
               [this](const std::vector<api::WatchEvent>& events, TimePoint now) {
                 Record(events, now);
               }) {}
  bool ok() const { return watch_.ok(); }
  int64_t bound() const { return bound_.load(); }
  int64_t deleted() const { return deleted_.load(); }
  std::unordered_map<std::string, PodRecord> Records() {
    std::lock_guard lock(mu_);
    return records_;
  }

 private:
  void Record(const std::vector<api::WatchEvent>& events, TimePoint now) {
    std::lock_guard lock(mu_);
    for (const api::WatchEvent& e : events) {
      if (!e.object) continue;
      PodRecord& r = records_[e.object->name];
      if (e.type == api::WatchEventType::kDeleted) {
        if (!r.deleted) {
          r.deleted = true;
          r.deleted_at = now;
          r.preempted_for = PreemptedFor(e.object->json);
          deleted_.fetch_add(1);
        }
        continue;
      }
      if (e.object->node_name.empty() || r.bound) continue;
      r.bound = true;
      r.bound_at = now;
      r.node = e.object->node_name;
      bound_.fetch_add(1);
    }
  }

  std::mutex mu_;
  std::unordered_map<std::string, PodRecord> records_;
  std::atomic<int64_t> bound_{0};
  std::atomic<int64_t> deleted_{0};
  PodWatchThread watch_;  // last: stopped before the records go
};

// ---------------------------------------------------------------- cluster

// Store + HTTP server + scheduler, torn down scheduler first.
struct BenchCluster {
  std::unique_ptr<scheduler::config::SchedulerMetrics> metrics;  // outlives sched
  std::shared_ptr<api::Store> store;
  std::unique_ptr<api::ApiServer> server;
  std::unique_ptr<kube::IoThread> io;
  std::unique_ptr<scheduler::Scheduler> sched;
  ~BenchCluster() {
    if (sched) sched->Stop();
    sched.reset();
    io.reset();
    if (server) server->Stop();
  }
  Status Create(const kube::ResourceRef& ref, std::string_view ns, std::string_view body) {
    auto created = store->Create(ref, ns, body);
    if (!created.ok()) return created.error();
    return Status::Ok();
  }
};

Result<std::unique_ptr<BenchCluster>> StartCluster(
    const BenchOptions& options, int64_t nodes, std::string_view node_shape, size_t watch_history,
    const std::vector<std::string>& priority_classes) {
  auto cluster = std::make_unique<BenchCluster>();
  NameThisThread(kServerThreadName);
  api::StoreOptions store_options;
  store_options.watch_history = std::max<size_t>(watch_history, 200'000);
  cluster->store = api::NewStore(store_options);
  auto shape = ParseResourceList(node_shape);
  if (!shape.ok()) return shape.error();
  auto node_objects = api::MakeSyntheticNodes(static_cast<int>(nodes), *shape, {});
  if (!node_objects.ok()) return node_objects.error();
  for (const auto& node : *node_objects) {
    if (Status s = cluster->Create(kube::resources::kNodes, "", node); !s.ok()) return s.error();
  }
  if (Status s =
          cluster->Create(kube::resources::kNamespaces, "",
                          R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"bench"}})");
      !s.ok()) {
    return s.error();
  }
  for (const std::string& pc : priority_classes) {
    if (Status s = cluster->Create(kube::resources::kPriorityClasses, "", pc); !s.ok()) {
      return s.error();
    }
  }
  api::Options server_options;
  server_options.store = cluster->store;
  server_options.threads = 1;
  server_options.serve_https = options.tls;
  server_options.serve_http = !options.tls;
  auto server = api::ApiServer::Start(server_options);
  if (!server.ok()) return server.error();
  cluster->server = std::move(server).value();

  // Threads created from here on (scheduler I/O, loop, oneTBB workers) carry
  // the scheduler's name.
  NameThisThread(kSchedulerThreadName);
  kube::ClientConfig config;
  config.server = options.tls ? cluster->server->https_url() : cluster->server->http_url();
  config.ca_pem = cluster->server->ca_pem();
  config.max_connections = 128;
  config.pipelined_connections = kube::kCopsePipelinedConnections;
  cluster->io = std::make_unique<kube::IoThread>(1);
  auto client = kube::Client::Create(config, cluster->io->executor());
  if (!client.ok()) return client.error();
  scheduler::SchedulerOptions scheduler_options;
  const char* events = getenv("COPSE_BENCH_EVENTS");
  scheduler_options.record_events = events == nullptr || std::string(events) != "0";
  cluster->metrics = std::make_unique<scheduler::config::SchedulerMetrics>();
  scheduler_options.metrics = cluster->metrics.get();
  auto created = scheduler::Scheduler::Create(*client, scheduler_options);
  if (!created.ok()) return created.error();
  cluster->sched = std::move(created).value();
  cluster->sched->Start();
  NameThisThread("copse-bench");
  if (!cluster->sched->WaitForSync(std::chrono::seconds(60))) {
    return MakeError(ErrorCode::kInternal, "scheduler informers did not sync");
  }
  return cluster;
}

// Waits (polling, with a deadline) until `done()` reaches `target`.
Status WaitFor(const std::function<int64_t()>& done, int64_t target, std::string_view phase,
               std::chrono::seconds timeout, Progress& progress) {
  const TimePoint deadline = SteadyClock::now() + timeout;
  for (int64_t n = done(); n < target; n = done()) {
    if (SteadyClock::now() > deadline) {
      return MakeError(ErrorCode::kInternal, std::string(phase) + ": only " + std::to_string(n) +
                                                 "/" + std::to_string(target) + " after " +
                                                 std::to_string(timeout.count()) + " s");
    }
    progress.Update(phase, n, target);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return Status::Ok();
}

// A gang workload: `gangs` PodGroups named <prefix>-<g>, each with `size`
// members <prefix>-<g>-<i>.
struct GangBatch {
  std::string prefix;
  int64_t gangs = 0;
  int size = 0;
  int min_count = 0;
  MemberTemplate member;

  std::string Group(int64_t g) const { return prefix + "-" + std::to_string(g); }
  std::string Pod(int64_t g, int i) const { return Group(g) + "-" + std::to_string(i); }
  int64_t pods() const { return gangs * size; }
};

Status CreateGroups(BenchCluster& cluster, const GangBatch& batch) {
  for (int64_t g = 0; g < batch.gangs; ++g) {
    if (Status s = cluster.Create(kube::resources::kPodGroups, kNamespace,
                                  PodGroupJson(batch.Group(g), batch.min_count));
        !s.ok()) {
      return s;
    }
  }
  return Status::Ok();
}

// Creates the batch's pods (bodies built beforehand, so the loop only
// creates), recording each one's creation time in `created` (by name).
Status CreatePods(BenchCluster& cluster, const GangBatch& batch,
                  std::vector<std::pair<std::string, TimePoint>>* created) {
  std::vector<std::pair<std::string, std::string>> bodies;
  bodies.reserve(static_cast<size_t>(batch.pods()));
  for (int64_t g = 0; g < batch.gangs; ++g) {
    for (int i = 0; i < batch.size; ++i) {
      std::string name = batch.Pod(g, i);
      std::string body = MemberPodJson(name, batch.Group(g), batch.member);
      bodies.emplace_back(std::move(name), std::move(body));
    }
  }
  for (auto& [name, body] : bodies) {
    const TimePoint now = SteadyClock::now();
    if (Status s = cluster.Create(kube::resources::kPods, kNamespace, body); !s.ok()) return s;
    if (created != nullptr) created->emplace_back(std::move(name), now);
  }
  return Status::Ok();
}

struct Latencies {
  std::vector<int64_t> samples;  // ns
  TimePoint last_bound{};
  int64_t unbound = 0;
};

Latencies CreatedToBound(const std::vector<std::pair<std::string, TimePoint>>& created,
                         const std::unordered_map<std::string, PodRecord>& records,
                         TimePoint start) {
  Latencies out;
  out.last_bound = start;
  out.samples.reserve(created.size());
  for (const auto& [name, at] : created) {
    auto it = records.find(name);
    if (it == records.end() || !it->second.bound) {
      ++out.unbound;
      continue;
    }
    out.last_bound = std::max(out.last_bound, it->second.bound_at);
    out.samples.push_back(
        std::chrono::duration_cast<std::chrono::nanoseconds>(it->second.bound_at - at).count());
  }
  return out;
}

// The measured phase of the two throughput scenarios.
struct ThroughputShape {
  std::string scenario;
  int64_t nodes = 0;
  std::string node_shape;
  GangBatch warmup;
  GangBatch measured;
  // GPU scenarios (issue 21): stranded_accelerators over the run.
  int32_t gpus_per_node = 0;
  int32_t gpus_per_pod = 0;
};

// Stranded accelerators (topology/gang_packing.h StrandedCapacity): free
// GPUs on nodes where no pending pod fits, replayed bind by bind (every pod
// of the scenario counts as pending until bound: they are all created at
// the start), and first fit's on the same gangs at the end.
struct StrandedFigures {
  double mean = 0;  // over the binds
  int64_t end = 0;
  int64_t first_fit_end = 0;
};

StrandedFigures StrandedOverRun(const std::unordered_map<std::string, PodRecord>& records,
                                const ThroughputShape& shape) {
  StrandedFigures out;
  std::vector<std::pair<TimePoint, std::string>> binds;
  for (const auto& [name, r] : records) {
    if (r.bound) binds.emplace_back(r.bound_at, r.node);
  }
  std::sort(binds.begin(), binds.end());
  const int64_t total = shape.warmup.pods() + shape.measured.pods();
  const int64_t per_node = shape.gpus_per_node;
  const int64_t per_pod = shape.gpus_per_pod;
  std::unordered_map<std::string, int64_t> free;  // touched nodes
  int64_t stranded = 0;                           // while something is pending
  auto strands = [&](int64_t f) { return f > 0 && f < per_pod ? f : 0; };
  // Untouched nodes (whole) strand only if a pod asks for more than a node has.
  const int64_t untouched_each = strands(per_node);
  double sum = 0;
  for (size_t i = 0; i < binds.size(); ++i) {
    auto [it, added] = free.try_emplace(binds[i].second, per_node);
    stranded -= strands(it->second);
    it->second -= per_pod;
    stranded += strands(it->second);
    const int64_t untouched = std::max<int64_t>(0, shape.nodes - static_cast<int64_t>(free.size()));
    const bool pending = static_cast<int64_t>(i + 1) < total;
    const int64_t now = pending ? stranded + untouched * untouched_each : 0;
    sum += static_cast<double>(now);
    out.end = now;
  }
  out.mean = binds.empty() ? 0 : sum / static_cast<double>(binds.size());

  std::vector<topology::PackingNode> nodes(static_cast<size_t>(shape.nodes),
                                           topology::PackingNode{0, shape.gpus_per_node});
  std::vector<topology::PackingGang> gangs;
  for (const GangBatch* batch : {&shape.warmup, &shape.measured}) {
    for (int64_t g = 0; g < batch->gangs; ++g) {
      gangs.push_back({batch->size, shape.gpus_per_pod, false});
    }
  }
  const topology::PackingResult ff = topology::FirstFitGangs(nodes, gangs);
  std::vector<int64_t> ff_free(ff.free.begin(), ff.free.end());
  std::vector<int64_t> pending;
  for (size_t g = 0; g < gangs.size(); ++g) {
    if (!ff.placed[g]) pending.push_back(gangs[g].per_pod);
  }
  out.first_fit_end = topology::StrandedCapacity(ff_free, pending);
  return out;
}

Result<BenchResult> RunThroughput(const BenchOptions& options, Progress& progress,
                                  const ThroughputShape& shape) {
  const int64_t total_pods = shape.warmup.pods() + shape.measured.pods();
  auto started = StartCluster(options, shape.nodes, shape.node_shape,
                              static_cast<size_t>(total_pods) * 4 + 1024, {});
  if (!started.ok()) return started.error();
  BenchCluster& cluster = **started;
  PodWatcher watcher(*cluster.store);
  if (!watcher.ok()) return MakeError(ErrorCode::kInternal, "cannot watch the bench namespace");
  auto bound = [&] { return watcher.bound(); };

  // Warm-up (not measured): the first gangs, the scheduler's threads and caches.
  if (Status s = CreateGroups(cluster, shape.warmup); !s.ok()) return s.error();
  if (Status s = CreatePods(cluster, shape.warmup, nullptr); !s.ok()) return s.error();
  if (Status s =
          WaitFor(bound, shape.warmup.pods(), "warm-up", std::chrono::seconds(300), progress);
      !s.ok()) {
    return s.error();
  }

  // The measured gangs' PodGroups exist before their pods (not timed).
  if (Status s = CreateGroups(cluster, shape.measured); !s.ok()) return s.error();
  std::vector<std::pair<std::string, TimePoint>> created;
  created.reserve(static_cast<size_t>(shape.measured.pods()));
  const double cpu_before = NamedThreadsCpuSeconds(kSchedulerThreadName);
  const double api_cpu_before = NamedThreadsCpuSeconds(kServerThreadName);
  const double process_cpu_before = ProcessCpuSeconds();
  const uint64_t rv_before = cluster.store->CurrentResourceVersion();
  const scheduler::SchedulerStats before = cluster.sched->stats();
  const GroupCycles cycles_before = ReadGroupCycles(*cluster.metrics);
  const TimePoint start = SteadyClock::now();
  if (Status s = CreatePods(cluster, shape.measured, &created); !s.ok()) return s.error();
  const double create_seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();
  // On timeout the figures cover the pods bound so far (and say so).
  const Status waited = WaitFor(bound, total_pods, "schedule", std::chrono::seconds(600), progress);
  const TimePoint stopped = SteadyClock::now();
  const double cpu = NamedThreadsCpuSeconds(kSchedulerThreadName) - cpu_before;
  const double api_cpu = NamedThreadsCpuSeconds(kServerThreadName) - api_cpu_before;
  const double process_cpu = ProcessCpuSeconds() - process_cpu_before;
  const uint64_t store_writes = cluster.store->CurrentResourceVersion() - rv_before;
  const scheduler::SchedulerStats after = cluster.sched->stats();
  const GroupCycles cycles_after = ReadGroupCycles(*cluster.metrics);
  Latencies lat = CreatedToBound(created, watcher.Records(), start);
  const double seconds =
      std::chrono::duration<double>((waited.ok() ? lat.last_bound : stopped) - start).count();
  const int64_t measured_bound = shape.measured.pods() - lat.unbound;
  if (waited.ok()) {
    progress.Done("schedule", shape.measured.pods(), seconds);
  } else if (!options.quiet) {
    std::fprintf(stderr, "\n  %s\n", waited.error().message.c_str());
  }

  const double attempts = static_cast<double>(after.attempts - before.attempts);
  const double loop_seconds = after.scheduling_seconds - before.scheduling_seconds;
  const double pods = static_cast<double>(shape.measured.pods());
  BenchResult result;
  result.scenario = shape.scenario;
  result.nodes = shape.nodes;
  result.pods = shape.measured.pods();
  result.pods_per_second = seconds > 0 ? static_cast<double>(measured_bound) / seconds : 0;
  result.p50_ms = PercentileMs(lat.samples, 50);
  result.p99_ms = PercentileMs(lat.samples, 99);
  result.scheduler_cpu_seconds = cpu;
  result.peak_rss_bytes = PeakRssBytes();
  result.extras["gangs"] = static_cast<double>(shape.measured.gangs);
  result.extras["gang_size"] = shape.measured.size;
  result.extras["gang_attempts"] = attempts;
  result.extras["gang_attempt_ms"] = attempts > 0 ? loop_seconds * 1000.0 / attempts : 0;
  result.extras["loop_seconds"] = loop_seconds;
  result.extras["batched_pods"] = static_cast<double>(after.batched - before.batched);
  // The loop time split by what the popped unit led to.
  auto delta = [&](const std::map<std::string, double>& a, const std::map<std::string, double>& b,
                   const std::string& key) {
    const double x = a.contains(key) ? a.at(key) : 0;
    const double y = b.contains(key) ? b.at(key) : 0;
    return x - y;
  };
  const double placed_cycles = delta(cycles_after.count, cycles_before.count, "scheduled");
  const double noop_cycles = delta(cycles_after.count, cycles_before.count, "error");
  result.extras["placing_cycle_ms"] =
      placed_cycles > 0
          ? delta(cycles_after.seconds, cycles_before.seconds, "scheduled") * 1000.0 / placed_cycles
          : 0;
  result.extras["noop_group_pops"] = noop_cycles;
  result.extras["noop_group_pop_seconds"] =
      delta(cycles_after.seconds, cycles_before.seconds, "error");
  result.extras["pods_bound"] = static_cast<double>(measured_bound);
  result.extras["timed_out"] = waited.ok() ? 0 : 1;
  result.targets["every pod bound within 600 s"] = waited.ok();
  result.extras["creates_per_second"] = create_seconds > 0 ? pods / create_seconds : 0;
  const double bound_pods = std::max<double>(1, static_cast<double>(measured_bound));
  result.extras["scheduler_cpu_ms_per_pod"] = cpu * 1000.0 / bound_pods;
  result.extras["scheduler_cpu_ms_per_gang"] =
      cpu * 1000.0 / static_cast<double>(shape.measured.gangs);
  result.extras["unschedulable_attempts"] =
      static_cast<double>(after.unschedulable - before.unschedulable);
  result.extras["bind_failures"] = static_cast<double>(after.bind_failures - before.bind_failures);
  // Writes the store took while the measured pods were scheduled, beyond
  // their creation: binds, pod status patches, events, PodGroup status.
  result.extras["api_writes_per_pod"] = (static_cast<double>(store_writes) - pods) / bound_pods;
  result.extras["api_server_cpu_seconds"] = api_cpu;
  // Everything in the process (scheduler, API server, the benchmark's own
  // threads): what the 2 cores have to share.
  result.extras["process_cpu_ms_per_pod"] = process_cpu * 1000.0 / bound_pods;
  // Gangs bound whole, of those offered (measured phase).
  const auto final_records = watcher.Records();
  int64_t gangs_placed = 0;
  for (int64_t g = 0; g < shape.measured.gangs; ++g) {
    bool whole = true;
    for (int i = 0; i < shape.measured.size && whole; ++i) {
      auto it = final_records.find(shape.measured.Pod(g, i));
      whole = it != final_records.end() && it->second.bound;
    }
    gangs_placed += whole ? 1 : 0;
  }
  result.extras["gangs_placed"] = static_cast<double>(gangs_placed);
  result.extras["gangs_offered"] = static_cast<double>(shape.measured.gangs);
  if (shape.gpus_per_node > 0 && shape.gpus_per_pod > 0) {
    const StrandedFigures stranded = StrandedOverRun(final_records, shape);
    result.extras["stranded_accelerators"] = static_cast<double>(stranded.end);
    result.extras["stranded_accelerators_mean"] = stranded.mean;
    result.extras["first_fit_stranded_accelerators"] = static_cast<double>(stranded.first_fit_end);
  }
  return result;
}

}  // namespace

// ---------------------------------------------------------------- scenarios

Result<BenchResult> RunGangBench(const BenchOptions& options, Progress& progress) {
  ThroughputShape shape;
  shape.scenario = "gang";
  shape.nodes = options.nodes > 0 ? options.nodes : 5'000;
  shape.node_shape = "cpu=4,memory=32Gi,pods=110";
  MemberTemplate member;
  member.resources = R"("cpu":"100m","memory":"500Mi")";
  shape.warmup = GangBatch{"init", 100, 3, 3, member};
  // --pods rounds down to whole gangs of 3.
  const int64_t gangs = options.pods > 0 ? std::max<int64_t>(1, options.pods / 3) : 3'000;
  shape.measured = GangBatch{"gang", gangs, 3, 3, member};
  auto result = RunThroughput(options, progress, shape);
  if (!result.ok()) return result;
  result->targets["gang_attempt_ms <= 0.2"] = result->extras["gang_attempt_ms"] <= 0.2;
  result->targets["pods_per_second >= 15000"] = result->pods_per_second >= 15'000;
  return result;
}

Result<BenchResult> RunGangLargeBench(const BenchOptions& options, Progress& progress) {
  ThroughputShape shape;
  shape.scenario = "gang-large";
  shape.nodes = options.nodes > 0 ? options.nodes : 5'000;
  shape.node_shape = "cpu=64,memory=512Gi,nvidia.com/gpu=8,pods=110";
  MemberTemplate member;
  member.resources = R"("cpu":"1","memory":"4Gi","nvidia.com/gpu":"1")";
  shape.warmup = GangBatch{"init", 2, 256, 256, member};
  // --pods rounds down to whole gangs of 256.
  const int64_t gangs = options.pods > 0 ? std::max<int64_t>(1, options.pods / 256) : 100;
  shape.measured = GangBatch{"large", gangs, 256, 256, member};
  shape.gpus_per_node = 8;
  shape.gpus_per_pod = 1;
  auto result = RunThroughput(options, progress, shape);
  if (!result.ok()) return result;
  result->targets["gang_attempt_ms <= 20"] = result->extras["gang_attempt_ms"] <= 20;
  return result;
}

Result<BenchResult> RunGangPreemptBench(const BenchOptions& options, Progress& progress) {
  const int64_t nodes = options.nodes > 0 ? options.nodes : 1'000;
  constexpr int kSlotsPerNode = 3;  // 3 cpu nodes, 1 cpu pods
  MemberTemplate low_member;
  low_member.resources = R"("cpu":"1","memory":"1Gi")";
  low_member.priority_class = "bench-low";
  low_member.grace_zero = true;
  // Exactly full: nodes * 3 one-cpu pods.
  const GangBatch low{"low", nodes, 3, 3, low_member};
  MemberTemplate high_member = low_member;
  high_member.priority_class = "bench-high";
  const int64_t high_gangs =
      options.pods > 0 ? std::max<int64_t>(1, options.pods / 8) : std::min<int64_t>(100, nodes / 4);
  const GangBatch high{"high", high_gangs, 8, 8, high_member};
  // Doomed: 8 pods that may only use two nodes (6 slots), wherever the
  // lower-priority pods go. Per pod, preemption could help; as a gang never.
  constexpr int64_t kDoomed = 5;
  std::vector<GangBatch> doomed;
  for (int64_t d = 0; d < kDoomed && 2 * d + 2 <= nodes; ++d) {
    MemberTemplate t = high_member;
    t.extra_spec =
        R"(,"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"kubernetes.io/hostname","operator":"In","values":["node-)" +
        std::to_string(2 * d + 1) + R"(","node-)" + std::to_string(2 * d + 2) + R"("]}]}]}}})";
    doomed.push_back(GangBatch{"doomed" + std::to_string(d), 1, 8, 8, t});
  }

  const int64_t all_pods = low.pods() + high.pods() + static_cast<int64_t>(doomed.size()) * 8;
  auto started = StartCluster(
      options, nodes, "cpu=3,memory=12Gi,pods=110", static_cast<size_t>(all_pods) * 6 + 1024,
      {PriorityClassJson("bench-low", 10), PriorityClassJson("bench-high", 1000)});
  if (!started.ok()) return started.error();
  BenchCluster& cluster = **started;
  PodWatcher watcher(*cluster.store);
  if (!watcher.ok()) return MakeError(ErrorCode::kInternal, "cannot watch the bench namespace");

  // Fill the cluster (not measured).
  const TimePoint fill_start = SteadyClock::now();
  if (Status s = CreateGroups(cluster, low); !s.ok()) return s.error();
  if (Status s = CreatePods(cluster, low, nullptr); !s.ok()) return s.error();
  if (Status s = WaitFor([&] { return watcher.bound(); }, low.pods(), "fill",
                         std::chrono::seconds(300), progress);
      !s.ok()) {
    return s.error();
  }
  progress.Done("fill", low.pods(),
                std::chrono::duration<double>(SteadyClock::now() - fill_start).count());

  // Measure: high-priority gangs arrive on the full cluster.
  if (Status s = CreateGroups(cluster, high); !s.ok()) return s.error();
  for (const GangBatch& d : doomed) {
    if (Status s = CreateGroups(cluster, d); !s.ok()) return s.error();
  }
  std::vector<std::pair<std::string, TimePoint>> created;
  const double cpu_before = NamedThreadsCpuSeconds(kSchedulerThreadName);
  const scheduler::SchedulerStats before = cluster.sched->stats();
  const TimePoint start = SteadyClock::now();
  if (Status s = CreatePods(cluster, high, &created); !s.ok()) return s.error();
  for (const GangBatch& d : doomed) {
    if (Status s = CreatePods(cluster, d, nullptr); !s.ok()) return s.error();
  }
  auto high_bound = [&] {
    int64_t n = 0;
    for (const auto& [name, r] : watcher.Records()) n += r.bound && name.starts_with("high-");
    return n;
  };
  const auto preempt_timeout = std::chrono::seconds(nodes >= 1'000 ? 600 : 60);
  if (Status s = WaitFor(high_bound, high.pods(), "preempt", preempt_timeout, progress); !s.ok()) {
    // Say why: the first high gang not fully bound and its PodGroupScheduled.
    const auto records = watcher.Records();
    for (int64_t g = 0; g < high.gangs; ++g) {
      int64_t bound = 0;
      for (int i = 0; i < high.size; ++i) {
        auto it = records.find(high.Pod(g, i));
        bound += it != records.end() && it->second.bound;
      }
      if (bound >= high.size) continue;
      std::string why = "no status";
      if (auto got = cluster.store->Get(kube::resources::kPodGroups, kNamespace, high.Group(g));
          got.ok()) {
        if (auto group = kube::PodGroup::Decode((*got)->json); group.ok()) {
          if (const kube::Condition* c =
                  kube::FindCondition(group->status.conditions, kube::kPodGroupScheduled)) {
            why = c->status + " " + c->reason + ": " + c->message;
          }
        }
      }
      return MakeError(ErrorCode::kInternal, s.error().message + "; " + high.Group(g) + " has " +
                                                 std::to_string(bound) + " bound: " + why);
    }
    return s.error();
  }
  const double cpu = NamedThreadsCpuSeconds(kSchedulerThreadName) - cpu_before;
  const scheduler::SchedulerStats after = cluster.sched->stats();
  // Each doomed gang has had at least one full attempt (its PodGroupScheduled
  // condition is written at the end of one), so its chance to evict is past.
  auto doomed_reported = [&] {
    int64_t n = 0;
    for (const GangBatch& d : doomed) {
      auto got = cluster.store->Get(kube::resources::kPodGroups, kNamespace, d.Group(0));
      if (!got.ok()) continue;
      auto group = kube::PodGroup::Decode((*got)->json);
      if (!group.ok()) continue;
      const kube::Condition* c =
          kube::FindCondition(group->status.conditions, kube::kPodGroupScheduled);
      n += c != nullptr && c->status == "False";
    }
    return n;
  };
  if (Status s = WaitFor(doomed_reported, static_cast<int64_t>(doomed.size()), "doomed",
                         std::chrono::seconds(120), progress);
      !s.ok()) {
    return s.error();
  }
  const auto records = watcher.Records();
  Latencies lat = CreatedToBound(created, records, start);
  const double seconds = std::chrono::duration<double>(lat.last_bound - start).count();
  progress.Done("preempt", high.pods(), seconds);

  // Victims and whom they were evicted for.
  std::map<std::string, int64_t> bound_per_group;  // "bench/<group>" -> bound members
  std::map<std::string, int64_t> victims_for;      // "bench/<group>" -> victims
  std::map<std::string, int64_t> evicted_per_low;  // low group -> evicted members
  std::map<std::string, int64_t> live_per_node;
  int64_t victims = 0;
  int64_t unattributed = 0;
  TimePoint last_eviction = start;
  for (const auto& [name, r] : records) {
    const std::string group = name.substr(0, name.rfind('-'));
    if (r.bound && !r.deleted) {
      ++bound_per_group[std::string(kNamespace) + "/" + group];
      ++live_per_node[r.node];
    }
    if (!r.deleted) continue;
    ++victims;
    last_eviction = std::max(last_eviction, r.deleted_at);
    if (r.preempted_for.empty() || r.preempted_for == "?")
      ++unattributed;
    else
      ++victims_for[r.preempted_for];
    if (name.starts_with("low-")) ++evicted_per_low[group];
  }
  int64_t placed_gangs = 0;
  for (int64_t g = 0; g < high.gangs; ++g) {
    placed_gangs +=
        bound_per_group[std::string(kNamespace) + "/" + high.Group(g)] >= high.min_count;
  }
  int64_t victims_for_failed = 0;  // evicted for a gang that is not (>= minCount) bound
  for (const auto& [group, n] : victims_for) {
    if (bound_per_group[group] < high.min_count) victims_for_failed += n;
  }
  int64_t doomed_bound = 0;
  for (const GangBatch& d : doomed) {
    doomed_bound += bound_per_group[std::string(kNamespace) + "/" + d.Group(0)];
  }
  int64_t whole = 0, split = 0;
  for (const auto& [group, n] : evicted_per_low) (n >= low.size ? whole : split) += 1;
  int64_t overfull_nodes = 0;
  for (const auto& [node, n] : live_per_node) overfull_nodes += n > kSlotsPerNode;

  BenchResult result;
  result.scenario = "gang-preempt";
  result.nodes = nodes;
  result.pods = high.pods();
  result.pods_per_second = seconds > 0 ? static_cast<double>(high.pods()) / seconds : 0;
  result.p50_ms = PercentileMs(lat.samples, 50);
  result.p99_ms = PercentileMs(lat.samples, 99);
  result.scheduler_cpu_seconds = cpu;
  result.peak_rss_bytes = PeakRssBytes();
  const double attempts = static_cast<double>(after.attempts - before.attempts);
  const double loop_seconds = after.scheduling_seconds - before.scheduling_seconds;
  result.extras["high_gangs"] = static_cast<double>(high.gangs);
  result.extras["high_gangs_bound"] = static_cast<double>(placed_gangs);
  result.extras["time_to_all_high_bound_s"] = seconds;
  result.extras["time_to_last_eviction_s"] =
      std::chrono::duration<double>(last_eviction - start).count();
  result.extras["victims"] = static_cast<double>(victims);
  result.extras["victims_per_placed_gang"] =
      placed_gangs > 0 ? static_cast<double>(victims) / static_cast<double>(placed_gangs) : 0;
  result.extras["victim_gangs_whole"] = static_cast<double>(whole);
  result.extras["victim_gangs_split"] = static_cast<double>(split);
  result.extras["victims_for_failed_gangs"] = static_cast<double>(victims_for_failed);
  result.extras["victims_unattributed"] = static_cast<double>(unattributed);
  result.extras["doomed_gangs"] = static_cast<double>(doomed.size());
  result.extras["doomed_pods_bound"] = static_cast<double>(doomed_bound);
  result.extras["gang_attempts"] = attempts;
  result.extras["gang_attempt_ms"] = attempts > 0 ? loop_seconds * 1000.0 / attempts : 0;
  result.extras["preemption_attempts"] =
      static_cast<double>(after.preemption_attempts - before.preemption_attempts);
  result.extras["preemption_victims_stat"] =
      static_cast<double>(after.preemption_victims - before.preemption_victims);
  result.extras["overfull_nodes"] = static_cast<double>(overfull_nodes);
  result.targets["every high gang bound"] = placed_gangs == high.gangs;
  result.targets["no eviction for a gang that failed"] =
      victims_for_failed == 0 && unattributed == 0 && doomed_bound == 0;
  result.targets["no node over capacity"] = overfull_nodes == 0;
  return result;
}

}  // namespace copse::bench
