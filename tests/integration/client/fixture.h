#pragma once
// Shared setup of the client integration tests: the real embedded API server,
// clients built from its kubeconfig, object builders, and waiting on a
// condition with a deadline (no sleeping).

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "apiserver/apiserver.h"
#include "apiserver/store.h"
#include "kube/client.h"
#include "kube/codec.h"
#include "kube/kubeconfig.h"

namespace copse::kube::testing {

inline std::unique_ptr<apiserver::ApiServer> StartServer(apiserver::Options options = {}) {
  auto server = apiserver::ApiServer::Start(std::move(options));
  if (!server.ok()) {
    ADD_FAILURE() << "ApiServer::Start: " << server.error().ToString();
    return nullptr;
  }
  return std::move(server).value();
}

inline std::shared_ptr<Client> MakeClient(IoThread& io, ClientConfig config) {
  auto client = Client::Create(std::move(config), io.executor());
  if (!client.ok()) {
    ADD_FAILURE() << "Client::Create: " << client.error().ToString();
    return nullptr;
  }
  return std::move(client).value();
}

// A client over HTTPS configured from the server's own kubeconfig.
inline std::shared_ptr<Client> HttpsClient(IoThread& io, const apiserver::ApiServer& server) {
  auto config = LoadKubeconfig(server.Kubeconfig());
  if (!config.ok()) {
    ADD_FAILURE() << "LoadKubeconfig: " << config.error().ToString();
    return nullptr;
  }
  return MakeClient(io, std::move(config).value());
}

inline std::shared_ptr<Client> HttpClient(IoThread& io, const apiserver::ApiServer& server,
                                          std::string token = {}) {
  ClientConfig config;
  config.server = server.http_url();
  config.token = std::move(token);
  return MakeClient(io, std::move(config));
}

inline std::string LabelsJson(const std::map<std::string, std::string>& labels) {
  std::string out = "{";
  for (const auto& [k, v] : labels) {
    if (out.size() > 1) out += ',';
    out += "\"" + k + "\":\"" + v + "\"";
  }
  return out + "}";
}

inline std::string PodJson(const std::string& ns, const std::string& name,
                           const std::map<std::string, std::string>& labels = {}) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name + R"(","namespace":")" +
         ns + R"(","labels":)" + LabelsJson(labels) +
         R"(},"spec":{"schedulerName":"copse-scheduler","containers":[{"name":"main","image":"busybox"}]}})";
}

inline std::string NodeJson(const std::string& name) {
  return R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + name +
         R"("},"status":{"allocatable":{"cpu":"8","memory":"32Gi","pods":"110"},"capacity":{"cpu":"8","memory":"32Gi","pods":"110"}}})";
}

inline std::string ConfigMapJson(const std::string& ns, const std::string& name,
                                 const std::string& count) {
  return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name +
         R"(","namespace":")" + ns + R"("},"data":{"count":")" + count + R"("}})";
}

inline ObjectMeta Meta(const std::string& json) {
  auto meta = DecodeObjectMeta(json);
  if (!meta.ok()) {
    ADD_FAILURE() << "DecodeObjectMeta: " << meta.error().ToString() << " in " << json;
    return {};
  }
  return std::move(meta).value();
}

// Wakes waiters whenever something they may be waiting for changed.
class Notifier {
 public:
  void Notify() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++generation_;
    }
    cv_.notify_all();
  }

  // Re-evaluates `condition` after every Notify() until it holds or the
  // deadline passes; returns its last value.
  bool WaitFor(const std::function<bool()>& condition,
               std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      const uint64_t seen = generation_;
      lock.unlock();
      if (condition()) return true;
      lock.lock();
      if (!cv_.wait_until(lock, deadline, [&] { return generation_ != seen; })) {
        lock.unlock();
        return condition();
      }
    }
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t generation_ = 0;
};

}  // namespace copse::kube::testing
