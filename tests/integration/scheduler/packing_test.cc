// Accelerator packing of single pods across topology domains (DomainPacking)
// on the real embedded API server, with the scheduler's pod-class batching on
// (the default): pods of one class arriving together reuse a filter pass.

#include <map>
#include <set>
#include <string>

#include "tests/integration/scheduler/harness.h"

namespace copse::scheduler::testing {
namespace {

using kube::resources::kNodes;
using kube::resources::kPods;

// A pod asking `gpus` GPUs (as a limit: extended resources default requests
// to limits); bound to `node` already when it is not empty.
std::string GpuPodJson(const std::string& name, int gpus, const std::string& node = "") {
  PodSpecOptions pod;
  pod.name = name;
  if (!node.empty()) pod.extra_spec = R"(,"nodeName":")" + node + "\"";
  std::string json = PodJson(pod);
  const std::string requests = R"("requests":{"cpu":"100m","memory":"128Mi"})";
  const size_t at = json.find(requests);
  EXPECT_NE(at, std::string::npos);
  if (at == std::string::npos) return json;
  const std::string n = std::to_string(gpus);
  json.replace(at, requests.size(),
               R"("requests":{"cpu":"100m","memory":"128Mi","nvidia.com/gpu":")" + n + R"("},)" +
                   R"("limits":{"nvidia.com/gpu":")" + n + R"("})");
  return json;
}

// 4 racks of 2 nodes with 8 GPUs each, empty; 16 single-GPU pods created
// before the scheduler starts, so they pop one after another and batch.
// Packing fills one node, then its rack-mate (the rack is now the fullest),
// and leaves three racks whole. A reused pass kept the racks' free sums from
// before the first pod, so once the first node was full every other node
// looked alike and the ninth pod went to a random rack (6 in 7).
TEST(PackingIntegration, GpuSinglesFillOneRackBeforeTheNext) {
  Cluster cluster;
  std::map<std::string, std::string> rack_of;
  for (int r = 0; r < 4; ++r) {
    for (int n = 0; n < 2; ++n) {
      NodeSpec node;
      node.name = "gpu-" + std::to_string(r) + "-" + std::to_string(n);
      node.labels = {{"copse.dev/rack", "rack-" + std::to_string(r)},
                     {"copse.dev/block", "block-0"}};
      node.extra_allocatable = R"(,"nvidia.com/gpu":"8")";
      rack_of[node.name] = node.labels["copse.dev/rack"];
      cluster.Create(kNodes, "", NodeJson(node));
    }
  }
  constexpr int kNumPods = 16;
  for (int i = 0; i < kNumPods; ++i) {
    cluster.Create(kPods, "default", GpuPodJson("single-" + std::to_string(i), 1));
  }
  cluster.StartScheduler();
  ASSERT_TRUE(WaitUntil([&] {
    int bound = 0;
    for (const kube::Pod& pod : cluster.Pods()) bound += pod.spec.node_name.empty() ? 0 : 1;
    return bound == kNumPods && cluster.scheduler()->stats().assumed_pods == 0;
  }));
  for (const std::string& v : CheckInvariants(cluster.Nodes(), cluster.Pods())) ADD_FAILURE() << v;
  std::set<std::string> racks;
  std::set<std::string> nodes;
  for (const kube::Pod& pod : cluster.Pods()) {
    racks.insert(rack_of[pod.spec.node_name]);
    nodes.insert(pod.spec.node_name);
  }
  EXPECT_EQ(nodes.size(), 2u) << "16 GPUs fill two nodes";
  EXPECT_EQ(racks.size(), 1u) << "the two nodes are rack-mates";
}

// Stranding (NodeResourcesFit, plugins/node_resources_fit/fit.h): two nodes
// of one rack, with 3 and 4 GPUs free; two 2-GPU pods wait. Plain
// MostAllocated sends the first to the fuller node, leaving 1 GPU there that
// no waiting pod can use, and the second to the other. Counting what the
// waiting pods can use, the first takes the node with 4 free (2 left, which
// the second pod needs), the second fills it, and the 3 free GPUs stay
// usable on one node.
TEST(PackingIntegration, GpuPodsLeaveNoGpuThatNoWaitingPodCanUse) {
  Cluster cluster;
  for (const char* name : {"three-free", "four-free"}) {
    NodeSpec node;
    node.name = name;
    node.labels = {{"copse.dev/rack", "rack-0"}, {"copse.dev/block", "block-0"}};
    node.extra_allocatable = R"(,"nvidia.com/gpu":"8")";
    cluster.Create(kNodes, "", NodeJson(node));
  }
  cluster.Create(kPods, "default", GpuPodJson("running-5", 5, "three-free"));
  cluster.Create(kPods, "default", GpuPodJson("running-4", 4, "four-free"));
  for (const char* name : {"waiting-a", "waiting-b"}) {
    cluster.Create(kPods, "default", GpuPodJson(name, 2));
  }
  cluster.StartScheduler();
  ASSERT_TRUE(WaitUntil([&] {
    int bound = 0;
    for (const kube::Pod& pod : cluster.Pods()) bound += pod.spec.node_name.empty() ? 0 : 1;
    return bound == 4 && cluster.scheduler()->stats().assumed_pods == 0;
  }));
  for (const std::string& v : CheckInvariants(cluster.Nodes(), cluster.Pods())) ADD_FAILURE() << v;
  for (const kube::Pod& pod : cluster.Pods()) {
    if (pod.meta.name.starts_with("waiting-")) {
      EXPECT_EQ(pod.spec.node_name, "four-free") << pod.meta.name;
    }
  }
}

}  // namespace
}  // namespace copse::scheduler::testing
