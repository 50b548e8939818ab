#include "core/pending_requests.h"

#include "core/check.h"

namespace copse {

void PendingRequests::Add(const PodInfo& pod) {
  bool any = false;
  for (size_t r = kResourceIdPods + 1; r < pod.requests.size(); ++r) {
    const int64_t request = pod.requests.Get(static_cast<ResourceId>(r));
    if (request <= 0) continue;
    if (by_resource_.size() <= r) by_resource_.resize(r + 1);
    ++by_resource_[r][request];
    any = true;
  }
  if (any) ++pods_;
}

void PendingRequests::Remove(const PodInfo& pod) {
  bool any = false;
  for (size_t r = kResourceIdPods + 1; r < pod.requests.size(); ++r) {
    const int64_t request = pod.requests.Get(static_cast<ResourceId>(r));
    if (request <= 0) continue;
    COPSE_CHECK(r < by_resource_.size()) << "PendingRequests::Remove of a pod never added";
    auto& sizes = by_resource_[r];
    auto it = sizes.find(request);
    COPSE_CHECK(it != sizes.end()) << "PendingRequests::Remove of a pod never added";
    if (--it->second == 0) sizes.erase(it);
    any = true;
  }
  if (any) --pods_;
}

int64_t PendingRequests::SmallestOther(ResourceId resource, int64_t own) const noexcept {
  if (resource >= by_resource_.size()) return 0;
  const auto& sizes = by_resource_[resource];
  auto it = sizes.begin();
  if (it == sizes.end()) return 0;
  if (it->first == own && it->second == 1) ++it;
  return it == sizes.end() ? 0 : it->first;
}

}  // namespace copse
