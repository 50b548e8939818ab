#pragma once
// The PodClique controller: keeps spec.replicas pods with indices
// 0..replicas-1 and lifts their scheduling gate when their gang may run.
//
// Algorithm of one pass:
//   1. Wait while pod creations/deletions of this clique are not yet
//      visible in the cache (expectations: nothing is created twice).
//   2. Index tracker: each active pod's index comes from its hostname
//      <pclq>-<index> (recovered that way after an operator restart). Pods
//      with an unparsable hostname, an index >= replicas (so scale-in
//      removes the highest indices) or a duplicate index (the younger one)
//      are deleted; see grove/README.md for why.
//   3. Missing indices are created lowest first - only once the clique's
//      PodGang exists, so every PodGang precedes its pods - with the gate
//      grove.io/podgang-pending-creation, the GROVE_* env vars, hostname and
//      subdomain, the startup-order init container, and the backend's
//      PreparePod.
//   4. RollingRecreate: when the clique's pod template changed, one outdated
//      pod is deleted at a time, only while every other pod is Ready
//      (unscheduled, then not-ready, then highest-index pods first).
//      OnDelete leaves outdated pods alone.
//   5. The gate of a pod is removed once its PodGang is Initialized=True and
//      lists the pod in podReferences; pods of a scaled gang also wait until
//      the base gang has minReplicas pods scheduled in every PodGroup.
//   6. Status: replicas, readyReplicas, scheduledReplicas,
//      scheduleGatedReplicas, updatedReplicas, hpaPodSelector,
//      PodCliqueScheduled and MinAvailableBreached (True only after the clique
//      was available once, as upstream).
//
// Thread-safety: Reconcile may run concurrently for different keys.

#include <string>

#include "grove/runtime/context.h"
#include "kube/controller/controller.h"

namespace copse::grove::podclique {

class Reconciler {
 public:
  explicit Reconciler(runtime::Context& context) : ctx_(context) {}
  kube::controller::ReconcileResult Reconcile(const std::string& key);

 private:
  runtime::Context& ctx_;
};

}  // namespace copse::grove::podclique
