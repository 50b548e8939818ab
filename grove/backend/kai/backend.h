#pragma once
// The kai-scheduler backend, shaped as upstream Grove's KAI backend: each
// PodGang becomes a scheduling.run.ai/v2alpha2 PodGroup of the same name,
// owned by the PodGang, with minMember (sum of minReplicas), queue (label or
// annotation kai.scheduler/queue on the PodCliqueSet, mirrored onto the
// PodGang), priorityClassName, topologyConstraint {topology,
// requiredTopologyLevel, preferredTopologyLevel} and subGroups (scaling-group
// replicas as parents, one leaf per PodGroup with its minMember).
// Pods get schedulerName kai-scheduler, the annotations pod-group-name=<PodGang>
// and kai.scheduler/skip-podgrouper=true, and the label
// kai.scheduler/subgroup-name=<PodClique>.
//
// Admission: a PodCliqueSet without a KAI queue is rejected (as upstream),
// queues that disagree between the PodCliqueSet and its cliques too.
//
// Thread-safety: see SchedulerBackend.

#include <memory>

#include "grove/backend/manager.h"

namespace copse::grove::backend {

Result<std::unique_ptr<SchedulerBackend>> NewKaiBackend(const SchedulerProfile& profile,
                                                        const BackendContext& context);

// The KAI PodGroup for `gang` as JSON text (exposed for tests).
std::string KaiPodGroupFor(const api::PodGang& gang, const std::string& topology);

}  // namespace copse::grove::backend
