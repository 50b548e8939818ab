#pragma once
// NodeResourcesBalancedAllocation (PreScore, Score): prefers nodes whose
// resource utilisation fractions stay close to each other after placing the
// pod (kube-scheduler noderesources.BalancedAllocation, default weight 1).
//
// Algorithm:
//   1. PreScore: resolve the configured resources (default cpu, memory) and
//      the pod's plain requests; Skip for a pod requesting none of them
//      (best-effort pods would otherwise pile onto one node). copse: Skip
//      for a pod that requests an accelerator (an extended resource not in
//      `resources`) when skipAcceleratorPods (default): such pods are packed
//      (NodeResourcesFit acceleratorStrategy), and balancing cpu against
//      memory would pull them apart.
//   2. Score: fraction_i = min(1, (node requested_i + pod request_i) /
//      allocatable_i) over resources with allocatable > 0 (scalar resources
//      only when requested); score = (1 - stddev(fractions)) * 100, with
//      |f0 - f1| / 2 for two resources.
//
// Thread-safety: immutable after construction; per-cycle data in CycleState.

#include <memory>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "plugins/framework/plugin.h"
#include "plugins/framework/registry.h"
#include "plugins/node_resources_fit/resource_allocation.h"

namespace copse::plugins {

inline constexpr std::string_view kBalancedAllocationName = "NodeResourcesBalancedAllocation";

struct BalancedAllocationArgs {
  std::vector<ResourceSpec> resources = {{"cpu", 1}, {"memory", 1}};
  bool skip_accelerator_pods = true;
};

class BalancedAllocation final : public PreScorePlugin, public ScorePlugin {
 public:
  static Result<std::unique_ptr<Plugin>> Create(const PluginArgs* args);

  std::string_view Name() const noexcept override { return kBalancedAllocationName; }
  Status PreScore(const PodInfo& pod, const Snapshot& snapshot, std::span<const NodeIndex> feasible,
                  CycleState& state) const override;
  Status Score(const CycleContext& ctx, std::span<const NodeIndex> nodes,
               std::span<int64_t> out) const noexcept override;

 private:
  explicit BalancedAllocation(BalancedAllocationArgs args) : args_(std::move(args)) {}
  // The pod requests an extended resource that `resources` does not balance.
  bool AcceleratorNotBalanced(const PodInfo& pod, const Snapshot& snapshot) const noexcept;
  BalancedAllocationArgs args_;
};

}  // namespace copse::plugins
