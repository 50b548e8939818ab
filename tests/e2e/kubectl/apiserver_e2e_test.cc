// End to end: kubectl v1.32's API-server-facing commands against
// `copse local`: auth can-i (authorization reviews), explain (OpenAPI),
// apply --server-side (field managers and conflicts, with the managers of
// kubectl's other writes) and --validate (server-side field validation).

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/e2e/kubectl/harness.h"

namespace copse::e2e {
namespace {

using nlohmann::json;

class KubectlApiServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // This test needs kubectl: without it, it fails.
    if (!HaveKubectl()) return;
    cluster_ = new LocalCluster({"--nodes", "2"});
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }
  void SetUp() override {
    ASSERT_TRUE(HaveKubectl()) << "kubectl is required for this test";
    ASSERT_NE(cluster_, nullptr);
    ASSERT_TRUE(cluster_->ready()) << cluster_->startup_output();
  }

  static CommandResult K(const std::vector<std::string>& args, const std::string& in = {}) {
    return cluster_->Kubectl(args, in);
  }

  static LocalCluster* cluster_;
};
LocalCluster* KubectlApiServerTest::cluster_ = nullptr;

TEST_F(KubectlApiServerTest, AuthCanI) {
  CommandResult r = K({"auth", "can-i", "create", "pods"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "yes\n");
  r = K({"auth", "can-i", "delete", "podgroups.scheduling.copse.dev", "-n", "kube-system"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "yes\n");

  r = K({"auth", "can-i", "--list"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  // The header and the admin's rules: every verb on every resource and URL.
  EXPECT_NE(r.out.find("Resources"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Non-Resource URLs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("*.*"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[*]"), std::string::npos) << r.out;
}

TEST_F(KubectlApiServerTest, ExplainBuiltinsAndCrds) {
  CommandResult r = K({"explain", "pod.spec.schedulerName"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("Pod"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("schedulerName <string>"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("default-scheduler"), std::string::npos) << r.out;

  // copse's CRD, from its schema in deploy/crds.
  r = K({"explain", "podgroups.scheduling.copse.dev.spec.minMember"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("PodGroup"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("minMember <integer>"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Descendant pods that must be placed together"), std::string::npos) << r.out;

  // A type's fields, nested through references, and a Grove CRD.
  r = K({"explain", "deployment.spec.strategy.rollingUpdate"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("maxSurge"), std::string::npos) << r.out;
  r = K({"explain", "jobs.spec.completionMode"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  r = K({"explain", "nodes.status.allocatable"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  r = K({"explain", "podcliquesets.grove.io.spec"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("FIELDS:"), std::string::npos) << r.out;

  // A field that does not exist is named.
  r = K({"explain", "pod.spec.noSuchField"});
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("noSuchField"), std::string::npos) << r.out;
}

TEST_F(KubectlApiServerTest, ServerSideApplyConflictBetweenManagers) {
  const std::string alice = cluster_->WriteFile("alice.yaml", R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: ssa
  namespace: default
data:
  color: red
  shape: round
)");
  const std::string bob = cluster_->WriteFile("bob.yaml", R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: ssa
  namespace: default
data:
  color: blue
)");
  // Apply to a missing object creates it.
  CommandResult r = K({"apply", "--server-side", "--field-manager=alice", "-f", alice});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("serverside-applied"), std::string::npos) << r.out;

  // bob changes a field alice owns: refused, naming the field and its manager.
  r = K({"apply", "--server-side", "--field-manager=bob", "-f", bob});
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("conflict with \"alice\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(".data.color"), std::string::npos) << r.out;
  r = K({"get", "configmap", "ssa", "-n", "default", "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(json::parse(r.out)["data"]["color"], "red");

  // --force-conflicts takes the field; both managers stay recorded.
  r = K({"apply", "--server-side", "--field-manager=bob", "--force-conflicts", "-f", bob});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = K({"get", "configmap", "ssa", "-n", "default", "-o", "json", "--show-managed-fields"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json cm = json::parse(r.out);
  EXPECT_EQ(cm["data"]["color"], "blue");
  EXPECT_EQ(cm["data"]["shape"], "round");
  json owners = json::object();
  for (const json& entry : cm["metadata"]["managedFields"]) {
    EXPECT_EQ(entry["operation"], "Apply") << entry.dump();
    owners[entry["manager"].get<std::string>()] = entry["fieldsV1"];
  }
  ASSERT_TRUE(owners.contains("alice")) << cm.dump();
  ASSERT_TRUE(owners.contains("bob")) << cm.dump();
  EXPECT_TRUE(owners["bob"]["f:data"].contains("f:color")) << cm.dump();
  EXPECT_FALSE(owners["alice"]["f:data"].contains("f:color")) << cm.dump();
  EXPECT_TRUE(owners["alice"]["f:data"].contains("f:shape")) << cm.dump();

  // alice stops applying shape: it is removed (nobody else owns it).
  const std::string alice2 = cluster_->WriteFile("alice2.yaml", R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: ssa
  namespace: default
data:
  size: big
)");
  r = K({"apply", "--server-side", "--field-manager=alice", "-f", alice2});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = K({"get", "configmap", "ssa", "-n", "default", "-o", "json"});
  const json after = json::parse(r.out);
  EXPECT_FALSE(after["data"].contains("shape")) << r.out;
  EXPECT_EQ(after["data"]["color"], "blue");
  EXPECT_EQ(after["data"]["size"], "big");
}

TEST_F(KubectlApiServerTest, ImperativeWritesOwnTheirFieldsAndApplyConflictsWithThem) {
  CommandResult r = K({"create", "deployment", "owned", "--image=nginx", "--replicas=1"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = K({"get", "deployment", "owned", "-o", "json", "--show-managed-fields"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json created = json::parse(r.out);
  bool found = false;
  for (const json& entry : created["metadata"]["managedFields"]) {
    if (entry["manager"] != "kubectl-create") continue;
    found = true;
    EXPECT_EQ(entry["operation"], "Update") << entry.dump();
    EXPECT_TRUE(entry["fieldsV1"]["f:spec"].contains("f:replicas")) << entry.dump();
  }
  EXPECT_TRUE(found) << created["metadata"].dump();

  // An apply that changes the replicas kubectl-create set conflicts with it.
  const std::string manifest = cluster_->WriteFile("owned.yaml", R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: owned
  namespace: default
spec:
  replicas: 2
  selector:
    matchLabels: {app: owned}
  template:
    metadata:
      labels: {app: owned}
    spec:
      containers:
      - name: nginx
        image: nginx
)");
  r = K({"apply", "--server-side", "--field-manager=ops", "-f", manifest});
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("conflict with \"kubectl-create\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(".spec.replicas"), std::string::npos) << r.out;
  r = K({"get", "deployment", "owned", "-o", "jsonpath={.spec.replicas}"});
  EXPECT_EQ(r.out, "1");

  r = K({"apply", "--server-side", "--field-manager=ops", "--force-conflicts", "-f", manifest});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = K({"get", "deployment", "owned", "-o", "json", "--show-managed-fields"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json taken = json::parse(r.out);
  EXPECT_EQ(taken["spec"]["replicas"], 2);
  for (const json& entry : taken["metadata"]["managedFields"]) {
    if (entry["manager"] == "kubectl-create") {
      EXPECT_FALSE(entry["fieldsV1"]["f:spec"].contains("f:replicas")) << entry.dump();
    }
  }

  // A later imperative write takes the field back from the applier.
  r = K({"patch", "deployment", "owned", "-p", R"({"spec":{"replicas":3}})"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = K({"apply", "--server-side", "--field-manager=ops", "-f", manifest});
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("conflict with \"kubectl-patch\""), std::string::npos) << r.out;
}

TEST_F(KubectlApiServerTest, ValidateStrictRefusesUnknownAndDuplicateFields) {
  const std::string pod = cluster_->WriteFile("strict-pod.yaml", R"(apiVersion: v1
kind: Pod
metadata:
  name: strict-pod
spec:
  bogusField: 1
  containers:
  - name: c
    image: nginx
    imagePullPolicyy: Always
)");
  // kubectl's default is --validate=strict: the server refuses and names both fields.
  CommandResult r = K({"create", "-f", pod});
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("strict decoding error"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("unknown field \"spec.bogusField\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("unknown field \"spec.containers[0].imagePullPolicyy\""), std::string::npos)
      << r.out;
  r = K({"get", "pod", "strict-pod"});
  EXPECT_NE(r.exit_code, 0) << "refused, so not created: " << r.out;

  // --validate=warn writes it and prints the server's warnings.
  r = K({"apply", "--validate=warn", "-f", pod});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("Warning: unknown field \"spec.bogusField\""), std::string::npos) << r.out;
  r = K({"get", "pod", "strict-pod"});
  EXPECT_EQ(r.exit_code, 0) << r.out;

  // Custom resources are checked against their CRD's schema.
  const std::string group =
      cluster_->WriteFile("strict-pg.yaml", R"(apiVersion: scheduling.copse.dev/v1alpha1
kind: PodGroup
metadata:
  name: strict-pg
spec:
  minMember: 2
  minMembr: 3
)");
  r = K({"create", "-f", group});
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("unknown field \"spec.minMembr\""), std::string::npos) << r.out;
  r = K({"create", "--validate=false", "-f", group});
  EXPECT_EQ(r.exit_code, 0) << r.out;
}

}  // namespace
}  // namespace copse::e2e
