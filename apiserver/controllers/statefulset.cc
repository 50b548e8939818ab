#include "apiserver/controllers/statefulset.h"

#include <algorithm>
#include <map>

#include "kube/controller/objects.h"
#include "kube/controller/sync.h"

namespace copse::apiserver::controllers {

namespace kc = kube::controller;
using kc::ReconcileResult;

namespace {

// The ordinal of "<sts>-<n>", or -1.
int64_t Ordinal(std::string_view set, std::string_view pod) {
  if (pod.size() <= set.size() + 1 || pod.substr(0, set.size()) != set || pod[set.size()] != '-') {
    return -1;
  }
  std::string_view digits = pod.substr(set.size() + 1);
  if (digits.empty() || digits.size() > 9 ||
      digits.find_first_not_of("0123456789") != std::string_view::npos ||
      (digits.size() > 1 && digits[0] == '0')) {
    return -1;
  }
  return std::stol(std::string(digits));
}

}  // namespace

StatefulSetReconciler::StatefulSetReconciler(const Context& ctx)
    : ctx_(ctx), expectations_(ctx.clock) {}

ReconcileResult StatefulSetReconciler::Reconcile(const std::string& key) {
  auto set = ctx_.caches->statefulsets.Get(key);
  if (set == nullptr) {
    expectations_.Forget(key);
    return ReconcileResult::Done();
  }
  const auto now = ctx_.clock->WallNow();
  const int32_t replicas = set->spec.replicas.value_or(1);
  const int64_t start = set->spec.ordinals_start;
  const bool monotonic = set->spec.pod_management_policy != kube::kParallelPodManagement;
  const std::string update_revision =
      set->meta.name + "-" + TemplateHash(set->spec.template_.json, set->status.collision_count);
  const std::string current_revision =
      set->status.current_revision.empty() ? update_revision : set->status.current_revision;

  std::map<int64_t, PodPtr> in_range;  // ordinal -> pod
  std::vector<PodPtr> condemned;       // outside the range (or not named by ordinal)
  std::vector<PodPtr> all = ctx_.caches->PodsOwnedBy(set->meta.uid);
  for (const auto& pod : all) {
    const int64_t ordinal = Ordinal(set->meta.name, pod->meta.name);
    if (ordinal >= start && ordinal < start + replicas) {
      in_range[ordinal] = pod;
    } else {
      condemned.push_back(pod);
    }
  }
  std::sort(condemned.begin(), condemned.end(), [&](const PodPtr& a, const PodPtr& b) {
    return Ordinal(set->meta.name, a->meta.name) > Ordinal(set->meta.name, b->meta.name);
  });
  auto healthy = [&](const kube::Pod& pod) {
    return !kc::IsTerminating(pod.meta) && pod.status.phase == kube::kPodRunning && IsPodReady(pod);
  };

  Status first_error;
  auto note = [&](const Status& s) {
    if (!s.ok() && first_error.ok()) first_error = s;
  };
  auto make_pod = [&](int64_t ordinal) -> Result<std::string> {
    PodOptions options;
    options.name = set->meta.name + "-" + std::to_string(ordinal);
    options.hostname = options.name;
    if (!set->spec.service_name.empty()) options.subdomain = set->spec.service_name;
    options.extra_labels[std::string(kStatefulSetPodNameLabel)] = options.name;
    options.extra_labels[std::string(kPodIndexLabel)] = std::to_string(ordinal);
    options.extra_labels[std::string(kControllerRevisionHashLabel)] = update_revision;
    return BuildPod(set->spec.template_, *set, kube::StatefulSet::kApiVersion,
                    kube::StatefulSet::kKind, options);
  };
  auto create = [&](std::vector<int64_t> ordinals) {
    std::vector<std::string> bodies;
    for (int64_t ordinal : ordinals) {
      auto body = make_pod(ordinal);
      if (!body.ok()) {
        note(body.error());
        break;
      }
      bodies.push_back(std::move(body).value());
    }
    CreateOutcome outcome =
        CreatePods(ctx_, set->meta.namespace_, std::move(bodies), expectations_, key);
    // A pod of that name already there is one this controller made earlier.
    if (!outcome.error.ok() && outcome.error.error().code != ErrorCode::kAlreadyExists) {
      note(outcome.error);
      RecordEvent(ctx_, *set, kube::StatefulSet::kApiVersion, kube::StatefulSet::kKind,
                  kube::kEventTypeWarning, "FailedCreate",
                  "create Pod in StatefulSet " + set->meta.name +
                      " failed error: " + outcome.error.error().message);
    }
    for (int i = 0; i < outcome.created; ++i) {
      RecordEvent(ctx_, *set, kube::StatefulSet::kApiVersion, kube::StatefulSet::kKind,
                  kube::kEventTypeNormal, "SuccessfulCreate",
                  "create Pod " + set->meta.name + "-" +
                      std::to_string(ordinals[static_cast<size_t>(i)]) + " in StatefulSet " +
                      set->meta.name + " successful");
    }
  };
  auto remove = [&](const std::vector<PodPtr>& pods) {
    note(DeletePods(ctx_, pods, expectations_, key));
    for (const auto& pod : pods) {
      RecordEvent(
          ctx_, *set, kube::StatefulSet::kApiVersion, kube::StatefulSet::kKind,
          kube::kEventTypeNormal, "SuccessfulDelete",
          "delete Pod " + pod->meta.name + " in StatefulSet " + set->meta.name + " successful");
    }
  };

  if (expectations_.Satisfied(key) && !kc::IsTerminating(set->meta)) {
    bool blocked = false;
    std::vector<int64_t> missing;
    std::vector<PodPtr> finished;
    // 1. The pods in range, lowest ordinal first.
    for (int64_t ordinal = start; ordinal < start + replicas && !blocked; ++ordinal) {
      auto it = in_range.find(ordinal);
      if (it == in_range.end()) {
        missing.push_back(ordinal);
        if (monotonic) blocked = true;
        continue;
      }
      const kube::Pod& pod = *it->second;
      if (kc::IsPodTerminal(pod) && !kc::IsTerminating(pod.meta)) {
        finished.push_back(it->second);
        if (monotonic) blocked = true;
        continue;
      }
      if (monotonic && !healthy(pod)) blocked = true;
    }
    if (!finished.empty()) {
      remove(finished);
    } else if (!missing.empty()) {
      create(missing);
    }
    // 2. Surplus pods, highest ordinal first.
    if (!blocked && finished.empty() && missing.empty()) {
      std::vector<PodPtr> doomed;
      for (const auto& pod : condemned) {
        if (kc::IsTerminating(pod->meta)) {
          if (monotonic) {
            blocked = true;
            break;
          }
          continue;
        }
        if (monotonic) {
          // Only while every other pod is healthy.
          bool others_healthy = true;
          for (const auto& other : all) {
            if (other != pod && !healthy(*other)) others_healthy = false;
          }
          if (!others_healthy) {
            blocked = true;
            break;
          }
          doomed.push_back(pod);
          blocked = true;
          break;
        }
        doomed.push_back(pod);
      }
      if (!doomed.empty()) remove(doomed);
    }
    // 3. Rolling update, highest ordinal first, down to the partition.
    if (!blocked && finished.empty() && missing.empty() && condemned.empty() &&
        set->spec.update_strategy_type != kube::kOnDeleteStrategy) {
      const int64_t floor = start + std::max<int64_t>(set->spec.partition.value_or(0), 0);
      for (int64_t ordinal = start + replicas - 1; ordinal >= floor; --ordinal) {
        auto it = in_range.find(ordinal);
        if (it == in_range.end()) break;
        const kube::Pod& pod = *it->second;
        if (PodRevision(pod) != update_revision && !kc::IsTerminating(pod.meta)) {
          remove({it->second});
          break;
        }
        if (!healthy(pod)) break;
      }
    }
  }

  // Status (kube's computeReplicaStatus and completeRollingUpdate).
  kube::StatefulSetStatus status = set->status;
  status.observed_generation = set->meta.generation;
  status.replicas = 0;
  status.ready_replicas = 0;
  status.available_replicas = 0;
  status.current_replicas = 0;
  status.updated_replicas = 0;
  std::optional<std::chrono::milliseconds> available_in;
  for (const auto& pod : all) {
    if (kc::IsPodTerminal(*pod)) continue;
    ++status.replicas;
    if (healthy(*pod)) {
      ++status.ready_replicas;
      if (IsPodAvailable(*pod, set->spec.min_ready_seconds, now, &available_in)) {
        ++status.available_replicas;
      }
    }
    if (kc::IsTerminating(pod->meta)) continue;
    const std::string revision = PodRevision(*pod);
    if (revision == current_revision) ++status.current_replicas;
    if (revision == update_revision) ++status.updated_replicas;
  }
  status.update_revision = update_revision;
  status.current_revision = current_revision;
  if (set->spec.update_strategy_type != kube::kOnDeleteStrategy &&
      status.updated_replicas == status.replicas && status.ready_replicas == status.replicas) {
    status.current_replicas = status.updated_replicas;
    status.current_revision = update_revision;
  }
  if (!(status == set->status)) {
    kube::StatefulSet updated = *set;
    updated.status = std::move(status);
    auto written = kc::Await(*ctx_.client, ctx_.client->UpdateStatus(
                                               kube::resources::kStatefulSets, set->meta.namespace_,
                                               set->meta.name, kc::StatusBody(updated)));
    if (!written.ok() && written.error().code != ErrorCode::kNotFound) {
      return ReconcileResult::Failed(written.error());
    }
  }
  if (!first_error.ok()) return ReconcileResult::Failed(first_error.error());
  if (available_in) return ReconcileResult::RequeueAfter(*available_in);
  return ReconcileResult::Done();
}

}  // namespace copse::apiserver::controllers
