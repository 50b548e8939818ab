#include "grove/podclique/controller.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/log.h"
#include "grove/api/names.h"
#include "grove/components/pod.h"
#include "grove/runtime/lookups.h"
#include "kube/controller/objects.h"
#include "kube/controller/sync.h"

namespace copse::grove::podclique {

namespace {

using kube::controller::Await;
using kube::controller::ReconcileResult;
using runtime::PodPtr;

constexpr std::string_view kLog = "podclique";

std::string TemplateHashOf(const kube::ObjectMeta& meta) {
  auto it = meta.labels.find(api::kLabelPodTemplateHash);
  return it == meta.labels.end() ? std::string() : it->second;
}

// Oldest first (creationTimestamp, then name), so the younger of two pods
// claiming one index is the one removed.
bool Older(const PodPtr& a, const PodPtr& b) {
  if (a->meta.creation_timestamp != b->meta.creation_timestamp) {
    return a->meta.creation_timestamp < b->meta.creation_timestamp;
  }
  return a->meta.name < b->meta.name;
}

kube::Condition MakeCondition(std::string_view type, std::string_view status,
                              std::string_view reason, std::string message) {
  kube::Condition c;
  c.type = type;
  c.status = status;
  c.reason = reason;
  c.message = std::move(message);
  return c;
}

}  // namespace

ReconcileResult Reconciler::Reconcile(const std::string& key) {
  auto pclq = ctx_.caches->pclq.Get(key);
  if (pclq == nullptr || kube::controller::IsTerminating(pclq->meta)) {
    ctx_.expectations->Forget(key);
    return ReconcileResult::Done();
  }
  auto pcs = runtime::OwningPodCliqueSet(*ctx_.caches, *ctx_.defaulted, pclq->meta);
  if (pcs == nullptr) return ReconcileResult::Done();
  if (!ctx_.expectations->Satisfied(key)) {
    // Our own creations/deletions are not in the cache yet; their events
    // requeue this key. The delayed requeue only guards against lost events.
    return ReconcileResult::RequeueAfter(std::chrono::seconds(1));
  }
  const std::string& ns = pclq->meta.namespace_;
  kube::Client& client = *ctx_.client;
  int pcs_replica = runtime::IntLabel(pclq->meta, api::kLabelPcsReplicaIndex);
  std::string gang_name;
  if (auto it = pclq->meta.labels.find(api::kLabelPodGang); it != pclq->meta.labels.end()) {
    gang_name = it->second;
  }
  auto gang = ctx_.caches->podgang.Get(ns, gang_name);
  Status first_error;
  auto record = [&](Status s) {
    if (!s.ok() && first_error.ok()) first_error = s;
  };

  // ---------------------------------------------------------------- indices
  std::vector<PodPtr> pods = runtime::ActivePodsOf(*ctx_.caches, *pclq);
  std::sort(pods.begin(), pods.end(), Older);
  const int replicas = std::max(pclq->spec.replicas, 0);
  std::map<int, PodPtr> by_index;
  std::vector<PodPtr> invalid;
  for (const auto& pod : pods) {
    auto index = api::IndexFromHostname(pod->spec.hostname, pclq->meta.name);
    if (!index.has_value() || *index >= replicas || by_index.count(*index)) {
      invalid.push_back(pod);
    } else {
      by_index[*index] = pod;
    }
  }
  std::vector<int> missing;
  for (int i = 0; i < replicas; ++i) {
    if (!by_index.count(i)) missing.push_back(i);
  }

  // Outdated pods (RollingRecreate), one at a time while the rest is Ready.
  std::string strategy = pcs->spec.update_strategy ? pcs->spec.update_strategy->type
                                                   : std::string(api::kRollingRecreate);
  std::string hash = TemplateHashOf(pclq->meta);
  std::vector<PodPtr> deletes = invalid;
  if (strategy == api::kRollingRecreate && invalid.empty() && missing.empty() && !hash.empty()) {
    std::vector<std::pair<int, PodPtr>> outdated;
    bool others_ready = true;
    for (const auto& [index, pod] : by_index) {
      if (TemplateHashOf(pod->meta) != hash) {
        outdated.push_back({index, pod});
      } else if (!kube::controller::IsPodReady(*pod)) {
        others_ready = false;
      }
    }
    if (!outdated.empty()) {
      auto rank = [](const std::pair<int, PodPtr>& p) {
        int r = kube::controller::IsPodScheduled(*p.second)
                    ? (kube::controller::IsPodReady(*p.second) ? 2 : 1)
                    : 0;
        return std::make_pair(r, -p.first);
      };
      std::sort(outdated.begin(), outdated.end(),
                [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
      // Unhealthy outdated pods go at once; a Ready one only when all others are Ready.
      bool pick_unhealthy = !kube::controller::IsPodReady(*outdated.front().second);
      bool all_outdated_ready = true;
      for (const auto& [i, p] : outdated)
        all_outdated_ready = all_outdated_ready && kube::controller::IsPodReady(*p);
      if (pick_unhealthy || (others_ready && all_outdated_ready)) {
        deletes.push_back(outdated.front().second);
        Log(1, kLog, key + ": rolling recreate of " + outdated.front().second->meta.name);
      }
    }
  }

  if (!deletes.empty()) {
    ctx_.expectations->ExpectDeletions(key, static_cast<int>(deletes.size()));
    std::vector<boost::asio::awaitable<Status>> calls;
    for (const auto& pod : deletes) {
      Log(1, kLog,
          "delete pod " + ns + "/" + pod->meta.name + " (hostname " + pod->spec.hostname + ")");
      calls.push_back(client.Delete(kube::resources::kPods, ns, pod->meta.name));
    }
    for (auto& s : kube::controller::AwaitAll(client, std::move(calls))) {
      if (!s.ok()) {
        ctx_.expectations->DeletionObserved(key);
        if (s.error().code != ErrorCode::kNotFound) record(s);
      }
    }
  }

  // Creates wait for the PodGang: every PodGang precedes its pods.
  if (!missing.empty() && gang != nullptr && !kube::controller::IsTerminating(gang->meta)) {
    backend::SchedulerBackend* backend = nullptr;
    if (auto it = gang->meta.labels.find(api::kLabelSchedulerName); it != gang->meta.labels.end()) {
      backend = ctx_.backends->Get(it->second);
    }
    if (backend == nullptr) backend = &ctx_.backends->GetDefault();
    std::vector<std::string> bodies;
    for (int index : missing) {
      components::PodBuildInputs in;
      in.pcs = &*pcs;
      in.pclq = pclq.get();
      in.pcs_replica = pcs_replica;
      in.index = index;
      in.initc_image = ctx_.initc_image;
      auto pod = components::BuildPod(in);
      if (!pod.ok()) {
        record(pod.error());
        continue;
      }
      if (Status s = backend->PreparePod(*pod); !s.ok()) {
        record(s);
        continue;
      }
      bodies.push_back(pod->dump());
    }
    if (!bodies.empty()) {
      Log(1, kLog, key + ": creating " + std::to_string(bodies.size()) + " pods");
      ctx_.expectations->ExpectCreations(key, static_cast<int>(bodies.size()));
      std::vector<boost::asio::awaitable<Result<std::string>>> calls;
      for (auto& body : bodies)
        calls.push_back(client.Create(kube::resources::kPods, ns, std::move(body)));
      for (auto& r : kube::controller::AwaitAll(client, std::move(calls))) {
        if (!r.ok()) {
          ctx_.expectations->CreationObserved(key);
          record(r.error());
        }
      }
    }
  }

  // ---------------------------------------------------------------- gates
  int32_t gated_now = 0;
  if (gang != nullptr && gang->IsInitialized()) {
    std::set<std::string> refs;
    for (const auto& group : gang->spec.pod_groups) {
      if (group.name != pclq->meta.name) continue;
      for (const auto& ref : group.pod_references) refs.insert(ref.name);
    }
    bool base_ok = true;
    if (auto base = gang->meta.labels.find(api::kLabelBasePodGang);
        base != gang->meta.labels.end()) {
      auto base_gang = ctx_.caches->podgang.Get(ns, base->second);
      base_ok = base_gang != nullptr && runtime::IsGangScheduled(*ctx_.caches, *base_gang);
    }
    std::vector<boost::asio::awaitable<Result<std::string>>> calls;
    for (const auto& [index, pod] : by_index) {
      if (!kube::controller::HasSchedulingGate(*pod, api::kPodGangSchedulingGate)) continue;
      if (!base_ok || !refs.count(pod->meta.name)) continue;
      if (pod->spec.scheduling_gates.size() == 1) {
        // Ours is the only gate: a small merge patch (conditional on the
        // resourceVersion) instead of re-encoding the whole pod.
        std::string patch = R"({"metadata":{"resourceVersion":")" + pod->meta.resource_version +
                            R"("},"spec":{"schedulingGates":null}})";
        calls.push_back(client.Patch(kube::resources::kPods, ns, pod->meta.name,
                                     kube::PatchType::kMerge, std::move(patch)));
      } else {
        kube::Pod next = *pod;
        auto& gates = next.spec.scheduling_gates;
        gates.erase(
            std::remove(gates.begin(), gates.end(), std::string(api::kPodGangSchedulingGate)),
            gates.end());
        calls.push_back(client.Update(kube::resources::kPods, ns, pod->meta.name, next.Encode()));
      }
      ++gated_now;
    }
    if (!calls.empty()) {
      Log(2, kLog, key + ": lifting " + std::to_string(calls.size()) + " gates");
      for (auto& r : kube::controller::AwaitAll(client, std::move(calls))) {
        if (!r.ok() && r.error().code != ErrorCode::kNotFound) record(r.error());
      }
    }
  }

  // ---------------------------------------------------------------- status
  api::PodCliqueStatus status = pclq->status;
  status.observed_generation = pclq->meta.generation;
  int32_t ready = 0, scheduled = 0, gated = 0, updated = 0;
  for (const auto& pod : pods) {
    ready += kube::controller::IsPodReady(*pod);
    scheduled += kube::controller::IsPodScheduled(*pod);
    gated += kube::controller::HasSchedulingGate(*pod, api::kPodGangSchedulingGate);
    updated += !hash.empty() && TemplateHashOf(pod->meta) == hash;
  }
  status.replicas = static_cast<int32_t>(pods.size());
  status.ready_replicas = ready;
  status.scheduled_replicas = scheduled;
  status.schedule_gated_replicas = gated;
  status.updated_replicas = updated;
  status.current_pod_template_hash = hash.empty() ? std::nullopt : std::optional<std::string>(hash);
  Labels selector = api::DefaultLabels(pcs->meta.name);
  selector[std::string(api::kLabelPodClique)] = pclq->meta.name;
  status.selector = kube::controller::SelectorString(selector);

  int32_t min = pclq->spec.min_available.value_or(pclq->spec.replicas);
  std::string now = ctx_.Now();
  kube::controller::SetCondition(status.conditions,
                                 scheduled >= min
                                     ? MakeCondition(api::kConditionPodCliqueScheduled, "True",
                                                     api::kReasonSufficientScheduledPods,
                                                     "scheduled " + std::to_string(scheduled) +
                                                         " >= minAvailable " + std::to_string(min))
                                     : MakeCondition(api::kConditionPodCliqueScheduled, "False",
                                                     api::kReasonInsufficientScheduledPods,
                                                     "scheduled " + std::to_string(scheduled) +
                                                         " < minAvailable " + std::to_string(min)),
                                 now);
  const kube::Condition* breached =
      kube::FindCondition(pclq->status.conditions, api::kConditionMinAvailableBreached);
  bool was_available =
      breached != nullptr &&
      (breached->status == "True" || breached->reason == api::kReasonSufficientReadyPods ||
       breached->reason == api::kReasonUpdateInProgress);
  kube::Condition next;
  bool updating = strategy == api::kRollingRecreate && !hash.empty() &&
                  updated < static_cast<int32_t>(pods.size());
  if (updating) {
    // A rolling recreate takes pods away on purpose: no gang termination meanwhile.
    next = MakeCondition(api::kConditionMinAvailableBreached, "Unknown",
                         api::kReasonUpdateInProgress, "Update is in progress");
  } else if (ready >= min || replicas == 0) {
    next = MakeCondition(
        api::kConditionMinAvailableBreached, "False", api::kReasonSufficientReadyPods,
        "Sufficient ready pods: " + std::to_string(ready) + " >= " + std::to_string(min));
  } else if (was_available) {
    next = MakeCondition(
        api::kConditionMinAvailableBreached, "True", api::kReasonInsufficientReadyPods,
        "Insufficient ready pods: " + std::to_string(ready) + " < " + std::to_string(min));
  } else {
    next = MakeCondition(api::kConditionMinAvailableBreached, "False", api::kReasonNeverAvailable,
                         "Not yet available: " + std::to_string(ready) + " of " +
                             std::to_string(min) + " pods ready");
  }
  kube::controller::SetCondition(status.conditions, next, now);
  // Pods created in this pass are not in the cache yet: a status written now
  // would count none of them and be replaced as soon as their events requeue
  // this key. Write it then.
  const bool creations_pending = !ctx_.expectations->Satisfied(key);
  if (!creations_pending && !(status == pclq->status)) {
    api::PodClique updated_pclq = *pclq;
    updated_pclq.status = std::move(status);
    Result<std::string> r =
        Await(client, client.UpdateStatus(api::resources::kPodCliques, ns, pclq->meta.name,
                                          kube::controller::StatusBody(updated_pclq)));
    if (!r.ok() && r.error().code != ErrorCode::kNotFound) record(r.error());
  }
  if (!first_error.ok()) return ReconcileResult::Failed(first_error.error());
  return ReconcileResult::Done();
}

}  // namespace copse::grove::podclique
