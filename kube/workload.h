#pragma once
// scheduling.k8s.io/v1alpha2 Workload (KEP-4671) and the scheduling fields it
// shares with the v1alpha2 PodGroup (kube/pod_group.h).
//
// A Workload is a static template: podGroupTemplates[] each with a
// schedulingPolicy (basic, or gang with minCount), optional
// schedulingConstraints (topology), disruptionMode and priorityClassName.
// Controllers create PodGroups from the templates (PodGroupFromTemplate in
// kube/pod_group.h); the scheduler schedules PodGroups, not Workloads.
//
// Topology constraints come in two spellings: copse's own (and KEP-4671's
// v1.36 alpha) `schedulingConstraints.topologyConstraints[].topologyKey`, and
// upstream's later `schedulingConstraints.topology[].key`. Both decode, each
// encodes back under its own key, and TopologyKeys() reads either.
//
// Kubernetes v1.32 does not serve this group/version; deploy/crds/kubernetes/
// ships CRDs for it. copse's embedded API server serves it natively.
//
// Thread-safety: value types.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/gang.h"
#include "core/result.h"
#include "kube/object.h"

namespace copse::kube {

namespace resources {
inline const ResourceRef kWorkloads{"scheduling.k8s.io", "v1alpha2", "workloads", true};
}  // namespace resources

inline constexpr std::string_view kDisruptionModePod = "Pod";
inline constexpr std::string_view kDisruptionModePodGroup = "PodGroup";
// Upstream's limit on spec.podGroupTemplates.
inline constexpr size_t kWorkloadMaxPodGroupTemplates = 8;

struct TypedLocalObjectReference {
  std::string api_group;
  std::string kind;
  std::string name;
  bool operator==(const TypedLocalObjectReference&) const = default;
};

struct GangSchedulingPolicy {
  int32_t min_count = 0;
  bool operator==(const GangSchedulingPolicy&) const = default;
};

// Exactly one of basic / gang is meant to be set (checked by the conversion).
struct PodGroupSchedulingPolicy {
  bool basic = false;  // `basic: {}` present
  std::optional<GangSchedulingPolicy> gang;
  bool operator==(const PodGroupSchedulingPolicy&) const = default;
};

struct PodGroupTopologyConstraint {
  std::string key;  // a node label key, e.g. "topology.kubernetes.io/zone"
  bool operator==(const PodGroupTopologyConstraint&) const = default;
};

struct PodGroupSchedulingConstraints {
  // topologyConstraints[].topologyKey (copse's spelling).
  std::vector<PodGroupTopologyConstraint> topology_constraints;
  // topology[].key (later upstream spelling).
  std::vector<PodGroupTopologyConstraint> topology;

  // The keys of whichever list is non-empty (topology_constraints first).
  std::vector<std::string> TopologyKeys() const;
  bool operator==(const PodGroupSchedulingConstraints&) const = default;
};

struct PodGroupTemplate {
  std::string name;
  PodGroupSchedulingPolicy scheduling_policy;
  std::optional<PodGroupSchedulingConstraints> scheduling_constraints;
  std::optional<std::string> disruption_mode;  // "Pod" | "PodGroup"; unset: Pod
  std::string priority_class_name;
  std::optional<int32_t> priority;
  bool operator==(const PodGroupTemplate&) const = default;
};

struct WorkloadSpec {
  std::optional<TypedLocalObjectReference> controller_ref;
  std::vector<PodGroupTemplate> pod_group_templates;
  bool operator==(const WorkloadSpec&) const = default;
};

class Workload : public KubeObject {
 public:
  static constexpr std::string_view kApiVersion = "scheduling.k8s.io/v1alpha2";
  static constexpr std::string_view kKind = "Workload";

  WorkloadSpec spec;

  // The template called `name`, or nullptr.
  const PodGroupTemplate* FindTemplate(std::string_view name) const noexcept;

  // Upstream's rules, errors joined by "; " and naming the field:
  // spec.podGroupTemplates required, at most 8, names non-empty DNS labels
  // and unique; each template's policy, constraints and disruptionMode as
  // GangSpecFromSchedulingFields checks them
  // ("spec.podGroupTemplates[1].schedulingPolicy.gang.minCount: Invalid value: 0: must be >= 1").
  Status Validate() const;

  static Result<Workload> Decode(std::string_view json);
  std::string Encode() const;
};

// The gang model of the v1alpha2 scheduling fields shared by PodGroup and
// PodGroupTemplate (source kWorkloadPodGroup; metadata left empty). Checks:
// exactly one of basic / gang; minCount >= 1; disruptionMode Pod | PodGroup,
// and Pod for basic; at most one topology constraint, its key a valid label
// key. Error paths start with "spec." as in a PodGroup.
Result<GangSpec> GangSpecFromSchedulingFields(
    const PodGroupSchedulingPolicy& policy,
    const std::optional<PodGroupSchedulingConstraints>& constraints,
    const std::optional<std::string>& disruption_mode, const std::string& priority_class_name,
    const std::optional<int32_t>& priority);

}  // namespace copse::kube
