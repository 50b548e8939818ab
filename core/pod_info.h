#pragma once
// PodInfo: everything the scheduler reads from a pod, JSON-free and
// pre-digested (requests as a ResourceVector, affinity terms with their
// namespaces resolved). Built elsewhere from the API object (kube/pod.h);
// immutable once Finalize() has run, and then shared between the cache, the
// snapshot and the queue as shared_ptr<const PodInfo>.
//
// Pod classes: `signature` is a 64-bit hash of every field that can change a
// Filter verdict (namespace, labels, requests, node selector and affinity,
// tolerations, host ports, pod (anti-)affinity, spread constraints, resource
// claims, scheduler name, nodeName). Two pods with the same signature get the same Filter result
// on the same snapshot, so they can share one filter pass (KEP-5598
// opportunistic batching). Priority, name, uid and nomination are left out:
// callers that filter with nominated pods must also compare priorities.
//
// Thread-safety: a value type; const methods are safe to call concurrently.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/labels.h"
#include "core/resource_vector.h"
#include "core/result.h"
#include "core/scheduling_types.h"

namespace copse {

enum class PreemptionPolicy : uint8_t { kPreemptLowerPriority, kNever };

// kube-scheduler's defaults for containers that request no cpu / memory,
// used for scoring only (schedutil.DefaultMilliCPURequest, DefaultMemoryRequest).
inline constexpr int64_t kDefaultMilliCpuRequest = 100;
inline constexpr int64_t kDefaultMemoryRequest = 200 * 1024 * 1024;

struct PreferredSchedulingTerm {
  int32_t weight = 0;
  NodeSelectorTerm term;
  bool operator==(const PreferredSchedulingTerm&) const = default;
};

struct PodAffinityTerm {
  // nullopt (absent) matches no pod.
  std::optional<LabelSelector> label_selector;
  // After PodInfo::Finalize: sorted, unique, and the owning pod's namespace
  // when both this and namespace_selector are absent.
  std::vector<std::string> namespaces;
  // nullopt: no namespace is selected by labels; an empty selector: all namespaces.
  std::optional<LabelSelector> namespace_selector;
  std::string topology_key;
  // Merged into label_selector by Finalize (key In / NotIn the owner's value).
  std::vector<std::string> match_label_keys;
  std::vector<std::string> mismatch_label_keys;

  // framework.AffinityTerm.Matches: the namespace is listed or selected by
  // `namespace_labels` (the labels of `pod_namespace`; null reads as none),
  // and the label selector matches.
  bool Matches(std::string_view pod_namespace, const Labels& pod_labels,
               const Labels* namespace_labels) const noexcept;
  bool NamespaceListed(std::string_view ns) const noexcept;
  bool MatchesLabels(const Labels& pod_labels) const noexcept {
    return label_selector.has_value() && label_selector->Matches(pod_labels);
  }
  bool operator==(const PodAffinityTerm&) const = default;
};

struct WeightedPodAffinityTerm {
  int32_t weight = 0;
  PodAffinityTerm term;
  bool operator==(const WeightedPodAffinityTerm&) const = default;
};

enum class UnsatisfiableConstraintAction : uint8_t { kDoNotSchedule, kScheduleAnyway };
enum class NodeInclusionPolicy : uint8_t { kHonor, kIgnore };

struct TopologySpreadConstraint {
  int32_t max_skew = 1;
  std::string topology_key;
  UnsatisfiableConstraintAction when_unsatisfiable = UnsatisfiableConstraintAction::kDoNotSchedule;
  // nullopt (absent) matches no pod.
  std::optional<LabelSelector> label_selector;
  int32_t min_domains = 1;
  NodeInclusionPolicy node_affinity_policy = NodeInclusionPolicy::kHonor;
  NodeInclusionPolicy node_taints_policy = NodeInclusionPolicy::kIgnore;
  // Merged into label_selector by Finalize (key In the owner's value).
  std::vector<std::string> match_label_keys;
  bool operator==(const TopologySpreadConstraint&) const = default;
};

// One spec.resourceClaims entry, resolved to its ResourceClaim object as
// kube's resourceclaim.Name does: a resourceClaimName is the claim; a
// resourceClaimTemplateName's claim is the one status.resourceClaimStatuses
// names for the entry (made by the resourceclaim controller and owned by the
// pod).
struct PodClaimRef {
  enum class State : uint8_t {
    kResolved,    // claim_name is the ResourceClaim
    kNotCreated,  // a template's claim the controller has not reported yet
    kNotNeeded,   // the controller reported no claim for the entry: skipped
    kInvalid,     // neither resourceClaimName nor resourceClaimTemplateName
  };
  std::string name;        // spec.resourceClaims[].name
  std::string claim_name;  // the ResourceClaim (same namespace); set when kResolved
  State state = State::kResolved;
  bool from_template = false;  // the claim must be owned by the pod
  bool operator==(const PodClaimRef&) const = default;
};

struct PodInfo {
  std::string namespace_name;
  std::string name;
  std::string uid;
  Labels labels;
  int32_t priority = 0;
  PreemptionPolicy preemption_policy = PreemptionPolicy::kPreemptLowerPriority;
  std::string scheduler_name;

  // Effective requests (containers, init containers, sidecars, pod-level
  // resources and overhead), as resource.PodRequests computes them. The pods
  // entry is ignored: every pod takes one pod slot.
  ResourceVector requests;
  // cpu/memory with kube-scheduler's per-container defaults for containers
  // that request nothing (scoring only). -1: Finalize derives them from
  // `requests` (exact for single-container pods).
  int64_t non_zero_cpu_milli = -1;
  int64_t non_zero_memory = -1;

  Labels node_selector;                                // spec.nodeSelector
  std::optional<NodeSelector> required_node_affinity;  // nullopt: none
  std::vector<PreferredSchedulingTerm> preferred_node_affinity;
  std::vector<Toleration> tolerations;
  std::vector<HostPort> host_ports;  // containers' hostPort > 0
  std::vector<PodAffinityTerm> required_affinity;
  std::vector<PodAffinityTerm> required_anti_affinity;
  std::vector<WeightedPodAffinityTerm> preferred_affinity;
  std::vector<WeightedPodAffinityTerm> preferred_anti_affinity;
  std::vector<TopologySpreadConstraint> topology_spread_constraints;
  // Selector of the services/controllers owning the pod, for system default
  // spread constraints (nullopt: none, and default constraints do not apply).
  std::optional<LabelSelector> default_spread_selector;

  // spec.resourceClaims, in order (Dynamic Resource Allocation).
  std::vector<PodClaimRef> resource_claims;

  // spec.schedulingGates[].name: a pod with gates waits in the gated pool
  // (PreEnqueue) and is not part of the signature.
  std::vector<std::string> scheduling_gates;

  // Gang membership (not part of the signature): the PodGroup the pod joins,
  // from spec.schedulingGroup.podGroupName (scheduling.k8s.io/v1alpha2) or
  // the label scheduling.copse.dev/pod-group (copse PodGroup), and the leaf
  // subgroup (label scheduling.copse.dev/subgroup).
  enum class GroupKind : uint8_t { kNone, kWorkloadPodGroup, kCopsePodGroup };
  GroupKind group_kind = GroupKind::kNone;
  std::string pod_group;
  std::string sub_group;

  std::string node_name;            // spec.nodeName
  std::string nominated_node_name;  // status.nominatedNodeName
  // status.startTime; nullopt for pods that have not started (preemption
  // treats them as starting now).
  std::optional<std::chrono::system_clock::time_point> start_time;
  bool terminating = false;                // metadata.deletionTimestamp set
  bool terminating_by_preemption = false;  // ... with DisruptionTarget/PreemptionByScheduler

  // Derived by Finalize().
  uint64_t signature = 0;
  bool has_pod_affinity = false;  // any pod (anti-)affinity term, required or preferred
  bool finalized = false;

  // Resolves affinity namespaces, merges matchLabelKeys/mismatchLabelKeys into
  // selectors, sorts namespace lists, fills non-zero requests and computes the
  // signature. Idempotent. Errors name the field when a merged selector is invalid.
  Status Finalize();

  bool HasRequiredAntiAffinity() const noexcept { return !required_anti_affinity.empty(); }
  // nodeSelector AND required node affinity (nodeaffinity.GetRequiredNodeAffinity).
  bool MatchesRequiredNodeAffinity(const Labels& node_labels,
                                   std::string_view node_name) const noexcept;
  // "namespace/name".
  std::string FullName() const { return namespace_name + "/" + name; }
};

// The signature Finalize stores; exposed for tests and callers that edit a
// finalized PodInfo. with_labels = false leaves the pod's own labels out:
// the class of pods that differ only in labels, which place alike while no
// other pod has an affinity term that could match them.
uint64_t ComputePodClassSignature(const PodInfo& pod, bool with_labels = true) noexcept;

// policy/v1 PodDisruptionBudget, as preemption needs it.
struct PodDisruptionBudgetInfo {
  std::string namespace_name;
  std::string name;
  // nullopt or empty: matches no pod.
  std::optional<LabelSelector> selector;
  int32_t disruptions_allowed = 0;          // status.disruptionsAllowed
  std::vector<std::string> disrupted_pods;  // names in status.disruptedPods, sorted

  // The budget covers the pod: same namespace, non-empty selector matching its labels.
  bool Covers(const PodInfo& pod) const noexcept;
  bool AlreadyDisrupted(std::string_view pod_name) const noexcept;
};

}  // namespace copse
