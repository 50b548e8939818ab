// The framework runner: profiles, FitError messages, PreFilter results,
// scoring and tie-breaking, early stop, reentrant chunks; plus the model
// (pod-class signatures) and the snapshot it runs on.

#include "plugins/framework/framework.h"

#include <gtest/gtest.h>

#include <thread>

#include "plugins/balanced_allocation/balanced_allocation.h"
#include "plugins/defaults/defaults.h"
#include "plugins/node_resources_fit/fit.h"
#include "tests/unit/plugins/test_util.h"

namespace copse::plugins {
namespace {

using testing::Cluster;
using testing::FixedRandom;
using testing::PodBuilder;
using testing::Req;
using testing::TestNow;

std::unique_ptr<Framework> MakeFramework(const Profile& profile = DefaultProfile()) {
  Registry registry;
  EXPECT_TRUE(RegisterDefaultPlugins(registry).ok());
  Result<std::unique_ptr<Framework>> fw = Framework::Create(registry, profile);
  EXPECT_TRUE(fw.ok()) << (fw.ok() ? "" : fw.error().message);
  return fw.ok() ? std::move(*fw) : nullptr;
}

ScheduleResult Schedule(const Framework& fw, const PodInfo& pod, const Snapshot& snapshot,
                        uint64_t random = 0, ScheduleOptions options = {}) {
  CycleState state;
  Workspace ws;
  FixedRandom r(random);
  return fw.SchedulePod(pod, snapshot, state, ws, r, options, TestNow());
}

TEST(ProfileTest, DefaultProfileExpansion) {
  auto fw = MakeFramework();
  EXPECT_EQ(fw->PluginNames(ExtensionPoint::kQueueSort),
            (std::vector<std::string>{"PrioritySort"}));
  EXPECT_EQ(fw->PluginNames(ExtensionPoint::kFilter),
            (std::vector<std::string>{"NodeUnschedulable", "NodeName", "TaintToleration",
                                      "NodeAffinity", "NodePorts", "NodeResourcesFit",
                                      "PodTopologySpread", "InterPodAffinity"}));
  EXPECT_EQ(
      fw->PluginNames(ExtensionPoint::kPreFilter),
      (std::vector<std::string>{"TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit",
                                "PodTopologySpread", "InterPodAffinity", "DynamicResources"}));
  EXPECT_EQ(fw->PluginNames(ExtensionPoint::kPostFilter),
            (std::vector<std::string>{"DefaultPreemption"}));
  EXPECT_EQ(fw->PluginNames(ExtensionPoint::kScore),
            (std::vector<std::string>{"TaintToleration", "NodeAffinity", "NodeResourcesFit",
                                      "PodTopologySpread", "InterPodAffinity",
                                      "NodeResourcesBalancedAllocation", "DomainPacking"}));
  EXPECT_EQ(fw->ScoreWeight("DomainPacking"), 1);
  // kube's scoring alone: no DomainPacking, accelerator pods scored as kube does.
  Registry registry;
  ASSERT_TRUE(RegisterDefaultPlugins(registry).ok());
  const Profile kube = KubeDefaultProfile();
  EXPECT_EQ(kube.scheduler_name, "default-scheduler");
  auto kube_fw = Framework::Create(registry, kube);
  ASSERT_TRUE(kube_fw.ok()) << kube_fw.error().message;
  EXPECT_EQ((*kube_fw)->PluginNames(ExtensionPoint::kScore),
            (std::vector<std::string>{"TaintToleration", "NodeAffinity", "NodeResourcesFit",
                                      "PodTopologySpread", "InterPodAffinity",
                                      "NodeResourcesBalancedAllocation"}));
  EXPECT_FALSE(
      std::any_cast<FitArgs>(kube.plugin_args.at("NodeResourcesFit")).accelerator_strategy.enabled);
  EXPECT_FALSE(
      std::any_cast<BalancedAllocationArgs>(kube.plugin_args.at("NodeResourcesBalancedAllocation"))
          .skip_accelerator_pods);
  EXPECT_EQ(fw->ScoreWeight("TaintToleration"), 3);
  EXPECT_EQ(fw->ScoreWeight("NodeAffinity"), 2);
  EXPECT_EQ(fw->ScoreWeight("PodTopologySpread"), 2);
  EXPECT_EQ(fw->ScoreWeight("InterPodAffinity"), 2);
  EXPECT_EQ(fw->ScoreWeight("NodeResourcesFit"), 1);
  EXPECT_EQ(fw->ScoreWeight("NodeResourcesBalancedAllocation"), 1);
}

TEST(ProfileTest, DisableAndOverride) {
  Profile p = DefaultProfile();
  p.plugins.filter.disabled = {"NodePorts"};
  p.plugins.score.enabled = {{"NodeResourcesFit", 5}};
  p.plugins.score.disabled = {"NodeResourcesBalancedAllocation"};
  p.plugins.post_filter.disabled = {"*"};
  auto fw = MakeFramework(p);
  const auto filters = fw->PluginNames(ExtensionPoint::kFilter);
  EXPECT_EQ(std::count(filters.begin(), filters.end(), "NodePorts"), 0);
  const auto scores = fw->PluginNames(ExtensionPoint::kScore);
  EXPECT_EQ(scores.front(), "NodeResourcesFit");  // explicit overrides come first
  EXPECT_EQ(fw->ScoreWeight("NodeResourcesFit"), 5);
  EXPECT_EQ(fw->ScoreWeight("NodeResourcesBalancedAllocation"), 0);
  EXPECT_TRUE(fw->PluginNames(ExtensionPoint::kPostFilter).empty());
}

TEST(ProfileTest, Errors) {
  Registry registry;
  ASSERT_TRUE(RegisterDefaultPlugins(registry).ok());
  EXPECT_FALSE(RegisterDefaultPlugins(registry).ok());  // names taken

  Profile unknown = DefaultProfile();
  unknown.plugins.multi_point.enabled.push_back({"NoSuchPlugin", 0});
  Result<std::unique_ptr<Framework>> a = Framework::Create(registry, unknown);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().message, "plugin \"NoSuchPlugin\" does not exist");

  Profile wrong_point = DefaultProfile();
  wrong_point.plugins.filter.enabled.push_back({"PrioritySort", 0});
  Result<std::unique_ptr<Framework>> b = Framework::Create(registry, wrong_point);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().message, "plugin \"PrioritySort\" does not extend Filter plugin");

  Profile no_sort = DefaultProfile();
  no_sort.plugins.queue_sort.disabled = {"*"};
  EXPECT_FALSE(Framework::Create(registry, no_sort).ok());

  Profile bad_args = DefaultProfile();
  bad_args.plugin_args["NodeResourcesFit"] = std::string("oops");
  EXPECT_FALSE(Framework::Create(registry, bad_args).ok());
}

// 5 nodes, 3 without GPUs, 2 tainted for inference. kube-scheduler sorts the
// "<count> <reason>" strings (sort.Strings), so "2 node(s)..." precedes "3 Insufficient...".
TEST(FitErrorTest, KubeSchedulerMessage) {
  Cluster c;
  for (int i = 0; i < 3; ++i) c.AddNode("cpu-" + std::to_string(i));
  for (int i = 0; i < 2; ++i) {
    c.AddNode("gpu-" + std::to_string(i),
              {{"cpu", "8"}, {"memory", "8Gi"}, {"pods", "110"}, {"nvidia.com/gpu", "8"}})
        .SetTaints({{"dedicated", "infer", TaintEffect::kNoSchedule}});
  }
  auto fw = MakeFramework();
  auto pod = PodBuilder("p").Requests(c.names, {{"cpu", "1"}, {"nvidia.com/gpu", "1"}}).Obj();
  ScheduleOptions no_preemption;
  no_preemption.run_post_filter = false;
  ScheduleResult r = Schedule(*fw, *pod, c.snapshot(), 0, no_preemption);
  EXPECT_EQ(r.code, Code::kUnschedulable);
  EXPECT_EQ(r.message,
            "0/5 nodes are available: 2 node(s) had untolerated taint {dedicated: infer}, 3 "
            "Insufficient nvidia.com/gpu.");
  EXPECT_EQ(r.unschedulable_plugins, (uint64_t{1} << *fw->FindPlugin("TaintToleration")) |
                                         (uint64_t{1} << *fw->FindPlugin("NodeResourcesFit")));
  // With preemption: nothing to evict on the GPU-less nodes, tainted nodes cannot help.
  EXPECT_EQ(Schedule(*fw, *pod, c.snapshot()).message,
            "0/5 nodes are available: 2 node(s) had untolerated taint {dedicated: infer}, 3 "
            "Insufficient nvidia.com/gpu. "
            "preemption: 0/5 nodes are available: 2 Preemption is not helpful for scheduling, 3 No "
            "preemption victims "
            "found for incoming pod.");
}

TEST(FitErrorTest, EveryReasonOfANodeCountsAndSortingIsLexicographic) {
  Cluster c;
  for (int i = 0; i < 10; ++i)
    c.AddNode("small-" + std::to_string(i), {{"cpu", "1"}, {"memory", "1Gi"}, {"pods", "110"}});
  for (int i = 0; i < 2; ++i)
    c.AddNode("full-" + std::to_string(i), {{"cpu", "8"}, {"memory", "8Gi"}, {"pods", "0"}});
  auto fw = MakeFramework();
  auto pod = PodBuilder("p").Requests(c.names, {{"cpu", "2"}, {"memory", "2Gi"}}).Obj();
  ScheduleOptions o;
  o.run_post_filter = false;
  // Go's sort.Strings order: "10 ..." sorts before "2 ...".
  EXPECT_EQ(
      Schedule(*fw, *pod, c.snapshot(), 0, o).message,
      "0/12 nodes are available: 10 Insufficient cpu, 10 Insufficient memory, 2 Too many pods.");
}

TEST(FitErrorTest, PreFilterResultExcludedNodes) {
  Cluster c;
  c.AddNode("node1");
  c.AddNode("node2", {{"cpu", "1"}, {"memory", "1Gi"}, {"pods", "110"}});
  c.AddNode("node3");
  auto fw = MakeFramework();
  auto pod = PodBuilder("p")
                 .RequiredNodeAffinity(NodeSelector{
                     {NodeSelectorTerm{{}, {Req("metadata.name", SelectorOp::kIn, {"node2"})}}}})
                 .Requests(c.names, {{"cpu", "2"}})
                 .Obj();
  ScheduleOptions o;
  o.run_post_filter = false;
  ScheduleResult r = Schedule(*fw, *pod, c.snapshot(), 0, o);
  EXPECT_EQ(r.message,
            "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) "
            "[NodeAffinity].");
  EXPECT_EQ(r.evaluated_nodes, 1u);
  auto fits = PodBuilder("q")
                  .RequiredNodeAffinity(NodeSelector{
                      {NodeSelectorTerm{{}, {Req("metadata.name", SelectorOp::kIn, {"node3"})}}}})
                  .Obj();
  EXPECT_EQ(Schedule(*fw, *fits, c.snapshot()).node, std::optional<NodeIndex>(2));
}

TEST(FitErrorTest, PreFilterRejection) {
  Cluster c;
  c.AddNode("node1");
  c.AddNode("node2");
  auto fw = MakeFramework();
  auto pod = PodBuilder("p")
                 .RequiredNodeAffinity(NodeSelector{
                     {NodeSelectorTerm{{},
                                       {Req("metadata.name", SelectorOp::kIn, {"node1"}),
                                        Req("metadata.name", SelectorOp::kIn, {"node2"})}}}})
                 .Obj();
  ScheduleResult r = Schedule(*fw, *pod, c.snapshot());
  EXPECT_EQ(
      r.message,
      "0/2 nodes are available: pod affinity terms conflict. preemption: 0/2 nodes are available: "
      "2 Preemption is not helpful for scheduling.");
}

TEST(FitErrorTest, NoNodes) {
  Cluster c;
  auto fw = MakeFramework();
  ScheduleResult r = Schedule(*fw, *PodBuilder("p").Obj(), c.snapshot());
  EXPECT_EQ(r.code, Code::kUnschedulable);
  EXPECT_EQ(r.message, "no nodes available to schedule pods");
}

TEST(ScheduleTest, PicksBestScoreAndBreaksTiesWithTheRandomSource) {
  Cluster c;
  c.AddNode("big", {{"cpu", "16"}, {"memory", "32Gi"}, {"pods", "110"}});
  c.AddNode("small", {{"cpu", "2"}, {"memory", "4Gi"}, {"pods", "110"}});
  auto fw = MakeFramework();
  auto pod = PodBuilder("p").Requests(c.names, {{"cpu", "1"}, {"memory", "2Gi"}}).Obj();
  EXPECT_EQ(Schedule(*fw, *pod, c.snapshot()).node, std::optional<NodeIndex>(0));  // LeastAllocated

  Cluster twins;
  twins.AddNode("a");
  twins.AddNode("b");
  twins.AddNode("c");
  // Reservoir sampling: Uniform() == 0 replaces the pick at every tie -> last; never -> first.
  EXPECT_EQ(Schedule(*fw, *pod, twins.snapshot(), /*random=*/0).node, std::optional<NodeIndex>(2));
  EXPECT_EQ(Schedule(*fw, *pod, twins.snapshot(), /*random=*/5).node, std::optional<NodeIndex>(0));
  Mt19937Random mt(42);
  std::vector<int> seen(3, 0);
  for (int i = 0; i < 300; ++i) {
    CycleState state;
    Workspace ws;
    ++seen[*fw->SchedulePod(*pod, twins.snapshot(), state, ws, mt, {}, TestNow()).node];
  }
  for (int count : seen) EXPECT_GT(count, 50);
}

TEST(ScheduleTest, SingleFeasibleNodeSkipsScoring) {
  Cluster c;
  c.AddNode("a");
  c.AddNode("b").SetUnschedulable(true);
  auto fw = MakeFramework();
  ScheduleResult r = Schedule(*fw, *PodBuilder("p").Obj(), c.snapshot());
  EXPECT_EQ(r.node, std::optional<NodeIndex>(0));
  EXPECT_EQ(r.feasible_nodes, 1u);
  EXPECT_EQ(r.evaluated_nodes, 2u);
}

TEST(ScheduleTest, NumFeasibleNodesToFind) {
  EXPECT_EQ(NumFeasibleNodesToFind(0, 50), 50u);
  EXPECT_EQ(NumFeasibleNodesToFind(0, 300), 144u);    // 48%
  EXPECT_EQ(NumFeasibleNodesToFind(0, 1000), 420u);   // 42%
  EXPECT_EQ(NumFeasibleNodesToFind(0, 5000), 500u);   // 10%
  EXPECT_EQ(NumFeasibleNodesToFind(0, 10000), 500u);  // floor of 5%
  EXPECT_EQ(NumFeasibleNodesToFind(30, 1000), 300u);
  EXPECT_EQ(NumFeasibleNodesToFind(10, 200), 100u);  // at least 100
  EXPECT_EQ(NumFeasibleNodesToFind(100, 1000), 1000u);
}

TEST(ScheduleTest, StopsAfterEnoughFeasibleNodesAndRotates) {
  Cluster c;
  for (int i = 0; i < 300; ++i) c.AddNode("n" + std::to_string(i));
  auto fw = MakeFramework();
  auto pod = PodBuilder("p").Obj();
  ScheduleOptions o;
  o.chunk_size = 64;
  ScheduleResult r = Schedule(*fw, *pod, c.snapshot(), 0, o);
  EXPECT_EQ(r.feasible_nodes, 144u);
  EXPECT_EQ(r.evaluated_nodes, 144u);
  o.start_index = 250;
  o.num_feasible_to_find = 100;
  CycleState state;
  Workspace ws;
  FixedRandom random(1000);
  r = fw->SchedulePod(*pod, c.snapshot(), state, ws, random, o, TestNow());
  EXPECT_EQ(r.feasible_nodes, 100u);
  // Walk order 250..299, 0..49: all ties, the first one wins with this random source.
  EXPECT_EQ(r.node, std::optional<NodeIndex>(250));
  EXPECT_EQ(ws.feasible.back(), 49u);
}

TEST(ScheduleTest, FilterChunksAreReentrant) {
  Cluster c;
  for (int i = 0; i < 2000; ++i) {
    auto& n = c.AddNode("n" + std::to_string(i),
                        {{"cpu", i % 3 == 0 ? "1" : "8"}, {"memory", "8Gi"}, {"pods", "110"}},
                        {{"zone", "z" + std::to_string(i % 4)}});
    if (i % 7 == 0) n.SetTaints({{"t", "v", TaintEffect::kNoSchedule}});
  }
  auto fw = MakeFramework();
  auto pod = PodBuilder("p").Requests(c.names, {{"cpu", "2"}}).NodeSelector("zone", "z1").Obj();
  const Snapshot& snap = c.snapshot();
  CycleState state;
  ASSERT_TRUE(fw->RunPreFilter(*pod, snap, state).status.IsSuccess());
  const CycleContext ctx{*pod, snap, state};
  std::vector<NodeIndex> all(snap.num_nodes());
  for (NodeIndex i = 0; i < all.size(); ++i) all[i] = i;

  std::vector<Status> sequential(all.size());
  std::vector<NodeIndex> seq_feasible(all.size());
  FilterScratch scratch;
  scratch.Reserve(all.size());
  size_t seq_count = 0;
  uint64_t seq_rejected = 0;
  ASSERT_TRUE(fw->FilterChunk(ctx, all, scratch, sequential, seq_feasible, seq_count, seq_rejected)
                  .IsSuccess());

  std::vector<Status> parallel(all.size());
  std::vector<NodeIndex> feasible(all.size());
  size_t counts[2] = {0, 0};
  uint64_t rejected[2] = {0, 0};
  const size_t half = all.size() / 2;
  std::thread t1([&] {
    FilterScratch s;
    s.Reserve(half);
    fw->FilterChunk(ctx, std::span<const NodeIndex>(all.data(), half), s, parallel,
                    std::span<NodeIndex>(feasible.data(), half), counts[0], rejected[0]);
  });
  std::thread t2([&] {
    FilterScratch s;
    s.Reserve(all.size() - half);
    fw->FilterChunk(ctx, std::span<const NodeIndex>(all.data() + half, all.size() - half), s,
                    parallel, std::span<NodeIndex>(feasible.data() + half, all.size() - half),
                    counts[1], rejected[1]);
  });
  t1.join();
  t2.join();
  EXPECT_EQ(counts[0] + counts[1], seq_count);
  EXPECT_EQ(rejected[0] | rejected[1], seq_rejected);
  EXPECT_EQ(parallel, sequential);
}

TEST(PodSignatureTest, EqualForSameClass) {
  ResourceNames names;
  const auto base = [&](const std::string& name) {
    return PodBuilder(name)
        .Label("app", "web")
        .Requests(names, {{"cpu", "1"}, {"memory", "1Gi"}})
        .Toleration("k", TolerationOperator::kExists, "", TaintEffect::kNoSchedule)
        .PodAntiAffinity(testing::AffinityTerm("app=web", std::string(kLabelHostname)));
  };
  auto a = base("a").Obj();
  auto b = base("b").Priority(100).StartTime(5).NominatedNode("x").Obj();
  EXPECT_NE(a->uid, b->uid);
  EXPECT_EQ(a->signature, b->signature);
  // Preferred terms only affect scoring.
  auto c = base("c").PreferredPodAffinity(10, testing::AffinityTerm("app=db", "zone")).Obj();
  EXPECT_EQ(a->signature, c->signature);
}

TEST(PodSignatureTest, DiffersWhenFeasibilityMayDiffer) {
  ResourceNames names;
  const auto base = [&]() {
    return PodBuilder("p").Label("app", "web").Requests(names, {{"cpu", "1"}});
  };
  const uint64_t s = base().Obj()->signature;
  EXPECT_NE(s, base().Requests(names, {{"cpu", "2"}}).Obj()->signature);
  EXPECT_NE(s, base().Label("tier", "x").Obj()->signature);
  EXPECT_NE(s, base().NodeSelector("zone", "a").Obj()->signature);
  EXPECT_NE(s,
            base().Toleration("k", TolerationOperator::kExists, "", std::nullopt).Obj()->signature);
  EXPECT_NE(s, base().HostPort("", Protocol::kTCP, 80).Obj()->signature);
  EXPECT_NE(s, base().PodAffinity(testing::AffinityTerm("app=db", "zone")).Obj()->signature);
  EXPECT_NE(s, base()
                   .Spread(1, "zone", UnsatisfiableConstraintAction::kDoNotSchedule,
                           testing::Selector("app"))
                   .Obj()
                   ->signature);
  EXPECT_NE(s, base().NodeName("n1").Obj()->signature);
  EXPECT_NE(s, PodBuilder("p", "other-ns")
                   .Label("app", "web")
                   .Requests(names, {{"cpu", "1"}})
                   .Obj()
                   ->signature);
  auto required = base();
  required.RequiredNodeAffinity(
      NodeSelector{{NodeSelectorTerm{{Req("zone", SelectorOp::kIn, {"a"})}, {}}}});
  EXPECT_NE(s, required.Obj()->signature);
}

TEST(PodInfoTest, FinalizeResolvesTermsAndDefaults) {
  PodBuilder b("p", "team");
  b.Label("app", "web").Label("version", "v2");
  PodAffinityTerm t = testing::AffinityTerm("app=web", "zone");
  t.match_label_keys = {"version"};
  b.PodAntiAffinity(t);
  b.PodAffinity(testing::AffinityTerm("app=web", "zone", {"b", "a", "b"}));
  auto pod = b.Obj();
  EXPECT_EQ(pod->required_anti_affinity[0].namespaces, (std::vector<std::string>{"team"}));
  EXPECT_EQ(pod->required_affinity[0].namespaces, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(pod->required_anti_affinity[0].MatchesLabels({{"app", "web"}, {"version", "v2"}}));
  EXPECT_FALSE(pod->required_anti_affinity[0].MatchesLabels({{"app", "web"}, {"version", "v1"}}));
  EXPECT_EQ(pod->non_zero_cpu_milli, kDefaultMilliCpuRequest);
  EXPECT_EQ(pod->non_zero_memory, kDefaultMemoryRequest);
  EXPECT_TRUE(pod->has_pod_affinity);
}

TEST(SnapshotTest, SyncCopiesOnlyChangedNodes) {
  ResourceNames names;
  Snapshot snap(names);
  std::vector<std::unique_ptr<NodeInfo>> nodes;
  for (int i = 0; i < 3; ++i) {
    nodes.push_back(std::make_unique<NodeInfo>("n" + std::to_string(i)));
    nodes.back()->SetAllocatable(testing::MakeResources(names, {{"cpu", "4"}, {"pods", "10"}}));
    nodes.back()->SetLabels({{std::string(kLabelTopologyZone), i == 2 ? "b" : "a"}});
  }
  const auto ptrs = [&] {
    std::vector<const NodeInfo*> v;
    for (auto& n : nodes) v.push_back(n.get());
    return v;
  };
  EXPECT_EQ(snap.Sync(ptrs()), 3u);
  EXPECT_EQ(snap.Sync(ptrs()), 0u);
  auto pod = PodBuilder("p")
                 .Requests(names, {{"cpu", "1"}, {"example.com/x", "2"}})
                 .HostPort("", Protocol::kTCP, 80)
                 .Obj();
  nodes[1]->AddPod(pod);
  EXPECT_EQ(snap.Sync(ptrs()), 1u);
  const ResourceId x = *names.Find("example.com/x");
  EXPECT_EQ(snap.requested(kResourceIdCpu, 1), 1000);
  EXPECT_EQ(snap.requested(x, 1), 2);
  EXPECT_EQ(snap.requested(kResourceIdPods, 1), 1);
  EXPECT_EQ(snap.pod_count(1), 1u);
  EXPECT_EQ(snap.used_ports(1).size(), 1u);
  const LabelColumn* zone = snap.label_column(kLabelTopologyZone);
  ASSERT_NE(zone, nullptr);
  EXPECT_EQ(zone->id(0), zone->id(1));
  EXPECT_NE(zone->id(0), zone->id(2));
  EXPECT_EQ(zone->value(zone->id(2)), "b");
  EXPECT_EQ(snap.label_column("rack"), nullptr);
  EXPECT_EQ(LabelColumnRef(snap, "rack")->id(0), LabelColumn::kAbsent);

  // Scratch edits and restore.
  Snapshot scratch = snap;
  EXPECT_TRUE(scratch.RemovePod(1, pod->uid));
  EXPECT_EQ(scratch.requested(kResourceIdCpu, 1), 0);
  EXPECT_TRUE(scratch.used_ports(1).empty());
  scratch.CopyNodeFrom(snap, 1);
  EXPECT_EQ(scratch.requested(kResourceIdCpu, 1), 1000);

  // Removing a node shrinks the snapshot and forgets its name.
  nodes.erase(nodes.begin());
  EXPECT_EQ(snap.Sync(ptrs()), 2u);
  EXPECT_EQ(snap.num_nodes(), 2u);
  EXPECT_FALSE(snap.FindNode("n0").has_value());
  EXPECT_EQ(snap.FindNode("n2"), std::optional<NodeIndex>(1));
}

}  // namespace
}  // namespace copse::plugins
