#pragma once
// The queue's view of cluster events. The event model itself (ClusterEvent,
// ActionType, EventObject, QueueingHint) lives in core/cluster_event.h, shared
// with the plugins that declare the events they react to; the queue uses it
// under its own namespace and adds the events it raises itself and the diff
// of a pending pod's update.
//
// Thread-safety: value types and pure functions.

#include <boost/container/small_vector.hpp>

#include "core/cluster_event.h"
#include "core/pod_info.h"

namespace copse::queue {

using copse::ActionType;
using copse::ActionTypeName;
using copse::ClusterEvent;
using copse::EventObject;
using copse::EventResource;
using copse::EventResourceName;
using copse::kActionAdd;
using copse::kActionAll;
using copse::kActionDelete;
using copse::kActionUpdate;
using copse::kActionUpdateNodeAllocatable;
using copse::kActionUpdateNodeAnnotation;
using copse::kActionUpdateNodeCondition;
using copse::kActionUpdateNodeLabel;
using copse::kActionUpdateNodeTaint;
using copse::kActionUpdateOther;
using copse::kActionUpdatePodLabel;
using copse::kActionUpdatePodScaleDown;
using copse::kActionUpdatePodSchedulingGatesEliminated;
using copse::kActionUpdatePodToleration;
using copse::MatchClusterEvents;

// Events the queue itself raises.
inline constexpr ClusterEvent kEventUnschedulableTimeout{EventResource::kWildCard, kActionAll,
                                                         "UnschedulableTimeout"};
inline constexpr ClusterEvent kEventForceActivate{EventResource::kWildCard, kActionAll,
                                                  "ForceActivate"};
inline constexpr ClusterEvent kEventAssignedPodAdd{EventResource::kAssignedPod, kActionAdd};
inline constexpr ClusterEvent kEventAssignedPodDelete{EventResource::kAssignedPod, kActionDelete};

using ClusterEventList = boost::container::small_vector<ClusterEvent, 4>;

// kube's PodSchedulingPropertiesChange: the update events of an unscheduled
// pod going from `old_pod` to `new_pod` (resource kUnscheduledPod): label
// change, requests scaled down, tolerations changed; kActionUpdateOther when
// none of those (or when old_pod is null). PodInfo does not carry
// schedulingGates, so kActionUpdatePodSchedulingGatesEliminated is never
// derived here; the queue re-runs PreEnqueue gates on every update instead.
ClusterEventList PodSchedulingPropertiesChange(const PodInfo* old_pod, const PodInfo& new_pod);

}  // namespace copse::queue
