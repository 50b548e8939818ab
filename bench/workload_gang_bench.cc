// workload-gang: upstream gangs (KEP-4671's scheduling.k8s.io Workloads and
// PodGroups) on GPU nodes in racks, more of them than fit, end to end on the
// bench harness (bench/harness.h). It is the side by side of copse and
// kube-scheduler (scripts/bench-side-by-side.sh): the same objects over HTTP
// against the same kind of server, `--kubeconfig` with `--scheduler
// external` and the scheduler's pid for its CPU, or the embedded server with
// copse in-process.
//
// Shape (defaults; BenchOptions::gang_shape and --nodes / --pods change them):
// 1,000 nodes of 8 GPUs (64 cpu, 512Gi) in 125 racks (label copse.dev/rack,
// 8 nodes each); gangs of 4 pods x 2 GPUs (1 cpu, 4Gi), one Workload (one
// gang template, minCount 4), one PodGroup from that template and 4 member
// pods each; every second gang requires one rack (the topology constraint
// copse.dev/rack on its template and PodGroup); 1,100 gangs, 110% of what the
// cluster's GPU slots hold. The API version is what the server serves
// (bench/workload_api.h). No warm-up: the cluster starts empty.
//
// Measured from before the first create: every Workload, every PodGroup,
// then every pod, over HTTP from --connections connections. The run ends when
// every pod is bound, or when no pod was bound for the settle window (15 s,
// longer than kube-scheduler's 10 s maximum backoff, so a gang retried
// after a backoff is still seen): the gangs beyond capacity never bind, so
// "no bind for a while" is the end. A run that has not settled by --timeout
// (600 s) has timed out and fails.
//
// Figures: pods bound; gangs placed (every member bound); rack-constrained
// gangs placed and of those the ones inside one rack; time to the last bind
// (from the clock's start) and pods/s = pods bound / that time; p50/p99
// create -> bind; the scheduler's CPU from the start to the end of the run
// (the settle window included: what a scheduler burns retrying gangs that
// cannot fit counts) and to the last bind (sampled at the first poll after
// it, every 20 ms); gangs whose PodGroup reports the scheduled condition
// False. Checked, and the run fails otherwise: no gang partially bound, no
// rack-constrained gang placed across racks, no node over its GPUs.
// Not measured, reported missing (null / n/a): the scheduler's CPU with
// --scheduler external and no --scheduler-pid, the API server's CPU on an
// external server.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "apiserver/synthetic.h"
#include "bench/bench.h"
#include "bench/harness.h"
#include "bench/workload_api.h"
#include "kube/discovery.h"

namespace copse::bench {
namespace {

using json = nlohmann::json;

constexpr int64_t kDefaultNodes = 1'000;
constexpr int64_t kDefaultGpusPerNode = 8;
constexpr int64_t kDefaultGpusPerPod = 2;
constexpr int64_t kDefaultGangSize = 4;
constexpr int64_t kDefaultNodesPerRack = 8;
constexpr double kDefaultRackShare = 0.5;
constexpr double kDefaultOverCapacity = 1.1;
constexpr int64_t kDefaultSettleSeconds = 15;
constexpr int64_t kDefaultTimeoutSeconds = 600;
constexpr auto kPoll = std::chrono::milliseconds(20);

struct Shape {
  int64_t nodes = 0;
  int64_t gpus_per_node = 0;
  int64_t gpus_per_pod = 0;
  int64_t gang_size = 0;
  int64_t racks = 0;
  double rack_share = 0;
  int64_t gangs = 0;
  int64_t gangs_fit_at_most = 0;  // GPU slots / gang size: no placement holds more
  int64_t settle_seconds = 0;

  // Gang g requires one rack: `rack_share` of the gangs, spread evenly
  // (0.5: every second gang, g = 1, 3, 5, ...).
  bool RackConstrained(int64_t g) const {
    return std::floor(static_cast<double>(g + 1) * rack_share) >
           std::floor(static_cast<double>(g) * rack_share);
  }
};

Result<Shape> ShapeFrom(const BenchOptions& options) {
  const BenchOptions::GangShape& o = options.gang_shape;
  Shape s;
  s.nodes = options.nodes > 0 ? options.nodes : kDefaultNodes;
  s.gpus_per_node = o.gpus_per_node > 0 ? o.gpus_per_node : kDefaultGpusPerNode;
  s.gpus_per_pod = o.gpus_per_pod > 0 ? o.gpus_per_pod : kDefaultGpusPerPod;
  s.gang_size = o.gang_size > 0 ? o.gang_size : kDefaultGangSize;
  s.racks = o.racks > 0 ? o.racks : std::max<int64_t>(1, s.nodes / kDefaultNodesPerRack);
  s.rack_share = o.rack_share.value_or(kDefaultRackShare);
  const double over = o.over_capacity.value_or(kDefaultOverCapacity);
  s.settle_seconds = o.settle_seconds > 0 ? o.settle_seconds : kDefaultSettleSeconds;
  if (s.gpus_per_pod > s.gpus_per_node) {
    return MakeError(ErrorCode::kInvalid, "--gpus-per-pod " + std::to_string(s.gpus_per_pod) +
                                              ": more than a node has (--gpus-per-node " +
                                              std::to_string(s.gpus_per_node) + ")");
  }
  if (s.racks > s.nodes) {
    return MakeError(ErrorCode::kInvalid, "--racks " + std::to_string(s.racks) +
                                              ": more racks than nodes (" +
                                              std::to_string(s.nodes) + ")");
  }
  if (!(s.rack_share >= 0 && s.rack_share <= 1)) {
    return MakeError(ErrorCode::kInvalid, "--rack-share: must be between 0 and 1");
  }
  if (!(over > 0 && over <= 100)) {
    return MakeError(ErrorCode::kInvalid, "--over-capacity: must be in (0, 100]");
  }
  s.gangs_fit_at_most = s.nodes * (s.gpus_per_node / s.gpus_per_pod) / s.gang_size;
  if (options.pods > 0) {
    s.gangs = options.pods / s.gang_size;  // whole gangs
  } else {
    s.gangs = std::llround(static_cast<double>(s.gangs_fit_at_most) * over);
  }
  if (s.gangs < 1) {
    return MakeError(ErrorCode::kInvalid, "no whole gang: --pods " + std::to_string(options.pods) +
                                              " with gangs of " + std::to_string(s.gang_size) +
                                              " (or a cluster that holds no gang)");
  }
  return s;
}

// A short name prefix of this run: objects of an earlier run that are still
// going away (a PodGroup waits for its protection finalizer) never collide.
std::string RunToken() {
  std::random_device rd;
  char buf[16];
  std::snprintf(buf, sizeof(buf), "wg%04x", static_cast<unsigned>(rd() & 0xffff));
  return buf;
}

std::string PodJson(const std::string& name, const std::string& scheduler_name,
                    const std::string& membership, const std::string& gang, const json& resources) {
  json spec = json::parse("{" + membership + "}");
  spec["schedulerName"] = scheduler_name;
  spec["terminationGracePeriodSeconds"] = 0;
  spec["containers"] =
      json::array({{{"name", "main"},
                    {"image", "registry.k8s.io/pause:3.10"},
                    {"resources", {{"requests", resources}, {"limits", resources}}}}});
  return json{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", name}, {"namespace", kBenchNamespace}, {"labels", {{"gang", gang}}}}},
      {"spec", spec}}
      .dump();
}

// The optional difference b - a; missing when either is.
std::optional<double> Minus(const std::optional<double>& b, const std::optional<double>& a) {
  if (!a || !b) return std::nullopt;
  return *b - *a;
}

double OrMissing(const std::optional<double>& v) {
  return v ? *v : std::numeric_limits<double>::quiet_NaN();
}

// PodGroups in the bench namespace whose `condition` has status False.
Result<std::set<std::string>> ReportedUnschedulable(Harness& h, const WorkloadApi& api) {
  auto list = h.List(api.pod_groups(), kBenchNamespace);
  if (!list.ok()) return list.error();
  std::set<std::string> out;
  for (const std::string& item : list->items) {
    const json group = json::parse(item, nullptr, false);
    if (!group.is_object()) continue;
    const json* conditions = nullptr;
    if (auto st = group.find("status"); st != group.end() && st->is_object()) {
      if (auto c = st->find("conditions"); c != st->end() && c->is_array()) conditions = &*c;
    }
    if (conditions == nullptr) continue;
    for (const json& c : *conditions) {
      if (c.is_object() && c.value("type", "") == api.scheduled_condition &&
          c.value("status", "") == "False") {
        out.insert(group["metadata"].value("name", ""));
      }
    }
  }
  return out;
}

}  // namespace

Result<BenchResult> RunWorkloadGangBench(const BenchOptions& options, Progress& progress) {
  auto shaped = ShapeFrom(options);
  if (!shaped.ok()) return shaped.error();
  const Shape shape = *shaped;
  const int64_t total_pods = shape.gangs * shape.gang_size;
  const std::string rack_key(apiserver::TopologyLabelKey("rack"));

  ClusterSpec spec;
  spec.nodes = shape.nodes;
  spec.node_shape =
      "cpu=64,memory=512Gi,nvidia.com/gpu=" + std::to_string(shape.gpus_per_node) + ",pods=110";
  spec.topology = "rack=" + std::to_string(shape.racks);
  spec.watch_history = static_cast<size_t>(total_pods) * 6 + static_cast<size_t>(shape.gangs) * 6 +
                       static_cast<size_t>(shape.nodes) * 2 + 1024;
  auto started = Harness::Start(options, spec, progress);
  if (!started.ok()) return started.error();
  Harness& h = **started;
  Timeline& timeline = h.timeline();

  // The version the server serves, from discovery: never assumed.
  auto discovery = kube::Discovery::ReadBlocking(h.client(), {"scheduling.k8s.io"});
  if (!discovery.ok()) return discovery.error();
  auto chosen = ChooseWorkloadApi(*discovery);
  if (!chosen.ok()) return chosen.error();
  const WorkloadApi& api = **chosen;
  // Pods are deleted first (the harness), then the PodGroups, then Workloads.
  h.AddCleanup(api.pod_groups());
  h.AddCleanup(api.workloads());
  if (!options.quiet) {
    std::fprintf(stderr, "workload-gang: scheduling.k8s.io/%s (the version the server serves)\n",
                 std::string(api.version).c_str());
  }

  // Every body is built before the clock starts.
  const std::string token = RunToken();
  const json resources = {
      {"cpu", "1"}, {"memory", "4Gi"}, {"nvidia.com/gpu", std::to_string(shape.gpus_per_pod)}};
  std::vector<std::string> workloads, groups, pods;
  std::unordered_map<std::string, std::pair<int64_t, int64_t>> member_of;  // pod -> (gang, index)
  std::vector<std::string> group_names;
  for (int64_t g = 0; g < shape.gangs; ++g) {
    GangObjects gang;
    gang.ns = kBenchNamespace;
    gang.workload = token + "-" + std::to_string(g);
    gang.pod_group = gang.workload;
    gang.min_count = static_cast<int>(shape.gang_size);
    if (shape.RackConstrained(g)) gang.topology_key = rack_key;
    workloads.push_back(api.workload_json(gang));
    groups.push_back(api.pod_group_json(gang));
    group_names.push_back(gang.pod_group);
    const std::string membership = api.pod_membership(gang);
    for (int64_t i = 0; i < shape.gang_size; ++i) {
      const std::string name = gang.pod_group + "-" + std::to_string(i);
      pods.push_back(PodJson(name, h.scheduler_name(), membership, gang.pod_group, resources));
      member_of[name] = {g, i};
    }
  }

  FiguresInput in;
  in.created.reserve(static_cast<size_t>(total_pods));
  const std::optional<double> cpu_before = h.SchedulerCpuSeconds();
  const std::optional<double> api_cpu_before = h.ApiServerCpuSeconds();
  in.start = BenchClock::now();
  if (Status s = h.Create(api.workloads(), kBenchNamespace, std::move(workloads), nullptr,
                          "workloads", progress);
      !s.ok()) {
    return s.error();
  }
  if (Status s = h.Create(api.pod_groups(), kBenchNamespace, std::move(groups), nullptr,
                          "podgroups", progress);
      !s.ok()) {
    return s.error();
  }
  if (Status s = h.Create(kube::resources::kPods, kBenchNamespace, std::move(pods), &in.created,
                          "pods", progress);
      !s.ok()) {
    return s.error();
  }

  // Until every pod is bound or none was bound for the settle window.
  const auto settle = std::chrono::seconds(shape.settle_seconds);
  const TimePoint deadline =
      in.start + std::chrono::seconds(options.timeout_seconds > 0 ? options.timeout_seconds
                                                                  : kDefaultTimeoutSeconds);
  int64_t seen = timeline.bound();
  TimePoint last_change = BenchClock::now();
  std::optional<double> cpu_at_last_bind = h.SchedulerCpuSeconds();
  for (;;) {
    if (!timeline.error().empty()) return MakeError(ErrorCode::kUnavailable, timeline.error());
    const int64_t n = timeline.bound();
    const TimePoint now = BenchClock::now();
    if (n != seen) {
      seen = n;
      last_change = now;
      cpu_at_last_bind = h.SchedulerCpuSeconds();
    }
    if (n >= total_pods || now - last_change >= settle) break;
    if (now > deadline) {
      in.timed_out = true;
      break;
    }
    progress.Update("schedule", n, total_pods);
    std::this_thread::sleep_for(kPoll);
  }
  in.scheduler_cpu_seconds = Minus(h.SchedulerCpuSeconds(), cpu_before);
  in.api_server_cpu_seconds = Minus(h.ApiServerCpuSeconds(), api_cpu_before);
  in.records = timeline.Snapshot();

  BenchResult result;
  result.scenario = "workload-gang";
  result.nodes = shape.nodes;
  const TimePoint last = ApplyFigures(in, result);
  const double to_last_bind = std::chrono::duration<double>(last - in.start).count();
  progress.Done("schedule", result.pods_bound, to_last_bind);

  // Gangs, racks and GPUs from the placements.
  auto racks_of = h.NodeLabelValues(rack_key);
  if (!racks_of.ok()) return racks_of.error();
  std::vector<int64_t> bound(static_cast<size_t>(shape.gangs), 0);
  std::vector<std::set<std::string>> racks(static_cast<size_t>(shape.gangs));
  std::map<std::string, int64_t> gpus_on;
  for (const auto& [name, r] : in.records) {
    auto it = member_of.find(name);
    if (it == member_of.end() || !r.bound || r.deleted) continue;
    const size_t g = static_cast<size_t>(it->second.first);
    ++bound[g];
    auto rack = racks_of->find(r.node);
    racks[g].insert(rack == racks_of->end() ? "?" + r.node : rack->second);
    gpus_on[r.node] += shape.gpus_per_pod;
  }
  int64_t placed = 0, partial = 0, constrained = 0, constrained_placed = 0, in_one_rack = 0;
  std::string partial_example, split_example;
  for (int64_t g = 0; g < shape.gangs; ++g) {
    const size_t k = static_cast<size_t>(g);
    const bool whole = bound[k] == shape.gang_size;
    placed += whole;
    if (bound[k] > 0 && !whole) {
      ++partial;
      if (partial_example.empty()) {
        partial_example = group_names[k] + " has " + std::to_string(bound[k]) + " of " +
                          std::to_string(shape.gang_size) + " pods bound";
      }
    }
    if (!shape.RackConstrained(g)) continue;
    ++constrained;
    if (!whole) continue;
    ++constrained_placed;
    if (racks[k].size() == 1) {
      ++in_one_rack;
    } else if (split_example.empty()) {
      split_example = group_names[k] + " spans " + std::to_string(racks[k].size()) + " racks";
    }
  }
  int64_t overfull = 0;
  for (const auto& [node, gpus] : gpus_on) overfull += gpus > shape.gpus_per_node;

  auto unschedulable = ReportedUnschedulable(h, api);
  if (!unschedulable.ok()) return unschedulable.error();
  int64_t reported = 0;
  for (int64_t g = 0; g < shape.gangs; ++g) {
    const size_t k = static_cast<size_t>(g);
    reported += bound[k] < shape.gang_size && unschedulable->contains(group_names[k]);
  }

  auto& x = result.extras;
  x["gangs"] = static_cast<double>(shape.gangs);
  x["gang_size"] = static_cast<double>(shape.gang_size);
  x["gpus_per_pod"] = static_cast<double>(shape.gpus_per_pod);
  x["gpus_per_node"] = static_cast<double>(shape.gpus_per_node);
  x["racks"] = static_cast<double>(shape.racks);
  x["gangs_fit_at_most"] = static_cast<double>(shape.gangs_fit_at_most);
  x["gangs_placed"] = static_cast<double>(placed);
  x["gangs_partial"] = static_cast<double>(partial);
  x["gangs_reported_unschedulable"] = static_cast<double>(reported);
  x["rack_constrained_gangs"] = static_cast<double>(constrained);
  x["rack_constrained_gangs_placed"] = static_cast<double>(constrained_placed);
  x["rack_constrained_gangs_in_one_rack"] = static_cast<double>(in_one_rack);
  x["nodes_over_allocatable"] = static_cast<double>(overfull);
  x["time_to_last_bind_s"] = to_last_bind;
  x["settle_seconds"] = static_cast<double>(shape.settle_seconds);
  x["scheduler_cpu_seconds_to_last_bind"] = OrMissing(Minus(cpu_at_last_bind, cpu_before));
  result.targets["no gang partially bound"] = partial == 0;
  result.targets["every rack-constrained gang in one rack"] = in_one_rack == constrained_placed;
  result.targets["no node over its GPUs"] = overfull == 0;
  if (partial > 0) {
    result.failures.push_back(std::to_string(partial) + " gang(s) partially bound, e.g. " +
                              partial_example);
  }
  if (in_one_rack != constrained_placed) {
    result.failures.push_back(std::to_string(constrained_placed - in_one_rack) +
                              " rack-constrained gang(s) placed across racks, e.g. " +
                              split_example);
  }
  if (overfull > 0) {
    result.failures.push_back(std::to_string(overfull) + " node(s) hold more than " +
                              std::to_string(shape.gpus_per_node) + " GPUs of bound pods");
  }
  return result;
}

}  // namespace copse::bench
