// HttpClient: a pool of keep-alive connections (each stream on its own
// strand), writes optionally pipelined in batches, and streams on
// connections of their own.

#include "net/client.h"

#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>

#include <array>
#include <atomic>
#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cerrno>
#include <deque>
#include <limits>
#include <mutex>
#include <tuple>
#include <type_traits>
#include <vector>

namespace copse::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using SteadyTime = std::chrono::steady_clock::time_point;
using boost::system::error_code;

namespace {

constexpr auto kUseTuple = asio::as_tuple(asio::use_awaitable);
constexpr uint64_t kMaxResponseBody = uint64_t{4} << 30;
constexpr uint32_t kMaxResponseHeader = 256 * 1024;
constexpr size_t kReadBufferBytes = 64 * 1024;

Error Invalid(std::string message) { return MakeError(ErrorCode::kInvalid, std::move(message)); }

std::string FormatMillis(std::chrono::nanoseconds d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + "ms";
}

bool IsIpAddress(const std::string& host) {
  error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

struct Endpoint {
  bool tls = true;
  std::string host;         // without brackets
  std::string port;         // numeric
  std::string host_header;  // authority as written
  std::string base_path;    // "" or "/prefix" (no trailing slash)
  std::string display;      // scheme://authority
  bool host_is_ip = false;
};

Result<Endpoint> ParseServer(std::string_view server) {
  Endpoint ep;
  std::string_view rest;
  if (server.rfind("https://", 0) == 0) {
    ep.tls = true;
    rest = server.substr(8);
  } else if (server.rfind("http://", 0) == 0) {
    ep.tls = false;
    rest = server.substr(7);
  } else {
    return Invalid("server \"" + std::string(server) + "\": must start with https:// or http://");
  }
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos) {
    std::string_view path = rest.substr(slash);
    while (!path.empty() && path.back() == '/') path.remove_suffix(1);
    ep.base_path = std::string(path);
  }
  if (authority.empty()) return Invalid("server \"" + std::string(server) + "\": missing host");
  ep.host_header = std::string(authority);
  std::string_view port;
  if (authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      return Invalid("server \"" + std::string(server) + "\": unterminated IPv6 address");
    }
    ep.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return Invalid("server \"" + std::string(server) + "\": bad port");
      port = after.substr(1);
    }
  } else {
    const size_t colon = authority.rfind(':');
    ep.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (ep.host.empty()) return Invalid("server \"" + std::string(server) + "\": missing host");
  if (port.empty()) {
    ep.port = ep.tls ? "443" : "80";
  } else {
    int value = 0;
    for (char c : port) {
      if (c < '0' || c > '9' || value > 65535) {
        return Invalid("server \"" + std::string(server) + "\": bad port");
      }
      value = value * 10 + (c - '0');
    }
    if (value <= 0 || value > 65535) {
      return Invalid("server \"" + std::string(server) + "\": bad port");
    }
    ep.port = std::string(port);
  }
  ep.host_is_ip = IsIpAddress(ep.host);
  ep.display = std::string(ep.tls ? "https://" : "http://") + ep.host_header;
  return ep;
}

std::string OpenSslErrorString() {
  std::string out;
  while (unsigned long err = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(err, buf, sizeof(buf));
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out;
}

Result<std::unique_ptr<ssl::context>> MakeSslContext(const ClientOptions& config) {
  auto ctx = std::make_unique<ssl::context>(ssl::context::tls_client);
  SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_compression);
  error_code ec;
  if (config.insecure_skip_tls_verify) {
    ctx->set_verify_mode(ssl::verify_none);
  } else {
    ctx->set_verify_mode(ssl::verify_peer);
    if (config.ca_pem.empty()) {
      ctx->set_default_verify_paths(ec);
      if (ec)
        return Invalid("certificate authority: cannot load the system trust store: " +
                       ec.message());
    } else {
      ctx->add_certificate_authority(asio::buffer(config.ca_pem), ec);
      if (ec) {
        return Invalid("certificate authority: not a valid PEM certificate: " + ec.message());
      }
    }
  }
  if (!config.client_cert_pem.empty() || !config.client_key_pem.empty()) {
    if (config.client_cert_pem.empty() || config.client_key_pem.empty()) {
      return Invalid("client certificate: both the certificate and the key are required");
    }
    ctx->use_certificate_chain(asio::buffer(config.client_cert_pem), ec);
    if (ec) return Invalid("client certificate: not a valid PEM certificate: " + ec.message());
    ctx->use_private_key(asio::buffer(config.client_key_pem), ssl::context::pem, ec);
    if (ec) {
      if (ec.message().find("mismatch") != std::string::npos) {
        return Invalid("client key: does not match the client certificate (" + ec.message() + ")");
      }
      return Invalid("client key: not a valid PEM private key: " + ec.message());
    }
    ERR_clear_error();
    if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
      return Invalid("client key: does not match the client certificate: " + OpenSslErrorString());
    }
  }
  return ctx;
}

bool IsTimeout(const error_code& ec) {
  return ec == beast::error::timeout || ec == asio::error::timed_out;
}

// Errors that mean a reused keep-alive connection had been closed by the server.
bool IsStaleConnectionError(const error_code& ec) {
  return ec == asio::error::eof || ec == http::error::end_of_stream ||
         ec == asio::error::connection_reset || ec == asio::error::broken_pipe ||
         ec == asio::error::connection_aborted || ec == asio::ssl::error::stream_truncated ||
         ec == asio::error::not_connected;
}

// ---------------------------------------------------------------------------
// Connections

// One keep-alive connection. Its stream lives on its own strand: Beast's
// tcp_stream runs its timeout handler concurrently with I/O completions
// otherwise, and the executor may be a multi-threaded io_context.
struct Connection {
  explicit Connection(const asio::any_io_executor& ex) : strand(asio::make_strand(ex)) {
    plain.emplace(strand);
    // Beast reads only as much as the buffer's spare capacity (at least 512
    // bytes): without room, a large list or a busy watch costs a syscall per
    // few hundred bytes.
    buffer.reserve(kReadBufferBytes);
  }
  Connection(const asio::any_io_executor& ex, ssl::context& ctx) : strand(asio::make_strand(ex)) {
    tls.emplace(strand, ctx);
    buffer.reserve(kReadBufferBytes);
  }

  beast::tcp_stream& Tcp() { return tls ? beast::get_lowest_layer(*tls) : *plain; }

  void Close() {
    error_code ec;
    beast::tcp_stream& tcp = Tcp();
    if (tcp.socket().is_open()) {
      tcp.socket().shutdown(tcp::socket::shutdown_both, ec);
      tcp.close();
    }
  }

  // True when the peer closed the idle connection (EOF or error pending).
  bool PeerClosed() {
    if (!Tcp().socket().is_open()) return true;
    if (buffer.size() > 0) return true;  // unexpected bytes between responses
    char byte = 0;
    const ssize_t n = ::recv(Tcp().socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0) return true;
    if (n < 0) return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
    // TLS may have records pending (e.g. session tickets); the connection is alive.
    return !tls;
  }

  // The strand as its own type: binding completions to it copies a
  // shared_ptr, not a type-erased executor (whose reference count TSan
  // cannot follow: Boost releases it with a standalone fence).
  asio::strand<asio::any_io_executor> strand;
  std::optional<beast::tcp_stream> plain;
  std::optional<beast::ssl_stream<beast::tcp_stream>> tls;
  beast::flat_buffer buffer;
  SteadyTime idle_since{};
  uint64_t requests = 0;
};

// Closes and destroys a connection that failed or that the server will not
// keep, on the connection's strand. Beast's timeout handler closes the socket
// on that strand when a deadline passes, while the coroutine that saw the
// timed-out operation resumes on any io thread: closing there raced with the
// handler (ThreadSanitizer, ClientPipeline.AWriteWithoutAResponseTimesOut).
void RetireOnStrand(std::unique_ptr<Connection> conn) {
  std::shared_ptr<Connection> owned(std::move(conn));
  asio::strand<asio::any_io_executor> strand = owned->strand;
  asio::post(strand, [owned = std::move(owned)] { owned->Close(); });
}

// Every operation on a connection's stream runs on the connection's strand:
// the coroutine moves there (EnterStrand) before it touches the stream, and
// each operation's completion resumes it there (OnStrand). Beast's timeout
// handler runs on that strand and writes the stream's state (the timed-out
// flag, the socket); an operation started or completed on the coroutine's
// own executor raced with it (ThreadSanitizer,
// ClientPipeline.AWriteWithoutAResponseTimesOut). Once it has entered, the
// coroutine keeps the strand until it next suspends outside it, so the rest
// of an exchange (deadlines, parsing) is serialized with the handler too.
auto OnStrand(Connection& conn) { return asio::bind_executor(conn.strand, kUseTuple); }

// A post, not a dispatch: the coroutine always suspends and resumes inside
// a handler of the strand.
auto EnterStrand(Connection& conn) { return asio::post(conn.strand, asio::use_awaitable); }

// Send, Open and ResponseStream::ReadSome end on the caller's executor. The
// exchange runs on the connection's strand (EnterStrand), and a coroutine
// resumes where it was last run: without the way back, a caller spawned on a
// strand of its own (an informer) went on running on the connection's strand,
// in parallel with its own strand's handlers (ThreadSanitizer: Watch::Cancel,
// posted to the informer's strand by Informer::Stop, against the read that
// had just resumed, FrameworkIntegration.TheProfilesQueueSortOrdersThePops).
// A dispatch: free when the caller's executor is the plain io_context.
auto BackToCaller(const asio::any_io_executor& caller) {
  return asio::dispatch(caller, asio::use_awaitable);
}

struct HttpResult {
  error_code ec;
  const char* stage = "";
  bool response_started = false;
  int status = 0;
  bool keep_alive = false;
  std::string content_type;
  std::string body;
};

// A request as text: the head (request line and headers, as Beast's
// request with prepare_payload() writes them) and the body. Written by hand:
// Beast's fields (an allocation each) and serializer were a good part of
// the client's CPU per request.
struct RequestText {
  std::string head;
  std::string body;
};

// Writes head and body. Plain TCP: one gathered write. TLS: a small body is
// appended to the head (one record); a large one follows in a second write
// (a gathered write of a body above Beast's 16 KiB flattening limit through
// beast::ssl_stream stalled in testing).
template <typename Stream>
asio::awaitable<error_code> WriteRequest(Stream& stream, Connection& conn, const RequestText& req) {
  auto on_strand = OnStrand(conn);
  constexpr size_t kCoalesce = 16 * 1024;
  if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
    const std::array<asio::const_buffer, 2> buffers{asio::buffer(req.head), asio::buffer(req.body)};
    auto [ec, n] = co_await asio::async_write(stream, buffers, on_strand);
    (void)n;
    co_return ec;
  } else {
    if (req.body.size() <= kCoalesce) {
      std::string whole;
      whole.reserve(req.head.size() + req.body.size());
      whole += req.head;
      whole += req.body;
      auto [ec, n] = co_await asio::async_write(stream, asio::buffer(whole), on_strand);
      (void)n;
      co_return ec;
    }
    auto [head_ec, head_n] = co_await asio::async_write(stream, asio::buffer(req.head), on_strand);
    (void)head_n;
    if (head_ec) co_return head_ec;
    auto [body_ec, body_n] = co_await asio::async_write(stream, asio::buffer(req.body), on_strand);
    (void)body_n;
    co_return body_ec;
  }
}

// Reads one response into `out`: its status, persistence, content type and
// body, or the error and whether any of it had arrived.
template <typename Stream>
asio::awaitable<void> ReadResponse(Stream& stream, Connection& conn, HttpResult& out) {
  auto on_strand = OnStrand(conn);
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxResponseBody);
  parser.header_limit(kMaxResponseHeader);
  auto [read_ec, read] = co_await http::async_read(stream, conn.buffer, parser, on_strand);
  if (read_ec) {
    out.ec = read_ec;
    out.stage = "reading the response";
    out.response_started = read > 0 || parser.got_some();
    co_return;
  }
  auto& res = parser.get();
  out.status = static_cast<int>(res.result_int());
  out.keep_alive = res.keep_alive();
  out.content_type = std::string(res[http::field::content_type]);
  out.body = std::move(res.body());
}

template <typename Stream>
asio::awaitable<void> Exchange(Stream& stream, Connection& conn, const RequestText& req,
                               SteadyTime deadline, HttpResult& out) {
  co_await EnterStrand(conn);
  conn.Tcp().expires_at(deadline);
  const error_code write_ec = co_await WriteRequest(stream, conn, req);
  if (write_ec) {
    out.ec = write_ec;
    out.stage = "sending the request";
    co_return;
  }
  conn.Tcp().expires_at(deadline);
  co_await ReadResponse(stream, conn, out);
}

// A waiter for a pooled connection. Completed exactly once, under the pool
// mutex, either by a release (granted) or by its deadline timer.
struct PoolWaiter {
  // Optional and emplaced: Boost 1.81's any_completion_handler move
  // assignment recurses forever (its converting constructor takes the lvalue).
  std::optional<asio::any_completion_handler<void(error_code)>> handler;
  asio::any_io_executor executor;
  std::unique_ptr<Connection> conn;  // handed over; null with granted: open a new one
  std::optional<asio::steady_timer> timer;
  bool granted = false;
  bool expired = false;
};

// A write waiting for (or carried by) a pipelined batch. Completed exactly
// once, under the pipeline mutex: by the batch that carried it, or by its
// deadline timer (a later response is then read and dropped).
struct PipeCall {
  RequestText req;
  SteadyTime deadline;
  // The outcome: an exchange (ok or failed), or an error before any
  // exchange (no connection).
  HttpResult result;
  std::optional<Error> error;
  // Optional and emplaced, as in PoolWaiter.
  std::optional<asio::any_completion_handler<void(error_code)>> handler;
  asio::any_io_executor executor;
  std::optional<asio::steady_timer> timer;
  bool completed = false;
};
using PipeBatch = std::vector<std::shared_ptr<PipeCall>>;

// Writes a batch of requests at once. Plain TCP: one gathered write. TLS:
// one buffer (see WriteRequest on gathered writes through ssl_stream).
template <typename Stream>
asio::awaitable<error_code> WriteBatch(Stream& stream, Connection& conn, const PipeBatch& batch) {
  auto on_strand = OnStrand(conn);
  if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
    std::vector<asio::const_buffer> buffers;
    buffers.reserve(batch.size() * 2);
    for (const auto& call : batch) {
      buffers.push_back(asio::buffer(call->req.head));
      if (!call->req.body.empty()) buffers.push_back(asio::buffer(call->req.body));
    }
    auto [ec, n] = co_await asio::async_write(stream, buffers, on_strand);
    (void)n;
    co_return ec;
  } else {
    std::string whole;
    size_t size = 0;
    for (const auto& call : batch) size += call->req.head.size() + call->req.body.size();
    whole.reserve(size);
    for (const auto& call : batch) {
      whole += call->req.head;
      whole += call->req.body;
    }
    auto [ec, n] = co_await asio::async_write(stream, asio::buffer(whole), on_strand);
    (void)n;
    co_return ec;
  }
}

}  // namespace

// ---------------------------------------------------------------------------
// HttpClient::Impl

struct HttpClient::Impl : std::enable_shared_from_this<HttpClient::Impl> {
  Impl(ClientOptions opts, Endpoint ep, asio::any_io_executor ex, std::unique_ptr<ssl::context> ctx)
      : config(std::move(opts)),
        endpoint(std::move(ep)),
        executor(std::move(ex)),
        ssl_ctx(std::move(ctx)) {}

  ~Impl() {
    std::lock_guard<std::mutex> lock(pool_mu);
    for (auto& conn : idle) conn->Close();
  }

  // --- pool ---------------------------------------------------------------

  bool PoolHasRoomLocked() const {
    return config.max_connections == 0 || open < config.max_connections;
  }

  // Pops a usable idle connection (most recently used first), closing stale ones.
  std::unique_ptr<Connection> TakeIdleLocked() {
    const SteadyTime now = std::chrono::steady_clock::now();
    while (!idle.empty()) {
      std::unique_ptr<Connection> conn = std::move(idle.back());
      idle.pop_back();
      if (now - conn->idle_since < config.idle_connection_timeout && !conn->PeerClosed()) {
        return conn;
      }
      conn->Close();
      --open;
    }
    return nullptr;
  }

  void CompleteWaiterLocked(const std::shared_ptr<PoolWaiter>& waiter,
                            std::unique_lock<std::mutex>& lock) {
    waiter->granted = true;
    if (waiter->timer) waiter->timer->cancel();
    auto executor = waiter->executor;
    lock.unlock();
    PostCompletion(executor, waiter);
  }

  // Completes the waiter's handler on its executor. Only the shared_ptr is
  // captured: Boost 1.81's any_completion_handler must never be copied (its
  // converting constructor would wrap it recursively).
  static void PostCompletion(const asio::any_io_executor& executor,
                             const std::shared_ptr<PoolWaiter>& waiter) {
    asio::post(executor, [waiter] {
      asio::any_completion_handler<void(error_code)> handler(std::move(*waiter->handler));
      waiter->handler.reset();
      std::move(handler)(error_code{});
    });
  }

  // Returns a healthy connection after a complete exchange.
  // The oldest waiter whose deadline has not passed; expired ones are left in
  // the queue by their timers (no linear erase) and dropped here.
  std::shared_ptr<PoolWaiter> PopLiveWaiterLocked() {
    while (!waiters.empty()) {
      auto waiter = std::move(waiters.front());
      waiters.pop_front();
      if (!waiter->expired) return waiter;
    }
    return nullptr;
  }

  void Release(std::unique_ptr<Connection> conn) {
    std::unique_lock<std::mutex> lock(pool_mu);
    if (auto waiter = PopLiveWaiterLocked()) {
      waiter->conn = std::move(conn);
      CompleteWaiterLocked(waiter, lock);
      return;
    }
    conn->idle_since = std::chrono::steady_clock::now();
    idle.push_back(std::move(conn));
  }

  // A pooled connection was closed (or could not be opened): its slot frees up.
  void ReleaseSlot() {
    std::unique_lock<std::mutex> lock(pool_mu);
    if (auto waiter = PopLiveWaiterLocked()) {
      CompleteWaiterLocked(waiter, lock);  // the waiter opens a new connection in this slot
      return;
    }
    --open;
  }

  // The server closed a keep-alive connection: the other idle ones are suspect too.
  void DropIdle() {
    std::lock_guard<std::mutex> lock(pool_mu);
    for (auto& conn : idle) conn->Close();
    open -= idle.size();
    idle.clear();
  }

  template <typename Handler>
  void StartWait(const std::shared_ptr<PoolWaiter>& waiter, SteadyTime deadline,
                 Handler&& handler) {
    std::unique_lock<std::mutex> lock(pool_mu);
    // Re-check: a connection may have been released since Acquire looked.
    std::unique_ptr<Connection> conn = TakeIdleLocked();
    waiter->handler.emplace(std::forward<Handler>(handler));
    if (conn || PoolHasRoomLocked()) {
      if (!conn) ++open;
      waiter->conn = std::move(conn);
      waiter->granted = true;
      lock.unlock();
      PostCompletion(waiter->executor, waiter);
      return;
    }
    waiter->timer.emplace(waiter->executor, deadline);
    waiter->timer->async_wait([self = shared_from_this(), waiter](error_code ec) {
      if (ec) return;  // cancelled: the waiter was granted a connection
      std::unique_lock<std::mutex> lock(self->pool_mu);
      if (waiter->granted) return;
      waiter->expired = true;  // skipped (and dropped) by PopLiveWaiterLocked
      lock.unlock();
      asio::any_completion_handler<void(error_code)> handler(std::move(*waiter->handler));
      waiter->handler.reset();
      std::move(handler)(error_code(asio::error::timed_out));
    });
    waiters.push_back(waiter);
  }

  static asio::awaitable<Result<std::unique_ptr<Connection>>> Acquire(std::shared_ptr<Impl> self,
                                                                      SteadyTime deadline) {
    std::unique_ptr<Connection> conn;
    bool create = false;
    {
      std::lock_guard<std::mutex> lock(self->pool_mu);
      conn = self->TakeIdleLocked();
      if (!conn && self->PoolHasRoomLocked()) {
        ++self->open;
        create = true;
      }
    }
    if (!conn && !create) {
      auto waiter = std::make_shared<PoolWaiter>();
      waiter->executor = co_await asio::this_coro::executor;
      auto token = asio::as_tuple(asio::use_awaitable);
      // A named lambda: GCC 12 corrupts closures built inside a co_await expression.
      auto initiation = [self, waiter, deadline](auto handler) {
        self->StartWait(waiter, deadline, std::move(handler));
      };
      auto [ec] =
          co_await asio::async_initiate<decltype(token), void(error_code)>(initiation, token);
      if (ec) {
        co_return MakeError(ErrorCode::kTimeout, "deadline expired while waiting for one of the " +
                                                     std::to_string(self->config.max_connections) +
                                                     " pooled connections to " +
                                                     self->endpoint.display);
      }
      conn = std::move(waiter->conn);
      create = !conn;
    }
    if (create) {
      auto connected = co_await Connect(self, deadline);
      if (!connected.ok()) self->ReleaseSlot();
      co_return connected;
    }
    co_return conn;
  }

  // --- connecting ---------------------------------------------------------

  Error ConnectError(const error_code& ec, SteadyTime started, SteadyTime deadline) const {
    if (IsTimeout(ec)) {
      return MakeError(ErrorCode::kTimeout, "connecting to " + endpoint.display + ": deadline of " +
                                                FormatMillis(deadline - started) + " exceeded");
    }
    return MakeError(ErrorCode::kUnavailable,
                     "connecting to " + endpoint.display + ": " + ec.message());
  }

  // The TCP connection and the TLS handshake, on the connection's strand.
  static asio::awaitable<std::optional<Error>> Establish(std::shared_ptr<Impl> self,
                                                         Connection& conn,
                                                         std::vector<tcp::endpoint> endpoints,
                                                         SteadyTime started, SteadyTime deadline) {
    const Endpoint& ep = self->endpoint;
    co_await EnterStrand(conn);
    auto on_strand = OnStrand(conn);
    conn.Tcp().expires_at(deadline);
    auto [connect_ec, connected] = co_await conn.Tcp().async_connect(endpoints, on_strand);
    if (connect_ec) co_return self->ConnectError(connect_ec, started, deadline);
    error_code ignored;
    conn.Tcp().socket().set_option(tcp::no_delay(true), ignored);
    if (ep.tls) {
      SSL* ssl_handle = conn.tls->native_handle();
      const std::string& name =
          self->config.tls_server_name.empty() ? ep.host : self->config.tls_server_name;
      const bool name_is_ip = IsIpAddress(name);
      if (!name_is_ip) SSL_set_tlsext_host_name(ssl_handle, name.c_str());
      if (!self->config.insecure_skip_tls_verify) {
        X509_VERIFY_PARAM* param = SSL_get0_param(ssl_handle);
        if (name_is_ip) {
          X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str());
        } else {
          X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
          X509_VERIFY_PARAM_set1_host(param, name.data(), name.size());
        }
      }
      conn.Tcp().expires_at(deadline);
      auto [handshake_ec] = co_await conn.tls->async_handshake(ssl::stream_base::client, on_strand);
      if (handshake_ec) {
        if (IsTimeout(handshake_ec)) {
          co_return MakeError(ErrorCode::kTimeout,
                              "TLS handshake with " + ep.display + ": deadline of " +
                                  FormatMillis(deadline - started) + " exceeded");
        }
        std::string detail;
        const long verify = SSL_get_verify_result(ssl_handle);
        if (!self->config.insecure_skip_tls_verify && verify != X509_V_OK) {
          detail =
              std::string("certificate verify failed: ") + X509_verify_cert_error_string(verify);
          if (verify == X509_V_ERR_HOSTNAME_MISMATCH || verify == X509_V_ERR_IP_ADDRESS_MISMATCH) {
            detail += " (expected \"" + name + "\")";
          }
        } else {
          detail = handshake_ec.message();
        }
        co_return MakeError(ErrorCode::kTls,
                            "TLS handshake with " + ep.display + " failed: " + detail);
      }
    }
    co_return std::nullopt;
  }

  static asio::awaitable<Result<std::unique_ptr<Connection>>> Connect(std::shared_ptr<Impl> self,
                                                                      SteadyTime deadline) {
    const SteadyTime started = std::chrono::steady_clock::now();
    const Endpoint& ep = self->endpoint;
    std::vector<tcp::endpoint> endpoints;
    if (ep.host_is_ip) {
      endpoints.emplace_back(asio::ip::make_address(ep.host),
                             static_cast<unsigned short>(std::stoi(ep.port)));
    } else {
      tcp::resolver resolver(self->executor);
      auto [ec, results] = co_await resolver.async_resolve(ep.host, ep.port, kUseTuple);
      if (ec) {
        co_return MakeError(ErrorCode::kUnavailable, "resolving " + ep.host + ": " + ec.message());
      }
      for (const auto& entry : results) endpoints.push_back(entry.endpoint());
    }
    auto conn = ep.tls ? std::make_unique<Connection>(self->executor, *self->ssl_ctx)
                       : std::make_unique<Connection>(self->executor);
    std::optional<Error> failed =
        co_await Establish(self, *conn, std::move(endpoints), started, deadline);
    if (failed) {
      RetireOnStrand(std::move(conn));
      co_return std::move(*failed);
    }
    self->connections_created.fetch_add(1, std::memory_order_relaxed);
    co_return conn;
  }

  // --- requests -----------------------------------------------------------

  // The request as text: the head (request line and headers, as Beast's
  // request with prepare_payload() writes them) and the body.
  RequestText BuildRequestText(ClientRequest& r) const {
    RequestText req;
    std::string& h = req.head;
    h.reserve(128 + r.target.size() + endpoint.base_path.size() + r.authorization.size());
    h += r.method;
    h += ' ';
    h += endpoint.base_path;
    h += r.target;
    h += " HTTP/1.1\r\nHost: ";
    h += endpoint.host_header;
    h += "\r\nUser-Agent: ";
    h += config.user_agent;
    h += "\r\n";
    if (!r.accept.empty()) {
      h += "Accept: ";
      h += r.accept;
      h += "\r\n";
    }
    if (!r.authorization.empty()) {
      h += "Authorization: ";
      h += r.authorization;
      h += "\r\n";
    }
    if (!r.body.empty() || !r.content_type.empty()) {
      h += "Content-Type: ";
      h += r.content_type.empty() ? std::string_view("application/json")
                                  : std::string_view(r.content_type);
      h += "\r\n";
    }
    // prepare_payload(): a length for a body, and for POST/PUT/OPTIONS always.
    if (!r.body.empty() || r.method == "POST" || r.method == "PUT" || r.method == "OPTIONS") {
      h += "Content-Length: ";
      h += std::to_string(r.body.size());
      h += "\r\n";
    }
    h += "\r\n";
    req.body = std::move(r.body);
    return req;
  }

  static std::string Label(const ClientRequest& r) {
    return r.label.empty() ? r.method + " " + r.target : r.label;
  }

  // One HTTP exchange on a pooled connection, retried on a fresh connection
  // when a reused one turns out to have been closed by the server.
  static asio::awaitable<Result<ClientResponse>> Send(std::shared_ptr<Impl> self,
                                                      ClientRequest request) {
    const SteadyTime deadline = request.deadline;
    const auto effective = request.timeout;
    const std::string label = Label(request);
    const auto what = [&] { return label; };
    const bool pipelined = self->config.pipelined_connections > 0 && request.method != "GET" &&
                           request.method != "HEAD";
    RequestText req = self->BuildRequestText(request);
    if (pipelined) {
      co_return co_await SendPipelined(self, std::move(req), deadline, what(), effective);
    }
    const size_t max_attempts = std::max<size_t>(self->config.max_connections, 1) + 1;
    for (size_t attempt = 0;; ++attempt) {
      auto acquired = co_await Acquire(self, deadline);
      if (!acquired.ok()) {
        Error error = std::move(acquired).error();
        error.message = what() + ": " + error.message;
        co_return error;
      }
      std::unique_ptr<Connection> conn = std::move(acquired).value();
      const bool reused = conn->requests > 0;
      ++conn->requests;
      self->requests.fetch_add(1, std::memory_order_relaxed);
      HttpResult result;
      if (conn->tls) {
        co_await Exchange(*conn->tls, *conn, req, deadline, result);
      } else {
        co_await Exchange(*conn->plain, *conn, req, deadline, result);
      }
      if (result.ec) {
        RetireOnStrand(std::move(conn));
        self->ReleaseSlot();
        if (reused && !result.response_started && IsStaleConnectionError(result.ec) &&
            attempt + 1 < max_attempts && std::chrono::steady_clock::now() < deadline) {
          self->retries.fetch_add(1, std::memory_order_relaxed);
          self->DropIdle();
          continue;
        }
        co_return self->ExchangeError(result, what(), effective);
      }
      if (result.keep_alive) {
        self->Release(std::move(conn));
      } else {
        RetireOnStrand(std::move(conn));
        self->ReleaseSlot();
      }
      co_return ClientResponse{result.status, std::move(result.content_type),
                               std::move(result.body)};
    }
  }

  // The error of a failed exchange.
  Error ExchangeError(const HttpResult& result, const std::string& what,
                      std::chrono::milliseconds effective) const {
    if (IsTimeout(result.ec)) {
      return MakeError(ErrorCode::kTimeout, what + ": deadline of " + FormatMillis(effective) +
                                                " exceeded (" + result.stage + ")");
    }
    return MakeError(ErrorCode::kUnavailable, what + ": " + result.stage + " from " +
                                                  endpoint.display + ": " + result.ec.message());
  }

  // --- pipelined writes ---------------------------------------------------

  static asio::awaitable<Result<ClientResponse>> SendPipelined(
      std::shared_ptr<Impl> self, RequestText req, SteadyTime deadline, std::string what,
      std::chrono::milliseconds effective) {
    auto call = std::make_shared<PipeCall>();
    call->req = std::move(req);
    call->deadline = deadline;
    call->executor = co_await asio::this_coro::executor;
    auto token = asio::as_tuple(asio::use_awaitable);
    // A named lambda: GCC 12 corrupts closures built inside a co_await expression.
    auto initiation = [self, call](auto handler) {
      self->EnqueuePipelined(call, std::move(handler));
    };
    auto [ec] = co_await asio::async_initiate<decltype(token), void(error_code)>(initiation, token);
    if (ec) {
      co_return MakeError(ErrorCode::kTimeout, what + ": deadline of " + FormatMillis(effective) +
                                                   " exceeded (waiting for a pipelined response)");
    }
    if (call->error) {
      Error error = std::move(*call->error);
      error.message = what + ": " + error.message;
      co_return error;
    }
    HttpResult& result = call->result;
    if (result.ec) co_return self->ExchangeError(result, what, effective);
    co_return ClientResponse{result.status, std::move(result.content_type), std::move(result.body)};
  }

  template <typename Handler>
  void EnqueuePipelined(const std::shared_ptr<PipeCall>& call, Handler&& handler) {
    std::unique_lock<std::mutex> lock(pipe_mu);
    call->handler.emplace(std::forward<Handler>(handler));
    call->timer.emplace(call->executor, call->deadline);
    call->timer->async_wait([self = shared_from_this(), call](error_code ec) {
      if (ec) return;  // cancelled: completed by its batch
      std::unique_lock<std::mutex> lock(self->pipe_mu);
      if (call->completed) return;
      call->completed = true;  // a batch still carrying it drops its response
      lock.unlock();
      asio::any_completion_handler<void(error_code)> h(std::move(*call->handler));
      call->handler.reset();
      std::move(h)(error_code(asio::error::timed_out));
    });
    pipe_queue.push_back(call);
    const bool spawn = pipe_workers < config.pipelined_connections;
    if (spawn) ++pipe_workers;
    lock.unlock();
    if (spawn) asio::co_spawn(executor, PipeWorker(shared_from_this()), asio::detached);
  }

  // Completes a call with its outcome (already in call->result/error),
  // unless its deadline passed first.
  void CompletePipelined(const std::shared_ptr<PipeCall>& call, HttpResult result,
                         std::optional<Error> error) {
    std::unique_lock<std::mutex> lock(pipe_mu);
    if (call->completed) return;
    call->completed = true;
    call->result = std::move(result);
    call->error = std::move(error);
    call->timer->cancel();
    lock.unlock();
    asio::post(call->executor, [call] {
      asio::any_completion_handler<void(error_code)> h(std::move(*call->handler));
      call->handler.reset();
      std::move(h)(error_code{});
    });
  }

  void FailPipelined(const PipeBatch& batch, size_t from, const HttpResult& failure) {
    for (size_t i = from; i < batch.size(); ++i) CompletePipelined(batch[i], failure, std::nullopt);
  }

  // One of at most config.pipelined_connections workers: takes whatever
  // writes are queued (up to kMaxBatch), sends them as one batch and
  // completes them from the responses; exits when the queue is empty.
  static asio::awaitable<void> PipeWorker(std::shared_ptr<Impl> self) {
    constexpr size_t kMaxBatch = 256;
    for (;;) {
      PipeBatch batch;
      {
        std::lock_guard<std::mutex> lock(self->pipe_mu);
        while (!self->pipe_queue.empty() && batch.size() < kMaxBatch) {
          std::shared_ptr<PipeCall> call = std::move(self->pipe_queue.front());
          self->pipe_queue.pop_front();
          if (!call->completed) batch.push_back(std::move(call));
        }
        if (batch.empty()) {
          --self->pipe_workers;
          co_return;
        }
      }
      co_await RunBatch(self, std::move(batch));
    }
  }

  // What one batch's exchange did: the calls answered (and completed), in
  // order, whether the connection stays open, and the error that ended it.
  struct BatchOutcome {
    size_t answered = 0;
    bool keep_alive = true;
    HttpResult failure;
  };

  // Writes a batch and reads its responses, on the connection's strand.
  static asio::awaitable<BatchOutcome> ExchangeBatch(std::shared_ptr<Impl> self, Connection& conn,
                                                     const PipeBatch& batch, SteadyTime deadline) {
    BatchOutcome out;
    co_await EnterStrand(conn);
    conn.Tcp().expires_at(deadline);
    // if/else, not ?: : GCC 12 miscompiled `x = tls ? co_await A : co_await B`
    // in State::Start (it ran the TLS arm on a plain connection: a crash).
    error_code write_ec;
    if (conn.tls) {
      write_ec = co_await WriteBatch(*conn.tls, conn, batch);
    } else {
      write_ec = co_await WriteBatch(*conn.plain, conn, batch);
    }
    if (write_ec) {
      out.failure.ec = write_ec;
      out.failure.stage = "sending the request";
      co_return out;
    }
    for (; out.answered < batch.size(); ++out.answered) {
      HttpResult result;
      if (conn.tls) {
        co_await ReadResponse(*conn.tls, conn, result);
      } else {
        co_await ReadResponse(*conn.plain, conn, result);
      }
      if (result.ec) {
        out.failure = std::move(result);
        break;
      }
      out.keep_alive = result.keep_alive;
      self->CompletePipelined(batch[out.answered], std::move(result), std::nullopt);
      if (!out.keep_alive) {
        ++out.answered;
        if (out.answered < batch.size()) {
          out.failure.ec = asio::error::connection_reset;
          out.failure.stage = "reading the response (the server closed the connection)";
        }
        break;
      }
    }
    co_return out;
  }

  static asio::awaitable<void> RunBatch(std::shared_ptr<Impl> self, PipeBatch batch) {
    const size_t max_attempts = std::max<size_t>(self->config.max_connections, 1) + 1;
    for (size_t attempt = 0;; ++attempt) {
      SteadyTime deadline{};
      for (const auto& call : batch) deadline = std::max(deadline, call->deadline);
      auto acquired = co_await Acquire(self, deadline);
      if (!acquired.ok()) {
        for (const auto& call : batch)
          self->CompletePipelined(call, HttpResult{}, acquired.error());
        co_return;
      }
      std::unique_ptr<Connection> conn = std::move(acquired).value();
      const bool reused = conn->requests > 0;
      conn->requests += batch.size();
      self->requests.fetch_add(batch.size(), std::memory_order_relaxed);
      self->pipelined_batches.fetch_add(1, std::memory_order_relaxed);
      BatchOutcome outcome = co_await ExchangeBatch(self, *conn, batch, deadline);
      const size_t answered = outcome.answered;
      const bool keep_alive = outcome.keep_alive;
      const HttpResult& failure = outcome.failure;
      if (!failure.ec && answered == batch.size()) {
        if (keep_alive) {
          self->Release(std::move(conn));
        } else {
          RetireOnStrand(std::move(conn));
          self->ReleaseSlot();
        }
        co_return;
      }
      RetireOnStrand(std::move(conn));
      self->ReleaseSlot();
      // A reused connection the server had closed while idle answered
      // nothing: the whole batch goes again on a fresh one.
      if (answered == 0 && reused && !failure.response_started &&
          IsStaleConnectionError(failure.ec) && attempt + 1 < max_attempts &&
          std::chrono::steady_clock::now() < deadline) {
        self->retries.fetch_add(1, std::memory_order_relaxed);
        self->DropIdle();
        PipeBatch live;
        {
          std::lock_guard<std::mutex> lock(self->pipe_mu);
          for (auto& call : batch) {
            if (!call->completed) live.push_back(std::move(call));
          }
        }
        if (live.empty()) co_return;
        batch = std::move(live);
        continue;
      }
      self->FailPipelined(batch, answered, failure);
      co_return;
    }
  }

  static asio::awaitable<Result<OpenedStream>> Open(std::shared_ptr<Impl> self,
                                                    ClientRequest request);

  ClientOptions config;
  Endpoint endpoint;
  asio::any_io_executor executor;
  std::unique_ptr<ssl::context> ssl_ctx;  // null for http://

  std::mutex pool_mu;
  std::vector<std::unique_ptr<Connection>> idle;
  size_t open = 0;  // pooled connections idle, busy or being opened
  std::deque<std::shared_ptr<PoolWaiter>> waiters;

  // Pipelined writes waiting for a batch, and the workers sending batches.
  std::mutex pipe_mu;
  std::deque<std::shared_ptr<PipeCall>> pipe_queue;
  size_t pipe_workers = 0;

  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> pipelined_batches{0};
  std::atomic<uint64_t> connections_created{0};
  std::atomic<uint64_t> retries{0};
};

// ---------------------------------------------------------------------------
// ResponseStream

struct ResponseStream::State {
  std::shared_ptr<HttpClient::Impl> client;  // keeps the TLS context alive
  std::unique_ptr<Connection> conn;
  std::optional<http::response_parser<http::buffer_body>> parser;
  std::string label;

  // Reads what arrives within `idle_timeout` into the parser's body buffer,
  // on the connection's strand.
  static asio::awaitable<error_code> ReadSome(State& self, std::chrono::milliseconds idle_timeout) {
    Connection& conn = *self.conn;
    co_await EnterStrand(conn);
    auto on_strand = OnStrand(conn);
    conn.Tcp().expires_after(idle_timeout);
    error_code ec;
    if (conn.tls) {
      std::tie(ec, std::ignore) =
          co_await http::async_read_some(*conn.tls, conn.buffer, *self.parser, on_strand);
    } else {
      std::tie(ec, std::ignore) =
          co_await http::async_read_some(*conn.plain, conn.buffer, *self.parser, on_strand);
    }
    co_return ec;
  }

  // Sends the request and reads the response head; for a status other than
  // 200, reads the (small) error body too. On the connection's strand. After
  // an error or a status other than 200 the caller retires the connection.
  struct Opening {
    error_code ec;
    const char* stage = "sending the request";
    int status = 0;
    std::string error_body;
  };
  static asio::awaitable<Opening> Start(State& self, const RequestText& req, SteadyTime deadline) {
    Opening out;
    Connection& conn = *self.conn;
    co_await EnterStrand(conn);
    auto on_strand = OnStrand(conn);
    conn.Tcp().expires_at(deadline);
    if (conn.tls) {  // if/else, not ?: (GCC 12, see Impl::ExchangeBatch)
      out.ec = co_await WriteRequest(*conn.tls, conn, req);
    } else {
      out.ec = co_await WriteRequest(*conn.plain, conn, req);
    }
    if (!out.ec) {
      out.stage = "reading the response header";
      conn.Tcp().expires_at(deadline);
      if (conn.tls) {
        std::tie(out.ec, std::ignore) =
            co_await http::async_read_header(*conn.tls, conn.buffer, *self.parser, on_strand);
      } else {
        std::tie(out.ec, std::ignore) =
            co_await http::async_read_header(*conn.plain, conn.buffer, *self.parser, on_strand);
      }
    }
    if (out.ec) co_return out;
    out.status = static_cast<int>(self.parser->get().result_int());
    if (out.status == 200) co_return out;
    http::response_parser<http::string_body> error_parser(std::move(*self.parser));
    error_parser.body_limit(kMaxResponseBody);
    conn.Tcp().expires_at(deadline);
    error_code ec;
    if (conn.tls) {
      std::tie(ec, std::ignore) =
          co_await http::async_read(*conn.tls, conn.buffer, error_parser, on_strand);
    } else {
      std::tie(ec, std::ignore) =
          co_await http::async_read(*conn.plain, conn.buffer, error_parser, on_strand);
    }
    if (!ec) out.error_body = std::move(error_parser.get().body());
    co_return out;
  }
};

namespace {
// Cancel and Close both act on the connection's strand. A socket is not
// thread-safe: closing it on the caller's thread while a posted cancel ran on
// an io thread raced (a rare crash when a watch was destroyed right after its
// last read). The posted handler keeps the state, and so the socket, alive.
void PostToConnection(const std::shared_ptr<ResponseStream::State>& state, bool close) {
  if (!state || !state->conn) return;
  asio::post(state->conn->strand, [state, close] {
    if (!state->conn) return;
    if (close) {
      state->conn->Close();
    } else {
      error_code ignored;
      state->conn->Tcp().socket().cancel(ignored);
    }
  });
}
}  // namespace

ResponseStream::ResponseStream(std::shared_ptr<State> state) : state_(std::move(state)) {}

ResponseStream::~ResponseStream() { Close(); }

void ResponseStream::Close() { PostToConnection(state_, true); }

void ResponseStream::Cancel() { PostToConnection(state_, false); }

asio::awaitable<ResponseStream::ReadResult> ResponseStream::ReadSome(
    char* data, size_t size, std::chrono::milliseconds idle_timeout) {
  std::shared_ptr<State> self = state_;
  const asio::any_io_executor caller = co_await asio::this_coro::executor;
  ReadResult out;
  auto& body = self->parser->get().body();
  body.data = data;
  body.size = size;
  error_code ec = co_await State::ReadSome(*self, idle_timeout);
  out.bytes = size - body.size;
  const bool done = !ec && self->parser->is_done();
  co_await BackToCaller(caller);
  if (ec == http::error::need_buffer) ec = {};
  if (ec) {
    if (IsTimeout(ec)) {
      out.error = MakeError(ErrorCode::kTimeout,
                            self->label + ": no data for " + FormatMillis(idle_timeout));
    } else {
      out.error =
          MakeError(ErrorCode::kUnavailable, self->label + ": stream broken: " + ec.message());
    }
    co_return out;
  }
  if (done) {
    out.end = true;
    PostToConnection(self, true);
  }
  co_return out;
}

asio::awaitable<Result<OpenedStream>> HttpClient::Impl::Open(std::shared_ptr<Impl> self,
                                                             ClientRequest request) {
  const SteadyTime deadline = request.deadline;
  const auto effective = request.timeout;
  const std::string what = Label(request);
  auto connected = co_await Connect(self, deadline);
  if (!connected.ok()) {
    Error error = std::move(connected).error();
    error.message = what + ": " + error.message;
    co_return error;
  }
  auto state = std::make_shared<ResponseStream::State>();
  state->client = self;
  state->conn = std::move(connected).value();
  state->label = what;
  self->requests.fetch_add(1, std::memory_order_relaxed);

  const RequestText req = self->BuildRequestText(request);
  state->parser.emplace();
  state->parser->body_limit(std::numeric_limits<uint64_t>::max());
  state->parser->header_limit(kMaxResponseHeader);
  ResponseStream::State::Opening start =
      co_await ResponseStream::State::Start(*state, req, deadline);
  if (start.ec || start.status != 200) RetireOnStrand(std::move(state->conn));
  if (start.ec) {
    if (IsTimeout(start.ec)) {
      co_return MakeError(ErrorCode::kTimeout, what + ": deadline of " + FormatMillis(effective) +
                                                   " exceeded (" + start.stage + ")");
    }
    co_return MakeError(
        ErrorCode::kUnavailable,
        what + ": " + start.stage + " from " + self->endpoint.display + ": " + start.ec.message());
  }
  OpenedStream opened;
  opened.status = start.status;
  if (opened.status != 200) {
    opened.error_body = std::move(start.error_body);
    co_return opened;
  }
  opened.stream.reset(new ResponseStream(std::move(state)));
  co_return opened;
}

// ---------------------------------------------------------------------------
// HttpClient

HttpClient::HttpClient(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpClient::~HttpClient() = default;

Result<std::shared_ptr<HttpClient>> HttpClient::Create(ClientOptions options,
                                                       asio::any_io_executor executor) {
  auto endpoint = ParseServer(options.server);
  if (!endpoint.ok()) return std::move(endpoint).error();
  std::unique_ptr<ssl::context> ctx;
  if (endpoint->tls) {
    auto made = MakeSslContext(options);
    if (!made.ok()) return std::move(made).error();
    ctx = std::move(made).value();
  }
  auto impl = std::make_shared<Impl>(std::move(options), std::move(endpoint).value(),
                                     std::move(executor), std::move(ctx));
  return std::shared_ptr<HttpClient>(new HttpClient(std::move(impl)));
}

asio::awaitable<Result<ClientResponse>> HttpClient::Send(ClientRequest request) {
  const asio::any_io_executor caller = co_await asio::this_coro::executor;
  Result<ClientResponse> response = co_await Impl::Send(impl_, std::move(request));
  co_await BackToCaller(caller);
  co_return response;
}

asio::awaitable<Result<OpenedStream>> HttpClient::Open(ClientRequest request) {
  const asio::any_io_executor caller = co_await asio::this_coro::executor;
  Result<OpenedStream> opened = co_await Impl::Open(impl_, std::move(request));
  co_await BackToCaller(caller);
  co_return opened;
}

const ClientOptions& HttpClient::options() const { return impl_->config; }
const std::string& HttpClient::display() const { return impl_->endpoint.display; }
asio::any_io_executor HttpClient::executor() const { return impl_->executor; }

TransportStats HttpClient::stats() const {
  TransportStats stats;
  stats.requests = impl_->requests.load(std::memory_order_relaxed);
  stats.connections_created = impl_->connections_created.load(std::memory_order_relaxed);
  stats.pipelined_batches = impl_->pipelined_batches.load(std::memory_order_relaxed);
  stats.retries = impl_->retries.load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(impl_->pool_mu);
  stats.open_connections = impl_->open;
  stats.idle_connections = impl_->idle.size();
  return stats;
}

}  // namespace copse::net
