// ApiWriter against the embedded API server: binds beyond
// max_binds_in_flight wait inside the writer (FIFO), every bind completes
// exactly once, and Drain waits for the queued ones too; events yield to
// binds.

#include "scheduler/api_writer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <utility>
#include <vector>

#include "kube/client.h"
#include "tests/integration/scheduler/harness.h"

namespace copse::scheduler::testing {
namespace {

// The embedded API server with one big node "n" and pods p-0..p-<n-1>, and
// a client of it.
class ApiWriterIntegration : public ::testing::Test {
 protected:
  std::vector<PodId> NodeAndPods(int pods) {
    NodeSpec node;
    node.name = "n";
    node.cpu = "1000";
    node.pods = "1000";
    cluster_.Create(kube::resources::kNodes, "", NodeJson(node));
    std::vector<PodId> ids;
    for (int i = 0; i < pods; ++i) {
      PodSpecOptions p;
      p.name = "p-" + std::to_string(i);
      auto created = cluster_.store().Create(kube::resources::kPods, "default", PodJson(p));
      EXPECT_TRUE(created.ok()) << created.error().ToString();
      if (created.ok()) ids.push_back(PodId{"default", p.name, (*created)->uid});
    }
    return ids;
  }
  std::shared_ptr<kube::Client> Client(size_t pipelined_connections = 0) {
    kube::ClientConfig config;
    config.server = cluster_.http_url();
    config.max_connections = 16;
    config.pipelined_connections = pipelined_connections;
    auto client = kube::Client::Create(config, io_.executor());
    EXPECT_TRUE(client.ok()) << client.error().ToString();
    return client.ok() ? *client : nullptr;
  }

  // The resourceVersion of each pod's bind, by pod index (pods bound to "n").
  std::vector<uint64_t> BindRvs(int pods) {
    std::vector<uint64_t> rvs(static_cast<size_t>(pods), 0);
    for (int i = 0; i < pods; ++i) {
      auto pod = cluster_.store().Get(kube::resources::kPods, "default", "p-" + std::to_string(i));
      EXPECT_TRUE(pod.ok() && (*pod)->node_name == "n") << "p-" << i << " is not bound to n";
      if (pod.ok()) rvs[static_cast<size_t>(i)] = (*pod)->rv;
    }
    return rvs;
  }
  // (pod index, resourceVersion) of every Event in "default"; events are
  // named "<pod>.<suffix>".
  std::vector<std::pair<int, uint64_t>> EventRvs() {
    apiserver::ListOptions list;
    list.ns = "default";
    auto events = cluster_.store().List(kube::resources::kEvents, list);
    EXPECT_TRUE(events.ok());
    std::vector<std::pair<int, uint64_t>> out;
    if (!events.ok()) return out;
    for (const auto& event : events->items) {
      const std::string pod = event->name.substr(0, event->name.find('.'));
      out.emplace_back(std::stoi(pod.substr(2)), event->rv);
    }
    return out;
  }

  Cluster cluster_{{}, /*start_simulator=*/false};
  kube::IoThread io_{2};
};

TEST_F(ApiWriterIntegration, BindsBeyondTheCapWaitInOrderAndAllComplete) {
  constexpr int kPods = 60;
  constexpr size_t kCap = 3;
  const std::vector<PodId> ids = NodeAndPods(kPods);
  ASSERT_EQ(ids.size(), static_cast<size_t>(kPods));
  auto client = Client();
  ASSERT_NE(client, nullptr);
  ApiWriterOptions options;
  options.record_events = false;
  options.max_binds_in_flight = kCap;
  ApiWriter writer(client, options);

  std::mutex mu;
  std::vector<int> order;
  std::atomic<int> failed{0};
  std::atomic<int> done{0};
  for (int i = 0; i < kPods; ++i) {
    writer.Bind(ids[static_cast<size_t>(i)], "n", [&, i](Status s) {
      if (!s.ok()) failed.fetch_add(1);
      {
        std::lock_guard lock(mu);
        order.push_back(i);
      }
      done.fetch_add(1);
    });
    // At most kCap binds are out at any moment: the rest are queued or done.
    ApiWriterStats stats = writer.stats();
    EXPECT_GE(stats.binds_queued + static_cast<size_t>(done.load()) + kCap,
              static_cast<size_t>(i + 1));
  }
  ASSERT_TRUE(writer.Drain(std::chrono::seconds(30)));
  EXPECT_EQ(done.load(), kPods);
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(writer.stats().binds_queued, 0u);
  EXPECT_EQ(writer.stats().binds_ok, static_cast<uint64_t>(kPods));
  // Sent in FIFO order: a bind completes no earlier than kCap places before its turn.
  for (size_t pos = 0; pos < order.size(); ++pos) {
    EXPECT_LE(static_cast<size_t>(order[pos]), pos + kCap) << "bind " << order[pos];
  }
  for (const kube::Pod& pod : cluster_.Pods()) EXPECT_EQ(pod.spec.node_name, "n") << pod.meta.name;
}

// Binds come in waves (one per cycle): events wait for binding to be quiet
// for event_quiet, not for the first moment no bind is outstanding, so a
// wave that follows within that time goes before them.
TEST_F(ApiWriterIntegration, EventsWaitForBindingToBeQuiet) {
  constexpr int kPods = 10;
  const std::vector<PodId> ids = NodeAndPods(kPods);
  ASSERT_EQ(ids.size(), static_cast<size_t>(kPods));
  auto client = Client();
  ASSERT_NE(client, nullptr);
  ApiWriterOptions options;
  options.event_quiet = std::chrono::milliseconds(500);
  options.max_event_defer = std::chrono::hours(1);
  ApiWriter writer(client, options);
  for (int i = 0; i < kPods / 2; ++i) {
    writer.Bind(ids[static_cast<size_t>(i)], "n", [](Status) {});
    writer.RecordPodEvent(ids[static_cast<size_t>(i)], "Normal", "Scheduled", "first wave");
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (writer.stats().binds_ok < kPods / 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  ASSERT_EQ(writer.stats().binds_ok, static_cast<uint64_t>(kPods / 2));
  // Binding is idle now; the second wave comes within the quiet time.
  for (int i = kPods / 2; i < kPods; ++i)
    writer.Bind(ids[static_cast<size_t>(i)], "n", [](Status) {});
  ASSERT_TRUE(writer.Drain(std::chrono::seconds(30)));
  EXPECT_EQ(writer.stats().events_sent, static_cast<uint64_t>(kPods / 2));

  const std::vector<uint64_t> bind_rv = BindRvs(kPods);
  const uint64_t last_bind_rv = *std::max_element(bind_rv.begin(), bind_rv.end());
  const auto events = EventRvs();
  ASSERT_EQ(events.size(), static_cast<size_t>(kPods / 2));
  for (const auto& [i, rv] : events) {
    EXPECT_GT(rv, last_bind_rv) << "the event of p-" << i
                                << " was written between two waves of binds";
  }
}

// Events recorded while binds are outstanding are written only after those
// binds: each event is stored after every bind queued before it.
TEST_F(ApiWriterIntegration, EventsWaitForOutstandingBinds) {
  constexpr int kPods = 40;
  const std::vector<PodId> ids = NodeAndPods(kPods);
  ASSERT_EQ(ids.size(), static_cast<size_t>(kPods));
  auto client = Client();
  ASSERT_NE(client, nullptr);
  ApiWriterOptions options;
  options.max_binds_in_flight = 2;  // binds queue up behind the cap
  options.max_event_defer = std::chrono::hours(1);
  ApiWriter writer(client, options);
  for (int i = 0; i < kPods; ++i) {
    writer.Bind(ids[static_cast<size_t>(i)], "n", [](Status) {});
    writer.RecordPodEvent(ids[static_cast<size_t>(i)], "Normal", "Scheduled",
                          "Successfully assigned default/p-" + std::to_string(i) + " to n");
  }
  ASSERT_TRUE(writer.Drain(std::chrono::seconds(30)));
  EXPECT_EQ(writer.stats().binds_ok, static_cast<uint64_t>(kPods));
  EXPECT_EQ(writer.stats().events_sent, static_cast<uint64_t>(kPods));

  const std::vector<uint64_t> bind_rv = BindRvs(kPods);
  std::vector<uint64_t> event_rv(kPods, 0);
  const auto events = EventRvs();
  ASSERT_EQ(events.size(), static_cast<size_t>(kPods));
  for (const auto& [i, rv] : events) event_rv[static_cast<size_t>(i)] = rv;
  for (int i = 0; i < kPods; ++i) {
    for (int j = 0; j <= i; ++j) {
      EXPECT_GT(event_rv[static_cast<size_t>(i)], bind_rv[static_cast<size_t>(j)])
          << "event of p-" << i << " was written before the bind of p-" << j;
    }
  }
}

// The Event the writer sends names its object and carries the message as
// given (quotes, backslashes and control characters escaped on the wire).
TEST_F(ApiWriterIntegration, EventsNameTheirObjectAndKeepTheMessage) {
  const std::vector<PodId> ids = NodeAndPods(1);
  ASSERT_EQ(ids.size(), 1u);
  const PodId& id = ids[0];
  auto client = Client();
  ASSERT_NE(client, nullptr);
  ApiWriter writer(client, ApiWriterOptions{});
  const std::string message = "0/3 nodes: \"quoted\" \\ back\nslash\t\x01";
  writer.RecordPodEvent(id, "Warning", "FailedScheduling", message);
  ASSERT_TRUE(writer.Drain(std::chrono::seconds(30)));
  EXPECT_EQ(writer.stats().events_sent, 1u);

  apiserver::ListOptions list;
  list.ns = "default";
  auto events = cluster_.store().List(kube::resources::kEvents, list);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->items.size(), 1u);
  const nlohmann::json event = nlohmann::json::parse(events->items[0]->json);
  EXPECT_TRUE(event["metadata"]["name"].get<std::string>().starts_with("p-0."));
  EXPECT_EQ(event["involvedObject"]["kind"], "Pod");
  EXPECT_EQ(event["involvedObject"]["apiVersion"], "v1");
  EXPECT_EQ(event["involvedObject"]["namespace"], "default");
  EXPECT_EQ(event["involvedObject"]["name"], "p-0");
  EXPECT_EQ(event["involvedObject"]["uid"], id.uid);
  EXPECT_EQ(event["reason"], "FailedScheduling");
  EXPECT_EQ(event["type"], "Warning");
  EXPECT_EQ(event["message"], message);
  EXPECT_EQ(event["source"]["component"], "copse-scheduler");
  EXPECT_EQ(event["reportingComponent"], "copse-scheduler");
  EXPECT_EQ(event["count"], 1);
  EXPECT_FALSE(event["firstTimestamp"].get<std::string>().empty());
  EXPECT_EQ(event["firstTimestamp"], event["lastTimestamp"]);
}

// Patches of one object land in the order they were made, though the
// client has 16 connections to send them on at once: the store sees 0, 1,
// 2, ... and the last one wins.
TEST_F(ApiWriterIntegration, PatchesOfOneObjectLandInOrder) {
  const std::vector<PodId> ids = NodeAndPods(1);
  ASSERT_EQ(ids.size(), 1u);
  apiserver::WatchOptions watch_options;
  watch_options.ns = "default";
  auto watch = cluster_.store().Watch(kube::resources::kPods, watch_options);
  ASSERT_TRUE(watch.ok());
  auto client = Client();
  ASSERT_NE(client, nullptr);
  ApiWriter writer(client, ApiWriterOptions{});
  constexpr int kPatches = 200;
  for (int i = 0; i < kPatches; ++i) {
    writer.MergePatch(kube::resources::kPods, "default", "p-0",
                      R"({"metadata":{"labels":{"seq":")" + std::to_string(i) + R"("}}})", "");
  }
  ASSERT_TRUE(writer.Drain(std::chrono::seconds(30)));
  EXPECT_EQ(writer.stats().status_patches, static_cast<uint64_t>(kPatches));

  std::vector<apiserver::WatchEvent> events;
  (*watch)->Take(&events);
  std::vector<int> seen;
  for (const auto& e : events) {
    const nlohmann::json pod = nlohmann::json::parse(e.object->json);
    const auto labels = pod["metadata"].value("labels", nlohmann::json::object());
    if (labels.contains("seq")) seen.push_back(std::stoi(labels["seq"].get<std::string>()));
  }
  ASSERT_EQ(seen.size(), static_cast<size_t>(kPatches));
  for (int i = 0; i < kPatches; ++i) EXPECT_EQ(seen[static_cast<size_t>(i)], i);
  auto pod = cluster_.store().Get(kube::resources::kPods, "default", "p-0");
  ASSERT_TRUE(pod.ok());
  EXPECT_NE((*pod)->json.find(R"("seq":"199")"), std::string::npos);
}

}  // namespace
}  // namespace copse::scheduler::testing
