#pragma once
// DelegatedAuth: who may read the ops port, decided as kube-scheduler decides
// it for its own (k8s.io/apiserver's delegating authenticator and
// authorizer): the API server says who a client is and what it may do.
//
// Authentication, in kube's order; the first that succeeds names the user:
//   1. A client certificate (the TLS listener asks for one): verified
//      against the cluster's client CA (SetClientCa: from the ConfigMap
//      kube-system/extension-apiserver-authentication, ClientCaWatcher
//      below, or a --client-ca-file). User: the subject's CN; groups: its O
//      values. One that does not verify is an error.
//   2. "Authorization: Bearer <token>": a TokenReview
//      (authentication.k8s.io/v1); not authenticated is an error ("invalid
//      bearer token"), and so is a review that fails.
//   Success adds the group system:authenticated. No success with an error:
//   401. No credentials at all: the user system:anonymous in
//   system:unauthenticated, who goes on to be authorized like anyone.
// Authorization (verb: the lowercased HTTP method, "get"; the URL path):
//   1. a group in always_allow_groups (system:masters): allowed;
//   2. a path in always_allow_paths (/healthz, /readyz, /livez; an entry
//      ending in "*" is a prefix): allowed;
//   3. a SubjectAccessReview (authorization.k8s.io/v1, nonResourceAttributes
//      path and verb): allowed, or 403; a review that fails is a 500.
// Answers are cached as kube caches them: TokenReviews 10 s (authenticated or
// not), SubjectAccessReviews 10 s allowed and 10 s denied, each cache bounded
// (least recently used first out); failed calls are not cached.
//
// Refusals carry kube's bodies, a v1 Status in JSON:
//   401 {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
//        "message":"Unauthorized","reason":"Unauthorized","code":401}
//   403 ... "message":"forbidden: User \"system:anonymous\" cannot get path
//        \"/metrics\"","reason":"Forbidden","details":{},"code":403}
//   500 text/plain: Internal Server Error: "/metrics": <why>
// and, beyond max_in_flight calls waiting on the API server at once, 429
// "Too many requests, please try again later." (kube's max-in-flight
// answer), so that requests needing the API server never hold every thread
// of the ops server and the probes' paths stay answered.
//
// The API calls are functions (Reviewers) so that the decisions and caches
// can be tested without a server; ApiReviewers makes the real ones.
//
// Thread-safety: Decide, SetClientCa and stats may be called from any thread
// at once; the reviewers are called on the deciding thread, concurrently.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/result.h"
#include "kube/access_review.h"
#include "scheduler/config/expiring_cache.h"

namespace copse::kube {
class Client;
class IoThread;
class Informer;
}  // namespace copse::kube

namespace copse::scheduler::config {

struct DelegatedAuthOptions {
  DelegatedAuthOptions() = default;
  // kube's --authentication-token-webhook-cache-ttl: TokenReview answers,
  // authenticated or not.
  Clock::Duration token_cache_ttl = std::chrono::seconds(10);
  // kube's --authorization-webhook-cache-authorized-ttl / -unauthorized-ttl.
  Clock::Duration allow_cache_ttl = std::chrono::seconds(10);
  Clock::Duration deny_cache_ttl = std::chrono::seconds(10);
  // kube's --authorization-always-allow-paths.
  std::vector<std::string> always_allow_paths = {"/healthz", "/readyz", "/livez"};
  std::vector<std::string> always_allow_groups = {std::string(kube::kMastersGroup)};
  // Entries per cache (kube's authorizer keeps 8192).
  size_t cache_size = 8192;
  // Reviews waiting on the API server at once; more get 429 at once.
  size_t max_in_flight = 3;
  std::shared_ptr<const Clock> clock;  // default: RealClock
};

// The API server's answers. A null function leaves that step out, as kube
// does without an authentication (or authorization) kubeconfig: bearer
// tokens are then ignored (the request is anonymous), and only
// always-allowed groups and paths get in.
struct Reviewers {
  // The created TokenReview (status filled in) for a review of `token`.
  std::function<Result<kube::TokenReview>(const kube::TokenReview&)> review_token;
  std::function<Result<kube::SubjectAccessReview>(const kube::SubjectAccessReview&)> review_access;
};

// What Decide looks at.
struct AccessRequest {
  std::string_view method;         // "GET"
  std::string_view path;           // "/metrics" (no query)
  std::string_view authorization;  // the Authorization header
  // PEM of the client's certificates as presented, leaf first; empty: none.
  std::string_view client_certificate_chain;
};

struct AccessDecision {
  bool allowed = false;
  // When refused: 401, 403, 429 or 500, with kube's body.
  int status = 200;
  std::string content_type;
  std::string body;
  kube::UserInfo user;  // who asked (system:anonymous without credentials)
};

struct DelegatedAuthStats {
  uint64_t token_reviews = 0;   // TokenReviews sent
  uint64_t access_reviews = 0;  // SubjectAccessReviews sent
  uint64_t token_cache_hits = 0;
  uint64_t access_cache_hits = 0;
  uint64_t throttled = 0;  // 429s
};

class DelegatedAuth {
 public:
  DelegatedAuth(DelegatedAuthOptions options, Reviewers reviewers);
  DelegatedAuth(const DelegatedAuth&) = delete;
  DelegatedAuth& operator=(const DelegatedAuth&) = delete;

  AccessDecision Decide(const AccessRequest& request);

  // The client CA bundle (PEM) certificates are verified against; empty:
  // client certificates are not looked at.
  void SetClientCa(std::string ca_pem);
  std::string client_ca() const;

  DelegatedAuthStats stats() const;

 private:
  struct Authenticated {
    bool ok = false;      // a user was found (or the request is anonymous)
    bool failed = false;  // credentials did not authenticate: 401
    kube::UserInfo user;
  };
  Authenticated Authenticate(const AccessRequest& request, bool* throttled);
  bool AlwaysAllowed(const kube::UserInfo& user, std::string_view path) const;
  // Entry into the calls that wait on the API server (false: too many).
  bool Enter();
  void Leave();

  DelegatedAuthOptions options_;
  Reviewers reviewers_;
  std::shared_ptr<const Clock> clock_;
  mutable std::mutex ca_mu_;
  std::string client_ca_;
  // Token answers by SHA-256 of the token; access answers by the review's spec.
  ExpiringLruCache<std::string, kube::TokenReview> token_cache_;
  ExpiringLruCache<std::string, kube::SubjectAccessReview> access_cache_;
  std::atomic<size_t> in_flight_{0};
  std::atomic<uint64_t> token_reviews_{0};
  std::atomic<uint64_t> access_reviews_{0};
  std::atomic<uint64_t> token_cache_hits_{0};
  std::atomic<uint64_t> access_cache_hits_{0};
  std::atomic<uint64_t> throttled_{0};
};

// Reviewers that create TokenReviews through `authentication` and
// SubjectAccessReviews through `authorization` (null: that step left out),
// waiting up to `timeout` (kube: 10 s) on `io`, which must not be the
// calling thread's.
Reviewers ApiReviewers(std::shared_ptr<kube::Client> authentication,
                       std::shared_ptr<kube::Client> authorization, kube::IoThread& io,
                       std::chrono::milliseconds timeout = std::chrono::seconds(10));

// Where kube-apiserver publishes the CA of the client certificates it
// accepts, for servers that delegate to it.
inline constexpr std::string_view kAuthenticationConfigMapNamespace = "kube-system";
inline constexpr std::string_view kAuthenticationConfigMapName =
    "extension-apiserver-authentication";
inline constexpr std::string_view kClientCaKey = "client-ca-file";

// The client-ca-file of that ConfigMap (its JSON); "" when it has none.
std::string ClientCaOf(std::string_view config_map_json);

// Keeps DelegatedAuth's client CA equal to the client-ca-file of the ConfigMap
// kube-system/extension-apiserver-authentication (an informer on that one
// ConfigMap, as kube's DynamicCAFromConfigMapController): set when it
// appears or changes, cleared when it goes.
//
// Thread-safety: Start/Stop from one thread; the updates run on the client's
// executor.
class ClientCaWatcher {
 public:
  ClientCaWatcher(std::shared_ptr<kube::Client> client, DelegatedAuth& auth);
  ~ClientCaWatcher();  // Stop()
  ClientCaWatcher(const ClientCaWatcher&) = delete;
  ClientCaWatcher& operator=(const ClientCaWatcher&) = delete;

  void Start();
  void Stop();
  bool HasSynced() const;

 private:
  std::unique_ptr<kube::Informer> informer_;
};

}  // namespace copse::scheduler::config
