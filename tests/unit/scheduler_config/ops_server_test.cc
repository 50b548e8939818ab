// OpsServer: real HTTP requests against a server on an ephemeral port,
// through a small synchronous Beast client.

#include "scheduler/config/ops_server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <string>

#include "kube/client.h"
#include "net/cert.h"
#include "net/client.h"
#include "scheduler/config/metrics.h"

namespace copse::scheduler::config {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using ::testing::HasSubstr;
using ::testing::StartsWith;

struct Reply {
  int status = 0;
  std::string body;
  std::string content_type;
  std::string content_length;
};

// One request on an open stream.
Reply Request(beast::tcp_stream& stream, http::verb verb, const std::string& target,
              bool keep_alive = false) {
  http::request<http::empty_body> req{verb, target, 11};
  req.set(http::field::host, "127.0.0.1");
  req.keep_alive(keep_alive);
  http::write(stream, req);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.skip(verb == http::verb::head);
  http::read(stream, buffer, parser);
  Reply r;
  r.status = parser.get().result_int();
  r.body = parser.get().body();
  r.content_type = std::string(parser.get()[http::field::content_type]);
  r.content_length = std::string(parser.get()[http::field::content_length]);
  return r;
}

Reply Get(uint16_t port, const std::string& target, http::verb verb = http::verb::get) {
  asio::io_context ioc;
  beast::tcp_stream stream(ioc);
  stream.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  Reply r = Request(stream, verb, target);
  beast::error_code ec;
  stream.socket().shutdown(tcp::socket::shutdown_both, ec);
  return r;
}

std::unique_ptr<OpsServer> StartServer() {
  OpsServerOptions options;
  options.address = "127.0.0.1";
  options.port = 0;
  Result<std::unique_ptr<OpsServer>> s = OpsServer::Start(options);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return s.ok() ? std::move(*s) : nullptr;
}

TEST(OpsServerTest, BindsAnEphemeralPortAndAnswersHealthEndpoints) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  EXPECT_NE(server->port(), 0);
  EXPECT_EQ(server->url(), "http://127.0.0.1:" + std::to_string(server->port()));
  for (const char* path : {"/healthz", "/livez", "/readyz"}) {
    const Reply r = Get(server->port(), path);
    EXPECT_EQ(r.status, 200) << path;
    EXPECT_EQ(r.body, "ok") << path;
    EXPECT_THAT(r.content_type, StartsWith("text/plain")) << path;
  }
  EXPECT_EQ(Get(server->port(), "/nothing-here").status, 404);
}

TEST(OpsServerTest, FailingReadinessCheckListsEveryCheck) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  std::atomic<int> synced{3};
  ASSERT_TRUE(server->AddReadyzCheck("leader", [] { return copse::Status::Ok(); }).ok());
  ASSERT_TRUE(server
                  ->AddReadyzCheck("informers-synced",
                                   [&synced]() -> copse::Status {
                                     if (synced.load() == 5) return copse::Status::Ok();
                                     return MakeError(
                                         ErrorCode::kUnavailable,
                                         std::to_string(synced.load()) + " of 5 informers synced");
                                   })
                  .ok());

  Reply r = Get(server->port(), "/readyz");
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.body,
            "[+]ping ok\n"
            "[+]leader ok\n"
            "[-]informers-synced failed: 3 of 5 informers synced\n"
            "readyz check failed\n");
  // Readiness checks do not affect liveness.
  EXPECT_EQ(Get(server->port(), "/livez").status, 200);
  EXPECT_EQ(Get(server->port(), "/healthz").status, 200);

  // One check on its own.
  r = Get(server->port(), "/readyz/informers-synced");
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.body, "internal server error: 3 of 5 informers synced\n");
  r = Get(server->port(), "/readyz/leader");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ok");
  EXPECT_EQ(Get(server->port(), "/readyz/unknown").status, 404);

  // Excluding the failing check makes the endpoint pass.
  r = Get(server->port(), "/readyz?exclude=informers-synced");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ok");
  r = Get(server->port(), "/readyz?verbose&exclude=informers-synced&exclude=nope");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body,
            "[+]ping ok\n"
            "[+]leader ok\n"
            "[+]informers-synced excluded: ok\n"
            "warn: some readyz checks cannot be excluded: no matches for \"nope\"\n"
            "readyz check passed\n");

  // Checks run per request: once synced, ready.
  synced = 5;
  r = Get(server->port(), "/readyz");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ok");
  r = Get(server->port(), "/readyz?verbose");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body,
            "[+]ping ok\n"
            "[+]leader ok\n"
            "[+]informers-synced ok\n"
            "readyz check passed\n");
}

TEST(OpsServerTest, CheckNamesAreUniquePerEndpoint) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  EXPECT_TRUE(server->AddLivezCheck("loop", [] { return copse::Status::Ok(); }).ok());
  copse::Status dup = server->AddLivezCheck("loop", [] { return copse::Status::Ok(); });
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().code, ErrorCode::kAlreadyExists);
  EXPECT_FALSE(server->AddHealthzCheck("ping", [] { return copse::Status::Ok(); }).ok());
  // The same name on another endpoint is fine.
  EXPECT_TRUE(server->AddHealthzCheck("loop", [] { return copse::Status::Ok(); }).ok());
  EXPECT_TRUE(
      server
          ->AddLivezCheck(
              "stuck",
              [] { return copse::Status(MakeError(ErrorCode::kTimeout, "no cycle for 60s")); })
          .ok());
  const Reply r = Get(server->port(), "/livez");
  EXPECT_EQ(r.status, 500);
  EXPECT_THAT(r.body, HasSubstr("[-]stuck failed: no cycle for 60s\n"));
  EXPECT_THAT(r.body, HasSubstr("livez check failed\n"));
  EXPECT_EQ(Get(server->port(), "/healthz").status, 200);
}

TEST(OpsServerTest, ServesMetricsInTheTextFormat) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(Get(server->port(), "/metrics").status, 404);  // no handler yet

  SchedulerMetrics metrics({"copse-scheduler"});
  metrics.ObserveScheduleAttempt("copse-scheduler", AttemptResult::kScheduled,
                                 std::chrono::microseconds(20));
  metrics.SetPendingPods(PendingQueue::kActive, 12);
  server->SetMetricsHandler([&metrics] { return metrics.Serialize(); });
  const Reply r = Get(server->port(), "/metrics");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_THAT(r.body, HasSubstr("scheduler_schedule_attempts_total{profile=\"copse-scheduler\","
                                "result=\"scheduled\"} 1\n"));
  EXPECT_THAT(r.body, HasSubstr("scheduler_pending_pods{queue=\"active\"} 12\n"));
  server->Stop();  // before `metrics` goes away
}

TEST(OpsServerTest, MethodsAndHead) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  Reply r = Get(server->port(), "/healthz", http::verb::post);
  EXPECT_EQ(r.status, 405);
  r = Get(server->port(), "/healthz", http::verb::head);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "");
  EXPECT_EQ(r.content_length, "2");
}

TEST(OpsServerTest, KeepAliveServesSeveralRequestsOnOneConnection) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  asio::io_context ioc;
  beast::tcp_stream stream(ioc);
  stream.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), server->port()));
  for (int i = 0; i < 3; ++i) {
    const Reply r = Request(stream, http::verb::get, i % 2 == 0 ? "/livez" : "/readyz?verbose",
                            /*keep_alive=*/true);
    EXPECT_EQ(r.status, 200);
  }
}

TEST(OpsServerTest, StopClosesTheListenerAndIdleConnections) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  const uint16_t port = server->port();
  asio::io_context ioc;
  beast::tcp_stream idle(ioc);
  idle.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  ASSERT_EQ(Get(port, "/healthz").status, 200);
  server->Stop();
  server->Stop();  // idempotent
  // The idle connection was closed by the server: a read sees EOF.
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  beast::error_code ec;
  http::read(idle, buffer, res, ec);
  EXPECT_TRUE(ec);
  // Nobody listens any more.
  tcp::socket s(ioc);
  s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), ec);
  EXPECT_EQ(ec, asio::error::connection_refused);
}

TEST(OpsServerTest, StartErrors) {
  auto first = StartServer();
  ASSERT_NE(first, nullptr);
  OpsServerOptions same;
  same.address = "127.0.0.1";
  same.port = first->port();
  Result<std::unique_ptr<OpsServer>> taken = OpsServer::Start(same);
  ASSERT_FALSE(taken.ok());
  EXPECT_EQ(taken.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(taken.error().message, HasSubstr(std::to_string(first->port())));

  OpsServerOptions bad;
  bad.address = "not-an-address";
  Result<std::unique_ptr<OpsServer>> invalid = OpsServer::Start(bad);
  ASSERT_FALSE(invalid.ok());
  EXPECT_EQ(invalid.error().code, ErrorCode::kInvalid);
  EXPECT_THAT(invalid.error().message, HasSubstr("not-an-address"));
}

// Over TLS, with an `authorize` function: every request is decided first
// (what it sees: method, path without the query, the Authorization header,
// the client's certificate chain), and a refusal is answered as decided.
TEST(OpsServerTest, HttpsAsksAuthorizeFirst) {
  auto serving = net::SelfSignedCertificate();
  auto ca = net::NewCertificateAuthority();
  ASSERT_TRUE(serving.ok() && ca.ok());
  net::CertificateOptions client_options;
  client_options.common_name = "reader";
  client_options.server_auth = false;
  auto client_cert = net::IssueCertificate(*ca, client_options);
  ASSERT_TRUE(client_cert.ok());

  std::mutex mu;
  std::vector<std::string> seen;  // "METHOD path auth chain?"
  OpsServerOptions options;
  options.tls_cert_pem = serving->cert_pem;
  options.tls_key_pem = serving->key_pem;
  options.authorize = [&](const AccessRequest& r) {
    {
      std::lock_guard<std::mutex> lock(mu);
      seen.push_back(std::string(r.method) + " " + std::string(r.path) + " [" +
                     std::string(r.authorization) + "] " +
                     (r.client_certificate_chain.find(client_cert->cert_pem) != std::string::npos
                          ? "cert"
                      : r.client_certificate_chain.empty() ? "none"
                                                           : "other"));
    }
    AccessDecision d;
    d.allowed = r.path != "/metrics" || r.authorization == "Bearer ok";
    if (!d.allowed) {
      d.status = 403;
      d.content_type = "application/json";
      d.body = R"({"kind":"Status","code":403})";
    }
    return d;
  };
  auto server = OpsServer::Start(options);
  ASSERT_TRUE(server.ok()) << server.error().message;
  (*server)->SetMetricsHandler([] { return std::string("m 1\n"); });
  EXPECT_EQ((*server)->url(), "https://127.0.0.1:" + std::to_string((*server)->port()));

  kube::IoThread io;
  const auto get = [&](const std::string& target, const std::string& authorization,
                       bool with_cert) -> net::ClientResponse {
    net::ClientOptions client;
    client.server = (*server)->url();
    client.ca_pem = serving->cert_pem;  // self-signed: its own CA
    if (with_cert) {
      client.client_cert_pem = client_cert->cert_pem;
      client.client_key_pem = client_cert->key_pem;
    }
    auto http = net::HttpClient::Create(client, io.executor());
    EXPECT_TRUE(http.ok());
    net::ClientRequest request;
    request.target = target;
    request.authorization = authorization;
    request.timeout = std::chrono::seconds(10);
    request.deadline = std::chrono::steady_clock::now() + request.timeout;
    auto response = io.Run((*http)->Send(request));
    EXPECT_TRUE(response.ok()) << response.error().message;
    return response.ok() ? *response : net::ClientResponse{};
  };
  const net::ClientResponse refused = get("/metrics?x=1", "", false);
  EXPECT_EQ(refused.status, 403);
  EXPECT_EQ(refused.body, R"({"kind":"Status","code":403})");
  EXPECT_EQ(refused.content_type, "application/json");
  const net::ClientResponse metrics = get("/metrics", "Bearer ok", true);
  EXPECT_EQ(metrics.status, 200);
  EXPECT_EQ(metrics.body, "m 1\n");
  EXPECT_EQ(get("/healthz", "", true).body, "ok");
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(seen, (std::vector<std::string>{"GET /metrics [] none", "GET /metrics [Bearer ok] cert",
                                            "GET /healthz [] cert"}));
}

}  // namespace
}  // namespace copse::scheduler::config
