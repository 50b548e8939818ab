// PlaceGangWithTopology on in-memory snapshots (no API server): required
// rack packing tightest-fit first, the shortfall message, preferred levels,
// spec 002's elastic minimums (minMember + minSubGroup: any N children,
// ready ones first, optional ones placed when they fit) and its worked examples,
// members already bound pinning the domain, bare topologyKey levels,
// validation errors naming the field; then quality against a brute-force
// exact solver on 200 small random instances and stranded GPUs against a
// first-fit baseline.

#include "scheduler/topology_placement.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <iostream>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "core/gang.h"
#include "kube/topology.h"
#include "plugins/balanced_allocation/balanced_allocation.h"
#include "plugins/defaults/defaults.h"
#include "plugins/domain_packing/domain_packing.h"
#include "plugins/framework/framework.h"
#include "plugins/node_resources_fit/fit.h"
#include "scheduler/burst_plan.h"
#include "scheduler/gang_burst.h"
#include "scheduler/gang_preemption.h"
#include "tests/unit/plugins/test_util.h"
#include "topology/gang_packing.h"
#include "topology/levels.h"

namespace copse::scheduler {
namespace topology_placement_test {

using plugins::testing::FixedRandom;
using plugins::testing::MakeResources;
using plugins::testing::PodBuilder;
using plugins::testing::Res;

constexpr const char* kZone = "topology.kubernetes.io/zone";
constexpr const char* kBlock = "copse.dev/block";
constexpr const char* kRack = "copse.dev/rack";

std::unique_ptr<plugins::Framework> MakeFramework(plugins::Registry& registry,
                                                  bool most_allocated = false) {
  EXPECT_TRUE(plugins::RegisterDefaultPlugins(registry).ok());
  plugins::Profile profile = plugins::DefaultProfile();
  if (most_allocated) {
    plugins::FitArgs args;
    args.scoring_strategy.type = plugins::ScoringStrategyType::kMostAllocated;
    args.scoring_strategy.resources = {{"nvidia.com/gpu", 1}, {"cpu", 1}};
    profile.plugin_args[std::string(plugins::kNodeResourcesFitName)] = args;
  }
  auto fw = plugins::Framework::Create(registry, profile);
  EXPECT_TRUE(fw.ok()) << (fw.ok() ? "" : fw.error().message);
  return std::move(fw).value();
}

// Nodes labelled zone > block > rack, synced once into a snapshot that the
// placements then edit (as the scheduling cycle does), so they accumulate.
class TopoCluster {
 public:
  TopoCluster() : snapshot_(names) {}

  NodeInfo& AddNode(const std::string& name, Res allocatable, Labels labels) {
    auto node = std::make_unique<NodeInfo>(name);
    node->SetAllocatable(MakeResources(names, allocatable));
    labels[std::string(kLabelHostname)] = name;
    node->SetLabels(std::move(labels));
    nodes_.push_back(std::move(node));
    return *nodes_.back();
  }

  // zones x blocks x racks x nodes; names zone-1, block-1-2, rack-1-2-3, n-1-2-3-4.
  void Build(int zones, int blocks, int racks, int nodes, Res allocatable) {
    for (int z = 1; z <= zones; ++z) {
      for (int b = 1; b <= blocks; ++b) {
        for (int r = 1; r <= racks; ++r) {
          for (int n = 1; n <= nodes; ++n) {
            const std::string zb = std::to_string(z) + "-" + std::to_string(b);
            const std::string zbr = zb + "-" + std::to_string(r);
            AddNode("n-" + zbr + "-" + std::to_string(n), allocatable,
                    {{kZone, "zone-" + std::to_string(z)},
                     {kBlock, "block-" + zb},
                     {kRack, "rack-" + zbr}});
          }
        }
      }
    }
  }

  NodeInfo& node(const std::string& name) {
    for (auto& n : nodes_) {
      if (n->name() == name) return *n;
    }
    ADD_FAILURE() << "no node " << name;
    return *nodes_.front();
  }

  Snapshot& Sync() {
    std::vector<const NodeInfo*> ptrs;
    for (const auto& n : nodes_) ptrs.push_back(n.get());
    snapshot_.Sync(ptrs);
    return snapshot_;
  }
  Snapshot& snapshot() { return snapshot_; }

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

PodPtr Member(ResourceNames& names, const std::string& gang, const std::string& name, Res requests,
              const std::string& sub_group = "") {
  PodBuilder b(name);
  b.Requests(names, requests);
  b.raw().group_kind = PodInfo::GroupKind::kCopsePodGroup;
  b.raw().pod_group = gang;
  b.raw().sub_group = sub_group;
  return b.Obj();
}

std::vector<PodPtr> Members(ResourceNames& names, const std::string& gang, int count, Res requests,
                            const std::string& sub_group = "") {
  std::vector<PodPtr> out;
  const std::string prefix = gang + (sub_group.empty() ? "" : "-" + sub_group);
  for (int i = 0; i < count; ++i) {
    out.push_back(Member(names, gang, prefix + "-" + std::to_string(i), requests, sub_group));
  }
  return out;
}

GangSpec Gang(const std::string& name, int32_t min_member) {
  GangSpec spec;
  spec.namespace_ = "default";
  spec.name = name;
  spec.source = GangSource::kCopsePodGroup;
  spec.min_member = min_member;
  return spec;
}

SubGroupSpec Sub(const std::string& name, int32_t min_member, const std::string& parent = "",
                 std::optional<int32_t> min_sub_group = std::nullopt,
                 const std::string& required = "", const std::string& preferred = "") {
  SubGroupSpec s;
  s.name = name;
  s.parent = parent;
  s.min_member = min_member;
  s.min_sub_group = min_sub_group;
  s.topology_constraint.required_level = required;
  s.topology_constraint.preferred_level = preferred;
  return s;
}

// Runs the placement with a fixed random source and a shared workspace.
struct Runner {
  plugins::Registry registry;
  std::unique_ptr<plugins::Framework> fw;
  TopologyCatalog catalog;
  TopologyWorkspace trees;
  plugins::Workspace workspace;
  FixedRandom random{0};
  TopologyPlacementOptions options;

  explicit Runner(bool most_allocated = false) : fw(MakeFramework(registry, most_allocated)) {
    catalog.Set("dc", topology::TopologyLevels::Default());
    options.workspace = &trees;
  }

  TopologyGangPlacement Place(Snapshot& snapshot, const std::vector<PodPtr>& members,
                              const GangSpec& spec) {
    return PlaceGangWithTopology(*fw, snapshot, members, spec, catalog, options, random, workspace);
  }
};

std::map<std::string, std::set<std::string>> DomainsBySubGroup(const TopoCluster& cluster,
                                                               const TopologyGangPlacement& p,
                                                               const char* key) {
  std::map<std::string, std::set<std::string>> out;
  for (const MemberPlacement& m : p.placement.placed) {
    out[m.pod->sub_group].insert(cluster.LabelOf(m.node, key));
  }
  return out;
}

void ExpectWithinAllocatable(const Snapshot& snapshot) {
  for (NodeIndex n = 0; n < snapshot.num_nodes(); ++n) {
    for (ResourceId r = 0; r < snapshot.num_resource_columns(); ++r) {
      EXPECT_LE(snapshot.requested(r, n), snapshot.allocatable(r, n))
          << snapshot.node_name(n) << " resource " << snapshot.resources().Name(r);
    }
  }
}

// ------------------------------------------------------------ catalog

TEST(TopologyCatalog, UpsertValidatesAndNamesTheField) {
  TopologyCatalog catalog;
  kube::Topology good;
  good.meta.name = "dc";
  good.spec.levels = {{kZone}, {kRack}};
  ASSERT_TRUE(catalog.Upsert(good).ok());
  ASSERT_TRUE(catalog.Find("dc").has_value());
  EXPECT_EQ(catalog.Find("dc")->size(), 2u);
  EXPECT_EQ(catalog.Definitions().front().levels, (std::vector<std::string>{kZone, kRack}));

  kube::Topology bad = good;
  bad.spec.levels = {{kRack}, {kRack}};
  Status s = catalog.Upsert(bad);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("spec.levels[1].nodeLabel"), std::string::npos)
      << s.error().message;
  EXPECT_FALSE(catalog.Find("dc").has_value()) << "an invalid version replaces nothing";
  EXPECT_FALSE(catalog.Remove("dc"));
}

TEST(NeedsTopologyPlacement, OnlyForLevelsOrSubGroups) {
  GangSpec plain = Gang("g", 2);
  EXPECT_FALSE(NeedsTopologyPlacement(plain));
  GangSpec rack = plain;
  rack.topology_constraint.required_level = kRack;
  EXPECT_TRUE(NeedsTopologyPlacement(rack));
  GangSpec tree = plain;
  tree.sub_groups = {Sub("a", 1)};
  EXPECT_TRUE(NeedsTopologyPlacement(tree));
}

// ------------------------------------------------------------ packing

TEST(TopologyPlacement, PacksARequiredRackTightestFirst) {
  TopoCluster cluster;
  cluster.Build(1, 1, 3, 2, {{"cpu", "8"}, {"pods", "110"}});
  // rack-1-1-2 already has 10 of its 16 cpu used: 6 left, the tightest
  // rack that still holds a 6-cpu gang.
  NodeInfo& busy = cluster.node("n-1-1-2-1");
  busy.AddPod(
      PodBuilder("old").Requests(cluster.names, {{"cpu", "6"}}).NodeName("n-1-1-2-1").Obj());
  cluster.node("n-1-1-2-2")
      .AddPod(
          PodBuilder("old2").Requests(cluster.names, {{"cpu", "4"}}).NodeName("n-1-1-2-2").Obj());
  Snapshot& snapshot = cluster.Sync();
  Runner runner;
  GangSpec spec = Gang("g", 6);
  spec.topology_constraint.topology = "dc";
  spec.topology_constraint.required_level = "rack";
  auto members = Members(cluster.names, "g", 6, {{"cpu", "1"}});
  TopologyGangPlacement p = runner.Place(snapshot, members, spec);
  ASSERT_TRUE(p.placement.satisfied) << p.placement.failure;
  EXPECT_EQ(p.placement.placed.size(), 6u);
  EXPECT_EQ(p.domain, "rack rack-1-1-2");
  for (const MemberPlacement& m : p.placement.placed) {
    EXPECT_EQ(cluster.LabelOf(m.node, kRack), "rack-1-1-2");
  }
  ExpectWithinAllocatable(snapshot);

  // The next 6-cpu gang no longer fits that rack: an empty one is used.
  auto more = Members(cluster.names, "h", 6, {{"cpu", "1"}});
  GangSpec h = spec;
  h.name = "h";
  TopologyGangPlacement q = runner.Place(snapshot, more, h);
  ASSERT_TRUE(q.placement.satisfied) << q.placement.failure;
  EXPECT_TRUE(q.domain == "rack rack-1-1-1" || q.domain == "rack rack-1-1-3") << q.domain;
  ExpectWithinAllocatable(snapshot);
}

TEST(TopologyPlacement, ShortfallNamesTheBestRackAndTheResource) {
  TopoCluster cluster;
  cluster.Build(1, 1, 2, 2, {{"cpu", "32"}, {"nvidia.com/gpu", "4"}, {"pods", "110"}});
  // rack-1-1-1 has 6 GPUs free, rack-1-1-2 has 5: an 8-GPU gang fits neither.
  cluster.node("n-1-1-1-1")
      .AddPod(PodBuilder("a")
                  .Requests(cluster.names, {{"nvidia.com/gpu", "2"}})
                  .NodeName("n-1-1-1-1")
                  .Obj());
  cluster.node("n-1-1-2-1")
      .AddPod(PodBuilder("b")
                  .Requests(cluster.names, {{"nvidia.com/gpu", "3"}})
                  .NodeName("n-1-1-2-1")
                  .Obj());
  Snapshot& snapshot = cluster.Sync();
  const uint64_t generation = snapshot.generation(0);
  Runner runner;
  GangSpec spec = Gang("g", 8);
  spec.topology_constraint.topology = "dc";
  spec.topology_constraint.required_level = "rack";
  auto members = Members(cluster.names, "g", 8, {{"cpu", "1"}, {"nvidia.com/gpu", "1"}});
  TopologyGangPlacement p = runner.Place(snapshot, members, spec);
  EXPECT_FALSE(p.placement.satisfied);
  EXPECT_TRUE(p.placement.placed.empty());
  EXPECT_EQ(p.placement.unplaced.size(), 8u);
  EXPECT_EQ(p.placement.failure,
            "best rack rack-1-1-1 fits 6/8 pods: 2 Insufficient nvidia.com/gpu");
  EXPECT_EQ(snapshot.generation(0), generation) << "nothing was left on the snapshot";
  for (NodeIndex n = 0; n < snapshot.num_nodes(); ++n)
    EXPECT_EQ(snapshot.pod_count(n), n % 2 == 0 ? 1u : 0u);
}

TEST(TopologyPlacement, HierarchyBlockRequiredRackPerSubGroup) {
  TopoCluster cluster;
  cluster.Build(1, 2, 2, 2, {{"cpu", "4"}, {"pods", "110"}});  // 2 blocks x 2 racks x 8 cpu
  Snapshot& snapshot = cluster.Sync();
  Runner runner;
  GangSpec spec = Gang("g", 12);
  spec.topology_constraint.topology = "dc";
  spec.topology_constraint.required_level = "block";
  spec.sub_groups = {Sub("a", 6, "", std::nullopt, "rack"), Sub("b", 6, "", std::nullopt, "rack")};
  std::vector<PodPtr> members = Members(cluster.names, "g", 6, {{"cpu", "1"}}, "a");
  for (const PodPtr& p : Members(cluster.names, "g", 6, {{"cpu", "1"}}, "b")) members.push_back(p);
  TopologyGangPlacement p = runner.Place(snapshot, members, spec);
  ASSERT_TRUE(p.placement.satisfied) << p.placement.failure;
  EXPECT_EQ(p.placement.placed.size(), 12u);
  auto racks = DomainsBySubGroup(cluster, p, kRack);
  auto blocks = DomainsBySubGroup(cluster, p, kBlock);
  EXPECT_EQ(racks["a"].size(), 1u);
  EXPECT_EQ(racks["b"].size(), 1u);
  EXPECT_NE(*racks["a"].begin(), *racks["b"].begin());
  std::set<std::string> all_blocks;
  for (const auto& [g, b] : blocks) all_blocks.insert(b.begin(), b.end());
  EXPECT_EQ(all_blocks.size(), 1u);
  ASSERT_EQ(p.sub_groups.size(), 2u);
  EXPECT_EQ(p.sub_groups[0].placed, 6);
  EXPECT_TRUE(p.sub_groups[0].satisfied);
  EXPECT_EQ(p.sub_groups[0].domain, "rack " + *racks["a"].begin());

  // A third gang of the same shape cannot get two racks in one block any more
  // (one block is full, the other has two empty racks): it takes the other block.
  std::vector<PodPtr> second = Members(cluster.names, "h", 6, {{"cpu", "1"}}, "a");
  for (const PodPtr& q : Members(cluster.names, "h", 6, {{"cpu", "1"}}, "b")) second.push_back(q);
  GangSpec h = spec;
  h.name = "h";
  TopologyGangPlacement q = runner.Place(snapshot, second, h);
  ASSERT_TRUE(q.placement.satisfied) << q.placement.failure;
  EXPECT_NE(q.domain, p.domain);
  // No room for a third.
  std::vector<PodPtr> third = Members(cluster.names, "k", 6, {{"cpu", "1"}}, "a");
  for (const PodPtr& r : Members(cluster.names, "k", 6, {{"cpu", "1"}}, "b")) third.push_back(r);
  GangSpec k = spec;
  k.name = "k";
  TopologyGangPlacement r = runner.Place(snapshot, third, k);
  EXPECT_FALSE(r.placement.satisfied);
  EXPECT_TRUE(r.placement.placed.empty());
  EXPECT_NE(r.placement.failure.find("best block"), std::string::npos) << r.placement.failure;
  ExpectWithinAllocatable(snapshot);
}

// Issue 21: a preferred level gathers the subgroup in the tightest rack that
// holds it (least free domain), keeping roomier racks whole; pods that fit in
// no single rack spill, most free rack first (fewest racks).
TEST(TopologyPlacement, PreferredLevelGathersInTheTightestRack) {
  TopoCluster cluster;
  cluster.Build(1, 1, 3, 2, {{"cpu", "4"}, {"pods", "110"}});
  // rack-1-1-3 is the emptiest (8 cpu free), rack-1-1-1 has 5, rack-1-1-2 has 6.
  cluster.node("n-1-1-1-1")
      .AddPod(PodBuilder("a").Requests(cluster.names, {{"cpu", "3"}}).NodeName("n-1-1-1-1").Obj());
  cluster.node("n-1-1-2-1")
      .AddPod(PodBuilder("b").Requests(cluster.names, {{"cpu", "2"}}).NodeName("n-1-1-2-1").Obj());
  Snapshot& snapshot = cluster.Sync();
  Runner runner;
  GangSpec spec = Gang("g", 5);
  spec.topology_constraint.topology = "dc";
  spec.sub_groups = {Sub("w", 5, "", std::nullopt, "", "rack")};
  auto members = Members(cluster.names, "g", 5, {{"cpu", "1"}}, "w");
  TopologyGangPlacement p = runner.Place(snapshot, members, spec);
  ASSERT_TRUE(p.placement.satisfied) << p.placement.failure;
  auto racks = DomainsBySubGroup(cluster, p, kRack);
  EXPECT_EQ(racks["w"], (std::set<std::string>{"rack-1-1-1"}));

  // 9 pods fit in no single rack (0 + 6 + 8 cpu left): preferred is a score,
  // so they spill, filling the most free rack first.
  GangSpec big = Gang("big", 9);
  big.topology_constraint.topology = "dc";
  big.sub_groups = {Sub("w", 9, "", std::nullopt, "", "rack")};
  auto more = Members(cluster.names, "big", 9, {{"cpu", "1"}}, "w");
  TopologyGangPlacement q = runner.Place(snapshot, more, big);
  ASSERT_TRUE(q.placement.satisfied) << q.placement.failure;
  std::map<std::string, int> per_rack;
  for (const MemberPlacement& m : q.placement.placed) ++per_rack[cluster.LabelOf(m.node, kRack)];
  EXPECT_EQ(per_rack["rack-1-1-3"], 8) << "the most free rack is filled first";
  EXPECT_EQ(per_rack["rack-1-1-2"], 1);
  ExpectWithinAllocatable(snapshot);
}

// ------------------------------------------------------------ elastic (spec 002)

TEST(TopologyPlacement, ElasticReplicasMinSubGroupThreeOfFour) {
  // Room for exactly 3 replicas of 8 pods (one rack each): 24 bound, the
  // fourth (optional) replica waits.
  TopoCluster cluster;
  cluster.Build(1, 1, 3, 2, {{"cpu", "4"}, {"pods", "110"}});
  Snapshot& snapshot = cluster.Sync();
  Runner runner;
  GangSpec spec = Gang("prefill", 24);
  spec.topology_constraint.topology = "dc";
  spec.min_sub_group = 3;
  std::vector<PodPtr> members;
  for (int r = 0; r < 4; ++r) {
    const std::string name = "prefill-" + std::to_string(r);
    spec.sub_groups.push_back(Sub(name, 8, "", std::nullopt, "rack"));
    for (const PodPtr& p : Members(cluster.names, "prefill", 8, {{"cpu", "1"}}, name))
      members.push_back(p);
  }
  TopologyGangPlacement p = runner.Place(snapshot, members, spec);
  ASSERT_TRUE(p.placement.satisfied) << p.placement.failure;
  EXPECT_EQ(p.placement.placed.size(), 24u);
  EXPECT_EQ(p.placement.unplaced.size(), 8u);
  ASSERT_EQ(p.sub_groups.size(), 4u);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(p.sub_groups[r].placed, 8) << r;
    EXPECT_TRUE(p.sub_groups[r].satisfied) << r;
  }
  EXPECT_EQ(p.sub_groups[3].placed, 0);
  EXPECT_FALSE(p.sub_groups[3].satisfied);
  for (const PodPtr& pod : p.placement.unplaced) EXPECT_EQ(pod->sub_group, "prefill-3");
  EXPECT_NE(p.placement.failure.find("prefill-3"), std::string::npos) << p.placement.failure;
  auto racks = DomainsBySubGroup(cluster, p, kRack);
  for (int r = 0; r < 3; ++r) EXPECT_EQ(racks["prefill-" + std::to_string(r)].size(), 1u);
  ExpectWithinAllocatable(snapshot);
}

TEST(TopologyPlacement, OptionalReplicaLackingPodsWaitsForMembers) {
  // The minimum (3 replicas) is placed; the fourth has 1 of its 8 pods so far.
  TopoCluster cluster;
  cluster.Build(1, 1, 4, 2, {{"cpu", "4"}, {"pods", "110"}});
  Snapshot& snapshot = cluster.Sync();
  Runner runner;
  GangSpec spec = Gang("prefill", 24);
  spec.topology_constraint.topology = "dc";
  spec.min_sub_group = 3;
  std::vector<PodPtr> members;
  for (int r = 0; r < 4; ++r) {
    const std::string name = "prefill-" + std::to_string(r);
    spec.sub_groups.push_back(Sub(name, 8, "", std::nullopt, "rack"));
    for (const PodPtr& p : Members(cluster.names, "prefill", r < 3 ? 8 : 1, {{"cpu", "1"}}, name)) {
      members.push_back(p);
    }
  }
  TopologyGangPlacement p = runner.Place(snapshot, members, spec);
  ASSERT_TRUE(p.placement.satisfied) << p.placement.failure;
  EXPECT_EQ(p.placement.placed.size(), 24u);
  EXPECT_EQ(p.placement.failure, "subgroup prefill-3: needs 8 pods but only 1 exist");
  EXPECT_EQ(p.placement.unschedulable_plugins, 0u) << "retried after backoff, not on an event";
}

TEST(TopologyPlacement, OptionalReplicaPlacedWhenItFits) {
  TopoCluster cluster;
  cluster.Build(1, 1, 4, 2, {{"cpu", "4"}, {"pods", "110"}});
  Snapshot& snapshot = cluster.Sync();
  Runner runner;
  GangSpec spec = Gang("prefill", 24);
  spec.topology_constraint.topology = "dc";
  spec.min_sub_group = 3;
  std::vector<PodPtr> members;
  for (int r = 0; r < 4; ++r) {
    const std::string name = "prefill-" + std::to_string(r);
    spec.sub_groups.push_back(Sub(name, 8, "", std::nullopt, "rack"));
    for (const PodPtr& p : Members(cluster.names, "prefill", 8, {{"cpu", "1"}}, name))
      members.push_back(p);
  }
  TopologyGangPlacement p = runner.Place(snapshot, members, spec);
  ASSERT_TRUE(p.placement.satisfied) << p.placement.failure;
  EXPECT_EQ(p.placement.placed.size(), 32u);
  EXPECT_TRUE(p.sub_groups[3].satisfied);
}

TEST(TopologyPlacement, RequiredChildThatDoesNotFitFailsTheGangAndLeavesNothing) {
  // The first 3 children are required; only 2 racks: nothing is placed even
  // though 16 pods would fit.
  TopoCluster cluster;
  cluster.Build(1, 1, 2, 2, {{"cpu", "4"}, {"pods", "110"}});
  Snapshot& snapshot = cluster.Sync();
  Runner runner;
  GangSpec spec = Gang("prefill", 24);
  spec.topology_constraint.topology = "dc";
  spec.min_sub_group = 3;
  std::vector<PodPtr> members;
  for (int r = 0; r < 4; ++r) {
    const std::string name = "prefill-" + std::to_string(r);
    spec.sub_groups.push_back(Sub(name, 8, "", std::nullopt, "rack"));
    for (const PodPtr& p : Members(cluster.names, "prefill", 8, {{"cpu", "1"}}, name))
      members.push_back(p);
  }
  TopologyGangPlacement p = runner.Place(snapshot, members, spec);
  EXPECT_FALSE(p.placement.satisfied);
  EXPECT_TRUE(p.placement.placed.empty());
  for (NodeIndex n = 0; n < snapshot.num_nodes(); ++n) EXPECT_EQ(snapshot.pod_count(n), 0u);
  EXPECT_EQ(p.placement.failure,
            "subgroup prefill-2: best rack rack-1-1-1 fits 0/8 pods: 8 Insufficient cpu")
      << p.placement.failure;
}

// Spec 002 worked example 1: LeaderWorkerSet, 4 groups of 1 leader + 5
// workers, at least 3 groups (each needing both its leader and workers).
TEST(TopologyPlacement, Spec002LeaderWorkerSet) {
  TopoCluster cluster;
  cluster.Build(1, 1, 1, 5, {{"cpu", "4"}, {"pods", "110"}});  // 20 cpu: 3 groups of 6
  Snapshot& snapshot = cluster.Sync();
  Runner runner;
  GangSpec spec = Gang("lws", 18);
  spec.min_sub_group = 3;
  std::vector<PodPtr> members;
  for (int g = 0; g < 4; ++g) {
    const std::string group = "group-" + std::to_string(g);
    spec.sub_groups.push_back(Sub(group, 6, "", 2));
    spec.sub_groups.push_back(Sub(group + "-leader", 1, group));
    spec.sub_groups.push_back(Sub(group + "-workers", 5, group));
    for (const PodPtr& p : Members(cluster.names, "lws", 1, {{"cpu", "1"}}, group + "-leader"))
      members.push_back(p);
    for (const PodPtr& p : Members(cluster.names, "lws", 5, {{"cpu", "1"}}, group + "-workers"))
      members.push_back(p);
  }
  ASSERT_TRUE(ValidateGangSpec(spec).ok()) << ValidateGangSpec(spec).error().message;
  TopologyGangPlacement p = runner.Place(snapshot, members, spec);
  ASSERT_TRUE(p.placement.satisfied) << p.placement.failure;
  EXPECT_EQ(p.placement.placed.size(), 18u);
  std::map<std::string, int> per_group;
  for (const MemberPlacement& m : p.placement.placed) ++per_group[m.pod->sub_group.substr(0, 7)];
  EXPECT_EQ(per_group,
            (std::map<std::string, int>{{"group-0", 6}, {"group-1", 6}, {"group-2", 6}}));
  ExpectWithinAllocatable(snapshot);
}

// Spec 002 worked example 2: Grove disaggregated inference, prefill (3 of 4
// replicas of 8, each in one rack) + decode (1 of 2 replicas of 4).
TEST(TopologyPlacement, Spec002DisaggregatedInference) {
  TopoCluster cluster;
  cluster.Build(1, 1, 5, 2, {{"cpu", "4"}, {"pods", "110"}});  // 5 racks x 8 cpu
  Snapshot& snapshot = cluster.Sync();
  Runner runner;
  GangSpec spec = Gang("dynamo", 28);
  spec.topology_constraint.topology = "dc";
  spec.min_sub_group = 2;
  spec.sub_groups.push_back(Sub("prefill", 24, "", 3, "zone"));
  spec.sub_groups.push_back(Sub("decode", 4, "", 1, "zone"));
  std::vector<PodPtr> members;
  for (int r = 0; r < 4; ++r) {
    const std::string name = "prefill-" + std::to_string(r);
    spec.sub_groups.push_back(Sub(name, 8, "prefill", std::nullopt, "rack"));
    for (const PodPtr& p : Members(cluster.names, "dynamo", 8, {{"cpu", "1"}}, name))
      members.push_back(p);
  }
  for (int r = 0; r < 2; ++r) {
    const std::string name = "decode-" + std::to_string(r);
    spec.sub_groups.push_back(Sub(name, 4, "decode", std::nullopt, "rack"));
    for (const PodPtr& p : Members(cluster.names, "dynamo", 4, {{"cpu", "1"}}, name))
      members.push_back(p);
  }
  ASSERT_TRUE(ValidateGangSpec(spec).ok()) << ValidateGangSpec(spec).error().message;
  TopologyGangPlacement p = runner.Place(snapshot, members, spec);
  ASSERT_TRUE(p.placement.satisfied) << p.placement.failure;
  // 40 cpu in 5 racks of 8: the minimum is prefill-0..2 (three racks) and
  // decode-0 (4 pods, tightest rack: a fresh one). Then the optional
  // replicas: prefill-3 needs a whole rack (only 8 - 4 = 4 left in the
  // decode rack and one empty rack: it takes the empty one), decode-1 joins
  // decode-0's rack. Everything fits, each replica in one rack.
  std::map<std::string, int> placed;
  for (const MemberPlacement& m : p.placement.placed) ++placed[m.pod->sub_group];
  for (int r = 0; r < 4; ++r) EXPECT_EQ(placed["prefill-" + std::to_string(r)], 8) << r;
  EXPECT_EQ(placed["decode-0"], 4);
  EXPECT_EQ(placed["decode-1"], 4);
  auto racks = DomainsBySubGroup(cluster, p, kRack);
  for (const auto& [group, set] : racks) EXPECT_EQ(set.size(), 1u) << group;
  EXPECT_EQ(racks["decode-0"], racks["decode-1"]);
  EXPECT_EQ(p.placement.placed.size(), 40u);
  EXPECT_TRUE(p.placement.unplaced.empty());

  // One rack less: prefill-3 cannot get a rack of its own; the minimum
  // (28 pods) and decode-1 still place.
  TopoCluster smaller;
  smaller.Build(1, 1, 4, 2, {{"cpu", "4"}, {"pods", "110"}});
  Snapshot& s2 = smaller.Sync();
  std::vector<PodPtr> again;
  for (const PodPtr& pod : members) {
    again.push_back(Member(smaller.names, "dynamo", pod->name, {{"cpu", "1"}}, pod->sub_group));
  }
  TopologyGangPlacement q = runner.Place(s2, again, spec);
  ASSERT_TRUE(q.placement.satisfied) << q.placement.failure;
  std::map<std::string, int> placed2;
  for (const MemberPlacement& m : q.placement.placed) ++placed2[m.pod->sub_group];
  EXPECT_EQ(placed2["prefill-3"], 0);
  EXPECT_EQ(placed2["decode-1"], 4);
  EXPECT_EQ(q.placement.placed.size(), 32u);
  EXPECT_FALSE(q.sub_groups[5].satisfied);  // prefill-3
  EXPECT_TRUE(q.sub_groups[1].satisfied);   // decode
  ExpectWithinAllocatable(snapshot);
}

// Spec 002 worked example 4: a leader and three worker groups, leader + 2
// worker groups required.
TEST(TopologyPlacement, Spec002LeaderAndWorkers) {
  TopoCluster cluster;
  cluster.Build(1, 1, 1, 3, {{"cpu", "4"}, {"pods", "110"}});  // 12 cpu: 1 + 2 x 4, +3 spare
  Snapshot& snapshot = cluster.Sync();
  Runner runner;
  GangSpec spec = Gang("job", 9);
  spec.min_sub_group = 3;
  spec.sub_groups = {Sub("leader", 1), Sub("workers-0", 4), Sub("workers-1", 4),
                     Sub("workers-2", 4)};
  std::vector<PodPtr> members = Members(cluster.names, "job", 1, {{"cpu", "1"}}, "leader");
  for (int w = 0; w < 3; ++w) {
    for (const PodPtr& p :
         Members(cluster.names, "job", 4, {{"cpu", "1"}}, "workers-" + std::to_string(w))) {
      members.push_back(p);
    }
  }
  TopologyGangPlacement p = runner.Place(snapshot, members, spec);
  ASSERT_TRUE(p.placement.satisfied) << p.placement.failure;
  EXPECT_EQ(p.placement.placed.size(), 9u) << "workers-2 is all-or-nothing: 3 cpu are not enough";
  EXPECT_FALSE(p.sub_groups[3].satisfied);
  EXPECT_EQ(p.sub_groups[3].placed, 0);
}

TEST(TopologyPlacement, MinMemberBeyondTheChildrenTakesSparePods) {
  // minMember 10 with 2 required children of minMember 4 each (of 3; the
  // third has no pods yet): two more pods are needed, taken from the
  // children's spare pods.
  TopoCluster cluster;
  cluster.Build(1, 1, 1, 3, {{"cpu", "4"}, {"pods", "110"}});
  Snapshot& snapshot = cluster.Sync();
  Runner runner;
  GangSpec spec = Gang("g", 10);
  spec.min_sub_group = 2;
  spec.sub_groups = {Sub("a", 4), Sub("b", 4), Sub("c", 4)};
  std::vector<PodPtr> members = Members(cluster.names, "g", 6, {{"cpu", "1"}}, "a");
  for (const PodPtr& p : Members(cluster.names, "g", 6, {{"cpu", "1"}}, "b")) members.push_back(p);
  TopologyGangPlacement p = runner.Place(snapshot, members, spec);
  ASSERT_TRUE(p.placement.satisfied) << p.placement.failure;
  EXPECT_EQ(p.placement.placed.size(), 12u);  // 12 cpu: the extras land too

  // With only 9 cpu, minMember 10 cannot be met.
  TopoCluster small;
  small.Build(1, 1, 1, 3, {{"cpu", "3"}, {"pods", "110"}});
  Snapshot& s2 = small.Sync();
  std::vector<PodPtr> again = Members(small.names, "g", 6, {{"cpu", "1"}}, "a");
  for (const PodPtr& q : Members(small.names, "g", 6, {{"cpu", "1"}}, "b")) again.push_back(q);
  TopologyGangPlacement q = runner.Place(s2, again, spec);
  EXPECT_FALSE(q.placement.satisfied);
  EXPECT_TRUE(q.placement.placed.empty());
}

// Spec 002's IsSubGroupReady: any minSubGroup children satisfy their
// parent. The first replica in the list cannot fit anywhere (its pods ask for
// more cpu than a node has); the other three can: they are the required ones.
TEST(TopologyPlacement, AnyNChildrenSatisfyMinSubGroupNotTheFirstN) {
  TopoCluster cluster;
  cluster.Build(1, 1, 3, 2, {{"cpu", "4"}, {"pods", "110"}});
  Snapshot& snapshot = cluster.Sync();
  Runner runner;
  GangSpec spec = Gang("prefill", 24);
  spec.topology_constraint.topology = "dc";
  spec.min_sub_group = 3;
  std::vector<PodPtr> members;
  for (int r = 0; r < 4; ++r) {
    const std::string name = "prefill-" + std::to_string(r);
    spec.sub_groups.push_back(Sub(name, 8, "", std::nullopt, "rack"));
    const char* cpu = r == 0 ? "5" : "1";
    for (const PodPtr& p : Members(cluster.names, "prefill", 8, {{"cpu", cpu}}, name))
      members.push_back(p);
  }
  TopologyGangPlacement p = runner.Place(snapshot, members, spec);
  ASSERT_TRUE(p.placement.satisfied) << p.placement.failure;
  EXPECT_EQ(p.placement.placed.size(), 24u);
  EXPECT_FALSE(p.sub_groups[0].satisfied);
  EXPECT_EQ(p.sub_groups[0].placed, 0);
  for (int r = 1; r < 4; ++r) EXPECT_TRUE(p.sub_groups[r].satisfied) << r;
  auto racks = DomainsBySubGroup(cluster, p, kRack);
  for (int r = 1; r < 4; ++r) EXPECT_EQ(racks["prefill-" + std::to_string(r)].size(), 1u) << r;
  ExpectWithinAllocatable(snapshot);
  // The same with only two racks free for 1-cpu pods: fewer than 3 replicas
  // fit, so nothing is placed.
  TopoCluster small;
  small.Build(1, 1, 2, 2, {{"cpu", "4"}, {"pods", "110"}});
  Snapshot& s2 = small.Sync();
  std::vector<PodPtr> again;
  for (int r = 0; r < 4; ++r) {
    const char* cpu = r == 0 ? "5" : "1";
    for (const PodPtr& q :
         Members(small.names, "prefill", 8, {{"cpu", cpu}}, spec.sub_groups[r].name))
      again.push_back(q);
  }
  TopologyGangPlacement q = runner.Place(s2, again, spec);
  EXPECT_FALSE(q.placement.satisfied);
  EXPECT_TRUE(q.placement.placed.empty());
  for (NodeIndex n = 0; n < s2.num_nodes(); ++n) EXPECT_EQ(s2.pod_count(n), 0u);
}

// A replica whose members are already bound counts first: re-placing a gang
// (more members arrived, or one was lost) keeps the replica that runs. Room
// for one more replica only: the bound prefill-2 and one other make the 2.
TEST(TopologyPlacement, ReadyChildrenAreRequiredFirst) {
  TopoCluster cluster;
  cluster.Build(1, 1, 2, 2, {{"cpu", "4"}, {"pods", "110"}});
  // prefill-2's 8 pods fill rack-1-1-2.
  for (int i = 0; i < 8; ++i) {
    auto bound =
        Member(cluster.names, "prefill", "bound-" + std::to_string(i), {{"cpu", "1"}}, "prefill-2");
    auto copy = std::make_shared<PodInfo>(*bound);
    const std::string node = i < 4 ? "n-1-1-2-1" : "n-1-1-2-2";
    copy->node_name = node;
    cluster.node(node).AddPod(copy);
  }
  Snapshot& snapshot = cluster.Sync();
  Runner runner;
  runner.options.find_bound_members = true;
  GangSpec spec = Gang("prefill", 16);
  spec.topology_constraint.topology = "dc";
  spec.min_sub_group = 2;
  std::vector<PodPtr> members;
  for (int r = 0; r < 3; ++r) {
    const std::string name = "prefill-" + std::to_string(r);
    spec.sub_groups.push_back(Sub(name, 8, "", std::nullopt, "rack"));
    if (r == 2) continue;
    for (const PodPtr& p : Members(cluster.names, "prefill", 8, {{"cpu", "1"}}, name))
      members.push_back(p);
  }
  TopologyGangPlacement p = runner.Place(snapshot, members, spec);
  ASSERT_TRUE(p.placement.satisfied) << p.placement.failure;
  EXPECT_EQ(p.placement.placed.size(), 8u);
  EXPECT_EQ(p.sub_groups[2].bound, 8);
  EXPECT_TRUE(p.sub_groups[2].satisfied);
  EXPECT_EQ(p.sub_groups[0].placed + p.sub_groups[1].placed, 8);
  ExpectWithinAllocatable(snapshot);
}

// minMember 20 over three replicas of 8 with minSubGroup 2: two replicas
// make 16, so a third is placed whole to reach 20 (its pods count only as a
// whole replica, all-or-nothing for its own minimum). With room for 20
// pods only, the gang does not fit.
TEST(TopologyPlacement, MinMemberBeyondTheRequiredChildrenTakesAnOptionalChild) {
  GangSpec spec = Gang("g", 20);
  spec.min_sub_group = 2;
  spec.sub_groups = {Sub("a", 8), Sub("b", 8), Sub("c", 8)};
  Runner runner;
  for (const auto& [cpu, fits] :
       std::vector<std::pair<std::string, bool>>{{"4", true}, {"5", false}}) {
    TopoCluster cluster;
    // 6 nodes of 4 cpu (24) or 4 nodes of 5 cpu (20).
    cluster.Build(1, 1, 1, fits ? 6 : 4, {{"cpu", cpu.c_str()}, {"pods", "110"}});
    Snapshot& snapshot = cluster.Sync();
    std::vector<PodPtr> members;
    for (const char* name : {"a", "b", "c"}) {
      for (const PodPtr& p : Members(cluster.names, "g", 8, {{"cpu", "1"}}, name))
        members.push_back(p);
    }
    TopologyGangPlacement p = runner.Place(snapshot, members, spec);
    EXPECT_EQ(p.placement.satisfied, fits) << p.placement.failure;
    if (fits) {
      EXPECT_EQ(p.placement.placed.size(), 24u);
      for (const SubGroupPlacement& sg : p.sub_groups) EXPECT_TRUE(sg.satisfied) << sg.name;
    } else {
      EXPECT_TRUE(p.placement.placed.empty());
      for (NodeIndex n = 0; n < snapshot.num_nodes(); ++n) EXPECT_EQ(snapshot.pod_count(n), 0u);
    }
    ExpectWithinAllocatable(snapshot);
  }
}

// ------------------------------------------------------------ bound members, keys, errors

TEST(TopologyPlacement, MembersAlreadyBoundPinTheRack) {
  TopoCluster cluster;
  cluster.Build(1, 1, 3, 2, {{"cpu", "4"}, {"pods", "110"}});
  // Two members already run in rack-1-1-3; the rest must join them.
  for (int i = 0; i < 2; ++i) {
    auto bound = Member(cluster.names, "g", "g-bound-" + std::to_string(i), {{"cpu", "1"}});
    auto copy = std::make_shared<PodInfo>(*bound);
    copy->node_name = "n-1-1-3-1";
    cluster.node("n-1-1-3-1").AddPod(copy);
  }
  Snapshot& snapshot = cluster.Sync();
  Runner runner;
  runner.options.find_bound_members = true;
  GangSpec spec = Gang("g", 6);
  spec.topology_constraint.topology = "dc";
  spec.topology_constraint.required_level = "rack";
  auto members = Members(cluster.names, "g", 4, {{"cpu", "1"}});
  TopologyGangPlacement p = runner.Place(snapshot, members, spec);
  ASSERT_TRUE(p.placement.satisfied) << p.placement.failure;
  EXPECT_EQ(p.domain, "rack rack-1-1-3");
  for (const MemberPlacement& m : p.placement.placed)
    EXPECT_EQ(cluster.LabelOf(m.node, kRack), "rack-1-1-3");
}

TEST(TopologyPlacement, BareTopologyKeyOfAWorkloadPodGroup) {
  TopoCluster cluster;
  cluster.Build(1, 1, 2, 2, {{"cpu", "4"}, {"pods", "110"}});
  Snapshot& snapshot = cluster.Sync();
  Runner runner;
  GangSpec spec = Gang("w", 6);
  spec.source = GangSource::kWorkloadPodGroup;
  spec.topology_constraint.required_level = kRack;
  auto members = Members(cluster.names, "w", 6, {{"cpu", "1"}});
  TopologyGangPlacement p = runner.Place(snapshot, members, spec);
  ASSERT_TRUE(p.placement.satisfied) << p.placement.failure;
  std::set<std::string> racks;
  for (const MemberPlacement& m : p.placement.placed) racks.insert(cluster.LabelOf(m.node, kRack));
  EXPECT_EQ(racks.size(), 1u);
  EXPECT_EQ(p.domain.substr(0, 5), "rack ");

  // 9 pods fit in no rack: the message names the level by its key's name.
  auto big = Members(cluster.names, "x", 9, {{"cpu", "1"}});
  GangSpec x = spec;
  x.name = "x";
  x.min_member = 9;
  TopologyGangPlacement q = runner.Place(snapshot, big, x);
  EXPECT_FALSE(q.placement.satisfied);
  EXPECT_EQ(q.placement.failure, "best rack rack-1-1-2 fits 8/9 pods: 1 Insufficient cpu");
}

TEST(TopologyPlacement, UnknownTopologyOrLevelNamesTheField) {
  TopoCluster cluster;
  cluster.Build(1, 1, 1, 1, {{"cpu", "4"}, {"pods", "110"}});
  Snapshot& snapshot = cluster.Sync();
  Runner runner;
  GangSpec spec = Gang("g", 1);
  spec.topology_constraint.topology = "nope";
  spec.topology_constraint.required_level = "rack";
  auto members = Members(cluster.names, "g", 1, {{"cpu", "1"}});
  TopologyGangPlacement p = runner.Place(snapshot, members, spec);
  EXPECT_FALSE(p.placement.satisfied);
  EXPECT_NE(p.placement.failure.find("spec.topologyConstraint.topology: Not found: \"nope\""),
            std::string::npos)
      << p.placement.failure;

  GangSpec level = Gang("g", 1);
  level.topology_constraint.topology = "dc";
  level.sub_groups = {Sub("a", 1, "", std::nullopt, "row")};
  auto one = Members(cluster.names, "g", 1, {{"cpu", "1"}}, "a");
  TopologyGangPlacement q = runner.Place(snapshot, one, level);
  EXPECT_FALSE(q.placement.satisfied);
  EXPECT_NE(q.placement.failure.find("spec.subGroups[0].topologyConstraint.requiredTopologyLevel"),
            std::string::npos)
      << q.placement.failure;
  for (NodeIndex n = 0; n < snapshot.num_nodes(); ++n) EXPECT_EQ(snapshot.pod_count(n), 0u);
}

// ------------------------------------------------------------ quality

// A gang of `pods` pods asking `gpu` GPUs each (powers of two), packed in one rack.
struct SmallGang {
  int pods = 0;
  int gpu = 0;
};

// Whether `items` (GPU requests, powers of two) fit on `nodes` nodes of
// `capacity` GPUs: first-fit decreasing, which is exact for sizes that divide
// each other and the capacity (Coffman, Garey and Johnson).
bool FitsDivisible(std::vector<int> items, int nodes, int capacity) {
  std::sort(items.rbegin(), items.rend());
  std::vector<int> free(static_cast<size_t>(nodes), capacity);
  for (int item : items) {
    auto it = std::find_if(free.begin(), free.end(), [&](int f) { return f >= item; });
    if (it == free.end()) return false;
    *it -= item;
  }
  return true;
}

// The most gangs that can be placed at once, each in one rack, by exhaustive
// search (skip or put in a rack; racks holding the same multiset are tried
// once; branches that cannot beat the best so far are cut).
int ExactMaxGangs(const std::vector<SmallGang>& gangs, int racks, int nodes, int capacity) {
  std::vector<std::vector<int>> items(static_cast<size_t>(racks));
  int best = 0;
  const int n = static_cast<int>(gangs.size());
  std::function<void(int, int)> search = [&](int i, int placed) {
    if (placed + (n - i) <= best) return;
    if (i == n) {
      best = placed;
      return;
    }
    std::set<std::vector<int>> tried;
    for (auto& rack : items) {
      std::vector<int> key = rack;
      std::sort(key.begin(), key.end());
      if (!tried.insert(key).second) continue;
      const size_t before = rack.size();
      rack.insert(rack.end(), static_cast<size_t>(gangs[i].pods), gangs[i].gpu);
      if (FitsDivisible(rack, nodes, capacity)) search(i + 1, placed + 1);
      rack.resize(before);
    }
    search(i + 1, placed);
  };
  search(0, 0);
  return best;
}

// Issue 5: on 200 random small instances (<= 8 racks x 4 nodes, <= 10 gangs
// arriving one after another, required rack), copse places at least 95% as
// many gangs as the exact optimum, and never an invalid placement.
TEST(TopologyPlacementQuality, AtLeast95PercentOfTheExactOptimum) {
  std::mt19937 rng(5);
  Runner runner;
  int exact_total = 0;
  int copse_total = 0;
  int instances_below = 0;
  for (int instance = 0; instance < 200; ++instance) {
    const int racks = 1 + static_cast<int>(rng() % 8);
    const int num_gangs = 1 + static_cast<int>(rng() % 10);
    std::vector<SmallGang> gangs;
    for (int g = 0; g < num_gangs; ++g) {
      gangs.push_back({1 + static_cast<int>(rng() % 8), 1 << (rng() % 4)});
    }
    TopoCluster cluster;
    cluster.Build(1, 1, racks, 4,
                  {{"cpu", "64"}, {"memory", "256Gi"}, {"nvidia.com/gpu", "8"}, {"pods", "110"}});
    Snapshot& snapshot = cluster.Sync();
    int placed = 0;
    for (int g = 0; g < num_gangs; ++g) {
      const std::string name = "g" + std::to_string(g);
      GangSpec spec = Gang(name, gangs[g].pods);
      spec.topology_constraint.topology = "dc";
      spec.topology_constraint.required_level = "rack";
      auto members =
          Members(cluster.names, name, gangs[g].pods,
                  {{"cpu", "1"}, {"nvidia.com/gpu", std::to_string(gangs[g].gpu).c_str()}});
      TopologyGangPlacement p = runner.Place(snapshot, members, spec);
      if (!p.placement.satisfied) {
        EXPECT_TRUE(p.placement.placed.empty()) << "instance " << instance << " gang " << g;
        continue;
      }
      ++placed;
      std::set<std::string> used;
      for (const MemberPlacement& m : p.placement.placed)
        used.insert(cluster.LabelOf(m.node, kRack));
      EXPECT_EQ(used.size(), 1u) << "instance " << instance << " gang " << g;
      EXPECT_EQ(p.placement.placed.size(), static_cast<size_t>(gangs[g].pods));
    }
    ExpectWithinAllocatable(snapshot);
    const int exact = ExactMaxGangs(gangs, racks, 4, 8);
    EXPECT_LE(placed, exact) << "instance " << instance << ": more than the optimum is impossible";
    exact_total += exact;
    copse_total += placed;
    instances_below += placed < exact;
  }
  const double ratio = static_cast<double>(copse_total) / exact_total;
  std::cout << "[ quality ] copse placed " << copse_total << " gangs, the exact optimum "
            << exact_total << " (" << ratio * 100 << "%); below the optimum in " << instances_below
            << "/200 instances\n";
  RecordProperty("copse_gangs", copse_total);
  RecordProperty("exact_gangs", exact_total);
  EXPECT_GE(ratio, 0.95);
}

// Issue 5 fragmentation: 500 gangs of 4-64 GPUs (one GPU per pod), one after
// another, onto 512 nodes x 8 GPUs in racks of 16, each gang in one rack.
// Stranded GPUs: free GPUs in racks that cannot hold any of the gangs left
// waiting. copse (tightest rack first) strands fewer than first fit.
TEST(TopologyPlacementQuality, StrandsFewerGpusThanFirstFit) {
  constexpr int kRacks = 32;
  constexpr int kNodesPerRack = 16;
  constexpr int kGpus = 8;
  int64_t copse_stranded_total = 0;
  int64_t first_fit_stranded_total = 0;
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    std::mt19937 rng(seed);
    std::vector<int> sizes;
    for (int g = 0; g < 500; ++g) sizes.push_back(4 + static_cast<int>(rng() % 61));

    // First fit: the first rack (in order) with room, nodes filled in order.
    std::vector<int> free_ff(kRacks * kNodesPerRack, kGpus);
    std::vector<int> waiting_ff;
    for (int size : sizes) {
      bool placed = false;
      for (int r = 0; r < kRacks && !placed; ++r) {
        int room = 0;
        for (int n = 0; n < kNodesPerRack; ++n) room += free_ff[r * kNodesPerRack + n];
        if (room < size) continue;
        int left = size;
        for (int n = 0; n < kNodesPerRack && left > 0; ++n) {
          const int take = std::min(left, free_ff[r * kNodesPerRack + n]);
          free_ff[r * kNodesPerRack + n] -= take;
          left -= take;
        }
        placed = true;
      }
      if (!placed) waiting_ff.push_back(size);
    }

    // copse.
    TopoCluster cluster;
    cluster.Build(1, 1, kRacks, kNodesPerRack,
                  {{"cpu", "128"}, {"memory", "1Ti"}, {"nvidia.com/gpu", "8"}, {"pods", "110"}});
    Snapshot& snapshot = cluster.Sync();
    Runner runner;
    std::vector<int> waiting_copse;
    for (size_t g = 0; g < sizes.size(); ++g) {
      const std::string name = "g" + std::to_string(g);
      GangSpec spec = Gang(name, sizes[g]);
      spec.topology_constraint.topology = "dc";
      spec.topology_constraint.required_level = "rack";
      auto members =
          Members(cluster.names, name, sizes[g], {{"cpu", "100m"}, {"nvidia.com/gpu", "1"}});
      TopologyGangPlacement p = runner.Place(snapshot, members, spec);
      if (!p.placement.satisfied) {
        EXPECT_TRUE(p.placement.placed.empty());
        waiting_copse.push_back(sizes[g]);
      }
    }
    ExpectWithinAllocatable(snapshot);
    const ResourceId gpu = *cluster.names.Find("nvidia.com/gpu");
    std::map<std::string, int64_t> free_copse;
    for (NodeIndex n = 0; n < snapshot.num_nodes(); ++n) {
      free_copse[cluster.LabelOf(n, kRack)] +=
          snapshot.allocatable(gpu, n) - snapshot.requested(gpu, n);
    }

    auto stranded = [](const std::vector<int64_t>& rack_free, const std::vector<int>& waiting) {
      if (waiting.empty()) return int64_t{0};
      const int smallest = *std::min_element(waiting.begin(), waiting.end());
      int64_t total = 0;
      for (int64_t f : rack_free) total += f < smallest ? f : 0;
      return total;
    };
    std::vector<int64_t> racks_ff;
    for (int r = 0; r < kRacks; ++r) {
      int64_t f = 0;
      for (int n = 0; n < kNodesPerRack; ++n) f += free_ff[r * kNodesPerRack + n];
      racks_ff.push_back(f);
    }
    std::vector<int64_t> racks_copse;
    for (const auto& [rack, f] : free_copse) racks_copse.push_back(f);
    const int64_t s_copse = stranded(racks_copse, waiting_copse);
    const int64_t s_ff = stranded(racks_ff, waiting_ff);
    std::cout << "[ fragmentation ] seed " << seed << ": stranded GPUs copse " << s_copse
              << " (waiting " << waiting_copse.size() << "), first fit " << s_ff << " (waiting "
              << waiting_ff.size() << ")\n";
    copse_stranded_total += s_copse;
    first_fit_stranded_total += s_ff;
  }
  RecordProperty("copse_stranded_gpus", static_cast<int>(copse_stranded_total));
  RecordProperty("first_fit_stranded_gpus", static_cast<int>(first_fit_stranded_total));
  EXPECT_LT(copse_stranded_total, first_fit_stranded_total);
}

// Issue 21: the instances (8-16 nodes x 8 GPUs spread evenly over
// 4-8 racks; 6-12 gangs of 2-8 pods x 1-8 GPUs, 40% requiring a rack; all
// submitted at once, in order), each gang placed as the scheduler does
// (PlaceGangWithTopology for rack gangs, PlaceGang for the others) with the
// default profile, against the exact optimum and first fit of the same
// instance (topology/gang_packing.h), and against kube's scoring alone
// (LeastAllocated + BalancedAllocation for every pod, no DomainPacking).
struct QualityTotals {
  int copse = 0;
  double ratio_sum = 0;
  int below_first_fit = 0;
  int steered_failures = 0;  // planned gangs whose planned nodes did not hold
};

// How the gangs of an instance are run: in submission order, in GangBurst's
// order, or GangBurst with a BurstPlan (planned gangs first, each on its
// planned nodes, as WorkloadCycle::Run does with `steer`).
enum class QualityMode { kSubmission, kBurstOrder, kBurstPlan };

QualityTotals PlaceQualityInstances(const std::function<void(plugins::Profile&)>& configure,
                                    int instances, int& optimum_total, int& first_fit_total,
                                    double& first_fit_ratio_sum,
                                    QualityMode mode = QualityMode::kSubmission) {
  QualityTotals totals;
  optimum_total = 0;
  first_fit_total = 0;
  first_fit_ratio_sum = 0;
  std::mt19937 rng(21);
  auto uniform = [&](int lo, int hi) { return lo + static_cast<int>(rng() % (hi - lo + 1)); };
  plugins::Registry registry;
  EXPECT_TRUE(plugins::RegisterDefaultPlugins(registry).ok());
  plugins::Profile profile = plugins::DefaultProfile();
  configure(profile);
  auto fw = plugins::Framework::Create(registry, profile);
  EXPECT_TRUE(fw.ok()) << (fw.ok() ? "" : fw.error().message);
  if (!fw.ok()) return totals;
  for (int instance = 0; instance < instances; ++instance) {
    const int num_nodes = uniform(8, 16);
    const int racks = uniform(4, 8);
    std::vector<topology::PackingNode> model;
    TopoCluster cluster;
    for (int k = 0; k < num_nodes; ++k) {
      const int rack = k * racks / num_nodes;
      model.push_back({rack, 8});
      cluster.AddNode(
          "n-" + std::to_string(k),
          {{"cpu", "64"}, {"memory", "512Gi"}, {"nvidia.com/gpu", "8"}, {"pods", "110"}},
          {{kZone, "zone-1"}, {kBlock, "block-1"}, {kRack, "rack-" + std::to_string(rack)}});
    }
    std::vector<topology::PackingGang> gangs;
    const int num_gangs = uniform(6, 12);
    for (int g = 0; g < num_gangs; ++g) {
      const int pods = uniform(2, 8);
      const int gpus = uniform(1, 8);
      gangs.push_back({pods, gpus, uniform(1, 100) <= 40});
    }
    Snapshot& snapshot = cluster.Sync();
    TopologyCatalog catalog;
    catalog.Set("dc", topology::TopologyLevels::Default());
    TopologyWorkspace trees;
    TopologyPlacementOptions options;
    options.workspace = &trees;
    plugins::Workspace workspace;
    FixedRandom random{0};
    int placed = 0;
    std::vector<GangSpec> specs;
    std::vector<std::vector<PodPtr>> all_members;
    std::vector<BurstGang> burst;
    for (size_t g = 0; g < gangs.size(); ++g) {
      const std::string name = "g" + std::to_string(g);
      specs.push_back(Gang(name, gangs[g].pods));
      if (gangs[g].rack_required) {
        specs.back().topology_constraint.topology = "dc";
        specs.back().topology_constraint.required_level = "rack";
      }
      const std::string gpu = std::to_string(gangs[g].per_pod);
      all_members.push_back(
          Members(cluster.names, name, gangs[g].pods,
                  {{"cpu", "1"}, {"memory", "1Gi"}, {"nvidia.com/gpu", gpu.c_str()}}));
      burst.push_back(DescribeBurstGang(name, &specs.back(), all_members.back()));
    }
    // Submission order, or the order the scheduler's gang burst runs them in.
    std::vector<size_t> order(gangs.size());
    std::iota(order.begin(), order.end(), size_t{0});
    GangBurst burst_orderer(GangBurstOptions{std::chrono::milliseconds(100), 3, 64});
    BurstPlan plan;
    if (mode == QualityMode::kBurstPlan) {
      std::vector<BurstPlanGang> planned(gangs.size());
      for (size_t g = 0; g < gangs.size(); ++g) {
        planned[g].spec = &specs[g];
        planned[g].members = all_members[g];
      }
      BurstPlanOptions plan_options;
      // Exact here: a budget no run reaches (30 s ran out under ASan), so
      // `proven` depends on the search, not on the machine's speed.
      plan_options.budget = std::chrono::hours(24);
      plan = PlanBurst(snapshot, catalog, planned, plan_options);
      EXPECT_TRUE(plan.planned) << "instance " << instance << ": " << plan.reason;
      EXPECT_TRUE(plan.proven) << "instance " << instance;
    }
    if (mode != QualityMode::kSubmission) {
      order = burst_orderer.Order(
          burst, plan.planned ? std::span<const uint8_t>(plan.place) : std::span<const uint8_t>());
    }
    for (size_t g : order) {
      const GangSpec& spec = specs[g];
      const std::vector<PodPtr>& members = all_members[g];
      GangPlacement p;
      if (plan.planned && plan.place[g]) {
        GangPlacementOptions po;
        po.required = members.size();
        p = PlaceGangOnNodes(**fw, snapshot, members, plan.nodes[g], po, random, workspace);
        if (!p.satisfied) {
          ++totals.steered_failures;
          for (const MemberPlacement& m : p.placed) snapshot.RemovePod(m.node, m.pod->uid);
        }
      }
      if (p.satisfied) {
        // Steered to the plan's nodes.
      } else if (gangs[g].rack_required) {
        p = PlaceGangWithTopology(**fw, snapshot, members, spec, catalog, options, random,
                                  workspace)
                .placement;
      } else {
        GangPlacementOptions po;
        po.required = members.size();
        p = PlaceGang(**fw, snapshot, members, po, random, workspace);
      }
      if (!p.satisfied) {
        // All or nothing: the scheduler drops the attempt's edits.
        for (const MemberPlacement& m : p.placed) snapshot.RemovePod(m.node, m.pod->uid);
        continue;
      }
      ++placed;
      EXPECT_EQ(p.placed.size(), members.size()) << "instance " << instance << " gang " << g;
      if (gangs[g].rack_required) {
        std::set<std::string> used;
        for (const MemberPlacement& m : p.placed) used.insert(cluster.LabelOf(m.node, kRack));
        EXPECT_EQ(used.size(), 1u) << "instance " << instance << " gang " << g;
      }
    }
    ExpectWithinAllocatable(snapshot);
    const topology::PackingResult opt = topology::OptimalGangs(model, gangs);
    const topology::PackingResult ff = topology::FirstFitGangs(model, gangs);
    EXPECT_TRUE(opt.proven) << "instance " << instance;
    EXPECT_LE(placed, opt.gangs) << "instance " << instance << ": more than the optimum";
    optimum_total += opt.gangs;
    first_fit_total += ff.gangs;
    totals.copse += placed;
    totals.ratio_sum += opt.gangs > 0 ? static_cast<double>(placed) / opt.gangs : 1.0;
    first_fit_ratio_sum += opt.gangs > 0 ? static_cast<double>(ff.gangs) / opt.gangs : 1.0;
    totals.below_first_fit += placed < ff.gangs;
  }
  return totals;
}

TEST(TopologyPlacementQuality, AcceleratorAwareDefaultsAgainstOptimumAndFirstFit) {
  constexpr int kInstances = 200;
  int optimum = 0, first_fit = 0;
  double ff_ratio = 0;
  const QualityTotals aware =
      PlaceQualityInstances([](plugins::Profile&) {}, kInstances, optimum, first_fit, ff_ratio);
  const QualityTotals kube = PlaceQualityInstances(
      [](plugins::Profile& profile) {
        plugins::FitArgs fit;
        fit.accelerator_strategy.enabled = false;
        profile.plugin_args[std::string(plugins::kNodeResourcesFitName)] = fit;
        plugins::BalancedAllocationArgs balanced;
        balanced.skip_accelerator_pods = false;
        profile.plugin_args[std::string(plugins::kBalancedAllocationName)] = balanced;
        profile.plugins.score.disabled.push_back(std::string(plugins::kDomainPackingName));
      },
      kInstances, optimum, first_fit, ff_ratio);
  std::cout << "[ quality ] optimum " << optimum << " gangs; accelerator-aware copse "
            << aware.copse << " (mean ratio " << aware.ratio_sum / kInstances
            << ", below first fit on " << aware.below_first_fit << "); kube scoring " << kube.copse
            << " (mean ratio " << kube.ratio_sum / kInstances << ", below first fit on "
            << kube.below_first_fit << "); first fit " << first_fit << " (mean ratio "
            << ff_ratio / kInstances << ")\n";
  RecordProperty("optimum_gangs", optimum);
  RecordProperty("copse_gangs", aware.copse);
  RecordProperty("kube_scoring_gangs", kube.copse);
  RecordProperty("first_fit_gangs", first_fit);
  // Packing accelerators places more gangs than kube's spreading, and at
  // least as many as first fit.
  EXPECT_GT(aware.copse, kube.copse);
  EXPECT_GE(aware.ratio_sum, ff_ratio);
}

// Item 3 of issue 21: the same instances with the gangs of the burst run in
// GangBurst's order (rack gangs first, smallest demand first) instead of
// submission order place more gangs, more than first fit, and at least 95%
// of the optimum's on average.
TEST(TopologyPlacementQuality, BurstOrderPlacesMoreThanSubmissionOrder) {
  constexpr int kInstances = 200;
  int optimum = 0, first_fit = 0;
  double ff_ratio = 0;
  const QualityTotals fifo =
      PlaceQualityInstances([](plugins::Profile&) {}, kInstances, optimum, first_fit, ff_ratio);
  const QualityTotals burst = PlaceQualityInstances([](plugins::Profile&) {}, kInstances, optimum,
                                                    first_fit, ff_ratio, QualityMode::kBurstOrder);
  std::cout << "[ quality ] optimum " << optimum << " gangs; submission order " << fifo.copse
            << " (mean ratio " << fifo.ratio_sum / kInstances << ", below first fit on "
            << fifo.below_first_fit << "); burst order " << burst.copse << " (mean ratio "
            << burst.ratio_sum / kInstances << ", below first fit on " << burst.below_first_fit
            << "); first fit " << first_fit << " (mean ratio " << ff_ratio / kInstances << ")\n";
  RecordProperty("burst_order_gangs", burst.copse);
  RecordProperty("submission_order_gangs", fifo.copse);
  EXPECT_GT(burst.copse, fifo.copse);
  EXPECT_GT(burst.copse, first_fit);
  // The target: at least 95% of the optimum's gangs on average.
  EXPECT_GE(burst.ratio_sum / kInstances, 0.95);
}

// Issue 21's second target, which GangBurst's order alone misses on a few
// instances (a gang whose pods scoring spreads strands what later gangs
// needed): with a BurstPlan (the exact optimum of the burst on the free
// capacity, each planned gang steered to its planned nodes through the
// Filter plugins) copse places at least as many gangs as first fit on EVERY
// instance, the optimum's on every instance here (the model is exact for
// them: GPUs are the only scarce resource), with the invariants held
// (nothing over allocatable, gangs whole, rack gangs in one rack; checked in
// PlaceQualityInstances).
TEST(TopologyPlacementQuality, BurstPlanReachesTheOptimumAndNeverFallsBelowFirstFit) {
  constexpr int kInstances = 200;
  int optimum = 0, first_fit = 0;
  double ff_ratio = 0;
  const QualityTotals order = PlaceQualityInstances([](plugins::Profile&) {}, kInstances, optimum,
                                                    first_fit, ff_ratio, QualityMode::kBurstOrder);
  const QualityTotals plan = PlaceQualityInstances([](plugins::Profile&) {}, kInstances, optimum,
                                                   first_fit, ff_ratio, QualityMode::kBurstPlan);
  std::cout << "[ quality ] optimum " << optimum << " gangs; burst order " << order.copse
            << " (mean ratio " << order.ratio_sum / kInstances << ", below first fit on "
            << order.below_first_fit << "); burst plan " << plan.copse << " (mean ratio "
            << plan.ratio_sum / kInstances << ", below first fit on " << plan.below_first_fit
            << ", steering failed for " << plan.steered_failures << " gangs); first fit "
            << first_fit << " (mean ratio " << ff_ratio / kInstances << ")\n";
  RecordProperty("burst_plan_gangs", plan.copse);
  EXPECT_EQ(plan.below_first_fit, 0);
  EXPECT_EQ(plan.steered_failures, 0);
  EXPECT_EQ(plan.copse, optimum);
  EXPECT_GE(plan.ratio_sum / kInstances, 0.95);
}

}  // namespace topology_placement_test
}  // namespace copse::scheduler

namespace copse::scheduler {
namespace topology_placement_test {

// Gang preemption inside candidate domains: with the topology callback the
// victims are found in one rack and the gang is placed there whole.
TEST(TopologyPlacement, GangPreemptionFindsVictimsInsideOneRack) {
  TopoCluster cluster;
  cluster.Build(1, 1, 2, 2, {{"cpu", "4"}, {"pods", "110"}});
  // Every node runs a 3-cpu low-priority pod: 1 cpu free per node, 4 in all.
  int i = 0;
  for (const char* node : {"n-1-1-1-1", "n-1-1-1-2", "n-1-1-2-1", "n-1-1-2-2"}) {
    cluster.node(node).AddPod(PodBuilder("low-" + std::to_string(i++))
                                  .Requests(cluster.names, {{"cpu", "3"}})
                                  .Priority(0)
                                  .NodeName(node)
                                  .Obj());
  }
  Snapshot& snapshot = cluster.Sync();
  Runner runner;
  GangSpec spec = Gang("g", 4);
  spec.topology_constraint.topology = "dc";
  spec.topology_constraint.required_level = "rack";
  std::vector<PodPtr> members;
  for (int m = 0; m < 4; ++m) {
    PodBuilder b("g-" + std::to_string(m));
    b.Requests(cluster.names, {{"cpu", "2"}}).Priority(100);
    b.raw().group_kind = PodInfo::GroupKind::kCopsePodGroup;
    b.raw().pod_group = "g";
    members.push_back(b.Obj());
  }
  TopologyGangPlacement direct = runner.Place(snapshot, members, spec);
  ASSERT_FALSE(direct.placement.satisfied);

  GangPlacementOptions po;
  GangPlaceFn place = [&](Snapshot& scratch, std::span<const PodPtr> group) {
    return PlaceGangWithTopology(*runner.fw, scratch, group, spec, runner.catalog, runner.options,
                                 runner.random, runner.workspace)
        .placement;
  };
  const GangTracker gangs;
  const VictimRules rules(snapshot, gangs, 100);
  GangPreemption gp = SelectGangVictims(*runner.fw, snapshot, members, po, rules, runner.random,
                                        runner.workspace, place);
  ASSERT_TRUE(gp.found) << gp.message;
  ASSERT_EQ(gp.victims.size(), 2u);
  ASSERT_EQ(gp.placement.size(), 4u);
  std::set<std::string> racks;
  for (const MemberPlacement& m : gp.placement) racks.insert(cluster.LabelOf(m.node, kRack));
  ASSERT_EQ(racks.size(), 1u);
  for (const PodRef& victim : gp.victims) {
    EXPECT_EQ(cluster.LabelOf(*snapshot.FindNode(victim->node_name), kRack), *racks.begin())
        << victim->name << " is outside the gang's rack";
  }
  // Nothing was actuated: the snapshot still holds every low-priority pod.
  for (NodeIndex n = 0; n < snapshot.num_nodes(); ++n) EXPECT_EQ(snapshot.pod_count(n), 1u);
}

}  // namespace topology_placement_test
}  // namespace copse::scheduler

namespace copse::scheduler {
namespace topology_placement_test {

// The optimistic first pass ranks racks on free capacity alone: the tightest
// rack here is tainted, so that pass fails there and the full search (with
// Filter masks) takes the other rack. With every rack tainted the message
// gives the Filter verdicts.
TEST(TopologyPlacement, OptimisticPassFallsBackToFilterMasks) {
  for (const bool optimistic : {true, false}) {
    TopoCluster cluster;
    cluster.Build(1, 1, 1, 2, {{"cpu", "4"}, {"pods", "110"}});  // rack-1-1-1: 8 cpu
    for (int n = 1; n <= 4; ++n) {
      cluster.AddNode("big-" + std::to_string(n), {{"cpu", "4"}, {"pods", "110"}},
                      {{kZone, "zone-1"}, {kBlock, "block-1-1"}, {kRack, "rack-big"}});
    }
    cluster.node("n-1-1-1-1").SetTaints({Taint{"dedicated", "x", TaintEffect::kNoSchedule}});
    cluster.node("n-1-1-1-2").SetTaints({Taint{"dedicated", "x", TaintEffect::kNoSchedule}});
    Snapshot& snapshot = cluster.Sync();
    Runner runner;
    runner.options.optimistic = optimistic;
    GangSpec spec = Gang("g", 6);
    spec.topology_constraint.topology = "dc";
    spec.topology_constraint.required_level = "rack";
    auto members = Members(cluster.names, "g", 6, {{"cpu", "1"}});
    TopologyGangPlacement p = runner.Place(snapshot, members, spec);
    ASSERT_TRUE(p.placement.satisfied) << optimistic << ": " << p.placement.failure;
    EXPECT_EQ(p.domain, "rack rack-big") << optimistic;

    // 12 more cpu: rack-big has 10 left, rack-1-1-1 is tainted.
    auto more = Members(cluster.names, "h", 12, {{"cpu", "1"}});
    GangSpec h = Gang("h", 12);
    h.topology_constraint = spec.topology_constraint;
    TopologyGangPlacement q = runner.Place(snapshot, more, h);
    EXPECT_FALSE(q.placement.satisfied);
    EXPECT_EQ(q.placement.failure, "best rack rack-big fits 10/12 pods: 2 Insufficient cpu")
        << optimistic;
    // Only tainted nodes could hold 8 pods of 1 cpu.
    auto eight = Members(cluster.names, "k", 8, {{"cpu", "100m"}});
    GangSpec k = Gang("k", 8);
    k.topology_constraint = spec.topology_constraint;
    cluster.snapshot();  // (no resync: rack-big keeps its 6 pods)
    TopologyGangPlacement r = runner.Place(snapshot, eight, k);
    ASSERT_TRUE(r.placement.satisfied) << r.placement.failure;
    EXPECT_EQ(r.domain, "rack rack-big") << "the tainted rack is never used";
    ExpectWithinAllocatable(snapshot);
  }
}

TEST(TopologyPlacement, FilterVerdictsExplainATaintedRack) {
  TopoCluster cluster;
  cluster.Build(1, 1, 1, 2, {{"cpu", "4"}, {"pods", "110"}});
  for (const char* n : {"n-1-1-1-1", "n-1-1-1-2"}) {
    cluster.node(n).SetTaints({Taint{"dedicated", "x", TaintEffect::kNoSchedule}});
  }
  Snapshot& snapshot = cluster.Sync();
  Runner runner;
  GangSpec spec = Gang("g", 2);
  spec.topology_constraint.topology = "dc";
  spec.topology_constraint.required_level = "rack";
  auto members = Members(cluster.names, "g", 2, {{"cpu", "1"}});
  TopologyGangPlacement p = runner.Place(snapshot, members, spec);
  EXPECT_FALSE(p.placement.satisfied);
  EXPECT_EQ(p.placement.failure,
            "best rack rack-1-1-1 fits 0/2 pods: 2 blocked by Filter (2 node(s) had untolerated "
            "taint {dedicated: x})")
      << p.placement.failure;
}

}  // namespace topology_placement_test
}  // namespace copse::scheduler

namespace copse::scheduler {
namespace topology_placement_test {

// A basic (non-gang) v1alpha2 group with a topologyKey: no all-or-nothing,
// its pods go to the one rack that holds most of them.
TEST(TopologyPlacement, BasicGroupFillsTheRackHoldingMost) {
  TopoCluster cluster;
  cluster.Build(1, 1, 2, 1, {{"cpu", "5"}, {"pods", "110"}});
  cluster.node("n-1-1-1-1")
      .AddPod(
          PodBuilder("old").Requests(cluster.names, {{"cpu", "2"}}).NodeName("n-1-1-1-1").Obj());
  Snapshot& snapshot = cluster.Sync();
  Runner runner;
  GangSpec spec = Gang("b", 0);
  spec.source = GangSource::kWorkloadPodGroup;
  spec.policy = GangPolicy::kBasic;
  spec.topology_constraint.required_level = kRack;
  auto members = Members(cluster.names, "b", 6, {{"cpu", "1"}});
  TopologyGangPlacement p = runner.Place(snapshot, members, spec);
  EXPECT_TRUE(p.placement.satisfied) << p.placement.failure;
  EXPECT_EQ(p.placement.placed.size(), 5u);
  EXPECT_EQ(p.placement.unplaced.size(), 1u);
  for (const MemberPlacement& m : p.placement.placed)
    EXPECT_EQ(cluster.LabelOf(m.node, kRack), "rack-1-1-2");
}

}  // namespace topology_placement_test
}  // namespace copse::scheduler

namespace copse::scheduler {
namespace topology_placement_test {

// Subgroups' pods differ in their subgroup label, so they are different pod
// classes; each class alone fits a block, all of them together do not: the
// message counts what the block holds together.
TEST(TopologyPlacement, ShortfallCountsClassesTogether) {
  TopoCluster cluster;
  cluster.Build(2, 2, 2, 2, {{"cpu", "4"}, {"pods", "110"}});  // 16 cpu per block
  Snapshot& snapshot = cluster.Sync();
  Runner runner;
  GangSpec spec = Gang("prefill", 24);
  spec.topology_constraint.topology = "dc";
  spec.topology_constraint.required_level = "block";
  spec.min_sub_group = 3;
  std::vector<PodPtr> members;
  for (int r = 0; r < 4; ++r) {
    const std::string name = "prefill-" + std::to_string(r);
    spec.sub_groups.push_back(Sub(name, 8, "", std::nullopt, "rack"));
    for (const PodPtr& p : Members(cluster.names, "prefill", 8, {{"cpu", "1"}}, name)) {
      members.push_back(p);
    }
  }
  TopologyGangPlacement p = runner.Place(snapshot, members, spec);
  EXPECT_FALSE(p.placement.satisfied);
  EXPECT_EQ(p.placement.failure, "best block block-1-1 fits 16/24 pods: 8 Insufficient cpu");
}

}  // namespace topology_placement_test
}  // namespace copse::scheduler

namespace copse::scheduler {
namespace topology_placement_test {

// BurstPlan (scheduler/burst_plan.h): bursts the model cannot describe get
// no plan and a reason; a plan's nodes are checked by the Filter plugins.
TEST(BurstPlan, DeclinesWhatTheModelCannotDescribe) {
  TopoCluster cluster;
  cluster.Build(1, 1, 2, 2, {{"cpu", "64"}, {"nvidia.com/gpu", "8"}, {"pods", "110"}});
  Snapshot& snapshot = cluster.Sync();
  TopologyCatalog catalog;
  catalog.Set("dc", topology::TopologyLevels::Default());
  const GangSpec plain = Gang("a", 2);
  const std::vector<PodPtr> gpus = Members(cluster.names, "a", 2, {{"nvidia.com/gpu", "4"}});
  BurstPlanOptions options;
  auto plan = [&](std::vector<BurstPlanGang> gangs) {
    return PlanBurst(snapshot, catalog, gangs, options);
  };
  const BurstPlan ok = plan({{&plain, gpus, 0}});
  ASSERT_TRUE(ok.planned) << ok.reason;
  ASSERT_EQ(ok.place, std::vector<uint8_t>{1});
  // Two 4-GPU pods fill one node (nothing else was asked).
  EXPECT_EQ(ok.nodes[0].size(), 1u);

  GangSpec with_sub_group = Gang("b", 2);
  with_sub_group.sub_groups.push_back(Sub("s", 2));
  EXPECT_THAT(plan({{&with_sub_group, gpus, 0}}).reason, ::testing::HasSubstr("not a plain gang"));
  EXPECT_THAT(plan({{&plain, gpus, 1}}).reason, ::testing::HasSubstr("bound or in flight"));
  const std::vector<PodPtr> cpu_only = Members(cluster.names, "c", 2, {{"cpu", "1"}});
  EXPECT_THAT(plan({{&plain, cpu_only, 0}}).reason,
              ::testing::HasSubstr("not exactly one extended resource"));
  const std::vector<PodPtr> fpgas = Members(cluster.names, "d", 2, {{"example.com/fpga", "1"}});
  EXPECT_THAT(plan({{&plain, gpus, 0}, {&plain, fpgas, 0}}).reason,
              ::testing::HasSubstr("another resource"));
  GangSpec rack = Gang("e", 2);
  rack.topology_constraint.topology = "dc";
  rack.topology_constraint.required_level = "rack";
  GangSpec block = rack;
  block.topology_constraint.required_level = "block";
  EXPECT_TRUE(plan({{&rack, gpus, 0}, {&plain, gpus, 0}}).planned);
  EXPECT_THAT(plan({{&rack, gpus, 0}, {&block, gpus, 0}}).reason,
              ::testing::HasSubstr("another required level"));
  GangSpec unknown = rack;
  unknown.topology_constraint.topology = "nope";
  EXPECT_THAT(plan({{&unknown, gpus, 0}}).reason, ::testing::HasSubstr("not resolved"));
  options.budget = Clock::Duration::zero();
  EXPECT_FALSE(plan({{&plain, gpus, 0}}).planned);
}

TEST(BurstPlan, PlannedNodesStillPassTheFilterPlugins) {
  TopoCluster cluster;
  cluster.Build(1, 1, 2, 2, {{"cpu", "64"}, {"nvidia.com/gpu", "8"}, {"pods", "110"}});
  Snapshot& snapshot = cluster.Sync();
  Runner run;
  const GangSpec spec = Gang("a", 2);
  const std::vector<PodPtr> members = Members(cluster.names, "a", 2, {{"nvidia.com/gpu", "8"}});
  std::vector<BurstPlanGang> gangs = {{&spec, members, 0}};
  const BurstPlan plan = PlanBurst(snapshot, run.catalog, gangs, BurstPlanOptions{});
  ASSERT_TRUE(plan.planned) << plan.reason;
  ASSERT_EQ(plan.nodes[0].size(), 2u);
  // Something takes half of one planned node after the plan was made.
  const NodeIndex taken = *snapshot.FindNode(plan.nodes[0][1].node);
  snapshot.AddPod(taken, Members(cluster.names, "x", 1, {{"nvidia.com/gpu", "4"}}).front());
  GangPlacementOptions po;
  po.required = members.size();
  const GangPlacement p =
      PlaceGangOnNodes(*run.fw, snapshot, members, plan.nodes[0], po, run.random, run.workspace);
  EXPECT_FALSE(p.satisfied);
  EXPECT_EQ(p.placed.size(), 1u);
  EXPECT_EQ(p.unplaced.size(), 1u);
  EXPECT_THAT(p.failure, ::testing::HasSubstr("nvidia.com/gpu"));
  for (const MemberPlacement& m : p.placed) EXPECT_NE(m.node, taken);
  ExpectWithinAllocatable(snapshot);
}

}  // namespace topology_placement_test
}  // namespace copse::scheduler
