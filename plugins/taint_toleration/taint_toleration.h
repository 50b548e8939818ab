#pragma once
// TaintToleration (PreFilter, Filter, PreScore, Score): nodes whose
// NoSchedule/NoExecute taints the pod does not tolerate are infeasible; among
// feasible nodes, fewer untolerated PreferNoSchedule taints score higher
// (kube-scheduler tainttoleration.TaintToleration, default weight 3).
//
// Algorithm:
//   1. PreFilter: over the snapshot's interned taint table, mark each
//      NoSchedule/NoExecute taint the pod does not tolerate.
//   2. Filter: the node's first marked taint (in the node's order) rejects it:
//      UnschedulableAndUnresolvable "node(s) had untolerated taint {key: value}".
//   3. PreScore: mark each PreferNoSchedule taint not tolerated by the pod's
//      tolerations with effect PreferNoSchedule or none.
//   4. Score: the number of marked taints on the node.
//   5. NormalizeScore: DefaultNormalizeScore reversed (fewest taints -> 100).
//
// Thread-safety: state lives in the CycleState.

#include <memory>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "plugins/framework/plugin.h"
#include "plugins/framework/registry.h"

namespace copse::plugins {

inline constexpr std::string_view kTaintTolerationName = "TaintToleration";

class TaintToleration final : public PreFilterPlugin,
                              public FilterPlugin,
                              public PreScorePlugin,
                              public ScorePlugin,
                              public EnqueueExtensions {
 public:
  // arg: the taint id in the snapshot's taint table.
  enum Reason : ReasonId { kReasonUntoleratedTaint = 1 };

  std::string_view Name() const noexcept override { return kTaintTolerationName; }
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
  void AppendReasons(const Status& status, const Snapshot& snapshot,
                     std::vector<std::string>& out) const override;

  static Result<std::unique_ptr<Plugin>> Create(const PluginArgs* args);
};

}  // namespace copse::plugins
