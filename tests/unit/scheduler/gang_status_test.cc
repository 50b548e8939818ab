// A gang's reported status (issue 15, item 4): CopsePodGroupPhase's rules on
// a hierarchical gang, and GangTracker's member counts (bound, Ready,
// ended Succeeded or Failed) that feed it.

#include <gtest/gtest.h>

#include <memory>

#include "scheduler/gangs.h"
#include "scheduler/status_reporter.h"

namespace copse::scheduler {
namespace {

using Counts = std::map<std::string, int32_t, std::less<>>;

// A leader and workers (minMember 1 and 2; both required): 3 pods in all.
GangSpec LeaderAndWorkers() {
  GangSpec spec;
  spec.namespace_ = "default";
  spec.name = "train";
  spec.min_member = 3;
  spec.sub_groups = {SubGroupSpec{"leader", "", 1, std::nullopt, {}},
                     SubGroupSpec{"workers", "", 2, std::nullopt, {}}};
  return spec;
}

GangTracker::MemberCounts Members(Counts bound, Counts ready, Counts succeeded = {},
                                  Counts failed = {}) {
  GangTracker::MemberCounts c;
  c.bound = std::move(bound);
  c.ready = std::move(ready);
  c.succeeded = std::move(succeeded);
  c.failed = std::move(failed);
  return c;
}

TEST(CopsePodGroupPhase, FromPendingToRunning) {
  const GangSpec spec = LeaderAndWorkers();
  EXPECT_EQ(CopsePodGroupPhase(spec, Members({}, {}), 2, std::nullopt), "Pending");
  EXPECT_EQ(CopsePodGroupPhase(spec, Members({}, {}), 3, false), "Unschedulable");
  // Bound but not all required members: still waiting, unless it was placed.
  EXPECT_EQ(CopsePodGroupPhase(spec, Members({{"workers", 2}}, {}), 1, std::nullopt), "Pending");
  EXPECT_EQ(CopsePodGroupPhase(spec, Members({{"workers", 2}}, {}), 1, true), "Scheduled");
  const Counts all = {{"leader", 1}, {"workers", 3}};
  EXPECT_EQ(CopsePodGroupPhase(spec, Members(all, {}), 0, true), "Scheduled");
  // The minimum Ready, not every member: Running.
  EXPECT_EQ(CopsePodGroupPhase(spec, Members(all, {{"leader", 1}, {"workers", 2}}), 0, true),
            "Running");
  // Three Ready pods, but the leader is not one of them.
  EXPECT_EQ(CopsePodGroupPhase(spec, Members(all, {{"workers", 3}}), 0, true), "Scheduled");
}

TEST(CopsePodGroupPhase, EndedMembers) {
  const GangSpec spec = LeaderAndWorkers();
  // Members that succeeded did their part.
  EXPECT_EQ(CopsePodGroupPhase(spec, Members({{"workers", 2}}, {{"workers", 2}}, {{"leader", 1}}),
                               0, true),
            "Running");
  EXPECT_EQ(CopsePodGroupPhase(spec, Members({}, {}, {{"leader", 1}, {"workers", 2}}), 0, true),
            "Succeeded");
  // Not while a member still waits to be placed.
  EXPECT_NE(CopsePodGroupPhase(spec, Members({}, {}, {{"leader", 1}, {"workers", 2}}), 1, true),
            "Succeeded");
  // A failed worker beyond the minimum changes nothing.
  const Counts all = {{"leader", 1}, {"workers", 2}};
  EXPECT_EQ(CopsePodGroupPhase(spec, Members(all, all, {}, {{"workers", 1}}), 0, true), "Running");
  // The one leader failed: broken.
  EXPECT_EQ(CopsePodGroupPhase(
                spec, Members({{"workers", 2}}, {{"workers", 2}}, {}, {{"leader", 1}}), 0, true),
            "Failed");
  // ... until a replacement is bound.
  EXPECT_EQ(CopsePodGroupPhase(spec, Members(all, {{"workers", 2}}, {}, {{"leader", 1}}), 0, true),
            "Scheduled");
  // Every member ended, too few Succeeded: Failed.
  EXPECT_EQ(CopsePodGroupPhase(spec, Members({}, {}, {{"workers", 2}}, {{"leader", 1}}), 0, true),
            "Failed");
}

std::shared_ptr<const PodInfo> Pod(const std::string& uid, const std::string& sub_group) {
  auto pod = std::make_shared<PodInfo>();
  pod->namespace_name = "default";
  pod->name = uid;
  pod->uid = uid;
  pod->scheduler_name = "copse-scheduler";
  pod->group_kind = PodInfo::GroupKind::kCopsePodGroup;
  pod->pod_group = "train";
  pod->sub_group = sub_group;
  return pod;
}

TEST(GangTrackerCounts, BoundReadyAndEndedMembers) {
  GangTracker gangs;
  gangs.SetSpec(PodInfo::GroupKind::kCopsePodGroup, LeaderAndWorkers());
  const queue::UnitKey key = GroupUnitKey(PodInfo::GroupKind::kCopsePodGroup, "default", "train");
  const auto leader = Pod("l", "leader");
  const auto w0 = Pod("w0", "workers");
  const auto w1 = Pod("w1", "workers");
  gangs.UpsertPending(leader);
  gangs.MarkBound(w0, /*ready=*/true);
  gangs.MarkBound(w1);
  EXPECT_FALSE(gangs.SetReady(*leader, true)) << "not bound: nothing to count";
  EXPECT_TRUE(gangs.SetReady(*w1, true));
  EXPECT_FALSE(gangs.SetReady(*w1, true)) << "no change";
  gangs.MarkBound(leader);
  GangTracker::MemberCounts c = gangs.CountMembers(key);
  EXPECT_EQ(c.bound, (Counts{{"leader", 1}, {"workers", 2}}));
  EXPECT_EQ(c.ready, (Counts{{"workers", 2}}));
  EXPECT_EQ(gangs.Info(key).ready, 2u);
  EXPECT_TRUE(gangs.SetReady(*w0, false));
  gangs.Remove(*w1, /*finished=*/true, /*succeeded=*/true);
  gangs.Remove(*leader, /*finished=*/true, /*succeeded=*/false);
  c = gangs.CountMembers(key);
  EXPECT_EQ(c.bound, (Counts{{"workers", 1}}));
  EXPECT_TRUE(c.ready.empty());
  EXPECT_EQ(c.succeeded, (Counts{{"workers", 1}}));
  EXPECT_EQ(c.failed, (Counts{{"leader", 1}}));
  // The last member ends: the group is still copse's to report on.
  gangs.Remove(*w0, /*finished=*/true, /*succeeded=*/true);
  EXPECT_EQ(gangs.OwnershipOf(key), GangTracker::Ownership::kOurs);
  EXPECT_EQ(gangs.CountMembers(key).succeeded, (Counts{{"workers", 2}}));
}

}  // namespace
}  // namespace copse::scheduler
