// InterPodAffinity against kube-scheduler's interpodaffinity filtering_test.go
// and scoring_test.go scenarios (facts ported, not code).

#include "plugins/inter_pod_affinity/inter_pod_affinity.h"

#include <gtest/gtest.h>

#include "tests/unit/plugins/test_util.h"

namespace copse::plugins {
namespace {

using testing::AffinityTerm;
using testing::Cluster;
using testing::MakePlugin;
using testing::PodBuilder;
using testing::RunFilter;
using testing::RunScore;
using testing::Selector;

constexpr const char* kAffinityReason = "node(s) didn't match pod affinity rules";
constexpr const char* kAntiReason = "node(s) didn't match pod anti-affinity rules";
constexpr const char* kExistingReason = "node(s) didn't satisfy existing pods anti-affinity rules";

class InterPodAffinityFilterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    plugin_ = MakePlugin(&InterPodAffinity::Create);
    c_.AddNode("machine1", {{"pods", "10"}}, {{"region", "r1"}, {"zone", "z11"}});
  }
  testing::FilterRun Run(const PodInfo& pod) { return RunFilter(*plugin_, pod, c_.snapshot()); }
  std::shared_ptr<PodInfo> Existing(const char* name = "existing") {
    return PodBuilder(name).Label("service", "securityscan").Obj();
  }
  Cluster c_;
  std::unique_ptr<Plugin> plugin_;
};

TEST_F(InterPodAffinityFilterTest, NoTermsNoExistingAntiAffinitySkips) {
  c_.AddPod("machine1", Existing());
  EXPECT_TRUE(Run(*PodBuilder("p").Obj()).prefilter.IsSkip());
}

TEST_F(InterPodAffinityFilterTest, AffinityInOperatorMatchesExistingPod) {
  c_.AddPod("machine1", Existing());
  auto pod =
      PodBuilder("p").PodAffinity(AffinityTerm("service in (securityscan,value2)", "region")).Obj();
  EXPECT_TRUE(Run(*pod).statuses[0].IsSuccess());
}

TEST_F(InterPodAffinityFilterTest, AffinityNotInOperator) {
  c_.AddPod("machine1", Existing());
  auto pod = PodBuilder("p")
                 .PodAffinity(AffinityTerm("service notin (securityscan3,value3)", "region"))
                 .Obj();
  EXPECT_TRUE(Run(*pod).statuses[0].IsSuccess());
}

TEST_F(InterPodAffinityFilterTest, AffinityDoesNotMatchPodInAnotherNamespace) {
  c_.AddPod("machine1", Existing());
  auto pod = PodBuilder("p")
                 .PodAffinity(
                     AffinityTerm("service in (securityscan,value2)", "region", {"DiffNameSpace"}))
                 .Obj();
  auto run = Run(*pod);
  EXPECT_EQ(run.statuses[0].code, Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(run.reasons[0], (std::vector<std::string>{kAffinityReason}));
}

TEST_F(InterPodAffinityFilterTest, AffinityUnmatchingSelector) {
  c_.AddPod("machine1", Existing());
  auto pod = PodBuilder("p")
                 .PodAffinity(AffinityTerm("service in (antivirusscan,value2)", "region"))
                 .Obj();
  EXPECT_EQ(Run(*pod).statuses[0].code, Code::kUnschedulableAndUnresolvable);
}

TEST_F(InterPodAffinityFilterTest, AffinitySatisfiedButAntiAffinityViolated) {
  c_.AddPod("machine1", Existing());
  auto pod = PodBuilder("p")
                 .PodAffinity(AffinityTerm("service in (securityscan)", "region"))
                 .PodAntiAffinity(AffinityTerm("service in (securityscan)", "zone"))
                 .Obj();
  auto run = Run(*pod);
  EXPECT_EQ(run.statuses[0].code, Code::kUnschedulable);
  EXPECT_EQ(run.reasons[0], (std::vector<std::string>{kAntiReason}));
}

TEST_F(InterPodAffinityFilterTest, ExistingPodsAntiAffinitySymmetry) {
  auto existing = PodBuilder("existing")
                      .Label("service", "securityscan")
                      .PodAntiAffinity(AffinityTerm("service in (antivirusscan)", "zone"))
                      .Obj();
  c_.AddPod("machine1", existing);
  auto pod = PodBuilder("p")
                 .Label("service", "antivirusscan")
                 .PodAffinity(AffinityTerm("service in (securityscan)", "region"))
                 .Obj();
  auto run = Run(*pod);
  EXPECT_EQ(run.statuses[0].code, Code::kUnschedulable);
  EXPECT_EQ(run.reasons[0], (std::vector<std::string>{kExistingReason}));
  // Without any terms of its own, the incoming pod still respects the existing pod's anti-affinity.
  auto plain = PodBuilder("q").Label("service", "antivirusscan").Obj();
  auto plain_run = Run(*plain);
  EXPECT_TRUE(plain_run.prefilter.IsSuccess());
  EXPECT_EQ(plain_run.reasons[0], (std::vector<std::string>{kExistingReason}));
}

// The snapshot knows whether any node holds a pod with (required anti-)
// affinity, through syncs and scratch edits; PreFilter skips its node walk
// only when none does, so a plain pod still meets a scratch-added pod's
// anti-affinity (a preemption dry run).
TEST_F(InterPodAffinityFilterTest, SnapshotTracksNodesWithAffinityPods) {
  c_.AddNode("machine2", {{"pods", "10"}}, {{"region", "r1"}, {"zone", "z12"}});
  c_.AddPod("machine1", Existing());
  EXPECT_FALSE(c_.snapshot().any_pod_with_affinity());
  EXPECT_FALSE(c_.snapshot().any_pod_with_required_anti_affinity());

  auto anti = PodBuilder("anti")
                  .Label("service", "securityscan")
                  .PodAntiAffinity(AffinityTerm("service in (antivirusscan)", "zone"))
                  .Obj();
  auto preferred = PodBuilder("preferred")
                       .PreferredPodAffinity(10, AffinityTerm("service in (x)", "zone"))
                       .Obj();
  c_.AddPod("machine2", preferred);
  EXPECT_TRUE(c_.snapshot().any_pod_with_affinity());
  EXPECT_FALSE(c_.snapshot().any_pod_with_required_anti_affinity());

  // Indices first: c_.index() syncs, which rewrites scratch-edited rows.
  const NodeIndex m1 = c_.index("machine1");
  const NodeIndex m2 = c_.index("machine2");
  Snapshot& snapshot = c_.mutable_snapshot();
  snapshot.AddPod(m1, anti);
  EXPECT_TRUE(snapshot.any_pod_with_required_anti_affinity());
  auto plain = PodBuilder("q").Label("service", "antivirusscan").Obj();
  auto run = RunFilter(*plugin_, *plain, snapshot);
  EXPECT_TRUE(run.prefilter.IsSuccess());
  EXPECT_EQ(run.reasons[m1], (std::vector<std::string>{kExistingReason}));

  EXPECT_TRUE(snapshot.RemovePod(m1, anti->uid));
  EXPECT_FALSE(snapshot.any_pod_with_required_anti_affinity());
  EXPECT_TRUE(RunFilter(*plugin_, *plain, snapshot).prefilter.IsSkip());
  EXPECT_TRUE(snapshot.RemovePod(m2, preferred->uid));
  EXPECT_FALSE(snapshot.any_pod_with_affinity());
}

TEST_F(InterPodAffinityFilterTest, FirstPodOfSelfAffineGroup) {
  // No pod matches anywhere and the pod matches its own term: allowed.
  auto pod = PodBuilder("p")
                 .Label("service", "securityscan")
                 .PodAffinity(AffinityTerm("service in (securityscan)", "region"))
                 .Obj();
  EXPECT_TRUE(Run(*pod).statuses[0].IsSuccess());
  // ... but not on a node without the topology key.
  c_.AddNode("nolabels", {{"pods", "10"}});
  auto run = Run(*pod);
  EXPECT_TRUE(run.statuses[0].IsSuccess());
  EXPECT_EQ(run.statuses[1].code, Code::kUnschedulableAndUnresolvable);
  // A pod not matching its own term has no such exception.
  auto other = PodBuilder("o")
                   .Label("service", "x")
                   .PodAffinity(AffinityTerm("service in (securityscan)", "region"))
                   .Obj();
  EXPECT_FALSE(Run(*other).statuses[0].IsSuccess());
}

TEST_F(InterPodAffinityFilterTest, NamespaceSelector) {
  c_.mutable_snapshot().SetNamespaceLabels("team-a", {{"team", "team1"}});
  c_.mutable_snapshot().SetNamespaceLabels("team-b", {{"team", "team2"}});
  c_.AddPod("machine1", PodBuilder("e", "team-a").Label("service", "securityscan").Obj());
  auto selected = PodBuilder("p", "other")
                      .PodAffinity(AffinityTerm("service in (securityscan)", "region", {},
                                                Selector("team=team1")))
                      .Obj();
  EXPECT_TRUE(Run(*selected).statuses[0].IsSuccess());
  auto not_selected = PodBuilder("p", "other")
                          .PodAffinity(AffinityTerm("service in (securityscan)", "region", {},
                                                    Selector("team=team2")))
                          .Obj();
  EXPECT_FALSE(Run(*not_selected).statuses[0].IsSuccess());
  // An empty namespace selector selects every namespace.
  auto all =
      PodBuilder("p", "other")
          .PodAffinity(AffinityTerm("service in (securityscan)", "region", {}, LabelSelector()))
          .Obj();
  EXPECT_TRUE(Run(*all).statuses[0].IsSuccess());
}

TEST_F(InterPodAffinityFilterTest, ExistingAntiAffinityUsesIncomingNamespaceLabels) {
  c_.mutable_snapshot().SetNamespaceLabels("team-a", {{"team", "team1"}});
  c_.AddPod("machine1",
            PodBuilder("e", "ops")
                .PodAntiAffinity(AffinityTerm("app=web", "zone", {}, Selector("team=team1")))
                .Obj());
  EXPECT_FALSE(Run(*PodBuilder("p", "team-a").Label("app", "web").Obj()).statuses[0].IsSuccess());
  EXPECT_TRUE(Run(*PodBuilder("p", "team-b").Label("app", "web").Obj()).prefilter.IsSkip());
}

TEST(InterPodAffinityMultiNodeTest, TopologyDomainsShareMatches) {
  // "A pod can be scheduled onto all the nodes that have the same topology key &
  // label value with one of them has an existing pod that matches the affinity rules".
  Cluster c;
  c.AddNode("machine1", {{"pods", "10"}}, {{"region", "r1"}});
  c.AddNode("machine2", {{"pods", "10"}}, {{"region", "r1"}});
  c.AddNode("machine3", {{"pods", "10"}}, {{"region", "r2"}});
  c.AddPod("machine1", PodBuilder("e").Label("foo", "bar").Obj());
  auto plugin = MakePlugin(&InterPodAffinity::Create);
  auto pod = PodBuilder("p").PodAffinity(AffinityTerm("foo in (bar)", "region")).Obj();
  auto run = RunFilter(*plugin, *pod, c.snapshot());
  EXPECT_TRUE(run.statuses[0].IsSuccess());
  EXPECT_TRUE(run.statuses[1].IsSuccess());
  EXPECT_EQ(run.statuses[2].code, Code::kUnschedulableAndUnresolvable);

  auto anti = PodBuilder("q").PodAntiAffinity(AffinityTerm("foo in (bar)", "region")).Obj();
  auto anti_run = RunFilter(*plugin, *anti, c.snapshot());
  EXPECT_EQ(anti_run.statuses[0].code, Code::kUnschedulable);
  EXPECT_EQ(anti_run.statuses[1].code, Code::kUnschedulable);
  EXPECT_TRUE(anti_run.statuses[2].IsSuccess());
}

TEST(InterPodAffinityMultiNodeTest, AffinityRequiresAllTermsOnOnePod) {
  Cluster c;
  c.AddNode("n1", {{"pods", "10"}}, {{"zone", "a"}});
  c.AddNode("n2", {{"pods", "10"}}, {{"zone", "b"}});
  c.AddPod("n1", PodBuilder("x").Label("app", "x").Obj());
  c.AddPod("n2", PodBuilder("y").Label("app", "y").Obj());
  auto plugin = MakePlugin(&InterPodAffinity::Create);
  // Two terms that no single pod matches together: no domain has a count,
  // and matching pods exist, so the self-affinity exception does not apply.
  auto pod = PodBuilder("p")
                 .PodAffinity(AffinityTerm("app=x", "zone"))
                 .PodAffinity(AffinityTerm("app=y", "zone"))
                 .Obj();
  auto run = RunFilter(*plugin, *pod, c.snapshot());
  EXPECT_FALSE(run.statuses[0].IsSuccess());
  EXPECT_FALSE(run.statuses[1].IsSuccess());
}

TEST(InterPodAffinityExtensionsTest, AddAndRemovePodAreInverse) {
  Cluster c;
  c.AddNode("n1", {{"pods", "10"}}, {{"zone", "a"}});
  c.AddNode("n2", {{"pods", "10"}}, {{"zone", "b"}});
  auto blocker = PodBuilder("blocker").Label("app", "web").Obj();
  c.AddPod("n1", blocker);
  auto plugin = MakePlugin(&InterPodAffinity::Create);
  const auto& pre = dynamic_cast<const PreFilterPlugin&>(*plugin);
  auto pod = PodBuilder("p").PodAntiAffinity(AffinityTerm("app=web", "zone")).Obj();
  CycleState state;
  auto before = RunFilter(*plugin, *pod, c.snapshot(), state);
  EXPECT_FALSE(before.statuses[0].IsSuccess());
  ASSERT_TRUE(pre.RemovePod(state, *pod, *blocker, c.index("n1"), c.snapshot()).IsSuccess());
  const auto& filter = dynamic_cast<const FilterPlugin&>(*plugin);
  std::vector<NodeIndex> nodes = {0, 1};
  std::vector<Status> out(2);
  filter.Filter(CycleContext{*pod, c.snapshot(), state}, nodes, out);
  EXPECT_TRUE(out[0].IsSuccess());
  ASSERT_TRUE(pre.AddPod(state, *pod, *blocker, c.index("n1"), c.snapshot()).IsSuccess());
  filter.Filter(CycleContext{*pod, c.snapshot(), state}, nodes, out);
  EXPECT_EQ(out[0].code, Code::kUnschedulable);
  EXPECT_TRUE(out[1].IsSuccess());
}

class InterPodAffinityScoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    c_.AddNode("machine1", {{"pods", "10"}}, {{"region", "China"}});
    c_.AddNode("machine2", {{"pods", "10"}}, {{"region", "India"}});
    c_.AddNode("machine3", {{"pods", "10"}}, {{"region", "China"}});
  }
  Cluster c_;
};

TEST_F(InterPodAffinityScoreTest, PreferredAffinity) {
  c_.AddPod("machine1", PodBuilder("e").Label("security", "S1").Obj());
  auto plugin = MakePlugin(&InterPodAffinity::Create);
  auto pod =
      PodBuilder("p").PreferredPodAffinity(5, AffinityTerm("security in (S1)", "region")).Obj();
  EXPECT_EQ(RunScore(*plugin, *pod, c_.snapshot()).scores, (std::vector<int64_t>{100, 0, 100}));
}

TEST_F(InterPodAffinityScoreTest, PreferredAntiAffinity) {
  c_.AddPod("machine1", PodBuilder("e").Label("security", "S1").Obj());
  auto plugin = MakePlugin(&InterPodAffinity::Create);
  auto pod =
      PodBuilder("p").PreferredPodAntiAffinity(5, AffinityTerm("security in (S1)", "region")).Obj();
  EXPECT_EQ(RunScore(*plugin, *pod, c_.snapshot()).scores, (std::vector<int64_t>{0, 100, 0}));
}

TEST_F(InterPodAffinityScoreTest, MixedWeights) {
  c_.AddPod("machine1", PodBuilder("a").Label("security", "S1").Obj());
  c_.AddPod("machine2", PodBuilder("b").Label("security", "S2").Obj());
  auto plugin = MakePlugin(&InterPodAffinity::Create);
  auto pod = PodBuilder("p")
                 .PreferredPodAffinity(8, AffinityTerm("security in (S1)", "region"))
                 .PreferredPodAffinity(2, AffinityTerm("security in (S2)", "region"))
                 .Obj();
  // China: 8, India: 2 -> min-max: 100, 0, 100.
  EXPECT_EQ(RunScore(*plugin, *pod, c_.snapshot()).scores, (std::vector<int64_t>{100, 0, 100}));
  c_.AddPod("machine2", PodBuilder("c").Label("security", "S1").Obj());
  // China: 8, India: 10 -> 0, 100, 0.
  EXPECT_EQ(RunScore(*plugin, *pod, c_.snapshot()).scores, (std::vector<int64_t>{0, 100, 0}));
}

TEST_F(InterPodAffinityScoreTest, ExistingPodsTermsCount) {
  // Existing pod's required affinity (hardPodAffinityWeight) and preferred
  // anti-affinity towards the incoming pod.
  c_.AddPod("machine1", PodBuilder("a").PodAffinity(AffinityTerm("app=web", "region")).Obj());
  c_.AddPod("machine2",
            PodBuilder("b").PreferredPodAntiAffinity(3, AffinityTerm("app=web", "region")).Obj());
  auto plugin = MakePlugin(&InterPodAffinity::Create);
  auto pod = PodBuilder("p").Label("app", "web").Obj();
  // China: +1, India: -3 -> 100, 0, 100.
  EXPECT_EQ(RunScore(*plugin, *pod, c_.snapshot()).scores, (std::vector<int64_t>{100, 0, 100}));

  InterPodAffinityArgs args;
  args.ignore_preferred_terms_of_existing_pods = true;
  std::any a = args;
  auto ignoring = MakePlugin(&InterPodAffinity::Create, &a);
  EXPECT_TRUE(RunScore(*ignoring, *pod, c_.snapshot()).prescore.IsSkip());

  args = {};
  args.hard_pod_affinity_weight = 0;
  a = args;
  auto no_hard = MakePlugin(&InterPodAffinity::Create, &a);
  // China: 0 (entry absent), India: -3 -> 100, 0, 100.
  EXPECT_EQ(RunScore(*no_hard, *pod, c_.snapshot()).scores, (std::vector<int64_t>{100, 0, 100}));
}

TEST_F(InterPodAffinityScoreTest, NothingToScoreSkips) {
  c_.AddPod("machine1", PodBuilder("e").Label("security", "S1").Obj());
  auto plugin = MakePlugin(&InterPodAffinity::Create);
  EXPECT_TRUE(RunScore(*plugin, *PodBuilder("p").Obj(), c_.snapshot()).prescore.IsSkip());
}

}  // namespace
}  // namespace copse::plugins
