// Elastic Grove gangs through the binary and kubectl (issue 15, item 7): a
// PodCliqueScalingGroup with replicas 3 and minAvailable 1, each replica two
// workers of 4 GPUs (one 8-GPU node), on `copse local` with room for one
// replica. Grove's semantics (upstream's "base PodGang" and "scaled
// PodGangs"): replicas below minAvailable are the base gang, which must be
// placed whole; each replica above it is a scaled gang of its own, tried
// once the base gang is scheduled. So the copse PodGroup of the base gang
// requires exactly minAvailable replicas (here one: minSubGroup 1), the
// other replicas are copse PodGroups of their own, the gang starts when
// only one replica fits, and the other replicas are placed as room appears,
// each whole.

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/e2e/kubectl/harness.h"
#include "tests/e2e/kubectl/kubectl_json.h"

namespace copse::e2e {
namespace {

using json = nlohmann::json;

const std::string kCopsePodGroups = "podgroups.scheduling.copse.dev";
const std::string kPodGangs = "podgangs.scheduler.grove.io";

const char kElastic[] = R"(apiVersion: grove.io/v1alpha1
kind: PodCliqueSet
metadata:
  name: elastic
  namespace: default
spec:
  replicas: 1
  template:
    cliques:
    - name: worker
      spec:
        roleName: worker
        replicas: 2
        podSpec:
          containers:
          - name: worker
            image: registry.k8s.io/pause:3.10
            resources:
              requests:
                cpu: "1"
                nvidia.com/gpu: "4"
              limits:
                nvidia.com/gpu: "4"
    podCliqueScalingGroups:
    - name: sg
      cliqueNames: [worker]
      replicas: 3
      minAvailable: 1
)";

json Items(const json& list) {
  if (!list.is_object() || !list.contains("items")) return json::array();
  return list["items"];
}

std::set<std::string> Names(const json& list) {
  std::set<std::string> out;
  for (const auto& item : Items(list)) out.insert(item["metadata"].value("name", ""));
  return out;
}

// Bound pods of the PodCliqueSet per PodGang (label grove.io/podgang), and
// the nodes each gang's pods are on.
struct Placement {
  std::map<std::string, int> bound;
  std::map<std::string, std::set<std::string>> nodes;
  int pods = 0;
};

Placement Place(LocalCluster& cluster) {
  Placement out;
  for (const auto& pod :
       Items(GetJson(cluster, {"pods", "-l", "app.kubernetes.io/part-of=elastic"}))) {
    ++out.pods;
    const std::string node = pod["spec"].value("nodeName", "");
    const std::string gang = pod["metadata"]["labels"].value("grove.io/podgang", "");
    if (node.empty()) continue;
    ++out.bound[gang];
    out.nodes[gang].insert(node);
  }
  return out;
}

bool Scheduled(LocalCluster& cluster, const std::string& group) {
  return Condition(GetJson(cluster, {kCopsePodGroups, group}), "PodGroupScheduled")
             .value("status", "") == "True";
}

void Kubectl(LocalCluster& cluster, const std::vector<std::string>& argv) {
  auto r = cluster.Kubectl(argv);
  ASSERT_EQ(r.exit_code, 0) << r.out;
}

TEST(GroveElasticE2E, ScalingGroupStartsWithMinAvailableReplicasAndGrowsAsRoomAppears) {
  ASSERT_TRUE(HaveKubectl()) << "kubectl not found: scripts/setup.sh installs it";
  LocalCluster cluster({"--nodes", "4", "--node-shape", "cpu=16,memory=64Gi,nvidia.com/gpu=8"});
  ASSERT_TRUE(cluster.ready()) << cluster.startup_output();
  // Room for one replica (two 4-GPU workers on one 8-GPU node).
  Kubectl(cluster, {"cordon", "node-2", "node-3", "node-4"});
  Kubectl(cluster, {"apply", "-f", cluster.WriteFile("elastic.yaml", kElastic)});

  // The base gang holds replica 0 only, and requires it; replicas 1 and 2
  // are scaled gangs, each its own copse PodGroup.
  const std::set<std::string> gangs = {"elastic-0", "elastic-0-sg-0", "elastic-0-sg-1"};
  ASSERT_TRUE(Eventually([&] {
    return Names(GetJson(cluster, {kPodGangs})) == gangs &&
           Names(GetJson(cluster, {kCopsePodGroups})) == gangs;
  })) << GetJson(cluster, {kCopsePodGroups}).dump(2);
  const json base = GetJson(cluster, {kCopsePodGroups, "elastic-0"});
  EXPECT_EQ(base["spec"].value("minMember", 0), 2) << base.dump(2);
  EXPECT_EQ(base["spec"].value("minSubGroup", 0), 1) << base.dump(2);
  std::set<std::string> base_subgroups;
  for (const auto& sg : base["spec"]["subGroups"]) base_subgroups.insert(sg.value("name", ""));
  EXPECT_EQ(base_subgroups, (std::set<std::string>{"elastic-0-sg-0", "elastic-0-sg-0-worker"}));
  for (const char* scaled : {"elastic-0-sg-0", "elastic-0-sg-1"}) {
    const json group = GetJson(cluster, {kCopsePodGroups, scaled});
    EXPECT_EQ(group["spec"].value("minMember", 0), 2) << group.dump(2);
  }

  // Only one replica fits: the gang starts with it, on the one node.
  Placement placed;
  ASSERT_TRUE(Eventually([&] {
    placed = Place(cluster);
    return placed.pods == 6 && placed.bound["elastic-0"] == 2 && Scheduled(cluster, "elastic-0");
  })) << placed.pods
      << " pods, " << placed.bound["elastic-0"] << " of the base gang bound";
  EXPECT_EQ(placed.nodes["elastic-0"], (std::set<std::string>{"node-1"}));
  // The scaled replicas are tried once the base gang is scheduled, and wait
  // whole (none of their pods bound) while nothing has room.
  ASSERT_TRUE(Eventually([&] {
    const json condition =
        Condition(GetJson(cluster, {kCopsePodGroups, "elastic-0-sg-0"}), "PodGroupScheduled");
    return condition.value("status", "") == "False";
  }));
  placed = Place(cluster);
  EXPECT_EQ(placed.bound["elastic-0-sg-0"], 0);
  EXPECT_EQ(placed.bound["elastic-0-sg-1"], 0);

  // Room for one more replica: one scaled gang is placed whole, on it.
  Kubectl(cluster, {"uncordon", "node-2"});
  ASSERT_TRUE(Eventually([&] {
    placed = Place(cluster);
    return placed.bound["elastic-0-sg-0"] + placed.bound["elastic-0-sg-1"] == 2;
  })) << placed.bound["elastic-0-sg-0"]
      << " + " << placed.bound["elastic-0-sg-1"];
  for (const char* scaled : {"elastic-0-sg-0", "elastic-0-sg-1"}) {
    EXPECT_TRUE(placed.bound[scaled] == 0 || placed.bound[scaled] == 2) << scaled << " is whole";
    if (placed.bound[scaled] == 2) {
      EXPECT_EQ(placed.nodes[scaled], (std::set<std::string>{"node-2"}));
    }
  }
  // And the last one when its room appears.
  Kubectl(cluster, {"uncordon", "node-3"});
  ASSERT_TRUE(Eventually([&] {
    placed = Place(cluster);
    return placed.bound["elastic-0-sg-0"] == 2 && placed.bound["elastic-0-sg-1"] == 2 &&
           Scheduled(cluster, "elastic-0-sg-0") && Scheduled(cluster, "elastic-0-sg-1");
  })) << placed.bound["elastic-0-sg-0"]
      << ", " << placed.bound["elastic-0-sg-1"];
  EXPECT_EQ(placed.bound["elastic-0"], 2);
  EXPECT_EQ(placed.nodes["elastic-0"], (std::set<std::string>{"node-1"}));
}

}  // namespace
}  // namespace copse::e2e
