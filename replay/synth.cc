#include "replay/synth.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <ostream>
#include <random>

#include "apiserver/synthetic.h"
#include "core/clock.h"
#include "core/quantity.h"
#include "replay/trace.h"

namespace copse::replay {

using nlohmann::json;

namespace {

constexpr const char* kNamespace = "trace";
constexpr const char* kTopologyName = "trace";
constexpr double kPi = 3.14159265358979323846;

Status Invalid(const std::string& message) { return MakeError(ErrorCode::kInvalid, message); }

Status Validate(const SynthOptions& o) {
  if (o.nodes < 1) return Invalid("nodes: must be at least 1");
  if (o.duration.count() <= 0) return Invalid("duration: must be positive");
  if (!(o.jobs_per_hour > 0)) return Invalid("jobs-per-hour: must be positive");
  if (o.diurnal_amplitude < 0 || o.diurnal_amplitude >= 1) {
    return Invalid("diurnal-amplitude: must be in [0, 1)");
  }
  for (auto [name, v] : {std::pair{"gang-fraction", o.gang_fraction},
                         std::pair{"rack-required-fraction", o.rack_required_fraction},
                         std::pair{"high-priority-fraction", o.high_priority_fraction}}) {
    if (v < 0 || v > 1) return Invalid(std::string(name) + ": must be in [0, 1]");
  }
  if (o.gang_sizes.empty()) return Invalid("gang-sizes: must not be empty");
  for (int s : o.gang_sizes) {
    if (s < 1) return Invalid("gang-sizes: each size must be at least 1");
  }
  if (o.gpus_per_pod.empty()) return Invalid("gpus-per-pod: must not be empty");
  for (int g : o.gpus_per_pod) {
    if (g < 0) return Invalid("gpus-per-pod: must not be negative");
  }
  if (o.median_runtime.count() <= 0) return Invalid("median-runtime: must be positive");
  if (o.runtime_sigma < 0) return Invalid("runtime-sigma: must not be negative");
  return Status::Ok();
}

std::string PodJson(const std::string& name, const std::string& group, int gpus,
                    const std::string& priority_class, const std::string& scheduler_name,
                    const std::string& gpu_resource) {
  json requests = {{"cpu", std::to_string(std::max(1, gpus * 7))},
                   {"memory", std::to_string(std::max(4, gpus * 60)) + "Gi"}};
  if (gpus > 0) requests[gpu_resource] = std::to_string(gpus);
  json labels = {{"app", "trace"}};
  if (!group.empty()) labels["scheduling.copse.dev/pod-group"] = group;
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"namespace", kNamespace}, {"labels", labels}}},
              {"spec",
               {{"schedulerName", scheduler_name},
                {"priorityClassName", priority_class},
                {"containers",
                 json::array({{{"name", "main"},
                               {"image", "registry.k8s.io/pause:3.10"},
                               {"resources", {{"requests", requests}, {"limits", requests}}}}})}}}};
  return pod.dump();
}

}  // namespace

Status WriteSynthTrace(const SynthOptions& o, std::ostream& out) {
  if (Status s = Validate(o); !s.ok()) return s;
  Result<ResourceList> shape = ParseResourceList(o.node_shape);
  if (!shape.ok()) return Invalid("node-shape: " + shape.error().message);
  Result<apiserver::TopologySpec> topology = apiserver::ParseTopology(o.topology);
  if (!topology.ok()) return Invalid("topology: " + topology.error().message);
  Result<std::vector<std::string>> nodes =
      apiserver::MakeSyntheticNodes(o.nodes, *shape, *topology);
  if (!nodes.ok()) return Invalid("nodes: " + nodes.error().message);

  TraceHeader header;
  header.source = "synth";
  header.start =
      FormatRfc3339(std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000)));
  header.duration_ms = o.duration.count();
  out << HeaderLine(header) << "\n";
  auto emit_init = [&out](const json& object) {
    TraceEvent e;
    e.op = TraceOp::kInit;
    e.object = object.dump();
    out << EventLine(e) << "\n";
  };
  emit_init({{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", kNamespace}}}});
  for (auto [name, value] : {std::pair{"trace-low", 100}, std::pair{"trace-high", 1000}}) {
    emit_init({{"apiVersion", "scheduling.k8s.io/v1"},
               {"kind", "PriorityClass"},
               {"metadata", {{"name", name}}},
               {"value", value}});
  }
  json levels = json::array();
  for (const auto& level : topology->levels) {
    levels.push_back({{"nodeLabel", std::string(apiserver::TopologyLabelKey(level.name))}});
  }
  levels.push_back({{"nodeLabel", "kubernetes.io/hostname"}});
  emit_init({{"apiVersion", "scheduling.copse.dev/v1alpha1"},
             {"kind", "Topology"},
             {"metadata", {{"name", kTopologyName}}},
             {"spec", {{"levels", levels}}}});
  for (const std::string& node : *nodes) emit_init(ReduceObject(json::parse(node)));

  // GPUs in one rack (the innermost level): a rack-required gang must fit there.
  int64_t gpus_per_node = 0;
  for (const auto& [name, q] : *shape) {
    if (name == header.gpu_resource) gpus_per_node = q.Value();
  }
  const int64_t leaves = std::max<int64_t>(1, topology->LeafDomains());
  const int64_t rack_gpus = (o.nodes / leaves) * gpus_per_node;

  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::exponential_distribution<double> gap(o.jobs_per_hour * (1 + o.diurnal_amplitude) / 3.6e6);
  std::lognormal_distribution<double> runtime(
      std::log(static_cast<double>(o.median_runtime.count())), o.runtime_sigma);
  const double day_ms = 24.0 * 3.6e6;
  double t = 0;
  int64_t job = 0;
  while (true) {
    t += gap(rng);
    if (t >= static_cast<double>(o.duration.count())) break;
    // Thinning: accept with the day/night rate over the peak rate.
    const double rate = 1 + o.diurnal_amplitude * std::sin(2 * kPi * t / day_ms);
    if (unit(rng) * (1 + o.diurnal_amplitude) > rate) continue;
    const int64_t t_ms = static_cast<int64_t>(t);
    ++job;
    const bool gang = unit(rng) < o.gang_fraction;
    const int size = gang ? o.gang_sizes[static_cast<size_t>(unit(rng) * o.gang_sizes.size()) %
                                         o.gang_sizes.size()]
                          : 1;
    int gpus = o.gpus_per_pod[static_cast<size_t>(unit(rng) * o.gpus_per_pod.size()) %
                              o.gpus_per_pod.size()];
    const bool rack_required = gang && unit(rng) < o.rack_required_fraction;
    if (rack_required && gpus > 0 && rack_gpus > 0) {
      while (gpus > 1 && static_cast<int64_t>(gpus) * size > rack_gpus) gpus /= 2;
    }
    const std::string priority = unit(rng) < o.high_priority_fraction ? "trace-high" : "trace-low";
    const int64_t run_ms = std::max<int64_t>(1000, static_cast<int64_t>(runtime(rng)));
    const std::string base = (gang ? "gang-" : "job-") + std::to_string(job);
    if (gang) {
      const json group = {{"apiVersion", "scheduling.copse.dev/v1alpha1"},
                          {"kind", "PodGroup"},
                          {"metadata", {{"name", base}, {"namespace", kNamespace}}},
                          {"spec",
                           {{"minMember", size},
                            {"priorityClassName", priority},
                            {"topologyConstraint",
                             {{"topology", kTopologyName},
                              {"requiredTopologyLevel", rack_required ? "rack" : "block"}}}}}};
      TraceEvent e;
      e.t_ms = t_ms;
      e.op = TraceOp::kCreate;
      e.object = group.dump();
      out << EventLine(e) << "\n";
    }
    for (int i = 0; i < size; ++i) {
      TraceEvent e;
      e.t_ms = t_ms;
      e.op = TraceOp::kCreate;
      e.object = PodJson(gang ? base + "-" + std::to_string(i) : base, gang ? base : "", gpus,
                         priority, o.scheduler_name, header.gpu_resource);
      e.runtime_ms = run_ms;
      out << EventLine(e) << "\n";
    }
  }
  if (!out) return MakeError(ErrorCode::kInternal, "trace: write failed");
  return Status::Ok();
}

}  // namespace copse::replay
