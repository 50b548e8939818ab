// TokenReview and SubjectAccessReview: what a delegating server sends and
// what the API server answers, both ways through the codec, and the answers
// of a real kube-apiserver (their JSON as v1.20 writes it).

#include "kube/access_review.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace copse::kube {
namespace access_review_test {

using nlohmann::json;

TEST(AccessReview, TokenReviewRequestHasTheTokenOnly) {
  TokenReview review;
  review.token = "abc";
  const json out = json::parse(review.Encode());
  EXPECT_EQ(out["apiVersion"], "authentication.k8s.io/v1");
  EXPECT_EQ(out["kind"], "TokenReview");
  EXPECT_EQ(out["spec"], json({{"token", "abc"}}));
  EXPECT_FALSE(out.contains("status"));
}

TEST(AccessReview, TokenReviewAnswerOfAServiceAccountDecodes) {
  // The shape kube-apiserver answers for a bound service account token.
  const std::string answer = R"({"kind":"TokenReview","apiVersion":"authentication.k8s.io/v1",
    "metadata":{"creationTimestamp":null,"managedFields":[]},
    "spec":{"token":"eyJ"},
    "status":{"authenticated":true,
      "user":{"username":"system:serviceaccount:ns:prom","uid":"1f2e",
              "groups":["system:serviceaccounts","system:serviceaccounts:ns","system:authenticated"],
              "extra":{"authentication.kubernetes.io/pod-name":["prom-0"]}},
      "audiences":["https://kubernetes.default.svc"]}})";
  auto r = TokenReview::Decode(answer);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_TRUE(r->has_status);
  EXPECT_TRUE(r->authenticated);
  EXPECT_EQ(r->user.username, "system:serviceaccount:ns:prom");
  EXPECT_EQ(r->user.uid, "1f2e");
  EXPECT_EQ(r->user.groups.size(), 3u);
  EXPECT_EQ(r->user.extra.at("authentication.kubernetes.io/pod-name"),
            std::vector<std::string>{"prom-0"});
  EXPECT_EQ(r->status_audiences, std::vector<std::string>{"https://kubernetes.default.svc"});
  // An unknown token: kube leaves "authenticated" out and the user empty.
  auto unknown = TokenReview::Decode(
      R"({"kind":"TokenReview","apiVersion":"authentication.k8s.io/v1","spec":{"token":"x"},"status":{"user":{}}})");
  ASSERT_TRUE(unknown.ok());
  EXPECT_TRUE(unknown->has_status);
  EXPECT_FALSE(unknown->authenticated);
  // Round trip of an answer.
  auto again = TokenReview::Decode(r->Encode());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->user, r->user);
  EXPECT_TRUE(again->authenticated);
}

TEST(AccessReview, SubjectAccessReviewRequestIsKubesNonResourceForm) {
  SubjectAccessReview review;
  review.user.username = "system:anonymous";
  review.user.groups = {"system:unauthenticated"};
  review.non_resource_attributes = NonResourceAttributes{"/metrics", "get"};
  const json out = json::parse(review.Encode());
  EXPECT_EQ(out["apiVersion"], "authorization.k8s.io/v1");
  EXPECT_EQ(out["kind"], "SubjectAccessReview");
  EXPECT_EQ(out["spec"], json({{"nonResourceAttributes", {{"path", "/metrics"}, {"verb", "get"}}},
                               {"user", "system:anonymous"},
                               {"groups", {"system:unauthenticated"}}}));
  EXPECT_FALSE(out.contains("status"));
  auto back = SubjectAccessReview::Decode(out.dump());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->user, review.user);
  EXPECT_EQ(back->non_resource_attributes, review.non_resource_attributes);
  EXPECT_FALSE(back->resource_attributes);
}

TEST(AccessReview, SubjectAccessReviewAnswersDecode) {
  auto allowed = SubjectAccessReview::Decode(
      R"({"kind":"SubjectAccessReview","apiVersion":"authorization.k8s.io/v1",
          "spec":{"resourceAttributes":{"namespace":"a","verb":"get","resource":"pods"},"user":"u"},
          "status":{"allowed":true,"reason":"RBAC: allowed by ClusterRoleBinding \"x\""}})");
  ASSERT_TRUE(allowed.ok()) << allowed.error().ToString();
  EXPECT_TRUE(allowed->allowed);
  EXPECT_FALSE(allowed->denied);
  EXPECT_EQ(allowed->reason, "RBAC: allowed by ClusterRoleBinding \"x\"");
  ASSERT_TRUE(allowed->resource_attributes);
  EXPECT_EQ(allowed->resource_attributes->namespace_, "a");
  auto denied = SubjectAccessReview::Decode(
      R"({"kind":"SubjectAccessReview","spec":{"user":"u"},"status":{"allowed":false,"denied":true,"evaluationError":"e"}})");
  ASSERT_TRUE(denied.ok());
  EXPECT_FALSE(denied->allowed);
  EXPECT_TRUE(denied->denied);
  EXPECT_EQ(denied->evaluation_error, "e");
}

TEST(AccessReview, BadBodiesNameTheField) {
  auto not_json = TokenReview::Decode("{");
  ASSERT_FALSE(not_json.ok());
  EXPECT_EQ(not_json.error().code, ErrorCode::kInvalid);
  auto wrong_kind = TokenReview::Decode(R"({"kind":"Pod"})");
  ASSERT_FALSE(wrong_kind.ok());
  EXPECT_NE(wrong_kind.error().message.find("not a TokenReview"), std::string::npos);
  auto mistyped = TokenReview::Decode(R"({"status":{"authenticated":"yes"}})");
  ASSERT_FALSE(mistyped.ok());
  EXPECT_EQ(mistyped.error().message, "TokenReview: status.authenticated: expected boolean");
  auto groups = SubjectAccessReview::Decode(R"({"spec":{"groups":[1]}})");
  ASSERT_FALSE(groups.ok());
  EXPECT_EQ(groups.error().message, "SubjectAccessReview: spec.groups: expected array of strings");
  auto spec = SubjectAccessReview::Decode(R"({"spec":[]})");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().message, "SubjectAccessReview: spec: expected object");
}

}  // namespace access_review_test
}  // namespace copse::kube
