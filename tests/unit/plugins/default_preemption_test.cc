// DefaultPreemption: eligibility, the reprieve algorithm, PDBs, node choice
// and kube-scheduler's PostFilter messages (default_preemption_test.go facts).

#include "plugins/default_preemption/default_preemption.h"

#include <gtest/gtest.h>

#include <set>

#include "plugins/defaults/defaults.h"
#include "plugins/framework/framework.h"
#include "tests/unit/plugins/test_util.h"

namespace copse::plugins {
namespace {

using testing::Cluster;
using testing::FixedRandom;
using testing::PodBuilder;
using testing::Selector;
using testing::TestNow;

std::unique_ptr<Framework> DefaultFramework() {
  Registry registry;
  EXPECT_TRUE(RegisterDefaultPlugins(registry).ok());
  Result<std::unique_ptr<Framework>> fw = Framework::Create(registry, DefaultProfile());
  EXPECT_TRUE(fw.ok()) << (fw.ok() ? "" : fw.error().message);
  return std::move(*fw);
}

class PreemptionTest : public ::testing::Test {
 protected:
  ScheduleResult Schedule(const PodInfo& pod) {
    CycleState state;
    Workspace ws;
    FixedRandom random(0);
    return fw_->SchedulePod(pod, c_.snapshot(), state, ws, random, ScheduleOptions{}, TestNow());
  }
  std::shared_ptr<PodInfo> Low(const std::string& name, const char* cpu, int32_t priority = 1) {
    return PodBuilder(name).Priority(priority).Requests(c_.names, {{"cpu", cpu}}).Obj();
  }
  std::vector<std::string> VictimNames(const PostFilterResult& r) {
    std::vector<std::string> names;
    for (const PodRef& p : r.victims) names.push_back(p->name);
    return names;
  }
  std::unique_ptr<Framework> fw_ = DefaultFramework();
  Cluster c_;
};

TEST_F(PreemptionTest, HigherPriorityPodCanBeMadeSchedulable) {
  c_.AddNode("node1", {{"cpu", "2"}, {"pods", "10"}});
  c_.AddPod("node1", Low("low", "2"));
  auto pod = PodBuilder("p").Priority(10).Requests(c_.names, {{"cpu", "1"}}).Obj();
  ScheduleResult r = Schedule(*pod);
  EXPECT_EQ(r.code, Code::kUnschedulable);
  EXPECT_EQ(r.message, "0/1 nodes are available: 1 Insufficient cpu.");
  ASSERT_TRUE(r.post_filter.has_value());
  EXPECT_TRUE(r.post_filter->status.IsSuccess());
  EXPECT_EQ(r.post_filter->nominated_node, std::optional<NodeIndex>(0));
  EXPECT_EQ(VictimNames(*r.post_filter), (std::vector<std::string>{"low"}));
}

TEST_F(PreemptionTest, NotEnoughResourceAfterRemovingLowPriorityPods) {
  c_.AddNode("node1", {{"cpu", "2"}, {"pods", "10"}});
  c_.AddNode("node2", {{"cpu", "2"}, {"pods", "10"}});
  c_.AddPod("node1", Low("a", "1"));
  c_.AddPod("node2", Low("b", "1"));
  auto pod = PodBuilder("p").Priority(10).Requests(c_.names, {{"cpu", "3"}}).Obj();
  ScheduleResult r = Schedule(*pod);
  EXPECT_EQ(r.message,
            "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 "
            "Insufficient cpu.");
  EXPECT_FALSE(r.post_filter->nominated_node.has_value());
  EXPECT_TRUE(r.post_filter->clear_nomination);
}

TEST_F(PreemptionTest, MixedReasonsNoLowerPriorityPodAndNotEnoughCpu) {
  c_.AddNode("node1", {{"cpu", "2"}, {"pods", "10"}});
  c_.AddNode("node2", {{"cpu", "2"}, {"pods", "10"}});
  c_.AddPod("node1", Low("same", "2", /*priority=*/10));
  c_.AddPod("node2", Low("b", "1"));
  auto pod = PodBuilder("p").Priority(10).Requests(c_.names, {{"cpu", "3"}}).Obj();
  ScheduleResult r = Schedule(*pod);
  EXPECT_EQ(r.message,
            "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
            "1 Insufficient cpu, 1 No preemption victims found for incoming pod.");
}

TEST_F(PreemptionTest, UnresolvableNodesAreNotHelpful) {
  c_.AddNode("node1", {{"cpu", "2"}, {"pods", "10"}});
  c_.AddNode("node2", {{"cpu", "2"}, {"pods", "10"}});
  c_.AddNode("node3", {{"cpu", "2"}, {"pods", "10"}})
      .SetTaints({{"a", "b", TaintEffect::kNoSchedule}});
  c_.AddNode("node4", {{"cpu", "2"}, {"pods", "10"}})
      .SetTaints({{"a", "b", TaintEffect::kNoSchedule}});
  c_.AddPod("node1", Low("x", "1"));
  c_.AddPod("node2", Low("y", "1"));
  auto pod = PodBuilder("p").Priority(10).Requests(c_.names, {{"cpu", "3"}}).Obj();
  ScheduleResult r = Schedule(*pod);
  EXPECT_EQ(
      r.message,
      "0/4 nodes are available: 2 Insufficient cpu, 2 node(s) had untolerated taint {a: b}. "
      "preemption: "
      "0/4 nodes are available: 2 Insufficient cpu, 2 Preemption is not helpful for scheduling.");
}

TEST_F(PreemptionTest, AllNodesUnresolvable) {
  c_.AddNode("node1", {{"cpu", "2"}, {"pods", "10"}})
      .SetTaints({{"a", "b", TaintEffect::kNoExecute}});
  auto pod = PodBuilder("p").Priority(10).Obj();
  EXPECT_EQ(Schedule(*pod).message,
            "0/1 nodes are available: 1 node(s) had untolerated taint {a: b}. preemption: 0/1 "
            "nodes are available: "
            "1 Preemption is not helpful for scheduling.");
}

TEST_F(PreemptionTest, PreemptionPolicyNever) {
  c_.AddNode("node1", {{"cpu", "2"}, {"pods", "10"}});
  c_.AddPod("node1", Low("low", "2"));
  auto pod = PodBuilder("p").Priority(10).PreemptNever().Requests(c_.names, {{"cpu", "1"}}).Obj();
  ScheduleResult r = Schedule(*pod);
  EXPECT_EQ(r.message,
            "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to "
            "preemptionPolicy=Never.");
  EXPECT_FALSE(r.post_filter->nominated_node.has_value());
}

TEST_F(PreemptionTest, TerminatingPodOnNominatedNode) {
  c_.AddNode("node1", {{"cpu", "2"}, {"pods", "10"}});
  PodBuilder dying("dying");
  dying.Priority(1).Requests(c_.names, {{"cpu", "2"}});
  dying.raw().terminating = true;
  dying.raw().terminating_by_preemption = true;
  c_.AddPod("node1", dying.Obj());
  auto pod =
      PodBuilder("p").Priority(10).NominatedNode("node1").Requests(c_.names, {{"cpu", "1"}}).Obj();
  EXPECT_EQ(Schedule(*pod).message,
            "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to a "
            "terminating pod on the "
            "nominated node.");
}

// A victim this scheduler evicted in an earlier cycle, whose deletion it has
// not observed yet (so not terminating in the snapshot), is leaving too: the
// preemptor nominated to its node waits instead of preempting again.
class LeavingPods final : public VictimPolicy {
 public:
  explicit LeavingPods(std::set<std::string> uids) : uids_(std::move(uids)) {}
  std::vector<PodRef> Removable(std::span<const PodRef> candidates) const override {
    return {candidates.begin(), candidates.end()};
  }
  bool Complete(std::vector<PodRef>&) const override { return true; }
  bool Leaving(const PodInfo& pod) const override { return uids_.contains(pod.uid); }

 private:
  std::set<std::string> uids_;
};

TEST_F(PreemptionTest, PodThisSchedulerIsEvictingOnTheNominatedNodeCountsAsTerminating) {
  c_.AddNode("node1", {{"cpu", "2"}, {"pods", "10"}});
  auto evicted = Low("evicted", "2");
  c_.AddPod("node1", evicted);
  auto pod =
      PodBuilder("p").Priority(10).NominatedNode("node1").Requests(c_.names, {{"cpu", "1"}}).Obj();
  const auto schedule = [&](const VictimPolicy* policy) {
    CycleState state;
    Workspace ws;
    FixedRandom random(0);
    ScheduleOptions options;
    options.victim_policy = policy;
    return fw_->SchedulePod(*pod, c_.snapshot(), state, ws, random, options, TestNow());
  };
  const LeavingPods leaving({evicted->uid});
  EXPECT_EQ(schedule(&leaving).message,
            "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to a "
            "terminating pod on the nominated node.");
  // Not leaving: the same pod is a victim again.
  const LeavingPods none({});
  ScheduleResult r = schedule(&none);
  ASSERT_TRUE(r.post_filter.has_value());
  EXPECT_TRUE(r.post_filter->status.IsSuccess());
  EXPECT_EQ(VictimNames(*r.post_filter), (std::vector<std::string>{"evicted"}));
}

TEST_F(PreemptionTest, ReprieveKeepsTheMostImportantPods) {
  // 3 of 4 cpus used; the pod needs 2: evicting "low" alone is enough.
  c_.AddNode("node1", {{"cpu", "4"}, {"pods", "10"}});
  c_.AddPod("node1", Low("low", "1", 1));
  c_.AddPod("node1", Low("mid", "1", 5));
  c_.AddPod("node1", Low("high", "1", 20));
  auto pod = PodBuilder("p").Priority(10).Requests(c_.names, {{"cpu", "2"}}).Obj();
  ScheduleResult r = Schedule(*pod);
  ASSERT_TRUE(r.post_filter->status.IsSuccess());
  EXPECT_EQ(VictimNames(*r.post_filter), (std::vector<std::string>{"low"}));
}

TEST_F(PreemptionTest, PdbViolatingPodsAreReprievedFirst) {
  c_.AddNode("node1", {{"cpu", "2"}, {"pods", "10"}});
  // b started earlier, so it is more important than a at equal priority.
  c_.AddPod("node1", PodBuilder("a")
                         .Label("app", "db")
                         .Priority(1)
                         .StartTime(200)
                         .Requests(c_.names, {{"cpu", "1"}})
                         .Obj());
  c_.AddPod("node1", PodBuilder("b")
                         .Label("app", "web")
                         .Priority(1)
                         .StartTime(100)
                         .Requests(c_.names, {{"cpu", "1"}})
                         .Obj());
  auto pod = PodBuilder("p").Priority(10).Requests(c_.names, {{"cpu", "1"}}).Obj();
  EXPECT_EQ(VictimNames(*Schedule(*pod).post_filter), (std::vector<std::string>{"a"}));

  PodDisruptionBudgetInfo pdb;
  pdb.namespace_name = "default";
  pdb.name = "db";
  pdb.selector = Selector("app=db");
  pdb.disruptions_allowed = 0;
  c_.mutable_snapshot().SetPodDisruptionBudgets({pdb});
  ScheduleResult r = Schedule(*pod);
  EXPECT_EQ(VictimNames(*r.post_filter), (std::vector<std::string>{"b"}));
  EXPECT_EQ(r.post_filter->num_pdb_violations, 0);
}

TEST_F(PreemptionTest, PdbViolationsCountedWhenUnavoidable) {
  c_.AddNode("node1", {{"cpu", "1"}, {"pods", "10"}});
  c_.AddPod(
      "node1",
      PodBuilder("a").Label("app", "db").Priority(1).Requests(c_.names, {{"cpu", "1"}}).Obj());
  PodDisruptionBudgetInfo pdb;
  pdb.namespace_name = "default";
  pdb.selector = Selector("app=db");
  c_.mutable_snapshot().SetPodDisruptionBudgets({pdb});
  auto pod = PodBuilder("p").Priority(10).Requests(c_.names, {{"cpu", "1"}}).Obj();
  ScheduleResult r = Schedule(*pod);
  EXPECT_EQ(VictimNames(*r.post_filter), (std::vector<std::string>{"a"}));
  EXPECT_EQ(r.post_filter->num_pdb_violations, 1);
}

TEST_F(PreemptionTest, PrefersNodeWithoutPdbViolation) {
  c_.AddNode("node1", {{"cpu", "1"}, {"pods", "10"}});
  c_.AddNode("node2", {{"cpu", "1"}, {"pods", "10"}});
  c_.AddPod("node1", PodBuilder("protected")
                         .Label("app", "db")
                         .Priority(1)
                         .Requests(c_.names, {{"cpu", "1"}})
                         .Obj());
  c_.AddPod(
      "node2",
      PodBuilder("free").Label("app", "web").Priority(5).Requests(c_.names, {{"cpu", "1"}}).Obj());
  PodDisruptionBudgetInfo pdb;
  pdb.namespace_name = "default";
  pdb.selector = Selector("app=db");
  c_.mutable_snapshot().SetPodDisruptionBudgets({pdb});
  auto pod = PodBuilder("p").Priority(10).Requests(c_.names, {{"cpu", "1"}}).Obj();
  ScheduleResult r = Schedule(*pod);
  EXPECT_EQ(r.post_filter->nominated_node, std::optional<NodeIndex>(1));
}

TEST_F(PreemptionTest, AntiAffinityVictimsUseExtensions) {
  // The pod's anti-affinity to a lower-priority pod is resolved by evicting it.
  c_.AddNode("node1", {{"cpu", "4"}, {"pods", "10"}}, {{"zone", "z1"}});
  c_.AddPod("node1", PodBuilder("web").Label("app", "web").Priority(1).Obj());
  c_.AddPod("node1", PodBuilder("other").Label("app", "other").Priority(1).Obj());
  auto pod =
      PodBuilder("p").Priority(10).PodAntiAffinity(testing::AffinityTerm("app=web", "zone")).Obj();
  ScheduleResult r = Schedule(*pod);
  EXPECT_EQ(r.message.rfind(
                "0/1 nodes are available: 1 node(s) didn't match pod anti-affinity rules.", 0),
            0u)
      << r.message;
  ASSERT_TRUE(r.post_filter->status.IsSuccess());
  EXPECT_EQ(VictimNames(*r.post_filter), (std::vector<std::string>{"web"}));
}

Victims MakeVictims(std::vector<std::shared_ptr<PodInfo>> pods, int32_t violations = 0) {
  Victims v;
  for (auto& p : pods) v.pods.push_back(p);
  v.num_pdb_violations = violations;
  return v;
}

TEST(PickOneNodeTest, Criteria) {
  const auto now = TestNow();
  const auto P = [](int32_t prio, int64_t start = 0) {
    PodBuilder b("v" + std::to_string(prio) + "-" + std::to_string(start));
    b.Priority(prio);
    if (start != 0) b.StartTime(start);
    return b.Obj();
  };
  // 1. Fewest PDB violations.
  std::vector<PreemptionCandidate> c1 = {{0, MakeVictims({P(1)}, 1)},
                                         {1, MakeVictims({P(9), P(9)}, 0)}};
  EXPECT_EQ(DefaultPreemption::PickOneNode(c1, now), 1u);
  // 2. Lowest priority of the most important victim.
  std::vector<PreemptionCandidate> c2 = {{0, MakeVictims({P(5)})}, {1, MakeVictims({P(3), P(3)})}};
  EXPECT_EQ(DefaultPreemption::PickOneNode(c2, now), 1u);
  // 3. Smallest sum of (priority + 2^31): fewer victims at equal top priority.
  std::vector<PreemptionCandidate> c3 = {
      {0, MakeVictims({P(3), P(3)})}, {1, MakeVictims({P(3), P(1)})}, {2, MakeVictims({P(3)})}};
  EXPECT_EQ(DefaultPreemption::PickOneNode(c3, now), 2u);
  // 5. Latest start among the highest-priority victims.
  std::vector<PreemptionCandidate> c5 = {{0, MakeVictims({P(3, 100)})},
                                         {1, MakeVictims({P(3, 200)})}};
  EXPECT_EQ(DefaultPreemption::PickOneNode(c5, now), 1u);
  // 6. Otherwise the first.
  std::vector<PreemptionCandidate> c6 = {{4, MakeVictims({P(3, 100)})},
                                         {7, MakeVictims({P(3, 100)})}};
  EXPECT_EQ(DefaultPreemption::PickOneNode(c6, now), 0u);
}

TEST(DefaultPreemptionArgsTest, NumCandidatesAndValidation) {
  Result<std::unique_ptr<Plugin>> p = DefaultPreemption::Create(nullptr);
  ASSERT_TRUE(p.ok());
  const auto& dp = dynamic_cast<const DefaultPreemption&>(**p);
  EXPECT_EQ(dp.NumCandidates(50), 50u);
  EXPECT_EQ(dp.NumCandidates(500), 100u);
  EXPECT_EQ(dp.NumCandidates(5000), 500u);
  DefaultPreemptionArgs bad;
  bad.min_candidate_nodes_percentage = 0;
  bad.min_candidate_nodes_absolute = 0;
  std::any a = bad;
  EXPECT_FALSE(DefaultPreemption::Create(&a).ok());
  bad.min_candidate_nodes_percentage = 101;
  a = bad;
  EXPECT_FALSE(DefaultPreemption::Create(&a).ok());
}

}  // namespace
}  // namespace copse::plugins
