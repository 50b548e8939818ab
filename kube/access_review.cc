#include "kube/access_review.h"

#include <nlohmann/json.hpp>

namespace copse::kube {

using nlohmann::json;

namespace {

// Reading a review's JSON: the first problem is kept, naming the field.
class Fields {
 public:
  explicit Fields(std::string_view kind) : kind_(kind) {}

  // `object[key]` when present and not null.
  const json* Find(const json& object, const char* key) {
    auto it = object.find(key);
    return it == object.end() || it->is_null() ? nullptr : &*it;
  }
  const json* Object(const json& object, const char* key, const std::string& path) {
    const json* v = Find(object, key);
    if (v == nullptr || v->is_object()) return v;
    Fail(path, "expected object");
    return nullptr;
  }
  void String(const json& object, const char* key, const std::string& path, std::string& out) {
    const json* v = Find(object, key);
    if (v == nullptr) return;
    if (!v->is_string()) return Fail(path, "expected string");
    out = v->get<std::string>();
  }
  void Bool(const json& object, const char* key, const std::string& path, bool& out) {
    const json* v = Find(object, key);
    if (v == nullptr) return;
    if (!v->is_boolean()) return Fail(path, "expected boolean");
    out = v->get<bool>();
  }
  void Strings(const json& value, const std::string& path, std::vector<std::string>& out) {
    if (!value.is_array()) return Fail(path, "expected array");
    for (const json& item : value) {
      if (!item.is_string()) return Fail(path, "expected array of strings");
      out.push_back(item.get<std::string>());
    }
  }
  void Strings(const json& object, const char* key, const std::string& path,
               std::vector<std::string>& out) {
    if (const json* v = Find(object, key)) Strings(*v, path, out);
  }
  void Extra(const json& object, const char* key, const std::string& path,
             std::map<std::string, std::vector<std::string>>& out) {
    const json* v = Object(object, key, path);
    if (v == nullptr) return;
    for (const auto& [name, values] : v->items()) {
      if (!values.is_null()) Strings(values, path + "." + name, out[name]);
    }
  }
  void Fail(const std::string& path, std::string_view message) {
    if (!error_) {
      error_ = MakeError(ErrorCode::kInvalid,
                         std::string(kind_) + ": " + path + ": " + std::string(message));
    }
  }
  const std::optional<Error>& error() const { return error_; }

 private:
  std::string_view kind_;
  std::optional<Error> error_;
};

// Parses `text` as an object of `kind` (a body of another kind is refused).
Result<json> ParseReview(std::string_view text, std::string_view kind) {
  json parsed = json::parse(text, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return MakeError(ErrorCode::kInvalid, std::string(kind) + ": not a JSON object");
  }
  if (auto k = parsed.find("kind"); k != parsed.end() && !k->is_null() &&
                                    (!k->is_string() || k->get_ref<const std::string&>() != kind)) {
    return MakeError(ErrorCode::kInvalid, std::string(kind) + ": the body is a " + k->dump() +
                                              ", not a " + std::string(kind));
  }
  return parsed;
}

json Envelope(std::string_view api_version, std::string_view kind) {
  return json{
      {"apiVersion", api_version}, {"kind", kind}, {"metadata", {{"creationTimestamp", nullptr}}}};
}

json UserJson(const UserInfo& user) {
  json out = json::object();
  if (!user.username.empty()) out["username"] = user.username;
  if (!user.uid.empty()) out["uid"] = user.uid;
  if (!user.groups.empty()) out["groups"] = user.groups;
  if (!user.extra.empty()) out["extra"] = user.extra;
  return out;
}

}  // namespace

std::string TokenReview::Encode() const {
  json out = Envelope(kApiVersion, kKind);
  json spec = {{"token", token}};
  if (!audiences.empty()) spec["audiences"] = audiences;
  out["spec"] = std::move(spec);
  if (has_status) {
    json status = {{"user", UserJson(user)}};
    if (authenticated) status["authenticated"] = true;
    if (!status_audiences.empty()) status["audiences"] = status_audiences;
    if (!error.empty()) status["error"] = error;
    out["status"] = std::move(status);
  }
  return out.dump();
}

Result<TokenReview> TokenReview::Decode(std::string_view text) {
  auto parsed = ParseReview(text, kKind);
  if (!parsed.ok()) return std::move(parsed).error();
  Fields f(kKind);
  TokenReview out;
  if (const json* spec = f.Object(*parsed, "spec", "spec")) {
    f.String(*spec, "token", "spec.token", out.token);
    f.Strings(*spec, "audiences", "spec.audiences", out.audiences);
  }
  if (const json* status = f.Object(*parsed, "status", "status")) {
    out.has_status = true;
    f.Bool(*status, "authenticated", "status.authenticated", out.authenticated);
    if (const json* user = f.Object(*status, "user", "status.user")) {
      f.String(*user, "username", "status.user.username", out.user.username);
      f.String(*user, "uid", "status.user.uid", out.user.uid);
      f.Strings(*user, "groups", "status.user.groups", out.user.groups);
      f.Extra(*user, "extra", "status.user.extra", out.user.extra);
    }
    f.Strings(*status, "audiences", "status.audiences", out.status_audiences);
    f.String(*status, "error", "status.error", out.error);
  }
  if (f.error()) return *f.error();
  return out;
}

std::string SubjectAccessReview::Encode() const {
  json out = Envelope(kApiVersion, kKind);
  json spec = json::object();
  if (resource_attributes) {
    const ResourceAttributes& a = *resource_attributes;
    json r = json::object();
    if (!a.namespace_.empty()) r["namespace"] = a.namespace_;
    if (!a.verb.empty()) r["verb"] = a.verb;
    if (!a.group.empty()) r["group"] = a.group;
    if (!a.version.empty()) r["version"] = a.version;
    if (!a.resource.empty()) r["resource"] = a.resource;
    if (!a.subresource.empty()) r["subresource"] = a.subresource;
    if (!a.name.empty()) r["name"] = a.name;
    spec["resourceAttributes"] = std::move(r);
  }
  if (non_resource_attributes) {
    json n = json::object();
    if (!non_resource_attributes->path.empty()) n["path"] = non_resource_attributes->path;
    if (!non_resource_attributes->verb.empty()) n["verb"] = non_resource_attributes->verb;
    spec["nonResourceAttributes"] = std::move(n);
  }
  if (!user.username.empty()) spec["user"] = user.username;
  if (!user.uid.empty()) spec["uid"] = user.uid;
  if (!user.groups.empty()) spec["groups"] = user.groups;
  if (!user.extra.empty()) spec["extra"] = user.extra;
  out["spec"] = std::move(spec);
  if (has_status) {
    json status = {{"allowed", allowed}};
    if (denied) status["denied"] = true;
    if (!reason.empty()) status["reason"] = reason;
    if (!evaluation_error.empty()) status["evaluationError"] = evaluation_error;
    out["status"] = std::move(status);
  }
  return out.dump();
}

Result<SubjectAccessReview> SubjectAccessReview::Decode(std::string_view text) {
  auto parsed = ParseReview(text, kKind);
  if (!parsed.ok()) return std::move(parsed).error();
  Fields f(kKind);
  SubjectAccessReview out;
  if (const json* spec = f.Object(*parsed, "spec", "spec")) {
    if (const json* r = f.Object(*spec, "resourceAttributes", "spec.resourceAttributes")) {
      ResourceAttributes& a = out.resource_attributes.emplace();
      const std::string p = "spec.resourceAttributes.";
      f.String(*r, "namespace", p + "namespace", a.namespace_);
      f.String(*r, "verb", p + "verb", a.verb);
      f.String(*r, "group", p + "group", a.group);
      f.String(*r, "version", p + "version", a.version);
      f.String(*r, "resource", p + "resource", a.resource);
      f.String(*r, "subresource", p + "subresource", a.subresource);
      f.String(*r, "name", p + "name", a.name);
    }
    if (const json* n = f.Object(*spec, "nonResourceAttributes", "spec.nonResourceAttributes")) {
      NonResourceAttributes& a = out.non_resource_attributes.emplace();
      f.String(*n, "path", "spec.nonResourceAttributes.path", a.path);
      f.String(*n, "verb", "spec.nonResourceAttributes.verb", a.verb);
    }
    f.String(*spec, "user", "spec.user", out.user.username);
    f.String(*spec, "uid", "spec.uid", out.user.uid);
    f.Strings(*spec, "groups", "spec.groups", out.user.groups);
    f.Extra(*spec, "extra", "spec.extra", out.user.extra);
  }
  if (const json* status = f.Object(*parsed, "status", "status")) {
    out.has_status = true;
    f.Bool(*status, "allowed", "status.allowed", out.allowed);
    f.Bool(*status, "denied", "status.denied", out.denied);
    f.String(*status, "reason", "status.reason", out.reason);
    f.String(*status, "evaluationError", "status.evaluationError", out.evaluation_error);
  }
  if (f.error()) return *f.error();
  return out;
}

}  // namespace copse::kube
