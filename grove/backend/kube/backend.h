#pragma once
// The kube-scheduler backend (always enabled). Pods keep the default
// scheduler (schedulerName "default-scheduler" when unset).
//
// Without GangScheduling (the default) it creates nothing, as upstream's
// phase-1 kube backend. With config {GangScheduling: true} each PodGang gets a
// scheduling.k8s.io/v1alpha2 Workload with one gang template (minCount = the
// PodGang's total minReplicas, required topology as a topology constraint)
// and a PodGroup instantiating it, both named after the PodGang and owned by
// it; pods join with spec.schedulingGroup.podGroupName.
//
// Capabilities it lacks, and its choice for each (spec 000: fail or pass through):
//   required topology packing without GangScheduling  -> reject (correctness)
//   gang scheduling without GangScheduling           -> pass through
//   preferred packing, clique/scaling-group packing   -> pass through
//
// Thread-safety: see SchedulerBackend.

#include <memory>

#include "grove/backend/manager.h"

namespace copse::grove::backend {

Result<std::unique_ptr<SchedulerBackend>> NewKubeBackend(const SchedulerProfile& profile,
                                                         const BackendContext& context);

}  // namespace copse::grove::backend
