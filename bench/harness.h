#pragma once
// The one harness every end-to-end scenario of `copse bench` runs on
// (bench/README.md):
//
//   Harness::Start   the cluster: an embedded store + API server + copse
//                    scheduler in this process, or an external API server
//                    (BenchOptions::kubeconfig) with synthetic Nodes created
//                    there and a scheduler in-process or already running.
//   Harness::Create  the creator: POSTs objects over HTTP from several client
//                    connections at once (as scheduler_perf creates through
//                    client-go), recording when each request was sent.
//   Timeline         the watcher: one HTTP watch on the bench namespace's
//                    pods, recording when each pod was first seen bound and
//                    when it was deleted.
//   Figures          the JSON contract: pods/s = pods bound / (last bind -
//                    first create); p50/p99 from each pod's create to its
//                    bind; scheduler CPU from the scheduler's own threads
//                    (or --scheduler-pid), API server CPU separately; what
//                    was not measured stays missing; a timeout is a failure.
//
// Thread-safety: Harness and Timeline are used from the benchmark's thread;
// Timeline's counters and Records() may be read from any thread.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bench/bench.h"
#include "core/result.h"
#include "kube/object.h"
#include "kube/watch.h"

namespace copse::apiserver {
class Store;
class ApiServer;
}  // namespace copse::apiserver
namespace copse::kube {
class Client;
class IoThread;
struct ClientConfig;
}  // namespace copse::kube
namespace copse::scheduler {
class Scheduler;
struct SchedulerOptions;
}  // namespace copse::scheduler

namespace copse::bench {

using BenchClock = std::chrono::steady_clock;
using TimePoint = BenchClock::time_point;

inline constexpr const char* kBenchNamespace = "bench";
// Every synthetic node the harness creates carries this label (value "true"),
// so that an external cluster's own nodes are never touched.
inline constexpr const char* kBenchNodeLabel = "copse.dev/bench-node";
// Thread names the CPU figures are attributed by (NamedThreadsCpuSeconds).
inline constexpr const char* kSchedulerThreadName = "copse-sched";
inline constexpr const char* kServerThreadName = "copse-api";
inline constexpr const char* kBenchThreadName = "copse-bench";

struct ClusterSpec {
  int64_t nodes = 0;
  std::string node_shape;          // "cpu=4,memory=32Gi,pods=110"
  std::string topology;            // "zone=3,block=10,rack=10" (apiserver/synthetic.h)
  size_t watch_history = 200'000;  // the embedded store's watch window
  bool start_scheduler = true;     // false: no scheduler (the apiserver scenario)
  // Cluster-scoped objects created (not measured) before the scheduler starts:
  // PriorityClasses, CRDs, Topologies.
  std::vector<std::pair<kube::ResourceRef, std::string>> setup_objects;
  // Adjusts the in-process scheduler's options (metrics, profiles).
  std::function<void(scheduler::SchedulerOptions&)> scheduler_options;
};

// What the timeline saw happen to one pod.
struct PodRecord {
  bool bound = false;
  TimePoint bound_at{};
  std::string node;
  bool deleted = false;
  TimePoint deleted_at{};
  std::string deleted_json;  // the object of the DELETED event (for its conditions)
};

class Timeline {
 public:
  using Records = std::unordered_map<std::string, PodRecord>;
  // Watches pods in `ns` over HTTP with a client of its own (`config`) on an
  // I/O thread of its own, so decoding never delays the creator.
  Timeline(const kube::ClientConfig& config, std::string ns);
  ~Timeline();  // cancels the watch and waits for it
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;

  // Blocks until the watch is established (its response header came).
  Status WaitStarted(std::chrono::seconds timeout);
  int64_t bound() const;
  int64_t deleted() const;
  // The watch's error if it broke for good ("" while healthy).
  std::string error() const;
  Records Snapshot() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// A pod the benchmark created, and when its create request was sent.
struct Created {
  std::string name;
  TimePoint at{};
};

class Harness {
 public:
  static Result<std::unique_ptr<Harness>> Start(const BenchOptions& options,
                                                const ClusterSpec& spec, Progress& progress);
  // Stops the scheduler; on an external server deletes the bench pods and
  // the synthetic nodes (also after a failure or timeout).
  ~Harness();
  Harness(const Harness&) = delete;
  Harness& operator=(const Harness&) = delete;

  bool external_server() const { return store_ == nullptr; }
  bool external_scheduler() const { return sched_ == nullptr && spec_.start_scheduler; }
  // The embedded store and scheduler; null on an external server / scheduler.
  apiserver::Store* store() const { return store_.get(); }
  scheduler::Scheduler* scheduler() const { return sched_.get(); }
  // The creator's client (discovery and reads of the benchmark's own).
  const std::shared_ptr<kube::Client>& client() const { return client_; }
  Timeline& timeline() { return *timeline_; }
  // The schedulerName the scenario's pods must carry.
  const std::string& scheduler_name() const { return scheduler_name_; }
  int64_t nodes() const { return spec_.nodes; }
  // Node names are <prefix>-<k>, k = 1..nodes.
  const std::string& node_prefix() const { return node_prefix_; }
  // The value of `label` (e.g. copse.dev/rack) on each synthetic node, by
  // node name: the nodes Setup made, made again from the spec.
  Result<std::unordered_map<std::string, std::string>> NodeLabelValues(
      std::string_view label) const;

  // POSTs every body to `ref` in `ns` from options.connections concurrent
  // requests; for pods, `created` (when not null) gets each pod's name and
  // send time. Fails with the first error after all requests finished.
  Status Create(const kube::ResourceRef& ref, const std::string& ns,
                std::vector<std::string> bodies, std::vector<Created>* created,
                std::string_view phase, Progress& progress);

  // Deletes the collection `ref` in the bench namespace now (leftovers of an
  // interrupted run) and again at the end, after the pods: the scenario's
  // own kinds (e.g. PodGroups) on an external server. Errors other than 404
  // are printed, not returned: cleanup never fails a run.
  void AddCleanup(const kube::ResourceRef& ref);

  // Lists `ref` in `ns` with the creator's client.
  Result<kube::ListResult> List(const kube::ResourceRef& ref, const std::string& ns);

  // Polls `done()` until it reaches `target` or `timeout` passes; false on timeout.
  bool WaitFor(const std::function<int64_t()>& done, int64_t target, std::string_view phase,
               std::chrono::seconds timeout, Progress& progress);

  // CPU seconds so far; nullopt when not measurable (external parts
  // without a pid).
  std::optional<double> SchedulerCpuSeconds() const;
  std::optional<double> ApiServerCpuSeconds() const;

 private:
  Harness();
  Status Setup(Progress& progress);
  void Cleanup();
  void DeleteCollection(const std::string& path);

  BenchOptions options_;
  ClusterSpec spec_;
  std::string scheduler_name_ = "copse-scheduler";
  std::string node_prefix_ = "node";
  std::shared_ptr<apiserver::Store> store_;
  std::unique_ptr<apiserver::ApiServer> server_;
  std::unique_ptr<kube::IoThread> sched_io_;
  std::shared_ptr<kube::Client> sched_client_;
  std::unique_ptr<scheduler::Scheduler> sched_;
  std::unique_ptr<kube::IoThread> io_;  // the creator's
  std::shared_ptr<kube::Client> client_;
  std::unique_ptr<Timeline> timeline_;
  bool created_nodes_ = false;
  std::vector<kube::ResourceRef> cleanup_;  // AddCleanup's, deleted after the pods
};

// The measured phase's figures, built the one way every scenario reports them.
struct FiguresInput {
  std::vector<Created> created;  // the measured pods
  Timeline::Records records;
  TimePoint start{};  // taken before the first measured create
  bool timed_out = false;
  std::optional<double> scheduler_cpu_seconds;
  std::optional<double> api_server_cpu_seconds;
};

// Fills pods, pods_bound, pods_per_second, p50/p99, CPU figures and
// timed_out of `result`; returns the time of the last bind (start if none).
TimePoint ApplyFigures(const FiguresInput& in, BenchResult& result);

// CPU seconds (user + system) of process `pid` from /proc; nullopt if gone.
std::optional<double> PidCpuSeconds(int64_t pid);

// A minimal CRD (JSON) for one of the two copse kinds, PodGroup or Topology
// (scheduling.copse.dev/v1alpha1), whose schema keeps unknown fields:
// validation is the scheduler's, as in a real cluster with the shipped CRDs'
// structural checks passed.
std::string CopseCrdJson(const std::string& plural, const std::string& kind, bool namespaced);

}  // namespace copse::bench
