#include "apiserver/admission.h"

#include <openssl/x509v3.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>

#include "core/labels.h"
#include "kube/codec.h"
#include "kube/kubeconfig.h"
#include "kube/watch.h"

namespace copse::apiserver {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using asio::ip::tcp;
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

struct Call {
  std::string host;
  std::string port;
  std::string target;
  std::string body;
  std::string ca_pem;
  Result<std::string> result = MakeError(ErrorCode::kTimeout, "webhook call timed out");
};

asio::awaitable<void> DoCall(Call* call, ssl::context* ctx) {
  try {
    auto executor = co_await asio::this_coro::executor;
    tcp::resolver resolver(executor);
    auto endpoints = co_await resolver.async_resolve(call->host, call->port, asio::use_awaitable);
    beast::ssl_stream<beast::tcp_stream> stream(executor, *ctx);
    SSL* handle = stream.native_handle();
    X509_VERIFY_PARAM* param = SSL_get0_param(handle);
    boost::system::error_code ec;
    asio::ip::make_address(call->host, ec);
    if (!ec) {
      X509_VERIFY_PARAM_set1_ip_asc(param, call->host.c_str());
    } else {
      SSL_set_tlsext_host_name(handle, call->host.c_str());
      X509_VERIFY_PARAM_set1_host(param, call->host.data(), call->host.size());
    }
    co_await beast::get_lowest_layer(stream).async_connect(endpoints, asio::use_awaitable);
    co_await stream.async_handshake(ssl::stream_base::client, asio::use_awaitable);
    http::request<http::string_body> req{http::verb::post, call->target, 11};
    req.set(http::field::host, call->host);
    req.set(http::field::content_type, "application/json");
    req.set(http::field::accept, "application/json");
    req.body() = call->body;
    req.prepare_payload();
    co_await http::async_write(stream, req, asio::use_awaitable);
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    co_await http::async_read(stream, buffer, res, asio::use_awaitable);
    if (res.result_int() != 200) {
      call->result = MakeError(ErrorCode::kUnavailable,
                               "webhook answered HTTP " + std::to_string(res.result_int()));
    } else {
      call->result = std::move(res.body());
    }
  } catch (const std::exception& e) {
    call->result = MakeError(ErrorCode::kUnavailable, e.what());
  }
}

Result<std::string> Post(const Webhook& w, const std::string& body) {
  std::string_view url = w.url;
  constexpr std::string_view kHttps = "https://";
  if (url.substr(0, kHttps.size()) != kHttps) {
    return MakeError(ErrorCode::kInvalid, "webhook URL must be https: " + w.url);
  }
  url.remove_prefix(kHttps.size());
  size_t slash = url.find('/');
  std::string_view authority = url.substr(0, slash);
  Call call;
  call.target = slash == std::string_view::npos ? "/" : std::string(url.substr(slash));
  size_t colon = authority.rfind(':');
  if (colon != std::string_view::npos && authority.find(']') == std::string_view::npos) {
    call.host = std::string(authority.substr(0, colon));
    call.port = std::string(authority.substr(colon + 1));
  } else {
    call.host = std::string(authority);
    call.port = "443";
  }
  call.body = body;
  asio::io_context ioc;
  ssl::context ctx(ssl::context::tls_client);
  ctx.set_verify_mode(ssl::verify_peer);
  boost::system::error_code ec;
  if (!w.ca_pem.empty()) {
    ctx.add_certificate_authority(asio::buffer(w.ca_pem), ec);
  } else {
    ctx.set_default_verify_paths(ec);
  }
  asio::co_spawn(ioc, DoCall(&call, &ctx), asio::detached);
  ioc.run_for(w.timeout);
  return std::move(call.result);
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
