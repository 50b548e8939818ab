// net::HttpClient against a net::Server: pooled keep-alive connections,
// pipelined writes, streamed bodies, deadlines and refused connections.
// (kube::Client's tests drive the same transport through the Kubernetes verbs.)

#include "net/client.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <mutex>
#include <vector>

#include "net/server.h"
#include "tests/unit/net/net_test_util.h"

namespace copse::net {
namespace {

using testing::Io;
using namespace std::chrono_literals;

std::unique_ptr<Server> StartEcho() {
  ServerOptions options;
  options.listeners = {{0, false}};
  options.threads = 2;
  auto server = Server::Start(options, [](const Request& r) {
    return Response(200, "text/plain",
                    std::string(r.method) + " " + std::string(r.target) + " " +
                        std::string(r.body) + " auth=" + std::string(r.authorization));
  });
  EXPECT_TRUE(server.ok()) << server.error().ToString();
  return server.ok() ? std::move(server).value() : nullptr;
}

std::shared_ptr<HttpClient> MakeClient(Io& io, uint16_t port, size_t pipelined = 0,
                                       size_t max_connections = 4) {
  ClientOptions options;
  options.server = "http://127.0.0.1:" + std::to_string(port) + "/prefix/";
  options.pipelined_connections = pipelined;
  options.max_connections = max_connections;
  auto client = HttpClient::Create(options, io.executor());
  EXPECT_TRUE(client.ok()) << client.error().ToString();
  return client.ok() ? *client : nullptr;
}

ClientRequest Req(std::string method, std::string target, std::string body = {}) {
  ClientRequest r;
  r.method = std::move(method);
  r.target = std::move(target);
  r.body = std::move(body);
  r.authorization = "Bearer t";
  r.timeout = 10s;
  r.deadline = std::chrono::steady_clock::now() + r.timeout;
  return r;
}

TEST(HttpClient, SendsThroughThePathPrefixAndReusesItsConnection) {
  auto server = StartEcho();
  ASSERT_NE(server, nullptr);
  Io io;
  auto client = MakeClient(io, server->port());
  for (int i = 0; i < 5; ++i) {
    auto response = io.Run(client->Send(Req("POST", "/x" + std::to_string(i), "b")));
    ASSERT_TRUE(response.ok()) << response.error().ToString();
    EXPECT_EQ(response->status, 200);
    EXPECT_EQ(response->body, "POST /prefix/x" + std::to_string(i) + " b auth=Bearer t");
  }
  const TransportStats stats = client->stats();
  EXPECT_EQ(stats.requests, 5u);
  EXPECT_EQ(stats.connections_created, 1u);
  EXPECT_EQ(stats.idle_connections, 1u);
}

TEST(HttpClient, PipelinedWritesGoOutInBatchesAndAnswerInOrder) {
  auto server = StartEcho();
  ASSERT_NE(server, nullptr);
  Io io;
  auto client = MakeClient(io, server->port(), /*pipelined=*/1, /*max_connections=*/2);
  constexpr int kWrites = 200;
  std::vector<std::future<Result<ClientResponse>>> pending;
  for (int i = 0; i < kWrites; ++i) {
    pending.push_back(
        io.Spawn(client->Send(Req("PUT", "/w" + std::to_string(i), std::to_string(i)))));
  }
  for (int i = 0; i < kWrites; ++i) {
    auto response = pending[static_cast<size_t>(i)].get();
    ASSERT_TRUE(response.ok()) << response.error().ToString();
    EXPECT_EQ(response->body,
              "PUT /prefix/w" + std::to_string(i) + " " + std::to_string(i) + " auth=Bearer t");
  }
  const TransportStats stats = client->stats();
  EXPECT_GE(stats.pipelined_batches, 1u);
  EXPECT_LT(stats.pipelined_batches,
            static_cast<uint64_t>(kWrites));  // some batches carried several
  EXPECT_LE(stats.connections_created, 2u);
}

TEST(HttpClient, ARefusedConnectionAndAnExpiredDeadlineAreErrorsThatSayWhere) {
  Io io;
  // A port nobody listens on: bind one, then close it.
  uint16_t port = 0;
  {
    auto server = StartEcho();
    ASSERT_NE(server, nullptr);
    port = server->port();
  }
  auto client = MakeClient(io, port);
  auto refused = io.Run(client->Send(Req("GET", "/nothing")));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(refused.error().message.rfind("GET /nothing: connecting to http://127.0.0.1:", 0), 0u)
      << refused.error().message;

  // A server that never answers: the deadline ends the request.
  ServerOptions options;
  options.listeners = {{0, false}};
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  auto slow = Server::Start(options, [released](const Request&) {
    released.wait_for(10s);
    return Response(200, "text/plain", "late");
  });
  ASSERT_TRUE(slow.ok());
  auto slow_client = MakeClient(io, (*slow)->port());
  ClientRequest request = Req("GET", "/slow");
  request.timeout = 200ms;
  request.deadline = std::chrono::steady_clock::now() + request.timeout;
  auto expired = io.Run(slow_client->Send(std::move(request)));
  release.set_value();
  ASSERT_FALSE(expired.ok());
  EXPECT_EQ(expired.error().code, ErrorCode::kTimeout);
  EXPECT_NE(expired.error().message.find("GET /slow: deadline of 200ms exceeded"),
            std::string::npos)
      << expired.error().message;
}

// A streamed response for Open(): three pieces, then the end.
class Pieces : public StreamBody {
 public:
  void Attach(std::function<void()>) override {}
  void Detach() override {}
  void Close() override {}
  Step Poll(std::string& out) override {
    Step step;
    out = "piece" + std::to_string(sent_++);
    step.more = sent_ < 3;
    step.done = sent_ >= 3;
    return step;
  }

 private:
  int sent_ = 0;
};

TEST(HttpClient, OpenReadsAStreamedBodyToItsEnd) {
  ServerOptions options;
  options.listeners = {{0, false}};
  auto server = Server::Start(options, [](const Request& r) {
    if (r.target == "/missing") return Response(404, "application/json", "{\"code\":404}");
    Response res(200, "application/json", "");
    res.stream = std::make_shared<Pieces>();
    return res;
  });
  ASSERT_TRUE(server.ok());
  Io io;
  ClientOptions client_options;
  client_options.server = "http://127.0.0.1:" + std::to_string((*server)->port());
  auto client = HttpClient::Create(client_options, io.executor());
  ASSERT_TRUE(client.ok());

  auto opened = io.Run((*client)->Open(Req("GET", "/stream")));
  ASSERT_TRUE(opened.ok()) << opened.error().ToString();
  ASSERT_EQ(opened->status, 200);
  ASSERT_NE(opened->stream, nullptr);
  std::string body;
  char buf[4];
  for (int i = 0; i < 100; ++i) {
    auto read = io.Run(opened->stream->ReadSome(buf, sizeof(buf), 5000ms));
    ASSERT_FALSE(read.error.has_value()) << read.error->ToString();
    body.append(buf, read.bytes);
    if (read.end) break;
  }
  EXPECT_EQ(body, "piece0piece1piece2");

  auto missing = io.Run((*client)->Open(Req("GET", "/missing")));
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(missing->error_body, "{\"code\":404}");
  EXPECT_EQ(missing->stream, nullptr);
}

TEST(HttpClient, CreateRejectsBadServersAndPem) {
  Io io;
  ClientOptions options;
  options.server = "ftp://x";
  auto bad = HttpClient::Create(options, io.executor());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("must start with https:// or http://"), std::string::npos);
  options.server = "https://127.0.0.1:6443";
  options.ca_pem = "nope";
  auto bad_ca = HttpClient::Create(options, io.executor());
  ASSERT_FALSE(bad_ca.ok());
  EXPECT_NE(bad_ca.error().message.find("certificate authority"), std::string::npos);
}

}  // namespace
}  // namespace copse::net
