// Topology scenarios, end to end on the bench harness (bench/harness.h): the
// scheduler connects over loopback HTTP (list+watch, bindings, status,
// events); the benchmark POSTs every object over HTTP and the harness's watch
// records when each pod gets its nodeName. No kubelet simulator runs.
//
//   topology  KEP-5732's perf shape: 5,000 nodes (4 cpu, 32Gi, 110 pods)
//             spread over 50 racks (label copse.dev/rack), 50 warm-up gangs,
//             then 750 gangs x 4 pods (100m, 500Mi) measured. Gangs are
//             scheduling.k8s.io/v1alpha2 PodGroups with gang.minCount 4 and
//             schedulingConstraints.topology[0].key
//             copse.dev/rack, created before their pods.
//             Targets: >= 15,000 pods/s, every gang in a single rack.
//
//   topology-large  15,000 nodes (cpu 64, memory 256Gi: 18 pods of 3500m /
//             14Gi each) in 3 zones x 10 blocks x 10 racks (50 nodes per
//             rack, 500 per block), a copse Topology `dc` (zone > block >
//             rack > hostname), and 2,000 hierarchical copse PodGroups
//             (scheduling.copse.dev/v1alpha1): R replicas (subgroups r0..) of
//             S pods, S uniform in {8, 16, 32}, R uniform in [2, 256 / S]
//             (16..256 pods, mean ~146, 292,288 pods in 20,453 replicas;
//             SplitMix64 with a fixed seed, so every run submits the same
//             gangs). requiredTopologyLevel block on the gang,
//             preferredTopologyLevel rack on every replica; minMember is the
//             whole gang (every replica required). The demand (108% of the
//             270,000 pod slots) is sized so that most gangs fit and the last
//             ones do not.
//             Measured from before the first create: every gang's pods,
//             then the 2,000 PodGroups, all over HTTP (bench/harness.h); a
//             gang is complete, and schedulable, when its PodGroup is
//             created. The run ends when every gang is bound whole or its
//             PodGroup reports phase Unschedulable (the cluster only fills
//             up, so it cannot fit later) and no pod was bound for a second.
//             Figures: gangs bound, pods/s (bound pods / first create -> last
//             bind), p50_ms / p99_ms per pod (its create -> bind),
//             gang_p50_ms / gang_p99_ms (PodGroup created -> last member
//             bound), subgroup_one_rack_fraction (bound replicas whose pods
//             share a rack), gang_one_block_fraction (bound gangs in one
//             block; must be 1), gangs_partially_bound (must be 0),
//             nodes_over_allocatable (nodes holding more than 18 of these
//             pods; must be 0), bind_failures. Latencies include queueing
//             behind earlier gangs.
//             --nodes N (>= 300) keeps the 300 racks and scales the gang count
//             with it (2,000 x N / 15,000); --pods P draws gangs until P pods.
//
// Figures as in `gang`: pods/s = measured pods bound / (last bound - first
// created); latency = created -> bound; gang attempt time = the scheduler's
// loop seconds / attempts over the measured phase; scheduler CPU = the
// scheduler's threads (named copse-sched). packed_fraction = the share of
// measured gangs whose pods all landed in one rack.
#include <dirent.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
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
#include <tuple>
#include <unordered_map>
#include <vector>

#include "apiserver/apiserver.h"
#include "apiserver/store.h"
#include "apiserver/synthetic.h"
#include "bench/bench.h"
#include "bench/harness.h"
#include "core/quantity.h"
#include "kube/client.h"
#include "kube/object.h"
#include "kube/pod_group.h"
#include "kube/topology.h"
#include "scheduler/scheduler.h"

namespace copse::bench {
namespace {

namespace api = copse::apiserver;
using json = nlohmann::json;

constexpr const char* kRackLabel = "copse.dev/rack";

std::string GroupJson(const std::string& name) {
  return R"({"apiVersion":"scheduling.k8s.io/v1alpha2","kind":"PodGroup","metadata":{"name":")" +
         name +
         R"(","namespace":"bench"},"spec":{"schedulingPolicy":{"gang":{"minCount":4}},"schedulingConstraints":{"topology":[{"key":")" +
         kRackLabel + R"("}]}}})";
}

std::string MemberJson(const std::string& name, const std::string& group) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
         R"(","namespace":"bench","labels":{"gang":")" + group +
         R"("}},"spec":{"schedulerName":"copse-scheduler","schedulingGroup":{"podGroupName":")" +
         group +
         R"("},"containers":[{"name":"main","image":"registry.k8s.io/pause:3.10","resources":{"requests":{"cpu":"100m","memory":"500Mi"},"limits":{"cpu":"100m","memory":"500Mi"}}}]}})";
}

// PodGroups first (as a workload controller does), then their pods, over
// HTTP; `created` gets each pod's send time.
Status CreateGangs(Harness& h, const std::string& prefix, int64_t gangs,
                   std::vector<Created>* created, Progress& progress) {
  std::vector<std::string> groups;
  std::vector<std::string> pods;
  for (int64_t g = 0; g < gangs; ++g) {
    const std::string group = prefix + "-" + std::to_string(g);
    groups.push_back(GroupJson(group));
    for (int i = 0; i < 4; ++i) pods.push_back(MemberJson(group + "-" + std::to_string(i), group));
  }
  if (Status s = h.Create(kube::resources::kPodGroups, kBenchNamespace, std::move(groups), nullptr,
                          "podgroups", progress);
      !s.ok()) {
    return s;
  }
  return h.Create(kube::resources::kPods, kBenchNamespace, std::move(pods), created, "create",
                  progress);
}

}  // namespace

Result<BenchResult> RunTopologyBench(const BenchOptions& options, Progress& progress) {
  const int64_t nodes = options.nodes > 0 ? options.nodes : 5'000;
  // --pods rounds down to whole gangs of 4.
  const int64_t gangs = options.pods > 0 ? std::max<int64_t>(1, options.pods / 4) : 750;
  constexpr int64_t kWarmupGangs = 50;
  const int64_t racks = std::max<int64_t>(1, std::min<int64_t>(50, nodes));

  ClusterSpec spec;
  spec.nodes = nodes;
  spec.node_shape = "cpu=4,memory=32Gi,pods=110";
  spec.topology = "rack=" + std::to_string(racks);
  spec.watch_history = static_cast<size_t>((gangs + kWarmupGangs) * 4 * 4 + 200'000);
  auto started = Harness::Start(options, spec, progress);
  if (!started.ok()) return started.error();
  Harness& h = **started;
  Timeline& watcher = h.timeline();
  // The racks the harness's nodes are in.
  auto rack_labels = h.NodeLabelValues(kRackLabel);
  if (!rack_labels.ok()) return rack_labels.error();
  std::unordered_map<std::string, std::string>& rack_of = *rack_labels;
  const auto timeout =
      std::chrono::seconds(options.timeout_seconds > 0 ? options.timeout_seconds : 600);
  if (Status s = CreateGangs(h, "init", kWarmupGangs, nullptr, progress); !s.ok()) {
    return s.error();
  }
  if (!h.WaitFor([&] { return watcher.bound(); }, kWarmupGangs * 4, "warm-up", timeout, progress)) {
    return MakeError(ErrorCode::kTimeout, "warm-up: only " + std::to_string(watcher.bound()) +
                                              " bound " + watcher.error());
  }

  FiguresInput in;
  in.created.reserve(static_cast<size_t>(gangs * 4));
  const double cpu_before = *h.SchedulerCpuSeconds();
  const double api_cpu_before = *h.ApiServerCpuSeconds();
  const double process_cpu_before = ProcessCpuSeconds();
  const scheduler::SchedulerStats before = h.scheduler()->stats();
  // The clock starts before the first PodGroup is created.
  in.start = BenchClock::now();
  const TimePoint start = in.start;
  if (Status s = CreateGangs(h, "gang", gangs, &in.created, progress); !s.ok()) return s.error();
  in.timed_out = !h.WaitFor([&] { return watcher.bound(); }, (kWarmupGangs + gangs) * 4, "schedule",
                            timeout, progress);
  if (!watcher.error().empty()) return MakeError(ErrorCode::kUnavailable, watcher.error());
  const double cpu = *h.SchedulerCpuSeconds() - cpu_before;
  in.scheduler_cpu_seconds = cpu;
  in.api_server_cpu_seconds = *h.ApiServerCpuSeconds() - api_cpu_before;
  const double process_cpu = ProcessCpuSeconds() - process_cpu_before;
  const scheduler::SchedulerStats after = h.scheduler()->stats();
  in.records = watcher.Snapshot();
  BenchResult result;
  result.scenario = "topology";
  result.nodes = nodes;
  const TimePoint last = ApplyFigures(in, result);
  (void)start;
  std::map<std::string, std::set<std::string>> racks_of_gang;
  for (const Created& c : in.created) {
    auto it = in.records.find(c.name);
    if (it == in.records.end() || !it->second.bound) continue;
    racks_of_gang[c.name.substr(0, c.name.rfind('-'))].insert(rack_of[it->second.node]);
  }
  progress.Done("schedule", result.pods_bound,
                std::chrono::duration<double>(last - in.start).count());
  int64_t packed = 0;
  for (const auto& [gang, set] : racks_of_gang) packed += set.size() == 1 ? 1 : 0;
  const double attempts = static_cast<double>(after.attempts - before.attempts);
  const double loop_seconds = after.scheduling_seconds - before.scheduling_seconds;
  result.extras["racks"] = static_cast<double>(racks);
  result.extras["gangs"] = static_cast<double>(gangs);
  // Everything in the process (scheduler, API server, the benchmark's own
  // threads, PodGroup and pod creation included): what the 2 cores share.
  result.extras["process_cpu_ms_per_pod"] =
      process_cpu * 1000.0 / static_cast<double>(std::max<int64_t>(1, result.pods_bound));
  result.extras["gang_attempts"] = attempts;
  result.extras["gang_attempt_ms"] = attempts > 0 ? loop_seconds * 1000.0 / attempts : 0;
  result.extras["loop_seconds"] = loop_seconds;
  result.extras["packed_fraction"] = static_cast<double>(packed) / static_cast<double>(gangs);
  result.extras["scheduler_cpu_ms_per_gang"] = cpu * 1000.0 / static_cast<double>(gangs);
  result.extras["unschedulable_attempts"] =
      static_cast<double>(after.unschedulable - before.unschedulable);
  result.targets["pods_per_second >= 15000"] =
      result.pods_per_second.value_or(0) >= 15'000 && !result.timed_out;
  result.targets["packed_fraction == 1"] = packed == gangs;
  return result;
}

// ------------------------------------------------------------ topology-large

namespace {

// 3 zones x 10 blocks x 10 racks; 15,000 nodes are 50 per rack, 500 per block.
constexpr int kLargeZones = 3;
constexpr int kLargeBlocksPerZone = 10;
constexpr int kLargeRacksPerBlock = 10;
constexpr int64_t kLargeRacks = kLargeZones * kLargeBlocksPerZone * kLargeRacksPerBlock;
constexpr int64_t kLargeNodes = 15'000;
constexpr int64_t kLargeGangs = 2'000;
// 18 pods per node: 64 / 3.5 cpu and 256Gi / 14Gi both round down to 18.
constexpr const char* kLargeNodeShape = "cpu=64,memory=256Gi,pods=110";
constexpr int64_t kLargePodsPerNode = 18;
constexpr const char* kLargeTopology = "dc";
constexpr uint64_t kLargeSeed = 0x5eed'7010;
constexpr int kReplicaSizes[] = {8, 16, 32};

// SplitMix64: the same sequence everywhere (std distributions differ between
// standard libraries), so every run submits the same gangs.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi] (the modulo bias is irrelevant for these ranges).
  int64_t Uniform(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }

 private:
  uint64_t state_;
};

// A gang of `replicas` subgroups r0.. of `replica_size` pods each.
struct LargeGang {
  int replicas = 0;
  int replica_size = 0;
  int pods() const { return replicas * replica_size; }
};

// Replica size uniform in {8, 16, 32}; replicas uniform in [2, 256 / size]:
// gangs of 16..256 pods (mean ~147). `gangs` of them, or (pods_target > 0)
// as many as it takes to reach pods_target pods.
std::vector<LargeGang> MakeLargeGangs(int64_t gangs, int64_t pods_target) {
  SplitMix64 rng(kLargeSeed);
  std::vector<LargeGang> out;
  int64_t pods = 0;
  while (pods_target > 0 ? pods < pods_target : static_cast<int64_t>(out.size()) < gangs) {
    LargeGang gang;
    gang.replica_size = kReplicaSizes[rng.Uniform(0, 2)];
    gang.replicas = static_cast<int>(rng.Uniform(2, 256 / gang.replica_size));
    pods += gang.pods();
    out.push_back(gang);
  }
  return out;
}

std::string LargeGangName(size_t g) { return "g" + std::to_string(g); }
std::string LargePodName(size_t g, int replica, int i) {
  return LargeGangName(g) + "-r" + std::to_string(replica) + "-" + std::to_string(i);
}
// "g12-r3-7" -> {12, 3}; {-1, -1} for other names.
std::pair<int64_t, int> ParseLargePodName(std::string_view name) {
  if (name.size() < 2 || name[0] != 'g') return {-1, -1};
  char* end = nullptr;
  const std::string text(name.substr(1));
  const long long gang = std::strtoll(text.c_str(), &end, 10);
  if (end == nullptr || end[0] != '-' || end[1] != 'r') return {-1, -1};
  const long replica = std::strtol(end + 2, &end, 10);
  if (end == nullptr || end[0] != '-') return {-1, -1};
  return {gang, static_cast<int>(replica)};
}

// Block required for the gang, rack preferred for each replica.
std::string LargeGroupJson(size_t g, const LargeGang& gang) {
  json sub_groups = json::array();
  for (int r = 0; r < gang.replicas; ++r) {
    sub_groups.push_back({{"name", "r" + std::to_string(r)},
                          {"minMember", gang.replica_size},
                          {"topologyConstraint", {{"preferredTopologyLevel", "rack"}}}});
  }
  const json group = {
      {"apiVersion", "scheduling.copse.dev/v1alpha1"},
      {"kind", "PodGroup"},
      {"metadata", {{"name", LargeGangName(g)}, {"namespace", kBenchNamespace}}},
      {"spec",
       {{"minMember", gang.pods()},
        {"topologyConstraint", {{"topology", kLargeTopology}, {"requiredTopologyLevel", "block"}}},
        {"subGroups", sub_groups}}}};
  return group.dump();
}

std::string LargePodJson(size_t g, int replica, int i) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + LargePodName(g, replica, i) +
         R"(","namespace":"bench","labels":{"scheduling.copse.dev/pod-group":")" +
         LargeGangName(g) + R"(","scheduling.copse.dev/subgroup":"r)" + std::to_string(replica) +
         R"("}},"spec":{"schedulerName":"copse-scheduler","containers":[{"name":"main","image":"registry.k8s.io/pause:3.10","resources":{"requests":{"cpu":"3500m","memory":"14Gi"}}}]}})";
}

}  // namespace

Result<BenchResult> RunTopologyLargeBench(const BenchOptions& options, Progress& progress) {
  const int64_t nodes = options.nodes > 0 ? options.nodes : kLargeNodes;
  if (nodes < kLargeRacks) {
    return MakeError(ErrorCode::kInvalid,
                     "--nodes: topology-large needs at least 300 nodes (3 zones x 10 blocks x 10 "
                     "racks), got " +
                         std::to_string(nodes));
  }
  // --nodes alone scales the gang count with the cluster; --pods draws gangs
  // until that many pods.
  const int64_t gang_count =
      options.nodes > 0 ? std::max<int64_t>(1, kLargeGangs * nodes / kLargeNodes) : kLargeGangs;
  const std::vector<LargeGang> gangs = MakeLargeGangs(gang_count, options.pods);
  int64_t total_pods = 0;
  int64_t total_sub_groups = 0;
  for (const LargeGang& gang : gangs) {
    total_pods += gang.pods();
    total_sub_groups += gang.replicas;
  }
  const int64_t capacity = nodes * kLargePodsPerNode;

  ClusterSpec spec;
  spec.nodes = nodes;
  spec.node_shape = kLargeNodeShape;
  spec.topology = "zone=" + std::to_string(kLargeZones) +
                  ",block=" + std::to_string(kLargeBlocksPerZone) +
                  ",rack=" + std::to_string(kLargeRacksPerBlock);
  spec.watch_history = static_cast<size_t>(total_pods * 3 + 200'000);
  for (const auto& [plural, kind, namespaced] :
       {std::tuple<std::string, std::string, bool>{"podgroups", "PodGroup", true},
        std::tuple<std::string, std::string, bool>{"topologies", "Topology", false}}) {
    spec.setup_objects.emplace_back(kube::resources::kCustomResourceDefinitions,
                                    CopseCrdJson(plural, kind, namespaced));
  }
  kube::Topology topology_object;
  topology_object.api_version = kube::Topology::kApiVersion;
  topology_object.kind = kube::Topology::kKind;
  topology_object.meta.name = kLargeTopology;
  for (std::string_view level : {"zone", "block", "rack"}) {
    topology_object.spec.levels.push_back({std::string(api::TopologyLabelKey(level))});
  }
  topology_object.spec.levels.push_back({"kubernetes.io/hostname"});
  spec.setup_objects.emplace_back(kube::resources::kTopologies, topology_object.Encode());
  auto started = Harness::Start(options, spec, progress);
  if (!started.ok()) return started.error();
  Harness& h = **started;
  Timeline& watcher = h.timeline();

  auto rack_labels = h.NodeLabelValues(kRackLabel);
  if (!rack_labels.ok()) return rack_labels.error();
  std::unordered_map<std::string, std::string>& rack_of = *rack_labels;
  auto block_labels = h.NodeLabelValues(api::TopologyLabelKey("block"));
  if (!block_labels.ok()) return block_labels.error();
  std::unordered_map<std::string, std::string>& block_of = *block_labels;

  // Measured from before the first create: every gang's pods, then every
  // gang's PodGroup, over HTTP. A copse PodGroup's phase is only meaningful
  // once its members exist, and the end of the run is read from it, so the
  // pods come first. Latencies run from each pod's create; a gang's from its
  // PodGroup's create (when it became complete).
  std::vector<std::string> group_bodies;
  std::vector<std::string> pod_bodies;
  pod_bodies.reserve(static_cast<size_t>(total_pods));
  for (size_t g = 0; g < gangs.size(); ++g) {
    group_bodies.push_back(LargeGroupJson(g, gangs[g]));
    for (int r = 0; r < gangs[g].replicas; ++r) {
      for (int i = 0; i < gangs[g].replica_size; ++i) pod_bodies.push_back(LargePodJson(g, r, i));
    }
  }
  FiguresInput in;
  std::vector<Created> group_created;
  const double cpu_before = *h.SchedulerCpuSeconds();
  const double api_cpu_before = *h.ApiServerCpuSeconds();
  const scheduler::SchedulerStats before = h.scheduler()->stats();
  in.start = BenchClock::now();
  const TimePoint start = in.start;
  if (Status s = h.Create(kube::resources::kPods, kBenchNamespace, std::move(pod_bodies),
                          &in.created, "create", progress);
      !s.ok()) {
    return s.error();
  }
  if (Status s = h.Create(kube::resources::kCopsePodGroups, kBenchNamespace,
                          std::move(group_bodies), &group_created, "podgroups", progress);
      !s.ok()) {
    return s.error();
  }
  const double create_seconds = std::chrono::duration<double>(BenchClock::now() - start).count();
  std::vector<TimePoint> complete(gangs.size());
  for (const Created& c : group_created) {
    complete[static_cast<size_t>(std::stoll(c.name.substr(1)))] = c.at;
  }
  auto bound_per_gang = [&](const Timeline::Records& records) {
    std::vector<int32_t> out(gangs.size(), 0);
    for (const auto& [name, r] : records) {
      if (!r.bound || r.deleted) continue;
      const int64_t gang = ParseLargePodName(name).first;
      if (gang >= 0 && static_cast<size_t>(gang) < out.size()) ++out[static_cast<size_t>(gang)];
    }
    return out;
  };
  const auto timeout =
      std::chrono::seconds(options.timeout_seconds > 0 ? options.timeout_seconds : 600);

  // Until every gang is bound whole or reported Unschedulable on its PodGroup
  // (capacity only shrinks here, so such a gang cannot fit later), and no pod
  // was bound for a second.
  const TimePoint deadline = start + timeout;
  std::vector<uint8_t> reported_unschedulable(gangs.size(), 0);
  int64_t last_bound = -1;
  TimePoint last_change = BenchClock::now();
  bool timed_out = false;
  for (;;) {
    const std::vector<int32_t> bound = bound_per_gang(watcher.Snapshot());
    size_t resolved = 0;
    for (size_t g = 0; g < gangs.size(); ++g) {
      if (bound[g] >= gangs[g].pods()) {
        ++resolved;
        continue;
      }
      if (reported_unschedulable[g] == 0) {
        auto object =
            h.store()->Get(kube::resources::kCopsePodGroups, kBenchNamespace, LargeGangName(g));
        if (object.ok() &&
            (*object)->json.find(R"("phase":"Unschedulable")") != std::string::npos) {
          reported_unschedulable[g] = 1;
        }
      }
      resolved += reported_unschedulable[g];
    }
    const int64_t n = watcher.bound();
    const TimePoint now = BenchClock::now();
    if (n != last_bound) {
      last_bound = n;
      last_change = now;
    }
    progress.Update("schedule", static_cast<int64_t>(resolved), static_cast<int64_t>(gangs.size()));
    if (resolved == gangs.size() && now - last_change >= std::chrono::seconds(1)) break;
    if (now > deadline || !watcher.error().empty()) {
      timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  if (!watcher.error().empty()) return MakeError(ErrorCode::kUnavailable, watcher.error());
  const double cpu = *h.SchedulerCpuSeconds() - cpu_before;
  const scheduler::SchedulerStats after = h.scheduler()->stats();
  in.timed_out = timed_out;
  in.scheduler_cpu_seconds = cpu;
  in.api_server_cpu_seconds = *h.ApiServerCpuSeconds() - api_cpu_before;
  in.records = watcher.Snapshot();
  BenchResult result;
  result.scenario = "topology-large";
  result.nodes = nodes;
  const TimePoint last = ApplyFigures(in, result);

  // Figures over what was bound.
  const auto& records = in.records;
  const std::vector<int32_t> bound = bound_per_gang(records);
  std::vector<TimePoint> last_bound_at(gangs.size(), start);
  for (const auto& [name, r] : records) {
    const int64_t gang = ParseLargePodName(name).first;
    if (!r.bound || gang < 0 || static_cast<size_t>(gang) >= gangs.size()) continue;
    last_bound_at[static_cast<size_t>(gang)] =
        std::max(last_bound_at[static_cast<size_t>(gang)], r.bound_at);
  }
  std::vector<int64_t> gang_samples;
  int64_t gangs_bound = 0, partial = 0, one_block = 0, sub_groups_bound = 0, one_rack = 0;
  int64_t pods_bound = 0;
  for (size_t g = 0; g < gangs.size(); ++g) {
    const LargeGang& gang = gangs[g];
    if (bound[g] == 0) continue;
    if (bound[g] < gang.pods()) {
      ++partial;  // all-or-nothing broken (every replica is required)
      continue;
    }
    ++gangs_bound;
    pods_bound += gang.pods();
    gang_samples.push_back(
        std::chrono::duration_cast<std::chrono::nanoseconds>(last_bound_at[g] - complete[g])
            .count());
    std::set<std::string> blocks;
    for (int r = 0; r < gang.replicas; ++r) {
      std::set<std::string> racks;
      for (int i = 0; i < gang.replica_size; ++i) {
        auto it = records.find(LargePodName(g, r, i));
        if (it == records.end() || it->second.node.empty()) continue;
        racks.insert(rack_of[it->second.node]);
        blocks.insert(block_of[it->second.node]);
      }
      ++sub_groups_bound;
      one_rack += racks.size() == 1 ? 1 : 0;
    }
    one_block += blocks.size() == 1 ? 1 : 0;
  }
  // The invariant the cluster's nodes must keep: every pod takes one of the
  // node's 18 slots (3500m of 64 cpu), so more than 18 is over allocatable.
  std::unordered_map<std::string, int64_t> pods_on_node;
  for (const auto& [name, record] : records) {
    if (record.bound && !record.deleted) ++pods_on_node[record.node];
  }
  int64_t max_pods_on_node = 0;
  int64_t nodes_over_allocatable = 0;
  for (const auto& [node, count] : pods_on_node) {
    max_pods_on_node = std::max(max_pods_on_node, count);
    nodes_over_allocatable += count > kLargePodsPerNode ? 1 : 0;
  }
  const double seconds = std::chrono::duration<double>(last - start).count();
  progress.Done("schedule", pods_bound, seconds);
  const double attempts = static_cast<double>(after.attempts - before.attempts);
  const double loop_seconds = after.scheduling_seconds - before.scheduling_seconds;
  auto fraction = [](int64_t part, int64_t whole) {
    return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
  };

  result.extras["racks"] = static_cast<double>(kLargeRacks);
  result.extras["blocks"] = static_cast<double>(kLargeZones * kLargeBlocksPerZone);
  result.extras["gangs"] = static_cast<double>(gangs.size());
  result.extras["gangs_bound"] = static_cast<double>(gangs_bound);
  result.extras["gangs_unschedulable"] = static_cast<double>(
      std::count(reported_unschedulable.begin(), reported_unschedulable.end(), 1));
  result.extras["gangs_partially_bound"] = static_cast<double>(partial);
  result.extras["pods_in_whole_gangs"] = static_cast<double>(pods_bound);
  result.extras["demand_over_capacity"] = fraction(total_pods, capacity);
  result.extras["capacity_used_fraction"] = fraction(pods_bound, capacity);
  result.extras["gang_p50_ms"] = PercentileMs(gang_samples, 50);
  result.extras["gang_p99_ms"] = PercentileMs(gang_samples, 99);
  result.extras["subgroups"] = static_cast<double>(total_sub_groups);
  result.extras["subgroups_bound"] = static_cast<double>(sub_groups_bound);
  result.extras["subgroup_one_rack_fraction"] = fraction(one_rack, sub_groups_bound);
  result.extras["gang_one_block_fraction"] = fraction(one_block, gangs_bound);
  result.extras["create_seconds"] = create_seconds;
  result.extras["gang_attempts"] = attempts;
  result.extras["gang_attempt_ms"] = attempts > 0 ? loop_seconds * 1000.0 / attempts : 0;
  result.extras["loop_seconds"] = loop_seconds;
  result.extras["unschedulable_attempts"] =
      static_cast<double>(after.unschedulable - before.unschedulable);
  result.extras["scheduler_cpu_ms_per_gang"] =
      cpu * 1000.0 / static_cast<double>(std::max<size_t>(1, gangs.size()));
  result.extras["max_pods_on_a_node"] = static_cast<double>(max_pods_on_node);
  result.extras["nodes_over_allocatable"] = static_cast<double>(nodes_over_allocatable);
  result.extras["bind_failures"] = static_cast<double>(after.bind_failures - before.bind_failures);
  result.targets["bound gangs in one block"] = one_block == gangs_bound;
  result.targets["no gang partially bound"] = partial == 0;
  result.targets["no node over its allocatable"] = nodes_over_allocatable == 0;
  result.targets["every gang bound or Unschedulable within 600 s"] = !timed_out;
  return result;
}

}  // namespace copse::bench
