#pragma once
// Small helpers shared by the kubectl end-to-end tests: polling with a
// deadline, `kubectl get -o json`, and reading a status condition.

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/kubectl/harness.h"

namespace copse::e2e {

// Polls `fn` (kubectl queries) every 100 ms until it returns true or the
// deadline passes. The deadline bounds a broken build; a passing test needs
// seconds.
inline bool Eventually(const std::function<bool()>& fn,
                       std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (fn()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return fn();
}

// `kubectl get <args> -o json`, parsed; null when kubectl failed, discarded
// when the output is not JSON.
inline nlohmann::json GetJson(LocalCluster& cluster, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"get"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("-o");
  argv.push_back("json");
  auto r = cluster.Kubectl(argv);
  if (r.exit_code != 0) return nlohmann::json();
  return nlohmann::json::parse(r.out, nullptr, false);
}

// The object's status condition of `type`, or an empty object.
inline nlohmann::json Condition(const nlohmann::json& object, const std::string& type) {
  if (!object.is_object() || !object.contains("status") || !object["status"].is_object()) {
    return nlohmann::json::object();
  }
  for (const auto& c : object["status"].value("conditions", nlohmann::json::array())) {
    if (c.is_object() && c.value("type", "") == type) return c;
  }
  return nlohmann::json::object();
}

}  // namespace copse::e2e
