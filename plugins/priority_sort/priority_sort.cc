#include "plugins/priority_sort/priority_sort.h"

namespace copse::plugins {

bool PrioritySort::Less(const QueuedPodView& a, const QueuedPodView& b) const noexcept {
  const int32_t pa = a.priority;
  const int32_t pb = b.priority;
  return pa > pb || (pa == pb && a.timestamp < b.timestamp);
}

Result<std::unique_ptr<Plugin>> PrioritySort::Create(const PluginArgs* /*args*/) {
  return std::unique_ptr<Plugin>(std::make_unique<PrioritySort>());
}

}  // namespace copse::plugins
