// Authorization reviews: RBAC-style rule matching for identities other than
// the local admin, the review objects built from a request body, and the
// TokenReviews and SubjectAccessReviews a delegating server (copse run's ops
// port) sends.

#include "apiserver/authz_review.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace copse::apiserver {
namespace {

using nlohmann::json;

const ServerAuthentication kClosed{{"the-token", "component-token"}, false};
const ServerAuthentication kOpen{{}, true};

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
      HandleAuthorizationReview(PodReader(), kClosed, "POST", "v1", access, review.dump());
  ASSERT_EQ(denied.status, 201) << denied.body;
  EXPECT_EQ(json::parse(denied.body)["status"]["allowed"], false);
  const HttpResponse allowed =
      HandleAuthorizationReview(LocalAdmin(), kClosed, "POST", "v1", access, review.dump());
  ASSERT_EQ(allowed.status, 201) << allowed.body;
  const json out = json::parse(allowed.body);
  EXPECT_EQ(out["status"]["allowed"], true);
  EXPECT_EQ(out["spec"], review["spec"]);

  // Neither or both attributes: 422 naming the field.
  const json empty = {{"kind", "SelfSubjectAccessReview"}, {"spec", json::object()}};
  const HttpResponse invalid =
      HandleAuthorizationReview(LocalAdmin(), kClosed, "POST", "v1", access, empty.dump());
  EXPECT_EQ(invalid.status, 422);
  EXPECT_NE(invalid.body.find("spec.resourceAttributes"), std::string::npos) << invalid.body;
  EXPECT_EQ(HandleAuthorizationReview(LocalAdmin(), kClosed, "POST", "v1", access, "{").status,
            400);
  EXPECT_EQ(HandleAuthorizationReview(LocalAdmin(), kClosed, "GET", "v1", access, "").status, 405);
  const std::vector<std::string> other = {"localsubjectaccessreviews"};
  EXPECT_EQ(
      HandleAuthorizationReview(LocalAdmin(), kClosed, "POST", "v1", other, review.dump()).status,
      404);
}

TEST(AuthzReview, RulesReviewListsTheRules) {
  const std::vector<std::string> rules = {"selfsubjectrulesreviews"};
  const json review = {{"kind", "SelfSubjectRulesReview"},
                       {"apiVersion", "authorization.k8s.io/v1"},
                       {"spec", {{"namespace", "default"}}}};
  const HttpResponse r =
      HandleAuthorizationReview(PodReader(), kClosed, "POST", "v1", rules, review.dump());
  ASSERT_EQ(r.status, 201) << r.body;
  const json status = json::parse(r.body)["status"];
  ASSERT_EQ(status["resourceRules"].size(), 3u);
  EXPECT_EQ(status["resourceRules"][2]["resourceNames"], json::array({"settings"}));
  EXPECT_EQ(status["nonResourceRules"][0]["nonResourceURLs"], json::array({"/healthz", "/apis/*"}));
  EXPECT_EQ(status["incomplete"], false);
}

json TokenReviewBody(const std::string& token) {
  return {{"kind", "TokenReview"},
          {"apiVersion", "authentication.k8s.io/v1"},
          {"spec", {{"token", token}}}};
}

json Answer(const HttpResponse& r) {
  EXPECT_EQ(r.status, 201) << r.body;
  return json::parse(r.body, nullptr, false);
}

TEST(AuthzReview, TokenReviewAuthenticatesTheServersTokensAsTheAdmin) {
  const std::vector<std::string> path = {"tokenreviews"};
  for (const char* token : {"the-token", "component-token"}) {
    const json out = Answer(
        HandleAuthenticationReview(kClosed, "POST", "v1", path, TokenReviewBody(token).dump()));
    EXPECT_EQ(out["kind"], "TokenReview");
    EXPECT_EQ(out["apiVersion"], "authentication.k8s.io/v1");
    EXPECT_EQ(out["status"]["authenticated"], true) << token;
    EXPECT_EQ(out["status"]["user"]["username"], "copse-local-admin");
    EXPECT_EQ(out["status"]["user"]["groups"],
              json::array({"system:masters", "system:authenticated"}));
  }
  // Another token: not authenticated, as kube answers (no "authenticated", an empty user).
  const json other = Answer(
      HandleAuthenticationReview(kClosed, "POST", "v1", path, TokenReviewBody("nope").dump()));
  EXPECT_FALSE(other["status"].contains("authenticated")) << other.dump();
  EXPECT_EQ(other["status"]["user"], json::object());
  // A server that lets everyone in lets every token in.
  const json open =
      Answer(HandleAuthenticationReview(kOpen, "POST", "v1", path, TokenReviewBody("any").dump()));
  EXPECT_EQ(open["status"]["authenticated"], true);

  const HttpResponse empty =
      HandleAuthenticationReview(kClosed, "POST", "v1", path, TokenReviewBody("").dump());
  EXPECT_EQ(empty.status, 400);
  EXPECT_NE(empty.body.find("token is required for TokenReview in authentication"),
            std::string::npos)
      << empty.body;
  EXPECT_EQ(HandleAuthenticationReview(kClosed, "POST", "v1", path, "[]").status, 400);
  EXPECT_EQ(HandleAuthenticationReview(kClosed, "POST", "v1", path,
                                       R"({"kind":"Pod","spec":{"token":"the-token"}})")
                .status,
            400);
  EXPECT_EQ(HandleAuthenticationReview(kClosed, "GET", "v1", path, "").status, 405);
  EXPECT_EQ(HandleAuthenticationReview(kClosed, "POST", "v1beta1", path, "").status, 404);
  EXPECT_EQ(
      HandleAuthenticationReview(kClosed, "POST", "v1", std::vector<std::string>{"x"}, "").status,
      404);
}

json AccessReviewBody(const std::string& user, const std::vector<std::string>& groups) {
  json spec = {{"nonResourceAttributes", {{"path", "/metrics"}, {"verb", "get"}}}};
  if (!user.empty()) spec["user"] = user;
  if (!groups.empty()) spec["groups"] = groups;
  return {
      {"kind", "SubjectAccessReview"}, {"apiVersion", "authorization.k8s.io/v1"}, {"spec", spec}};
}

TEST(AuthzReview, SubjectAccessReviewAllowsWhomTheServerLetsIn) {
  const std::vector<std::string> path = {"subjectaccessreviews"};
  const auto allowed = [&](const ServerAuthentication& authn, const json& body) {
    const json out =
        Answer(HandleAuthorizationReview(LocalAdmin(), authn, "POST", "v1", path, body.dump()));
    EXPECT_EQ(out["kind"], "SubjectAccessReview");
    EXPECT_EQ(out["spec"], body["spec"]);
    return out["status"]["allowed"].get<bool>();
  };
  // The admin, and any authenticated user (a client certificate's CN): the admin's rules.
  EXPECT_TRUE(allowed(
      kClosed, AccessReviewBody("copse-local-admin", {"system:masters", "system:authenticated"})));
  EXPECT_TRUE(allowed(kClosed, AccessReviewBody("cert-user", {"system:authenticated"})));
  // Whom the server refuses (401) has no rules.
  EXPECT_FALSE(allowed(kClosed, AccessReviewBody("system:anonymous", {"system:unauthenticated"})));
  EXPECT_FALSE(allowed(kClosed, AccessReviewBody("x", {"system:unauthenticated"})));
  // Without authentication, everyone may do everything.
  EXPECT_TRUE(allowed(kOpen, AccessReviewBody("system:anonymous", {"system:unauthenticated"})));
  // A resource request is matched against the rules too.
  json resource = AccessReviewBody("cert-user", {});
  resource["spec"].erase("nonResourceAttributes");
  resource["spec"]["resourceAttributes"] = {{"verb", "create"}, {"resource", "pods"}};
  EXPECT_TRUE(allowed(kClosed, resource));

  // kube's validation: user or groups, exactly one kind of attributes.
  const HttpResponse nobody = HandleAuthorizationReview(LocalAdmin(), kClosed, "POST", "v1", path,
                                                        AccessReviewBody("", {}).dump());
  EXPECT_EQ(nobody.status, 422);
  EXPECT_NE(nobody.body.find("SubjectAccessReview.authorization.k8s.io \\\"\\\" is invalid: "
                             "spec.user: Invalid value: \\\"\\\": at least one of user or "
                             "group must be specified"),
            std::string::npos)
      << nobody.body;
  json both = AccessReviewBody("u", {});
  both["spec"]["resourceAttributes"] = {{"verb", "get"}, {"resource", "pods"}};
  const HttpResponse two =
      HandleAuthorizationReview(LocalAdmin(), kClosed, "POST", "v1", path, both.dump());
  EXPECT_EQ(two.status, 422);
  EXPECT_NE(two.body.find("cannot be specified in combination with resourceAttributes"),
            std::string::npos)
      << two.body;
}

TEST(AuthzReview, DiscoveryListsBothReviewGroups) {
  const std::vector<std::string> groups = ReviewApiGroupsJson();
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(json::parse(groups[0])["name"], "authentication.k8s.io");
  EXPECT_EQ(json::parse(groups[1])["name"], "authorization.k8s.io");
  const std::vector<std::string> authn = {"apis", "authentication.k8s.io", "v1"};
  auto doc = ReviewDiscovery(authn);
  ASSERT_TRUE(doc);
  const json list = json::parse(*doc);
  ASSERT_EQ(list["resources"].size(), 1u);
  EXPECT_EQ(list["resources"][0]["name"], "tokenreviews");
  const std::vector<std::string> authz = {"apis", "authorization.k8s.io", "v1"};
  doc = ReviewDiscovery(authz);
  ASSERT_TRUE(doc);
  std::vector<std::string> names;
  const json authz_list = json::parse(*doc);
  for (const json& r : authz_list["resources"]) names.push_back(r["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"selfsubjectaccessreviews", "selfsubjectrulesreviews",
                                             "subjectaccessreviews"}));
  const std::vector<std::string> other = {"apis", "apps", "v1"};
  EXPECT_FALSE(ReviewDiscovery(other));
}

}  // namespace
}  // namespace copse::apiserver
