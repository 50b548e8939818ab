#pragma once
// core/v1 Pod: typed access to everything scheduling reads, with the rest of
// the object kept in `raw` (see kube/codec.h for the round-trip contract).
//
//   Result<Pod> pod = Pod::Decode(watch_event_object_json);
//   ResourceList requests = PodRequests(*pod);   // what NodeResourcesFit checks
//   pod->status.nominated_node_name = "node-7";
//   std::string body = pod->Encode();            // unknown fields preserved
//
// Thread-safety: value types.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/labels.h"
#include "core/quantity.h"
#include "core/result.h"
#include "kube/codec.h"
#include "kube/object.h"

namespace copse::kube {

struct ContainerPort {
  std::string name;
  int32_t container_port = 0;
  int32_t host_port = 0;  // 0: no host port
  std::string host_ip;    // empty: 0.0.0.0
  std::string protocol;   // empty means TCP (the API server defaults it)

  // Protocol with the API default applied ("TCP").
  std::string_view EffectiveProtocol() const noexcept {
    return protocol.empty() ? std::string_view("TCP") : std::string_view(protocol);
  }
  bool operator==(const ContainerPort&) const = default;
};

struct ResourceRequirements {
  ResourceList requests;
  ResourceList limits;
  bool operator==(const ResourceRequirements&) const = default;
};

inline constexpr std::string_view kContainerRestartPolicyAlways = "Always";

struct Container {
  std::string name;
  std::string image;
  ResourceRequirements resources;
  std::vector<ContainerPort> ports;
  // Init containers only: "Always" makes it a sidecar (restartable init container).
  std::optional<std::string> restart_policy;

  bool IsSidecar() const noexcept {
    return restart_policy.has_value() && *restart_policy == kContainerRestartPolicyAlways;
  }
  bool operator==(const Container&) const = default;
};

struct PreferredSchedulingTerm {
  int32_t weight = 0;
  NodeSelectorTerm preference;
  bool operator==(const PreferredSchedulingTerm&) const = default;
};

struct NodeAffinity {
  // requiredDuringSchedulingIgnoredDuringExecution
  std::optional<NodeSelector> required;
  // preferredDuringSchedulingIgnoredDuringExecution
  std::vector<PreferredSchedulingTerm> preferred;
  bool operator==(const NodeAffinity&) const = default;
};

struct PodAffinityTerm {
  // nullopt (absent/null) matches no pods, as in kube-scheduler.
  std::optional<LabelSelector> label_selector;
  std::vector<std::string> namespaces;
  // nullopt: only `namespaces` (or the pod's own namespace when both are
  // empty); an empty selector: all namespaces.
  std::optional<LabelSelector> namespace_selector;
  std::string topology_key;
  std::vector<std::string> match_label_keys;
  std::vector<std::string> mismatch_label_keys;
  bool operator==(const PodAffinityTerm&) const = default;
};

struct WeightedPodAffinityTerm {
  int32_t weight = 0;
  PodAffinityTerm term;  // "podAffinityTerm"
  bool operator==(const WeightedPodAffinityTerm&) const = default;
};

// podAffinity and podAntiAffinity share this shape.
struct PodAffinity {
  std::vector<PodAffinityTerm> required;           // requiredDuringScheduling...
  std::vector<WeightedPodAffinityTerm> preferred;  // preferredDuringScheduling...
  bool operator==(const PodAffinity&) const = default;
};

struct Affinity {
  std::optional<NodeAffinity> node_affinity;
  std::optional<PodAffinity> pod_affinity;
  std::optional<PodAffinity> pod_anti_affinity;
  bool operator==(const Affinity&) const = default;
};

struct Taint;  // kube/node.h

struct Toleration {
  std::string key;
  std::string op;  // "operator": "Equal" (also when empty) or "Exists"
  std::string value;
  std::string effect;  // empty matches all effects
  std::optional<int64_t> toleration_seconds;

  // core/v1 Toleration.ToleratesTaint.
  bool ToleratesTaint(const Taint& taint) const noexcept;
  bool operator==(const Toleration&) const = default;
};

struct TopologySpreadConstraint {
  int32_t max_skew = 0;
  std::string topology_key;
  std::string when_unsatisfiable;  // "DoNotSchedule" | "ScheduleAnyway"
  std::optional<LabelSelector> label_selector;
  std::optional<int32_t> min_domains;
  std::optional<std::string> node_affinity_policy;  // "Honor" | "Ignore"
  std::optional<std::string> node_taints_policy;    // "Honor" | "Ignore"
  std::vector<std::string> match_label_keys;
  bool operator==(const TopologySpreadConstraint&) const = default;
};

// spec.resourceClaims[]: a claim the pod uses, by name (exactly one of
// resourceClaimName and resourceClaimTemplateName is set; the API server
// validates that).
struct PodResourceClaim {
  std::string name;
  std::optional<std::string> resource_claim_name;
  std::optional<std::string> resource_claim_template_name;
  bool operator==(const PodResourceClaim&) const = default;
};

struct PodSpec {
  std::vector<Container> init_containers;
  std::vector<Container> containers;
  ResourceList overhead;
  // Pod-level resources (spec.resources, PodLevelResources feature).
  std::optional<ResourceRequirements> resources;
  Labels node_selector;
  std::optional<Affinity> affinity;
  std::vector<Toleration> tolerations;
  std::vector<TopologySpreadConstraint> topology_spread_constraints;
  std::optional<int32_t> priority;
  std::string priority_class_name;
  std::optional<std::string> preemption_policy;  // "PreemptLowerPriority" | "Never"
  std::string scheduler_name;
  std::vector<std::string> scheduling_gates;  // names of spec.schedulingGates[]
  // spec.schedulingGroup.podGroupName (KEP-4671).
  std::optional<std::string> pod_group_name;
  std::string node_name;
  std::string hostname;
  std::string subdomain;
  std::vector<PodResourceClaim> resource_claims;  // spec.resourceClaims
  bool operator==(const PodSpec&) const = default;
};

inline constexpr std::string_view kPodPending = "Pending";
inline constexpr std::string_view kPodRunning = "Running";
inline constexpr std::string_view kPodSucceeded = "Succeeded";
inline constexpr std::string_view kPodFailed = "Failed";

// status.resourceClaimStatuses[]: the claim the resourceclaim controller
// created for a spec.resourceClaims entry with a template. An entry without
// resourceClaimName means no claim was needed (kube skips such entries).
struct PodResourceClaimStatus {
  std::string name;
  std::optional<std::string> resource_claim_name;
  bool operator==(const PodResourceClaimStatus&) const = default;
};

struct PodStatus {
  std::string phase;
  std::vector<Condition> conditions;
  std::string nominated_node_name;
  std::string pod_ip;
  std::string host_ip;
  std::string start_time;
  std::vector<PodResourceClaimStatus> resource_claim_statuses;  // status.resourceClaimStatuses
  bool operator==(const PodStatus&) const = default;
};

class Pod : public KubeObject {
 public:
  static constexpr std::string_view kApiVersion = "v1";
  static constexpr std::string_view kKind = "Pod";

  PodSpec spec;
  PodStatus status;

  // Errors name the field: "spec.containers[0].resources.requests.cpu: ...".
  static Result<Pod> Decode(std::string_view json);
  // `raw` with the typed fields overlaid; unchanged fields keep their text.
  std::string Encode() const;
};

struct PodRequestOptions {
  // Leave spec.overhead out (kube-scheduler includes it).
  bool exclude_overhead = false;
  // Let spec.resources.requests (cpu, memory) replace the container sum, as
  // with the PodLevelResources feature enabled.
  bool pod_level_resources = true;
  // Used for containers that do not request a resource at all (explicit zero
  // counts as a request). kube-scheduler's scoring passes {cpu: 100m, memory:
  // 200Mi}; see NonZeroRequestDefaults().
  ResourceList non_missing_container_requests;
};

// The resources a pod needs from a node, as k8s.io/component-helpers
// resource.PodRequests (what NodeResourcesFit uses):
//   sum(containers) + sum(sidecars), maxed per resource with every init
//   container's own request plus the sidecars started before it, then
//   pod-level requests override cpu/memory, then overhead is added.
ResourceList PodRequests(const Pod& pod, const PodRequestOptions& options = {});

// {cpu: 100m, memory: 200Mi}: kube-scheduler's defaults for containers that
// request nothing (scoring only, never for fit).
ResourceList NonZeroRequestDefaults();

}  // namespace copse::kube
