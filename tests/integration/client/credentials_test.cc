// Credentials real kubeconfigs use, against the embedded API server: client
// certificates (the server checks them against a client CA, as
// kube-apiserver's --client-ca-file) and exec credential plugins (a shell
// script that prints an ExecCredential and counts its runs).

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "core/clock.h"
#include "kube/certificates.h"
#include "kube/exec_credential.h"
#include "tests/integration/client/fixture.h"
#include "tests/unit/kube_client/test_util.h"

namespace copse::kube {
namespace {

using nlohmann::json;
using std::chrono::seconds;
using testing::TempDir;

CertificateRequest Request(std::string cn, bool is_ca) {
  CertificateRequest request;
  request.common_name = std::move(cn);
  request.is_ca = is_ca;
  request.server_auth = false;
  request.client_auth = !is_ca;
  const auto now = std::chrono::system_clock::now();
  request.not_before = now - std::chrono::hours(1);
  request.not_after = now + std::chrono::hours(24);
  return request;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// ---------------------------------------------------------------- client certificates

class ClientCertificates : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ca = IssueCertificate(Request("client-ca", true));
    ASSERT_TRUE(ca.ok()) << ca.error().ToString();
    client_ca_ = *ca;
    apiserver::Options options;
    options.token = "s3cret";
    options.client_ca_pem = client_ca_.cert_pem;
    server_ = testing::StartServer(options);
    ASSERT_NE(server_, nullptr);
  }

  // A kubeconfig whose user has `user_yaml` (indented under `user:`).
  std::string Kubeconfig(const std::string& cluster_extra, const std::string& user_yaml) {
    return "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
           "clusters:\n- name: k\n  cluster:\n    server: " +
           server_->https_url() + "\n" + cluster_extra +
           "contexts:\n- name: c\n  context: {cluster: k, user: u}\n"
           "users:\n- name: u\n  user:\n" +
           user_yaml;
  }

  Result<std::string> GetNamespace(const std::string& kubeconfig_path) {
    auto config = LoadKubeconfigFile(kubeconfig_path);
    if (!config.ok()) return config.error();
    auto client = Client::Create(*config, io_.executor());
    if (!client.ok()) return client.error();
    return io_.Run((*client)->Get(resources::kNamespaces, "", "default"));
  }

  CertificateAndKey client_ca_;
  TempDir dir_;
  IoThread io_;
  std::unique_ptr<apiserver::ApiServer> server_;
};

TEST_F(ClientCertificates, ACertificateFromFilesAuthenticatesWithoutAToken) {
  auto cert = IssueCertificate(Request("copse-scheduler", false), &client_ca_);
  ASSERT_TRUE(cert.ok());
  dir_.Write("certs/client.crt", cert->cert_pem);
  dir_.Write("certs/client.key", cert->key_pem);
  dir_.Write("certs/ca.crt", server_->ca_pem());
  // Paths relative to the kubeconfig, as kubectl resolves them.
  const std::string path =
      dir_.Write("kubeconfig", Kubeconfig("    certificate-authority: certs/ca.crt\n",
                                          "    client-certificate: certs/client.crt\n"
                                          "    client-key: certs/client.key\n"));
  auto got = GetNamespace(path);
  ASSERT_TRUE(got.ok()) << got.error().ToString();
  EXPECT_EQ(testing::Meta(*got).name, "default");

  // The same kubeconfig without the certificate: the token is still required.
  const std::string bare =
      dir_.Write("bare", Kubeconfig("    certificate-authority: certs/ca.crt\n", "    {}\n"));
  auto denied = GetNamespace(bare);
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.error().code, ErrorCode::kUnauthorized);
}

TEST_F(ClientCertificates, InlineDataAndInsecureSkipTlsVerify) {
  auto cert = IssueCertificate(Request("copse-grove", false), &client_ca_);
  ASSERT_TRUE(cert.ok());
  // No CA for the server at all: insecure-skip-tls-verify.
  const std::string path = dir_.Write(
      "kubeconfig", Kubeconfig("    insecure-skip-tls-verify: true\n",
                               "    client-certificate-data: " + EncodeBase64(cert->cert_pem) +
                                   "\n    client-key-data: " + EncodeBase64(cert->key_pem) + "\n"));
  auto got = GetNamespace(path);
  ASSERT_TRUE(got.ok()) << got.error().ToString();

  // Without insecure-skip-tls-verify the server's self-signed certificate is
  // checked against the system trust store, and fails.
  const std::string verified = dir_.Write(
      "verified",
      Kubeconfig("", "    client-certificate-data: " + EncodeBase64(cert->cert_pem) +
                         "\n    client-key-data: " + EncodeBase64(cert->key_pem) + "\n"));
  auto refused = GetNamespace(verified);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kTls);
}

TEST_F(ClientCertificates, ACertificateFromAnotherCaIsRefused) {
  auto other_ca = IssueCertificate(Request("other-ca", true));
  ASSERT_TRUE(other_ca.ok());
  auto cert = IssueCertificate(Request("intruder", false), &*other_ca);
  ASSERT_TRUE(cert.ok());
  const std::string path = dir_.Write(
      "kubeconfig",
      Kubeconfig("    certificate-authority-data: " + EncodeBase64(server_->ca_pem()) + "\n",
                 "    client-certificate-data: " + EncodeBase64(cert->cert_pem) +
                     "\n    client-key-data: " + EncodeBase64(cert->key_pem) + "\n"));
  auto got = GetNamespace(path);
  ASSERT_FALSE(got.ok());
  // With TLS 1.3 the server's verdict arrives as an alert after the client's
  // side of the handshake: the first read fails.
  EXPECT_NE(got.error().message.find("alert unknown ca"), std::string::npos)
      << got.error().ToString();
}

// ---------------------------------------------------------------- exec plugins

// The plugin: prints an ExecCredential of $API_VERSION with the token in
// ./token and, if present, the expiry in ./expiry (RFC 3339) or ./expires-in
// (seconds from now, via date); appends a line to ./runs per run; writes its
// KUBERNETES_EXEC_INFO and $GREETING next to itself. ./fail makes it fail.
constexpr char kPlugin[] = R"SH(#!/bin/sh
dir=$(dirname "$0")
echo run >> "$dir/runs"
printf '%s' "$KUBERNETES_EXEC_INFO" > "$dir/exec-info.json"
printf '%s' "$GREETING" > "$dir/greeting"
if [ -f "$dir/fail" ]; then
  echo "token service unreachable" >&2
  exit 3
fi
expiry=""
if [ -f "$dir/expiry" ]; then expiry=$(cat "$dir/expiry"); fi
if [ -f "$dir/expires-in" ]; then
  expiry=$(date -u -d "+$(cat "$dir/expires-in") seconds" +%Y-%m-%dT%H:%M:%SZ) || exit 9
fi
extra=""
if [ -n "$expiry" ]; then extra=",\"expirationTimestamp\":\"$expiry\""; fi
printf '{"apiVersion":"%s","kind":"ExecCredential","status":{"token":"%s"%s}}\n' \
  "$API_VERSION" "$(cat "$dir/token")" "$extra"
)SH";

class ExecPlugin : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.token = "first";
    options_.store = apiserver::NewStore();
    server_ = testing::StartServer(options_);
    ASSERT_NE(server_, nullptr);
    plugin_ = dir_.Write("plugin/get-token", kPlugin);
    ASSERT_EQ(::chmod(plugin_.c_str(), 0755), 0);
    SetToken("first");
  }

  void SetToken(const std::string& token) { dir_.Write("plugin/token", token); }
  int Runs() const {
    const std::string runs = ReadAll(dir_.path() + "/plugin/runs");
    return static_cast<int>(std::count(runs.begin(), runs.end(), '\n'));
  }

  // Over HTTPS, or over plain HTTP (`http`) where the server restarts: a
  // restarted server has a new self-signed certificate.
  std::string Kubeconfig(const std::string& api_version = "client.authentication.k8s.io/v1",
                         const std::string& exec_extra = "", bool http = false) {
    return "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
           "clusters:\n- name: k\n  cluster:\n    server: " +
           (http ? server_->http_url() : server_->https_url()) +
           "\n    certificate-authority-data: " + EncodeBase64(server_->ca_pem()) +
           "\ncontexts:\n- name: c\n  context: {cluster: k, user: exec-user}\n"
           "users:\n- name: exec-user\n  user:\n    exec:\n"
           "      apiVersion: " +
           api_version + "\n      command: " + plugin_ +
           "\n      interactiveMode: Never\n      env:\n"
           "      - {name: API_VERSION, value: " +
           api_version + "}\n      - {name: GREETING, value: hello}\n" + exec_extra;
  }

  std::shared_ptr<Client> MakeClient(const std::string& kubeconfig,
                                     std::shared_ptr<const Clock> clock = nullptr) {
    auto config = LoadKubeconfigFile(dir_.Write("kubeconfig", kubeconfig));
    EXPECT_TRUE(config.ok()) << config.error().ToString();
    if (!config.ok()) return nullptr;
    config->clock = std::move(clock);
    return testing::MakeClient(io_, *config);
  }

  Result<std::string> GetNamespace(Client& client) {
    return io_.Run(client.Get(resources::kNamespaces, "", "default"));
  }

  // The API server restarts on the same port and store with another token,
  // as a cluster whose credentials were rotated.
  void RestartServerWithToken(const std::string& token) {
    const uint16_t port = server_->http_port();
    server_->Stop();
    server_.reset();
    options_.token = token;
    options_.http_port = port;
    server_ = testing::StartServer(options_);
    ASSERT_NE(server_, nullptr);
  }

  TempDir dir_;
  std::string plugin_;
  apiserver::Options options_;
  IoThread io_{2};
  std::unique_ptr<apiserver::ApiServer> server_;
};

TEST_F(ExecPlugin, TheTokenIsUsedAndCachedWithoutAnExpiry) {
  auto client = MakeClient(Kubeconfig());
  ASSERT_NE(client, nullptr);
  EXPECT_EQ(Runs(), 0);  // not run before the first request
  for (int i = 0; i < 3; ++i) {
    auto got = GetNamespace(*client);
    ASSERT_TRUE(got.ok()) << got.error().ToString();
  }
  EXPECT_EQ(Runs(), 1);
  // The plugin got the request and the kubeconfig's env.
  const json info = json::parse(ReadAll(dir_.path() + "/plugin/exec-info.json"));
  EXPECT_EQ(info["apiVersion"], "client.authentication.k8s.io/v1");
  EXPECT_EQ(info["kind"], "ExecCredential");
  EXPECT_EQ(info["spec"]["interactive"], false);
  EXPECT_FALSE(info["spec"].contains("cluster"));  // provideClusterInfo is off
  EXPECT_EQ(ReadAll(dir_.path() + "/plugin/greeting"), "hello");
}

TEST_F(ExecPlugin, V1beta1WithClusterInfo) {
  auto client = MakeClient(
      Kubeconfig("client.authentication.k8s.io/v1beta1", "      provideClusterInfo: true\n"));
  ASSERT_NE(client, nullptr);
  auto got = GetNamespace(*client);
  ASSERT_TRUE(got.ok()) << got.error().ToString();
  const json info = json::parse(ReadAll(dir_.path() + "/plugin/exec-info.json"));
  EXPECT_EQ(info["apiVersion"], "client.authentication.k8s.io/v1beta1");
  EXPECT_EQ(info["spec"]["cluster"]["server"], server_->https_url());
  EXPECT_EQ(info["spec"]["cluster"]["certificate-authority-data"], EncodeBase64(server_->ca_pem()));
}

TEST_F(ExecPlugin, ConcurrentRequestsShareOneRun) {
  auto client = MakeClient(Kubeconfig());
  ASSERT_NE(client, nullptr);
  std::vector<std::future<Result<std::string>>> pending;
  for (int i = 0; i < 16; ++i) {
    pending.push_back(io_.Spawn(client->Get(resources::kNamespaces, "", "default")));
  }
  for (auto& p : pending) {
    auto got = p.get();
    ASSERT_TRUE(got.ok()) << got.error().ToString();
  }
  EXPECT_EQ(Runs(), 1);
}

// Expiry on an injected clock: cached while fresh, refreshed in the
// background in the last quarter of its life, re-run (and waited for) once
// it is about to expire.
TEST_F(ExecPlugin, ExpiryIsHonoured) {
  const auto start = std::chrono::time_point_cast<seconds>(std::chrono::system_clock::now());
  auto clock = std::make_shared<FakeClock>(start);
  const auto expiry_in = [&](seconds s) {
    dir_.Write("plugin/expiry", FormatRfc3339(clock->WallNow() + s));
  };
  expiry_in(seconds(60));
  auto client = MakeClient(Kubeconfig(), clock);
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(GetNamespace(*client).ok());
  EXPECT_EQ(Runs(), 1);

  clock->Advance(seconds(40));  // 20 s of 60 left: fresh
  ASSERT_TRUE(GetNamespace(*client).ok());
  EXPECT_EQ(Runs(), 1);

  expiry_in(seconds(110));  // the next token: until start+150
  clock->Advance(
      seconds(10));  // start+50, 10 s left (< 15 s, a quarter): refresh in the background
  ASSERT_TRUE(GetNamespace(*client).ok());
  const auto deadline = std::chrono::steady_clock::now() + seconds(20);
  while (Runs() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(Runs(), 2);

  // The refreshed token (obtained at start+50, good until start+150) is fresh
  // until start+125: nothing runs at start+90, though the first token has expired.
  clock->Advance(seconds(40));
  ASSERT_TRUE(GetNamespace(*client).ok());
  EXPECT_EQ(Runs(), 2);

  // Past its usable life (start+141 > 150 - 10): the request waits for a new run.
  expiry_in(seconds(3600));
  clock->Advance(seconds(51));
  ASSERT_TRUE(GetNamespace(*client).ok());
  EXPECT_EQ(Runs(), 3);
  ASSERT_TRUE(GetNamespace(*client).ok());
  EXPECT_EQ(Runs(), 3);
}

// The same on real time, as a plugin with a short-lived token behaves.
TEST_F(ExecPlugin, AShortLivedTokenIsRefreshedOnRealTime) {
  dir_.Write("plugin/expires-in", "3");
  auto client = MakeClient(Kubeconfig());
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(GetNamespace(*client).ok());
  ASSERT_EQ(Runs(), 1);
  const auto deadline = std::chrono::steady_clock::now() + seconds(20);
  int requests = 0;
  while (Runs() < 3 && std::chrono::steady_clock::now() < deadline) {
    auto got = GetNamespace(*client);
    ASSERT_TRUE(got.ok()) << got.error().ToString();
    ++requests;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_GE(Runs(), 3);
  // Dozens of requests, a run per token lifetime (not one per request).
  EXPECT_GT(requests, Runs() * 5);
}

TEST_F(ExecPlugin, A401RefreshesTheTokenAndRetriesOnce) {
  auto client = MakeClient(Kubeconfig("client.authentication.k8s.io/v1", "", /*http=*/true));
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(GetNamespace(*client).ok());
  ASSERT_EQ(Runs(), 1);

  // The cluster now wants another token; the plugin hands it out.
  RestartServerWithToken("second");
  SetToken("second");
  auto got = GetNamespace(*client);
  ASSERT_TRUE(got.ok()) << got.error().ToString();
  EXPECT_EQ(Runs(), 2);
  // Writes carry the new token too.
  auto created =
      io_.Run(client->Create(resources::kNamespaces, "",
                             R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n1"}})"));
  ASSERT_TRUE(created.ok()) << created.error().ToString();
  EXPECT_EQ(Runs(), 2);

  // A plugin whose token the server keeps refusing: one retry, then the 401.
  RestartServerWithToken("third");
  SetToken("stale");
  auto refused = GetNamespace(*client);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kUnauthorized);
  EXPECT_EQ(Runs(), 3);

  // Opening a watch retries the same way.
  SetToken("third");
  auto watch = io_.Run(client->Watch(resources::kNamespaces, ""));
  ASSERT_TRUE(watch.ok()) << watch.error().ToString();
  EXPECT_EQ(Runs(), 4);
}

TEST_F(ExecPlugin, AFailingPluginIsAClearError) {
  dir_.Write("plugin/fail", "");
  auto client = MakeClient(Kubeconfig());
  ASSERT_NE(client, nullptr);
  auto got = GetNamespace(*client);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().code, ErrorCode::kUnauthorized);
  const std::string& message = got.error().message;
  EXPECT_NE(message.find("GET /api/v1/namespaces/default: exec credential plugin of kubeconfig "
                         "user \"exec-user\" (command \"" +
                         plugin_ + "\"): exited with status 3: token service unreachable"),
            std::string::npos)
      << message;
  // Not cached: it runs again on the next request, and works once it can.
  std::remove((dir_.path() + "/plugin/fail").c_str());
  ASSERT_TRUE(GetNamespace(*client).ok());
  EXPECT_EQ(Runs(), 2);
}

TEST(ExecPluginRun, ErrorsNameTheUserTheCommandAndTheProblem) {
  TempDir dir;
  const auto script = [&](const std::string& name, const std::string& body) {
    const std::string path = dir.Write(name, "#!/bin/sh\n" + body);
    EXPECT_EQ(::chmod(path.c_str(), 0755), 0);
    return path;
  };
  ExecConfig exec;
  exec.user = "u";
  exec.api_version = "client.authentication.k8s.io/v1";
  const auto run = [&](std::string command, std::chrono::milliseconds timeout = seconds(10)) {
    exec.command = std::move(command);
    return RunExecPlugin(exec, ExecClusterInfo{}, timeout);
  };

  exec.install_hint = "kubelogin is needed: https://azure.github.io/kubelogin/";
  auto missing = run("copse-test-no-such-plugin");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find(
                "kubeconfig user \"u\" (command \"copse-test-no-such-plugin\"): executable not "
                "found\n\nkubelogin is needed: https://azure.github.io/kubelogin/"),
            std::string::npos)
      << missing.error().message;

  auto not_json = run(script("not-json", "echo hello"));
  ASSERT_FALSE(not_json.ok());
  EXPECT_NE(not_json.error().message.find("its output is not a JSON ExecCredential"),
            std::string::npos);

  auto wrong_version = run(script(
      "v1beta1",
      R"(echo '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"t"}}')"));
  ASSERT_FALSE(wrong_version.ok());
  EXPECT_NE(wrong_version.error().message.find(
                "apiVersion \"client.authentication.k8s.io/v1beta1\", but the kubeconfig asks for "
                "\"client.authentication.k8s.io/v1\""),
            std::string::npos)
      << wrong_version.error().message;

  auto certificate = run(script(
      "cert",
      R"(echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"clientCertificateData":"x","clientKeyData":"y"}}')"));
  ASSERT_FALSE(certificate.ok());
  EXPECT_NE(certificate.error().message.find("status.clientCertificateData"), std::string::npos);

  auto bad_expiry = run(script(
      "expiry",
      R"(echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t","expirationTimestamp":"soon"}}')"));
  ASSERT_FALSE(bad_expiry.ok());
  EXPECT_NE(bad_expiry.error().message.find(
                "status.expirationTimestamp: \"soon\" is not an RFC 3339 time"),
            std::string::npos)
      << bad_expiry.error().message;

  const auto started = std::chrono::steady_clock::now();
  auto hung = run(script("hung", "exec sleep 30"), std::chrono::milliseconds(300));
  ASSERT_FALSE(hung.ok());
  EXPECT_NE(hung.error().message.find("was killed"), std::string::npos) << hung.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - started, seconds(10));

  auto ok = run(script(
      "ok",
      R"(echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"tok","expirationTimestamp":"2030-01-02T03:04:05Z"}}')"));
  ASSERT_TRUE(ok.ok()) << ok.error().ToString();
  EXPECT_EQ(ok->token, "tok");
  ASSERT_TRUE(ok->expiration.has_value());
  EXPECT_EQ(FormatRfc3339(*ok->expiration), "2030-01-02T03:04:05Z");
}

}  // namespace
}  // namespace copse::kube
