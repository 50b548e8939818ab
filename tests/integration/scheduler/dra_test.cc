// Pods that claim devices through Dynamic Resource Allocation
// (spec.resourceClaims) against the embedded API server: never bound to a
// node without their claims allocated.

#include <gtest/gtest.h>

#include "tests/integration/scheduler/harness.h"

namespace copse::scheduler::testing {
namespace dra_test {

using kube::resources::kNodes;
using kube::resources::kPods;

// Waits until the pod is reported unschedulable or (the bug this guards
// against) bound; returns it.
std::optional<kube::Pod> PendingOrBound(Cluster& cluster, const std::string& name) {
  EXPECT_TRUE(WaitUntil([&] {
    auto pod = cluster.GetPod("default", name);
    const kube::Condition* c = pod.has_value() ? PodScheduledCondition(*pod) : nullptr;
    return pod.has_value() &&
           (!pod->spec.node_name.empty() || (c != nullptr && c->status == "False"));
  }));
  return cluster.GetPod("default", name);
}

// A pod whose claim copse cannot allocate stays pending, Unschedulable with a
// message that names the claim, while a pod without claims binds.
TEST(DraIntegration, PodWithUnallocatableClaimIsNeverBound) {
  Cluster cluster;
  NodeSpec node;
  node.name = "gpu-0001";
  cluster.Create(kNodes, "", NodeJson(node));
  cluster.StartScheduler();
  PodSpecOptions claimed;
  claimed.name = "dra-pod";
  claimed.extra_spec = R"(,"resourceClaims":[{"name":"gpus","resourceClaimName":"two-gpus"}])";
  cluster.Create(kPods, "default", PodJson(claimed));
  PodSpecOptions plain;
  plain.name = "plain";
  cluster.Create(kPods, "default", PodJson(plain));

  ASSERT_TRUE(WaitUntil([&] {
    auto pod = cluster.GetPod("default", "plain");
    return pod.has_value() && pod->spec.node_name == "gpu-0001";
  }));
  auto pod = PendingOrBound(cluster, "dra-pod");
  ASSERT_TRUE(pod.has_value());
  ASSERT_EQ(pod->spec.node_name, "") << "bound without its claim allocated";
  const kube::Condition* c = PodScheduledCondition(*pod);
  EXPECT_EQ(c->reason, "Unschedulable");
  EXPECT_NE(c->message.find(R"(ResourceClaim "default/two-gpus")"), std::string::npos)
      << c->message;
  EXPECT_NE(c->message.find(R"(spec.resourceClaims[0] "gpus")"), std::string::npos) << c->message;
}

// A template's claim the resourceclaim controller has not created yet is
// named by its pod-level name.
TEST(DraIntegration, TemplateClaimNotCreatedYetIsNamed) {
  Cluster cluster;
  NodeSpec node;
  node.name = "n";
  cluster.Create(kNodes, "", NodeJson(node));
  cluster.StartScheduler();
  PodSpecOptions claimed;
  claimed.name = "from-template";
  claimed.extra_spec =
      R"(,"resourceClaims":[{"name":"gpus","resourceClaimTemplateName":"two-h100"}])";
  cluster.Create(kPods, "default", PodJson(claimed));
  auto pod = PendingOrBound(cluster, "from-template");
  ASSERT_TRUE(pod.has_value());
  ASSERT_EQ(pod->spec.node_name, "") << "bound without its claim allocated";
  EXPECT_NE(PodScheduledCondition(*pod)->message.find(R"("gpus" (its ResourceClaim)"),
            std::string::npos)
      << PodScheduledCondition(*pod)->message;
}

}  // namespace dra_test
}  // namespace copse::scheduler::testing
