#pragma once
// The Grove backend against the real embedded API server: server, node
// simulator and grove::Operator in-process, the operator talking HTTP through
// kube::Client like a separate process. A Recorder keeps every watch event of
// the grove kinds, pods and scheduler objects in resourceVersion order (the
// store has one counter, so the order across kinds is the order of writes),
// and wakes WaitFor() on each event: waiting is on conditions with a deadline.
// There is no scheduler: tests bind pods themselves (BindReady), the node
// simulator makes bound pods Running and Ready.

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "apiserver/apiserver.h"
#include "apiserver/node_simulator.h"
#include "apiserver/store.h"
#include "apiserver/synthetic.h"
#include "grove/api/crds.h"
#include "grove/api/names.h"
#include "grove/api/types.h"
#include "grove/operator.h"
#include "kube/api_access.h"
#include "kube/client.h"
#include "kube/pod.h"
#include "kube/yaml.h"
#include "tests/support/paths.h"

namespace copse::grove::testing {

namespace apisrv = copse::apiserver;
using nlohmann::json;

inline const kube::ResourceRef kCopsePodGroups{"scheduling.copse.dev", "v1alpha1", "podgroups",
                                               true};
inline const kube::ResourceRef kCopseTopologies{"scheduling.copse.dev", "v1alpha1", "topologies",
                                                false};
inline const kube::ResourceRef kKaiPodGroups{"scheduling.run.ai", "v2alpha2", "podgroups", true};
inline const kube::ResourceRef kWorkloads{"scheduling.k8s.io", "v1alpha2", "workloads", true};
inline const kube::ResourceRef kK8sPodGroups{"scheduling.k8s.io", "v1alpha2", "podgroups", true};

inline std::string ReadSourceFile(const std::string& relative) {
  std::ifstream in(std::string(COPSE_SOURCE_DIR) + "/" + relative);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline std::vector<std::string> YamlDocs(const std::string& text) {
  auto docs = kube::YamlDocumentsToJson(text);
  EXPECT_TRUE(docs.ok()) << (docs.ok() ? "" : docs.error().ToString());
  return docs.ok() ? *docs : std::vector<std::string>{};
}

// A minimal CRD for `group/version` `plural` (kind `kind`) with a status subresource.
inline std::string MinimalCrd(const std::string& group, const std::string& version,
                              const std::string& plural, const std::string& kind, bool namespaced) {
  json crd = {
      {"apiVersion", "apiextensions.k8s.io/v1"},
      {"kind", "CustomResourceDefinition"},
      {"metadata", {{"name", plural + "." + group}}},
      {"spec",
       {{"group", group},
        {"names",
         {{"plural", plural},
          {"singular", kind.empty() ? plural : ""},
          {"kind", kind},
          {"listKind", kind + "List"}}},
        {"scope", namespaced ? "Namespaced" : "Cluster"},
        {"versions", json::array({{{"name", version},
                                   {"served", true},
                                   {"storage", true},
                                   {"subresources", {{"status", json::object()}}},
                                   {"schema",
                                    {{"openAPIV3Schema",
                                      {{"type", "object"},
                                       {"x-kubernetes-preserve-unknown-fields", true}}}}}}})}}}};
  crd["spec"]["names"]["singular"] = [&] {
    std::string s = kind;
    for (auto& c : s) c = static_cast<char>(std::tolower(c));
    return s;
  }();
  return crd.dump();
}

struct RecordedEvent {
  std::string resource;  // "pods", "podgangs", ...
  apisrv::WatchEventType type;
  uint64_t rv = 0;
  json object;
};

// Every event of the watched resources, in resourceVersion order.
class Recorder {
 public:
  Recorder(apisrv::Store& store, const std::vector<kube::ResourceRef>& resources) {
    for (const auto& ref : resources) {
      apisrv::WatchOptions options;
      auto stream = store.Watch(ref, options);
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
    cv_.notify_all();
    thread_.join();
    for (auto& [name, stream] : streams_) stream->Close();
  }

  // Re-evaluates `condition` after every recorded event until it holds or the deadline passes.
  bool WaitFor(const std::function<bool()>& condition,
               std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      uint64_t seen = generation_;
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

  // Wakes waiters without an event (e.g. after advancing a FakeClock).
  void Poke() {
    std::lock_guard<std::mutex> lock(mu_);
    ++generation_;
    seen_cv_.notify_all();
  }

 private:
  void Wake() {
    std::lock_guard<std::mutex> lock(wake_mu_);
    wake_ = true;
    cv_.notify_all();
  }

  void Loop() {
    while (true) {
      {
        std::unique_lock<std::mutex> lock(wake_mu_);
        cv_.wait_for(lock, std::chrono::milliseconds(50), [&] { return wake_ || Stopped(); });
        wake_ = false;
      }
      if (Stopped()) return;
      std::vector<RecordedEvent> batch;
      for (auto& [name, stream] : streams_) {
        std::vector<apisrv::WatchEvent> events;
        stream->Take(&events);
        for (const auto& e : events) {
          if (e.type == apisrv::WatchEventType::kBookmark || e.object == nullptr) continue;
          batch.push_back({name, e.type, e.rv, json::parse(e.object->json, nullptr, false)});
        }
      }
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& e : batch) events_.push_back(std::move(e));
      ++generation_;
      seen_cv_.notify_all();
    }
  }

  bool Stopped() {
    std::lock_guard<std::mutex> lock(mu_);
    return stop_;
  }

  std::vector<std::pair<std::string, std::shared_ptr<apisrv::WatchStream>>> streams_;
  std::mutex wake_mu_;
  std::condition_variable cv_;
  bool wake_ = false;
  std::mutex mu_;
  std::condition_variable seen_cv_;
  uint64_t generation_ = 0;
  bool stop_ = false;
  std::vector<RecordedEvent> events_;
  std::thread thread_;
};

struct EnvOptions {
  EnvOptions() = default;
  int nodes = 16;
  OperatorOptions op;
  bool start_operator = true;
  std::shared_ptr<const Clock> clock;  // the operator's clock (a FakeClock in tests)
};

class GroveEnv {
 public:
  explicit GroveEnv(EnvOptions options = EnvOptions()) : options_(std::move(options)) {
    store_ = apisrv::NewStore({});
    apisrv::NodeSimulatorOptions sim;
    sim.pod_start_delay = std::chrono::milliseconds(20);
    sim.max_termination_delay = std::chrono::milliseconds(50);
    sim.manage_disruption_budgets = false;
    simulator_ = std::make_unique<apisrv::NodeSimulator>(store_, sim);
    simulator_->Start();
    apisrv::Options server_options;
    server_options.store = store_;
    server_options.threads = 2;
    auto server = apisrv::ApiServer::Start(server_options);
    if (!server.ok()) {
      ADD_FAILURE() << server.error().ToString();
      return;
    }
    server_ = std::move(server).value();
    io_ = std::make_unique<kube::IoThread>(2);
    kube::ClientConfig config;
    config.server = server_->http_url();
    config.max_connections = 32;
    // As `copse local` and `copse grove` configure it: writes pipelined.
    config.pipelined_connections = kube::kCopsePipelinedConnections;
    auto client = kube::Client::Create(config, io_->executor());
    if (!client.ok()) {
      ADD_FAILURE() << client.error().ToString();
      return;
    }
    client_ = std::move(client).value();
    // The operator's own client, as `copse grove` configures it: a call
    // missing from its API access table fails the tests.
    config.api_access = &kube::GroveApiAccess();
    auto operator_client = kube::Client::Create(config, io_->executor());
    if (!operator_client.ok()) {
      ADD_FAILURE() << operator_client.error().ToString();
      return;
    }
    operator_client_ = std::move(operator_client).value();

    auto nodes = apisrv::MakeSyntheticNodes(options_.nodes,
                                            {{"cpu", *Quantity::Parse("32")},
                                             {"memory", *Quantity::Parse("256Gi")},
                                             {"pods", *Quantity::Parse("110")}},
                                            {});
    EXPECT_TRUE(nodes.ok());
    if (nodes.ok()) {
      EXPECT_TRUE(simulator_->CreateNodes(*nodes).ok());
      for (const auto& node : *nodes) node_names_.push_back(json::parse(node)["metadata"]["name"]);
    }

    InstallCrds();
    recorder_ = std::make_unique<Recorder>(
        *store_, std::vector<kube::ResourceRef>{
                     kube::resources::kPods, api::resources::kPodGangs, api::resources::kPodCliques,
                     api::resources::kPodCliqueScalingGroups, api::resources::kPodCliqueSets,
                     kube::resources::kServices, kCopsePodGroups, kKaiPodGroups});
    if (options_.start_operator) StartOperator();
  }

  ~GroveEnv() {
    StopOperator();
    recorder_.reset();
    client_.reset();
    operator_client_.reset();
    io_.reset();
    if (server_) server_->Stop();
    simulator_->Stop();
  }

  void StartOperator(OperatorOptions override_options) {
    options_.op = std::move(override_options);
    StartOperator();
  }

  void StartOperator() {
    OperatorOptions op = options_.op;
    if (options_.clock) op.clock = options_.clock;
    op.sync_timeout = std::chrono::seconds(10);
    auto started = Operator::Start(operator_client_, op);
    ASSERT_TRUE(started.ok()) << started.error().ToString();
    operator_ = std::move(started).value();
  }

  void StopOperator() {
    if (operator_) operator_->Stop();
    operator_.reset();
  }

  apisrv::Store& store() { return *store_; }
  kube::Client& client() { return *client_; }
  std::shared_ptr<kube::Client> client_ptr() { return client_; }
  kube::IoThread& io() { return *io_; }
  Operator* op() { return operator_.get(); }
  Recorder& recorder() { return *recorder_; }
  const std::vector<std::string>& node_names() const { return node_names_; }

  bool WaitFor(const std::function<bool()>& condition,
               std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    return recorder_->WaitFor(condition, timeout);
  }

  // As `kubectl create -f`: every document of the YAML file, through the client.
  void CreateFromFile(const std::string& relative, const std::string& ns = "default") {
    for (const auto& doc : YamlDocs(ReadSourceFile(relative))) CreateJson(doc, ns);
  }

  Result<std::string> TryCreate(const kube::ResourceRef& ref, const std::string& ns,
                                const std::string& body) {
    return io_->Run(client_->Create(ref, ns, body));
  }

  void CreateJson(const std::string& body, const std::string& ns = "default") {
    json doc = json::parse(body);
    std::string kind = doc.value("kind", "");
    const kube::ResourceRef& ref = kind == "PodCliqueSet" ? api::resources::kPodCliqueSets
                                   : kind == "ClusterTopologyBinding"
                                       ? api::resources::kClusterTopologyBindings
                                       : kube::resources::kPods;
    auto created = TryCreate(ref, ns, body);
    ASSERT_TRUE(created.ok()) << created.error().ToString();
  }

  std::vector<json> List(const kube::ResourceRef& ref, const std::string& ns = "default",
                         const std::string& selector = "") {
    apisrv::ListOptions options;
    options.ns = ns;
    options.label_selector = selector;
    std::vector<json> out;
    auto list = store_->List(ref, options);
    if (!list.ok()) return out;
    for (const auto& item : list->items) out.push_back(json::parse(item->json));
    return out;
  }

  std::vector<std::string> Names(const kube::ResourceRef& ref, const std::string& ns = "default",
                                 const std::string& selector = "") {
    std::vector<std::string> out;
    for (const auto& o : List(ref, ns, selector)) out.push_back(o["metadata"]["name"]);
    std::sort(out.begin(), out.end());
    return out;
  }

  std::optional<json> Get(const kube::ResourceRef& ref, const std::string& ns,
                          const std::string& name) {
    auto got = store_->Get(ref, ns, name);
    if (!got.ok()) return std::nullopt;
    return json::parse((*got)->json);
  }

  std::vector<kube::Pod> Pods(const std::string& selector = "", bool include_terminating = false) {
    std::vector<kube::Pod> out;
    for (const auto& o : List(kube::resources::kPods, "default", selector)) {
      auto pod = kube::Pod::Decode(o.dump());
      if (!pod.ok()) continue;
      if (!include_terminating && pod->meta.deletion_timestamp) continue;
      out.push_back(std::move(pod).value());
    }
    return out;
  }

  // Binds every pod matching `selector` that is ungated and unbound, round robin over nodes.
  int BindUngated(const std::string& selector = "") {
    int bound = 0;
    for (const auto& pod : Pods(selector)) {
      if (!pod.spec.scheduling_gates.empty() || !pod.spec.node_name.empty()) continue;
      const std::string& node = node_names_[next_node_++ % node_names_.size()];
      Status s = io_->Run(client_->Bind(pod.meta.namespace_, pod.meta.name, node));
      if (s.ok()) ++bound;
    }
    return bound;
  }

  // Binds ungated pods until `count` pods matching `selector` are Ready.
  bool BindUntilReady(const std::string& selector, size_t count,
                      std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    return WaitFor(
        [&] {
          BindUngated(selector);
          size_t ready = 0;
          for (const auto& pod : Pods(selector)) {
            const auto* c = kube::FindCondition(pod.status.conditions, "Ready");
            ready += c != nullptr && c->status == "True";
          }
          return ready >= count;
        },
        timeout);
  }

 private:
  void InstallCrds() {
    std::vector<std::string> crds = api::CrdManifests();
    auto copse = YamlDocs(ReadSourceFile("deploy/crds/copse/scheduling.copse.dev_podgroups.yaml"));
    if (copse.empty()) {
      copse.push_back(
          MinimalCrd("scheduling.copse.dev", "v1alpha1", "podgroups", "PodGroup", true));
    }
    for (auto& c : copse) crds.push_back(c);
    auto topo = YamlDocs(ReadSourceFile("deploy/crds/copse/scheduling.copse.dev_topologies.yaml"));
    if (topo.empty()) {
      topo.push_back(
          MinimalCrd("scheduling.copse.dev", "v1alpha1", "topologies", "Topology", false));
    }
    for (auto& c : topo) crds.push_back(c);
    crds.push_back(MinimalCrd("scheduling.run.ai", "v2alpha2", "podgroups", "PodGroup", true));
    Status s = io_->Run(api::InstallCrds(client_, crds));
    ASSERT_TRUE(s.ok()) << s.error().ToString();
  }

  EnvOptions options_;
  std::shared_ptr<apisrv::Store> store_;
  std::unique_ptr<apisrv::NodeSimulator> simulator_;
  std::unique_ptr<apisrv::ApiServer> server_;
  std::unique_ptr<kube::IoThread> io_;
  std::shared_ptr<kube::Client> client_;
  std::shared_ptr<kube::Client> operator_client_;  // the operator's (GroveApiAccess)
  std::unique_ptr<Recorder> recorder_;
  std::unique_ptr<Operator> operator_;
  std::vector<std::string> node_names_;
  size_t next_node_ = 0;
};

inline std::string Label(const json& obj, const std::string& key) {
  const json& labels = obj["metadata"]["labels"];
  if (!labels.is_object() || !labels.contains(key)) return "";
  return labels[key].get<std::string>();
}

// status.<field> as an integer, -1 when absent.
inline int StatusInt(const json& obj, const std::string& field) {
  if (!obj.contains("status") || !obj["status"].is_object()) return -1;
  const json& status = obj["status"];
  if (!status.contains(field) || !status[field].is_number()) return -1;
  return status[field].get<int>();
}

inline std::string Env(const json& pod, const std::string& name, size_t container = 0) {
  for (const auto& var : pod["spec"]["containers"][container]["env"]) {
    if (var["name"] == name) {
      if (var.contains("value")) return var["value"];
      return "fieldRef:" + var["valueFrom"]["fieldRef"]["fieldPath"].get<std::string>();
    }
  }
  return "<unset>";
}

}  // namespace copse::grove::testing
