// End to end: the real kubectl (v1.32) against `copse local`.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "tests/e2e/kubectl/harness.h"

namespace copse::e2e {
namespace {

using nlohmann::json;

class KubectlTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_TRUE(HaveKubectl()) << "kubectl not found: scripts/setup.sh installs it";
    cluster_ = new LocalCluster({"--nodes", "6", "--topology", "zone=2,rack=3", "--node-shape",
                                 "cpu=16,memory=64Gi,nvidia.com/gpu=4"});
    ASSERT_TRUE(cluster_->ready()) << cluster_->startup_output();
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(cluster_, nullptr) << "the local cluster did not start (see SetUpTestSuite)";
  }

  static CommandResult K(const std::vector<std::string>& args, const std::string& in = {}) {
    return cluster_->Kubectl(args, in);
  }
  static json GetJson(const std::vector<std::string>& args) {
    auto argv = args;
    argv.insert(argv.begin(), "get");
    argv.push_back("-o");
    argv.push_back("json");
    auto r = K(argv);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  }

  static LocalCluster* cluster_;
};
LocalCluster* KubectlTest::cluster_ = nullptr;

// copse local schedules it (default-scheduler) and the node simulator then
// takes the whole grace period to delete it: 1 s, not the default 30.
const char kPodYaml[] = R"(apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: default
  labels:
    app: web
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: registry.k8s.io/pause:3.10
    resources:
      requests:
        cpu: 500m
        memory: 1Gi
)";

TEST_F(KubectlTest, GetNodesShowsSyntheticNodesWithTopologyLabels) {
  auto r = K({"get", "nodes", "-L", "topology.kubernetes.io/zone,copse.dev/rack"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("NAME"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("STATUS"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("node-1 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("node-6 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Ready"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("zone-2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rack-2-3"), std::string::npos) << r.out;

  json nodes = GetJson({"nodes"});
  ASSERT_TRUE(nodes.contains("items"));
  ASSERT_EQ(nodes["items"].size(), 6u);
  std::set<std::string> racks;
  for (const auto& n : nodes["items"]) {
    racks.insert(n["metadata"]["labels"]["copse.dev/rack"].get<std::string>());
    EXPECT_EQ(n["status"]["allocatable"]["nvidia.com/gpu"], "4");
    EXPECT_EQ(n["status"]["allocatable"]["cpu"], "16");
  }
  EXPECT_EQ(racks.size(), 6u);  // 2 zones x 3 racks, one node each
}

TEST_F(KubectlTest, CreatePodGetJsonLabelAnnotatePatchDelete) {
  const std::string path = cluster_->WriteFile("pod.yaml", kPodYaml);
  auto r = K({"create", "-f", path});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("pod/web created"), std::string::npos) << r.out;

  // Creating it again is AlreadyExists and changes nothing.
  r = K({"create", "-f", path});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("AlreadyExists"), std::string::npos) << r.out;

  json pod = GetJson({"pod", "web"});
  EXPECT_EQ(pod["metadata"]["name"], "web");
  EXPECT_FALSE(pod["metadata"]["uid"].get<std::string>().empty());
  EXPECT_EQ(pod["spec"]["containers"][0]["resources"]["requests"]["cpu"], "500m");

  r = K({"label", "pod", "web", "tier=frontend"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = K({"annotate", "pod", "web", "copse.dev/note=hello"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = K({"patch", "pod", "web", "--type", "merge", "-p",
         R"({"metadata":{"labels":{"patched":"yes"}}})"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  pod = GetJson({"pod", "web"});
  EXPECT_EQ(pod["metadata"]["labels"]["tier"], "frontend");
  EXPECT_EQ(pod["metadata"]["labels"]["patched"], "yes");
  EXPECT_EQ(pod["metadata"]["labels"]["app"], "web");
  EXPECT_EQ(pod["metadata"]["annotations"]["copse.dev/note"], "hello");

  // Label selectors through kubectl.
  r = K({"get", "pods", "-l", "tier=frontend", "-o", "name"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("pod/web"), std::string::npos) << r.out;
  r = K({"get", "pods", "-l", "tier=backend", "-o", "name"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.find("pod/web"), std::string::npos) << r.out;

  r = K({"delete", "pod", "web", "--wait=true", "--timeout=30s"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = K({"get", "pod", "web"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("NotFound"), std::string::npos) << r.out;
}

// A `kind: List` file: kubectl validates the List itself against the
// /openapi/v2 protobuf document, then creates every item.
TEST_F(KubectlTest, ApplyListCreatesEveryItem) {
  const std::string list = R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: listed-config
  data:
    a: "1"
- apiVersion: v1
  kind: Service
  metadata:
    name: listed-service
  spec:
    selector:
      app: listed
    ports:
    - port: 80
)";
  auto r = K({"apply", "-f", cluster_->WriteFile("list.yaml", list)});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("configmap/listed-config created"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("service/listed-service created"), std::string::npos) << r.out;
  EXPECT_EQ(GetJson({"configmap", "listed-config"})["data"]["a"], "1");
  EXPECT_EQ(GetJson({"service", "listed-service"})["spec"]["ports"][0]["port"], 80);
}

TEST_F(KubectlTest, ApplyCreatesThenReappliesChange) {
  const std::string v1 = R"(apiVersion: v1
kind: Service
metadata:
  name: api
  labels:
    version: one
spec:
  selector:
    app: api
  ports:
  - port: 80
    targetPort: 8080
)";
  std::string v2 = v1;
  v2.replace(v2.find("version: one"), 12, "version: two");
  v2.replace(v2.find("port: 80\n"), 9, "port: 81\n");

  auto r = K({"apply", "-f", cluster_->WriteFile("svc1.yaml", v1)});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("service/api created"), std::string::npos) << r.out;
  r = K({"apply", "-f", cluster_->WriteFile("svc2.yaml", v2)});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("service/api configured"), std::string::npos) << r.out;
  json svc = GetJson({"service", "api"});
  EXPECT_EQ(svc["metadata"]["labels"]["version"], "two");
  ASSERT_EQ(svc["spec"]["ports"].size(), 1u) << svc.dump();
  EXPECT_EQ(svc["spec"]["ports"][0]["port"], 81);
  // Re-applying the same file is a no-op.
  r = K({"apply", "-f", cluster_->WriteFile("svc3.yaml", v2)});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("service/api unchanged"), std::string::npos) << r.out;
}

TEST_F(KubectlTest, CrdAndCustomResource) {
  const std::string crd = R"(apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.copse.dev
spec:
  group: example.copse.dev
  scope: Namespaced
  names:
    plural: widgets
    singular: widget
    kind: Widget
    shortNames: [wd]
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
    additionalPrinterColumns:
    - name: Size
      type: integer
      jsonPath: .spec.size
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
)";
  auto r = K({"create", "-f", cluster_->WriteFile("crd.yaml", crd)});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = K({"wait", "--for=condition=Established", "crd/widgets.example.copse.dev", "--timeout=30s"});
  ASSERT_EQ(r.exit_code, 0) << r.out;

  const std::string widget = R"(apiVersion: example.copse.dev/v1
kind: Widget
metadata:
  name: w1
spec:
  size: 3
)";
  r = K({"create", "-f", cluster_->WriteFile("w1.yaml", widget)});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("widget.example.copse.dev/w1 created"), std::string::npos) << r.out;

  r = K({"get", "widgets"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("SIZE"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("w1"), std::string::npos) << r.out;
  r = K({"get", "wd", "w1", "-o", "jsonpath={.spec.size}"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "3");

  r = K({"patch", "widget", "w1", "--type", "merge", "-p", R"({"spec":{"size":5}})"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  json w = GetJson({"widget", "w1"});
  EXPECT_EQ(w["spec"]["size"], 5);
  EXPECT_EQ(w["metadata"]["generation"], 2);
}

TEST_F(KubectlTest, WatchSeesUpdates) {
  auto r = K({"create", "-f", cluster_->WriteFile("watched.yaml", R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: watched
data:
  step: "1"
)")});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto watch = cluster_->KubectlBackground(
      {"get", "configmap", "watched", "-w", "-o", "jsonpath={.data.step}{\"\\n\"}"});
  ASSERT_TRUE(watch->WaitForLine("1", std::chrono::seconds(20))) << watch->seen();
  r = K({"patch", "configmap", "watched", "--type", "merge", "-p", R"({"data":{"step":"2"}})"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(watch->WaitForLine("2", std::chrono::seconds(20))) << watch->seen();
  r = K({"patch", "configmap", "watched", "--type", "merge", "-p", R"({"data":{"step":"3"}})"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(watch->WaitForLine("3", std::chrono::seconds(20))) << watch->seen();
}

TEST_F(KubectlTest, CordonMarksNodeUnschedulable) {
  auto r = K({"cordon", "node-2"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("cordoned"), std::string::npos) << r.out;
  json node = GetJson({"node", "node-2"});
  EXPECT_EQ(node["spec"]["unschedulable"], true);
  r = K({"get", "node", "node-2"});
  EXPECT_NE(r.out.find("SchedulingDisabled"), std::string::npos) << r.out;
  r = K({"uncordon", "node-2"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  node = GetJson({"node", "node-2"});
  EXPECT_FALSE(node["spec"].value("unschedulable", false));
}

// Bound by hand: a schedulerName no scheduler answers (copse local also
// answers default-scheduler) keeps the pod for kubectl's binding.
TEST_F(KubectlTest, BoundPodBecomesRunningAndReady) {
  auto r = K({"create", "-f", cluster_->WriteFile("sim.yaml", R"(apiVersion: v1
kind: Pod
metadata:
  name: sim
spec:
  schedulerName: bound-by-hand
  containers:
  - name: main
    image: registry.k8s.io/pause:3.10
)")});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string binding = cluster_->WriteFile(
      "binding.json",
      R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"sim"},"target":{"apiVersion":"v1","kind":"Node","name":"node-3"}})");
  r = K({"create", "--raw", "/api/v1/namespaces/default/pods/sim/binding", "-f", binding});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = K({"wait", "--for=condition=Ready", "pod/sim", "--timeout=30s"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  json pod = GetJson({"pod", "sim"});
  EXPECT_EQ(pod["spec"]["nodeName"], "node-3");
  EXPECT_EQ(pod["status"]["phase"], "Running");
  // A second bind is a conflict.
  r = K({"create", "--raw", "/api/v1/namespaces/default/pods/sim/binding", "-f", binding});
  EXPECT_NE(r.exit_code, 0) << r.out;
}

TEST_F(KubectlTest, BadInputIsRejectedAndChangesNothing) {
  auto r = K({"create", "-f", cluster_->WriteFile("bad.yaml", R"(apiVersion: v1
kind: Pod
metadata:
  name: Bad_Name
spec:
  containers:
  - name: main
    image: x
)")});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("metadata.name"), std::string::npos) << r.out;
  r = K({"get", "pods", "-o", "name"});
  EXPECT_EQ(r.out.find("Bad_Name"), std::string::npos) << r.out;
  r = K({"get", "pods", "-l", "a in (b"});
  EXPECT_NE(r.exit_code, 0) << r.out;
  r = K({"get", "frobnicators"});
  EXPECT_NE(r.exit_code, 0) << r.out;
}

}  // namespace
}  // namespace copse::e2e
