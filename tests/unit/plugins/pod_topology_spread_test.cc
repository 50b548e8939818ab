// PodTopologySpread against kube-scheduler's podtopologyspread
// filtering_test.go / scoring_test.go scenarios (facts ported, not code).

#include "plugins/pod_topology_spread/pod_topology_spread.h"

#include <gtest/gtest.h>

#include "tests/unit/plugins/test_util.h"

namespace copse::plugins {
namespace {

using testing::Cluster;
using testing::MakePlugin;
using testing::PodBuilder;
using testing::RunFilter;
using testing::RunScore;
using testing::Selector;

constexpr auto kHard = UnsatisfiableConstraintAction::kDoNotSchedule;
constexpr auto kSoft = UnsatisfiableConstraintAction::kScheduleAnyway;
const std::string kZone = "zone";
const std::string kHost(kLabelHostname);

// node-a, node-b in zone1; node-x, node-y in zone2.
class SpreadFilterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    plugin_ = MakePlugin(&PodTopologySpread::Create);
    c_.AddNode("node-a", {{"pods", "100"}}, {{kZone, "zone1"}});
    c_.AddNode("node-b", {{"pods", "100"}}, {{kZone, "zone1"}});
    c_.AddNode("node-x", {{"pods", "100"}}, {{kZone, "zone2"}});
    c_.AddNode("node-y", {{"pods", "100"}}, {{kZone, "zone2"}});
  }
  void Pods(const std::string& node, int count, const std::string& ns = "default") {
    for (int i = 0; i < count; ++i) {
      c_.AddPod(node, PodBuilder(node + "-p" + std::to_string(next_++), ns).Label("foo", "").Obj());
    }
  }
  // One char per node: '.' fits, 'u' Unschedulable, 'U' UnschedulableAndUnresolvable.
  std::string Verdicts(const PodInfo& pod) {
    auto run = RunFilter(*plugin_, pod, c_.snapshot());
    std::string out;
    for (const Status& s : run.statuses) {
      out += s.IsSuccess() ? '.' : (s.code == Code::kUnschedulable ? 'u' : 'U');
    }
    return out;
  }
  std::shared_ptr<PodInfo> Pod(int32_t max_skew, const std::string& key, int32_t min_domains = 1,
                               NodeInclusionPolicy affinity = NodeInclusionPolicy::kHonor,
                               NodeInclusionPolicy taints = NodeInclusionPolicy::kIgnore) {
    return PodBuilder("p")
        .Label("foo", "")
        .Spread(max_skew, key, kHard, Selector("foo"), min_domains, affinity, taints)
        .Obj();
  }
  Cluster c_;
  std::unique_ptr<Plugin> plugin_;
  int next_ = 0;
};

TEST_F(SpreadFilterTest, NoConstraintsSkips) {
  EXPECT_TRUE(RunFilter(*plugin_, *PodBuilder("p").Obj(), c_.snapshot()).prefilter.IsSkip());
  auto soft = PodBuilder("p").Spread(1, kZone, kSoft, Selector("foo")).Obj();
  EXPECT_TRUE(RunFilter(*plugin_, *soft, c_.snapshot()).prefilter.IsSkip());
}

TEST_F(SpreadFilterTest, NoExistingPods) { EXPECT_EQ(Verdicts(*Pod(1, kZone)), "...."); }

TEST_F(SpreadFilterTest, IncomingPodDoesNotMatchItself) {
  auto pod = PodBuilder("p").Label("bar", "").Spread(1, kZone, kHard, Selector("foo")).Obj();
  EXPECT_EQ(Verdicts(*pod), "....");
}

TEST_F(SpreadFilterTest, PodsInOtherNamespacesDoNotCount) {
  Pods("node-a", 1, "ns1");
  Pods("node-b", 1, "ns1");
  Pods("node-y", 1);
  EXPECT_EQ(Verdicts(*Pod(1, kZone)), "..uu");
}

TEST_F(SpreadFilterTest, ZonesAt3And3AllFit) {
  Pods("node-a", 2);
  Pods("node-b", 1);
  Pods("node-x", 1);
  Pods("node-y", 2);
  EXPECT_EQ(Verdicts(*Pod(1, kZone)), "....");
}

TEST_F(SpreadFilterTest, NodeWithoutZoneLabel) {
  c_.node("node-b").SetLabels({{kHost, "node-b"}});
  Pods("node-a", 1);
  Pods("node-b", 1);
  Pods("node-x", 1);
  Pods("node-y", 1);
  EXPECT_EQ(Verdicts(*Pod(1, kZone)), ".Uuu");
  auto run = RunFilter(*plugin_, *Pod(1, kZone), c_.snapshot());
  EXPECT_EQ(run.reasons[1],
            (std::vector<std::string>{
                "node(s) didn't match pod topology spread constraints (missing required label)"}));
  EXPECT_EQ(run.reasons[2],
            (std::vector<std::string>{"node(s) didn't match pod topology spread constraints"}));
}

TEST_F(SpreadFilterTest, NodesAt2102OnlyNodeXFits) {
  Pods("node-a", 2);
  Pods("node-b", 1);
  Pods("node-y", 3);
  EXPECT_EQ(Verdicts(*Pod(1, kHost)), "uu.u");
  EXPECT_EQ(Verdicts(*Pod(2, kHost)), "u..u");
}

TEST_F(SpreadFilterTest, ZonesAt3And1PodNotMatchingItself) {
  Pods("node-a", 2);
  Pods("node-b", 1);
  Pods("node-x", 1);
  auto pod = PodBuilder("p").Label("bar", "").Spread(1, kZone, kHard, Selector("foo")).Obj();
  EXPECT_EQ(Verdicts(*pod), "uu..");
}

TEST_F(SpreadFilterTest, TerminatingPodsDoNotCount) {
  c_.AddPod("node-a", PodBuilder("t1").Label("foo", "").Terminating().Obj());
  c_.AddPod("node-a", PodBuilder("t2").Label("foo", "").Terminating().Obj());
  EXPECT_EQ(Verdicts(*Pod(1, kZone)), "....");
}

TEST_F(SpreadFilterTest, MinDomainsTreatsGlobalMinimumAsZero) {
  // Three domains (nodes a, b, x), pods 2/2/1, maxSkew 2: with minDomains 4 only node-x fits.
  c_.node("node-y").SetLabels({});
  Pods("node-a", 2);
  Pods("node-b", 2);
  Pods("node-x", 1);
  EXPECT_EQ(Verdicts(*Pod(2, kHost, /*min_domains=*/4)), "uu.U");
  EXPECT_EQ(Verdicts(*Pod(2, kHost, /*min_domains=*/3)), "...U");
}

TEST_F(SpreadFilterTest, NodeAffinityPolicy) {
  c_.node("node-a").SetLabels({{kHost, "node-a"}, {kZone, "zone1"}, {"pool", "a"}});
  c_.node("node-b").SetLabels({{kHost, "node-b"}, {kZone, "zone1"}, {"pool", "a"}});
  Pods("node-a", 1);
  const auto pod = [&](NodeInclusionPolicy policy) {
    return PodBuilder("p")
        .Label("foo", "")
        .NodeSelector("pool", "a")
        .Spread(1, kZone, kHard, Selector("foo"), 1, policy, NodeInclusionPolicy::kIgnore)
        .Obj();
  };
  // Honor: zone2 has no node matching the pod's nodeSelector, so the minimum is zone1's 1.
  EXPECT_EQ(Verdicts(*pod(NodeInclusionPolicy::kHonor)), "....");
  // Ignore: zone2 counts with 0 pods.
  EXPECT_EQ(Verdicts(*pod(NodeInclusionPolicy::kIgnore)), "uu..");
}

TEST_F(SpreadFilterTest, NodeTaintsPolicy) {
  c_.node("node-x").SetTaints({{"dedicated", "infer", TaintEffect::kNoSchedule}});
  c_.node("node-y").SetTaints({{"dedicated", "infer", TaintEffect::kNoSchedule}});
  Pods("node-a", 1);
  EXPECT_EQ(Verdicts(*Pod(1, kZone, 1, NodeInclusionPolicy::kHonor, NodeInclusionPolicy::kHonor)),
            "....");
  EXPECT_EQ(Verdicts(*Pod(1, kZone, 1, NodeInclusionPolicy::kHonor, NodeInclusionPolicy::kIgnore)),
            "uu..");
}

TEST_F(SpreadFilterTest, TwoConstraints) {
  // zone: 3/1, hostname: a 2, b 1, x 1, y 0.
  Pods("node-a", 2);
  Pods("node-b", 1);
  Pods("node-x", 1);
  auto pod = PodBuilder("p")
                 .Label("foo", "")
                 .Spread(1, kZone, kHard, Selector("foo"))
                 .Spread(1, kHost, kHard, Selector("foo"))
                 .Obj();
  // zone1 fails the zone constraint; node-x fails hostname (1+1-0 > 1); node-y fits.
  EXPECT_EQ(Verdicts(*pod), "uuu.");
}

TEST_F(SpreadFilterTest, EmptySelectorCountsNothingButMatchesSelf) {
  Pods("node-a", 3);
  auto pod = PodBuilder("p").Label("foo", "").Spread(1, kZone, kHard, LabelSelector()).Obj();
  EXPECT_EQ(Verdicts(*pod), "....");
}

TEST_F(SpreadFilterTest, AddAndRemovePodUpdateCounts) {
  auto victim = PodBuilder("victim").Label("foo", "").Obj();
  c_.AddPod("node-b", victim);
  auto pod = Pod(1, kZone);
  CycleState state;
  auto run = RunFilter(*plugin_, *pod, c_.snapshot(), state);
  ASSERT_TRUE(run.prefilter.IsSuccess());
  EXPECT_FALSE(run.statuses[0].IsSuccess());  // zone1: 1 + 1 - 0 > 1
  const auto& pre = dynamic_cast<const PreFilterPlugin&>(*plugin_);
  const auto& filter = dynamic_cast<const FilterPlugin&>(*plugin_);
  ASSERT_TRUE(pre.RemovePod(state, *pod, *victim, c_.index("node-b"), c_.snapshot()).IsSuccess());
  std::vector<NodeIndex> nodes = {0, 1, 2, 3};
  std::vector<Status> out(4);
  filter.Filter(CycleContext{*pod, c_.snapshot(), state}, nodes, out);
  EXPECT_TRUE(out[0].IsSuccess());  // zone1: 0 + 1 - 0
  ASSERT_TRUE(pre.AddPod(state, *pod, *victim, c_.index("node-b"), c_.snapshot()).IsSuccess());
  filter.Filter(CycleContext{*pod, c_.snapshot(), state}, nodes, out);
  EXPECT_FALSE(out[0].IsSuccess());
}

TEST(SpreadScoreTest, HostnameAllFourNodesCandidates) {
  Cluster c;
  for (const char* n : {"node-a", "node-b", "node-c", "node-d"}) c.AddNode(n, {{"pods", "100"}});
  for (int i = 0; i < 2; ++i)
    c.AddPod("node-a", PodBuilder("a" + std::to_string(i)).Label("foo", "").Obj());
  for (int i = 0; i < 3; ++i)
    c.AddPod("node-d", PodBuilder("d" + std::to_string(i)).Label("foo", "").Obj());
  auto plugin = MakePlugin(&PodTopologySpread::Create);
  auto pod = PodBuilder("p").Label("foo", "").Spread(1, kHost, kSoft, Selector("foo")).Obj();
  // weight log(4 + 2) = 1.79: raw a 4, b 0, c 0, d 5 -> 100 * (5 + 0 - s) / 5.
  EXPECT_EQ(RunScore(*plugin, *pod, c.snapshot()).scores, (std::vector<int64_t>{20, 100, 100, 0}));
}

TEST(SpreadScoreTest, ZonesAndMaxSkew) {
  Cluster c;
  c.AddNode("node-a", {{"pods", "100"}}, {{kZone, "zone1"}});
  c.AddNode("node-b", {{"pods", "100"}}, {{kZone, "zone1"}});
  c.AddNode("node-x", {{"pods", "100"}}, {{kZone, "zone2"}});
  c.AddNode("node-y", {{"pods", "100"}}, {{kZone, "zone2"}});
  c.AddPod("node-a", PodBuilder("a1").Label("foo", "").Obj());
  c.AddPod("node-a", PodBuilder("a2").Label("foo", "").Obj());
  c.AddPod("node-b", PodBuilder("b1").Label("foo", "").Obj());
  c.AddPod("node-x", PodBuilder("x1").Label("foo", "").Obj());
  auto plugin = MakePlugin(&PodTopologySpread::Create);
  // weight log(2 + 2) = 1.386: zone1 round(4.16) = 4, zone2 round(1.39) = 1.
  auto skew1 = PodBuilder("p").Label("foo", "").Spread(1, kZone, kSoft, Selector("foo")).Obj();
  EXPECT_EQ(RunScore(*plugin, *skew1, c.snapshot()).scores,
            (std::vector<int64_t>{25, 25, 100, 100}));
  // maxSkew 2 adds 1: zone1 5, zone2 2.
  auto skew2 = PodBuilder("p").Label("foo", "").Spread(2, kZone, kSoft, Selector("foo")).Obj();
  EXPECT_EQ(RunScore(*plugin, *skew2, c.snapshot()).scores,
            (std::vector<int64_t>{40, 40, 100, 100}));
  // Only feasible nodes define the domains: scoring x and y alone.
  EXPECT_EQ(RunScore(*plugin, *skew1, c.snapshot(), {2, 3}).scores,
            (std::vector<int64_t>{100, 100}));
}

TEST(SpreadScoreTest, NodesMissingKeysAreIgnored) {
  Cluster c;
  c.AddNode("node-a", {{"pods", "100"}}, {{kZone, "zone1"}});
  c.AddNode("node-b", {{"pods", "100"}});
  c.AddNode("node-x", {{"pods", "100"}}, {{kZone, "zone2"}});
  auto plugin = MakePlugin(&PodTopologySpread::Create);
  auto pod = PodBuilder("p").Label("foo", "").Spread(1, kZone, kSoft, Selector("foo")).Obj();
  EXPECT_EQ(RunScore(*plugin, *pod, c.snapshot()).scores, (std::vector<int64_t>{100, 0, 100}));
}

TEST(SpreadScoreTest, SystemDefaults) {
  Cluster c;
  c.AddNode("node-a", {{"pods", "100"}}, {{std::string(kLabelTopologyZone), "zone1"}});
  c.AddNode("node-b", {{"pods", "100"}}, {{std::string(kLabelTopologyZone), "zone1"}});
  c.AddNode("node-x", {{"pods", "100"}}, {{std::string(kLabelTopologyZone), "zone2"}});
  c.AddPod("node-a", PodBuilder("a1").Label("foo", "").Obj());
  PodTopologySpreadArgs args;
  args.defaulting_type = SpreadDefaultingType::kSystem;
  std::any a = args;
  auto plugin = MakePlugin(&PodTopologySpread::Create, &a);
  PodBuilder b("p");
  b.Label("foo", "");
  b.raw().default_spread_selector = Selector("foo");
  // zone (maxSkew 3, weight log 4) + hostname (maxSkew 5, weight log 5):
  // a 1.39+2 + 1.61+4 = 9, b 3.39 + 4 = 7, x 2 + 4 = 6 -> 100 * (9 + 6 - s) / 9.
  EXPECT_EQ(RunScore(*plugin, *b.Obj(), c.snapshot()).scores, (std::vector<int64_t>{66, 88, 100}));
  // Without a default selector (no owning service/controller) there is nothing to spread.
  EXPECT_TRUE(RunScore(*plugin, *PodBuilder("q").Obj(), c.snapshot()).prescore.IsSkip());
  // Off by default.
  auto defaults_off = MakePlugin(&PodTopologySpread::Create);
  EXPECT_TRUE(RunScore(*defaults_off, *b.Obj(), c.snapshot()).prescore.IsSkip());
}

TEST(SpreadArgsTest, Validation) {
  PodTopologySpreadArgs args;
  TopologySpreadConstraint c;
  c.topology_key = "zone";
  c.max_skew = 0;
  args.default_constraints = {c};
  std::any a = args;
  EXPECT_FALSE(PodTopologySpread::Create(&a).ok());
  args.default_constraints[0].max_skew = 1;
  args.default_constraints[0].label_selector = LabelSelector();
  a = args;
  EXPECT_FALSE(PodTopologySpread::Create(&a).ok());
  args.default_constraints[0].label_selector.reset();
  a = args;
  EXPECT_TRUE(PodTopologySpread::Create(&a).ok());
}

}  // namespace
}  // namespace copse::plugins
