#pragma once
// The DaemonSet controller (kube's DaemonSetsController), over the nodes the
// API server has (the synthetic nodes of `copse local`):
//   1. A node should run the daemon pod when the template's nodeName (if
//      any), nodeSelector and required node affinity select it and every
//      NoSchedule/NoExecute taint is tolerated by the template's tolerations
//      plus the ones kube adds to daemon pods (not-ready, unreachable,
//      disk-/memory-/pid-pressure, unschedulable).
//   2. Such a node without a live daemon pod gets one: generateName
//      "<ds>-", pinned to the node by a required nodeAffinity term on
//      metadata.name (as kube since 1.12; the scheduler binds it), those
//      tolerations, and the labels controller-revision-hash and
//      pod-template-generation. Extra pods on a node (the oldest is kept),
//      pods on nodes that should not run them or no longer exist, and Failed
//      pods are deleted.
//   3. RollingUpdate replaces pods of an older template: with maxSurge 0,
//      old pods are deleted while at most maxUnavailable nodes lack an
//      available pod (unavailable old pods go first); with maxSurge > 0, a
//      new pod starts next to the old one on up to maxSurge nodes and the old
//      one goes once the new one is available. OnDelete replaces nothing.
//   4. Status: desiredNumberScheduled, currentNumberScheduled,
//      numberMisscheduled, numberReady, updatedNumberScheduled,
//      numberAvailable, numberUnavailable, observedGeneration.
//
// Thread-safety: Reconcile may run on several workers for different keys.

#include <string>

#include "apiserver/controllers/common.h"
#include "kube/controller/controller.h"
#include "kube/controller/expectations.h"

namespace copse::apiserver::controllers {

inline constexpr std::string_view kPodTemplateGenerationLabel = "pod-template-generation";

// Whether a pod with `spec` may run on `node` as a daemon pod (step 1).
bool NodeShouldRunDaemonPod(const kube::PodSpec& spec, const kube::Node& node);

class DaemonSetReconciler {
 public:
  explicit DaemonSetReconciler(const Context& ctx);
  kube::controller::ReconcileResult Reconcile(const std::string& key);
  kube::controller::Expectations& expectations() { return expectations_; }

 private:
  const Context& ctx_;
  kube::controller::Expectations expectations_;
};

}  // namespace copse::apiserver::controllers
