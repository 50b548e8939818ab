#include "tests/integration/apiserver/http_helper.h"

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <vector>

namespace copse::apiserver::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

namespace {

// Either a plain TCP stream or a TLS stream over one.
struct Stream {
  asio::io_context ioc;
  std::unique_ptr<ssl::context> ctx;
  std::unique_ptr<beast::tcp_stream> plain;
  std::unique_ptr<beast::ssl_stream<beast::tcp_stream>> tls;

  void Connect(uint16_t port, const ClientOptions& options) {
    tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), port);
    if (!options.tls) {
      plain = std::make_unique<beast::tcp_stream>(ioc);
      plain->connect(ep);
      plain->socket().set_option(tcp::no_delay(true));
      return;
    }
    ctx = std::make_unique<ssl::context>(ssl::context::tls_client);
    if (!options.ca_pem.empty()) {
      ctx->add_certificate_authority(asio::buffer(options.ca_pem));
      ctx->set_verify_mode(ssl::verify_peer);
    }
    tls = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(ioc, *ctx);
    SSL_set_tlsext_host_name(tls->native_handle(), "localhost");
    if (!options.ca_pem.empty()) {
      tls->set_verify_callback(ssl::host_name_verification("127.0.0.1"));
    }
    beast::get_lowest_layer(*tls).connect(ep);
    tls->handshake(ssl::stream_base::client);
  }

  template <typename F>
  auto With(F&& f) {
    if (tls) return f(*tls);
    return f(*plain);
  }

  void Close() {
    beast::error_code ec;
    if (plain) plain->socket().shutdown(tcp::socket::shutdown_both, ec);
    if (tls) beast::get_lowest_layer(*tls).socket().shutdown(tcp::socket::shutdown_both, ec);
  }
};

http::request<http::string_body> MakeRequest(std::string_view method, std::string_view target,
                                             std::string_view body, std::string_view content_type,
                                             std::string_view accept,
                                             const ClientOptions& options) {
  http::request<http::string_body> req;
  req.method_string(method);
  req.target(target);
  req.version(11);
  req.set(http::field::host, "127.0.0.1");
  req.set(http::field::accept, accept);
  if (!options.token.empty()) req.set(http::field::authorization, "Bearer " + options.token);
  if (!body.empty()) {
    req.set(http::field::content_type, content_type);
    req.body() = std::string(body);
  }
  req.keep_alive(true);
  req.prepare_payload();
  return req;
}

}  // namespace

struct HttpClient::Conn {
  Stream stream;
  beast::flat_buffer buffer;
};

HttpClient::HttpClient(uint16_t port, ClientOptions options)
    : port_(port), options_(std::move(options)) {}

HttpClient::~HttpClient() = default;

Response HttpClient::Request(std::string_view method, std::string_view target,
                             std::string_view body, std::string_view content_type,
                             std::string_view accept) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!conn_) {
      conn_ = std::make_unique<Conn>();
      conn_->stream.Connect(port_, options_);
    }
    auto req = MakeRequest(method, target, body, content_type, accept, options_);
    beast::error_code ec;
    http::response_parser<http::string_body> parser;
    parser.body_limit(1u << 30);
    conn_->stream.With([&](auto& s) {
      http::write(s, req, ec);
      if (!ec) http::read(s, conn_->buffer, parser, ec);
      return 0;
    });
    if (ec) {
      conn_.reset();  // stale keep-alive connection: retry once on a new one
      continue;
    }
    auto& res = parser.get();
    Response out;
    out.status = static_cast<int>(res.result_int());
    out.body = std::move(res.body());
    out.content_type = std::string(res[http::field::content_type]);
    if (!res.keep_alive()) conn_.reset();
    return out;
  }
  return Response{0, "connection failed", ""};
}

struct WatchReader::Conn {
  Stream stream;
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
};

WatchReader::WatchReader(uint16_t port, std::string target, ClientOptions options, bool parse)
    : conn_(std::make_unique<Conn>()), parse_(parse) {
  conn_->stream.Connect(port, options);
  auto req = MakeRequest("GET", target, {}, {}, "application/json", options);
  conn_->parser.body_limit(1u << 30);
  beast::error_code ec;
  conn_->stream.With([&](auto& s) {
    http::write(s, req, ec);
    if (!ec) http::read_header(s, conn_->buffer, conn_->parser, ec);
    return 0;
  });
  if (ec) {
    ended_ = true;
    return;
  }
  status_ = static_cast<int>(conn_->parser.get().result_int());
  thread_ = std::thread([this] { ReadLoop(); });
}

WatchReader::~WatchReader() {
  conn_->stream.Close();
  if (thread_.joinable()) thread_.join();
}

void WatchReader::ReadLoop() {
  std::string pending;
  size_t chunk = 0;
  auto on_chunk_header = [&](std::uint64_t, std::string_view, beast::error_code&) { ++chunk; };
  conn_->parser.on_chunk_header(on_chunk_header);
  auto on_chunk = [&](std::uint64_t, std::string_view body, beast::error_code&) -> std::size_t {
    pending.append(body);
    size_t start = 0;
    size_t pos;
    std::vector<nlohmann::json> parsed;
    while ((pos = pending.find('\n', start)) != std::string::npos) {
      parsed.push_back(
          parse_ ? nlohmann::json::parse(std::string_view(pending).substr(start, pos - start),
                                         nullptr, false)
                 : nlohmann::json());
      start = pos + 1;
    }
    pending.erase(0, start);
    if (!parsed.empty()) {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& e : parsed) {
        events_.push_back(std::move(e));
        event_chunks_.push_back(chunk);
      }
      cv_.notify_all();
    }
    return body.size();
  };
  conn_->parser.on_chunk_body(on_chunk);
  beast::error_code ec;
  while (!conn_->parser.is_done()) {
    conn_->stream.With([&](auto& s) {
      http::read_some(s, conn_->buffer, conn_->parser, ec);
      return 0;
    });
    if (ec) break;
  }
  // A non-chunked body (e.g. a single ERROR event) arrives whole.
  std::string& body = conn_->parser.get().body();
  if (!body.empty()) {
    std::string_view rest = body;
    size_t pos;
    while ((pos = rest.find('\n')) != std::string_view::npos) {
      auto event = nlohmann::json::parse(rest.substr(0, pos), nullptr, false);
      rest.remove_prefix(pos + 1);
      std::lock_guard<std::mutex> lock(mu_);
      events_.push_back(std::move(event));
      event_chunks_.push_back(0);
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  ended_ = true;
  cv_.notify_all();
}

std::optional<nlohmann::json> WatchReader::Next(std::chrono::milliseconds timeout) {
  auto event = NextWithChunk(timeout);
  if (!event) return std::nullopt;
  return std::move(event->first);
}

std::optional<std::pair<nlohmann::json, size_t>> WatchReader::NextWithChunk(
    std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return !events_.empty() || ended_; });
  if (events_.empty()) return std::nullopt;
  std::pair<nlohmann::json, size_t> event{std::move(events_.front()), event_chunks_.front()};
  events_.pop_front();
  event_chunks_.pop_front();
  return event;
}

bool WatchReader::WaitEnded(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return ended_; });
}

}  // namespace copse::apiserver::testing
