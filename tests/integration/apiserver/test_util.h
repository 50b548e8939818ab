#pragma once
// Shared fixtures for the API server integration tests.

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "apiserver/apiserver.h"
#include "apiserver/store.h"
#include "tests/integration/apiserver/http_helper.h"

namespace copse::apiserver::testing {

using nlohmann::json;

// Polls `cond` until it holds or `timeout` passes (a deadline, not a sleep
// for a fixed time).
inline bool WaitFor(const std::function<bool()>& cond,
                    std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return cond();
}

inline json MakePod(const std::string& name, json labels = json::object(),
                    const std::string& ns = "default") {
  json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", name}, {"namespace", ns}}},
      {"spec",
       {{"containers", json::array({{{"name", "main"},
                                     {"image", "registry.k8s.io/pause:3.9"},
                                     {"resources", {{"requests", {{"cpu", "100m"}}}}}}})}}}};
  if (!labels.empty()) pod["metadata"]["labels"] = labels;
  return pod;
}

class ApiServerTest : public ::testing::Test {
 protected:
  void SetUp() override { StartServer(Options{}); }

  void StartServer(Options options, StoreOptions store_options = {}) {
    if (!options.store) options.store = NewStore(store_options);
    auto started = ApiServer::Start(std::move(options));
    ASSERT_TRUE(started.ok()) << started.error().ToString();
    server_ = std::move(started).value();
    client_ = std::make_unique<HttpClient>(server_->http_port(), client_options_);
  }

  Store& store() { return server_->store(); }
  HttpClient& client() { return *client_; }
  uint16_t port() const { return server_->http_port(); }

  // Count of objects of a resource in the store and the store's version:
  // what "changes nothing" compares.
  std::pair<size_t, uint64_t> Snapshot(const ResourceRef& ref) {
    return {store().Count(ref), store().CurrentResourceVersion()};
  }

  std::unique_ptr<ApiServer> server_;
  std::unique_ptr<HttpClient> client_;
  ClientOptions client_options_;
};

}  // namespace copse::apiserver::testing
