#include "topology/domain_tree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tests/unit/topology/topology_test_util.h"

namespace copse::topology {
namespace domain_tree_test {

using testing::AddSyntheticNodes;
using testing::BruteForceDomainFree;
using testing::Dump;
using testing::Shape;
using testing::TestCluster;
using testing::TopologyLabels;
using testing::ZoneBlockRack;

constexpr int64_t kGi = int64_t{1} << 30;
const Shape kNodeShape{8000, 32 * kGi, 8, 110};

std::vector<std::string> NodeNames(const Snapshot& snapshot, std::span<const NodeIndex> nodes) {
  std::vector<std::string> names;
  for (NodeIndex n : nodes) names.push_back(snapshot.node_name(n));
  return names;
}

std::string Fresh(const Snapshot& snapshot, const TopologyLevels& levels) {
  DomainTree fresh(levels);
  RefreshStats stats = fresh.Refresh(snapshot);
  EXPECT_TRUE(stats.rebuilt);
  return Dump(fresh);
}

TEST(DomainTree, BuildsZoneBlockRack) {
  TestCluster cluster;
  AddSyntheticNodes(cluster, 2, 2, 2, 2, kNodeShape);  // 16 nodes
  // Two 3-GPU pods on node-2-1-2-1, one on node-1-1-1-2.
  cluster.node(9).AddPod(cluster.MakePod({1000, kGi, 3, 0}));  // index 9 = node-2-1-1-2
  const NodeIndex busy = 10;                                   // node-2-1-2-1
  cluster.node(busy).AddPod(cluster.MakePod({1000, kGi, 3, 0}));
  cluster.node(busy).AddPod(cluster.MakePod({1000, kGi, 3, 0}));
  const Snapshot& snapshot = cluster.Sync();
  ASSERT_EQ(snapshot.node_name(busy), "node-2-1-2-1");
  ASSERT_EQ(snapshot.node_name(9), "node-2-1-1-2");

  DomainTree tree(ZoneBlockRack());
  RefreshStats stats = tree.Refresh(snapshot);
  EXPECT_TRUE(stats.rebuilt);
  ASSERT_EQ(tree.num_levels(), 3u);
  ASSERT_EQ(tree.num_nodes(), 16u);
  ASSERT_EQ(tree.num_domains(0), 2u);
  ASSERT_EQ(tree.num_domains(1), 4u);
  ASSERT_EQ(tree.num_domains(2), 8u);
  EXPECT_EQ(tree.name(0, 0), "zone-1");
  EXPECT_EQ(tree.name(0, 1), "zone-2");
  EXPECT_EQ(tree.name(1, 2), "block-2-1");
  EXPECT_EQ(tree.parent(1, 2), 1u);
  EXPECT_EQ(tree.parent(0, 1), kNoDomain);
  EXPECT_EQ(tree.Path(2, 5), "zone-2/block-2-1/rack-2-1-2");
  EXPECT_EQ(tree.Path(0, 1), "zone-2");
  EXPECT_EQ(tree.children(0, 1), (DomainRange{2, 4}));
  EXPECT_EQ(tree.children(1, 2), (DomainRange{4, 6}));
  EXPECT_TRUE(tree.children(2, 5).empty());
  EXPECT_EQ(tree.Descendants(0, 1, 2), (DomainRange{4, 8}));
  EXPECT_EQ(tree.Descendants(1, 1, 1), (DomainRange{1, 2}));
  EXPECT_EQ(tree.Ancestor(2, 5, 0), 1u);
  EXPECT_EQ(tree.Ancestor(2, 5, 1), 2u);
  EXPECT_EQ(tree.Ancestor(2, 5, 2), 5u);
  EXPECT_EQ(tree.Find(2, "rack-2-1-2"), 5u);
  EXPECT_FALSE(tree.Find(2, "rack-9").has_value());

  EXPECT_EQ(NodeNames(snapshot, tree.nodes(2, 5)),
            (std::vector<std::string>{"node-2-1-2-1", "node-2-1-2-2"}));
  EXPECT_EQ(
      NodeNames(snapshot, tree.nodes(1, 2)),
      (std::vector<std::string>{"node-2-1-1-1", "node-2-1-1-2", "node-2-1-2-1", "node-2-1-2-2"}));
  EXPECT_EQ(tree.nodes(0, 0).size(), 8u);
  EXPECT_TRUE(tree.nodes_outside().empty());
  for (NodeIndex n = 0; n < 16; ++n) {
    EXPECT_EQ(tree.depth(n), 3u);
    EXPECT_EQ(tree.node_order()[tree.position_of(n)], n);
  }
  EXPECT_EQ(tree.domain_of(busy, 2), 5u);
  EXPECT_EQ(tree.domain_of(busy, 0), 1u);

  const ResourceId gpu = cluster.gpu;
  EXPECT_EQ(tree.node_free(busy, gpu), 2);
  EXPECT_EQ(tree.node_free(busy, kResourceIdPods), 108);
  EXPECT_EQ(tree.free(2, 5, gpu), 10);  // 2 + 8
  EXPECT_EQ(tree.free(2, 4, gpu), 13);  // rack-2-1-1: 8 + 5
  EXPECT_EQ(tree.free(1, 2, gpu), 23);
  EXPECT_EQ(tree.free(0, 1, gpu), 55);
  EXPECT_EQ(tree.free(0, 0, gpu), 64);
  EXPECT_EQ(tree.free_pods(0, 1), 8 * 110 - 3);
  EXPECT_EQ(tree.free(0, 1, kResourceIdCpu), 8 * 8000 - 3000);
  EXPECT_EQ(tree.total_free(gpu), 119);
  EXPECT_EQ(tree.total_allocatable(gpu), 128);
  EXPECT_EQ(tree.free(0, 0, static_cast<ResourceId>(30)), 0);

  const auto brute = BruteForceDomainFree(tree);
  for (uint32_t l = 0; l < 3; ++l)
    for (DomainId d : tree.domains(l)) {
      std::span<const int64_t> f = tree.free_vector(l, d);
      EXPECT_EQ(std::vector<int64_t>(f.begin(), f.end()), brute[l][d]) << tree.Path(l, d);
    }
}

TEST(DomainTree, HostLevelAndDefaultLevels) {
  TestCluster cluster;
  AddSyntheticNodes(cluster, 1, 2, 2, 3, kNodeShape);
  const Snapshot& snapshot = cluster.Sync();
  DomainTree tree(TopologyLevels::Default());
  tree.Refresh(snapshot);
  ASSERT_EQ(tree.num_levels(), 4u);
  EXPECT_EQ(tree.num_domains(3), 12u);
  for (NodeIndex n = 0; n < 12; ++n) {
    const DomainId host = tree.domain_of(n, 3);
    EXPECT_EQ(tree.name(3, host), snapshot.node_name(n));
    EXPECT_EQ(tree.nodes(3, host).size(), 1u);
    EXPECT_EQ(tree.free(3, host, kResourceIdCpu), 8000);
  }
  EXPECT_EQ(tree.Descendants(0, 0, 3), (DomainRange{0, 12}));
}

TEST(DomainTree, NodesWithoutLabelsAreOutsideFromTheirFirstMissingLevel) {
  TestCluster cluster;
  Labels full = TopologyLabels(1, 1, 1);
  Labels no_rack = TopologyLabels(1, 1, 1);
  no_rack.erase(std::string(kLabelRack));
  Labels no_block = TopologyLabels(1, 1, 2);  // has zone and rack, no block
  no_block.erase(std::string(kLabelBlock));
  Labels no_zone = TopologyLabels(1, 1, 1);
  no_zone.erase(std::string(kLabelTopologyZone));
  Labels empty_zone = TopologyLabels(1, 1, 1);
  empty_zone[std::string(kLabelTopologyZone)] = "";
  cluster.AddNode("a", full, {1000, kGi, 1, 10});
  cluster.AddNode("b", no_rack, {2000, kGi, 2, 10});
  cluster.AddNode("c", no_block, {4000, kGi, 4, 10});
  cluster.AddNode("d", no_zone, {8000, kGi, 8, 10});
  cluster.AddNode("e", empty_zone, {16000, kGi, 16, 10});
  cluster.AddNode("f", {}, {32000, kGi, 32, 10});
  cluster.AddNode("g", full, {64000, kGi, 64, 10});
  const Snapshot& snapshot = cluster.Sync();
  DomainTree tree(ZoneBlockRack());
  tree.Refresh(snapshot);

  const std::vector<uint32_t> depths = {3, 2, 1, 0, 0, 0, 3};
  for (NodeIndex n = 0; n < 7; ++n) EXPECT_EQ(tree.depth(n), depths[n]) << n;
  ASSERT_EQ(tree.num_domains(0), 1u);
  ASSERT_EQ(tree.num_domains(1), 1u);
  ASSERT_EQ(tree.num_domains(2), 1u);  // c's rack-1-1-2 is not a domain: c has no block
  EXPECT_EQ(tree.domain_of(2, 1), kNoDomain);
  EXPECT_EQ(tree.domain_of(2, 2), kNoDomain);
  EXPECT_EQ(tree.domain_of(3, 0), kNoDomain);
  // Children first, then direct nodes, NodeIndex order within a group.
  EXPECT_EQ(NodeNames(snapshot, tree.nodes(0, 0)), (std::vector<std::string>{"a", "g", "b", "c"}));
  EXPECT_EQ(NodeNames(snapshot, tree.nodes(1, 0)), (std::vector<std::string>{"a", "g", "b"}));
  EXPECT_EQ(NodeNames(snapshot, tree.nodes(2, 0)), (std::vector<std::string>{"a", "g"}));
  EXPECT_EQ(NodeNames(snapshot, tree.nodes_outside()), (std::vector<std::string>{"d", "e", "f"}));
  const ResourceId gpu = cluster.gpu;
  EXPECT_EQ(tree.free(2, 0, gpu), 65);
  EXPECT_EQ(tree.free(1, 0, gpu), 67);
  EXPECT_EQ(tree.free(0, 0, gpu), 71);
  EXPECT_EQ(tree.total_free(gpu), 127);
}

TEST(DomainTree, SameRackNameUnderTwoBlocksIsTwoDomains) {
  TestCluster cluster;
  cluster.AddNode("x",
                  {{std::string(kLabelTopologyZone), "z"},
                   {std::string(kLabelBlock), "b2"},
                   {std::string(kLabelRack), "r1"}},
                  kNodeShape);
  cluster.AddNode("y",
                  {{std::string(kLabelTopologyZone), "z"},
                   {std::string(kLabelBlock), "b1"},
                   {std::string(kLabelRack), "r1"}},
                  kNodeShape);
  const Snapshot& snapshot = cluster.Sync();
  DomainTree tree(ZoneBlockRack());
  tree.Refresh(snapshot);
  ASSERT_EQ(tree.num_domains(2), 2u);
  EXPECT_EQ(tree.Path(2, 0), "z/b1/r1");
  EXPECT_EQ(tree.Path(2, 1), "z/b2/r1");
  EXPECT_EQ(NodeNames(snapshot, tree.nodes(2, 0)), (std::vector<std::string>{"y"}));
}

TEST(DomainTree, UsageChangeIsIncrementalAndLabelChangeRestructures) {
  TestCluster cluster;
  AddSyntheticNodes(cluster, 2, 2, 2, 2, kNodeShape);
  const TopologyLevels levels = ZoneBlockRack();
  DomainTree tree(levels);
  tree.Refresh(cluster.Sync());
  const uint64_t structure = tree.structure_version();
  const uint64_t usage = tree.usage_version();

  RefreshStats none = tree.Refresh(cluster.Sync());
  EXPECT_FALSE(none.rebuilt);
  EXPECT_EQ(none.rows_updated, 0u);
  EXPECT_EQ(tree.usage_version(), usage);

  auto pod = cluster.MakePod({500, kGi, 1, 0});
  cluster.node(3).AddPod(pod);
  cluster.node(12).AddPod(cluster.MakePod({500, kGi, 2, 0}));
  RefreshStats stats = tree.Refresh(cluster.Sync());
  EXPECT_FALSE(stats.rebuilt);
  EXPECT_FALSE(stats.restructured);
  EXPECT_EQ(stats.rows_updated, 2u);
  EXPECT_EQ(tree.structure_version(), structure);
  EXPECT_NE(tree.usage_version(), usage);
  EXPECT_EQ(tree.free(0, 0, cluster.gpu), 63);
  EXPECT_EQ(tree.free(0, 1, cluster.gpu), 62);
  EXPECT_EQ(Dump(tree), Fresh(cluster.snapshot(), levels));

  ASSERT_TRUE(cluster.node(3).RemovePod(pod->uid));
  stats = tree.Refresh(cluster.Sync());
  EXPECT_EQ(stats.rows_updated, 1u);
  EXPECT_EQ(tree.free(0, 0, cluster.gpu), 64);
  EXPECT_EQ(Dump(tree), Fresh(cluster.snapshot(), levels));

  // Node 0 moves from rack-1-1-1 to a new rack in zone 2.
  cluster.node(0).SetLabels([] {
    Labels l = TopologyLabels(2, 2, 9);
    l[std::string(kLabelHostname)] = "node-1-1-1-1";
    return l;
  }());
  stats = tree.Refresh(cluster.Sync());
  EXPECT_FALSE(stats.rebuilt);
  EXPECT_TRUE(stats.restructured);
  EXPECT_EQ(stats.rows_updated, 1u);
  EXPECT_NE(tree.structure_version(), structure);
  EXPECT_EQ(tree.num_domains(2), 9u);
  EXPECT_EQ(tree.Path(2, *tree.Find(2, "rack-2-2-9")), "zone-2/block-2-2/rack-2-2-9");
  EXPECT_EQ(tree.nodes(2, *tree.Find(2, "rack-1-1-1")).size(), 1u);
  EXPECT_EQ(tree.free(0, 1, cluster.gpu), 70);
  EXPECT_EQ(Dump(tree), Fresh(cluster.snapshot(), levels));

  // The last node of rack-1-1-1 leaves too: the domain disappears.
  cluster.node(1).SetLabels(TopologyLabels(1, 2, 1));
  tree.Refresh(cluster.Sync());
  EXPECT_FALSE(tree.Find(2, "rack-1-1-1").has_value());
  EXPECT_EQ(tree.num_domains(2), 8u);
  EXPECT_EQ(Dump(tree), Fresh(cluster.snapshot(), levels));

  // A node added: rebuild.
  cluster.AddNode("late", TopologyLabels(1, 1, 1), kNodeShape);
  stats = tree.Refresh(cluster.Sync());
  EXPECT_TRUE(stats.rebuilt);
  EXPECT_EQ(tree.num_nodes(), 17u);
  EXPECT_EQ(Dump(tree), Fresh(cluster.snapshot(), levels));
}

TEST(DomainTree, RefreshGivenRows) {
  TestCluster cluster;
  AddSyntheticNodes(cluster, 1, 2, 2, 2, kNodeShape);
  const TopologyLevels levels = ZoneBlockRack();
  DomainTree tree(levels);
  tree.Refresh(cluster.Sync());
  cluster.node(5).AddPod(cluster.MakePod({7000, kGi, 8, 0}));
  cluster.node(6).SetLabels(TopologyLabels(1, 1, 1));
  cluster.Sync();
  const std::vector<NodeIndex> rows = {5, 6, 5};
  RefreshStats stats = tree.Refresh(cluster.snapshot(), rows);
  EXPECT_EQ(stats.rows_updated, 3u);
  EXPECT_TRUE(stats.restructured);
  EXPECT_EQ(Dump(tree), Fresh(cluster.snapshot(), levels));
  // Nothing left to see for the scanning refresh.
  EXPECT_EQ(tree.Refresh(cluster.snapshot()).rows_updated, 0u);
}

TEST(DomainTree, ScratchEditsOnSnapshotCopies) {
  TestCluster cluster;
  AddSyntheticNodes(cluster, 1, 2, 2, 2, kNodeShape);
  const TopologyLevels levels = ZoneBlockRack();
  const Snapshot& original = cluster.Sync();
  DomainTree tree(levels);
  tree.Refresh(original);

  Snapshot copy = original;
  auto victim = cluster.MakePod({1000, kGi, 4, 0});
  copy.AddPod(2, victim);  // generation 0
  EXPECT_EQ(tree.Refresh(copy).rows_updated, 1u);
  EXPECT_EQ(tree.node_free(2, cluster.gpu), 4);
  EXPECT_EQ(Dump(tree), Fresh(copy, levels));
  copy.AddPod(2, cluster.MakePod({1000, kGi, 1, 0}));  // still generation 0: must be seen
  tree.Refresh(copy);
  EXPECT_EQ(tree.node_free(2, cluster.gpu), 3);
  EXPECT_EQ(Dump(tree), Fresh(copy, levels));
  copy.CopyNodeFrom(original, 2);
  tree.Refresh(copy);
  EXPECT_EQ(tree.node_free(2, cluster.gpu), 8);
  EXPECT_EQ(Dump(tree), Fresh(original, levels));
  tree.Refresh(original);
  EXPECT_EQ(Dump(tree), Fresh(original, levels));
}

TEST(DomainTree, NewResourceColumnRebuilds) {
  TestCluster cluster;
  AddSyntheticNodes(cluster, 1, 1, 2, 2, kNodeShape);
  DomainTree tree(ZoneBlockRack());
  tree.Refresh(cluster.Sync());
  const size_t before = tree.num_resources();
  const ResourceId fpga = *cluster.names.Intern("example.com/fpga");
  ResourceVector alloc = cluster.Vector(kNodeShape);
  alloc.Set(fpga, 2);
  cluster.node(1).SetAllocatable(alloc);
  RefreshStats stats = tree.Refresh(cluster.Sync());
  EXPECT_TRUE(stats.rebuilt);
  EXPECT_GT(tree.num_resources(), before);
  EXPECT_EQ(tree.free(0, 0, fpga), 2);
}

// Random pods, label moves (including missing and empty labels and values
// reused under different parents) and allocatable changes; after every batch
// the incrementally refreshed tree must equal a fresh build exactly.
void RandomizedRefresh(bool index_keys, uint32_t seed) {
  TestCluster cluster(
      index_keys ? std::vector<std::string>{std::string(kLabelBlock), std::string(kLabelRack)}
                 : std::vector<std::string>{});
  std::mt19937_64 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  auto random_labels = [&]() {
    Labels l;
    if (pick(10) != 0) l[std::string(kLabelTopologyZone)] = "z" + std::to_string(pick(3));
    if (pick(10) != 0) l[std::string(kLabelBlock)] = "b" + std::to_string(pick(3));
    if (pick(10) != 0) l[std::string(kLabelRack)] = "r" + std::to_string(pick(4));
    if (pick(30) == 0) l[std::string(kLabelRack)] = "";
    return l;
  };
  auto random_shape = [&]() {
    return Shape{1000 * (1 + pick(16)), kGi * (1 + pick(64)), pick(9), 1 + pick(20)};
  };
  for (int i = 0; i < 40; ++i)
    cluster.AddNode("n" + std::to_string(i), random_labels(), random_shape());
  const TopologyLevels levels = ZoneBlockRack();
  DomainTree tree(levels);
  tree.Refresh(cluster.Sync());
  std::vector<std::pair<size_t, std::string>> pods;  // (node, uid)
  int next_node = 40;

  for (int iter = 0; iter < 400; ++iter) {
    std::set<size_t> touched;
    bool labels_changed = false;
    bool nodes_changed = false;
    const int ops = 1 + pick(4);
    for (int op = 0; op < ops; ++op) {
      const int kind = pick(100);
      const size_t n = static_cast<size_t>(pick(static_cast<int>(cluster.size())));
      if (kind < 45) {
        auto pod = cluster.MakePod({500 * pick(8), kGi * pick(16), pick(4), 0});
        cluster.node(n).AddPod(pod);
        pods.emplace_back(n, pod->uid);
        touched.insert(n);
      } else if (kind < 80 && !pods.empty()) {
        const size_t i = static_cast<size_t>(pick(static_cast<int>(pods.size())));
        ASSERT_TRUE(cluster.node(pods[i].first).RemovePod(pods[i].second));
        touched.insert(pods[i].first);
        pods.erase(pods.begin() + static_cast<std::ptrdiff_t>(i));
      } else if (kind < 90) {
        Labels l = random_labels();
        l[std::string(kLabelHostname)] = cluster.node(n).name();
        if (l != cluster.node(n).labels()) {
          // Only topology labels count; the hostname stays.
          labels_changed = true;
        }
        cluster.node(n).SetLabels(std::move(l));
        touched.insert(n);
      } else if (kind < 97) {
        cluster.node(n).SetAllocatable(cluster.Vector(random_shape()));
        touched.insert(n);
      } else if (kind < 99 || cluster.size() < 10) {
        cluster.AddNode("n" + std::to_string(next_node++), random_labels(), random_shape());
        nodes_changed = true;
      } else {
        std::erase_if(pods, [&](const auto& p) { return p.first == n; });
        for (auto& p : pods) {
          if (p.first > n) --p.first;
        }
        cluster.RemoveNode(n);
        nodes_changed = true;
      }
    }
    const Snapshot& snapshot = cluster.Sync();
    const RefreshStats stats = tree.Refresh(snapshot);
    if (nodes_changed) {
      ASSERT_TRUE(stats.rebuilt) << "iteration " << iter;
    } else {
      ASSERT_FALSE(stats.rebuilt) << "iteration " << iter;
      ASSERT_EQ(stats.rows_updated, touched.size()) << "iteration " << iter;
      if (!labels_changed) {
        ASSERT_FALSE(stats.restructured) << "iteration " << iter;
      }
    }
    ASSERT_EQ(Dump(tree), Fresh(snapshot, levels)) << "iteration " << iter;
    const auto brute = BruteForceDomainFree(tree);
    for (uint32_t l = 0; l < tree.num_levels(); ++l)
      for (DomainId d : tree.domains(l)) {
        std::span<const int64_t> f = tree.free_vector(l, d);
        ASSERT_EQ(std::vector<int64_t>(f.begin(), f.end()), brute[l][d]) << "iteration " << iter;
        // Every node listed in a domain says it belongs to it.
        for (NodeIndex n : tree.nodes(l, d)) ASSERT_EQ(tree.domain_of(n, l), d);
      }
    for (NodeIndex n = 0; n < tree.num_nodes(); ++n) {
      for (size_t r = 0; r < tree.num_resources(); ++r) {
        const auto rid = static_cast<ResourceId>(r);
        ASSERT_EQ(tree.node_free(n, rid),
                  std::max<int64_t>(0, snapshot.allocatable(rid, n) - snapshot.requested(rid, n)));
        ASSERT_GE(tree.node_free_bound(rid), tree.node_free(n, rid));
      }
    }
  }
}

TEST(DomainTree, RandomizedRefreshMatchesRebuildWithIndexedKeys) { RandomizedRefresh(true, 1); }
TEST(DomainTree, RandomizedRefreshMatchesRebuildWithLabelMaps) { RandomizedRefresh(false, 2); }

}  // namespace domain_tree_test
}  // namespace copse::topology
