#pragma once
// The in-tree plugin set and the default profile, registered explicitly here
// (the only place that lists every plugin).
//
// DefaultProfile mirrors kube-scheduler's default MultiPoint list (minus the
// volume, image and DRA plugins copse does not have), in kube's order, which
// is also the Filter order and so decides which reason a node reports:
//   SchedulingGates, PrioritySort, NodeUnschedulable, NodeName,
//   TaintToleration (3), NodeAffinity (2), NodePorts, NodeResourcesFit (1),
//   PodTopologySpread (2), InterPodAffinity (2), DefaultPreemption,
//   NodeResourcesBalancedAllocation (1), DefaultBinder,
// then copse's DomainPacking (1), which scores only pods requesting an
// accelerator (with NodeResourcesFit's acceleratorStrategy: accelerator pods
// are packed, CPU-only pods keep kube's LeastAllocated + BalancedAllocation).

#include <string>

#include "core/result.h"
#include "plugins/framework/profile.h"
#include "plugins/framework/registry.h"

namespace copse::plugins {

// Registers every in-tree plugin. Fails only if a name is already taken.
copse::Status RegisterDefaultPlugins(Registry& registry);

Profile DefaultProfile(std::string scheduler_name = "copse-scheduler");

// kube-scheduler's default profile as kube scores it: DefaultProfile without
// DomainPacking, NodeResourcesFit's acceleratorStrategy None and
// BalancedAllocation balancing accelerator pods too (for a profile that
// stands in for kube's default-scheduler).
Profile KubeDefaultProfile(std::string scheduler_name = "default-scheduler");

}  // namespace copse::plugins
