#include "scheduler/scheduler.h"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <unordered_map>
#include <utility>

#include "core/snapshot.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "kube/namespace.h"
#include "kube/node.h"
#include "kube/pod.h"
#include "kube/pod_disruption_budget.h"
#include "plugins/defaults/defaults.h"
#include "plugins/framework/framework.h"
#include "plugins/framework/registry.h"
#include "queue/scheduling_queue.h"
#include "scheduler/api_writer.h"
#include "scheduler/cache.h"
#include "scheduler/convert.h"
#include "scheduler/config/metrics.h"
#include "scheduler/queue_events.h"

namespace copse::scheduler {
namespace {

using PodPtr = std::shared_ptr<const PodInfo>;
using kube::Node;
using kube::Pod;

PodId IdOf(const PodInfo& pod) { return {pod.namespace_name, pod.name, pod.uid}; }

// Pods whose scores on other nodes do not depend on where their own class
// lands (no pod (anti-)affinity, no spread constraints, no default spreading).
bool Batchable(const PodInfo& pod) {
  return !pod.has_pod_affinity && pod.topology_spread_constraints.empty() &&
         !pod.default_spread_selector.has_value() && pod.host_ports.empty();
}

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
  std::unique_ptr<ApiWriter> writer;
  std::unique_ptr<Snapshot> snapshot;
  plugins::Workspace workspace;
  std::unique_ptr<plugins::Mt19937Random> random;
  std::unique_ptr<tbb::task_arena> arena;
  size_t next_start_index = 0;

  std::unique_ptr<kube::TypedInformer<Pod>> pod_informer;
  std::unique_ptr<kube::TypedInformer<Node>> node_informer;
  std::unique_ptr<kube::TypedInformer<kube::Namespace>> namespace_informer;
  std::unique_ptr<kube::TypedInformer<kube::PodDisruptionBudget>> pdb_informer;

  std::thread loop;
  std::atomic<bool> stopping{false};
  std::atomic<bool> started{false};

  // Bind completions, handled on the loop thread.
  struct Completion {
    PodPtr pod;  // the assumed pod (node_name set)
    queue::UnitKey key;
    int64_t cycle = 0;
    size_t profile = 0;
    Status status;
  };
  std::mutex completions_mu;
  std::vector<Completion> completions;
  std::vector<Completion> completions_scratch;

  // Last PodScheduled message written per pod uid (avoids rewriting it every retry).
  std::mutex status_mu;
  std::unordered_map<std::string, std::string> last_status;

  // Pod-class reuse (step 4 of the cycle).
  struct Batch {
    bool valid = false;
    uint64_t signature = 0;
    int32_t priority = 0;
    size_t profile = 0;
    size_t num_nodes = 0;
    plugins::CycleState state;
    std::vector<NodeIndex> feasible;
    std::vector<int64_t> raw;  // [plugin * feasible.size() + i]
    size_t last_position = 0;
  } batch;
  std::vector<int64_t> batch_scores;
  std::vector<int64_t> batch_totals;

  mutable std::mutex stats_mu;
  SchedulerStats stats;
  Clock::TimePoint last_unschedulable_flush{};
  Clock::TimePoint last_metrics_update{};

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
    } else if (Responsible(**info)) {
      if (queue->Add(*info) == queue::QueueLocation::kGated) ReportGated(**info);
    }
  }

  void ReportGated(const PodInfo& pod) {
    if (pod.scheduling_gates.empty()) return;
    {
      std::lock_guard lock(status_mu);
      std::string& last = last_status[pod.uid];
      if (last == "SchedulingGated") return;
      last = "SchedulingGated";
    }
    PodConditionUpdate condition;
    condition.reason = "SchedulingGated";
    condition.message = "Scheduling is blocked due to non-empty scheduling gates";
    writer->PatchPodStatus(IdOf(pod), condition, std::nullopt);
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
    if (!Responsible(**info)) return;
    Result<PodPtr> old_info = ToPodInfo(*old_pod, resource_names);
    if (queue->Update(old_info.ok() ? *old_info : nullptr, *info) == queue::QueueLocation::kGated) {
      ReportGated(**info);
    }
  }

  void OnPodDelete(const std::shared_ptr<const Pod>& pod) {
    ForgetStatus(pod->meta.uid);
    Result<PodPtr> info = ToPodInfo(*pod, resource_names);
    if (cache->NodeOf(pod->meta.uid).has_value()) {
      cache->RemovePod(pod->meta.uid);
      if (info.ok()) queue->AssignedPodDeleted(*info);
    }
    if (info.ok()) queue->Delete(**info);
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
      if (unit->kind() == queue::UnitKind::kPod) {
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
      } else {
        // Gang units arrive with the Workload Scheduling Cycle.
        queue->Done(unit->key());
      }
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::lock_guard lock(stats_mu);
      stats.scheduling_seconds += seconds;
    }
    DrainCompletions();
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
    if (options.batch_pod_classes && batch.valid && !nominations && copied <= 1 &&
        snapshot->num_nodes() == num_nodes_before && batch.num_nodes == num_nodes_before &&
        batch.signature == pod->signature && batch.priority == pod->priority &&
        batch.profile == *profile && Batchable(*pod)) {
      chosen = PlaceFromBatch(fw, *pod);
      if (chosen.has_value()) Count(&SchedulerStats::batched);
    }
    if (!chosen.has_value()) {
      batch.valid = false;
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
      if (options.batch_pod_classes && Batchable(*pod) && !nominations) {
        batch.valid = true;
        batch.signature = pod->signature;
        batch.priority = pod->priority;
        batch.profile = *profile;
        batch.num_nodes = snapshot->num_nodes();
        batch.state = std::move(state);
        batch.feasible = workspace.feasible;
        batch.raw = workspace.raw_scores;
        batch.last_position =
            std::find(batch.feasible.begin(), batch.feasible.end(), *chosen) - batch.feasible.begin();
      }
    }
    AssumeAndBind(unit, key, *profile, fw, pod, snapshot->node_name(*chosen));
  }

  // Re-checks only the node that received the previous pod of this class.
  std::optional<NodeIndex> PlaceFromBatch(const plugins::Framework& fw, const PodInfo& pod) {
    const size_t k = batch.feasible.size();
    if (k == 0 || batch.last_position >= k) return std::nullopt;
    const size_t num_score = fw.num_score_plugins();
    const bool have_scores = batch.raw.size() == num_score * k && num_score > 0;
    const NodeIndex last = batch.feasible[batch.last_position];
    const plugins::CycleContext ctx{pod, *snapshot, batch.state};
    plugins::Status fit = fw.RunFilterOnNode(pod, *snapshot, batch.state, last);
    if (fit.IsError()) return std::nullopt;
    if (!fit.IsSuccess()) {
      // Drop the node from the class's feasible list.
      const size_t pos = batch.last_position;
      if (have_scores) {
        std::vector<int64_t> raw;
        raw.reserve(num_score * (k - 1));
        for (size_t p = 0; p < num_score; ++p) {
          for (size_t i = 0; i < k; ++i) {
            if (i != pos) raw.push_back(batch.raw[p * k + i]);
          }
        }
        batch.raw = std::move(raw);
      }
      batch.feasible.erase(batch.feasible.begin() + static_cast<ptrdiff_t>(pos));
    } else if (have_scores) {
      for (size_t p = 0; p < num_score; ++p) {
        int64_t score = 0;
        plugins::Status s = fw.ScoreChunk(ctx, p, std::span<const NodeIndex>(&last, 1),
                                          std::span<int64_t>(&score, 1));
        if (!s.IsSuccess()) return std::nullopt;
        batch.raw[p * k + batch.last_position] = score;
      }
    }
    const size_t n = batch.feasible.size();
    if (n == 0) return std::nullopt;
    if (n == 1 || batch.raw.size() != num_score * n || num_score == 0) {
      if (n != 1) return std::nullopt;
      batch.last_position = 0;
      return batch.feasible[0];
    }
    batch_scores = batch.raw;
    batch_totals.assign(n, 0);
    plugins::Status s = fw.CombineScores(ctx, batch.feasible, batch_scores, batch_totals);
    if (!s.IsSuccess()) return std::nullopt;
    std::optional<size_t> best = plugins::Framework::SelectHost(batch_totals, *random);
    if (!best.has_value()) return std::nullopt;
    batch.last_position = *best;
    return batch.feasible[*best];
  }

  void AssumeAndBind(const queue::PoppedUnit& unit, const queue::UnitKey& key, size_t profile,
                     plugins::Framework& fw, const PodPtr& pod, const std::string& node) {
    auto assumed_info = std::make_shared<PodInfo>(*pod);
    assumed_info->node_name = node;
    PodPtr assumed = assumed_info;
    if (Status s = cache->AssumePod(assumed); !s.ok()) {
      queue->Done(key);
      return;
    }
    queue->DeleteNominatedPodIfExists(*pod);
    plugins::CycleState state;
    plugins::Status reserve = fw.RunReserve(state, *assumed, node);
    if (!reserve.IsSuccess()) {
      cache->ForgetPod(assumed->uid);
      batch.valid = false;
      HandleBindingCycleFailure(key, unit.cycle, *pod,
                                "running Reserve plugin: " + fw.StatusMessage(reserve, *snapshot));
      return;
    }
    plugins::PermitDecision permit = fw.RunPermit(state, *assumed, node);
    if (!permit.status.IsSuccess()) {
      fw.RunUnreserve(state, *assumed, node);
      cache->ForgetPod(assumed->uid);
      batch.valid = false;
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
      batch.valid = false;
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
        queue->Done(c.key);
        ForgetStatus(pod.uid);
        Count(&SchedulerStats::bound);
        writer->RecordPodEvent(IdOf(pod), "Normal", "Scheduled",
                               "Successfully assigned " + pod.FullName() + " to " + pod.node_name);
      } else {
        Count(&SchedulerStats::bind_failures);
        if (options.metrics != nullptr) options.metrics->IncBindFailures();
        cache->ForgetPod(pod.uid);
        batch.valid = false;
        plugins::CycleState state;
        frameworks[c.profile]->RunUnreserve(state, pod, pod.node_name);
        // The node's capacity is free again for others.
        queue->MoveAllToActiveOrBackoffQueue(queue::kEventAssignedPodDelete,
                                             queue::EventObject(c.pod), {});
        if (c.status.error().code == ErrorCode::kNotFound) {
          queue->Done(c.key);  // the pod is gone
        } else {
          HandleBindingCycleFailure(c.key, c.cycle, pod,
                                    "Binding rejected: " + c.status.error().message);
        }
      }
    }
    completions_scratch.clear();
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
  impl->queue = std::make_unique<queue::SchedulingQueue>(*impl->clock, qo, std::move(queue_profiles));
  impl->cache = std::make_unique<Cache>(*impl->clock, options.assumed_pod_ttl);
  ApiWriterOptions wo;
  wo.component = impl->frameworks.front()->scheduler_name();
  wo.record_events = options.record_events;
  impl->writer = std::make_unique<ApiWriter>(client, wo);
  impl->snapshot = std::make_unique<Snapshot>(impl->resource_names);
  const uint64_t seed = options.seed != 0 ? options.seed : std::random_device{}();
  impl->random = std::make_unique<plugins::Mt19937Random>(seed);
  const int threads = options.parallelism > 0
                          ? options.parallelism
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (threads > 1) impl->arena = std::make_unique<tbb::task_arena>(threads);
  impl->options = std::move(options);

  Impl* self = impl.get();
  kube::InformerOptions pods;
  pods.resource = kube::resources::kPods;
  impl->pod_informer = std::make_unique<kube::TypedInformer<Pod>>(client, pods);
  impl->pod_informer->AddEventHandler([self](const auto& p) { self->OnPodAdd(p); },
                                      [self](const auto& a, const auto& b) { self->OnPodUpdate(a, b); },
                                      [self](const auto& p) { self->OnPodDelete(p); });
  kube::InformerOptions nodes;
  nodes.resource = kube::resources::kNodes;
  impl->node_informer = std::make_unique<kube::TypedInformer<Node>>(client, nodes);
  impl->node_informer->AddEventHandler([self](const auto& n) { self->OnNodeAdd(n); },
                                       [self](const auto& a, const auto& b) { self->OnNodeUpdate(a, b); },
                                       [self](const auto& n) { self->OnNodeDelete(n); });
  kube::InformerOptions namespaces;
  namespaces.resource = kube::resources::kNamespaces;
  impl->namespace_informer =
      std::make_unique<kube::TypedInformer<kube::Namespace>>(client, namespaces);
  impl->namespace_informer->AddEventHandler(
      [self](const auto& ns) { self->cache->SetNamespaceLabels(ns->meta.name, ns->meta.labels); },
      [self](const auto&, const auto& ns) {
        self->cache->SetNamespaceLabels(ns->meta.name, ns->meta.labels);
        self->queue->MoveAllToActiveOrBackoffQueue(
            {queue::EventResource::kNamespace, queue::kActionUpdate}, {}, {});
      },
      [self](const auto& ns) { self->cache->RemoveNamespace(ns->meta.name); });
  kube::InformerOptions pdbs;
  pdbs.resource = kube::resources::kPodDisruptionBudgets;
  impl->pdb_informer =
      std::make_unique<kube::TypedInformer<kube::PodDisruptionBudget>>(client, pdbs);
  impl->pdb_informer->AddEventHandler(
      [self](const auto& p) { self->cache->SetPodDisruptionBudget(p->meta.Key(), ToPdbInfo(*p)); },
      [self](const auto&, const auto& p) {
        self->cache->SetPodDisruptionBudget(p->meta.Key(), ToPdbInfo(*p));
      },
      [self](const auto& p) { self->cache->RemovePodDisruptionBudget(p->meta.Key()); });
  return std::unique_ptr<Scheduler>(new Scheduler(std::move(impl)));
}

void Scheduler::Start() {
  Impl& impl = *impl_;
  if (impl.started.exchange(true)) return;
  impl.node_informer->Start();
  impl.namespace_informer->Start();
  impl.pdb_informer->Start();
  impl.pod_informer->Start();
  impl.loop = std::thread([&impl] {
    // Schedule only once the cluster state is known (kube waits for cache sync).
    while (!impl.stopping.load()) {
      if (impl.node_informer->WaitForSync(std::chrono::milliseconds(50)) &&
          impl.pod_informer->WaitForSync(std::chrono::milliseconds(50)) &&
          impl.namespace_informer->WaitForSync(std::chrono::milliseconds(50)) &&
          impl.pdb_informer->WaitForSync(std::chrono::milliseconds(50))) {
        break;
      }
    }
    impl.Loop();
  });
}

bool Scheduler::HasSynced() const {
  const Impl& impl = *impl_;
  return impl.node_informer->HasSynced() && impl.pod_informer->HasSynced() &&
         impl.namespace_informer->HasSynced() && impl.pdb_informer->HasSynced();
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
