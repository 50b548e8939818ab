#pragma once
// The ReplicaSet controller (kube's ReplicaSetController):
//   1. The pods it controls are those whose controller ownerReference is the
//      ReplicaSet's UID; finished (Succeeded/Failed) and terminating pods do
//      not count.
//   2. While its expectations are met (the pods it created or deleted have
//      all been seen), it creates the missing pods from the template
//      (generateName "<rs>-", slow-start batches) or deletes the surplus,
//      least valuable first (SortForDeletion).
//   3. It writes status: replicas, fullyLabeledReplicas, readyReplicas,
//      availableReplicas (Ready for minReadySeconds), observedGeneration, and
//      the ReplicaFailure condition while creating or deleting fails.
// A pod that becomes ready but not yet available requeues the key for when
// it will be.
//
// Thread-safety: Reconcile may run on several workers for different keys.

#include <string>

#include "apiserver/controllers/common.h"
#include "kube/controller/controller.h"
#include "kube/controller/expectations.h"

namespace copse::apiserver::controllers {

class ReplicaSetReconciler {
 public:
  explicit ReplicaSetReconciler(const Context& ctx);
  kube::controller::ReconcileResult Reconcile(const std::string& key);
  kube::controller::Expectations& expectations() { return expectations_; }

 private:
  const Context& ctx_;
  kube::controller::Expectations expectations_;
};

}  // namespace copse::apiserver::controllers
