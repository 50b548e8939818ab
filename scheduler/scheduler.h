#pragma once
// Scheduler: the runtime that turns informer events into bindings, with one
// owner for everything it mutates:
//
//   informers (pods, nodes, namespaces, PDBs, PodGroups, Topologies)
//      │ translate only (decode to PodInfo/NodeInfo on their own threads)
//      ▼
//   Inbox ──▶ loop thread (SchedulerLoop): applies events to the Cache, the
//      ▲      SchedulingQueue and the GangTracker, in order; pops a unit;
//      │      PodCycle or WorkloadCycle computes a CycleOutcome; the loop
//      │      assumes, runs Reserve/Permit/PreBind/Bind (DefaultBinder asks
//      │      the ApiWriter), reports (StatusReporter) and preempts
//      │      (PreemptionActuator)
//   ApiWriter (its own I/O thread): binds, status patches, evictions,
//      events; bind outcomes come back through the Inbox (PostBind, or
//      unreserve + requeue)
//
// The scheduling cycles are described in scheduler/pod_cycle.h and
// scheduler/workload_cycle.h, the loop in scheduler/loop.h, the informers'
// translation in scheduler/informers.h.
//
// Ownership (issue 14): copse writes conditions, events, finalizers and
// status, and preempts, only for pods whose schedulerName is one of its
// profiles and for groups whose members are all copse's
// (scheduler/status_reporter.h).
//
// Thread-safety: Start/Stop from one thread; stats(), HasSynced(),
// WaitForSync() and scheduler_names() from any.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/result.h"
#include "plugins/framework/profile.h"
#include "plugins/framework/registry.h"

namespace copse::kube {
class Client;
}

namespace copse::scheduler {

namespace config {
class SchedulerMetrics;
}

struct SchedulerOptions {
  // Profiles (schedulerName + plugins). Empty: DefaultProfile("copse-scheduler").
  std::vector<plugins::Profile> profiles;
  // Out-of-tree plugins (kube's app.WithPlugin): registered next to the
  // in-tree ones, for profiles to name.
  std::vector<std::pair<std::string, plugins::PluginFactory>> out_of_tree_plugins;
  Clock::Duration pod_initial_backoff = std::chrono::seconds(1);
  Clock::Duration pod_max_backoff = std::chrono::seconds(10);
  Clock::Duration pod_max_in_unschedulable = std::chrono::minutes(5);
  // A pod group's own backoff after a failed Workload Scheduling Cycle:
  // initial, doubling with each attempt, capped.
  Clock::Duration pod_group_initial_backoff = std::chrono::seconds(1);
  Clock::Duration pod_group_max_backoff = std::chrono::seconds(60);
  // A gang bound below its minimum (members' binds failed for good, or bound
  // members vanished with their node) for this long, its re-placement having
  // failed meanwhile, has its bound members evicted so its resources are
  // freed and it is placed again whole (0: never).
  Clock::Duration gang_recovery_timeout = std::chrono::seconds(60);
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
  // Choosing among queued gangs (scheduler/gang_burst.h): pod groups of one
  // priority arriving within this window are run in an order that places
  // more of them (constrained first, smallest demand first); a group
  // skipped more than gang_burst_max_skips times goes first. 0 (the
  // default): off, strict FIFO within a priority.
  Clock::Duration gang_burst_window = Clock::Duration::zero();
  int32_t gang_burst_max_skips = 3;
  // With the window on: time to search an exact plan of a burst of up to 16
  // plain gangs asking one accelerator resource (scheduler/burst_plan.h);
  // the planned gangs are placed on the plan's nodes, the others after.
  // 0: GangBurst's order only.
  Clock::Duration gang_burst_plan_budget = std::chrono::milliseconds(5);
  // Threads for parallel Filter/Score (0: hardware concurrency).
  int parallelism = 0;
  size_t filter_chunk_size = 256;
  // Reuse a pod class's filter pass for consecutive pods (step 4).
  bool batch_pod_classes = true;
  bool record_events = true;
  // An idle loop woken by an event gathers what follows for this long and
  // applies it as one batch (one wake-up per burst, not per event). A driver
  // that waits for the loop to go idle at every step (copse replay) sets 0.
  std::chrono::microseconds inbox_gather{1000};
  // Binds, status patches, evictions and events go through a client of their
  // own (the same ClientConfig) on a dedicated I/O thread: binds then leave
  // while the informers' thread decodes the confirmations of earlier ones,
  // instead of queueing behind them. The writes' client has its own
  // client-side rate limit (ClientConfig::qps). false: they share the given
  // client.
  bool write_thread = true;
  uint64_t seed = 0;                   // 0: random
  std::shared_ptr<const Clock> clock;  // default RealClock
  // Prometheus metrics to update (attempts, durations, pending pods,
  // preemption, binds); null: none. Must outlive the scheduler.
  config::SchedulerMetrics* metrics = nullptr;
};

struct SchedulerStats {
  uint64_t attempts = 0;
  uint64_t scheduled = 0;  // assumed and sent to bind
  uint64_t unschedulable = 0;
  uint64_t errors = 0;
  uint64_t bound = 0;  // bind calls that succeeded
  uint64_t bind_failures = 0;
  uint64_t binds_verified = 0;  // binds of unknown outcome settled by reading the pod
  uint64_t preemption_attempts = 0;
  uint64_t preemption_victims = 0;
  uint64_t gangs_recovered = 0;  // gangs below their minimum whose bound members were evicted
  uint64_t batched = 0;          // pods placed by reusing a pod class's filter pass
  // Gang bursts (scheduler/burst_plan.h): plans made (of them, cut by the
  // budget), batches given no plan, gangs placed on their planned nodes, and
  // planned gangs whose nodes did not hold (placed the usual way).
  uint64_t burst_plans = 0;
  uint64_t burst_plans_unproven = 0;
  uint64_t burst_plans_declined = 0;
  uint64_t burst_gangs_steered = 0;
  uint64_t burst_steer_failures = 0;
  double scheduling_seconds = 0;  // wall time spent in cycles on the loop thread
  // Published by the loop after each of its iterations (the cache and the
  // queue are the loop's alone):
  size_t assumed_pods = 0;  // placed, bind in flight or not yet confirmed
  size_t active_units = 0;  // queued units per place
  size_t backoff_units = 0;
  size_t unschedulable_units = 0;
  size_t gated_units = 0;
};

// Where the loop stands, for a driver that owns the injected clock (copse
// replay moves a FakeClock only when the scheduler has nothing left to do).
struct SchedulerIdleState {
  // The loop sleeps with nothing due at the clock's current time, its inbox
  // is empty and no API write is queued or in flight.
  bool idle = false;
  bool inbox_empty = false;
  // Paused, it went to sleep with a unit ready to run (GrantCycle runs it).
  bool runnable = false;
  // The loop's next timer (backoff expiry, unschedulable flush, coalesced
  // reports) on the injected clock, as of when it went to sleep.
  Clock::TimePoint next_timer{};
  // Of those, the next that can place or evict a pod (not status reports):
  // backoff expiry, the unschedulable flush while pods are unschedulable,
  // gang recovery, a burst window; TimePoint::max() when none is set.
  Clock::TimePoint next_decision_timer{};
  // How often the loop has woken so far (events, timers, Wake, moves of a
  // clock that does not pass by itself).
  uint64_t loop_wakes = 0;
  // Events pushed into the loop's inbox so far.
  uint64_t inbox_events = 0;
  // The last resourceVersion whose handlers the pod and copse PodGroup
  // informers ran ("" before their first event).
  std::string pods_resource_version;
  std::string copse_pod_groups_resource_version;
  // The same for the PodDisruptionBudget informer ("" when not served).
  std::string pdbs_resource_version;
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
  // Driving the loop on an injected clock (any thread): IdleState reads the
  // loop, inbox, writer and informers without stopping them; SetPaused(true)
  // keeps the loop from starting cycles (it still applies events and runs
  // timers) until SetPaused(false), except one per GrantCycle; Wake makes a
  // sleeping loop read the clock again.
  SchedulerIdleState IdleState() const;
  void SetPaused(bool paused);
  void GrantCycle();
  void Wake();
  // Scheduler names this instance is responsible for.
  std::vector<std::string> scheduler_names() const;

  struct Impl;  // implementation detail (scheduler.cc)

 private:
  explicit Scheduler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace copse::scheduler
