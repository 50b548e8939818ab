// Plugins that precompute or inline for speed must give the same answers as
// the plain definitions, node by node:
//   - NodeResourcesFit and NodeResourcesBalancedAllocation score from snapshot
//     columns directly (no per-node ForNode call, no integer division per
//     node): equal to ResourceAllocationInputs::ForNode composed with
//     Least/MostAllocatedScore and BalancedAllocationScore, on clusters with
//     extended and ephemeral resources, zero capacities, unknown resource
//     names, pods that request nothing, and overcommitted nodes.
//   - NodeAffinity evaluates selectors once per combination of label values:
//     equal to matching each node's label map (nodeSelector, required terms,
//     the profile's added affinity, preferred weights), with every operator,
//     missing keys, indexed and non-indexed keys.

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "plugins/balanced_allocation/balanced_allocation.h"
#include "plugins/node_affinity/node_affinity.h"
#include "plugins/node_resources_fit/fit.h"
#include "plugins/node_resources_fit/resource_allocation.h"
#include "tests/unit/plugins/test_util.h"

namespace copse::plugins {
namespace {

using testing::Cluster;
using testing::MakePlugin;
using testing::PodBuilder;
using testing::Req;

// A cluster of nodes with random capacities and existing pods, some nodes
// with zero cpu, some without the GPU resource, some overcommitted.
void Populate(Cluster& c, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> cpu(0, 96);
  std::uniform_int_distribution<int> mem_gi(1, 1024);
  std::uniform_int_distribution<int> coin(0, 3);
  for (int i = 0; i < 300; ++i) {
    const std::string cpus = std::to_string(coin(rng) == 0 ? 0 : cpu(rng));
    const std::string mem = std::to_string(mem_gi(rng)) + "Gi";
    const std::string gpus = std::to_string(coin(rng) == 0 ? 0 : 8);
    auto& node = coin(rng) == 0
                     ? c.AddNode("n" + std::to_string(i),
                                 {{"cpu", cpus.c_str()}, {"memory", mem.c_str()}, {"pods", "110"}})
                     : c.AddNode("n" + std::to_string(i), {{"cpu", cpus.c_str()},
                                                           {"memory", mem.c_str()},
                                                           {"pods", "110"},
                                                           {"ephemeral-storage", "100Gi"},
                                                           {"nvidia.com/gpu", gpus.c_str()}});
    const int pods = coin(rng) + coin(rng);
    for (int k = 0; k < pods; ++k) {
      PodBuilder p("e" + std::to_string(i) + "-" + std::to_string(k));
      const std::string req_cpu = std::to_string(cpu(rng) * 300) + "m";  // may exceed capacity
      const std::string req_mem = std::to_string(mem_gi(rng) / 4) + "Gi";
      if (coin(rng) == 0) {
        p.Requests(c.names, {{"nvidia.com/gpu", "1"}});  // cpu/memory by default only
      } else {
        p.Requests(
            c.names,
            {{"cpu", req_cpu.c_str()}, {"memory", req_mem.c_str()}, {"ephemeral-storage", "1Gi"}});
      }
      node.AddPod(p.Obj());
    }
  }
}

std::vector<std::shared_ptr<PodInfo>> Pods(Cluster& c) {
  return {PodBuilder("plain").Requests(c.names, {{"cpu", "2"}, {"memory", "4Gi"}}).Obj(),
          PodBuilder("nothing").Obj(),
          PodBuilder("gpu").Requests(c.names, {{"cpu", "500m"}, {"nvidia.com/gpu", "2"}}).Obj(),
          PodBuilder("disk")
              .Requests(c.names, {{"memory", "1Gi"}, {"ephemeral-storage", "10Gi"}})
              .Obj()};
}

std::vector<std::vector<ResourceSpec>> ResourceConfigs() {
  return {{{"cpu", 1}, {"memory", 1}},
          {{"cpu", 3}, {"memory", 1}, {"nvidia.com/gpu", 5}},
          {{"memory", 2}, {"ephemeral-storage", 1}, {"example.com/unknown", 4}},
          {{"nvidia.com/gpu", 1}, {"pods", 1}, {"cpu", 1}, {"cpu", 2}}};
}

std::vector<NodeIndex> AllNodes(const Snapshot& snap) {
  std::vector<NodeIndex> nodes(snap.num_nodes());
  for (NodeIndex n = 0; n < nodes.size(); ++n) nodes[n] = n;
  return nodes;
}

std::vector<int64_t> RawScores(const Plugin& plugin, const PodInfo& pod, const Snapshot& snap,
                               const std::vector<NodeIndex>& nodes) {
  CycleState state;
  const auto& pre = dynamic_cast<const PreScorePlugin&>(plugin);
  std::vector<int64_t> out(nodes.size(), -1);
  if (!pre.PreScore(pod, snap, nodes, state).IsSuccess()) return {};
  const auto& score = dynamic_cast<const ScorePlugin&>(plugin);
  // Odd chunk sizes: per-chunk state must not leak between calls.
  for (size_t pos = 0; pos < nodes.size(); pos += 37) {
    const size_t len = std::min<size_t>(37, nodes.size() - pos);
    EXPECT_TRUE(score
                    .Score(CycleContext{pod, snap, state},
                           std::span<const NodeIndex>(nodes.data() + pos, len),
                           std::span<int64_t>(out.data() + pos, len))
                    .IsSuccess());
  }
  return out;
}

TEST(ScoreEquivalenceTest, FitMatchesReferenceComposition) {
  std::mt19937_64 rng(7);
  Cluster c;
  Populate(c, rng);
  const Snapshot& snap = c.snapshot();
  const std::vector<NodeIndex> nodes = AllNodes(snap);
  for (const ScoringStrategyType type :
       {ScoringStrategyType::kLeastAllocated, ScoringStrategyType::kMostAllocated}) {
    for (const auto& resources : ResourceConfigs()) {
      FitArgs args;
      args.scoring_strategy.type = type;
      args.scoring_strategy.resources = resources;
      args.accelerator_strategy.enabled = false;  // kube's scoring for every pod
      const PluginArgs any_args = args;
      auto plugin = MakePlugin(&Fit::Create, &any_args);
      for (const auto& pod : Pods(c)) {
        const std::vector<int64_t> got = RawScores(*plugin, *pod, snap, nodes);
        ASSERT_EQ(got.size(), nodes.size());
        ResourceAllocationInputs inputs;
        inputs.Prepare(*pod, snap, resources, /*use_requested=*/false);
        std::vector<int64_t> alloc(inputs.size());
        std::vector<int64_t> req(inputs.size());
        for (NodeIndex n : nodes) {
          inputs.ForNode(snap, n, alloc, req);
          const int64_t want = type == ScoringStrategyType::kLeastAllocated
                                   ? LeastAllocatedScore(req, alloc, inputs.weights())
                                   : MostAllocatedScore(req, alloc, inputs.weights());
          ASSERT_EQ(got[n], want) << "pod " << pod->name << " node " << snap.node_name(n)
                                  << " strategy " << static_cast<int>(type) << " resources "
                                  << resources.size();
        }
      }
    }
  }
}

// acceleratorStrategy (default): a pod requesting an extended resource is
// scored MostAllocated on exactly the extended resources it requests, weight
// 1; other pods by scoringStrategy.
TEST(ScoreEquivalenceTest, FitAcceleratorStrategyMatchesReferenceComposition) {
  std::mt19937_64 rng(9);
  Cluster c;
  Populate(c, rng);
  const Snapshot& snap = c.snapshot();
  const std::vector<NodeIndex> nodes = AllNodes(snap);
  auto plugin = MakePlugin(&Fit::Create);
  size_t accelerator_pods = 0;
  for (const auto& pod : Pods(c)) {
    std::vector<ResourceSpec> extended;
    for (size_t r = 0; r < pod->requests.size(); ++r) {
      const auto id = static_cast<ResourceId>(r);
      const std::string name(snap.resources().Name(id));
      if (id != kResourceIdPods && pod->requests.Get(id) > 0 && IsExtendedResourceName(name)) {
        extended.push_back({name, 1});
      }
    }
    const std::vector<ResourceSpec> resources =
        extended.empty() ? std::vector<ResourceSpec>{{"cpu", 1}, {"memory", 1}} : extended;
    accelerator_pods += extended.empty() ? 0 : 1;
    const std::vector<int64_t> got = RawScores(*plugin, *pod, snap, nodes);
    ASSERT_EQ(got.size(), nodes.size());
    ResourceAllocationInputs inputs;
    inputs.Prepare(*pod, snap, resources, /*use_requested=*/false);
    std::vector<int64_t> alloc(inputs.size());
    std::vector<int64_t> req(inputs.size());
    for (NodeIndex n : nodes) {
      inputs.ForNode(snap, n, alloc, req);
      const int64_t want = extended.empty() ? LeastAllocatedScore(req, alloc, inputs.weights())
                                            : MostAllocatedScore(req, alloc, inputs.weights());
      ASSERT_EQ(got[n], want) << "pod " << pod->name << " node " << snap.node_name(n);
    }
  }
  EXPECT_GT(accelerator_pods, 0u);
}

TEST(ScoreEquivalenceTest, BalancedAllocationMatchesReferenceComposition) {
  std::mt19937_64 rng(11);
  Cluster c;
  Populate(c, rng);
  const Snapshot& snap = c.snapshot();
  const std::vector<NodeIndex> nodes = AllNodes(snap);
  for (const auto& resources : ResourceConfigs()) {
    BalancedAllocationArgs args;
    args.resources = resources;
    args.skip_accelerator_pods = false;  // kube's scoring for every pod
    for (auto& r : args.resources) r.weight = 1;
    const PluginArgs any_args = args;
    auto plugin = MakePlugin(&BalancedAllocation::Create, &any_args);
    for (const auto& pod : Pods(c)) {
      const std::vector<int64_t> got = RawScores(*plugin, *pod, snap, nodes);
      ResourceAllocationInputs inputs;
      inputs.Prepare(*pod, snap, args.resources, /*use_requested=*/true);
      if (inputs.AllPodRequestsZero()) {
        EXPECT_TRUE(got.empty()) << "PreScore skips pods that request nothing";
        continue;
      }
      ASSERT_EQ(got.size(), nodes.size());
      std::vector<int64_t> alloc(inputs.size());
      std::vector<int64_t> req(inputs.size());
      for (NodeIndex n : nodes) {
        inputs.ForNode(snap, n, alloc, req);
        ASSERT_EQ(got[n], BalancedAllocationScore(req, alloc))
            << "pod " << pod->name << " node " << snap.node_name(n);
      }
    }
  }
}

// Nodes with a zone (indexed), a rack and a numeric generation (not indexed),
// some of them missing each label.
void PopulateLabels(Cluster& c, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> pick(0, 5);
  for (int i = 0; i < 400; ++i) {
    Labels labels;
    if (pick(rng) != 0) labels[std::string(kLabelTopologyZone)] = "z" + std::to_string(pick(rng));
    if (pick(rng) != 0) labels["rack"] = "r" + std::to_string(pick(rng) + pick(rng));
    if (pick(rng) != 0) labels["gen"] = std::to_string(pick(rng) * 3);
    c.AddNode("node-" + std::to_string(i), {{"cpu", "4"}, {"memory", "8Gi"}, {"pods", "110"}},
              std::move(labels));
  }
}

std::vector<Requirement> RandomRequirements(std::mt19937_64& rng) {
  const std::string zone(kLabelTopologyZone);
  const std::vector<Requirement> pool = {
      Req(zone, SelectorOp::kIn, {"z1", "z2", "z3"}),
      Req(zone, SelectorOp::kNotIn, {"z0"}),
      Req("rack", SelectorOp::kExists),
      Req("rack", SelectorOp::kDoesNotExist),
      Req("rack", SelectorOp::kIn, {"r4", "r5", "r6", "r7"}),
      Req("gen", SelectorOp::kGt, {"4"}),
      Req("gen", SelectorOp::kLt, {"10"}),
      Req("missing", SelectorOp::kDoesNotExist),
      Req("missing", SelectorOp::kIn, {"x"}),
      Req(std::string(kLabelHostname), SelectorOp::kNotIn, {"node-1", "node-2"}),
  };
  std::vector<Requirement> out;
  const int n = static_cast<int>(rng() % 3) + 1;
  for (int i = 0; i < n; ++i) out.push_back(pool[rng() % pool.size()]);
  return out;
}

NodeSelector RandomSelector(std::mt19937_64& rng) {
  NodeSelector s;
  const int terms = static_cast<int>(rng() % 3) + 1;
  for (int t = 0; t < terms; ++t) s.terms.push_back(NodeSelectorTerm{RandomRequirements(rng), {}});
  return s;
}

// With only the default indexed keys (zone, hostname) some selectors are
// evaluated per value combination and the rest node by node; with "rack" and
// "gen" indexed as well, nearly all are.
class NodeAffinityEquivalenceTest : public ::testing::TestWithParam<bool> {};

TEST_P(NodeAffinityEquivalenceTest, FilterAndScoreMatchPerNodeEvaluation) {
  std::mt19937_64 rng(3);
  Cluster c;
  PopulateLabels(c, rng);
  if (GetParam()) {
    c.mutable_snapshot().IndexLabelKey("rack");
    c.mutable_snapshot().IndexLabelKey("gen");
  }
  const Snapshot& snap = c.snapshot();
  ASSERT_EQ(snap.label_column("rack") != nullptr, GetParam());
  const std::vector<NodeIndex> nodes = AllNodes(snap);
  int fast_cases = 0;
  for (int round = 0; round < 60; ++round) {
    NodeAffinityArgs args;
    if (round % 3 == 0) args.added_required = RandomSelector(rng);
    if (round % 4 == 0) args.added_preferred.push_back({7, RandomSelector(rng).terms[0]});
    const PluginArgs any_args = args;
    auto plugin = MakePlugin(&NodeAffinity::Create, &any_args);
    PodBuilder b("p" + std::to_string(round));
    if (round % 2 == 0)
      b.NodeSelector(std::string(kLabelTopologyZone), "z" + std::to_string(round % 6));
    if (round % 5 != 0) b.RequiredNodeAffinity(RandomSelector(rng));
    for (int k = 0; k < round % 3; ++k) {
      b.PreferredNodeAffinity(static_cast<int32_t>(rng() % 50 + 1), RandomSelector(rng).terms[0]);
    }
    auto pod = b.Obj();

    // Filter: the plugin against each node's full label map.
    testing::FilterRun run = testing::RunFilter(*plugin, *pod, snap);
    if (run.prefilter.IsSkip()) continue;
    for (NodeIndex n : nodes) {
      const Labels& labels = snap.node_labels(n);
      const std::string& name = snap.node_name(n);
      Status want = Status::Success();
      if (args.added_required && !args.added_required->Matches(labels, name)) {
        want = Status::Unresolvable(NodeAffinity::kReasonEnforced);
      } else if (!pod->MatchesRequiredNodeAffinity(labels, name)) {
        want = Status::Unresolvable(NodeAffinity::kReasonPod);
      }
      ASSERT_EQ(run.statuses[n].code, want.code) << "round " << round << " node " << name;
      ASSERT_EQ(run.statuses[n].reason, want.reason) << "round " << round << " node " << name;
    }
    // Score: raw sums of matching preferred weights.
    const std::vector<int64_t> got = RawScores(*plugin, *pod, snap, nodes);
    if (got.empty()) continue;  // PreScore skipped: no preferred terms
    ++fast_cases;
    for (NodeIndex n : nodes) {
      int64_t want = 0;
      for (const auto* terms : {&args.added_preferred, &pod->preferred_node_affinity}) {
        for (const PreferredSchedulingTerm& t : *terms) {
          if (t.weight != 0 && t.term.Matches(snap.node_labels(n), snap.node_name(n))) {
            want += t.weight;
          }
        }
      }
      ASSERT_EQ(got[n], want) << "round " << round << " node " << snap.node_name(n);
    }
  }
  EXPECT_GT(fast_cases, 10);
}

INSTANTIATE_TEST_SUITE_P(IndexedKeys, NodeAffinityEquivalenceTest, ::testing::Bool());

}  // namespace
}  // namespace copse::plugins
