// Scenario "scale": the whole path at cluster scale, end to end over HTTP on
// the bench harness (bench/harness.h).
//
//   50,000 nodes (32 cpu, 128Gi, 110 pods) in 5 zones x 10 blocks x 20 racks
//   (1,000 racks of 50 nodes); 500,000 pods of 500m / 1Gi: 70% single pods,
//   30% in gangs of 8..64 (scheduling.k8s.io/v1alpha2 PodGroups, gang.minCount
//   the whole gang, a required rack: topologyKey copse.dev/rack). Sizes come
//   from SplitMix64 with a fixed seed, so every run submits the same gangs;
//   singles and gangs are interleaved in creation order. Every PodGroup is
//   created before its pods, all of them after the clock started.
//
// Memory: peak RSS of the process (embedded API server, scheduler and the
// benchmark's own bodies and timeline together); rss_per_node_bytes = RSS
// growth while the nodes were loaded and the scheduler synced, per node;
// rss_per_pod_bytes = peak RSS growth after that, per pod.
// Targets (a benchmark, not a test): all bound in <= 60 s, peak RSS <= 8 GiB.
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "bench/bench.h"
#include "bench/harness.h"
#include "kube/object.h"
#include "kube/pod_group.h"
#include "scheduler/scheduler.h"

namespace copse::bench {
namespace {

constexpr const char* kScaleRackLabel = "copse.dev/rack";
constexpr double kGangFraction = 0.3;

uint64_t SplitMix(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::string ScalePodJson(const std::string& name, const std::string& group,
                         const std::string& scheduler) {
  std::string s = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
                  R"(","namespace":"bench"},"spec":{"schedulerName":")" + scheduler + "\"";
  if (!group.empty()) s += R"(,"schedulingGroup":{"podGroupName":")" + group + "\"}";
  s +=
      R"(,"containers":[{"name":"main","image":"registry.k8s.io/pause:3.10","resources":{"requests":{"cpu":"500m","memory":"1Gi"},"limits":{"cpu":"500m","memory":"1Gi"}}}]}})";
  return s;
}

std::string ScaleGroupJson(const std::string& name, int size) {
  return R"({"apiVersion":"scheduling.k8s.io/v1alpha2","kind":"PodGroup","metadata":{"name":")" +
         name + R"(","namespace":"bench"},"spec":{"schedulingPolicy":{"gang":{"minCount":)" +
         std::to_string(size) + R"(}},"schedulingConstraints":{"topology":[{"key":")" +
         kScaleRackLabel + R"("}]}}})";
}

}  // namespace

Result<BenchResult> RunScaleBench(const BenchOptions& options, Progress& progress) {
  const int64_t nodes = options.nodes > 0 ? options.nodes : 50'000;
  const int64_t pods = options.pods > 0 ? options.pods : 500'000;
  const int64_t baseline_rss = CurrentRssBytes();

  // The workload: singles, and gangs of 8..64 until 30% of the pods.
  struct Unit {
    std::string group;  // "" for a single pod
    int size = 1;
  };
  std::vector<Unit> units;
  {
    uint64_t rng = 0x5ca1e;
    int64_t gang_pods = 0, single_pods = 0, g = 0;
    const int64_t gang_target = static_cast<int64_t>(static_cast<double>(pods) * kGangFraction);
    while (gang_pods + single_pods < pods) {
      const int64_t left = pods - gang_pods - single_pods;
      const bool gang = gang_pods < gang_target && left >= 8 &&
                        (single_pods >= pods - gang_target || SplitMix(rng) % 10 < 3);
      if (gang) {
        int size = 8 + static_cast<int>(SplitMix(rng) % 57);
        size = static_cast<int>(std::min<int64_t>(size, std::max<int64_t>(1, left)));
        units.push_back({"gang-" + std::to_string(g++), size});
        gang_pods += size;
      } else {
        units.push_back({"", 1});
        ++single_pods;
      }
    }
  }
  ClusterSpec spec;
  spec.nodes = nodes;
  spec.node_shape = "cpu=32,memory=128Gi,pods=110";
  spec.topology = nodes >= 1000 ? "zone=5,block=10,rack=20"
                                : "rack=" + std::to_string(std::max<int64_t>(1, nodes / 5));
  spec.watch_history = static_cast<size_t>(pods) * 3 + 200'000;
  auto started = Harness::Start(options, spec, progress);
  if (!started.ok()) return started.error();
  Harness& h = **started;
  Timeline& timeline = h.timeline();
  const int64_t rss_with_nodes = CurrentRssBytes();

  std::vector<std::string> group_bodies;
  std::vector<std::string> pod_bodies;
  pod_bodies.reserve(static_cast<size_t>(pods));
  int64_t single = 0;
  int64_t gangs = 0;
  for (const Unit& u : units) {
    if (u.group.empty()) {
      pod_bodies.push_back(
          ScalePodJson("single-" + std::to_string(single++), "", h.scheduler_name()));
      continue;
    }
    ++gangs;
    group_bodies.push_back(ScaleGroupJson(u.group, u.size));
    for (int i = 0; i < u.size; ++i) {
      pod_bodies.push_back(
          ScalePodJson(u.group + "-" + std::to_string(i), u.group, h.scheduler_name()));
    }
  }
  const auto timeout =
      std::chrono::seconds(options.timeout_seconds > 0 ? options.timeout_seconds : 900);

  FiguresInput in;
  in.created.reserve(static_cast<size_t>(pods));
  const std::optional<double> cpu_before = h.SchedulerCpuSeconds();
  const std::optional<double> api_cpu_before = h.ApiServerCpuSeconds();
  in.start = BenchClock::now();
  if (Status s = h.Create(kube::resources::kPodGroups, kBenchNamespace, std::move(group_bodies),
                          nullptr, "podgroups", progress);
      !s.ok()) {
    return s.error();
  }
  if (Status s = h.Create(kube::resources::kPods, kBenchNamespace, std::move(pod_bodies),
                          &in.created, "create", progress);
      !s.ok()) {
    return s.error();
  }
  const double create_seconds = std::chrono::duration<double>(BenchClock::now() - in.start).count();
  in.timed_out = !h.WaitFor([&] { return timeline.bound(); }, pods, "schedule", timeout, progress);
  if (!timeline.error().empty()) return MakeError(ErrorCode::kUnavailable, timeline.error());
  const std::optional<double> cpu_after = h.SchedulerCpuSeconds();
  const std::optional<double> api_cpu_after = h.ApiServerCpuSeconds();
  if (cpu_before && cpu_after) in.scheduler_cpu_seconds = *cpu_after - *cpu_before;
  if (api_cpu_before && api_cpu_after) in.api_server_cpu_seconds = *api_cpu_after - *api_cpu_before;
  in.records = timeline.Snapshot();

  BenchResult result;
  result.scenario = "scale";
  result.nodes = nodes;
  const TimePoint last = ApplyFigures(in, result);
  const double seconds = std::chrono::duration<double>(last - in.start).count();
  progress.Done("schedule", result.pods_bound, seconds);

  // Gangs all-or-nothing.
  std::map<std::string, int64_t> by_gang;
  for (const auto& [pod, node] : result.placement) {
    if (pod.starts_with("gang-")) ++by_gang[pod.substr(0, pod.rfind('-'))];
  }
  int64_t partial = 0;
  for (const Unit& u : units) {
    if (u.group.empty()) continue;
    auto it = by_gang.find(u.group);
    const int64_t bound = it == by_gang.end() ? 0 : it->second;
    partial += bound != 0 && bound != u.size;
  }
  // The required rack: every bound gang's members share one rack.
  auto rack_of = h.NodeLabelValues(kScaleRackLabel);
  if (!rack_of.ok()) return rack_of.error();
  std::map<std::string, std::set<std::string>> racks_of_gang;
  for (const auto& [pod, node] : result.placement) {
    if (!pod.starts_with("gang-")) continue;
    auto rack = rack_of->find(node);
    racks_of_gang[pod.substr(0, pod.rfind('-'))].insert(rack == rack_of->end() ? "" : rack->second);
  }
  int64_t outside_one_rack = 0;
  for (const auto& [gang, racks] : racks_of_gang) {
    outside_one_rack += racks.size() != 1 || racks.begin()->empty();
  }
  result.extras["gangs"] = static_cast<double>(gangs);
  result.extras["single_pods"] = static_cast<double>(single);
  result.extras["gangs_partially_bound"] = static_cast<double>(partial);
  result.extras["gangs_outside_one_rack"] = static_cast<double>(outside_one_rack);
  result.extras["create_seconds"] = create_seconds;
  result.extras["seconds_to_all_bound"] = seconds;
  result.extras["rss_per_node_bytes"] =
      static_cast<double>(rss_with_nodes - baseline_rss) / static_cast<double>(nodes);
  result.extras["rss_per_pod_bytes"] =
      static_cast<double>(result.peak_rss_bytes - rss_with_nodes) / static_cast<double>(pods);
  if (result.scheduler_cpu_seconds) {
    result.extras["scheduler_cpu_ms_per_pod"] =
        *result.scheduler_cpu_seconds * 1000.0 /
        static_cast<double>(std::max<int64_t>(1, result.pods_bound));
  }
  result.targets["all bound in <= 60 s"] =
      !result.timed_out && result.pods_bound == pods && seconds <= 60;
  result.targets["peak RSS <= 8 GiB"] = result.peak_rss_bytes <= (int64_t{8} << 30);
  result.targets["no gang partially bound"] = partial == 0;
  result.targets["every gang in one rack"] = outside_one_rack == 0;
  if (partial > 0) {
    result.failures.push_back(std::to_string(partial) + " gangs partially bound");
  }
  if (outside_one_rack > 0) {
    result.failures.push_back(std::to_string(outside_one_rack) +
                              " gangs bound outside one rack (they require one)");
  }
  return result;
}

}  // namespace copse::bench
