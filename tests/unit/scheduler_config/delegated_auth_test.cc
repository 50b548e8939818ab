// DelegatedAuth's decisions and caches, with the API server's answers given
// by functions that count their calls and a FakeClock (the same decisions
// against real servers: tests/integration/scheduler/ops_auth_test.cc against
// copse local, tests/e2e/real against kube-apiserver v1.20.2); and
// ExpiringLruCache on its own.

#include "scheduler/config/delegated_auth.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "net/cert.h"
#include "scheduler/config/expiring_cache.h"

namespace copse::scheduler::config {
namespace delegated_auth_test {

using nlohmann::json;
using std::chrono::seconds;

// ---------------------------------------------------------------- the cache

TEST(ExpiringLruCache, KeepsAnAnswerUntilItsTtl) {
  FakeClock clock;
  ExpiringLruCache<std::string, int> cache(4, clock);
  cache.Put("a", 1, seconds(10));
  EXPECT_EQ(cache.Get("a"), 1);
  clock.Advance(std::chrono::milliseconds(9999));
  EXPECT_EQ(cache.Get("a"), 1);
  clock.Advance(std::chrono::milliseconds(1));
  EXPECT_EQ(cache.Get("a"), std::nullopt) << "expired at exactly its TTL";
  EXPECT_EQ(cache.size(), 0u);
  cache.Put("b", 2, seconds(0));
  EXPECT_EQ(cache.Get("b"), std::nullopt) << "a TTL of 0 keeps nothing";
  // Put again: a new value and a new TTL.
  cache.Put("c", 3, seconds(5));
  clock.Advance(seconds(4));
  cache.Put("c", 4, seconds(5));
  clock.Advance(seconds(4));
  EXPECT_EQ(cache.Get("c"), 4);
}

TEST(ExpiringLruCache, DropsTheLeastRecentlyUsedWhenFull) {
  FakeClock clock;
  ExpiringLruCache<std::string, int> cache(2, clock);
  cache.Put("a", 1, seconds(10));
  cache.Put("b", 2, seconds(10));
  EXPECT_EQ(cache.Get("a"), 1);  // a is now the most recent
  cache.Put("c", 3, seconds(10));
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.Get("b"), std::nullopt);
  EXPECT_EQ(cache.Get("a"), 1);
  EXPECT_EQ(cache.Get("c"), 3);
  ExpiringLruCache<std::string, int> none(0, clock);
  none.Put("a", 1, seconds(10));
  EXPECT_EQ(none.Get("a"), std::nullopt);
}

// ---------------------------------------------------------- the decisions

// The API server as functions: tokens it knows, and who may get which path.
struct FakeApi {
  std::map<std::string, kube::UserInfo> tokens;
  std::map<std::string, std::string> allowed_user_path;  // user -> path allowed to get
  std::string deny_reason;
  bool token_error = false;
  bool access_error = false;
  int token_calls = 0;
  int access_calls = 0;
  std::vector<kube::SubjectAccessReview> access_asked;

  Reviewers Make() {
    Reviewers r;
    r.review_token = [this](const kube::TokenReview& review) -> Result<kube::TokenReview> {
      ++token_calls;
      if (token_error) return MakeError(ErrorCode::kUnavailable, "connection refused");
      kube::TokenReview out = review;
      out.has_status = true;
      if (auto it = tokens.find(review.token); it != tokens.end()) {
        out.authenticated = true;
        out.user = it->second;
      }
      return out;
    };
    r.review_access =
        [this](const kube::SubjectAccessReview& review) -> Result<kube::SubjectAccessReview> {
      ++access_calls;
      access_asked.push_back(review);
      if (access_error) return MakeError(ErrorCode::kTimeout, "deadline exceeded");
      kube::SubjectAccessReview out = review;
      out.has_status = true;
      auto it = allowed_user_path.find(review.user.username);
      out.allowed = it != allowed_user_path.end() && review.non_resource_attributes &&
                    review.non_resource_attributes->path == it->second &&
                    review.non_resource_attributes->verb == "get";
      if (!out.allowed) out.reason = deny_reason;
      return out;
    };
    return r;
  }
};

struct Fixture {
  explicit Fixture(DelegatedAuthOptions options = {}) {
    // Wall time now: client certificates are checked against it.
    clock = std::make_shared<FakeClock>(std::chrono::system_clock::now());
    options.clock = clock;
    api.tokens["good"] =
        kube::UserInfo{"system:serviceaccount:mon:prom", "uid-1", {"system:serviceaccounts"}, {}};
    api.tokens["viewer"] = kube::UserInfo{"viewer", "", {}, {}};
    api.tokens["admin"] = kube::UserInfo{"admin", "", {"system:masters"}, {}};
    api.allowed_user_path["system:serviceaccount:mon:prom"] = "/metrics";
    auth = std::make_unique<DelegatedAuth>(options, api.Make());
  }
  AccessDecision Get(std::string_view path, std::string_view authorization = {},
                     std::string_view chain = {}, std::string_view method = "GET") {
    AccessRequest r;
    r.method = method;
    r.path = path;
    r.authorization = authorization;
    r.client_certificate_chain = chain;
    return auth->Decide(r);
  }
  std::shared_ptr<FakeClock> clock;
  FakeApi api;
  std::unique_ptr<DelegatedAuth> auth;
};

const char kUnauthorizedBody[] =
    R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401})"
    "\n";

TEST(DelegatedAuth, HealthPathsNeedNoCredentialsAndNoApiCall) {
  Fixture f;
  for (const char* path : {"/healthz", "/readyz", "/livez"}) {
    const AccessDecision d = f.Get(path);
    EXPECT_TRUE(d.allowed) << path;
    EXPECT_EQ(d.user.username, "system:anonymous");
    EXPECT_EQ(d.user.groups, std::vector<std::string>{"system:unauthenticated"});
  }
  EXPECT_EQ(f.api.token_calls + f.api.access_calls, 0);
  // A check of its own (/healthz/ping) is not an always-allowed path, as in kube.
  EXPECT_FALSE(f.Get("/healthz/ping").allowed);
}

TEST(DelegatedAuth, NoCredentialsIsAnonymousAndForbiddenWithKubesBody) {
  Fixture f;
  const AccessDecision d = f.Get("/metrics");
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.status, 403);
  EXPECT_EQ(d.content_type, "application/json");
  EXPECT_EQ(
      d.body,
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"forbidden: User \"system:anonymous\" cannot get path \"/metrics\"","reason":"Forbidden","details":{},"code":403})"
      "\n");
  ASSERT_EQ(f.api.access_asked.size(), 1u);
  const kube::SubjectAccessReview& asked = f.api.access_asked[0];
  EXPECT_EQ(asked.user.username, "system:anonymous");
  EXPECT_EQ(asked.user.groups, std::vector<std::string>{"system:unauthenticated"});
  EXPECT_EQ(asked.non_resource_attributes, (kube::NonResourceAttributes{"/metrics", "get"}));
  EXPECT_EQ(f.api.token_calls, 0);
}

TEST(DelegatedAuth, ATokenWithRightsGetsInAndTheAnswersAreCached) {
  Fixture f;
  const AccessDecision d = f.Get("/metrics", "Bearer good");
  ASSERT_TRUE(d.allowed) << d.body;
  EXPECT_EQ(d.user.username, "system:serviceaccount:mon:prom");
  // kube's group adder: system:authenticated joins the user's groups.
  EXPECT_EQ(d.user.groups,
            (std::vector<std::string>{"system:serviceaccounts", "system:authenticated"}));
  ASSERT_EQ(f.api.access_asked.size(), 1u);
  EXPECT_EQ(f.api.access_asked[0].user.uid, "uid-1");
  EXPECT_EQ(f.api.access_asked[0].user.groups, d.user.groups);
  EXPECT_EQ(f.api.token_calls, 1);
  EXPECT_EQ(f.api.access_calls, 1);
  // Within 10 s: from the caches.
  f.clock->Advance(std::chrono::milliseconds(9900));
  EXPECT_TRUE(f.Get("/metrics", "bearer good").allowed) << "the scheme in any case";
  EXPECT_EQ(f.api.token_calls, 1);
  EXPECT_EQ(f.api.access_calls, 1);
  EXPECT_EQ(f.auth->stats().token_cache_hits, 1u);
  EXPECT_EQ(f.auth->stats().access_cache_hits, 1u);
  // After: asked again (a revoked right takes effect within the TTL).
  f.clock->Advance(std::chrono::milliseconds(100));
  f.api.allowed_user_path.clear();
  EXPECT_EQ(f.Get("/metrics", "Bearer good").status, 403);
  EXPECT_EQ(f.api.token_calls, 2);
  EXPECT_EQ(f.api.access_calls, 2);
}

TEST(DelegatedAuth, ATokenWithoutRightsIsForbiddenAndTheDenialCached) {
  Fixture f;
  f.api.deny_reason = "no RBAC policy matched";
  const AccessDecision d = f.Get("/metrics", "Bearer viewer");
  EXPECT_EQ(d.status, 403);
  EXPECT_EQ(json::parse(d.body)["message"],
            R"(forbidden: User "viewer" cannot get path "/metrics": no RBAC policy matched)");
  EXPECT_EQ(f.Get("/metrics", "Bearer viewer").status, 403);
  EXPECT_EQ(f.api.access_calls, 1) << "denied answers are cached too";
  f.clock->Advance(seconds(10));
  EXPECT_EQ(f.Get("/metrics", "Bearer viewer").status, 403);
  EXPECT_EQ(f.api.access_calls, 2);
}

TEST(DelegatedAuth, AnUnknownTokenIs401EvenOnHealthPaths) {
  Fixture f;
  for (const char* path : {"/metrics", "/healthz"}) {
    const AccessDecision d = f.Get(path, "Bearer wrong");
    EXPECT_EQ(d.status, 401) << path;
    EXPECT_EQ(d.body, kUnauthorizedBody);
  }
  EXPECT_EQ(f.api.token_calls, 1) << "an unauthenticated answer is cached";
  EXPECT_EQ(f.api.access_calls, 0);
  // Not a bearer token: no credentials.
  EXPECT_TRUE(f.Get("/healthz", "Basic dTpw").allowed);
  EXPECT_TRUE(f.Get("/healthz", "Bearer").allowed);
}

TEST(DelegatedAuth, FailedCallsAreNotCached) {
  Fixture f;
  f.api.token_error = true;
  EXPECT_EQ(f.Get("/metrics", "Bearer good").status, 401);
  EXPECT_EQ(f.Get("/metrics", "Bearer good").status, 401);
  EXPECT_EQ(f.api.token_calls, 2);
  f.api.token_error = false;
  f.api.access_error = true;
  const AccessDecision d = f.Get("/metrics", "Bearer good");
  EXPECT_EQ(d.status, 500);
  EXPECT_EQ(d.body, R"(Internal Server Error: "/metrics": deadline exceeded)");
  f.api.access_error = false;
  EXPECT_TRUE(f.Get("/metrics", "Bearer good").allowed);
  EXPECT_EQ(f.api.access_calls, 2);
}

TEST(DelegatedAuth, MastersAndAlwaysAllowedPathsSkipTheReview) {
  DelegatedAuthOptions options;
  options.always_allow_paths = {"/healthz", "debug/*"};
  Fixture f(options);
  EXPECT_TRUE(f.Get("/metrics", "Bearer admin").allowed);
  EXPECT_TRUE(f.Get("/debug/pprof/heap").allowed) << "a trailing * is a prefix, / optional";
  EXPECT_FALSE(f.Get("/readyz").allowed) << "no longer in the list";
  EXPECT_EQ(f.api.access_calls, 1);  // /readyz only
}

TEST(DelegatedAuth, TheVerbIsTheLowercasedMethod) {
  Fixture f;
  EXPECT_EQ(f.Get("/metrics", "Bearer good", {}, "HEAD").status, 403);
  ASSERT_EQ(f.api.access_asked.size(), 1u);
  EXPECT_EQ(f.api.access_asked[0].non_resource_attributes->verb, "head");
  const AccessDecision post = f.Get("/metrics", {}, {}, "POST");
  EXPECT_NE(post.body.find(R"(cannot post path \"/metrics\")"), std::string::npos) << post.body;
}

TEST(DelegatedAuth, WithoutReviewersTokensAreIgnoredAndOnlyAlwaysAllowedGetsIn) {
  DelegatedAuthOptions options;
  options.clock = std::make_shared<FakeClock>();
  DelegatedAuth auth(options, Reviewers{});
  AccessRequest r;
  r.method = "GET";
  r.path = "/metrics";
  r.authorization = "Bearer good";
  const AccessDecision d = auth.Decide(r);
  EXPECT_EQ(d.status, 403);
  EXPECT_EQ(d.user.username, "system:anonymous");
  r.path = "/healthz";
  EXPECT_TRUE(auth.Decide(r).allowed);
}

TEST(DelegatedAuth, TheTokenCacheIsBounded) {
  DelegatedAuthOptions options;
  options.cache_size = 2;
  Fixture f(options);
  f.api.tokens["t3"] = kube::UserInfo{"t3", "", {}, {}};
  f.Get("/healthz", "Bearer good");
  f.Get("/healthz", "Bearer viewer");
  f.Get("/healthz", "Bearer t3");  // pushes "good" out
  EXPECT_EQ(f.api.token_calls, 3);
  f.Get("/healthz", "Bearer t3");
  EXPECT_EQ(f.api.token_calls, 3);
  f.Get("/healthz", "Bearer good");
  EXPECT_EQ(f.api.token_calls, 4);
}

TEST(DelegatedAuth, BeyondMaxInFlightCallsTheAnswerIs429) {
  DelegatedAuthOptions options;
  options.max_in_flight = 1;
  options.clock = std::make_shared<FakeClock>();
  std::mutex mu;
  std::condition_variable cv;
  bool entered = false;
  bool release = false;
  Reviewers reviewers;
  reviewers.review_token = [&](const kube::TokenReview& review) -> Result<kube::TokenReview> {
    std::unique_lock<std::mutex> lock(mu);
    entered = true;
    cv.notify_all();
    cv.wait(lock, [&] { return release; });
    kube::TokenReview out = review;
    out.has_status = true;
    return out;
  };
  DelegatedAuth auth(options, reviewers);
  AccessRequest r;
  r.method = "GET";
  r.path = "/healthz";
  r.authorization = "Bearer slow";
  auto first = std::async(std::launch::async, [&] { return auth.Decide(r).status; });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return entered; });
  }
  AccessRequest other = r;
  other.authorization = "Bearer another";
  const AccessDecision d = auth.Decide(other);
  EXPECT_EQ(d.status, 429);
  EXPECT_EQ(d.body, "Too many requests, please try again later.\n");
  // A request that needs no call is still answered.
  AccessRequest probe = r;
  probe.authorization = {};
  EXPECT_TRUE(auth.Decide(probe).allowed);
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  EXPECT_EQ(first.get(), 401);
  EXPECT_EQ(auth.stats().throttled, 1u);
}

TEST(DelegatedAuth, ClientCertificatesAreVerifiedAgainstTheClientCa) {
  Fixture f;
  auto ca = net::NewCertificateAuthority();
  auto other_ca = net::NewCertificateAuthority();
  ASSERT_TRUE(ca.ok() && other_ca.ok());
  net::CertificateOptions client;
  client.common_name = "cert-user";
  client.organization = "metrics-readers";
  client.server_auth = false;
  client.client_auth = true;
  auto cert = net::IssueCertificate(*ca, client);
  auto stranger = net::IssueCertificate(*other_ca, client);
  net::CertificateOptions serving = client;
  serving.server_auth = true;
  serving.client_auth = false;
  auto server_only = net::IssueCertificate(*ca, serving);
  ASSERT_TRUE(cert.ok() && stranger.ok() && server_only.ok());
  f.api.allowed_user_path["cert-user"] = "/metrics";

  // No client CA yet: certificates are not looked at.
  EXPECT_EQ(f.Get("/metrics", {}, cert->cert_pem).user.username, "system:anonymous");
  f.auth->SetClientCa(ca->cert_pem);
  const AccessDecision d = f.Get("/metrics", {}, cert->cert_pem);
  ASSERT_TRUE(d.allowed) << d.body;
  EXPECT_EQ(d.user.username, "cert-user");
  EXPECT_EQ(d.user.groups, (std::vector<std::string>{"metrics-readers", "system:authenticated"}));
  EXPECT_EQ(f.api.token_calls, 0);
  // Signed by another CA, or not for clients: 401, a token notwithstanding
  // only when it does not authenticate either.
  EXPECT_EQ(f.Get("/metrics", {}, stranger->cert_pem).status, 401);
  EXPECT_EQ(f.Get("/healthz", {}, server_only->cert_pem).status, 401);
  EXPECT_TRUE(f.Get("/metrics", "Bearer good", stranger->cert_pem).allowed);
  EXPECT_EQ(f.Get("/metrics", "Bearer wrong", stranger->cert_pem).status, 401);
  // The CA removed: back to anonymous.
  f.auth->SetClientCa("");
  EXPECT_EQ(f.Get("/healthz", {}, stranger->cert_pem).user.username, "system:anonymous");
}

}  // namespace delegated_auth_test
}  // namespace copse::scheduler::config
