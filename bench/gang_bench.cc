// Gang scenarios, end to end on the bench harness (bench/harness.h) like
// `basic`: the scheduler connects over loopback HTTP (list+watch, bindings,
// status, events, evictions); the benchmark POSTs every PodGroup and pod over
// HTTP and the harness's watch records when each pod gets its nodeName (and
// when it is deleted). No kubelet simulator runs: bound pods stay Pending.
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
//                 must evict nobody. A quarter of the filling gangs are
//                 semi-preemptible copse PodGroups (3 pods, minMember 2, the
//                 lowest priority): only pods beyond their minimum may go.
//                 Reports the time until every placeable high gang is bound,
//                 the evictions per placed gang, how many victim gangs went
//                 whole or were split, the semi-preemptible pods taken, and
//                 checks that every victim was evicted for a gang that is now
//                 bound, that no node holds more than 3 pods, and that no gang
//                 is left bound below its minimum (gangs_below_minimum; the
//                 run fails otherwise).
//
// Figures: pods/s = measured pods bound / (last bound - first create, the
// clock starting before the measured PodGroups); a timeout is a failure
// (timed_out, exit 1) whose figures cover what was bound; latency =
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
#include "bench/harness.h"
#include "core/quantity.h"
#include "deploy/crds.h"
#include "kube/client.h"
#include "kube/object.h"
#include "kube/pod_group.h"
#include "kube/yaml.h"
#include "scheduler/config/metrics.h"
#include "scheduler/scheduler.h"
#include "topology/gang_packing.h"

namespace copse::bench {
namespace {

namespace api = copse::apiserver;
using json = nlohmann::json;

constexpr const char* kNamespace = kBenchNamespace;

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

// A copse PodGroup (scheduling.copse.dev/v1alpha1) of `min_member` pods.
std::string CopsePodGroupJson(const std::string& name, int min_member,
                              const std::string& preemptibility) {
  return R"({"apiVersion":"scheduling.copse.dev/v1alpha1","kind":"PodGroup","metadata":{"name":")" +
         name + R"(","namespace":"bench"},"spec":{"minMember":)" + std::to_string(min_member) +
         R"(,"preemptibility":")" + preemptibility + R"("}})";
}

struct MemberTemplate {
  std::string resources;  // the body of requests (and limits), e.g. "cpu":"100m"
  std::string priority_class;
  bool grace_zero = false;
  std::string extra_spec;  // ,"affinity":{...}
  // Members of a copse PodGroup (label scheduling.copse.dev/pod-group)
  // instead of a v1alpha2 one (spec.schedulingGroup).
  bool copse_group = false;
  std::string preemptibility;  // of the copse PodGroup
};

std::string MemberPodJson(const std::string& name, const std::string& group,
                          const MemberTemplate& t) {
  std::string s = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
                  R"(","namespace":"bench","labels":{"gang":")" + group + "\"";
  if (t.copse_group) s += R"(,"scheduling.copse.dev/pod-group":")" + group + "\"";
  s += R"(}},"spec":{"schedulerName":"copse-scheduler")";
  if (!t.copse_group) s += R"(,"schedulingGroup":{"podGroupName":")" + group + "\"}";
  if (!t.priority_class.empty()) s += R"(,"priorityClassName":")" + t.priority_class + "\"";
  if (t.grace_zero) s += R"(,"terminationGracePeriodSeconds":0)";
  s += t.extra_spec;
  s +=
      R"(,"containers":[{"name":"main","image":"registry.k8s.io/pause:3.10","resources":{"requests":{)" +
      t.resources + R"(},"limits":{)" + t.resources + "}}}]}}";
  return s;
}

// The shipped CRDs of copse's own kinds (deploy/crds/copse), as JSON.
Result<std::vector<std::string>> CopseCrds() {
  std::vector<std::string> out;
  for (const deploy::EmbeddedFile& file : deploy::BuiltinCrds()) {
    if (!file.path.starts_with("crds/copse/")) continue;
    Result<std::vector<std::string>> docs = kube::YamlDocumentsToJson(file.content);
    if (!docs.ok()) return docs.error();
    for (std::string& doc : *docs) out.push_back(std::move(doc));
  }
  return out;
}

std::string PriorityClassJson(const std::string& name, int value) {
  return R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":")" +
         name + R"("},"value":)" + std::to_string(value) + "}";
}

// ---------------------------------------------------------------- watcher

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

Status CreateGroups(Harness& h, const GangBatch& batch, Progress& progress) {
  std::vector<std::string> bodies;
  for (int64_t g = 0; g < batch.gangs; ++g) {
    bodies.push_back(batch.member.copse_group ? CopsePodGroupJson(batch.Group(g), batch.min_count,
                                                                  batch.member.preemptibility)
                                              : PodGroupJson(batch.Group(g), batch.min_count));
  }
  return h.Create(
      batch.member.copse_group ? kube::resources::kCopsePodGroups : kube::resources::kPodGroups,
      kNamespace, std::move(bodies), nullptr, "podgroups", progress);
}

// Creates the batch's pods over HTTP (bodies built beforehand, so the
// measured loop only creates), recording each one's send time in `created`.
Status CreatePods(Harness& h, const GangBatch& batch, std::vector<Created>* created,
                  Progress& progress) {
  std::vector<std::string> bodies;
  bodies.reserve(static_cast<size_t>(batch.pods()));
  for (int64_t g = 0; g < batch.gangs; ++g) {
    for (int i = 0; i < batch.size; ++i) {
      bodies.push_back(MemberPodJson(batch.Pod(g, i), batch.Group(g), batch.member));
    }
  }
  return h.Create(kube::resources::kPods, kNamespace, std::move(bodies), created, "create",
                  progress);
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
  auto metrics = std::make_unique<scheduler::config::SchedulerMetrics>();  // outlives the harness
  ClusterSpec spec;
  spec.nodes = shape.nodes;
  spec.node_shape = shape.node_shape;
  spec.watch_history = static_cast<size_t>(total_pods) * 4 + 1024;
  spec.scheduler_options = [&](scheduler::SchedulerOptions& so) { so.metrics = metrics.get(); };
  auto started = Harness::Start(options, spec, progress);
  if (!started.ok()) return started.error();
  Harness& h = **started;
  Timeline& timeline = h.timeline();
  auto bound = [&] { return timeline.bound(); };
  const auto timeout =
      std::chrono::seconds(options.timeout_seconds > 0 ? options.timeout_seconds : 600);

  // Warm-up (not measured): the first gangs, the scheduler's threads and caches.
  if (Status s = CreateGroups(h, shape.warmup, progress); !s.ok()) return s.error();
  if (Status s = CreatePods(h, shape.warmup, nullptr, progress); !s.ok()) return s.error();
  if (!h.WaitFor(bound, shape.warmup.pods(), "warm-up", timeout, progress)) {
    return MakeError(ErrorCode::kTimeout, "warm-up: only " + std::to_string(bound()) + "/" +
                                              std::to_string(shape.warmup.pods()) + " bound " +
                                              timeline.error());
  }

  // Measured from before the first create: the PodGroups, then their pods.
  FiguresInput in;
  in.created.reserve(static_cast<size_t>(shape.measured.pods()));
  const std::optional<double> cpu_before = h.SchedulerCpuSeconds();
  const std::optional<double> api_cpu_before = h.ApiServerCpuSeconds();
  const double process_cpu_before = ProcessCpuSeconds();
  const uint64_t rv_before = h.store()->CurrentResourceVersion();
  const scheduler::SchedulerStats before = h.scheduler()->stats();
  const GroupCycles cycles_before = ReadGroupCycles(*metrics);
  in.start = BenchClock::now();
  if (Status s = CreateGroups(h, shape.measured, progress); !s.ok()) return s.error();
  if (Status s = CreatePods(h, shape.measured, &in.created, progress); !s.ok()) return s.error();
  const double create_seconds = std::chrono::duration<double>(BenchClock::now() - in.start).count();
  // A timeout is a failure: the figures cover the pods bound so far and say so.
  in.timed_out = !h.WaitFor(bound, total_pods, "schedule", timeout, progress);
  if (!timeline.error().empty()) return MakeError(ErrorCode::kUnavailable, timeline.error());
  const double cpu = *h.SchedulerCpuSeconds() - *cpu_before;
  in.scheduler_cpu_seconds = cpu;
  in.api_server_cpu_seconds = *h.ApiServerCpuSeconds() - *api_cpu_before;
  const double process_cpu = ProcessCpuSeconds() - process_cpu_before;
  const uint64_t store_writes = h.store()->CurrentResourceVersion() - rv_before;
  const scheduler::SchedulerStats after = h.scheduler()->stats();
  const GroupCycles cycles_after = ReadGroupCycles(*metrics);
  in.records = timeline.Snapshot();
  BenchResult result;
  result.scenario = shape.scenario;
  result.nodes = shape.nodes;
  const TimePoint last = ApplyFigures(in, result);
  progress.Done("schedule", result.pods_bound,
                std::chrono::duration<double>(last - in.start).count());
  const int64_t measured_bound = result.pods_bound;
  const double attempts = static_cast<double>(after.attempts - before.attempts);
  const double loop_seconds = after.scheduling_seconds - before.scheduling_seconds;
  const double pods = static_cast<double>(shape.measured.pods());
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
  result.targets["every pod bound"] = !in.timed_out;
  result.extras["creates_per_second"] = create_seconds > 0 ? pods / create_seconds : 0;
  const double bound_pods = std::max<double>(1, static_cast<double>(measured_bound));
  result.extras["scheduler_cpu_ms_per_pod"] = cpu * 1000.0 / bound_pods;
  result.extras["scheduler_cpu_ms_per_gang"] =
      cpu * 1000.0 / static_cast<double>(shape.measured.gangs);
  result.extras["unschedulable_attempts"] =
      static_cast<double>(after.unschedulable - before.unschedulable);
  result.extras["bind_failures"] = static_cast<double>(after.bind_failures - before.bind_failures);
  // Writes the store took while the measured pods were scheduled, beyond
  // their and their PodGroups' creation: binds, pod status patches, events,
  // PodGroup status.
  result.extras["api_writes_per_pod"] =
      (static_cast<double>(store_writes) - pods - static_cast<double>(shape.measured.gangs)) /
      bound_pods;
  // Everything in the process (scheduler, API server, the benchmark's own
  // threads): what the 2 cores have to share.
  result.extras["process_cpu_ms_per_pod"] = process_cpu * 1000.0 / bound_pods;
  // Gangs bound whole, of those offered (measured phase).
  const auto& final_records = in.records;
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
  result->targets["pods_per_second >= 15000"] =
      result->pods_per_second.value_or(0) >= 15'000 && !result->timed_out;
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
  // Exactly full: nodes * 3 one-cpu pods. A quarter of the gangs are
  // semi-preemptible copse PodGroups of 3 pods with minMember 2, at a lower
  // priority still (so they are the first victims looked at): only their
  // third pod may go (spec 002), never the two that make their minimum.
  MemberTemplate semi_member = low_member;
  semi_member.priority_class = "bench-lowest";
  semi_member.copse_group = true;
  semi_member.preemptibility = "semi-preemptible";
  const int64_t semi_gangs = nodes / 4;
  const GangBatch semi{"semi", semi_gangs, 3, 2, semi_member};
  const GangBatch low{"low", nodes - semi_gangs, 3, 3, low_member};
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

  const int64_t all_pods =
      semi.pods() + low.pods() + high.pods() + static_cast<int64_t>(doomed.size()) * 8;
  ClusterSpec spec;
  spec.nodes = nodes;
  spec.node_shape = "cpu=3,memory=12Gi,pods=110";
  spec.watch_history = static_cast<size_t>(all_pods) * 6 + 1024;
  spec.setup_objects = {{kube::resources::kPriorityClasses, PriorityClassJson("bench-lowest", 5)},
                        {kube::resources::kPriorityClasses, PriorityClassJson("bench-low", 10)},
                        {kube::resources::kPriorityClasses, PriorityClassJson("bench-high", 1000)}};
  Result<std::vector<std::string>> crds = CopseCrds();
  if (!crds.ok()) return crds.error();
  for (std::string& crd : *crds) {
    spec.setup_objects.emplace_back(kube::resources::kCustomResourceDefinitions, std::move(crd));
  }
  auto started = Harness::Start(options, spec, progress);
  if (!started.ok()) return started.error();
  Harness& h = **started;
  Timeline& watcher = h.timeline();

  // Fill the cluster (not measured).
  const TimePoint fill_start = BenchClock::now();
  for (const GangBatch* batch : {&semi, &low}) {
    if (Status s = CreateGroups(h, *batch, progress); !s.ok()) return s.error();
    if (Status s = CreatePods(h, *batch, nullptr, progress); !s.ok()) return s.error();
  }
  const int64_t fill_pods = semi.pods() + low.pods();
  if (!h.WaitFor([&] { return watcher.bound(); }, fill_pods, "fill", std::chrono::seconds(300),
                 progress)) {
    return MakeError(ErrorCode::kTimeout, "fill: only " + std::to_string(watcher.bound()) + "/" +
                                              std::to_string(fill_pods) + " bound " +
                                              watcher.error());
  }
  progress.Done("fill", fill_pods,
                std::chrono::duration<double>(BenchClock::now() - fill_start).count());

  // Measure: high-priority gangs arrive on the full cluster.
  if (Status s = CreateGroups(h, high, progress); !s.ok()) return s.error();
  for (const GangBatch& d : doomed) {
    if (Status s = CreateGroups(h, d, progress); !s.ok()) return s.error();
  }
  std::vector<Created> created;
  const double cpu_before = *h.SchedulerCpuSeconds();
  const double api_cpu_before = *h.ApiServerCpuSeconds();
  const scheduler::SchedulerStats before = h.scheduler()->stats();
  const TimePoint start = BenchClock::now();
  if (Status s = CreatePods(h, high, &created, progress); !s.ok()) return s.error();
  for (const GangBatch& d : doomed) {
    if (Status s = CreatePods(h, d, nullptr, progress); !s.ok()) return s.error();
  }
  auto high_bound = [&] {
    int64_t n = 0;
    for (const auto& [name, r] : watcher.Snapshot()) n += r.bound && name.starts_with("high-");
    return n;
  };
  const auto preempt_timeout = std::chrono::seconds(
      options.timeout_seconds > 0 ? options.timeout_seconds : (nodes >= 1'000 ? 600 : 60));
  const bool timed_out = !h.WaitFor(high_bound, high.pods(), "preempt", preempt_timeout, progress);
  if (!watcher.error().empty()) return MakeError(ErrorCode::kUnavailable, watcher.error());
  if (timed_out && !options.quiet) {
    // Say why: the first high gang not fully bound and its PodGroupScheduled.
    const auto records = watcher.Snapshot();
    for (int64_t g = 0; g < high.gangs; ++g) {
      int64_t bound = 0;
      for (int i = 0; i < high.size; ++i) {
        auto it = records.find(high.Pod(g, i));
        bound += it != records.end() && it->second.bound;
      }
      if (bound >= high.size) continue;
      std::string why = "no status";
      if (auto got = h.store()->Get(kube::resources::kPodGroups, kNamespace, high.Group(g));
          got.ok()) {
        if (auto group = kube::PodGroup::Decode((*got)->json); group.ok()) {
          if (const kube::Condition* c =
                  kube::FindCondition(group->status.conditions, kube::kPodGroupScheduled)) {
            why = c->status + " " + c->reason + ": " + c->message;
          }
        }
      }
      std::fprintf(stderr, "\n  timed out: %s has %lld bound: %s\n", high.Group(g).c_str(),
                   static_cast<long long>(bound), why.c_str());
      break;
    }
  }
  const double cpu = *h.SchedulerCpuSeconds() - cpu_before;
  const double api_cpu = *h.ApiServerCpuSeconds() - api_cpu_before;
  const scheduler::SchedulerStats after = h.scheduler()->stats();
  // Each doomed gang has had at least one full attempt (its PodGroupScheduled
  // condition is written at the end of one), so its chance to evict is past.
  auto doomed_reported = [&] {
    int64_t n = 0;
    for (const GangBatch& d : doomed) {
      auto got = h.store()->Get(kube::resources::kPodGroups, kNamespace, d.Group(0));
      if (!got.ok()) continue;
      auto group = kube::PodGroup::Decode((*got)->json);
      if (!group.ok()) continue;
      const kube::Condition* c =
          kube::FindCondition(group->status.conditions, kube::kPodGroupScheduled);
      n += c != nullptr && c->status == "False";
    }
    return n;
  };
  if (!timed_out && !h.WaitFor(doomed_reported, static_cast<int64_t>(doomed.size()), "doomed",
                               std::chrono::seconds(120), progress)) {
    return MakeError(ErrorCode::kTimeout, "doomed gangs: no PodGroupScheduled=False within 120 s");
  }
  const auto records = watcher.Snapshot();
  FiguresInput in;
  in.created = created;
  in.records = records;
  in.start = start;
  in.timed_out = timed_out;
  in.scheduler_cpu_seconds = cpu;
  in.api_server_cpu_seconds = api_cpu;
  BenchResult result;
  const TimePoint last = ApplyFigures(in, result);
  const double seconds = std::chrono::duration<double>(last - start).count();
  progress.Done("preempt", result.pods_bound, seconds);

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
    const std::string preempted_for = PreemptedFor(r.deleted_json);
    if (preempted_for.empty() || preempted_for == "?")
      ++unattributed;
    else
      ++victims_for[preempted_for];
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
  // Gangs left bound below their minimum (some members bound, fewer than the
  // minimum): the victim rules must never leave one. Every batch counts.
  int64_t below_minimum = 0;
  std::string below_example;
  int64_t semi_victims = 0;
  std::vector<const GangBatch*> batches = {&semi, &low, &high};
  for (const GangBatch& d : doomed) batches.push_back(&d);
  for (const GangBatch* batch : batches) {
    for (int64_t g = 0; g < batch->gangs; ++g) {
      const int64_t live = bound_per_group[std::string(kNamespace) + "/" + batch->Group(g)];
      if (batch == &semi) semi_victims += batch->size - live;
      if (live > 0 && live < batch->min_count) {
        ++below_minimum;
        if (below_example.empty()) {
          below_example = batch->Group(g) + " has " + std::to_string(live) + " of its minimum " +
                          std::to_string(batch->min_count) + " bound";
        }
      }
    }
  }
  int64_t overfull_nodes = 0;
  for (const auto& [node, n] : live_per_node) overfull_nodes += n > kSlotsPerNode;

  result.scenario = "gang-preempt";
  result.nodes = nodes;
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
  result.extras["semi_preemptible_gangs"] = static_cast<double>(semi.gangs);
  result.extras["semi_preemptible_victims"] = static_cast<double>(semi_victims);
  result.extras["gangs_below_minimum"] = static_cast<double>(below_minimum);
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
  result.targets["no gang below its minimum"] = below_minimum == 0;
  if (below_minimum > 0) {
    result.failures.push_back(std::to_string(below_minimum) +
                              " gang(s) left bound below their minimum, e.g. " + below_example);
  }
  return result;
}

}  // namespace copse::bench
