#pragma once
// InterPodAffinity (PreFilter with extensions, Filter, PreScore, Score):
// required pod affinity / anti-affinity of the incoming pod, required
// anti-affinity of existing pods against it, and preferred terms of both
// sides (kube-scheduler interpodaffinity.InterPodAffinity, default weight 2).
//
// Counts are kept per topology key slot as dense arrays over the key's
// interned label values (LabelColumn ids), so Filter is array lookups.
//
// Filter algorithm:
//   1. PreFilter: resolve the incoming pod's required terms (namespaces plus
//      namespaces selected by namespaceSelector from the snapshot's namespace
//      labels; {} selects all). Then
//      a. for every existing pod with required anti-affinity whose term
//         matches the incoming pod (with the incoming namespace's labels),
//         count +1 at (term key, value of that pod's node);
//      b. for every existing pod matching ALL incoming affinity terms, count
//         +1 per affinity term at (term key, node value);
//      c. for every existing pod and incoming anti-affinity term it matches,
//         count +1 at (term key, node value).
//      Skip when there are no incoming terms and (a) counted nothing.
//   2. Filter, per node, in kube's order:
//      affinity: every term's key must be on the node, and each count > 0 —
//        unless no pod matches any term anywhere and the pod matches all its
//        own terms (first pod of a self-affine group) ->
//        UnschedulableAndUnresolvable "node(s) didn't match pod affinity rules";
//      anti-affinity: a count > 0 at the node's value of any term key ->
//        Unschedulable "node(s) didn't match pod anti-affinity rules";
//      existing anti-affinity: a count > 0 at any of the node's values ->
//        Unschedulable "node(s) didn't satisfy existing pods anti-affinity rules".
//   3. AddPod/RemovePod adjust (a)-(c) by +-1 for one pod on one node.
//
// Score algorithm:
//   1. PreScore: over all nodes (only nodes hosting pods with affinity when
//      the incoming pod has no preferred terms), for each existing pod add at
//      (key, value of its node): +w for incoming preferred affinity terms it
//      matches, -w for incoming preferred anti-affinity terms, +hardPodAffinityWeight
//      for its required affinity terms matching the incoming pod, +w / -w for
//      its preferred affinity / anti-affinity terms matching the incoming pod.
//      Skip when nothing was added.
//   2. Score: sum over keys of the node's value's total.
//   3. NormalizeScore: min-max scaled to [0, 100].
//
// Thread-safety: immutable after construction; per-cycle data in CycleState.
// States point at the incoming PodInfo's terms: the pod must outlive the cycle.

#include <memory>
#include <string_view>

#include "core/result.h"
#include "plugins/framework/plugin.h"
#include "plugins/framework/registry.h"

namespace copse::plugins {

inline constexpr std::string_view kInterPodAffinityName = "InterPodAffinity";

struct InterPodAffinityArgs {
  int32_t hard_pod_affinity_weight = 1;  // 0..100
  bool ignore_preferred_terms_of_existing_pods = false;
};

class InterPodAffinity final : public PreFilterPlugin,
                               public FilterPlugin,
                               public PreScorePlugin,
                               public ScorePlugin,
                               public EnqueueExtensions {
 public:
  enum Reason : ReasonId {
    kReasonAffinity = 1,
    kReasonAntiAffinity = 2,
    kReasonExistingAntiAffinity = 3
  };

  static Result<std::unique_ptr<Plugin>> Create(const PluginArgs* args);

  std::string_view Name() const noexcept override { return kInterPodAffinityName; }
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
  explicit InterPodAffinity(InterPodAffinityArgs args) : args_(args) {}
  Status Update(CycleState& state, const PodInfo& pod, const PodInfo& other, NodeIndex node,
                const Snapshot& snapshot, int64_t delta) const;

  InterPodAffinityArgs args_;
};

}  // namespace copse::plugins
