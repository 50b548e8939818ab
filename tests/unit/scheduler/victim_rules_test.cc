// Gang-aware preemption rules (scheduler/victim_rules.h) for both selectors:
// preemptibility (non-, semi-), disruptionMode PodGroup, never leaving a gang
// below its minimum, single-pod preemption through DefaultPreemption with
// the rules, gang preemption through SelectGangVictims; GangSpec::IsSatisfied
// with any N children; gang recovery of a gang left below its minimum.

#include "scheduler/victim_rules.h"

#include <gtest/gtest.h>

#include <set>

#include "core/clock.h"
#include "plugins/defaults/defaults.h"
#include "plugins/framework/framework.h"
#include "scheduler/cache.h"
#include "scheduler/gang_preemption.h"
#include "scheduler/gang_recovery.h"
#include "tests/unit/plugins/test_util.h"

namespace copse::scheduler {
namespace victim_rules_test {

using plugins::testing::FixedRandom;
using plugins::testing::PodBuilder;
using plugins::testing::Res;
using plugins::testing::TestNow;

constexpr int32_t kLow = 0;
constexpr int32_t kHigh = 100;

std::unique_ptr<plugins::Framework> MakeFramework(plugins::Registry& registry) {
  EXPECT_TRUE(plugins::RegisterDefaultPlugins(registry).ok());
  auto fw = plugins::Framework::Create(registry, plugins::DefaultProfile());
  EXPECT_TRUE(fw.ok()) << (fw.ok() ? "" : fw.error().message);
  return std::move(fw).value();
}

GangSpec Gang(const std::string& name, int32_t min_member,
              Preemptibility preemptibility = Preemptibility::kPreemptible,
              DisruptionMode mode = DisruptionMode::kPod) {
  GangSpec spec;
  spec.namespace_ = "default";
  spec.name = name;
  spec.uid = "uid-" + name;
  spec.source = GangSource::kCopsePodGroup;
  spec.min_member = min_member;
  spec.preemptibility = preemptibility;
  spec.disruption_mode = mode;
  return spec;
}

class World {
 public:
  World(int nodes, const std::string& cpu) {
    for (int i = 0; i < nodes; ++i) {
      cluster.AddNode("n" + std::to_string(i),
                      {{"cpu", cpu.c_str()}, {"memory", "64Gi"}, {"pods", "110"}});
    }
  }
  // A running member of copse PodGroup `gang`.
  PodRef Member(const std::string& gang, const std::string& name, int node, const std::string& cpu,
                int32_t priority = kLow, const std::string& sub_group = "") {
    PodBuilder b(name);
    b.Requests(cluster.names, {{"cpu", cpu.c_str()}}).Priority(priority).NodeName(NodeName(node));
    b.raw().group_kind = PodInfo::GroupKind::kCopsePodGroup;
    b.raw().pod_group = gang;
    b.raw().sub_group = sub_group;
    PodRef pod = b.Obj();
    cluster.AddPod(NodeName(node), pod);
    return pod;
  }
  PodRef Plain(const std::string& name, int node, const std::string& cpu, int32_t priority = kLow) {
    PodRef pod = PodBuilder(name)
                     .Requests(cluster.names, {{"cpu", cpu.c_str()}})
                     .Priority(priority)
                     .NodeName(NodeName(node))
                     .Obj();
    cluster.AddPod(NodeName(node), pod);
    return pod;
  }
  void Spec(GangSpec spec) { gangs.SetSpec(PodInfo::GroupKind::kCopsePodGroup, std::move(spec)); }
  static std::string NodeName(int node) { return "n" + std::to_string(node); }

  plugins::testing::Cluster cluster;
  GangTracker gangs;
};

std::set<std::string> Names(const std::vector<PodRef>& pods) {
  std::set<std::string> out;
  for (const PodRef& p : pods) out.insert(p->name);
  return out;
}

TEST(VictimRules, UnitFollowsPreemptibilityAndDisruptionMode) {
  World w(1, "16");
  w.Spec(Gang("non", 1, Preemptibility::kNonPreemptible));
  w.Spec(Gang("semi", 1, Preemptibility::kSemiPreemptible));
  w.Spec(Gang("whole", 1, Preemptibility::kPreemptible, DisruptionMode::kPodGroup));
  w.Spec(Gang("pod", 1));
  w.Spec(Gang("mixed", 1));
  const PodRef non = w.Member("non", "non-0", 0, "1");
  const PodRef semi = w.Member("semi", "semi-0", 0, "1");
  const PodRef whole = w.Member("whole", "whole-0", 0, "1");
  const PodRef pod = w.Member("pod", "pod-0", 0, "1");
  const PodRef mixed_low = w.Member("mixed", "mixed-0", 0, "1");
  w.Member("mixed", "mixed-1", 0, "1", kHigh);  // the group cannot go whole
  const PodRef plain = w.Plain("plain", 0, "1");
  const PodRef important = w.Plain("important", 0, "1", kHigh);
  const VictimRules rules(w.cluster.snapshot(), w.gangs, kHigh);
  using U = VictimRules::Unit;
  EXPECT_EQ(rules.UnitOf(*non), U::kNever);
  EXPECT_EQ(rules.UnitOf(*semi), U::kMember);
  EXPECT_EQ(rules.UnitOf(*whole), U::kWhole);
  EXPECT_EQ(rules.UnitOf(*pod), U::kMember);
  EXPECT_EQ(rules.UnitOf(*plain), U::kPod) << "plain pods are preemptible";
  EXPECT_EQ(rules.UnitOf(*important), U::kNever) << "not below the preemptor's priority";
  EXPECT_TRUE(rules.WholeAllowed(rules.GroupOf(*pod)));
  EXPECT_FALSE(rules.WholeAllowed(rules.GroupOf(*semi)));
  EXPECT_FALSE(rules.WholeAllowed(rules.GroupOf(*mixed_low)))
      << "a member at the preemptor's priority keeps its group from going whole";
  const VictimRules excluding(w.cluster.snapshot(), w.gangs, kHigh, {plain->uid});
  EXPECT_EQ(excluding.UnitOf(*plain), U::kNever);
}

TEST(VictimRules, SemiPreemptibleLosesOnlyPodsBeyondItsMinimum) {
  World w(2, "4");
  w.Spec(Gang("s", 3, Preemptibility::kSemiPreemptible));
  std::vector<PodRef> members;
  for (int i = 0; i < 4; ++i)
    members.push_back(w.Member("s", "s-" + std::to_string(i), i % 2, "2"));
  const VictimRules rules(w.cluster.snapshot(), w.gangs, kHigh);
  EXPECT_EQ(rules.Removable(members).size(), 1u) << "4 pods, minimum 3: one spare";
  std::vector<PodRef> one = {members[0]};
  EXPECT_TRUE(rules.Complete(one));
  EXPECT_EQ(one.size(), 1u);
  std::vector<PodRef> two = {members[0], members[1]};
  EXPECT_FALSE(rules.Complete(two)) << "a semi-preemptible group never goes whole";
}

// A victim an earlier cycle evicted is still in the snapshot until its
// deletion is seen: it counts as gone, so the next preemptor cannot take the
// group's last spare pod a second time (found by gang-preempt's
// semi-preemptible gangs, left below their minimum).
TEST(VictimRules, VictimsBeingEvictedCountAsGone) {
  World w(2, "4");
  w.Spec(Gang("s", 3, Preemptibility::kSemiPreemptible));
  std::vector<PodRef> members;
  for (int i = 0; i < 4; ++i)
    members.push_back(w.Member("s", "s-" + std::to_string(i), i % 2, "2"));
  w.gangs.AddEvicting({members[0]->uid});
  const VictimRules rules(w.cluster.snapshot(), w.gangs, kHigh);
  const std::vector<PodRef> others = {members[1], members[2], members[3]};
  EXPECT_TRUE(rules.Removable(others).empty()) << "3 left, minimum 3: none to spare";
  std::vector<PodRef> one = {members[1]};
  EXPECT_FALSE(rules.Complete(one));
  // Once its deletion is seen (and it left the snapshot) nothing changes;
  // forgetting it before would make it count again.
  w.gangs.ForgetEvicting(members[0]->uid);
  const VictimRules again(w.cluster.snapshot(), w.gangs, kHigh);
  EXPECT_EQ(again.Removable(others).size(), 1u);
}

TEST(VictimRules, PreemptibleGangBrokenByVictimsGoesWhole) {
  World w(2, "4");
  w.Spec(Gang("g", 3));
  std::vector<PodRef> members;
  for (int i = 0; i < 4; ++i)
    members.push_back(w.Member("g", "g-" + std::to_string(i), i % 2, "2"));
  const VictimRules rules(w.cluster.snapshot(), w.gangs, kHigh);
  std::vector<PodRef> one = {members[0]};
  ASSERT_TRUE(rules.Complete(one));
  EXPECT_EQ(one.size(), 1u) << "one pod beyond the minimum goes alone";
  std::vector<PodRef> two = {members[0], members[2]};
  ASSERT_TRUE(rules.Complete(two));
  EXPECT_EQ(Names(two), (std::set<std::string>{"g-0", "g-1", "g-2", "g-3"}));
}

TEST(VictimRules, MinSubGroupCountsAnyChildren) {
  GangSpec spec = Gang("h", 0);
  spec.min_sub_group = 2;
  for (const char* name : {"a", "b", "c"}) {
    SubGroupSpec sub;
    sub.name = name;
    sub.min_member = 2;
    spec.sub_groups.push_back(sub);
  }
  using Counts = std::map<std::string, int32_t, std::less<>>;
  EXPECT_TRUE(spec.IsSatisfied(kRootGroup, Counts{{"b", 2}, {"c", 2}}))
      << "any 2 of the 3 children, not the first 2";
  EXPECT_FALSE(spec.IsSatisfied(kRootGroup, Counts{{"a", 2}, {"c", 1}}));
  EXPECT_TRUE(spec.IsSatisfied("c", Counts{{"c", 2}}));
  spec.min_member = 5;
  EXPECT_FALSE(spec.IsSatisfied(kRootGroup, Counts{{"b", 2}, {"c", 2}}));
  EXPECT_TRUE(spec.IsSatisfied(kRootGroup, Counts{{"b", 2}, {"c", 3}}));
}

// A lone pod needing a whole node: DefaultPreemption with the rules takes
// the plain pods, never the non-preemptible gang's.
TEST(VictimRules, SinglePodPreemptionSparesNonPreemptibleGang) {
  for (const bool plain_node : {true, false}) {
    World w(2, "4");
    w.Spec(Gang("n", 2, Preemptibility::kNonPreemptible));
    w.Member("n", "n-0", 0, "2");
    w.Member("n", "n-1", 0, "2");
    if (plain_node) {
      w.Plain("p-0", 1, "2");
      w.Plain("p-1", 1, "2");
    } else {
      w.Spec(Gang("n2", 2, Preemptibility::kNonPreemptible));
      w.Member("n2", "n2-0", 1, "2");
      w.Member("n2", "n2-1", 1, "2");
    }
    plugins::Registry registry;
    auto fw = MakeFramework(registry);
    const PodRef pod =
        PodBuilder("big").Requests(w.cluster.names, {{"cpu", "4"}}).Priority(kHigh).Obj();
    const Snapshot& snapshot = w.cluster.snapshot();
    const VictimRules rules(snapshot, w.gangs, kHigh);
    plugins::ScheduleOptions options;
    options.victim_policy = &rules;
    plugins::CycleState state;
    plugins::Workspace ws;
    FixedRandom random(0);
    plugins::ScheduleResult result =
        fw->SchedulePod(*pod, snapshot, state, ws, random, options, TestNow());
    ASSERT_EQ(result.code, plugins::Code::kUnschedulable);
    ASSERT_TRUE(result.post_filter.has_value());
    if (plain_node) {
      ASSERT_TRUE(result.post_filter->status.IsSuccess()) << result.message;
      EXPECT_EQ(Names(result.post_filter->victims), (std::set<std::string>{"p-0", "p-1"}));
    } else {
      EXPECT_FALSE(result.post_filter->status.IsSuccess());
      EXPECT_TRUE(result.post_filter->victims.empty());
    }
  }
}

// A lone pod that needs a member of a preemptible gang at its minimum takes
// the whole gang, on every node; without the rules (kube's behaviour) it
// would take the one member and break the gang.
TEST(VictimRules, SinglePodPreemptionTakesABrokenGangWhole) {
  World w(2, "4");
  w.Spec(Gang("g", 2));
  w.Member("g", "g-0", 0, "2");
  w.Member("g", "g-1", 1, "2");
  w.Plain("p-0", 0, "2", 50);
  w.Plain("p-1", 1, "2", 50);
  plugins::Registry registry;
  auto fw = MakeFramework(registry);
  const PodRef pod =
      PodBuilder("big").Requests(w.cluster.names, {{"cpu", "4"}}).Priority(kHigh).Obj();
  const Snapshot& snapshot = w.cluster.snapshot();
  for (const bool with_rules : {false, true}) {
    const VictimRules rules(snapshot, w.gangs, kHigh);
    plugins::ScheduleOptions options;
    if (with_rules) options.victim_policy = &rules;
    plugins::CycleState state;
    plugins::Workspace ws;
    FixedRandom random(0);
    plugins::ScheduleResult result =
        fw->SchedulePod(*pod, snapshot, state, ws, random, options, TestNow());
    ASSERT_TRUE(result.post_filter.has_value());
    ASSERT_TRUE(result.post_filter->status.IsSuccess()) << result.message;
    const std::set<std::string> victims = Names(result.post_filter->victims);
    const int members = victims.contains("g-0") + victims.contains("g-1");
    if (with_rules) {
      EXPECT_EQ(members, 2) << "the gang goes whole or not at all";
      EXPECT_EQ(victims.size(), 3u);
    } else {
      EXPECT_EQ(members, 1) << "kube's per-node choice breaks the gang";
    }
  }
}

// Gang preemption against a semi-preemptible gang: it gives up the pods
// beyond its minimum, and when that is not enough nobody is evicted.
TEST(VictimRules, GangPreemptionKeepsSemiPreemptibleMinimum) {
  for (const int wanted_nodes : {1, 2}) {
    World w(2, "4");
    w.Spec(Gang("s", 2, Preemptibility::kSemiPreemptible));
    for (int i = 0; i < 4; ++i) w.Member("s", "s-" + std::to_string(i), i / 2, "2");
    plugins::Registry registry;
    auto fw = MakeFramework(registry);
    std::vector<PodPtr> members;
    std::set<std::string> uids;
    for (int i = 0; i < wanted_nodes; ++i) {
      PodBuilder b("hi-" + std::to_string(i));
      b.Requests(w.cluster.names, {{"cpu", "4"}}).Priority(kHigh);
      b.raw().group_kind = PodInfo::GroupKind::kCopsePodGroup;
      b.raw().pod_group = "hi";
      members.push_back(b.Obj());
      uids.insert(members.back()->uid);
    }
    Snapshot& snapshot = w.cluster.mutable_snapshot();
    const VictimRules rules(snapshot, w.gangs, kHigh, uids);
    GangPlacementOptions po;
    po.required = members.size();
    po.place_all = true;
    plugins::Workspace ws;
    FixedRandom random(0);
    GangPreemption gp = SelectGangVictims(*fw, snapshot, members, po, rules, random, ws);
    if (wanted_nodes == 1) {
      ASSERT_TRUE(gp.found) << gp.message;
      ASSERT_EQ(gp.victims.size(), 2u);
      EXPECT_EQ(gp.victims[0]->node_name, gp.victims[1]->node_name) << "one node's two spare pods";
    } else {
      EXPECT_FALSE(gp.found) << "all four would break the semi-preemptible minimum";
      EXPECT_TRUE(gp.victims.empty());
    }
  }
}

TEST(GangRecovery, GangBelowItsMinimumIsDueAfterTheTimeout) {
  FakeClock clock;
  Cache cache(clock, Clock::Duration::zero());
  GangTracker gangs;
  for (const char* node : {"n0", "n1"}) cache.UpsertNode(node, [](NodeInfo&) {});
  gangs.SetSpec(PodInfo::GroupKind::kCopsePodGroup, Gang("g", 3));
  std::vector<PodPtr> members;
  for (int i = 0; i < 4; ++i) {
    PodBuilder b("g-" + std::to_string(i));
    b.NodeName(i == 3 ? "n1" : "n0");
    b.raw().group_kind = PodInfo::GroupKind::kCopsePodGroup;
    b.raw().pod_group = "g";
    members.push_back(b.Obj());
    gangs.MarkBound(members.back());
  }
  GangRecovery recovery(std::chrono::seconds(60));
  EXPECT_TRUE(recovery.Check(gangs, cache, clock.Now()).empty());
  EXPECT_EQ(recovery.broken(), 0u);
  // A finished member still counts; a member on a deleted node does not.
  gangs.Remove(*members[3], /*finished=*/true);
  clock.Advance(std::chrono::seconds(1));
  EXPECT_TRUE(recovery.Check(gangs, cache, clock.Now()).empty());
  EXPECT_EQ(recovery.broken(), 0u);
  cache.RemoveNode("n0");
  clock.Advance(std::chrono::seconds(1));
  EXPECT_TRUE(recovery.Check(gangs, cache, clock.Now()).empty());
  EXPECT_EQ(recovery.broken(), 1u);
  clock.Advance(std::chrono::seconds(59));
  EXPECT_TRUE(recovery.Check(gangs, cache, clock.Now()).empty()) << "59 s: not yet";
  clock.Advance(std::chrono::seconds(1));
  std::vector<GangRecovery::Due> due = recovery.Check(gangs, cache, clock.Now());
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].bound.size(), 3u);
  EXPECT_NE(due[0].message.find("3 bound to nodes that no longer exist"), std::string::npos)
      << due[0].message;
  // The clock restarts: not due again at once.
  clock.Advance(std::chrono::seconds(1));
  EXPECT_TRUE(recovery.Check(gangs, cache, clock.Now()).empty());
  // Repaired (the node is back): forgotten.
  cache.UpsertNode("n0", [](NodeInfo&) {});
  clock.Advance(std::chrono::seconds(1));
  EXPECT_TRUE(recovery.Check(gangs, cache, clock.Now()).empty());
  EXPECT_EQ(recovery.broken(), 0u);
}

// Check skips its scan while neither the gangs nor the set of nodes changed
// (and nothing is broken): a member deleted between two checks, with every
// node in place, must still be seen at the next one.
TEST(GangRecovery, AMemberDeletedBetweenChecksIsSeenWithNoNodeChange) {
  FakeClock clock;
  Cache cache(clock, Clock::Duration::zero());
  GangTracker gangs;
  cache.UpsertNode("n0", [](NodeInfo&) {});
  gangs.SetSpec(PodInfo::GroupKind::kCopsePodGroup, Gang("g", 2));
  std::vector<PodPtr> members;
  for (int i = 0; i < 2; ++i) {
    PodBuilder b("g-" + std::to_string(i));
    b.NodeName("n0");
    b.raw().group_kind = PodInfo::GroupKind::kCopsePodGroup;
    b.raw().pod_group = "g";
    members.push_back(b.Obj());
    gangs.MarkBound(members.back());
  }
  GangRecovery recovery(std::chrono::seconds(5));
  EXPECT_TRUE(recovery.Check(gangs, cache, clock.Now()).empty());
  clock.Advance(std::chrono::seconds(1));
  EXPECT_TRUE(recovery.Check(gangs, cache, clock.Now()).empty());
  EXPECT_EQ(recovery.broken(), 0u);
  gangs.Remove(*members[1], /*finished=*/false);
  clock.Advance(std::chrono::seconds(1));
  EXPECT_TRUE(recovery.Check(gangs, cache, clock.Now()).empty());
  EXPECT_EQ(recovery.broken(), 1u);
  clock.Advance(std::chrono::seconds(5));
  std::vector<GangRecovery::Due> due = recovery.Check(gangs, cache, clock.Now());
  ASSERT_EQ(due.size(), 1u);
  ASSERT_EQ(due[0].bound.size(), 1u);
  EXPECT_EQ(due[0].bound[0]->name, "g-0");
}

}  // namespace victim_rules_test
}  // namespace copse::scheduler
