// The hot path end to end: watch events from the embedded API server through
// Client::Watch (HTTP chunked stream, incremental simdjson decoding) and
// through an Informer (decode + store + handlers).

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>

#include "kube/informer.h"
#include "tests/integration/client/fixture.h"

namespace copse::kube {
namespace {

constexpr int kPods = 30'000;

class WatchThroughput : public ::testing::Test {
 protected:
  void SetUp() override {
    apiserver::Options options;
    options.serve_https = false;
    server_ = testing::StartServer(options);
    ASSERT_NE(server_, nullptr);
    for (int i = 0; i < kPods; ++i) {
      auto created = server_->store().Create(
          resources::kPods, "default",
          testing::PodJson("default", "pod-" + std::to_string(i),
                           {{"app", "bench"}, {"scheduling.copse.dev/pod-group", "gang-1"}}));
      ASSERT_TRUE(created.ok()) << created.error().ToString();
    }
    client_ = testing::HttpClient(io_, *server_);
  }

  IoThread io_;
  std::unique_ptr<apiserver::ApiServer> server_;
  std::shared_ptr<Client> client_;
};

// CPU time of the calling thread; on the IoThread's (single) thread it is the
// client's own cost, independent of the server's speed and of machine load.
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

boost::asio::awaitable<double> IoThreadCpu() { co_return ThreadCpuSeconds(); }

boost::asio::awaitable<Result<int>> Drain(kube::Watch* watch, int want) {
  WatchEvent event;
  int events = 0;
  while (events < want) {
    auto next = co_await watch->Next(event);
    if (!next.ok()) co_return next.error();
    if (!*next) break;
    if (event.type != WatchEventType::kBookmark) ++events;
  }
  co_return events;
}

TEST_F(WatchThroughput, ClientWatchDeliversOver100kEventsPerSecond) {
  // From resourceVersion 0 the server replays every pod as ADDED.
  WatchOptions options;
  options.allow_bookmarks = false;
  const double cpu_start = io_.Run(IoThreadCpu());
  const auto start = std::chrono::steady_clock::now();
  auto watch = io_.Run(client_->Watch(resources::kPods, "default", options));
  ASSERT_TRUE(watch.ok()) << watch.error().ToString();
  auto events = io_.Run(Drain(watch->get(), kPods));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu = io_.Run(IoThreadCpu()) - cpu_start;
  ASSERT_TRUE(events.ok()) << events.error().ToString();
  ASSERT_EQ(*events, kPods);
  std::printf(
      "client watch: %d events in %.3f s wall (%.0f events/s with the server on the same 2 "
      "cores); client CPU %.3f s = %.0f events/s per core\n",
      kPods, seconds, kPods / seconds, cpu, kPods / cpu);
  EXPECT_GE(kPods / cpu, 100'000.0);
}

TEST_F(WatchThroughput, InformerAppliesOver100kEventsPerSecond) {
  // Synced from a list; then, while the server is down, every pod changes
  // once; the restarted server replays the 30,000 changes to the resumed
  // watch in a burst, which the informer applies (DecodeUnstructured, store
  // with the namespace index, handler).
  std::atomic<int> updates{0};
  testing::Notifier notifier;
  InformerOptions options;
  options.resource = resources::kPods;
  options.page_size = 5000;
  options.backoff.initial = std::chrono::milliseconds(10);
  options.backoff.max = std::chrono::milliseconds(50);
  Informer informer(client_, options);
  EventHandler handler;
  handler.on_update = [&](const ObjectPtr&, const ObjectPtr&) {
    if (updates.fetch_add(1) + 1 == kPods) notifier.Notify();
  };
  informer.AddEventHandler(handler);
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(std::chrono::seconds(60)));
  EXPECT_EQ(informer.store().size(), static_cast<size_t>(kPods));

  const uint16_t port = server_->http_port();
  std::shared_ptr<apiserver::Store> store = server_->store().shared_from_this();
  server_->Stop();
  server_.reset();
  for (int i = 0; i < kPods; ++i) {
    auto patched = store->Patch(resources::kPods, "default", "pod-" + std::to_string(i),
                                apiserver::PatchType::kMerge,
                                R"({"metadata":{"labels":{"round":"2"}}})");
    ASSERT_TRUE(patched.ok()) << patched.error().ToString();
  }
  const double cpu_start = io_.Run(IoThreadCpu());
  const auto start = std::chrono::steady_clock::now();
  apiserver::Options server_options;
  server_options.store = store;
  server_options.serve_https = false;
  server_options.http_port = port;
  server_ = testing::StartServer(server_options);
  ASSERT_NE(server_, nullptr);
  ASSERT_TRUE(notifier.WaitFor([&] { return updates.load() == kPods; }, std::chrono::seconds(60)));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu = io_.Run(IoThreadCpu()) - cpu_start;
  std::printf(
      "informer: %d events applied in %.3f s wall (%.0f/s, server on the same cores); informer "
      "CPU %.3f s = %.0f events/s per core\n",
      kPods, seconds, kPods / seconds, cpu, kPods / cpu);
  EXPECT_GE(kPods / cpu, 100'000.0);
  EXPECT_EQ(informer.stats().lists, 1u);  // resumed, not relisted
}

}  // namespace
}  // namespace copse::kube
