#include "plugins/default_preemption/default_preemption.h"

#include <algorithm>
#include <limits>

namespace copse::plugins {
namespace {

using TimePoint = std::chrono::system_clock::time_point;

TimePoint StartTime(const PodInfo& pod, TimePoint now) noexcept {
  return pod.start_time.value_or(now);
}

// filterPodsWithPDBViolation: stable split; each matching budget is charged
// once per pod not already disrupted, violating when it drops below zero.
void SplitByPdbViolation(const std::vector<PodRef>& pods,
                         std::span<const PodDisruptionBudgetInfo> pdbs,
                         std::vector<PodRef>& violating, std::vector<PodRef>& non_violating) {
  std::vector<int64_t> allowed(pdbs.size());
  for (size_t i = 0; i < pdbs.size(); ++i) allowed[i] = pdbs[i].disruptions_allowed;
  for (const PodRef& pod : pods) {
    bool violated = false;
    for (size_t i = 0; i < pdbs.size(); ++i) {
      if (!pdbs[i].Covers(*pod) || pdbs[i].AlreadyDisrupted(pod->name)) continue;
      if (--allowed[i] < 0) violated = true;
    }
    (violated ? violating : non_violating).push_back(pod);
  }
}

// GetEarliestPodStartTime over the highest-priority victims.
TimePoint EarliestStartOfHighestPriority(const Victims& v, TimePoint now) noexcept {
  TimePoint earliest = StartTime(*v.pods[0], now);
  int32_t max_priority = v.pods[0]->priority;
  for (const PodRef& p : v.pods) {
    if (p->priority == max_priority) {
      earliest = std::min(earliest, StartTime(*p, now));
    } else if (p->priority > max_priority) {
      max_priority = p->priority;
      earliest = StartTime(*p, now);
    }
  }
  return earliest;
}

}  // namespace

bool MoreImportantPod(const PodInfo& a, const PodInfo& b, TimePoint now) noexcept {
  if (a.priority != b.priority) return a.priority > b.priority;
  return StartTime(a, now) < StartTime(b, now);
}

Result<std::unique_ptr<Plugin>> DefaultPreemption::Create(const PluginArgs* args) {
  Result<DefaultPreemptionArgs> typed =
      ArgsOrDefault<DefaultPreemptionArgs>(args, kDefaultPreemptionName);
  if (!typed.ok()) return std::move(typed).error();
  if (typed->min_candidate_nodes_percentage < 0 || typed->min_candidate_nodes_percentage > 100) {
    return MakeError(
        ErrorCode::kInvalid,
        "DefaultPreemptionArgs.minCandidateNodesPercentage: not in valid range [0, 100]");
  }
  if (typed->min_candidate_nodes_absolute < 0) {
    return MakeError(
        ErrorCode::kInvalid,
        "DefaultPreemptionArgs.minCandidateNodesAbsolute: not in valid range [0, inf)");
  }
  if (typed->min_candidate_nodes_percentage == 0 && typed->min_candidate_nodes_absolute == 0) {
    return MakeError(
        ErrorCode::kInvalid,
        "DefaultPreemptionArgs.minCandidateNodesPercentage: cannot be zero at the same time as "
        "minCandidateNodesAbsolute");
  }
  return std::unique_ptr<Plugin>(new DefaultPreemption(*typed));
}

size_t DefaultPreemption::NumCandidates(size_t num_potential) const noexcept {
  size_t n = num_potential * static_cast<size_t>(args_.min_candidate_nodes_percentage) / 100;
  n = std::max(n, static_cast<size_t>(args_.min_candidate_nodes_absolute));
  return std::min(n, num_potential);
}

std::optional<std::string> DefaultPreemption::PodEligibleToPreemptOthers(
    const PodInfo& pod, const Snapshot& snapshot, std::span<const Status> node_statuses,
    const VictimPolicy* policy) {
  if (pod.preemption_policy == PreemptionPolicy::kNever)
    return std::string("not eligible due to preemptionPolicy=Never.");
  if (pod.nominated_node_name.empty()) return std::nullopt;
  const std::optional<NodeIndex> nominated = snapshot.FindNode(pod.nominated_node_name);
  if (!nominated.has_value()) return std::nullopt;
  // A nominated node that no longer passes Filter for good: try again.
  if (*nominated < node_statuses.size() &&
      node_statuses[*nominated].code == Code::kUnschedulableAndUnresolvable) {
    return std::nullopt;
  }
  for (const PodRef& p : snapshot.pods(*nominated)) {
    if (p->priority < pod.priority &&
        (p->terminating_by_preemption || (policy != nullptr && policy->Leaving(*p)))) {
      return std::string("not eligible due to a terminating pod on the nominated node.");
    }
  }
  return std::nullopt;
}

Status DefaultPreemption::SelectVictimsOnNode(const FrameworkHandle& framework, const PodInfo& pod,
                                              Snapshot& scratch, CycleState& state, NodeIndex node,
                                              std::span<const PodDisruptionBudgetInfo> pdbs,
                                              TimePoint now, Victims& victims,
                                              const VictimPolicy* policy) {
  victims.pods.clear();
  victims.num_pdb_violations = 0;
  const auto remove = [&](const PodRef& p) -> Status {
    scratch.RemovePod(node, p->uid);
    return framework.RunPreFilterExtensionRemovePod(state, pod, *p, node, scratch);
  };
  const auto add = [&](const PodRef& p) -> Status {
    scratch.AddPod(node, p);
    return framework.RunPreFilterExtensionAddPod(state, pod, *p, node, scratch);
  };

  // a. Remove every lower-priority pod.
  std::vector<PodRef> potential;
  for (const PodRef& p : scratch.pods(node)) {
    if (p->priority < pod.priority) potential.push_back(p);
  }
  if (policy != nullptr) potential = policy->Removable(potential);
  if (potential.empty()) return Status::Unresolvable(kReasonNoVictims);
  for (const PodRef& p : potential) {
    Status s = remove(p);
    if (!s.IsSuccess()) return s;
  }
  // b. Does the pod fit without all of them?
  Status fits = framework.RunFilterOnNode(pod, scratch, state, node);
  if (!fits.IsSuccess()) return fits;

  // c. Most important first, PDB-violating ones reprieved first.
  std::stable_sort(potential.begin(), potential.end(),
                   [&](const PodRef& a, const PodRef& b) { return MoreImportantPod(*a, *b, now); });
  std::vector<PodRef> violating;
  std::vector<PodRef> non_violating;
  SplitByPdbViolation(potential, pdbs, violating, non_violating);

  // d. Reprieve while the pod still fits.
  const auto reprieve = [&](const PodRef& p, bool& reprieved) -> Status {
    Status s = add(p);
    if (!s.IsSuccess()) return s;
    reprieved = framework.RunFilterOnNode(pod, scratch, state, node).IsSuccess();
    if (!reprieved) {
      s = remove(p);
      if (!s.IsSuccess()) return s;
      victims.pods.push_back(p);
    }
    return Status::Success();
  };
  for (const PodRef& p : violating) {
    bool reprieved = false;
    Status s = reprieve(p, reprieved);
    if (!s.IsSuccess()) return s;
    if (!reprieved) ++victims.num_pdb_violations;
  }
  for (const PodRef& p : non_violating) {
    bool reprieved = false;
    Status s = reprieve(p, reprieved);
    if (!s.IsSuccess()) return s;
  }
  // The policy's completion (the rest of a group that goes whole).
  const size_t chosen = victims.pods.size();
  if (policy != nullptr && !victims.pods.empty() && !policy->Complete(victims.pods)) {
    victims.pods.clear();
    return Status::Unresolvable(kReasonNoVictims);
  }
  // e. Keep victims most important first.
  if ((!violating.empty() && !non_violating.empty()) || victims.pods.size() != chosen) {
    std::stable_sort(
        victims.pods.begin(), victims.pods.end(),
        [&](const PodRef& a, const PodRef& b) { return MoreImportantPod(*a, *b, now); });
  }
  return Status::Success();
}

size_t DefaultPreemption::PickOneNode(std::span<const PreemptionCandidate> candidates,
                                      TimePoint now) noexcept {
  std::vector<size_t> best;
  best.reserve(candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i) best.push_back(i);
  // Each criterion scores "higher is better"; ties go to the next one.
  const auto narrow = [&](auto&& score) {
    int64_t max_score = std::numeric_limits<int64_t>::min();
    std::vector<size_t> selected;
    for (size_t i : best) {
      const int64_t s = score(candidates[i].victims);
      if (s > max_score) {
        max_score = s;
        selected.clear();
      }
      if (s == max_score) selected.push_back(i);
    }
    best = std::move(selected);
    return best.size() == 1;
  };
  if (narrow([](const Victims& v) { return -static_cast<int64_t>(v.num_pdb_violations); }))
    return best[0];
  if (narrow([](const Victims& v) { return -static_cast<int64_t>(v.pods[0]->priority); }))
    return best[0];
  if (narrow([](const Victims& v) {
        int64_t sum = 0;
        for (const PodRef& p : v.pods)
          sum += static_cast<int64_t>(p->priority) + (int64_t{1} << 31);
        return -sum;
      })) {
    return best[0];
  }
  if (narrow([](const Victims& v) { return -static_cast<int64_t>(v.pods.size()); })) return best[0];
  if (narrow([&](const Victims& v) {
        return static_cast<int64_t>(
            EarliestStartOfHighestPriority(v, now).time_since_epoch().count());
      })) {
    return best[0];
  }
  return best[0];
}

PostFilterResult DefaultPreemption::PostFilter(const PostFilterContext& ctx) const {
  PostFilterResult result;
  result.status = Status::Unschedulable(kReasonNone);
  const PluginIndex self = ctx.framework.IndexOf(this);
  const Snapshot& snapshot = ctx.snapshot;

  // 1. Eligibility.
  if (std::optional<std::string> reason =
          PodEligibleToPreemptOthers(ctx.pod, snapshot, ctx.node_statuses, ctx.victim_policy)) {
    result.message = "preemption: " + *reason;
    return result;
  }

  const size_t num_nodes = snapshot.num_nodes();
  const Status not_helpful = Status::Unresolvable(kReasonNotHelpful).WithPlugin(self);
  std::vector<Status> statuses(num_nodes, not_helpful);
  const auto no_candidate = [&]() {
    result.clear_nomination = true;
    result.message =
        "preemption: " + ctx.framework.FormatFitError(num_nodes, {}, statuses, {}, snapshot);
    return result;
  };

  // 2. Nodes where removing pods might help.
  std::vector<NodeIndex> potential;
  for (NodeIndex n = 0; n < num_nodes && n < ctx.node_statuses.size(); ++n) {
    if (ctx.node_statuses[n].code == Code::kUnschedulable) potential.push_back(n);
  }
  if (potential.empty()) return no_candidate();

  // 3. Dry run from a random offset.
  const size_t wanted = NumCandidates(potential.size());
  const size_t offset = static_cast<size_t>(ctx.random.Uniform(potential.size()));
  Snapshot scratch = snapshot;
  std::vector<PreemptionCandidate> non_violating;
  std::vector<PreemptionCandidate> violating;
  Status error = Status::Success();
  for (size_t i = 0; i < potential.size(); ++i) {
    const NodeIndex node = potential[(offset + i) % potential.size()];
    CycleState state = ctx.state.Clone();
    Victims victims;
    Status s = SelectVictimsOnNode(ctx.framework, ctx.pod, scratch, state, node, snapshot.pdbs(),
                                   ctx.now, victims, ctx.victim_policy);
    scratch.CopyNodeFrom(snapshot, node);
    if (s.IsSuccess() && !victims.pods.empty()) {
      const bool violates = victims.num_pdb_violations > 0;
      (violates ? violating : non_violating)
          .push_back(PreemptionCandidate{node, std::move(victims)});
      if (!non_violating.empty() && non_violating.size() + violating.size() >= wanted) break;
      continue;
    }
    if (s.IsSuccess())
      s = Status::Error(kReasonNoVictims);  // fits with no victim: the snapshot moved on
    if (s.plugin == kNoPlugin) s.plugin = self;
    if (s.IsError() && error.IsSuccess()) error = s;
    statuses[node] = s;
  }
  std::vector<PreemptionCandidate> candidates = std::move(non_violating);
  for (PreemptionCandidate& c : violating) candidates.push_back(std::move(c));
  if (candidates.empty()) {
    if (!error.IsSuccess()) {
      result.status = error;
      result.message = "preemption: " + ctx.framework.StatusMessage(error, snapshot);
      return result;
    }
    return no_candidate();
  }

  // 4. Best candidate.
  const size_t best = PickOneNode(candidates, ctx.now);
  result.status = Status::Success();
  result.nominated_node = candidates[best].node;
  result.num_pdb_violations = candidates[best].victims.num_pdb_violations;
  result.victims = std::move(candidates[best].victims.pods);
  return result;
}

std::string_view DefaultPreemption::ReasonText(ReasonId reason) const noexcept {
  switch (reason) {
    case kReasonNoVictims:
      return "No preemption victims found for incoming pod";
    case kReasonNotHelpful:
      return "Preemption is not helpful for scheduling";
    default:
      return "";
  }
}

}  // namespace copse::plugins
