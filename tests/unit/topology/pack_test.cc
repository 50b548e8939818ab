#include "topology/pack.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "tests/unit/topology/topology_test_util.h"

namespace copse::topology {
namespace pack_test {

using testing::AddSyntheticNodes;
using testing::Shape;
using testing::TestCluster;
using testing::TopologyLabels;
using testing::ZoneBlockRack;

constexpr int64_t kGi = int64_t{1} << 30;

// Checks a placement against the tree's free capacity: counts per class,
// feasibility, and no node over its free capacity on any resource.
void ExpectValidPlacement(const DomainTree& tree, std::span<const ClassDemand> classes,
                          std::span<const Assignment> assignments,
                          std::span<const NodeIndex> domain_nodes) {
  std::vector<uint64_t> placed(classes.size(), 0);
  std::map<NodeIndex, std::vector<int64_t>> used;
  for (const Assignment& a : assignments) {
    ASSERT_LT(a.class_index, classes.size());
    ASSERT_GT(a.count, 0u);
    ASSERT_NE(std::find(domain_nodes.begin(), domain_nodes.end(), a.node), domain_nodes.end())
        << "node " << a.node << " outside the domain";
    const PodClass& cls = classes[a.class_index].cls;
    if (!cls.feasible.empty()) {
      ASSERT_NE(cls.feasible[a.node], 0) << "infeasible node " << a.node;
    }
    placed[a.class_index] += a.count;
    auto& u = used[a.node];
    u.resize(kMaxResources, 0);
    for (size_t r = 0; r < kMaxResources; ++r) {
      const auto rid = static_cast<ResourceId>(r);
      u[r] += rid == kResourceIdPods ? a.count : cls.request.Get(rid) * a.count;
    }
  }
  for (size_t i = 0; i < classes.size(); ++i)
    EXPECT_EQ(placed[i], classes[i].count) << "class " << i;
  for (const auto& [node, u] : used) {
    for (size_t r = 0; r < kMaxResources; ++r) {
      const auto rid = static_cast<ResourceId>(r);
      EXPECT_LE(u[r], tree.node_free(node, rid)) << "node " << node << " resource " << r;
    }
  }
}

// Exact feasibility by depth-first search (tiny instances only).
bool ExactFits(const DomainTree& tree, std::span<const ClassDemand> classes,
               std::span<const NodeIndex> nodes) {
  std::vector<std::vector<int64_t>> free(nodes.size(), std::vector<int64_t>(kMaxResources, 0));
  for (size_t i = 0; i < nodes.size(); ++i)
    for (size_t r = 0; r < kMaxResources; ++r)
      free[i][r] = tree.node_free(nodes[i], static_cast<ResourceId>(r));
  std::vector<std::pair<size_t, size_t>> pods;  // (class, first node allowed)
  for (size_t c = 0; c < classes.size(); ++c)
    for (uint32_t k = 0; k < classes[c].count; ++k) pods.emplace_back(c, 0);
  std::function<bool(size_t, size_t)> place = [&](size_t p, size_t min_node) -> bool {
    if (p == pods.size()) return true;
    const size_t c = pods[p].first;
    const bool same_class_before = p > 0 && pods[p - 1].first == c;
    const PodClass& cls = classes[c].cls;
    for (size_t i = same_class_before ? min_node : 0; i < nodes.size(); ++i) {
      if (!cls.feasible.empty() && cls.feasible[nodes[i]] == 0) continue;
      bool fits = free[i][kResourceIdPods] >= 1;
      for (size_t r = 0; r < kMaxResources && fits; ++r) {
        if (r != kResourceIdPods && free[i][r] < cls.request.Get(static_cast<ResourceId>(r)))
          fits = false;
      }
      if (!fits) continue;
      for (size_t r = 0; r < kMaxResources; ++r)
        free[i][r] -= r == kResourceIdPods ? 1 : cls.request.Get(static_cast<ResourceId>(r));
      const bool ok = place(p + 1, i);
      for (size_t r = 0; r < kMaxResources; ++r)
        free[i][r] += r == kResourceIdPods ? 1 : cls.request.Get(static_cast<ResourceId>(r));
      if (ok) return true;
    }
    return false;
  };
  return place(0, 0);
}

std::vector<int64_t> Remaining(const DomainPacker& packer, std::span<const NodeIndex> nodes) {
  std::vector<int64_t> out;
  for (NodeIndex n : nodes)
    for (size_t r = 0; r < kMaxResources; ++r)
      out.push_back(packer.remaining(n, static_cast<ResourceId>(r)));
  return out;
}

TEST(DomainPacker, RandomizedNeverOverAllocatesAndIsExactForOneClass) {
  std::mt19937_64 rng(11);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  int exact_yes = 0;
  int greedy_yes = 0;
  DomainPacker packer;  // reused across instances
  for (int round = 0; round < 1500; ++round) {
    TestCluster cluster;
    const int racks = 1 + pick(3);
    const int per_rack = 1 + pick(4);
    for (int r = 0; r < racks; ++r)
      for (int i = 0; i < per_rack; ++i) {
        NodeInfo& node = cluster.AddNode("n" + std::to_string(r) + "-" + std::to_string(i),
                                         TopologyLabels(1, 1, r + 1),
                                         Shape{1000 * pick(9), kGi * pick(9), pick(5), pick(6)});
        if (pick(3) == 0) node.AddPod(cluster.MakePod({500 * pick(4), kGi * pick(3), pick(2), 0}));
      }
    DomainTree tree(ZoneBlockRack());
    tree.Refresh(cluster.Sync());
    const uint32_t level = static_cast<uint32_t>(pick(3));
    const DomainId d = static_cast<DomainId>(pick(static_cast<int>(tree.num_domains(level))));
    const std::span<const NodeIndex> nodes = tree.nodes(level, d);

    const int k = 1 + pick(3);
    std::vector<std::vector<uint8_t>> masks(k);
    std::vector<ClassDemand> classes;
    for (int c = 0; c < k; ++c) {
      if (pick(2) == 0) {
        for (size_t n = 0; n < tree.num_nodes(); ++n) masks[c].push_back(pick(5) != 0 ? 1 : 0);
      }
      classes.push_back(ClassDemand{
          PodClass{cluster.Vector({500 * pick(5), kGi / 2 * pick(5), pick(3), 0}), masks[c]},
          static_cast<uint32_t>(pick(5))});
    }
    packer.Reset(tree, level, d);
    ASSERT_EQ(packer.num_nodes(), nodes.size());
    const std::vector<int64_t> before = Remaining(packer, nodes);
    const PackResult result = packer.TryPlace(classes);
    if (result.ok) {
      ExpectValidPlacement(tree, classes, packer.assignments(), nodes);
      // The ledger matches the assignments.
      for (NodeIndex n : nodes) {
        int64_t pods = 0;
        for (const Assignment& a : packer.assignments())
          if (a.node == n) pods += a.count;
        ASSERT_EQ(packer.remaining(n, kResourceIdPods), tree.node_free(n, kResourceIdPods) - pods);
      }
    } else {
      ASSERT_TRUE(packer.assignments().empty());
      ASSERT_EQ(Remaining(packer, nodes), before) << "a failed TryPlace must change nothing";
      ASSERT_LT(result.failed_class, classes.size());
      ASSERT_LT(result.failed_placed, classes[result.failed_class].count);
    }
    if (k == 1) {
      FitCounts counts;
      CountFits(tree, classes[0].cls, counts);
      ASSERT_EQ(result.ok, counts.domain(level, d) >= classes[0].count) << "round " << round;
      if (!result.ok) {
        ASSERT_EQ(result.failed_placed, counts.domain(level, d));
      }
    } else {
      const bool exact = ExactFits(tree, classes, nodes);
      if (result.ok) {
        ASSERT_TRUE(exact) << "greedy found a placement the exact search did not";
      }
      exact_yes += exact ? 1 : 0;
      greedy_yes += result.ok ? 1 : 0;
    }
  }
  RecordProperty("exact_feasible", exact_yes);
  RecordProperty("greedy_found", greedy_yes);
  std::printf("multi-class instances: exact feasible %d, greedy found %d\n", exact_yes, greedy_yes);
  ASSERT_GT(exact_yes, 50);
  // The greedy check finds nearly all of them on these shapes (issue 5 asks
  // for 95% of an exact solver's gangs).
  EXPECT_GE(greedy_yes * 100, exact_yes * 95);
}

TEST(DomainPacker, LargestClassFirst) {
  TestCluster cluster;
  cluster.AddNode("a", TopologyLabels(1, 1, 1), {8000, 8 * kGi, 4, 10});
  cluster.AddNode("b", TopologyLabels(1, 1, 1), {8000, 8 * kGi, 2, 10});
  cluster.AddNode("c", TopologyLabels(1, 1, 1), {8000, 8 * kGi, 2, 10});
  DomainTree tree(ZoneBlockRack());
  tree.Refresh(cluster.Sync());
  // Listed small first: placing them first-fit would fill node a and strand the big pod.
  const std::vector<ClassDemand> classes = {
      {PodClass{cluster.Vector({100, kGi / 8, 1, 0}), {}}, 4},
      {PodClass{cluster.Vector({100, kGi / 8, 4, 0}), {}}, 1},
  };
  DomainPacker packer;
  packer.Reset(tree, 2, 0);
  ASSERT_TRUE(packer.TryPlace(classes).ok);
  const std::vector<Assignment> expected = {{1, 0, 1}, {0, 1, 2}, {0, 2, 2}};
  EXPECT_EQ(std::vector<Assignment>(packer.assignments().begin(), packer.assignments().end()),
            expected);
  EXPECT_EQ(packer.remaining(0, cluster.gpu), 0);
  EXPECT_EQ(packer.remaining(1, kResourceIdPods), 8);
}

TEST(DomainPacker, RetriesWithTheMostConstrainedClassFirst) {
  TestCluster cluster;
  cluster.AddNode("a", TopologyLabels(1, 1, 1), {8000, 8 * kGi, 4, 10});
  cluster.AddNode("b", TopologyLabels(1, 1, 1), {8000, 8 * kGi, 4, 10});
  DomainTree tree(ZoneBlockRack());
  tree.Refresh(cluster.Sync());
  const std::vector<uint8_t> only_a = {1, 0};
  // Largest first puts the big pod on a, where the small ones must go.
  std::vector<ClassDemand> classes = {
      {PodClass{cluster.Vector({100, kGi / 8, 4, 0}), {}}, 1},
      {PodClass{cluster.Vector({100, kGi / 8, 1, 0}), only_a}, 4},
  };
  DomainPacker packer;
  packer.Reset(tree, 2, 0);
  ASSERT_TRUE(packer.TryPlace(classes).ok);
  const std::vector<Assignment> expected = {{1, 0, 4}, {0, 1, 1}};
  EXPECT_EQ(std::vector<Assignment>(packer.assignments().begin(), packer.assignments().end()),
            expected);
  // Five small pods cannot fit on a: the first pass's failure is reported.
  classes[1].count = 5;
  packer.Reset(tree, 2, 0);
  const PackResult result = packer.TryPlace(classes);
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.failed_class, 1u);
  EXPECT_EQ(result.failed_placed, 0u);
  EXPECT_TRUE(packer.assignments().empty());
  EXPECT_EQ(packer.RemainingFree(2, 0, cluster.gpu), 8);
}

TEST(DomainPacker, FailureReportsTheShortClassAndChangesNothing) {
  TestCluster cluster;
  AddSyntheticNodes(cluster, 1, 1, 1, 2, {8000, 8 * kGi, 8, 110});
  DomainTree tree(ZoneBlockRack());
  tree.Refresh(cluster.Sync());
  DomainPacker packer;
  packer.Reset(tree, 0, 0);
  const std::vector<ClassDemand> first = {{PodClass{cluster.Vector({1000, kGi, 2, 0}), {}}, 3}};
  ASSERT_TRUE(packer.TryPlace(first).ok);
  EXPECT_EQ(packer.RemainingFree(0, 0, cluster.gpu), 10);
  const std::vector<ClassDemand> second = {
      {PodClass{cluster.Vector({1000, kGi, 0, 0}), {}}, 2},
      {PodClass{cluster.Vector({1000, kGi, 4, 0}), {}}, 3},
  };
  const PackResult result = packer.TryPlace(second);
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.failed_class, 1u);
  EXPECT_EQ(result.failed_placed, 2u);  // node 0 has 2 GPUs left, node 1 has 8
  EXPECT_EQ(packer.assignments().size(), 1u);
  EXPECT_EQ(packer.RemainingFree(0, 0, cluster.gpu), 10);
  EXPECT_EQ(packer.RemainingFree(0, 0, kResourceIdCpu), 13000);
}

TEST(DomainPacker, MarkAndRollbackAcrossCalls) {
  TestCluster cluster;
  AddSyntheticNodes(cluster, 1, 1, 2, 2, {8000, 8 * kGi, 8, 110});
  DomainTree tree(ZoneBlockRack());
  tree.Refresh(cluster.Sync());
  DomainPacker packer;
  packer.ResetAll(tree);
  const std::vector<ClassDemand> a = {{PodClass{cluster.Vector({1000, kGi, 4, 0}), {}}, 3}};
  ASSERT_TRUE(packer.TryPlace(a).ok);
  const size_t mark = packer.Mark();
  const int64_t gpu_after_a = packer.RemainingFree(0, 0, cluster.gpu);
  EXPECT_EQ(gpu_after_a, 20);
  ASSERT_TRUE(packer.TryPlace(a).ok);  // node 3 is left with 8 GPUs
  EXPECT_FALSE(packer.TryPlace(a, 2, 1).ok);
  const std::vector<ClassDemand> b = {{PodClass{cluster.Vector({1000, kGi, 4, 0}), {}}, 2}};
  ASSERT_TRUE(packer.TryPlace(b, 2, 1).ok);  // only in rack 1
  EXPECT_EQ(packer.RemainingFree(0, 0, cluster.gpu), 0);
  packer.RollbackTo(mark);
  EXPECT_EQ(packer.assignments().size(), mark);
  EXPECT_EQ(packer.RemainingFree(0, 0, cluster.gpu), gpu_after_a);
  packer.RollbackTo(0);
  EXPECT_EQ(packer.RemainingFree(0, 0, cluster.gpu), 32);
}

TEST(DomainPacker, NestedSubdomainPlacementSharesTheLedger) {
  TestCluster cluster;
  AddSyntheticNodes(cluster, 1, 2, 2, 2, {8000, 8 * kGi, 8, 110});
  DomainTree tree(ZoneBlockRack());
  tree.Refresh(cluster.Sync());
  DomainPacker packer;
  packer.Reset(tree, 1, 1);  // block-1-2: racks 2 and 3
  EXPECT_EQ(packer.num_nodes(), 4u);
  const PodClass worker{cluster.Vector({1000, kGi, 4, 0}), {}};
  EXPECT_EQ(packer.CountFit(worker, 2, 2), 4u);
  const std::vector<ClassDemand> replica = {{worker, 3}};
  ASSERT_TRUE(packer.TryPlace(replica, 2, 2).ok);
  for (const Assignment& a : packer.assignments()) EXPECT_EQ(tree.domain_of(a.node, 2), 2u);
  EXPECT_EQ(packer.CountFit(worker, 2, 2), 1u);
  EXPECT_EQ(packer.CountFit(worker, 1, 1), 5u);
  EXPECT_FALSE(packer.TryPlace(replica, 2, 2).ok);

  // Ranking the block's racks on what is left: rack 2 has 4 GPUs, rack 3 16.
  std::vector<RankedDomain> ranked;
  const std::vector<ClassDemand> one = {{worker, 1}};
  const std::vector<ClassDemand> two = {{worker, 2}};
  RankOptions most_free;
  most_free.order = RankOrder::kMostFreeFirst;
  packer.RankRemaining(2, one, most_free, ranked);
  EXPECT_EQ(ranked, (std::vector<RankedDomain>{{3, 16}, {2, 4}}));
  packer.RankRemaining(2, one, {}, ranked);  // tightest: 4 - 4, 16 - 4
  EXPECT_EQ(ranked, (std::vector<RankedDomain>{{2, 0}, {3, 12}}));
  packer.RankRemaining(2, two, {}, ranked);  // rack 2 fits only one more
  EXPECT_EQ(ranked, (std::vector<RankedDomain>{{3, 8}}));
  packer.RankRemaining(1, two, {}, ranked);
  EXPECT_EQ(ranked, (std::vector<RankedDomain>{{1, 12}}));

  ASSERT_TRUE(packer.TryPlace(replica, 2, 3).ok);
  EXPECT_EQ(packer.RemainingFree(1, 1, cluster.gpu), 8);
  // Nodes outside the packer's domain have no remaining capacity in it.
  EXPECT_EQ(packer.remaining(0, cluster.gpu), 0);

  // After ResetAll every domain of the level is a candidate.
  packer.ResetAll(tree);
  packer.RankRemaining(2, two, {}, ranked);
  EXPECT_EQ(ranked.size(), 4u);
}

}  // namespace pack_test
}  // namespace copse::topology
