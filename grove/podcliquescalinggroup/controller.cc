#include "grove/podcliquescalinggroup/controller.h"

#include <map>

#include "core/log.h"
#include "grove/api/defaults.h"
#include "grove/api/names.h"
#include "grove/components/builders.h"
#include "grove/runtime/lookups.h"
#include "kube/controller/objects.h"
#include "kube/controller/sync.h"

namespace copse::grove::podcliquescalinggroup {

namespace {

using kube::controller::Await;
using kube::controller::ReconcileResult;

constexpr std::string_view kLog = "podcliquescalinggroup";

bool ConditionIs(const std::vector<kube::Condition>& conditions, std::string_view type,
                 std::string_view status) {
  const kube::Condition* c = kube::FindCondition(conditions, type);
  return c != nullptr && c->status == status;
}

}  // namespace

ReconcileResult Reconciler::Reconcile(const std::string& key) {
  auto pcsg = ctx_.caches->pcsg.Get(key);
  if (pcsg == nullptr || kube::controller::IsTerminating(pcsg->meta))
    return ReconcileResult::Done();
  auto pcs = runtime::OwningPodCliqueSet(*ctx_.caches, *ctx_.defaulted, pcsg->meta);
  if (pcs == nullptr) return ReconcileResult::Done();
  const std::string& ns = pcsg->meta.namespace_;
  int pcs_replica = runtime::IntLabel(pcsg->meta, api::kLabelPcsReplicaIndex);
  const api::PodCliqueScalingGroupConfig* config = nullptr;
  for (const auto& c : pcs->spec.template_.scaling_groups) {
    if (api::ScalingGroupName(pcs->meta.name, pcs_replica, c.name) == pcsg->meta.name) config = &c;
  }
  if (config == nullptr || pcs_replica < 0) return ReconcileResult::Done();
  kube::Client& client = *ctx_.client;
  Status first_error;
  auto record = [&](Status s) {
    if (!s.ok() && first_error.ok()) first_error = s;
  };
  int32_t min_available = pcsg->spec.min_available.value_or(1);

  // Existing PodCliques by replica.
  std::map<int, std::vector<std::shared_ptr<const api::PodClique>>> by_replica;
  for (auto& pclq : ctx_.caches->pclq.ByIndex(runtime::kIndexPcsg,
                                              kube::controller::IndexValue(ns, pcsg->meta.name))) {
    if (!kube::controller::IsControlledBy(pclq->meta, pcsg->meta.uid) ||
        kube::controller::IsTerminating(pclq->meta)) {
      continue;
    }
    by_replica[runtime::IntLabel(pclq->meta, api::kLabelPcsgReplicaIndex)].push_back(pclq);
  }
  auto delete_pclq = [&](const std::string& name) {
    Log(1, kLog, "delete PodClique " + ns + "/" + name);
    kube::DeleteOptions options;
    options.propagation_policy = "Background";
    Status s = Await(client, client.Delete(api::resources::kPodCliques, ns, name, options));
    if (!s.ok() && s.error().code != ErrorCode::kNotFound) record(s);
  };

  // Gang termination of scaled replicas.
  std::optional<Clock::Duration> requeue;
  std::set<int> terminated;
  int created_now = 0;  // PodCliques created by this pass
  auto delay = api::TerminationDelay(*pcs);
  auto now = ctx_.clock->WallNow();
  for (const auto& [j, pclqs] : by_replica) {
    if (j < min_available) continue;
    std::optional<std::chrono::system_clock::time_point> since;
    for (const auto& pclq : pclqs) {
      const kube::Condition* c =
          kube::FindCondition(pclq->status.conditions, api::kConditionMinAvailableBreached);
      if (c == nullptr || c->status != "True") continue;
      auto t = kube::controller::ParseRfc3339(c->last_transition_time).value_or(now);
      if (!since || t < *since) since = t;
    }
    if (!since) continue;
    auto elapsed = now - *since;
    if (elapsed >= delay) {
      Log(1, kLog, key + ": gang-terminating replica " + std::to_string(j));
      for (const auto& pclq : pclqs) delete_pclq(pclq->meta.name);
      terminated.insert(j);
    } else {
      auto left = std::chrono::duration_cast<Clock::Duration>(delay - elapsed);
      if (!requeue || left < *requeue) requeue = left;
    }
  }

  // Desired PodCliques.
  for (int j = 0; j < pcsg->spec.replicas; ++j) {
    if (terminated.count(j)) continue;
    for (const auto& name : config->clique_names) {
      const auto* clique = pcs->spec.template_.FindClique(name);
      if (clique == nullptr) continue;
      api::PodClique desired =
          components::BuildGroupPodClique(*pcs, pcs_replica, *pcsg, *config, j, *clique);
      auto existing = ctx_.caches->pclq.Get(ns, desired.meta.name);
      if (existing == nullptr) {
        Log(1, kLog, "create PodClique " + ns + "/" + desired.meta.name);
        Result<std::string> created =
            Await(client, client.Create(api::resources::kPodCliques, ns, desired.Encode()));
        if (created.ok()) {
          ++created_now;
        } else if (created.error().code != ErrorCode::kAlreadyExists) {
          record(created.error());
        }
        continue;
      }
      if (kube::controller::IsTerminating(existing->meta) ||
          !kube::controller::IsControlledBy(existing->meta, pcsg->meta.uid)) {
        continue;
      }
      if (existing->spec == desired.spec &&
          kube::controller::LabelsContain(existing->meta.labels, desired.meta.labels)) {
        continue;
      }
      api::PodClique updated = *existing;
      updated.spec = desired.spec;
      for (const auto& [k, v] : desired.meta.labels) updated.meta.labels[k] = v;
      Result<std::string> result = Await(
          client,
          client.Update(api::resources::kPodCliques, ns, updated.meta.name, updated.Encode()));
      if (!result.ok()) record(result.error());
    }
  }
  // Scale-in: replicas at or above spec.replicas go, highest indices first.
  for (auto it = by_replica.rbegin(); it != by_replica.rend(); ++it) {
    if (it->first >= pcsg->spec.replicas || it->first < 0) {
      for (const auto& pclq : it->second) delete_pclq(pclq->meta.name);
    }
  }

  // Status.
  api::PodCliqueScalingGroupStatus status = pcsg->status;
  status.replicas = pcsg->spec.replicas;
  status.observed_generation = pcsg->meta.generation;
  Labels selector = api::DefaultLabels(pcs->meta.name);
  selector[std::string(api::kLabelPcsg)] = pcsg->meta.name;
  status.selector = kube::controller::SelectorString(selector);
  int32_t scheduled = 0, available = 0, updated = 0;
  for (int j = 0; j < pcsg->spec.replicas; ++j) {
    auto it = by_replica.find(j);
    if (it == by_replica.end() || it->second.size() < config->clique_names.size() ||
        terminated.count(j)) {
      continue;
    }
    bool is_scheduled = true, is_available = true, is_updated = true;
    for (const auto& pclq : it->second) {
      int32_t min = pclq->spec.min_available.value_or(pclq->spec.replicas);
      if (!ConditionIs(pclq->status.conditions, api::kConditionPodCliqueScheduled, "True")) {
        is_scheduled = false;
      }
      if (pclq->status.ready_replicas < min) is_available = false;
      if (pclq->status.updated_replicas < pclq->spec.replicas) is_updated = false;
    }
    scheduled += is_scheduled;
    available += is_available;
    updated += is_updated;
  }
  status.scheduled_replicas = scheduled;
  status.available_replicas = available;
  status.updated_replicas = updated;

  kube::Condition breached;
  breached.type = api::kConditionMinAvailableBreached;
  const kube::Condition* current =
      kube::FindCondition(pcsg->status.conditions, api::kConditionMinAvailableBreached);
  bool was_available =
      current != nullptr &&
      (current->status == "True" || current->reason == api::kReasonSufficientAvailablePcsgReplicas);
  if (available >= min_available) {
    breached.status = "False";
    breached.reason = api::kReasonSufficientAvailablePcsgReplicas;
    breached.message = "available replicas " + std::to_string(available) + " >= minAvailable " +
                       std::to_string(min_available);
  } else if (was_available) {
    breached.status = "True";
    breached.reason = api::kReasonInsufficientAvailablePcsgReplicas;
    breached.message = "available replicas " + std::to_string(available) + " < minAvailable " +
                       std::to_string(min_available);
  } else {
    breached.status = "False";
    breached.reason = api::kReasonInsufficientScheduledPcsgReplicas;
    breached.message = "not yet available (" + std::to_string(available) + " of " +
                       std::to_string(min_available) + " replicas)";
  }
  kube::controller::SetCondition(status.conditions, breached, ctx_.Now());
  // PodCliques created in this pass are not in the cache yet: the status
  // would count none of them, and their add events requeue this key.
  if (created_now == 0 && !(status == pcsg->status)) {
    api::PodCliqueScalingGroup next = *pcsg;
    next.status = std::move(status);
    Result<std::string> result =
        Await(client, client.UpdateStatus(api::resources::kPodCliqueScalingGroups, ns,
                                          next.meta.name, kube::controller::StatusBody(next)));
    if (!result.ok() && result.error().code != ErrorCode::kNotFound) record(result.error());
  }
  if (!first_error.ok()) return ReconcileResult::Failed(first_error.error());
  if (!terminated.empty()) return ReconcileResult::RequeueAfter(std::chrono::milliseconds(200));
  if (requeue) return ReconcileResult::RequeueAfter(*requeue);
  return ReconcileResult::Done();
}

}  // namespace copse::grove::podcliquescalinggroup
