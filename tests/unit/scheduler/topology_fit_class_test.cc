// PlaceGangWithTopology with replicas whose pods differ only in their
// subgroup label (as real members do: scheduling.copse.dev/subgroup is part
// of the pod class signature). Their fit counts must be counted together:
// counted per class, each replica claims the same free slots, so a block
// with room for 28 pods looked able to hold two replicas of 16, was tried
// first (tightest fit), and the gang failed although another block had room
// (seen in `copse bench topology-large`).

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/gang.h"
#include "plugins/defaults/defaults.h"
#include "plugins/framework/framework.h"
#include "scheduler/topology_placement.h"
#include "tests/unit/plugins/test_util.h"
#include "topology/levels.h"

namespace copse::scheduler {
namespace {

using plugins::testing::FixedRandom;
using plugins::testing::MakeResources;
using plugins::testing::PodBuilder;
using plugins::testing::Res;

constexpr const char* kBlock = "copse.dev/block";
constexpr const char* kRack = "copse.dev/rack";

class FitClassCluster {
 public:
  FitClassCluster() : snapshot_(names) {}

  void AddNodes(const std::string& block, int racks, int per_rack, Res allocatable) {
    for (int r = 1; r <= racks; ++r) {
      for (int n = 1; n <= per_rack; ++n) {
        const std::string rack = "rack-" + block + "-" + std::to_string(r);
        auto node = std::make_unique<NodeInfo>("n-" + block + "-" + std::to_string(r) + "-" +
                                               std::to_string(n));
        node->SetAllocatable(MakeResources(names, allocatable));
        node->SetLabels({{std::string(kLabelHostname), node->name()},
                         {"topology.kubernetes.io/zone", "zone-1"},
                         {kBlock, "block-" + block},
                         {kRack, rack}});
        nodes_.push_back(std::move(node));
      }
    }
  }

  Snapshot& Sync() {
    std::vector<const NodeInfo*> ptrs;
    for (const auto& n : nodes_) ptrs.push_back(n.get());
    snapshot_.Sync(ptrs);
    return snapshot_;
  }

  std::string LabelOf(NodeIndex n, const char* key) const {
    const Labels& labels = snapshot_.node_labels(n);
    auto it = labels.find(key);
    return it == labels.end() ? "" : it->second;
  }

  ResourceNames names;

 private:
  std::vector<std::unique_ptr<NodeInfo>> nodes_;
  Snapshot snapshot_;
};

// `replicas` subgroups r0.. of `size` pods of 3500m; each pod carries its
// subgroup label, so each replica is its own pod class.
std::vector<PodPtr> Replicas(ResourceNames& names, int replicas, int size) {
  std::vector<PodPtr> out;
  for (int r = 0; r < replicas; ++r) {
    const std::string sub_group = "r" + std::to_string(r);
    for (int i = 0; i < size; ++i) {
      PodBuilder b("g-" + sub_group + "-" + std::to_string(i));
      b.Requests(names, {{"cpu", "3500m"}, {"memory", "1Gi"}});
      b.Label("scheduling.copse.dev/pod-group", "g");
      b.Label("scheduling.copse.dev/subgroup", sub_group);
      b.raw().group_kind = PodInfo::GroupKind::kCopsePodGroup;
      b.raw().pod_group = "g";
      b.raw().sub_group = sub_group;
      out.push_back(b.Obj());
    }
  }
  return out;
}

GangSpec BlockGang(int replicas, int size) {
  GangSpec spec;
  spec.namespace_ = "default";
  spec.name = "g";
  spec.source = GangSource::kCopsePodGroup;
  spec.min_member = replicas * size;
  spec.topology_constraint.topology = "dc";
  spec.topology_constraint.required_level = "block";
  for (int r = 0; r < replicas; ++r) {
    SubGroupSpec s;
    s.name = "r" + std::to_string(r);
    s.min_member = size;
    s.topology_constraint.preferred_level = "rack";
    spec.sub_groups.push_back(s);
  }
  return spec;
}

struct FitClassRunner {
  plugins::Registry registry;
  std::unique_ptr<plugins::Framework> fw;
  TopologyCatalog catalog;
  TopologyWorkspace trees;
  plugins::Workspace workspace;
  FixedRandom random{0};
  TopologyPlacementOptions options;

  FitClassRunner() {
    EXPECT_TRUE(plugins::RegisterDefaultPlugins(registry).ok());
    auto created = plugins::Framework::Create(registry, plugins::DefaultProfile());
    EXPECT_TRUE(created.ok());
    fw = std::move(created).value();
    catalog.Set("dc", topology::TopologyLevels::Default());
    options.workspace = &trees;
  }

  TopologyGangPlacement Place(Snapshot& snapshot, const std::vector<PodPtr>& members,
                              const GangSpec& spec) {
    return PlaceGangWithTopology(*fw, snapshot, members, spec, catalog, options, random, workspace);
  }
};

// Block 1: 7 nodes of 17 cpu: 4 pods of 3500m each (28 slots), but 119 cpu
// in all, which the summed requests of 32 pods (112 cpu) do not exceed.
// Block 2: 10 nodes of 64 cpu (180 slots). The gang needs 2 x 16 = 32 pods.
void BuildTightAndRoomy(FitClassCluster& cluster) {
  cluster.AddNodes("1", 7, 1, {{"cpu", "17"}, {"memory", "256Gi"}, {"pods", "110"}});
  cluster.AddNodes("2", 10, 1, {{"cpu", "64"}, {"memory", "256Gi"}, {"pods", "110"}});
}

TEST(TopologyFitClass, ReplicasDifferingOnlyInLabelsShareTheirBlocksSlots) {
  FitClassCluster cluster;
  BuildTightAndRoomy(cluster);
  Snapshot& snapshot = cluster.Sync();
  const std::vector<PodPtr> members = Replicas(cluster.names, 2, 16);
  ASSERT_NE(members[0]->signature, members[16]->signature) << "the label must split the classes";

  // Only the tightest candidate block is tried, in both passes.
  FitClassRunner runner;
  runner.options.percentage_of_placements_to_try = 1;
  runner.options.min_placements_to_try = 1;
  runner.options.max_placements_to_try = 1;
  const TopologyGangPlacement p = runner.Place(snapshot, members, BlockGang(2, 16));
  ASSERT_TRUE(p.placement.satisfied) << p.placement.failure;
  EXPECT_EQ(p.placement.placed.size(), 32u);
  EXPECT_EQ(p.domain, "block block-2");
  std::set<std::string> blocks;
  for (const MemberPlacement& m : p.placement.placed)
    blocks.insert(cluster.LabelOf(m.node, kBlock));
  EXPECT_EQ(blocks, (std::set<std::string>{"block-2"}));
}

TEST(TopologyFitClass, ShortfallCountsTheReplicasTogether) {
  FitClassCluster cluster;
  cluster.AddNodes("1", 7, 1, {{"cpu", "17"}, {"memory", "256Gi"}, {"pods", "110"}});
  Snapshot& snapshot = cluster.Sync();
  FitClassRunner runner;
  const TopologyGangPlacement p =
      runner.Place(snapshot, Replicas(cluster.names, 2, 16), BlockGang(2, 16));
  EXPECT_FALSE(p.placement.satisfied);
  EXPECT_TRUE(p.placement.placed.empty());
  // 28 of the 32 fit (7 nodes x 4), not "32/32" from each replica counted alone.
  EXPECT_NE(p.placement.failure.find("best block block-1 fits 28/32 pods: 4 Insufficient cpu"),
            std::string::npos)
      << p.placement.failure;
}

TEST(TopologyFitClass, DifferentRequestsStayApart) {
  // r0: 2 pods of 3500m, r1: 16 pods of 7 cpu, on block 1 alone (7 nodes of
  // 17 cpu: 28 pods of 3500m or 14 of 7 cpu; 119 cpu, as much as the gang
  // asks for in all). r1 is two classes away from r0, so it is counted on
  // its own: 2 + 14 = 16 of the 18 fit.
  FitClassCluster cluster;
  cluster.AddNodes("1", 7, 1, {{"cpu", "17"}, {"memory", "256Gi"}, {"pods", "110"}});
  Snapshot& snapshot = cluster.Sync();
  std::vector<PodPtr> members = Replicas(cluster.names, 1, 2);
  for (int i = 0; i < 16; ++i) {
    PodBuilder b("g-r1-" + std::to_string(i));
    b.Requests(cluster.names, {{"cpu", "7"}, {"memory", "1Gi"}});
    b.Label("scheduling.copse.dev/pod-group", "g");
    b.Label("scheduling.copse.dev/subgroup", "r1");
    b.raw().group_kind = PodInfo::GroupKind::kCopsePodGroup;
    b.raw().pod_group = "g";
    b.raw().sub_group = "r1";
    members.push_back(b.Obj());
  }
  GangSpec spec = BlockGang(2, 2);
  spec.sub_groups[1].min_member = 16;
  spec.min_member = 18;
  FitClassRunner runner;
  const TopologyGangPlacement p = runner.Place(snapshot, members, spec);
  EXPECT_FALSE(p.placement.satisfied);
  EXPECT_NE(p.placement.failure.find("best block block-1 fits 16/18 pods: 2 Insufficient cpu"),
            std::string::npos)
      << p.placement.failure;
}

}  // namespace
}  // namespace copse::scheduler
