#pragma once
// The scheduling framework's extension points, as in kube-scheduler
// (pkg/scheduler/framework/interface.go), reshaped for a struct-of-arrays
// snapshot: Filter and Score take a chunk of nodes per virtual call and write
// one result per node into caller-provided arrays.
//
// Rules for every plugin:
//   - No threads, no I/O, no clocks (the loop passes `now` where needed).
//   - Never mutate the Snapshot or the PodInfo; keep per-cycle data in the
//     CycleState under the plugin's own keys (PreFilterKey/PreScoreKey).
//   - Filter, Score and NormalizeScore are noexcept, allocation-free and
//     reentrant: the runner calls them concurrently on disjoint chunks with the
//     same (const) CycleState.
//   - Statuses carry reason ids; text is rendered by AppendReasons, only when a
//     message is emitted.
//
// A plugin implements any subset of the interfaces below (each derives
// virtually from Plugin); the framework discovers them with dynamic_cast when
// a profile is built.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/cluster_event.h"
#include "core/pod_info.h"
#include "core/snapshot.h"
#include "plugins/framework/cycle_state.h"
#include "plugins/framework/random.h"
#include "plugins/framework/status.h"

namespace copse::plugins {

inline constexpr int64_t kMaxNodeScore = 100;
inline constexpr int64_t kMinNodeScore = 0;

class Plugin {
 public:
  virtual ~Plugin() = default;
  // The registry name ("NodeResourcesFit").
  virtual std::string_view Name() const noexcept = 0;

  // Appends the kube-scheduler reason strings of a status this plugin
  // returned, one per reason ("Insufficient cpu", "Too many pods"). `snapshot`
  // is the one the status was computed against. The default renders
  // ReasonText(status.reason) and the shared kReasonMissingState.
  virtual void AppendReasons(const Status& status, const Snapshot& snapshot,
                             std::vector<std::string>& out) const;

 protected:
  // Fixed text for a reason id; "" when the id is unknown.
  virtual std::string_view ReasonText(ReasonId reason) const noexcept;
  // CycleState keys owned by this plugin.
  const void* PreFilterKey() const noexcept { return this; }
  const void* PreScoreKey() const noexcept { return reinterpret_cast<const char*>(this) + 1; }
};

// What Filter, Score and NormalizeScore read; borrowed for the call.
struct CycleContext {
  const PodInfo& pod;
  const Snapshot& snapshot;
  const CycleState& state;
};

// PreEnqueue: runs before a pod enters the active queue (and before a gang
// member counts towards its group). Returns Success to admit the pod,
// UnschedulableAndUnresolvable (or Pending) to keep it gated. Must be cheap: it
// runs on every pod add/update event.
class PreEnqueuePlugin : public virtual Plugin {
 public:
  virtual Status PreEnqueue(const PodInfo& pod) const noexcept = 0;
};

// The cluster events a plugin reacts to (kube's EnqueueExtensions): a pod this
// plugin rejected (at PreEnqueue, PreFilter, Filter, Reserve, Permit or
// PreBind) is retried only after an event it registered, and only when the
// event's hint says kQueue (no hint: always). A plugin that can reject pods
// but does not implement this is taken to react to every event (kube's
// default), so that no pod waits for the unschedulable timeout because of
// it. Called once, when the scheduler builds its queue.
struct ClusterEventWithHint {
  ClusterEvent event;
  QueueingHintFn hint;  // empty: kQueue for every pod
};

class EnqueueExtensions : public virtual Plugin {
 public:
  virtual std::vector<ClusterEventWithHint> EventsToRegister() const = 0;
};

// The queue's view of a queued unit: a pod, or for a pod group its first
// member (the queue owns richer records).
struct QueuedPodView {
  QueuedPodView(const PodInfo* queued_pod, Clock::TimePoint queued_at) noexcept
      : pod(queued_pod),
        timestamp(queued_at),
        priority(queued_pod != nullptr ? queued_pod->priority : 0) {}
  QueuedPodView(const PodInfo* queued_pod, Clock::TimePoint queued_at,
                int32_t unit_priority) noexcept
      : pod(queued_pod), timestamp(queued_at), priority(unit_priority) {}

  const PodInfo* pod = nullptr;
  Clock::TimePoint timestamp{};  // when the unit was added to the queue
  // The unit's priority: the pod's, or for a pod group its lowest member's.
  int32_t priority = 0;
};

// QueueSort: strict weak ordering of units in the active queue. Exactly one
// per profile, the same in every profile (the queue is shared). Pure: no
// state, no failure; called on every heap operation, so cheap.
class QueueSortPlugin : public virtual Plugin {
 public:
  virtual bool Less(const QueuedPodView& a, const QueuedPodView& b) const noexcept = 0;
};

// Optional PreFilter output: restrict Filter to these nodes (sorted, unique).
// nullopt: all nodes. Nodes left out are reported as "node(s) didn't satisfy
// plugin(s) [...]" (UnschedulableAndUnresolvable).
//
// `message`: with a rejection, its text when it names the pod's own objects
// (kube's PreFilter statuses carry free text, e.g. a ResourceClaim's name);
// empty: the status's reasons are rendered as usual.
struct PreFilterResult {
  std::optional<std::vector<NodeIndex>> nodes;
  std::string message;
};

// PreFilter: computes per-pod state once per cycle (may allocate, may walk
// every node). Returns Success, Skip (nothing to check for this pod: the
// plugin's Filter and PreFilter extensions are skipped this cycle),
// Unschedulable / UnschedulableAndUnresolvable (the pod fits no node; the
// status is the whole cycle's message), or Error. Idempotent for a given
// (pod, snapshot).
//
// PreFilter extensions: preemption evaluates "what if these pods were gone /
// added" by calling RemovePod/AddPod on a cloned CycleState after editing the
// snapshot row the same way. They must update only the state, return Success
// or Error, and be exact inverses of each other.
class PreFilterPlugin : public virtual Plugin {
 public:
  virtual Status PreFilter(const PodInfo& pod, const Snapshot& snapshot, CycleState& state,
                           PreFilterResult& result) const = 0;
  virtual bool HasPreFilterExtensions() const noexcept { return false; }
  virtual Status AddPod(CycleState& state, const PodInfo& pod, const PodInfo& added, NodeIndex node,
                        const Snapshot& snapshot) const;
  virtual Status RemovePod(CycleState& state, const PodInfo& pod, const PodInfo& removed,
                           NodeIndex node, const Snapshot& snapshot) const;
};

// Filter: decides feasibility of each node in `nodes` (ascending indices from
// one chunk of the snapshot) and writes out[i] for every i: Success,
// Unschedulable, UnschedulableAndUnresolvable, or Error (aborts the cycle).
// noexcept, allocation-free, reentrant; reads only ctx and the snapshot.
class FilterPlugin : public virtual Plugin {
 public:
  virtual void Filter(const CycleContext& ctx, std::span<const NodeIndex> nodes,
                      std::span<Status> out) const noexcept = 0;
};

// PreScore: per-pod preparation for Score over the feasible nodes. Returns
// Success, Skip (the plugin's Score is skipped this cycle) or Error. May allocate.
class PreScorePlugin : public virtual Plugin {
 public:
  virtual Status PreScore(const PodInfo& pod, const Snapshot& snapshot,
                          std::span<const NodeIndex> feasible, CycleState& state) const = 0;
};

// Score: writes a raw score for each node in `nodes` into out[i]. Success or
// Error. After all chunks, NormalizeScore (if HasNormalizeScore) rescales the
// whole feasible list in place; final scores must lie in [0, kMaxNodeScore]
// and are multiplied by the profile weight. noexcept, allocation-free,
// reentrant (Score); NormalizeScore runs once per cycle on one thread.
class ScorePlugin : public virtual Plugin {
 public:
  virtual Status Score(const CycleContext& ctx, std::span<const NodeIndex> nodes,
                       std::span<int64_t> out) const noexcept = 0;
  virtual bool HasNormalizeScore() const noexcept { return false; }
  virtual Status NormalizeScore(const CycleContext& ctx, std::span<const NodeIndex> nodes,
                                std::span<int64_t> scores) const noexcept;
  // True when a node's score depends on what other nodes hold (sums over a
  // topology domain taken in PreScore): a pod placed on one node then makes
  // other nodes' scores stale, so the scheduler must not reuse this pass for
  // the next pod of the same class.
  virtual bool ScoreDependsOnOtherNodes() const noexcept { return false; }
};

// Lets PostFilter plugins evaluate hypothetical node states (preemption).
class FrameworkHandle {
 public:
  virtual ~FrameworkHandle() = default;
  // Runs every non-skipped Filter plugin on one node, stopping at the first
  // non-success (which carries the plugin index).
  virtual Status RunFilterOnNode(const PodInfo& pod, const Snapshot& snapshot,
                                 const CycleState& state, NodeIndex node) const noexcept = 0;
  // PreFilter extensions of every non-skipped PreFilter plugin.
  virtual Status RunPreFilterExtensionAddPod(CycleState& state, const PodInfo& pod,
                                             const PodInfo& added, NodeIndex node,
                                             const Snapshot& snapshot) const = 0;
  virtual Status RunPreFilterExtensionRemovePod(CycleState& state, const PodInfo& pod,
                                                const PodInfo& removed, NodeIndex node,
                                                const Snapshot& snapshot) const = 0;
  // The profile index of a plugin of this framework (kNoPlugin if foreign).
  virtual PluginIndex IndexOf(const Plugin* plugin) const noexcept = 0;
  // kube-scheduler's FitError text: "0/<num_all_nodes> nodes are available:
  // <prefilter_message>." or the sorted reason histogram of `node_statuses`
  // (non-success entries), then " <post_filter_message>" if any.
  virtual std::string FormatFitError(size_t num_all_nodes, std::string_view prefilter_message,
                                     std::span<const Status> node_statuses,
                                     std::string_view post_filter_message,
                                     const Snapshot& snapshot) const = 0;
  // Reason strings of one status, joined with ", " (kube Status.Message()).
  virtual std::string StatusMessage(const Status& status, const Snapshot& snapshot) const = 0;
};

// Limits on preemption victims that the runtime knows and plugins do not
// (pod groups: preemptibility, disruption mode, minimums). The scheduler
// supplies one per cycle (scheduler/victim_rules.h); without one every
// lower-priority pod may be a victim on its own, as in kube.
// Thread-safety: const calls only, from the cycle's thread.
class VictimPolicy {
 public:
  virtual ~VictimPolicy() = default;
  // The part of `candidates` (lower-priority pods on one node) that may be
  // removed together: pods of non-preemptible groups and the required part
  // of semi-preemptible ones are left out.
  virtual std::vector<PodRef> Removable(std::span<const PodRef> candidates) const = 0;
  // Completes a chosen victim set so that no group is left below its
  // minimum: adds the rest of a group that goes whole (possibly on other
  // nodes). False when no completion is allowed (the set must not be used).
  virtual bool Complete(std::vector<PodRef>& victims) const = 0;
  // True for a pod this scheduler evicted in an earlier cycle whose deletion
  // it has not yet observed: it is leaving, as a pod terminating by
  // preemption is (a preemptor nominated to its node waits for it).
  virtual bool Leaving(const PodInfo& /*pod*/) const { return false; }
};

struct PostFilterContext {
  const PodInfo& pod;
  const Snapshot& snapshot;
  const CycleState& state;
  // Filter verdict per node, indexed by NodeIndex (size snapshot.num_nodes()).
  std::span<const Status> node_statuses;
  const FrameworkHandle& framework;
  RandomSource& random;
  std::chrono::system_clock::time_point now;
  const VictimPolicy* victim_policy = nullptr;  // null: no limits
};

// PostFilter output. Computing is separate from acting: victims are returned,
// never evicted here; the loop actuates (and for gangs, only once the whole
// gang has a placement).
struct PostFilterResult {
  // Success: `nominated_node` can host the pod once `victims` are gone.
  // Unschedulable: the plugin cannot help (see message). Error: internal.
  Status status = Status::Make(Code::kUnschedulable);
  std::optional<NodeIndex> nominated_node;
  // The pod's status.nominatedNodeName should be cleared.
  bool clear_nomination = false;
  std::vector<PodRef> victims;  // most important first
  int32_t num_pdb_violations = 0;
  // Appended to the FitError message ("preemption: 0/3 nodes are available: ...").
  std::string message;
};

// PostFilter: runs only when no node passed Filter. Returns a PostFilterResult
// as above. Must not mutate the snapshot or the state it is given (work on
// copies). May allocate.
class PostFilterPlugin : public virtual Plugin {
 public:
  virtual PostFilterResult PostFilter(const PostFilterContext& ctx) const = 0;
};

// The binding cycle (Reserve, Permit, PreBind, Bind, PostBind, Unreserve)
// runs on the scheduling loop with the pod's cycle's CycleState: what
// PreFilter and PreScore wrote for the pod (or for its pod class, when the
// pass was reused) can be read, and what these plugins write stays the pod's
// own (CycleState layered over the pass's state) until its bind is settled.
//
// Reserve/Unreserve: called after a node is chosen and the pod assumed.
// Reserve returns Success or Error/Unschedulable (then every Reserve plugin's
// Unreserve runs, in reverse order). Unreserve must be idempotent and must not
// fail; it also runs when the bind fails.
class ReservePlugin : public virtual Plugin {
 public:
  virtual Status Reserve(CycleState& state, const PodInfo& pod, std::string_view node_name) = 0;
  virtual void Unreserve(CycleState& state, const PodInfo& pod,
                         std::string_view node_name) noexcept = 0;
};

struct PermitDecision {
  Status status;  // Success, Wait (with timeout), Unschedulable or Error
  std::chrono::nanoseconds timeout{0};
};

// Permit: approves, rejects or delays (Wait) binding; gang plugins hold pods
// here until their group is complete. Loop thread only.
class PermitPlugin : public virtual Plugin {
 public:
  virtual PermitDecision Permit(CycleState& state, const PodInfo& pod,
                                std::string_view node_name) = 0;
};

// PreBind: work before binding (volumes, claims). Success, Skip, Error or
// Unschedulable; runs after Permit, on the loop (plugins do no I/O).
class PreBindPlugin : public virtual Plugin {
 public:
  virtual Status PreBind(CycleState& state, const PodInfo& pod, std::string_view node_name) = 0;
};

// What a Bind plugin may ask of the runtime. Plugins do no I/O: the
// scheduler's API writer sends the request on the plugin's behalf,
// asynchronously, and reports the outcome to the scheduling loop (a failed
// bind unreserves, forgets and requeues the pod; a successful one runs
// PostBind).
class BindingClient {
 public:
  virtual ~BindingClient() = default;
  // POST pods/<pod.name>/binding with target `node_name`, conditional on the
  // pod's uid (kube's DefaultBinder request).
  virtual void PostBinding(const PodInfo& pod, std::string_view node_name) = 0;
};

// Bind: returns Skip when the plugin does not handle this pod (the next Bind
// plugin decides), Success once it has asked `client` for the binding
// (exactly one PostBinding call; the outcome arrives later), or Error
// without asking (the pod is unreserved and requeued). Loop thread only.
class BindPlugin : public virtual Plugin {
 public:
  virtual Status Bind(CycleState& state, const PodInfo& pod, std::string_view node_name,
                      BindingClient& client) = 0;
};

// PostBind: informational, after a successful bind. Cannot fail.
class PostBindPlugin : public virtual Plugin {
 public:
  virtual void PostBind(CycleState& state, const PodInfo& pod,
                        std::string_view node_name) noexcept = 0;
};

// kube-scheduler's helper.DefaultNormalizeScore: scales scores to
// [0, max_priority] by the maximum (reverse: max_priority - scaled).
void DefaultNormalizeScore(int64_t max_priority, bool reverse, std::span<int64_t> scores) noexcept;

}  // namespace copse::plugins
