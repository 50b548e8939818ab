#pragma once
// Grove's API objects, with upstream Grove's field names (ai-dynamo/grove
// operator/api/core/v1alpha1 and scheduler/api/core/v1alpha1):
//   grove.io/v1alpha1            PodCliqueSet, PodClique, PodCliqueScalingGroup,
//                                ClusterTopologyBinding
//   scheduler.grove.io/v1alpha1  PodGang
//
// Codecs follow kube/: Decode() reads with simdjson and names the field at
// fault ("spec.template.cliques[1].spec.replicas: expected integer, got
// string"); Encode() overlays the typed fields on the JSON the object was
// decoded from, so fields copse does not model (autoScalingConfig.metrics,
// resourceSharing, rollingUpdate, ...) survive a round trip byte for byte.
// A clique's podSpec is kept as JSON text: grove copies it into pods and
// never needs it typed (validation parses what it checks).
//
// Thread-safety: value types.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/labels.h"
#include "core/result.h"
#include "kube/codec.h"
#include "kube/object.h"

namespace copse::grove::api {

inline constexpr std::string_view kGroup = "grove.io";
inline constexpr std::string_view kSchedulerGroup = "scheduler.grove.io";
inline constexpr std::string_view kVersion = "v1alpha1";
inline constexpr std::string_view kApiVersion = "grove.io/v1alpha1";
inline constexpr std::string_view kSchedulerApiVersion = "scheduler.grove.io/v1alpha1";

namespace resources {
inline const kube::ResourceRef kPodCliqueSets{"grove.io", "v1alpha1", "podcliquesets", true};
inline const kube::ResourceRef kPodCliques{"grove.io", "v1alpha1", "podcliques", true};
inline const kube::ResourceRef kPodCliqueScalingGroups{"grove.io", "v1alpha1",
                                                       "podcliquescalinggroups", true};
inline const kube::ResourceRef kClusterTopologyBindings{"grove.io", "v1alpha1",
                                                        "clustertopologybindings", false};
inline const kube::ResourceRef kPodGangs{"scheduler.grove.io", "v1alpha1", "podgangs", true};
}  // namespace resources

// CliqueStartupType values (spec.template.cliqueStartupType).
inline constexpr std::string_view kStartupAnyOrder = "CliqueStartupTypeAnyOrder";
inline constexpr std::string_view kStartupInOrder = "CliqueStartupTypeInOrder";
inline constexpr std::string_view kStartupExplicit = "CliqueStartupTypeExplicit";
// UpdateStrategyType values (spec.updateStrategy.type).
inline constexpr std::string_view kRollingRecreate = "RollingRecreate";
inline constexpr std::string_view kOnDelete = "OnDelete";

// ------------------------------------------------------------ grove.io

// grove.io TopologyPackConstraint: topology *domains* ("rack", "zone").
struct TopologyPackConstraint {
  std::string required;   // "required"
  std::string preferred;  // "preferred"
  bool operator==(const TopologyPackConstraint&) const = default;
};

struct TopologyConstraint {
  std::string topology_name;                   // "topologyName"
  std::optional<TopologyPackConstraint> pack;  // "pack"
  std::string pack_domain;                     // "packDomain" (deprecated form of pack.required)

  // pack.required, falling back to the deprecated packDomain.
  std::string RequiredDomain() const;
  std::string PreferredDomain() const;
  bool HasAnyPackDomain() const { return !RequiredDomain().empty() || !PreferredDomain().empty(); }
  bool operator==(const TopologyConstraint&) const = default;
};

// "autoScalingConfig" / "scaleConfig"; metrics stay in raw JSON.
struct AutoScalingConfig {
  std::optional<int32_t> min_replicas;
  int32_t max_replicas = 0;
  bool operator==(const AutoScalingConfig&) const = default;
};

struct PodCliqueSpec {
  std::string role_name;  // "roleName"
  // "podSpec": a core/v1 PodSpec as compact JSON text ("" when absent).
  std::string pod_spec;
  int32_t replicas = 0;
  std::optional<int32_t> min_available;
  std::vector<std::string> starts_after;
  std::optional<AutoScalingConfig> scale_config;  // "autoScalingConfig"
  bool operator==(const PodCliqueSpec&) const = default;
};

struct PodCliqueTemplateSpec {
  std::string name;
  Labels labels;
  Labels annotations;
  std::optional<TopologyConstraint> topology_constraint;
  PodCliqueSpec spec;
  bool operator==(const PodCliqueTemplateSpec&) const = default;
};

struct PodCliqueScalingGroupConfig {
  std::string name;
  std::vector<std::string> clique_names;  // "cliqueNames"
  Labels annotations;
  std::optional<int32_t> replicas;
  std::optional<int32_t> min_available;
  std::optional<AutoScalingConfig> scale_config;  // "scaleConfig"
  std::optional<TopologyConstraint> topology_constraint;
  bool operator==(const PodCliqueScalingGroupConfig&) const = default;
};

struct HeadlessServiceConfig {
  bool publish_not_ready_addresses = false;
  bool operator==(const HeadlessServiceConfig&) const = default;
};

struct PodCliqueSetTemplateSpec {
  std::vector<PodCliqueTemplateSpec> cliques;
  std::optional<std::string> startup_type;  // "cliqueStartupType"
  std::string priority_class_name;
  std::optional<HeadlessServiceConfig> headless_service_config;
  std::optional<TopologyConstraint> topology_constraint;
  std::optional<std::string> termination_delay;             // metav1.Duration text, e.g. "4h0m0s"
  std::vector<PodCliqueScalingGroupConfig> scaling_groups;  // "podCliqueScalingGroups"

  const PodCliqueTemplateSpec* FindClique(std::string_view name) const noexcept;
  // The scaling group that lists `clique`, or nullptr (a standalone clique).
  const PodCliqueScalingGroupConfig* ScalingGroupOf(std::string_view clique) const noexcept;
  bool operator==(const PodCliqueSetTemplateSpec&) const = default;
};

struct UpdateStrategy {
  std::string type;
  bool operator==(const UpdateStrategy&) const = default;
};

struct PodCliqueSetSpec {
  int32_t replicas = 0;
  std::optional<UpdateStrategy> update_strategy;
  PodCliqueSetTemplateSpec template_;  // "template"
  bool operator==(const PodCliqueSetSpec&) const = default;
};

// status.podGangStatuses[]
struct PodGangStatusEntry {
  std::string name;
  std::string phase;
  std::vector<kube::Condition> conditions;
  bool operator==(const PodGangStatusEntry&) const = default;
};

struct PodCliqueSetStatus {
  std::optional<int64_t> observed_generation;
  std::vector<kube::Condition> conditions;
  int32_t replicas = 0;
  int32_t updated_replicas = 0;
  int32_t available_replicas = 0;
  std::optional<std::string> selector;  // "hpaPodSelector"
  std::vector<PodGangStatusEntry> pod_gang_statuses;
  std::optional<std::string> current_generation_hash;
  bool operator==(const PodCliqueSetStatus&) const = default;
};

class PodCliqueSet : public kube::KubeObject {
 public:
  static constexpr std::string_view kApiVersion = "grove.io/v1alpha1";
  static constexpr std::string_view kKind = "PodCliqueSet";
  PodCliqueSetSpec spec;
  PodCliqueSetStatus status;
  static Result<PodCliqueSet> Decode(std::string_view json);
  std::string Encode() const;
};

struct PodCliqueStatus {
  std::optional<int64_t> observed_generation;
  int32_t replicas = 0;
  int32_t ready_replicas = 0;
  int32_t updated_replicas = 0;
  int32_t schedule_gated_replicas = 0;
  int32_t scheduled_replicas = 0;
  std::optional<std::string> selector;  // "hpaPodSelector"
  std::vector<kube::Condition> conditions;
  std::optional<std::string> current_pod_cliqueset_generation_hash;
  std::optional<std::string> current_pod_template_hash;
  bool operator==(const PodCliqueStatus&) const = default;
};

class PodClique : public kube::KubeObject {
 public:
  static constexpr std::string_view kApiVersion = "grove.io/v1alpha1";
  static constexpr std::string_view kKind = "PodClique";
  PodCliqueSpec spec;
  PodCliqueStatus status;
  static Result<PodClique> Decode(std::string_view json);
  std::string Encode() const;
};

struct PodCliqueScalingGroupSpec {
  int32_t replicas = 0;
  std::optional<int32_t> min_available;
  std::vector<std::string> clique_names;
  bool operator==(const PodCliqueScalingGroupSpec&) const = default;
};

struct PodCliqueScalingGroupStatus {
  int32_t replicas = 0;
  int32_t scheduled_replicas = 0;
  int32_t available_replicas = 0;
  int32_t updated_replicas = 0;
  std::optional<std::string> selector;
  std::optional<int64_t> observed_generation;
  std::vector<kube::Condition> conditions;
  std::optional<std::string> current_pod_cliqueset_generation_hash;
  bool operator==(const PodCliqueScalingGroupStatus&) const = default;
};

class PodCliqueScalingGroup : public kube::KubeObject {
 public:
  static constexpr std::string_view kApiVersion = "grove.io/v1alpha1";
  static constexpr std::string_view kKind = "PodCliqueScalingGroup";
  PodCliqueScalingGroupSpec spec;
  PodCliqueScalingGroupStatus status;
  static Result<PodCliqueScalingGroup> Decode(std::string_view json);
  std::string Encode() const;
};

struct TopologyLevel {
  std::string domain;
  std::string key;  // node label key
  bool operator==(const TopologyLevel&) const = default;
};

struct SchedulerTopologyBinding {
  std::string scheduler_name;      // "schedulerName"
  std::string topology_reference;  // "topologyReference"
  bool operator==(const SchedulerTopologyBinding&) const = default;
};

struct ClusterTopologyBindingSpec {
  std::vector<TopologyLevel> levels;
  std::vector<SchedulerTopologyBinding> scheduler_topology_bindings;
  // The node label key of `domain`, or "" when the binding has no such level.
  std::string KeyOf(std::string_view domain) const;
  bool operator==(const ClusterTopologyBindingSpec&) const = default;
};

class ClusterTopologyBinding : public kube::KubeObject {
 public:
  static constexpr std::string_view kApiVersion = "grove.io/v1alpha1";
  static constexpr std::string_view kKind = "ClusterTopologyBinding";
  ClusterTopologyBindingSpec spec;  // status stays in raw
  static Result<ClusterTopologyBinding> Decode(std::string_view json);
  std::string Encode() const;
};

// ------------------------------------------------------------ scheduler.grove.io

struct NamespacedName {
  std::string namespace_;
  std::string name;
  auto operator<=>(const NamespacedName&) const = default;
};

// scheduler.grove.io TopologyPackConstraint: node label *keys*.
struct PackConstraint {
  std::optional<std::string> required;
  std::optional<std::string> preferred;
  bool operator==(const PackConstraint&) const = default;
};

struct GangTopologyConstraint {
  std::optional<PackConstraint> pack_constraint;  // "packConstraint"
  bool operator==(const GangTopologyConstraint&) const = default;
};

struct PodGroup {
  std::string name;
  std::vector<NamespacedName> pod_references;  // "podReferences" (always written)
  int32_t min_replicas = 0;                    // "minReplicas" (always written)
  std::optional<GangTopologyConstraint> topology_constraint;
  bool operator==(const PodGroup&) const = default;
};

struct TopologyConstraintGroupConfig {
  std::string name;
  std::vector<std::string> pod_group_names;  // "podGroupNames"
  std::optional<GangTopologyConstraint> topology_constraint;
  bool operator==(const TopologyConstraintGroupConfig&) const = default;
};

struct PodGangSpec {
  std::vector<PodGroup> pod_groups;  // "podgroups" (always written)
  std::optional<GangTopologyConstraint> topology_constraint;
  std::vector<TopologyConstraintGroupConfig> topology_constraint_group_configs;
  std::string priority_class_name;
  std::optional<NamespacedName> reuse_reservation_ref;
  bool operator==(const PodGangSpec&) const = default;
};

// PodGang status phases and condition types.
inline constexpr std::string_view kPodGangPending = "Pending";
inline constexpr std::string_view kPodGangStarting = "Starting";
inline constexpr std::string_view kPodGangRunning = "Running";
inline constexpr std::string_view kConditionInitialized = "Initialized";
inline constexpr std::string_view kConditionScheduled = "Scheduled";
inline constexpr std::string_view kConditionReady = "Ready";
// Initialized condition reasons (GREP-375).
inline constexpr std::string_view kReasonPodsPending = "PodsPending";
inline constexpr std::string_view kReasonRefsSyncing = "RefsSyncing";
inline constexpr std::string_view kReasonReady = "Ready";

struct PodGangStatus {
  std::string phase;  // always written
  std::vector<kube::Condition> conditions;
  bool operator==(const PodGangStatus&) const = default;
};

class PodGang : public kube::KubeObject {
 public:
  static constexpr std::string_view kApiVersion = "scheduler.grove.io/v1alpha1";
  static constexpr std::string_view kKind = "PodGang";
  PodGangSpec spec;
  PodGangStatus status;

  // Initialized=True.
  bool IsInitialized() const;
  static Result<PodGang> Decode(std::string_view json);
  std::string Encode() const;
};

// Go's time.ParseDuration ("4h", "1h30m", "1.5s", "300ms"); negative values
// are accepted (validation rejects them). Errors are kInvalid.
Result<std::chrono::nanoseconds> ParseDuration(std::string_view text);
// Go's time.Duration.String(): "4h0m0s", "1m30s", "500ms", "0s".
std::string FormatDuration(std::chrono::nanoseconds d);

}  // namespace copse::grove::api
