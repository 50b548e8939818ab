// Workloads through the binary and the real kubectl: `copse local` runs the
// Deployment, Job and StatefulSet controllers and schedules their pods (the
// default schedulerName included) with copse; `kubectl rollout status`,
// `scale`, `set image`, `rollout history` and `wait --for=condition=complete`
// behave as against a cluster. --no-default-scheduler and --no-controllers
// turn the two parts off.

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/e2e/kubectl/harness.h"
#include "tests/e2e/kubectl/kubectl_json.h"

namespace copse::e2e {
namespace {

using json = nlohmann::json;

const char kDeployment[] = R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: 3
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: main
        image: nginx:1.25
        resources:
          requests:
            cpu: 100m
            memory: 64Mi
)";

const char kIndexedJob[] = R"(apiVersion: batch/v1
kind: Job
metadata:
  name: idx
  namespace: default
spec:
  completions: 4
  parallelism: 2
  completionMode: Indexed
  template:
    metadata:
      labels:
        app: idx
      annotations:
        copse.dev/simulate-run-for: 2s
    spec:
      restartPolicy: Never
      containers:
      - name: work
        image: busybox
        command: ["sh", "-c", "echo $JOB_COMPLETION_INDEX"]
)";

const char kStatefulSet[] = R"(apiVersion: v1
kind: Service
metadata:
  name: db
  namespace: default
spec:
  clusterIP: None
  selector:
    app: db
  ports:
  - port: 5432
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  namespace: default
spec:
  serviceName: db
  replicas: 2
  selector:
    matchLabels:
      app: db
  template:
    metadata:
      labels:
        app: db
    spec:
      containers:
      - name: db
        image: postgres:16
)";

// Names of the pods that copse's scheduler reported Scheduled events for.
std::set<std::string> ScheduledByCopse(LocalCluster& cluster) {
  std::set<std::string> out;
  json events = GetJson(cluster, {"events", "-n", "default"});
  if (!events.is_object()) return out;
  for (const auto& e : events["items"]) {
    if (e.value("reason", "") == "Scheduled" &&
        e.value("reportingComponent", "") == "copse-scheduler" &&
        e["involvedObject"].value("kind", "") == "Pod") {
      out.insert(e["involvedObject"].value("name", ""));
    }
  }
  return out;
}

json Pods(LocalCluster& cluster, const std::string& selector) {
  return GetJson(cluster, {"pods", "-n", "default", "-l", selector});
}

TEST(WorkloadsE2E, DeploymentJobAndStatefulSetRunScheduledByCopse) {
  ASSERT_TRUE(HaveKubectl()) << "kubectl (v1.32) is required";
  LocalCluster cluster({"--nodes", "4", "--node-shape", "cpu=8,memory=32Gi"});
  ASSERT_TRUE(cluster.ready()) << cluster.startup_output();

  // Deployment: apply, rollout status, scale, set image, rollout status.
  auto r = cluster.Kubectl({"apply", "-f", cluster.WriteFile("deploy.yaml", kDeployment)});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = cluster.Kubectl({"rollout", "status", "deployment/web", "--timeout=90s"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("deployment \"web\" successfully rolled out"), std::string::npos) << r.out;
  r = cluster.Kubectl({"scale", "deployment/web", "--replicas=5"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = cluster.Kubectl({"rollout", "status", "deployment/web", "--timeout=90s"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  json deploy = GetJson(cluster, {"deployment", "web"});
  EXPECT_EQ(deploy["status"].value("availableReplicas", 0), 5) << deploy.dump();
  r = cluster.Kubectl({"set", "image", "deployment/web", "main=nginx:1.26"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = cluster.Kubectl({"rollout", "status", "deployment/web", "--timeout=90s"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("successfully rolled out"), std::string::npos) << r.out;
  ASSERT_TRUE(Eventually([&] {
    json pods = Pods(cluster, "app=web");
    if (!pods.is_object() || pods["items"].size() != 5) return false;
    for (const auto& p : pods["items"]) {
      if (p["spec"]["containers"][0].value("image", "") != "nginx:1.26") return false;
    }
    return true;
  }));
  r = cluster.Kubectl({"rollout", "history", "deployment/web"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("\n1 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n2 "), std::string::npos) << r.out;
  json rs = GetJson(cluster, {"replicasets", "-l", "app=web"});
  ASSERT_EQ(rs["items"].size(), 2u) << rs.dump();

  // An Indexed Job of 4 completions of 2 s each.
  r = cluster.Kubectl({"apply", "-f", cluster.WriteFile("job.yaml", kIndexedJob)});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = cluster.Kubectl({"wait", "--for=condition=complete", "job/idx", "--timeout=90s"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  json job = GetJson(cluster, {"job", "idx"});
  EXPECT_EQ(job["status"].value("completedIndexes", ""), "0-3") << job.dump();
  EXPECT_EQ(job["status"].value("succeeded", 0), 4);
  json job_pods = Pods(cluster, "app=idx");
  ASSERT_EQ(job_pods["items"].size(), 4u);
  for (const auto& p : job_pods["items"]) EXPECT_EQ(p["status"].value("phase", ""), "Succeeded");

  // A StatefulSet of 2 behind a headless Service.
  r = cluster.Kubectl({"apply", "-f", cluster.WriteFile("sts.yaml", kStatefulSet)});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = cluster.Kubectl({"rollout", "status", "statefulset/db", "--timeout=90s"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* name : {"db-0", "db-1"}) {
    json pod = GetJson(cluster, {"pod", name});
    ASSERT_TRUE(pod.is_object()) << name;
    EXPECT_EQ(pod["spec"].value("hostname", ""), name);
    EXPECT_EQ(pod["spec"].value("subdomain", ""), "db");
    EXPECT_EQ(Condition(pod, "Ready").value("status", ""), "True");
  }

  // Every pod of the three was bound by copse (default schedulerName).
  std::set<std::string> pods;
  for (const char* selector : {"app=web", "app=idx", "app=db"}) {
    json list = Pods(cluster, selector);
    for (const auto& p : list["items"]) {
      EXPECT_EQ(p["spec"].value("schedulerName", ""), "default-scheduler");
      EXPECT_TRUE(p["spec"].value("nodeName", "").starts_with("node-")) << p.dump();
      pods.insert(p["metadata"]["name"]);
    }
  }
  EXPECT_EQ(pods.size(), 5u + 4u + 2u);
  ASSERT_TRUE(Eventually([&] {
    std::set<std::string> scheduled = ScheduledByCopse(cluster);
    return std::includes(scheduled.begin(), scheduled.end(), pods.begin(), pods.end());
  })) << "pods without a Scheduled event from copse-scheduler";
}

const char kPlainPod[] = R"(apiVersion: v1
kind: Pod
metadata:
  name: plain
  namespace: default
spec:
  containers:
  - name: main
    image: registry.k8s.io/pause:3.10
)";

const char kCopsePod[] = R"(apiVersion: v1
kind: Pod
metadata:
  name: copse-pod
  namespace: default
spec:
  schedulerName: copse-scheduler
  containers:
  - name: main
    image: registry.k8s.io/pause:3.10
)";

TEST(WorkloadsE2E, FlagsTurnOffTheDefaultSchedulerAndTheControllers) {
  ASSERT_TRUE(HaveKubectl()) << "kubectl (v1.32) is required";
  LocalCluster cluster({"--nodes", "2", "--no-default-scheduler", "--no-controllers"});
  ASSERT_TRUE(cluster.ready()) << cluster.startup_output();
  // Created first, so that by the time the copse pod below is bound a
  // default scheduler or a Deployment controller would have acted on them.
  auto r = cluster.Kubectl({"apply", "-f", cluster.WriteFile("plain.yaml", kPlainPod)});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = cluster.Kubectl({"apply", "-f", cluster.WriteFile("deploy.yaml", kDeployment)});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = cluster.Kubectl({"apply", "-f", cluster.WriteFile("copse.yaml", kCopsePod)});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  ASSERT_TRUE(Eventually([&] {
    json pod = GetJson(cluster, {"pod", "copse-pod"});
    return pod.is_object() && Condition(pod, "Ready").value("status", "") == "True";
  }));
  json plain = GetJson(cluster, {"pod", "plain"});
  EXPECT_EQ(plain["spec"].value("nodeName", ""), "") << plain.dump();
  EXPECT_EQ(plain["status"].value("phase", ""), "Pending");
  json rs = GetJson(cluster, {"replicasets"});
  EXPECT_TRUE(rs["items"].empty()) << rs.dump();
  EXPECT_NE(cluster.startup_output().find("scheduler copse-scheduler,"), std::string::npos)
      << cluster.startup_output();
}

}  // namespace
}  // namespace copse::e2e
