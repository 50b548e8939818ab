#include "kube/client.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fstream>
#include <future>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "core/check.h"
#include "core/json_text.h"
#include "core/log.h"
#include "kube/api_access.h"
#include "kube/exec_credential.h"
#include "kube/rate_limiter.h"
#include "net/client.h"

namespace copse::kube {
namespace {

namespace asio = boost::asio;
using SteadyTime = std::chrono::steady_clock::time_point;

constexpr auto kUseTuple = asio::as_tuple(asio::use_awaitable);
constexpr size_t kWatchReadChunk = 64 * 1024;

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

std::string ToMethod(HttpMethod method) {
  switch (method) {
    case HttpMethod::kGet:
      return "GET";
    case HttpMethod::kPost:
      return "POST";
    case HttpMethod::kPut:
      return "PUT";
    case HttpMethod::kPatch:
      return "PATCH";
    case HttpMethod::kDelete:
      return "DELETE";
  }
  return "GET";
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
  Impl(ClientConfig cfg, std::shared_ptr<net::HttpClient> http)
      : config(std::move(cfg)), transport(std::move(http)), limiter(config.qps, config.burst) {
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

  std::chrono::milliseconds EffectiveTimeout(std::chrono::milliseconds timeout) const {
    return timeout.count() > 0 ? timeout : config.timeout;
  }

  // Waits for the rate limiter within the deadline.
  static asio::awaitable<Status> Throttle(std::shared_ptr<Impl> self, SteadyTime deadline) {
    const auto wait = self->limiter.Reserve();
    if (wait <= Clock::Duration::zero()) co_return Status::Ok();
    if (std::chrono::steady_clock::now() + wait > deadline) {
      self->limiter.Cancel();
      co_return MakeError(ErrorCode::kTimeout, "client rate limiter: waiting " +
                                                   FormatMillis(wait) +
                                                   " would exceed the request deadline");
    }
    asio::steady_timer timer(co_await asio::this_coro::executor,
                             std::chrono::duration_cast<std::chrono::steady_clock::duration>(wait));
    auto [ec] = co_await timer.async_wait(kUseTuple);
    (void)ec;  // the timer is never cancelled; expiry is the only outcome
    co_return Status::Ok();
  }

  // The component's API access table (ClientConfig::api_access), checked
  // before anything is sent. A refusal is a developer's mistake: it is also
  // printed, since callers such as informers only retry.
  static Status CheckAccess(const Impl& self, std::string_view method, std::string_view target) {
    if (self.config.api_access == nullptr) return Status::Ok();
    Status allowed = CheckApiAccess(*self.config.api_access, method, target);
    if (!allowed.ok()) LogError("client", allowed.error().message);
    return allowed;
  }

  // Runs `attempt` with a fresh exec plugin token; on a 401 (`unauthorized`
  // tells) drops that token and runs it once more with a new one.
  // The callables are borrowed from the caller's frame (GCC 12: no lambdas
  // copied into a coroutine inside a co_await expression).
  template <typename T, typename Attempt, typename IsUnauthorized>
  static asio::awaitable<Result<T>> WithCredentials(std::shared_ptr<Impl> self, std::string what,
                                                    Attempt& attempt,
                                                    IsUnauthorized& unauthorized) {
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

  template <typename T>
  static asio::awaitable<Result<T>> Failed(Error error) {
    co_return error;
  }

  // The one path of every request but watches: the API access table, then
  // (with an exec plugin) its token, then SendOnce. A plain function, not a
  // coroutine: without an exec plugin the request costs no extra coroutine
  // frame. Pipelined writes take this path too (the transport pipelines).
  static asio::awaitable<Result<Response>> Send(std::shared_ptr<Impl> self, std::string method,
                                                std::string target, std::string body,
                                                std::string content_type,
                                                std::chrono::milliseconds timeout) {
    // Before anything runs or is sent, a plugin included.
    if (Status allowed = CheckAccess(*self, method, target); !allowed.ok()) {
      return Failed<Response>(allowed.error());
    }
    if (!self->exec) {
      return SendOnce(std::move(self), std::move(method), std::move(target), std::move(body),
                      std::move(content_type), timeout);
    }
    return SendWithExecCredentials(std::move(self), std::move(method), std::move(target),
                                   std::move(body), std::move(content_type), timeout);
  }

  static asio::awaitable<Result<Response>> SendWithExecCredentials(
      std::shared_ptr<Impl> self, std::string method, std::string target, std::string body,
      std::string content_type, std::chrono::milliseconds timeout) {
    // A retry needs the body again: kept here, copied into each attempt.
    auto attempt = [&]() { return SendOnce(self, method, target, body, content_type, timeout); };
    auto unauthorized = [](const Result<Response>& r) { return r.ok() && r->status == 401; };
    std::string what = method + " " + target;
    co_return co_await WithCredentials<Response>(self, std::move(what), attempt, unauthorized);
  }

  // One request, already allowed (see Send): the rate limit, the
  // credentials, then the transport (a pooled, possibly pipelined exchange).
  static asio::awaitable<Result<Response>> SendOnce(std::shared_ptr<Impl> self, std::string method,
                                                    std::string target, std::string body,
                                                    std::string content_type,
                                                    std::chrono::milliseconds timeout) {
    const auto effective = self->EffectiveTimeout(timeout);
    const SteadyTime deadline = std::chrono::steady_clock::now() + effective;
    if (Status throttled = co_await Throttle(self, deadline); !throttled.ok()) {
      Error error = throttled.error();
      error.message = method + " " + target + ": " + error.message;
      co_return error;
    }
    net::ClientRequest request;
    request.method = std::move(method);
    request.target = std::move(target);
    request.body = std::move(body);
    request.content_type = std::move(content_type);
    request.authorization = self->AuthorizationHeader();
    request.deadline = deadline;
    request.timeout = effective;
    auto response = co_await self->transport->Send(std::move(request));
    if (!response.ok()) co_return std::move(response).error();
    co_return Response{response->status, std::move(response->content_type),
                       std::move(response->body)};
  }

  // Send + Kubernetes error decoding: a 2xx body, or the Status as an Error.
  // `method` is a literal ("GET", ...).
  static asio::awaitable<Result<std::string>> Call(std::shared_ptr<Impl> self, const char* method,
                                                   std::string target, std::string body,
                                                   std::string content_type,
                                                   std::chrono::milliseconds timeout) {
    auto response = co_await Send(self, method, std::move(target), std::move(body),
                                  std::move(content_type), timeout);
    if (!response.ok()) co_return std::move(response).error();
    if (response->status < 200 || response->status > 299) {
      co_return ErrorFromResponse(response->status, response->body);
    }
    co_return std::move(response->body);
  }

  // --- verbs --------------------------------------------------------------

  static asio::awaitable<Result<std::string>> Get(std::shared_ptr<Impl> self, ResourceRef resource,
                                                  std::string ns, std::string name,
                                                  GetOptions options) {
    if (Status s = ValidateNames(resource, ns, name, true, true); !s.ok()) co_return s.error();
    Query query(resource.Path(ns, name));
    query.AddIf(!options.resource_version.empty(), "resourceVersion", options.resource_version);
    co_return co_await Call(self, "GET", query.Take(), {}, {}, options.timeout);
  }

  static asio::awaitable<Result<ListResult>> List(std::shared_ptr<Impl> self, ResourceRef resource,
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
    auto body = co_await Call(self, "GET", query.Take(), {}, {}, options.timeout);
    if (!body.ok()) co_return std::move(body).error();
    co_return DecodeList(std::move(body).value());
  }

  static void AddWriteQuery(Query& query, const std::string& field_manager, bool dry_run) {
    query.AddIf(!field_manager.empty(), "fieldManager", field_manager)
        .AddIf(dry_run, "dryRun", "All");
  }

  static asio::awaitable<Result<std::string>> Create(std::shared_ptr<Impl> self,
                                                     ResourceRef resource, std::string ns,
                                                     std::string body, WriteOptions options) {
    if (Status s = ValidateNames(resource, ns, {}, false, true); !s.ok()) co_return s.error();
    Query query(resource.Path(ns));
    AddWriteQuery(query, options.field_manager, options.dry_run);
    co_return co_await Call(self, "POST", query.Take(), std::move(body), "application/json",
                            options.timeout);
  }

  static asio::awaitable<Result<std::string>> Update(std::shared_ptr<Impl> self,
                                                     ResourceRef resource, std::string ns,
                                                     std::string name, std::string body,
                                                     WriteOptions options) {
    if (Status s = ValidateNames(resource, ns, name, true, true); !s.ok()) co_return s.error();
    if (Status s = ValidateSegment("subresource", options.subresource, false); !s.ok()) {
      co_return s.error();
    }
    Query query(resource.Path(ns, name, options.subresource));
    AddWriteQuery(query, options.field_manager, options.dry_run);
    co_return co_await Call(self, "PUT", query.Take(), std::move(body), "application/json",
                            options.timeout);
  }

  static asio::awaitable<Result<std::string>> Patch(std::shared_ptr<Impl> self,
                                                    ResourceRef resource, std::string ns,
                                                    std::string name, PatchType type,
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
    co_return co_await Call(self, "PATCH", query.Take(), std::move(patch),
                            std::string(PatchContentType(type)), options.timeout);
  }

  static asio::awaitable<Status> Delete(std::shared_ptr<Impl> self, ResourceRef resource,
                                        std::string ns, std::string name, DeleteOptions options) {
    if (Status s = ValidateNames(resource, ns, name, true, true); !s.ok()) co_return s;
    auto result = co_await Call(self, "DELETE", resource.Path(ns, name), DeleteOptionsJson(options),
                                "application/json", options.timeout);
    if (!result.ok()) co_return std::move(result).error();
    co_return Status::Ok();
  }

  static asio::awaitable<Status> Bind(std::shared_ptr<Impl> self, std::string ns, std::string pod,
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
    auto result = co_await Call(self, "POST", resources::kPods.Path(ns, pod, "binding"),
                                std::move(body), "application/json", options.timeout);
    if (!result.ok()) co_return std::move(result).error();
    co_return Status::Ok();
  }

  static asio::awaitable<Status> Evict(std::shared_ptr<Impl> self, std::string ns, std::string pod,
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
    auto result = co_await Call(self, "POST", resources::kPods.Path(ns, pod, "eviction"),
                                std::move(body), "application/json", options.timeout);
    if (!result.ok()) co_return std::move(result).error();
    co_return Status::Ok();
  }

  static asio::awaitable<Result<Scale>> GetScale(std::shared_ptr<Impl> self, ResourceRef resource,
                                                 std::string ns, std::string name,
                                                 GetOptions options) {
    if (Status s = ValidateNames(resource, ns, name, true, true); !s.ok()) co_return s.error();
    Query query(resource.Path(ns, name, "scale"));
    query.AddIf(!options.resource_version.empty(), "resourceVersion", options.resource_version);
    auto body = co_await Call(self, "GET", query.Take(), {}, {}, options.timeout);
    if (!body.ok()) co_return std::move(body).error();
    co_return DecodeScale(*body);
  }

  static asio::awaitable<Result<Scale>> UpdateScale(std::shared_ptr<Impl> self,
                                                    ResourceRef resource, std::string ns,
                                                    std::string name, int32_t replicas,
                                                    std::string resource_version,
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
    auto result = co_await Call(self, "PUT", query.Take(), std::move(body), "application/json",
                                options.timeout);
    if (!result.ok()) co_return std::move(result).error();
    co_return DecodeScale(*result);
  }

  // Watches: the access check first, then (with an exec plugin) its token
  // and one retry after a 401, then OpenWatchOnce.
  static asio::awaitable<Result<std::unique_ptr<kube::Watch>>> OpenWatch(std::shared_ptr<Impl> self,
                                                                         ResourceRef resource,
                                                                         std::string ns,
                                                                         WatchOptions options) {
    auto target = WatchTarget(*self, resource, ns, options);
    if (!target.ok()) return Failed<std::unique_ptr<kube::Watch>>(std::move(target).error());
    if (!self->exec) {
      return OpenWatchOnce(std::move(self), std::move(target).value(), std::move(options));
    }
    return OpenWatchWithExecCredentials(std::move(self), std::move(target).value(),
                                        std::move(options));
  }
  static asio::awaitable<Result<std::unique_ptr<kube::Watch>>> OpenWatchWithExecCredentials(
      std::shared_ptr<Impl> self, std::string target, WatchOptions options) {
    auto attempt = [&]() { return OpenWatchOnce(self, target, options); };
    auto unauthorized = [](const Result<std::unique_ptr<kube::Watch>>& r) {
      return !r.ok() && r.error().code == ErrorCode::kUnauthorized;
    };
    std::string what = "watch " + target;
    co_return co_await WithCredentials<std::unique_ptr<kube::Watch>>(self, std::move(what), attempt,
                                                                     unauthorized);
  }
  // The watch request's target, when the names are valid and the access
  // table allows it.
  static Result<std::string> WatchTarget(const Impl& self, const ResourceRef& resource,
                                         const std::string& ns, const WatchOptions& options);
  static asio::awaitable<Result<std::unique_ptr<kube::Watch>>> OpenWatchOnce(
      std::shared_ptr<Impl> self, std::string target, WatchOptions options);

  ClientConfig config;
  std::shared_ptr<net::HttpClient> transport;
  RateLimiter limiter;

  std::mutex token_mu;
  std::string token;
  SteadyTime token_read_at;
  std::unique_ptr<ExecCredentials> exec;  // config.exec
};

// ---------------------------------------------------------------------------
// Watch

struct Watch::Impl {
  std::unique_ptr<net::ResponseStream> stream;
  WatchEventDecoder decoder;
  std::chrono::milliseconds idle_timeout{0};
  std::string what;  // "watch /api/v1/pods"
  bool ended = false;
  std::optional<Error> failure;

  void CloseConnection() {
    if (stream) stream->Close();
  }

  Error Fail(Error error) {
    failure = error;
    CloseConnection();
    return error;
  }

  // Reads the next piece of the body into the decoder. Errors are recorded
  // with Fail(); a clean end of stream or a cancellation sets `ended`.
  static asio::awaitable<Status> ReadMore(std::shared_ptr<Impl> self) {
    char* data = self->decoder.Prepare(kWatchReadChunk);
    net::ResponseStream::ReadResult read =
        co_await self->stream->ReadSome(data, kWatchReadChunk, self->idle_timeout);
    self->decoder.Commit(read.bytes);
    // Cancelled while reading: deliver what is buffered, then report the end.
    // The socket closes with the stream (a posted cancel may still run).
    if (self->ended) co_return Status::Ok();
    if (read.error) co_return self->Fail(std::move(*read.error));
    if (read.end) {
      // A clean end of stream: what is buffered is still delivered (the final
      // event may lack its newline), then the end is reported.
      self->ended = true;
      self->CloseConnection();
      if (self->decoder.pending_bytes() > 0) self->decoder.Feed("\n");
    }
    co_return Status::Ok();
  }

  static asio::awaitable<Result<bool>> Next(std::shared_ptr<Impl> self, WatchEvent& event) {
    while (true) {
      if (self->failure) co_return *self->failure;
      auto decoded = self->decoder.Next(event);
      if (!decoded.ok()) co_return self->Fail(std::move(decoded).error());
      if (*decoded) co_return true;
      if (self->ended) co_return false;
      if (Status read = co_await ReadMore(self); !read.ok()) co_return read.error();
    }
  }

  static asio::awaitable<Result<size_t>> NextBatch(std::shared_ptr<Impl> self,
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

asio::awaitable<Result<bool>> Watch::Next(WatchEvent& event) { return Impl::Next(impl_, event); }

asio::awaitable<Result<size_t>> Watch::NextBatch(std::vector<WatchEvent>& events,
                                                 size_t max_events) {
  return Impl::NextBatch(impl_, events, max_events);
}

void Watch::Cancel() {
  if (!impl_ || impl_->ended) return;
  impl_->ended = true;
  if (impl_->stream) impl_->stream->Cancel();
}

Result<std::string> Client::Impl::WatchTarget(const Impl& self, const ResourceRef& resource,
                                              const std::string& ns, const WatchOptions& options) {
  if (Status s = ValidateNames(resource, ns, {}, false, false); !s.ok()) return s.error();
  Query query(resource.Path(ns));
  query.Add("watch", "1")
      .AddIf(!options.resource_version.empty(), "resourceVersion", options.resource_version)
      .AddIf(options.allow_bookmarks, "allowWatchBookmarks", "true")
      .AddIf(!options.label_selector.empty(), "labelSelector", options.label_selector)
      .AddIf(!options.field_selector.empty(), "fieldSelector", options.field_selector)
      .AddIf(options.timeout_seconds > 0, "timeoutSeconds",
             std::to_string(options.timeout_seconds));
  std::string target = query.Take();
  if (Status allowed = CheckAccess(self, "GET", target); !allowed.ok()) return allowed.error();
  return target;
}

asio::awaitable<Result<std::unique_ptr<kube::Watch>>> Client::Impl::OpenWatchOnce(
    std::shared_ptr<Impl> self, std::string target, WatchOptions options) {
  const auto effective = self->EffectiveTimeout(options.connect_timeout);
  const SteadyTime deadline = std::chrono::steady_clock::now() + effective;
  if (Status throttled = co_await Throttle(self, deadline); !throttled.ok()) {
    co_return throttled.error();
  }
  auto impl = std::make_shared<kube::Watch::Impl>();
  impl->what = "watch " + target;
  impl->idle_timeout = options.idle_timeout.count() > 0 ? options.idle_timeout
                       : options.timeout_seconds > 0
                           ? std::chrono::milliseconds((options.timeout_seconds + 30) * 1000)
                           : std::chrono::milliseconds(10 * 60 * 1000);
  net::ClientRequest request;
  request.method = "GET";
  request.target = std::move(target);
  request.authorization = self->AuthorizationHeader();
  request.deadline = deadline;
  request.timeout = effective;
  request.label = impl->what;
  auto opened = co_await self->transport->Open(std::move(request));
  if (!opened.ok()) co_return std::move(opened).error();
  if (opened->status != 200) co_return ErrorFromResponse(opened->status, opened->error_body);
  impl->stream = std::move(opened->stream);
  co_return std::unique_ptr<kube::Watch>(new kube::Watch(std::move(impl)));
}

// ---------------------------------------------------------------------------
// Client

Client::Client(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
Client::~Client() = default;

Result<std::shared_ptr<Client>> Client::Create(ClientConfig config,
                                               asio::any_io_executor executor) {
  net::ClientOptions options;
  options.server = config.server;
  options.ca_pem = config.ca_pem;
  options.client_cert_pem = config.client_cert_pem;
  options.client_key_pem = config.client_key_pem;
  options.insecure_skip_tls_verify = config.insecure_skip_tls_verify;
  options.tls_server_name = config.tls_server_name;
  options.max_connections = config.max_connections;
  options.idle_connection_timeout = config.idle_connection_timeout;
  options.pipelined_connections = config.pipelined_connections;
  options.user_agent = config.user_agent;
  auto transport = net::HttpClient::Create(std::move(options), std::move(executor));
  if (!transport.ok()) return std::move(transport).error();
  if (config.qps > 0 && config.burst < 1) config.burst = 1;
  auto impl = std::make_shared<Impl>(std::move(config), std::move(transport).value());
  return std::shared_ptr<Client>(new Client(std::move(impl)));
}

const ClientConfig& Client::config() const { return impl_->config; }
const std::string& Client::default_namespace() const { return impl_->config.namespace_; }
asio::any_io_executor Client::executor() const { return impl_->transport->executor(); }

ClientStats Client::stats() const {
  const net::TransportStats t = impl_->transport->stats();
  ClientStats stats;
  stats.requests = t.requests;
  stats.connections_created = t.connections_created;
  stats.pipelined_batches = t.pipelined_batches;
  stats.retries = t.retries;
  stats.open_connections = t.open_connections;
  stats.idle_connections = t.idle_connections;
  return stats;
}

asio::awaitable<Result<std::string>> Client::Get(ResourceRef resource, std::string ns,
                                                 std::string name, GetOptions options) {
  return Impl::Get(impl_, std::move(resource), std::move(ns), std::move(name), std::move(options));
}

asio::awaitable<Result<ListResult>> Client::List(ResourceRef resource, std::string ns,
                                                 ListOptions options) {
  return Impl::List(impl_, std::move(resource), std::move(ns), std::move(options));
}

asio::awaitable<Result<std::string>> Client::Create(ResourceRef resource, std::string ns,
                                                    std::string body, WriteOptions options) {
  return Impl::Create(impl_, std::move(resource), std::move(ns), std::move(body),
                      std::move(options));
}

asio::awaitable<Result<std::string>> Client::Update(ResourceRef resource, std::string ns,
                                                    std::string name, std::string body,
                                                    WriteOptions options) {
  return Impl::Update(impl_, std::move(resource), std::move(ns), std::move(name), std::move(body),
                      std::move(options));
}

asio::awaitable<Result<std::string>> Client::UpdateStatus(ResourceRef resource, std::string ns,
                                                          std::string name, std::string body,
                                                          WriteOptions options) {
  options.subresource = "status";
  return Impl::Update(impl_, std::move(resource), std::move(ns), std::move(name), std::move(body),
                      std::move(options));
}

asio::awaitable<Result<std::string>> Client::Patch(ResourceRef resource, std::string ns,
                                                   std::string name, PatchType type,
                                                   std::string patch, PatchOptions options) {
  return Impl::Patch(impl_, std::move(resource), std::move(ns), std::move(name), type,
                     std::move(patch), std::move(options));
}

asio::awaitable<Status> Client::Delete(ResourceRef resource, std::string ns, std::string name,
                                       DeleteOptions options) {
  return Impl::Delete(impl_, std::move(resource), std::move(ns), std::move(name),
                      std::move(options));
}

asio::awaitable<Status> Client::Bind(std::string ns, std::string pod, std::string node,
                                     BindOptions options) {
  return Impl::Bind(impl_, std::move(ns), std::move(pod), std::move(node), std::move(options));
}

asio::awaitable<Status> Client::Evict(std::string ns, std::string pod, DeleteOptions options,
                                      std::string api_version) {
  return Impl::Evict(impl_, std::move(ns), std::move(pod), std::move(options),
                     std::move(api_version));
}

asio::awaitable<Result<Scale>> Client::GetScale(ResourceRef resource, std::string ns,
                                                std::string name, GetOptions options) {
  return Impl::GetScale(impl_, std::move(resource), std::move(ns), std::move(name),
                        std::move(options));
}

asio::awaitable<Result<Scale>> Client::UpdateScale(ResourceRef resource, std::string ns,
                                                   std::string name, int32_t replicas,
                                                   std::string resource_version,
                                                   WriteOptions options) {
  return Impl::UpdateScale(impl_, std::move(resource), std::move(ns), std::move(name), replicas,
                           std::move(resource_version), std::move(options));
}

asio::awaitable<Result<std::unique_ptr<kube::Watch>>> Client::Watch(ResourceRef resource,
                                                                    std::string ns,
                                                                    WatchOptions options) {
  return Impl::OpenWatch(impl_, std::move(resource), std::move(ns), std::move(options));
}

asio::awaitable<Result<Response>> Client::Request(HttpMethod method, std::string target,
                                                  std::string body, std::string content_type,
                                                  std::chrono::milliseconds timeout) {
  return Impl::Send(impl_, ToMethod(method), std::move(target), std::move(body),
                    std::move(content_type), timeout);
}

// ---------------------------------------------------------------------------
// IoThread

struct IoThread::Impl {
  asio::io_context context;
  asio::executor_work_guard<asio::io_context::executor_type> guard{context.get_executor()};
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

asio::any_io_executor IoThread::executor() const { return impl_->context.get_executor(); }

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

void IoThread::RunVoid(asio::awaitable<void> awaitable) {
  COPSE_CHECK(!impl_->context.get_executor().running_in_this_thread())
      << "IoThread::Run called from the IoThread itself (it would deadlock)";
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    COPSE_CHECK(!impl_->stopped) << "IoThread::Run after Stop()";
  }
  std::promise<void> done;
  std::future<void> finished = done.get_future();
  asio::co_spawn(impl_->context, std::move(awaitable), [&done](std::exception_ptr error) {
    if (error) {
      done.set_exception(error);
    } else {
      done.set_value();
    }
  });
  finished.get();
}

void IoThread::SpawnVoid(asio::awaitable<void> awaitable) {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    COPSE_CHECK(!impl_->stopped) << "IoThread::Spawn after Stop()";
  }
  asio::co_spawn(impl_->context, std::move(awaitable), asio::detached);
}

}  // namespace copse::kube
