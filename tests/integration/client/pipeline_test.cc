// Pipelined writes (ClientConfig::pipelined_connections) against the real
// embedded API server: concurrent writes share batches on at most the
// configured number of connections, every caller gets its own response (in
// order, errors included), and failures end in errors, not hangs.

#include <gtest/gtest.h>

#include <boost/asio/ip/tcp.hpp>
#include <future>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/integration/client/fixture.h"

namespace copse::kube {
namespace {

using nlohmann::json;
using testing::PodJson;

ClientConfig Pipelined(ClientConfig config) {
  config.pipelined_connections = 2;
  config.max_connections = 16;
  return config;
}

void WritesShareBatchesAndGetTheirOwnResponses(ClientConfig base) {
  IoThread io(2);
  apiserver::Options options;
  auto server = testing::StartServer(options);
  ASSERT_NE(server, nullptr);
  if (base.server.empty()) {
    auto loaded = LoadKubeconfig(server->Kubeconfig());
    ASSERT_TRUE(loaded.ok()) << loaded.error().ToString();
    base = *loaded;
  }
  if (base.server == "http") base.server = server->http_url();
  auto client = testing::MakeClient(io, Pipelined(base));
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(
      io.Run(client->Create(resources::kPods, "default", PodJson("default", "taken"))).ok());
  const ClientStats before = client->stats();

  // 300 writes at once; every 10th creates a pod that already exists.
  constexpr int kWrites = 300;
  std::vector<std::future<Result<std::string>>> pending;
  for (int i = 0; i < kWrites; ++i) {
    const std::string name = i % 10 == 0 ? "taken" : "p-" + std::to_string(i);
    pending.push_back(
        io.Spawn(client->Create(resources::kPods, "default", PodJson("default", name))));
  }
  for (int i = 0; i < kWrites; ++i) {
    Result<std::string> got = pending[static_cast<size_t>(i)].get();
    if (i % 10 == 0) {
      ASSERT_FALSE(got.ok()) << "write " << i;
      EXPECT_EQ(got.error().code, ErrorCode::kAlreadyExists) << got.error().ToString();
      continue;
    }
    ASSERT_TRUE(got.ok()) << "write " << i << ": " << got.error().ToString();
    EXPECT_EQ(json::parse(*got)["metadata"]["name"], "p-" + std::to_string(i));
  }
  const ClientStats after = client->stats();
  EXPECT_EQ(after.requests - before.requests, static_cast<uint64_t>(kWrites));
  // Batched: fewer batches than writes, on at most the two pipelined connections.
  EXPECT_GE(after.pipelined_batches - before.pipelined_batches, 1u);
  EXPECT_LT(after.pipelined_batches - before.pipelined_batches, static_cast<uint64_t>(kWrites));
  EXPECT_LE(after.connections_created, 2u);
  // Reads are not pipelined and still work on the same pool.
  auto list = io.Run(client->List(resources::kPods, "default"));
  ASSERT_TRUE(list.ok()) << list.error().ToString();
  EXPECT_EQ(list->items.size(), static_cast<size_t>(kWrites - kWrites / 10 + 1));
}

TEST(ClientPipeline, HttpWritesShareBatchesAndGetTheirOwnResponses) {
  ClientConfig config;
  config.server = "http";  // filled in with the server's URL
  WritesShareBatchesAndGetTheirOwnResponses(config);
}

TEST(ClientPipeline, HttpsWritesShareBatchesAndGetTheirOwnResponses) {
  WritesShareBatchesAndGetTheirOwnResponses(ClientConfig{});  // from the server's kubeconfig
}

TEST(ClientPipeline, AWriteToAStoppedServerFails) {
  IoThread io(2);
  auto server = testing::StartServer();
  ASSERT_NE(server, nullptr);
  ClientConfig config;
  config.server = server->http_url();
  auto client = testing::MakeClient(io, Pipelined(config));
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(io.Run(client->Create(resources::kPods, "default", PodJson("default", "a"))).ok());
  server->Stop();
  server.reset();
  auto got = io.Run(client->Create(resources::kPods, "default", PodJson("default", "b")));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().code, ErrorCode::kUnavailable) << got.error().ToString();
  EXPECT_GE(client->stats().pipelined_batches, 1u);  // the writes took the pipeline
}

TEST(ClientPipeline, AWriteWithoutAResponseTimesOut) {
  // A server that accepts connections and never answers.
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::acceptor acceptor(
      ioc, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
  boost::asio::ip::tcp::socket held(ioc);
  acceptor.async_accept(held, [](boost::system::error_code) {});
  std::thread accepting([&] { ioc.run(); });

  IoThread io(2);
  ClientConfig config;
  config.server = "http://127.0.0.1:" + std::to_string(acceptor.local_endpoint().port());
  auto client = testing::MakeClient(io, Pipelined(config));
  ASSERT_NE(client, nullptr);
  WriteOptions options;
  options.timeout = std::chrono::milliseconds(300);
  std::vector<std::future<Result<std::string>>> pending;
  for (int i = 0; i < 5; ++i) {
    pending.push_back(io.Spawn(client->Create(
        resources::kPods, "default", PodJson("default", "p" + std::to_string(i)), options)));
  }
  for (auto& p : pending) {
    Result<std::string> got = p.get();
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.error().code, ErrorCode::kTimeout) << got.error().ToString();
  }
  EXPECT_GE(client->stats().pipelined_batches, 1u);  // the writes took the pipeline
  ioc.stop();
  accepting.join();
}

}  // namespace
}  // namespace copse::kube
