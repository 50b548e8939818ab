#pragma once
// SchedulingQueue: kube-scheduler's PriorityQueue (pkg/scheduler/backend/queue)
// for copse. It holds queued units (queue/queued_unit.h: a pod today, a
// PodGroup instance next) in one of five places:
//   activeQ        heap ordered by QueueSort (default PrioritySort: higher
//                  priority, then earlier timestamp; FIFO among equals);
//   backoffQ       heap ordered by backoff expiry;
//   unschedulable  pool of units that failed and wait for a relevant event
//                  or the leftover flush;
//   gated          pool of units a PreEnqueue gate rejected (they cost no
//                  cycles and are reported separately);
//   in flight      popped, being scheduled.
//
// Algorithm:
//   1. Add / Update (new pod): run the profile's PreEnqueue gates; admitted
//      units enter activeQ, others the gated pool.
//   2. Pop: take activeQ's head, count the attempt and a new scheduling
//      cycle, clear the last rejectors, and mark it in flight. While any unit
//      is in flight, every event of interest is appended to an in-flight
//      event log.
//   3. AddUnschedulableIfNotPresent(key, cycle, rejection): record the
//      rejectors, bump the unschedulable (or, with no rejector, the error)
//      count, restart the timestamp and compute the backoff expiry:
//      timestamp + initial * 2^(count - 1), capped at max (count: the
//      consecutive errors if any, else the unschedulable count). Then replay
//      the events logged since the unit's pop through the hints (4): kSkip
//      parks it in the unschedulable pool; otherwise it is requeued (5).
//      Log entries older than every remaining in-flight unit are dropped.
//   4. Hints (QueueingHintRegistry::Evaluate): only the rejecting plugins'
//      hints for matching events are asked; Queue from a Pending plugin means
//      "immediately", from an Unschedulable plugin "after backoff".
//   5. Requeue: "after backoff" goes to backoffQ while the unit is backing
//      off, else to activeQ through the gates (1); "immediately" goes to
//      activeQ through the gates.
//   6. MoveAllToActiveOrBackoffQueue(event, old, new): if some plugin cares
//      about the event, every unschedulable unit (and every gated unit whose
//      gating plugin registered the event) is evaluated (4) and requeued (5)
//      unless the hints say kSkip; then the event is logged for in-flight
//      units. AssignedPodAdded/Updated pre-select the unschedulable units an
//      assigned pod can help (a required affinity term matching it, or a
//      cross-topology plugin among the rejectors in its namespace).
//   7. Update of a queued pod: in activeQ/backoffQ the record is replaced
//      (activeQ re-sorted); in the unschedulable pool the pod-update events
//      (labels, scale-down, tolerations, other) are evaluated (4); a gated
//      unit re-runs its gates; an in-flight unit takes the new version and
//      logs the update events for its replay.
//   8. FlushBackoffQCompleted moves every unit whose backoff expired to
//      activeQ (through the gates). FlushUnschedulablePodsLeftover requeues
//      unschedulable units older than podMaxInUnschedulablePodsDuration
//      (a wildcard event: after backoff). The caller drives both with the
//      injected clock; the queue never sleeps and owns no thread.
//   9. Delete removes the unit from wherever it is; an in-flight unit is
//      marked so that its requeue drops it (and a re-Add while in flight
//      re-enters it fresh when the attempt is handed back).
//
// Thread-safety: none; the queue has one owner, the scheduler's loop thread
// (scheduler/loop.h), which applies informer events and runs the cycles in
// order, so no lock is taken and no wake-up can be lost. Hint functions,
// gates and the QueueSort function run inside the calls: they must be cheap,
// must not throw (QueueSort) and must not call back into the queue.
//
// Complexity: push, pop, erase and re-sort are O(log n) (intrusive indexed
// heaps, records in one hash map); Pop allocates only when the popped unit's
// member list exceeds one pod. MoveAll and the leftover flush are O(pool).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/clock.h"
#include "core/pending_requests.h"
#include "core/pod_info.h"
#include "queue/cluster_event.h"
#include "queue/indexed_heap.h"
#include "queue/nominator.h"
#include "queue/queued_unit.h"
#include "queue/queueing_hint.h"

namespace copse::queue {

inline constexpr Clock::Duration kDefaultPodInitialBackoff = std::chrono::seconds(1);
inline constexpr Clock::Duration kDefaultPodMaxBackoff = std::chrono::seconds(10);
inline constexpr Clock::Duration kDefaultPodMaxInUnschedulablePodsDuration =
    std::chrono::minutes(5);

struct QueueOptions {
  Clock::Duration pod_initial_backoff = kDefaultPodInitialBackoff;
  // 0 disables backoff altogether (kube's podMaxBackoffSeconds: 0).
  Clock::Duration pod_max_backoff = kDefaultPodMaxBackoff;
  Clock::Duration pod_max_in_unschedulable_pods = kDefaultPodMaxInUnschedulablePodsDuration;
  // Pod groups back off by their own settings: from pod_group_initial_backoff,
  // scaled by 1 + floor(log2(members)), doubling per failed attempt, capped
  // at pod_group_max_backoff (0 disables their backoff).
  Clock::Duration pod_group_initial_backoff = std::chrono::seconds(1);
  Clock::Duration pod_group_max_backoff = std::chrono::seconds(60);
  // QueueSort; empty: PrioritySortLess (inlined, no indirect call).
  QueueLessFn less;
};

class SchedulingQueue {
 public:
  // `clock` must outlive the queue. `profiles` empty: one profile matching
  // every pod, with no hints and no gates.
  SchedulingQueue(const Clock& clock, QueueOptions options, std::vector<QueueProfile> profiles);
  SchedulingQueue(const SchedulingQueue&) = delete;
  SchedulingQueue& operator=(const SchedulingQueue&) = delete;

  // ---- Unscheduled pods (informer events, applied by the loop) ----
  // A new pending pod (an existing key is treated as an Update). Returns
  // where it went (kActive or kGated; kInFlight when it replaced a deleted
  // in-flight incarnation).
  QueueLocation Add(std::shared_ptr<const PodInfo> pod);
  // A pending pod changed (`old_pod` may be null). A pod not in the queue is
  // added. Returns its location afterwards.
  QueueLocation Update(std::shared_ptr<const PodInfo> old_pod,
                       std::shared_ptr<const PodInfo> new_pod);
  // The pod is gone (or got bound elsewhere): removes it from every sub-queue
  // and from the nominator. False when it was not queued.
  bool Delete(const PodInfo& pod);

  // ---- Pod groups (gangs) ----
  // Adds the group unit `key` (kind kPodGroup) holding `members` (the group's
  // pending pods; non-empty), or replaces the members of the queued unit. The
  // unit's priority is the lowest member priority. A new unit enters activeQ
  // through the gates; for a queued one this is an UnscheduledPod update:
  // activeQ re-sorts, the unschedulable pool re-evaluates the hints, an
  // in-flight unit logs the event for its replay.
  QueueLocation UpsertGroup(const UnitKey& key, PodList members);
  // Removes a group unit; an in-flight one is dropped when handed back.
  bool DeleteGroup(const UnitKey& key);

  // ---- Cluster events (informer events, applied by the loop) ----
  // Requeues the unschedulable units the event may help (algorithm step 6).
  void MoveAllToActiveOrBackoffQueue(const ClusterEvent& event, const EventObject& old_obj,
                                     const EventObject& new_obj);
  void AssignedPodAdded(const std::shared_ptr<const PodInfo>& pod);
  // `event` is the assigned-pod update (resource kAssignedPod, action from
  // the diff); a scale-down considers every unschedulable unit.
  void AssignedPodUpdated(const std::shared_ptr<const PodInfo>& old_pod,
                          const std::shared_ptr<const PodInfo>& new_pod, const ClusterEvent& event);
  void AssignedPodDeleted(const std::shared_ptr<const PodInfo>& pod);
  // Moves the units to activeQ now (from backoff, unschedulable or gated,
  // through the gates); an in-flight unit gets a targeted ForceActivate
  // replayed when it comes back. Unknown keys are ignored.
  void Activate(std::span<const UnitKey> keys);

  // ---- Scheduling loop ----
  // activeQ's head, or nullopt when activeQ is empty. The queue never waits:
  // the loop sleeps on its inbox until an event or a timer is due.
  std::optional<PoppedUnit> Pop();
  // activeQ's head (what Pop would return next), or null when activeQ is
  // empty. Valid until the queue is next changed.
  const QueuedUnit* PeekActive() const noexcept;
  // Hands back an in-flight unit whose attempt `cycle` was rejected (step 3).
  // Returns where it went; kNone when the unit is not in flight with that
  // cycle (stale call) or was deleted meanwhile (then it is dropped).
  QueueLocation AddUnschedulableIfNotPresent(const UnitKey& key, int64_t cycle,
                                             const Rejection& rejection);
  // The attempt failed with an error: backoff by the consecutive error count.
  QueueLocation AddErroredIfNotPresent(const UnitKey& key, int64_t cycle) {
    return AddUnschedulableIfNotPresent(key, cycle, Rejection{});
  }
  // The attempt is over and the unit leaves the queue (scheduled and bound,
  // or given up). No-op unless the unit is in flight; call it after the
  // binding cycle so that a failed bind can still requeue.
  void Done(const UnitKey& key);
  // Number of pops so far (the cycle of the last popped unit).
  int64_t SchedulingCycle() const;

  // ---- Timers, driven by the caller ----
  // Returns the number of units moved to activeQ.
  size_t FlushBackoffQCompleted();
  // Returns the number of units moved to activeQ or backoffQ.
  size_t FlushUnschedulablePodsLeftover();
  // The earliest backoff expiry in backoffQ (when to call FlushBackoffQCompleted).
  std::optional<Clock::TimePoint> NextBackoffExpiry() const;

  // ---- Nominator ----
  // Nominates `pod` to `node` (nullopt: the pod's nominated_node_name; "":
  // clear the nomination).
  void AddNominatedPod(std::shared_ptr<const PodInfo> pod, std::optional<std::string_view> node);
  void DeleteNominatedPodIfExists(const PodInfo& pod);
  std::vector<std::shared_ptr<const PodInfo>> NominatedPodsForNode(std::string_view node) const;
  std::optional<std::string> NominatedNodeOf(std::string_view pod_uid) const;
  // Every nomination as (node, pod); empty (without allocating) when none.
  std::vector<std::pair<std::string, std::shared_ptr<const PodInfo>>> NominatedPods() const;

  // ---- Introspection and metrics ----
  PendingCounts PendingUnits() const;
  // Like PendingUnits, counting member pods (equal while units are single pods).
  PendingCounts PendingPods() const;
  std::optional<QueuedUnit> Find(const UnitKey& key) const;
  // Keys in one place (activeQ and backoffQ in heap order, not pop order).
  std::vector<UnitKey> List(QueueLocation location) const;
  // What the queued pods (gang members included, also while in flight)
  // request, for stranding-aware scoring (core/pending_requests.h).
  const PendingRequests& pending_requests() const noexcept { return pending_requests_; }

 private:
  struct Entry {
    QueuedUnit unit;
    size_t heap_index = 0;         // in activeQ or backoffQ
    size_t pool_index = 0;         // in the unschedulable or gated pool
    uint64_t enqueue_seq = 0;      // FIFO tie-break in activeQ and backoffQ
    uint64_t in_flight_since = 0;  // event sequence number at pop
    int64_t popped_cycle = 0;
    Entry* in_flight_prev = nullptr;
    Entry* in_flight_next = nullptr;
    uint32_t profile = 0;
    bool deleted_in_flight = false;
    bool readded_in_flight = false;
  };
  struct ActiveLess {
    const SchedulingQueue* queue;
    bool operator()(const Entry& a, const Entry& b) const noexcept;
  };
  struct BackoffLess {
    bool operator()(const Entry& a, const Entry& b) const noexcept;
  };
  struct InFlightEvent {
    uint64_t seq;
    ClusterEvent event;
    EventObject old_obj;
    EventObject new_obj;
  };

  Entry* FindEntry(UnitKeyRef key);
  const Entry* FindEntry(UnitKeyRef key) const;
  QueueLocation AddNew(std::shared_ptr<const PodInfo> pod);
  QueueLocation UpdateEntry(Entry& entry, std::shared_ptr<const PodInfo> old_pod,
                            std::shared_ptr<const PodInfo> new_pod);
  Entry& NewEntry(std::shared_ptr<const PodInfo> pod);
  void EraseEntry(Entry& entry);
  void ResetAsNew(Entry& entry);
  void SetPod(Entry& entry, std::shared_ptr<const PodInfo> pod);
  uint32_t ProfileFor(const PodInfo& pod) const noexcept;
  void SetLocation(Entry& entry, QueueLocation location) noexcept;
  void Detach(Entry& entry);
  bool RunGates(Entry& entry);
  QueueLocation MoveToActive(Entry& entry);
  void PushBackoff(Entry& entry);
  void PushPool(std::vector<Entry*>& pool, Entry& entry, QueueLocation location);
  static void RemoveFromPool(std::vector<Entry*>& pool, Entry& entry) noexcept;
  QueueLocation Requeue(Entry& entry, RequeueStrategy strategy);
  void ComputeBackoff(Entry& entry) const;
  bool IsBackingOff(const Entry& entry) const noexcept;
  bool IsEventOfInterest(const ClusterEvent& event) const noexcept;
  RequeueStrategy Evaluate(const Entry& entry, const ClusterEvent& event,
                           const EventObject& old_obj, const EventObject& new_obj) const;
  RequeueStrategy EvaluateInFlightEvents(const Entry& entry) const;
  void RecordInFlightEvent(const ClusterEvent& event, const EventObject& old_obj,
                           const EventObject& new_obj);
  void LeaveInFlight(Entry& entry);
  size_t MovePods(std::vector<Entry*>& candidates, const ClusterEvent& event,
                  const EventObject& old_obj, const EventObject& new_obj);
  void MoveAll(const ClusterEvent& event, const EventObject& old_obj, const EventObject& new_obj);
  void CollectAssignedPodCandidates(const PodInfo& assigned);
  bool MayHelp(const Entry& entry, const PodInfo& assigned) const;
  QueueLocation RequeueAfterAttempt(Entry& entry, const Rejection& rejection);

  const Clock& clock_;
  const QueueOptions options_;
  const std::vector<QueueProfile> profiles_;

  std::unordered_map<UnitKey, Entry, UnitKeyHash, UnitKeyEqual> units_;
  IndexedHeap<Entry, ActiveLess> active_;
  IndexedHeap<Entry, BackoffLess> backoff_;
  std::vector<Entry*> unschedulable_;
  std::vector<Entry*> gated_;
  Entry* in_flight_head_ = nullptr;  // ordered by pop time, so by in_flight_since
  Entry* in_flight_tail_ = nullptr;
  std::deque<InFlightEvent> in_flight_events_;  // ordered by seq
  uint64_t event_seq_ = 0;
  uint64_t enqueue_seq_ = 0;
  int64_t cycle_ = 0;
  PendingCounts unit_counts_;
  PendingCounts pod_counts_;
  Nominator nominator_;
  PendingRequests pending_requests_;
  std::vector<Entry*> scratch_;  // candidates of one move, reused
};

}  // namespace copse::queue
