// Transport behaviour of kube::Client against scripted sockets. The verbs
// against a real API server are in tests/integration/client/.

#include <gtest/gtest.h>

#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <stdexcept>

#include "kube/client.h"
#include "tests/unit/kube_client/raw_http_server.h"
#include "tests/unit/kube_client/test_util.h"

namespace copse::kube {
namespace {

using testing::RawConnection;
using testing::RawHttpServer;
using testing::RawRequest;

std::shared_ptr<Client> MakeClient(IoThread& io, ClientConfig config) {
  auto client = Client::Create(std::move(config), io.executor());
  if (!client.ok()) ADD_FAILURE() << client.error().ToString();
  return client.ok() ? *client : nullptr;
}

ClientConfig HttpConfig(const std::string& url) {
  ClientConfig config;
  config.server = url;
  return config;
}

// Answers every request on every connection with `{}` (keep-alive).
void EchoOk(RawConnection& conn) {
  while (auto req = conn.ReadRequest()) conn.WriteJsonResponse(200, "{}");
}

TEST(ClientCreate, RejectsBadConfiguration) {
  IoThread io;
  const auto create = [&](ClientConfig config) {
    return Client::Create(std::move(config), io.executor());
  };
  ClientConfig config;
  config.server = "ftp://x";
  EXPECT_EQ(create(config).error().code, ErrorCode::kInvalid);
  config.server = "https://127.0.0.1:99999";
  EXPECT_NE(create(config).error().message.find("bad port"), std::string::npos);
  config.server = "https://";
  EXPECT_NE(create(config).error().message.find("missing host"), std::string::npos);

  config.server = "https://127.0.0.1:6443";
  config.ca_pem = "not a certificate";
  auto bad_ca = create(config);
  ASSERT_FALSE(bad_ca.ok());
  EXPECT_EQ(bad_ca.error().code, ErrorCode::kInvalid);
  EXPECT_NE(bad_ca.error().message.find("certificate authority"), std::string::npos);

  const auto cert = testing::MakeSelfSignedCertificate("client");
  const auto other = testing::MakeSelfSignedCertificate("other");
  config.ca_pem = cert.cert_pem;
  config.client_cert_pem = cert.cert_pem;
  EXPECT_NE(create(config).error().message.find("both the certificate and the key"),
            std::string::npos);
  config.client_key_pem = other.key_pem;
  EXPECT_NE(create(config).error().message.find("does not match"), std::string::npos);
  config.client_key_pem = cert.key_pem;
  EXPECT_TRUE(create(config).ok());

  // Plain HTTP needs no TLS material at all.
  EXPECT_TRUE(create(HttpConfig("http://[::1]:8080/base/")).ok());
}

TEST(ClientTransport, InvalidArgumentsFailBeforeTheNetwork) {
  IoThread io;
  auto client = MakeClient(io, HttpConfig("http://127.0.0.1:1"));
  auto no_name = io.Run(client->Get(resources::kPods, "default", ""));
  EXPECT_EQ(no_name.error().code, ErrorCode::kInvalid);
  EXPECT_EQ(no_name.error().message, "name is required");
  auto no_ns = io.Run(client->Create(resources::kPods, "", "{}"));
  EXPECT_EQ(no_ns.error().message, "namespace is required");
  auto slash = io.Run(client->Get(resources::kPods, "default", "a/b"));
  EXPECT_EQ(slash.error().code, ErrorCode::kInvalid);
  auto apply = io.Run(client->Patch(resources::kPods, "default", "a", PatchType::kApply, "{}"));
  EXPECT_NE(apply.error().message.find("field manager"), std::string::npos);
  EXPECT_EQ(client->stats().requests, 0u);
}

TEST(ClientTransport, ConnectionRefusedIsUnavailable) {
  uint16_t port;
  {
    RawHttpServer closed(EchoOk, /*accept=*/false);
    port = closed.port();
  }
  IoThread io;
  auto client = MakeClient(io, HttpConfig("http://127.0.0.1:" + std::to_string(port)));
  auto result = io.Run(client->Get(resources::kNodes, "", "n1"));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(result.error().message.find("connecting to http://127.0.0.1:"), std::string::npos)
      << result.error().message;
}

TEST(ClientTransport, UnansweredRequestHitsTheDeadline) {
  RawHttpServer silent([](RawConnection& conn) {
    conn.ReadRequest();
    conn.ReadRequest();  // never answers; returns when the client gives up
  });
  IoThread io;
  auto client = MakeClient(io, HttpConfig(silent.url()));
  const auto start = std::chrono::steady_clock::now();
  GetOptions options;
  options.timeout = std::chrono::milliseconds(300);
  auto result = io.Run(client->Get(resources::kNodes, "", "n1", options));
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kTimeout);
  EXPECT_NE(result.error().message.find("GET /api/v1/nodes/n1: deadline of 300ms exceeded"),
            std::string::npos)
      << result.error().message;
  EXPECT_GE(elapsed, std::chrono::milliseconds(290));
  EXPECT_LT(elapsed, std::chrono::seconds(5));
}

TEST(ClientTransport, WaitingForAPooledConnectionHasADeadline) {
  std::mutex mu;
  std::condition_variable cv;
  int received = 0;
  RawHttpServer silent([&](RawConnection& conn) {
    while (conn.ReadRequest()) {
      std::lock_guard<std::mutex> lock(mu);
      ++received;
      cv.notify_all();
    }
  });
  IoThread io;
  ClientConfig config = HttpConfig(silent.url());
  config.max_connections = 1;
  auto client = MakeClient(io, config);
  // The first request holds the only connection (never answered); the second waits for it.
  GetOptions slow;
  slow.timeout = std::chrono::milliseconds(1500);
  auto first = io.Spawn(client->Get(resources::kNodes, "", "a", slow));
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return received == 1; }));
  }
  GetOptions fast;
  fast.timeout = std::chrono::milliseconds(200);
  auto second = io.Spawn(client->Get(resources::kNodes, "", "b", fast));
  auto b = second.get();
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().code, ErrorCode::kTimeout);
  EXPECT_NE(b.error().message.find("waiting for one of the 1 pooled connections"),
            std::string::npos)
      << b.error().message;
  auto a = first.get();
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().code, ErrorCode::kTimeout);
  EXPECT_EQ(client->stats().connections_created, 1u);
  // The timed-out connection was discarded; the pool works again.
  EXPECT_EQ(client->stats().open_connections, 0u);
}

TEST(ClientTransport, PoolReusesConnectionsAndRespectsTheLimit) {
  RawHttpServer server(EchoOk);
  IoThread io(2);
  ClientConfig config = HttpConfig(server.url());
  config.max_connections = 3;
  auto client = MakeClient(io, config);
  std::vector<std::future<Result<Response>>> pending;
  for (int i = 0; i < 50; ++i) {
    pending.push_back(io.Spawn(client->Request(HttpMethod::kGet, "/version")));
  }
  int ok = 0;
  for (auto& p : pending) {
    auto r = p.get();
    if (r.ok() && r->status == 200) ++ok;
  }
  EXPECT_EQ(ok, 50);
  const ClientStats stats = client->stats();
  EXPECT_LE(stats.connections_created, 3u);
  EXPECT_GE(stats.connections_created, 1u);
  EXPECT_EQ(stats.requests, 50u);
  EXPECT_EQ(stats.open_connections, stats.idle_connections);
  EXPECT_LE(server.accepted(), 3);
}

TEST(ClientTransport, ConnectionClosedByTheServerIsReplaced) {
  // One response per connection, then the server closes it (keep-alive lies).
  RawHttpServer server([](RawConnection& conn) {
    if (conn.ReadRequest()) conn.WriteJsonResponse(200, R"({"ok":true})");
    conn.Close();
  });
  IoThread io;
  auto client = MakeClient(io, HttpConfig(server.url()));
  for (int i = 0; i < 5; ++i) {
    auto result = io.Run(client->Request(HttpMethod::kGet, "/healthz"));
    ASSERT_TRUE(result.ok()) << result.error().ToString();
    EXPECT_EQ(result->body, R"({"ok":true})");
  }
  EXPECT_EQ(client->stats().connections_created, 5u);
}

TEST(ClientTransport, ServerErrorsAreDecodedFromStatus) {
  RawHttpServer server([](RawConnection& conn) {
    while (auto req = conn.ReadRequest()) {
      if (req->method == "POST") {
        conn.WriteJsonResponse(
            409,
            R"({"kind":"Status","status":"Failure","message":"pods \"p\" already exists","reason":"AlreadyExists","code":409})");
      } else {
        conn.WriteJsonResponse(
            404,
            R"({"kind":"Status","status":"Failure","message":"pods \"p\" not found","reason":"NotFound","code":404})");
      }
    }
  });
  IoThread io;
  auto client = MakeClient(io, HttpConfig(server.url()));
  auto created = io.Run(client->Create(resources::kPods, "default", "{}"));
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.error().code, ErrorCode::kAlreadyExists);
  EXPECT_EQ(created.error().http_status, 409);
  EXPECT_EQ(created.error().message, "pods \"p\" already exists");
  auto got = io.Run(client->Get(resources::kPods, "default", "p"));
  EXPECT_EQ(got.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(got.error().reason, "NotFound");
  // Raw requests see every status.
  auto raw = io.Run(client->Request(HttpMethod::kGet, "/api/v1/namespaces/default/pods/p"));
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(raw->status, 404);
  EXPECT_EQ(raw->content_type, "application/json");
}

TEST(ClientTransport, SendsHeadersQueryAndBodies) {
  std::mutex mu;
  std::vector<RawRequest> seen;
  RawHttpServer server([&](RawConnection& conn) {
    while (auto req = conn.ReadRequest()) {
      {
        std::lock_guard<std::mutex> lock(mu);
        seen.push_back(*req);
      }
      conn.WriteJsonResponse(200,
                             R"({"kind":"PodList","metadata":{"resourceVersion":"3"},"items":[]})");
    }
  });
  IoThread io;
  ClientConfig config = HttpConfig(server.url() + "/prefix");
  config.token = "secret";
  config.user_agent = "copse-test";
  auto client = MakeClient(io, config);
  ListOptions list_options;
  list_options.label_selector = "app in (a,b),tier!=db";
  list_options.field_selector = "spec.nodeName=";
  list_options.limit = 10;
  list_options.continue_token = "c/1";
  auto list = io.Run(client->List(resources::kPods, "ns", list_options));
  ASSERT_TRUE(list.ok()) << list.error().ToString();
  PatchOptions patch_options;
  patch_options.subresource = "status";
  patch_options.field_manager = "copse";
  auto patched = io.Run(client->Patch(resources::kPods, "ns", "p", PatchType::kStrategicMerge,
                                      R"({"metadata":{"labels":{"a":"b"}}})", patch_options));
  ASSERT_TRUE(patched.ok());
  DeleteOptions delete_options;
  delete_options.precondition_uid = "u-1";
  delete_options.precondition_resource_version = "7";
  delete_options.propagation_policy = "Foreground";
  delete_options.grace_period_seconds = 0;
  auto deleted = io.Run(client->Delete(resources::kPods, "ns", "p", delete_options));
  ASSERT_TRUE(deleted.ok());
  BindOptions bind_options;
  bind_options.pod_uid = "u-1";
  auto bound = io.Run(client->Bind("ns", "p", "node-1", bind_options));
  ASSERT_TRUE(bound.ok());
  DeleteOptions evict_options;
  evict_options.grace_period_seconds = 5;
  auto evicted = io.Run(client->Evict("ns", "p", evict_options));
  ASSERT_TRUE(evicted.ok());

  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(seen[0].method, "GET");
  EXPECT_EQ(seen[0].target,
            "/prefix/api/v1/namespaces/ns/pods?labelSelector=app%20in%20%28a%2Cb%29%2Ctier%21%3Ddb"
            "&fieldSelector=spec.nodeName%3D&limit=10&continue=c%2F1");
  EXPECT_EQ(seen[0].headers["authorization"], "Bearer secret");
  EXPECT_EQ(seen[0].headers["user-agent"], "copse-test");
  EXPECT_EQ(seen[0].headers["accept"], "application/json");
  EXPECT_EQ(seen[1].method, "PATCH");
  EXPECT_EQ(seen[1].target, "/prefix/api/v1/namespaces/ns/pods/p/status?fieldManager=copse");
  EXPECT_EQ(seen[1].headers["content-type"], "application/strategic-merge-patch+json");
  EXPECT_EQ(seen[2].method, "DELETE");
  EXPECT_EQ(
      seen[2].body,
      R"({"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0,"preconditions":{"uid":"u-1","resourceVersion":"7"},"propagationPolicy":"Foreground"})");
  EXPECT_EQ(seen[3].target, "/prefix/api/v1/namespaces/ns/pods/p/binding");
  EXPECT_EQ(
      seen[3].body,
      R"({"kind":"Binding","apiVersion":"v1","metadata":{"name":"p","namespace":"ns","uid":"u-1"},"target":{"kind":"Node","apiVersion":"v1","name":"node-1"}})");
  EXPECT_EQ(seen[4].target, "/prefix/api/v1/namespaces/ns/pods/p/eviction");
  EXPECT_EQ(
      seen[4].body,
      R"({"kind":"Eviction","apiVersion":"policy/v1","metadata":{"name":"p","namespace":"ns"},"deleteOptions":{"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":5}})");
}

TEST(ClientTransport, TokenFileIsReread) {
  testing::TempDir dir;
  const std::string token_file = dir.Write("token", "first\n");
  std::mutex mu;
  std::vector<std::string> tokens;
  RawHttpServer server([&](RawConnection& conn) {
    while (auto req = conn.ReadRequest()) {
      {
        std::lock_guard<std::mutex> lock(mu);
        tokens.push_back(req->headers["authorization"]);
      }
      conn.WriteJsonResponse(200, "{}");
    }
  });
  IoThread io;
  ClientConfig config = HttpConfig(server.url());
  config.token = "first";
  config.token_file = token_file;
  config.token_file_refresh = std::chrono::seconds(0);
  auto client = MakeClient(io, config);
  ASSERT_TRUE(io.Run(client->Request(HttpMethod::kGet, "/a")).ok());
  dir.Write("token", "second");
  ASSERT_TRUE(io.Run(client->Request(HttpMethod::kGet, "/b")).ok());
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(tokens, (std::vector<std::string>{"Bearer first", "Bearer second"}));
}

TEST(ClientTransport, RateLimiterSpacesRequests) {
  RawHttpServer server(EchoOk);
  IoThread io;
  ClientConfig config = HttpConfig(server.url());
  config.qps = 20;
  config.burst = 1;
  auto client = MakeClient(io, config);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(io.Run(client->Request(HttpMethod::kGet, "/")).ok());
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(190));
}

TEST(ClientTransport, ARateLimiterWaitBeyondTheDeadlineFailsAtOnce) {
  RawHttpServer server(EchoOk);
  IoThread io;
  ClientConfig config = HttpConfig(server.url());
  // One token per 100 s: after the first request the bucket stays empty for
  // the whole test however slowly it runs (e.g. under a sanitizer).
  config.qps = 0.01;
  config.burst = 1;
  auto client = MakeClient(io, config);
  ASSERT_TRUE(io.Run(client->Request(HttpMethod::kGet, "/")).ok());
  const auto start = std::chrono::steady_clock::now();
  auto late = io.Run(client->Request(HttpMethod::kGet, "/", {}, {}, std::chrono::seconds(5)));
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().code, ErrorCode::kTimeout);
  EXPECT_NE(late.error().message.find("rate limiter"), std::string::npos);
  // At once: it did not sit out the 5-second deadline first.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(4));
}

std::string Chunk(std::string_view data) {
  char size[32];
  std::snprintf(size, sizeof(size), "%zx\r\n", data.size());
  return std::string(size) + std::string(data) + "\r\n";
}

TEST(ClientWatch, ChunkedStreamSplitMidEvent) {
  const std::string events =
      R"({"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"a","resourceVersion":"5"}}})"
      "\n"
      R"({"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"6"}}})"
      "\n"
      R"({"type":"DELETED","object":{"kind":"Pod","metadata":{"name":"a","resourceVersion":"7"}}})";
  std::mutex mu;
  std::string target;
  RawHttpServer server([&](RawConnection& conn) {
    auto req = conn.ReadRequest();
    if (!req) return;
    {
      std::lock_guard<std::mutex> lock(mu);
      target = req->target;
    }
    conn.Write(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
    // Chunk boundaries that cut events and lines anywhere; the last event has no newline.
    for (size_t pos = 0; pos < events.size(); pos += 37) {
      conn.Write(Chunk(std::string_view(events).substr(pos, 37)));
    }
    conn.Write("0\r\n\r\n");
  });
  IoThread io;
  auto client = MakeClient(io, HttpConfig(server.url()));
  auto run = [](std::shared_ptr<Client> c) -> boost::asio::awaitable<std::vector<std::string>> {
    std::vector<std::string> seen;
    WatchOptions options;
    options.resource_version = "4";
    options.timeout_seconds = 30;
    auto watch = co_await c->Watch(resources::kPods, "ns", options);
    if (!watch.ok()) {
      seen.push_back("error: " + watch.error().ToString());
      co_return seen;
    }
    WatchEvent event;
    while (true) {
      auto next = co_await (*watch)->Next(event);
      if (!next.ok()) {
        seen.push_back("error: " + next.error().ToString());
        break;
      }
      if (!*next) {
        seen.push_back("end");
        break;
      }
      seen.push_back(std::string(WatchEventTypeName(event.type)) + " " + event.resource_version);
    }
    // After the end, Next keeps reporting the end.
    auto again = co_await (*watch)->Next(event);
    seen.push_back(again.ok() && !*again ? "end" : "not end");
    co_return seen;
  };
  auto seen = io.Run(run(client));
  EXPECT_EQ(seen, (std::vector<std::string>{"ADDED 5", "BOOKMARK 6", "DELETED 7", "end", "end"}));
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(target,
            "/api/v1/namespaces/ns/pods?watch=1&resourceVersion=4&allowWatchBookmarks=true"
            "&timeoutSeconds=30");
}

TEST(ClientWatch, NextBatchReturnsEverythingBuffered) {
  std::string events;
  for (int i = 1; i <= 50; ++i) {
    events += R"({"type":"ADDED","object":{"metadata":{"name":"p)" + std::to_string(i) +
              R"(","resourceVersion":")" + std::to_string(i) + "\"}}}\n";
  }
  events +=
      R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired","message":"gone"}})"
      "\n";
  RawHttpServer server([&](RawConnection& conn) {
    if (!conn.ReadRequest()) return;
    conn.Write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
    conn.Write(Chunk(events));
    conn.Write("0\r\n\r\n");
  });
  IoThread io;
  auto client = MakeClient(io, HttpConfig(server.url()));
  auto watch = io.Run(client->Watch(resources::kPods, ""));
  ASSERT_TRUE(watch.ok()) << watch.error().ToString();
  std::vector<WatchEvent> batch;
  size_t total = 0;
  std::string last_rv;
  while (true) {
    auto n = io.Run((*watch)->NextBatch(batch, 20));
    if (!n.ok()) {
      EXPECT_EQ(n.error().code, ErrorCode::kGone);
      break;
    }
    ASSERT_GT(*n, 0u);
    ASSERT_LE(*n, 20u);
    total += *n;
    last_rv = batch[*n - 1].resource_version;
  }
  EXPECT_EQ(total, 50u);  // every event before the error was delivered
  EXPECT_EQ(last_rv, "50");
  EXPECT_LE(batch.size(), 20u);
}

TEST(ClientWatch, BrokenStreamAndGoneAtOpen) {
  RawHttpServer server([&](RawConnection& conn) {
    auto req = conn.ReadRequest();
    if (!req) return;
    if (req->target.find("resourceVersion=1&") != std::string::npos) {
      conn.WriteJsonResponse(
          410,
          R"json({"kind":"Status","status":"Failure","message":"too old resource version: 1 (50)","reason":"Expired","code":410})json",
          false);
      return;
    }
    conn.Write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
    conn.Write(Chunk(R"({"type":"ADDED","object":{"metadata":{"resourceVersion":"9"}}})"
                     "\n"));
    conn.Close();  // no terminating chunk
  });
  IoThread io;
  auto client = MakeClient(io, HttpConfig(server.url()));
  WatchOptions old;
  old.resource_version = "1";
  auto gone = io.Run(client->Watch(resources::kPods, "", old));
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, ErrorCode::kGone);
  EXPECT_EQ(gone.error().message, "too old resource version: 1 (50)");

  WatchOptions recent;
  recent.resource_version = "8";
  auto watch = io.Run(client->Watch(resources::kPods, "", recent));
  ASSERT_TRUE(watch.ok()) << watch.error().ToString();
  WatchEvent event;
  auto first = io.Run((*watch)->Next(event));
  ASSERT_TRUE(first.ok() && *first);
  EXPECT_EQ(event.resource_version, "9");
  auto broken = io.Run((*watch)->Next(event));
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(broken.error().message.find("stream broken"), std::string::npos);
}

TEST(ClientWatch, CancelEndsAPendingNext) {
  std::mutex mu;
  std::condition_variable cv;
  bool streaming = false;
  RawHttpServer server([&](RawConnection& conn) {
    if (!conn.ReadRequest()) return;
    conn.Write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
    {
      std::lock_guard<std::mutex> lock(mu);
      streaming = true;
    }
    cv.notify_all();
    conn.ReadRequest();  // blocks until the client closes the connection
  });
  IoThread io;
  auto client = MakeClient(io, HttpConfig(server.url()));
  auto watch = io.Run(client->Watch(resources::kPods, ""));
  ASSERT_TRUE(watch.ok()) << watch.error().ToString();
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return streaming; }));
  }
  auto run = [](kube::Watch* w) -> boost::asio::awaitable<Result<bool>> {
    WatchEvent event;
    auto ex = co_await boost::asio::this_coro::executor;
    // Cancel from the same (single-threaded) executor while Next is suspended.
    boost::asio::post(ex, [w] { w->Cancel(); });
    co_return co_await w->Next(event);
  };
  auto result = io.Run(run(watch->get()));
  ASSERT_TRUE(result.ok()) << result.error().ToString();
  EXPECT_FALSE(*result);
}

TEST(IoThread, RunReturnsValuesAndRethrows) {
  IoThread io(2);
  auto value = []() -> boost::asio::awaitable<int> { co_return 42; };
  EXPECT_EQ(io.Run(value()), 42);
  auto thrower = []() -> boost::asio::awaitable<void> {
    throw std::runtime_error("boom");
    co_return;
  };
  EXPECT_THROW(io.Run(thrower()), std::runtime_error);
}

}  // namespace
}  // namespace copse::kube
