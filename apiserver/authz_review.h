#pragma once
// Authentication and authorization reviews of the embedded API server:
// authorization.k8s.io/v1 SelfSubjectAccessReview and SelfSubjectRulesReview,
// which `kubectl auth can-i` and `kubectl auth can-i --list` create, and the
// reviews servers that delegate to it create (`copse run`'s ops port):
// authentication.k8s.io/v1 TokenReview and authorization.k8s.io/v1
// SubjectAccessReview.
//
// The answer comes from the requesting identity's rules, matched as RBAC
// matches a PolicyRule (verbs, API groups, resources with "res/sub" and "*/sub"
// forms, resource names; non-resource URLs with a trailing "*" prefix match).
// The embedded server authenticates one identity: the holder of its bearer
// token (everyone when it has no token), the local admin, whose rules allow
// every verb on everything. A server with more identities gives each its own
// rules and the same evaluation answers for them.
//
// For delegation (ServerAuthentication):
//   TokenReview           one of the server's tokens authenticates as the
//                         local admin (copse-local-admin in system:masters
//                         and system:authenticated); any other does not. A
//                         server without authentication lets every request
//                         in as the admin, so there every token does.
//   SubjectAccessReview   a subject the server would let in has the local
//                         admin's rules: every authenticated user (a token
//                         holder, or a client certificate's user) gets them;
//                         system:anonymous and system:unauthenticated, whom
//                         the server refuses (401), get none. A server
//                         without authentication allows everyone everything.
//
// Thread-safety: pure functions over immutable inputs.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "apiserver/handler.h"

namespace copse::apiserver {

inline constexpr std::string_view kAuthorizationGroup = "authorization.k8s.io";
inline constexpr std::string_view kAuthenticationGroup = "authentication.k8s.io";

struct PolicyRule {
  std::vector<std::string> verbs;
  std::vector<std::string> api_groups;
  std::vector<std::string> resources;       // "pods", "pods/status", "*/scale", "*"
  std::vector<std::string> resource_names;  // empty: every name
};

struct NonResourceRule {
  std::vector<std::string> verbs;
  std::vector<std::string> urls;  // "/healthz", "/apis/*", "*"
};

struct Identity {
  std::string user;
  std::vector<std::string> groups;
  std::vector<PolicyRule> rules;
  std::vector<NonResourceRule> non_resource_rules;
};

// The local admin: user "copse-local-admin" in system:masters, every verb on
// every resource and URL.
const Identity& LocalAdmin();

// What a resource request asks (SelfSubjectAccessReview's resourceAttributes).
struct ResourceAttributes {
  std::string verb;
  std::string group;
  std::string resource;
  std::string subresource;
  std::string name;
};

bool Allows(const Identity& identity, const ResourceAttributes& attributes);
bool AllowsNonResource(const Identity& identity, std::string_view verb, std::string_view path);

// How the server authenticates, as reviews for other servers see it.
struct ServerAuthentication {
  // Bearer tokens that authenticate as the local admin (empty ones ignored).
  std::vector<std::string> tokens;
  // No authentication required: every request is let in as the local admin.
  bool open = false;
};

// The identity a bearer token authenticates as (the local admin), or null.
const Identity* AuthenticateToken(const ServerAuthentication& authentication,
                                  std::string_view token);

// Answers a request under /apis/authorization.k8s.io/v1/ (`rest`: the path
// segments after the version): POST of selfsubjectaccessreviews or
// selfsubjectrulesreviews (answered for `identity`, the requester), or of
// subjectaccessreviews (answered for the review's subject, as described
// above). A JSON body (protobuf bodies were transcoded before). Errors as
// kube-apiserver: 400 for a body that is not a review, 422 naming the field
// for a spec with neither or both of resourceAttributes and
// nonResourceAttributes (or, for a SubjectAccessReview, neither user nor
// groups), 405 for other methods, 404 for other resources.
HttpResponse HandleAuthorizationReview(const Identity& identity,
                                       const ServerAuthentication& authentication,
                                       std::string_view method, std::string_view version,
                                       std::span<const std::string> rest, std::string_view body);

// Answers a request under /apis/authentication.k8s.io/v1/: POST of
// tokenreviews. 400 for a body that is not a TokenReview or one without a
// token ("token is required for TokenReview in authentication"), 405 for
// other methods, 404 for other resources.
HttpResponse HandleAuthenticationReview(const ServerAuthentication& authentication,
                                        std::string_view method, std::string_view version,
                                        std::span<const std::string> rest, std::string_view body);

// Discovery for both groups (authentication.k8s.io and authorization.k8s.io,
// v1): their APIGroup objects (JSON) for /apis, and the documents at
// /apis/<group>[/v1] (`segs`: the whole path's segments); nullopt for any
// other path.
std::vector<std::string> ReviewApiGroupsJson();
std::optional<std::string> ReviewDiscovery(std::span<const std::string> segs);

}  // namespace copse::apiserver
