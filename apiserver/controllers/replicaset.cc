#include "apiserver/controllers/replicaset.h"

#include <algorithm>

#include "kube/controller/objects.h"
#include "kube/controller/sync.h"

namespace copse::apiserver::controllers {

namespace kc = kube::controller;
using kc::ReconcileResult;

namespace {

// kube's burstReplicas: at most this many creations or deletions per pass.
constexpr int kBurstReplicas = 500;

}  // namespace

ReplicaSetReconciler::ReplicaSetReconciler(const Context& ctx)
    : ctx_(ctx), expectations_(ctx.clock) {}

ReconcileResult ReplicaSetReconciler::Reconcile(const std::string& key) {
  auto rs = ctx_.caches->replicasets.Get(key);
  if (rs == nullptr) {
    expectations_.Forget(key);
    return ReconcileResult::Done();
  }
  const auto now = ctx_.clock->WallNow();
  const int32_t want = rs->spec.replicas.value_or(1);
  std::vector<PodPtr> active;
  for (auto& pod : ctx_.caches->PodsOwnedBy(rs->meta.uid)) {
    if (IsPodActive(*pod)) active.push_back(std::move(pod));
  }

  Status manage_error;
  bool manage_delete = false;
  if (expectations_.Satisfied(key) && !kc::IsTerminating(rs->meta)) {
    const int diff = static_cast<int>(active.size()) - want;
    if (diff < 0) {
      const int n = std::min(-diff, kBurstReplicas);
      std::vector<std::string> bodies;
      PodOptions options;
      options.generate_name = rs->meta.name + "-";
      for (int i = 0; i < n; ++i) {
        auto body = BuildPod(rs->spec.template_, *rs, kube::ReplicaSet::kApiVersion,
                             kube::ReplicaSet::kKind, options);
        if (!body.ok()) {
          manage_error = body.error();
          break;
        }
        bodies.push_back(std::move(body).value());
      }
      CreateOutcome outcome =
          CreatePods(ctx_, rs->meta.namespace_, std::move(bodies), expectations_, key);
      if (manage_error.ok()) manage_error = outcome.error;
      if (!outcome.error.ok()) {
        RecordEvent(ctx_, *rs, kube::ReplicaSet::kApiVersion, kube::ReplicaSet::kKind,
                    kube::kEventTypeWarning, "FailedCreate",
                    "Error creating: " + outcome.error.error().message);
      }
      if (outcome.created > 0) {
        RecordEvent(ctx_, *rs, kube::ReplicaSet::kApiVersion, kube::ReplicaSet::kKind,
                    kube::kEventTypeNormal, "SuccessfulCreate",
                    "Created " + std::to_string(outcome.created) + " pod(s)");
      }
    } else if (diff > 0) {
      std::vector<PodPtr> victims = active;
      SortForDeletion(victims);
      victims.resize(static_cast<size_t>(std::min(diff, kBurstReplicas)));
      manage_error = DeletePods(ctx_, victims, expectations_, key);
      manage_delete = true;
      if (manage_error.ok()) {
        RecordEvent(ctx_, *rs, kube::ReplicaSet::kApiVersion, kube::ReplicaSet::kKind,
                    kube::kEventTypeNormal, "SuccessfulDelete",
                    "Deleted " + std::to_string(victims.size()) + " pod(s)");
      }
    }
  }

  kube::ReplicaSetStatus status = rs->status;
  status.replicas = static_cast<int32_t>(active.size());
  status.fully_labeled_replicas = 0;
  status.ready_replicas = 0;
  status.available_replicas = 0;
  std::optional<std::chrono::milliseconds> available_in;
  for (const auto& pod : active) {
    if (kc::LabelsContain(pod->meta.labels, rs->spec.template_.labels)) {
      ++status.fully_labeled_replicas;
    }
    if (IsPodReady(*pod)) ++status.ready_replicas;
    if (IsPodAvailable(*pod, rs->spec.min_ready_seconds, now, &available_in)) {
      ++status.available_replicas;
    }
  }
  status.observed_generation = rs->meta.generation;
  if (!manage_error.ok()) {
    kube::Condition failure;
    failure.type = "ReplicaFailure";
    failure.status = "True";
    failure.reason = manage_delete ? "FailedDelete" : "FailedCreate";
    failure.message = manage_error.error().message;
    kc::SetCondition(status.conditions, failure, ctx_.Now());
  } else {
    std::erase_if(status.conditions,
                  [](const kube::Condition& c) { return c.type == "ReplicaFailure"; });
  }
  if (!(status == rs->status)) {
    kube::ReplicaSet updated = *rs;
    updated.status = std::move(status);
    auto written = kc::Await(
        *ctx_.client, ctx_.client->UpdateStatus(kube::resources::kReplicaSets, rs->meta.namespace_,
                                                rs->meta.name, kc::StatusBody(updated)));
    if (!written.ok() && written.error().code != ErrorCode::kNotFound) {
      return ReconcileResult::Failed(written.error());
    }
  }
  if (!manage_error.ok()) return ReconcileResult::Failed(manage_error.error());
  if (available_in.has_value()) return ReconcileResult::RequeueAfter(*available_in);
  return ReconcileResult::Done();
}

}  // namespace copse::apiserver::controllers
