// ApiServer: the Boost.Beast HTTP/1.1 front end (plain and TLS) on the
// Handler. Each connection is one coroutine on its own strand: read a
// request, run the handler inline, write the response, keep-alive; a watch
// turns the connection into a chunked stream fed by its WatchStream (the
// Store's notify posts a timer cancel to the strand, the coroutine drains
// every pending event into one chunk).

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

#include "apiserver/apiserver.h"
#include "apiserver/handler.h"
#include "apiserver/store.h"
#include "apiserver/tls.h"

namespace copse::apiserver {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

namespace {

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
constexpr size_t kMaxBody = 256u << 20;
constexpr size_t kReadBufferBytes = 16 * 1024;
constexpr size_t kEventsPerChunk = 4096;

std::string Base64(std::string_view in) {
  static constexpr char kTable[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const uint32_t n = (static_cast<uint8_t>(in[i]) << 16) |
                       (static_cast<uint8_t>(in[i + 1]) << 8) | static_cast<uint8_t>(in[i + 2]);
    for (int s : {18, 12, 6, 0}) out += kTable[(n >> s) & 63];
  }
  if (i < in.size()) {
    uint32_t n = static_cast<uint8_t>(in[i]) << 16;
    if (i + 1 < in.size()) n |= static_cast<uint8_t>(in[i + 1]) << 8;
    out += kTable[(n >> 18) & 63];
    out += kTable[(n >> 12) & 63];
    out += i + 1 < in.size() ? kTable[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

// Status line and headers of a response with a body: Content-Type,
// Cache-Control, Content-Length and, as Beast's keep_alive() sets it, a
// Connection header when the persistence differs from the version's default.
void AppendResponseHead(std::string& out, unsigned version, int status,
                        std::string_view content_type, size_t content_length, bool keep_alive,
                        const std::vector<std::string>& warnings) {
  out += version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ";
  out += std::to_string(status);
  out += ' ';
  const std::string_view reason = http::obsolete_reason(static_cast<http::status>(status));
  out.append(reason.data(), reason.size());
  out += "\r\nContent-Type: ";
  out += content_type;
  out += "\r\nCache-Control: no-cache, private\r\nContent-Length: ";
  out += std::to_string(content_length);
  out += "\r\n";
  if (version >= 11 && !keep_alive) out += "Connection: close\r\n";
  if (version < 11 && keep_alive) out += "Connection: keep-alive\r\n";
  // API warnings as kube-apiserver sends them (RFC 7234 code 299, no agent).
  for (const std::string& warning : warnings) {
    out += "Warning: 299 - \"";
    for (char c : warning) {
      if (c == '"' || c == '\\') out += '\\';
      if (c != '\r' && c != '\n') out += c;
    }
    out += "\"\r\n";
  }
  out += "\r\n";
}

// Writes a response head and body. Plain TCP: one gathered write. TLS: a
// gathered write of head and a body above Beast's 16 KiB flattening limit
// through beast::ssl_stream stalled in testing (kubectl's 49 KB OpenAPI
// document never arrived), so a small body is appended to the head (one TLS
// record, as Beast's serializer wrote it) and a large one follows in a
// second write.
template <typename Stream>
asio::awaitable<beast::error_code> WriteResponse(Stream& stream, std::string& head,
                                                 const std::string& body) {
  constexpr size_t kCoalesce = 16 * 1024;
  if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
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

}  // namespace

struct ApiServer::Impl {
  Options options;
  std::shared_ptr<Store> store;
  std::unique_ptr<Handler> handler;
  std::unique_ptr<asio::io_context> ioc;
  std::unique_ptr<ssl::context> ssl_ctx;
  std::unique_ptr<tcp::acceptor> http_acceptor;
  std::unique_ptr<tcp::acceptor> https_acceptor;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::vector<std::thread> threads;
  std::string ca_pem;
  uint16_t http_port = 0;
  uint16_t https_port = 0;
  std::atomic<bool> stopped{false};
  std::mutex stop_mu;

  std::mutex sessions_mu;
  uint64_t next_session = 0;
  std::unordered_map<uint64_t, std::weak_ptr<WatchSession>> sessions;

  uint64_t AddSession(const std::shared_ptr<WatchSession>& s) {
    std::lock_guard<std::mutex> lock(sessions_mu);
    sessions.emplace(++next_session, s);
    return next_session;
  }
  void RemoveSession(uint64_t id) {
    std::lock_guard<std::mutex> lock(sessions_mu);
    sessions.erase(id);
  }

  asio::awaitable<void> Accept(tcp::acceptor& acceptor, bool tls);
  template <typename Stream>
  asio::awaitable<void> Serve(Stream& stream, bool client_certificate);
  template <typename Stream>
  asio::awaitable<bool> StreamWatch(Stream& stream, unsigned version,
                                    std::shared_ptr<WatchSession> session);
  asio::awaitable<void> ServePlain(tcp::socket socket);
  asio::awaitable<void> ServeTls(tcp::socket socket);
};

asio::awaitable<void> ApiServer::Impl::Accept(tcp::acceptor& acceptor, bool tls) {
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

asio::awaitable<void> ApiServer::Impl::ServePlain(tcp::socket socket) {
  beast::tcp_stream stream(std::move(socket));
  co_await Serve(stream, false);
  beast::error_code ec;
  stream.socket().shutdown(tcp::socket::shutdown_send, ec);
}

asio::awaitable<void> ApiServer::Impl::ServeTls(tcp::socket socket) {
  beast::ssl_stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(socket)), *ssl_ctx);
  beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(30));
  auto [ec] = co_await stream.async_handshake(ssl::stream_base::server, kTuple);
  if (ec) co_return;
  beast::get_lowest_layer(stream).expires_never();
  // With a client CA, OpenSSL has already rejected a certificate it does not
  // sign (as kube-apiserver's VerifyClientCertIfGiven): one that is present
  // now is verified and authenticates the connection.
  X509* peer = SSL_get1_peer_certificate(stream.native_handle());
  const bool client_certificate =
      peer != nullptr && SSL_get_verify_result(stream.native_handle()) == X509_V_OK;
  X509_free(peer);
  co_await Serve(stream, client_certificate);
  beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(5));
  co_await stream.async_shutdown(kTuple);
}

template <typename Stream>
asio::awaitable<void> ApiServer::Impl::Serve(Stream& stream, bool client_certificate) {
  // Beast reads only as much as the buffer's spare capacity (at least 512
  // bytes): without room, a pipelining client's batch of requests costs a
  // read per one or two requests, and its responses go out in as many writes.
  beast::flat_buffer buffer;
  buffer.reserve(kReadBufferBytes);
  std::string head_buffer;
  // Responses held back while the client's next request is already buffered
  // (a pipelining client): written together, one syscall for the batch.
  std::string held;
  constexpr size_t kMaxHeld = 256 * 1024;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(kMaxBody);
    auto [read_ec, read_n] = co_await http::async_read(stream, buffer, parser, kTuple);
    (void)read_n;
    if (read_ec) {
      co_await WriteHeld(stream, held);  // e.g. a client that half-closed after its last request
      co_return;
    }
    http::request<http::string_body>& req = parser.get();
    HttpRequest hr;
    hr.method = req.method_string();
    hr.target = req.target();
    hr.host = req[http::field::host];
    hr.accept = req[http::field::accept];
    hr.content_type = req[http::field::content_type];
    hr.authorization = req[http::field::authorization];
    hr.client_certificate = client_certificate;
    hr.body = req.body();
    HttpResponse out = handler->Handle(hr);
    if (out.watch) {
      if (co_await WriteHeld(stream, held)) co_return;
      co_await StreamWatch(stream, req.version(), std::move(out.watch));
      co_return;
    }
    // The header is written by hand (what Beast's response, keep_alive() and
    // prepare_payload() produced): its fields (an allocation each) and
    // serializer were several percent of a bind's CPU.
    const bool keep_alive = req.keep_alive();
    std::string& head = head_buffer;
    head.clear();
    AppendResponseHead(head, req.version(), out.status, out.content_type, out.body.size(),
                       keep_alive, out.warnings);
    // The head of the next request is already here: hold this response.
    const std::string_view buffered(static_cast<const char*>(buffer.data().data()), buffer.size());
    const bool next_is_here = buffered.find("\r\n\r\n") != std::string_view::npos;
    if (keep_alive && next_is_here && held.size() + head.size() + out.body.size() <= kMaxHeld) {
      held += head;
      held += out.body;
      continue;
    }
    beast::error_code write_ec;
    if (held.empty()) {
      write_ec = co_await WriteResponse(stream, head, out.body);
    } else {
      held += head;
      held += out.body;
      write_ec = co_await WriteHeld(stream, held);
    }
    if (write_ec || !keep_alive) co_return;
  }
}

template <typename Stream>
asio::awaitable<bool> ApiServer::Impl::StreamWatch(Stream& stream, unsigned version,
                                                   std::shared_ptr<WatchSession> session) {
  const uint64_t session_id = AddSession(session);
  struct Unregister {
    Impl* impl;
    uint64_t id;
    std::shared_ptr<WatchSession> session;
    ~Unregister() {
      session->stream().SetNotify(nullptr);
      impl->RemoveSession(id);
    }
  } unregister{this, session_id, session};

  http::response<http::empty_body> res{http::status::ok, version};
  res.set(http::field::content_type, session->content_type);
  res.set(http::field::cache_control, "no-cache, private");
  res.keep_alive(false);
  res.chunked(true);
  http::response_serializer<http::empty_body> sr{res};
  auto [hdr_ec, hdr_n] = co_await http::async_write_header(stream, sr, kTuple);
  (void)hdr_n;
  if (hdr_ec) co_return false;

  auto executor = co_await asio::this_coro::executor;
  auto timer = std::make_shared<asio::steady_timer>(executor);
  // A notify can land while the coroutine is writing (no wait to cancel):
  // `signaled` makes it look again before waiting.
  auto signaled = std::make_shared<std::atomic<bool>>(false);
  // True only while the coroutine waits for events: a notify wakes it then
  // and only then (while it is writing, `signaled` alone makes it look again).
  auto idle = std::make_shared<std::atomic<bool>>(false);
  session->stream().SetNotify(
      [executor, signaled, idle, weak = std::weak_ptr<asio::steady_timer>(timer)] {
        signaled->store(true);
        if (!idle->exchange(false)) return;
        asio::post(executor, [weak] {
          if (auto t = weak.lock()) t->cancel();
        });
      });
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto deadline =
      session->timeout.count() > 0 ? start + session->timeout : Clock::time_point::max();
  const auto interval = handler->options().bookmark_interval;
  const auto write_interval = options.watch_write_interval;
  auto next_bookmark = session->bookmarks ? start + interval : Clock::time_point::max();
  std::vector<WatchEvent> events;
  std::string out;
  for (;;) {
    const auto now = Clock::now();
    uint64_t bookmark_rv = 0;
    if (now >= next_bookmark) {
      // Read before taking events: every event up to this version is queued.
      bookmark_rv = store->CurrentResourceVersion();
      next_bookmark = now + interval;
    }
    events.clear();
    const bool open = session->stream().Take(&events);
    const bool wrote = !events.empty();
    for (size_t i = 0; i < events.size() || (i == 0 && bookmark_rv != 0); i += kEventsPerChunk) {
      out.clear();
      if (!events.empty()) {
        const size_t end = std::min(events.size(), i + kEventsPerChunk);
        std::vector<WatchEvent> slice(events.begin() + static_cast<long>(i),
                                      events.begin() + static_cast<long>(end));
        session->Serialize(slice, &out);
      }
      if (bookmark_rv != 0 && i + kEventsPerChunk >= events.size()) {
        session->AppendBookmark(bookmark_rv, &out);
      }
      if (out.empty()) break;
      auto [ec, n] =
          co_await asio::async_write(stream, http::make_chunk(asio::buffer(out)), kTuple);
      (void)n;
      if (ec) co_return false;
    }
    if (!open || stopped.load() || Clock::now() >= deadline) break;
    if (wrote && write_interval.count() > 0) {
      // Not idle: events arriving now only set `signaled`; they are taken
      // together once the interval is over.
      timer->expires_after(write_interval);
      co_await timer->async_wait(kTuple);
      if (stopped.load()) break;
    }
    if (signaled->exchange(false)) continue;
    idle->store(true);
    if (signaled->load()) {  // a notify between the check above and going idle
      idle->store(false);
      continue;
    }
    timer->expires_at(std::min(deadline, next_bookmark));
    co_await timer->async_wait(kTuple);
    idle->store(false);
  }
  auto [ec, n] = co_await asio::async_write(stream, http::make_chunk_last(), kTuple);
  (void)n;
  co_return !ec;
}

// ---------------------------------------------------------------------------

ApiServer::ApiServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ApiServer::~ApiServer() { Stop(); }

Result<std::unique_ptr<ApiServer>> ApiServer::Start(Options options) {
  auto impl = std::make_unique<Impl>();
  if (!options.store) options.store = NewStore();
  if (options.threads < 1) options.threads = 1;
  impl->store = options.store;
  HandlerOptions hopts;
  hopts.token = options.token;
  hopts.bind_failure_rate = options.bind_failure_rate;
  hopts.bind_reject_prefix = options.bind_reject_prefix;
  hopts.bind_lost_reply_rate = options.bind_lost_reply_rate;
  hopts.seed = options.seed;
  hopts.bookmark_interval = options.bookmark_interval;
  impl->handler = std::make_unique<Handler>(impl->store, hopts);
  impl->ioc = std::make_unique<asio::io_context>(options.threads);
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(options.address, ec);
  if (ec) return MakeError(ErrorCode::kInvalid, "bad listen address " + options.address);
  auto listen = [&](uint16_t port, std::unique_ptr<tcp::acceptor>* out) -> Status {
    auto acceptor = std::make_unique<tcp::acceptor>(*impl->ioc);
    const tcp::endpoint endpoint(address, port);
    boost::system::error_code err;
    acceptor->open(endpoint.protocol(), err);
    if (!err) acceptor->set_option(asio::socket_base::reuse_address(true), err);
    if (!err) acceptor->bind(endpoint, err);
    if (!err) acceptor->listen(asio::socket_base::max_listen_connections, err);
    if (err) {
      return MakeError(ErrorCode::kUnavailable, "listen " + options.address + ":" +
                                                    std::to_string(port) + ": " + err.message());
    }
    *out = std::move(acceptor);
    return Status::Ok();
  };
  if (options.serve_http) {
    if (Status s = listen(options.http_port, &impl->http_acceptor); !s.ok()) return s.error();
    impl->http_port = impl->http_acceptor->local_endpoint().port();
  }
  if (options.serve_https) {
    auto cert = GenerateSelfSignedCert();
    if (!cert.ok()) return std::move(cert).error();
    impl->ca_pem = cert->cert_pem;
    impl->ssl_ctx = std::make_unique<ssl::context>(ssl::context::tls_server);
    impl->ssl_ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                                   ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                                   ssl::context::no_tlsv1_1,
                               ec);
    impl->ssl_ctx->use_certificate_chain(asio::buffer(cert->cert_pem), ec);
    if (!ec) impl->ssl_ctx->use_private_key(asio::buffer(cert->key_pem), ssl::context::pem, ec);
    if (ec) return MakeError(ErrorCode::kTls, "loading the serving certificate: " + ec.message());
    if (!options.client_ca_pem.empty()) {
      impl->ssl_ctx->add_certificate_authority(asio::buffer(options.client_ca_pem), ec);
      if (ec)
        return MakeError(ErrorCode::kInvalid,
                         "client_ca_pem: not a PEM certificate: " + ec.message());
      // Ask for a certificate; fail the handshake only for one that does not verify.
      impl->ssl_ctx->set_verify_mode(ssl::verify_peer);
    }
    if (Status s = listen(options.https_port, &impl->https_acceptor); !s.ok()) return s.error();
    impl->https_port = impl->https_acceptor->local_endpoint().port();
  }
  impl->options = options;
  Impl* raw = impl.get();
  if (raw->http_acceptor) {
    asio::co_spawn(*raw->ioc, raw->Accept(*raw->http_acceptor, false), asio::detached);
  }
  if (raw->https_acceptor) {
    asio::co_spawn(*raw->ioc, raw->Accept(*raw->https_acceptor, true), asio::detached);
  }
  raw->work.emplace(raw->ioc->get_executor());
  for (int i = 0; i < options.threads; ++i) {
    raw->threads.emplace_back([raw] { raw->ioc->run(); });
  }
  return std::unique_ptr<ApiServer>(new ApiServer(std::move(impl)));
}

void ApiServer::Stop() {
  if (!impl_) return;
  std::lock_guard<std::mutex> lock(impl_->stop_mu);
  if (impl_->stopped.exchange(true)) return;
  // No store writer may post into the io_context once it is gone.
  {
    std::lock_guard<std::mutex> sessions_lock(impl_->sessions_mu);
    for (auto& [id, weak] : impl_->sessions) {
      if (auto s = weak.lock()) {
        s->stream().SetNotify(nullptr);
        s->stream().Close();
      }
    }
  }
  impl_->work.reset();
  impl_->ioc->stop();
  for (auto& t : impl_->threads) t.join();
  impl_->threads.clear();
  // Destroying the acceptors and then the io_context closes the listeners
  // and destroys every connection's coroutine (closing its socket).
  impl_->http_acceptor.reset();
  impl_->https_acceptor.reset();
  impl_->ioc.reset();
}

void ApiServer::CloseWatches() {
  std::vector<std::shared_ptr<WatchSession>> live;
  {
    std::lock_guard<std::mutex> lock(impl_->sessions_mu);
    for (auto& [id, weak] : impl_->sessions) {
      if (auto s = weak.lock()) live.push_back(std::move(s));
    }
  }
  for (auto& s : live) s->stream().Close();
}

uint16_t ApiServer::http_port() const { return impl_->http_port; }
uint16_t ApiServer::https_port() const { return impl_->https_port; }

std::string ApiServer::http_url() const {
  return "http://" + impl_->options.address + ":" + std::to_string(impl_->http_port);
}

std::string ApiServer::https_url() const {
  return "https://" + impl_->options.address + ":" + std::to_string(impl_->https_port);
}

const std::string& ApiServer::ca_pem() const { return impl_->ca_pem; }

std::string ApiServer::Kubeconfig(std::string_view context_name) const {
  const std::string name(context_name);
  std::string out = "apiVersion: v1\nkind: Config\nclusters:\n- name: " + name + "\n  cluster:\n";
  if (impl_->options.serve_https) {
    out += "    server: " + https_url() + "\n";
    out += "    certificate-authority-data: " + Base64(impl_->ca_pem) + "\n";
  } else {
    out += "    server: " + http_url() + "\n";
  }
  out += "contexts:\n- name: " + name + "\n  context:\n    cluster: " + name +
         "\n    user: " + name + "\n    namespace: default\n";
  out += "current-context: " + name + "\n";
  out += "preferences: {}\n";
  out += "users:\n- name: " + name + "\n  user:";
  if (impl_->options.token.empty()) {
    out += " {}\n";
  } else {
    out += "\n    token: " + impl_->options.token + "\n";
  }
  return out;
}

Store& ApiServer::store() { return *impl_->store; }

}  // namespace copse::apiserver
