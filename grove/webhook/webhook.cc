#include "grove/webhook/webhook.h"

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

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
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

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

struct Deleter {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
  void operator()(BIGNUM* p) const { BN_free(p); }
};
template <typename T>
using Ptr = std::unique_ptr<T, Deleter>;

Error TlsError(const std::string& what) {
  ERR_clear_error();
  return MakeError(ErrorCode::kTls, "webhook certificate: " + what);
}

bool AddExtension(X509* cert, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  Ptr<X509_EXTENSION> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
  return ext != nullptr && X509_add_ext(cert, ext.get(), -1) == 1;
}

std::string BioString(BIO* bio) {
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(len));
}

Result<std::pair<std::string, std::string>> SelfSigned(const std::vector<std::string>& dns) {
  Ptr<EVP_PKEY> key(EVP_EC_gen("P-256"));
  if (!key) return TlsError("generating the key");
  Ptr<X509> cert(X509_new());
  X509_set_version(cert.get(), 2);
  unsigned char serial_bytes[16];
  if (RAND_bytes(serial_bytes, sizeof(serial_bytes)) != 1) return TlsError("random serial");
  serial_bytes[0] &= 0x7f;
  Ptr<BIGNUM> serial(BN_bin2bn(serial_bytes, sizeof(serial_bytes), nullptr));
  if (!serial || !BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get()))) {
    return TlsError("serial number");
  }
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 10L * 365 * 24 * 3600);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("copse-grove-webhook"), -1,
                             -1, 0);
  X509_set_issuer_name(cert.get(), name);
  X509_set_pubkey(cert.get(), key.get());
  std::string san = "IP:127.0.0.1,IP:0:0:0:0:0:0:0:1,DNS:localhost";
  for (const auto& d : dns) san += ",DNS:" + d;
  if (!AddExtension(cert.get(), NID_basic_constraints, "critical,CA:TRUE") ||
      !AddExtension(cert.get(), NID_key_usage, "critical,digitalSignature,keyCertSign") ||
      !AddExtension(cert.get(), NID_ext_key_usage, "serverAuth") ||
      !AddExtension(cert.get(), NID_subject_alt_name, san)) {
    return TlsError("extensions");
  }
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) return TlsError("signing");
  Ptr<BIO> cert_bio(BIO_new(BIO_s_mem()));
  Ptr<BIO> key_bio(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_X509(cert_bio.get(), cert.get()) != 1 ||
      PEM_write_bio_PrivateKey(key_bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) !=
          1) {
    return TlsError("PEM");
  }
  return std::make_pair(BioString(cert_bio.get()), BioString(key_bio.get()));
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
  if (request.contains("kind") && request["kind"].is_object()) kind = request["kind"].value("kind", "");
  Json response = Response(uid, true);
  bool relevant = kind == "PodCliqueSet" && (operation == "CREATE" || operation == "UPDATE") &&
                  request.contains("object") && request["object"].is_object();
  if (relevant) {
    std::string object = request["object"].dump();
    std::string old;
    if (operation == "UPDATE" && request.contains("oldObject") && request["oldObject"].is_object()) {
      old = request["oldObject"].dump();
    }
    Result<backend::Admission> admitted = validate(object, old);
    if (!admitted.ok()) {
      response["allowed"] = false;
      int code = admitted.error().http_status != 0 ? admitted.error().http_status : 422;
      response["status"] = {{"code", code},
                            {"message", admitted.error().message},
                            {"reason", admitted.error().reason.empty() ? "Invalid"
                                                                       : admitted.error().reason}};
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
                     {"clientConfig",
                      {{"url", url}, {"caBundle", kube::EncodeBase64(ca_pem)}}},
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
  ssl::context ctx{ssl::context::tls_server};
  tcp::acceptor acceptor{ioc};
  std::vector<std::thread> threads;
  std::string cert_pem;
  uint16_t port = 0;
  std::atomic<bool> stopped{false};

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
    beast::ssl_stream<beast::tcp_stream> stream(std::move(socket), impl->ctx);
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
    cert = generated->first;
    key = generated->second;
  }
  impl->cert_pem = cert;
  boost::system::error_code ec;
  impl->ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                        ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                        ssl::context::no_tlsv1_1);
  impl->ctx.use_certificate_chain(asio::buffer(cert), ec);
  if (ec) return MakeError(ErrorCode::kTls, "webhook certificate: " + ec.message());
  impl->ctx.use_private_key(asio::buffer(key), ssl::context::pem, ec);
  if (ec) return MakeError(ErrorCode::kTls, "webhook key: " + ec.message());
  auto address = asio::ip::make_address(options.address, ec);
  if (ec) return MakeError(ErrorCode::kInvalid, "webhook address \"" + options.address + "\": " + ec.message());
  tcp::endpoint endpoint(address, options.port);
  impl->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(endpoint, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return MakeError(ErrorCode::kUnavailable, "webhook: listening on " + options.address + ":" +
                                                  std::to_string(options.port) + ": " + ec.message());
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

const std::string& Server::ca_pem() const { return impl_->cert_pem; }

}  // namespace copse::grove::webhook
