// End to end: `copse local --client-ca-file` authenticates kubectl by a
// client certificate that CA signed (kube-apiserver's --client-ca-file), and
// only by one it signed. Certificates come from the openssl command line.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "tests/e2e/kubectl/harness.h"
#include "tests/support/paths.h"

namespace copse::e2e {
namespace {

using nlohmann::json;

// A CA and a client certificate it signs, as PEM files in `dir`.
void MakePki(const std::string& dir, const std::string& name) {
  const std::string ca = dir + "/" + name + "-ca";
  const std::string client = dir + "/" + name + "-client";
  CommandResult r =
      RunCommand({"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                  ca + ".key", "-out", ca + ".crt", "-subj", "/CN=" + name + "-ca", "-days", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = RunCommand({"openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", client + ".key",
                  "-out", client + ".csr", "-subj", "/CN=" + name});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = RunCommand({"openssl", "x509", "-req", "-in", client + ".csr", "-CA", ca + ".crt", "-CAkey",
                  ca + ".key", "-CAcreateserial", "-out", client + ".crt", "-days", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
}

// A kubeconfig for the cluster's server with the given client certificate
// (none when `name` is empty) and no token.
std::string CertificateKubeconfig(LocalCluster& cluster, const std::string& dir,
                                  const std::string& name) {
  CommandResult view = cluster.Kubectl({"config", "view", "--raw", "-o", "json"});
  EXPECT_EQ(view.exit_code, 0) << view.out;
  const json config = json::parse(view.out, nullptr, false);
  json user = json::object();
  if (!name.empty()) {
    user["client-certificate"] = dir + "/" + name + "-client.crt";
    user["client-key"] = dir + "/" + name + "-client.key";
  }
  const json out = {{"apiVersion", "v1"},
                    {"kind", "Config"},
                    {"clusters", {{{"name", "c"}, {"cluster", config["clusters"][0]["cluster"]}}}},
                    {"users", {{{"name", "u"}, {"user", user}}}},
                    {"contexts", {{{"name", "x"}, {"context", {{"cluster", "c"}, {"user", "u"}}}}}},
                    {"current-context", "x"}};
  const std::string path = dir + "/" + (name.empty() ? "anonymous" : name) + ".kubeconfig";
  std::ofstream(path) << out.dump();
  return path;
}

TEST(ClientCaE2E, OnlyCertificatesTheCaSignedAuthenticate) {
  ASSERT_TRUE(HaveKubectl()) << "kubectl not found: scripts/setup.sh installs it";
  char tmpl[] = "/tmp/copse-client-ca-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  MakePki(dir, "alice");    // signed by the CA copse local trusts
  MakePki(dir, "mallory");  // signed by another CA
  {
    LocalCluster cluster({"--nodes", "1", "--client-ca-file", dir + "/alice-ca.crt"});
    ASSERT_TRUE(cluster.ready()) << cluster.startup_output();

    const std::string alice = CertificateKubeconfig(cluster, dir, "alice");
    CommandResult r = RunCommand({"kubectl", "--kubeconfig", alice, "get", "nodes", "-o", "name"});
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("node/"), std::string::npos) << r.out;

    const std::string anonymous = CertificateKubeconfig(cluster, dir, "");
    r = RunCommand({"kubectl", "--kubeconfig", anonymous, "get", "nodes"});
    EXPECT_NE(r.exit_code, 0) << "no certificate and no token must not get in: " << r.out;

    const std::string mallory = CertificateKubeconfig(cluster, dir, "mallory");
    r = RunCommand({"kubectl", "--kubeconfig", mallory, "get", "nodes"});
    EXPECT_NE(r.exit_code, 0) << "a certificate from another CA must not get in: " << r.out;

    // The token still works beside certificates.
    r = cluster.Kubectl({"get", "nodes", "-o", "name"});
    EXPECT_EQ(r.exit_code, 0) << r.out;
  }
  std::filesystem::remove_all(dir);
}

// The HTTP status curl got for GET <url>/api/v1/nodes with the client
// certificate of `name` (none when empty); "000" when the TLS handshake
// failed.
std::string CurlStatus(const std::string& url, const std::string& dir, const std::string& name) {
  std::vector<std::string> argv = {"curl", "-s",           "-k",         "-o", "/dev/null",
                                   "-w",   "%{http_code}", "--max-time", "10"};
  if (!name.empty()) {
    argv.insert(argv.end(), {"--cert", dir + "/" + name + "-client.crt", "--key",
                             dir + "/" + name + "-client.key"});
  }
  argv.push_back(url + "/api/v1/nodes");
  return RunCommand(argv).out;
}

// --client-ca-file with --no-token: a certificate the CA signed is the only
// way in (kube-apiserver would make the rest system:anonymous, which copse
// local authorizes for nothing: 401), over HTTPS and plain HTTP alike, while
// copse local's own components still work (a pod gets scheduled).
TEST(ClientCaE2E, WithoutATokenACertificateIsRequired) {
  ASSERT_TRUE(HaveKubectl()) << "kubectl not found: scripts/setup.sh installs it";
  ASSERT_EQ(RunCommand({"curl", "--version"}).exit_code, 0) << "curl not found";
  char tmpl[] = "/tmp/copse-client-ca-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  MakePki(dir, "alice");
  MakePki(dir, "mallory");
  {
    LocalCluster cluster({"--nodes", "1", "--no-token", "--client-ca-file", dir + "/alice-ca.crt"});
    ASSERT_TRUE(cluster.ready()) << cluster.startup_output();
    // "copse local: API server https://127.0.0.1:P (plain HTTP http://127.0.0.1:Q), ..."
    const std::string out = cluster.startup_output();
    static const std::regex kUrls(
        R"(API server (https://[0-9.:]+) \(plain HTTP (http://[0-9.:]+)\))");
    std::smatch urls;
    ASSERT_TRUE(std::regex_search(out, urls, kUrls)) << out;
    const std::string https = urls[1];
    const std::string http = urls[2];

    EXPECT_EQ(CurlStatus(https, dir, ""), "401") << "no certificate must not get in";
    EXPECT_EQ(CurlStatus(http, "", ""), "401") << "nor over plain HTTP";
    EXPECT_EQ(CurlStatus(https, dir, "mallory"), "000")
        << "a certificate from another CA fails the handshake";
    EXPECT_EQ(CurlStatus(https, dir, "alice"), "200");
    EXPECT_EQ(RunCommand({"curl", "-s", "-k", "-o", "/dev/null", "-w", "%{http_code}", "--max-time",
                          "10", https + "/healthz"})
                  .out,
              "200")
        << "health checks need no authentication";

    // kubectl the same way.
    const std::string anonymous = CertificateKubeconfig(cluster, dir, "");
    CommandResult r = RunCommand({"kubectl", "--kubeconfig", anonymous, "get", "nodes"});
    EXPECT_NE(r.exit_code, 0) << "no certificate must not get in: " << r.out;
    const std::string mallory = CertificateKubeconfig(cluster, dir, "mallory");
    r = RunCommand({"kubectl", "--kubeconfig", mallory, "get", "nodes"});
    EXPECT_NE(r.exit_code, 0) << "a certificate from another CA must not get in: " << r.out;
    const std::string alice = CertificateKubeconfig(cluster, dir, "alice");
    r = RunCommand({"kubectl", "--kubeconfig", alice, "get", "nodes", "-o", "name"});
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("node/"), std::string::npos) << r.out;
    r = RunCommand(
        {"kubectl", "--kubeconfig", alice, "run", "p", "--image=pause", "--restart=Never"});
    ASSERT_EQ(r.exit_code, 0) << r.out;
    r = RunCommand({"kubectl", "--kubeconfig", alice, "wait", "--for=condition=PodScheduled",
                    "pod/p", "--timeout=30s"});
    EXPECT_EQ(r.exit_code, 0) << "the scheduler must still reach the API server: " << r.out;
  }
  std::filesystem::remove_all(dir);
}

TEST(ClientCaE2E, AMissingCaFileIsAClearError) {
  CommandResult r = RunCommand({COPSE_BINARY, "local", "--client-ca-file", "/nonexistent/ca.crt"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("--client-ca-file"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace copse::e2e
