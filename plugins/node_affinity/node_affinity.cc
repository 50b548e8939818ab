#include "plugins/node_affinity/node_affinity.h"

#include <algorithm>
#include <set>
#include <string>

namespace copse::plugins {
namespace {

constexpr std::string_view kObjectNameField = "metadata.name";

int64_t PreferredScore(std::span<const PreferredSchedulingTerm> terms, const Labels& labels,
                       std::string_view node_name) noexcept {
  int64_t score = 0;
  for (const PreferredSchedulingTerm& t : terms) {
    if (t.weight == 0) continue;
    if (t.term.Matches(labels, node_name)) score += t.weight;
  }
  return score;
}

}  // namespace

Status NodeAffinity::PreFilter(const PodInfo& pod, const Snapshot& snapshot, CycleState& /*state*/,
                               PreFilterResult& result) const {
  const bool no_required = !pod.required_node_affinity.has_value();
  if (no_required && !args_.added_required.has_value() && pod.node_selector.empty())
    return Status::Skip();
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

Status NodeAffinity::PreScore(const PodInfo& pod, const Snapshot& /*snapshot*/,
                              std::span<const NodeIndex> /*feasible*/,
                              CycleState& /*state*/) const {
  if (pod.preferred_node_affinity.empty() && args_.added_preferred.empty()) return Status::Skip();
  return Status::Success();
}

Status NodeAffinity::Score(const CycleContext& ctx, std::span<const NodeIndex> nodes,
                           std::span<int64_t> out) const noexcept {
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

}  // namespace copse::plugins
