#include "queue/cluster_event.h"

#include <algorithm>

namespace copse::queue {

namespace {

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
