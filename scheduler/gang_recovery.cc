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
  // Whether a gang is broken depends only on its members, its spec and which
  // nodes exist; the loop calls this every second, so a large cluster with
  // no broken gang and no change costs nothing here.
  if (broken_since_.empty() && checked_ && checked_gang_changes_ == gangs.changes() &&
      checked_node_changes_ == cache.node_set_changes()) {
    return due;
  }
  checked_ = true;
  checked_gang_changes_ = gangs.changes();
  checked_node_changes_ = cache.node_set_changes();
  std::set<std::string> seen;
  std::map<std::string, int32_t, std::less<>> placed;
  gangs.ForEachGroupWithBoundMembers([&](const GangTracker::BoundGroupView& group) {
    // 1. Placed members per subgroup.
    placed.clear();
    for (const auto& [uid, sub_group] : group.finished) ++placed[sub_group];
    int32_t lost = 0;
    for (const auto& [uid, pod] : group.bound) {
      if (cache.HasNode(pod->node_name)) {
        ++placed[pod->sub_group];
      } else {
        ++lost;
      }
    }
    if (group.spec.IsSatisfied(kRootGroup, placed)) return;
    // 2. Broken: since when.
    seen.insert(group.key);
    auto [it, inserted] = broken_since_.try_emplace(group.key, now);
    if (now - it->second < timeout_) return;
    // 3. Due.
    it->second = now;
    int32_t total = 0;
    for (const auto& [name, count] : placed) total += count;
    Due d;
    d.key = GroupUnitKey(group.kind, group.ns, group.name);
    d.message = "pod group " + group.spec.namespace_ + "/" + group.spec.name + " has " +
                std::to_string(total) + " of its " +
                std::to_string(group.spec.RequiredPods(kRootGroup)) + " required pods placed" +
                (lost > 0 ? " (" + std::to_string(lost) + " bound to nodes that no longer exist)"
                          : std::string()) +
                " and could not be completed for " +
                std::to_string(std::chrono::duration_cast<std::chrono::seconds>(timeout_).count()) +
                "s: evicting its bound members so it can be placed again whole";
    for (const auto& [uid, pod] : group.bound) d.bound.push_back(pod);
    due.push_back(std::move(d));
  });
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
