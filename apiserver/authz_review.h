#pragma once
// Authorization reviews of the embedded API server (authorization.k8s.io/v1
// SelfSubjectAccessReview and SelfSubjectRulesReview), which `kubectl auth
// can-i` and `kubectl auth can-i --list` create.
//
// The answer comes from the requesting identity's rules, matched as RBAC
// matches a PolicyRule (verbs, API groups, resources with "res/sub" and "*/sub"
// forms, resource names; non-resource URLs with a trailing "*" prefix match).
// The embedded server authenticates one identity: the holder of its bearer
// token (everyone when it has no token), the local admin, whose rules allow
// every verb on everything. A server with more identities gives each its own
// rules and the same evaluation answers for them.
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

// Answers a request under /apis/authorization.k8s.io/v1/ (`rest`: the path
// segments after the version): POST of selfsubjectaccessreviews or
// selfsubjectrulesreviews. A JSON body (protobuf bodies were transcoded before).
// Errors as kube-apiserver: 400 for a body that is not a review, 422 naming
// the field for a spec with neither or both of resourceAttributes and
// nonResourceAttributes, 405 for other methods, 404 for other resources.
HttpResponse HandleAuthorizationReview(const Identity& identity, std::string_view method,
                                       std::string_view version, std::span<const std::string> rest,
                                       std::string_view body);

// Discovery for the group: the APIGroup object (JSON) for /apis, and the
// documents at /apis/authorization.k8s.io[/v1] (`segs`: the whole path's
// segments); nullopt for any other path.
std::string AuthorizationApiGroupJson();
std::optional<std::string> AuthorizationDiscovery(std::span<const std::string> segs);

}  // namespace copse::apiserver
