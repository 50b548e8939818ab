#include "plugins/inter_pod_affinity/inter_pod_affinity.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "core/snapshot.h"

namespace copse::plugins {
namespace {

// An incoming pod's term with namespaceSelector merged into its namespaces
// (mergeAffinityTermNamespacesIfNotEmpty).
struct ResolvedTerm {
  const PodAffinityTerm* term = nullptr;
  std::vector<std::string> namespaces;  // sorted
  bool all_namespaces = false;
  int64_t weight = 0;  // preferred terms only
  size_t slot = 0;

  bool Matches(const PodInfo& pod) const noexcept {
    // Labels first: the cheaper test, and the one that usually decides.
    return term->MatchesLabels(pod.labels) &&
           (all_namespaces ||
            std::binary_search(namespaces.begin(), namespaces.end(), pod.namespace_name));
  }
};

ResolvedTerm Resolve(const PodAffinityTerm& term, const Snapshot& snapshot) {
  ResolvedTerm r;
  r.term = &term;
  r.namespaces = term.namespaces;
  if (term.namespace_selector.has_value()) {
    if (term.namespace_selector->Empty()) {
      r.all_namespaces = true;
    } else {
      for (const auto& [name, labels] : snapshot.namespaces()) {
        if (term.namespace_selector->Matches(labels)) r.namespaces.push_back(name);
      }
    }
  }
  std::sort(r.namespaces.begin(), r.namespaces.end());
  r.namespaces.erase(std::unique(r.namespaces.begin(), r.namespaces.end()), r.namespaces.end());
  return r;
}

// PodAffinityTerm::Matches for the incoming pod against an existing pod's
// term, label test first: the same result (a conjunction without side
// effects), but most terms fail on labels, which is cheaper than the
// namespace lookup Matches starts with.
bool TermMatches(const PodAffinityTerm& term, std::string_view ns, const Labels& labels,
                 const Labels* ns_labels) noexcept {
  return term.MatchesLabels(labels) && term.Matches(ns, labels, ns_labels);
}

// Counts for one topology key over the key's label value ids.
struct KeySlot {
  std::string key;
  LabelColumnRef column;
  std::vector<int64_t> existing_anti;
  std::vector<int64_t> affinity;
  std::vector<int64_t> anti_affinity;
};

// Adds delta to counts[value], tracking how many entries are non-zero
// (kube deletes map entries that drop to zero; len(map) == nonzero).
void AddCount(std::vector<int64_t>& counts, uint32_t value, int64_t delta,
              int64_t& nonzero) noexcept {
  const int64_t before = counts[value];
  const int64_t after = before + delta;
  counts[value] = after;
  if (before == 0 && after != 0) ++nonzero;
  if (before != 0 && after == 0) --nonzero;
}

struct AffinityFilterState : ClonableState<AffinityFilterState> {
  std::vector<KeySlot> slots;
  std::vector<ResolvedTerm> affinity_terms;
  std::vector<ResolvedTerm> anti_terms;
  int64_t affinity_nonzero = 0;
  int64_t anti_nonzero = 0;
  int64_t existing_anti_nonzero = 0;
  bool pod_matches_all_affinity_terms = false;
  Labels namespace_labels;
  bool has_namespace_labels = false;

  const Labels* ns_labels() const noexcept {
    return has_namespace_labels ? &namespace_labels : nullptr;
  }

  size_t Slot(std::string_view key, const Snapshot& snapshot) {
    for (size_t i = 0; i < slots.size(); ++i) {
      if (slots[i].key == key) return i;
    }
    KeySlot s;
    s.key = std::string(key);
    s.column = LabelColumnRef(snapshot, key);
    const size_t values = s.column->num_values();
    s.existing_anti.assign(values, 0);
    s.affinity.assign(values, 0);
    s.anti_affinity.assign(values, 0);
    slots.push_back(std::move(s));
    return slots.size() - 1;
  }

  bool AllAffinityTermsMatch(const PodInfo& pod) const noexcept {
    if (affinity_terms.empty()) return false;
    for (const ResolvedTerm& t : affinity_terms) {
      if (!t.Matches(pod)) return false;
    }
    return true;
  }

  // Adds (or with delta -1 removes) an existing pod on `node`.
  void CountPod(const PodInfo& incoming, const PodInfo& existing, NodeIndex node,
                const Snapshot& snapshot, int64_t delta, bool existing_anti, bool incoming_terms) {
    if (existing_anti) {
      for (const PodAffinityTerm& t : existing.required_anti_affinity) {
        if (!TermMatches(t, incoming.namespace_name, incoming.labels, ns_labels())) continue;
        KeySlot& s = slots[Slot(t.topology_key, snapshot)];
        const uint32_t v = s.column->id(node);
        if (v != LabelColumn::kAbsent) AddCount(s.existing_anti, v, delta, existing_anti_nonzero);
      }
    }
    if (!incoming_terms) return;
    if (AllAffinityTermsMatch(existing)) {
      for (const ResolvedTerm& t : affinity_terms) {
        KeySlot& s = slots[t.slot];
        const uint32_t v = s.column->id(node);
        if (v != LabelColumn::kAbsent) AddCount(s.affinity, v, delta, affinity_nonzero);
      }
    }
    for (const ResolvedTerm& t : anti_terms) {
      if (!t.Matches(existing)) continue;
      KeySlot& s = slots[t.slot];
      const uint32_t v = s.column->id(node);
      if (v != LabelColumn::kAbsent) AddCount(s.anti_affinity, v, delta, anti_nonzero);
    }
  }
};

// Summed preferences per topology key over the key's values.
struct ScoreSlot {
  std::string key;
  LabelColumnRef column;
  std::vector<int64_t> score;
};

struct AffinityScoreState : ClonableState<AffinityScoreState> {
  std::vector<ScoreSlot> slots;
  bool any = false;

  void Add(std::string_view key, NodeIndex node, const Snapshot& snapshot, int64_t delta) {
    ScoreSlot* slot = nullptr;
    for (ScoreSlot& s : slots) {
      if (s.key == key) slot = &s;
    }
    if (slot == nullptr) {
      ScoreSlot s;
      s.key = std::string(key);
      s.column = LabelColumnRef(snapshot, key);
      s.score.assign(s.column->num_values(), 0);
      slots.push_back(std::move(s));
      slot = &slots.back();
    }
    const uint32_t v = slot->column->id(node);
    if (v == LabelColumn::kAbsent) return;
    slot->score[v] += delta;
    any = true;
  }
};

}  // namespace

Result<std::unique_ptr<Plugin>> InterPodAffinity::Create(const PluginArgs* args) {
  Result<InterPodAffinityArgs> typed =
      ArgsOrDefault<InterPodAffinityArgs>(args, kInterPodAffinityName);
  if (!typed.ok()) return std::move(typed).error();
  if (typed->hard_pod_affinity_weight < 0 || typed->hard_pod_affinity_weight > 100) {
    return MakeError(ErrorCode::kInvalid,
                     "InterPodAffinityArgs.hardPodAffinityWeight: must be in the range [0, 100]");
  }
  return std::unique_ptr<Plugin>(new InterPodAffinity(*typed));
}

Status InterPodAffinity::PreFilter(const PodInfo& pod, const Snapshot& snapshot, CycleState& state,
                                   PreFilterResult& /*result*/) const {
  // Nothing to count: no term of its own and no pod anywhere with required
  // anti-affinity (kube walks only the nodes that have such pods).
  if (pod.required_affinity.empty() && pod.required_anti_affinity.empty() &&
      !snapshot.any_pod_with_required_anti_affinity()) {
    return Status::Skip();
  }
  auto s = std::make_unique<AffinityFilterState>();
  if (const Labels* ns = snapshot.namespace_labels(pod.namespace_name)) {
    s->namespace_labels = *ns;
    s->has_namespace_labels = true;
  }
  for (const PodAffinityTerm& t : pod.required_affinity) {
    ResolvedTerm r = Resolve(t, snapshot);
    r.slot = s->Slot(t.topology_key, snapshot);
    s->affinity_terms.push_back(std::move(r));
  }
  for (const PodAffinityTerm& t : pod.required_anti_affinity) {
    ResolvedTerm r = Resolve(t, snapshot);
    r.slot = s->Slot(t.topology_key, snapshot);
    s->anti_terms.push_back(std::move(r));
  }
  const bool incoming_terms = !s->affinity_terms.empty() || !s->anti_terms.empty();
  const size_t num_nodes = snapshot.num_nodes();
  for (NodeIndex n = 0; n < num_nodes; ++n) {
    // Most nodes have no pod with required anti-affinity: look at nothing else then.
    const std::span<const uint32_t> anti = snapshot.pods_with_required_anti_affinity(n);
    if (anti.empty() && !incoming_terms) continue;
    const std::span<const PodRef> pods = snapshot.pods(n);
    for (uint32_t pos : anti) {
      s->CountPod(pod, *pods[pos], n, snapshot, +1, /*existing_anti=*/true,
                  /*incoming_terms=*/false);
    }
    if (!incoming_terms) continue;
    for (const PodRef& existing : pods) {
      s->CountPod(pod, *existing, n, snapshot, +1, /*existing_anti=*/false,
                  /*incoming_terms=*/true);
    }
  }
  if (s->existing_anti_nonzero == 0 && !incoming_terms) return Status::Skip();
  s->pod_matches_all_affinity_terms = s->AllAffinityTermsMatch(pod);
  state.Write(PreFilterKey(), std::move(s));
  return Status::Success();
}

Status InterPodAffinity::Update(CycleState& state, const PodInfo& pod, const PodInfo& other,
                                NodeIndex node, const Snapshot& snapshot, int64_t delta) const {
  auto* s = state.Mutable<AffinityFilterState>(PreFilterKey());
  if (s == nullptr) return Status::MissingState();
  const bool incoming_terms = !s->affinity_terms.empty() || !s->anti_terms.empty();
  s->CountPod(pod, other, node, snapshot, delta, /*existing_anti=*/true, incoming_terms);
  return Status::Success();
}

Status InterPodAffinity::AddPod(CycleState& state, const PodInfo& pod, const PodInfo& added,
                                NodeIndex node, const Snapshot& snapshot) const {
  return Update(state, pod, added, node, snapshot, +1);
}

Status InterPodAffinity::RemovePod(CycleState& state, const PodInfo& pod, const PodInfo& removed,
                                   NodeIndex node, const Snapshot& snapshot) const {
  return Update(state, pod, removed, node, snapshot, -1);
}

void InterPodAffinity::Filter(const CycleContext& ctx, std::span<const NodeIndex> nodes,
                              std::span<Status> out) const noexcept {
  const auto* s = ctx.state.Read<AffinityFilterState>(PreFilterKey());
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (s == nullptr) {
      out[i] = Status::MissingState();
      continue;
    }
    const NodeIndex n = nodes[i];
    out[i] = Status::Success();
    // satisfyPodAffinity
    if (!s->affinity_terms.empty()) {
      bool pods_exist = true;
      bool missing_key = false;
      for (const ResolvedTerm& t : s->affinity_terms) {
        const KeySlot& slot = s->slots[t.slot];
        const uint32_t v = slot.column->id(n);
        if (v == LabelColumn::kAbsent) {
          missing_key = true;
          break;
        }
        if (slot.affinity[v] <= 0) pods_exist = false;
      }
      if (missing_key ||
          (!pods_exist && !(s->affinity_nonzero == 0 && s->pod_matches_all_affinity_terms))) {
        out[i] = Status::Unresolvable(kReasonAffinity);
        continue;
      }
    }
    // satisfyPodAntiAffinity
    if (s->anti_nonzero > 0) {
      bool violated = false;
      for (const ResolvedTerm& t : s->anti_terms) {
        const KeySlot& slot = s->slots[t.slot];
        const uint32_t v = slot.column->id(n);
        if (v != LabelColumn::kAbsent && slot.anti_affinity[v] > 0) {
          violated = true;
          break;
        }
      }
      if (violated) {
        out[i] = Status::Unschedulable(kReasonAntiAffinity);
        continue;
      }
    }
    // satisfyExistingPodsAntiAffinity
    if (s->existing_anti_nonzero > 0) {
      for (const KeySlot& slot : s->slots) {
        const uint32_t v = slot.column->id(n);
        if (v != LabelColumn::kAbsent && slot.existing_anti[v] > 0) {
          out[i] = Status::Unschedulable(kReasonExistingAntiAffinity);
          break;
        }
      }
    }
  }
}

Status InterPodAffinity::PreScore(const PodInfo& pod, const Snapshot& snapshot,
                                  std::span<const NodeIndex> /*feasible*/,
                                  CycleState& state) const {
  const bool has_constraints =
      !pod.preferred_affinity.empty() || !pod.preferred_anti_affinity.empty();
  if (args_.ignore_preferred_terms_of_existing_pods && !has_constraints) return Status::Skip();

  std::vector<ResolvedTerm> preferred;
  std::vector<ResolvedTerm> preferred_anti;
  for (const WeightedPodAffinityTerm& t : pod.preferred_affinity) {
    ResolvedTerm r = Resolve(t.term, snapshot);
    r.weight = t.weight;
    preferred.push_back(std::move(r));
  }
  for (const WeightedPodAffinityTerm& t : pod.preferred_anti_affinity) {
    ResolvedTerm r = Resolve(t.term, snapshot);
    r.weight = t.weight;
    preferred_anti.push_back(std::move(r));
  }
  // Without terms of its own the pod only meets existing pods' terms.
  if (!has_constraints && !snapshot.any_pod_with_affinity()) return Status::Skip();
  const Labels* ns_labels = snapshot.namespace_labels(pod.namespace_name);
  const int64_t hard_weight = args_.hard_pod_affinity_weight;

  auto s = std::make_unique<AffinityScoreState>();
  const auto process = [&](const PodInfo& existing, NodeIndex n) {
    for (const ResolvedTerm& t : preferred) {
      if (t.Matches(existing)) s->Add(t.term->topology_key, n, snapshot, t.weight);
    }
    for (const ResolvedTerm& t : preferred_anti) {
      if (t.Matches(existing)) s->Add(t.term->topology_key, n, snapshot, -t.weight);
    }
    if (hard_weight > 0) {
      for (const PodAffinityTerm& t : existing.required_affinity) {
        if (TermMatches(t, pod.namespace_name, pod.labels, ns_labels))
          s->Add(t.topology_key, n, snapshot, hard_weight);
      }
    }
    for (const WeightedPodAffinityTerm& t : existing.preferred_affinity) {
      if (TermMatches(t.term, pod.namespace_name, pod.labels, ns_labels))
        s->Add(t.term.topology_key, n, snapshot, t.weight);
    }
    for (const WeightedPodAffinityTerm& t : existing.preferred_anti_affinity) {
      if (TermMatches(t.term, pod.namespace_name, pod.labels, ns_labels)) {
        s->Add(t.term.topology_key, n, snapshot, -static_cast<int64_t>(t.weight));
      }
    }
  };
  const size_t num_nodes = snapshot.num_nodes();
  for (NodeIndex n = 0; n < num_nodes; ++n) {
    // Without terms of its own the pod only meets existing pods' terms; most
    // nodes have no pod with any: skip them before touching anything else.
    const std::span<const uint32_t> with_affinity = snapshot.pods_with_affinity(n);
    if (!has_constraints && with_affinity.empty()) continue;
    if (snapshot.node_labels(n).empty()) continue;
    const std::span<const PodRef> pods = snapshot.pods(n);
    if (has_constraints) {
      for (const PodRef& p : pods) process(*p, n);
    } else {
      for (uint32_t pos : with_affinity) process(*pods[pos], n);
    }
  }
  if (!s->any) return Status::Skip();
  state.Write(PreScoreKey(), std::move(s));
  return Status::Success();
}

Status InterPodAffinity::Score(const CycleContext& ctx, std::span<const NodeIndex> nodes,
                               std::span<int64_t> out) const noexcept {
  const auto* s = ctx.state.Read<AffinityScoreState>(PreScoreKey());
  if (s == nullptr) return Status::MissingState();
  for (size_t i = 0; i < nodes.size(); ++i) {
    int64_t score = 0;
    for (const ScoreSlot& slot : s->slots) {
      const uint32_t v = slot.column->id(nodes[i]);
      if (v != LabelColumn::kAbsent) score += slot.score[v];
    }
    out[i] = score;
  }
  return Status::Success();
}

Status InterPodAffinity::NormalizeScore(const CycleContext& ctx,
                                        std::span<const NodeIndex> /*nodes*/,
                                        std::span<int64_t> scores) const noexcept {
  const auto* s = ctx.state.Read<AffinityScoreState>(PreScoreKey());
  if (s == nullptr || s->slots.empty()) return Status::Success();
  int64_t min_count = std::numeric_limits<int64_t>::max();
  int64_t max_count = std::numeric_limits<int64_t>::min();
  for (int64_t v : scores) {
    min_count = std::min(min_count, v);
    max_count = std::max(max_count, v);
  }
  const int64_t diff = max_count - min_count;
  for (int64_t& v : scores) {
    double f = 0;
    if (diff > 0)
      f = static_cast<double>(kMaxNodeScore) *
          (static_cast<double>(v - min_count) / static_cast<double>(diff));
    v = static_cast<int64_t>(f);
  }
  return Status::Success();
}

std::string_view InterPodAffinity::ReasonText(ReasonId reason) const noexcept {
  switch (reason) {
    case kReasonAffinity:
      return "node(s) didn't match pod affinity rules";
    case kReasonAntiAffinity:
      return "node(s) didn't match pod anti-affinity rules";
    case kReasonExistingAntiAffinity:
      return "node(s) didn't satisfy existing pods anti-affinity rules";
    default:
      return "";
  }
}

std::vector<ClusterEventWithHint> InterPodAffinity::EventsToRegister() const {
  return {
      {{EventResource::kAssignedPod, kActionAdd | kActionUpdatePodLabel | kActionDelete}, {}},
      {{EventResource::kNode, kActionAdd | kActionUpdateNodeLabel}, {}},
      {{EventResource::kUnscheduledPod, kActionUpdatePodLabel}, {}},
      {{EventResource::kNamespace, kActionAdd | kActionUpdate}, {}},
  };
}

}  // namespace copse::plugins
