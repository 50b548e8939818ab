#pragma once
// NodeAffinity (PreFilter, Filter, PreScore, Score): spec.nodeSelector and
// required node affinity decide feasibility; preferred terms add their
// weights (kube-scheduler nodeaffinity.NodeAffinity, default weight 2).
//
// Algorithm:
//   1. PreFilter: Skip when the pod has no nodeSelector, no required node
//      affinity and the profile adds none. When every required term names
//      nodes by matchFields metadata.name In [...], restrict Filter to the
//      union over terms of the per-term intersection; an empty union is
//      UnschedulableAndUnresolvable "pod affinity terms conflict".
//   2. Filter: the profile's added affinity must match ("node(s) didn't match
//      scheduler-enforced node affinity"), then nodeSelector AND the required
//      terms (ORed) must match ("node(s) didn't match Pod's node
//      affinity/selector"); both UnschedulableAndUnresolvable.
//   3. PreScore: Skip when there are no preferred terms (pod's or added).
//   4. Score: sum of the weights of the matching preferred terms.
//   5. NormalizeScore: DefaultNormalizeScore (highest -> 100).
//
// Thread-safety: immutable after construction; no cycle state needed.

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "core/labels.h"
#include "core/pod_info.h"
#include "core/result.h"
#include "plugins/framework/plugin.h"
#include "plugins/framework/registry.h"

namespace copse::plugins {

inline constexpr std::string_view kNodeAffinityName = "NodeAffinity";

// NodeAffinityArgs.addedAffinity: applied to every pod of the profile.
struct NodeAffinityArgs {
  std::optional<NodeSelector> added_required;
  std::vector<PreferredSchedulingTerm> added_preferred;
};

class NodeAffinity final : public PreFilterPlugin,
                           public FilterPlugin,
                           public PreScorePlugin,
                           public ScorePlugin,
                           public EnqueueExtensions {
 public:
  enum Reason : ReasonId { kReasonPod = 1, kReasonEnforced = 2, kReasonConflict = 3 };

  explicit NodeAffinity(NodeAffinityArgs args) : args_(std::move(args)) {}

  std::string_view Name() const noexcept override { return kNodeAffinityName; }
  // kube-scheduler's EventsToRegister for this plugin (v1.32).
  std::vector<ClusterEventWithHint> EventsToRegister() const override;
  Status PreFilter(const PodInfo& pod, const Snapshot& snapshot, CycleState& state,
                   PreFilterResult& result) const override;
  void Filter(const CycleContext& ctx, std::span<const NodeIndex> nodes,
              std::span<Status> out) const noexcept override;
  Status PreScore(const PodInfo& pod, const Snapshot& snapshot, std::span<const NodeIndex> feasible,
                  CycleState& state) const override;
  Status Score(const CycleContext& ctx, std::span<const NodeIndex> nodes,
               std::span<int64_t> out) const noexcept override;
  bool HasNormalizeScore() const noexcept override { return true; }
  Status NormalizeScore(const CycleContext& ctx, std::span<const NodeIndex> nodes,
                        std::span<int64_t> scores) const noexcept override;

  static Result<std::unique_ptr<Plugin>> Create(const PluginArgs* args);

 protected:
  std::string_view ReasonText(ReasonId reason) const noexcept override;

 private:
  NodeAffinityArgs args_;
};

}  // namespace copse::plugins
