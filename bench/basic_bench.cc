// Scenario "basic": kube-scheduler's scheduler_perf SchedulingBasic
// (5000Nodes_10000Pods) end to end on the bench harness (bench/harness.h).
//
//  1. `nodes` nodes of scheduler_perf's node template (4 cpu, 32Gi, 110
//     pods); the scheduler connects over loopback HTTP like any client.
//  2. Warm-up: 1,000 init pods (pod-default template: 100m cpu, 500Mi) are
//     created over HTTP and bound (not measured).
//  3. Measure: `pods` pods POSTed over HTTP from --connections client
//     connections; the timeline's watch records when each gets its nodeName.
//     The clock starts before the first create.
// No kubelet simulator runs (scheduler_perf has none either): bound pods stay
// Pending, so the watch traffic is the scheduler's own.
// Runs on an external server too (--kubeconfig), with copse in-process or an
// external scheduler (--scheduler external): `scripts/bench-side-by-side.sh`.
// Targets (issue 3): >= 20,000 pods/s and <= 0.15 ms of scheduler CPU per pod.
#include <string>
#include <vector>

#include "bench/bench.h"
#include "bench/harness.h"
#include "kube/object.h"
#include "scheduler/scheduler.h"

namespace copse::bench {
namespace {

std::string BenchPodJson(std::string_view prefix, int64_t i, const std::string& scheduler) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + std::string(prefix) +
         std::to_string(i) + R"(","namespace":"bench"},"spec":{"schedulerName":")" + scheduler +
         R"(","containers":[{"name":"pause","image":"registry.k8s.io/pause:3.10","resources":{"requests":{"cpu":"100m","memory":"500Mi"},"limits":{"cpu":"100m","memory":"500Mi"}}}]}})";
}

}  // namespace

Result<BenchResult> RunBasicBench(const BenchOptions& options, Progress& progress) {
  const int64_t pods = options.pods > 0 ? options.pods : 10'000;
  const int64_t nodes = options.nodes > 0 ? options.nodes : 5'000;
  const int64_t init_pods = std::min<int64_t>(1'000, std::max<int64_t>(pods / 10, 1));
  const auto timeout =
      std::chrono::seconds(options.timeout_seconds > 0 ? options.timeout_seconds : 300);
  ClusterSpec spec;
  spec.nodes = nodes;
  spec.node_shape = "cpu=4,memory=32Gi,pods=110";
  spec.watch_history = static_cast<size_t>(pods + init_pods) * 4 + 1024;
  auto started = Harness::Start(options, spec, progress);
  if (!started.ok()) return started.error();
  Harness& h = **started;
  Timeline& timeline = h.timeline();

  // 2. Warm-up.
  std::vector<std::string> bodies;
  for (int64_t i = 0; i < init_pods; ++i) {
    bodies.push_back(BenchPodJson("init-", i, h.scheduler_name()));
  }
  if (Status s = h.Create(kube::resources::kPods, kBenchNamespace, std::move(bodies), nullptr,
                          "warm-up create", progress);
      !s.ok()) {
    return s.error();
  }
  if (!h.WaitFor([&] { return timeline.bound(); }, init_pods, "warm-up", timeout, progress)) {
    return MakeError(ErrorCode::kTimeout, "warm-up: only " + std::to_string(timeline.bound()) +
                                              "/" + std::to_string(init_pods) + " bound " +
                                              timeline.error());
  }

  // 3. Measure.
  bodies.clear();
  bodies.reserve(static_cast<size_t>(pods));
  for (int64_t i = 0; i < pods; ++i) bodies.push_back(BenchPodJson("pod-", i, h.scheduler_name()));
  FiguresInput in;
  const std::optional<double> cpu_before = h.SchedulerCpuSeconds();
  const std::optional<double> api_cpu_before = h.ApiServerCpuSeconds();
  const double process_cpu_before = ProcessCpuSeconds();
  const scheduler::SchedulerStats stats_before =
      h.scheduler() ? h.scheduler()->stats() : scheduler::SchedulerStats{};
  in.start = BenchClock::now();
  if (Status s = h.Create(kube::resources::kPods, kBenchNamespace, std::move(bodies), &in.created,
                          "create", progress);
      !s.ok()) {
    return s.error();
  }
  in.timed_out =
      !h.WaitFor([&] { return timeline.bound(); }, init_pods + pods, "schedule", timeout, progress);
  if (!timeline.error().empty()) return MakeError(ErrorCode::kUnavailable, timeline.error());
  const std::optional<double> cpu_after = h.SchedulerCpuSeconds();
  const std::optional<double> api_cpu_after = h.ApiServerCpuSeconds();
  if (cpu_before && cpu_after) in.scheduler_cpu_seconds = *cpu_after - *cpu_before;
  if (api_cpu_before && api_cpu_after) in.api_server_cpu_seconds = *api_cpu_after - *api_cpu_before;
  const double process_cpu = ProcessCpuSeconds() - process_cpu_before;
  in.records = timeline.Snapshot();

  BenchResult result;
  result.scenario = "basic";
  result.nodes = nodes;
  const TimePoint last = ApplyFigures(in, result);
  progress.Done("schedule", result.pods_bound,
                std::chrono::duration<double>(last - in.start).count());
  const double bound = static_cast<double>(std::max<int64_t>(result.pods_bound, 1));
  if (result.scheduler_cpu_seconds) {
    const double ms_per_pod = *result.scheduler_cpu_seconds * 1000.0 / bound;
    result.extras["scheduler_cpu_ms_per_pod"] = ms_per_pod;
    result.targets["scheduler_cpu_ms_per_pod <= 0.15"] = ms_per_pod <= 0.15;
  }
  // Everything in this process (scheduler, API server, creator, watcher when
  // in-process; only the benchmark's side against an external server).
  result.extras["process_cpu_ms_per_pod"] = process_cpu * 1000.0 / bound;
  if (h.scheduler() != nullptr) {
    const scheduler::SchedulerStats after = h.scheduler()->stats();
    result.extras["loop_seconds"] = after.scheduling_seconds - stats_before.scheduling_seconds;
    result.extras["batched_pods"] = static_cast<double>(after.batched - stats_before.batched);
    result.extras["attempts"] = static_cast<double>(after.attempts - stats_before.attempts);
    result.extras["unschedulable"] =
        static_cast<double>(after.unschedulable - stats_before.unschedulable);
    result.extras["errors"] = static_cast<double>(after.errors - stats_before.errors);
    result.extras["bind_failures"] =
        static_cast<double>(after.bind_failures - stats_before.bind_failures);
  }
  result.targets["pods_per_second >= 20000"] =
      result.pods_per_second.value_or(0) >= 20'000 && !result.timed_out;
  return result;
}

}  // namespace copse::bench
