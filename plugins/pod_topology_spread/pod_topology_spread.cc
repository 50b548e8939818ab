#include "plugins/pod_topology_spread/pod_topology_spread.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/scheduling_types.h"
#include "core/snapshot.h"

namespace copse::plugins {
namespace {

constexpr int64_t kNoMinimum = std::numeric_limits<int32_t>::max();

// A constraint with its selector resolved and its key's column bound.
struct Constraint {
  int32_t max_skew = 1;
  std::string key;
  LabelSelector selector = LabelSelector::Nothing();
  int32_t min_domains = 1;
  NodeInclusionPolicy node_affinity_policy = NodeInclusionPolicy::kHonor;
  NodeInclusionPolicy node_taints_policy = NodeInclusionPolicy::kIgnore;
  LabelColumnRef column;
  bool self_match = false;
  bool is_hostname = false;
};

// The constraints of `action` for this pod: its own, else the defaults with
// the pod's default selector (buildDefaultConstraints).
std::vector<Constraint> BuildConstraints(const PodInfo& pod, const Snapshot& snapshot,
                                         const std::vector<TopologySpreadConstraint>& defaults,
                                         UnsatisfiableConstraintAction action) {
  std::vector<Constraint> out;
  const auto add = [&](const TopologySpreadConstraint& c, const LabelSelector& selector) {
    Constraint k;
    k.max_skew = c.max_skew;
    k.key = c.topology_key;
    k.selector = selector;
    k.min_domains = std::max<int32_t>(1, c.min_domains);
    k.node_affinity_policy = c.node_affinity_policy;
    k.node_taints_policy = c.node_taints_policy;
    k.column = LabelColumnRef(snapshot, c.topology_key);
    k.self_match = k.selector.Matches(pod.labels);
    k.is_hostname = c.topology_key == kLabelHostname;
    out.push_back(std::move(k));
  };
  if (!pod.topology_spread_constraints.empty()) {
    for (const TopologySpreadConstraint& c : pod.topology_spread_constraints) {
      if (c.when_unsatisfiable != action) continue;
      add(c, c.label_selector.has_value() ? *c.label_selector : LabelSelector::Nothing());
    }
    return out;
  }
  if (!pod.default_spread_selector.has_value() || pod.default_spread_selector->Empty() ||
      pod.default_spread_selector->MatchesNothing()) {
    return out;
  }
  for (const TopologySpreadConstraint& c : defaults) {
    if (c.when_unsatisfiable == action) add(c, *pod.default_spread_selector);
  }
  return out;
}

bool NodeHasAllKeys(const std::vector<Constraint>& constraints, NodeIndex n) noexcept {
  for (const Constraint& c : constraints) {
    if (c.column->id(n) == LabelColumn::kAbsent) return false;
  }
  return true;
}

// countPodsMatchSelector: non-terminating pods of `ns` matching; an empty
// selector counts nothing.
int64_t CountMatching(std::span<const PodRef> pods, const LabelSelector& selector,
                      std::string_view ns) noexcept {
  if (selector.Empty()) return 0;
  int64_t count = 0;
  for (const PodRef& p : pods) {
    if (p->terminating || p->namespace_name != ns) continue;
    if (selector.Matches(p->labels)) ++count;
  }
  return count;
}

// Per-node facts about the incoming pod that inclusion policies need.
struct NodeInclusion {
  std::vector<uint8_t> untolerated_taint;  // by TaintId: NoSchedule/NoExecute not tolerated

  void Prepare(const PodInfo& pod, const Snapshot& snapshot) {
    untolerated_taint.assign(snapshot.num_taints(), 0);
    for (TaintId id = 0; id < snapshot.num_taints(); ++id) {
      const Taint& t = snapshot.taint(id);
      if (t.effect == TaintEffect::kPreferNoSchedule) continue;
      untolerated_taint[id] = TolerationsTolerateTaint(pod.tolerations, t) ? 0 : 1;
    }
  }
  bool Admits(const Constraint& c, const PodInfo& pod, const Snapshot& snapshot,
              NodeIndex n) const noexcept {
    if (c.node_affinity_policy == NodeInclusionPolicy::kHonor &&
        !pod.MatchesRequiredNodeAffinity(snapshot.node_labels(n), snapshot.node_name(n))) {
      return false;
    }
    if (c.node_taints_policy == NodeInclusionPolicy::kHonor) {
      for (TaintId id : snapshot.node_taints(n)) {
        if (id < untolerated_taint.size() && untolerated_taint[id] != 0) return false;
      }
    }
    return true;
  }
};

struct SpreadFilterState : ClonableState<SpreadFilterState> {
  std::vector<Constraint> constraints;
  std::vector<std::vector<int64_t>> counts;    // [constraint][value id]
  std::vector<std::vector<uint8_t>> eligible;  // [constraint][value id]
  std::vector<int64_t> num_domains;
  std::vector<int64_t> min_match;
  NodeInclusion inclusion;

  void RecomputeMinimum(size_t c) noexcept {
    int64_t m = kNoMinimum;
    for (size_t v = 0; v < counts[c].size(); ++v) {
      if (eligible[c][v] != 0) m = std::min(m, counts[c][v]);
    }
    min_match[c] = m;
  }
};

struct SpreadScoreState : ClonableState<SpreadScoreState> {
  std::vector<Constraint> constraints;
  std::vector<std::vector<int64_t>> counts;   // [constraint][value id]
  std::vector<std::vector<uint8_t>> present;  // [constraint][value id]: domain of a scored node
  std::vector<double> weights;
  std::vector<uint8_t> ignored;  // by NodeIndex
  NodeInclusion inclusion;
};

}  // namespace

Result<std::unique_ptr<Plugin>> PodTopologySpread::Create(const PluginArgs* args) {
  Result<PodTopologySpreadArgs> typed =
      ArgsOrDefault<PodTopologySpreadArgs>(args, kPodTopologySpreadName);
  if (!typed.ok()) return std::move(typed).error();
  if (typed->defaulting_type == SpreadDefaultingType::kSystem) {
    if (!typed->default_constraints.empty()) {
      return MakeError(
          ErrorCode::kInvalid,
          "PodTopologySpreadArgs.defaultConstraints: must be empty for System defaulting type");
    }
    TopologySpreadConstraint zone;
    zone.topology_key = std::string(kLabelTopologyZone);
    zone.max_skew = 3;
    zone.when_unsatisfiable = UnsatisfiableConstraintAction::kScheduleAnyway;
    TopologySpreadConstraint host;
    host.topology_key = std::string(kLabelHostname);
    host.max_skew = 5;
    host.when_unsatisfiable = UnsatisfiableConstraintAction::kScheduleAnyway;
    return std::unique_ptr<Plugin>(new PodTopologySpread({zone, host}, /*system_defaulted=*/true));
  }
  for (size_t i = 0; i < typed->default_constraints.size(); ++i) {
    const TopologySpreadConstraint& c = typed->default_constraints[i];
    const std::string path = "PodTopologySpreadArgs.defaultConstraints[" + std::to_string(i) + "]";
    if (c.max_skew <= 0)
      return MakeError(ErrorCode::kInvalid, path + ".maxSkew: must be greater than zero");
    if (c.topology_key.empty())
      return MakeError(ErrorCode::kInvalid, path + ".topologyKey: can not be empty");
    if (c.label_selector.has_value()) {
      return MakeError(ErrorCode::kInvalid,
                       path +
                           ".labelSelector: constraint must not define a selector, as "
                           "they deduced for each pod");
    }
  }
  return std::unique_ptr<Plugin>(
      new PodTopologySpread(typed->default_constraints, /*system_defaulted=*/false));
}

Status PodTopologySpread::PreFilter(const PodInfo& pod, const Snapshot& snapshot, CycleState& state,
                                    PreFilterResult& /*result*/) const {
  std::vector<Constraint> constraints =
      BuildConstraints(pod, snapshot, defaults_, UnsatisfiableConstraintAction::kDoNotSchedule);
  if (constraints.empty()) return Status::Skip();
  auto s = std::make_unique<SpreadFilterState>();
  s->inclusion.Prepare(pod, snapshot);
  const size_t k = constraints.size();
  s->counts.resize(k);
  s->eligible.resize(k);
  s->num_domains.assign(k, 0);
  s->min_match.assign(k, kNoMinimum);
  for (size_t c = 0; c < k; ++c) {
    s->counts[c].assign(constraints[c].column->num_values(), 0);
    s->eligible[c].assign(constraints[c].column->num_values(), 0);
  }
  for (NodeIndex n = 0; n < snapshot.num_nodes(); ++n) {
    if (!NodeHasAllKeys(constraints, n)) continue;
    for (size_t c = 0; c < k; ++c) {
      const Constraint& con = constraints[c];
      if (!s->inclusion.Admits(con, pod, snapshot, n)) continue;
      const uint32_t v = con.column->id(n);
      s->eligible[c][v] = 1;
      s->counts[c][v] += CountMatching(snapshot.pods(n), con.selector, pod.namespace_name);
    }
  }
  for (size_t c = 0; c < k; ++c) {
    s->num_domains[c] = std::count(s->eligible[c].begin(), s->eligible[c].end(), uint8_t{1});
  }
  s->constraints = std::move(constraints);
  for (size_t c = 0; c < k; ++c) s->RecomputeMinimum(c);
  state.Write(PreFilterKey(), std::move(s));
  return Status::Success();
}

Status PodTopologySpread::Update(CycleState& state, const PodInfo& pod, const PodInfo& other,
                                 NodeIndex node, const Snapshot& snapshot, int64_t delta) const {
  auto* s = state.Mutable<SpreadFilterState>(PreFilterKey());
  if (s == nullptr) return Status::MissingState();
  if (other.namespace_name != pod.namespace_name) return Status::Success();
  if (!NodeHasAllKeys(s->constraints, node)) return Status::Success();
  for (size_t c = 0; c < s->constraints.size(); ++c) {
    const Constraint& con = s->constraints[c];
    if (!con.selector.Matches(other.labels)) continue;
    if (!s->inclusion.Admits(con, pod, snapshot, node)) continue;
    const uint32_t v = con.column->id(node);
    s->counts[c][v] += delta;
    s->RecomputeMinimum(c);
  }
  return Status::Success();
}

Status PodTopologySpread::AddPod(CycleState& state, const PodInfo& pod, const PodInfo& added,
                                 NodeIndex node, const Snapshot& snapshot) const {
  return Update(state, pod, added, node, snapshot, +1);
}

Status PodTopologySpread::RemovePod(CycleState& state, const PodInfo& pod, const PodInfo& removed,
                                    NodeIndex node, const Snapshot& snapshot) const {
  return Update(state, pod, removed, node, snapshot, -1);
}

void PodTopologySpread::Filter(const CycleContext& ctx, std::span<const NodeIndex> nodes,
                               std::span<Status> out) const noexcept {
  const auto* s = ctx.state.Read<SpreadFilterState>(PreFilterKey());
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (s == nullptr) {
      out[i] = Status::MissingState();
      continue;
    }
    const NodeIndex n = nodes[i];
    out[i] = Status::Success();
    for (size_t c = 0; c < s->constraints.size(); ++c) {
      const Constraint& con = s->constraints[c];
      const uint32_t v = con.column->id(n);
      if (v == LabelColumn::kAbsent) {
        out[i] = Status::Unresolvable(kReasonNodeLabelNotMatch);
        break;
      }
      const int64_t min_match = s->num_domains[c] < con.min_domains ? 0 : s->min_match[c];
      const int64_t skew = s->counts[c][v] + (con.self_match ? 1 : 0) - min_match;
      if (skew > con.max_skew) {
        out[i] = Status::Unschedulable(kReasonConstraintsNotMatch);
        break;
      }
    }
  }
}

Status PodTopologySpread::PreScore(const PodInfo& pod, const Snapshot& snapshot,
                                   std::span<const NodeIndex> feasible, CycleState& state) const {
  if (feasible.empty() || snapshot.num_nodes() == 0) return Status::Skip();
  std::vector<Constraint> constraints =
      BuildConstraints(pod, snapshot, defaults_, UnsatisfiableConstraintAction::kScheduleAnyway);
  if (constraints.empty()) return Status::Skip();
  // Nodes lacking a key are ignored only for non-system-default constraints,
  // so that nodes without a zone label still get hostname spreading.
  const bool require_all_topologies =
      !pod.topology_spread_constraints.empty() || !system_defaulted_;
  auto s = std::make_unique<SpreadScoreState>();
  s->inclusion.Prepare(pod, snapshot);
  const size_t k = constraints.size();
  s->counts.resize(k);
  s->present.resize(k);
  for (size_t c = 0; c < k; ++c) {
    s->counts[c].assign(constraints[c].column->num_values(), 0);
    s->present[c].assign(constraints[c].column->num_values(), 0);
  }
  s->ignored.assign(snapshot.num_nodes(), 0);
  size_t num_ignored = 0;
  std::vector<int64_t> topo_size(k, 0);
  for (NodeIndex n : feasible) {
    if (require_all_topologies && !NodeHasAllKeys(constraints, n)) {
      s->ignored[n] = 1;
      ++num_ignored;
      continue;
    }
    for (size_t c = 0; c < k; ++c) {
      if (constraints[c].is_hostname) continue;
      const uint32_t v = constraints[c].column->id(n);
      if (s->present[c][v] == 0) {
        s->present[c][v] = 1;
        ++topo_size[c];
      }
    }
  }
  s->weights.resize(k);
  for (size_t c = 0; c < k; ++c) {
    const int64_t size = constraints[c].is_hostname
                             ? static_cast<int64_t>(feasible.size() - num_ignored)
                             : topo_size[c];
    s->weights[c] = std::log(static_cast<double>(size + 2));
  }
  for (NodeIndex n = 0; n < snapshot.num_nodes(); ++n) {
    if (require_all_topologies && !NodeHasAllKeys(constraints, n)) continue;
    for (size_t c = 0; c < k; ++c) {
      const Constraint& con = constraints[c];
      if (!s->inclusion.Admits(con, pod, snapshot, n)) continue;
      if (con.is_hostname) continue;  // per-node counts are taken in Score
      const uint32_t v = con.column->id(n);
      if (s->present[c][v] == 0) continue;
      s->counts[c][v] += CountMatching(snapshot.pods(n), con.selector, pod.namespace_name);
    }
  }
  s->constraints = std::move(constraints);
  state.Write(PreScoreKey(), std::move(s));
  return Status::Success();
}

Status PodTopologySpread::Score(const CycleContext& ctx, std::span<const NodeIndex> nodes,
                                std::span<int64_t> out) const noexcept {
  const auto* s = ctx.state.Read<SpreadScoreState>(PreScoreKey());
  if (s == nullptr) return Status::MissingState();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const NodeIndex n = nodes[i];
    if (s->ignored[n] != 0) {
      out[i] = 0;
      continue;
    }
    double score = 0;
    for (size_t c = 0; c < s->constraints.size(); ++c) {
      const Constraint& con = s->constraints[c];
      const uint32_t v = con.column->id(n);
      if (v == LabelColumn::kAbsent) continue;
      const int64_t count = con.is_hostname ? CountMatching(ctx.snapshot.pods(n), con.selector,
                                                            ctx.pod.namespace_name)
                                            : s->counts[c][v];
      score += static_cast<double>(count) * s->weights[c] + static_cast<double>(con.max_skew - 1);
    }
    out[i] = static_cast<int64_t>(std::round(score));
  }
  return Status::Success();
}

Status PodTopologySpread::NormalizeScore(const CycleContext& ctx, std::span<const NodeIndex> nodes,
                                         std::span<int64_t> scores) const noexcept {
  const auto* s = ctx.state.Read<SpreadScoreState>(PreScoreKey());
  if (s == nullptr) return Status::Success();
  int64_t min_score = std::numeric_limits<int64_t>::max();
  int64_t max_score = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (s->ignored[nodes[i]] != 0) continue;
    min_score = std::min(min_score, scores[i]);
    max_score = std::max(max_score, scores[i]);
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (s->ignored[nodes[i]] != 0) {
      scores[i] = 0;
    } else if (max_score == 0) {
      scores[i] = kMaxNodeScore;
    } else {
      scores[i] = kMaxNodeScore * (max_score + min_score - scores[i]) / max_score;
    }
  }
  return Status::Success();
}

std::string_view PodTopologySpread::ReasonText(ReasonId reason) const noexcept {
  switch (reason) {
    case kReasonConstraintsNotMatch:
      return "node(s) didn't match pod topology spread constraints";
    case kReasonNodeLabelNotMatch:
      return "node(s) didn't match pod topology spread constraints (missing required label)";
    default:
      return "";
  }
}

std::vector<ClusterEventWithHint> PodTopologySpread::EventsToRegister() const {
  return {
      {{EventResource::kAssignedPod, kActionAdd | kActionUpdatePodLabel | kActionDelete}, {}},
      {{EventResource::kNode, kActionAdd | kActionDelete | kActionUpdate}, {}},
      {{EventResource::kUnscheduledPod, kActionUpdatePodLabel}, {}},
  };
}

}  // namespace copse::plugins
