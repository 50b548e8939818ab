#pragma once
// The Job controller's gangs (Kubernetes 1.36's WorkloadWithJob): an Indexed
// Job whose parallelism is above 1 and equals its completions, and whose pod
// template names no scheduling group, gets one scheduling.k8s.io Workload and
// one PodGroup, and its pods join that PodGroup:
//   Workload   "<job>-<hash>" (the hash from the Job's UID, as upstream's
//              computeWorkloadName), a controller ownerReference to the
//              Job, spec.controllerRef {batch, Job, <job>}, one pod group
//              template "<job>-pgt-0" with policy gang, minCount =
//              parallelism; made only for a Job that has not started;
//   PodGroup   "<workload>-<template>-<hash>" (computePodGroupName), owned
//              by the Job (controller) and the Workload, referencing the
//              template, with its scheduling policy;
//   pods       spec.schedulingGroup.podGroupName and an ownerReference (not
//              a controller) to the PodGroup.
// Objects are written in the newest version the server serves (what the
// controllers' caches watch). A Workload or PodGroup the Job does not
// control, or more than one, leaves the Job to pod-by-pod scheduling, as
// upstream.
//
// Thread-safety: pure functions except EnsureJobGang (client writes).

#include <optional>
#include <string>

#include "apiserver/controllers/common.h"
#include "kube/apps.h"

namespace copse::apiserver::controllers {

// Whether the Job's pods should be a gang (see above).
bool IsGangCandidate(const kube::Job& job);

// Upstream's names: "<job>-<hash of the UID>" and
// "<workload>-<template>-<hash of both>", cut to 253 characters.
std::string JobWorkloadName(const kube::Job& job);
std::string JobPodGroupName(std::string_view workload, std::string_view template_name);

// The PodGroup the Job's pods join, as the pods' ownerReference names it.
struct JobPodGroup {
  std::string name;
  kube::OwnerReference owner;  // not a controller
};

// Finds or creates the Job's Workload and PodGroup. `new_job`: the Job has
// not started (no pods, no start time, nothing succeeded or failed, never
// suspended); only then are objects created. nullopt: the Job's pods are
// scheduled pod by pod.
Result<std::optional<JobPodGroup>> EnsureJobGang(const Context& ctx, const kube::Job& job,
                                                 bool new_job);

}  // namespace copse::apiserver::controllers
