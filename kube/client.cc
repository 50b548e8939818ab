#include "kube/client.h"

#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>

#include <array>
#include <atomic>
#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
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
#include <fstream>
#include <future>
#include <iostream>
#include <limits>
#include <mutex>
#include <sstream>
#include <thread>
#include <tuple>
#include <type_traits>
#include <vector>

#include "core/check.h"
#include "core/json_text.h"
#include "kube/api_access.h"
#include "kube/exec_credential.h"
#include "kube/rate_limiter.h"

namespace copse::kube {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;
using SteadyTime = std::chrono::steady_clock::time_point;
using boost::system::error_code;

constexpr auto kUseTuple = net::as_tuple(net::use_awaitable);
constexpr uint64_t kMaxResponseBody = uint64_t{4} << 30;
constexpr uint32_t kMaxResponseHeader = 256 * 1024;
constexpr size_t kWatchReadChunk = 64 * 1024;
constexpr size_t kReadBufferBytes = 64 * 1024;

// ---------------------------------------------------------------------------
// Small helpers

std::string FormatMillis(std::chrono::nanoseconds d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + "ms";
}

// Percent-encodes a query value (RFC 3986 unreserved characters stay).
void AppendQueryEscaped(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if ((u >= 'A' && u <= 'Z') || (u >= 'a' && u <= 'z') || (u >= '0' && u <= '9') || u == '-' ||
        u == '.' || u == '_' || u == '~') {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 0xF]);
    }
  }
}

class Query {
 public:
  explicit Query(std::string path) : target_(std::move(path)) {}
  Query& Add(std::string_view key, std::string_view value) {
    target_.push_back(first_ ? '?' : '&');
    first_ = false;
    target_ += key;
    target_.push_back('=');
    AppendQueryEscaped(target_, value);
    return *this;
  }
  Query& AddIf(bool condition, std::string_view key, std::string_view value) {
    if (condition) Add(key, value);
    return *this;
  }
  std::string Take() { return std::move(target_); }

 private:
  std::string target_;
  bool first_ = true;
};

Error Invalid(std::string message) { return MakeError(ErrorCode::kInvalid, std::move(message)); }

// Names and namespaces go into URL paths verbatim; reject what would change the path.
Status ValidateSegment(std::string_view what, std::string_view value, bool required) {
  if (value.empty()) {
    if (required) return Invalid(std::string(what) + " is required");
    return Status::Ok();
  }
  if (value == "." || value == "..") {
    return Invalid(std::string(what) + " \"" + std::string(value) + "\" is not allowed");
  }
  for (char c : value) {
    if (c == '/' || c == '?' || c == '#' || c == '%' || static_cast<unsigned char>(c) <= 0x20 ||
        c == 0x7F) {
      return Invalid(std::string(what) + " \"" + std::string(value) +
                     "\" contains a character not allowed in a resource name");
    }
  }
  return Status::Ok();
}

Status ValidateNames(const ResourceRef& resource, std::string_view ns, std::string_view name,
                     bool name_required, bool ns_required_if_namespaced) {
  if (resource.resource.empty() || resource.version.empty()) {
    return Invalid("resource: version and resource name are required");
  }
  if (resource.namespaced) {
    if (Status s = ValidateSegment("namespace", ns, ns_required_if_namespaced); !s.ok()) return s;
  }
  return ValidateSegment("name", name, name_required);
}

bool IsIpAddress(const std::string& host) {
  error_code ec;
  net::ip::make_address(host, ec);
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

Result<std::unique_ptr<ssl::context>> MakeSslContext(const ClientConfig& config) {
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
      ctx->add_certificate_authority(net::buffer(config.ca_pem), ec);
      if (ec) {
        return Invalid("certificate authority: not a valid PEM certificate: " + ec.message());
      }
    }
  }
  if (!config.client_cert_pem.empty() || !config.client_key_pem.empty()) {
    if (config.client_cert_pem.empty() || config.client_key_pem.empty()) {
      return Invalid("client certificate: both the certificate and the key are required");
    }
    ctx->use_certificate_chain(net::buffer(config.client_cert_pem), ec);
    if (ec) return Invalid("client certificate: not a valid PEM certificate: " + ec.message());
    ctx->use_private_key(net::buffer(config.client_key_pem), ssl::context::pem, ec);
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

http::verb ToVerb(HttpMethod method) {
  switch (method) {
    case HttpMethod::kGet:
      return http::verb::get;
    case HttpMethod::kPost:
      return http::verb::post;
    case HttpMethod::kPut:
      return http::verb::put;
    case HttpMethod::kPatch:
      return http::verb::patch;
    case HttpMethod::kDelete:
      return http::verb::delete_;
  }
  return http::verb::get;
}

bool IsTimeout(const error_code& ec) {
  return ec == beast::error::timeout || ec == net::error::timed_out;
}

// Errors that mean a reused keep-alive connection had been closed by the server.
bool IsStaleConnectionError(const error_code& ec) {
  return ec == net::error::eof || ec == http::error::end_of_stream ||
         ec == net::error::connection_reset || ec == net::error::broken_pipe ||
         ec == net::error::connection_aborted || ec == net::ssl::error::stream_truncated ||
         ec == net::error::not_connected;
}

std::string DeleteOptionsJson(const DeleteOptions& options) {
  std::string body = R"({"kind":"DeleteOptions","apiVersion":"v1")";
  if (options.grace_period_seconds) {
    body += ",\"gracePeriodSeconds\":" + std::to_string(*options.grace_period_seconds);
  }
  if (options.precondition_uid || options.precondition_resource_version) {
    body += ",\"preconditions\":{";
    bool first = true;
    if (options.precondition_uid) {
      body += "\"uid\":" + JsonString(*options.precondition_uid);
      first = false;
    }
    if (options.precondition_resource_version) {
      if (!first) body += ',';
      body += "\"resourceVersion\":" + JsonString(*options.precondition_resource_version);
    }
    body += '}';
  }
  if (options.propagation_policy) {
    body += ",\"propagationPolicy\":" + JsonString(*options.propagation_policy);
  }
  if (options.dry_run) body += R"(,"dryRun":["All"])";
  body += '}';
  return body;
}

std::string TrimToken(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r')) ++i;
  return s.substr(i);
}

// ---------------------------------------------------------------------------
// Connections

// One keep-alive connection. Its stream lives on its own strand: Beast's
// tcp_stream runs its timeout handler concurrently with I/O completions
// otherwise, and the executor may be a multi-threaded io_context.
struct Connection {
  explicit Connection(const net::any_io_executor& ex) {
    plain.emplace(net::make_strand(ex));
    // Beast reads only as much as the buffer's spare capacity (at least 512
    // bytes): without room, a large list or a busy watch costs a syscall per
    // few hundred bytes.
    buffer.reserve(kReadBufferBytes);
  }
  Connection(const net::any_io_executor& ex, ssl::context& ctx) {
    tls.emplace(net::make_strand(ex), ctx);
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

  std::optional<beast::tcp_stream> plain;
  std::optional<beast::ssl_stream<beast::tcp_stream>> tls;
  beast::flat_buffer buffer;
  SteadyTime idle_since{};
  uint64_t requests = 0;
};

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
net::awaitable<error_code> WriteRequest(Stream& stream, const RequestText& req) {
  constexpr size_t kCoalesce = 16 * 1024;
  if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
    const std::array<net::const_buffer, 2> buffers{net::buffer(req.head), net::buffer(req.body)};
    auto [ec, n] = co_await net::async_write(stream, buffers, kUseTuple);
    (void)n;
    co_return ec;
  } else {
    if (req.body.size() <= kCoalesce) {
      std::string whole;
      whole.reserve(req.head.size() + req.body.size());
      whole += req.head;
      whole += req.body;
      auto [ec, n] = co_await net::async_write(stream, net::buffer(whole), kUseTuple);
      (void)n;
      co_return ec;
    }
    auto [head_ec, head_n] = co_await net::async_write(stream, net::buffer(req.head), kUseTuple);
    (void)head_n;
    if (head_ec) co_return head_ec;
    auto [body_ec, body_n] = co_await net::async_write(stream, net::buffer(req.body), kUseTuple);
    (void)body_n;
    co_return body_ec;
  }
}

// Reads one response into `out`: its status, persistence, content type and
// body, or the error and whether any of it had arrived.
template <typename Stream>
net::awaitable<void> ReadResponse(Stream& stream, Connection& conn, HttpResult& out) {
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxResponseBody);
  parser.header_limit(kMaxResponseHeader);
  auto [read_ec, read] = co_await http::async_read(stream, conn.buffer, parser, kUseTuple);
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
net::awaitable<void> Exchange(Stream& stream, Connection& conn, const RequestText& req,
                              SteadyTime deadline, HttpResult& out) {
  conn.Tcp().expires_at(deadline);
  const error_code write_ec = co_await WriteRequest(stream, req);
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
  std::optional<net::any_completion_handler<void(error_code)>> handler;
  net::any_io_executor executor;
  std::unique_ptr<Connection> conn;  // handed over; null with granted: open a new one
  std::optional<net::steady_timer> timer;
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
  std::optional<net::any_completion_handler<void(error_code)>> handler;
  net::any_io_executor executor;
  std::optional<net::steady_timer> timer;
  bool completed = false;
};
using PipeBatch = std::vector<std::shared_ptr<PipeCall>>;

// Writes a batch of requests at once. Plain TCP: one gathered write. TLS:
// one buffer (see WriteRequest on gathered writes through ssl_stream).
template <typename Stream>
net::awaitable<error_code> WriteBatch(Stream& stream, const PipeBatch& batch) {
  if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
    std::vector<net::const_buffer> buffers;
    buffers.reserve(batch.size() * 2);
    for (const auto& call : batch) {
      buffers.push_back(net::buffer(call->req.head));
      if (!call->req.body.empty()) buffers.push_back(net::buffer(call->req.body));
    }
    auto [ec, n] = co_await net::async_write(stream, buffers, kUseTuple);
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
    auto [ec, n] = co_await net::async_write(stream, net::buffer(whole), kUseTuple);
    (void)n;
    co_return ec;
  }
}

}  // namespace

std::string_view PatchContentType(PatchType type) noexcept {
  switch (type) {
    case PatchType::kMerge:
      return "application/merge-patch+json";
    case PatchType::kJson:
      return "application/json-patch+json";
    case PatchType::kStrategicMerge:
      return "application/strategic-merge-patch+json";
    case PatchType::kApply:
      return "application/apply-patch+yaml";
  }
  return "application/merge-patch+json";
}

// ---------------------------------------------------------------------------
// Client::Impl

struct Client::Impl : std::enable_shared_from_this<Client::Impl> {
  Impl(ClientConfig cfg, Endpoint ep, net::any_io_executor ex, std::unique_ptr<ssl::context> ctx)
      : config(std::move(cfg)),
        endpoint(std::move(ep)),
        executor(std::move(ex)),
        ssl_ctx(std::move(ctx)),
        limiter(config.qps, config.burst) {
    token = config.token;
    token_read_at = std::chrono::steady_clock::now();
    if (config.exec) {
      ExecCredentials::Options options;
      options.exec = *config.exec;
      options.cluster = ExecClusterInfo{config.server, config.tls_server_name,
                                        config.insecure_skip_tls_verify, config.ca_pem};
      options.clock = config.clock;
      exec = std::make_unique<ExecCredentials>(std::move(options));
    }
  }

  ~Impl() {
    std::lock_guard<std::mutex> lock(pool_mu);
    for (auto& conn : idle) conn->Close();
  }

  // --- credentials -------------------------------------------------------

  // The one place requests get their credentials: an exec plugin's token
  // (obtained by WithCredentials before the request is built), a static or
  // file token, or basic auth.
  std::string AuthorizationHeader() {
    if (exec) {
      std::string current = exec->Current();
      return current.empty() ? std::string() : "Bearer " + current;
    }
    std::string current;
    {
      std::lock_guard<std::mutex> lock(token_mu);
      if (!config.token_file.empty() &&
          std::chrono::steady_clock::now() - token_read_at >= config.token_file_refresh) {
        token_read_at = std::chrono::steady_clock::now();
        std::ifstream in(config.token_file, std::ios::binary);
        if (in) {
          std::ostringstream contents;
          contents << in.rdbuf();
          std::string fresh = TrimToken(contents.str());
          // Keep the last good token if the file is being rewritten.
          if (!fresh.empty()) token = std::move(fresh);
        }
      }
      current = token;
    }
    if (!current.empty()) return "Bearer " + current;
    if (!config.username.empty()) {
      return "Basic " + EncodeBase64(config.username + ":" + config.password);
    }
    return {};
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
  static void PostCompletion(const net::any_io_executor& executor,
                             const std::shared_ptr<PoolWaiter>& waiter) {
    net::post(executor, [waiter] {
      net::any_completion_handler<void(error_code)> handler(std::move(*waiter->handler));
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
      net::any_completion_handler<void(error_code)> handler(std::move(*waiter->handler));
      waiter->handler.reset();
      std::move(handler)(error_code(net::error::timed_out));
    });
    waiters.push_back(waiter);
  }

  static net::awaitable<Result<std::unique_ptr<Connection>>> Acquire(std::shared_ptr<Impl> self,
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
      waiter->executor = co_await net::this_coro::executor;
      auto token = net::as_tuple(net::use_awaitable);
      // A named lambda: GCC 12 corrupts closures built inside a co_await expression.
      auto initiation = [self, waiter, deadline](auto handler) {
        self->StartWait(waiter, deadline, std::move(handler));
      };
      auto [ec] =
          co_await net::async_initiate<decltype(token), void(error_code)>(initiation, token);
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

  static net::awaitable<Result<std::unique_ptr<Connection>>> Connect(std::shared_ptr<Impl> self,
                                                                     SteadyTime deadline) {
    const SteadyTime started = std::chrono::steady_clock::now();
    const Endpoint& ep = self->endpoint;
    std::vector<tcp::endpoint> endpoints;
    if (ep.host_is_ip) {
      endpoints.emplace_back(net::ip::make_address(ep.host),
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
    conn->Tcp().expires_at(deadline);
    auto [connect_ec, connected] = co_await conn->Tcp().async_connect(endpoints, kUseTuple);
    if (connect_ec) co_return self->ConnectError(connect_ec, started, deadline);
    error_code ignored;
    conn->Tcp().socket().set_option(tcp::no_delay(true), ignored);
    if (ep.tls) {
      SSL* ssl_handle = conn->tls->native_handle();
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
      conn->Tcp().expires_at(deadline);
      auto [handshake_ec] =
          co_await conn->tls->async_handshake(ssl::stream_base::client, kUseTuple);
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
    self->connections_created.fetch_add(1, std::memory_order_relaxed);
    co_return conn;
  }

  // --- requests -----------------------------------------------------------

  http::request<http::string_body> BuildRequest(http::verb verb, const std::string& target,
                                                std::string body, const std::string& content_type) {
    http::request<http::string_body> req{verb, endpoint.base_path + target, 11};
    req.set(http::field::host, endpoint.host_header);
    req.set(http::field::user_agent, config.user_agent);
    req.set(http::field::accept, "application/json");
    if (std::string auth = AuthorizationHeader(); !auth.empty()) {
      req.set(http::field::authorization, auth);
    }
    if (!body.empty() || !content_type.empty()) {
      req.set(http::field::content_type, content_type.empty() ? "application/json" : content_type);
      req.body() = std::move(body);
    }
    req.keep_alive(true);
    req.prepare_payload();
    return req;
  }

  // The same request as BuildRequest, as text (see RequestText).
  RequestText BuildRequestText(http::verb verb, const std::string& target, std::string body,
                               const std::string& content_type) {
    RequestText req;
    std::string& h = req.head;
    const std::string auth = AuthorizationHeader();
    h.reserve(128 + target.size() + endpoint.base_path.size() + auth.size());
    const std::string_view method = http::to_string(verb);
    h.append(method.data(), method.size());
    h += ' ';
    h += endpoint.base_path;
    h += target;
    h += " HTTP/1.1\r\nHost: ";
    h += endpoint.host_header;
    h += "\r\nUser-Agent: ";
    h += config.user_agent;
    h += "\r\nAccept: application/json\r\n";
    if (!auth.empty()) {
      h += "Authorization: ";
      h += auth;
      h += "\r\n";
    }
    if (!body.empty() || !content_type.empty()) {
      h += "Content-Type: ";
      h += content_type.empty() ? std::string_view("application/json")
                                : std::string_view(content_type);
      h += "\r\n";
    }
    // prepare_payload(): a length for a body, and for POST/PUT/OPTIONS always.
    if (!body.empty() || verb == http::verb::post || verb == http::verb::put ||
        verb == http::verb::options) {
      h += "Content-Length: ";
      h += std::to_string(body.size());
      h += "\r\n";
    }
    h += "\r\n";
    req.body = std::move(body);
    return req;
  }

  std::chrono::milliseconds EffectiveTimeout(std::chrono::milliseconds timeout) const {
    return timeout.count() > 0 ? timeout : config.timeout;
  }

  // Waits for the rate limiter within the deadline.
  static net::awaitable<Status> Throttle(std::shared_ptr<Impl> self, SteadyTime deadline) {
    const auto wait = self->limiter.Reserve();
    if (wait <= Clock::Duration::zero()) co_return Status::Ok();
    if (std::chrono::steady_clock::now() + wait > deadline) {
      self->limiter.Cancel();
      co_return MakeError(ErrorCode::kTimeout, "client rate limiter: waiting " +
                                                   FormatMillis(wait) +
                                                   " would exceed the request deadline");
    }
    net::steady_timer timer(co_await net::this_coro::executor,
                            std::chrono::duration_cast<std::chrono::steady_clock::duration>(wait));
    auto [ec] = co_await timer.async_wait(kUseTuple);
    (void)ec;  // the timer is never cancelled; expiry is the only outcome
    co_return Status::Ok();
  }

  // The component's API access table (ClientConfig::api_access), checked
  // before anything is sent. A refusal is a developer's mistake: it is also
  // printed, since callers such as informers only retry.
  static Status CheckAccess(const Impl& self, http::verb verb, std::string_view target) {
    if (self.config.api_access == nullptr) return Status::Ok();
    Status allowed = CheckApiAccess(*self.config.api_access, http::to_string(verb), target);
    if (!allowed.ok()) std::cerr << "copse: " << allowed.error().message << std::endl;
    return allowed;
  }

  // One HTTP exchange on a pooled connection, retried on a fresh connection
  // when a reused one turns out to have been closed by the server.
  // Runs `attempt` with a fresh exec plugin token; on a 401 (`unauthorized`
  // tells) drops that token and runs it once more with a new one.
  // The callables are borrowed from the caller's frame (GCC 12: no lambdas
  // copied into a coroutine inside a co_await expression).
  template <typename T, typename Attempt, typename IsUnauthorized>
  static net::awaitable<Result<T>> WithCredentials(std::shared_ptr<Impl> self, std::string what,
                                                   Attempt& attempt, IsUnauthorized& unauthorized) {
    for (int round = 0;; ++round) {
      auto token = self->exec->Get();
      if (!token.ok()) {
        Error error = std::move(token).error();
        error.message = what + ": " + error.message;
        co_return error;
      }
      Result<T> result = co_await attempt();
      if (round > 0 || !unauthorized(result)) co_return result;
      self->exec->Invalidate(token->generation);
    }
  }

  // A plain function, not a coroutine: without an exec plugin the request
  // costs no extra coroutine frame.
  static net::awaitable<Result<Response>> Send(std::shared_ptr<Impl> self, http::verb verb,
                                               std::string target, std::string body,
                                               std::string content_type,
                                               std::chrono::milliseconds timeout) {
    if (!self->exec) {
      return SendOnce(std::move(self), verb, std::move(target), std::move(body),
                      std::move(content_type), timeout);
    }
    return SendWithExecCredentials(std::move(self), verb, std::move(target), std::move(body),
                                   std::move(content_type), timeout);
  }

  static net::awaitable<Result<Response>> SendWithExecCredentials(
      std::shared_ptr<Impl> self, http::verb verb, std::string target, std::string body,
      std::string content_type, std::chrono::milliseconds timeout) {
    // A retry needs the body again: kept here, copied into each attempt.
    auto attempt = [&]() { return SendOnce(self, verb, target, body, content_type, timeout); };
    auto unauthorized = [](const Result<Response>& r) { return r.ok() && r->status == 401; };
    std::string what = std::string(http::to_string(verb)) + " " + target;
    co_return co_await WithCredentials<Response>(self, std::move(what), attempt, unauthorized);
  }

  // One request (see Send).
  static net::awaitable<Result<Response>> SendOnce(std::shared_ptr<Impl> self, http::verb verb,
                                                   std::string target, std::string body,
                                                   std::string content_type,
                                                   std::chrono::milliseconds timeout) {
    if (Status allowed = CheckAccess(*self, verb, target); !allowed.ok()) co_return allowed.error();
    const auto effective = self->EffectiveTimeout(timeout);
    const SteadyTime started = std::chrono::steady_clock::now();
    const SteadyTime deadline = started + effective;
    // "VERB target", for error messages only.
    const auto what = [&] { return std::string(http::to_string(verb)) + " " + target; };
    if (Status throttled = co_await Throttle(self, deadline); !throttled.ok()) {
      Error error = throttled.error();
      error.message = what() + ": " + error.message;
      co_return error;
    }
    RequestText req = self->BuildRequestText(verb, target, std::move(body), content_type);
    if (self->config.pipelined_connections > 0 && verb != http::verb::get &&
        verb != http::verb::head) {
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
        conn->Close();
        conn.reset();
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
        conn->Close();
        conn.reset();
        self->ReleaseSlot();
      }
      co_return Response{result.status, std::move(result.content_type), std::move(result.body)};
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

  static net::awaitable<Result<Response>> SendPipelined(std::shared_ptr<Impl> self, RequestText req,
                                                        SteadyTime deadline, std::string what,
                                                        std::chrono::milliseconds effective) {
    auto call = std::make_shared<PipeCall>();
    call->req = std::move(req);
    call->deadline = deadline;
    call->executor = co_await net::this_coro::executor;
    auto token = net::as_tuple(net::use_awaitable);
    // A named lambda: GCC 12 corrupts closures built inside a co_await expression.
    auto initiation = [self, call](auto handler) {
      self->EnqueuePipelined(call, std::move(handler));
    };
    auto [ec] = co_await net::async_initiate<decltype(token), void(error_code)>(initiation, token);
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
    co_return Response{result.status, std::move(result.content_type), std::move(result.body)};
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
      net::any_completion_handler<void(error_code)> h(std::move(*call->handler));
      call->handler.reset();
      std::move(h)(error_code(net::error::timed_out));
    });
    pipe_queue.push_back(call);
    const bool spawn = pipe_workers < config.pipelined_connections;
    if (spawn) ++pipe_workers;
    lock.unlock();
    if (spawn) net::co_spawn(executor, PipeWorker(shared_from_this()), net::detached);
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
    net::post(call->executor, [call] {
      net::any_completion_handler<void(error_code)> h(std::move(*call->handler));
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
  static net::awaitable<void> PipeWorker(std::shared_ptr<Impl> self) {
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

  static net::awaitable<void> RunBatch(std::shared_ptr<Impl> self, PipeBatch batch) {
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
      conn->Tcp().expires_at(deadline);
      const error_code write_ec = conn->tls ? co_await WriteBatch(*conn->tls, batch)
                                            : co_await WriteBatch(*conn->plain, batch);
      size_t answered = 0;
      bool keep_alive = true;
      HttpResult failure;
      if (write_ec) {
        failure.ec = write_ec;
        failure.stage = "sending the request";
      } else {
        for (; answered < batch.size(); ++answered) {
          HttpResult result;
          if (conn->tls) {
            co_await ReadResponse(*conn->tls, *conn, result);
          } else {
            co_await ReadResponse(*conn->plain, *conn, result);
          }
          if (result.ec) {
            failure = std::move(result);
            break;
          }
          keep_alive = result.keep_alive;
          self->CompletePipelined(batch[answered], std::move(result), std::nullopt);
          if (!keep_alive) {
            ++answered;
            if (answered < batch.size()) {
              failure.ec = net::error::connection_reset;
              failure.stage = "reading the response (the server closed the connection)";
            }
            break;
          }
        }
      }
      if (!failure.ec && answered == batch.size()) {
        if (keep_alive) {
          self->Release(std::move(conn));
        } else {
          conn->Close();
          self->ReleaseSlot();
        }
        co_return;
      }
      conn->Close();
      conn.reset();
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

  // Send + Kubernetes error decoding: a 2xx body, or the Status as an Error.
  static net::awaitable<Result<std::string>> Call(std::shared_ptr<Impl> self, http::verb verb,
                                                  std::string target, std::string body,
                                                  std::string content_type,
                                                  std::chrono::milliseconds timeout) {
    auto response = co_await Send(self, verb, std::move(target), std::move(body),
                                  std::move(content_type), timeout);
    if (!response.ok()) co_return std::move(response).error();
    if (response->status < 200 || response->status > 299) {
      co_return ErrorFromResponse(response->status, response->body);
    }
    co_return std::move(response->body);
  }

  // --- verbs --------------------------------------------------------------

  static net::awaitable<Result<std::string>> Get(std::shared_ptr<Impl> self, ResourceRef resource,
                                                 std::string ns, std::string name,
                                                 GetOptions options) {
    if (Status s = ValidateNames(resource, ns, name, true, true); !s.ok()) co_return s.error();
    Query query(resource.Path(ns, name));
    query.AddIf(!options.resource_version.empty(), "resourceVersion", options.resource_version);
    co_return co_await Call(self, http::verb::get, query.Take(), {}, {}, options.timeout);
  }

  static net::awaitable<Result<ListResult>> List(std::shared_ptr<Impl> self, ResourceRef resource,
                                                 std::string ns, ListOptions options) {
    if (Status s = ValidateNames(resource, ns, {}, false, false); !s.ok()) co_return s.error();
    Query query(resource.Path(ns));
    query.AddIf(!options.label_selector.empty(), "labelSelector", options.label_selector)
        .AddIf(!options.field_selector.empty(), "fieldSelector", options.field_selector)
        .AddIf(options.limit > 0, "limit", std::to_string(options.limit))
        .AddIf(!options.continue_token.empty(), "continue", options.continue_token)
        .AddIf(!options.resource_version.empty(), "resourceVersion", options.resource_version)
        .AddIf(!options.resource_version_match.empty(), "resourceVersionMatch",
               options.resource_version_match);
    auto body = co_await Call(self, http::verb::get, query.Take(), {}, {}, options.timeout);
    if (!body.ok()) co_return std::move(body).error();
    co_return DecodeList(std::move(body).value());
  }

  static void AddWriteQuery(Query& query, const std::string& field_manager, bool dry_run) {
    query.AddIf(!field_manager.empty(), "fieldManager", field_manager)
        .AddIf(dry_run, "dryRun", "All");
  }

  static net::awaitable<Result<std::string>> Create(std::shared_ptr<Impl> self,
                                                    ResourceRef resource, std::string ns,
                                                    std::string body, WriteOptions options) {
    if (Status s = ValidateNames(resource, ns, {}, false, true); !s.ok()) co_return s.error();
    Query query(resource.Path(ns));
    AddWriteQuery(query, options.field_manager, options.dry_run);
    co_return co_await Call(self, http::verb::post, query.Take(), std::move(body),
                            "application/json", options.timeout);
  }

  static net::awaitable<Result<std::string>> Update(std::shared_ptr<Impl> self,
                                                    ResourceRef resource, std::string ns,
                                                    std::string name, std::string body,
                                                    WriteOptions options) {
    if (Status s = ValidateNames(resource, ns, name, true, true); !s.ok()) co_return s.error();
    if (Status s = ValidateSegment("subresource", options.subresource, false); !s.ok()) {
      co_return s.error();
    }
    Query query(resource.Path(ns, name, options.subresource));
    AddWriteQuery(query, options.field_manager, options.dry_run);
    co_return co_await Call(self, http::verb::put, query.Take(), std::move(body),
                            "application/json", options.timeout);
  }

  static net::awaitable<Result<std::string>> Patch(std::shared_ptr<Impl> self, ResourceRef resource,
                                                   std::string ns, std::string name, PatchType type,
                                                   std::string patch, PatchOptions options) {
    if (Status s = ValidateNames(resource, ns, name, true, true); !s.ok()) co_return s.error();
    if (Status s = ValidateSegment("subresource", options.subresource, false); !s.ok()) {
      co_return s.error();
    }
    if (type == PatchType::kApply && options.field_manager.empty()) {
      co_return Invalid("server-side apply requires a field manager");
    }
    Query query(resource.Path(ns, name, options.subresource));
    AddWriteQuery(query, options.field_manager, options.dry_run);
    query.AddIf(options.force, "force", "true");
    co_return co_await Call(self, http::verb::patch, query.Take(), std::move(patch),
                            std::string(PatchContentType(type)), options.timeout);
  }

  static net::awaitable<Status> Delete(std::shared_ptr<Impl> self, ResourceRef resource,
                                       std::string ns, std::string name, DeleteOptions options) {
    if (Status s = ValidateNames(resource, ns, name, true, true); !s.ok()) co_return s;
    auto result = co_await Call(self, http::verb::delete_, resource.Path(ns, name),
                                DeleteOptionsJson(options), "application/json", options.timeout);
    if (!result.ok()) co_return std::move(result).error();
    co_return Status::Ok();
  }

  static net::awaitable<Status> Bind(std::shared_ptr<Impl> self, std::string ns, std::string pod,
                                     std::string node, BindOptions options) {
    if (Status s = ValidateNames(resources::kPods, ns, pod, true, true); !s.ok()) co_return s;
    if (node.empty()) co_return Invalid("node name is required");
    std::string body = R"({"kind":"Binding","apiVersion":"v1","metadata":{"name":)";
    AppendJsonString(body, pod);
    body += ",\"namespace\":";
    AppendJsonString(body, ns);
    if (!options.pod_uid.empty()) {
      body += ",\"uid\":";
      AppendJsonString(body, options.pod_uid);
    }
    body += R"(},"target":{"kind":"Node","apiVersion":"v1","name":)";
    AppendJsonString(body, node);
    body += "}}";
    auto result = co_await Call(self, http::verb::post, resources::kPods.Path(ns, pod, "binding"),
                                std::move(body), "application/json", options.timeout);
    if (!result.ok()) co_return std::move(result).error();
    co_return Status::Ok();
  }

  static net::awaitable<Status> Evict(std::shared_ptr<Impl> self, std::string ns, std::string pod,
                                      DeleteOptions options, std::string api_version) {
    if (Status s = ValidateNames(resources::kPods, ns, pod, true, true); !s.ok()) co_return s;
    std::string body = R"({"kind":"Eviction","apiVersion":)";
    AppendJsonString(body, api_version);
    body += R"(,"metadata":{"name":)";
    AppendJsonString(body, pod);
    body += ",\"namespace\":";
    AppendJsonString(body, ns);
    body += "},\"deleteOptions\":";
    body += DeleteOptionsJson(options);
    body += '}';
    auto result = co_await Call(self, http::verb::post, resources::kPods.Path(ns, pod, "eviction"),
                                std::move(body), "application/json", options.timeout);
    if (!result.ok()) co_return std::move(result).error();
    co_return Status::Ok();
  }

  static net::awaitable<Result<Scale>> GetScale(std::shared_ptr<Impl> self, ResourceRef resource,
                                                std::string ns, std::string name,
                                                GetOptions options) {
    if (Status s = ValidateNames(resource, ns, name, true, true); !s.ok()) co_return s.error();
    Query query(resource.Path(ns, name, "scale"));
    query.AddIf(!options.resource_version.empty(), "resourceVersion", options.resource_version);
    auto body = co_await Call(self, http::verb::get, query.Take(), {}, {}, options.timeout);
    if (!body.ok()) co_return std::move(body).error();
    co_return DecodeScale(*body);
  }

  static net::awaitable<Result<Scale>> UpdateScale(std::shared_ptr<Impl> self, ResourceRef resource,
                                                   std::string ns, std::string name,
                                                   int32_t replicas, std::string resource_version,
                                                   WriteOptions options) {
    if (Status s = ValidateNames(resource, ns, name, true, true); !s.ok()) co_return s.error();
    std::string body = R"({"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":)";
    AppendJsonString(body, name);
    if (resource.namespaced) {
      body += ",\"namespace\":";
      AppendJsonString(body, ns);
    }
    if (!resource_version.empty()) {
      body += ",\"resourceVersion\":";
      AppendJsonString(body, resource_version);
    }
    body += "},\"spec\":{\"replicas\":" + std::to_string(replicas) + "}}";
    Query query(resource.Path(ns, name, "scale"));
    AddWriteQuery(query, options.field_manager, options.dry_run);
    auto result = co_await Call(self, http::verb::put, query.Take(), std::move(body),
                                "application/json", options.timeout);
    if (!result.ok()) co_return std::move(result).error();
    co_return DecodeScale(*result);
  }

  static net::awaitable<Result<std::unique_ptr<kube::Watch>>> OpenWatch(std::shared_ptr<Impl> self,
                                                                        ResourceRef resource,
                                                                        std::string ns,
                                                                        WatchOptions options) {
    if (!self->exec)
      return OpenWatchOnce(std::move(self), std::move(resource), std::move(ns), std::move(options));
    return OpenWatchWithExecCredentials(std::move(self), std::move(resource), std::move(ns),
                                        std::move(options));
  }
  static net::awaitable<Result<std::unique_ptr<kube::Watch>>> OpenWatchWithExecCredentials(
      std::shared_ptr<Impl> self, ResourceRef resource, std::string ns, WatchOptions options) {
    auto attempt = [&]() { return OpenWatchOnce(self, resource, ns, options); };
    auto unauthorized = [](const Result<std::unique_ptr<kube::Watch>>& r) {
      return !r.ok() && r.error().code == ErrorCode::kUnauthorized;
    };
    std::string what = "watch " + resource.resource;
    co_return co_await WithCredentials<std::unique_ptr<kube::Watch>>(self, std::move(what), attempt,
                                                                     unauthorized);
  }
  static net::awaitable<Result<std::unique_ptr<kube::Watch>>> OpenWatchOnce(
      std::shared_ptr<Impl> self, ResourceRef resource, std::string ns, WatchOptions options);

  ClientConfig config;
  Endpoint endpoint;
  net::any_io_executor executor;
  std::unique_ptr<ssl::context> ssl_ctx;  // null for http://
  RateLimiter limiter;

  std::mutex token_mu;
  std::string token;
  SteadyTime token_read_at;
  std::unique_ptr<ExecCredentials> exec;  // config.exec

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
// Watch

struct Watch::Impl {
  std::shared_ptr<Client::Impl> client;  // keeps the TLS context alive
  std::unique_ptr<Connection> conn;
  std::optional<http::response_parser<http::buffer_body>> parser;
  WatchEventDecoder decoder;
  std::chrono::milliseconds idle_timeout{0};
  std::string what;  // "watch /api/v1/pods"
  bool ended = false;
  std::optional<Error> failure;

  void CloseConnection() {
    if (conn) conn->Close();
  }

  Error Fail(Error error) {
    failure = error;
    CloseConnection();
    return error;
  }

  template <typename Stream>
  static net::awaitable<std::pair<error_code, size_t>> ReadSome(Stream& stream, Impl& self) {
    auto [ec, n] =
        co_await http::async_read_some(stream, self.conn->buffer, *self.parser, kUseTuple);
    co_return std::make_pair(ec, n);
  }

  // Reads the next piece of the body into the decoder. Errors are recorded
  // with Fail(); a clean end of stream or a cancellation sets `ended`.
  static net::awaitable<Status> ReadMore(std::shared_ptr<Impl> self) {
    auto& body = self->parser->get().body();
    body.data = self->decoder.Prepare(kWatchReadChunk);
    body.size = kWatchReadChunk;
    self->conn->Tcp().expires_after(self->idle_timeout);
    auto [ec, n] = self->conn->tls ? co_await ReadSome(*self->conn->tls, *self)
                                   : co_await ReadSome(*self->conn->plain, *self);
    (void)n;
    self->decoder.Commit(kWatchReadChunk - body.size);
    if (ec == http::error::need_buffer) ec = {};
    // Cancelled while reading: deliver what is buffered, then report the end.
    // The socket closes with the Impl (a posted cancel may still run).
    if (self->ended) co_return Status::Ok();
    if (ec) {
      if (IsTimeout(ec)) {
        co_return self->Fail(MakeError(
            ErrorCode::kTimeout, self->what + ": no data for " + FormatMillis(self->idle_timeout)));
      }
      co_return self->Fail(
          MakeError(ErrorCode::kUnavailable, self->what + ": stream broken: " + ec.message()));
    }
    if (self->parser->is_done()) {
      // A clean end of stream: what is buffered is still delivered (the final
      // event may lack its newline), then the end is reported.
      self->ended = true;
      self->CloseConnection();
      if (self->decoder.pending_bytes() > 0) self->decoder.Feed("\n");
    }
    co_return Status::Ok();
  }

  static net::awaitable<Result<bool>> Next(std::shared_ptr<Impl> self, WatchEvent& event) {
    while (true) {
      if (self->failure) co_return *self->failure;
      auto decoded = self->decoder.Next(event);
      if (!decoded.ok()) co_return self->Fail(std::move(decoded).error());
      if (*decoded) co_return true;
      if (self->ended) co_return false;
      if (Status read = co_await ReadMore(self); !read.ok()) co_return read.error();
    }
  }

  static net::awaitable<Result<size_t>> NextBatch(std::shared_ptr<Impl> self,
                                                  std::vector<WatchEvent>& events,
                                                  size_t max_events) {
    max_events = std::max<size_t>(max_events, 1);
    while (true) {
      if (self->failure) co_return *self->failure;
      size_t count = 0;
      while (count < max_events) {
        if (events.size() <= count) events.emplace_back();
        auto decoded = self->decoder.Next(events[count]);
        if (!decoded.ok()) {
          Error error = self->Fail(std::move(decoded).error());
          if (count > 0) co_return count;  // the error comes with the next call
          co_return error;
        }
        if (!*decoded) break;
        ++count;
      }
      if (count > 0) co_return count;
      if (self->ended) co_return size_t{0};
      if (Status read = co_await ReadMore(self); !read.ok()) co_return read.error();
    }
  }
};

Watch::Watch(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
Watch::~Watch() { Cancel(); }

net::awaitable<Result<bool>> Watch::Next(WatchEvent& event) { return Impl::Next(impl_, event); }

net::awaitable<Result<size_t>> Watch::NextBatch(std::vector<WatchEvent>& events,
                                                size_t max_events) {
  return Impl::NextBatch(impl_, events, max_events);
}

void Watch::Cancel() {
  if (!impl_ || impl_->ended) return;
  impl_->ended = true;
  if (impl_->conn) {
    // On the connection's strand, where the pending read's handlers run.
    net::post(impl_->conn->Tcp().get_executor(), [impl = impl_] {
      error_code ignored;
      if (impl->conn) impl->conn->Tcp().socket().cancel(ignored);
    });
  }
}

net::awaitable<Result<std::unique_ptr<kube::Watch>>> Client::Impl::OpenWatchOnce(
    std::shared_ptr<Impl> self, ResourceRef resource, std::string ns, WatchOptions options) {
  if (Status s = ValidateNames(resource, ns, {}, false, false); !s.ok()) co_return s.error();
  Query query(resource.Path(ns));
  query.Add("watch", "1")
      .AddIf(!options.resource_version.empty(), "resourceVersion", options.resource_version)
      .AddIf(options.allow_bookmarks, "allowWatchBookmarks", "true")
      .AddIf(!options.label_selector.empty(), "labelSelector", options.label_selector)
      .AddIf(!options.field_selector.empty(), "fieldSelector", options.field_selector)
      .AddIf(options.timeout_seconds > 0, "timeoutSeconds",
             std::to_string(options.timeout_seconds));
  const std::string target = query.Take();
  if (Status allowed = CheckAccess(*self, http::verb::get, target); !allowed.ok()) {
    co_return allowed.error();
  }
  const std::string what = "watch " + target;
  const auto effective = self->EffectiveTimeout(options.connect_timeout);
  const SteadyTime deadline = std::chrono::steady_clock::now() + effective;
  if (Status throttled = co_await Throttle(self, deadline); !throttled.ok()) {
    co_return throttled.error();
  }
  auto connected = co_await Connect(self, deadline);
  if (!connected.ok()) {
    Error error = std::move(connected).error();
    error.message = what + ": " + error.message;
    co_return error;
  }
  auto impl = std::make_shared<kube::Watch::Impl>();
  impl->client = self;
  impl->conn = std::move(connected).value();
  impl->what = what;
  impl->idle_timeout = options.idle_timeout.count() > 0 ? options.idle_timeout
                       : options.timeout_seconds > 0
                           ? std::chrono::milliseconds((options.timeout_seconds + 30) * 1000)
                           : std::chrono::milliseconds(10 * 60 * 1000);
  self->requests.fetch_add(1, std::memory_order_relaxed);

  const auto req = self->BuildRequest(http::verb::get, target, {}, {});
  Connection& conn = *impl->conn;
  impl->parser.emplace();
  impl->parser->body_limit(std::numeric_limits<uint64_t>::max());
  impl->parser->header_limit(kMaxResponseHeader);

  error_code ec;
  const char* stage = "sending the request";
  conn.Tcp().expires_at(deadline);
  if (conn.tls) {
    std::tie(ec, std::ignore) = co_await http::async_write(*conn.tls, req, kUseTuple);
  } else {
    std::tie(ec, std::ignore) = co_await http::async_write(*conn.plain, req, kUseTuple);
  }
  if (!ec) {
    stage = "reading the response header";
    conn.Tcp().expires_at(deadline);
    if (conn.tls) {
      std::tie(ec, std::ignore) =
          co_await http::async_read_header(*conn.tls, conn.buffer, *impl->parser, kUseTuple);
    } else {
      std::tie(ec, std::ignore) =
          co_await http::async_read_header(*conn.plain, conn.buffer, *impl->parser, kUseTuple);
    }
  }
  if (ec) {
    impl->CloseConnection();
    if (IsTimeout(ec)) {
      co_return MakeError(ErrorCode::kTimeout, what + ": deadline of " + FormatMillis(effective) +
                                                   " exceeded (" + stage + ")");
    }
    co_return MakeError(ErrorCode::kUnavailable, what + ": " + stage + " from " +
                                                     self->endpoint.display + ": " + ec.message());
  }
  const int status = static_cast<int>(impl->parser->get().result_int());
  if (status != 200) {
    // Read the (small) error body as a string and decode the Status.
    http::response_parser<http::string_body> error_parser(std::move(*impl->parser));
    error_parser.body_limit(kMaxResponseBody);
    conn.Tcp().expires_at(deadline);
    if (conn.tls) {
      std::tie(ec, std::ignore) =
          co_await http::async_read(*conn.tls, conn.buffer, error_parser, kUseTuple);
    } else {
      std::tie(ec, std::ignore) =
          co_await http::async_read(*conn.plain, conn.buffer, error_parser, kUseTuple);
    }
    impl->CloseConnection();
    Error error = ErrorFromResponse(status, ec ? std::string_view() : error_parser.get().body());
    co_return error;
  }
  co_return std::unique_ptr<kube::Watch>(new kube::Watch(std::move(impl)));
}

// ---------------------------------------------------------------------------
// Client

Client::Client(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
Client::~Client() = default;

Result<std::shared_ptr<Client>> Client::Create(ClientConfig config, net::any_io_executor executor) {
  auto endpoint = ParseServer(config.server);
  if (!endpoint.ok()) return std::move(endpoint).error();
  std::unique_ptr<ssl::context> ctx;
  if (endpoint->tls) {
    auto made = MakeSslContext(config);
    if (!made.ok()) return std::move(made).error();
    ctx = std::move(made).value();
  }
  if (config.qps > 0 && config.burst < 1) config.burst = 1;
  auto impl = std::make_shared<Impl>(std::move(config), std::move(endpoint).value(),
                                     std::move(executor), std::move(ctx));
  return std::shared_ptr<Client>(new Client(std::move(impl)));
}

const ClientConfig& Client::config() const { return impl_->config; }
const std::string& Client::default_namespace() const { return impl_->config.namespace_; }
net::any_io_executor Client::executor() const { return impl_->executor; }

ClientStats Client::stats() const {
  ClientStats stats;
  stats.requests = impl_->requests.load(std::memory_order_relaxed);
  stats.connections_created = impl_->connections_created.load(std::memory_order_relaxed);
  stats.pipelined_batches = impl_->pipelined_batches.load(std::memory_order_relaxed);
  stats.retries = impl_->retries.load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(impl_->pool_mu);
  stats.open_connections = impl_->open;
  stats.idle_connections = impl_->idle.size();
  return stats;
}

net::awaitable<Result<std::string>> Client::Get(ResourceRef resource, std::string ns,
                                                std::string name, GetOptions options) {
  return Impl::Get(impl_, std::move(resource), std::move(ns), std::move(name), std::move(options));
}

net::awaitable<Result<ListResult>> Client::List(ResourceRef resource, std::string ns,
                                                ListOptions options) {
  return Impl::List(impl_, std::move(resource), std::move(ns), std::move(options));
}

net::awaitable<Result<std::string>> Client::Create(ResourceRef resource, std::string ns,
                                                   std::string body, WriteOptions options) {
  return Impl::Create(impl_, std::move(resource), std::move(ns), std::move(body),
                      std::move(options));
}

net::awaitable<Result<std::string>> Client::Update(ResourceRef resource, std::string ns,
                                                   std::string name, std::string body,
                                                   WriteOptions options) {
  return Impl::Update(impl_, std::move(resource), std::move(ns), std::move(name), std::move(body),
                      std::move(options));
}

net::awaitable<Result<std::string>> Client::UpdateStatus(ResourceRef resource, std::string ns,
                                                         std::string name, std::string body,
                                                         WriteOptions options) {
  options.subresource = "status";
  return Impl::Update(impl_, std::move(resource), std::move(ns), std::move(name), std::move(body),
                      std::move(options));
}

net::awaitable<Result<std::string>> Client::Patch(ResourceRef resource, std::string ns,
                                                  std::string name, PatchType type,
                                                  std::string patch, PatchOptions options) {
  return Impl::Patch(impl_, std::move(resource), std::move(ns), std::move(name), type,
                     std::move(patch), std::move(options));
}

net::awaitable<Status> Client::Delete(ResourceRef resource, std::string ns, std::string name,
                                      DeleteOptions options) {
  return Impl::Delete(impl_, std::move(resource), std::move(ns), std::move(name),
                      std::move(options));
}

net::awaitable<Status> Client::Bind(std::string ns, std::string pod, std::string node,
                                    BindOptions options) {
  return Impl::Bind(impl_, std::move(ns), std::move(pod), std::move(node), std::move(options));
}

net::awaitable<Status> Client::Evict(std::string ns, std::string pod, DeleteOptions options,
                                     std::string api_version) {
  return Impl::Evict(impl_, std::move(ns), std::move(pod), std::move(options),
                     std::move(api_version));
}

net::awaitable<Result<Scale>> Client::GetScale(ResourceRef resource, std::string ns,
                                               std::string name, GetOptions options) {
  return Impl::GetScale(impl_, std::move(resource), std::move(ns), std::move(name),
                        std::move(options));
}

net::awaitable<Result<Scale>> Client::UpdateScale(ResourceRef resource, std::string ns,
                                                  std::string name, int32_t replicas,
                                                  std::string resource_version,
                                                  WriteOptions options) {
  return Impl::UpdateScale(impl_, std::move(resource), std::move(ns), std::move(name), replicas,
                           std::move(resource_version), std::move(options));
}

net::awaitable<Result<std::unique_ptr<kube::Watch>>> Client::Watch(ResourceRef resource,
                                                                   std::string ns,
                                                                   WatchOptions options) {
  return Impl::OpenWatch(impl_, std::move(resource), std::move(ns), std::move(options));
}

net::awaitable<Result<Response>> Client::Request(HttpMethod method, std::string target,
                                                 std::string body, std::string content_type,
                                                 std::chrono::milliseconds timeout) {
  return Impl::Send(impl_, ToVerb(method), std::move(target), std::move(body),
                    std::move(content_type), timeout);
}

// ---------------------------------------------------------------------------
// IoThread

struct IoThread::Impl {
  net::io_context context;
  net::executor_work_guard<net::io_context::executor_type> guard{context.get_executor()};
  std::vector<std::thread> threads;
  std::mutex mu;
  bool stopped = false;
};

IoThread::IoThread(int threads) : impl_(std::make_unique<Impl>()) {
  const int count = std::max(threads, 1);
  for (int i = 0; i < count; ++i) {
    impl_->threads.emplace_back([impl = impl_.get()] { impl->context.run(); });
  }
}

IoThread::~IoThread() { Stop(); }

net::any_io_executor IoThread::executor() const { return impl_->context.get_executor(); }

void IoThread::Stop() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (impl_->stopped) return;
    impl_->stopped = true;
  }
  impl_->guard.reset();
  impl_->context.stop();
  for (auto& thread : impl_->threads) {
    if (thread.joinable()) thread.join();
  }
}

void IoThread::RunVoid(net::awaitable<void> awaitable) {
  COPSE_CHECK(!impl_->context.get_executor().running_in_this_thread())
      << "IoThread::Run called from the IoThread itself (it would deadlock)";
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    COPSE_CHECK(!impl_->stopped) << "IoThread::Run after Stop()";
  }
  std::promise<void> done;
  std::future<void> finished = done.get_future();
  net::co_spawn(impl_->context, std::move(awaitable), [&done](std::exception_ptr error) {
    if (error) {
      done.set_exception(error);
    } else {
      done.set_value();
    }
  });
  finished.get();
}

void IoThread::SpawnVoid(net::awaitable<void> awaitable) {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    COPSE_CHECK(!impl_->stopped) << "IoThread::Spawn after Stop()";
  }
  net::co_spawn(impl_->context, std::move(awaitable), net::detached);
}

}  // namespace copse::kube
