#pragma once
// GangBurst: choosing among queued gangs (pod groups) of one priority that
// arrived together, to place more of them.
//
// Pod groups of one priority are FIFO in activeQ. When a burst of them
// arrives at once, FIFO lets a large early gang take what several later
// ones needed. With a window W > 0 the loop:
//   1. Holds a pod group at activeQ's head that has never been attempted
//      until W after it entered the queue (HoldUntil), so that the rest of
//      its burst arrives; a retried group is never held. Units behind it in
//      activeQ (lower priority, or later) wait with it; a unit that sorts
//      before it (higher priority) is popped as usual.
//   2. Then pops every pod group at activeQ's head with that priority (up
//      to max_batch, stopping at the first unit that is a single pod or of
//      another priority) and runs their cycles in Order's order:
//        a. groups skipped more than max_skips times first, in queue order
//           (fairness: no group is passed over forever);
//        b. then groups with a required topology level (anywhere in the
//           spec) before unconstrained ones: their domains are the scarce
//           part, and an unconstrained group fits around them;
//        c. then by demand ascending (the members' extended resources, e.g.
//           accelerators, then CPU, then memory): with all-or-nothing gangs
//           the smallest first maximise the number placed (the rule for a
//           knapsack by count);
//        d. then queue order.
//      A group that ran after a group behind it in queue order counts one
//      skip (Skipped); the count is forgotten when the group is placed
//      (Placed) or leaves.
//   3. With plan_budget > 0 and no group overdue, the loop first asks
//      BurstPlan (scheduler/burst_plan.h) for an exact plan of the batch on
//      the current free capacity; when there is one, Order puts the groups
//      the plan places before the others (then b-d within each part), and
//      each planned group is steered to its planned nodes.
// W = 0 (the default) turns all of this off: strict FIFO within a priority,
// no hold, no extra waiting.
//
// Thread-safety: none; the scheduling loop owns it.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/clock.h"
#include "core/gang.h"
#include "queue/queued_unit.h"

namespace copse::scheduler {

struct GangBurstOptions {
  Clock::Duration window = Clock::Duration::zero();  // 0: off
  int32_t max_skips = 3;
  size_t max_batch = 64;
  // BurstPlan's time budget per batch; 0: GangBurst's order only.
  Clock::Duration plan_budget = std::chrono::milliseconds(5);
};

// One pod group of a burst, as Order sees it.
struct BurstGang {
  std::string key;                 // the unit key (UnitKey::ToString)
  bool topology_required = false;  // a required topology level in the spec
  int64_t extended = 0;            // sum of the members' extended resource requests
  int64_t cpu_milli = 0;           // sum of the members' CPU requests
  int64_t memory = 0;              // sum of the members' memory requests
};

// The BurstGang of `members` under `spec` (null: no spec known yet).
BurstGang DescribeBurstGang(std::string key, const GangSpec* spec,
                            std::span<const std::shared_ptr<const PodInfo>> members);

class GangBurst {
 public:
  explicit GangBurst(GangBurstOptions options) : options_(options) {}

  bool enabled() const noexcept { return options_.window > Clock::Duration::zero(); }
  const GangBurstOptions& options() const noexcept { return options_; }

  // When a never-attempted pod group at activeQ's head may be popped:
  // nullopt when now (or when it was attempted before, or the window is 0).
  std::optional<Clock::TimePoint> HoldUntil(const queue::QueuedUnit& head,
                                            Clock::TimePoint now) const;

  // The order to run `gangs` (given in queue order) in: indices into gangs.
  // `planned` (empty, or one flag per gang): gangs a BurstPlan places go
  // before the others. Counts a skip for every gang run after one behind it
  // in queue order.
  std::vector<size_t> Order(std::span<const BurstGang> gangs,
                            std::span<const uint8_t> planned = {});
  // Whether a gang has been skipped more than max_skips times (it then goes
  // first, and no plan is made for its batch).
  bool AnyOverdue(std::span<const BurstGang> gangs) const;

  // The gang was placed (or left the queue): its skips are forgotten.
  void Forget(const std::string& key) { skips_.erase(key); }
  int32_t Skips(const std::string& key) const;

 private:
  GangBurstOptions options_;
  std::unordered_map<std::string, int32_t> skips_;
};

}  // namespace copse::scheduler
