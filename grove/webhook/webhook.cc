#include "grove/webhook/webhook.h"

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "kube/certificates.h"
#include "kube/kubeconfig.h"

namespace copse::grove::webhook {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using asio::ip::tcp;
using Json = nlohmann::json;

namespace {

Json Response(const std::string& uid, bool allowed) {
  return Json{{"uid", uid}, {"allowed", allowed}};
}

// ------------------------------------------------------------ certificates

// A self-signed certificate for loopback and `dns`, its own CA (local mode
// and tests, where no serving Secret exists).
Result<kube::CertificateAndKey> SelfSigned(const std::vector<std::string>& dns) {
  kube::CertificateRequest request;
  request.common_name = "copse-grove-webhook";
  request.is_ca = true;
  request.ip_addresses = {"127.0.0.1", "::1"};
  request.dns_names = {"localhost"};
  request.dns_names.insert(request.dns_names.end(), dns.begin(), dns.end());
  const auto now = std::chrono::system_clock::now();
  request.not_before = now - std::chrono::hours(1);
  request.not_after = now + std::chrono::hours(24 * 365 * 10);
  auto issued = kube::IssueCertificate(request);
  if (!issued.ok()) {
    return MakeError(ErrorCode::kTls, "webhook certificate: " + issued.error().message);
  }
  return issued;
}

// A TLS server context serving `cert` (a chain) with `key`.
Result<std::shared_ptr<ssl::context>> ServerContext(const std::string& cert,
                                                    const std::string& key) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  boost::system::error_code ec;
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                   ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  ctx->use_certificate_chain(asio::buffer(cert), ec);
  if (ec) return MakeError(ErrorCode::kTls, "webhook certificate: " + ec.message());
  ctx->use_private_key(asio::buffer(key), ssl::context::pem, ec);
  if (ec) return MakeError(ErrorCode::kTls, "webhook key: " + ec.message());
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    return MakeError(ErrorCode::kTls, "webhook key: does not match the certificate");
  }
  return ctx;
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

struct Server::Impl : std::enable_shared_from_this<Server::Impl> {
  Validator validate;
  asio::io_context ioc;
  tcp::acceptor acceptor{ioc};
  std::vector<std::thread> threads;
  uint16_t port = 0;
  std::atomic<bool> stopped{false};

  // The serving certificate: new connections take the current context, so
  // a replaced certificate is served from the next handshake on.
  mutable std::mutex cert_mu;
  std::shared_ptr<ssl::context> ctx;
  std::string cert_pem;

  std::shared_ptr<ssl::context> Context() const {
    std::lock_guard lock(cert_mu);
    return ctx;
  }

  http::response<http::string_body> Handle(const http::request<http::string_body>& req) {
    http::response<http::string_body> res;
    res.version(req.version());
    res.set(http::field::content_type, "application/json");
    if (req.target() == "/healthz") {
      res.result(http::status::ok);
      res.set(http::field::content_type, "text/plain");
      res.body() = "ok";
      return res;
    }
    if (req.target() != kValidatePath) {
      res.result(http::status::not_found);
      res.body() = R"({"error":"not found"})";
      return res;
    }
    if (req.method() != http::verb::post) {
      res.result(http::status::method_not_allowed);
      res.body() = R"({"error":"POST an AdmissionReview"})";
      return res;
    }
    auto answer = HandleAdmissionReview(req.body(), validate);
    if (!answer.ok()) {
      res.result(http::status::bad_request);
      res.body() = Json{{"error", answer.error().message}}.dump();
      return res;
    }
    res.result(http::status::ok);
    res.body() = std::move(answer).value();
    return res;
  }
};

namespace {

asio::awaitable<void> Session(std::shared_ptr<Server::Impl> impl, tcp::socket socket) {
  try {
    std::shared_ptr<ssl::context> ctx = impl->Context();  // held for the connection's life
    beast::ssl_stream<beast::tcp_stream> stream(std::move(socket), *ctx);
    stream.next_layer().expires_after(std::chrono::seconds(30));
    co_await stream.async_handshake(ssl::stream_base::server, asio::use_awaitable);
    beast::flat_buffer buffer;
    while (!impl->stopped.load()) {
      http::request<http::string_body> req;
      stream.next_layer().expires_after(std::chrono::seconds(60));
      co_await http::async_read(stream, buffer, req, asio::use_awaitable);
      http::response<http::string_body> res = impl->Handle(req);
      bool keep_alive = req.keep_alive();
      res.keep_alive(keep_alive);
      res.prepare_payload();
      co_await http::async_write(stream, res, asio::use_awaitable);
      if (!keep_alive) break;
    }
    stream.next_layer().expires_after(std::chrono::seconds(5));
    co_await stream.async_shutdown(asio::use_awaitable);
  } catch (const std::exception&) {
    // Connection closed or timed out: nothing to answer.
  }
}

asio::awaitable<void> AcceptLoop(std::shared_ptr<Server::Impl> impl) {
  while (!impl->stopped.load()) {
    try {
      tcp::socket socket = co_await impl->acceptor.async_accept(asio::use_awaitable);
      asio::co_spawn(impl->ioc, Session(impl, std::move(socket)), asio::detached);
    } catch (const std::exception&) {
      if (impl->stopped.load()) co_return;
    }
  }
}

}  // namespace

Server::Server(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() { Stop(); }

Result<std::unique_ptr<Server>> Server::Start(Validator validate, ServerOptions options) {
  auto impl = std::make_shared<Impl>();
  impl->validate = std::move(validate);
  std::string cert = options.cert_pem, key = options.key_pem;
  if (cert.empty() || key.empty()) {
    auto generated = SelfSigned(options.dns_names);
    if (!generated.ok()) return generated.error();
    cert = generated->cert_pem;
    key = generated->key_pem;
  }
  auto ctx = ServerContext(cert, key);
  if (!ctx.ok()) return ctx.error();
  impl->ctx = std::move(ctx).value();
  impl->cert_pem = cert;
  boost::system::error_code ec;
  auto address = asio::ip::make_address(options.address, ec);
  if (ec)
    return MakeError(ErrorCode::kInvalid,
                     "webhook address \"" + options.address + "\": " + ec.message());
  tcp::endpoint endpoint(address, options.port);
  impl->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(endpoint, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return MakeError(ErrorCode::kUnavailable, "webhook: listening on " + options.address + ":" +
                                                  std::to_string(options.port) + ": " +
                                                  ec.message());
  }
  impl->port = impl->acceptor.local_endpoint().port();
  asio::co_spawn(impl->ioc, AcceptLoop(impl), asio::detached);
  for (int i = 0; i < std::max(options.threads, 1); ++i) {
    impl->threads.emplace_back([impl] { impl->ioc.run(); });
  }
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

void Server::Stop() {
  if (!impl_ || impl_->stopped.exchange(true)) return;
  impl_->ioc.stop();
  for (auto& t : impl_->threads) {
    if (t.joinable()) t.join();
  }
  // The I/O threads are gone: close the listener so clients are refused at once.
  boost::system::error_code ec;
  impl_->acceptor.close(ec);
}

uint16_t Server::port() const { return impl_->port; }

std::string Server::url() const {
  return "https://127.0.0.1:" + std::to_string(impl_->port) + std::string(kValidatePath);
}

std::string Server::ca_pem() const {
  std::lock_guard lock(impl_->cert_mu);
  return impl_->cert_pem;
}

Status Server::SetCertificate(const std::string& cert_pem, const std::string& key_pem) {
  auto ctx = ServerContext(cert_pem, key_pem);
  if (!ctx.ok()) return ctx.error();
  std::lock_guard lock(impl_->cert_mu);
  impl_->ctx = std::move(ctx).value();
  impl_->cert_pem = cert_pem;
  return Status::Ok();
}

}  // namespace copse::grove::webhook
