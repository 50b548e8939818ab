#include "apiserver/authz_review.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "kube/access_review.h"

namespace copse::apiserver {

using nlohmann::json;

namespace {

constexpr std::string_view kVersion = "v1";

bool Contains(const std::vector<std::string>& values, std::string_view value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

bool MatchesAll(const std::vector<std::string>& values, std::string_view value) {
  return Contains(values, "*") || Contains(values, value);
}

// RBAC's ResourceMatches: "*", the resource, "resource/subresource", or
// "*/subresource".
bool ResourceMatches(const PolicyRule& rule, std::string_view resource,
                     std::string_view subresource) {
  const std::string combined = subresource.empty()
                                   ? std::string(resource)
                                   : std::string(resource) + "/" + std::string(subresource);
  for (const std::string& r : rule.resources) {
    if (r == "*" || r == combined) return true;
    if (!subresource.empty() && r.size() == subresource.size() + 2 && r.starts_with("*/") &&
        r.substr(2) == subresource) {
      return true;
    }
  }
  return false;
}

HttpResponse Respond(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

HttpResponse Fail(int status, std::string reason, std::string message) {
  Error e =
      MakeError(status == 404 ? ErrorCode::kNotFound : ErrorCode::kInvalid, std::move(message));
  e.http_status = status;
  e.reason = std::move(reason);
  return Respond(status, StatusJson(e));
}

std::string StringAt(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

json RulesJson(const Identity& identity) {
  json resource_rules = json::array();
  for (const PolicyRule& rule : identity.rules) {
    json r = {{"verbs", rule.verbs}};
    if (!rule.api_groups.empty()) r["apiGroups"] = rule.api_groups;
    if (!rule.resources.empty()) r["resources"] = rule.resources;
    if (!rule.resource_names.empty()) r["resourceNames"] = rule.resource_names;
    resource_rules.push_back(std::move(r));
  }
  json non_resource_rules = json::array();
  for (const NonResourceRule& rule : identity.non_resource_rules) {
    non_resource_rules.push_back({{"verbs", rule.verbs}, {"nonResourceURLs", rule.urls}});
  }
  return {{"resourceRules", std::move(resource_rules)},
          {"nonResourceRules", std::move(non_resource_rules)},
          {"incomplete", false}};
}

// The review as created: kind and apiVersion set, metadata kept, status filled.
json ReviewObject(const json& body, std::string_view kind) {
  json out = json::object();
  out["kind"] = kind;
  out["apiVersion"] = std::string(kAuthorizationGroup) + "/" + std::string(kVersion);
  auto meta = body.find("metadata");
  out["metadata"] = meta != body.end() && meta->is_object() ? *meta : json::object();
  if (!out["metadata"].contains("creationTimestamp"))
    out["metadata"]["creationTimestamp"] = nullptr;
  return out;
}

HttpResponse AccessReview(const Identity& identity, const json& body) {
  const json* spec = body.contains("spec") && body["spec"].is_object() ? &body["spec"] : nullptr;
  const auto attr = [&](const char* key) -> const json* {
    if (spec == nullptr) return nullptr;
    auto it = spec->find(key);
    return it != spec->end() && it->is_object() ? &*it : nullptr;
  };
  const json* resource = attr("resourceAttributes");
  const json* non_resource = attr("nonResourceAttributes");
  if ((resource == nullptr) == (non_resource == nullptr)) {
    const std::string value = resource == nullptr ? "null" : "{...}";
    return Fail(422, "Invalid",
                "SelfSubjectAccessReview.authorization.k8s.io \"\" is invalid: "
                "spec.resourceAttributes: Invalid value: \"" +
                    value +
                    "\": exactly one of nonResourceAttributes or resourceAttributes must be "
                    "specified");
  }
  bool allowed = false;
  if (resource != nullptr) {
    ResourceAttributes a;
    a.verb = StringAt(*resource, "verb");
    a.group = StringAt(*resource, "group");
    a.resource = StringAt(*resource, "resource");
    a.subresource = StringAt(*resource, "subresource");
    a.name = StringAt(*resource, "name");
    allowed = Allows(identity, a);
  } else {
    allowed = AllowsNonResource(identity, StringAt(*non_resource, "verb"),
                                StringAt(*non_resource, "path"));
  }
  json out = ReviewObject(body, "SelfSubjectAccessReview");
  out["spec"] = *spec;
  json status = {{"allowed", allowed}};
  if (allowed) {
    status["reason"] = "copse: the rules of user \"" + identity.user + "\" allow it";
  }
  out["status"] = std::move(status);
  return Respond(201, out.dump());
}

HttpResponse RulesReview(const Identity& identity, const json& body) {
  json out = ReviewObject(body, "SelfSubjectRulesReview");
  auto spec = body.find("spec");
  out["spec"] = spec != body.end() && spec->is_object() ? *spec : json::object();
  out["status"] = RulesJson(identity);
  return Respond(201, out.dump());
}

// kube's field.Invalid list as an apiserver 422 message.
HttpResponse InvalidReview(std::string_view kind, const std::vector<std::string>& causes) {
  std::string message =
      std::string(kind) + "." + std::string(kAuthorizationGroup) + " \"\" is invalid: ";
  if (causes.size() == 1) {
    message += causes[0];
  } else {
    message += "[";
    for (size_t i = 0; i < causes.size(); ++i) message += (i ? ", " : "") + causes[i];
    message += "]";
  }
  return Fail(422, "Invalid", message);
}

bool InGroup(const kube::UserInfo& user, std::string_view group) {
  return std::find(user.groups.begin(), user.groups.end(), group) != user.groups.end();
}

HttpResponse AnswerSubjectAccessReview(const ServerAuthentication& authentication,
                                       std::string_view body) {
  auto decoded = kube::SubjectAccessReview::Decode(body);
  if (!decoded.ok()) return Fail(400, "BadRequest", decoded.error().message);
  kube::SubjectAccessReview review = std::move(decoded).value();
  // kube's ValidateSubjectAccessReviewSpec.
  std::vector<std::string> causes;
  if (review.resource_attributes && review.non_resource_attributes) {
    causes.push_back(
        "spec.nonResourceAttributes: Invalid value: \"{...}\": cannot be specified in "
        "combination with resourceAttributes");
  }
  if (!review.resource_attributes && !review.non_resource_attributes) {
    causes.push_back(
        "spec.resourceAttributes: Invalid value: \"null\": exactly one of "
        "nonResourceAttributes or resourceAttributes must be specified");
  }
  if (review.user.username.empty() && review.user.groups.empty()) {
    causes.push_back(
        "spec.user: Invalid value: \"\": at least one of user or group must be specified");
  }
  if (!causes.empty()) return InvalidReview(kube::SubjectAccessReview::kKind, causes);

  review.has_status = true;
  if (authentication.open) {
    review.allowed = true;
    review.reason = "copse: the server lets every request in";
  } else if (review.user.username == kube::kAnonymousUser ||
             InGroup(review.user, kube::kUnauthenticatedGroup)) {
    review.allowed = false;  // refused with 401 here: no rules
  } else {
    // Every user the server lets in has the local admin's rules.
    const Identity& rules = LocalAdmin();
    if (review.resource_attributes) {
      const kube::ResourceAttributes& a = *review.resource_attributes;
      review.allowed = Allows(rules, {a.verb, a.group, a.resource, a.subresource, a.name});
    } else {
      review.allowed = AllowsNonResource(rules, review.non_resource_attributes->verb,
                                         review.non_resource_attributes->path);
    }
    if (review.allowed) {
      review.reason = "copse: user \"" + review.user.username +
                      "\" is authenticated here, with the rules of \"" + rules.user + "\"";
    }
  }
  return Respond(201, review.Encode());
}

}  // namespace

const Identity* AuthenticateToken(const ServerAuthentication& authentication,
                                  std::string_view token) {
  if (token.empty()) return nullptr;
  if (authentication.open) return &LocalAdmin();
  for (const std::string& known : authentication.tokens) {
    if (!known.empty() && known == token) return &LocalAdmin();
  }
  return nullptr;
}

const Identity& LocalAdmin() {
  static const Identity kAdmin = {"copse-local-admin",
                                  {"system:masters", "system:authenticated"},
                                  {PolicyRule{{"*"}, {"*"}, {"*"}, {}}},
                                  {NonResourceRule{{"*"}, {"*"}}}};
  return kAdmin;
}

bool Allows(const Identity& identity, const ResourceAttributes& a) {
  for (const PolicyRule& rule : identity.rules) {
    if (MatchesAll(rule.verbs, a.verb) && MatchesAll(rule.api_groups, a.group) &&
        ResourceMatches(rule, a.resource, a.subresource) &&
        (rule.resource_names.empty() || Contains(rule.resource_names, a.name))) {
      return true;
    }
  }
  return false;
}

bool AllowsNonResource(const Identity& identity, std::string_view verb, std::string_view path) {
  for (const NonResourceRule& rule : identity.non_resource_rules) {
    if (!MatchesAll(rule.verbs, verb)) continue;
    for (const std::string& url : rule.urls) {
      if (url == "*" || url == path) return true;
      if (url.ends_with("*") && path.starts_with(std::string_view(url).substr(0, url.size() - 1))) {
        return true;
      }
    }
  }
  return false;
}

HttpResponse HandleAuthorizationReview(const Identity& identity,
                                       const ServerAuthentication& authentication,
                                       std::string_view method, std::string_view version,
                                       std::span<const std::string> rest, std::string_view body) {
  const bool access = rest.size() == 1 && rest[0] == "selfsubjectaccessreviews";
  const bool rules = rest.size() == 1 && rest[0] == "selfsubjectrulesreviews";
  const bool subject = rest.size() == 1 && rest[0] == "subjectaccessreviews";
  if (version != kVersion || (!access && !rules && !subject)) {
    return Fail(404, "NotFound", "the server could not find the requested resource");
  }
  if (method != "POST") {
    return Fail(405, "MethodNotAllowed",
                "the server does not allow this method on the requested resource (" +
                    std::string(method) + ")");
  }
  if (subject) return AnswerSubjectAccessReview(authentication, body);
  const json parsed = json::parse(body, nullptr, false);
  const std::string_view kind = access ? "SelfSubjectAccessReview" : "SelfSubjectRulesReview";
  if (parsed.is_discarded() || !parsed.is_object()) {
    return Fail(400, "BadRequest", "couldn't get version/kind; json parse error");
  }
  if (auto k = parsed.find("kind"); k != parsed.end() && (!k->is_string() || *k != kind)) {
    return Fail(400, "BadRequest", "the body is a " + k->dump() + ", not a " + std::string(kind));
  }
  return access ? AccessReview(identity, parsed) : RulesReview(identity, parsed);
}

HttpResponse HandleAuthenticationReview(const ServerAuthentication& authentication,
                                        std::string_view method, std::string_view version,
                                        std::span<const std::string> rest, std::string_view body) {
  if (version != kVersion || rest.size() != 1 || rest[0] != "tokenreviews") {
    return Fail(404, "NotFound", "the server could not find the requested resource");
  }
  if (method != "POST") {
    return Fail(405, "MethodNotAllowed",
                "the server does not allow this method on the requested resource (" +
                    std::string(method) + ")");
  }
  auto decoded = kube::TokenReview::Decode(body);
  if (!decoded.ok()) return Fail(400, "BadRequest", decoded.error().message);
  kube::TokenReview review = std::move(decoded).value();
  if (review.token.empty()) {
    return Fail(400, "BadRequest", "token is required for TokenReview in authentication");
  }
  review.has_status = true;
  if (const Identity* identity = AuthenticateToken(authentication, review.token)) {
    review.authenticated = true;
    review.user.username = identity->user;
    review.user.groups = identity->groups;
  }
  return Respond(201, review.Encode());
}

namespace {

// The review groups the server serves, one version each.
struct ReviewGroup {
  std::string_view group;
  std::vector<std::string_view> kinds;  // all cluster-scoped, verb create
};

const std::vector<ReviewGroup>& ReviewGroups() {
  static const std::vector<ReviewGroup> kGroups = {
      {kAuthenticationGroup, {"TokenReview"}},
      {kAuthorizationGroup,
       {"SelfSubjectAccessReview", "SelfSubjectRulesReview", "SubjectAccessReview"}},
  };
  return kGroups;
}

json GroupJson(std::string_view group) {
  const json version = {{"groupVersion", std::string(group) + "/" + std::string(kVersion)},
                        {"version", kVersion}};
  return {{"name", group}, {"versions", json::array({version})}, {"preferredVersion", version}};
}

}  // namespace

std::vector<std::string> ReviewApiGroupsJson() {
  std::vector<std::string> out;
  for (const ReviewGroup& g : ReviewGroups()) out.push_back(GroupJson(g.group).dump());
  return out;
}

std::optional<std::string> ReviewDiscovery(std::span<const std::string> segs) {
  if (segs.size() < 2 || segs[0] != "apis") return std::nullopt;
  const auto found = std::find_if(ReviewGroups().begin(), ReviewGroups().end(),
                                  [&](const ReviewGroup& g) { return g.group == segs[1]; });
  if (found == ReviewGroups().end()) return std::nullopt;
  if (segs.size() == 2) {
    json group = GroupJson(found->group);
    group["kind"] = "APIGroup";
    group["apiVersion"] = "v1";
    return group.dump();
  }
  if (segs.size() != 3 || segs[2] != kVersion) return std::nullopt;
  json resources = json::array();
  for (std::string_view kind : found->kinds) {
    std::string name(kind);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    resources.push_back({{"name", name + "s"},
                         {"singularName", name},
                         {"namespaced", false},
                         {"kind", kind},
                         {"verbs", {"create"}}});
  }
  return json({{"kind", "APIResourceList"},
               {"apiVersion", "v1"},
               {"groupVersion", std::string(found->group) + "/" + std::string(kVersion)},
               {"resources", std::move(resources)}})
      .dump();
}

}  // namespace copse::apiserver
