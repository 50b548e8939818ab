#include "kube/apps.h"

#include "kube/codec_json.h"

namespace copse::kube {

using codec::Element;
using codec::Emit;
using codec::ForEachField;
using codec::Json;
using codec::Prev;
using codec::Put;
using codec::PutOpt;
using codec::Read;
using codec::Reader;

namespace {

bool ReadTemplate(Reader& r, Element e, PodTemplateSpec& out) {
  if (e.is_null()) return true;
  if (!codec::ReadRawJson(r, e, out.json)) return false;
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key != "metadata") return true;
    return ForEachField(r, v, [&](std::string_view mkey, Element mv) {
      if (mkey == "labels") return Read(r, mv, out.labels);
      if (mkey == "annotations") return Read(r, mv, out.annotations);
      return true;
    });
  });
}

// strategy / updateStrategy: {"type": ..., "rollingUpdate": {...}}.
template <typename F>
bool ReadStrategy(Reader& r, Element e, std::string& type, F&& rolling_field) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "type") return Read(r, v, type);
    if (key == "rollingUpdate") return ForEachField(r, v, rolling_field);
    return true;
  });
}

bool ReadDeploymentSpec(Reader& r, Element e, DeploymentSpec& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "replicas") return Read(r, v, out.replicas);
    if (key == "selector") return Read(r, v, out.selector);
    if (key == "template") return ReadTemplate(r, v, out.template_);
    if (key == "strategy") {
      return ReadStrategy(r, v, out.strategy_type, [&](std::string_view k, Element rv) {
        if (k == "maxUnavailable") return Read(r, rv, out.max_unavailable);
        if (k == "maxSurge") return Read(r, rv, out.max_surge);
        return true;
      });
    }
    if (key == "minReadySeconds") return Read(r, v, out.min_ready_seconds);
    if (key == "revisionHistoryLimit") return Read(r, v, out.revision_history_limit);
    if (key == "paused") return Read(r, v, out.paused);
    if (key == "progressDeadlineSeconds") return Read(r, v, out.progress_deadline_seconds);
    return true;
  });
}

bool ReadDeploymentCondition(Reader& r, Element e, DeploymentCondition& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "type") return Read(r, v, out.type);
    if (key == "status") return Read(r, v, out.status);
    if (key == "lastUpdateTime") return Read(r, v, out.last_update_time);
    if (key == "lastTransitionTime") return Read(r, v, out.last_transition_time);
    if (key == "reason") return Read(r, v, out.reason);
    if (key == "message") return Read(r, v, out.message);
    return true;
  });
}

void OverlayDeploymentCondition(Json& j, const DeploymentCondition& now,
                                const DeploymentCondition* before) {
  using C = DeploymentCondition;
  Put(j, "type", now.type, Prev(before, &C::type), Emit::kAlways);
  Put(j, "status", now.status, Prev(before, &C::status), Emit::kAlways);
  Put(j, "lastUpdateTime", now.last_update_time, Prev(before, &C::last_update_time));
  Put(j, "lastTransitionTime", now.last_transition_time, Prev(before, &C::last_transition_time));
  Put(j, "reason", now.reason, Prev(before, &C::reason));
  Put(j, "message", now.message, Prev(before, &C::message));
}

bool ReadDeploymentStatus(Reader& r, Element e, DeploymentStatus& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "observedGeneration") return Read(r, v, out.observed_generation);
    if (key == "replicas") return Read(r, v, out.replicas);
    if (key == "updatedReplicas") return Read(r, v, out.updated_replicas);
    if (key == "readyReplicas") return Read(r, v, out.ready_replicas);
    if (key == "availableReplicas") return Read(r, v, out.available_replicas);
    if (key == "unavailableReplicas") return Read(r, v, out.unavailable_replicas);
    if (key == "conditions") {
      return codec::ReadArray(r, v, out.conditions, ReadDeploymentCondition);
    }
    if (key == "collisionCount") return Read(r, v, out.collision_count);
    return true;
  });
}

void OverlayDeploymentStatus(Json& j, const DeploymentStatus& now, const DeploymentStatus* before) {
  using S = DeploymentStatus;
  Put(j, "observedGeneration", now.observed_generation, Prev(before, &S::observed_generation));
  Put(j, "replicas", now.replicas, Prev(before, &S::replicas));
  Put(j, "updatedReplicas", now.updated_replicas, Prev(before, &S::updated_replicas));
  Put(j, "readyReplicas", now.ready_replicas, Prev(before, &S::ready_replicas));
  Put(j, "availableReplicas", now.available_replicas, Prev(before, &S::available_replicas));
  Put(j, "unavailableReplicas", now.unavailable_replicas, Prev(before, &S::unavailable_replicas));
  codec::PutArray(
      j, "conditions", now.conditions, Prev(before, &S::conditions), OverlayDeploymentCondition,
      [](const DeploymentCondition& a, const DeploymentCondition& b) { return a.type == b.type; });
  PutOpt(j, "collisionCount", now.collision_count, Prev(before, &S::collision_count));
}

bool ReadReplicaSetSpec(Reader& r, Element e, ReplicaSetSpec& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "replicas") return Read(r, v, out.replicas);
    if (key == "minReadySeconds") return Read(r, v, out.min_ready_seconds);
    if (key == "selector") return Read(r, v, out.selector);
    if (key == "template") return ReadTemplate(r, v, out.template_);
    return true;
  });
}

bool ReadReplicaSetStatus(Reader& r, Element e, ReplicaSetStatus& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "replicas") return Read(r, v, out.replicas);
    if (key == "fullyLabeledReplicas") return Read(r, v, out.fully_labeled_replicas);
    if (key == "readyReplicas") return Read(r, v, out.ready_replicas);
    if (key == "availableReplicas") return Read(r, v, out.available_replicas);
    if (key == "observedGeneration") return Read(r, v, out.observed_generation);
    if (key == "conditions") return Read(r, v, out.conditions);
    return true;
  });
}

void OverlayReplicaSetStatus(Json& j, const ReplicaSetStatus& now, const ReplicaSetStatus* before) {
  using S = ReplicaSetStatus;
  // replicas is not omitempty upstream.
  Put(j, "replicas", now.replicas, Prev(before, &S::replicas), Emit::kAlways);
  Put(j, "fullyLabeledReplicas", now.fully_labeled_replicas,
      Prev(before, &S::fully_labeled_replicas));
  Put(j, "readyReplicas", now.ready_replicas, Prev(before, &S::ready_replicas));
  Put(j, "availableReplicas", now.available_replicas, Prev(before, &S::available_replicas));
  Put(j, "observedGeneration", now.observed_generation, Prev(before, &S::observed_generation));
  codec::PutConditions(j, "conditions", now.conditions, Prev(before, &S::conditions));
}

bool ReadStatefulSetSpec(Reader& r, Element e, StatefulSetSpec& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "replicas") return Read(r, v, out.replicas);
    if (key == "selector") return Read(r, v, out.selector);
    if (key == "template") return ReadTemplate(r, v, out.template_);
    if (key == "serviceName") return Read(r, v, out.service_name);
    if (key == "podManagementPolicy") return Read(r, v, out.pod_management_policy);
    if (key == "updateStrategy") {
      return ReadStrategy(r, v, out.update_strategy_type, [&](std::string_view k, Element rv) {
        if (k == "partition") return Read(r, rv, out.partition);
        if (k == "maxUnavailable") return Read(r, rv, out.max_unavailable);
        return true;
      });
    }
    if (key == "revisionHistoryLimit") return Read(r, v, out.revision_history_limit);
    if (key == "minReadySeconds") return Read(r, v, out.min_ready_seconds);
    if (key == "ordinals") {
      return ForEachField(r, v, [&](std::string_view k, Element ov) {
        if (k == "start") return Read(r, ov, out.ordinals_start);
        return true;
      });
    }
    return true;
  });
}

bool ReadStatefulSetStatus(Reader& r, Element e, StatefulSetStatus& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "observedGeneration") return Read(r, v, out.observed_generation);
    if (key == "replicas") return Read(r, v, out.replicas);
    if (key == "readyReplicas") return Read(r, v, out.ready_replicas);
    if (key == "currentReplicas") return Read(r, v, out.current_replicas);
    if (key == "updatedReplicas") return Read(r, v, out.updated_replicas);
    if (key == "availableReplicas") return Read(r, v, out.available_replicas);
    if (key == "currentRevision") return Read(r, v, out.current_revision);
    if (key == "updateRevision") return Read(r, v, out.update_revision);
    if (key == "collisionCount") return Read(r, v, out.collision_count);
    if (key == "conditions") return Read(r, v, out.conditions);
    return true;
  });
}

void OverlayStatefulSetStatus(Json& j, const StatefulSetStatus& now,
                              const StatefulSetStatus* before) {
  using S = StatefulSetStatus;
  Put(j, "observedGeneration", now.observed_generation, Prev(before, &S::observed_generation));
  Put(j, "replicas", now.replicas, Prev(before, &S::replicas), Emit::kAlways);
  Put(j, "readyReplicas", now.ready_replicas, Prev(before, &S::ready_replicas));
  Put(j, "currentReplicas", now.current_replicas, Prev(before, &S::current_replicas));
  Put(j, "updatedReplicas", now.updated_replicas, Prev(before, &S::updated_replicas));
  Put(j, "availableReplicas", now.available_replicas, Prev(before, &S::available_replicas),
      Emit::kAlways);
  Put(j, "currentRevision", now.current_revision, Prev(before, &S::current_revision));
  Put(j, "updateRevision", now.update_revision, Prev(before, &S::update_revision));
  PutOpt(j, "collisionCount", now.collision_count, Prev(before, &S::collision_count));
  codec::PutConditions(j, "conditions", now.conditions, Prev(before, &S::conditions));
}

bool ReadDaemonSetSpec(Reader& r, Element e, DaemonSetSpec& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "selector") return Read(r, v, out.selector);
    if (key == "template") return ReadTemplate(r, v, out.template_);
    if (key == "updateStrategy") {
      return ReadStrategy(r, v, out.update_strategy_type, [&](std::string_view k, Element rv) {
        if (k == "maxUnavailable") return Read(r, rv, out.max_unavailable);
        if (k == "maxSurge") return Read(r, rv, out.max_surge);
        return true;
      });
    }
    if (key == "minReadySeconds") return Read(r, v, out.min_ready_seconds);
    if (key == "revisionHistoryLimit") return Read(r, v, out.revision_history_limit);
    return true;
  });
}

bool ReadDaemonSetStatus(Reader& r, Element e, DaemonSetStatus& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "currentNumberScheduled") return Read(r, v, out.current_number_scheduled);
    if (key == "numberMisscheduled") return Read(r, v, out.number_misscheduled);
    if (key == "desiredNumberScheduled") return Read(r, v, out.desired_number_scheduled);
    if (key == "numberReady") return Read(r, v, out.number_ready);
    if (key == "observedGeneration") return Read(r, v, out.observed_generation);
    if (key == "updatedNumberScheduled") return Read(r, v, out.updated_number_scheduled);
    if (key == "numberAvailable") return Read(r, v, out.number_available);
    if (key == "numberUnavailable") return Read(r, v, out.number_unavailable);
    if (key == "collisionCount") return Read(r, v, out.collision_count);
    if (key == "conditions") return Read(r, v, out.conditions);
    return true;
  });
}

void OverlayDaemonSetStatus(Json& j, const DaemonSetStatus& now, const DaemonSetStatus* before) {
  using S = DaemonSetStatus;
  // The four counts kube always writes (not omitempty).
  Put(j, "currentNumberScheduled", now.current_number_scheduled,
      Prev(before, &S::current_number_scheduled), Emit::kAlways);
  Put(j, "numberMisscheduled", now.number_misscheduled, Prev(before, &S::number_misscheduled),
      Emit::kAlways);
  Put(j, "desiredNumberScheduled", now.desired_number_scheduled,
      Prev(before, &S::desired_number_scheduled), Emit::kAlways);
  Put(j, "numberReady", now.number_ready, Prev(before, &S::number_ready), Emit::kAlways);
  Put(j, "observedGeneration", now.observed_generation, Prev(before, &S::observed_generation));
  Put(j, "updatedNumberScheduled", now.updated_number_scheduled,
      Prev(before, &S::updated_number_scheduled));
  Put(j, "numberAvailable", now.number_available, Prev(before, &S::number_available));
  Put(j, "numberUnavailable", now.number_unavailable, Prev(before, &S::number_unavailable));
  PutOpt(j, "collisionCount", now.collision_count, Prev(before, &S::collision_count));
  codec::PutConditions(j, "conditions", now.conditions, Prev(before, &S::conditions));
}

bool ReadJobSpec(Reader& r, Element e, JobSpec& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "parallelism") return Read(r, v, out.parallelism);
    if (key == "completions") return Read(r, v, out.completions);
    if (key == "activeDeadlineSeconds") return Read(r, v, out.active_deadline_seconds);
    if (key == "backoffLimit") return Read(r, v, out.backoff_limit);
    if (key == "selector") return Read(r, v, out.selector);
    if (key == "manualSelector") return Read(r, v, out.manual_selector);
    if (key == "template") return ReadTemplate(r, v, out.template_);
    if (key == "ttlSecondsAfterFinished") return Read(r, v, out.ttl_seconds_after_finished);
    if (key == "completionMode") return Read(r, v, out.completion_mode);
    if (key == "suspend") return Read(r, v, out.suspend);
    return true;
  });
}

bool ReadJobStatus(Reader& r, Element e, JobStatus& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "conditions") return Read(r, v, out.conditions);
    if (key == "startTime") return Read(r, v, out.start_time);
    if (key == "completionTime") return Read(r, v, out.completion_time);
    if (key == "active") return Read(r, v, out.active);
    if (key == "ready") return Read(r, v, out.ready);
    if (key == "succeeded") return Read(r, v, out.succeeded);
    if (key == "failed") return Read(r, v, out.failed);
    if (key == "terminating") return Read(r, v, out.terminating);
    if (key == "completedIndexes") return Read(r, v, out.completed_indexes);
    return true;
  });
}

void OverlayJobStatus(Json& j, const JobStatus& now, const JobStatus* before) {
  using S = JobStatus;
  codec::PutConditions(j, "conditions", now.conditions, Prev(before, &S::conditions));
  Put(j, "startTime", now.start_time, Prev(before, &S::start_time));
  Put(j, "completionTime", now.completion_time, Prev(before, &S::completion_time));
  Put(j, "active", now.active, Prev(before, &S::active));
  PutOpt(j, "ready", now.ready, Prev(before, &S::ready));
  Put(j, "succeeded", now.succeeded, Prev(before, &S::succeeded));
  Put(j, "failed", now.failed, Prev(before, &S::failed));
  PutOpt(j, "terminating", now.terminating, Prev(before, &S::terminating));
  Put(j, "completedIndexes", now.completed_indexes, Prev(before, &S::completed_indexes));
}

// Decode and Encode of one workload kind T with spec readers and a status overlay.
template <typename T, typename ReadSpec, typename ReadStatus>
Result<T> DecodeWorkload(std::string_view json, ReadSpec read_spec, ReadStatus read_status) {
  return codec::DecodeObject<T>(json, T::kKind,
                                [&](Reader& r, std::string_view key, Element v, T& out) {
                                  if (key == "spec") return read_spec(r, v, out.spec);
                                  if (key == "status") return read_status(r, v, out.status);
                                  return true;
                                });
}

template <typename T, typename Overlay>
std::string EncodeWorkload(const T& now, Overlay overlay_status) {
  return codec::EncodeObject(
      now, T::kApiVersion, T::kKind, [&](const T& before) { return now.status == before.status; },
      [&](Json& root, const T* before) {
        codec::PutObject(root, "status",
                         [&](Json& j) { overlay_status(j, now.status, Prev(before, &T::status)); });
      });
}

}  // namespace

Result<Deployment> Deployment::Decode(std::string_view json) {
  return DecodeWorkload<Deployment>(json, ReadDeploymentSpec, ReadDeploymentStatus);
}
std::string Deployment::Encode() const { return EncodeWorkload(*this, OverlayDeploymentStatus); }

Result<ReplicaSet> ReplicaSet::Decode(std::string_view json) {
  return DecodeWorkload<ReplicaSet>(json, ReadReplicaSetSpec, ReadReplicaSetStatus);
}
std::string ReplicaSet::Encode() const { return EncodeWorkload(*this, OverlayReplicaSetStatus); }

Result<StatefulSet> StatefulSet::Decode(std::string_view json) {
  return DecodeWorkload<StatefulSet>(json, ReadStatefulSetSpec, ReadStatefulSetStatus);
}
std::string StatefulSet::Encode() const { return EncodeWorkload(*this, OverlayStatefulSetStatus); }

Result<DaemonSet> DaemonSet::Decode(std::string_view json) {
  return DecodeWorkload<DaemonSet>(json, ReadDaemonSetSpec, ReadDaemonSetStatus);
}
std::string DaemonSet::Encode() const { return EncodeWorkload(*this, OverlayDaemonSetStatus); }

Result<Job> Job::Decode(std::string_view json) {
  return DecodeWorkload<Job>(json, ReadJobSpec, ReadJobStatus);
}
std::string Job::Encode() const { return EncodeWorkload(*this, OverlayJobStatus); }

}  // namespace copse::kube
