#include "kube/discovery.h"

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <future>
#include <nlohmann/json.hpp>

#include "core/json_text.h"
#include "kube/client.h"

namespace copse::kube {
namespace {

namespace net = boost::asio;
using nlohmann::json;

Result<json> ParseDocument(std::string_view text, std::string_view what) {
  // Kubernetes' nesting limit, as the client's other decoders apply it.
  if (JsonDepthExceeds(text)) {
    return MakeError(ErrorCode::kInvalid, "discovery: " + std::string(what) +
                                              " is JSON nested deeper than " +
                                              std::to_string(kMaxJsonDepth) + " levels");
  }
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return MakeError(ErrorCode::kInvalid,
                     "discovery: " + std::string(what) + " is not a JSON object");
  }
  return doc;
}

// GET `path`; the body of a 200, else an error naming the path and status.
net::awaitable<Result<std::string>> GetDocument(std::shared_ptr<Client> client, std::string path) {
  auto response = co_await client->Request(HttpMethod::kGet, path);
  if (!response.ok()) co_return std::move(response).error();
  if (response->status != 200) {
    ErrorCode code = response->status == 404   ? ErrorCode::kNotFound
                     : response->status == 403 ? ErrorCode::kForbidden
                     : response->status == 401 ? ErrorCode::kUnauthorized
                                               : ErrorCode::kUnavailable;
    co_return MakeError(code, "GET " + path + ": HTTP " + std::to_string(response->status));
  }
  co_return std::move(response->body);
}

// The string at `key`, or "" when absent or not a string (discovery
// documents come from servers of every version; none may throw).
std::string StringAt(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string GroupOf(std::string_view group_version) {
  const size_t slash = group_version.find('/');
  return slash == std::string_view::npos ? std::string()
                                         : std::string(group_version.substr(0, slash));
}

std::string PathOf(const std::string& group_version) {
  return group_version.find('/') == std::string::npos ? "/api/" + group_version
                                                      : "/apis/" + group_version;
}

}  // namespace

Result<Discovery> Discovery::FromDocuments(std::string_view api_versions,
                                           std::string_view api_groups,
                                           const std::vector<std::string>& resource_lists) {
  Discovery d;
  auto core = ParseDocument(api_versions, "/api");
  if (!core.ok()) return std::move(core).error();
  if (auto it = core->find("versions"); it != core->end() && it->is_array()) {
    for (const auto& v : *it) {
      if (v.is_string()) d.group_versions_.push_back(v.get<std::string>());
    }
  }
  auto groups = ParseDocument(api_groups, "/apis");
  if (!groups.ok()) return std::move(groups).error();
  if (auto it = groups->find("groups"); it != groups->end() && it->is_array()) {
    for (const auto& g : *it) {
      if (!g.is_object()) continue;
      auto versions = g.find("versions");
      if (versions == g.end() || !versions->is_array()) continue;
      for (const auto& v : *versions) {
        if (v.is_object() && v.contains("groupVersion") && v["groupVersion"].is_string()) {
          d.group_versions_.push_back(v["groupVersion"].get<std::string>());
        }
      }
    }
  }
  for (const std::string& text : resource_lists) {
    auto list = ParseDocument(text, "an APIResourceList");
    if (!list.ok()) return std::move(list).error();
    const std::string group_version = StringAt(*list, "groupVersion");
    if (group_version.empty()) {
      return MakeError(ErrorCode::kInvalid, "discovery: an APIResourceList has no groupVersion");
    }
    const size_t slash = group_version.find('/');
    const std::string group = GroupOf(group_version);
    const std::string version =
        slash == std::string::npos ? group_version : group_version.substr(slash + 1);
    auto resources = list->find("resources");
    if (resources == list->end() || !resources->is_array()) continue;
    for (const auto& r : *resources) {
      if (!r.is_object() || !r.contains("name") || !r["name"].is_string()) continue;
      DiscoveredResource out;
      out.group = group;
      out.version = version;
      out.resource = r["name"].get<std::string>();
      out.kind = StringAt(r, "kind");
      out.kind_group = StringAt(r, "group");
      out.kind_version = StringAt(r, "version");
      if (auto n = r.find("namespaced"); n != r.end() && n->is_boolean())
        out.namespaced = n->get<bool>();
      if (auto verbs = r.find("verbs"); verbs != r.end() && verbs->is_array()) {
        for (const auto& v : *verbs) {
          if (v.is_string()) out.verbs.push_back(v.get<std::string>());
        }
      }
      d.resources_.push_back(std::move(out));
    }
  }
  return d;
}

net::awaitable<Result<Discovery>> Discovery::Read(std::shared_ptr<Client> client,
                                                  std::vector<std::string> groups) {
  auto api = co_await GetDocument(client, "/api");
  if (!api.ok()) co_return std::move(api).error();
  auto apis = co_await GetDocument(client, "/apis");
  if (!apis.ok()) co_return std::move(apis).error();
  auto index = FromDocuments(*api, *apis, {});
  if (!index.ok()) co_return std::move(index).error();
  std::vector<std::string> lists;
  std::map<std::string, std::string> failures;
  for (const std::string& group_version : index->group_versions()) {
    if (!groups.empty() &&
        std::find(groups.begin(), groups.end(), GroupOf(group_version)) == groups.end()) {
      continue;
    }
    auto list = co_await GetDocument(client, PathOf(group_version));
    if (!list.ok()) {
      failures[group_version] = list.error().message;
      continue;
    }
    // A malformed list counts as a failed one, not as a failed discovery.
    if (auto alone = FromDocuments("{}", "{}", {*list}); !alone.ok()) {
      failures[group_version] = alone.error().message;
      continue;
    }
    lists.push_back(std::move(list).value());
  }
  auto discovery = FromDocuments(*api, *apis, lists);
  if (!discovery.ok()) co_return std::move(discovery).error();
  discovery->failures_ = std::move(failures);
  co_return discovery;
}

Result<Discovery> Discovery::ReadBlocking(std::shared_ptr<Client> client,
                                          std::vector<std::string> groups,
                                          std::chrono::milliseconds timeout) {
  auto executor = client->executor();
  auto promise = std::make_shared<std::promise<Result<Discovery>>>();
  std::future<Result<Discovery>> future = promise->get_future();
  net::co_spawn(
      executor,
      [](std::shared_ptr<Client> client, std::vector<std::string> groups,
         std::shared_ptr<std::promise<Result<Discovery>>> promise) -> net::awaitable<void> {
        try {
          promise->set_value(co_await Read(std::move(client), std::move(groups)));
        } catch (const std::exception& e) {
          promise->set_value(
              MakeError(ErrorCode::kInternal, std::string("discovery: ") + e.what()));
        }
      }(std::move(client), std::move(groups), promise),
      net::detached);
  if (future.wait_for(timeout) != std::future_status::ready) {
    return MakeError(ErrorCode::kTimeout,
                     "discovery: no answer within " + std::to_string(timeout.count()) + " ms");
  }
  return future.get();
}

bool Discovery::ServesGroupVersion(std::string_view group, std::string_view version) const {
  const std::string gv =
      group.empty() ? std::string(version) : std::string(group) + "/" + std::string(version);
  return std::find(group_versions_.begin(), group_versions_.end(), gv) != group_versions_.end();
}

const DiscoveredResource* Discovery::Find(std::string_view group, std::string_view version,
                                          std::string_view resource) const {
  for (const DiscoveredResource& r : resources_) {
    if (r.group == group && r.version == version && r.resource == resource) return &r;
  }
  return nullptr;
}

bool Discovery::Serves(const ResourceRef& ref) const {
  return Find(ref.group, ref.version, ref.resource) != nullptr;
}

std::string Discovery::EvictionApiVersion() const {
  const DiscoveredResource* eviction = Find("", "v1", "pods/eviction");
  if (eviction != nullptr && !eviction->kind_version.empty()) {
    return eviction->kind_group.empty() ? eviction->kind_version
                                        : eviction->kind_group + "/" + eviction->kind_version;
  }
  return "policy/v1";
}

std::optional<ResourceRef> Discovery::FirstServed(
    const std::vector<ResourceRef>& candidates) const {
  for (const ResourceRef& ref : candidates) {
    if (Serves(ref)) return ref;
  }
  return std::nullopt;
}

}  // namespace copse::kube
