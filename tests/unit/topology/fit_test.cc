#include "topology/fit.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "tests/unit/topology/topology_test_util.h"

namespace copse::topology {
namespace fit_test {

using testing::AddSyntheticNodes;
using testing::Shape;
using testing::TestCluster;
using testing::TopologyLabels;
using testing::ZoneBlockRack;

constexpr int64_t kGi = int64_t{1} << 30;

// The node's domain path at `level` from its labels ("" when outside).
std::string LabelPath(const Snapshot& snapshot, NodeIndex n, const TopologyLevels& levels,
                      uint32_t level) {
  std::string path;
  for (uint32_t l = 0; l <= level; ++l) {
    const Labels& labels = snapshot.node_labels(n);
    auto it = labels.find(levels.node_label(l));
    if (it == labels.end() || it->second.empty()) return "";
    if (l > 0) path += '/';
    path += it->second;
  }
  return path;
}

// Places pods one at a time on a copy of the node's free capacity.
uint32_t SimulatedFit(const Snapshot& snapshot, NodeIndex n, const ResourceVector& request) {
  std::vector<int64_t> free(kMaxResources, 0);
  for (size_t r = 0; r < kMaxResources; ++r) {
    const auto rid = static_cast<ResourceId>(r);
    free[r] = std::max<int64_t>(0, snapshot.allocatable(rid, n) - snapshot.requested(rid, n));
  }
  uint32_t count = 0;
  while (true) {
    if (free[kResourceIdPods] < 1) return count;
    for (size_t r = 0; r < kMaxResources; ++r) {
      if (r == kResourceIdPods) continue;
      if (free[r] < request.Get(static_cast<ResourceId>(r))) return count;
    }
    for (size_t r = 0; r < kMaxResources; ++r) {
      if (r != kResourceIdPods) free[r] -= request.Get(static_cast<ResourceId>(r));
    }
    free[kResourceIdPods] -= 1;
    ++count;
  }
}

TEST(FitCounts, RandomizedAgainstBruteForce) {
  std::mt19937_64 rng(7);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  const TopologyLevels levels = ZoneBlockRack();
  for (int round = 0; round < 30; ++round) {
    TestCluster cluster;
    const int num_nodes = 1 + pick(60);
    for (int i = 0; i < num_nodes; ++i) {
      Labels l;
      if (pick(12) != 0) l[std::string(kLabelTopologyZone)] = "z" + std::to_string(pick(2));
      if (pick(12) != 0) l[std::string(kLabelBlock)] = "b" + std::to_string(pick(3));
      if (pick(12) != 0) l[std::string(kLabelRack)] = "r" + std::to_string(pick(3));
      NodeInfo& node = cluster.AddNode(
          "n" + std::to_string(i), l, Shape{500 * pick(33), kGi / 2 * pick(65), pick(9), pick(24)});
      for (int p = pick(4); p > 0; --p)  // may overcommit: free clamps at 0
        node.AddPod(cluster.MakePod({250 * pick(20), kGi / 4 * pick(40), pick(3), 0}));
    }
    const Snapshot& snapshot = cluster.Sync();
    DomainTree tree(levels);
    tree.Refresh(snapshot);
    FitCounts counts;  // reused across classes
    for (int c = 0; c < 20; ++c) {
      ResourceVector request = cluster.Vector(Shape{pick(3) == 0 ? 0 : 250 * pick(17),
                                                    pick(3) == 0 ? 0 : kGi / 4 * pick(33),
                                                    pick(2) == 0 ? 0 : pick(4), 0});
      std::vector<uint8_t> mask;
      if (pick(2) == 0) {
        for (int i = 0; i < num_nodes; ++i) mask.push_back(pick(4) != 0 ? 1 : 0);
      }
      CountFits(tree, PodClass{request, mask}, counts);
      uint64_t total = 0;
      std::vector<uint32_t> expected(num_nodes);
      for (NodeIndex n = 0; n < static_cast<NodeIndex>(num_nodes); ++n) {
        expected[n] = (!mask.empty() && mask[n] == 0) ? 0 : SimulatedFit(snapshot, n, request);
        ASSERT_EQ(counts.node(n), expected[n])
            << "round " << round << " class " << c << " node " << n;
        if (mask.empty() || mask[n] != 0) {
          ASSERT_EQ(NodeFit(tree, request, n), expected[n]);
        }
        total += expected[n];
      }
      ASSERT_EQ(counts.total(), total);
      for (uint32_t l = 0; l < levels.size(); ++l) {
        uint64_t level_sum = 0;
        for (DomainId d : tree.domains(l)) {
          const std::string path = tree.Path(l, d);
          uint64_t sum = 0;
          for (NodeIndex n = 0; n < static_cast<NodeIndex>(num_nodes); ++n) {
            if (LabelPath(snapshot, n, levels, l) == path) sum += expected[n];
          }
          ASSERT_EQ(counts.domain(l, d), sum) << path;
          ASSERT_EQ(counts.level(l)[d], sum);
          level_sum += sum;
        }
        uint64_t inside = 0;
        for (NodeIndex n = 0; n < static_cast<NodeIndex>(num_nodes); ++n) {
          if (!LabelPath(snapshot, n, levels, l).empty()) inside += expected[n];
        }
        ASSERT_EQ(level_sum, inside) << "level " << l;
      }
    }
  }
}

TEST(FitCounts, FollowsIncrementalRefresh) {
  TestCluster cluster;
  AddSyntheticNodes(cluster, 1, 2, 2, 2, {8000, 32 * kGi, 8, 110});
  DomainTree tree(ZoneBlockRack());
  tree.Refresh(cluster.Sync());
  const ResourceVector request = cluster.Vector({1000, kGi, 2, 0});
  FitCounts counts;
  CountFits(tree, PodClass{request, {}}, counts);
  EXPECT_EQ(counts.domain(2, 0), 8u);
  EXPECT_EQ(counts.domain(0, 0), 32u);
  cluster.node(0).AddPod(cluster.MakePod({1000, kGi, 5, 0}));
  tree.Refresh(cluster.Sync());
  CountFits(tree, PodClass{request, {}}, counts);
  EXPECT_EQ(counts.node(0), 1u);
  EXPECT_EQ(counts.domain(2, 0), 5u);
  EXPECT_EQ(counts.domain(1, 0), 13u);
  EXPECT_EQ(counts.domain(0, 0), 29u);
  EXPECT_EQ(counts.structure_version(), tree.structure_version());
}

TEST(FitCounts, UpdateFitsMatchesAFullCount) {
  std::mt19937_64 rng(5);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  TestCluster cluster;
  AddSyntheticNodes(cluster, 2, 2, 2, 3, {8000, 32 * kGi, 8, 20});
  cluster.AddNode("outside", {}, {8000, 32 * kGi, 8, 20});
  DomainTree tree(ZoneBlockRack());
  tree.Refresh(cluster.Sync());
  std::vector<uint8_t> mask(cluster.size(), 1);
  mask[4] = 0;
  const PodClass cls{cluster.Vector({1500, 3 * kGi, 1, 0}), mask};
  FitCounts incremental;
  FitCounts full;
  CountFits(tree, cls, incremental);
  std::vector<std::vector<std::string>> uids(cluster.size());
  for (int iter = 0; iter < 300; ++iter) {
    std::vector<NodeIndex> rows;
    for (int k = 1 + pick(3); k > 0; --k) {
      const auto n = static_cast<NodeIndex>(pick(static_cast<int>(cluster.size())));
      if (!uids[n].empty() && pick(2) == 0) {
        ASSERT_TRUE(cluster.node(n).RemovePod(uids[n].back()));
        uids[n].pop_back();
      } else {
        auto pod = cluster.MakePod({1000 * pick(3), kGi * pick(8), pick(3), 0});
        uids[n].push_back(pod->uid);
        cluster.node(n).AddPod(pod);
      }
      rows.push_back(n);
    }
    tree.Refresh(cluster.Sync(), rows);
    UpdateFits(tree, cls, rows, incremental);
    CountFits(tree, cls, full);
    ASSERT_EQ(std::vector<uint32_t>(incremental.nodes().begin(), incremental.nodes().end()),
              std::vector<uint32_t>(full.nodes().begin(), full.nodes().end()));
    ASSERT_EQ(incremental.total(), full.total());
    for (uint32_t l = 0; l < tree.num_levels(); ++l) {
      ASSERT_EQ(std::vector<uint64_t>(incremental.level(l).begin(), incremental.level(l).end()),
                std::vector<uint64_t>(full.level(l).begin(), full.level(l).end()))
          << "iteration " << iter << " level " << l;
    }
  }
}

TEST(FitCounts, PodSlotsOnlyAndUntrackedResources) {
  TestCluster cluster;
  AddSyntheticNodes(cluster, 1, 1, 2, 1, {8000, 32 * kGi, 0, 3});
  DomainTree tree(ZoneBlockRack());
  tree.Refresh(cluster.Sync());
  FitCounts counts;
  CountFits(tree, PodClass{ResourceVector{}, {}}, counts);
  EXPECT_EQ(counts.total(), 6u);
  // GPUs are tracked but no node has any.
  CountFits(tree, PodClass{cluster.Vector({0, 0, 1, 0}), {}}, counts);
  EXPECT_EQ(counts.total(), 0u);
  // A resource id beyond the snapshot's columns.
  ResourceVector exotic;
  exotic.Set(static_cast<ResourceId>(kMaxResources - 1), 1);
  CountFits(tree, PodClass{exotic, {}}, counts);
  EXPECT_EQ(counts.total(), 0u);
  EXPECT_EQ(NodeFit(tree, exotic, 0), 0u);
  // The pods entry of a request is ignored.
  ResourceVector pods_only;
  pods_only.Set(kResourceIdPods, 50);
  CountFits(tree, PodClass{pods_only, {}}, counts);
  EXPECT_EQ(counts.total(), 6u);
}

TEST(FitCounts, HugeValuesUseExactIntegerDivisionAndSaturate) {
  TestCluster cluster;
  const int64_t big = (int64_t{1} << 60) + 12345;
  cluster.AddNode("a", TopologyLabels(1, 1, 1), {big, big, big, int64_t{1} << 40});
  cluster.AddNode("b", TopologyLabels(1, 1, 1), {8000, kGi, 4, 110});
  DomainTree tree(ZoneBlockRack());
  tree.Refresh(cluster.Sync());
  FitCounts counts;
  const int64_t q = (int64_t{1} << 58) + 1;  // 2^60 + 12345 = 4q + 12341
  CountFits(tree, PodClass{cluster.Vector({0, 0, q, 0}), {}}, counts);
  EXPECT_EQ(counts.node(0), 4u);
  EXPECT_EQ(counts.node(1), 0u);
  CountFits(tree, PodClass{cluster.Vector({0, 0, 1, 0}), {}}, counts);
  EXPECT_EQ(counts.node(0), 2147483647u);  // saturated
  EXPECT_EQ(counts.node(1), 4u);
  EXPECT_EQ(counts.domain(2, 0), uint64_t{2147483647} + 4);
  // Exactness at the edge of double precision: 2^52 - 1 over 3.
  TestCluster edge;
  edge.AddNode("c", TopologyLabels(1, 1, 1), {0, 0, (int64_t{1} << 52) - 1, int64_t{1} << 60});
  DomainTree edge_tree(ZoneBlockRack());
  edge_tree.Refresh(edge.Sync());
  CountFits(edge_tree, PodClass{edge.Vector({0, 0, (int64_t{1} << 51) - 1, 0}), {}}, counts);
  EXPECT_EQ(counts.node(0), 2u);  // (2^52 - 1) / (2^51 - 1) = 2.0000000000000004
  CountFits(edge_tree, PodClass{edge.Vector({0, 0, (int64_t{1} << 51), 0}), {}}, counts);
  EXPECT_EQ(counts.node(0), 1u);  // (2^52 - 1) / 2^51 = 1.99999...
}

}  // namespace fit_test
}  // namespace copse::topology
