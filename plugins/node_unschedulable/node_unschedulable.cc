#include "plugins/node_unschedulable/node_unschedulable.h"

#include <algorithm>

#include "core/scheduling_types.h"

namespace copse::plugins {

void NodeUnschedulable::Filter(const CycleContext& ctx, std::span<const NodeIndex> nodes,
                               std::span<Status> out) const noexcept {
  const bool tolerates = TolerationsTolerateTaint(ctx.pod.tolerations, kTaintNodeUnschedulable, "",
                                                  TaintEffect::kNoSchedule);
  if (tolerates) {
    std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(nodes.size()),
              Status::Success());
    return;
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    out[i] = ctx.snapshot.unschedulable(nodes[i]) ? Status::Unresolvable(kReasonUnschedulable)
                                                  : Status::Success();
  }
}

std::string_view NodeUnschedulable::ReasonText(ReasonId reason) const noexcept {
  return reason == kReasonUnschedulable ? "node(s) were unschedulable" : "";
}

Result<std::unique_ptr<Plugin>> NodeUnschedulable::Create(const PluginArgs* /*args*/) {
  return std::unique_ptr<Plugin>(std::make_unique<NodeUnschedulable>());
}

std::vector<ClusterEventWithHint> NodeUnschedulable::EventsToRegister() const {
  return {
      {{EventResource::kNode, kActionAdd | kActionUpdateNodeTaint}, {}},
      {{EventResource::kUnscheduledPod, kActionUpdatePodToleration}, {}},
  };
}

}  // namespace copse::plugins
