#include "plugins/defaults/defaults.h"

#include "plugins/balanced_allocation/balanced_allocation.h"
#include "plugins/default_binder/default_binder.h"
#include "plugins/default_preemption/default_preemption.h"
#include "plugins/domain_packing/domain_packing.h"
#include "plugins/dynamic_resources/dynamic_resources.h"
#include "plugins/inter_pod_affinity/inter_pod_affinity.h"
#include "plugins/node_affinity/node_affinity.h"
#include "plugins/node_name/node_name.h"
#include "plugins/node_ports/node_ports.h"
#include "plugins/node_resources_fit/fit.h"
#include "plugins/node_unschedulable/node_unschedulable.h"
#include "plugins/pod_topology_spread/pod_topology_spread.h"
#include "plugins/priority_sort/priority_sort.h"
#include "plugins/scheduling_gates/scheduling_gates.h"
#include "plugins/taint_toleration/taint_toleration.h"

namespace copse::plugins {

copse::Status RegisterDefaultPlugins(Registry& registry) {
  const std::pair<std::string_view, PluginFactory> plugins[] = {
      {kSchedulingGatesName, &SchedulingGates::Create},
      {kPrioritySortName, &PrioritySort::Create},
      {kNodeUnschedulableName, &NodeUnschedulable::Create},
      {kNodeNameName, &NodeName::Create},
      {kTaintTolerationName, &TaintToleration::Create},
      {kNodeAffinityName, &NodeAffinity::Create},
      {kNodePortsName, &NodePorts::Create},
      {kNodeResourcesFitName, &Fit::Create},
      {kPodTopologySpreadName, &PodTopologySpread::Create},
      {kInterPodAffinityName, &InterPodAffinity::Create},
      {kDefaultPreemptionName, &DefaultPreemption::Create},
      {kBalancedAllocationName, &BalancedAllocation::Create},
      {kDefaultBinderName, &DefaultBinder::Create},
      {kDomainPackingName, &DomainPacking::Create},
      {kDynamicResourcesName, &DynamicResources::Create},
  };
  for (const auto& [name, factory] : plugins) {
    copse::Status s = registry.Register(std::string(name), factory);
    if (!s.ok()) return s;
  }
  return copse::Status::Ok();
}

Profile DefaultProfile(std::string scheduler_name) {
  Profile profile;
  profile.scheduler_name = std::move(scheduler_name);
  profile.plugins.multi_point.enabled = {
      {std::string(kSchedulingGatesName), 0},    {std::string(kPrioritySortName), 0},
      {std::string(kNodeUnschedulableName), 0},  {std::string(kNodeNameName), 0},
      {std::string(kTaintTolerationName), 3},    {std::string(kNodeAffinityName), 2},
      {std::string(kNodePortsName), 0},          {std::string(kNodeResourcesFitName), 1},
      {std::string(kPodTopologySpreadName), 2},  {std::string(kInterPodAffinityName), 2},
      {std::string(kDynamicResourcesName), 0},   {std::string(kDefaultPreemptionName), 0},
      {std::string(kBalancedAllocationName), 1}, {std::string(kDefaultBinderName), 0},
      {std::string(kDomainPackingName), 1},
  };
  return profile;
}

Profile KubeDefaultProfile(std::string scheduler_name) {
  Profile profile = DefaultProfile(std::move(scheduler_name));
  std::erase_if(profile.plugins.multi_point.enabled,
                [](const PluginRef& ref) { return ref.name == kDomainPackingName; });
  FitArgs fit;
  fit.accelerator_strategy.enabled = false;
  profile.plugin_args[std::string(kNodeResourcesFitName)] = fit;
  BalancedAllocationArgs balanced;
  balanced.skip_accelerator_pods = false;
  profile.plugin_args[std::string(kBalancedAllocationName)] = balanced;
  return profile;
}

}  // namespace copse::plugins
