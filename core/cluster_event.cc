#include "core/cluster_event.h"

#include <array>

namespace copse {

std::string_view EventResourceName(EventResource resource) noexcept {
  switch (resource) {
    case EventResource::kPod:
      return "Pod";
    case EventResource::kAssignedPod:
      return "AssignedPod";
    case EventResource::kUnscheduledPod:
      return "UnscheduledPod";
    case EventResource::kNode:
      return "Node";
    case EventResource::kNamespace:
      return "Namespace";
    case EventResource::kService:
      return "Service";
    case EventResource::kPodGroup:
      return "PodGroup";
    case EventResource::kWorkload:
      return "Workload";
    case EventResource::kTopology:
      return "Topology";
    case EventResource::kWildCard:
      return "*";
  }
  return "Unknown";
}

namespace {

struct NamedAction {
  ActionType action;
  std::string_view name;
};

constexpr std::array<NamedAction, 12> kNamedActions = {{
    {kActionAdd, "Add"},
    {kActionDelete, "Delete"},
    {kActionUpdateNodeAllocatable, "UpdateNodeAllocatable"},
    {kActionUpdateNodeLabel, "UpdateNodeLabel"},
    {kActionUpdateNodeTaint, "UpdateNodeTaint"},
    {kActionUpdateNodeCondition, "UpdateNodeCondition"},
    {kActionUpdateNodeAnnotation, "UpdateNodeAnnotation"},
    {kActionUpdatePodLabel, "UpdatePodLabel"},
    {kActionUpdatePodScaleDown, "UpdatePodScaleDown"},
    {kActionUpdatePodToleration, "UpdatePodToleration"},
    {kActionUpdatePodSchedulingGatesEliminated, "UpdatePodSchedulingGatesEliminated"},
    {kActionUpdateOther, "UpdateOther"},
}};

}  // namespace

std::string ActionTypeName(ActionType action) {
  if (action == kActionAll) return "All";
  if (action == kActionUpdate) return "Update";
  std::string out;
  for (const NamedAction& named : kNamedActions) {
    if (!action.Intersects(named.action)) continue;
    if (!out.empty()) out += '|';
    out += named.name;
  }
  return out.empty() ? std::string("None") : out;
}

std::string ClusterEvent::Label() const {
  if (!custom_label.empty()) return std::string(custom_label);
  std::string out(EventResourceName(resource));
  out += ActionTypeName(action);
  return out;
}

bool MatchClusterEvents(const ClusterEvent& registered, const ClusterEvent& incoming) noexcept {
  const bool resource_matches = registered.resource == EventResource::kWildCard ||
                                registered.resource == incoming.resource ||
                                (registered.resource == EventResource::kPod &&
                                 (incoming.resource == EventResource::kAssignedPod ||
                                  incoming.resource == EventResource::kUnscheduledPod));
  return resource_matches && registered.action.Intersects(incoming.action);
}

}  // namespace copse
