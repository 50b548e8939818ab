#pragma once
// HTTP(S) client of the Kubernetes API: the verbs of client-go's dynamic
// client as C++20 coroutines (boost::asio::awaitable), with request bodies
// and results as JSON text (decode with kube/codec.h).
//
//   IoThread io;                                      // owns an io_context thread
//   auto config = LoadKubeconfig(yaml).value();       // kube/kubeconfig.h
//   auto client = Client::Create(config, io.executor()).value();
//   // from a coroutine:
//   Result<std::string> pod = co_await client->Create(resources::kPods, "default", json);
//   // from plain code:
//   Result<ListResult> pods = io.Run(client->List(resources::kPods, "default"));
//   auto watch = io.Run(client->Watch(resources::kPods, "", {.resource_version = rv}));
//
// Transport: HTTP/1.1 over Boost.Beast, TLS via OpenSSL with CA verification
// (hostname or IP checked against the certificate), bearer-token, basic or
// client-certificate authentication, or an exec credential plugin
// (ClientConfig::exec, kube/exec_credential.h): its token is cached until
// shortly before it expires, and a request or watch answered 401 gets a new
// token and is sent once more. A pool of keep-alive connections (up to
// ClientConfig::max_connections) lets many requests be in flight at once;
// callers beyond the limit wait for a free connection within their deadline.
// A connection the server closed while idle is detected and the request is
// retried on a fresh one. Each watch gets a dedicated connection.
// With ClientConfig::pipelined_connections, writes (POST, PUT, PATCH,
// DELETE) are pipelined: queued writes go out in one batch on a pooled
// connection and their responses are read back in order (one syscall each
// way per batch instead of per request). If a connection fails mid-batch,
// the writes whose response never came fail with kUnavailable (their
// outcome is unknown, as for any request without a response); a batch
// refused by a connection the server had closed while idle is resent.
//
// Deadlines: every request has one (ClientConfig::timeout unless the options
// override it) covering rate limiting, waiting for a connection, connecting,
// the TLS handshake, writing and reading. DNS resolution of non-IP hosts
// relies on the system resolver's own timeout.
//
// Errors (Result/Status): server errors are decoded from the returned Status
// (see ErrorCodeFor in kube/watch.h): kInvalid (400/422), kUnauthorized
// (401), kForbidden, kNotFound, kConflict (409, stale resourceVersion),
// kAlreadyExists (409 AlreadyExists), kGone (410), kTooManyRequests (429,
// e.g. eviction blocked by a PodDisruptionBudget), kUnavailable (5xx). The
// transport adds kTimeout (deadline expired), kUnavailable (refused, reset,
// closed), kTls (handshake or certificate verification failed; the message
// says why, e.g. "certificate verify failed: self-signed certificate"), and
// kInvalid for bad arguments (a missing name or namespace).
//
// GCC 12: a temporary aggregate or lambda built inside a co_await
// expression, e.g. `co_await client->List(r, ns, {.limit = 10})` or
// `co_await f(ResourceRef{...})`, is copied bitwise into the coroutine frame
// and destroyed twice (heap corruption). The option structs below therefore
// have a constructor (no designated initializers); fill a named variable and
// pass that. Pass ResourceRefs as named objects (resources::kPods, ...).
//
// Thread-safety: a Client may be used concurrently from any number of
// coroutines and threads (the executor may be multi-threaded). The io_context
// behind the executor must outlive the Client and every Watch. Arguments are
// taken by value, so the returned awaitables may be stored and awaited later.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <exception>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/result.h"
#include "kube/kubeconfig.h"
#include "kube/object.h"
#include "kube/watch.h"

namespace copse::kube {

struct GetOptions {
  GetOptions() = default;                // not an aggregate: see "GCC 12" above
  std::string resource_version;          // "": most recent; "0": any (served from cache)
  std::chrono::milliseconds timeout{0};  // 0: ClientConfig::timeout
};

struct ListOptions {
  ListOptions() = default;     // not an aggregate: see "GCC 12" above
  std::string label_selector;  // "app=x,tier!=db"
  std::string field_selector;  // "metadata.name=x,spec.nodeName="
  int64_t limit = 0;           // page size; 0: everything in one response
  std::string continue_token;  // ListResult::continue_token of the previous page
  std::string resource_version;
  std::string resource_version_match;  // "", "NotOlderThan" or "Exact"
  std::chrono::milliseconds timeout{0};
};

// Create and update (PUT). `subresource` applies to updates ("status", "scale").
struct WriteOptions {
  WriteOptions() = default;  // not an aggregate: see "GCC 12" above
  std::string subresource;
  std::string field_manager;
  bool dry_run = false;
  std::chrono::milliseconds timeout{0};
};

enum class PatchType : uint8_t {
  kMerge,           // application/merge-patch+json (RFC 7386)
  kJson,            // application/json-patch+json (RFC 6902)
  kStrategicMerge,  // application/strategic-merge-patch+json (built-in kinds only)
  kApply,           // application/apply-patch+yaml (server-side apply; needs field_manager)
};
std::string_view PatchContentType(PatchType type) noexcept;

struct PatchOptions {
  PatchOptions() = default;  // not an aggregate: see "GCC 12" above
  std::string subresource;   // e.g. "status"
  std::string field_manager;
  bool force = false;  // server-side apply: take ownership of conflicting fields
  bool dry_run = false;
  std::chrono::milliseconds timeout{0};
};

struct DeleteOptions {
  DeleteOptions() = default;  // not an aggregate: see "GCC 12" above
  std::optional<std::string> precondition_uid;
  std::optional<std::string> precondition_resource_version;
  std::optional<std::string> propagation_policy;  // "Orphan", "Background", "Foreground"
  std::optional<int64_t> grace_period_seconds;
  bool dry_run = false;
  std::chrono::milliseconds timeout{0};
};

struct BindOptions {
  BindOptions() = default;  // not an aggregate: see "GCC 12" above
  std::string pod_uid;      // when set, the bind fails (409) unless the pod still has this uid
  std::chrono::milliseconds timeout{0};
};

struct WatchOptions {
  WatchOptions() = default;  // not an aggregate: see "GCC 12" above
  std::string label_selector;
  std::string field_selector;
  std::string resource_version;  // "": start with synthetic ADDED events for every object
  bool allow_bookmarks = true;
  int64_t timeout_seconds = 0;  // server-side stream duration; 0: the server's default
  // Deadline for connecting and receiving the response header; 0: ClientConfig::timeout.
  std::chrono::milliseconds connect_timeout{0};
  // Watch::Next fails with kTimeout when no bytes arrive for this long;
  // 0: timeout_seconds + 30 s when timeout_seconds is set, else 10 minutes.
  std::chrono::milliseconds idle_timeout{0};
};

enum class HttpMethod : uint8_t { kGet, kPost, kPut, kPatch, kDelete };

struct Response {
  int status = 0;
  std::string content_type;
  std::string body;
};

struct ClientStats {
  uint64_t requests = 0;             // HTTP requests sent (retries included, watches included)
  uint64_t connections_created = 0;  // TCP(+TLS) connections established (watches included)
  uint64_t retries = 0;              // requests retried after a stale keep-alive connection
  uint64_t pipelined_batches =
      0;  // batches of pipelined writes sent (ClientConfig::pipelined_connections)
  size_t open_connections = 0;  // pooled connections, idle or busy (watches excluded)
  size_t idle_connections = 0;
};

class Client;

// One watch stream (GET ...?watch=1) on its own connection.
//
// Thread-safety: not thread-safe. Next() and Cancel() must be called from the
// same thread or strand; Cancel() may be called while Next() is suspended.
// Destroying the Watch cancels it.
class Watch {
 public:
  ~Watch();
  Watch(const Watch&) = delete;
  Watch& operator=(const Watch&) = delete;

  // Waits for the next event and stores it in `event` (strings are reused).
  // Returns true for an event, false when the stream ended cleanly (the
  // server's timeout, ApiServer::CloseWatches) or was cancelled: resume from
  // the last resourceVersion seen. Errors: kGone (an ERROR event with 410
  // Expired: relist), other ERROR events mapped from their Status code,
  // kTimeout (nothing received within idle_timeout), kUnavailable (the
  // connection broke), kInternal (malformed data). After an error or the end
  // of the stream, further calls return the same outcome.
  // `event` must stay alive until the awaitable completes.
  boost::asio::awaitable<Result<bool>> Next(WatchEvent& event);

  // The batched form for hot paths: waits for at least one event, then
  // returns how many events it stored in events[0..n) (at most max_events;
  // every event already received is included, elements are reused and the
  // vector only grows). 0 means the stream ended cleanly or was cancelled.
  // An error that follows decoded events is returned by the next call.
  boost::asio::awaitable<Result<size_t>> NextBatch(std::vector<WatchEvent>& events,
                                                   size_t max_events = 1024);

  // Ends the stream: a pending or later Next() returns false. Idempotent.
  void Cancel();

 private:
  friend class Client;
  struct Impl;
  explicit Watch(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

class Client {
 public:
  // Validates the configuration (server URL, PEM material); errors are kInvalid.
  // I/O objects are created on `executor`.
  static Result<std::shared_ptr<Client>> Create(ClientConfig config,
                                                boost::asio::any_io_executor executor);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  const ClientConfig& config() const;
  const std::string& default_namespace() const;  // ClientConfig::namespace_
  boost::asio::any_io_executor executor() const;
  ClientStats stats() const;

  // `ns` is ignored for cluster-scoped resources and required for namespaced
  // ones (except List and Watch, where "" means all namespaces). Bodies and
  // results are JSON objects as text.
  boost::asio::awaitable<Result<std::string>> Get(ResourceRef resource, std::string ns,
                                                  std::string name, GetOptions options = {});
  boost::asio::awaitable<Result<ListResult>> List(ResourceRef resource, std::string ns,
                                                  ListOptions options = {});
  boost::asio::awaitable<Result<std::string>> Create(ResourceRef resource, std::string ns,
                                                     std::string body, WriteOptions options = {});
  // PUT; kConflict when body's metadata.resourceVersion is stale.
  boost::asio::awaitable<Result<std::string>> Update(ResourceRef resource, std::string ns,
                                                     std::string name, std::string body,
                                                     WriteOptions options = {});
  // PUT .../status.
  boost::asio::awaitable<Result<std::string>> UpdateStatus(ResourceRef resource, std::string ns,
                                                           std::string name, std::string body,
                                                           WriteOptions options = {});
  boost::asio::awaitable<Result<std::string>> Patch(ResourceRef resource, std::string ns,
                                                    std::string name, PatchType type,
                                                    std::string patch, PatchOptions options = {});
  // Succeeds for 200 (deleted, or deletion started for objects with
  // finalizers or a grace period) and 202. A failed precondition is kConflict.
  boost::asio::awaitable<Status> Delete(ResourceRef resource, std::string ns, std::string name,
                                        DeleteOptions options = {});

  // POST pods/NAME/binding with a v1 Binding to `node`.
  boost::asio::awaitable<Status> Bind(std::string ns, std::string pod, std::string node,
                                      BindOptions options = {});
  // POST pods/NAME/eviction with an Eviction of `api_version` (what the
  // server takes: Discovery::EvictionApiVersion; v1.20 takes only
  // policy/v1beta1); kTooManyRequests when a PodDisruptionBudget blocks it.
  boost::asio::awaitable<Status> Evict(std::string ns, std::string pod, DeleteOptions options = {},
                                       std::string api_version = "policy/v1");
  // The scale subresource (autoscaling/v1 Scale).
  boost::asio::awaitable<Result<Scale>> GetScale(ResourceRef resource, std::string ns,
                                                 std::string name, GetOptions options = {});
  // Sets spec.replicas; a non-empty resource_version makes it conditional (kConflict if stale).
  boost::asio::awaitable<Result<Scale>> UpdateScale(ResourceRef resource, std::string ns,
                                                    std::string name, int32_t replicas,
                                                    std::string resource_version = {},
                                                    WriteOptions options = {});

  // Opens a watch; the response header has been received when this completes.
  // A 410 for a too-old resourceVersion is kGone (here or as the first event).
  boost::asio::awaitable<Result<std::unique_ptr<kube::Watch>>> Watch(ResourceRef resource,
                                                                     std::string ns,
                                                                     WatchOptions options = {});

  // Any request: `target` is the path and query below the server URL
  // ("/version", "/api/v1/pods?limit=1"). Returns the response for every HTTP
  // status; only transport failures are errors. `timeout` 0: the default.
  boost::asio::awaitable<Result<Response>> Request(HttpMethod method, std::string target,
                                                   std::string body = {},
                                                   std::string content_type = {},
                                                   std::chrono::milliseconds timeout = {});

 private:
  friend class Watch;
  struct Impl;
  explicit Client(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

// An io_context run by its own threads, for callers that are not coroutines
// (tests, tools, benchmarks) and as the executor of clients and informers.
//
// Thread-safety: executor() and Run() may be called from any thread except the
// IoThread's own threads (Run would deadlock there; it aborts instead).
// Stop() and the destructor join the threads; objects using the executor
// (clients, watches, informers) must be destroyed before the IoThread.
class IoThread {
 public:
  explicit IoThread(int threads = 1);
  ~IoThread();
  IoThread(const IoThread&) = delete;
  IoThread& operator=(const IoThread&) = delete;

  boost::asio::any_io_executor executor() const;

  // Runs the awaitable on the io_context and blocks until it completes.
  // Exceptions thrown by the awaitable are rethrown here.
  template <typename T>
  T Run(boost::asio::awaitable<T> awaitable) {
    std::optional<T> result;
    RunVoid(StoreResult(std::move(awaitable), &result));
    return std::move(*result);
  }
  void Run(boost::asio::awaitable<void> awaitable) { RunVoid(std::move(awaitable)); }

  // Starts the awaitable on the io_context without waiting; the future gets
  // its result (or exception). Lets plain code keep many requests in flight.
  template <typename T>
  std::future<T> Spawn(boost::asio::awaitable<T> awaitable) {
    auto promise = std::make_shared<std::promise<T>>();
    std::future<T> future = promise->get_future();
    SpawnVoid(Fulfil(std::move(awaitable), std::move(promise)));
    return future;
  }

  // Stops the io_context and joins its threads; pending operations are
  // abandoned. Idempotent.
  void Stop();

 private:
  template <typename T>
  static boost::asio::awaitable<void> StoreResult(boost::asio::awaitable<T> awaitable,
                                                  std::optional<T>* out) {
    out->emplace(co_await std::move(awaitable));
  }
  template <typename T>
  static boost::asio::awaitable<void> Fulfil(boost::asio::awaitable<T> awaitable,
                                             std::shared_ptr<std::promise<T>> promise) {
    try {
      if constexpr (std::is_void_v<T>) {
        co_await std::move(awaitable);
        promise->set_value();
      } else {
        promise->set_value(co_await std::move(awaitable));
      }
    } catch (...) {
      promise->set_exception(std::current_exception());
    }
  }
  void RunVoid(boost::asio::awaitable<void> awaitable);
  void SpawnVoid(boost::asio::awaitable<void> awaitable);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace copse::kube
