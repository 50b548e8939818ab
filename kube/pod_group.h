#pragma once
// The two gang objects copse schedules, their codecs, their conversion to the
// scheduler's gang model (core/gang.h) and the status writes the scheduler
// makes:
//
//   PodGroup       scheduling.k8s.io/v1alpha2 (KEP-4671). Pods join with
//                  spec.schedulingGroup.podGroupName. Served natively by
//                  copse's embedded API server; a CRD for real clusters in
//                  deploy/crds/kubernetes/.
//   CopsePodGroup  scheduling.copse.dev/v1alpha1, copse's own (namespaced,
//                  short name `cpg`). Pods join with the label
//                  scheduling.copse.dev/pod-group=<name> and name their leaf
//                  subgroup with scheduling.copse.dev/subgroup=<subgroup>.
//
// Both decode leniently (enum strings are kept as written) and check
// semantics in ToGangSpec(), whose errors name the field:
//   spec.preemptibility: Unsupported value: "sometimes": supported values: ...
//   spec.subGroups[2].parent: Not found: "decode-x"
//
// Status writes. Both kinds are written through the status subresource with
// a JSON merge patch (RFC 7386, "application/merge-patch+json"), which CRDs
// accept (they do not accept strategic merge patches). A merge patch
// replaces arrays whole, so StatusPatch() always carries the complete
// conditions (and subgroup) lists: build them from the object's current
// status with SetCondition / SetPodGroupScheduled, then send the patch.
//
// Thread-safety: value types; free functions are reentrant.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/gang.h"
#include "core/result.h"
#include "kube/codec.h"
#include "kube/object.h"
#include "kube/workload.h"

namespace copse::kube {

namespace resources {
inline const ResourceRef kPodGroups{"scheduling.k8s.io", "v1alpha2", "podgroups", true};
inline const ResourceRef kCopsePodGroups{"scheduling.copse.dev", "v1alpha1", "podgroups", true};
}  // namespace resources

// Labels a pod carries to join a copse PodGroup and name its leaf subgroup.
inline constexpr std::string_view kPodGroupLabel = "scheduling.copse.dev/pod-group";
inline constexpr std::string_view kSubGroupLabel = "scheduling.copse.dev/subgroup";
// The finalizer copse puts on PodGroups it schedules (both kinds) and removes
// once every member pod is terminal or gone (KEP-4671 deletion protection).
inline constexpr std::string_view kPodGroupProtectionFinalizer =
    "scheduling.copse.dev/pod-group-protection";

// Condition types and reasons (KEP-4671; the copse PodGroup uses the same).
inline constexpr std::string_view kPodGroupScheduled = "PodGroupScheduled";
inline constexpr std::string_view kDisruptionTarget = "DisruptionTarget";
inline constexpr std::string_view kReasonScheduled = "Scheduled";  // PodGroupScheduled=True
inline constexpr std::string_view kReasonUnschedulable = "Unschedulable";
inline constexpr std::string_view kReasonSchedulerError = "SchedulerError";
inline constexpr std::string_view kReasonPreemptionByScheduler = "PreemptionByScheduler";
// DisruptionTarget on the members (and the group) of a gang copse evicts
// because it stayed bound below its minimum.
inline constexpr std::string_view kReasonGangBelowMinimum = "GangBelowMinimum";

// ------------------------------------------------- scheduling.k8s.io/v1alpha2

struct WorkloadPodGroupTemplateReference {
  std::string workload_name;
  std::string pod_group_template_name;
  bool operator==(const WorkloadPodGroupTemplateReference&) const = default;
};

struct PodGroupTemplateReference {
  std::optional<WorkloadPodGroupTemplateReference> workload;
  bool operator==(const PodGroupTemplateReference&) const = default;
};

struct PodGroupSpec {
  std::optional<PodGroupTemplateReference> pod_group_template_ref;
  PodGroupSchedulingPolicy scheduling_policy;
  std::optional<PodGroupSchedulingConstraints> scheduling_constraints;
  std::optional<std::string> disruption_mode;  // "Pod" | "PodGroup"; unset: Pod
  std::string priority_class_name;
  std::optional<int32_t> priority;
  bool operator==(const PodGroupSpec&) const = default;
};

struct PodGroupStatus {
  std::vector<Condition> conditions;  // metav1.Condition: PodGroupScheduled, DisruptionTarget
  bool operator==(const PodGroupStatus&) const = default;
};

class PodGroup : public KubeObject {
 public:
  static constexpr std::string_view kApiVersion = "scheduling.k8s.io/v1alpha2";
  static constexpr std::string_view kKind = "PodGroup";

  PodGroupSpec spec;
  PodGroupStatus status;

  // The gang model (source kWorkloadPodGroup); kInvalid naming the field
  // (GangSpecFromSchedulingFields' rules). The result passes
  // ValidateGangSpec(spec) with default options.
  Result<GangSpec> ToGangSpec() const;

  // {"status":{"conditions":[...]}} (plus metadata.resourceVersion as a
  // precondition when given): a merge patch for the status subresource.
  static std::string StatusPatch(const PodGroupStatus& status,
                                 std::string_view resource_version = {});

  static Result<PodGroup> Decode(std::string_view json);
  std::string Encode() const;
};

// What a workload controller does: a PodGroup `name` in the Workload's
// namespace, copying the template's policy, constraints, disruptionMode and
// priority fields, with podGroupTemplateRef pointing back and the Workload as
// controller owner. kNotFound when the template does not exist.
Result<PodGroup> PodGroupFromTemplate(const Workload& workload, std::string_view template_name,
                                      std::string name);

// --------------------------------------------- scheduling.copse.dev/v1alpha1

inline constexpr std::string_view kPreemptible = "preemptible";
inline constexpr std::string_view kNonPreemptible = "non-preemptible";
inline constexpr std::string_view kSemiPreemptible = "semi-preemptible";

// status.phase values the scheduler writes.
inline constexpr std::string_view kPodGroupPhasePending = "Pending";  // waiting for members
inline constexpr std::string_view kPodGroupPhaseUnschedulable = "Unschedulable";
inline constexpr std::string_view kPodGroupPhaseScheduled = "Scheduled";  // >= minimum bound
inline constexpr std::string_view kPodGroupPhaseRunning = "Running";      // >= minimum ready
inline constexpr std::string_view kPodGroupPhaseSucceeded = "Succeeded";  // minimum ended Succeeded
inline constexpr std::string_view kPodGroupPhaseFailed =
    "Failed";  // a member failed, below minimum

struct CopseTopologyConstraint {
  std::string topology;                  // a copse Topology name
  std::string required_topology_level;   // node label key (or its name part)
  std::string preferred_topology_level;  // node label key (or its name part)
  bool operator==(const CopseTopologyConstraint&) const = default;
};

struct CopseSubGroup {
  std::string name;
  std::string parent;  // "" (or absent/null) = the PodGroup itself
  int32_t min_member = 0;
  std::optional<int32_t> min_sub_group;
  std::optional<CopseTopologyConstraint> topology_constraint;
  bool operator==(const CopseSubGroup&) const = default;
};

struct CopsePodGroupSpec {
  int32_t min_member = 0;
  std::optional<int32_t> min_sub_group;
  std::string priority_class_name;
  std::string preemptibility;  // "" = preemptible
  // "Pod" | "PodGroup" (KEP-4671's disruptionMode): PodGroup groups are
  // preempted only whole. "" = Pod.
  std::string disruption_mode;
  std::optional<CopseTopologyConstraint> topology_constraint;
  std::vector<CopseSubGroup> sub_groups;
  bool operator==(const CopsePodGroupSpec&) const = default;
};

struct CopseSubGroupStatus {
  std::string name;
  int32_t scheduled = 0;  // member pods bound (or assumed and binding)
  int32_t ready = 0;      // member pods Ready
  bool operator==(const CopseSubGroupStatus&) const = default;
};

struct CopsePodGroupStatus {
  std::string phase;
  std::vector<Condition> conditions;
  int32_t scheduled = 0;
  int32_t ready = 0;
  std::vector<CopseSubGroupStatus> sub_groups;
  std::optional<int64_t> observed_generation;
  // Resources requested by the bound pods preemption may not take (spec
  // 002): all of a non-preemptible group's, the required part of a
  // semi-preemptible one's; quantities as text ("4", "16Gi"). Empty: none.
  std::map<std::string, std::string, std::less<>> allocated_non_preemptible;
  bool operator==(const CopsePodGroupStatus&) const = default;
};

class CopsePodGroup : public KubeObject {
 public:
  static constexpr std::string_view kApiVersion = "scheduling.copse.dev/v1alpha1";
  static constexpr std::string_view kKind = "PodGroup";

  CopsePodGroupSpec spec;
  CopsePodGroupStatus status;

  // The gang model (source kCopsePodGroup); kInvalid naming the field for an
  // unknown preemptibility or anything GangSpecErrors reports without
  // topologies or pod counts (check those with ValidateGangSpec(spec, options)).
  Result<GangSpec> ToGangSpec() const;

  // {"status":{"phase","conditions","scheduled","ready","subGroups",
  // "observedGeneration"}} with every typed status field (an empty phase or
  // unset observedGeneration as null, so the patch removes it).
  static std::string StatusPatch(const CopsePodGroupStatus& status,
                                 std::string_view resource_version = {});

  static Result<CopsePodGroup> Decode(std::string_view json);
  std::string Encode() const;
};

// ------------------------------------------------------------- conditions

// Sets `condition` in `conditions` (metav1 rules): a new type is appended; an
// existing one is updated, keeping lastTransitionTime unless the status
// changed. Returns whether anything changed.
bool SetCondition(std::vector<Condition>& conditions, const Condition& condition);

// PodGroupScheduled with KEP-4671's alpha rule: once True it never returns to
// False (a False update is ignored); True -> True may update reason and
// message but keeps lastTransitionTime. `now` is RFC 3339. Returns whether
// anything changed (i.e. whether a status write is needed).
bool SetPodGroupScheduled(std::vector<Condition>& conditions, bool scheduled, std::string reason,
                          std::string message, std::string now,
                          std::optional<int64_t> observed_generation = std::nullopt);

}  // namespace copse::kube
