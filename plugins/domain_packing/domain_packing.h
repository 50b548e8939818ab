#pragma once
// DomainPacking (PreScore, Score), copse's: pods that request an accelerator
// go to the topology domains with the least free accelerators first, at every
// configured level, so that whole racks (and blocks, zones) stay free for the
// gangs that require one (KAI's "least free domain" applied to every level,
// not only a gang's required one). Together with NodeResourcesFit's
// acceleratorStrategy (MostAllocated: partly used nodes first) this packs a
// gang without a topology constraint into the most used nodes of the most
// used racks.
//
// Algorithm:
//   1. PreScore: Skip unless the pod requests an accelerator
//      (RequestsAccelerator over `resources`). Per level (a node label key,
//      outermost first), per label value: the free amount of the
//      accelerators the pod requests (allocatable - requested, weighted)
//      summed over the value's nodes; and the largest such sum at the level.
//   2. Score, per node: per level where the node has the label,
//      1000 * (max_free - free(domain)) / max_free (the fullest domain 1000,
//      an empty one of the largest size 0), averaged with weight l + 1 for
//      level l (inner levels weigh more: a free rack matters more than a
//      free zone), scaled to 0..100. A node with none of the labels scores 0.
//   Domains are label values: a value must name one domain cluster-wide (as
//   copse local's rack-1-2-7 does); equal values under different parents
//   count as one domain.
//   Within one gang's placement the domain sums are those of the pass's
//   PreScore (members reusing a pass see the free capacity before their
//   class started; the gang's domain is chosen by the topology placement);
//   the node's own fill is NodeResourcesFit's concern. Single pods never
//   reuse a pass this plugin scored (ScoreDependsOnOtherNodes): each gets
//   fresh domain sums.
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

inline constexpr std::string_view kDomainPackingName = "DomainPacking";
inline constexpr size_t kMaxPackingLevels = 8;

struct DomainPackingArgs {
  // Node label keys, outermost first; the labels copse local and the
  // well-known zone label use by default.
  std::vector<std::string> levels = {"topology.kubernetes.io/zone", "copse.dev/block",
                                     "copse.dev/rack"};
  // The accelerator resources and weights; empty: every extended resource
  // the pod requests, weight 1.
  std::vector<ResourceSpec> resources;
};

class DomainPacking final : public PreScorePlugin, public ScorePlugin {
 public:
  // Errors name the field: DomainPackingArgs.levels[i], .resources[i].
  static Result<std::unique_ptr<Plugin>> Create(const PluginArgs* args);

  std::string_view Name() const noexcept override { return kDomainPackingName; }
  Status PreScore(const PodInfo& pod, const Snapshot& snapshot, std::span<const NodeIndex> feasible,
                  CycleState& state) const override;
  Status Score(const CycleContext& ctx, std::span<const NodeIndex> nodes,
               std::span<int64_t> out) const noexcept override;
  // A pod placed in a domain changes that domain's sum for every node in it.
  bool ScoreDependsOnOtherNodes() const noexcept override { return true; }

 private:
  explicit DomainPacking(DomainPackingArgs args) : args_(std::move(args)) {}
  DomainPackingArgs args_;
};

}  // namespace copse::plugins
