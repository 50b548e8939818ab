// Topology scenario (issue 5), end to end through the embedded API server:
// the scheduler connects over loopback HTTP (list+watch, bindings, status,
// events); the benchmark writes objects straight into the store and a store
// watch records when each pod gets its nodeName. No kubelet simulator runs.
//
//   topology  KEP-5732's perf shape: 5,000 nodes (4 cpu, 32Gi, 110 pods)
//             spread over 50 racks (label copse.dev/rack), 50 warm-up gangs,
//             then 750 gangs x 4 pods (100m, 500Mi) measured. Gangs are
//             scheduling.k8s.io/v1alpha2 PodGroups with gang.minCount 4 and
//             schedulingConstraints.topologyConstraints[0].topologyKey
//             copse.dev/rack, created before their pods.
//             Targets: >= 15,000 pods/s, every gang in a single rack.
//
// Figures as in `gang`: pods/s = measured pods / (last bound - first
// created); latency = created -> bound; gang attempt time = the scheduler's
// loop seconds / attempts over the measured phase; scheduler CPU = the
// scheduler's threads (named copse-sched). packed_fraction = the share of
// measured gangs whose pods all landed in one rack.
#include <dirent.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "bench/bench.h"
#include "core/quantity.h"
#include "kube/apiserver/apiserver.h"
#include "kube/apiserver/store.h"
#include "kube/apiserver/synthetic.h"
#include "kube/client.h"
#include "kube/object.h"
#include "kube/pod_group.h"
#include "scheduler/scheduler.h"

namespace copse::bench {
namespace {

namespace api = copse::kube::apiserver;
using json = nlohmann::json;
using SteadyClock = std::chrono::steady_clock;
using TimePoint = SteadyClock::time_point;

constexpr const char* kSchedulerThread = "copse-sched";
constexpr const char* kNamespace = "bench";
constexpr const char* kRackLabel = "copse.dev/rack";

// When each pod of the bench namespace got its node (first time seen bound).
class BindWatcher {
 public:
  struct Bound {
    TimePoint at{};
    std::string node;
  };

  explicit BindWatcher(api::Store& store) {
    api::WatchOptions options;
    options.ns = kNamespace;
    auto watch = store.Watch(kube::resources::kPods, options);
    if (watch.ok()) stream_ = *watch;
    thread_ = std::thread([this] { Run(); });
  }
  ~BindWatcher() {
    if (stream_) stream_->Close();
    if (thread_.joinable()) thread_.join();
  }
  bool ok() const { return stream_ != nullptr; }
  int64_t bound() const { return count_.load(); }
  std::unordered_map<std::string, Bound> Records() {
    std::lock_guard lock(mu_);
    return records_;
  }

 private:
  void Run() {
    if (!stream_) return;
    std::vector<api::WatchEvent> events;
    std::mutex wake_mu;
    std::condition_variable wake;
    bool pending = false;
    stream_->SetNotify([&] {
      std::lock_guard lock(wake_mu);
      pending = true;
      wake.notify_one();
    });
    for (;;) {
      {
        std::unique_lock lock(wake_mu);
        wake.wait_for(lock, std::chrono::milliseconds(50), [&] { return pending; });
        pending = false;
      }
      events.clear();
      const bool open = stream_->Take(&events);
      const TimePoint now = SteadyClock::now();
      std::lock_guard lock(mu_);
      for (const api::WatchEvent& e : events) {
        if (e.type == api::WatchEventType::kDeleted || e.object->node_name.empty()) continue;
        auto [it, added] = records_.try_emplace(e.object->name);
        if (!added) continue;
        it->second.at = now;
        it->second.node = e.object->node_name;
        count_.fetch_add(1);
      }
      if (!open) return;
    }
  }

  std::shared_ptr<api::WatchStream> stream_;
  std::thread thread_;
  std::mutex mu_;
  std::unordered_map<std::string, Bound> records_;
  std::atomic<int64_t> count_{0};
};

std::string GroupJson(const std::string& name) {
  return R"({"apiVersion":"scheduling.k8s.io/v1alpha2","kind":"PodGroup","metadata":{"name":")" +
         name +
         R"(","namespace":"bench"},"spec":{"schedulingPolicy":{"gang":{"minCount":4}},"schedulingConstraints":{"topologyConstraints":[{"topologyKey":")" +
         kRackLabel + R"("}]}}})";
}

std::string MemberJson(const std::string& name, const std::string& group) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
         R"(","namespace":"bench","labels":{"gang":")" + group +
         R"("}},"spec":{"schedulerName":"copse-scheduler","schedulingGroup":{"podGroupName":")" +
         group +
         R"("},"containers":[{"name":"main","image":"registry.k8s.io/pause:3.10","resources":{"requests":{"cpu":"100m","memory":"500Mi"},"limits":{"cpu":"100m","memory":"500Mi"}}}]}})";
}

struct Cluster {
  std::shared_ptr<api::Store> store;
  std::unique_ptr<api::ApiServer> server;
  std::unique_ptr<kube::IoThread> io;
  std::unique_ptr<scheduler::Scheduler> sched;
  std::unordered_map<std::string, std::string> rack_of;  // node -> rack
  ~Cluster() {
    if (sched) sched->Stop();
    sched.reset();
    io.reset();
    if (server) server->Stop();
  }
  Status Create(const kube::ResourceRef& ref, std::string_view ns, std::string_view body) {
    auto created = store->Create(ref, ns, body);
    if (!created.ok()) return created.error();
    return Status::Ok();
  }
};

Status CreateGangs(Cluster& cluster, const std::string& prefix, int64_t gangs,
                   std::vector<std::pair<std::string, TimePoint>>* created) {
  for (int64_t g = 0; g < gangs; ++g) {
    if (Status s = cluster.Create(kube::resources::kPodGroups, kNamespace,
                                  GroupJson(prefix + "-" + std::to_string(g)));
        !s.ok()) {
      return s;
    }
  }
  std::vector<std::pair<std::string, std::string>> bodies;
  for (int64_t g = 0; g < gangs; ++g) {
    const std::string group = prefix + "-" + std::to_string(g);
    for (int i = 0; i < 4; ++i) {
      std::string name = group + "-" + std::to_string(i);
      bodies.emplace_back(name, MemberJson(name, group));
    }
  }
  for (auto& [name, body] : bodies) {
    const TimePoint now = SteadyClock::now();
    if (Status s = cluster.Create(kube::resources::kPods, kNamespace, body); !s.ok()) return s;
    if (created != nullptr) created->emplace_back(std::move(name), now);
  }
  return Status::Ok();
}

Status WaitBound(BindWatcher& watcher, int64_t target, std::string_view phase, Progress& progress) {
  const TimePoint deadline = SteadyClock::now() + std::chrono::seconds(600);
  for (int64_t n = watcher.bound(); n < target; n = watcher.bound()) {
    if (SteadyClock::now() > deadline) {
      return MakeError(ErrorCode::kInternal, std::string(phase) + ": only " + std::to_string(n) +
                                                 "/" + std::to_string(target) + " bound");
    }
    progress.Update(phase, n, target);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return Status::Ok();
}

}  // namespace

Result<BenchResult> RunTopologyBench(const BenchOptions& options, Progress& progress) {
  const int64_t nodes = options.nodes > 0 ? options.nodes : 5'000;
  // --pods rounds down to whole gangs of 4.
  const int64_t gangs = options.pods > 0 ? std::max<int64_t>(1, options.pods / 4) : 750;
  constexpr int64_t kWarmupGangs = 50;
  const int64_t racks = std::max<int64_t>(1, std::min<int64_t>(50, nodes));

  Cluster cluster;
  NameThisThread("copse-api");
  api::StoreOptions store_options;
  store_options.watch_history = static_cast<size_t>((gangs + kWarmupGangs) * 4 * 4 + 200'000);
  cluster.store = api::NewStore(store_options);
  auto shape = ParseResourceList("cpu=4,memory=32Gi,pods=110");
  if (!shape.ok()) return shape.error();
  auto topology = api::ParseTopology("rack=" + std::to_string(racks));
  if (!topology.ok()) return topology.error();
  auto node_objects = api::MakeSyntheticNodes(static_cast<int>(nodes), *shape, *topology);
  if (!node_objects.ok()) return node_objects.error();
  for (const std::string& node : *node_objects) {
    const json j = json::parse(node);
    cluster.rack_of[j["metadata"]["name"].get<std::string>()] =
        j["metadata"]["labels"].value(kRackLabel, "");
    if (Status s = cluster.Create(kube::resources::kNodes, "", node); !s.ok()) return s.error();
  }
  if (Status s =
          cluster.Create(kube::resources::kNamespaces, "",
                         R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"bench"}})");
      !s.ok()) {
    return s.error();
  }
  api::Options server_options;
  server_options.store = cluster.store;
  server_options.threads = 1;
  server_options.serve_https = options.tls;
  server_options.serve_http = !options.tls;
  auto server = api::ApiServer::Start(server_options);
  if (!server.ok()) return server.error();
  cluster.server = std::move(server).value();

  // Threads created from here on (client I/O, loop, oneTBB workers) are the scheduler's.
  NameThisThread(kSchedulerThread);
  kube::ClientConfig config;
  config.server = options.tls ? cluster.server->https_url() : cluster.server->http_url();
  config.ca_pem = cluster.server->ca_pem();
  config.max_connections = 128;
  cluster.io = std::make_unique<kube::IoThread>(1);
  auto client = kube::Client::Create(config, cluster.io->executor());
  if (!client.ok()) return client.error();
  scheduler::SchedulerOptions scheduler_options;
  auto created_scheduler = scheduler::Scheduler::Create(*client, scheduler_options);
  if (!created_scheduler.ok()) return created_scheduler.error();
  cluster.sched = std::move(created_scheduler).value();
  cluster.sched->Start();
  NameThisThread("copse-bench");
  if (!cluster.sched->WaitForSync(std::chrono::seconds(60))) {
    return MakeError(ErrorCode::kInternal, "scheduler informers did not sync");
  }

  BindWatcher watcher(*cluster.store);
  if (!watcher.ok()) return MakeError(ErrorCode::kInternal, "cannot watch the bench namespace");
  if (Status s = CreateGangs(cluster, "init", kWarmupGangs, nullptr); !s.ok()) return s.error();
  if (Status s = WaitBound(watcher, kWarmupGangs * 4, "warm-up", progress); !s.ok()) {
    return s.error();
  }

  std::vector<std::pair<std::string, TimePoint>> created;
  created.reserve(static_cast<size_t>(gangs * 4));
  const double cpu_before = NamedThreadsCpuSeconds(kSchedulerThread);
  const scheduler::SchedulerStats before = cluster.sched->stats();
  const TimePoint start = SteadyClock::now();
  if (Status s = CreateGangs(cluster, "gang", gangs, &created); !s.ok()) return s.error();
  if (Status s = WaitBound(watcher, (kWarmupGangs + gangs) * 4, "schedule", progress); !s.ok()) {
    return s.error();
  }
  const double cpu = NamedThreadsCpuSeconds(kSchedulerThread) - cpu_before;
  const scheduler::SchedulerStats after = cluster.sched->stats();

  const auto records = watcher.Records();
  std::vector<int64_t> samples;
  TimePoint last = start;
  std::map<std::string, std::set<std::string>> racks_of_gang;
  for (const auto& [name, at] : created) {
    auto it = records.find(name);
    if (it == records.end()) continue;
    last = std::max(last, it->second.at);
    samples.push_back(
        std::chrono::duration_cast<std::chrono::nanoseconds>(it->second.at - at).count());
    racks_of_gang[name.substr(0, name.rfind('-'))].insert(cluster.rack_of[it->second.node]);
  }
  const double seconds = std::chrono::duration<double>(last - start).count();
  const double pods = static_cast<double>(gangs * 4);
  progress.Done("schedule", gangs * 4, seconds);
  int64_t packed = 0;
  for (const auto& [gang, set] : racks_of_gang) packed += set.size() == 1 ? 1 : 0;
  const double attempts = static_cast<double>(after.attempts - before.attempts);
  const double loop_seconds = after.scheduling_seconds - before.scheduling_seconds;

  BenchResult result;
  result.scenario = "topology";
  result.nodes = nodes;
  result.pods = gangs * 4;
  result.pods_per_second = seconds > 0 ? pods / seconds : 0;
  result.p50_ms = PercentileMs(samples, 50);
  result.p99_ms = PercentileMs(samples, 99);
  result.scheduler_cpu_seconds = cpu;
  result.peak_rss_bytes = PeakRssBytes();
  result.extras["racks"] = static_cast<double>(racks);
  result.extras["gangs"] = static_cast<double>(gangs);
  result.extras["gang_attempts"] = attempts;
  result.extras["gang_attempt_ms"] = attempts > 0 ? loop_seconds * 1000.0 / attempts : 0;
  result.extras["loop_seconds"] = loop_seconds;
  result.extras["packed_fraction"] = static_cast<double>(packed) / static_cast<double>(gangs);
  result.extras["scheduler_cpu_ms_per_gang"] = cpu * 1000.0 / static_cast<double>(gangs);
  result.extras["unschedulable_attempts"] =
      static_cast<double>(after.unschedulable - before.unschedulable);
  result.targets["pods_per_second >= 15000"] = result.pods_per_second >= 15'000;
  result.targets["packed_fraction == 1"] = packed == gangs;
  return result;
}

}  // namespace copse::bench
