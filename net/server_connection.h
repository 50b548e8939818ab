#pragma once
// Internal to net/ (included by server.cc and server_tls.cc only): a
// connection of net::Server. Each connection is one coroutine on its own
// strand: (TLS handshake,) read a request, run the handler inline, write the
// response (held while the client's next request is already buffered),
// keep-alive; a streamed response turns the connection into a chunked stream
// polled from its StreamBody (a wake-up posts a timer cancel to the strand).
//
// The coroutine is a template over the stream; server.cc instantiates it for
// plain TCP and server_tls.cc for TLS, so that neither translation unit
// compiles both (the server was the slowest file of the build).

#include <pthread.h>

#include <array>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <mutex>
#include <optional>
#include <type_traits>
#include <unordered_map>

#include "net/server.h"

namespace copse::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

// Helpers of the connection coroutine (internal to net/).
inline constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
// After refusing a request whose body is still arriving, the connection
// reads (and drops) what follows for this long before closing: closing with
// unread data sends a reset, which can destroy the refusal before the client
// has read it.
inline constexpr auto kDrainTime = std::chrono::seconds(5);
inline constexpr size_t kDrainBytes = size_t{64} << 20;

using ServerClock = std::chrono::steady_clock;

// Status line and headers of a response with a body. Written by hand: Beast's
// fields (an allocation each) and serializer were several percent of a bind's
// CPU in the API server.
inline void AppendHead(std::string& out, unsigned version, const Response& res,
                       size_t content_length, bool keep_alive) {
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
inline constexpr bool kIsPlain = std::is_same_v<Stream, beast::tcp_stream>;

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
inline std::optional<ProtocolError> ProtocolErrorOf(const beast::error_code& ec,
                                                    size_t body_limit) {
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

inline Response DefaultRender(const ProtocolError& error) {
  return Response(error.status, "text/plain; charset=utf-8", error.message + "\n");
}

// The client certificate of a TLS connection, for every request on it.
struct PeerCertificate {
  bool verified = false;    // against TlsOptions::client_ca_pem in the handshake
  std::string common_name;  // of a verified certificate
  std::string chain_pem;    // what was presented (TlsOptions::request_client_certificate)
};

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
  // The io_context's threads (pthreads: std::thread cannot set a stack size,
  // ServerOptions::thread_stack_bytes).
  std::vector<pthread_t> threads;
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
  asio::awaitable<void> Serve(Stream& stream, bool tls, const PeerCertificate& peer);
  template <typename Stream>
  asio::awaitable<void> Refuse(Stream& stream, unsigned version, const ProtocolError& error,
                               beast::flat_buffer& buffer);
  template <typename Stream>
  asio::awaitable<void> WriteStream(Stream& stream, unsigned version, Response response);
};

template <typename Stream>
asio::awaitable<void> Server::Impl::Serve(Stream& stream, bool tls, const PeerCertificate& peer) {
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
    request.client_certificate = peer.verified;
    request.client_common_name = peer.common_name;
    request.client_certificate_chain = peer.chain_pem;
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
  const auto until = ServerClock::now() + kDrainTime;
  size_t drained = 0;
  std::array<char, 16 * 1024> sink;
  buffer.clear();
  while (drained < kDrainBytes && ServerClock::now() < until && !stopped.load()) {
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

}  // namespace copse::net
