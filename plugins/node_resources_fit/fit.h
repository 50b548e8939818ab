#pragma once
// NodeResourcesFit (PreFilter, Filter, PreScore, Score): a node fits when it
// has a free pod slot and enough unrequested allocatable for every resource
// the pod requests; scoring follows the configured strategy
// (kube-scheduler noderesources.Fit, default weight 1, LeastAllocated on
// cpu:1, memory:1).
//
// Algorithm:
//   1. PreFilter: take the pod's effective requests (already including init
//      containers, sidecars and overhead) and list the resources with a
//      non-zero request, minus ignored extended resources / resource groups.
//   2. Filter, per node, collecting every failure as one bit per resource:
//      pods + 1 > allocatable pods -> "Too many pods";
//      request > allocatable - requested -> "Insufficient <name>".
//      Any bit -> Unschedulable with all reasons.
//   3. PreScore: resolve the strategy's resources and the pod's requests
//      (cpu/memory with per-container defaults for unset requests).
//   4. Score: LeastAllocated, MostAllocated or RequestedToCapacityRatio over
//      (allocatable, node requests + pod request) of those resources.
//   copse: a pod that requests an accelerator (RequestsAccelerator over
//   acceleratorStrategy.resources) is scored by acceleratorStrategy instead,
//   on the accelerator resources it requests only: by default MostAllocated,
//   as KAI's GPU bin packing, so accelerator pods fill partly used nodes and
//   leave whole nodes free; CPU-only pods keep scoringStrategy (kube's
//   LeastAllocated). acceleratorStrategy.type None scores every pod by
//   scoringStrategy, as kube-scheduler does.
//   Stranding (MostAllocated accelerators, when the snapshot knows what the
//   waiting pods request, core/pending_requests.h): free accelerators fewer
//   than the smallest request of every other waiting pod are stranded. The
//   node's allocated amount loses twice what placing the pod there newly
//   strands and gains twice what it un-strands (clamped to 0..capacity):
//   with 2-GPU pods waiting, a 2-GPU pod takes a node with 4 free (75) over
//   one with 3 free (62, 1 GPU left that nobody can use); with 4-GPU pods
//   waiting, it takes the node with 3 free (100: those 3 were of no use to
//   them) and leaves one with 6 free (50) for them.
//
// Thread-safety: immutable after construction; per-cycle data in CycleState.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "plugins/framework/plugin.h"
#include "plugins/framework/registry.h"
#include "plugins/node_resources_fit/resource_allocation.h"

namespace copse::plugins {

inline constexpr std::string_view kNodeResourcesFitName = "NodeResourcesFit";

enum class ScoringStrategyType : uint8_t {
  kLeastAllocated,
  kMostAllocated,
  kRequestedToCapacityRatio
};

struct ScoringStrategy {
  ScoringStrategyType type = ScoringStrategyType::kLeastAllocated;
  std::vector<ResourceSpec> resources = {{"cpu", 1}, {"memory", 1}};
  // RequestedToCapacityRatio only: utilization 0..100 ascending, score 0..10.
  std::vector<UtilizationShapePoint> shape;
};

// copse: how pods requesting an accelerator are scored (see the file comment).
struct AcceleratorStrategy {
  bool enabled = true;  // false: type None
  // kLeastAllocated or kMostAllocated.
  ScoringStrategyType type = ScoringStrategyType::kMostAllocated;
  // The accelerator resources and their weights; empty: every extended
  // resource the pod requests, weight 1.
  std::vector<ResourceSpec> resources;
};

struct FitArgs {
  std::vector<std::string> ignored_resources;        // extended resources not checked
  std::vector<std::string> ignored_resource_groups;  // prefixes ("example.com") not checked
  ScoringStrategy scoring_strategy;
  AcceleratorStrategy accelerator_strategy;
};

class Fit final : public PreFilterPlugin,
                  public FilterPlugin,
                  public PreScorePlugin,
                  public ScorePlugin,
                  public EnqueueExtensions {
 public:
  // detail: bit i set when resource id i is insufficient (bit kResourceIdPods: too many pods).
  enum Reason : ReasonId { kReasonInsufficient = 1 };

  // Validates like ValidateNodeResourcesFitArgs; errors name the field.
  static Result<std::unique_ptr<Plugin>> Create(const PluginArgs* args);

  std::string_view Name() const noexcept override { return kNodeResourcesFitName; }
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
  void AppendReasons(const Status& status, const Snapshot& snapshot,
                     std::vector<std::string>& out) const override;

 private:
  explicit Fit(FitArgs args);
  bool Ignored(std::string_view resource_name) const noexcept;

  FitArgs args_;
  std::vector<UtilizationShapePoint> scaled_shape_;
};

}  // namespace copse::plugins
