// OpsServer: one coroutine per connection on a strand: read a request (with a
// deadline), answer it inline (checks are quick), write, keep-alive.

#include "scheduler/config/ops_server.h"

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <mutex>
#include <optional>
#include <set>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace copse::scheduler::config {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
constexpr auto kIdleTimeout = std::chrono::seconds(30);
constexpr auto kWriteTimeout = std::chrono::seconds(10);
constexpr size_t kMaxRequestBody = 64 * 1024;
constexpr std::string_view kEndpoints[] = {"healthz", "livez", "readyz"};

struct NamedCheck {
  std::string name;
  std::shared_ptr<const OpsServer::Check> check;
};

struct Reply {
  http::status status = http::status::ok;
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
  std::unique_ptr<asio::io_context> ioc;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::vector<std::thread> threads;
  uint16_t port = 0;
  std::atomic<bool> stopped{false};
  std::mutex stop_mu;

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

  asio::awaitable<void> Accept();
  asio::awaitable<void> Serve(tcp::socket socket);
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
        reply.status = http::status::internal_server_error;
        reply.body = "internal server error: " + s.error().message + "\n";
      }
      return reply;
    }
    reply.status = http::status::not_found;
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
    reply.status = http::status::internal_server_error;
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
      reply.status = http::status::not_found;
      reply.body = "404 page not found\n";
      return reply;
    }
    try {
      reply.body = (*handler)();
      reply.content_type = "text/plain; version=0.0.4; charset=utf-8";
    } catch (const std::exception& e) {
      reply.status = http::status::internal_server_error;
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
  reply.status = http::status::not_found;
  reply.body = "404 page not found\n";
  return reply;
}

asio::awaitable<void> OpsServer::Impl::Accept() {
  for (;;) {
    auto strand = asio::make_strand(*ioc);
    auto [ec, socket] = co_await acceptor->async_accept(strand, kTuple);
    if (ec) {
      if (ec == asio::error::operation_aborted || stopped.load()) co_return;
      continue;
    }
    socket.set_option(tcp::no_delay(true), ec);
    auto executor = socket.get_executor();
    asio::co_spawn(executor, Serve(std::move(socket)), asio::detached);
  }
}

asio::awaitable<void> OpsServer::Impl::Serve(tcp::socket socket) {
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(kMaxRequestBody);
    stream.expires_after(kIdleTimeout);
    auto [read_ec, read_n] = co_await http::async_read(stream, buffer, parser, kTuple);
    (void)read_n;
    if (read_ec) break;
    const http::request<http::string_body>& req = parser.get();
    http::response<http::string_body> res;
    res.version(req.version());
    res.keep_alive(req.keep_alive());
    res.set(http::field::server, "copse");
    res.set(http::field::cache_control, "no-cache, private");
    res.set("X-Content-Type-Options", "nosniff");
    if (req.method() != http::verb::get && req.method() != http::verb::head) {
      res.result(http::status::method_not_allowed);
      res.set(http::field::allow, "GET, HEAD");
      res.set(http::field::content_type, "text/plain; charset=utf-8");
      res.body() = "405 method not allowed\n";
    } else {
      Reply reply = Handle(req.target());
      res.result(reply.status);
      res.set(http::field::content_type, reply.content_type);
      res.body() = std::move(reply.body);
    }
    res.prepare_payload();
    if (req.method() == http::verb::head) res.body().clear();  // Content-Length stays
    stream.expires_after(kWriteTimeout);
    auto [write_ec, write_n] = co_await http::async_write(stream, res, kTuple);
    (void)write_n;
    if (write_ec || !res.keep_alive()) break;
  }
  beast::error_code ec;
  stream.socket().shutdown(tcp::socket::shutdown_send, ec);
}

OpsServer::OpsServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

OpsServer::~OpsServer() { Stop(); }

Result<std::unique_ptr<OpsServer>> OpsServer::Start(OpsServerOptions options) {
  auto impl = std::make_unique<Impl>();
  if (options.threads < 1) options.threads = 1;
  boost::system::error_code ec;
  const asio::ip::address address = asio::ip::make_address(options.address, ec);
  if (ec) {
    return MakeError(ErrorCode::kInvalid,
                     "ops server: bad listen address \"" + options.address + "\": " + ec.message());
  }
  impl->ioc = std::make_unique<asio::io_context>(options.threads);
  impl->acceptor = std::make_unique<tcp::acceptor>(*impl->ioc);
  const tcp::endpoint endpoint(address, options.port);
  impl->acceptor->open(endpoint.protocol(), ec);
  if (!ec) impl->acceptor->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor->bind(endpoint, ec);
  if (!ec) impl->acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return MakeError(ErrorCode::kUnavailable, "ops server: listen " + options.address + ":" +
                                                  std::to_string(options.port) + ": " +
                                                  ec.message());
  }
  impl->port = impl->acceptor->local_endpoint().port();
  impl->options = std::move(options);
  Impl* raw = impl.get();
  asio::co_spawn(*raw->ioc, raw->Accept(), asio::detached);
  raw->work.emplace(raw->ioc->get_executor());
  for (int i = 0; i < raw->options.threads; ++i) {
    raw->threads.emplace_back([raw] { raw->ioc->run(); });
  }
  return std::unique_ptr<OpsServer>(new OpsServer(std::move(impl)));
}

void OpsServer::Stop() {
  if (!impl_) return;
  std::lock_guard<std::mutex> lock(impl_->stop_mu);
  if (impl_->stopped.exchange(true)) return;
  impl_->work.reset();
  impl_->ioc->stop();
  for (std::thread& t : impl_->threads) t.join();
  impl_->threads.clear();
  // Destroying the acceptor and then the io_context closes the listener and
  // destroys every connection's coroutine frame (closing its socket).
  impl_->acceptor.reset();
  impl_->ioc.reset();
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

uint16_t OpsServer::port() const noexcept { return impl_->port; }

const std::string& OpsServer::address() const noexcept { return impl_->options.address; }

std::string OpsServer::url() const {
  const std::string& a = impl_->options.address;
  const bool v6 = a.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + a + "]" : a) + ":" + std::to_string(impl_->port);
}

}  // namespace copse::scheduler::config
