#pragma once
// A scheduler against the real embedded API server: the server and its node
// simulator in-process, the scheduler talking HTTP to it like any client.
// Objects are created through the server's store; assertions read the store.
// Waiting is on conditions with a deadline (re-checked every few ms), never
// a fixed sleep.

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "apiserver/apiserver.h"
#include "apiserver/node_simulator.h"
#include "apiserver/store.h"
#include "core/pod_info.h"
#include "core/quantity.h"
#include "core/resource_vector.h"
#include "deploy/crds.h"
#include "kube/api_access.h"
#include "kube/client.h"
#include "kube/node.h"
#include "kube/pod.h"
#include "scheduler/convert.h"
#include "scheduler/scheduler.h"

namespace copse::scheduler::testing {

namespace api = copse::apiserver;

inline bool WaitUntil(const std::function<bool()>& condition,
                      std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return condition();
}

class Cluster {
 public:
  explicit Cluster(api::Options server_options = {}, bool start_simulator = true,
                   api::StoreOptions store_options = {}) {
    store_ = api::NewStore(std::move(store_options));
    api::NodeSimulatorOptions sim;
    sim.pod_start_delay = std::chrono::milliseconds(50);
    sim.disruption_resync = std::chrono::milliseconds(20);
    simulator_ = std::make_unique<api::NodeSimulator>(store_, sim);
    if (start_simulator) simulator_->Start();
    server_options.store = store_;
    server_options.threads = 2;
    auto server = api::ApiServer::Start(server_options);
    if (!server.ok()) {
      ADD_FAILURE() << server.error().ToString();
      return;
    }
    server_ = std::move(server).value();
    io_ = std::make_unique<kube::IoThread>(2);
  }

  ~Cluster() {
    StopScheduler();
    io_.reset();
    if (server_) server_->Stop();
    simulator_->Stop();
  }

  void StartScheduler(SchedulerOptions options = {}) {
    kube::ClientConfig config;
    config.server = server_->http_url();
    config.max_connections = 32;
    // As shipped (clientConnection.pipelinedConnections): writes pipelined.
    config.pipelined_connections = kube::kCopsePipelinedConnections;
    // As `copse run`: a call missing from the scheduler's table fails here.
    config.api_access = &kube::SchedulerApiAccess();
    auto client = kube::Client::Create(config, io_->executor());
    ASSERT_TRUE(client.ok()) << client.error().ToString();
    if (options.seed == 0) options.seed = 42;
    // Short backoffs and a quick unschedulable flush, unless the test set its own.
    const SchedulerOptions defaults;
    auto shorten = [](auto& value, auto default_value, auto test_value) {
      if (value == default_value) value = test_value;
    };
    shorten(options.pod_initial_backoff, defaults.pod_initial_backoff,
            std::chrono::milliseconds(50));
    shorten(options.pod_max_backoff, defaults.pod_max_backoff, std::chrono::milliseconds(200));
    shorten(options.unschedulable_flush_interval, defaults.unschedulable_flush_interval,
            std::chrono::milliseconds(500));
    shorten(options.pod_max_in_unschedulable, defaults.pod_max_in_unschedulable,
            std::chrono::seconds(1));
    shorten(options.pod_group_max_backoff, defaults.pod_group_max_backoff,
            std::chrono::milliseconds(400));
    auto scheduler = Scheduler::Create(*client, options);
    ASSERT_TRUE(scheduler.ok()) << scheduler.error().ToString();
    scheduler_ = std::move(scheduler).value();
    scheduler_->Start();
    ASSERT_TRUE(scheduler_->WaitForSync(std::chrono::seconds(30)));
  }

  void StopScheduler() {
    if (scheduler_) scheduler_->Stop();
    scheduler_.reset();
  }

  api::Store& store() { return *store_; }
  std::string http_url() const { return server_->http_url(); }
  Scheduler* scheduler() { return scheduler_.get(); }

  void Create(const kube::ResourceRef& ref, const std::string& ns, const std::string& json) {
    auto created = store_->Create(ref, ns, json);
    ASSERT_TRUE(created.ok()) << created.error().ToString() << "\n" << json;
  }

  std::vector<kube::Pod> Pods() {
    std::vector<kube::Pod> out;
    auto list = store_->List(kube::resources::kPods, {});
    if (!list.ok()) return out;
    for (const auto& item : list->items) {
      auto pod = kube::Pod::Decode(item->json);
      if (pod.ok()) out.push_back(std::move(pod).value());
    }
    return out;
  }

  std::vector<kube::Node> Nodes() {
    std::vector<kube::Node> out;
    auto list = store_->List(kube::resources::kNodes, {});
    if (!list.ok()) return out;
    for (const auto& item : list->items) {
      auto node = kube::Node::Decode(item->json);
      if (node.ok()) out.push_back(std::move(node).value());
    }
    return out;
  }

  std::optional<kube::Pod> GetPod(const std::string& ns, const std::string& name) {
    auto got = store_->Get(kube::resources::kPods, ns, name);
    if (!got.ok()) return std::nullopt;
    auto pod = kube::Pod::Decode((*got)->json);
    if (!pod.ok()) return std::nullopt;
    return std::move(pod).value();
  }

 private:
  std::shared_ptr<api::Store> store_;
  std::unique_ptr<api::NodeSimulator> simulator_;
  std::unique_ptr<api::ApiServer> server_;
  std::unique_ptr<kube::IoThread> io_;
  std::unique_ptr<Scheduler> scheduler_;
};

struct NodeSpec {
  std::string name;
  std::string cpu = "16";
  std::string memory = "64Gi";
  std::string pods = "110";
  std::map<std::string, std::string> labels;
  std::string extra_allocatable;  // e.g. R"(,"nvidia.com/gpu":"8")"
  std::string taints_json;        // e.g. R"([{"key":"k","value":"v","effect":"NoSchedule"}])"
};

inline std::string Labels(const std::map<std::string, std::string>& labels) {
  std::string out = "{";
  for (const auto& [k, v] : labels) {
    if (out.size() > 1) out += ',';
    out += "\"" + k + "\":\"" + v + "\"";
  }
  return out + "}";
}

inline std::string NodeJson(const NodeSpec& n) {
  std::map<std::string, std::string> labels = n.labels;
  labels["kubernetes.io/hostname"] = n.name;
  const std::string alloc = R"({"cpu":")" + n.cpu + R"(","memory":")" + n.memory + R"(","pods":")" +
                            n.pods + "\"" + n.extra_allocatable + "}";
  return R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + n.name + R"(","labels":)" +
         Labels(labels) + R"(},"spec":{)" +
         (n.taints_json.empty() ? "" : R"("taints":)" + n.taints_json) +
         R"(},"status":{"allocatable":)" + alloc + R"(,"capacity":)" + alloc +
         R"(,"conditions":[{"type":"Ready","status":"True"}]}})";
}

struct PodSpecOptions {
  std::string ns = "default";
  std::string name;
  std::string cpu = "100m";
  std::string memory = "128Mi";
  std::map<std::string, std::string> labels;
  std::string scheduler = "copse-scheduler";
  std::string extra_spec;  // JSON members appended to spec, starting with ','
  std::string priority_class;
  int grace_seconds = 0;
};

inline std::string PodJson(const PodSpecOptions& p) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + p.name + R"(","namespace":")" +
         p.ns + R"(","labels":)" + Labels(p.labels) + R"(},"spec":{"schedulerName":")" +
         p.scheduler + R"(","terminationGracePeriodSeconds":)" + std::to_string(p.grace_seconds) +
         (p.priority_class.empty() ? "" : R"(,"priorityClassName":")" + p.priority_class + "\"") +
         R"(,"containers":[{"name":"main","image":"pause","resources":{"requests":{"cpu":")" +
         p.cpu + R"(","memory":")" + p.memory + R"("}}}])" + p.extra_spec + "}}";
}

// Serves scheduling.copse.dev PodGroup and Topology, as `copse local` does.
inline void InstallCopseCrds(Cluster& cluster) {
  int installed = 0;
  for (const deploy::EmbeddedFile& file : deploy::BuiltinCrds()) {
    if (!file.path.starts_with("crds/copse/")) continue;
    Result<std::vector<std::string>> docs = deploy::YamlDocumentsToJson(file.content);
    ASSERT_TRUE(docs.ok()) << file.path;
    for (const std::string& doc : *docs) {
      cluster.Create(kube::resources::kCustomResourceDefinitions, "", doc);
      ++installed;
    }
  }
  ASSERT_EQ(installed, 2);
}

inline const kube::Condition* PodScheduledCondition(const kube::Pod& pod) {
  return kube::FindCondition(pod.status.conditions, "PodScheduled");
}

// Checks the invariants every scheduling test relies on; returns the
// violations (empty when all hold):
//   - no node holds more than its allocatable (requests of non-terminal pods);
//   - every bound pod fits its node's selectors, affinity and taints;
//   - host ports are not used twice on a node;
//   - required anti-affinity (hostname) is respected;
//   - DoNotSchedule spread constraints over zones hold (skew <= maxSkew).
std::vector<std::string> CheckInvariants(const std::vector<kube::Node>& nodes,
                                         const std::vector<kube::Pod>& pods);

}  // namespace copse::scheduler::testing
