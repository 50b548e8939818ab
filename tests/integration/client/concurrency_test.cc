// Many writers doing read-modify-write on shared objects through one client:
// optimistic concurrency (409 Conflict + retry) must lose no update.

#include <gtest/gtest.h>

#include <atomic>
#include <nlohmann/json.hpp>

#include "kube/informer.h"
#include "tests/integration/client/fixture.h"

namespace copse::kube {
namespace concurrency_test {

using nlohmann::json;

const ResourceRef kConfigMaps{"", "v1", "configmaps", true};
constexpr int kWriters = 8;
constexpr int kUpdates = 2000;  // in total
constexpr int kObjects = 4;

struct WriterResult {
  int updates = 0;
  int conflicts = 0;
  std::string error;
};

// Increments data.count of the writer's objects (round robin), retrying on conflicts.
boost::asio::awaitable<WriterResult> Writer(std::shared_ptr<Client> client, int writer,
                                            int updates) {
  WriterResult result;
  for (int i = 0; i < updates; ++i) {
    const std::string name = "counter-" + std::to_string((writer + i) % kObjects);
    while (true) {
      auto current = co_await client->Get(kConfigMaps, "default", name);
      if (!current.ok()) {
        result.error = current.error().ToString();
        co_return result;
      }
      json object = json::parse(*current);
      const int count = std::stoi(object["data"]["count"].get<std::string>());
      object["data"]["count"] = std::to_string(count + 1);
      auto updated = co_await client->Update(kConfigMaps, "default", name, object.dump());
      if (updated.ok()) break;
      if (updated.error().code != ErrorCode::kConflict) {
        result.error = updated.error().ToString();
        co_return result;
      }
      ++result.conflicts;
    }
    ++result.updates;
  }
  co_return result;
}

TEST(ClientConcurrency, ReadModifyWriteLosesNoUpdate) {
  apiserver::Options server_options;
  server_options.threads = 2;
  auto server = testing::StartServer(server_options);
  ASSERT_NE(server, nullptr);
  IoThread io(2);
  auto client = testing::HttpsClient(io, *server);
  ASSERT_NE(client, nullptr);
  for (int i = 0; i < kObjects; ++i) {
    auto created = io.Run(
        client->Create(kConfigMaps, "default",
                       testing::ConfigMapJson("default", "counter-" + std::to_string(i), "0")));
    ASSERT_TRUE(created.ok()) << created.error().ToString();
  }

  // An informer follows the counters while they change.
  testing::Notifier notifier;
  InformerOptions options;
  options.resource = kConfigMaps;
  options.namespace_ = "default";
  Informer informer(client, options);
  EventHandler handler;
  handler.on_update = [&](const ObjectPtr&, const ObjectPtr&) { notifier.Notify(); };
  informer.AddEventHandler(handler);
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(std::chrono::seconds(30)));

  std::vector<std::future<WriterResult>> writers;
  for (int w = 0; w < kWriters; ++w)
    writers.push_back(io.Spawn(Writer(client, w, kUpdates / kWriters)));
  int updates = 0;
  int conflicts = 0;
  for (auto& f : writers) {
    WriterResult r = f.get();
    EXPECT_TRUE(r.error.empty()) << r.error;
    updates += r.updates;
    conflicts += r.conflicts;
  }
  EXPECT_EQ(updates, kUpdates);
  std::printf("%d updates by %d writers, %d conflicts retried, %llu connections\n", updates,
              kWriters, conflicts,
              static_cast<unsigned long long>(client->stats().connections_created));

  int total = 0;
  for (int i = 0; i < kObjects; ++i) {
    auto got = io.Run(client->Get(kConfigMaps, "default", "counter-" + std::to_string(i)));
    ASSERT_TRUE(got.ok()) << got.error().ToString();
    total += std::stoi(json::parse(*got)["data"]["count"].get<std::string>());
  }
  EXPECT_EQ(total, kUpdates);

  // The informer converges to the same totals.
  auto informer_total = [&] {
    int sum = 0;
    for (const auto& object : informer.store().List()) {
      sum += std::stoi(json::parse(object->raw)["data"]["count"].get<std::string>());
    }
    return sum;
  };
  EXPECT_TRUE(notifier.WaitFor([&] { return informer_total() == kUpdates; }));
  EXPECT_LE(client->stats().connections_created, client->config().max_connections + 1);
}

}  // namespace concurrency_test
}  // namespace copse::kube
