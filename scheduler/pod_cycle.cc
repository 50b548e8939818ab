#include "scheduler/pod_cycle.h"

#include <optional>
#include <utility>

#include "scheduler/victim_rules.h"

namespace copse::scheduler {
namespace {

// VictimRules built on first use: only a pod that fails Filter preempts,
// and building them reads every pod of the snapshot.
class LazyVictimRules final : public plugins::VictimPolicy {
 public:
  LazyVictimRules(const Snapshot& snapshot, const GangTracker& gangs, const PodInfo& preemptor)
      : snapshot_(snapshot), gangs_(gangs), preemptor_(preemptor) {}
  std::vector<PodRef> Removable(std::span<const PodRef> candidates) const override {
    return Get().Removable(candidates);
  }
  bool Complete(std::vector<PodRef>& victims) const override { return Get().Complete(victims); }
  bool Leaving(const PodInfo& pod) const override { return gangs_.Evicting(pod.uid); }

 private:
  const VictimRules& Get() const {
    if (!rules_.has_value()) rules_.emplace(snapshot_, gangs_, preemptor_.priority);
    return *rules_;
  }
  const Snapshot& snapshot_;
  const GangTracker& gangs_;
  const PodInfo& preemptor_;
  mutable std::optional<VictimRules> rules_;
};

}  // namespace

bool PodCycle::AddNominatedPods(const PodInfo& pod) {
  bool added = false;
  Snapshot& snapshot = env_.snapshot();
  for (const auto& [node_name, other] : queue_.NominatedPods()) {
    if (other->uid == pod.uid || other->priority < pod.priority) continue;
    std::optional<NodeIndex> node = snapshot.FindNode(node_name);
    if (!node.has_value()) continue;
    snapshot.AddPod(*node, other);
    added = true;
  }
  return added;
}

CycleOutcome PodCycle::Run(const queue::PoppedUnit& unit) {
  CycleOutcome out;
  // A single pod's cycle changes rows the last gang's pass does not know.
  env_.InvalidateGangBatch();
  PodPtr pod = unit.pods.front();
  // This scheduler's own nomination (an earlier cycle's preemption) before
  // the API server has echoed it in status.nominatedNodeName: the pod waits
  // for its victims on that node instead of preempting again.
  if (pod->nominated_node_name.empty()) {
    if (std::optional<std::string> node = queue_.NominatedNodeOf(pod->uid)) {
      auto nominated = std::make_shared<PodInfo>(*pod);
      nominated->nominated_node_name = std::move(*node);
      pod = std::move(nominated);
    }
  }
  const std::optional<size_t> profile = profiles_.IndexOf(pod->scheduler_name);
  // 1. Nothing to do.
  if (!profile.has_value() || pod->terminating || cache_.Knows(pod->uid)) return out;
  out.profile = *profile;
  plugins::Framework& fw = profiles_.at(*profile);
  Snapshot& snapshot = env_.snapshot();
  const bool batching = env_.options().batch_pod_classes;

  // 2. Snapshot and nominated pods.
  const size_t num_nodes_before = snapshot.num_nodes();
  const size_t copied = cache_.UpdateSnapshot(snapshot);
  const bool nominations = AddNominatedPods(*pod);

  // 3. Pod class reuse.
  PodClassReuse& batch = env_.pod_batch();
  if (batching && !nominations && copied <= 1 && snapshot.num_nodes() == num_nodes_before &&
      batch.Matches(*pod, *profile, snapshot.num_nodes(), cache_.PodsWithAffinity() > 0)) {
    if (std::optional<NodeIndex> chosen = batch.Place(fw, *pod, snapshot, env_.random())) {
      out.kind = CycleOutcome::Kind::kPlaced;
      out.batched = 1;
      out.placed.push_back({pod, snapshot.node_name(*chosen), batch.state()});
      return out;
    }
  }

  // 4. A full pass.
  env_.InvalidateBatches();
  auto state = std::make_shared<plugins::CycleState>();
  plugins::ScheduleOptions so;
  so.chunk_size = env_.options().filter_chunk_size;
  so.start_index = env_.start_index();
  so.keep_raw_scores = batching;
  so.parallel_for = env_.parallel_for();
  const LazyVictimRules victim_rules(snapshot, gangs_, *pod);
  so.victim_policy = &victim_rules;
  plugins::ScheduleResult result =
      fw.SchedulePod(*pod, snapshot, *state, env_.workspace(), env_.random(), so, clock_.WallNow());
  env_.Advance(result.evaluated_nodes);

  // 5. The outcome.
  if (result.code == plugins::Code::kSuccess) {
    out.kind = CycleOutcome::Kind::kPlaced;
    out.placed.push_back({pod, snapshot.node_name(*result.node), state});
    // A pass scored by domain sums (DomainPacking) goes stale for the rest of
    // the domain once this pod lands: the next pod of the class gets a pass
    // of its own.
    if (batching && !nominations && !fw.ScoresDependOnOtherNodes(*state)) {
      batch.Remember(*pod, *profile, snapshot.num_nodes(), std::move(state), env_.workspace(),
                     *result.node);
    }
    return out;
  }
  out.message = result.message;
  if (result.code == plugins::Code::kError) {
    out.kind = CycleOutcome::Kind::kError;
    out.reason = "SchedulerError";
    out.failed.push_back({pod, std::nullopt});
    return out;
  }
  out.kind = CycleOutcome::Kind::kUnschedulable;
  out.reason = "Unschedulable";
  out.rejection.unschedulable = queue::PluginSet::FromMask(result.unschedulable_plugins);
  std::optional<std::string> nominated;
  if (result.post_filter.has_value()) {
    const plugins::PostFilterResult& pf = *result.post_filter;
    out.preemption_attempted = true;
    if (pf.status.IsSuccess() && pf.nominated_node.has_value()) {
      nominated = snapshot.node_name(*pf.nominated_node);
      PreemptionPlan plan;
      plan.scheduler_name = fw.scheduler_name();
      plan.victims = pf.victims;
      plan.nominations.emplace_back(pod, *nominated);
      out.preemption = std::move(plan);
    } else if (pf.clear_nomination && !pod->nominated_node_name.empty()) {
      nominated = std::string();
      out.drop_nominations.push_back(pod);
    }
  }
  out.failed.push_back({pod, std::move(nominated)});
  return out;
}

}  // namespace copse::scheduler
