#include "scheduler/scheduler.h"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <iostream>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <thread>
#include <unordered_map>
#include <utility>

#include "core/snapshot.h"
#include "kube/client.h"
#include "kube/discovery.h"
#include "kube/informer.h"
#include "kube/namespace.h"
#include "kube/node.h"
#include "kube/pod.h"
#include "kube/pod_disruption_budget.h"
#include "kube/pod_group.h"
#include "kube/served_informer.h"
#include "kube/topology.h"
#include "plugins/defaults/defaults.h"
#include "plugins/framework/framework.h"
#include "plugins/framework/registry.h"
#include "queue/scheduling_queue.h"
#include "scheduler/api_writer.h"
#include "scheduler/cache.h"
#include "scheduler/config/metrics.h"
#include "scheduler/convert.h"
#include "scheduler/gang_preemption.h"
#include "scheduler/gangs.h"
#include "scheduler/placement.h"
#include "scheduler/queue_events.h"
#include "scheduler/topology_placement.h"

namespace copse::scheduler {
namespace {

using kube::Node;
using kube::Pod;

PodId IdOf(const PodInfo& pod) { return {pod.namespace_name, pod.name, pod.uid}; }

}  // namespace

struct Scheduler::Impl {
  std::shared_ptr<kube::Client> client;
  SchedulerOptions options;
  std::shared_ptr<const Clock> clock;

  ResourceNames resource_names;
  plugins::Registry registry;
  std::vector<std::unique_ptr<plugins::Framework>> frameworks;
  std::unique_ptr<queue::SchedulingQueue> queue;
  std::unique_ptr<Cache> cache;
  // The writer's own I/O thread (SchedulerOptions::write_thread); declared
  // before the writer, so it outlives the writer's final Drain.
  std::unique_ptr<kube::IoThread> write_io;
  std::unique_ptr<ApiWriter> writer;
  std::unique_ptr<Snapshot> snapshot;
  plugins::Workspace workspace;
  std::unique_ptr<plugins::Mt19937Random> random;
  std::unique_ptr<tbb::task_arena> arena;
  size_t next_start_index = 0;

  // Informers on what the server serves (kube/served_informer.h): the
  // version is chosen from discovery at Start.
  std::unique_ptr<kube::TypedServedInformer<Pod>> pod_informer;
  std::unique_ptr<kube::TypedServedInformer<Node>> node_informer;
  std::unique_ptr<kube::TypedServedInformer<kube::Namespace>> namespace_informer;
  std::unique_ptr<kube::TypedServedInformer<kube::PodDisruptionBudget>> pdb_informer;

  std::thread loop;
  std::atomic<bool> stopping{false};
  std::atomic<bool> started{false};

  // Bind completions, handled on the loop thread.
  struct Completion {
    PodPtr pod;  // the assumed pod (node_name set)
    queue::UnitKey key;
    int64_t cycle = 0;
    size_t profile = 0;
    bool group_member = false;
    int retries = 0;
    int verifications = 0;  // GETs made to learn whether a failed bind took effect
    Status status;
  };
  static constexpr int kMaxGroupBindRetries = 3;
  static constexpr int kMaxBindVerifications = 5;

  // A bind whose outcome is unknown: the request timed out or its connection
  // failed (the server may have applied it), or 409 (the pod is already
  // bound, possibly by this very request's earlier attempt).
  static bool BindOutcomeUnknown(const Status& status) {
    if (status.ok()) return false;
    const ErrorCode code = status.error().code;
    return code == ErrorCode::kTimeout || code == ErrorCode::kUnavailable ||
           code == ErrorCode::kConflict;
  }
  GangTracker gangs;
  std::unique_ptr<kube::TypedServedInformer<kube::PodGroup>> pod_group_informer;
  std::unique_ptr<kube::TypedServedInformer<kube::CopsePodGroup>> copse_pod_group_informer;
  std::map<std::string, std::string> last_group_status;  // unit key -> last message (status_mu)
  // Groups already Scheduled whose bound counts changed since the last flush
  // (status_mu), and when the loop last wrote them.
  std::map<std::string, queue::UnitKey> dirty_group_status;  // by ToString()
  std::chrono::steady_clock::time_point last_group_status_flush{};
  static constexpr std::chrono::milliseconds kGroupStatusFlushInterval{100};
  // Topology-aware placement (issue 5): the copse Topologies known, domain
  // trees kept between cycles, bound members per subgroup (copse PodGroup
  // status), why a group object was rejected, events already recorded.
  TopologyCatalog topologies;
  TopologyWorkspace topology_workspace;
  std::unique_ptr<kube::TypedServedInformer<kube::Topology>> topology_informer;
  std::map<std::string, std::map<std::string, std::set<std::string>>> sub_group_bound;  // (status_mu)
  std::map<std::string, std::string> invalid_groups;  // unit key -> why (status_mu)
  std::set<std::string> recorded_group_events;        // (status_mu)
  std::mutex completions_mu;
  std::vector<Completion> completions;
  std::vector<Completion> completions_scratch;

  // Last PodScheduled message written per pod uid (avoids rewriting it every retry).
  std::mutex status_mu;
  std::unordered_map<std::string, std::string> last_status;
  // Gang members waiting for their group: pod uid -> when its report is due,
  // and the same reports in due order (the delay is constant, so arrival
  // order is due order) so a flush only looks at the due ones. A queue entry
  // whose uid is no longer in the map with that time was cancelled.
  struct WaitingReport {
    std::string uid;
    queue::UnitKey key;
    Clock::TimePoint due;
  };
  std::unordered_map<std::string, Clock::TimePoint> waiting_reports;
  std::deque<WaitingReport> waiting_report_queue;

  // Pod-class reuse (step 4 of the cycle).
  PodClassReuse batch;
  // The pass of the last single-class gang, and how many snapshot rows its
  // placement changed: valid for the next gang while the snapshot sync
  // copies no more rows than those.
  PodClassReuse gang_batch;
  size_t gang_batch_rows = 0;

  mutable std::mutex stats_mu;
  SchedulerStats stats;
  Clock::TimePoint last_unschedulable_flush{};
  Clock::TimePoint last_metrics_update{};
  Clock::TimePoint last_group_resync{};

  // ---- helpers ----
  std::optional<size_t> ProfileIndex(std::string_view scheduler_name) const {
    for (size_t i = 0; i < frameworks.size(); ++i) {
      if (frameworks[i]->scheduler_name() == scheduler_name) return i;
    }
    return std::nullopt;
  }
  bool Responsible(const PodInfo& pod) const { return ProfileIndex(pod.scheduler_name).has_value(); }

  void Count(uint64_t SchedulerStats::*field, uint64_t n = 1) {
    std::lock_guard lock(stats_mu);
    stats.*field += n;
  }

  void ForgetStatus(const std::string& uid) {
    std::lock_guard lock(status_mu);
    last_status.erase(uid);
    waiting_reports.erase(uid);
  }

  // Why the members of a group that is not ready wait: an object that exists
  // but failed validation says why, naming the field.
  std::string WaitingMessage(const GangTracker::Decision& d) {
    if (d.readiness == GangTracker::Readiness::kMissingSpec) {
      std::lock_guard lock(status_mu);
      if (auto it = invalid_groups.find(d.key.ToString()); it != invalid_groups.end()) {
        return it->second;
      }
    }
    return d.message;
  }

  // Members waiting for their group are told so only if they still wait
  // after options.waiting_report_delay (FlushWaitingReports).
  void ReportWaiting(const GangTracker::Decision& d) {
    if (options.waiting_report_delay <= Clock::Duration::zero()) {
      const std::string message = WaitingMessage(d);
      for (const PodPtr& pod : d.waiting) ReportFailure(*pod, "Unschedulable", message, std::nullopt);
      return;
    }
    const Clock::TimePoint due = clock->Now() + options.waiting_report_delay;
    std::lock_guard lock(status_mu);
    for (const PodPtr& pod : d.waiting) {
      if (waiting_reports.try_emplace(pod->uid, due).second) {
        waiting_report_queue.push_back(WaitingReport{pod->uid, d.key, due});
      }
    }
  }

  void FlushWaitingReports() {
    std::map<std::string, queue::UnitKey> due_groups;  // each group once
    {
      const Clock::TimePoint now = clock->Now();
      std::lock_guard lock(status_mu);
      while (!waiting_report_queue.empty() && waiting_report_queue.front().due <= now) {
        WaitingReport report = std::move(waiting_report_queue.front());
        waiting_report_queue.pop_front();
        auto it = waiting_reports.find(report.uid);
        if (it == waiting_reports.end() || it->second != report.due) continue;  // cancelled
        waiting_reports.erase(it);
        due_groups.try_emplace(report.key.ToString(), std::move(report.key));
      }
      if (due_groups.empty()) return;
    }
    for (const auto& [name, key] : due_groups) {
      // Still not ready: every member still waiting is told why, now (the
      // ones whose own delay has not passed yet too: one write each anyway).
      const GangTracker::Decision d = gangs.Evaluate(key);
      if (d.readiness != GangTracker::Readiness::kMissingSpec &&
          d.readiness != GangTracker::Readiness::kWaitingForMembers) {
        continue;
      }
      const std::string message = WaitingMessage(d);
      {
        std::lock_guard lock(status_mu);
        for (const PodPtr& pod : d.waiting) waiting_reports.erase(pod->uid);
      }
      for (const PodPtr& pod : d.waiting) ReportFailure(*pod, "Unschedulable", message, std::nullopt);
    }
  }

  // Writes PodScheduled=False (and the nomination) unless the same message
  // was already written; records a FailedScheduling event when it changes.
  void ReportFailure(const PodInfo& pod, std::string_view reason, const std::string& message,
                     std::optional<std::string> nominated) {
    {
      std::lock_guard lock(status_mu);
      std::string& last = last_status[pod.uid];
      const std::string key = std::string(reason) + "\n" + message;
      if (last == key && !nominated.has_value()) return;
      last = key;
    }
    PodConditionUpdate condition;
    condition.reason = std::string(reason);
    condition.message = message;
    writer->PatchPodStatus(IdOf(pod), condition, std::move(nominated));
    writer->RecordPodEvent(IdOf(pod), "Warning", "FailedScheduling", message);
  }

  // ---- informer handlers (informer strands) ----
  void OnPodAdd(const std::shared_ptr<const Pod>& pod) {
    if (IsTerminal(*pod)) return;
    Result<PodPtr> info = ToPodInfo(*pod, resource_names);
    if (!info.ok()) {
      std::cerr << "copse: pod " << pod->meta.namespace_ << "/" << pod->meta.name
                << " ignored: " << info.error().message << "\n";
      return;
    }
    if (!(*info)->node_name.empty()) {
      cache->AddOrUpdatePod(*info);
      queue->AssignedPodAdded(*info);
      if (IsMember(**info)) GroupMemberBound(**info);
    } else if (IsMember(**info)) {
      // Every member goes to the tracker, whatever its scheduler: a group
      // whose members name different schedulers is rejected as a whole.
      PendingMember(*info);
    } else if (Responsible(**info)) {
      // A gated pod carries PodScheduled=False/SchedulingGated from its
      // creation (the API server sets it); nothing to write.
      queue->Add(*info);
    }
  }

  static bool IsMember(const PodInfo& pod) {
    return pod.group_kind != PodInfo::GroupKind::kNone && !pod.pod_group.empty();
  }

  // A pending member of a group: gated members are not schedulable yet.
  void PendingMember(const PodPtr& pod) {
    if (!pod->scheduling_gates.empty()) {
      ApplyDecision(gangs.Remove(*pod));
      return;
    }
    ApplyDecision(gangs.UpsertPending(pod));
  }

  void OnPodUpdate(const std::shared_ptr<const Pod>& old_pod,
                   const std::shared_ptr<const Pod>& new_pod) {
    if (IsTerminal(*new_pod)) {
      OnPodDelete(new_pod);
      return;
    }
    Result<PodPtr> info = ToPodInfo(*new_pod, resource_names);
    if (!info.ok()) return;
    const bool was_assigned = !old_pod->spec.node_name.empty();
    if (!(*info)->node_name.empty()) {
      if (!was_assigned) {
        // Bound (by us or another scheduler): leaves the queue.
        queue->Delete(**info);
        ForgetStatus((*info)->uid);
        cache->AddOrUpdatePod(*info);
        queue->AssignedPodAdded(*info);
        if (IsMember(**info)) GroupMemberBound(**info);
        return;
      }
      Result<PodPtr> old_info = ToPodInfo(*old_pod, resource_names);
      cache->AddOrUpdatePod(*info);
      if (old_info.ok() && ((*old_info)->labels != (*info)->labels ||
                            (*old_info)->requests.Get(kResourceIdCpu) !=
                                (*info)->requests.Get(kResourceIdCpu) ||
                            (*old_info)->requests.Get(kResourceIdMemory) !=
                                (*info)->requests.Get(kResourceIdMemory))) {
        queue::ClusterEvent event{queue::EventResource::kAssignedPod,
                                  (*old_info)->labels != (*info)->labels
                                      ? queue::kActionUpdatePodLabel
                                      : queue::kActionUpdatePodScaleDown};
        queue->AssignedPodUpdated(*old_info, *info, event);
      }
      return;
    }
    if (IsMember(**info)) {
      PendingMember(*info);
      return;
    }
    if (!Responsible(**info)) return;
    Result<PodPtr> old_info = ToPodInfo(*old_pod, resource_names);
    queue->Update(old_info.ok() ? *old_info : nullptr, *info);
  }

  void OnPodDelete(const std::shared_ptr<const Pod>& pod) {
    ForgetStatus(pod->meta.uid);
    Result<PodPtr> info = ToPodInfo(*pod, resource_names);
    if (cache->NodeOf(pod->meta.uid).has_value()) {
      cache->RemovePod(pod->meta.uid);
      if (info.ok()) queue->AssignedPodDeleted(*info);
    }
    if (info.ok()) queue->Delete(**info);
    if (info.ok() && IsMember(**info)) GroupMemberGone(**info);
  }

  // ---- gangs ----
  // Every member is assumed (its bind is in flight): the group needs no cycle.
  bool AllBinding(const queue::PodList& members) const {
    return std::all_of(members.begin(), members.end(),
                       [&](const PodPtr& pod) { return cache->IsAssumed(pod->uid); });
  }

  void ApplyDecision(const GangTracker::Decision& d) {
    switch (d.readiness) {
      case GangTracker::Readiness::kEmpty:
        queue->DeleteGroup(d.key);
        break;
      case GangTracker::Readiness::kMissingSpec:
      case GangTracker::Readiness::kWaitingForMembers: {
        queue->DeleteGroup(d.key);
        ReportWaiting(d);
        // Decisions are applied outside the tracker's lock: the group may have
        // become ready (its object arrived on another informer) between this
        // decision and the DeleteGroup above. Re-check so it is not dropped.
        if (GangTracker::Decision now = gangs.Evaluate(d.key);
            now.readiness == GangTracker::Readiness::kReady) {
          queue->UpsertGroup(now.key, now.members);
        }
        break;
      }
      case GangTracker::Readiness::kReady: {
        // Members whose binds are in flight need no cycle: when the group was
        // just placed, each confirmed bind re-evaluates it with the others
        // still assumed, and queueing it then only costs a pop that finds
        // nothing to place. A bind that fails forgets its pod and
        // re-evaluates the group, which queues it again.
        if (!AllBinding(d.members)) queue->UpsertGroup(d.key, d.members);
        break;
      }
    }
  }

  template <typename T>
  void OnGroupObject(PodInfo::GroupKind kind, const std::shared_ptr<const T>& object) {
    const kube::ObjectMeta& meta = object->meta;
    const queue::UnitKey unit = GroupUnitKey(kind, meta.namespace_, meta.name);
    const std::string key = unit.ToString();
    // A write of the group's status or metadata (copse's own PodGroupScheduled
    // condition and finalizer: two per gang) leaves metadata.generation as it
    // is, and the spec with it: only the deletion protection may change.
    if (meta.generation > 0 && gangs.HasSpecFrom(unit, meta.uid, meta.generation)) {
      ReconcileProtection(kind, object);
      return;
    }
    Result<GangSpec> spec = object->ToGangSpec();
    if (!spec.ok()) {
      std::cerr << "copse: " << GroupKindName(kind) << " " << object->meta.Key()
                << " ignored: " << spec.error().message << "\n";
      {
        std::lock_guard lock(status_mu);
        invalid_groups[key] = std::string(GroupKindName(kind)) + " " + meta.Key() +
                              " is invalid: " + spec.error().message;
      }
      RecordGroupEvent(kind, meta.namespace_, meta.name, meta.uid, meta.generation, "Warning",
                       "InvalidSpec", spec.error().message);
      ApplyDecision(gangs.RemoveSpec(kind, object->meta.namespace_, object->meta.name));
      return;
    }
    {
      std::lock_guard lock(status_mu);
      invalid_groups.erase(key);
    }
    // Spec 002's consistency check: legal, but worth a Warning event.
    const std::vector<TopologyDefinition> known = topologies.Definitions();
    for (const std::string& warning : GangSpecWarnings(*spec, &known)) {
      RecordGroupEvent(kind, meta.namespace_, meta.name, meta.uid, meta.generation, "Warning",
                       "InconsistentSpec", warning);
    }
    ApplyDecision(gangs.SetSpec(kind, std::move(spec).value()));
    ReconcileProtection(kind, object);
  }

  // Deletion protection follows the members: a group with bound members
  // keeps copse's finalizer, a group whose members are all gone loses it.
  // Called on every add/update of the group object, so a finalizer patch
  // that lost a conflict (the group's status was written meanwhile) is
  // retried with the newer version, and once after the pods are known at
  // start-up (members that vanished while copse was down). Before the pods
  // are synced nothing is known to be gone.
  template <typename T>
  void ReconcileProtection(PodInfo::GroupKind kind, const std::shared_ptr<const T>& object) {
    if (!object) return;
    if (!pod_informer || !pod_informer->HasSynced()) return;
    const GangTracker::GroupInfo info =
        gangs.Info(GroupUnitKey(kind, object->meta.namespace_, object->meta.name));
    const kube::ResourceRef& resource = kind == PodInfo::GroupKind::kCopsePodGroup
                                            ? kube::resources::kCopsePodGroups
                                            : kube::resources::kPodGroups;
    if (info.pending == 0 && info.bound == 0) {
      SetProtection(object, resource, false);
    } else if (info.bound != 0 && !object->meta.deletion_timestamp.has_value()) {
      // A terminating object takes no new finalizers.
      SetProtection(object, resource, true);
    }
  }

  void ReconcileGroupProtection() {
    for (const auto& g : pod_group_informer->List()) {
      ReconcileProtection(PodInfo::GroupKind::kWorkloadPodGroup, g);
    }
    for (const auto& g : copse_pod_group_informer->List()) {
      ReconcileProtection(PodInfo::GroupKind::kCopsePodGroup, g);
    }
  }

  // An event on a gang object, once per (object, generation, reason, message).
  void RecordGroupEvent(PodInfo::GroupKind kind, const std::string& ns, const std::string& name,
                        const std::string& uid, int64_t generation, std::string_view type,
                        std::string_view reason, const std::string& message) {
    {
      std::lock_guard lock(status_mu);
      if (recorded_group_events.size() > 100'000) recorded_group_events.clear();
      const std::string stamp = uid + "\n" + std::to_string(generation) + "\n" +
                                std::string(reason) + "\n" + message;
      if (!recorded_group_events.insert(stamp).second) return;
    }
    const std::string_view api_version = kind == PodInfo::GroupKind::kCopsePodGroup
                                             ? kube::CopsePodGroup::kApiVersion
                                             : kube::PodGroup::kApiVersion;
    writer->RecordEvent(std::string(api_version), "PodGroup", PodId{ns, name, uid}, type, reason,
                        message);
  }

  // Topology objects feed the catalog; groups waiting on one are retried.
  void OnTopology(const std::shared_ptr<const kube::Topology>& object) {
    if (Status s = topologies.Upsert(*object); !s.ok()) {
      std::cerr << "copse: Topology " << object->meta.name << " ignored: " << s.error().message
                << "\n";
      // Events about cluster-scoped objects live in "default", as kube's do.
      writer->RecordEvent(std::string(kube::Topology::kApiVersion), "Topology",
                          PodId{"default", object->meta.name, object->meta.uid}, "Warning",
                          "InvalidSpec", s.error().message);
    }
    queue->MoveAllToActiveOrBackoffQueue(queue::kEventForceActivate, {}, {});
  }

  // Errors of `spec` against the copse Topologies known ("" when none); the
  // rest of the spec was validated when the object was read.
  std::string TopologyErrors(const GangSpec& spec) const {
    bool names_levels = !spec.topology_constraint.empty();
    for (const SubGroupSpec& group : spec.sub_groups) {
      names_levels = names_levels || !group.topology_constraint.empty();
    }
    if (!names_levels) return {};
    const std::vector<TopologyDefinition> known = topologies.Definitions();
    GangValidationOptions validation;
    validation.topologies = &known;
    Status valid = ValidateGangSpec(spec, validation);
    return valid.ok() ? std::string() : valid.error().message;
  }

  void OnNodeAdd(const std::shared_ptr<const Node>& node) {
    Status applied = Status::Ok();
    cache->UpsertNode(node->meta.name, [&](NodeInfo& info) {
      applied = ApplyNode(*node, resource_names, info);
    });
    if (!applied.ok()) {
      std::cerr << "copse: node " << node->meta.name << ": " << applied.error().message << "\n";
    }
    queue->MoveAllToActiveOrBackoffQueue({queue::EventResource::kNode, queue::kActionAdd}, {},
                                         queue::EventObject(node));
  }

  void OnNodeUpdate(const std::shared_ptr<const Node>& old_node,
                    const std::shared_ptr<const Node>& new_node) {
    cache->UpsertNode(new_node->meta.name, [&](NodeInfo& info) {
      (void)ApplyNode(*new_node, resource_names, info);
    });
    queue::ActionType action = NodeUpdateActions(*old_node, *new_node);
    if (action.Empty()) return;
    queue->MoveAllToActiveOrBackoffQueue({queue::EventResource::kNode, action},
                                         queue::EventObject(old_node),
                                         queue::EventObject(new_node));
  }

  void OnNodeDelete(const std::shared_ptr<const Node>& node) {
    cache->RemoveNode(node->meta.name);
    queue->MoveAllToActiveOrBackoffQueue({queue::EventResource::kNode, queue::kActionDelete},
                                         queue::EventObject(node), {});
  }

  // ---- the loop ----
  void Loop() {
    while (!stopping.load()) {
      DrainCompletions();
      RunTimers();
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
      std::optional<queue::PoppedUnit> unit = queue->PopWait(deadline);
      if (!unit.has_value()) continue;
      const auto start = std::chrono::steady_clock::now();
      if (unit->kind() == queue::UnitKind::kPodGroup) {
        const auto group_start = std::chrono::steady_clock::now();
        const SchedulerStats before = CurrentStats();
        ScheduleGroupUnit(*unit);
        if (options.metrics != nullptr) {
          const SchedulerStats after = CurrentStats();
          options.metrics->ObservePodGroupAttempt(
              after.scheduled > before.scheduled       ? config::AttemptResult::kScheduled
              : after.unschedulable > before.unschedulable ? config::AttemptResult::kUnschedulable
                                                           : config::AttemptResult::kError,
              std::chrono::steady_clock::now() - group_start);
        }
      } else if (unit->kind() == queue::UnitKind::kPod) {
        const std::string scheduler_name = unit->pod().scheduler_name;
        const SchedulerStats before = CurrentStats();
        SchedulePodUnit(*unit);
        if (options.metrics != nullptr) {
          const SchedulerStats after = CurrentStats();
          config::AttemptResult r = after.scheduled > before.scheduled
                                        ? config::AttemptResult::kScheduled
                                    : after.unschedulable > before.unschedulable
                                        ? config::AttemptResult::kUnschedulable
                                        : config::AttemptResult::kError;
          if (after.attempts > before.attempts) {
            options.metrics->ObserveScheduleAttempt(scheduler_name, r,
                                                    std::chrono::steady_clock::now() - start);
          }
        }
      }
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::lock_guard lock(stats_mu);
      stats.scheduling_seconds += seconds;
    }
    DrainCompletions();
    last_group_status_flush = {};
    FlushGroupStatuses();
    FlushWaitingReports();
  }

  SchedulerStats CurrentStats() {
    std::lock_guard lock(stats_mu);
    return stats;
  }

  void RunTimers() {
    queue->FlushBackoffQCompleted();
    const Clock::TimePoint now = clock->Now();
    if (options.metrics != nullptr && now - last_metrics_update >= std::chrono::milliseconds(500)) {
      last_metrics_update = now;
      const queue::PendingCounts pending = queue->PendingPods();
      options.metrics->SetPendingPods(static_cast<int64_t>(pending.active),
                                      static_cast<int64_t>(pending.backoff),
                                      static_cast<int64_t>(pending.unschedulable),
                                      static_cast<int64_t>(pending.gated));
      options.metrics->SetBindsInFlight(static_cast<int64_t>(writer->stats().in_flight));
    }
    if (now - last_unschedulable_flush >= options.unschedulable_flush_interval) {
      last_unschedulable_flush = now;
      queue->FlushUnschedulablePodsLeftover();
    }
    for (const PodPtr& expired : cache->CleanupExpiredAssumedPods()) {
      queue->AssignedPodDeleted(expired);
    }
    FlushGroupStatuses();
    FlushWaitingReports();
    if (now - last_group_resync >= std::chrono::seconds(1)) {
      last_group_resync = now;
      ResyncReadyGroups();
    }
  }

  // Level-triggered safety net: a group the tracker finds ready whose unit is
  // nowhere in the queue (neither queued nor in flight) and whose members are
  // not all binding is queued again. Decisions are applied outside the
  // tracker's lock, so interleaved informer events can leave a ready group
  // unqueued; this bounds how long that lasts.
  void ResyncReadyGroups() {
    for (const GangTracker::Decision& d : gangs.ReadyGroups()) {
      if (queue->Find(d.key).has_value() || AllBinding(d.members)) continue;
      queue->UpsertGroup(d.key, d.members);
    }
  }

  std::function<void(size_t, const std::function<void(size_t)>&)> ParallelFor() {
    if (!arena) return {};
    return [this](size_t count, const std::function<void(size_t)>& body) {
      arena->execute([&] {
        tbb::parallel_for(tbb::blocked_range<size_t>(0, count, 1),
                          [&](const tbb::blocked_range<size_t>& r) {
                            for (size_t i = r.begin(); i != r.end(); ++i) body(i);
                          });
      });
    };
  }

  // Adds pods nominated to nodes (priority >= the pod's, not the pod itself)
  // to the snapshot rows; the next UpdateSnapshot restores those rows.
  bool AddNominatedPods(const PodInfo& pod) {
    auto nominated = queue->NominatedPods();
    bool added = false;
    for (const auto& [node_name, other] : nominated) {
      if (other->uid == pod.uid || other->priority < pod.priority) continue;
      std::optional<NodeIndex> node = snapshot->FindNode(node_name);
      if (!node.has_value()) continue;
      snapshot->AddPod(*node, other);
      added = true;
    }
    return added;
  }

  void SchedulePodUnit(const queue::PoppedUnit& unit) {
    // A single pod's cycle changes rows the last gang's pass does not know.
    InvalidateGangBatch();
    PodPtr pod = unit.pods.front();
    const queue::UnitKey key = unit.key();
    const std::optional<size_t> profile = ProfileIndex(pod->scheduler_name);
    if (!profile.has_value() || pod->terminating || cache->NodeOf(pod->uid).has_value()) {
      queue->Done(key);
      return;
    }
    plugins::Framework& fw = *frameworks[*profile];
    Count(&SchedulerStats::attempts);

    const size_t num_nodes_before = snapshot->num_nodes();
    const size_t copied = cache->UpdateSnapshot(*snapshot);
    const bool nominations = AddNominatedPods(*pod);

    std::optional<NodeIndex> chosen;
    // 4. Pod class reuse.
    if (options.batch_pod_classes && !nominations && copied <= 1 &&
        snapshot->num_nodes() == num_nodes_before &&
        batch.Matches(*pod, *profile, snapshot->num_nodes(), cache->PodsWithAffinity() > 0)) {
      chosen = batch.Place(fw, *pod, *snapshot, *random);
      if (chosen.has_value()) Count(&SchedulerStats::batched);
    }
    if (!chosen.has_value()) {
      InvalidateBatches();
      plugins::CycleState state;
      plugins::ScheduleOptions so;
      so.chunk_size = options.filter_chunk_size;
      so.start_index = next_start_index;
      so.keep_raw_scores = options.batch_pod_classes;
      so.parallel_for = ParallelFor();
      plugins::ScheduleResult result = fw.SchedulePod(*pod, *snapshot, state, workspace, *random,
                                                      so, std::chrono::system_clock::now());
      if (snapshot->num_nodes() > 0) {
        next_start_index = (next_start_index + result.evaluated_nodes) % snapshot->num_nodes();
      }
      if (result.code != plugins::Code::kSuccess) {
        HandleFailure(unit, fw, *pod, result);
        return;
      }
      chosen = result.node;
      if (options.batch_pod_classes && !nominations) {
        batch.Remember(*pod, *profile, snapshot->num_nodes(), std::move(state), workspace, *chosen);
      }
    }
    AssumeAndBind(unit, key, *profile, fw, pod, snapshot->node_name(*chosen));
  }

  void InvalidateGangBatch() {
    gang_batch.Invalidate();
    gang_batch_rows = 0;
  }

  void InvalidateBatches() {
    batch.Invalidate();
    InvalidateGangBatch();
  }

  void AssumeAndBind(const queue::PoppedUnit& unit, const queue::UnitKey& key, size_t profile,
                     plugins::Framework& fw, const PodPtr& pod, const std::string& node,
                     bool group_member = false) {
    auto assumed_info = std::make_shared<PodInfo>(*pod);
    assumed_info->node_name = node;
    PodPtr assumed = assumed_info;
    if (Status s = cache->AssumePod(assumed); !s.ok()) {
      InvalidateBatches();  // the kept passes counted this pod on `node`
      queue->Done(key);
      return;
    }
    queue->DeleteNominatedPodIfExists(*pod);
    plugins::CycleState state;
    plugins::Status reserve = fw.RunReserve(state, *assumed, node);
    if (!reserve.IsSuccess()) {
      cache->ForgetPod(assumed->uid);
      InvalidateBatches();
      HandleBindingCycleFailure(key, unit.cycle, *pod,
                                "running Reserve plugin: " + fw.StatusMessage(reserve, *snapshot));
      return;
    }
    plugins::PermitDecision permit = fw.RunPermit(state, *assumed, node);
    if (!permit.status.IsSuccess()) {
      fw.RunUnreserve(state, *assumed, node);
      cache->ForgetPod(assumed->uid);
      InvalidateBatches();
      const std::string why = permit.status.code == plugins::Code::kWait
                                  ? "Permit returned Wait: copse places groups in the Workload "
                                    "Scheduling Cycle instead of waiting pods"
                                  : fw.StatusMessage(permit.status, *snapshot);
      HandleBindingCycleFailure(key, unit.cycle, *pod, "running Permit plugin: " + why);
      return;
    }
    plugins::Status prebind = fw.RunPreBind(state, *assumed, node);
    if (!prebind.IsSuccess()) {
      fw.RunUnreserve(state, *assumed, node);
      cache->ForgetPod(assumed->uid);
      InvalidateBatches();
      HandleBindingCycleFailure(key, unit.cycle, *pod,
                                "running PreBind plugin: " + fw.StatusMessage(prebind, *snapshot));
      return;
    }
    Count(&SchedulerStats::scheduled);
    Completion completion;
    completion.pod = assumed;
    completion.key = key;
    completion.cycle = unit.cycle;
    completion.profile = profile;
    completion.group_member = group_member;
    writer->Bind(IdOf(*assumed), node, [this, completion](Status s) mutable {
      completion.status = std::move(s);
      std::lock_guard lock(completions_mu);
      completions.push_back(std::move(completion));
    });
  }

  void DrainCompletions() {
    {
      std::lock_guard lock(completions_mu);
      completions_scratch.swap(completions);
    }
    for (Completion& c : completions_scratch) {
      const PodInfo& pod = *c.pod;
      if (c.status.ok()) {
        cache->FinishBinding(pod.uid);
        if (!c.group_member) queue->Done(c.key);
        queue->DeleteNominatedPodIfExists(pod);  // a bound member holds its node itself
        ForgetStatus(pod.uid);
        Count(&SchedulerStats::bound);
        writer->RecordPodEvent(IdOf(pod), "Normal", "Scheduled",
                               "Successfully assigned " + pod.FullName() + " to " + pod.node_name);
      } else if (BindOutcomeUnknown(c.status) && c.verifications < kMaxBindVerifications) {
        // Ask the server before forgetting the pod: forgetting a pod that is
        // in fact bound frees its node's capacity for others until the watch
        // catches up (overcommit). Until the answer, the pod stays assumed.
        Count(&SchedulerStats::binds_verified);
        Completion check = c;
        writer->GetPodNodeName(IdOf(pod), [this, check](Result<std::string> node) mutable {
          if (!node.ok() && node.error().code != ErrorCode::kNotFound) {
            ++check.verifications;  // still unknown: ask again, up to the limit
          } else {
            check.verifications = kMaxBindVerifications;
            if (!node.ok()) {
              check.status = node.error();  // the pod is gone
            } else if (*node == check.pod->node_name) {
              check.status = Status::Ok();  // the bind took effect
            } else {
              // Not bound: an ordinary failure (a bound member may be retried
              // on its node). Bound elsewhere: a conflict, never retried.
              check.status = MakeError(
                  node->empty() ? ErrorCode::kInternal : ErrorCode::kConflict,
                  "binding did not take effect (" + check.status.error().message + ")" +
                      (node->empty() ? std::string() : "; the pod is on " + *node));
            }
          }
          std::lock_guard lock(completions_mu);
          completions.push_back(std::move(check));
        });
        continue;
      } else {
        Count(&SchedulerStats::bind_failures);
        if (options.metrics != nullptr) options.metrics->IncBindFailures();
        const ErrorCode code = c.status.error().code;
        if (c.group_member && c.retries < kMaxGroupBindRetries && code != ErrorCode::kNotFound &&
            code != ErrorCode::kConflict && cache->HasNode(pod.node_name) &&
            cache->IsAssumed(pod.uid)) {
          // The member stays assumed on its node, which still holds it: bind
          // there again rather than re-placing the group.
          Completion retry = c;
          ++retry.retries;
          retry.verifications = 0;
          writer->Bind(IdOf(pod), pod.node_name, [this, retry](Status s) mutable {
            retry.status = std::move(s);
            std::lock_guard lock(completions_mu);
            completions.push_back(std::move(retry));
          });
          continue;
        }
        cache->ForgetPod(pod.uid);
        InvalidateBatches();
        plugins::CycleState state;
        frameworks[c.profile]->RunUnreserve(state, pod, pod.node_name);
        // The node's capacity is free again for others.
        queue->MoveAllToActiveOrBackoffQueue(queue::kEventAssignedPodDelete,
                                             queue::EventObject(c.pod), {});
        if (c.group_member) {
          // The group is placed again, constrained by the members already bound.
          ReportFailure(pod, "SchedulerError", "Binding rejected: " + c.status.error().message,
                        std::nullopt);
          ApplyDecision(gangs.Evaluate(c.key));
        } else if (c.status.error().code == ErrorCode::kNotFound) {
          queue->Done(c.key);  // the pod is gone
        } else {
          HandleBindingCycleFailure(c.key, c.cycle, pod,
                                    "Binding rejected: " + c.status.error().message);
        }
      }
    }
    completions_scratch.clear();
  }

  // ---- Workload Scheduling Cycle ----

  // PodGroupScheduled on the group object (KEP rule: once True, stays True).
  void WriteGroupStatus(const queue::UnitKey& key, bool scheduled, std::string_view reason,
                        const std::string& message) {
    const GangTracker::GroupInfo info = gangs.Info(key);
    if (!info.spec) return;
    // KEP-4671: once PodGroupScheduled is True it stays True. The informer's
    // copy may not show our True write yet, so the tracker's flag decides.
    if (!scheduled && info.scheduled_reported) return;
    {
      std::lock_guard lock(status_mu);
      std::string& last = last_group_status[key.ToString()];
      const std::string stamp = std::string(reason) + "\n" + message;
      if (last == stamp) return;
      last = stamp;
    }
    const std::string& ns = info.spec->namespace_;
    const std::string& name = info.spec->name;
    const std::string now = FormatRfc3339(std::chrono::system_clock::now());
    if (info.kind == PodInfo::GroupKind::kWorkloadPodGroup && pod_group_informer) {
      auto object = pod_group_informer->Get(ns, name);
      kube::PodGroupStatus status = object ? object->status : kube::PodGroupStatus{};
      if (!kube::SetPodGroupScheduled(status.conditions, scheduled, std::string(reason), message,
                                      now, info.spec->generation)) {
        return;
      }
      writer->MergePatch(kube::resources::kPodGroups, ns, name, kube::PodGroup::StatusPatch(status),
                         "status");
    } else if (info.kind == PodInfo::GroupKind::kCopsePodGroup && copse_pod_group_informer) {
      auto object = copse_pod_group_informer->Get(ns, name);
      kube::CopsePodGroupStatus status = object ? object->status : kube::CopsePodGroupStatus{};
      const bool changed = kube::SetPodGroupScheduled(status.conditions, scheduled,
                                                      std::string(reason), message, now,
                                                      info.spec->generation);
      const bool is_scheduled =
          kube::FindCondition(status.conditions, kube::kPodGroupScheduled) != nullptr &&
          kube::FindCondition(status.conditions, kube::kPodGroupScheduled)->status == "True";
      const std::string phase = std::string(is_scheduled ? kube::kPodGroupPhaseScheduled
                                                         : kube::kPodGroupPhaseUnschedulable);
      const int32_t bound = static_cast<int32_t>(info.bound);
      // Scheduled members per subgroup: the bound pods naming it or a subgroup below it.
      std::vector<kube::CopseSubGroupStatus> sub_groups;
      {
        std::lock_guard lock(status_mu);
        const auto& by_name = sub_group_bound[key.ToString()];
        for (const SubGroupSpec& group : info.spec->sub_groups) {
          kube::CopseSubGroupStatus entry;
          entry.name = group.name;
          for (size_t below : info.spec->Subtree(group.name)) {
            auto it = by_name.find(info.spec->sub_groups[below].name);
            if (it != by_name.end()) entry.scheduled += static_cast<int32_t>(it->second.size());
          }
          for (const kube::CopseSubGroupStatus& old : status.sub_groups) {
            if (old.name == group.name) entry.ready = old.ready;
          }
          sub_groups.push_back(std::move(entry));
        }
      }
      if (!changed && status.phase == phase && status.scheduled == bound &&
          status.sub_groups == sub_groups) {
        return;
      }
      status.phase = phase;
      status.scheduled = bound;
      status.sub_groups = std::move(sub_groups);
      status.observed_generation = info.spec->generation;
      writer->MergePatch(kube::resources::kCopsePodGroups, ns, name,
                         kube::CopsePodGroup::StatusPatch(status), "status");
    }
  }

  // Deletion protection: a PodGroup copse placed members of keeps the
  // finalizer until every member pod is terminal or gone.
  template <typename T>
  void SetProtection(const std::shared_ptr<const T>& object, const kube::ResourceRef& resource,
                     bool protect) {
    if (!object) return;
    std::vector<std::string> finalizers = object->meta.finalizers;
    const auto it = std::find(finalizers.begin(), finalizers.end(),
                              kube::kPodGroupProtectionFinalizer);
    if (protect == (it != finalizers.end())) return;
    if (protect) {
      finalizers.emplace_back(kube::kPodGroupProtectionFinalizer);
    } else {
      finalizers.erase(it);
    }
    nlohmann::json patch = {{"metadata",
                             {{"finalizers", finalizers},
                              {"resourceVersion", object->meta.resource_version}}}};
    writer->MergePatch(resource, object->meta.namespace_, object->meta.name, patch.dump(), "");
  }

  void UpdateProtection(const queue::UnitKey& key, bool protect) {
    const GangTracker::GroupInfo info = gangs.Info(key);
    if (!info.spec) return;
    if (info.kind == PodInfo::GroupKind::kWorkloadPodGroup && pod_group_informer) {
      SetProtection(pod_group_informer->Get(info.spec->namespace_, info.spec->name),
                    kube::resources::kPodGroups, protect);
    } else if (info.kind == PodInfo::GroupKind::kCopsePodGroup && copse_pod_group_informer) {
      SetProtection(copse_pod_group_informer->Get(info.spec->namespace_, info.spec->name),
                    kube::resources::kCopsePodGroups, protect);
    }
  }

  void GroupMemberGone(const PodInfo& pod) {
    {
      std::lock_guard lock(status_mu);
      const std::string key = GroupUnitKey(pod.group_kind, pod.namespace_name, pod.pod_group).ToString();
      if (auto it = sub_group_bound.find(key); it != sub_group_bound.end()) {
        it->second[pod.sub_group].erase(pod.uid);
      }
    }
    const GangTracker::Decision d = gangs.Remove(pod);
    ApplyDecision(d);
    const GangTracker::GroupInfo info = gangs.Info(d.key);
    if (info.pending == 0 && info.bound == 0) UpdateProtection(d.key, false);
  }

  void GroupMemberBound(const PodInfo& pod) {
    const queue::UnitKey key = GroupUnitKey(pod.group_kind, pod.namespace_name, pod.pod_group);
    {
      std::lock_guard lock(status_mu);
      sub_group_bound[key.ToString()][pod.sub_group].insert(pod.uid);
    }
    ApplyDecision(gangs.MarkBound(pod));
    const GangTracker::GroupInfo info = gangs.Info(key);
    if (!info.spec) return;
    const size_t required = static_cast<size_t>(
        std::max(1, info.spec->IsGang() ? info.spec->RequiredPods(kRootGroup) : 1));
    if (info.bound >= required && gangs.MarkScheduledReported(key)) {
      WriteScheduledStatus(key);
    } else if (info.scheduled_reported) {
      // Members bound after the group was reported Scheduled only move its
      // counts: coalesced, written by the loop at most every
      // kGroupStatusFlushInterval (a 256-pod gang is one or two writes, not
      // one per member, each of which the informer would decode again).
      std::lock_guard lock(status_mu);
      dirty_group_status.emplace(key.ToString(), key);
    }
  }

  void WriteScheduledStatus(const queue::UnitKey& key) {
    const GangTracker::GroupInfo info = gangs.Info(key);
    if (!info.spec) return;
    const size_t required = static_cast<size_t>(
        std::max(1, info.spec->IsGang() ? info.spec->RequiredPods(kRootGroup) : 1));
    WriteGroupStatus(key, true, kube::kReasonScheduled,
                     std::to_string(info.bound) + " member pods scheduled (minimum " +
                         std::to_string(required) + ")");
  }

  // Loop thread: writes the coalesced Scheduled counts.
  void FlushGroupStatuses() {
    const auto now = std::chrono::steady_clock::now();
    std::map<std::string, queue::UnitKey> keys;
    {
      std::lock_guard lock(status_mu);
      if (dirty_group_status.empty() || now - last_group_status_flush < kGroupStatusFlushInterval) {
        return;
      }
      last_group_status_flush = now;
      keys.swap(dirty_group_status);
    }
    for (const auto& [text, key] : keys) WriteScheduledStatus(key);
  }

  // Adds pods nominated elsewhere (priority >= `priority`, not members).
  bool AddNominatedPodsExcept(const std::set<std::string>& members, int32_t priority) {
    bool added = false;
    for (const auto& [node_name, other] : queue->NominatedPods()) {
      if (members.contains(other->uid) || other->priority < priority) continue;
      // A nominated pod already assumed or bound is counted on its node by
      // the cache; adding it again would hide free room from this cycle.
      if (cache->NodeOf(other->uid).has_value()) continue;
      std::optional<NodeIndex> node = snapshot->FindNode(node_name);
      if (!node.has_value()) continue;
      snapshot->AddPod(*node, other);
      added = true;
    }
    return added;
  }

  std::optional<VictimGroup> VictimGroupOf(const PodInfo& pod) {
    if (!IsMember(pod)) return std::nullopt;
    const queue::UnitKey key = GroupUnitKey(pod.group_kind, pod.namespace_name, pod.pod_group);
    VictimGroup g;
    g.key = key.ToString();
    if (std::shared_ptr<const GangSpec> spec = gangs.Spec(key)) {
      g.all_or_nothing = spec->disruption_mode == DisruptionMode::kPodGroup ||
                         spec->preemptibility == Preemptibility::kNonPreemptible;
    }
    return g;
  }

  void ScheduleGroupUnit(const queue::PoppedUnit& unit) {
    const queue::UnitKey key = unit.key();
    const GangTracker::GroupInfo info = gangs.Info(key);
    if (!info.spec) {
      queue->Done(key);
      return;
    }
    const GangSpec& spec = *info.spec;
    const std::string group = spec.namespace_ + "/" + spec.name;
    std::vector<PodPtr> members;
    std::set<std::string> member_uids;
    std::set<std::string> names;
    size_t in_flight = 0;
    int32_t priority = std::numeric_limits<int32_t>::max();
    for (const PodPtr& pod : unit.pods) {
      if (pod->terminating) continue;
      if (cache->NodeOf(pod->uid).has_value()) {
        ++in_flight;
        continue;
      }
      members.push_back(pod);
      member_uids.insert(pod->uid);
      names.insert(pod->scheduler_name);
      priority = std::min(priority, pod->priority);
    }
    if (members.empty()) {
      queue->Done(key);
      return;
    }
    const bool ours = std::any_of(names.begin(), names.end(),
                                  [&](const std::string& n) { return ProfileIndex(n).has_value(); });
    if (!ours) {
      queue->Done(key);  // another scheduler's group
      return;
    }
    Count(&SchedulerStats::attempts);
    if (names.size() > 1) {
      std::string list;
      for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
      const std::string message = "pod group " + group +
                                  ": members name different schedulers (" + list +
                                  "); every member of a group must use the same schedulerName";
      Count(&SchedulerStats::unschedulable);
      queue->AddUnschedulableIfNotPresent(key, unit.cycle, queue::Rejection{});
      for (const PodPtr& pod : members) {
        if (ProfileIndex(pod->scheduler_name)) ReportFailure(*pod, "Unschedulable", message, std::nullopt);
      }
      WriteGroupStatus(key, false, kube::kReasonUnschedulable, message);
      return;
    }
    const size_t profile = *ProfileIndex(*names.begin());
    plugins::Framework& fw = *frameworks[profile];
    batch.Invalidate();  // the pod-class pass of single pods; gang_batch is checked below
    if (const std::string invalid = TopologyErrors(spec); !invalid.empty()) {
      // E.g. a Topology or level that does not exist (yet): retried after backoff.
      const std::string message = "pod group " + group + " is invalid: " + invalid;
      Count(&SchedulerStats::unschedulable);
      queue->AddUnschedulableIfNotPresent(key, unit.cycle, queue::Rejection{});
      for (const PodPtr& pod : members) ReportFailure(*pod, "Unschedulable", message, std::nullopt);
      WriteGroupStatus(key, false, kube::kReasonUnschedulable, message);
      RecordGroupEvent(info.kind, spec.namespace_, spec.name, spec.uid, spec.generation, "Warning",
                       "InvalidSpec", invalid);
      return;
    }

    const size_t already = info.bound + in_flight;
    const size_t required_total =
        spec.IsGang() ? static_cast<size_t>(std::max(0, spec.RequiredPods(kRootGroup))) : 0;
    const size_t required = required_total > already ? required_total - already : 0;
    const size_t num_nodes_before = snapshot->num_nodes();
    const size_t copied = cache->UpdateSnapshot(*snapshot);
    const bool nominated = AddNominatedPodsExcept(member_uids, priority);
    const bool topology_aware = NeedsTopologyPlacement(spec);
    // The previous gang's pass still holds when the sync only rewrote the
    // rows that gang's placement changed (with the same pods).
    const bool reuse_gang_pass = options.batch_pod_classes && !topology_aware && !nominated &&
                                 snapshot->num_nodes() == num_nodes_before &&
                                 copied <= gang_batch_rows;
    if (!reuse_gang_pass) gang_batch.Invalidate();
    gang_batch_rows = 0;
    GangPlacementOptions po;
    po.required = required;
    po.place_all = true;
    po.chunk_size = options.filter_chunk_size;
    po.parallel_for = ParallelFor();
    po.start_index = next_start_index;
    // Topology constraints or subgroups: domains and the subgroup tree decide
    // (scheduler/topology_placement.h); members already bound pin the domains.
    TopologyPlacementOptions to;
    to.placement = po;
    // Nominated pods added to the snapshot are dropped by the next sync: a
    // pass made with them is not kept.
    if (options.batch_pod_classes && !topology_aware && !nominated) {
      po.reuse = &gang_batch;
      po.labels_matter = cache->PodsWithAffinity() > 0;
    }
    to.find_bound_members = already > 0;
    to.workspace = &topology_workspace;
    GangPlacement placement =
        topology_aware
            ? PlaceGangWithTopology(fw, *snapshot, members, spec, topologies, to, *random, workspace)
                  .placement
            : PlaceGang(fw, *snapshot, members, po, *random, workspace);
    po.reuse = nullptr;  // preemption dry runs place on edited snapshots: never kept
    Count(&SchedulerStats::batched, placement.reused);
    if (snapshot->num_nodes() > 0) {
      next_start_index = (next_start_index + placement.evaluated_nodes) % snapshot->num_nodes();
    }
    queue::Rejection rejection;
    rejection.unschedulable = queue::PluginSet::FromMask(placement.unschedulable_plugins);
    if (placement.error || !placement.satisfied || placement.placed.empty()) {
      gang_batch.Invalidate();  // the next sync drops this attempt's snapshot edits
    }

    if (placement.error) {
      Count(&SchedulerStats::errors);
      queue->AddErroredIfNotPresent(key, unit.cycle);
      for (const PodPtr& pod : members) ReportFailure(*pod, "SchedulerError", placement.failure, std::nullopt);
      WriteGroupStatus(key, false, kube::kReasonSchedulerError, placement.failure);
      return;
    }
    if (placement.satisfied && !placement.placed.empty()) {
      // All-or-nothing holds: at least `required` members have a node. The
      // snapshot rows edited by the placement are rewritten by the next sync;
      // the cache now takes the members as assumed pods.
      gangs.SetPendingVictims(key, {});
      UpdateProtection(key, true);
      std::set<NodeIndex> rows;
      for (const MemberPlacement& m : placement.placed) rows.insert(m.node);
      for (const MemberPlacement& m : placement.placed) {
        AssumeAndBind(unit, key, profile, fw, m.pod, snapshot->node_name(m.node),
                      /*group_member=*/true);
      }
      // (A member whose Reserve/Permit failed invalidated the pass.)
      if (!placement.unplaced.empty()) {
        gang_batch.Invalidate();
      } else {
        gang_batch_rows = rows.size();
      }
      if (placement.unplaced.empty()) {
        queue->Done(key);
      } else {
        queue->AddUnschedulableIfNotPresent(key, unit.cycle, rejection);
        for (const PodPtr& pod : placement.unplaced) {
          ReportFailure(*pod, "Unschedulable", placement.failure, std::nullopt);
        }
      }
      return;
    }

    // Failure: nothing is assumed; nominations of members are cleared unless a
    // preemption below nominates them again.
    Count(&SchedulerStats::unschedulable);
    const size_t wanted = spec.IsGang() ? required_total : members.size() + already;
    std::string message = "pod group " + group + ": " +
                          std::to_string(placement.placed.size() + already) + "/" +
                          std::to_string(wanted) + " pods fit";
    if (!placement.failure.empty()) message += "; " + placement.failure;
    std::map<std::string, std::string> nominations;  // uid -> node
    const bool may_preempt =
        spec.IsGang() && std::all_of(members.begin(), members.end(), [](const PodPtr& p) {
          return p->preemption_policy != PreemptionPolicy::kNever;
        });
    if (may_preempt) {
      size_t waiting = 0;
      for (const std::string& uid : gangs.PendingVictims(key)) {
        waiting += cache->NodeOf(uid).has_value() ? 1 : 0;
      }
      if (waiting > 0) {
        // The nominated placement is still being made room for: no new preemption.
        message += " preemption: waiting for " + std::to_string(waiting) +
                   " preempted pod(s) to terminate";
        for (const PodPtr& pod : members) {
          if (auto node = queue->NominatedNodeOf(pod->uid)) nominations[pod->uid] = *node;
        }
      } else {
        cache->UpdateSnapshot(*snapshot);  // drop the failed placement's edits
        // Room nominated to other pods of at least this priority (other gangs'
        // pending preemptions) is not free: without them the dry run finds
        // that room, evicts nobody, and two gangs nominated onto the same
        // nodes wait for each other forever (as kube's preemption, which runs
        // its filters with the nominated pods added).
        AddNominatedPodsExcept(member_uids, priority);
        {
          std::lock_guard lock(stats_mu);
          ++stats.preemption_attempts;
        }
        if (options.metrics != nullptr) options.metrics->IncPreemptionAttempts();
        GangPlaceFn place;  // victims inside the domains the gang can be packed into
        if (topology_aware) {
          place = [&](Snapshot& scratch, std::span<const PodPtr> group_members) {
            return PlaceGangWithTopology(fw, scratch, group_members, spec, topologies, to, *random,
                                         workspace)
                .placement;
          };
        }
        GangPreemption gp = SelectGangVictims(
            fw, *snapshot, members, po,
            [this](const PodInfo& pod) { return VictimGroupOf(pod); }, *random, workspace, place);
        if (gp.found && !gp.victims.empty()) {
          std::set<std::string> victim_uids;
          const std::string why = fw.scheduler_name() + ": preempting to make room for pod group " + group;
          for (const PodRef& victim : gp.victims) {
            victim_uids.insert(victim->uid);
            writer->PreemptVictim(IdOf(*victim), why, [](Status) {});
            writer->RecordPodEvent(IdOf(*victim), "Normal", "Preempted",
                                   "Preempted by pod group " + group);
          }
          {
            std::lock_guard lock(stats_mu);
            stats.preemption_victims += gp.victims.size();
          }
          if (options.metrics != nullptr) options.metrics->ObservePreemptionVictims(gp.victims.size());
          gangs.SetPendingVictims(key, std::move(victim_uids));
          for (const MemberPlacement& m : gp.placement) {
            const std::string node = snapshot->node_name(m.node);
            auto nominated = std::make_shared<PodInfo>(*m.pod);
            nominated->nominated_node_name = node;
            queue->AddNominatedPod(nominated, node);
            nominations[m.pod->uid] = node;
          }
          message += " preemption: evicting " + std::to_string(gp.victims.size()) +
                     " lower-priority pod(s) to place the group";
        } else if (!gp.found) {
          message += " " + gp.message;
        }
      }
    }
    for (const PodPtr& pod : members) {
      if (!nominations.contains(pod->uid)) queue->DeleteNominatedPodIfExists(*pod);
    }
    queue->AddUnschedulableIfNotPresent(key, unit.cycle, rejection);
    for (const PodPtr& pod : members) {
      std::optional<std::string> nominated;
      if (auto it = nominations.find(pod->uid); it != nominations.end()) nominated = it->second;
      else if (!pod->nominated_node_name.empty()) nominated = std::string();
      ReportFailure(*pod, "Unschedulable", message, nominated);
    }
    WriteGroupStatus(key, false, kube::kReasonUnschedulable, message);
  }

  void HandleBindingCycleFailure(const queue::UnitKey& key, int64_t cycle, const PodInfo& pod,
                                 const std::string& message) {
    Count(&SchedulerStats::errors);
    queue->AddErroredIfNotPresent(key, cycle);
    ReportFailure(pod, "SchedulerError", message, std::nullopt);
  }

  void HandleFailure(const queue::PoppedUnit& unit, const plugins::Framework& /*fw*/,
                     const PodInfo& pod, const plugins::ScheduleResult& result) {
    const queue::UnitKey key = unit.key();
    if (result.code == plugins::Code::kError) {
      Count(&SchedulerStats::errors);
      queue->AddErroredIfNotPresent(key, unit.cycle);
      ReportFailure(pod, "SchedulerError", result.message, std::nullopt);
      return;
    }
    Count(&SchedulerStats::unschedulable);
    std::optional<std::string> nominated;
    if (result.post_filter.has_value()) {
      const plugins::PostFilterResult& pf = *result.post_filter;
      if (options.metrics != nullptr) options.metrics->IncPreemptionAttempts();
      if (pf.status.IsSuccess() && pf.nominated_node.has_value()) {
        nominated = snapshot->node_name(*pf.nominated_node);
        ActuatePreemption(pod, *nominated, pf.victims);
      } else if (pf.clear_nomination && !pod.nominated_node_name.empty()) {
        nominated = std::string();
        queue->DeleteNominatedPodIfExists(pod);
      }
    }
    queue::Rejection rejection;
    rejection.unschedulable = queue::PluginSet::FromMask(result.unschedulable_plugins);
    queue->AddUnschedulableIfNotPresent(key, unit.cycle, rejection);
    ReportFailure(pod, "Unschedulable", result.message, std::move(nominated));
  }

  // Actuation, separate from computing the victims (the gang cycle delays it).
  void ActuatePreemption(const PodInfo& preemptor, const std::string& node,
                         const std::vector<PodRef>& victims) {
    {
      std::lock_guard lock(stats_mu);
      ++stats.preemption_attempts;
      stats.preemption_victims += victims.size();
    }
    if (options.metrics != nullptr) options.metrics->ObservePreemptionVictims(victims.size());
    auto nominated = std::make_shared<PodInfo>(preemptor);
    nominated->nominated_node_name = node;
    queue->AddNominatedPod(nominated, node);
    const std::string message = std::string(frameworks.front()->scheduler_name()) +
                                ": preempting to accommodate a higher priority pod";
    for (const PodRef& victim : victims) {
      writer->PreemptVictim(IdOf(*victim), message, [](Status) {});
      writer->RecordPodEvent(IdOf(*victim), "Normal", "Preempted",
                             "Preempted by pod " + preemptor.uid + " on node " + node);
    }
  }
};

Scheduler::Scheduler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Scheduler::~Scheduler() { Stop(); }

Result<std::unique_ptr<Scheduler>> Scheduler::Create(std::shared_ptr<kube::Client> client,
                                                     SchedulerOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->client = client;
  impl->clock = options.clock ? options.clock : std::make_shared<RealClock>();
  if (options.profiles.empty()) options.profiles.push_back(plugins::DefaultProfile());
  if (Status s = plugins::RegisterDefaultPlugins(impl->registry); !s.ok()) return s.error();
  std::vector<queue::QueueProfile> queue_profiles;
  for (size_t i = 0; i < options.profiles.size(); ++i) {
    Result<std::unique_ptr<plugins::Framework>> fw =
        plugins::Framework::Create(impl->registry, options.profiles[i]);
    if (!fw.ok()) {
      return MakeError(fw.error().code, "profiles[" + std::to_string(i) + "] (" +
                                            options.profiles[i].scheduler_name +
                                            "): " + fw.error().message);
    }
    queue_profiles.push_back(BuildQueueProfile(**fw));
    impl->frameworks.push_back(std::move(fw).value());
  }
  queue::QueueOptions qo;
  qo.pod_initial_backoff = options.pod_initial_backoff;
  qo.pod_max_backoff = options.pod_max_backoff;
  qo.pod_max_in_unschedulable_pods = options.pod_max_in_unschedulable;
  qo.pod_group_max_backoff = options.pod_group_max_backoff;
  impl->queue = std::make_unique<queue::SchedulingQueue>(*impl->clock, qo, std::move(queue_profiles));
  impl->cache = std::make_unique<Cache>(*impl->clock, options.assumed_pod_ttl);
  ApiWriterOptions wo;
  wo.component = impl->frameworks.front()->scheduler_name();
  wo.record_events = options.record_events;
  std::shared_ptr<kube::Client> write_client = client;
  if (options.write_thread) {
    impl->write_io = std::make_unique<kube::IoThread>(1);
    auto created = kube::Client::Create(client->config(), impl->write_io->executor());
    if (!created.ok()) return created.error();
    write_client = std::move(created).value();
  }
  impl->writer = std::make_unique<ApiWriter>(std::move(write_client), wo);
  impl->snapshot = std::make_unique<Snapshot>(impl->resource_names);
  const uint64_t seed = options.seed != 0 ? options.seed : std::random_device{}();
  impl->random = std::make_unique<plugins::Mt19937Random>(seed);
  const int threads = options.parallelism > 0
                          ? options.parallelism
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (threads > 1) impl->arena = std::make_unique<tbb::task_arena>(threads);
  impl->options = std::move(options);

  Impl* self = impl.get();
  // Each informer names its candidates in preference order and what copse
  // does without them; Start picks what the server serves.
  auto served = [&](std::vector<kube::ResourceRef> candidates, std::string without,
                    bool wait_until_served, kube::Decoder decoder = {}) {
    kube::ServedInformerOptions o;
    o.candidates = std::move(candidates);
    o.without = std::move(without);
    o.wait_until_served = wait_until_served;
    o.informer.decoder = std::move(decoder);
    return o;
  };
  // The scheduler reads pods' and nodes' typed fields only (writes are patches).
  impl->pod_informer = std::make_unique<kube::TypedServedInformer<Pod>>(
      client, served({kube::resources::kPods}, "copse cannot schedule", true,
                     kube::TypedDecoderWithoutRaw<Pod>()));
  impl->pod_informer->AddEventHandler([self](const auto& p) { self->OnPodAdd(p); },
                                      [self](const auto& a, const auto& b) { self->OnPodUpdate(a, b); },
                                      [self](const auto& p) { self->OnPodDelete(p); });
  impl->node_informer = std::make_unique<kube::TypedServedInformer<Node>>(
      client, served({kube::resources::kNodes}, "copse cannot schedule", true,
                     kube::TypedDecoderWithoutRaw<Node>()));
  impl->node_informer->AddEventHandler([self](const auto& n) { self->OnNodeAdd(n); },
                                       [self](const auto& a, const auto& b) { self->OnNodeUpdate(a, b); },
                                       [self](const auto& n) { self->OnNodeDelete(n); });
  impl->namespace_informer = std::make_unique<kube::TypedServedInformer<kube::Namespace>>(
      client, served({kube::resources::kNamespaces}, "copse cannot schedule", true));
  impl->namespace_informer->AddEventHandler(
      [self](const auto& ns) { self->cache->SetNamespaceLabels(ns->meta.name, ns->meta.labels); },
      [self](const auto&, const auto& ns) {
        self->cache->SetNamespaceLabels(ns->meta.name, ns->meta.labels);
        self->queue->MoveAllToActiveOrBackoffQueue(
            {queue::EventResource::kNamespace, queue::kActionUpdate}, {}, {});
      },
      [self](const auto& ns) { self->cache->RemoveNamespace(ns->meta.name); });
  // v1.20 serves PodDisruptionBudgets only as policy/v1beta1 (policy/v1 is 1.21+).
  impl->pdb_informer = std::make_unique<kube::TypedServedInformer<kube::PodDisruptionBudget>>(
      client, served({kube::resources::kPodDisruptionBudgets,
                      kube::resources::kPodDisruptionBudgetsV1beta1},
                     "preemption chooses victims without regard to PodDisruptionBudgets", false));
  impl->pdb_informer->AddEventHandler(
      [self](const auto& p) { self->cache->SetPodDisruptionBudget(p->meta.Key(), ToPdbInfo(*p)); },
      [self](const auto&, const auto& p) {
        self->cache->SetPodDisruptionBudget(p->meta.Key(), ToPdbInfo(*p));
      },
      [self](const auto& p) { self->cache->RemovePodDisruptionBudget(p->meta.Key()); });
  impl->pod_group_informer = std::make_unique<kube::TypedServedInformer<kube::PodGroup>>(
      client, served({kube::resources::kPodGroups},
                     "KEP-4671 Workload/PodGroup gangs are not available; copse PodGroups "
                     "(scheduling.copse.dev) are",
                     false));
  impl->pod_group_informer->AddEventHandler(
      [self](const auto& g) { self->OnGroupObject(PodInfo::GroupKind::kWorkloadPodGroup, g); },
      [self](const auto&, const auto& g) {
        self->OnGroupObject(PodInfo::GroupKind::kWorkloadPodGroup, g);
      },
      [self](const auto& g) {
        self->ApplyDecision(self->gangs.RemoveSpec(PodInfo::GroupKind::kWorkloadPodGroup,
                                                   g->meta.namespace_, g->meta.name));
      });
  // copse's CRDs may be installed after copse starts: their informers keep
  // trying (wait_until_served) and pick them up.
  impl->copse_pod_group_informer = std::make_unique<kube::TypedServedInformer<kube::CopsePodGroup>>(
      client, served({kube::resources::kCopsePodGroups},
                     "copse PodGroup gangs wait until its CRD is installed (deploy/crds)", true));
  impl->topology_informer = std::make_unique<kube::TypedServedInformer<kube::Topology>>(
      client,
      served({kube::resources::kTopologies},
             "gangs get no topology constraints until its CRD is installed (deploy/crds)", true));
  impl->topology_informer->AddEventHandler(
      [self](const auto& t) { self->OnTopology(t); },
      [self](const auto&, const auto& t) { self->OnTopology(t); },
      [self](const auto& t) { self->topologies.Remove(t->meta.name); });
  impl->copse_pod_group_informer->AddEventHandler(
      [self](const auto& g) { self->OnGroupObject(PodInfo::GroupKind::kCopsePodGroup, g); },
      [self](const auto&, const auto& g) {
        self->OnGroupObject(PodInfo::GroupKind::kCopsePodGroup, g);
      },
      [self](const auto& g) {
        self->ApplyDecision(self->gangs.RemoveSpec(PodInfo::GroupKind::kCopsePodGroup,
                                                   g->meta.namespace_, g->meta.name));
      });
  return std::unique_ptr<Scheduler>(new Scheduler(std::move(impl)));
}

void Scheduler::Start() {
  Impl& impl = *impl_;
  if (impl.started.exchange(true)) return;
  // What the server serves decides the informers' versions. Without an
  // answer the newest versions are tried, and a 404 reads discovery again.
  auto discovery = kube::Discovery::ReadBlocking(
      impl.client, {"", "policy", "scheduling.k8s.io", "scheduling.copse.dev"},
      std::chrono::seconds(10));
  if (!discovery.ok()) {
    std::cerr << "copse: reading the API server's discovery failed ("
              << discovery.error().ToString() << "); assuming the newest API versions" << std::endl;
  }
  const kube::Discovery* served = discovery.ok() ? &discovery.value() : nullptr;
  impl.node_informer->Start(served);
  impl.namespace_informer->Start(served);
  impl.pdb_informer->Start(served);
  // Gang objects first, so that members find their group when pods arrive.
  // Their informers are not waited for: a cluster without the CRDs still
  // schedules ordinary pods.
  impl.pod_group_informer->Start(served);
  impl.copse_pod_group_informer->Start(served);
  impl.topology_informer->Start(served);
  // One 2 s budget for the three (a cluster without the CRDs waits it once).
  const auto group_sync_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  auto sync_left = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
        std::max(group_sync_deadline - std::chrono::steady_clock::now(),
                 std::chrono::steady_clock::duration::zero()));
  };
  impl.pod_group_informer->WaitForSync(sync_left());
  impl.copse_pod_group_informer->WaitForSync(sync_left());
  impl.topology_informer->WaitForSync(sync_left());
  impl.pod_informer->Start(served);
  impl.loop = std::thread([this, &impl] {
    // Schedule only once the cluster state is known (kube waits for cache
    // sync). Informers still unsynced after 10 s are named with their last
    // error, then every minute.
    auto next_report = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!impl.stopping.load()) {
      if (impl.node_informer->WaitForSync(std::chrono::milliseconds(50)) &&
          impl.pod_informer->WaitForSync(std::chrono::milliseconds(50)) &&
          impl.namespace_informer->WaitForSync(std::chrono::milliseconds(50)) &&
          impl.pdb_informer->WaitForSync(std::chrono::milliseconds(50))) {
        break;
      }
      if (std::chrono::steady_clock::now() >= next_report) {
        for (const std::string& line : UnsyncedInformers()) {
          std::cerr << "copse: informer not synced: " << line << std::endl;
        }
        next_report = std::chrono::steady_clock::now() + std::chrono::minutes(1);
      }
    }
    if (!impl.stopping.load()) impl.ReconcileGroupProtection();
    impl.Loop();
  });
}

bool Scheduler::HasSynced() const {
  const Impl& impl = *impl_;
  return impl.node_informer->HasSynced() && impl.pod_informer->HasSynced() &&
         impl.namespace_informer->HasSynced() && impl.pdb_informer->HasSynced();
}

std::vector<std::string> Scheduler::UnsyncedInformers() const {
  const Impl& impl = *impl_;
  std::vector<std::string> out;
  auto check = [&](const auto& informer) {
    if (!informer->HasSynced()) out.push_back(informer->Describe());
  };
  check(impl.node_informer);
  check(impl.pod_informer);
  check(impl.namespace_informer);
  check(impl.pdb_informer);
  return out;
}

bool Scheduler::WaitForSync(std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const Impl& impl = *impl_;
  auto left = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                 std::chrono::steady_clock::now());
  };
  return impl.node_informer->WaitForSync(left()) && impl.pod_informer->WaitForSync(left()) &&
         impl.namespace_informer->WaitForSync(left()) && impl.pdb_informer->WaitForSync(left());
}

void Scheduler::Stop() {
  Impl& impl = *impl_;
  if (!impl.started.load() || impl.stopping.exchange(true)) return;
  impl.queue->Close();
  if (impl.loop.joinable()) impl.loop.join();
  impl.pod_informer->Stop();
  impl.node_informer->Stop();
  impl.namespace_informer->Stop();
  impl.pdb_informer->Stop();
  impl.pod_group_informer->Stop();
  impl.copse_pod_group_informer->Stop();
  impl.topology_informer->Stop();
  impl.writer->Drain(std::chrono::milliseconds(5000));
}

SchedulerStats Scheduler::stats() const {
  std::lock_guard lock(impl_->stats_mu);
  return impl_->stats;
}

const Cache& Scheduler::cache() const { return *impl_->cache; }
queue::SchedulingQueue& Scheduler::queue() { return *impl_->queue; }

std::vector<std::string> Scheduler::scheduler_names() const {
  std::vector<std::string> names;
  for (const auto& fw : impl_->frameworks) names.push_back(fw->scheduler_name());
  return names;
}

}  // namespace copse::scheduler
