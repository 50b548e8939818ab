// `copse local --data-dir` killed with SIGKILL in the middle of a write burst
// from concurrent clients, then restarted on the same directory: every write
// a client was told succeeded is there with the resourceVersion it was told,
// nothing deleted with an acknowledgement came back, resourceVersions go on
// above every one handed out, and a watch from before the crash is told 410
// Gone (so an informer relists).

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/apiserver/http_helper.h"
#include "tests/support/paths.h"
#include "tests/support/process.h"

namespace copse::e2e {
namespace {

using apiserver::testing::HttpClient;
using apiserver::testing::WatchReader;
using nlohmann::json;

// `copse local` on a data directory, API server only, plain HTTP port parsed
// from its start-up line.
struct Local {
  std::unique_ptr<Process> process;
  uint16_t http_port = 0;
};

std::optional<Local> StartLocal(const std::string& data_dir, const std::string& dir) {
  Local local;
  local.process = std::make_unique<Process>(std::vector<std::string>{
      COPSE_BINARY, "local", "--port", "0", "--http-port", "0", "--no-token", "--nodes", "0",
      "--no-scheduler", "--no-grove", "--no-controllers", "--data-dir", data_dir,
      "--kubeconfig-out", dir + "/kubeconfig"});
  if (!local.process->WaitForLine("copse local: ready", std::chrono::seconds(30))) {
    ADD_FAILURE() << "copse local did not start:\n" << local.process->seen();
    return std::nullopt;
  }
  std::smatch m;
  const std::string seen = local.process->seen();
  if (!std::regex_search(seen, m, std::regex(R"(plain HTTP http://127\.0\.0\.1:([0-9]+))"))) {
    ADD_FAILURE() << "no HTTP port in:\n" << seen;
    return std::nullopt;
  }
  local.http_port = static_cast<uint16_t>(std::stoi(m[1]));
  return local;
}

// What a client was told about one ConfigMap (each is written by one thread).
struct Acked {
  bool exists = false;
  std::string rv;
  std::string value;
};

TEST(PersistE2E, SigkillDuringAWriteBurstLosesNoAcknowledgedWrite) {
  char tmpl[] = "/tmp/copse-persist-e2e-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string data_dir = dir + "/data";
  auto local = StartLocal(data_dir, dir);
  ASSERT_TRUE(local.has_value());

  constexpr int kClients = 8;
  std::mutex mu;
  std::map<std::string, Acked> acked;
  std::map<std::string, bool> uncertain;  // in flight at the kill: either outcome is right
  std::atomic<int> total_acks{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c, port = local->http_port] {
      HttpClient http(port);
      const std::string base = "/api/v1/namespaces/default/configmaps";
      for (int i = 0; !stop; ++i) {
        const std::string name = "c" + std::to_string(c) + "-" + std::to_string(i / 3);
        const std::string value = std::to_string(i);
        {
          std::lock_guard<std::mutex> lock(mu);
          uncertain[name] = true;
        }
        // Per name: create, update, and every other name a delete.
        apiserver::testing::Response r;
        bool deleted = false;
        try {  // connecting to the killed server throws
          if (i % 3 == 0) {
            r = http.Post(base, json{{"apiVersion", "v1"},
                                     {"kind", "ConfigMap"},
                                     {"metadata", {{"name", name}}},
                                     {"data", {{"v", value}}}});
          } else if (i % 3 == 1 || (i / 3) % 2 == 0) {
            r = http.Patch(base + "/" + name, json{{"data", {{"v", value}}}});
          } else {
            r = http.Delete(base + "/" + name);
            deleted = true;
          }
        } catch (const std::exception&) {
          return;
        }
        if (r.status == 0) return;  // the server is gone: the write's outcome is unknown
        if (r.status != 200 && r.status != 201) {
          ADD_FAILURE() << "write of " << name << ": " << r.status << " " << r.body;
          return;
        }
        const json body = r.Json();
        std::lock_guard<std::mutex> lock(mu);
        uncertain.erase(name);
        Acked& a = acked[name];
        a.exists = !deleted;
        a.value = value;
        a.rv = body["metadata"].value("resourceVersion", "");
        ++total_acks;
      }
    });
  }
  // Kill once the burst is well under way (a deadline, not a fixed sleep).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (total_acks < 3000 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  local->process->KillHard();
  local->process->Wait();
  stop = true;
  for (auto& t : clients) t.join();
  ASSERT_GE(total_acks.load(), 3000) << "the burst was too slow";
  uint64_t max_acked_rv = 0;
  for (const auto& [name, a] : acked)
    max_acked_rv = std::max<uint64_t>(max_acked_rv, std::stoull(a.rv));

  auto restarted = StartLocal(data_dir, dir);
  ASSERT_TRUE(restarted.has_value());
  HttpClient http(restarted->http_port);
  auto listed = http.Get("/api/v1/namespaces/default/configmaps");
  ASSERT_EQ(listed.status, 200) << listed.body;
  const json list = listed.Json();
  std::map<std::string, json> stored;
  for (const auto& item : list["items"]) stored[item["metadata"]["name"]] = item;
  size_t checked = 0;
  for (const auto& [name, a] : acked) {
    if (uncertain.count(name) != 0) continue;
    auto it = stored.find(name);
    if (!a.exists) {
      EXPECT_EQ(it, stored.end()) << name << " was deleted (acknowledged) but came back";
      ++checked;
      continue;
    }
    ASSERT_NE(it, stored.end()) << name << " was acknowledged at rv " << a.rv << " but is lost";
    EXPECT_EQ(it->second["metadata"]["resourceVersion"], a.rv) << name;
    EXPECT_EQ(it->second["data"]["v"], a.value) << name;
    ++checked;
  }
  EXPECT_GT(checked, 500u);
  // Names nobody was told about (the uncertain ones aside) do not appear.
  for (const auto& [name, item] : stored) {
    if (name.rfind('c', 0) != 0) continue;
    EXPECT_TRUE(acked.count(name) != 0 || uncertain.count(name) != 0) << name;
  }

  // resourceVersions go on above every acknowledged one.
  const uint64_t list_rv = std::stoull(list["metadata"]["resourceVersion"].get<std::string>());
  EXPECT_GE(list_rv, max_acked_rv);
  auto created = http.Post("/api/v1/namespaces/default/configmaps",
                           json{{"apiVersion", "v1"},
                                {"kind", "ConfigMap"},
                                {"metadata", {{"name", "after-restart"}}},
                                {"data", {{"v", "x"}}}});
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_GT(std::stoull(created.Json()["metadata"]["resourceVersion"].get<std::string>()),
            max_acked_rv);

  // A watch from a resourceVersion seen before the crash: 410 Gone.
  WatchReader watch(restarted->http_port,
                    "/api/v1/namespaces/default/configmaps?watch=1&"
                    "resourceVersion=" +
                        std::to_string(max_acked_rv));
  if (watch.status() == 200) {
    auto event = watch.Next(std::chrono::seconds(10));
    ASSERT_TRUE(event.has_value());
    EXPECT_EQ((*event)["type"], "ERROR") << event->dump();
    EXPECT_EQ((*event)["object"]["code"], 410) << event->dump();
  } else {
    EXPECT_EQ(watch.status(), 410);
  }

  restarted->process.reset();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

}  // namespace
}  // namespace copse::e2e
