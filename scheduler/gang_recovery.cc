#include "scheduler/gang_recovery.h"

#include <algorithm>
#include <set>

namespace copse::scheduler {

std::vector<GangRecovery::Due> GangRecovery::Check(const GangTracker& gangs, const Cache& cache,
                                                   Clock::TimePoint now) {
  std::vector<Due> due;
  if (timeout_ <= Clock::Duration::zero()) return due;
  if (last_check_.has_value() && now - *last_check_ < check_interval_) return due;
  last_check_ = now;
  std::set<std::string> seen;
  for (GangTracker::BoundGroup& group : gangs.GroupsWithBoundMembers()) {
    // 1. Placed members per subgroup.
    std::map<std::string, int32_t, std::less<>> placed = group.finished;
    int32_t lost = 0;
    for (const PodPtr& pod : group.bound) {
      if (cache.HasNode(pod->node_name)) {
        ++placed[pod->sub_group];
      } else {
        ++lost;
      }
    }
    if (group.spec->IsSatisfied(kRootGroup, placed)) continue;
    // 2. Broken: since when.
    const std::string text = group.key.ToString();
    seen.insert(text);
    auto [it, inserted] = broken_since_.try_emplace(text, now);
    if (now - it->second < timeout_) continue;
    // 3. Due.
    it->second = now;
    int32_t total = 0;
    for (const auto& [name, count] : placed) total += count;
    Due d;
    d.key = group.key;
    d.message = "pod group " + group.spec->namespace_ + "/" + group.spec->name + " has " +
                std::to_string(total) + " of its " +
                std::to_string(group.spec->RequiredPods(kRootGroup)) + " required pods placed" +
                (lost > 0 ? " (" + std::to_string(lost) + " bound to nodes that no longer exist)"
                          : std::string()) +
                " and could not be completed for " +
                std::to_string(std::chrono::duration_cast<std::chrono::seconds>(timeout_).count()) +
                "s: evicting its bound members so it can be placed again whole";
    d.bound = std::move(group.bound);
    due.push_back(std::move(d));
  }
  std::erase_if(broken_since_, [&](const auto& entry) { return !seen.contains(entry.first); });
  return due;
}

std::optional<Clock::TimePoint> GangRecovery::NextDue() const {
  if (timeout_ <= Clock::Duration::zero() || broken_since_.empty()) return std::nullopt;
  Clock::TimePoint next = broken_since_.begin()->second + timeout_;
  for (const auto& [key, since] : broken_since_) next = std::min(next, since + timeout_);
  if (last_check_.has_value()) next = std::max(next, *last_check_ + check_interval_);
  return next;
}

}  // namespace copse::scheduler
