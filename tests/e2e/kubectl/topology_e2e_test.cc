// Topology-aware gang packing through the binary and kubectl (issue 5): on
// `copse local --topology zone=2,block=4,rack=8 --nodes 128` (2 nodes of 4 cpu
// per rack, so a rack holds eight 1-cpu pods) a copse Topology and copse
// PodGroups are applied with kubectl and the outcome is read back with
// kubectl, node labels included:
//   - `train`: required rack on the PodGroup, subgroups leader (1) + workers
//     (5): all six pods bound into one rack (the default scoring would spread
//     them over the 128 nodes), PodGroupScheduled=True, phase Running once Ready,
//     status.subGroups scheduled 1 and 5;
//   - `serve`: required block on the PodGroup, two replicas of 6 pods each
//     with a required rack: each replica in one rack, both in one block;
//   - `huge`: required rack, 10 pods of 1 cpu (a rack holds 8): nothing is
//     bound, PodGroupScheduled=False, phase Unschedulable, scheduled 0 per
//     subgroup, and the message names the best rack and the shortfall
//     ("best rack rack-1-1-1 fits 8/10 pods: 2 Insufficient cpu").

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/kubectl/harness.h"
#include "tests/e2e/kubectl/kubectl_json.h"

namespace copse::e2e {
namespace {

using json = nlohmann::json;

constexpr const char* kBlockLabel = "copse.dev/block";
constexpr const char* kRackLabel = "copse.dev/rack";

// 2 zones x 4 blocks x 8 racks = 64 racks of 2 nodes; 4 cpu per node.
const std::vector<std::string> kClusterFlags = {
    "--topology", "zone=2,block=4,rack=8", "--nodes", "128", "--node-shape", "cpu=4,memory=16Gi"};

const std::string kTopology = R"(apiVersion: scheduling.copse.dev/v1alpha1
kind: Topology
metadata:
  name: dc
spec:
  levels:
  - nodeLabel: topology.kubernetes.io/zone
  - nodeLabel: copse.dev/block
  - nodeLabel: copse.dev/rack
  - nodeLabel: kubernetes.io/hostname
)";

// A 1-cpu member pod of copse PodGroup `group`, leaf subgroup `sub_group`.
std::string PodYaml(const std::string& name, const std::string& group,
                    const std::string& sub_group) {
  return "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\n  namespace: default\n  labels:\n    app: " + group +
         "\n    scheduling.copse.dev/pod-group: " + group +
         "\n    scheduling.copse.dev/subgroup: " + sub_group +
         "\nspec:\n  schedulerName: copse-scheduler\n  containers:\n  - name: main\n"
         "    image: registry.k8s.io/pause:3.10\n    resources:\n      requests:\n"
         "        cpu: \"1\"\n        memory: 1Gi\n";
}

std::string Pods(const std::string& group, const std::string& sub_group, int count) {
  std::string out;
  for (int i = 0; i < count; ++i) {
    out += PodYaml(group + "-" + sub_group + "-" + std::to_string(i), group, sub_group);
  }
  return out;
}

struct PodPlace {
  std::string node;       // "" when unbound
  std::string sub_group;  // the scheduling.copse.dev/subgroup label
};

// Members of copse PodGroup `group`: pod name -> node and subgroup.
std::map<std::string, PodPlace> Members(LocalCluster& cluster, const std::string& group) {
  std::map<std::string, PodPlace> out;
  json list = GetJson(cluster, {"pods", "-l", "scheduling.copse.dev/pod-group=" + group});
  if (!list.is_object()) return out;
  for (const auto& pod : list["items"]) {
    PodPlace& place = out[pod["metadata"].value("name", "")];
    place.node = pod["spec"].value("nodeName", "");
    place.sub_group = pod["metadata"]["labels"].value("scheduling.copse.dev/subgroup", "");
  }
  return out;
}

bool AllBound(const std::map<std::string, PodPlace>& members, size_t want) {
  if (members.size() != want) return false;
  for (const auto& [name, place] : members) {
    if (place.node.empty()) return false;
  }
  return true;
}

// node name -> its value of `label`, read with kubectl.
std::map<std::string, std::string> NodeLabel(LocalCluster& cluster, const std::string& label) {
  std::map<std::string, std::string> out;
  json list = GetJson(cluster, {"nodes"});
  if (!list.is_object()) return out;
  for (const auto& node : list["items"]) {
    out[node["metadata"].value("name", "")] = node["metadata"]["labels"].value(label, "");
  }
  return out;
}

// status.subGroups as name -> scheduled.
std::map<std::string, int> SubGroupScheduled(const json& group) {
  std::map<std::string, int> out;
  if (!group.is_object() || !group.contains("status")) return out;
  for (const auto& entry : group["status"].value("subGroups", json::array())) {
    out[entry.value("name", "")] = entry.value("scheduled", -1);
  }
  return out;
}

TEST(TopologyE2E, RequiredRackAndBlockPackTheGangs) {
  ASSERT_TRUE(HaveKubectl()) << "kubectl not found: scripts/setup.sh installs it";
  LocalCluster cluster(kClusterFlags);
  ASSERT_TRUE(cluster.ready()) << cluster.startup_output();

  auto topology = cluster.Kubectl({"apply", "-f", "-"}, kTopology);
  ASSERT_EQ(topology.exit_code, 0) << topology.out;
  EXPECT_NE(topology.out.find("topology.scheduling.copse.dev/dc created"), std::string::npos)
      << topology.out;

  const std::string train = R"(apiVersion: scheduling.copse.dev/v1alpha1
kind: PodGroup
metadata:
  name: train
  namespace: default
spec:
  minMember: 6
  topologyConstraint:
    topology: dc
    requiredTopologyLevel: rack
  subGroups:
  - name: leader
    minMember: 1
  - name: workers
    minMember: 5
)" + Pods("train", "leader", 1) +
                            Pods("train", "workers", 5);
  const std::string serve = R"(apiVersion: scheduling.copse.dev/v1alpha1
kind: PodGroup
metadata:
  name: serve
  namespace: default
spec:
  minMember: 12
  topologyConstraint:
    topology: dc
    requiredTopologyLevel: copse.dev/block
  subGroups:
  - name: replica-0
    minMember: 6
    topologyConstraint:
      requiredTopologyLevel: rack
  - name: replica-1
    minMember: 6
    topologyConstraint:
      requiredTopologyLevel: rack
)" + Pods("serve", "replica-0", 6) +
                            Pods("serve", "replica-1", 6);
  auto applied = cluster.Kubectl({"apply", "-f", "-"}, train + "---\n" + serve);
  ASSERT_EQ(applied.exit_code, 0) << applied.out;
  EXPECT_NE(applied.out.find("podgroup.scheduling.copse.dev/train created"), std::string::npos)
      << applied.out;
  EXPECT_NE(applied.out.find("podgroup.scheduling.copse.dev/serve created"), std::string::npos)
      << applied.out;

  std::map<std::string, PodPlace> train_pods;
  ASSERT_TRUE(Eventually([&] {
    train_pods = Members(cluster, "train");
    return AllBound(train_pods, 6);
  })) << train_pods.size()
      << " train pods";
  std::map<std::string, PodPlace> serve_pods;
  ASSERT_TRUE(Eventually([&] {
    serve_pods = Members(cluster, "serve");
    return AllBound(serve_pods, 12);
  })) << serve_pods.size()
      << " serve pods";

  const auto rack_of = NodeLabel(cluster, kRackLabel);
  const auto block_of = NodeLabel(cluster, kBlockLabel);
  ASSERT_EQ(rack_of.size(), 128u);

  // train: one rack for all six, whatever their subgroup.
  std::set<std::string> train_racks;
  std::set<std::string> train_nodes;
  for (const auto& [name, place] : train_pods) {
    ASSERT_TRUE(rack_of.contains(place.node)) << name << " on " << place.node;
    train_racks.insert(rack_of.at(place.node));
    train_nodes.insert(place.node);
  }
  EXPECT_EQ(train_racks.size(), 1u) << "train spans racks";
  EXPECT_TRUE(train_racks.begin()->starts_with("rack-")) << *train_racks.begin();

  // serve: each replica in one rack, the two in one block.
  std::map<std::string, std::set<std::string>> racks_of_replica;
  std::set<std::string> serve_blocks;
  for (const auto& [name, place] : serve_pods) {
    ASSERT_TRUE(rack_of.contains(place.node)) << name << " on " << place.node;
    racks_of_replica[place.sub_group].insert(rack_of.at(place.node));
    serve_blocks.insert(block_of.at(place.node));
  }
  ASSERT_EQ(racks_of_replica.size(), 2u);
  for (const auto& [replica, racks] : racks_of_replica) {
    EXPECT_EQ(racks.size(), 1u) << replica << " spans racks";
  }
  // A rack holds 8 cpu: two replicas of 6 cannot share one.
  EXPECT_NE(*racks_of_replica["replica-0"].begin(), *racks_of_replica["replica-1"].begin());
  EXPECT_EQ(serve_blocks.size(), 1u) << "serve spans blocks";

  // Status: PodGroupScheduled=True, scheduled per subgroup, then phase Running.
  json group;
  ASSERT_TRUE(Eventually([&] {
    group = GetJson(cluster, {"podgroups.scheduling.copse.dev", "train"});
    const auto by_sub_group = SubGroupScheduled(group);
    return Condition(group, "PodGroupScheduled").value("status", "") == "True" &&
           by_sub_group.size() == 2 && by_sub_group.at("leader") == 1 &&
           by_sub_group.at("workers") == 5;
  })) << group.dump(2);
  EXPECT_EQ(group["status"].value("scheduled", 0), 6) << group.dump(2);
  // The node simulator makes the members Ready: the gang runs.
  ASSERT_TRUE(Eventually([&] {
    group = GetJson(cluster, {"podgroups.scheduling.copse.dev", "train"});
    return group["status"].value("phase", "") == "Running" &&
           group["status"].value("ready", 0) == 6;
  })) << group.dump(2);
  ASSERT_TRUE(Eventually([&] {
    group = GetJson(cluster, {"podgroups.scheduling.copse.dev", "serve"});
    const auto by_sub_group = SubGroupScheduled(group);
    return Condition(group, "PodGroupScheduled").value("status", "") == "True" &&
           by_sub_group.size() == 2 && by_sub_group.at("replica-0") == 6 &&
           by_sub_group.at("replica-1") == 6;
  })) << group.dump(2);
  EXPECT_EQ(group["status"].value("scheduled", 0), 12) << group.dump(2);
}

TEST(TopologyE2E, GangLargerThanAnyRackWaitsWithTheBestRacksShortfall) {
  ASSERT_TRUE(HaveKubectl()) << "kubectl not found: scripts/setup.sh installs it";
  LocalCluster cluster(kClusterFlags);
  ASSERT_TRUE(cluster.ready()) << cluster.startup_output();

  auto topology = cluster.Kubectl({"apply", "-f", "-"}, kTopology);
  ASSERT_EQ(topology.exit_code, 0) << topology.out;
  const std::string huge = R"(apiVersion: scheduling.copse.dev/v1alpha1
kind: PodGroup
metadata:
  name: huge
  namespace: default
spec:
  minMember: 10
  topologyConstraint:
    topology: dc
    requiredTopologyLevel: rack
  subGroups:
  - name: a
    minMember: 5
  - name: b
    minMember: 5
)" + Pods("huge", "a", 5) + Pods("huge", "b", 5);
  auto applied = cluster.Kubectl({"apply", "-f", "-"}, huge);
  ASSERT_EQ(applied.exit_code, 0) << applied.out;

  // Only the shortfall message is waited for (a Topology not yet seen by the
  // scheduler gives a different, transient message).
  json group;
  ASSERT_TRUE(Eventually([&] {
    group = GetJson(cluster, {"podgroups.scheduling.copse.dev", "huge"});
    const json c = Condition(group, "PodGroupScheduled");
    return c.value("status", "") == "False" &&
           c.value("message", "").find("best rack") != std::string::npos;
  })) << group.dump(2);
  const json condition = Condition(group, "PodGroupScheduled");
  EXPECT_EQ(condition.value("reason", ""), "Unschedulable");
  const std::string message = condition.value("message", "");
  // Every rack is empty and holds 8 of the 10: the tie goes to the first name.
  EXPECT_NE(message.find("best rack rack-1-1-1 fits 8/10 pods: 2 Insufficient cpu"),
            std::string::npos)
      << message;
  EXPECT_TRUE(message.starts_with("pod group default/huge: ")) << message;
  EXPECT_EQ(group["status"].value("phase", ""), "Unschedulable") << group.dump(2);
  EXPECT_EQ(group["status"].value("scheduled", -1), 0) << group.dump(2);
  const auto by_sub_group = SubGroupScheduled(group);
  EXPECT_EQ(by_sub_group, (std::map<std::string, int>{{"a", 0}, {"b", 0}})) << group.dump(2);
  // The rack the message names is a real one.
  bool named_rack_exists = false;
  for (const auto& [node, rack] : NodeLabel(cluster, kRackLabel)) {
    named_rack_exists |= rack == "rack-1-1-1";
  }
  EXPECT_TRUE(named_rack_exists);

  // Every member was told why it waits, and none is bound.
  json pods;
  ASSERT_TRUE(Eventually([&] {
    pods = GetJson(cluster, {"pods", "-l", "scheduling.copse.dev/pod-group=huge"});
    if (!pods.is_object() || pods["items"].size() != 10) return false;
    for (const auto& pod : pods["items"]) {
      if (Condition(pod, "PodScheduled").value("status", "") != "False") return false;
    }
    return true;
  })) << pods.dump(2);
  for (const auto& pod : pods["items"]) {
    EXPECT_EQ(pod["spec"].value("nodeName", ""), "") << pod["metadata"].value("name", "");
    EXPECT_NE(Condition(pod, "PodScheduled").value("message", "").find("best rack"),
              std::string::npos)
        << pod.dump(2);
  }
  for (const auto& [name, place] : Members(cluster, "huge")) {
    EXPECT_EQ(place.node, "") << name;
  }
}

}  // namespace
}  // namespace copse::e2e
