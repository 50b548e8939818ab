#include "scheduler/queue_events.h"

#include <string_view>

namespace copse::scheduler {
namespace {

using queue::ClusterEvent;
using queue::EventResource;

struct Interest {
  std::string_view plugin;
  EventResource resource;
  queue::ActionType actions;
};

// kube-scheduler's EventsToRegister of the in-tree plugins (v1.32).
constexpr queue::ActionType kNodeAll =
    queue::kActionAdd | queue::kActionDelete | queue::kActionUpdate;
const Interest kInterests[] = {
    {"NodeName", EventResource::kNode, queue::kActionAdd | queue::kActionUpdate},
    {"NodeUnschedulable", EventResource::kNode, queue::kActionAdd | queue::kActionUpdateNodeTaint},
    {"NodeUnschedulable", EventResource::kUnscheduledPod, queue::kActionUpdatePodToleration},
    {"TaintToleration", EventResource::kNode, queue::kActionAdd | queue::kActionUpdateNodeTaint},
    {"TaintToleration", EventResource::kUnscheduledPod, queue::kActionUpdatePodToleration},
    {"NodeAffinity", EventResource::kNode, queue::kActionAdd | queue::kActionUpdateNodeLabel},
    {"NodeAffinity", EventResource::kUnscheduledPod, queue::kActionUpdate},
    {"NodePorts", EventResource::kAssignedPod, queue::kActionDelete},
    {"NodePorts", EventResource::kNode, queue::kActionAdd | queue::kActionUpdate},
    {"NodeResourcesFit", EventResource::kAssignedPod,
     queue::kActionDelete | queue::kActionUpdatePodScaleDown},
    {"NodeResourcesFit", EventResource::kNode,
     queue::kActionAdd | queue::kActionUpdateNodeAllocatable | queue::kActionUpdateNodeTaint |
         queue::kActionUpdateNodeLabel},
    {"NodeResourcesFit", EventResource::kUnscheduledPod, queue::kActionUpdatePodScaleDown},
    {"PodTopologySpread", EventResource::kAssignedPod,
     queue::kActionAdd | queue::kActionUpdatePodLabel | queue::kActionDelete},
    {"PodTopologySpread", EventResource::kNode, kNodeAll},
    {"PodTopologySpread", EventResource::kUnscheduledPod, queue::kActionUpdatePodLabel},
    {"InterPodAffinity", EventResource::kAssignedPod,
     queue::kActionAdd | queue::kActionUpdatePodLabel | queue::kActionDelete},
    {"InterPodAffinity", EventResource::kNode, queue::kActionAdd | queue::kActionUpdateNodeLabel},
    {"InterPodAffinity", EventResource::kUnscheduledPod, queue::kActionUpdatePodLabel},
    {"InterPodAffinity", EventResource::kNamespace, queue::kActionAdd | queue::kActionUpdate},
};

template <typename T>
bool SameList(const std::vector<T>& a, const std::vector<T>& b) {
  return a == b;
}

}  // namespace

queue::PluginId SchedulingGatesPluginId(const plugins::Framework& framework) {
  return static_cast<queue::PluginId>(framework.num_plugins());
}

queue::QueueProfile BuildQueueProfile(const plugins::Framework& framework) {
  queue::QueueProfile profile;
  profile.scheduler_name = framework.scheduler_name();
  for (const Interest& interest : kInterests) {
    std::optional<plugins::PluginIndex> index = framework.FindPlugin(interest.plugin);
    if (!index.has_value()) continue;
    profile.hints.Register(static_cast<queue::PluginId>(*index),
                           ClusterEvent{interest.resource, interest.actions});
  }
  if (std::optional<plugins::PluginIndex> spread = framework.FindPlugin("PodTopologySpread")) {
    profile.cross_topology_plugins.Insert(static_cast<queue::PluginId>(*spread));
  }
  // SchedulingGates: pods with gates wait without costing cycles; an update
  // removing the last gate readmits them (the queue re-runs gates on updates).
  const queue::PluginId gates = SchedulingGatesPluginId(framework);
  profile.pre_enqueue.push_back({gates, "SchedulingGates", [](const PodInfo& pod) {
                                   return pod.scheduling_gates.empty() ? queue::GateDecision::kAdmit
                                                                       : queue::GateDecision::kGate;
                                 }});
  profile.hints.Register(gates, ClusterEvent{EventResource::kUnscheduledPod,
                                             queue::kActionUpdatePodSchedulingGatesEliminated});
  return profile;
}

queue::ActionType NodeUpdateActions(const kube::Node& old_node, const kube::Node& new_node) {
  queue::ActionType action;
  if (old_node.status.allocatable != new_node.status.allocatable) {
    action = action | queue::kActionUpdateNodeAllocatable;
  }
  if (old_node.meta.labels != new_node.meta.labels) action = action | queue::kActionUpdateNodeLabel;
  if (!SameList(old_node.spec.taints, new_node.spec.taints) ||
      old_node.spec.unschedulable != new_node.spec.unschedulable) {
    action = action | queue::kActionUpdateNodeTaint;
  }
  if (old_node.meta.annotations != new_node.meta.annotations) {
    action = action | queue::kActionUpdateNodeAnnotation;
  }
  // Conditions: only readiness-relevant changes (heartbeats are not events).
  if (old_node.IsReady() != new_node.IsReady()) action = action | queue::kActionUpdateNodeCondition;
  return action;
}

}  // namespace copse::scheduler
