#include "grove/podgang/controller.h"

#include "core/log.h"
#include "grove/api/names.h"
#include "kube/controller/objects.h"

namespace copse::grove::podgang {

using kube::controller::ReconcileResult;

void Reconciler::RecordDeleted(std::shared_ptr<const api::PodGang> gang) {
  std::string key = kube::controller::Key(gang->meta.namespace_, gang->meta.name);
  std::lock_guard<std::mutex> lock(mu_);
  deleted_[key] = std::move(gang);
}

backend::SchedulerBackend* Reconciler::BackendFor(const api::PodGang& gang) const {
  auto it = gang.meta.labels.find(api::kLabelSchedulerName);
  if (it != gang.meta.labels.end()) {
    if (auto* b = ctx_.backends->Get(it->second)) return b;
  }
  return &ctx_.backends->GetDefault();
}

ReconcileResult Reconciler::Reconcile(const std::string& key) {
  auto gang = ctx_.caches->podgang.Get(key);
  if (gang == nullptr) {
    std::shared_ptr<const api::PodGang> deleted;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = deleted_.find(key);
      if (it != deleted_.end()) {
        deleted = it->second;
        deleted_.erase(it);
      }
    }
    ctx_.synced->Forget(key);
    if (deleted != nullptr) {
      Status s = BackendFor(*deleted)->OnPodGangDelete(*deleted);
      if (!s.ok()) {
        RecordDeleted(deleted);
        return ReconcileResult::Failed(s.error());
      }
    }
    return ReconcileResult::Done();
  }
  if (kube::controller::IsTerminating(gang->meta)) return ReconcileResult::Done();
  if (ctx_.synced->IsSyncedAt(key, gang->meta.uid, gang->meta.generation)) {
    return ReconcileResult::Done();
  }
  backend::SchedulerBackend* backend = BackendFor(*gang);
  Status s = backend->SyncPodGang(*gang);
  if (!s.ok()) return ReconcileResult::Failed(s.error());
  bool first = !ctx_.synced->IsSynced(key, gang->meta.uid);
  ctx_.synced->MarkSynced(key, gang->meta.uid, gang->meta.generation);
  if (first) {
    Log(1, "backend", std::string(backend->Name()) + " synced PodGang " + key);
  }
  auto part_of = gang->meta.labels.find(api::kLabelPartOf);
  if (part_of != gang->meta.labels.end() && ctx_.enqueue_pcs) {
    ctx_.enqueue_pcs(kube::controller::Key(gang->meta.namespace_, part_of->second));
  }
  return ReconcileResult::Done();
}

}  // namespace copse::grove::podgang
