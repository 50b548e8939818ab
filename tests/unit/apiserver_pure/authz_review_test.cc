// Authorization reviews: RBAC-style rule matching for identities other than
// the local admin, and the review objects built from a request body.

#include "apiserver/authz_review.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace copse::apiserver {
namespace {

using nlohmann::json;

Identity PodReader() {
  Identity id;
  id.user = "reader";
  id.rules = {PolicyRule{{"get", "list", "watch"}, {""}, {"pods", "pods/log"}, {}},
              PolicyRule{{"update"}, {"apps"}, {"*/scale"}, {}},
              PolicyRule{{"get"}, {""}, {"configmaps"}, {"settings"}}};
  id.non_resource_rules = {NonResourceRule{{"get"}, {"/healthz", "/apis/*"}}};
  return id;
}

TEST(AuthzReview, RulesMatchAsRbac) {
  const Identity id = PodReader();
  EXPECT_TRUE(Allows(id, {"list", "", "pods", "", ""}));
  EXPECT_TRUE(Allows(id, {"get", "", "pods", "log", "p"}));
  EXPECT_FALSE(Allows(id, {"get", "", "pods", "status", "p"}));  // subresource not granted
  EXPECT_FALSE(Allows(id, {"create", "", "pods", "", ""}));      // verb
  EXPECT_FALSE(Allows(id, {"list", "apps", "pods", "", ""}));    // group
  EXPECT_TRUE(Allows(id, {"update", "apps", "deployments", "scale", "web"}));
  EXPECT_FALSE(Allows(id, {"update", "apps", "deployments", "", "web"}));
  EXPECT_TRUE(Allows(id, {"get", "", "configmaps", "", "settings"}));
  EXPECT_FALSE(Allows(id, {"get", "", "configmaps", "", "other"}));  // resourceNames
  EXPECT_TRUE(AllowsNonResource(id, "get", "/healthz"));
  EXPECT_TRUE(AllowsNonResource(id, "get", "/apis/apps/v1"));
  EXPECT_FALSE(AllowsNonResource(id, "get", "/api/v1"));
  EXPECT_FALSE(AllowsNonResource(id, "post", "/healthz"));
}

TEST(AuthzReview, LocalAdminMayDoEverything) {
  EXPECT_TRUE(Allows(LocalAdmin(), {"create", "", "pods", "", ""}));
  EXPECT_TRUE(Allows(LocalAdmin(), {"delete", "scheduling.copse.dev", "podgroups", "", "g"}));
  EXPECT_TRUE(Allows(LocalAdmin(), {"patch", "apps", "deployments", "scale", "web"}));
  EXPECT_TRUE(AllowsNonResource(LocalAdmin(), "get", "/metrics"));
}

TEST(AuthzReview, AccessReviewAnswersFromTheIdentitysRules) {
  const std::vector<std::string> access = {"selfsubjectaccessreviews"};
  const json review = {{"kind", "SelfSubjectAccessReview"},
                       {"apiVersion", "authorization.k8s.io/v1"},
                       {"spec",
                        {{"resourceAttributes",
                          {{"namespace", "default"}, {"verb", "create"}, {"resource", "pods"}}}}}};
  const HttpResponse denied =
      HandleAuthorizationReview(PodReader(), "POST", "v1", access, review.dump());
  ASSERT_EQ(denied.status, 201) << denied.body;
  EXPECT_EQ(json::parse(denied.body)["status"]["allowed"], false);
  const HttpResponse allowed =
      HandleAuthorizationReview(LocalAdmin(), "POST", "v1", access, review.dump());
  ASSERT_EQ(allowed.status, 201) << allowed.body;
  const json out = json::parse(allowed.body);
  EXPECT_EQ(out["status"]["allowed"], true);
  EXPECT_EQ(out["spec"], review["spec"]);

  // Neither or both attributes: 422 naming the field.
  const json empty = {{"kind", "SelfSubjectAccessReview"}, {"spec", json::object()}};
  const HttpResponse invalid =
      HandleAuthorizationReview(LocalAdmin(), "POST", "v1", access, empty.dump());
  EXPECT_EQ(invalid.status, 422);
  EXPECT_NE(invalid.body.find("spec.resourceAttributes"), std::string::npos) << invalid.body;
  EXPECT_EQ(HandleAuthorizationReview(LocalAdmin(), "POST", "v1", access, "{").status, 400);
  EXPECT_EQ(HandleAuthorizationReview(LocalAdmin(), "GET", "v1", access, "").status, 405);
  const std::vector<std::string> other = {"subjectaccessreviews"};
  EXPECT_EQ(HandleAuthorizationReview(LocalAdmin(), "POST", "v1", other, review.dump()).status,
            404);
}

TEST(AuthzReview, RulesReviewListsTheRules) {
  const std::vector<std::string> rules = {"selfsubjectrulesreviews"};
  const json review = {{"kind", "SelfSubjectRulesReview"},
                       {"apiVersion", "authorization.k8s.io/v1"},
                       {"spec", {{"namespace", "default"}}}};
  const HttpResponse r = HandleAuthorizationReview(PodReader(), "POST", "v1", rules, review.dump());
  ASSERT_EQ(r.status, 201) << r.body;
  const json status = json::parse(r.body)["status"];
  ASSERT_EQ(status["resourceRules"].size(), 3u);
  EXPECT_EQ(status["resourceRules"][2]["resourceNames"], json::array({"settings"}));
  EXPECT_EQ(status["nonResourceRules"][0]["nonResourceURLs"], json::array({"/healthz", "/apis/*"}));
  EXPECT_EQ(status["incomplete"], false);
}

}  // namespace
}  // namespace copse::apiserver
