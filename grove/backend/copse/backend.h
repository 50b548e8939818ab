#pragma once
// The copse-scheduler backend (copse's default): each PodGang becomes a
// scheduling.copse.dev/v1alpha1 PodGroup of the same name, owned by the
// PodGang:
//   spec.minMember        sum of the PodGang's minReplicas
//   spec.minSubGroup      every direct child
//   spec.subGroups[]      one per scaling-group replica (a parent, from the
//                         PodGang's topologyConstraintGroupConfigs) and one
//                         leaf per PodGroup (= PodClique) with minMember =
//                         minReplicas and parent = its scaling-group replica
//   topologyConstraint    {topology: <Topology name>, requiredTopologyLevel,
//                         preferredTopologyLevel} from packConstraint; the
//                         Topology is created from the ClusterTopologyBinding
//                         when the binding does not name an existing one
// Pods get schedulerName copse-scheduler and the labels
// scheduling.copse.dev/pod-group=<PodGang> and scheduling.copse.dev/subgroup=<PodClique>.
// Gang scheduling and topology packing are native: nothing is ignored.
//
// Thread-safety: see SchedulerBackend.

#include <memory>

#include "grove/backend/manager.h"

namespace copse::grove::backend {

Result<std::unique_ptr<SchedulerBackend>> NewCopseBackend(const SchedulerProfile& profile,
                                                          const BackendContext& context);

// The copse PodGroup for `gang` (exposed for tests): the full object as JSON text.
std::string CopsePodGroupFor(const api::PodGang& gang, const std::string& topology);

}  // namespace copse::grove::backend
