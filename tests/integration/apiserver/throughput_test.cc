// Throughput and memory of the embedded API server from loopback clients.
// Disabled by default (timing on a shared machine is not a pass/fail
// signal); run with --gtest_also_run_disabled_tests --gtest_filter='*Throughput*'.
// Prints creates/s, binds/s, watch events/s and RSS.

#include <atomic>
#include <fstream>
#include <thread>
#include <vector>

#include "tests/integration/apiserver/test_util.h"

namespace copse::kube::apiserver::testing {
namespace {

size_t RssBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

template <typename F>
double RunParallel(int threads, int total, F&& op) {
  std::atomic<int> next{0};
  std::atomic<int> failures{0};
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      (void)t;
      op(next, failures);
    });
  }
  for (auto& w : workers) w.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(failures.load(), 0);
  return total / seconds;
}

TEST_F(ApiServerTest, DISABLED_Throughput) {
  const int pods = std::getenv("COPSE_PODS") ? std::atoi(std::getenv("COPSE_PODS")) : 100000;
  const int threads = 4;
  const size_t rss_before = RssBytes();
  const std::string body_template = MakePod("NAME", {{"app", "bench"}}).dump();
  const double creates = RunParallel(threads, pods, [&](std::atomic<int>& next,
                                                        std::atomic<int>& failures) {
    HttpClient c(port());
    for (int i = next++; i < pods; i = next++) {
      std::string body = body_template;
      body.replace(body.find("NAME"), 4, "bench-" + std::to_string(i));
      if (c.Request("POST", "/api/v1/namespaces/default/pods", body).status != 201) ++failures;
    }
  });
  const double binds = RunParallel(threads, pods, [&](std::atomic<int>& next,
                                                      std::atomic<int>& failures) {
    HttpClient c(port());
    for (int i = next++; i < pods; i = next++) {
      const std::string name = "bench-" + std::to_string(i);
      const std::string body = "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"" +
                               name + "\"},\"target\":{\"kind\":\"Node\",\"name\":\"node-" +
                               std::to_string(i % 5000) + "\"}}";
      if (c.Request("POST", "/api/v1/namespaces/default/pods/" + name + "/binding", body).status !=
          201) {
        ++failures;
      }
    }
  });
  const size_t rss_after = RssBytes();

  // Watch replay: every pod as an ADDED event, then the binds as MODIFIED.
  const auto start = std::chrono::steady_clock::now();
  WatchReader watch(port(), "/api/v1/pods?watch=true&resourceVersion=0", {}, false);
  int events = 0;
  while (events < pods && watch.Next(std::chrono::seconds(30))) ++events;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(events, pods);

  std::printf("pods=%d creates/s=%.0f binds/s=%.0f watch events/s=%.0f rss_delta=%.0f MiB rss=%.0f MiB\n",
              pods, creates, binds, events / seconds, (rss_after - rss_before) / 1048576.0,
              rss_after / 1048576.0);
}

}  // namespace
}  // namespace copse::kube::apiserver::testing
