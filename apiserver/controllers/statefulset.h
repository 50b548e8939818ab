#pragma once
// The StatefulSet controller (kube's StatefulSetController, without
// ControllerRevision objects and volumeClaimTemplates):
//   1. Pods are "<sts>-<ordinal>" for ordinals [ordinals.start,
//      ordinals.start + replicas), with hostname = pod name, subdomain =
//      serviceName (the headless Service's DNS), and the labels
//      statefulset.kubernetes.io/pod-name, apps.kubernetes.io/pod-index and
//      controller-revision-hash ("<sts>-<template hash>").
//   2. OrderedReady: one step at a time, lowest ordinal first: a missing pod
//      is created only when every pod below it is Running and Ready; a
//      finished pod is deleted (and recreated next); scaling down removes the
//      highest ordinal first, only while all others are healthy. Parallel:
//      every missing pod is created and every surplus pod deleted at once.
//   3. RollingUpdate: from the highest ordinal down to partition, one pod at a
//      time, a pod at an old revision is deleted (and recreated at the new
//      one) once the pods above it are healthy. OnDelete: pods are replaced
//      only when deleted. (Recreated pods always get the update revision:
//      without ControllerRevisions the old template is not kept.)
//   4. Status: replicas, readyReplicas, availableReplicas, currentReplicas,
//      updatedReplicas, currentRevision, updateRevision (current becomes
//      update once every pod is updated and ready), observedGeneration.
//
// Thread-safety: Reconcile may run on several workers for different keys.

#include <string>

#include "apiserver/controllers/common.h"
#include "kube/controller/controller.h"
#include "kube/controller/expectations.h"

namespace copse::apiserver::controllers {

inline constexpr std::string_view kStatefulSetPodNameLabel = "statefulset.kubernetes.io/pod-name";
inline constexpr std::string_view kPodIndexLabel = "apps.kubernetes.io/pod-index";

class StatefulSetReconciler {
 public:
  explicit StatefulSetReconciler(const Context& ctx);
  kube::controller::ReconcileResult Reconcile(const std::string& key);
  kube::controller::Expectations& expectations() { return expectations_; }

 private:
  const Context& ctx_;
  kube::controller::Expectations expectations_;
};

}  // namespace copse::apiserver::controllers
