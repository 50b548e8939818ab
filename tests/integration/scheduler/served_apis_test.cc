// The scheduler on a server that lacks APIs it can use, as v1.20 does: the
// embedded API server serves PodDisruptionBudgets only as policy/v1beta1 and
// no scheduling.k8s.io/v1alpha2. The scheduler must still sync and schedule,
// honour the v1beta1 budgets in preemption, and schedule copse PodGroup gangs.

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "deploy/crds.h"
#include "kube/pod_group.h"
#include "kube/yaml.h"
#include "tests/integration/scheduler/harness.h"

namespace copse::scheduler::testing {
namespace served_apis_test {

using kube::resources::kCopsePodGroups;
using kube::resources::kNodes;
using kube::resources::kPods;

api::StoreOptions V120Apis() {
  api::StoreOptions options;
  options.served_versions = {{"poddisruptionbudgets.policy", {"v1beta1"}},
                             {"podgroups.scheduling.k8s.io", {}},
                             {"workloads.scheduling.k8s.io", {}}};
  return options;
}

void MakePriorityClasses(Cluster& cluster) {
  cluster.Create(
      kube::resources::kPriorityClasses, "",
      R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"low"},"value":10})");
  cluster.Create(
      kube::resources::kPriorityClasses, "",
      R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"high"},"value":1000})");
}

void AddNodes(Cluster& cluster, int count, const std::string& cpu) {
  for (int n = 0; n < count; ++n) {
    NodeSpec node;
    node.name = "node-" + std::to_string(n);
    node.cpu = cpu;
    cluster.Create(kNodes, "", NodeJson(node));
  }
}

TEST(ServedApisIntegration, StoreServesWhatItIsTold) {
  Cluster cluster({}, true, V120Apis());
  EXPECT_FALSE(cluster.store().Resolve("policy", "v1", "poddisruptionbudgets").ok());
  EXPECT_TRUE(cluster.store().Resolve("policy", "v1beta1", "poddisruptionbudgets").ok());
  EXPECT_FALSE(cluster.store().Resolve("scheduling.k8s.io", "v1alpha2", "podgroups").ok());
}

// Two 4-cpu nodes full of 1-cpu low pods; node-0's four are guarded by a
// policy/v1beta1 budget that allows no disruption. A 2-cpu high pod must
// preempt on node-1: the scheduler read the v1beta1 budget.
TEST(ServedApisIntegration, WithoutPolicyV1BudgetsAreReadFromV1beta1) {
  Cluster cluster({}, true, V120Apis());
  MakePriorityClasses(cluster);
  cluster.Create(
      kube::resources::kPodDisruptionBudgetsV1beta1, "default",
      R"({"apiVersion":"policy/v1beta1","kind":"PodDisruptionBudget","metadata":{"name":"guard","namespace":"default"},"spec":{"minAvailable":4,"selector":{"matchLabels":{"guarded":"yes"}}}})");
  AddNodes(cluster, 2, "4");
  cluster.StartScheduler();
  ASSERT_TRUE(cluster.scheduler()->HasSynced());
  EXPECT_TRUE(cluster.scheduler()->UnsyncedInformers().empty());
  for (int i = 0; i < 8; ++i) {
    PodSpecOptions p;
    p.name = "low-" + std::to_string(i);
    p.cpu = "1";
    p.priority_class = "low";
    if (i < 4) p.labels["guarded"] = "yes";
    p.extra_spec = R"(,"nodeSelector":{"kubernetes.io/hostname":"node-)" +
                   std::to_string(i < 4 ? 0 : 1) + "\"}";
    cluster.Create(kPods, "default", PodJson(p));
  }
  ASSERT_TRUE(WaitUntil([&] {
    int bound = 0;
    for (const kube::Pod& pod : cluster.Pods()) bound += !pod.spec.node_name.empty();
    return bound == 8;
  }));
  // The disruption controller (the node simulator) counts the guarded pods.
  ASSERT_TRUE(WaitUntil([&] {
    auto got =
        cluster.store().Get(kube::resources::kPodDisruptionBudgetsV1beta1, "default", "guard");
    return got.ok() && (*got)->json.find("\"currentHealthy\":4") != std::string::npos;
  }));
  PodSpecOptions high;
  high.name = "high";
  high.cpu = "2";
  high.priority_class = "high";
  cluster.Create(kPods, "default", PodJson(high));
  ASSERT_TRUE(WaitUntil([&] {
    auto pod = cluster.GetPod("default", "high");
    return pod.has_value() && !pod->spec.node_name.empty();
  }));
  EXPECT_EQ(cluster.GetPod("default", "high")->spec.node_name, "node-1")
      << "victims come from the node the v1beta1 budget does not guard";
  for (const kube::Pod& p : cluster.Pods()) {
    if (p.meta.labels.contains("guarded")) {
      EXPECT_FALSE(p.meta.deletion_timestamp.has_value()) << p.meta.name << " is guarded";
    }
  }
  for (const std::string& v : CheckInvariants(cluster.Nodes(), cluster.Pods())) ADD_FAILURE() << v;
}

std::string CopseGroupJson(const std::string& name, int min_member) {
  return R"({"apiVersion":"scheduling.copse.dev/v1alpha1","kind":"PodGroup","metadata":{"name":")" +
         name + R"(","namespace":"default"},"spec":{"minMember":)" + std::to_string(min_member) +
         "}}";
}

// Without scheduling.k8s.io/v1alpha2, copse PodGroups are still gangs: two
// 4-cpu nodes, a gang of three 2-cpu pods binds whole, a second one (room
// for one member left) binds nothing and says so.
TEST(ServedApisIntegration, WithoutV1alpha2CopsePodGroupGangsStillWork) {
  Cluster cluster({}, true, V120Apis());
  InstallCopseCrds(cluster);
  AddNodes(cluster, 2, "4");
  cluster.StartScheduler();
  ASSERT_TRUE(cluster.scheduler()->HasSynced());
  for (const std::string gang : {"first", "second"}) {
    cluster.Create(kCopsePodGroups, "default", CopseGroupJson(gang, 3));
    for (int i = 0; i < 3; ++i) {
      PodSpecOptions p;
      p.name = gang + "-" + std::to_string(i);
      p.cpu = "2";
      p.labels["gang"] = gang;
      p.labels["scheduling.copse.dev/pod-group"] = gang;
      cluster.Create(kPods, "default", PodJson(p));
    }
    // One gang at a time, so that the first one is the one that fits.
    if (gang == "first") {
      ASSERT_TRUE(WaitUntil([&] {
        int bound = 0;
        for (const kube::Pod& pod : cluster.Pods()) bound += !pod.spec.node_name.empty();
        return bound == 3;
      }));
    }
  }
  auto scheduled = [&](const std::string& name) -> std::optional<kube::Condition> {
    auto got = cluster.store().Get(kCopsePodGroups, "default", name);
    if (!got.ok()) return std::nullopt;
    auto group = kube::CopsePodGroup::Decode((*got)->json);
    if (!group.ok()) return std::nullopt;
    const kube::Condition* c =
        kube::FindCondition(group->status.conditions, kube::kPodGroupScheduled);
    if (c == nullptr) return std::nullopt;
    return *c;
  };
  ASSERT_TRUE(WaitUntil([&] {
    auto first = scheduled("first");
    auto second = scheduled("second");
    return first && first->status == "True" && second && second->status == "False";
  }));
  std::map<std::string, int> bound;
  for (const kube::Pod& pod : cluster.Pods()) {
    bound[pod.meta.labels.at("gang")] += !pod.spec.node_name.empty();
  }
  EXPECT_EQ(bound["first"], 3);
  EXPECT_EQ(bound["second"], 0) << "a gang binds whole or not at all";
  for (const std::string& v : CheckInvariants(cluster.Nodes(), cluster.Pods())) ADD_FAILURE() << v;
}

}  // namespace served_apis_test
}  // namespace copse::scheduler::testing
