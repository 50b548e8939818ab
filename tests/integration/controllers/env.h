#pragma once
// The workload controllers against the real embedded API server: server,
// node simulator, copse's scheduler (profiles copse-scheduler and
// default-scheduler, as `copse local` runs it) and WorkloadControllers
// in-process, the scheduler and the controllers talking HTTP through
// kube::Client like separate processes. A Recorder keeps every watch event of
// pods and workload objects in resourceVersion order (one counter for the
// whole store, so that is the order of writes) and wakes WaitFor() on each:
// tests wait on conditions with a deadline and replay the events to check
// invariants at every step.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "apiserver/apiserver.h"
#include "apiserver/controllers/manager.h"
#include "apiserver/node_simulator.h"
#include "apiserver/store.h"
#include "apiserver/synthetic.h"
#include "core/quantity.h"
#include "kube/apps.h"
#include "kube/client.h"
#include "plugins/defaults/defaults.h"
#include "scheduler/scheduler.h"

namespace copse::apiserver::controllers::testing {

using nlohmann::json;

struct RecordedEvent {
  std::string resource;  // "pods", "replicasets", ...
  WatchEventType type;
  uint64_t rv = 0;
  json object;
};

class Recorder {
 public:
  Recorder(Store& store, const std::vector<kube::ResourceRef>& resources) {
    for (const auto& ref : resources) {
      auto stream = store.Watch(ref, WatchOptions{});
      if (!stream.ok()) {
        ADD_FAILURE() << "watch " << ref.resource << ": " << stream.error().ToString();
        continue;
      }
      (*stream)->SetNotify([this] { Wake(); });
      streams_.push_back({ref.resource, *stream});
    }
    thread_ = std::thread([this] { Loop(); });
  }

  ~Recorder() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    {
      std::lock_guard<std::mutex> lock(wake_mu_);
      wake_ = true;
    }
    wake_cv_.notify_all();
    thread_.join();
    for (auto& [name, stream] : streams_) stream->Close();
  }

  // Re-evaluates `condition` after every recorded event until it holds or the deadline passes.
  bool WaitFor(const std::function<bool()>& condition,
               std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      const uint64_t seen = generation_;
      lock.unlock();
      if (condition()) return true;
      lock.lock();
      if (!seen_cv_.wait_until(lock, deadline, [&] { return generation_ != seen; })) {
        lock.unlock();
        return condition();
      }
    }
  }

  std::vector<RecordedEvent> Events() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<RecordedEvent> out = events_;
    std::stable_sort(out.begin(), out.end(),
                     [](const RecordedEvent& a, const RecordedEvent& b) { return a.rv < b.rv; });
    return out;
  }

 private:
  void Wake() {
    {
      std::lock_guard<std::mutex> lock(wake_mu_);
      wake_ = true;
    }
    wake_cv_.notify_all();
  }

  void Loop() {
    while (true) {
      {
        std::unique_lock<std::mutex> lock(wake_mu_);
        wake_cv_.wait(lock, [&] { return wake_; });
        wake_ = false;
      }
      std::vector<RecordedEvent> batch;
      for (auto& [name, stream] : streams_) {
        std::vector<WatchEvent> events;
        stream->Take(&events);
        for (const auto& e : events) {
          if (e.type == WatchEventType::kBookmark || e.object == nullptr) continue;
          batch.push_back({name, e.type, e.rv, json::parse(e.object->json, nullptr, false)});
        }
      }
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& e : batch) events_.push_back(std::move(e));
      ++generation_;
      seen_cv_.notify_all();
      if (stop_) return;
    }
  }

  std::vector<std::pair<std::string, std::shared_ptr<WatchStream>>> streams_;
  std::mutex wake_mu_;
  std::condition_variable wake_cv_;
  bool wake_ = false;
  std::mutex mu_;
  std::condition_variable seen_cv_;
  uint64_t generation_ = 0;
  bool stop_ = false;
  std::vector<RecordedEvent> events_;
  std::thread thread_;
};

// The Workload API in the version the Recorder watches it (objects of
// every version read back through it).
inline const kube::ResourceRef kPodGroupsNewest{"scheduling.k8s.io", "v1beta1", "podgroups", true};
inline const kube::ResourceRef kWorkloadsNewest{"scheduling.k8s.io", "v1beta1", "workloads", true};

struct EnvOptions {
  EnvOptions() = default;
  int nodes = 4;
  std::chrono::milliseconds pod_start_delay{30};
  // Graceful deletions end this soon (the pods' grace period is 30 s).
  std::chrono::milliseconds max_termination_delay{50};
  ControllerOptions controllers;
  // The Store's options (served versions, ...).
  StoreOptions store;
};

class Env {
 public:
  explicit Env(EnvOptions options = EnvOptions()) : options_(std::move(options)) {
    store_ = NewStore(options_.store);
    NodeSimulatorOptions sim;
    sim.pod_start_delay = options_.pod_start_delay;
    sim.max_termination_delay = options_.max_termination_delay;
    sim.manage_disruption_budgets = false;
    simulator_ = std::make_unique<NodeSimulator>(store_, sim);
    simulator_->Start();
    Options server_options;
    server_options.store = store_;
    server_options.threads = 2;
    auto server = ApiServer::Start(server_options);
    if (!server.ok()) {
      ADD_FAILURE() << server.error().ToString();
      return;
    }
    server_ = std::move(server).value();
    auto nodes = MakeSyntheticNodes(options_.nodes,
                                    {{"cpu", *Quantity::Parse("32")},
                                     {"memory", *Quantity::Parse("256Gi")},
                                     {"pods", *Quantity::Parse("110")}},
                                    {});
    EXPECT_TRUE(nodes.ok());
    if (nodes.ok()) {
      EXPECT_TRUE(simulator_->CreateNodes(*nodes).ok());
      for (const auto& node : *nodes) node_names_.push_back(json::parse(node)["metadata"]["name"]);
    }
    std::vector<kube::ResourceRef> recorded = {
        kube::resources::kPods, kube::resources::kReplicaSets,  kube::resources::kDeployments,
        kube::resources::kJobs, kube::resources::kStatefulSets, kube::resources::kDaemonSets};
    for (const kube::ResourceRef& ref : {kPodGroupsNewest, kWorkloadsNewest}) {
      if (store_->Resolve(ref.group, ref.version, ref.resource).ok()) recorded.push_back(ref);
    }
    recorder_ = std::make_unique<Recorder>(*store_, recorded);
    io_ = std::make_unique<kube::IoThread>(2);
    kube::ClientConfig config;
    config.server = server_->http_url();
    config.max_connections = 32;
    config.pipelined_connections = kube::kCopsePipelinedConnections;
    auto client = kube::Client::Create(config, io_->executor());
    if (!client.ok()) {
      ADD_FAILURE() << client.error().ToString();
      return;
    }
    client_ = std::move(client).value();

    scheduler::SchedulerOptions so;
    so.profiles = {plugins::DefaultProfile("copse-scheduler"),
                   plugins::DefaultProfile("default-scheduler")};
    so.seed = 7;
    so.pod_initial_backoff = std::chrono::milliseconds(50);
    so.pod_max_backoff = std::chrono::milliseconds(200);
    auto sched = scheduler::Scheduler::Create(client_, so);
    if (!sched.ok()) {
      ADD_FAILURE() << sched.error().ToString();
      return;
    }
    scheduler_ = std::move(sched).value();
    scheduler_->Start();
    EXPECT_TRUE(scheduler_->WaitForSync(std::chrono::seconds(30)));

    ControllerOptions co = options_.controllers;
    co.sync_timeout = std::chrono::seconds(10);
    auto started = WorkloadControllers::Start(client_, co);
    if (!started.ok()) {
      ADD_FAILURE() << started.error().ToString();
      return;
    }
    controllers_ = std::move(started).value();
  }

  ~Env() {
    if (controllers_) controllers_->Stop();
    controllers_.reset();
    if (scheduler_) scheduler_->Stop();
    scheduler_.reset();
    client_.reset();
    io_.reset();
    recorder_.reset();
    if (server_) server_->Stop();
    simulator_->Stop();
  }

  Store& store() { return *store_; }
  Recorder& recorder() { return *recorder_; }
  const std::vector<std::string>& node_names() const { return node_names_; }
  NodeSimulator& simulator() { return *simulator_; }

  bool WaitFor(const std::function<bool()>& condition,
               std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
    return recorder_->WaitFor(condition, timeout);
  }

  // Through the HTTP client, as kubectl would.
  void Create(const kube::ResourceRef& ref, const json& body, const std::string& ns = "default") {
    auto created = io_->Run(client_->Create(ref, ns, body.dump()));
    ASSERT_TRUE(created.ok()) << created.error().ToString();
  }
  void MergePatch(const kube::ResourceRef& ref, const std::string& name, const json& patch,
                  const std::string& ns = "default") {
    auto patched = io_->Run(client_->Patch(ref, ns, name, kube::PatchType::kMerge, patch.dump()));
    ASSERT_TRUE(patched.ok()) << patched.error().ToString();
  }
  void StrategicPatch(const kube::ResourceRef& ref, const std::string& name, const json& patch,
                      const std::string& ns = "default") {
    auto patched =
        io_->Run(client_->Patch(ref, ns, name, kube::PatchType::kStrategicMerge, patch.dump()));
    ASSERT_TRUE(patched.ok()) << patched.error().ToString();
  }
  void Delete(const kube::ResourceRef& ref, const std::string& name,
              const std::string& policy = "Background", const std::string& ns = "default") {
    kube::DeleteOptions options;
    options.propagation_policy = policy;
    Status deleted = io_->Run(client_->Delete(ref, ns, name, options));
    ASSERT_TRUE(deleted.ok()) << deleted.error().ToString();
  }

  std::vector<json> List(const kube::ResourceRef& ref, const std::string& selector = "",
                         const std::string& ns = "default") {
    ListOptions options;
    options.ns = ns;
    options.label_selector = selector;
    std::vector<json> out;
    auto list = store_->List(ref, options);
    if (!list.ok()) return out;
    for (const auto& item : list->items) out.push_back(json::parse(item->json));
    return out;
  }

  std::optional<json> Get(const kube::ResourceRef& ref, const std::string& name,
                          const std::string& ns = "default") {
    auto got = store_->Get(ref, ns, name);
    if (!got.ok()) return std::nullopt;
    return json::parse((*got)->json);
  }

  // Pods matching `selector` that are not terminating and not finished.
  std::vector<json> LivePods(const std::string& selector) {
    std::vector<json> out;
    for (auto& p : List(kube::resources::kPods, selector)) {
      const std::string phase = p["status"].value("phase", "");
      if (p["metadata"].contains("deletionTimestamp") || phase == "Succeeded" ||
          phase == "Failed") {
        continue;
      }
      out.push_back(std::move(p));
    }
    return out;
  }

  // Live pods matching `selector` that are Running and Ready.
  int ReadyPods(const std::string& selector) {
    int n = 0;
    for (const auto& p : LivePods(selector)) n += IsReady(p);
    return n;
  }

  static bool IsReady(const json& pod) {
    if (!pod.contains("status") || !pod["status"].contains("conditions")) return false;
    for (const auto& c : pod["status"]["conditions"]) {
      if (c["type"] == "Ready") return c["status"] == "True";
    }
    return false;
  }

 private:
  EnvOptions options_;
  std::shared_ptr<Store> store_;
  std::unique_ptr<NodeSimulator> simulator_;
  std::unique_ptr<ApiServer> server_;
  std::unique_ptr<Recorder> recorder_;
  std::unique_ptr<kube::IoThread> io_;
  std::shared_ptr<kube::Client> client_;
  std::unique_ptr<scheduler::Scheduler> scheduler_;
  std::unique_ptr<WorkloadControllers> controllers_;
  std::vector<std::string> node_names_;
};

// status.<field> as an integer, -1 when absent.
inline int StatusInt(const json& obj, const std::string& field) {
  if (!obj.contains("status") || !obj["status"].is_object()) return -1;
  const json& status = obj["status"];
  if (!status.contains(field) || !status[field].is_number()) return -1;
  return status[field].get<int>();
}

inline std::string ConditionStatus(const json& obj, const std::string& type) {
  if (!obj.contains("status") || !obj["status"].contains("conditions")) return "";
  for (const auto& c : obj["status"]["conditions"]) {
    if (c["type"] == type) return c["status"];
  }
  return "";
}

inline std::string ConditionReason(const json& obj, const std::string& type) {
  if (!obj.contains("status") || !obj["status"].contains("conditions")) return "";
  for (const auto& c : obj["status"]["conditions"]) {
    if (c["type"] == type) return c.value("reason", "");
  }
  return "";
}

inline std::string Annotation(const json& obj, const std::string& key) {
  const json& a = obj["metadata"].value("annotations", json::object());
  return a.contains(key) ? a[key].get<std::string>() : "";
}

inline std::string Label(const json& obj, const std::string& key) {
  const json& a = obj["metadata"].value("labels", json::object());
  return a.contains(key) ? a[key].get<std::string>() : "";
}

// A pod template with one container and labels.
inline json Template(const json& labels, const std::string& image = "nginx:1.25",
                     const json& annotations = json::object(), const std::string& restart = "") {
  json spec = {
      {"containers",
       json::array({{{"name", "main"},
                     {"image", image},
                     {"resources", {{"requests", {{"cpu", "100m"}, {"memory", "64Mi"}}}}}}})},
      {"terminationGracePeriodSeconds", 30}};
  if (!restart.empty()) spec["restartPolicy"] = restart;
  json meta = {{"labels", labels}};
  if (!annotations.empty()) meta["annotations"] = annotations;
  return {{"metadata", meta}, {"spec", spec}};
}

// Every pod's controller ownerReference is kind/uid with controller and blockOwnerDeletion.
inline ::testing::AssertionResult OwnedBy(const json& pod, const std::string& kind,
                                          const std::string& uid) {
  const json& refs = pod["metadata"].value("ownerReferences", json::array());
  if (refs.size() != 1) return ::testing::AssertionFailure() << "ownerReferences: " << refs.dump();
  const json& ref = refs[0];
  if (ref.value("kind", "") != kind || ref.value("uid", "") != uid ||
      !ref.value("controller", false) || !ref.value("blockOwnerDeletion", false)) {
    return ::testing::AssertionFailure() << "ownerReference: " << ref.dump();
  }
  return ::testing::AssertionSuccess();
}

}  // namespace copse::apiserver::controllers::testing
