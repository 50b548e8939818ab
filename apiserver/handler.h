#pragma once
// The request handler of the embedded API server, independent of the HTTP
// library: routes a request (method, target, a few headers, body) to the
// Store and renders kube-apiserver's responses (objects, lists, Tables,
// Status errors, discovery, OpenAPI). Watches come back as a WatchSession
// that the transport drains and writes as a chunked stream.
//
// Thread-safety: Handler::Handle may be called concurrently from any thread.
// A WatchSession is used by one connection at a time.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "apiserver/store.h"
#include "net/server.h"

namespace copse::apiserver {

struct ServerAuthentication;  // authz_review.h

// method, target, host (for discovery's serverAddress), accept,
// content_type, authorization, body, ...
using HttpRequest = net::Request;

// A started watch: the transport writes Serialize()d events as they arrive,
// bookmarks every `bookmark_interval` when `bookmarks`, and ends the stream
// after `timeout` (zero: no timeout) or when the stream closes.
class WatchSession {
 public:
  struct Format;
  WatchSession(std::shared_ptr<WatchStream> stream, std::unique_ptr<Format> format);
  ~WatchSession();

  WatchStream& stream() { return *stream_; }
  // Appends `events` to `out`: newline-delimited JSON, or length-prefixed
  // protobuf WatchEvent frames when the client asked for protobuf.
  void Serialize(const std::vector<WatchEvent>& events, std::string* out);
  void AppendBookmark(uint64_t rv, std::string* out) const;

  bool bookmarks = false;
  std::chrono::milliseconds timeout{0};
  // The stream's Content-Type: JSON lines, or protobuf WatchEvent frames.
  std::string content_type = "application/json";

 private:
  std::shared_ptr<WatchStream> stream_;
  std::unique_ptr<Format> format_;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::shared_ptr<WatchSession> watch;  // set: stream events instead of `body`
  // Sent as `Warning: 299 - "<text>"` headers (kube's API warnings).
  std::vector<std::string> warnings;
};

struct HandlerOptions {
  // Bearer tokens that authenticate (empty ones ignored); see Options::token
  // and Options::component_token.
  std::string token;
  std::string component_token;
  // Requests must authenticate (a token above, or a verified client
  // certificate), else 401. Health checks never need to.
  bool require_authentication = false;
  double bind_failure_rate = 0.0;
  double bind_lost_reply_rate = 0.0;  // see Options::bind_lost_reply_rate
  std::string bind_reject_prefix;     // see Options::bind_reject_prefix
  uint64_t seed = 1;
  std::chrono::milliseconds bookmark_interval{5000};
};

class Handler {
 public:
  Handler(std::shared_ptr<Store> store, HandlerOptions options);
  HttpResponse Handle(const HttpRequest& request);
  const HandlerOptions& options() const { return options_; }

 private:
  struct Request {
    const HttpRequest* http = nullptr;
    std::string path;
    std::map<std::string, std::string, std::less<>> query;
    std::vector<std::string> segs;
    std::string group;
    std::string version;
    std::shared_ptr<const ResourceInfo> info;
    std::string ns;
    std::string name;
    std::string subresource;
    bool watch_path = false;

    std::string_view Query(std::string_view key) const {
      auto it = query.find(key);
      return it == query.end() ? std::string_view() : std::string_view(it->second);
    }
    bool HasQuery(std::string_view key) const { return query.count(key) != 0; }
    ResourceRef Ref() const {
      return ResourceRef{group, version, info->resource, info->namespaced};
    }
  };

  HttpResponse Route(Request& req);
  HttpResponse HandleResource(Request& req);
  HttpResponse Discovery(Request& req, bool* handled);
  HttpResponse OpenApi(Request& req, bool* handled);
  bool InjectBindFailure();
  bool InjectLostBindReply();

  std::shared_ptr<Store> store_;
  HandlerOptions options_;
  // options_' tokens, as the reviews see them (authz_review.h).
  std::shared_ptr<const ServerAuthentication> authentication_;
  std::mutex rng_mu_;
  std::mt19937_64 rng_;
};

// A kube Status object for an error (kind Status, status Failure, reason,
// message, code, details).
std::string StatusJson(const Error& error, std::string_view name = {}, std::string_view group = {},
                       std::string_view kind = {});
int HttpStatusOf(const Error& error);

}  // namespace copse::apiserver
