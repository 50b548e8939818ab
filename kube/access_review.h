#pragma once
// The reviews a delegating server sends the API server, and the API server
// answers: authentication.k8s.io/v1 TokenReview ("who holds this bearer
// token?") and authorization.k8s.io/v1 SubjectAccessReview ("may this user
// do this?"). `copse run`'s ops port creates them (scheduler/config/
// delegated_auth.h); copse local's API server answers them
// (apiserver/authz_review.h). Both are served as v1 by every Kubernetes
// release copse supports (v1.20 on).
//
//   TokenReview review;
//   review.token = "...";
//   auto created = co_await client->Create(resources::kTokenReviews, "", review.Encode());
//   auto answer = TokenReview::Decode(*created);   // answer->authenticated, answer->user
//
// Encode() writes the spec (and the status when one is set, as a server
// answers); Decode() reads both, skips unknown fields, and fails (kInvalid,
// naming the field) for a mistyped one or a body of another kind.
//
// Thread-safety: value types; the functions are pure.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "kube/object.h"

namespace copse::kube {

namespace resources {
inline const ResourceRef kTokenReviews{"authentication.k8s.io", "v1", "tokenreviews", false};
inline const ResourceRef kSubjectAccessReviews{"authorization.k8s.io", "v1", "subjectaccessreviews",
                                               false};
}  // namespace resources

// A user as kube's authenticators describe one (user.Info; TokenReview's
// status.user, SubjectAccessReview's spec.user/uid/groups/extra).
struct UserInfo {
  std::string username;
  std::string uid;
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::string>> extra;
  bool operator==(const UserInfo&) const = default;
};

// The users and groups kube's authenticators give requests without
// credentials and with them.
inline constexpr std::string_view kAnonymousUser = "system:anonymous";
inline constexpr std::string_view kUnauthenticatedGroup = "system:unauthenticated";
inline constexpr std::string_view kAuthenticatedGroup = "system:authenticated";
inline constexpr std::string_view kMastersGroup = "system:masters";

struct TokenReview {
  static constexpr std::string_view kApiVersion = "authentication.k8s.io/v1";
  static constexpr std::string_view kKind = "TokenReview";

  // spec
  std::string token;
  std::vector<std::string> audiences;
  // status (set by the server)
  bool has_status = false;
  bool authenticated = false;
  UserInfo user;
  std::vector<std::string> status_audiences;
  std::string error;

  std::string Encode() const;
  static Result<TokenReview> Decode(std::string_view json);
};

struct ResourceAttributes {
  std::string namespace_;
  std::string verb;
  std::string group;
  std::string version;
  std::string resource;
  std::string subresource;
  std::string name;
  bool operator==(const ResourceAttributes&) const = default;
};

struct NonResourceAttributes {
  std::string path;
  std::string verb;
  bool operator==(const NonResourceAttributes&) const = default;
};

struct SubjectAccessReview {
  static constexpr std::string_view kApiVersion = "authorization.k8s.io/v1";
  static constexpr std::string_view kKind = "SubjectAccessReview";

  // spec: who (user.username is spec.user) and what (exactly one of the two
  // attributes, which the server checks)
  UserInfo user;
  std::optional<ResourceAttributes> resource_attributes;
  std::optional<NonResourceAttributes> non_resource_attributes;
  // status (set by the server)
  bool has_status = false;
  bool allowed = false;
  bool denied = false;  // an explicit "no" (not just no rule allowing it)
  std::string reason;
  std::string evaluation_error;

  std::string Encode() const;
  static Result<SubjectAccessReview> Decode(std::string_view json);
};

}  // namespace copse::kube
