#pragma once
// kube-controller-manager's podgroup-protection-controller: the API server
// puts the finalizer scheduling.k8s.io/podgroup-protection on every PodGroup
// it creates (apiserver/scheduling_api.h), so a PodGroup being deleted stays
// while pods still join it; this controller removes the finalizer once no
// pod that is not Succeeded or Failed names the group in
// spec.schedulingGroup.podGroupName. Pods are counted from the shared pod
// cache (Caches' kIndexPodGroup); the PodGroup is read from the Workload API
// informer in the version the controllers watch.
//
// Thread-safety: Reconcile may run on several workers for different keys.

#include <string>

#include "apiserver/controllers/common.h"
#include "kube/controller/controller.h"

namespace copse::apiserver::controllers {

class PodGroupProtectionReconciler {
 public:
  explicit PodGroupProtectionReconciler(const Context& ctx) : ctx_(ctx) {}
  // `key` is "namespace/podgroup".
  kube::controller::ReconcileResult Reconcile(const std::string& key);

  // Whether a PodGroup (its JSON) is being deleted and still holds the
  // finalizer: the only groups the controller acts on.
  static bool IsDeletionCandidate(const kube::KubeObject& pod_group);

 private:
  const Context& ctx_;
};

}  // namespace copse::apiserver::controllers
