#pragma once
// SchedulerLoop: the one owner of the scheduler's mutable state (the cache,
// the scheduling queue, the gang tracker, the Topology catalog, the
// snapshot) and the only thread that touches it. Informers and the API
// writer talk to it through its Inbox.
//
// Run():
//   1. Until the informers have synced: apply inbox events only (the cluster
//      is being listed; nothing is scheduled on a partial view), checking
//      every 50 ms whether they have (an informer turns synced after its
//      list's events, with no event of its own; the check also names
//      informers still unsynced after 10 s). This start-up wait is the
//      loop's only poll. Then release the finalizers of groups whose members
//      vanished while copse was down.
//   2. Each iteration:
//      a. Drain the inbox and apply the batch in push order
//         (scheduler/handlers.cc): pods to the cache, the queue and the gang
//         tracker; nodes, namespaces and PDBs to the cache; cluster events to
//         the queue (its hints requeue what they may help); gang objects and
//         Topologies to the tracker and the catalog; bind outcomes to the
//         binding cycle (scheduler/binding.cc).
//      b. Timers: backoff expiry, the periodic unschedulable-pods flush
//         (kube's podMaxInUnschedulablePodsDuration semantic), expired
//         assumed pods, coalesced status writes and delayed waiting reports,
//         gangs left below their minimum for gangRecoveryTimeout
//         (scheduler/gang_recovery.h: their bound members are evicted),
//         metrics.
//      c. Pop one unit (or, with a gang burst window, every pod group of the
//         head's priority, run in GangBurst's order: scheduler/gang_burst.h):
//         PodCycle or WorkloadCycle computes a CycleOutcome,
//         which the loop applies: assume + Reserve, Permit, PreBind and Bind
//         through the profile's plugins for each placement; requeue with the
//         rejecting plugins (or Done); PodScheduled / PodGroupScheduled
//         reports; preemption actuation.
//      d. Nothing to pop: sleep on the inbox until an event arrives or the
//         next timer is due (NextDues: every timer of b). On a clock that
//         passes only when moved (FakeClock), each move wakes the loop.
//   Every wake-up is an inbox event, a timer or a move of the clock: there is
//   no periodic wake-up or resync, since events are applied in order by one
//   thread and none can be missed.
//
// Thread-safety: Run on the loop thread; Stop and stats() from any thread.

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/clock.h"
#include "queue/scheduling_queue.h"
#include "scheduler/api_writer.h"
#include "scheduler/cache.h"
#include "scheduler/cycle_env.h"
#include "scheduler/gang_burst.h"
#include "scheduler/gang_recovery.h"
#include "scheduler/gangs.h"
#include "scheduler/inbox.h"
#include "scheduler/pod_cycle.h"
#include "scheduler/preemption_actuator.h"
#include "scheduler/profiles.h"
#include "scheduler/scheduler.h"
#include "scheduler/status_reporter.h"
#include "scheduler/topology_placement.h"
#include "scheduler/workload_cycle.h"

namespace copse::scheduler {

class SchedulerLoop {
 public:
  // Every reference must outlive the loop.
  SchedulerLoop(const SchedulerOptions& options, const Profiles& profiles, ResourceNames& names,
                Inbox& inbox, ApiWriter& writer, const Clock& clock);
  SchedulerLoop(const SchedulerLoop&) = delete;
  SchedulerLoop& operator=(const SchedulerLoop&) = delete;

  // Runs until Stop. `synced` tells whether the informers the cycles need
  // have synced (called on the loop thread).
  void Run(const std::function<bool()>& synced);
  // Ends Run (it applies what is queued, flushes coalesced statuses, returns).
  void Stop();
  // The counters as of the loop's last iteration.
  SchedulerStats stats() const;
  // While paused the loop applies events and runs timers but starts no cycle.
  void SetPaused(bool paused);
  // Makes a sleeping loop run an iteration (it reads the clock and the pause
  // again); sleep().current is false until that iteration began.
  void Wake();
  // While paused: lets the loop start one more cycle (or gang burst).
  void GrantCycle();
  // The loop sleeps with nothing due at the clock's current time (`asleep`);
  // `wakes` counts its wake-ups, so two equal readings around other checks
  // mean it slept throughout; `next_due` is its next timer on the clock.
  struct Sleep {
    uint64_t wakes = 0;
    bool asleep = false;
    bool current = false;   // no Wake() since the loop's last iteration began
    bool runnable = false;  // when it went to sleep, a unit was ready to run (paused)
    Clock::TimePoint next_due{};
    Clock::TimePoint next_decision_due{};  // NextDues().decisions
  };
  Sleep sleep() const;

 private:
  // An assumed pod whose binding cycle is under way (by uid).
  struct Binding {
    PodPtr pod;  // assumed (node_name set)
    queue::UnitKey key;
    int64_t cycle = 0;
    size_t profile = 0;
    bool group_member = false;
    int retries = 0;
    int verifications = 0;  // reads made to learn whether a failed bind took effect
    uint64_t attempt = 0;   // matches BindDone/BindChecked to the current request
    Status status_before_check = Status::Ok();  // the failure a read-back settles
    plugins::CycleState state;                  // layered over the pass that placed the pod
  };
  static constexpr int kMaxGroupBindRetries = 3;
  static constexpr int kMaxBindVerifications = 5;

  // ---- loop.cc ----
  void ApplyInbox();
  void RunTimers();
  // The next timer on the injected clock.
  // The loop's next timer (`any`), and of those the next that can place or
  // evict (`decisions`: backoff expiry, the unschedulable flush while pods
  // are unschedulable, gang recovery, a burst window; not status reports or
  // metrics; TimePoint::max() when none is set).
  struct Dues {
    Clock::TimePoint any = Clock::TimePoint::max();
    Clock::TimePoint decisions = Clock::TimePoint::max();
  };
  Dues NextDues() const;
  // `steer`: a BurstPlan's nodes for a pod group (WorkloadCycle::Run).
  void RunCycle(const queue::PoppedUnit& unit, std::span<const NodePods> steer = {});
  // Pops the pod groups of the head's priority and runs them in burst_'s order.
  void RunGangBurst();
  void ApplyPodOutcome(const queue::PoppedUnit& unit, CycleOutcome& outcome);
  void ApplyGroupOutcome(const queue::PoppedUnit& unit, CycleOutcome& outcome);
  void ReportFailed(const CycleOutcome& outcome);
  void CountPreemption(const PreemptionPlan& plan);
  // Evicts the bound members of a gang left below its minimum.
  void RecoverGang(const GangRecovery::Due& due);
  void Publish();

  // ---- handlers.cc: informer events ----
  void Apply(PodChanged& event);
  void Apply(PodGone& event);
  void Apply(NodeChanged& event);
  void Apply(NodeGone& event);
  void Apply(NamespaceChanged& event);
  void Apply(NamespaceGone& event);
  void Apply(PdbChanged& event);
  void Apply(PdbGone& event);
  void Apply(GroupObjectChanged& event);
  void Apply(GroupObjectGone& event);
  void Apply(TopologyChanged& event);
  void Apply(TopologyGone& event);
  void PendingMember(const PodPtr& pod);
  void MemberBound(const PodPtr& pod, bool ready);
  void MemberGone(const PodInfo& pod, bool finished, bool succeeded);
  void ApplyDecision(const GangTracker::Decision& decision);
  bool AllBinding(const queue::PodList& members) const;
  template <typename T>
  void OnGroupObject(PodInfo::GroupKind kind, const std::shared_ptr<const T>& object);

  // ---- binding.cc: the binding cycle ----
  // Assumes the pod on its node and runs Reserve, Permit and PreBind, then
  // Bind. False when it failed before Bind (the pod is forgotten and reported).
  bool AssumeAndBind(const queue::UnitKey& key, int64_t cycle, size_t profile,
                     const Assignment& assignment, bool group_member);
  // Runs the Bind plugins for a binding (a new attempt).
  void StartBind(Binding binding);
  void Apply(BindDone& event);
  void Apply(BindChecked& event);
  void BindSucceeded(Binding& binding);
  void BindFailed(Binding binding, const Status& status);
  void BindingCycleFailed(const queue::UnitKey& key, int64_t cycle, const PodInfo& pod,
                          const std::string& message);

  const SchedulerOptions& options_;
  const Profiles& profiles_;
  Inbox& inbox_;
  ApiWriter& writer_;
  const Clock& clock_;

  Cache cache_;
  queue::SchedulingQueue queue_;
  GangTracker gangs_;
  TopologyCatalog topologies_;
  CycleEnv env_;
  PodCycle pod_cycle_;
  WorkloadCycle workload_cycle_;
  StatusReporter reporter_;
  PreemptionActuator preemption_;
  GangBurst burst_;
  std::optional<Clock::TimePoint> hold_until_;  // a fresh gang's burst window
  GangRecovery recovery_;
  std::shared_ptr<void> clock_moved_;  // the clock's OnMove registration
  std::unordered_map<std::string, Binding> bindings_;
  uint64_t next_attempt_ = 0;

  std::vector<LoopEvent> batch_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> paused_{false};
  std::atomic<bool> asleep_{false};
  std::atomic<uint64_t> wakes_{0};
  std::atomic<uint64_t> wake_requests_{0};
  std::atomic<uint64_t> wake_requests_seen_{0};
  std::atomic<uint64_t> cycle_credits_{0};
  std::atomic<bool> runnable_{false};
  std::atomic<int64_t> next_due_ns_{0};
  std::atomic<int64_t> next_decision_due_ns_{0};
  SchedulerStats stats_;
  Clock::TimePoint last_unschedulable_flush_{};
  Clock::TimePoint last_metrics_update_{};
  mutable std::mutex published_mu_;
  SchedulerStats published_;
};

}  // namespace copse::scheduler
