#pragma once
// The backend controller of GREP-375: reacts to PodGang creation and spec
// changes (the operator's event filter drops status-only updates) by calling
// SyncPodGang on the PodGang's backend (label grove.io/scheduler-name, else
// the default), records the synced generation so Initialized=True can wait
// for the scheduler objects, and calls OnPodGangDelete for deleted PodGangs.
//
// Thread-safety: Reconcile may run concurrently for different keys;
// RecordDeleted is thread-safe.

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "grove/runtime/context.h"
#include "kube/controller/controller.h"

namespace copse::grove::podgang {

class Reconciler {
 public:
  explicit Reconciler(runtime::Context& context) : ctx_(context) {}
  kube::controller::ReconcileResult Reconcile(const std::string& key);
  // Remembers the final state of a deleted PodGang for OnPodGangDelete.
  void RecordDeleted(std::shared_ptr<const api::PodGang> gang);

 private:
  backend::SchedulerBackend* BackendFor(const api::PodGang& gang) const;

  runtime::Context& ctx_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<const api::PodGang>> deleted_;
};

}  // namespace copse::grove::podgang
