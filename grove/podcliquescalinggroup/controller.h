#pragma once
// The PodCliqueScalingGroup controller. For scaling group <pcs>-<i>-<sg> with
// spec.replicas R it keeps the PodCliques <pcs>-<i>-<sg>-<j>-<clique> for
// j < R (owned by the scaling group, labelled with their PodGang: the base
// gang below minAvailable, the scaled gang <pcsg>-<j-minAvailable> above),
// deletes those of replicas >= R (scale-in removes the highest indices),
// recreates a scaled replica (j >= minAvailable) whose PodCliques have been
// MinAvailableBreached for terminationDelay, and writes status: replicas,
// scheduledReplicas, availableReplicas, updatedReplicas, selector and
// MinAvailableBreached (True once fewer than minAvailable replicas are
// available after having been available).
//
// Thread-safety: Reconcile may run concurrently for different keys.

#include <string>

#include "grove/runtime/context.h"
#include "kube/controller/controller.h"

namespace copse::grove::podcliquescalinggroup {

class Reconciler {
 public:
  explicit Reconciler(runtime::Context& context) : ctx_(context) {}
  kube::controller::ReconcileResult Reconcile(const std::string& key);

 private:
  runtime::Context& ctx_;
};

}  // namespace copse::grove::podcliquescalinggroup
