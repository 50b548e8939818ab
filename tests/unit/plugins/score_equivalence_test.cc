// NodeResourcesFit and NodeResourcesBalancedAllocation score from snapshot
// columns directly (no per-node ForNode call, no integer division per node);
// their results must equal the reference composition of
// ResourceAllocationInputs::ForNode with LeastAllocatedScore /
// MostAllocatedScore / BalancedAllocationScore, for every node, on clusters
// with extended and ephemeral resources, zero capacities, unknown resource
// names, pods that request nothing, and overcommitted nodes.

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "plugins/balanced_allocation/balanced_allocation.h"
#include "plugins/node_resources_fit/fit.h"
#include "plugins/node_resources_fit/resource_allocation.h"
#include "tests/unit/plugins/test_util.h"

namespace copse::plugins {
namespace {

using testing::Cluster;
using testing::MakePlugin;
using testing::PodBuilder;

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
                     ? c.AddNode("n" + std::to_string(i), {{"cpu", cpus.c_str()},
                                                            {"memory", mem.c_str()},
                                                            {"pods", "110"}})
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
        p.Requests(c.names, {{"cpu", req_cpu.c_str()},
                             {"memory", req_mem.c_str()},
                             {"ephemeral-storage", "1Gi"}});
      }
      node.AddPod(p.Obj());
    }
  }
}

std::vector<std::shared_ptr<PodInfo>> Pods(Cluster& c) {
  return {PodBuilder("plain").Requests(c.names, {{"cpu", "2"}, {"memory", "4Gi"}}).Obj(),
          PodBuilder("nothing").Obj(),
          PodBuilder("gpu")
              .Requests(c.names, {{"cpu", "500m"}, {"nvidia.com/gpu", "2"}})
              .Obj(),
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

TEST(ScoreEquivalenceTest, BalancedAllocationMatchesReferenceComposition) {
  std::mt19937_64 rng(11);
  Cluster c;
  Populate(c, rng);
  const Snapshot& snap = c.snapshot();
  const std::vector<NodeIndex> nodes = AllNodes(snap);
  for (const auto& resources : ResourceConfigs()) {
    BalancedAllocationArgs args;
    args.resources = resources;
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

}  // namespace
}  // namespace copse::plugins
