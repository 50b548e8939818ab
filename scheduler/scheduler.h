#pragma once
// Scheduler: the runtime that turns informer events into bindings.
//
//   informers (pods, nodes, namespaces, PDBs) ──▶ Cache (nodes, assumed/bound pods)
//                                          └────▶ SchedulingQueue (pending pods)
//   loop thread: Pop ─▶ Cache::UpdateSnapshot ─▶ cycle ─▶ assume ─▶ ApiWriter::Bind (async)
//
// The pod cycle (kube-scheduler's scheduleOne):
//   1. Skip pods being deleted or already assumed/bound.
//   2. Refresh the snapshot (changed node rows only), then add the pods
//      nominated to each node with priority >= the pod's (kube counts them
//      in Filter; copse adds them to the snapshot rows for the cycle).
//   3. Framework::SchedulePod: PreFilter, Filter over node chunks in parallel
//      (oneTBB) from a rotating start, stopping at the adaptive number of
//      feasible nodes, PreScore, Score, pick (ties by the injected RNG).
//   4. Pod classes: when the next pod has the same signature and priority
//      and no other node changed since, the previous pass's feasible nodes
//      and raw scores are reused; only the node that received the previous
//      pod is filtered and scored again (KEP-5598 opportunistic batching).
//   5. Success: assume (the pod counts on the node at once), Reserve, Permit,
//      then bind asynchronously; the loop moves on. A failed bind forgets the
//      pod, unreserves it and requeues it with backoff; a successful one
//      starts the assumed pod's TTL until the informer confirms it.
//   6. Failure: PostFilter (DefaultPreemption) computes victims; actuation is
//      separate — the pod is nominated (status.nominatedNodeName) and the
//      victims get a DisruptionTarget condition and are deleted. Then the pod
//      is requeued (unschedulable pool, returning on relevant cluster events
//      or the periodic flush), PodScheduled=False is written with kube's
//      message and a FailedScheduling event recorded.
//
// Units of kind kPodGroup go to the Workload Scheduling Cycle (gang issue).
//
// Thread-safety: Start/Stop from one thread; stats() and accessors from any.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/result.h"
#include "plugins/framework/profile.h"

namespace copse::kube {
class Client;
}
namespace copse::queue {
class SchedulingQueue;
}

namespace copse::scheduler {

class Cache;
namespace config {
class SchedulerMetrics;
}

struct SchedulerOptions {
  // Profiles (schedulerName + plugins). Empty: DefaultProfile("copse-scheduler").
  std::vector<plugins::Profile> profiles;
  Clock::Duration pod_initial_backoff = std::chrono::seconds(1);
  Clock::Duration pod_max_backoff = std::chrono::seconds(10);
  Clock::Duration pod_max_in_unschedulable = std::chrono::minutes(5);
  // Cap of a pod group's backoff (it grows with the group's size).
  Clock::Duration pod_group_max_backoff = std::chrono::seconds(60);
  // How often the unschedulable pool is checked for pods older than
  // pod_max_in_unschedulable (kube: every 30 s).
  Clock::Duration unschedulable_flush_interval = std::chrono::seconds(30);
  // An assumed pod whose bind succeeded is forgotten if the informer has not
  // confirmed it after this long; 0 (the default, as kube-scheduler's
  // durationToExpireAssumedPod): never, since forgetting a pod the server did
  // bind frees its node's capacity for others while the watch lags.
  Clock::Duration assumed_pod_ttl = Clock::Duration::zero();
  // A gang member still waiting for its PodGroup, or for the rest of its
  // members, after this long gets PodScheduled=False and a FailedScheduling
  // event saying so; the members of a gang created in one burst write
  // nothing. 0: report at once.
  Clock::Duration waiting_report_delay = std::chrono::seconds(1);
  // Threads for parallel Filter/Score (0: hardware concurrency).
  int parallelism = 0;
  size_t filter_chunk_size = 256;
  // Reuse a pod class's filter pass for consecutive pods (step 4).
  bool batch_pod_classes = true;
  bool record_events = true;
  // Binds, status patches, evictions and events go through a client of their
  // own (the same ClientConfig) on a dedicated I/O thread: binds then leave
  // while the informers' thread decodes the confirmations of earlier ones,
  // instead of queueing behind them. The writes' client has its own
  // client-side rate limit (ClientConfig::qps). false: they share the given
  // client.
  bool write_thread = true;
  uint64_t seed = 0;  // 0: random
  std::shared_ptr<const Clock> clock;  // default RealClock
  // Prometheus metrics to update (attempts, durations, pending pods,
  // preemption, binds); null: none. Must outlive the scheduler.
  config::SchedulerMetrics* metrics = nullptr;
};

struct SchedulerStats {
  uint64_t attempts = 0;
  uint64_t scheduled = 0;       // assumed and sent to bind
  uint64_t unschedulable = 0;
  uint64_t errors = 0;
  uint64_t bound = 0;           // bind calls that succeeded
  uint64_t bind_failures = 0;
  uint64_t binds_verified = 0;  // binds of unknown outcome settled by reading the pod
  uint64_t preemption_attempts = 0;
  uint64_t preemption_victims = 0;
  uint64_t batched = 0;         // pods placed by reusing a pod class's filter pass
  double scheduling_seconds = 0;  // wall time spent in cycles on the loop thread
};

class Scheduler {
 public:
  // Builds the frameworks (errors name the profile and plugin) and the
  // informers; nothing runs until Start.
  static Result<std::unique_ptr<Scheduler>> Create(std::shared_ptr<kube::Client> client,
                                                   SchedulerOptions options);
  ~Scheduler();  // Stop()
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Starts the informers and, once they have synced, the loop thread.
  void Start();
  // Informers synced (the loop runs from then on).
  bool WaitForSync(std::chrono::milliseconds timeout) const;
  bool HasSynced() const;
  // The informers the loop waits for that have not synced, each as "<api
  // version> <resource>: not synced (last error: ...)"; empty once synced.
  std::vector<std::string> UnsyncedInformers() const;
  // Stops the loop and the informers and waits for in-flight API writes.
  void Stop();

  SchedulerStats stats() const;
  const Cache& cache() const;
  queue::SchedulingQueue& queue();
  // Scheduler names this instance is responsible for.
  std::vector<std::string> scheduler_names() const;

  struct Impl;  // implementation detail (scheduler.cc)

 private:
  explicit Scheduler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace copse::scheduler
