#pragma once
// apps/v1 Deployment, ReplicaSet, StatefulSet, DaemonSet and batch/v1 Job:
// typed access to what their controllers read (spec) and write (status).
//
// The pod template is kept as JSON text (PodTemplateSpec::json) with its
// labels and annotations decoded: controllers copy it into the pods they
// create and compare templates, they do not edit it field by field.
//
// Encode() writes metadata and status over `raw`; spec fields are read-only
// here (an edited spec is not encoded): controllers change a spec with a
// patch, which says exactly what changes.
//
// Thread-safety: value types.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/labels.h"
#include "core/result.h"
#include "kube/codec.h"
#include "kube/object.h"

namespace copse::kube {

namespace resources {
inline const ResourceRef kDeployments{"apps", "v1", "deployments", true};
inline const ResourceRef kReplicaSets{"apps", "v1", "replicasets", true};
inline const ResourceRef kStatefulSets{"apps", "v1", "statefulsets", true};
inline const ResourceRef kDaemonSets{"apps", "v1", "daemonsets", true};
inline const ResourceRef kControllerRevisions{"apps", "v1", "controllerrevisions", true};
inline const ResourceRef kJobs{"batch", "v1", "jobs", true};
}  // namespace resources

// spec.template: core/v1 PodTemplateSpec.
struct PodTemplateSpec {
  Labels labels;       // metadata.labels
  Labels annotations;  // metadata.annotations
  std::string json;    // the whole template as compact JSON; "" when absent
  bool operator==(const PodTemplateSpec&) const = default;
};

// ---------------------------------------------------------------- Deployment

inline constexpr std::string_view kRecreateDeploymentStrategy = "Recreate";
inline constexpr std::string_view kRollingUpdateStrategy = "RollingUpdate";
inline constexpr std::string_view kOnDeleteStrategy = "OnDelete";

struct DeploymentSpec {
  std::optional<int32_t> replicas;
  std::optional<LabelSelector> selector;
  PodTemplateSpec template_;
  std::string strategy_type;                   // "RollingUpdate" | "Recreate"
  std::optional<IntOrString> max_unavailable;  // strategy.rollingUpdate
  std::optional<IntOrString> max_surge;        // strategy.rollingUpdate
  int32_t min_ready_seconds = 0;
  std::optional<int32_t> revision_history_limit;
  bool paused = false;
  std::optional<int32_t> progress_deadline_seconds;
  bool operator==(const DeploymentSpec&) const = default;
};

// apps/v1 DeploymentCondition: a Condition with lastUpdateTime (the time the
// condition was last set, even without a status change).
struct DeploymentCondition {
  std::string type;
  std::string status;
  std::string last_update_time;      // RFC 3339
  std::string last_transition_time;  // RFC 3339
  std::string reason;
  std::string message;
  bool operator==(const DeploymentCondition&) const = default;
};

struct DeploymentStatus {
  int64_t observed_generation = 0;
  int32_t replicas = 0;
  int32_t updated_replicas = 0;
  int32_t ready_replicas = 0;
  int32_t available_replicas = 0;
  int32_t unavailable_replicas = 0;
  std::vector<DeploymentCondition> conditions;
  std::optional<int32_t> collision_count;
  bool operator==(const DeploymentStatus&) const = default;
};

class Deployment : public KubeObject {
 public:
  static constexpr std::string_view kApiVersion = "apps/v1";
  static constexpr std::string_view kKind = "Deployment";
  DeploymentSpec spec;
  DeploymentStatus status;
  static Result<Deployment> Decode(std::string_view json);
  std::string Encode() const;
};

// ---------------------------------------------------------------- ReplicaSet

struct ReplicaSetSpec {
  std::optional<int32_t> replicas;
  int32_t min_ready_seconds = 0;
  std::optional<LabelSelector> selector;
  PodTemplateSpec template_;
  bool operator==(const ReplicaSetSpec&) const = default;
};

struct ReplicaSetStatus {
  int32_t replicas = 0;
  int32_t fully_labeled_replicas = 0;
  int32_t ready_replicas = 0;
  int32_t available_replicas = 0;
  int64_t observed_generation = 0;
  std::vector<Condition> conditions;
  bool operator==(const ReplicaSetStatus&) const = default;
};

class ReplicaSet : public KubeObject {
 public:
  static constexpr std::string_view kApiVersion = "apps/v1";
  static constexpr std::string_view kKind = "ReplicaSet";
  ReplicaSetSpec spec;
  ReplicaSetStatus status;
  static Result<ReplicaSet> Decode(std::string_view json);
  std::string Encode() const;
};

// ---------------------------------------------------------------- StatefulSet

inline constexpr std::string_view kOrderedReadyPodManagement = "OrderedReady";
inline constexpr std::string_view kParallelPodManagement = "Parallel";

struct StatefulSetSpec {
  std::optional<int32_t> replicas;
  std::optional<LabelSelector> selector;
  PodTemplateSpec template_;
  std::string service_name;
  std::string pod_management_policy;           // "OrderedReady" (also when empty) | "Parallel"
  std::string update_strategy_type;            // "RollingUpdate" (also when empty) | "OnDelete"
  std::optional<int32_t> partition;            // updateStrategy.rollingUpdate.partition
  std::optional<IntOrString> max_unavailable;  // updateStrategy.rollingUpdate.maxUnavailable
  std::optional<int32_t> revision_history_limit;
  int32_t min_ready_seconds = 0;
  int32_t ordinals_start = 0;  // spec.ordinals.start
  bool operator==(const StatefulSetSpec&) const = default;
};

struct StatefulSetStatus {
  int64_t observed_generation = 0;
  int32_t replicas = 0;
  int32_t ready_replicas = 0;
  int32_t current_replicas = 0;
  int32_t updated_replicas = 0;
  int32_t available_replicas = 0;
  std::string current_revision;
  std::string update_revision;
  std::optional<int32_t> collision_count;
  std::vector<Condition> conditions;
  bool operator==(const StatefulSetStatus&) const = default;
};

class StatefulSet : public KubeObject {
 public:
  static constexpr std::string_view kApiVersion = "apps/v1";
  static constexpr std::string_view kKind = "StatefulSet";
  StatefulSetSpec spec;
  StatefulSetStatus status;
  static Result<StatefulSet> Decode(std::string_view json);
  std::string Encode() const;
};

// ---------------------------------------------------------------- DaemonSet

struct DaemonSetSpec {
  std::optional<LabelSelector> selector;
  PodTemplateSpec template_;
  std::string update_strategy_type;            // "RollingUpdate" (also when empty) | "OnDelete"
  std::optional<IntOrString> max_unavailable;  // updateStrategy.rollingUpdate
  std::optional<IntOrString> max_surge;        // updateStrategy.rollingUpdate
  int32_t min_ready_seconds = 0;
  std::optional<int32_t> revision_history_limit;
  bool operator==(const DaemonSetSpec&) const = default;
};

struct DaemonSetStatus {
  int32_t current_number_scheduled = 0;
  int32_t number_misscheduled = 0;
  int32_t desired_number_scheduled = 0;
  int32_t number_ready = 0;
  int64_t observed_generation = 0;
  int32_t updated_number_scheduled = 0;
  int32_t number_available = 0;
  int32_t number_unavailable = 0;
  std::optional<int32_t> collision_count;
  std::vector<Condition> conditions;
  bool operator==(const DaemonSetStatus&) const = default;
};

class DaemonSet : public KubeObject {
 public:
  static constexpr std::string_view kApiVersion = "apps/v1";
  static constexpr std::string_view kKind = "DaemonSet";
  DaemonSetSpec spec;
  DaemonSetStatus status;
  static Result<DaemonSet> Decode(std::string_view json);
  std::string Encode() const;
};

// ---------------------------------------------------------------- Job

inline constexpr std::string_view kNonIndexedCompletion = "NonIndexed";
inline constexpr std::string_view kIndexedCompletion = "Indexed";

struct JobSpec {
  std::optional<int32_t> parallelism;
  std::optional<int32_t> completions;
  std::optional<int64_t> active_deadline_seconds;
  std::optional<int32_t> backoff_limit;
  std::optional<LabelSelector> selector;
  std::optional<bool> manual_selector;
  PodTemplateSpec template_;
  std::optional<int32_t> ttl_seconds_after_finished;
  std::string completion_mode;  // "NonIndexed" (also when empty) | "Indexed"
  std::optional<bool> suspend;
  bool operator==(const JobSpec&) const = default;
};

struct JobStatus {
  std::vector<Condition> conditions;
  std::string start_time;       // RFC 3339; "" unset
  std::string completion_time;  // RFC 3339; "" unset
  int32_t active = 0;
  std::optional<int32_t> ready;
  int32_t succeeded = 0;
  int32_t failed = 0;
  std::optional<int32_t> terminating;
  std::string completed_indexes;  // "1,3-5,7"
  bool operator==(const JobStatus&) const = default;
};

class Job : public KubeObject {
 public:
  static constexpr std::string_view kApiVersion = "batch/v1";
  static constexpr std::string_view kKind = "Job";
  JobSpec spec;
  JobStatus status;
  static Result<Job> Decode(std::string_view json);
  std::string Encode() const;
};

}  // namespace copse::kube
