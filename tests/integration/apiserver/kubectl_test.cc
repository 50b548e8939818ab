// The real kubectl (v1.32) against the embedded API server over HTTPS with
// the server's kubeconfig: discovery, create, get (server-side Tables),
// label, annotate, patch, apply, cordon, delete, get -w.
// Fails (never skips) when kubectl is not installed: scripts/setup.sh installs it.

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "tests/integration/apiserver/test_util.h"

namespace copse::apiserver::testing {
namespace {

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

class KubectlTest : public ApiServerTest {
 protected:
  void SetUp() override {
    ASSERT_EQ(std::system("command -v kubectl > /dev/null 2>&1"), 0)
        << "kubectl not found: scripts/setup.sh installs it";
    Options options;
    options.token = "kubectl-token";
    StartServer(options);
    client_ = std::make_unique<HttpClient>(server_->http_port(),
                                           ClientOptions{"kubectl-token", false, ""});
    char tmpl[] = "/tmp/copse-kubectl-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    std::ofstream(dir_ + "/kubeconfig") << server_->Kubeconfig();
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  CommandResult Kubectl(const std::string& args, const std::string& prefix = "") {
    const std::string cmd = prefix + "kubectl --kubeconfig " + dir_ + "/kubeconfig --cache-dir " +
                            dir_ + "/cache " + args + " 2>&1";
    CommandResult result;
    FILE* pipe = popen(cmd.c_str(), "r");
    if (pipe == nullptr) return result;
    std::array<char, 4096> buf;
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) result.output.append(buf.data(), n);
    const int status = pclose(pipe);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
  }

  std::string WriteFile(const std::string& name, const std::string& content) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << content;
    return path;
  }

  std::string dir_;
};

TEST_F(KubectlTest, EverydayCommands) {
  auto ns = Kubectl("get namespaces");
  ASSERT_EQ(ns.exit_code, 0) << ns.output;
  EXPECT_NE(ns.output.find("kube-system"), std::string::npos) << ns.output;
  EXPECT_NE(ns.output.find("STATUS"), std::string::npos) << ns.output;

  const std::string pod = WriteFile("pod.yaml", R"(apiVersion: v1
kind: Pod
metadata:
  name: kubectl-pod
  labels:
    app: demo
spec:
  containers:
  - name: main
    image: registry.k8s.io/pause:3.9
)");
  auto created = Kubectl("create -f " + pod);
  ASSERT_EQ(created.exit_code, 0) << created.output;
  EXPECT_EQ(created.output, "pod/kubectl-pod created\n");

  auto get = Kubectl("get pods");
  ASSERT_EQ(get.exit_code, 0) << get.output;
  EXPECT_NE(get.output.find("kubectl-pod"), std::string::npos) << get.output;
  EXPECT_NE(get.output.find("Pending"), std::string::npos) << get.output;

  auto json_out = Kubectl("get pod kubectl-pod -o json");
  ASSERT_EQ(json_out.exit_code, 0) << json_out.output;
  EXPECT_EQ(json::parse(json_out.output)["metadata"]["labels"]["app"], "demo");

  EXPECT_EQ(Kubectl("label pod kubectl-pod tier=web").exit_code, 0);
  EXPECT_EQ(Kubectl("annotate pod kubectl-pod note=hello").exit_code, 0);
  auto patched = Kubectl("patch pod kubectl-pod -p '{\"metadata\":{\"labels\":{\"x\":\"y\"}}}'");
  EXPECT_EQ(patched.exit_code, 0) << patched.output;
  auto pod_json = client().Get("/api/v1/namespaces/default/pods/kubectl-pod").Json();
  EXPECT_EQ(pod_json["metadata"]["labels"]["tier"], "web");
  EXPECT_EQ(pod_json["metadata"]["labels"]["x"], "y");
  EXPECT_EQ(pod_json["metadata"]["annotations"]["note"], "hello");

  auto selected = Kubectl("get pods -l tier=web -o name");
  EXPECT_EQ(selected.output, "pod/kubectl-pod\n");

  // apply: create, then change.
  const std::string cm = WriteFile("cm.yaml", R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: applied
data:
  a: "1"
)");
  auto applied = Kubectl("apply -f " + cm);
  ASSERT_EQ(applied.exit_code, 0) << applied.output;
  EXPECT_EQ(applied.output, "configmap/applied created\n");
  WriteFile("cm.yaml", R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: applied
data:
  a: "2"
  b: "3"
)");
  auto reapplied = Kubectl("apply -f " + cm);
  ASSERT_EQ(reapplied.exit_code, 0) << reapplied.output;
  EXPECT_EQ(reapplied.output, "configmap/applied configured\n");
  auto cm_json = client().Get("/api/v1/namespaces/default/configmaps/applied").Json();
  EXPECT_EQ(cm_json["data"]["a"], "2");
  EXPECT_EQ(cm_json["data"]["b"], "3");

  // cordon a node.
  json node = {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "kn-1"}}}};
  ASSERT_EQ(client().Post("/api/v1/nodes", node).status, 201);
  auto cordon = Kubectl("cordon kn-1");
  ASSERT_EQ(cordon.exit_code, 0) << cordon.output;
  EXPECT_EQ(client().Get("/api/v1/nodes/kn-1").Json()["spec"]["unschedulable"], true);
  auto nodes = Kubectl("get nodes");
  EXPECT_NE(nodes.output.find("SchedulingDisabled"), std::string::npos) << nodes.output;

  // get -w prints the existing pod and then changes, until the timeout.
  auto watched = Kubectl("get pods -w --request-timeout=2s", "timeout 3 ");
  EXPECT_NE(watched.output.find("kubectl-pod"), std::string::npos) << watched.output;
  EXPECT_EQ(watched.output.find("rror"), std::string::npos) << watched.output;

  auto deleted = Kubectl("delete pod kubectl-pod");
  ASSERT_EQ(deleted.exit_code, 0) << deleted.output;
  EXPECT_EQ(deleted.output, "pod \"kubectl-pod\" deleted\n");
  EXPECT_EQ(client().Get("/api/v1/namespaces/default/pods/kubectl-pod").status, 404);

  auto missing = Kubectl("get pod nope");
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.output.find("pods \"nope\" not found"), std::string::npos) << missing.output;
}

TEST_F(KubectlTest, CustomResources) {
  const std::string crd = WriteFile("crd.yaml", R"(apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, shortNames: [gd]}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
)");
  auto created = Kubectl("apply -f " + crd);
  ASSERT_EQ(created.exit_code, 0) << created.output;
  const std::string gadget = WriteFile("gadget.yaml", R"(apiVersion: example.com/v1
kind: Gadget
metadata:
  name: g1
spec:
  size: 7
)");
  auto cr = Kubectl("apply -f " + gadget);
  ASSERT_EQ(cr.exit_code, 0) << cr.output;
  EXPECT_EQ(cr.output, "gadget.example.com/g1 created\n");
  EXPECT_EQ(Kubectl("apply -f " + gadget).output, "gadget.example.com/g1 unchanged\n");
  auto get = Kubectl("get gd");
  ASSERT_EQ(get.exit_code, 0) << get.output;
  EXPECT_NE(get.output.find("SIZE"), std::string::npos) << get.output;
  EXPECT_NE(get.output.find("g1"), std::string::npos) << get.output;
  auto merged = Kubectl("patch gadget g1 --type=merge -p '{\"spec\":{\"size\":9}}'");
  EXPECT_EQ(merged.exit_code, 0) << merged.output;
  auto deleted = Kubectl("delete crd gadgets.example.com");
  EXPECT_EQ(deleted.exit_code, 0) << deleted.output;
}

}  // namespace
}  // namespace copse::apiserver::testing
