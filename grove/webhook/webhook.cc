#include "grove/webhook/webhook.h"

#include <algorithm>
#include <mutex>
#include <nlohmann/json.hpp>

#include "kube/kubeconfig.h"
#include "net/cert.h"
#include "net/server.h"

namespace copse::grove::webhook {

using Json = nlohmann::json;

namespace {

Json Response(const std::string& uid, bool allowed) {
  return Json{{"uid", uid}, {"allowed", allowed}};
}

}  // namespace

Result<std::string> HandleAdmissionReview(std::string_view body, const Validator& validate) {
  Json review = Json::parse(body, nullptr, false);
  if (!review.is_object() || !review.contains("request") || !review["request"].is_object()) {
    return MakeError(ErrorCode::kInvalid, "request: expected an AdmissionReview with a request");
  }
  const Json& request = review["request"];
  std::string uid = request.value("uid", "");
  std::string operation = request.value("operation", "");
  std::string kind;
  if (request.contains("kind") && request["kind"].is_object())
    kind = request["kind"].value("kind", "");
  Json response = Response(uid, true);
  bool relevant = kind == "PodCliqueSet" && (operation == "CREATE" || operation == "UPDATE") &&
                  request.contains("object") && request["object"].is_object();
  if (relevant) {
    std::string object = request["object"].dump();
    std::string old;
    if (operation == "UPDATE" && request.contains("oldObject") &&
        request["oldObject"].is_object()) {
      old = request["oldObject"].dump();
    }
    Result<backend::Admission> admitted = validate(object, old);
    if (!admitted.ok()) {
      response["allowed"] = false;
      int code = admitted.error().http_status != 0 ? admitted.error().http_status : 422;
      response["status"] = {
          {"code", code},
          {"message", admitted.error().message},
          {"reason", admitted.error().reason.empty() ? "Invalid" : admitted.error().reason}};
    } else if (!admitted->ignored.empty()) {
      response["warnings"] = admitted->ignored;
    }
  }
  Json out = {{"apiVersion", review.value("apiVersion", "admission.k8s.io/v1")},
              {"kind", "AdmissionReview"},
              {"response", response}};
  return out.dump();
}

std::string ValidatingWebhookConfiguration(std::string_view name, std::string_view url,
                                           std::string_view ca_pem) {
  Json config = {
      {"apiVersion", "admissionregistration.k8s.io/v1"},
      {"kind", "ValidatingWebhookConfiguration"},
      {"metadata", {{"name", name}}},
      {"webhooks",
       Json::array({{{"name", "validate.podcliqueset.grove.io"},
                     {"clientConfig", {{"url", url}, {"caBundle", kube::EncodeBase64(ca_pem)}}},
                     {"rules", Json::array({{{"apiGroups", {"grove.io"}},
                                             {"apiVersions", {"v1alpha1"}},
                                             {"operations", {"CREATE", "UPDATE"}},
                                             {"resources", {"podcliquesets"}}}})},
                     {"admissionReviewVersions", {"v1"}},
                     {"sideEffects", "None"},
                     {"failurePolicy", "Fail"},
                     {"timeoutSeconds", 10}}})}};
  return config.dump();
}

struct Server::Impl {
  Validator validate;
  std::unique_ptr<net::Server> server;
  // The certificate served now (SetCertificate replaces it).
  mutable std::mutex cert_mu;
  std::string cert_pem;

  net::Response Handle(const net::Request& req) const {
    if (req.target == "/healthz") return net::Response(200, "text/plain", "ok");
    if (req.target != kValidatePath) {
      return net::Response(404, "application/json", R"({"error":"not found"})");
    }
    if (req.method != "POST") {
      return net::Response(405, "application/json", R"({"error":"POST an AdmissionReview"})");
    }
    auto answer = HandleAdmissionReview(req.body, validate);
    if (!answer.ok()) {
      return net::Response(400, "application/json", Json{{"error", answer.error().message}}.dump());
    }
    return net::Response(200, "application/json", std::move(answer).value());
  }
};

Server::Server(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() { Stop(); }

Result<std::unique_ptr<Server>> Server::Start(Validator validate, ServerOptions options) {
  auto impl = std::make_shared<Impl>();
  impl->validate = std::move(validate);
  std::string cert = options.cert_pem, key = options.key_pem;
  if (cert.empty() || key.empty()) {
    net::CertificateOptions cert_options;
    cert_options.common_name = "copse-grove-webhook";
    for (const std::string& dns : options.dns_names) cert_options.dns_names.push_back(dns);
    auto generated = net::SelfSignedCertificate(cert_options);
    if (!generated.ok()) {
      Error error = std::move(generated).error();
      error.message = "webhook certificate: " + error.message;
      return error;
    }
    cert = generated->cert_pem;
    key = generated->key_pem;
  }
  impl->cert_pem = cert;
  net::ServerOptions server_options;
  server_options.address = options.address;
  server_options.listeners.push_back({options.port, true});
  server_options.tls.cert_pem = cert;
  server_options.tls.key_pem = key;
  server_options.threads = std::max(options.threads, 1);
  // kube-apiserver sends whole objects; its own request limit is 3 MiB.
  server_options.max_body_bytes = size_t{3} << 20;
  server_options.read_timeout = std::chrono::seconds(60);
  server_options.write_timeout = std::chrono::seconds(60);
  Impl* raw = impl.get();
  auto started = net::Server::Start(std::move(server_options),
                                    [raw](const net::Request& req) { return raw->Handle(req); });
  if (!started.ok()) {
    Error error = std::move(started).error();
    error.message = "webhook: " + error.message;
    return error;
  }
  impl->server = std::move(started).value();
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

void Server::Stop() {
  if (impl_ && impl_->server) impl_->server->Stop();
}

uint16_t Server::port() const { return impl_->server->port(); }

std::string Server::url() const {
  return "https://127.0.0.1:" + std::to_string(port()) + std::string(kValidatePath);
}

std::string Server::ca_pem() const {
  std::lock_guard lock(impl_->cert_mu);
  return impl_->cert_pem;
}

Status Server::SetCertificate(const std::string& cert_pem, const std::string& key_pem) {
  // Held across the swap so that ca_pem() never names a certificate other
  // than the one new connections get.
  std::lock_guard lock(impl_->cert_mu);
  if (Status s = impl_->server->SetCertificate(cert_pem, key_pem); !s.ok()) {
    Error error = s.error();
    error.message = "webhook certificate: " + error.message;
    return error;
  }
  impl_->cert_pem = cert_pem;
  return Status::Ok();
}

}  // namespace copse::grove::webhook
