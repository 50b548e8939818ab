// Server: each connection is one coroutine on its own strand: (TLS
// handshake,) read a request, run the handler inline, write the response
// (held while the client's next request is already buffered), keep-alive; a
// streamed response turns the connection into a chunked stream polled from
// its StreamBody (a wake-up posts a timer cancel to the strand).

#include "net/server.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <array>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <unordered_map>

namespace copse::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

namespace {

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
constexpr auto kTlsShutdownTimeout = std::chrono::seconds(5);
// After refusing a request whose body is still arriving, the connection
// reads (and drops) what follows for this long before closing: closing with
// unread data sends a reset, which can destroy the refusal before the client
// has read it.
constexpr auto kDrainTime = std::chrono::seconds(5);
constexpr size_t kDrainBytes = size_t{64} << 20;

using Clock = std::chrono::steady_clock;

// Status line and headers of a response with a body. Written by hand: Beast's
// fields (an allocation each) and serializer were several percent of a bind's
// CPU in the API server.
void AppendHead(std::string& out, unsigned version, const Response& res, size_t content_length,
                bool keep_alive) {
  out += version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ";
  out += std::to_string(res.status);
  out += ' ';
  const std::string_view reason = http::obsolete_reason(static_cast<http::status>(res.status));
  out.append(reason.data(), reason.size());
  out += "\r\n";
  if (!res.content_type.empty()) {
    out += "Content-Type: ";
    out += res.content_type;
    out += "\r\n";
  }
  out += "Cache-Control: no-cache, private\r\n";
  for (const auto& [name, value] : res.headers) {
    out += name;
    out += ": ";
    out += value;
    out += "\r\n";
  }
  out += "Content-Length: ";
  out += std::to_string(content_length);
  out += "\r\n";
  // As Beast's keep_alive() writes it: only when it differs from the version's default.
  if (version >= 11 && !keep_alive) out += "Connection: close\r\n";
  if (version < 11 && keep_alive) out += "Connection: keep-alive\r\n";
  out += "\r\n";
}

template <typename Stream>
constexpr bool kIsPlain = std::is_same_v<Stream, beast::tcp_stream>;

// Writes a response head and body. Plain TCP: one gathered write. TLS: a
// gathered write of head and a body above Beast's 16 KiB flattening limit
// through beast::ssl_stream stalled in testing (kubectl's 49 KB OpenAPI
// document never arrived), so a small body is appended to the head (one TLS
// record) and a large one follows in a second write.
template <typename Stream>
asio::awaitable<beast::error_code> WriteResponse(Stream& stream, std::string& head,
                                                 std::string_view body) {
  constexpr size_t kCoalesce = 16 * 1024;
  if constexpr (kIsPlain<Stream>) {
    const std::array<asio::const_buffer, 2> buffers{asio::buffer(head), asio::buffer(body)};
    auto [ec, n] = co_await asio::async_write(stream, buffers, kTuple);
    (void)n;
    co_return ec;
  } else {
    if (body.size() <= kCoalesce) {
      head += body;
      auto [ec, n] = co_await asio::async_write(stream, asio::buffer(head), kTuple);
      (void)n;
      co_return ec;
    }
    auto [head_ec, head_n] = co_await asio::async_write(stream, asio::buffer(head), kTuple);
    (void)head_n;
    if (head_ec) co_return head_ec;
    auto [body_ec, body_n] = co_await asio::async_write(stream, asio::buffer(body), kTuple);
    (void)body_n;
    co_return body_ec;
  }
}

// Writes the held responses (if any) in one write and clears them.
template <typename Stream>
asio::awaitable<beast::error_code> WriteHeld(Stream& stream, std::string& held) {
  if (held.empty()) co_return beast::error_code{};
  auto [ec, n] = co_await asio::async_write(stream, asio::buffer(held), kTuple);
  (void)n;
  held.clear();
  co_return ec;
}

// A read error that deserves an answer: the request was malformed or too large.
std::optional<ProtocolError> ProtocolErrorOf(const beast::error_code& ec, size_t body_limit) {
  if (ec == http::error::body_limit) {
    return ProtocolError{413, "RequestEntityTooLarge",
                         "Request entity too large: limit is " + std::to_string(body_limit)};
  }
  if (ec == http::error::header_limit) {
    return ProtocolError{431, "RequestHeaderFieldsTooLarge", "Request header fields too large"};
  }
  if (ec.category() == beast::error_code(http::error::body_limit).category() &&
      ec != http::error::end_of_stream && ec != http::error::partial_message &&
      ec != http::error::need_more && ec != http::error::need_buffer) {
    return ProtocolError{400, "BadRequest", "malformed HTTP request: " + ec.message()};
  }
  return std::nullopt;
}

Response DefaultRender(const ProtocolError& error) {
  return Response(error.status, "text/plain; charset=utf-8", error.message + "\n");
}

// A certificate the client presented and OpenSSL verified (with a client CA,
// OpenSSL has already failed the handshake for one that does not verify).
bool PeerVerified(SSL* ssl) {
  return SSL_get0_peer_certificate(ssl) != nullptr && SSL_get_verify_result(ssl) == X509_V_OK;
}

std::string PeerCommonName(SSL* ssl) {
  if (!PeerVerified(ssl)) return {};
  X509* cert = SSL_get0_peer_certificate(ssl);
  X509_NAME* name = X509_get_subject_name(cert);
  const int index = X509_NAME_get_index_by_NID(name, NID_commonName, -1);
  if (index < 0) return {};
  ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, index));
  unsigned char* utf8 = nullptr;
  const int len = ASN1_STRING_to_UTF8(&utf8, data);
  if (len < 0) return {};
  std::string out(reinterpret_cast<char*>(utf8), static_cast<size_t>(len));
  OPENSSL_free(utf8);
  return out;
}

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
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    ERR_clear_error();
    return MakeError(ErrorCode::kInvalid, "serving key: does not match the certificate");
  }
  return ctx;
}

}  // namespace

struct Server::Impl {
  ServerOptions options;
  Handler handler;
  std::unique_ptr<asio::io_context> ioc;
  // The serving context; replaced whole by SetCertificate, so each
  // connection holds the one it began with.
  mutable std::mutex ssl_mu;
  std::shared_ptr<ssl::context> ssl_ctx;
  std::shared_ptr<ssl::context> Context() const {
    std::lock_guard<std::mutex> lock(ssl_mu);
    return ssl_ctx;
  }
  std::vector<std::unique_ptr<tcp::acceptor>> acceptors;
  std::vector<uint16_t> ports;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::vector<std::thread> threads;
  std::atomic<bool> stopped{false};
  std::mutex stop_mu;

  std::mutex streams_mu;
  uint64_t next_stream = 0;
  std::unordered_map<uint64_t, std::weak_ptr<StreamBody>> streams;

  uint64_t AddStream(const std::shared_ptr<StreamBody>& s) {
    std::lock_guard<std::mutex> lock(streams_mu);
    streams.emplace(++next_stream, s);
    return next_stream;
  }
  void RemoveStream(uint64_t id) {
    std::lock_guard<std::mutex> lock(streams_mu);
    streams.erase(id);
  }

  Response Render(const ProtocolError& error) const {
    return options.render_error ? options.render_error(error) : DefaultRender(error);
  }

  asio::awaitable<void> Accept(tcp::acceptor& acceptor, bool tls);
  asio::awaitable<void> ServePlain(tcp::socket socket);
  asio::awaitable<void> ServeTls(tcp::socket socket);
  template <typename Stream>
  asio::awaitable<void> Serve(Stream& stream, bool tls, bool peer_verified,
                              const std::string& peer);
  template <typename Stream>
  asio::awaitable<void> Refuse(Stream& stream, unsigned version, const ProtocolError& error,
                               beast::flat_buffer& buffer);
  template <typename Stream>
  asio::awaitable<void> WriteStream(Stream& stream, unsigned version, Response response);
};

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
  co_await Serve(stream, false, false, std::string());
  beast::error_code ec;
  stream.socket().shutdown(tcp::socket::shutdown_send, ec);
}

asio::awaitable<void> Server::Impl::ServeTls(tcp::socket socket) {
  const std::shared_ptr<ssl::context> ctx = Context();  // held for the connection's life
  beast::ssl_stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(socket)), *ctx);
  beast::get_lowest_layer(stream).expires_after(options.handshake_timeout);
  auto [ec] = co_await stream.async_handshake(ssl::stream_base::server, kTuple);
  if (ec) co_return;
  beast::get_lowest_layer(stream).expires_never();
  const bool verified = !options.tls.client_ca_pem.empty() && PeerVerified(stream.native_handle());
  const std::string peer = verified ? PeerCommonName(stream.native_handle()) : std::string();
  co_await Serve(stream, true, verified, peer);
  beast::get_lowest_layer(stream).expires_after(kTlsShutdownTimeout);
  co_await stream.async_shutdown(kTuple);
}

template <typename Stream>
asio::awaitable<void> Server::Impl::Serve(Stream& stream, bool tls, bool peer_verified,
                                          const std::string& peer) {
  auto& tcp_stream = beast::get_lowest_layer(stream);
  beast::flat_buffer buffer;
  buffer.reserve(options.read_buffer_bytes);
  std::string head;
  // Responses held back while the client's next request is already buffered
  // (a pipelining client): written together, one syscall for the batch.
  std::string held;
  const auto write_deadline = [&] {
    if (options.write_timeout.count() > 0) {
      tcp_stream.expires_after(options.write_timeout);
    } else {
      tcp_stream.expires_never();
    }
  };
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(options.max_body_bytes);
    if (options.read_timeout.count() > 0) {
      tcp_stream.expires_after(options.read_timeout);
    } else {
      tcp_stream.expires_never();
    }
    auto [read_ec, read_n] = co_await http::async_read(stream, buffer, parser, kTuple);
    (void)read_n;
    if (read_ec) {
      write_deadline();
      // e.g. a client that half-closed after its last request
      if (co_await WriteHeld(stream, held)) co_return;
      if (auto refused = ProtocolErrorOf(read_ec, options.max_body_bytes)) {
        const unsigned version = parser.is_header_done() ? parser.get().version() : 11;
        co_await Refuse(stream, version, *refused, buffer);
      }
      co_return;
    }
    http::request<http::string_body>& req = parser.get();
    Request request;
    request.method = req.method_string();
    request.target = req.target();
    request.host = req[http::field::host];
    request.accept = req[http::field::accept];
    request.content_type = req[http::field::content_type];
    request.authorization = req[http::field::authorization];
    request.body = req.body();
    request.version = req.version();
    request.keep_alive = req.keep_alive();
    request.tls = tls;
    request.client_certificate = peer_verified;
    request.client_common_name = peer;
    Response response;
    try {
      response = handler(request);
    } catch (const std::exception& e) {
      response = Response(500, "text/plain; charset=utf-8",
                          std::string("internal server error: ") + e.what() + "\n");
    }
    write_deadline();
    if (response.stream) {
      if (co_await WriteHeld(stream, held)) co_return;
      co_await WriteStream(stream, req.version(), std::move(response));
      co_return;
    }
    const bool keep_alive = req.keep_alive();
    const bool head_only = req.method() == http::verb::head;
    const std::string_view body = head_only ? std::string_view() : std::string_view(response.body);
    head.clear();
    AppendHead(head, req.version(), response, response.body.size(), keep_alive);
    // The head of the next request is already here: hold this response.
    const std::string_view buffered(static_cast<const char*>(buffer.data().data()), buffer.size());
    const bool next_is_here = buffered.find("\r\n\r\n") != std::string_view::npos;
    if (keep_alive && next_is_here &&
        held.size() + head.size() + body.size() <= options.max_held_bytes) {
      held += head;
      held += body;
      continue;
    }
    beast::error_code write_ec;
    if (held.empty()) {
      write_ec = co_await WriteResponse(stream, head, body);
    } else {
      held += head;
      held += body;
      write_ec = co_await WriteHeld(stream, held);
    }
    if (write_ec || !keep_alive) co_return;
  }
}

template <typename Stream>
asio::awaitable<void> Server::Impl::Refuse(Stream& stream, unsigned version,
                                           const ProtocolError& error, beast::flat_buffer& buffer) {
  Response response = Render(error);
  std::string head;
  AppendHead(head, version, response, response.body.size(), /*keep_alive=*/false);
  if (co_await WriteResponse(stream, head, response.body)) co_return;
  auto& tcp_stream = beast::get_lowest_layer(stream);
  beast::error_code ignored;
  tcp_stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  // Drop what the client is still sending until it stops (or a bound).
  const auto until = Clock::now() + kDrainTime;
  size_t drained = 0;
  std::array<char, 16 * 1024> sink;
  buffer.clear();
  while (drained < kDrainBytes && Clock::now() < until && !stopped.load()) {
    tcp_stream.expires_at(until);
    auto [ec, n] = co_await stream.async_read_some(asio::buffer(sink), kTuple);
    if (ec) break;
    drained += n;
  }
}

template <typename Stream>
asio::awaitable<void> Server::Impl::WriteStream(Stream& stream, unsigned version,
                                                Response response) {
  const std::shared_ptr<StreamBody> body = std::move(response.stream);
  const uint64_t stream_id = AddStream(body);
  struct Unregister {
    Impl* impl;
    uint64_t id;
    std::shared_ptr<StreamBody> body;
    ~Unregister() {
      body->Detach();
      impl->RemoveStream(id);
    }
  } unregister{this, stream_id, body};
  auto& tcp_stream = beast::get_lowest_layer(stream);
  // Each write gets the write deadline; waiting for data has none.
  const auto write_deadline = [&] {
    if (options.write_timeout.count() > 0) {
      tcp_stream.expires_after(options.write_timeout);
    } else {
      tcp_stream.expires_never();
    }
  };

  std::string head = version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ";
  head += std::to_string(response.status);
  head += ' ';
  const std::string_view reason = http::obsolete_reason(static_cast<http::status>(response.status));
  head.append(reason.data(), reason.size());
  head += "\r\n";
  if (!response.content_type.empty()) {
    head += "Content-Type: " + response.content_type + "\r\n";
  }
  head += "Cache-Control: no-cache, private\r\n";
  for (const auto& [name, value] : response.headers) head += name + ": " + value + "\r\n";
  head += "Connection: close\r\nTransfer-Encoding: chunked\r\n\r\n";
  {
    auto [ec, n] = co_await asio::async_write(stream, asio::buffer(head), kTuple);
    (void)n;
    if (ec) co_return;
  }

  auto executor = co_await asio::this_coro::executor;
  auto timer = std::make_shared<asio::steady_timer>(executor);
  // A wake-up can land while the coroutine is writing (no wait to cancel):
  // `signaled` makes it look again before waiting.
  auto signaled = std::make_shared<std::atomic<bool>>(false);
  // True only while the coroutine waits for data: a wake-up cancels the
  // timer then and only then.
  auto idle = std::make_shared<std::atomic<bool>>(false);
  body->Attach([executor, signaled, idle, weak = std::weak_ptr<asio::steady_timer>(timer)] {
    signaled->store(true);
    if (!idle->exchange(false)) return;
    asio::post(executor, [weak] {
      if (auto t = weak.lock()) t->cancel();
    });
  });
  std::string out;
  for (;;) {
    out.clear();
    const StreamBody::Step step = body->Poll(out);
    if (!out.empty()) {
      write_deadline();
      auto [ec, n] =
          co_await asio::async_write(stream, http::make_chunk(asio::buffer(out)), kTuple);
      (void)n;
      if (ec) co_return;
      tcp_stream.expires_never();
    }
    if (step.more && !stopped.load()) continue;
    if (step.done || stopped.load()) break;
    if (step.quiet_for.count() > 0) {
      // Not idle: wake-ups now only set `signaled`; what they announce is
      // taken together once the quiet time is over.
      timer->expires_after(step.quiet_for);
      co_await timer->async_wait(kTuple);
      if (stopped.load()) break;
    }
    if (signaled->exchange(false)) continue;
    idle->store(true);
    if (signaled->load()) {  // a wake-up between the check above and going idle
      idle->store(false);
      continue;
    }
    timer->expires_at(step.poll_at);
    co_await timer->async_wait(kTuple);
    idle->store(false);
  }
  write_deadline();
  auto [ec, n] = co_await asio::async_write(stream, http::make_chunk_last(), kTuple);
  (void)ec;
  (void)n;
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
  for (int i = 0; i < raw->options.threads; ++i) {
    raw->threads.emplace_back([raw] { raw->ioc->run(); });
  }
  return std::unique_ptr<Server>(new Server(std::move(impl)));
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
  for (auto& t : impl_->threads) t.join();
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
