// OpsServer: the handler of a net::Server (HTTPS or plain HTTP): requests are
// answered inline (checks are quick; the delegated authorization's calls to
// the API server are bounded by DelegatedAuthOptions::max_in_flight).

#include "scheduler/config/ops_server.h"

#include <algorithm>
#include <mutex>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "net/server.h"

namespace copse::scheduler::config {

namespace {

constexpr auto kIdleTimeout = std::chrono::seconds(30);
constexpr auto kWriteTimeout = std::chrono::seconds(10);
constexpr size_t kMaxRequestBody = 64 * 1024;
constexpr std::string_view kEndpoints[] = {"healthz", "livez", "readyz"};

struct NamedCheck {
  std::string name;
  std::shared_ptr<const OpsServer::Check> check;
};

struct Reply {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string UrlDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && HexValue(s[i + 1]) >= 0 &&
               HexValue(s[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(s[i + 1]) * 16 + HexValue(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

struct Query {
  bool verbose = false;
  std::vector<std::string> exclude;
};

Query ParseQuery(std::string_view query) {
  Query q;
  while (!query.empty()) {
    const size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const size_t eq = pair.find('=');
    const std::string key = UrlDecode(pair.substr(0, eq));
    const std::string value =
        eq == std::string_view::npos ? std::string() : UrlDecode(pair.substr(eq + 1));
    if (key == "verbose") {
      q.verbose = true;
    } else if (key == "exclude") {
      // kube accepts both ?exclude=a&exclude=b and ?exclude=a,b.
      std::string_view rest = value;
      while (!rest.empty()) {
        const size_t comma = rest.find(',');
        std::string_view one = rest.substr(0, comma);
        if (!one.empty()) q.exclude.emplace_back(one);
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      }
    }
  }
  return q;
}

copse::Status RunCheck(const NamedCheck& c) {
  try {
    return (*c.check)();
  } catch (const std::exception& e) {
    return MakeError(ErrorCode::kInternal, std::string("check threw: ") + e.what());
  } catch (...) {
    return MakeError(ErrorCode::kInternal, "check threw");
  }
}

}  // namespace

struct OpsServer::Impl {
  OpsServerOptions options;
  std::unique_ptr<net::Server> server;

  std::mutex mu;                      // guards checks and metrics
  std::vector<NamedCheck> checks[3];  // by kEndpoints index
  std::shared_ptr<const MetricsHandler> metrics;

  copse::Status AddCheck(size_t endpoint, std::string name, Check check) {
    std::lock_guard<std::mutex> lock(mu);
    if (name == "ping") {
      return MakeError(ErrorCode::kAlreadyExists, "check \"ping\" is built in");
    }
    for (const NamedCheck& c : checks[endpoint]) {
      if (c.name == name) {
        return MakeError(
            ErrorCode::kAlreadyExists,
            std::string(kEndpoints[endpoint]) + " check \"" + name + "\" is already registered");
      }
    }
    checks[endpoint].push_back(
        NamedCheck{std::move(name), std::make_shared<const Check>(std::move(check))});
    return copse::Status::Ok();
  }

  std::vector<NamedCheck> Checks(size_t endpoint) {
    static const std::shared_ptr<const Check> kPing =
        std::make_shared<const Check>([] { return copse::Status::Ok(); });
    std::vector<NamedCheck> out;
    out.push_back(NamedCheck{"ping", kPing});
    std::lock_guard<std::mutex> lock(mu);
    out.insert(out.end(), checks[endpoint].begin(), checks[endpoint].end());
    return out;
  }

  Reply HandleChecks(size_t endpoint, std::string_view sub, const Query& query);
  Reply Handle(std::string_view target);
  net::Response Serve(const net::Request& request);
};

Reply OpsServer::Impl::HandleChecks(size_t endpoint, std::string_view sub, const Query& query) {
  const std::string_view endpoint_name = kEndpoints[endpoint];
  const std::vector<NamedCheck> all = Checks(endpoint);
  Reply reply;
  if (!sub.empty()) {
    for (const NamedCheck& c : all) {
      if (c.name != sub) continue;
      copse::Status s = RunCheck(c);
      if (s.ok()) {
        reply.body = "ok";
      } else {
        reply.status = 500;
        reply.body = "internal server error: " + s.error().message + "\n";
      }
      return reply;
    }
    reply.status = 404;
    reply.body = "404 page not found\n";
    return reply;
  }
  std::set<std::string, std::less<>> excluded(query.exclude.begin(), query.exclude.end());
  std::string listing;
  bool failed = false;
  for (const NamedCheck& c : all) {
    if (auto it = excluded.find(c.name); it != excluded.end()) {
      excluded.erase(it);
      listing += "[+]" + c.name + " excluded: ok\n";
      continue;
    }
    copse::Status s = RunCheck(c);
    if (s.ok()) {
      listing += "[+]" + c.name + " ok\n";
    } else {
      failed = true;
      listing += "[-]" + c.name + " failed: " + s.error().message + "\n";
    }
  }
  if (!excluded.empty()) {
    listing +=
        "warn: some " + std::string(endpoint_name) + " checks cannot be excluded: no matches for ";
    bool first = true;
    for (const std::string& name : excluded) {
      if (!first) listing += ",";
      first = false;
      listing += "\"" + name + "\"";
    }
    listing += "\n";
  }
  if (failed) {
    reply.status = 500;
    reply.body = listing + std::string(endpoint_name) + " check failed\n";
  } else if (query.verbose) {
    reply.body = listing + std::string(endpoint_name) + " check passed\n";
  } else {
    reply.body = "ok";
  }
  return reply;
}

Reply OpsServer::Impl::Handle(std::string_view target) {
  const size_t qmark = target.find('?');
  std::string_view path = target.substr(0, qmark);
  const Query query =
      ParseQuery(qmark == std::string_view::npos ? std::string_view() : target.substr(qmark + 1));
  if (path == "/metrics") {
    std::shared_ptr<const MetricsHandler> handler;
    {
      std::lock_guard<std::mutex> lock(mu);
      handler = metrics;
    }
    Reply reply;
    if (!handler || !*handler) {
      reply.status = 404;
      reply.body = "404 page not found\n";
      return reply;
    }
    try {
      reply.body = (*handler)();
      reply.content_type = "text/plain; version=0.0.4; charset=utf-8";
    } catch (const std::exception& e) {
      reply.status = 500;
      reply.body = std::string("internal server error: ") + e.what() + "\n";
    }
    return reply;
  }
  for (size_t i = 0; i < std::size(kEndpoints); ++i) {
    const std::string_view name = kEndpoints[i];
    if (path.size() < name.size() + 1 || path[0] != '/' || path.substr(1, name.size()) != name) {
      continue;
    }
    const std::string_view rest = path.substr(1 + name.size());
    if (rest.empty()) return HandleChecks(i, {}, query);
    if (rest[0] == '/' && rest.size() > 1) return HandleChecks(i, rest.substr(1), query);
  }
  Reply reply;
  reply.status = 404;
  reply.body = "404 page not found\n";
  return reply;
}

net::Response OpsServer::Impl::Serve(const net::Request& req) {
  net::Response res;
  res.headers = {{"Server", "copse"}, {"X-Content-Type-Options", "nosniff"}};
  if (options.authorize) {
    AccessRequest access;
    access.method = req.method;
    access.path = req.target.substr(0, req.target.find('?'));
    access.authorization = req.authorization;
    access.client_certificate_chain = req.client_certificate_chain;
    AccessDecision decision = options.authorize(access);
    if (!decision.allowed) {
      res.status = decision.status;
      res.content_type = std::move(decision.content_type);
      res.body = std::move(decision.body);
      if (res.status == 429) res.headers.emplace_back("Retry-After", "1");
      return res;
    }
  }
  if (req.method != "GET" && req.method != "HEAD") {
    res.status = 405;
    res.headers.emplace_back("Allow", "GET, HEAD");
    res.content_type = "text/plain; charset=utf-8";
    res.body = "405 method not allowed\n";
    return res;
  }
  Reply reply = Handle(req.target);
  res.status = reply.status;
  res.content_type = std::move(reply.content_type);
  res.body = std::move(reply.body);
  return res;  // a HEAD response keeps Content-Length but loses the body (net::Server)
}

OpsServer::OpsServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

OpsServer::~OpsServer() { Stop(); }

Result<std::unique_ptr<OpsServer>> OpsServer::Start(OpsServerOptions options) {
  auto impl = std::make_unique<Impl>();
  net::ServerOptions server_options;
  server_options.address = options.address;
  const bool tls = !options.tls_cert_pem.empty() || !options.tls_key_pem.empty();
  server_options.listeners.push_back({options.port, tls});
  if (tls) {
    server_options.tls.cert_pem = options.tls_cert_pem;
    server_options.tls.key_pem = options.tls_key_pem;
    // The certificate is verified by `authorize`, against a CA that may change.
    server_options.tls.request_client_certificate = static_cast<bool>(options.authorize);
  }
  server_options.threads = std::max(options.threads, 1);
  server_options.max_body_bytes = kMaxRequestBody;
  server_options.read_timeout = kIdleTimeout;
  server_options.write_timeout = kWriteTimeout;
  impl->options = std::move(options);
  Impl* raw = impl.get();
  auto server = net::Server::Start(std::move(server_options),
                                   [raw](const net::Request& req) { return raw->Serve(req); });
  if (!server.ok()) {
    Error error = std::move(server).error();
    error.message = "ops server: " + error.message;
    return error;
  }
  impl->server = std::move(server).value();
  return std::unique_ptr<OpsServer>(new OpsServer(std::move(impl)));
}

copse::Status OpsServer::SetCertificate(const std::string& cert_pem, const std::string& key_pem) {
  return impl_->server->SetCertificate(cert_pem, key_pem);
}

void OpsServer::Stop() {
  if (impl_ && impl_->server) impl_->server->Stop();
}

copse::Status OpsServer::AddHealthzCheck(std::string name, Check check) {
  return impl_->AddCheck(0, std::move(name), std::move(check));
}

copse::Status OpsServer::AddLivezCheck(std::string name, Check check) {
  return impl_->AddCheck(1, std::move(name), std::move(check));
}

copse::Status OpsServer::AddReadyzCheck(std::string name, Check check) {
  return impl_->AddCheck(2, std::move(name), std::move(check));
}

void OpsServer::SetMetricsHandler(MetricsHandler handler) {
  auto shared = std::make_shared<const MetricsHandler>(std::move(handler));
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->metrics = std::move(shared);
}

uint16_t OpsServer::port() const noexcept { return impl_->server->port(); }

const std::string& OpsServer::address() const noexcept { return impl_->options.address; }

std::string OpsServer::url() const {
  const std::string& a = impl_->options.address;
  const bool v6 = a.find(':') != std::string::npos;
  const bool tls = !impl_->options.tls_cert_pem.empty() || !impl_->options.tls_key_pem.empty();
  return std::string(tls ? "https://" : "http://") + (v6 ? "[" + a + "]" : a) + ":" +
         std::to_string(port());
}

}  // namespace copse::scheduler::config
