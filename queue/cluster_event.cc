#include "queue/cluster_event.h"

#include <algorithm>
#include <array>

namespace copse::queue {

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

bool SameTolerations(const PodInfo& a, const PodInfo& b) { return a.tolerations == b.tolerations; }

// Some request of `new_pod` is lower than in `old_pod`.
bool ScaledDown(const PodInfo& old_pod, const PodInfo& new_pod) {
  const size_t n = std::max(old_pod.requests.size(), new_pod.requests.size());
  for (size_t i = 0; i < n; ++i) {
    const auto id = static_cast<ResourceId>(i);
    if (new_pod.requests.Get(id) < old_pod.requests.Get(id)) return true;
  }
  return false;
}

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

ClusterEventList PodSchedulingPropertiesChange(const PodInfo* old_pod, const PodInfo& new_pod) {
  ClusterEventList events;
  if (old_pod == nullptr) {
    events.push_back({EventResource::kUnscheduledPod, kActionUpdateOther});
    return events;
  }
  if (old_pod->labels != new_pod.labels) {
    events.push_back({EventResource::kUnscheduledPod, kActionUpdatePodLabel});
  }
  if (ScaledDown(*old_pod, new_pod)) {
    events.push_back({EventResource::kUnscheduledPod, kActionUpdatePodScaleDown});
  }
  if (!SameTolerations(*old_pod, new_pod)) {
    events.push_back({EventResource::kUnscheduledPod, kActionUpdatePodToleration});
  }
  if (events.empty()) events.push_back({EventResource::kUnscheduledPod, kActionUpdateOther});
  return events;
}

}  // namespace copse::queue
