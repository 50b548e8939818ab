// Gang scheduling through the binary and kubectl: on `copse local`, the
// example manifests of deploy/examples/gang/ are applied with kubectl and the
// outcome is read back with kubectl:
//   - a Workload + its scheduling.k8s.io/v1alpha2 PodGroup (minCount 4) + four
//     pods: every pod gets a node and the PodGroup PodGroupScheduled=True;
//   - a copse PodGroup (scheduling.copse.dev/v1alpha1, minMember 8 workers of
//     4 cpu) on a cluster with room for four of them: PodGroupScheduled=False,
//     reason Unschedulable, a message with the fit count, and no pod bound.

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/kubectl/harness.h"
#include "tests/e2e/kubectl/kubectl_json.h"
#include "tests/support/paths.h"

namespace copse::e2e {
namespace gang_e2e_test {

using json = nlohmann::json;

const std::string kExamples = std::string(COPSE_SOURCE_DIR) + "/deploy/examples/gang/";

// Two nodes of 8 cpu: room for the Workload's four 1-cpu pods, and for only
// four of the copse PodGroup's eight 4-cpu workers.
const std::vector<std::string> kClusterFlags = {"--nodes", "2", "--node-shape",
                                                "cpu=8,memory=32Gi"};

// The pods selected by `selector`: name -> spec.nodeName ("" when unbound).
std::map<std::string, std::string> PodNodes(LocalCluster& cluster, const std::string& selector) {
  std::map<std::string, std::string> out;
  json list = GetJson(cluster, {"pods", "-l", selector});
  if (!list.is_object()) return out;
  for (const auto& pod : list["items"]) {
    out[pod["metadata"].value("name", "")] = pod["spec"].value("nodeName", "");
  }
  return out;
}

TEST(GangE2E, WorkloadPodGroupIsScheduledWhole) {
  ASSERT_TRUE(HaveKubectl()) << "kubectl not found: scripts/setup.sh installs it";
  LocalCluster cluster(kClusterFlags);
  ASSERT_TRUE(cluster.ready()) << cluster.startup_output();
  auto applied = cluster.Kubectl({"apply", "-f", kExamples + "workload-gang.yaml"});
  ASSERT_EQ(applied.exit_code, 0) << applied.out;
  EXPECT_NE(applied.out.find("workload.scheduling.k8s.io/training created"), std::string::npos)
      << applied.out;
  EXPECT_NE(applied.out.find("podgroup.scheduling.k8s.io/training-workers created"),
            std::string::npos)
      << applied.out;

  // Read in the version the manifest was written in (kubectl's default is
  // the preferred v1beta1, where the condition is PodGroupInitiallyScheduled).
  json group;
  ASSERT_TRUE(Eventually([&] {
    group = GetJson(cluster, {"podgroups.v1alpha2.scheduling.k8s.io", "training-workers"});
    return Condition(group, "PodGroupScheduled").value("status", "") == "True";
  })) << group.dump(2);
  const json beta = GetJson(cluster, {"podgroups.scheduling.k8s.io", "training-workers"});
  EXPECT_EQ(beta.value("apiVersion", ""), "scheduling.k8s.io/v1beta1");
  EXPECT_EQ(Condition(beta, "PodGroupInitiallyScheduled").value("status", ""), "True")
      << beta.dump(2);
  const json scheduled = Condition(group, "PodGroupScheduled");
  EXPECT_EQ(scheduled.value("reason", ""), "Scheduled");
  EXPECT_NE(scheduled.value("message", "").find("(minimum 4)"), std::string::npos)
      << scheduled.dump();

  std::map<std::string, std::string> nodes;
  ASSERT_TRUE(Eventually([&] {
    nodes = PodNodes(cluster, "app=training");
    if (nodes.size() != 4) return false;
    for (const auto& [name, node] : nodes) {
      if (node.empty()) return false;
    }
    return true;
  })) << nodes.size()
      << " pods";
  for (const auto& [name, node] : nodes) {
    EXPECT_TRUE(node.starts_with("node-")) << name << " on " << node;
  }
  // The Workload is a template the scheduler leaves alone; it is served as applied.
  json workload = GetJson(cluster, {"workloads.scheduling.k8s.io", "training"});
  ASSERT_TRUE(workload.is_object());
  EXPECT_EQ(
      workload["spec"]["podGroupTemplates"][0]["schedulingPolicy"]["gang"].value("minCount", 0), 4);
}

TEST(GangE2E, CopsePodGroupLargerThanTheClusterBindsNothing) {
  ASSERT_TRUE(HaveKubectl()) << "kubectl not found: scripts/setup.sh installs it";
  LocalCluster cluster(kClusterFlags);
  ASSERT_TRUE(cluster.ready()) << cluster.startup_output();
  auto applied = cluster.Kubectl({"apply", "-f", kExamples + "copse-podgroup.yaml"});
  ASSERT_EQ(applied.exit_code, 0) << applied.out;
  EXPECT_NE(applied.out.find("podgroup.scheduling.copse.dev/sweep created"), std::string::npos)
      << applied.out;

  json group;
  ASSERT_TRUE(Eventually([&] {
    group = GetJson(cluster, {"podgroups.scheduling.copse.dev", "sweep"});
    return Condition(group, "PodGroupScheduled").value("status", "") == "False";
  })) << group.dump(2);
  const json condition = Condition(group, "PodGroupScheduled");
  EXPECT_EQ(condition.value("reason", ""), "Unschedulable");
  const std::string message = condition.value("message", "");
  // Two 8-cpu nodes hold two 4-cpu workers each: 4 of the 8 required fit.
  EXPECT_TRUE(message.starts_with("pod group default/sweep: 4/8 pods fit")) << message;
  EXPECT_NE(message.find("Insufficient cpu"), std::string::npos) << message;
  EXPECT_EQ(group["status"].value("phase", ""), "Unschedulable") << group.dump(2);

  // Every member has been told why it waits (its PodScheduled=False is
  // written by the same attempt), and none was bound.
  json pods;
  ASSERT_TRUE(Eventually([&] {
    pods = GetJson(cluster, {"pods", "-l", "scheduling.copse.dev/pod-group=sweep"});
    if (!pods.is_object() || pods["items"].size() != 8) return false;
    for (const auto& pod : pods["items"]) {
      if (Condition(pod, "PodScheduled").value("status", "") != "False") return false;
    }
    return true;
  })) << pods.dump(2);
  for (const auto& pod : pods["items"]) {
    EXPECT_EQ(pod["spec"].value("nodeName", ""), "") << pod["metadata"].value("name", "");
    EXPECT_EQ(Condition(pod, "PodScheduled").value("reason", ""), "Unschedulable");
  }
  // Still nothing bound and the status unchanged after the group's retries.
  group = GetJson(cluster, {"podgroups.scheduling.copse.dev", "sweep"});
  EXPECT_EQ(group["status"].value("scheduled", 0), 0) << group.dump(2);
  for (const auto& [name, node] : PodNodes(cluster, "scheduling.copse.dev/pod-group=sweep")) {
    EXPECT_EQ(node, "") << name;
  }
}

}  // namespace gang_e2e_test
}  // namespace copse::e2e
