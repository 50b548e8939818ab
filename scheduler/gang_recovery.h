#pragma once
// GangRecovery: finds gangs left bound below their minimum (issue 15,
// KAI's "stale gangs") so the loop can free them and place them again whole.
//
// A gang is broken when its placed members do not meet its minimum
// (GangSpec::IsSatisfied at the root): placed = bound members whose node the
// cache still has, plus members that ran and ended (they did their part).
// Members assumed and binding do not count: a gang that keeps re-placing a
// member whose bind keeps failing stays broken. A gang being bound is broken
// only for its binds' round trip, far below the timeout, and must be broken
// at every check (one a second) to become due. This happens when some members' binds
// fail for good (the rest stay bound) or when bound members vanish (their
// node was deleted, or they were deleted one by one).
//
// Check(now), called by the loop at most every check_interval:
//   1. For each copse gang with bound members (GangTracker::
//      ForEachGroupWithBoundMembers), decide whether it is broken.
//   2. A broken gang is remembered with the time it was first seen broken;
//      a gang no longer broken is forgotten (its re-placement worked: the
//      group is queued whenever it has pending members, and the Workload
//      Scheduling Cycle places them next to the bound ones).
//   3. A gang broken for `timeout` or longer is due: its bound members are
//      returned to be evicted, and its clock restarts (a second eviction
//      only if it is still broken a whole timeout later).
//
// Thread-safety: the scheduling loop's.

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "scheduler/cache.h"
#include "scheduler/gangs.h"

namespace copse::scheduler {

class GangRecovery {
 public:
  struct Due {
    queue::UnitKey key;
    std::vector<PodPtr> bound;  // to evict
    std::string message;        // why, for the condition and the event
  };

  // `timeout` 0: never due.
  explicit GangRecovery(Clock::Duration timeout,
                        Clock::Duration check_interval = std::chrono::seconds(1))
      : timeout_(timeout), check_interval_(check_interval) {}

  std::vector<Due> Check(const GangTracker& gangs, const Cache& cache, Clock::TimePoint now);
  // When Check next has something to do (nullopt: never).
  std::optional<Clock::TimePoint> NextDue() const;
  // Gangs currently seen below their minimum.
  size_t broken() const noexcept { return broken_since_.size(); }

 private:
  Clock::Duration timeout_;
  Clock::Duration check_interval_;
  std::optional<Clock::TimePoint> last_check_;
  // What the last check saw (GangTracker::changes, Cache::node_set_changes):
  // with no gang broken then and neither changed since, none is broken now.
  bool checked_ = false;
  uint64_t checked_gang_changes_ = 0;
  uint64_t checked_node_changes_ = 0;
  std::map<std::string, Clock::TimePoint> broken_since_;  // by unit key
};

}  // namespace copse::scheduler
