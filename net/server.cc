// Server: listeners, start and stop, certificates, and plain-TCP connections
// (net/server_connection.h has the connection coroutine; server_tls.cc the
// TLS connections).

#include "net/server.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <pthread.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "net/server_connection.h"

namespace copse::net {

namespace {

// A TLS server context for `tls` (serving chain and key; client CAs).
Result<std::shared_ptr<ssl::context>> MakeServerContext(const TlsOptions& tls) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  boost::system::error_code ec;
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1,
                   ec);
  ctx->use_certificate_chain(asio::buffer(tls.cert_pem), ec);
  if (ec) {
    return MakeError(ErrorCode::kInvalid, "serving certificate: " + ec.message());
  }
  ctx->use_private_key(asio::buffer(tls.key_pem), ssl::context::pem, ec);
  if (ec) return MakeError(ErrorCode::kInvalid, "serving key: " + ec.message());
  if (!tls.client_ca_pem.empty()) {
    ctx->add_certificate_authority(asio::buffer(tls.client_ca_pem), ec);
    if (ec) return MakeError(ErrorCode::kInvalid, "client CA: " + ec.message());
    // Clients are told which CAs are accepted, as Go's servers do.
    STACK_OF(X509_NAME)* names = sk_X509_NAME_new_null();
    if (names != nullptr) {
      BIO* bio =
          BIO_new_mem_buf(tls.client_ca_pem.data(), static_cast<int>(tls.client_ca_pem.size()));
      if (bio != nullptr) {
        while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
          sk_X509_NAME_push(names, X509_NAME_dup(X509_get_subject_name(cert)));
          X509_free(cert);
        }
        BIO_free(bio);
      }
      ERR_clear_error();
      SSL_CTX_set_client_CA_list(ctx->native_handle(), names);
    }
    ssl::verify_mode mode = ssl::verify_peer;
    if (tls.require_client_certificate) mode |= ssl::verify_fail_if_no_peer_cert;
    ctx->set_verify_mode(mode, ec);
    if (ec) return MakeError(ErrorCode::kInvalid, "client CA: " + ec.message());
  }
  if (tls.client_ca_pem.empty() && tls.request_client_certificate) {
    // Any certificate passes the handshake: the handler verifies it.
    SSL_CTX_set_verify(ctx->native_handle(), SSL_VERIFY_PEER,
                       [](int, X509_STORE_CTX*) -> int { return 1; });
    // A session resumed by a client that was asked for a certificate needs
    // a context id, or OpenSSL refuses the resumption.
    static constexpr unsigned char kSessionContext[] = "copse";
    SSL_CTX_set_session_id_context(ctx->native_handle(), kSessionContext,
                                   sizeof(kSessionContext) - 1);
  }
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    ERR_clear_error();
    return MakeError(ErrorCode::kInvalid, "serving key: does not match the certificate");
  }
  return ctx;
}

}  // namespace

asio::awaitable<void> Server::Impl::Accept(tcp::acceptor& acceptor, bool tls) {
  for (;;) {
    auto [ec, socket] = co_await acceptor.async_accept(asio::make_strand(*ioc), kTuple);
    if (ec) {
      if (ec == asio::error::operation_aborted || stopped.load()) co_return;
      continue;
    }
    socket.set_option(tcp::no_delay(true), ec);
    auto executor = socket.get_executor();
    if (tls) {
      asio::co_spawn(executor, ServeTls(std::move(socket)), asio::detached);
    } else {
      asio::co_spawn(executor, ServePlain(std::move(socket)), asio::detached);
    }
  }
}

asio::awaitable<void> Server::Impl::ServePlain(tcp::socket socket) {
  beast::tcp_stream stream(std::move(socket));
  // Named: GCC 12 copies a temporary built in a co_await expression bitwise
  // into the coroutine frame and destroys it twice.
  const PeerCertificate none;
  co_await Serve(stream, false, none);
  beast::error_code ec;
  stream.socket().shutdown(tcp::socket::shutdown_send, ec);
}

// ---------------------------------------------------------------------------

Server::Server(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() { Stop(); }

Result<std::unique_ptr<Server>> Server::Start(ServerOptions options, Handler handler) {
  auto impl = std::make_shared<Impl>();
  if (options.threads < 1) options.threads = 1;
  if (options.listeners.empty()) {
    return MakeError(ErrorCode::kInvalid, "server: no listener configured");
  }
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(options.address, ec);
  if (ec) {
    return MakeError(ErrorCode::kInvalid,
                     "bad listen address \"" + options.address + "\": " + ec.message());
  }
  bool any_tls = false;
  for (const ListenerOptions& l : options.listeners) any_tls = any_tls || l.tls;
  if (any_tls) {
    const TlsOptions& tls = options.tls;
    if (tls.cert_pem.empty() || tls.key_pem.empty()) {
      return MakeError(ErrorCode::kInvalid, "TLS listener without a certificate and key");
    }
    auto ctx = MakeServerContext(tls);
    if (!ctx.ok()) return std::move(ctx).error();
    impl->ssl_ctx = std::move(ctx).value();
  }
  impl->ioc = std::make_unique<asio::io_context>(options.threads);
  for (const ListenerOptions& l : options.listeners) {
    auto acceptor = std::make_unique<tcp::acceptor>(*impl->ioc);
    const tcp::endpoint endpoint(address, l.port);
    boost::system::error_code err;
    acceptor->open(endpoint.protocol(), err);
    if (!err) acceptor->set_option(asio::socket_base::reuse_address(true), err);
    if (!err) acceptor->bind(endpoint, err);
    if (!err) acceptor->listen(asio::socket_base::max_listen_connections, err);
    if (err) {
      return MakeError(ErrorCode::kUnavailable, "listen " + options.address + ":" +
                                                    std::to_string(l.port) + ": " + err.message());
    }
    impl->ports.push_back(acceptor->local_endpoint().port());
    impl->acceptors.push_back(std::move(acceptor));
  }
  impl->options = std::move(options);
  impl->handler = std::move(handler);
  Impl* raw = impl.get();
  for (size_t i = 0; i < raw->acceptors.size(); ++i) {
    asio::co_spawn(*raw->ioc, raw->Accept(*raw->acceptors[i], raw->options.listeners[i].tls),
                   asio::detached);
  }
  raw->work.emplace(raw->ioc->get_executor());
  auto server = std::unique_ptr<Server>(new Server(std::move(impl)));
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  int rc = pthread_attr_setstacksize(
      &attr, std::max<size_t>(raw->options.thread_stack_bytes, PTHREAD_STACK_MIN));
  for (int i = 0; rc == 0 && i < raw->options.threads; ++i) {
    pthread_t thread;
    rc = pthread_create(
        &thread, &attr,
        [](void* arg) -> void* {
          static_cast<Impl*>(arg)->ioc->run();
          return nullptr;
        },
        raw);
    if (rc == 0) raw->threads.push_back(thread);
  }
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    server->Stop();
    return MakeError(ErrorCode::kUnavailable, "server: cannot start a thread with a stack of " +
                                                  std::to_string(raw->options.thread_stack_bytes) +
                                                  " bytes: " + std::strerror(rc));
  }
  return server;
}

void Server::Stop() {
  if (!impl_) return;
  std::lock_guard<std::mutex> lock(impl_->stop_mu);
  if (impl_->stopped.exchange(true)) return;
  // No stream may wake a strand of the io_context once it is gone.
  {
    std::lock_guard<std::mutex> streams_lock(impl_->streams_mu);
    for (auto& [id, weak] : impl_->streams) {
      if (auto s = weak.lock()) {
        s->Detach();
        s->Close();
      }
    }
  }
  impl_->work.reset();
  impl_->ioc->stop();
  for (pthread_t t : impl_->threads) pthread_join(t, nullptr);
  impl_->threads.clear();
  // Destroying the acceptors and then the io_context closes the listeners
  // and destroys every connection's coroutine (closing its socket).
  impl_->acceptors.clear();
  impl_->ioc.reset();
}

void Server::CloseStreams() {
  std::vector<std::shared_ptr<StreamBody>> live;
  {
    std::lock_guard<std::mutex> lock(impl_->streams_mu);
    for (auto& [id, weak] : impl_->streams) {
      if (auto s = weak.lock()) live.push_back(std::move(s));
    }
  }
  for (auto& s : live) s->Close();
}

Status Server::SetCertificate(const std::string& cert_pem, const std::string& key_pem) {
  if (!impl_->Context()) return MakeError(ErrorCode::kInvalid, "server: no TLS listener");
  TlsOptions tls = impl_->options.tls;
  tls.cert_pem = cert_pem;
  tls.key_pem = key_pem;
  auto ctx = MakeServerContext(tls);
  if (!ctx.ok()) return std::move(ctx).error();
  std::lock_guard<std::mutex> lock(impl_->ssl_mu);
  impl_->ssl_ctx = std::move(ctx).value();
  return Status::Ok();
}

uint16_t Server::port(size_t listener) const {
  return listener < impl_->ports.size() ? impl_->ports[listener] : 0;
}

const std::string& Server::address() const { return impl_->options.address; }

}  // namespace copse::net
