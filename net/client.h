#pragma once
// HttpClient: the HTTP/1.1 client transport under kube::Client and the
// embedded API server's admission webhook calls. Requests and responses are
// text; what a request means (Kubernetes verbs, credentials, rate limits,
// Status decoding) is the caller's business.
//
// Transport: Boost.Beast over TCP or TLS (OpenSSL, CA verification with the
// hostname or IP checked against the certificate, optional client
// certificate). A pool of keep-alive connections (up to max_connections)
// lets many requests be in flight at once; callers beyond the limit wait for
// a free connection within their deadline. A connection the server closed
// while idle is detected and the request is retried on a fresh one.
// With pipelined_connections, writes (every method but GET and HEAD) are
// pipelined: queued writes go out in one batch on a pooled connection and
// their responses are read back in order (one syscall each way per batch
// instead of per request). If a connection fails mid-batch, the writes whose
// response never came fail with kUnavailable (their outcome is unknown, as
// for any request without a response); a batch refused by a connection the
// server had closed while idle is resent.
// Open() starts a request whose response body is read as it arrives (a
// watch) on a connection of its own.
//
// Errors: kTimeout (the request's deadline expired; the message says at
// which stage), kUnavailable (refused, reset, closed), kTls (handshake or
// certificate verification failed; the message says why, e.g.
// "certificate verify failed: self-signed certificate"). Messages start
// with the request's label ("GET /api/v1/pods: ...").
//
// GCC 12: an aggregate built inside a co_await expression is copied bitwise
// into the coroutine frame (heap corruption); fill a named ClientRequest and
// pass that.
//
// Thread-safety: an HttpClient may be used concurrently from any number of
// coroutines and threads (the executor may be multi-threaded). The
// io_context behind the executor must outlive the client and every stream.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace copse::net {

struct ClientOptions {
  ClientOptions() = default;
  // "https://host:port" or "http://host:port", optionally with a path prefix
  // ("https://proxy/k8s/cluster1") that is put before every target. IPv6
  // hosts in brackets.
  std::string server;
  // TLS. An empty ca_pem with verification on uses the system trust store.
  std::string ca_pem;
  std::string client_cert_pem;  // chain allowed
  std::string client_key_pem;
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;  // overrides SNI and the name the certificate must carry
  size_t max_connections = 16;  // pooled keep-alive connections (streams not counted); 0: unlimited
  std::chrono::seconds idle_connection_timeout{60};
  size_t pipelined_connections = 0;  // 0: off
  std::string user_agent = "copse";
};

struct ClientRequest {
  ClientRequest() = default;  // not an aggregate: see "GCC 12" above
  std::string method = "GET";
  std::string target;  // path and query below the server URL: "/api/v1/pods?limit=1"
  std::string body;
  // Sent when non-empty, or as "application/json" when the body is.
  std::string content_type;
  std::string accept = "application/json";
  std::string authorization;  // the Authorization header; "" sends none
  // Covers waiting for a connection, connecting, the TLS handshake, writing
  // and reading. `timeout` is what the deadline was made of (for messages).
  std::chrono::steady_clock::time_point deadline;
  std::chrono::milliseconds timeout{0};
  std::string label;  // error message prefix; "": "<method> <target>"
};

struct ClientResponse {
  int status = 0;
  std::string content_type;
  std::string body;
};

struct TransportStats {
  uint64_t requests = 0;             // requests sent (retries and streams included)
  uint64_t connections_created = 0;  // TCP(+TLS) connections established (streams included)
  uint64_t retries = 0;              // requests retried after a stale keep-alive connection
  uint64_t pipelined_batches = 0;    // batches of pipelined writes sent
  size_t open_connections = 0;       // pooled connections, idle or busy (streams excluded)
  size_t idle_connections = 0;
};

// A response whose body is read as it arrives, on a connection of its own.
//
// Thread-safety: not thread-safe; ReadSome and Cancel from the same thread or
// strand (Cancel may be called while ReadSome is suspended). Destroying it
// closes the connection. Cancel, Close and the destructor act on the
// connection's strand, so they may be called from any thread.
class ResponseStream {
 public:
  ~ResponseStream();
  ResponseStream(const ResponseStream&) = delete;
  ResponseStream& operator=(const ResponseStream&) = delete;

  struct ReadResult {
    size_t bytes = 0;            // placed in the caller's buffer, also with `end` or `error`
    bool end = false;            // the body ended cleanly (nothing more will come)
    std::optional<Error> error;  // kTimeout (no data for idle_timeout) or kUnavailable
  };
  // Reads more of the body (chunked encoding removed) into [data, data + size).
  // After Cancel() the read ends with an error (the caller knows it cancelled).
  boost::asio::awaitable<ReadResult> ReadSome(char* data, size_t size,
                                              std::chrono::milliseconds idle_timeout);
  // Aborts a pending or later ReadSome. Idempotent.
  void Cancel();
  // Closes the connection (on its strand: it is closed once the io threads
  // run the posted close).
  void Close();

  struct State;  // opaque

 private:
  friend class HttpClient;
  explicit ResponseStream(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;
};

// Open()'s outcome: a 200 response as a stream, or any other status with its
// (whole) body and the connection closed.
struct OpenedStream {
  int status = 0;
  std::string error_body;                  // status != 200
  std::unique_ptr<ResponseStream> stream;  // status == 200
};

class HttpClient {
 public:
  // Validates the server URL and the PEM material; errors are kInvalid with
  // messages naming what is wrong ("server \"x\": must start with https://
  // or http://", "certificate authority: not a valid PEM certificate: ...").
  static Result<std::shared_ptr<HttpClient>> Create(ClientOptions options,
                                                    boost::asio::any_io_executor executor);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // One exchange on a pooled connection (pipelined for writes when enabled).
  // Every HTTP status is a response; only transport failures are errors.
  boost::asio::awaitable<Result<ClientResponse>> Send(ClientRequest request);
  // A request on a connection of its own whose response body is streamed.
  boost::asio::awaitable<Result<OpenedStream>> Open(ClientRequest request);

  const ClientOptions& options() const;
  // "https://host:port" as written in the server URL.
  const std::string& display() const;
  boost::asio::any_io_executor executor() const;
  TransportStats stats() const;

  struct Impl;  // opaque

 private:
  explicit HttpClient(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace copse::net
