#pragma once
// The PodCliqueSet controller. For every replica i of a PodCliqueSet it keeps:
//   1. the headless Service <pcs>-<i>;
//   2. the PodGangs of the replica, created *before* their pods with empty
//      podReferences and Initialized=False (PodsPending); once every pod of a
//      gang exists and carries grove.io/podgang, Initialized goes
//      RefsSyncing -> the sorted podReferences are written -> Initialized=True
//      (Ready), and only after the gang's backend has created its scheduler
//      objects (GangSyncTracker). Afterwards references follow scale-out/in
//      and pod replacement without Initialized flipping back;
//   3. the standalone PodCliques <pcs>-<i>-<clique> and the scaling groups
//      <pcs>-<i>-<sg> (whose own controller creates their PodCliques);
// deletes what belongs to replicas >= spec.replicas and gangs no longer
// expected; terminates a replica (deletes its PodCliques, scaling groups and
// PodGangs, which are then recreated) when a standalone PodClique or a
// scaling group has had MinAvailableBreached=True for terminationDelay; and
// writes status (replicas, availableReplicas, updatedReplicas,
// hpaPodSelector, podGangStatuses, SchedulingFeaturesIgnored).
//
// Thread-safety: Reconcile may run concurrently for different keys.

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "grove/runtime/context.h"
#include "kube/controller/controller.h"

namespace copse::grove::podcliqueset {

class Reconciler {
 public:
  explicit Reconciler(runtime::Context& context) : ctx_(context) {}
  kube::controller::ReconcileResult Reconcile(const std::string& key);

  // The outcome of admission checks for one PodCliqueSet generation: they
  // only change with the spec, the labels or the topology bindings, so they
  // are remembered rather than recomputed on every pod event.
  struct Admitted {
    std::string uid;
    int64_t generation = 0;
    uint64_t topology_generation = 0;
    Labels labels;
    bool ok = false;
    backend::SchedulerBackend* backend = nullptr;
    std::vector<std::string> ignored;
  };

 private:
  runtime::Context& ctx_;
  std::mutex mu_;
  std::map<std::string, Admitted> admitted_;
};

}  // namespace copse::grove::podcliqueset
