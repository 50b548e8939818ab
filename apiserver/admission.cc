#include "apiserver/admission.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>

#include "core/labels.h"
#include "kube/client.h"
#include "kube/codec.h"
#include "kube/kubeconfig.h"
#include "kube/watch.h"
#include "net/client.h"

namespace copse::apiserver {

namespace {

using json = nlohmann::json;

struct Rule {
  std::vector<std::string> groups, versions, operations, resources;
};

struct Webhook {
  std::string name;
  std::string url;
  std::string ca_pem;
  std::vector<Rule> rules;
  bool fail_closed = true;  // failurePolicy Fail
  std::chrono::seconds timeout{10};
  std::optional<LabelSelector> object_selector;
  bool supported = true;  // service references and namespace selectors are not
};

struct Cache {
  std::mutex mu;
  std::string signature;
  std::shared_ptr<const std::vector<Webhook>> hooks;
};

Cache& CacheFor(const Store* store) {
  static std::mutex mu;
  static std::map<const Store*, std::unique_ptr<Cache>> caches;
  std::lock_guard<std::mutex> lock(mu);
  auto& cache = caches[store];
  if (!cache) cache = std::make_unique<Cache>();
  return *cache;
}

std::vector<std::string> Strings(const json& obj, const char* key) {
  std::vector<std::string> out;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_array()) return out;
  for (const auto& v : *it) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

std::vector<Webhook> Parse(const json& config) {
  std::vector<Webhook> out;
  auto hooks = config.find("webhooks");
  if (hooks == config.end() || !hooks->is_array()) return out;
  for (const auto& h : *hooks) {
    if (!h.is_object()) continue;
    Webhook w;
    w.name = h.value("name", "");
    if (auto cc = h.find("clientConfig"); cc != h.end() && cc->is_object()) {
      w.url = cc->value("url", "");
      if (auto ca = cc->find("caBundle"); ca != cc->end() && ca->is_string()) {
        auto decoded = kube::DecodeBase64(ca->get<std::string>());
        if (decoded.ok()) w.ca_pem = *decoded;
      }
      if (cc->contains("service")) w.supported = false;
    }
    if (w.url.empty()) w.supported = false;
    if (auto rules = h.find("rules"); rules != h.end() && rules->is_array()) {
      for (const auto& r : *rules) {
        w.rules.push_back({Strings(r, "apiGroups"), Strings(r, "apiVersions"),
                           Strings(r, "operations"), Strings(r, "resources")});
      }
    }
    w.fail_closed = h.value("failurePolicy", "Fail") != "Ignore";
    if (auto t = h.find("timeoutSeconds"); t != h.end() && t->is_number_integer()) {
      w.timeout = std::chrono::seconds(std::clamp<int64_t>(t->get<int64_t>(), 1, 30));
    }
    if (auto sel = h.find("objectSelector"); sel != h.end() && sel->is_object() && !sel->empty()) {
      auto parsed = kube::DecodeLabelSelector(sel->dump());
      if (parsed.ok()) w.object_selector = *parsed;
    }
    if (auto ns = h.find("namespaceSelector"); ns != h.end() && ns->is_object() && !ns->empty()) {
      w.supported = false;
    }
    out.push_back(std::move(w));
  }
  return out;
}

std::shared_ptr<const std::vector<Webhook>> LoadWebhooks(Store& store) {
  ListOptions options;
  auto list = store.List(kValidatingWebhookConfigurations, options);
  if (!list.ok() || list->items.empty()) return nullptr;
  std::string signature;
  for (const auto& item : list->items) {
    signature += item->uid + ":" + std::to_string(item->rv) + ";";
  }
  Cache& cache = CacheFor(&store);
  std::lock_guard<std::mutex> lock(cache.mu);
  if (cache.signature == signature && cache.hooks) return cache.hooks;
  auto hooks = std::make_shared<std::vector<Webhook>>();
  for (const auto& item : list->items) {
    json config = json::parse(item->json, nullptr, false);
    if (!config.is_object()) continue;
    for (auto& w : Parse(config)) hooks->push_back(std::move(w));
  }
  cache.signature = signature;
  cache.hooks = hooks;
  return hooks;
}

bool Listed(const std::vector<std::string>& values, std::string_view value) {
  for (const auto& v : values) {
    if (v == "*" || v == value) return true;
  }
  return false;
}

bool Matches(const Webhook& w, std::string_view group, std::string_view version,
             std::string_view operation, std::string_view resource) {
  for (const auto& r : w.rules) {
    if (Listed(r.groups, group) && Listed(r.versions, version) && Listed(r.operations, operation) &&
        Listed(r.resources, resource)) {
      return true;
    }
  }
  return false;
}

// The webhook calls' transport: one keep-alive client per webhook URL and
// CA bundle (rebuilt when the configurations change), on an I/O thread of
// their own (AdmitWrite blocks the API server's handler thread meanwhile).
struct Transport {
  kube::IoThread io;  // first: destroyed after the clients
  std::mutex mu;
  std::map<std::string, std::shared_ptr<net::HttpClient>, std::less<>> clients;

  static Transport& Get() {
    static Transport transport;
    return transport;
  }

  Result<std::shared_ptr<net::HttpClient>> ClientFor(const Webhook& w) {
    const std::string key = w.url + '\n' + w.ca_pem;
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = clients.find(key); it != clients.end()) return it->second;
    net::ClientOptions options;
    options.server = std::string(ServerOf(w.url));
    options.ca_pem = w.ca_pem;
    options.max_connections = 4;
    options.user_agent = "copse-apiserver-admission";
    auto created = net::HttpClient::Create(std::move(options), io.executor());
    if (!created.ok()) return std::move(created).error();
    // A configuration that changes often must not grow the map without bound.
    if (clients.size() >= 64) clients.clear();
    clients.emplace(key, *created);
    return *created;
  }

  // "https://host:port" of a webhook URL.
  static std::string_view ServerOf(std::string_view url) {
    constexpr std::string_view kHttps = "https://";
    const size_t slash = url.find('/', kHttps.size());
    return slash == std::string_view::npos ? url : url.substr(0, slash);
  }
};

Result<std::string> Post(const Webhook& w, const std::string& body) {
  std::string_view url = w.url;
  constexpr std::string_view kHttps = "https://";
  if (url.substr(0, kHttps.size()) != kHttps) {
    return MakeError(ErrorCode::kInvalid, "webhook URL must be https: " + w.url);
  }
  Transport& transport = Transport::Get();
  auto client = transport.ClientFor(w);
  if (!client.ok()) return std::move(client).error();
  const std::string_view server = Transport::ServerOf(url);
  net::ClientRequest request;
  request.method = "POST";
  request.target = url.size() > server.size() ? std::string(url.substr(server.size())) : "/";
  request.body = body;
  request.content_type = "application/json";
  request.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(w.timeout);
  request.deadline = std::chrono::steady_clock::now() + w.timeout;
  request.label = "POST " + w.url;
  auto response = transport.io.Run((*client)->Send(std::move(request)));
  if (!response.ok()) return std::move(response).error();
  if (response->status != 200) {
    return MakeError(ErrorCode::kUnavailable,
                     "webhook answered HTTP " + std::to_string(response->status));
  }
  return std::move(response->body);
}

std::string RandomUid() {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 32; ++i) {
    if (i == 8 || i == 12 || i == 16 || i == 20) out += '-';
    out += kHex[rng() % 16];
  }
  return out;
}

Labels LabelsOf(const json& obj) {
  Labels out;
  const json* labels = FindPath(obj, "metadata.labels");
  if (labels == nullptr || !labels->is_object()) return out;
  for (auto it = labels->begin(); it != labels->end(); ++it) {
    if (it->is_string()) out[it.key()] = it->get<std::string>();
  }
  return out;
}

Error Denied(const Webhook& w, const json& status) {
  int code = status.is_object() ? status.value("code", 403) : 403;
  if (code < 400) code = 403;
  std::string reason = status.is_object() ? status.value("reason", "") : "";
  if (reason.empty()) reason = code == 422 ? "Invalid" : "Forbidden";
  std::string message = status.is_object() ? status.value("message", "") : "";
  Error error = MakeError(kube::ErrorCodeFor(code, reason),
                          "admission webhook \"" + w.name + "\" denied the request: " + message);
  error.http_status = code;
  error.reason = reason;
  return error;
}

Error CallFailed(const Webhook& w, const Error& cause) {
  Error error =
      MakeError(ErrorCode::kInternal, "Internal error occurred: failed calling webhook \"" +
                                          w.name + "\": " + cause.message);
  error.http_status = 500;
  error.reason = "InternalError";
  return error;
}

}  // namespace

Status InstallAdmissionRegistration(Store& store) {
  if (store.Resolve("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations").ok()) {
    return Status::Ok();
  }
  json crd = {
      {"apiVersion", "apiextensions.k8s.io/v1"},
      {"kind", "CustomResourceDefinition"},
      {"metadata", {{"name", "validatingwebhookconfigurations.admissionregistration.k8s.io"}}},
      {"spec",
       {{"group", "admissionregistration.k8s.io"},
        {"names",
         {{"plural", "validatingwebhookconfigurations"},
          {"singular", "validatingwebhookconfiguration"},
          {"kind", "ValidatingWebhookConfiguration"},
          {"listKind", "ValidatingWebhookConfigurationList"}}},
        {"scope", "Cluster"},
        {"versions", json::array({{{"name", "v1"},
                                   {"served", true},
                                   {"storage", true},
                                   {"schema",
                                    {{"openAPIV3Schema",
                                      {{"type", "object"},
                                       {"x-kubernetes-preserve-unknown-fields", true}}}}}}})}}}};
  auto created = store.Create(resources::kCustomResourceDefinitions, "", crd.dump());
  if (!created.ok() && created.error().code != ErrorCode::kAlreadyExists) return created.error();
  return Status::Ok();
}

std::optional<Error> AdmitWrite(Store& store, const ResourceInfo& info, std::string_view version,
                                std::string_view method, std::string_view ns, std::string_view name,
                                std::string_view subresource, std::string_view body,
                                std::string_view content_type, bool dry_run) {
  if (!subresource.empty()) return std::nullopt;
  std::string_view operation;
  if (method == "POST" && name.empty()) {
    operation = "CREATE";
  } else if ((method == "PUT" || method == "PATCH") && !name.empty()) {
    operation = "UPDATE";
  } else {
    return std::nullopt;
  }
  if (store.Count(kValidatingWebhookConfigurations) == 0) return std::nullopt;
  auto hooks = LoadWebhooks(store);
  if (hooks == nullptr) return std::nullopt;
  std::vector<const Webhook*> matching;
  for (const auto& w : *hooks) {
    if (w.supported && Matches(w, info.group, version, operation, info.resource)) {
      matching.push_back(&w);
    }
  }
  if (matching.empty()) return std::nullopt;

  // The object as it would be written, and the current one for updates.
  ResourceRef ref{info.group, std::string(version), info.resource, info.namespaced};
  json object;
  json old_object = nullptr;
  if (operation == "UPDATE") {
    auto current = store.Get(ref, ns, name);
    if (!current.ok()) return std::nullopt;  // the write itself reports NotFound
    old_object = json::parse((*current)->json, nullptr, false);
    if (method == "PATCH") {
      PatchType type = PatchType::kMerge;
      if (content_type.starts_with("application/json-patch+json")) type = PatchType::kJson;
      if (content_type.starts_with("application/strategic-merge-patch+json")) {
        type = PatchType::kStrategicMerge;
      }
      auto patched = store.Patch(ref, ns, name, type, body, {}, /*dry_run=*/true);
      if (!patched.ok()) return std::nullopt;  // the write itself reports the error
      object = json::parse((*patched)->json, nullptr, false);
    } else {
      object = json::parse(body, nullptr, false);
    }
  } else {
    object = json::parse(body, nullptr, false);
  }
  if (!object.is_object()) return std::nullopt;  // malformed bodies fail in the store
  if (info.namespaced && !ns.empty()) object["metadata"]["namespace"] = std::string(ns);
  std::string object_name = name.empty() ? object["metadata"].value("name", "") : std::string(name);
  Labels labels = LabelsOf(object);

  json request = {
      {"uid", RandomUid()},
      {"kind", {{"group", info.group}, {"version", version}, {"kind", info.kind}}},
      {"resource", {{"group", info.group}, {"version", version}, {"resource", info.resource}}},
      {"requestKind", {{"group", info.group}, {"version", version}, {"kind", info.kind}}},
      {"requestResource",
       {{"group", info.group}, {"version", version}, {"resource", info.resource}}},
      {"name", object_name},
      {"namespace", std::string(ns)},
      {"operation", operation},
      {"userInfo", {{"username", "copse-local"}}},
      {"object", object},
      {"oldObject", old_object},
      {"dryRun", dry_run}};
  json review = {
      {"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"}, {"request", request}};
  std::string payload = review.dump();
  for (const Webhook* w : matching) {
    if (w->object_selector.has_value() && !w->object_selector->Matches(labels)) continue;
    Result<std::string> answer = Post(*w, payload);
    if (!answer.ok()) {
      if (w->fail_closed) return CallFailed(*w, answer.error());
      continue;
    }
    json response = json::parse(*answer, nullptr, false);
    const json* allowed = response.is_object() ? FindPath(response, "response.allowed") : nullptr;
    if (allowed == nullptr || !allowed->is_boolean()) {
      if (w->fail_closed) {
        return CallFailed(*w,
                          MakeError(ErrorCode::kInternal, "malformed AdmissionReview response"));
      }
      continue;
    }
    if (!allowed->get<bool>()) {
      const json* status = FindPath(response, "response.status");
      return Denied(*w, status != nullptr ? *status : json(nullptr));
    }
  }
  return std::nullopt;
}

}  // namespace copse::apiserver
