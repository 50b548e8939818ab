#pragma once
// PodTopologySpread (PreFilter with extensions, Filter, PreScore, Score):
// topologySpreadConstraints (kube-scheduler podtopologyspread, default
// weight 2). Counts are dense arrays per constraint over the topology key's
// interned values.
//
// Filter algorithm (DoNotSchedule constraints):
//   1. PreFilter: take the pod's DoNotSchedule constraints (or the configured
//      default constraints with the pod's default selector). Skip when none.
//      For every node carrying all constraint keys, and per constraint whose
//      node inclusion policies admit the node (nodeAffinityPolicy Honor: the
//      pod's nodeSelector/required affinity match; nodeTaintsPolicy Honor: no
//      untolerated NoSchedule/NoExecute taint), mark the node's domain
//      eligible and add the number of non-terminating pods in the pod's
//      namespace matching the selector (an empty selector counts none).
//      The global minimum is the least count over eligible domains.
//   2. Filter, per node and constraint: missing key ->
//      UnschedulableAndUnresolvable "node(s) didn't match pod topology spread
//      constraints (missing required label)"; otherwise with
//      min = 0 if eligible domains < minDomains else the global minimum,
//      count(domain) + selfMatch - min > maxSkew -> Unschedulable
//      "node(s) didn't match pod topology spread constraints".
//   3. AddPod/RemovePod: +-1 at the node's domain for each constraint whose
//      selector matches the pod (same namespace, node admitted), then
//      recompute the minimum.
//
// Score algorithm (ScheduleAnyway constraints):
//   1. PreScore: Skip without soft constraints. Nodes among the feasible ones
//      lacking a key are ignored (when constraints come from the pod or a
//      listed default); domains of the others are the candidates, weighted
//      log(#domains + 2) (#non-ignored feasible nodes for kubernetes.io/hostname).
//      Count matching pods per candidate domain over all admitted nodes.
//   2. Score: sum over constraints of count * weight + (maxSkew - 1)
//      (hostname: the node's own count), rounded.
//   3. NormalizeScore: ignored nodes 0; others 100 * (max + min - s) / max,
//      or 100 when max is 0.
//
// Thread-safety: immutable after construction; per-cycle data in CycleState.

#include <memory>
#include <string_view>
#include <vector>

#include "core/pod_info.h"
#include "core/result.h"
#include "plugins/framework/plugin.h"
#include "plugins/framework/registry.h"

namespace copse::plugins {

inline constexpr std::string_view kPodTopologySpreadName = "PodTopologySpread";

enum class SpreadDefaultingType : uint8_t {
  kList,    // default_constraints as given (empty: no defaults) -- copse's default
  kSystem,  // kube's system defaults: zone maxSkew 3, hostname maxSkew 5, ScheduleAnyway
};

struct PodTopologySpreadArgs {
  // Applied to pods without constraints of their own, with the pod's
  // default_spread_selector; label_selector must be unset here.
  std::vector<TopologySpreadConstraint> default_constraints;
  SpreadDefaultingType defaulting_type = SpreadDefaultingType::kList;
};

class PodTopologySpread final : public PreFilterPlugin,
                                public FilterPlugin,
                                public PreScorePlugin,
                                public ScorePlugin,
                                public EnqueueExtensions {
 public:
  enum Reason : ReasonId { kReasonConstraintsNotMatch = 1, kReasonNodeLabelNotMatch = 2 };

  static Result<std::unique_ptr<Plugin>> Create(const PluginArgs* args);

  std::string_view Name() const noexcept override { return kPodTopologySpreadName; }
  // kube-scheduler's EventsToRegister for this plugin (v1.32).
  std::vector<ClusterEventWithHint> EventsToRegister() const override;
  Status PreFilter(const PodInfo& pod, const Snapshot& snapshot, CycleState& state,
                   PreFilterResult& result) const override;
  bool HasPreFilterExtensions() const noexcept override { return true; }
  Status AddPod(CycleState& state, const PodInfo& pod, const PodInfo& added, NodeIndex node,
                const Snapshot& snapshot) const override;
  Status RemovePod(CycleState& state, const PodInfo& pod, const PodInfo& removed, NodeIndex node,
                   const Snapshot& snapshot) const override;
  void Filter(const CycleContext& ctx, std::span<const NodeIndex> nodes,
              std::span<Status> out) const noexcept override;
  Status PreScore(const PodInfo& pod, const Snapshot& snapshot, std::span<const NodeIndex> feasible,
                  CycleState& state) const override;
  Status Score(const CycleContext& ctx, std::span<const NodeIndex> nodes,
               std::span<int64_t> out) const noexcept override;
  bool HasNormalizeScore() const noexcept override { return true; }
  Status NormalizeScore(const CycleContext& ctx, std::span<const NodeIndex> nodes,
                        std::span<int64_t> scores) const noexcept override;

 protected:
  std::string_view ReasonText(ReasonId reason) const noexcept override;

 private:
  PodTopologySpread(std::vector<TopologySpreadConstraint> defaults, bool system_defaulted)
      : defaults_(std::move(defaults)), system_defaulted_(system_defaulted) {}
  Status Update(CycleState& state, const PodInfo& pod, const PodInfo& other, NodeIndex node,
                const Snapshot& snapshot, int64_t delta) const;

  std::vector<TopologySpreadConstraint> defaults_;
  bool system_defaulted_;
};

}  // namespace copse::plugins
