// The validating admission webhook: AdmissionReview v1 handling, the HTTPS
// server, and the embedded API server calling it through a registered
// ValidatingWebhookConfiguration, so invalid PodCliqueSets are rejected with
// field-named messages and nothing is created.

#include "grove/webhook/webhook.h"

#include <gtest/gtest.h>

#include "apiserver/admission.h"
#include "tests/integration/grove/env.h"

namespace copse::grove::testing {
namespace {

json Review(const std::string& operation, const json& object, const json& old = nullptr) {
  return {{"apiVersion", "admission.k8s.io/v1"},
          {"kind", "AdmissionReview"},
          {"request",
           {{"uid", "u-1"},
            {"kind", {{"group", "grove.io"}, {"version", "v1alpha1"}, {"kind", "PodCliqueSet"}}},
            {"operation", operation},
            {"object", object},
            {"oldObject", old}}}};
}

json Sample(const std::string& file = "deploy/examples/grove/simple1.yaml") {
  return json::parse(YamlDocs(ReadSourceFile(file)).front());
}

json WithNodeName(json pcs) {
  pcs["spec"]["template"]["cliques"][0]["spec"]["podSpec"]["nodeName"] = "n1";
  return pcs;
}

const char* kNodeNameError =
    "PodCliqueSet.grove.io \"simple1\" is invalid: spec.template.cliques[0].spec.podSpec.nodeName: "
    "Invalid value: \"n1\": must not be set";

class Webhook : public ::testing::Test {
 protected:
  webhook::Validator Validator() {
    Operator* op = env_.op();
    return [op](std::string_view object, std::string_view old) {
      return op->ValidatePodCliqueSet(object, old);
    };
  }
  GroveEnv env_;
};

TEST_F(Webhook, AnswersAdmissionReviews) {
  auto denied =
      webhook::HandleAdmissionReview(Review("CREATE", WithNodeName(Sample())).dump(), Validator());
  ASSERT_TRUE(denied.ok());
  json response = json::parse(*denied)["response"];
  EXPECT_EQ(response["uid"], "u-1");
  EXPECT_EQ(response["allowed"], false);
  EXPECT_EQ(response["status"]["code"], 422);
  EXPECT_EQ(response["status"]["reason"], "Invalid");
  EXPECT_EQ(response["status"]["message"], kNodeNameError);

  auto allowed = webhook::HandleAdmissionReview(Review("CREATE", Sample()).dump(), Validator());
  EXPECT_EQ(json::parse(*allowed)["response"]["allowed"], true);

  json changed = Sample();
  changed["spec"]["template"]["cliqueStartupType"] = "CliqueStartupTypeInOrder";
  auto update =
      webhook::HandleAdmissionReview(Review("UPDATE", changed, Sample()).dump(), Validator());
  json update_response = json::parse(*update)["response"];
  EXPECT_EQ(update_response["allowed"], false);
  EXPECT_NE(update_response["status"]["message"].get<std::string>().find(
                "spec.template.cliqueStartupType: Forbidden: field is immutable"),
            std::string::npos);

  EXPECT_EQ(
      json::parse(*webhook::HandleAdmissionReview(Review("DELETE", WithNodeName(Sample())).dump(),
                                                  Validator()))["response"]["allowed"],
      true);
  EXPECT_FALSE(webhook::HandleAdmissionReview("{\"kind\":\"Pod\"}", Validator()).ok());
}

TEST_F(Webhook, ServesHttps) {
  auto server = webhook::Server::Start(Validator(), webhook::ServerOptions());
  ASSERT_TRUE(server.ok()) << server.error().ToString();
  kube::ClientConfig config;
  config.server = "https://127.0.0.1:" + std::to_string((*server)->port());
  config.ca_pem = (*server)->ca_pem();
  auto client = kube::Client::Create(config, env_.io().executor());
  ASSERT_TRUE(client.ok()) << client.error().ToString();
  auto response = env_.io().Run(
      (*client)->Request(kube::HttpMethod::kPost, std::string(webhook::kValidatePath),
                         Review("CREATE", WithNodeName(Sample())).dump(), "application/json"));
  ASSERT_TRUE(response.ok()) << response.error().ToString();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(json::parse(response->body)["response"]["status"]["message"], kNodeNameError);
  auto health = env_.io().Run((*client)->Request(kube::HttpMethod::kGet, "/healthz"));
  ASSERT_TRUE(health.ok());
  EXPECT_EQ(health->body, "ok");
  (*server)->Stop();
}

TEST_F(Webhook, EmbeddedApiServerCallsTheRegisteredWebhook) {
  auto server = webhook::Server::Start(Validator(), webhook::ServerOptions());
  ASSERT_TRUE(server.ok()) << server.error().ToString();
  ASSERT_TRUE(apiserver::InstallAdmissionRegistration(env_.store()).ok());
  std::string configuration =
      webhook::ValidatingWebhookConfiguration("copse-grove", (*server)->url(), (*server)->ca_pem());
  auto registered = env_.TryCreate(apiserver::kValidatingWebhookConfigurations, "", configuration);
  ASSERT_TRUE(registered.ok()) << registered.error().ToString();

  // Invalid: rejected with the field-named message, nothing created.
  auto rejected =
      env_.TryCreate(api::resources::kPodCliqueSets, "default", WithNodeName(Sample()).dump());
  ASSERT_FALSE(rejected.ok());
  EXPECT_EQ(rejected.error().code, ErrorCode::kInvalid);
  EXPECT_EQ(rejected.error().http_status, 422);
  EXPECT_EQ(
      rejected.error().message,
      std::string("admission webhook \"validate.podcliqueset.grove.io\" denied the request: ") +
          kNodeNameError);
  EXPECT_FALSE(env_.Get(api::resources::kPodCliqueSets, "default", "simple1").has_value());

  // Valid: admitted and reconciled.
  auto created = env_.TryCreate(api::resources::kPodCliqueSets, "default", Sample().dump());
  ASSERT_TRUE(created.ok()) << created.error().ToString();
  ASSERT_TRUE(
      env_.WaitFor([&] { return env_.Pods("app.kubernetes.io/part-of=simple1").size() == 9; }));

  // Updates go through the webhook too: PUT and (as kubectl apply does) PATCH.
  json current = json::parse(*created);
  current["spec"]["template"]["cliqueStartupType"] = "CliqueStartupTypeExplicit";
  auto put = env_.io().Run(
      env_.client().Update(api::resources::kPodCliqueSets, "default", "simple1", current.dump()));
  ASSERT_FALSE(put.ok());
  EXPECT_NE(
      put.error().message.find("spec.template.cliqueStartupType: Forbidden: field is immutable"),
      std::string::npos)
      << put.error().message;
  auto patch = env_.io().Run(env_.client().Patch(
      api::resources::kPodCliqueSets, "default", "simple1", kube::PatchType::kMerge,
      R"({"spec":{"template":{"podCliqueScalingGroups":[]}}})"));
  ASSERT_FALSE(patch.ok());
  EXPECT_NE(patch.error().message.find("not allowed to add or remove PodCliqueScalingGroupConfigs"),
            std::string::npos)
      << patch.error().message;
  // A valid scale-out is admitted.
  auto scaled =
      env_.io().Run(env_.client().Patch(api::resources::kPodCliqueSets, "default", "simple1",
                                        kube::PatchType::kMerge, R"({"spec":{"replicas":2}})"));
  EXPECT_TRUE(scaled.ok()) << scaled.error().ToString();
  // Pods are not sent to the webhook (its rules name podcliquesets only).
  EXPECT_TRUE(env_.TryCreate(kube::resources::kPods, "default",
                             R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"plain"},
                                 "spec":{"containers":[{"name":"c","image":"busybox"}]}})")
                  .ok());

  // failurePolicy Fail: an unreachable webhook rejects writes it matches.
  (*server)->Stop();
  auto unreachable = env_.TryCreate(api::resources::kPodCliqueSets, "default", [] {
    json other = Sample();
    other["metadata"]["name"] = "other";
    return other.dump();
  }());
  ASSERT_FALSE(unreachable.ok());
  EXPECT_EQ(unreachable.error().http_status, 500);
  EXPECT_NE(
      unreachable.error().message.find("failed calling webhook \"validate.podcliqueset.grove.io\""),
      std::string::npos);
}

TEST(WebhookBackends, KaiRejectsAPodCliqueSetWithoutAQueue) {
  EnvOptions options;
  auto config = backend::ParseOperatorConfiguration(
      "scheduler:\n  profiles:\n  - name: kai-scheduler\n    default: true\n");
  ASSERT_TRUE(config.ok());
  options.op.scheduler = *config;
  GroveEnv env(options);
  auto admitted = env.op()->ValidatePodCliqueSet(Sample().dump());
  ASSERT_FALSE(admitted.ok());
  EXPECT_NE(admitted.error().message.find("metadata.labels[kai.scheduler/queue]: Required value"),
            std::string::npos)
      << admitted.error().message;
  json queued = Sample();
  queued["metadata"]["labels"]["kai.scheduler/queue"] = "q";
  EXPECT_TRUE(env.op()->ValidatePodCliqueSet(queued.dump()).ok());
}

}  // namespace
}  // namespace copse::grove::testing
