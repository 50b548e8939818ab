// The ops port as `copse run` serves it (OpsEndpoint), delegating to copse
// local's embedded API server over HTTPS with its token: TokenReviews and
// SubjectAccessReviews answered by the server, client certificates against
// the CA it publishes in kube-system/extension-apiserver-authentication
// (watched: a new CA is taken up), and the caches. Prints what a /metrics
// request costs with and without the caches (one run, this machine).

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "apiserver/apiserver.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "net/cert.h"
#include "net/client.h"
#include "scheduler/config/ops_endpoint.h"

namespace copse::scheduler::config {
namespace ops_auth_test {

using nlohmann::json;

const kube::ResourceRef kConfigMaps{"", "v1", "configmaps", true};
constexpr const char* kToken = "ops-auth-token";

bool WaitFor(const std::function<bool()>& condition,
             std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return condition();
}

std::string CaConfigMap(const std::string& ca_pem) {
  return json({{"apiVersion", "v1"},
               {"kind", "ConfigMap"},
               {"metadata",
                {{"name", "extension-apiserver-authentication"}, {"namespace", "kube-system"}}},
               {"data", {{"client-ca-file", ca_pem}}}})
      .dump();
}

class OpsAuthIntegration : public ::testing::Test {
 protected:
  void SetUp() override {
    apiserver::Options options;
    options.token = kToken;
    options.serve_http = false;
    auto server = apiserver::ApiServer::Start(options);
    ASSERT_TRUE(server.ok()) << server.error().ToString();
    server_ = std::move(server).value();
    auto connection = kube::LoadKubeconfig(server_->Kubeconfig());
    ASSERT_TRUE(connection.ok()) << connection.error().ToString();
    connection_ = *connection;
    auto admin = kube::Client::Create(connection_, io_.executor());
    ASSERT_TRUE(admin.ok());
    admin_ = *admin;
    ca_ = *net::NewCertificateAuthority();
    net::CertificateOptions client;
    client.common_name = "cert-reader";
    client.organization = "readers";
    client.server_auth = false;
    cert_ = *net::IssueCertificate(ca_, client);
  }

  void StartOps(OpsServerConfig config = {}) {
    config.bind_address = "127.0.0.1";
    config.secure_port = 0;
    auto ops = OpsEndpoint::Start(config, connection_, io_);
    ASSERT_TRUE(ops.ok()) << ops.error().ToString();
    ops_ = std::move(ops).value();
    ops_->SetMetricsHandler([] { return std::string("copse_test_metric 1\n"); });
  }

  // One GET on a fresh connection (the handshake presents the certificate).
  net::ClientResponse Get(const std::string& path, const std::string& token = "",
                          const net::Certificate* cert = nullptr) {
    net::ClientOptions options;
    options.server = ops_->secure_url();
    options.ca_pem = ops_->certificate_pem();
    if (cert != nullptr) {
      options.client_cert_pem = cert->cert_pem;
      options.client_key_pem = cert->key_pem;
    }
    auto http = net::HttpClient::Create(options, io_.executor());
    EXPECT_TRUE(http.ok());
    net::ClientRequest request;
    request.target = path;
    if (!token.empty()) request.authorization = "Bearer " + token;
    request.timeout = std::chrono::seconds(10);
    request.deadline = std::chrono::steady_clock::now() + request.timeout;
    auto response = io_.Run((*http)->Send(request));
    EXPECT_TRUE(response.ok()) << response.error().message;
    return response.ok() ? *response : net::ClientResponse{};
  }

  kube::IoThread io_{2};
  std::unique_ptr<apiserver::ApiServer> server_;
  kube::ClientConfig connection_;
  std::shared_ptr<kube::Client> admin_;
  net::Certificate ca_;
  net::Certificate cert_;
  std::unique_ptr<OpsEndpoint> ops_;
};

// copse local's token is its admin's, in system:masters, whom kube's
// delegating authorizer lets in without asking; with no always-allowed
// groups, copse local answers the SubjectAccessReview.
TEST_F(OpsAuthIntegration, MetricsForTheServersTokenHealthForAnyone) {
  OpsServerConfig config;
  config.authorization.always_allow_groups.clear();
  StartOps(config);
  EXPECT_TRUE(ops_->secure_url().starts_with("https://127.0.0.1:"));
  EXPECT_EQ(ops_->plain_url(), "") << "no plain HTTP unless asked for";
  EXPECT_EQ(Get("/healthz").body, "ok");
  EXPECT_EQ(Get("/readyz").status, 200);
  const net::ClientResponse anonymous = Get("/metrics");
  EXPECT_EQ(anonymous.status, 403);
  EXPECT_EQ(
      anonymous.body,
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"forbidden: User \"system:anonymous\" cannot get path \"/metrics\"","reason":"Forbidden","details":{},"code":403})"
      "\n");
  EXPECT_EQ(Get("/metrics", "wrong").status, 401);
  const net::ClientResponse metrics = Get("/metrics", kToken);
  EXPECT_EQ(metrics.status, 200) << metrics.body;
  EXPECT_EQ(metrics.body, "copse_test_metric 1\n");
  const DelegatedAuthStats stats = ops_->auth().stats();
  EXPECT_EQ(stats.token_reviews, 2u);   // "wrong", the token
  EXPECT_EQ(stats.access_reviews, 2u);  // anonymous, the admin
}

TEST_F(OpsAuthIntegration, ClientCertificatesOfThePublishedCaAndItsRotation) {
  ASSERT_TRUE(io_.Run(admin_->Create(kConfigMaps, "kube-system", CaConfigMap(ca_.cert_pem))).ok());
  StartOps();
  // The CA was looked up at start.
  EXPECT_EQ(ops_->auth().client_ca(), ca_.cert_pem);
  const net::ClientResponse ok = Get("/metrics", "", &cert_);
  EXPECT_EQ(ok.status, 200) << ok.body;

  // A new CA replaces the old: its certificates get in, the old ones get 401.
  net::Certificate next_ca = *net::NewCertificateAuthority();
  net::CertificateOptions client;
  client.common_name = "next-reader";
  client.server_auth = false;
  net::Certificate next_cert = *net::IssueCertificate(next_ca, client);
  auto current =
      io_.Run(admin_->Get(kConfigMaps, "kube-system", "extension-apiserver-authentication"));
  ASSERT_TRUE(current.ok());
  json updated = json::parse(*current);
  updated["data"]["client-ca-file"] = next_ca.cert_pem;
  ASSERT_TRUE(io_.Run(admin_->Update(kConfigMaps, "kube-system",
                                     "extension-apiserver-authentication", updated.dump()))
                  .ok());
  ASSERT_TRUE(WaitFor([&] { return ops_->auth().client_ca() == next_ca.cert_pem; }));
  EXPECT_EQ(Get("/metrics", "", &next_cert).status, 200);
  EXPECT_EQ(Get("/metrics", "", &cert_).status, 401);
  // Gone: certificates are not looked at (anonymous: 403 on /metrics).
  ASSERT_TRUE(
      io_.Run(admin_->Delete(kConfigMaps, "kube-system", "extension-apiserver-authentication"))
          .ok());
  ASSERT_TRUE(WaitFor([&] { return ops_->auth().client_ca().empty(); }));
  EXPECT_EQ(Get("/metrics", "", &next_cert).status, 403);
}

TEST_F(OpsAuthIntegration, AClientCaFileInsteadOfTheClusters) {
  const std::string path = ::testing::TempDir() + "/ops-auth-ca.crt";
  { std::ofstream(path) << ca_.cert_pem; }
  OpsServerConfig config;
  config.authentication.client_ca_file = path;
  StartOps(config);
  EXPECT_EQ(Get("/metrics", "", &cert_).status, 200);
  EXPECT_EQ(ops_->auth().stats().access_reviews, 1u);
  // The admin's token: system:masters, let in without a SubjectAccessReview.
  EXPECT_EQ(Get("/metrics", kToken).status, 200);
  EXPECT_EQ(ops_->auth().stats().access_reviews, 1u);
  config.authentication.client_ca_file = path + ".missing";
  auto missing = OpsEndpoint::Start(config, connection_, io_);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("opsServer.authentication.clientCAFile"),
            std::string::npos)
      << missing.error().message;
}

// --tls-cert-file and --tls-private-key-file: served from the start, and a
// new pair written over them is served from the next handshake on.
TEST_F(OpsAuthIntegration, TheCertificateFilesAreServedAndReloaded) {
  const std::string dir = ::testing::TempDir();
  const std::string cert_file = dir + "/ops-auth-tls.crt";
  const std::string key_file = dir + "/ops-auth-tls.key";
  const auto write = [&](const net::Certificate& c) {
    std::ofstream(cert_file) << c.cert_pem;
    std::ofstream(key_file) << c.key_pem;
  };
  net::CertificateOptions serving;
  serving.common_name = "first";
  const net::Certificate first = *net::SelfSignedCertificate(serving);
  serving.common_name = "second";
  const net::Certificate second = *net::SelfSignedCertificate(serving);
  write(first);
  OpsServerConfig config;
  config.bind_address = "127.0.0.1";
  config.secure_port = 0;
  config.tls_cert_file = cert_file;
  config.tls_private_key_file = key_file;
  OpsEndpointOptions options;
  options.certificate_reload_interval = std::chrono::milliseconds(50);
  auto ops = OpsEndpoint::Start(config, connection_, io_, options);
  ASSERT_TRUE(ops.ok()) << ops.error().ToString();
  // A client that trusts only one certificate tells which is served.
  const auto handshake_with = [&](const net::Certificate& trusted) {
    net::ClientOptions client;
    client.server = (*ops)->secure_url();
    client.ca_pem = trusted.cert_pem;
    auto http = net::HttpClient::Create(client, io_.executor());
    net::ClientRequest request;
    request.target = "/healthz";
    request.timeout = std::chrono::seconds(10);
    request.deadline = std::chrono::steady_clock::now() + request.timeout;
    auto response = io_.Run((*http)->Send(request));
    return response.ok() && response->status == 200;
  };
  EXPECT_TRUE(handshake_with(first));
  EXPECT_FALSE(handshake_with(second));
  write(second);
  EXPECT_TRUE(WaitFor([&] { return handshake_with(second); }));
  EXPECT_FALSE(handshake_with(first));
  EXPECT_EQ((*ops)->certificate_pem(), second.cert_pem);
  // A pair that does not match is not served (the one before stays).
  std::ofstream(cert_file) << first.cert_pem;
  const uint64_t checked = (*ops)->certificate_checks();
  ASSERT_TRUE(WaitFor([&] { return (*ops)->certificate_checks() >= checked + 2; }));
  EXPECT_TRUE(handshake_with(second));

  // At start, files that are missing or do not match are errors naming the field.
  config.tls_private_key_file = dir + "/missing.key";
  auto missing = OpsEndpoint::Start(config, connection_, io_, options);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("opsServer.tlsPrivateKeyFile: cannot read"),
            std::string::npos)
      << missing.error().message;
}

// What the delegation adds to a /metrics request, on a kept-alive
// connection: the first request of a token waits for a TokenReview and a
// SubjectAccessReview, the next ones are answered from the caches.
TEST_F(OpsAuthIntegration, CachedRequestsCostNoApiCall) {
  OpsServerConfig config;
  config.authorization.always_allow_groups.clear();  // ask for the admin too
  StartOps(config);
  net::ClientOptions options;
  options.server = ops_->secure_url();
  options.ca_pem = ops_->certificate_pem();
  auto http = net::HttpClient::Create(options, io_.executor());
  ASSERT_TRUE(http.ok());
  const auto timed = [&](const std::string& path, const std::string& token) {
    net::ClientRequest request;
    request.target = path;
    if (!token.empty()) request.authorization = "Bearer " + token;
    request.timeout = std::chrono::seconds(10);
    request.deadline = std::chrono::steady_clock::now() + request.timeout;
    const auto start = std::chrono::steady_clock::now();
    auto response = io_.Run((*http)->Send(request));
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    EXPECT_TRUE(response.ok() && response->status == 200) << path;
    return us;
  };
  timed("/healthz", "");  // the connection's handshake
  std::vector<double> health;
  std::vector<double> cached;
  for (int i = 0; i < 50; ++i) health.push_back(timed("/healthz", ""));
  const double uncached = timed("/metrics", kToken);
  for (int i = 0; i < 50; ++i) cached.push_back(timed("/metrics", kToken));
  const DelegatedAuthStats stats = ops_->auth().stats();
  EXPECT_EQ(stats.token_reviews, 1u);
  EXPECT_EQ(stats.access_reviews, 1u);
  EXPECT_EQ(stats.token_cache_hits, 50u);
  EXPECT_EQ(stats.access_cache_hits, 50u);
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::cout << "[ops port, copse local] /healthz (no API call) median " << median(health)
            << " us; /metrics first request (TokenReview + SubjectAccessReview) " << uncached
            << " us; /metrics cached median " << median(cached) << " us (50 each)\n";
}

}  // namespace ops_auth_test
}  // namespace copse::scheduler::config
