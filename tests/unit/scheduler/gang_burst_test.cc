// GangBurst (scheduler/gang_burst.h): the hold of a fresh gang, the order of
// a burst (topology-required first, then smallest demand, then queue order),
// skip counting and the fairness rule, and the demand read from the members.

#include "scheduler/gang_burst.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "tests/unit/plugins/test_util.h"

namespace copse::scheduler {
namespace {

using plugins::testing::PodBuilder;
using std::chrono::milliseconds;

BurstGang Gang(std::string key, int64_t extended, bool required = false) {
  BurstGang g;
  g.key = std::move(key);
  g.extended = extended;
  g.topology_required = required;
  return g;
}

queue::QueuedUnit GroupUnit(Clock::TimePoint arrived, int32_t attempts) {
  queue::QueuedUnit unit;
  unit.key = queue::UnitKey::ForPodGroup("ns", "g");
  unit.timestamp = arrived;
  unit.initial_attempt_timestamp = arrived;
  unit.attempts = attempts;
  return unit;
}

TEST(GangBurst, OffByDefaultHoldsNothing) {
  GangBurst burst(GangBurstOptions{});
  EXPECT_FALSE(burst.enabled());
  const Clock::TimePoint now{std::chrono::seconds(100)};
  EXPECT_FALSE(burst.HoldUntil(GroupUnit(now, 0), now).has_value());
}

TEST(GangBurst, HoldsAFreshGangForTheWindowOnly) {
  GangBurst burst(GangBurstOptions{milliseconds(100), 3, 64});
  ASSERT_TRUE(burst.enabled());
  const Clock::TimePoint arrived{std::chrono::seconds(100)};
  std::optional<Clock::TimePoint> hold = burst.HoldUntil(GroupUnit(arrived, 0), arrived);
  ASSERT_TRUE(hold.has_value());
  EXPECT_EQ(*hold, arrived + milliseconds(100));
  EXPECT_FALSE(burst.HoldUntil(GroupUnit(arrived, 0), arrived + milliseconds(100)).has_value());
  // A gang attempted before (retried after backoff) is never held.
  EXPECT_FALSE(burst.HoldUntil(GroupUnit(arrived, 1), arrived).has_value());
  // Single pods are never held.
  queue::QueuedUnit pod = GroupUnit(arrived, 0);
  pod.key = queue::UnitKey::ForPod("ns", "p");
  EXPECT_FALSE(burst.HoldUntil(pod, arrived).has_value());
}

TEST(GangBurst, RequiredFirstThenSmallestDemandThenQueueOrder) {
  GangBurst burst(GangBurstOptions{milliseconds(100), 3, 64});
  const std::vector<BurstGang> gangs = {Gang("big", 32), Gang("small", 4), Gang("rack", 16, true),
                                        Gang("small2", 4), Gang("rack-small", 2, true)};
  EXPECT_EQ(burst.Order(gangs), (std::vector<size_t>{4, 2, 1, 3, 0}));
}

TEST(GangBurst, CountsSkipsAndPutsAnOverdueGangFirst) {
  GangBurst burst(GangBurstOptions{milliseconds(100), 2, 64});
  const std::vector<BurstGang> gangs = {Gang("big", 32), Gang("mid", 8), Gang("small", 4)};
  // small, mid, big: big is passed over by both, mid by small.
  EXPECT_EQ(burst.Order(gangs), (std::vector<size_t>{2, 1, 0}));
  EXPECT_EQ(burst.Skips("big"), 1);
  EXPECT_EQ(burst.Skips("mid"), 1);
  EXPECT_EQ(burst.Skips("small"), 0);
  EXPECT_EQ(burst.Order(gangs), (std::vector<size_t>{2, 1, 0}));
  EXPECT_EQ(burst.Skips("big"), 2);
  // Skipped more than max_skips (2) times: goes first, ahead of smaller gangs.
  EXPECT_EQ(burst.Order(gangs), (std::vector<size_t>{2, 1, 0}));
  EXPECT_EQ(burst.Skips("big"), 3);
  EXPECT_EQ(burst.Skips("mid"), 3);
  std::vector<size_t> order = burst.Order(gangs);
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2}));
  // Placed: the count is forgotten, and the gang competes on demand again.
  burst.Forget("big");
  burst.Forget("mid");
  EXPECT_EQ(burst.Skips("big"), 0);
  EXPECT_EQ(burst.Order(gangs), (std::vector<size_t>{2, 1, 0}));
}

// With a BurstPlan, the gangs it places run first (each part in the rule's
// order); an overdue gang is reported so that the loop makes no plan.
TEST(GangBurst, PlannedGangsFirstAndOverdueReported) {
  GangBurst burst(GangBurstOptions{milliseconds(100), 2, 64});
  const std::vector<BurstGang> gangs = {Gang("big", 32), Gang("mid", 8, true), Gang("small", 4)};
  EXPECT_EQ(burst.Order(gangs), (std::vector<size_t>{1, 2, 0}));
  const std::vector<uint8_t> planned = {1, 0, 1};
  EXPECT_EQ(burst.Order(gangs, planned), (std::vector<size_t>{2, 0, 1}));
  // A plan of another size is ignored.
  EXPECT_EQ(burst.Order(gangs, std::vector<uint8_t>{1}), (std::vector<size_t>{1, 2, 0}));
  // big: skipped by all three orders (more than max_skips 2); mid: by the second.
  EXPECT_EQ(burst.Skips("big"), 3);
  EXPECT_EQ(burst.Skips("mid"), 1);
  EXPECT_TRUE(burst.AnyOverdue(gangs));
  EXPECT_FALSE(burst.AnyOverdue(std::vector<BurstGang>{gangs[1], gangs[2]}));
}

TEST(GangBurst, DemandAndConstraintFromTheMembersAndSpec) {
  ResourceNames names;
  std::vector<std::shared_ptr<const PodInfo>> members;
  for (int i = 0; i < 3; ++i) {
    members.push_back(
        PodBuilder("p" + std::to_string(i))
            .Requests(names, {{"cpu", "2"}, {"memory", "1Gi"}, {"nvidia.com/gpu", "4"}})
            .Obj());
  }
  GangSpec spec;
  BurstGang free = DescribeBurstGang("a", &spec, members);
  EXPECT_EQ(free.extended, 12);
  EXPECT_EQ(free.cpu_milli, 6000);
  EXPECT_EQ(free.memory, 3 * (int64_t{1} << 30));
  EXPECT_FALSE(free.topology_required);
  spec.topology_constraint.preferred_level = "rack";
  EXPECT_FALSE(DescribeBurstGang("a", &spec, members).topology_required);
  spec.topology_constraint.required_level = "rack";
  EXPECT_TRUE(DescribeBurstGang("a", &spec, members).topology_required);
  GangSpec nested;
  nested.sub_groups.emplace_back();
  nested.sub_groups.back().topology_constraint.required_level = "block";
  EXPECT_TRUE(DescribeBurstGang("a", &nested, members).topology_required);
  EXPECT_FALSE(DescribeBurstGang("a", nullptr, members).topology_required);
}

}  // namespace
}  // namespace copse::scheduler
