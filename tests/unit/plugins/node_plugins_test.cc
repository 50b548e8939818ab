// NodeName, NodeUnschedulable, NodePorts, TaintToleration, NodeAffinity and
// PrioritySort against kube-scheduler's test tables (facts ported, not code).

#include <gtest/gtest.h>

#include "plugins/node_affinity/node_affinity.h"
#include "plugins/node_name/node_name.h"
#include "plugins/node_ports/node_ports.h"
#include "plugins/node_unschedulable/node_unschedulable.h"
#include "plugins/priority_sort/priority_sort.h"
#include "plugins/taint_toleration/taint_toleration.h"
#include "tests/unit/plugins/test_util.h"

namespace copse::plugins {
namespace {

using testing::Cluster;
using testing::MakePlugin;
using testing::PodBuilder;
using testing::Req;
using testing::RunFilter;
using testing::RunScore;

TEST(NodeNameTest, Filter) {
  Cluster c;
  c.AddNode("foo");
  c.AddNode("bar");
  auto plugin = MakePlugin(&NodeName::Create);
  auto any = RunFilter(*plugin, *PodBuilder("p").Obj(), c.snapshot());
  EXPECT_TRUE(any.statuses[0].IsSuccess());
  EXPECT_TRUE(any.statuses[1].IsSuccess());
  auto run = RunFilter(*plugin, *PodBuilder("p").NodeName("foo").Obj(), c.snapshot());
  EXPECT_TRUE(run.statuses[0].IsSuccess());
  EXPECT_EQ(run.statuses[1].code, Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(run.reasons[1],
            (std::vector<std::string>{"node(s) didn't match the requested node name"}));
}

TEST(NodeUnschedulableTest, Filter) {
  Cluster c;
  c.AddNode("cordoned").SetUnschedulable(true);
  c.AddNode("open");
  auto plugin = MakePlugin(&NodeUnschedulable::Create);
  auto run = RunFilter(*plugin, *PodBuilder("p").Obj(), c.snapshot());
  EXPECT_EQ(run.statuses[0].code, Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(run.reasons[0], (std::vector<std::string>{"node(s) were unschedulable"}));
  EXPECT_TRUE(run.statuses[1].IsSuccess());
  auto tolerating = PodBuilder("t")
                        .Toleration(std::string(kTaintNodeUnschedulable),
                                    TolerationOperator::kExists, "", TaintEffect::kNoSchedule)
                        .Obj();
  EXPECT_TRUE(RunFilter(*plugin, *tolerating, c.snapshot()).statuses[0].IsSuccess());
}

// node_ports_test.go TestNodePorts.
struct PortsCase {
  const char* name;
  std::vector<HostPort> wanted;
  std::vector<HostPort> used;
  bool fits;
};

TEST(NodePortsTest, Filter) {
  const auto P = [](const char* ip, Protocol proto, int32_t port) {
    return HostPort::Make(ip, proto, port);
  };
  const Protocol tcp = Protocol::kTCP;
  const Protocol udp = Protocol::kUDP;
  const std::vector<PortsCase> cases = {
      {"nothing running", {P("127.0.0.1", tcp, 8080)}, {}, true},
      {"other port", {P("127.0.0.1", udp, 8080)}, {P("127.0.0.1", udp, 9090)}, true},
      {"same udp port", {P("127.0.0.1", udp, 8080)}, {P("127.0.0.1", udp, 8080)}, false},
      {"same tcp port", {P("127.0.0.1", tcp, 8080)}, {P("127.0.0.1", tcp, 8080)}, false},
      {"different host ip", {P("127.0.0.1", tcp, 8080)}, {P("127.0.0.2", tcp, 8080)}, true},
      {"different protocol", {P("127.0.0.1", udp, 8080)}, {P("127.0.0.1", tcp, 8080)}, true},
      {"second udp port conflict",
       {P("127.0.0.1", tcp, 8000), P("127.0.0.1", udp, 8080)},
       {P("127.0.0.1", udp, 8080)},
       false},
      {"first tcp port conflict",
       {P("127.0.0.1", tcp, 8001), P("127.0.0.1", udp, 8080)},
       {P("127.0.0.1", tcp, 8001), P("127.0.0.1", udp, 8081)},
       false},
      {"first tcp port conflict due to 0.0.0.0 hostIP",
       {P("0.0.0.0", tcp, 8001), P("127.0.0.1", udp, 8001)},
       {P("127.0.0.1", tcp, 8001)},
       false},
      {"TCP hostPort conflict due to 0.0.0.0 hostIP",
       {P("10.0.10.10", tcp, 8001), P("0.0.0.0", tcp, 8001)},
       {P("127.0.0.1", tcp, 8001)},
       false},
      {"second tcp port conflict to 0.0.0.0 hostIP",
       {P("10.0.10.10", udp, 8001), P("10.0.10.10", tcp, 8001)},
       {P("0.0.0.0", tcp, 8001)},
       false},
      {"second different protocol", {P("10.0.10.10", udp, 8001)}, {P("0.0.0.0", tcp, 8001)}, true},
      {"UDP hostPort conflict due to 0.0.0.0 hostIP",
       {P("10.0.10.10", udp, 8001)},
       {P("0.0.0.0", tcp, 8001), P("0.0.0.0", udp, 8001)},
       false},
      {"empty IP means all addresses", {P("", tcp, 8001)}, {P("10.0.0.1", tcp, 8001)}, false},
  };
  auto plugin = MakePlugin(&NodePorts::Create);
  for (const PortsCase& tc : cases) {
    Cluster c;
    c.AddNode("n");
    PodBuilder existing("existing");
    for (const HostPort& u : tc.used) existing.HostPort(u.ip, u.protocol, u.port);
    c.AddPod("n", existing.Obj());
    PodBuilder pod("pod");
    for (const HostPort& w : tc.wanted) pod.HostPort(w.ip, w.protocol, w.port);
    auto run = RunFilter(*plugin, *pod.Obj(), c.snapshot());
    EXPECT_EQ(run.statuses[0].IsSuccess(), tc.fits) << tc.name;
    if (!tc.fits) {
      EXPECT_EQ(run.statuses[0].code, Code::kUnschedulable) << tc.name;
      EXPECT_EQ(
          run.reasons[0],
          (std::vector<std::string>{"node(s) didn't have free ports for the requested pod ports"}));
    }
  }
  Cluster c;
  c.AddNode("n");
  EXPECT_TRUE(RunFilter(*plugin, *PodBuilder("p").Obj(), c.snapshot()).prefilter.IsSkip());
}

// taint_toleration_test.go TestTaintTolerationFilter.
struct TaintCase {
  const char* name;
  std::vector<Toleration> tolerations;
  std::vector<Taint> taints;
  const char* reason;  // nullptr: fits
};

TEST(TaintTolerationTest, Filter) {
  using E = TaintEffect;
  using Op = TolerationOperator;
  const std::vector<TaintCase> cases = {
      {"no tolerations, tainted node",
       {},
       {{"dedicated", "user1", E::kNoSchedule}},
       "node(s) had untolerated taint {dedicated: user1}"},
      {"dedicated node for user1",
       {{"dedicated", Op::kEqual, "user1", E::kNoSchedule}},
       {{"dedicated", "user1", E::kNoSchedule}},
       nullptr},
      {"dedicated node for user2",
       {{"dedicated", Op::kEqual, "user1", E::kNoSchedule}},
       {{"dedicated", "user2", E::kNoSchedule}},
       "node(s) had untolerated taint {dedicated: user2}"},
      {"Exists tolerates",
       {{"foo", Op::kExists, "", E::kNoSchedule}},
       {{"foo", "bar", E::kNoSchedule}},
       nullptr},
      {"multiple tolerations and taints, all tolerated",
       {{"dedicated", Op::kEqual, "user2", E::kNoSchedule},
        {"foo", Op::kExists, "", E::kNoSchedule}},
       {{"dedicated", "user2", E::kNoSchedule}, {"foo", "bar", E::kNoSchedule}},
       nullptr},
      {"effect mismatch",
       {{"foo", Op::kEqual, "bar", E::kPreferNoSchedule}},
       {{"foo", "bar", E::kNoSchedule}},
       "node(s) had untolerated taint {foo: bar}"},
      {"empty toleration effect matches all",
       {{"foo", Op::kEqual, "bar", std::nullopt}},
       {{"foo", "bar", E::kNoSchedule}},
       nullptr},
      {"PreferNoSchedule taint never filters",
       {{"dedicated", Op::kEqual, "user2", E::kNoSchedule}},
       {{"dedicated", "user1", E::kPreferNoSchedule}},
       nullptr},
      {"no toleration, PreferNoSchedule taint",
       {},
       {{"dedicated", "user1", E::kPreferNoSchedule}},
       nullptr},
      {"NoExecute filters too",
       {},
       {{"node.kubernetes.io/not-ready", "", E::kNoExecute}},
       "node(s) had untolerated taint {node.kubernetes.io/not-ready: }"},
      {"first untolerated taint is reported",
       {{"a", Op::kExists, "", std::nullopt}},
       {{"a", "1", E::kNoSchedule}, {"b", "2", E::kNoSchedule}, {"c", "3", E::kNoExecute}},
       "node(s) had untolerated taint {b: 2}"},
  };
  auto plugin = MakePlugin(&TaintToleration::Create);
  for (const TaintCase& tc : cases) {
    Cluster c;
    c.AddNode("n").SetTaints(tc.taints);
    PodBuilder pod("p");
    for (const Toleration& t : tc.tolerations) pod.Toleration(t.key, t.op, t.value, t.effect);
    auto run = RunFilter(*plugin, *pod.Obj(), c.snapshot());
    if (tc.reason == nullptr) {
      EXPECT_TRUE(run.statuses[0].IsSuccess()) << tc.name;
    } else {
      EXPECT_EQ(run.statuses[0].code, Code::kUnschedulableAndUnresolvable) << tc.name;
      EXPECT_EQ(run.reasons[0], (std::vector<std::string>{tc.reason})) << tc.name;
    }
  }
}

TEST(TaintTolerationTest, Score) {
  using E = TaintEffect;
  auto plugin = MakePlugin(&TaintToleration::Create);
  {
    // "the more intolerable taints a node has, the lower score it gets".
    Cluster c;
    c.AddNode("nodeA");
    c.AddNode("nodeB").SetTaints({{"cpu-type", "arm64", E::kPreferNoSchedule}});
    c.AddNode("nodeC").SetTaints({{"cpu-type", "arm64", E::kPreferNoSchedule},
                                  {"gpu-type", "nvidia", E::kPreferNoSchedule}});
    auto pod = PodBuilder("p")
                   .Toleration("foo", TolerationOperator::kEqual, "bar", E::kPreferNoSchedule)
                   .Obj();
    EXPECT_EQ(RunScore(*plugin, *pod, c.snapshot()).scores, (std::vector<int64_t>{100, 50, 0}));
  }
  {
    // "only taints and tolerations that have effect PreferNoSchedule are checked".
    Cluster c;
    c.AddNode("nodeA");
    c.AddNode("nodeB").SetTaints({{"cpu-type", "arm64", E::kNoSchedule}});
    c.AddNode("nodeC").SetTaints(
        {{"cpu-type", "arm64", E::kPreferNoSchedule}, {"disk-type", "ssd", E::kPreferNoSchedule}});
    auto pod = PodBuilder("p")
                   .Toleration("cpu-type", TolerationOperator::kEqual, "arm64", E::kNoSchedule)
                   .Toleration("disk-type", TolerationOperator::kEqual, "ssd", std::nullopt)
                   .Obj();
    EXPECT_EQ(RunScore(*plugin, *pod, c.snapshot()).scores, (std::vector<int64_t>{100, 100, 0}));
  }
  {
    // "all taints tolerated get the same score, however many".
    Cluster c;
    c.AddNode("nodeA");
    c.AddNode("nodeB").SetTaints({{"foo", "bar", E::kPreferNoSchedule}});
    c.AddNode("nodeC").SetTaints(
        {{"foo", "bar", E::kPreferNoSchedule}, {"foo", "bar", E::kNoSchedule}});
    auto pod =
        PodBuilder("p").Toleration("foo", TolerationOperator::kEqual, "bar", std::nullopt).Obj();
    EXPECT_EQ(RunScore(*plugin, *pod, c.snapshot()).scores, (std::vector<int64_t>{100, 100, 100}));
  }
}

NodeSelectorTerm Term(std::vector<Requirement> expressions, std::vector<Requirement> fields = {}) {
  return NodeSelectorTerm{std::move(expressions), std::move(fields)};
}

class NodeAffinityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    c_.AddNode("node1", {{"cpu", "1"}, {"pods", "10"}}, {{"foo", "bar"}, {"zone", "z1"}});
    c_.AddNode("node2", {{"cpu", "1"}, {"pods", "10"}}, {{"foo", "baz"}, {"key", "value"}});
    c_.AddNode("node3", {{"cpu", "1"}, {"pods", "10"}}, {{"foo", "bar"}, {"key", "value"}});
    plugin_ = MakePlugin(&NodeAffinity::Create);
  }
  Cluster c_;
  std::unique_ptr<Plugin> plugin_;
};

TEST_F(NodeAffinityTest, NoConstraintsSkips) {
  EXPECT_TRUE(RunFilter(*plugin_, *PodBuilder("p").Obj(), c_.snapshot()).prefilter.IsSkip());
}

TEST_F(NodeAffinityTest, NodeSelector) {
  auto run = RunFilter(*plugin_, *PodBuilder("p").NodeSelector("foo", "bar").Obj(), c_.snapshot());
  EXPECT_TRUE(run.statuses[0].IsSuccess());
  EXPECT_EQ(run.statuses[1].code, Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(run.reasons[1],
            (std::vector<std::string>{"node(s) didn't match Pod's node affinity/selector"}));
  EXPECT_TRUE(run.statuses[2].IsSuccess());
}

TEST_F(NodeAffinityTest, RequiredTermsAreOredAndAndedWithNodeSelector) {
  NodeSelector required{{Term({Req("foo", SelectorOp::kIn, {"bar", "value2"})}),
                         Term({Req("key", SelectorOp::kExists)})}};
  auto run =
      RunFilter(*plugin_, *PodBuilder("p").RequiredNodeAffinity(required).Obj(), c_.snapshot());
  EXPECT_TRUE(run.statuses[0].IsSuccess());
  EXPECT_TRUE(run.statuses[1].IsSuccess());
  EXPECT_TRUE(run.statuses[2].IsSuccess());
  auto both = RunFilter(
      *plugin_, *PodBuilder("p").RequiredNodeAffinity(required).NodeSelector("zone", "z1").Obj(),
      c_.snapshot());
  EXPECT_TRUE(both.statuses[0].IsSuccess());
  EXPECT_FALSE(both.statuses[1].IsSuccess());
  EXPECT_FALSE(both.statuses[2].IsSuccess());
  NodeSelector not_in{{Term({Req("foo", SelectorOp::kNotIn, {"bar"})})}};
  auto ni = RunFilter(*plugin_, *PodBuilder("p").RequiredNodeAffinity(not_in).Obj(), c_.snapshot());
  EXPECT_FALSE(ni.statuses[0].IsSuccess());
  EXPECT_TRUE(ni.statuses[1].IsSuccess());
  // An empty term matches nothing.
  NodeSelector empty{{NodeSelectorTerm{}}};
  auto e = RunFilter(*plugin_, *PodBuilder("p").RequiredNodeAffinity(empty).Obj(), c_.snapshot());
  EXPECT_FALSE(e.statuses[0].IsSuccess());
}

TEST_F(NodeAffinityTest, MatchFieldsRestrictNodes) {
  NodeSelector by_name{{Term({}, {Req("metadata.name", SelectorOp::kIn, {"node2"})})}};
  auto run =
      RunFilter(*plugin_, *PodBuilder("p").RequiredNodeAffinity(by_name).Obj(), c_.snapshot());
  ASSERT_TRUE(run.prefilter_nodes.has_value());
  EXPECT_EQ(*run.prefilter_nodes, (std::vector<NodeIndex>{1}));
  EXPECT_TRUE(run.statuses[1].IsSuccess());
  EXPECT_FALSE(run.statuses[0].IsSuccess());

  // "two terms: matchFields does not match, but matchExpressions matches": all nodes.
  NodeSelector two{{Term({}, {Req("metadata.name", SelectorOp::kIn, {"node2"})}),
                    Term({Req("foo", SelectorOp::kIn, {"bar"})})}};
  EXPECT_FALSE(RunFilter(*plugin_, *PodBuilder("p").RequiredNodeAffinity(two).Obj(), c_.snapshot())
                   .prefilter_nodes.has_value());

  // Conflicting names inside one term.
  NodeSelector conflict{{Term({}, {Req("metadata.name", SelectorOp::kIn, {"node1"}),
                                   Req("metadata.name", SelectorOp::kIn, {"node2"})})}};
  auto cr =
      RunFilter(*plugin_, *PodBuilder("p").RequiredNodeAffinity(conflict).Obj(), c_.snapshot());
  EXPECT_EQ(cr.prefilter.code, Code::kUnschedulableAndUnresolvable);
  std::vector<std::string> reasons;
  plugin_->AppendReasons(cr.prefilter, c_.snapshot(), reasons);
  EXPECT_EQ(reasons, (std::vector<std::string>{"pod affinity terms conflict"}));
}

TEST_F(NodeAffinityTest, AddedAffinityIsEnforced) {
  NodeAffinityArgs args;
  args.added_required = NodeSelector{{Term({Req("zone", SelectorOp::kIn, {"z1"})})}};
  std::any a = args;
  auto plugin = MakePlugin(&NodeAffinity::Create, &a);
  auto run = RunFilter(*plugin, *PodBuilder("p").Obj(), c_.snapshot());
  EXPECT_TRUE(run.prefilter.IsSuccess());
  EXPECT_TRUE(run.statuses[0].IsSuccess());
  EXPECT_EQ(run.reasons[1],
            (std::vector<std::string>{"node(s) didn't match scheduler-enforced node affinity"}));
}

TEST_F(NodeAffinityTest, PreferredScore) {
  auto pod = PodBuilder("p")
                 .PreferredNodeAffinity(2, Term({Req("foo", SelectorOp::kIn, {"bar"})}))
                 .PreferredNodeAffinity(4, Term({Req("key", SelectorOp::kIn, {"value"})}))
                 .Obj();
  // node1: 2, node2: 4, node3: 6 -> normalized 33, 66, 100.
  EXPECT_EQ(RunScore(*plugin_, *pod, c_.snapshot()).scores, (std::vector<int64_t>{33, 66, 100}));
  EXPECT_TRUE(RunScore(*plugin_, *PodBuilder("q").Obj(), c_.snapshot()).prescore.IsSkip());
}

TEST(PrioritySortTest, Less) {
  auto plugin = MakePlugin(&PrioritySort::Create);
  const auto& sort = dynamic_cast<const QueueSortPlugin&>(*plugin);
  auto high = PodBuilder("high").Priority(100).Obj();
  auto low = PodBuilder("low").Priority(10).Obj();
  const Clock::TimePoint t1(std::chrono::seconds(1));
  const Clock::TimePoint t2(std::chrono::seconds(2));
  EXPECT_TRUE(sort.Less({high.get(), t2}, {low.get(), t1}));
  EXPECT_FALSE(sort.Less({low.get(), t1}, {high.get(), t2}));
  auto same = PodBuilder("same").Priority(10).Obj();
  EXPECT_TRUE(sort.Less({low.get(), t1}, {same.get(), t2}));
  EXPECT_FALSE(sort.Less({same.get(), t2}, {low.get(), t1}));
}

}  // namespace
}  // namespace copse::plugins
