// `copse grove` as the operator Deployment of deploy/manifests runs it, against
// `copse local --no-grove`, checked with kubectl and curl:
//   - it takes the Lease copse-system/copse-grove;
//   - it makes the webhook's Secret copse-grove-webhook-cert (ca.crt, ca.key,
//     tls.crt, tls.key) and serves its certificate: curl, trusting only the
//     Secret's ca.crt, reaches the webhook as copse-grove-webhook.copse-system.svc;
//   - the ValidatingWebhookConfiguration of deploy/manifests (applied with
//     kubectl, no caBundle) gets caBundle = the Secret's ca.crt, and again
//     after `kubectl apply` resets it;
//   - the startup-order init container's image is the operator's own, read
//     from its Pod (POD_NAME/POD_NAMESPACE as the Deployment sets them).

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/e2e/kubectl/harness.h"
#include "tests/e2e/kubectl/kubectl_json.h"
#include "tests/support/paths.h"

namespace copse::e2e {
namespace {

using json = nlohmann::json;

// A port nothing listens on right now.
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

// The operator's own Pod as the API server would hold it: a sidecar next to
// the operator container, whose image the init container must reuse.
constexpr char kOwnPod[] = R"({
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "copse-grove-operator-abc12", "namespace": "copse-system"},
  "spec": {"containers": [
    {"name": "proxy", "image": "docker.io/library/busybox:1.36", "args": ["sleep", "infinity"]},
    {"name": "copse-grove-operator", "image": "registry.example.com/copse:e2e",
     "command": ["copse"], "args": ["grove", "--in-cluster"]}
  ]}
})";

class GroveOperator : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(HaveKubectl()) << "kubectl is required";
    ASSERT_EQ(RunCommand({"curl", "--version"}).exit_code, 0) << "curl is required";
    ASSERT_TRUE(cluster_.ready()) << cluster_.startup_output();
    auto ns = cluster_.Kubectl({"create", "namespace", "copse-system"});
    ASSERT_EQ(ns.exit_code, 0) << ns.out;
  }

  std::string SecretData(const std::string& key) {
    json secret = GetJson(cluster_, {"secret", "-n", "copse-system", "copse-grove-webhook-cert"});
    if (!secret.is_object() || !secret["data"].contains(key)) return "";
    return secret["data"][key];
  }

  // caBundle of each webhook of copse-grove ("" where missing).
  std::vector<std::string> CaBundles() {
    std::vector<std::string> out;
    json config = GetJson(cluster_, {"validatingwebhookconfiguration", "copse-grove"});
    if (!config.is_object()) return out;
    for (const json& hook : config["webhooks"]) {
      out.push_back(hook["clientConfig"].value("caBundle", std::string()));
    }
    return out;
  }

  LocalCluster cluster_{{"--no-grove", "--no-scheduler"}};
};

TEST_F(GroveOperator, LeaseWebhookCertificateCaBundleAndInitcImage) {
  const std::string pod_file = cluster_.WriteFile("own-pod.json", kOwnPod);
  auto pod = cluster_.Kubectl({"create", "-f", pod_file});
  ASSERT_EQ(pod.exit_code, 0) << pod.out;
  // The webhook configuration of deploy/manifests, as `kubectl apply -k` creates it.
  const std::string webhook_yaml =
      std::string(COPSE_SOURCE_DIR) + "/deploy/manifests/base/grove/webhook.yaml";
  auto applied = cluster_.Kubectl({"apply", "-f", webhook_yaml});
  ASSERT_EQ(applied.exit_code, 0) << applied.out;

  const int webhook_port = FreePort();
  Process grove({COPSE_BINARY, "grove", "--kubeconfig", cluster_.kubeconfig(), "--install-crds",
                 "--leader-elect", "--webhook-address", "127.0.0.1", "--webhook-port",
                 std::to_string(webhook_port)},
                {"POD_NAME=copse-grove-operator-abc12", "POD_NAMESPACE=copse-system"});
  ASSERT_TRUE(grove.WaitForLine("operator running", std::chrono::seconds(90))) << grove.seen();
  EXPECT_NE(grove.seen().find(
                "startup-order init container image registry.example.com/copse:e2e (own pod)"),
            std::string::npos)
      << grove.seen();
  auto holder = cluster_.Kubectl({"get", "lease", "-n", "copse-system", "copse-grove", "-o",
                                  "jsonpath={.spec.holderIdentity}"});
  EXPECT_EQ(holder.exit_code, 0) << holder.out;
  EXPECT_FALSE(holder.out.empty());

  ASSERT_TRUE(Eventually([&] {
    for (const char* key : {"ca.crt", "ca.key", "tls.crt", "tls.key"}) {
      if (SecretData(key).empty()) return false;
    }
    return true;
  })) << grove.seen();
  const std::string ca = SecretData("ca.crt");

  // The caBundle is the Secret's CA (both base64 of the same PEM).
  ASSERT_TRUE(Eventually([&] { return CaBundles() == std::vector<std::string>{ca}; }))
      << grove.seen();

  // The webhook serves the Secret's certificate, for the Service's DNS name.
  const std::string ca_file = cluster_.dir() + "/webhook-ca.crt";
  auto decoded = RunCommand({"bash", "-c", "echo '" + ca + "' | base64 -d > '" + ca_file + "'"});
  ASSERT_EQ(decoded.exit_code, 0) << decoded.out;
  const std::string host = "copse-grove-webhook.copse-system.svc";
  const std::string port = std::to_string(webhook_port);
  std::string last;
  EXPECT_TRUE(Eventually([&] {
    auto r = RunCommand({"curl", "-sS", "--max-time", "5", "--cacert", ca_file, "--resolve",
                         host + ":" + port + ":127.0.0.1", "-o", "/dev/null", "-w", "%{http_code}",
                         "https://" + host + ":" + port + "/healthz"});
    last = r.out;
    return r.exit_code == 0 && r.out == "200";
  })) << last;

  // `kubectl apply` of the manifest drops the caBundle again: it comes back.
  auto reset =
      cluster_.Kubectl({"patch", "validatingwebhookconfiguration", "copse-grove", "--type", "json",
                        "-p", R"([{"op":"remove","path":"/webhooks/0/clientConfig/caBundle"}])"});
  ASSERT_EQ(reset.exit_code, 0) << reset.out;
  EXPECT_TRUE(Eventually([&] { return CaBundles() == std::vector<std::string>{ca}; }))
      << grove.seen();

  grove.Kill();
  EXPECT_EQ(grove.Wait(), 0) << grove.seen();
}

// The Deployment's probes: every replica answers /healthz on its ops port, so
// the kubelet never restarts a follower; /readyz passes only on the leader
// once it serves, so the Service sends webhook calls to the leader alone.
TEST_F(GroveOperator, FollowerIsAliveButNotReady) {
  const int leader_ops = FreePort();
  Process leader({COPSE_BINARY, "grove", "--kubeconfig", cluster_.kubeconfig(), "--install-crds",
                  "--leader-elect", "--ops-address", "127.0.0.1", "--ops-port",
                  std::to_string(leader_ops)});
  ASSERT_TRUE(leader.WaitForLine("operator running", std::chrono::seconds(90))) << leader.seen();
  const int follower_ops = FreePort();
  Process follower({COPSE_BINARY, "grove", "--kubeconfig", cluster_.kubeconfig(), "--leader-elect",
                    "--ops-address", "127.0.0.1", "--ops-port", std::to_string(follower_ops)});
  ASSERT_TRUE(follower.WaitForLine("waiting for the leader lease", std::chrono::seconds(60)))
      << follower.seen();

  auto get = [](int port, const std::string& path) {
    return RunCommand({"curl", "-sS", "--max-time", "5", "-w", "\n%{http_code}",
                       "http://127.0.0.1:" + std::to_string(port) + path});
  };
  auto code = [](const CommandResult& r) { return r.out.substr(r.out.rfind('\n') + 1); };
  std::string last;
  ASSERT_TRUE(Eventually([&] {
    auto r = get(follower_ops, "/healthz");
    last = r.out;
    return r.exit_code == 0 && code(r) == "200";
  })) << last
      << follower.seen();
  auto follower_ready = get(follower_ops, "/readyz");
  EXPECT_EQ(code(follower_ready), "500") << follower_ready.out;
  EXPECT_NE(follower_ready.out.find("waiting for the leader lease"), std::string::npos)
      << follower_ready.out;
  auto leader_ready = get(leader_ops, "/readyz");
  EXPECT_EQ(code(leader_ready), "200") << leader_ready.out;

  follower.Kill();
  leader.Kill();
  EXPECT_EQ(follower.Wait(), 0) << follower.seen();
  EXPECT_EQ(leader.Wait(), 0) << leader.seen();
}

}  // namespace
}  // namespace copse::e2e
