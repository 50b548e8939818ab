// ApiServer: the Handler behind net::Server (an HTTP and an HTTPS listener
// on one set of threads). The handler runs inline on the connection's
// strand; a watch becomes a chunked stream polled from a WatchBody: the
// Store's notify wakes the connection, and each poll drains every pending
// event into chunks of at most kEventsPerChunk events.

#include "net/server.h"

#include <algorithm>
#include <mutex>

#include "apiserver/apiserver.h"
#include "apiserver/handler.h"
#include "apiserver/store.h"
#include "net/cert.h"

namespace copse::apiserver {

namespace {

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

// A watch as a net::StreamBody: each poll takes what the stream has pending
// (a bookmark too when one is due), writes it in chunks of kEventsPerChunk
// events, and asks for a quiet `write_interval` after writing so that a burst
// goes out in a few chunks instead of one write (and one wake-up of the
// client) per event or two. The first event after a quiet spell goes at once.
class WatchBody final : public net::StreamBody {
 public:
  WatchBody(std::shared_ptr<WatchSession> session, std::shared_ptr<Store> store,
            std::chrono::milliseconds bookmark_interval, std::chrono::microseconds write_interval)
      : session_(std::move(session)),
        store_(std::move(store)),
        bookmark_interval_(bookmark_interval),
        write_interval_(write_interval) {
    const TimePoint start = Clock::now();
    deadline_ = session_->timeout.count() > 0 ? start + session_->timeout : TimePoint::max();
    next_bookmark_ = session_->bookmarks ? start + bookmark_interval_ : TimePoint::max();
  }

  void Attach(std::function<void()> wake) override {
    session_->stream().SetNotify(std::move(wake));
  }
  void Detach() override { session_->stream().SetNotify(nullptr); }
  void Close() override { session_->stream().Close(); }

  Step Poll(std::string& out) override {
    if (next_ >= events_.size()) {
      const TimePoint now = Clock::now();
      bookmark_rv_ = 0;
      if (now >= next_bookmark_) {
        // Read before taking events: every event up to this version is queued.
        bookmark_rv_ = store_->CurrentResourceVersion();
        next_bookmark_ = now + bookmark_interval_;
      }
      events_.clear();
      next_ = 0;
      open_ = session_->stream().Take(&events_);
      wrote_ = !events_.empty();
    }
    if (!events_.empty()) {
      const size_t end = std::min(events_.size(), next_ + kEventsPerChunk);
      slice_.assign(events_.begin() + static_cast<long>(next_),
                    events_.begin() + static_cast<long>(end));
      session_->Serialize(slice_, &out);
      next_ = end;
    }
    Step step;
    if (next_ < events_.size()) {
      step.more = true;
      return step;
    }
    if (bookmark_rv_ != 0) {
      session_->AppendBookmark(bookmark_rv_, &out);
      bookmark_rv_ = 0;
    }
    events_.clear();
    next_ = 0;
    step.done = !open_ || Clock::now() >= deadline_;
    if (wrote_) step.quiet_for = write_interval_;
    step.poll_at = std::min(deadline_, next_bookmark_);
    return step;
  }

 private:
  using Clock = std::chrono::steady_clock;

  std::shared_ptr<WatchSession> session_;
  std::shared_ptr<Store> store_;
  const std::chrono::milliseconds bookmark_interval_;
  const std::chrono::microseconds write_interval_;
  TimePoint deadline_;
  TimePoint next_bookmark_;
  // The events of the last take, written from `next_` on.
  std::vector<WatchEvent> events_;
  std::vector<WatchEvent> slice_;
  size_t next_ = 0;
  uint64_t bookmark_rv_ = 0;
  bool open_ = true;
  bool wrote_ = false;
};

net::Response ToNet(HttpResponse response, const std::shared_ptr<Store>& store,
                    const Options& options) {
  net::Response out(response.status, std::move(response.content_type), std::move(response.body));
  // API warnings as kube-apiserver sends them (RFC 7234 code 299, no agent).
  for (const std::string& warning : response.warnings) {
    std::string value = "299 - \"";
    for (char c : warning) {
      if (c == '"' || c == '\\') value += '\\';
      if (c != '\r' && c != '\n') value += c;
    }
    value += '"';
    out.headers.emplace_back("Warning", std::move(value));
  }
  if (response.watch) {
    // JSON lines, or protobuf WatchEvent frames when the client asked for them.
    out.content_type = response.watch->content_type;
    out.stream = std::make_shared<WatchBody>(
        std::move(response.watch), store, options.bookmark_interval, options.watch_write_interval);
  }
  return out;
}

}  // namespace

struct ApiServer::Impl {
  Options options;
  std::shared_ptr<Store> store;
  std::unique_ptr<Handler> handler;
  std::unique_ptr<net::Server> server;
  std::string ca_pem;
  uint16_t http_port = 0;
  uint16_t https_port = 0;
};

ApiServer::ApiServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ApiServer::~ApiServer() { Stop(); }

Result<std::unique_ptr<ApiServer>> ApiServer::Start(Options options) {
  auto impl = std::make_unique<Impl>();
  if (!options.store) options.store = NewStore();
  if (options.threads < 1) options.threads = 1;
  impl->store = options.store;
  HandlerOptions hopts;
  hopts.token = options.token;
  hopts.component_token = options.component_token;
  // A client CA without a token: only certificates (and components) get in.
  hopts.require_authentication =
      !options.token.empty() || !options.client_ca_pem.empty() || !options.component_token.empty();
  hopts.bind_failure_rate = options.bind_failure_rate;
  hopts.bind_reject_prefix = options.bind_reject_prefix;
  hopts.bind_lost_reply_rate = options.bind_lost_reply_rate;
  hopts.seed = options.seed;
  hopts.bookmark_interval = options.bookmark_interval;
  impl->handler = std::make_unique<Handler>(impl->store, hopts);

  net::ServerOptions server_options;
  server_options.address = options.address;
  server_options.threads = options.threads;
  server_options.max_body_bytes = options.max_request_body_bytes;
  // kube-apiserver closes keep-alive connections idle for 90 s.
  server_options.read_timeout = std::chrono::seconds(90);
  // A refused request answers kube's Status (413 names the limit).
  server_options.render_error = [](const net::ProtocolError& refused) {
    Error error = MakeError(ErrorCode::kInvalid, refused.message);
    error.http_status = refused.status;
    error.reason = refused.reason;
    return net::Response(refused.status, "application/json", StatusJson(error));
  };
  if (options.serve_http) server_options.listeners.push_back({options.http_port, false});
  if (options.serve_https) {
    net::CertificateOptions cert_options;
    cert_options.common_name = "copse-local";
    auto cert = net::SelfSignedCertificate(cert_options);
    if (!cert.ok()) return std::move(cert).error();
    impl->ca_pem = cert->cert_pem;
    server_options.tls.cert_pem = cert->cert_pem;
    server_options.tls.key_pem = cert->key_pem;
    server_options.listeners.push_back({options.https_port, true});
    // As kube-apiserver's --client-ca-file: a verified client certificate
    // authenticates without the token.
    server_options.tls.client_ca_pem = options.client_ca_pem;
  }
  if (server_options.listeners.empty()) {
    return MakeError(ErrorCode::kInvalid, "API server: neither HTTP nor HTTPS is served");
  }
  Handler* handler = impl->handler.get();
  std::shared_ptr<Store> store = impl->store;
  auto serve = [handler, store, options](const net::Request& request) {
    return ToNet(handler->Handle(request), store, options);
  };
  auto server = net::Server::Start(std::move(server_options), std::move(serve));
  if (!server.ok()) return std::move(server).error();
  impl->server = std::move(server).value();
  size_t listener = 0;
  if (options.serve_http) impl->http_port = impl->server->port(listener++);
  if (options.serve_https) impl->https_port = impl->server->port(listener++);
  impl->options = std::move(options);
  return std::unique_ptr<ApiServer>(new ApiServer(std::move(impl)));
}

void ApiServer::Stop() {
  if (impl_ && impl_->server) impl_->server->Stop();
}

void ApiServer::CloseWatches() { impl_->server->CloseStreams(); }

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
