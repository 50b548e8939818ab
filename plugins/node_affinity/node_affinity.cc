#include "plugins/node_affinity/node_affinity.h"

#include <algorithm>
#include <set>
#include <string>

#include "core/snapshot.h"

namespace copse::plugins {
namespace {

constexpr std::string_view kObjectNameField = "metadata.name";

// Per-node results of the selectors, computed in PreFilter/PreScore so that
// Filter and Score read one entry per node instead of matching label maps
// (a map lookup and string compares per requirement and node). A selector's
// result depends only on the node's values of the label keys it names (and,
// with matchFields, on the node name): each distinct combination of those
// values is evaluated once, with the core matchers, on a label map holding
// just those keys, which gives the same answers as the node's full map.
enum Verdict : uint8_t { kAdmit = 0, kRejectEnforced = 1, kRejectPod = 2 };

struct FilterVerdicts : ClonableState<FilterVerdicts> {
  std::vector<uint8_t> verdict;  // by NodeIndex
};

struct PreferredScores : ClonableState<PreferredScores> {
  std::vector<int64_t> score;  // by NodeIndex; feasible nodes only
};

// Combinations of key values evaluated at most (mixed-radix memo size).
constexpr size_t kMaxCombinations = size_t{1} << 16;

void AddKeys(const NodeSelectorTerm& term, std::vector<std::string>& keys, bool& fields) {
  for (const Requirement& r : term.match_expressions) keys.push_back(r.key);
  if (!term.match_fields.empty()) fields = true;
}

// out[n] = eval(labels of n restricted to `keys`, name of n) for n in
// `nodes`, each distinct combination of values evaluated once. False (and
// nothing written) when a key has no interned column in the snapshot
// (building one reads every node's map: no cheaper than matching) or the
// combinations are too many to memoize.
template <typename T, typename Eval>
bool EvaluateByLabels(const Snapshot& snapshot, std::vector<std::string> keys,
                      std::span<const NodeIndex> nodes, std::vector<T>& out, const Eval& eval) {
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  std::vector<const LabelColumn*> columns;
  columns.reserve(keys.size());
  size_t combinations = 1;
  for (const std::string& key : keys) {
    const LabelColumn* column = snapshot.label_column(key);
    if (column == nullptr) return false;
    columns.push_back(column);
    combinations *= std::max<size_t>(1, column->num_values());
    if (combinations > kMaxCombinations) return false;
  }
  std::vector<T> memo(combinations);
  std::vector<uint8_t> known(combinations, 0);
  Labels labels;
  for (const NodeIndex n : nodes) {
    size_t index = 0;
    for (const LabelColumn* c : columns) index = index * c->num_values() + c->id(n);
    if (!known[index]) {
      labels.clear();
      for (size_t k = 0; k < keys.size(); ++k) {
        const uint32_t id = columns[k]->id(n);
        if (id != LabelColumn::kAbsent) labels.emplace(keys[k], columns[k]->value(id));
      }
      memo[index] = eval(labels, snapshot.node_name(n));
      known[index] = 1;
    }
    out[n] = memo[index];
  }
  return true;
}

int64_t PreferredScore(std::span<const PreferredSchedulingTerm> terms, const Labels& labels,
                       std::string_view node_name) noexcept {
  int64_t score = 0;
  for (const PreferredSchedulingTerm& t : terms) {
    if (t.weight == 0) continue;
    if (t.term.Matches(labels, node_name)) score += t.weight;
  }
  return score;
}

// Writes FilterVerdicts for every node under `key`, unless the node name
// matters (matchFields) or the value combinations are too many.
void WriteFilterVerdicts(const NodeAffinityArgs& args, const PodInfo& pod, const Snapshot& snapshot,
                         CycleState& state, const void* key) {
  std::vector<std::string> keys;
  bool fields = false;
  for (const auto& [key, value] : pod.node_selector) keys.push_back(key);
  if (pod.required_node_affinity.has_value()) {
    for (const NodeSelectorTerm& t : pod.required_node_affinity->terms) AddKeys(t, keys, fields);
  }
  if (args.added_required.has_value()) {
    for (const NodeSelectorTerm& t : args.added_required->terms) AddKeys(t, keys, fields);
  }
  if (fields) return;  // the node name matters: Filter matches node by node
  std::vector<NodeIndex> all(snapshot.num_nodes());
  for (NodeIndex n = 0; n < all.size(); ++n) all[n] = n;
  auto verdicts = std::make_unique<FilterVerdicts>();
  verdicts->verdict.assign(snapshot.num_nodes(), kAdmit);
  const bool memoized = EvaluateByLabels(
      snapshot, std::move(keys), all, verdicts->verdict,
      [&](const Labels& labels, std::string_view name) -> uint8_t {
        if (args.added_required.has_value() && !args.added_required->Matches(labels, name)) {
          return kRejectEnforced;
        }
        return pod.MatchesRequiredNodeAffinity(labels, name) ? kAdmit : kRejectPod;
      });
  if (memoized) state.Write(key, std::move(verdicts));
}

}  // namespace

Status NodeAffinity::PreFilter(const PodInfo& pod, const Snapshot& snapshot, CycleState& state,
                               PreFilterResult& result) const {
  const bool no_required = !pod.required_node_affinity.has_value();
  if (no_required && !args_.added_required.has_value() && pod.node_selector.empty())
    return Status::Skip();
  WriteFilterVerdicts(args_, pod, snapshot, state, PreFilterKey());
  if (no_required || pod.required_node_affinity->terms.empty()) return Status::Success();

  // Terms are ORed; matchFields requirements inside a term are ANDed.
  std::set<std::string, std::less<>> names;
  for (const NodeSelectorTerm& term : pod.required_node_affinity->terms) {
    std::optional<std::set<std::string, std::less<>>> term_names;
    for (const Requirement& r : term.match_fields) {
      if (r.key != kObjectNameField || r.op != SelectorOp::kIn) continue;
      std::set<std::string, std::less<>> values(r.values.begin(), r.values.end());
      if (!term_names.has_value()) {
        term_names = std::move(values);
      } else {
        std::set<std::string, std::less<>> both;
        std::set_intersection(term_names->begin(), term_names->end(), values.begin(), values.end(),
                              std::inserter(both, both.end()));
        term_names = std::move(both);
      }
    }
    // A term without a metadata.name requirement may match any node.
    if (!term_names.has_value()) return Status::Success();
    names.insert(term_names->begin(), term_names->end());
  }
  if (names.empty()) return Status::Unresolvable(kReasonConflict);
  std::vector<NodeIndex> nodes;
  for (const std::string& name : names) {
    if (auto n = snapshot.FindNode(name)) nodes.push_back(*n);
  }
  std::sort(nodes.begin(), nodes.end());
  result.nodes = std::move(nodes);
  return Status::Success();
}

void NodeAffinity::Filter(const CycleContext& ctx, std::span<const NodeIndex> nodes,
                          std::span<Status> out) const noexcept {
  if (const auto* v = ctx.state.Read<FilterVerdicts>(PreFilterKey())) {
    const uint8_t* verdict = v->verdict.data();
    const size_t num = v->verdict.size();
    for (size_t i = 0; i < nodes.size(); ++i) {
      const uint8_t code = nodes[i] < num ? verdict[nodes[i]] : uint8_t{kRejectPod};
      out[i] = code == kAdmit            ? Status::Success()
               : code == kRejectEnforced ? Status::Unresolvable(kReasonEnforced)
                                         : Status::Unresolvable(kReasonPod);
    }
    return;
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    const NodeIndex n = nodes[i];
    const Labels& labels = ctx.snapshot.node_labels(n);
    const std::string& name = ctx.snapshot.node_name(n);
    if (args_.added_required.has_value() && !args_.added_required->Matches(labels, name)) {
      out[i] = Status::Unresolvable(kReasonEnforced);
    } else if (!ctx.pod.MatchesRequiredNodeAffinity(labels, name)) {
      out[i] = Status::Unresolvable(kReasonPod);
    } else {
      out[i] = Status::Success();
    }
  }
}

Status NodeAffinity::PreScore(const PodInfo& pod, const Snapshot& snapshot,
                              std::span<const NodeIndex> feasible, CycleState& state) const {
  if (pod.preferred_node_affinity.empty() && args_.added_preferred.empty()) return Status::Skip();
  std::vector<std::string> keys;
  bool fields = false;
  for (const PreferredSchedulingTerm& t : pod.preferred_node_affinity)
    AddKeys(t.term, keys, fields);
  for (const PreferredSchedulingTerm& t : args_.added_preferred) AddKeys(t.term, keys, fields);
  if (fields) return Status::Success();  // the node name matters: Score matches node by node
  auto scores = std::make_unique<PreferredScores>();
  scores->score.assign(snapshot.num_nodes(), 0);
  const bool memoized =
      EvaluateByLabels(snapshot, std::move(keys), feasible, scores->score,
                       [&](const Labels& labels, std::string_view name) -> int64_t {
                         return PreferredScore(args_.added_preferred, labels, name) +
                                PreferredScore(pod.preferred_node_affinity, labels, name);
                       });
  if (memoized) state.Write(PreScoreKey(), std::move(scores));
  return Status::Success();
}

Status NodeAffinity::Score(const CycleContext& ctx, std::span<const NodeIndex> nodes,
                           std::span<int64_t> out) const noexcept {
  if (const auto* s = ctx.state.Read<PreferredScores>(PreScoreKey())) {
    const int64_t* score = s->score.data();
    const size_t num = s->score.size();
    for (size_t i = 0; i < nodes.size(); ++i) out[i] = nodes[i] < num ? score[nodes[i]] : 0;
    return Status::Success();
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Labels& labels = ctx.snapshot.node_labels(nodes[i]);
    const std::string& name = ctx.snapshot.node_name(nodes[i]);
    out[i] = PreferredScore(args_.added_preferred, labels, name) +
             PreferredScore(ctx.pod.preferred_node_affinity, labels, name);
  }
  return Status::Success();
}

Status NodeAffinity::NormalizeScore(const CycleContext& /*ctx*/,
                                    std::span<const NodeIndex> /*nodes*/,
                                    std::span<int64_t> scores) const noexcept {
  DefaultNormalizeScore(kMaxNodeScore, /*reverse=*/false, scores);
  return Status::Success();
}

std::string_view NodeAffinity::ReasonText(ReasonId reason) const noexcept {
  switch (reason) {
    case kReasonPod:
      return "node(s) didn't match Pod's node affinity/selector";
    case kReasonEnforced:
      return "node(s) didn't match scheduler-enforced node affinity";
    case kReasonConflict:
      return "pod affinity terms conflict";
    default:
      return "";
  }
}

Result<std::unique_ptr<Plugin>> NodeAffinity::Create(const PluginArgs* args) {
  Result<NodeAffinityArgs> typed = ArgsOrDefault<NodeAffinityArgs>(args, kNodeAffinityName);
  if (!typed.ok()) return std::move(typed).error();
  for (size_t i = 0; typed->added_required.has_value() && i < typed->added_required->terms.size();
       ++i) {
    copse::Status s = typed->added_required->terms[i].Validate();
    if (!s.ok()) {
      return MakeError(
          ErrorCode::kInvalid,
          "NodeAffinityArgs.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
          ".nodeSelectorTerms[" +
              std::to_string(i) + "]: " + s.error().message);
    }
  }
  for (size_t i = 0; i < typed->added_preferred.size(); ++i) {
    const int32_t w = typed->added_preferred[i].weight;
    if (w < 1 || w > 100) {
      return MakeError(
          ErrorCode::kInvalid,
          "NodeAffinityArgs.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[" +
              std::to_string(i) + "].weight: must be in the range 1-100");
    }
  }
  return std::unique_ptr<Plugin>(std::make_unique<NodeAffinity>(std::move(*typed)));
}

std::vector<ClusterEventWithHint> NodeAffinity::EventsToRegister() const {
  return {
      {{EventResource::kNode, kActionAdd | kActionUpdateNodeLabel}, {}},
      {{EventResource::kUnscheduledPod, kActionUpdate}, {}},
  };
}

}  // namespace copse::plugins
