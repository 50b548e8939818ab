// Discovery (/api, /apis, /apis/G, /apis/G/V, /version) and the minimal
// OpenAPI documents kubectl needs (/openapi/v2, /openapi/v3/...).
//
// Discovery is the legacy (unaggregated) form with Content-Type
// application/json: kubectl's Accept header lists the aggregated
// apidiscovery.k8s.io types first, and client-go falls back to the legacy
// documents when the response is plain JSON.
//
// OpenAPI v3: the per-group-version documents come from apiserver/openapi.h.

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "apiserver/authz_review.h"
#include "apiserver/handler.h"
#include "apiserver/openapi.h"

namespace copse::apiserver {

using nlohmann::json;

namespace {

HttpResponse Json(const json& doc) {
  HttpResponse r;
  r.body = doc.dump();
  return r;
}

json GroupVersionJson(const std::string& group, const std::string& version) {
  return {{"groupVersion", group.empty() ? version : group + "/" + version}, {"version", version}};
}

// group -> versions (preferred first)
std::map<std::string, std::vector<std::string>> GroupVersions(
    const std::vector<std::shared_ptr<const ResourceInfo>>& resources) {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& info : resources) {
    auto& versions = out[info->group];
    for (const auto& v : info->versions) {
      if (std::find(versions.begin(), versions.end(), v) == versions.end()) versions.push_back(v);
    }
  }
  // Preferred version first, in kube's version priority.
  for (auto& [group, versions] : out) {
    std::sort(versions.begin(), versions.end(), KubeVersionBefore);
  }
  return out;
}

json GroupJson(const std::string& group, const std::vector<std::string>& versions) {
  json vs = json::array();
  for (const auto& v : versions) vs.push_back(GroupVersionJson(group, v));
  return {{"name", group}, {"versions", vs}, {"preferredVersion", vs.front()}};
}

const std::vector<std::string>& StandardVerbs() {
  static const std::vector<std::string> kVerbs = {"create", "delete", "deletecollection", "get",
                                                  "list",   "patch",  "update",           "watch"};
  return kVerbs;
}

json ResourceList(const std::vector<std::shared_ptr<const ResourceInfo>>& resources,
                  const std::string& group, const std::string& version) {
  json list = json::array();
  for (const auto& info : resources) {
    if (info->group != group || !info->ServesVersion(version)) continue;
    json r = {{"name", info->resource},
              {"singularName", info->singular},
              {"namespaced", info->namespaced},
              {"kind", info->kind},
              {"verbs", StandardVerbs()}};
    if (!info->short_names.empty()) r["shortNames"] = info->short_names;
    if (!info->categories.empty()) r["categories"] = info->categories;
    list.push_back(r);
    if (info->has_status) {
      list.push_back({{"name", info->resource + "/status"},
                      {"singularName", ""},
                      {"namespaced", info->namespaced},
                      {"kind", info->kind},
                      {"verbs", {"get", "patch", "update"}}});
    }
    if (info->has_scale) {
      list.push_back({{"name", info->resource + "/scale"},
                      {"singularName", ""},
                      {"namespaced", info->namespaced},
                      {"group", "autoscaling"},
                      {"version", "v1"},
                      {"kind", "Scale"},
                      {"verbs", {"get", "patch", "update"}}});
    }
    for (const auto& sub : info->post_subresources) {
      json s = {{"name", info->resource + "/" + sub},
                {"singularName", ""},
                {"namespaced", info->namespaced},
                {"verbs", {"create"}}};
      if (sub == "binding") s["kind"] = "Binding";
      if (sub == "eviction") {
        // The Eviction version follows the policy group (v1beta1 only, as
        // on v1.20, when PodDisruptionBudgets are served only so).
        bool policy_v1 = true;
        for (const auto& other : resources) {
          if (other->group == "policy" && other->resource == "poddisruptionbudgets") {
            policy_v1 = other->ServesVersion("v1");
          }
        }
        s["kind"] = "Eviction";
        s["group"] = "policy";
        s["version"] = policy_v1 ? "v1" : "v1beta1";
      }
      list.push_back(s);
    }
  }
  if (group.empty() && version == "v1") {
    list.push_back({{"name", "bindings"},
                    {"singularName", "binding"},
                    {"namespaced", true},
                    {"kind", "Binding"},
                    {"verbs", {"create"}}});
  }
  return {{"kind", "APIResourceList"},
          {"apiVersion", "v1"},
          {"groupVersion", group.empty() ? version : group + "/" + version},
          {"resources", list}};
}

}  // namespace

HttpResponse Handler::Discovery(Request& req, bool* handled) {
  const auto& segs = req.segs;
  *handled = false;
  if (req.http->method != "GET") return {};
  if (segs.size() == 1 && segs[0] == "version") {
    *handled = true;
    return Json({{"major", "1"},
                 {"minor", "32"},
                 {"gitVersion", "v1.32.0-copse"},
                 {"gitCommit", "0000000000000000000000000000000000000000"},
                 {"gitTreeState", "clean"},
                 {"buildDate", "2025-01-01T00:00:00Z"},
                 {"goVersion", "go1.23.0"},
                 {"compiler", "gc"},
                 {"platform", "linux/amd64"}});
  }
  if (segs.size() == 1 && segs[0] == "api") {
    *handled = true;
    std::string host(req.http->host.empty() ? "127.0.0.1" : req.http->host);
    return Json({{"kind", "APIVersions"},
                 {"versions", {"v1"}},
                 {"serverAddressByClientCIDRs",
                  json::array({{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", host}}})}});
  }
  if (segs.size() == 2 && segs[0] == "api") {
    *handled = true;
    if (segs[1] != "v1") {
      Error e = MakeError(ErrorCode::kNotFound, "the server could not find the requested resource");
      e.http_status = 404;
      e.reason = "NotFound";
      return HttpResponse{404, "application/json", StatusJson(e), nullptr};
    }
    return Json(ResourceList(store_->Resources(), "", "v1"));
  }
  if (segs.empty() || segs[0] != "apis" || segs.size() > 3) return {};
  if (auto doc = ReviewDiscovery(segs)) {
    *handled = true;
    return HttpResponse{200, "application/json", std::move(*doc), nullptr};
  }
  const auto resources = store_->Resources();
  const auto groups = GroupVersions(resources);
  if (segs.size() == 1) {
    *handled = true;
    json list = json::array();
    for (const auto& [group, versions] : groups) {
      if (!group.empty() && !versions.empty()) list.push_back(GroupJson(group, versions));
    }
    for (const std::string& group : ReviewApiGroupsJson()) list.push_back(json::parse(group));
    return Json({{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", list}});
  }
  auto it = groups.find(segs[1]);
  if (segs.size() == 2) {
    *handled = true;
    if (it == groups.end() || segs[1].empty() || it->second.empty()) {
      Error e = MakeError(ErrorCode::kNotFound, "the server could not find the requested resource");
      e.http_status = 404;
      e.reason = "NotFound";
      return HttpResponse{404, "application/json", StatusJson(e), nullptr};
    }
    json g = GroupJson(it->first, it->second);
    g["kind"] = "APIGroup";
    g["apiVersion"] = "v1";
    return Json(g);
  }
  *handled = true;
  if (it == groups.end() ||
      std::find(it->second.begin(), it->second.end(), segs[2]) == it->second.end()) {
    Error e = MakeError(ErrorCode::kNotFound, "the server could not find the requested resource");
    e.http_status = 404;
    e.reason = "NotFound";
    return HttpResponse{404, "application/json", StatusJson(e), nullptr};
  }
  return Json(ResourceList(resources, segs[1], segs[2]));
}

HttpResponse Handler::OpenApi(Request& req, bool* handled) {
  const auto& segs = req.segs;
  *handled = false;
  if (segs.size() < 2 || segs[0] != "openapi" || req.http->method != "GET") return {};
  *handled = true;
  auto not_found = [] {
    Error e = MakeError(ErrorCode::kNotFound, "the server could not find the requested resource");
    e.http_status = 404;
    e.reason = "NotFound";
    return HttpResponse{404, "application/json", StatusJson(e), nullptr};
  };
  if (segs[1] == "v2" && segs.size() == 2) {
    // The same empty document (swagger 2.0, info, no definitions) as JSON or
    // as gnostic's openapi_v2.Document protobuf, which kubectl asks for when
    // it validates a `kind: List` file client-side: with no definitions every
    // item's schema lookup comes back empty and the items are left to the
    // server's own (strict) field validation.
    const std::string_view accept = req.http->accept;
    constexpr std::string_view kProtobuf =
        "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
    if (!accept.empty() && accept.find("json") == std::string_view::npos &&
        accept.find("*/*") == std::string_view::npos) {
      if (accept.find(kProtobuf) == std::string_view::npos) {
        Error e = MakeError(ErrorCode::kInvalid,
                            "only application/json and " + std::string(kProtobuf) + " are served");
        e.http_status = 406;
        e.reason = "NotAcceptable";
        return HttpResponse{406, "application/json", StatusJson(e), nullptr};
      }
      // Document{swagger(1)="2.0", info(2)=Info{title(1)="Kubernetes", version(2)="v1.32.0"}}
      // as tag, length, bytes.
      static constexpr std::string_view kDocument =
          "\x0a\x03"
          "2.0"
          "\x12\x15"
          "\x0a\x0a"
          "Kubernetes"
          "\x12\x07"
          "v1.32.0";
      std::string doc(kDocument);
      // The served media type has no '@' (which Go's mime parser rejects).
      return HttpResponse{200, "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
                          std::move(doc), nullptr};
    }
    return Json({{"swagger", "2.0"},
                 {"info", {{"title", "Kubernetes"}, {"version", "v1.32.0"}}},
                 {"paths", json::object()},
                 {"definitions", json::object()}});
  }
  if (segs[1] != "v3") return not_found();
  const auto resources = store_->Resources();
  const auto groups = GroupVersions(resources);
  const std::string hash = std::to_string(store_->registry_generation());
  if (segs.size() == 2) {
    json paths = json::object();
    for (const auto& [group, versions] : groups) {
      for (const auto& v : versions) {
        const std::string key = group.empty() ? "api/" + v : "apis/" + group + "/" + v;
        paths[key] = {{"serverRelativeURL", "/openapi/v3/" + key + "?hash=" + hash}};
      }
    }
    return Json({{"paths", paths}});
  }
  std::string group;
  std::string version;
  if (segs[2] == "api" && segs.size() == 4) {
    version = segs[3];
  } else if (segs[2] == "apis" && segs.size() == 5) {
    group = segs[3];
    version = segs[4];
  } else {
    return not_found();
  }
  auto it = groups.find(group);
  if (it == groups.end() ||
      std::find(it->second.begin(), it->second.end(), version) == it->second.end()) {
    return not_found();
  }
  return HttpResponse{200, "application/json", OpenApiV3Document(resources, group, version),
                      nullptr};
}

}  // namespace copse::apiserver
