// The scheduler through the binary and kubectl: `copse local` schedules a pod
// created with kubectl (nodeName, PodScheduled, Scheduled event, an
// unschedulable pod's kube-style message), and `copse run` against a
// `copse local --no-scheduler` takes the leader Lease, schedules, and serves
// /readyz and /metrics over HTTPS, /metrics to the holder of the cluster's
// token only.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "kube/kubeconfig.h"
#include "tests/e2e/kubectl/harness.h"
#include "tests/e2e/kubectl/kubectl_json.h"
#include "tests/support/paths.h"

namespace copse::e2e {
namespace {

using json = nlohmann::json;

const char kScheduledPod[] = R"(apiVersion: v1
kind: Pod
metadata:
  name: sched-me
  namespace: default
spec:
  schedulerName: copse-scheduler
  containers:
  - name: main
    image: registry.k8s.io/pause:3.10
    resources:
      requests:
        cpu: "1"
        memory: 1Gi
)";

const char kHugePod[] = R"(apiVersion: v1
kind: Pod
metadata:
  name: too-big
  namespace: default
spec:
  schedulerName: copse-scheduler
  containers:
  - name: main
    image: registry.k8s.io/pause:3.10
    resources:
      requests:
        cpu: "1000"
)";

TEST(SchedulerE2E, CopseLocalSchedulesPodsCreatedWithKubectl) {
  ASSERT_TRUE(HaveKubectl()) << "kubectl not found: scripts/setup.sh installs it";
  LocalCluster cluster({"--nodes", "4", "--node-shape", "cpu=8,memory=32Gi"});
  ASSERT_TRUE(cluster.ready()) << cluster.startup_output();
  auto created = cluster.Kubectl({"apply", "-f", cluster.WriteFile("pod.yaml", kScheduledPod)});
  ASSERT_EQ(created.exit_code, 0) << created.out;
  created = cluster.Kubectl({"apply", "-f", cluster.WriteFile("huge.yaml", kHugePod)});
  ASSERT_EQ(created.exit_code, 0) << created.out;

  ASSERT_TRUE(Eventually([&] {
    json pod = GetJson(cluster, {"pod", "sched-me"});
    return pod.is_object() && pod["spec"].value("nodeName", "").starts_with("node-");
  }));
  ASSERT_TRUE(Eventually([&] {
    json events = GetJson(cluster, {"events"});
    if (!events.is_object()) return false;
    for (const auto& e : events["items"]) {
      if (e.value("reason", "") == "Scheduled" &&
          e["involvedObject"].value("name", "") == "sched-me") {
        return e.value("message", "")
            .starts_with("Successfully assigned default/sched-me to node-");
      }
    }
    return false;
  }));
  std::string message;
  ASSERT_TRUE(Eventually([&] {
    json pod = GetJson(cluster, {"pod", "too-big"});
    if (!pod.is_object()) return false;
    for (const auto& c : pod["status"].value("conditions", json::array())) {
      if (c.value("type", "") == "PodScheduled" && c.value("status", "") == "False") {
        message = c.value("message", "");
        return c.value("reason", "") == "Unschedulable";
      }
    }
    return false;
  }));
  EXPECT_EQ(message,
            "0/4 nodes are available: 4 Insufficient cpu. preemption: 0/4 nodes are available: 4 "
            "No preemption victims found for incoming pod.");
}

// copse run's ops port against copse local, whose API server answers the
// TokenReviews and SubjectAccessReviews: HTTPS, the health paths for anyone,
// /metrics for the holder of the cluster's token, 403 (system:anonymous)
// without credentials and 401 for a token the cluster does not know.
TEST(SchedulerE2E, CopseRunTakesTheLeaseSchedulesAndServesMetrics) {
  ASSERT_TRUE(HaveKubectl()) << "kubectl not found: scripts/setup.sh installs it";
  LocalCluster cluster({"--nodes", "2", "--no-scheduler"});
  ASSERT_TRUE(cluster.ready()) << cluster.startup_output();
  (void)cluster.Kubectl({"create", "namespace", "kube-system"});
  Process run({COPSE_BINARY, "run", "--kubeconfig", cluster.kubeconfig(), "--bind-address",
               "127.0.0.1", "--secure-port", "0"});
  ASSERT_TRUE(run.WaitForLine("leading as", std::chrono::seconds(30))) << run.seen();
  std::smatch m;
  const std::string seen = run.seen();
  ASSERT_TRUE(std::regex_search(seen, m, std::regex(R"(ops server (https://[0-9.:]+))"))) << seen;
  const std::string ops = m[1];
  EXPECT_EQ(seen.find("without authentication"), std::string::npos) << "no plain HTTP unless asked";
  auto config = kube::LoadKubeconfigFile(cluster.kubeconfig());
  ASSERT_TRUE(config.ok()) << config.error().ToString();
  ASSERT_FALSE(config->token.empty()) << "copse local makes a token by default";

  auto created = cluster.Kubectl({"apply", "-f", cluster.WriteFile("pod.yaml", kScheduledPod)});
  ASSERT_EQ(created.exit_code, 0) << created.out;
  ASSERT_TRUE(Eventually([&] {
    json pod = GetJson(cluster, {"pod", "sched-me"});
    return pod.is_object() && !pod["spec"].value("nodeName", "").empty();
  }));
  json lease = GetJson(cluster, {"lease", "-n", "kube-system", "copse-scheduler"});
  ASSERT_TRUE(lease.is_object());
  EXPECT_FALSE(lease["spec"].value("holderIdentity", "").empty());

  // The certificate is self-signed: curl -k, as the kubelet's probes.
  const auto get = [&](const std::string& path, const std::string& token) {
    std::vector<std::string> argv = {"curl", "-sk", "-w", "\n%{http_code}"};
    if (!token.empty()) argv.insert(argv.end(), {"-H", "Authorization: Bearer " + token});
    argv.push_back(ops + path);
    const std::string out = RunCommand(argv).out;
    const size_t last = out.rfind('\n');
    return std::make_pair(last == std::string::npos ? 0 : std::atoi(out.c_str() + last + 1),
                          out.substr(0, last == std::string::npos ? 0 : last));
  };
  EXPECT_EQ(get("/readyz", "").first, 200);
  EXPECT_EQ(get("/healthz", "").first, 200);
  const auto anonymous = get("/metrics", "");
  EXPECT_EQ(anonymous.first, 403);
  EXPECT_NE(
      anonymous.second.find(R"(forbidden: User \"system:anonymous\" cannot get path \"/metrics\")"),
      std::string::npos)
      << anonymous.second;
  const auto unknown = get("/metrics", "not-the-token");
  EXPECT_EQ(unknown.first, 401);
  EXPECT_EQ(
      unknown.second,
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401})"
      "\n");
  ASSERT_TRUE(Eventually(
      [&] {
        const auto metrics = get("/metrics", config->token);
        return metrics.first == 200 &&
               metrics.second.find(
                   R"(scheduler_schedule_attempts_total{profile="copse-scheduler",result="scheduled"} 1)") !=
                   std::string::npos;
      },
      std::chrono::seconds(10)));
}

}  // namespace
}  // namespace copse::e2e
