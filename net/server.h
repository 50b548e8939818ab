#pragma once
// The HTTP/1.1 server skeleton behind every copse endpoint (the embedded API
// server, the Grove webhook, the scheduler's ops server): listeners (plain or
// TLS), one coroutine per connection, deadlines, a request body limit,
// keep-alive, and a handler function from Request to Response.
//
//   net::ServerOptions options;
//   options.listeners = {{.port = 0, .tls = true}};
//   options.tls.cert_pem = cert.cert_pem;  ...
//   auto server = net::Server::Start(options, [](const net::Request& r) {
//     return net::Response{...};
//   });
//
// Per connection, in order (one strand each):
//   1. TLS handshake (within handshake_timeout) when the listener is TLS;
//      with tls.client_ca_pem set, a client certificate is asked for and
//      verified against it (required with tls.require_client_certificate);
//      with tls.request_client_certificate, asked for and passed on unverified.
//   2. Read a request (within read_timeout, 0: no deadline) through a read
//      buffer of read_buffer_bytes. A body above max_body_bytes is refused
//      while reading: as soon as its Content-Length (or the chunks read so
//      far) exceed the limit the connection answers 413 and closes, without
//      reading the rest. A header above 8 KiB gets 431, a malformed request
//      400 (bodies from ServerOptions::render_error).
//   3. Run the handler inline (it should not block for long: it holds the
//      connection's strand, not the others').
//   4. Write the response (within write_timeout, 0: none). When the head of
//      the client's next request is already buffered (a pipelining client),
//      the response is held, up to max_held_bytes, and the batch goes out in
//      one write. HEAD responses carry Content-Length but no body.
//   5. Keep-alive: back to 2 unless the request asked to close.
// A Response with `stream` set turns the connection into a chunked stream
// (watches): see StreamBody. Streams end the connection.
//
// Thread-safety: Start/Stop/CloseStreams may be called from any thread; the
// handler runs concurrently on the server's threads and must be thread-safe.
// Beast and Asio stay in server.cc.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"

namespace copse::net {

// A request as the handler sees it. The views point into the connection's
// buffers and are valid until the handler returns.
struct Request {
  std::string_view method;  // "GET", "POST", ...
  std::string_view target;  // "/api/v1/pods?watch=1"
  std::string_view host;    // Host header
  std::string_view accept;
  std::string_view content_type;
  std::string_view authorization;
  std::string_view body;
  unsigned version = 11;  // 10 or 11
  bool keep_alive = true;
  bool tls = false;
  // The TLS client presented a certificate that verified against
  // TlsOptions::client_ca_pem (it authenticates the connection).
  bool client_certificate = false;
  // Subject CN of the client certificate the TLS handshake verified ("" when none).
  std::string_view client_common_name;
  // The certificates the client presented (PEM, its own first, then any
  // intermediates it sent), verified or not; empty when it sent none or the
  // listener asks for none (TlsOptions). For handlers that verify clients
  // against CAs of their own (net/cert.h VerifyClientCertificate).
  std::string_view client_certificate_chain;
};

// A response body written over time (a watch): the server writes its status
// line and headers with Transfer-Encoding: chunked, then polls the body for
// chunks until it is done, the connection breaks or the server stops.
//
// Call order, all on the connection's strand except Close and the wake-up:
// Attach(wake) once, Poll() repeatedly, Detach() once (when the stream ends
// or the server stops; after it returns `wake` must never be called again).
class StreamBody {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  struct Step {
    bool more = false;  // poll again at once (more data is ready)
    bool done = false;  // end the stream after what this poll appended
    // After writing what this poll appended, do not poll again for this long;
    // wake-ups meanwhile are remembered (a stream that has just written lets
    // the next events gather).
    std::chrono::microseconds quiet_for{0};
    // Poll at this time even if nothing wakes the stream (timeouts, bookmarks).
    TimePoint poll_at = TimePoint::max();
  };
  virtual ~StreamBody() = default;
  // `wake` (callable from any thread) asks for a Poll as soon as the stream is idle.
  virtual void Attach(std::function<void()> wake) = 0;
  virtual void Detach() = 0;
  // Appends the next chunk (possibly nothing) to `out`.
  virtual Step Poll(std::string& out) = 0;
  // Asks the stream to end (it should wake and answer done); any thread.
  virtual void Close() = 0;
};

struct Response {
  Response() = default;
  Response(int status_code, std::string type, std::string text)
      : status(status_code), content_type(std::move(type)), body(std::move(text)) {}

  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // Further headers ("Allow", ...). Content-Type, Content-Length,
  // Cache-Control: no-cache, private and Connection are written by the server.
  std::vector<std::pair<std::string, std::string>> headers;
  std::shared_ptr<StreamBody> stream;  // set: a chunked stream instead of `body`
};

using Handler = std::function<Response(const Request&)>;

// A request the server refused before it reached the handler.
struct ProtocolError {
  int status = 400;     // 400, 413 or 431
  std::string reason;   // "BadRequest", "RequestEntityTooLarge", "RequestHeaderFieldsTooLarge"
  std::string message;  // e.g. "Request entity too large: limit is 3145728"
};
// Renders a refused request (the API server answers a kube Status). Default:
// the message as text/plain.
using ErrorRenderer = std::function<Response(const ProtocolError&)>;

struct ListenerOptions {
  uint16_t port = 0;  // 0: pick a free port
  bool tls = false;
};

struct TlsOptions {
  TlsOptions() = default;
  std::string cert_pem;  // serving certificate chain
  std::string key_pem;
  // Non-empty: ask clients for a certificate and verify it against these CAs;
  // a certificate that does not verify fails the handshake.
  std::string client_ca_pem;
  bool require_client_certificate = false;  // with client_ca_pem: none fails the handshake
  // Without client_ca_pem: ask clients for a certificate but accept any, or
  // none, in the handshake (Go's tls.RequestClientCert); the handler gets
  // what was presented in Request::client_certificate_chain and decides
  // (CAs that change while the server runs, kube's delegated authentication).
  bool request_client_certificate = false;
};

struct ServerOptions {
  ServerOptions() = default;
  std::string address = "127.0.0.1";
  std::vector<ListenerOptions> listeners;
  TlsOptions tls;  // needed when a listener is TLS
  int threads = 1;
  // Stack of each of the server's threads, which run the handler. A handler
  // may recurse once per level of a request's JSON (merges, patches,
  // validation, printing), and bodies nest up to 10,000 levels
  // (kMaxJsonDepth, core/json_text.h): the default leaves a wide margin for
  // that (ASan's larger frames included). Only the pages a request touches
  // are ever committed.
  static constexpr size_t kDefaultThreadStackBytes = size_t{256} << 20;
  size_t thread_stack_bytes = kDefaultThreadStackBytes;
  size_t max_body_bytes = size_t{3} << 20;
  std::chrono::milliseconds handshake_timeout{30000};
  std::chrono::milliseconds read_timeout{0};   // per request, waiting included; 0: none
  std::chrono::milliseconds write_timeout{0};  // per write; 0: none
  // Beast reads only as much as the buffer's spare capacity (at least 512
  // bytes): without room, a pipelining client's batch costs a read per
  // request or two, and its responses go out in as many writes.
  size_t read_buffer_bytes = 16 * 1024;
  size_t max_held_bytes = 256 * 1024;
  ErrorRenderer render_error;  // null: text/plain
};

class Server {
 public:
  // Binds every listener and starts the threads. kInvalid for a bad address
  // or TLS material, kUnavailable when a port cannot be bound.
  static Result<std::unique_ptr<Server>> Start(ServerOptions options, Handler handler);
  ~Server();  // Stop()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Closes the listeners and every connection (streams are detached first),
  // joins the threads; idempotent.
  void Stop();
  // Asks every open stream to end (StreamBody::Close).
  void CloseStreams();

  // Serves `cert_pem` (a chain) with `key_pem` from the next TLS handshake
  // on; open connections keep the certificate they began with (a rotated
  // webhook certificate). kInvalid for bad or mismatched PEM, or a server
  // without TLS; the certificate served before stays then.
  Status SetCertificate(const std::string& cert_pem, const std::string& key_pem);

  // The bound port of options.listeners[i].
  uint16_t port(size_t listener = 0) const;
  const std::string& address() const;

 private:
  struct Impl;
  explicit Server(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace copse::net
