#pragma once
// NodeUnschedulable (Filter): cordoned nodes (spec.unschedulable) accept only
// pods tolerating node.kubernetes.io/unschedulable:NoSchedule
// (kube-scheduler nodeunschedulable.NodeUnschedulable).
//
// Algorithm:
//   1. Once per chunk, check whether the pod tolerates the unschedulable taint.
//   2. A node fits unless it is unschedulable and the pod does not tolerate
//      it: UnschedulableAndUnresolvable "node(s) were unschedulable".
//
// Thread-safety: stateless.

#include <memory>
#include <string_view>

#include "core/result.h"
#include "plugins/framework/plugin.h"
#include "plugins/framework/registry.h"

namespace copse::plugins {

inline constexpr std::string_view kNodeUnschedulableName = "NodeUnschedulable";

class NodeUnschedulable final : public FilterPlugin, public EnqueueExtensions {
 public:
  enum Reason : ReasonId { kReasonUnschedulable = 1 };

  std::string_view Name() const noexcept override { return kNodeUnschedulableName; }
  // kube-scheduler's EventsToRegister for this plugin (v1.32).
  std::vector<ClusterEventWithHint> EventsToRegister() const override;
  void Filter(const CycleContext& ctx, std::span<const NodeIndex> nodes,
              std::span<Status> out) const noexcept override;

  static Result<std::unique_ptr<Plugin>> Create(const PluginArgs* args);

 protected:
  std::string_view ReasonText(ReasonId reason) const noexcept override;
};

}  // namespace copse::plugins
