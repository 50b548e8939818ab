// The webhook's serving certificate in a cluster (grove/webhook/cert_rotator.h)
// against the embedded API server, which serves Secrets and
// ValidatingWebhookConfigurations and calls webhooks itself: the leader makes
// the Secret and sets the caBundle, every replica serves the Secret's
// certificate, the API server's calls verify against that caBundle, and the
// certificate is renewed before it expires.

#include "grove/webhook/cert_rotator.h"

#include <gtest/gtest.h>

#include <thread>

#include "apiserver/admission.h"
#include "grove/webhook/webhook.h"
#include "kube/kubeconfig.h"
#include "net/cert.h"
#include "tests/integration/grove/env.h"

namespace copse::grove::testing {
namespace {

using std::chrono::hours;

// Polls `condition` until it holds or `timeout` passes (the Secret and the
// configuration are not among the kinds GroveEnv's recorder wakes on).
bool Eventually(const std::function<bool()>& condition,
                std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

struct SecretKeys {
  std::string ca_crt, ca_key, tls_crt, tls_key;
};

std::string Decoded(const json& data, const char* key) {
  if (!data.contains(key)) return {};
  auto decoded = kube::DecodeBase64(data[key].get<std::string>());
  return decoded.ok() ? *decoded : std::string();
}

// Two webhooks, as upstream Grove registers several, neither with a caBundle yet.
std::string Configuration(const std::string& url) {
  json config = json::parse(webhook::ValidatingWebhookConfiguration("copse-grove", url, ""));
  json second = config["webhooks"][0];
  second["name"] = "validate2.podcliqueset.grove.io";
  config["webhooks"].push_back(second);
  for (auto& w : config["webhooks"]) w["clientConfig"].erase("caBundle");
  return config.dump();
}

class CertRotatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(apiserver::InstallAdmissionRegistration(env_.store()).ok());
    auto ns = env_.TryCreate(
        kube::resources::kNamespaces, "",
        R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"copse-system"}})");
    ASSERT_TRUE(ns.ok()) << ns.error().ToString();
  }

  webhook::Validator Validator() {
    Operator* op = env_.op();
    return [op](std::string_view object, std::string_view old) {
      return op->ValidatePodCliqueSet(object, old);
    };
  }

  webhook::CertRotatorOptions Options() {
    webhook::CertRotatorOptions options;
    options.secret_namespace = "copse-system";
    // The embedded API server calls a URL on loopback: the certificate names it too.
    options.ip_addresses = {"127.0.0.1"};
    return options;
  }

  std::unique_ptr<webhook::CertRotator> StartRotator(webhook::Server& server,
                                                     webhook::CertRotatorOptions options) {
    webhook::Server* serving = &server;
    auto rotator =
        webhook::CertRotator::Start(env_.client_ptr(), std::move(options),
                                    [serving](const std::string& cert, const std::string& key) {
                                      return serving->SetCertificate(cert, key);
                                    });
    EXPECT_TRUE(rotator.ok()) << rotator.error().ToString();
    return rotator.ok() ? std::move(rotator).value() : nullptr;
  }

  std::unique_ptr<webhook::Server> StartServer() {
    auto server = webhook::Server::Start(Validator(), webhook::ServerOptions());
    EXPECT_TRUE(server.ok()) << server.error().ToString();
    return server.ok() ? std::move(server).value() : nullptr;
  }

  std::optional<SecretKeys> Secret() {
    auto secret = env_.Get(webhook::kSecrets, "copse-system", "copse-grove-webhook-cert");
    if (!secret) return std::nullopt;
    const json& data = (*secret)["data"];
    return SecretKeys{Decoded(data, "ca.crt"), Decoded(data, "ca.key"), Decoded(data, "tls.crt"),
                      Decoded(data, "tls.key")};
  }

  std::vector<std::string> Bundles() {
    std::vector<std::string> out;
    auto config = env_.Get(webhook::kValidatingWebhookConfigurations, "", "copse-grove");
    if (!config) return out;
    for (const auto& w : (*config)["webhooks"]) {
      out.push_back(Decoded(w["clientConfig"], "caBundle"));
    }
    return out;
  }

  GroveEnv env_;
};

TEST_F(CertRotatorTest, TheLeaderMakesTheSecretAndTheApiServerTrustsTheWebhook) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  const std::string self_signed = server->ca_pem();
  auto registered =
      env_.TryCreate(webhook::kValidatingWebhookConfigurations, "", Configuration(server->url()));
  ASSERT_TRUE(registered.ok()) << registered.error().ToString();

  // Without a caBundle the API server cannot verify the webhook: writes fail.
  const std::string pcs = YamlDocs(ReadSourceFile("deploy/examples/grove/simple1.yaml")).at(0);
  auto unverified = env_.TryCreate(api::resources::kPodCliqueSets, "default", pcs);
  ASSERT_FALSE(unverified.ok());
  EXPECT_NE(unverified.error().message.find("failed calling webhook"), std::string::npos)
      << unverified.error().message;

  auto rotator = StartRotator(*server, Options());
  ASSERT_NE(rotator, nullptr);
  EXPECT_EQ(rotator->DnsName(), "copse-grove-webhook.copse-system.svc");
  rotator->StartWriting();

  ASSERT_TRUE(Eventually([&] { return Secret().has_value(); }));
  const SecretKeys keys = *Secret();
  const auto now = std::chrono::system_clock::now();
  // A serving certificate for the Service's DNS names, signed by the CA, and the CA itself.
  EXPECT_TRUE(net::VerifyCertificate(keys.tls_crt, keys.tls_key, keys.ca_crt,
                                     "copse-grove-webhook.copse-system.svc", now)
                  .ok());
  EXPECT_TRUE(
      net::VerifyCertificate(keys.tls_crt, keys.tls_key, keys.ca_crt, "copse-grove-webhook", now)
          .ok());
  EXPECT_TRUE(net::VerifyCertificate(keys.ca_crt, keys.ca_key, keys.ca_crt, "", now).ok());
  auto info = net::InspectCertificate(keys.tls_crt);
  ASSERT_TRUE(info.ok());
  EXPECT_FALSE(info->is_ca);
  EXPECT_GT(info->not_after, now + hours(24 * 300));
  auto secret = env_.Get(webhook::kSecrets, "copse-system", "copse-grove-webhook-cert");
  EXPECT_EQ((*secret)["type"], "kubernetes.io/tls");

  // Every webhook of the configuration trusts the CA; the server serves the Secret's certificate.
  ASSERT_TRUE(Eventually([&] {
    auto bundles = Bundles();
    return bundles.size() == 2 && bundles[0] == keys.ca_crt && bundles[1] == keys.ca_crt;
  }));
  ASSERT_TRUE(Eventually([&] { return rotator->Serving(); }));
  EXPECT_EQ(server->ca_pem(), keys.tls_crt);
  EXPECT_NE(server->ca_pem(), self_signed);

  // The API server now calls the webhook over verified TLS: the invalid
  // PodCliqueSet is denied by it, the valid one admitted.
  json invalid = json::parse(pcs);
  invalid["spec"]["template"]["cliques"][0]["spec"]["podSpec"]["nodeName"] = "n1";
  auto denied = env_.TryCreate(api::resources::kPodCliqueSets, "default", invalid.dump());
  ASSERT_FALSE(denied.ok());
  EXPECT_NE(denied.error().message.find("admission webhook \"validate.podcliqueset.grove.io\" "
                                        "denied the request"),
            std::string::npos)
      << denied.error().message;
  auto admitted = env_.TryCreate(api::resources::kPodCliqueSets, "default", pcs);
  EXPECT_TRUE(admitted.ok()) << admitted.error().ToString();

  // `kubectl apply` of the manifests drops the caBundle: it comes back.
  auto current = env_.Get(webhook::kValidatingWebhookConfigurations, "", "copse-grove");
  ASSERT_TRUE(current.has_value());
  (*current)["webhooks"][1]["clientConfig"].erase("caBundle");
  auto reset = env_.io().Run(env_.client().Update(webhook::kValidatingWebhookConfigurations, "",
                                                  "copse-grove", current->dump()));
  ASSERT_TRUE(reset.ok()) << reset.error().ToString();
  ASSERT_TRUE(Eventually([&] {
    auto bundles = Bundles();
    return bundles.size() == 2 && bundles[1] == keys.ca_crt;
  }));
  // A valid Secret is left alone: one write in all.
  EXPECT_EQ(rotator->stats().secret_writes, 1u);
  EXPECT_EQ(rotator->stats().ca_generations, 1u);
  rotator->Stop();
  server->Stop();
}

TEST_F(CertRotatorTest, OnlyTheLeaderWritesAndEveryReplicaServes) {
  auto leader_server = StartServer();
  auto follower_server = StartServer();
  ASSERT_TRUE(leader_server && follower_server);
  auto follower = StartRotator(*follower_server, Options());
  auto leader = StartRotator(*leader_server, Options());
  ASSERT_TRUE(leader && follower);
  leader->StartWriting();
  ASSERT_TRUE(Eventually([&] { return leader->Serving() && follower->Serving(); }));
  const SecretKeys keys = *Secret();
  EXPECT_EQ(follower_server->ca_pem(), keys.tls_crt);
  EXPECT_EQ(leader_server->ca_pem(), keys.tls_crt);
  // Both replicas serve what they read from the Secret's watch, which can
  // deliver the leader's write before the leader's own call returns and
  // counts it: wait for the count, then check it is exact.
  ASSERT_TRUE(Eventually([&] { return leader->stats().secret_writes >= 1; }));
  EXPECT_EQ(follower->stats().secret_writes, 0u);
  EXPECT_EQ(leader->stats().secret_writes, 1u);

  // A Secret broken by hand (a certificate for another name) is replaced by
  // the leader, and both replicas switch to the new certificate.
  net::CertificateOptions request;
  request.common_name = "elsewhere";
  request.dns_names = {"elsewhere.example.com"};
  request.ip_addresses.clear();
  request.client_auth = false;
  request.not_before = std::chrono::system_clock::now() - hours(1);
  request.not_after = std::chrono::system_clock::now() + hours(24);
  const net::Certificate ca{keys.ca_crt, keys.ca_key};
  auto wrong = net::IssueCertificate(ca, request);
  ASSERT_TRUE(wrong.ok());
  auto secret = env_.Get(webhook::kSecrets, "copse-system", "copse-grove-webhook-cert");
  (*secret)["data"]["tls.crt"] = kube::EncodeBase64(wrong->cert_pem);
  (*secret)["data"]["tls.key"] = kube::EncodeBase64(wrong->key_pem);
  auto broken = env_.io().Run(env_.client().Update(webhook::kSecrets, "copse-system",
                                                   "copse-grove-webhook-cert", secret->dump()));
  ASSERT_TRUE(broken.ok()) << broken.error().ToString();
  ASSERT_TRUE(Eventually([&] {
    auto now = Secret();
    return now && now->tls_crt != keys.tls_crt && now->tls_crt != wrong->cert_pem;
  }));
  const SecretKeys fixed = *Secret();
  EXPECT_EQ(fixed.ca_crt, keys.ca_crt);  // the CA was fine: kept
  EXPECT_TRUE(net::VerifyCertificate(fixed.tls_crt, fixed.tls_key, fixed.ca_crt, leader->DnsName(),
                                     std::chrono::system_clock::now())
                  .ok());
  ASSERT_TRUE(Eventually([&] {
    return follower_server->ca_pem() == fixed.tls_crt && leader_server->ca_pem() == fixed.tls_crt;
  }));
  ASSERT_TRUE(Eventually([&] { return leader->stats().secret_writes >= 2; }));
  EXPECT_EQ(follower->stats().secret_writes, 0u);
  EXPECT_EQ(follower->stats().checks, 0u);  // never ran steps 2-3
  EXPECT_EQ(leader->stats().secret_writes, 2u);
}

// Renewal ahead of expiry, on an injected clock: the serving certificate is
// renewed once it is not valid `lookahead` ahead (the CA is kept); when the
// CA itself nears its end a new CA signs, and the old one stays in the
// bundle while it is valid.
TEST_F(CertRotatorTest, RenewsBeforeExpiry) {
  auto clock = std::make_shared<FakeClock>(std::chrono::system_clock::now());
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  auto registered =
      env_.TryCreate(webhook::kValidatingWebhookConfigurations, "", Configuration(server->url()));
  ASSERT_TRUE(registered.ok());
  webhook::CertRotatorOptions options = Options();
  options.clock = clock;
  options.ca_validity = hours(1000);
  options.cert_validity = hours(100);
  options.lookahead = hours(10);
  options.check_interval = std::chrono::milliseconds(50);
  auto rotator = StartRotator(*server, options);
  ASSERT_NE(rotator, nullptr);
  rotator->StartWriting();
  ASSERT_TRUE(Eventually([&] { return rotator->Serving(); }));
  // Serving follows the Secret's watch event, which can come before the
  // create's own answer is counted: wait for the count, or the baseline
  // below misses the first write (a failure seen once under load).
  ASSERT_TRUE(Eventually([&] { return rotator->stats().secret_writes >= 1; }));
  const SecretKeys first = *Secret();
  auto first_info = net::InspectCertificate(first.tls_crt);
  ASSERT_TRUE(first_info.ok());

  // 85 h in: still valid 10 h ahead (until 95 h): kept through a few check rounds.
  clock->Advance(hours(85));
  const uint64_t writes = rotator->stats().secret_writes;
  const uint64_t checks = rotator->stats().checks;
  ASSERT_TRUE(Eventually([&] { return rotator->stats().checks >= checks + 3; }));
  EXPECT_EQ(rotator->stats().secret_writes, writes);
  EXPECT_EQ(Secret()->tls_crt, first.tls_crt);

  // 91 h in: within 10 h of its end: renewed by the same CA, and served.
  clock->Advance(hours(6));
  ASSERT_TRUE(Eventually([&] { return Secret()->tls_crt != first.tls_crt; }));
  const SecretKeys second = *Secret();
  EXPECT_EQ(second.ca_crt, first.ca_crt);
  EXPECT_EQ(rotator->stats().ca_generations, 1u);
  auto second_info = net::InspectCertificate(second.tls_crt);
  EXPECT_GT(second_info->not_after, first_info->not_after);
  ASSERT_TRUE(Eventually([&] { return server->ca_pem() == second.tls_crt; }));

  // 995 h in: the CA (1000 h) is within 10 h of its end: a new CA, the old one
  // still trusted after it in ca.crt and in the caBundle.
  clock->Advance(hours(904));
  ASSERT_TRUE(Eventually([&] { return Secret()->ca_crt != first.ca_crt; }));
  const SecretKeys third = *Secret();
  EXPECT_EQ(rotator->stats().ca_generations, 2u);
  EXPECT_NE(third.ca_crt.find(first.ca_crt), std::string::npos);  // appended after the new CA
  EXPECT_NE(third.ca_crt.rfind(first.ca_crt), 0u);
  EXPECT_TRUE(net::VerifyCertificate(third.tls_crt, third.tls_key, third.ca_crt, rotator->DnsName(),
                                     clock->WallNow())
                  .ok());
  // The new certificate is signed by the new CA alone (the bundle minus the old CA).
  const std::string new_ca = third.ca_crt.substr(0, third.ca_crt.find(first.ca_crt));
  EXPECT_TRUE(
      net::VerifyCertificate(third.tls_crt, third.tls_key, new_ca, "", clock->WallNow()).ok());
  ASSERT_TRUE(Eventually([&] {
    auto bundles = Bundles();
    return !bundles.empty() && bundles[0] == third.ca_crt;
  }));
  rotator->Stop();
  server->Stop();
}

TEST(CertRotatorOptions, BadOptionsAreRejected) {
  kube::IoThread io;
  kube::ClientConfig config;
  config.server = "http://127.0.0.1:1";
  auto client = kube::Client::Create(config, io.executor());
  ASSERT_TRUE(client.ok());
  webhook::CertRotatorOptions options;
  options.secret_name = "";
  auto made = webhook::CertRotator::Start(*client, options, nullptr);
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.error().code, ErrorCode::kInvalid);
  EXPECT_NE(made.error().message.find("Secret"), std::string::npos);
}

}  // namespace
}  // namespace copse::grove::testing
