#include "plugins/node_ports/node_ports.h"

#include "core/scheduling_types.h"

namespace copse::plugins {

Status NodePorts::PreFilter(const PodInfo& pod, const Snapshot& /*snapshot*/, CycleState& /*state*/,
                            PreFilterResult& /*result*/) const {
  return pod.host_ports.empty() ? Status::Skip() : Status::Success();
}

void NodePorts::Filter(const CycleContext& ctx, std::span<const NodeIndex> nodes,
                       std::span<Status> out) const noexcept {
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::span<const HostPort> used = ctx.snapshot.used_ports(nodes[i]);
    bool conflict = false;
    for (const HostPort& wanted : ctx.pod.host_ports) {
      if (HostPortConflicts(wanted, used)) {
        conflict = true;
        break;
      }
    }
    out[i] = conflict ? Status::Unschedulable(kReasonPortsInUse) : Status::Success();
  }
}

std::string_view NodePorts::ReasonText(ReasonId reason) const noexcept {
  return reason == kReasonPortsInUse ? "node(s) didn't have free ports for the requested pod ports"
                                     : "";
}

Result<std::unique_ptr<Plugin>> NodePorts::Create(const PluginArgs* /*args*/) {
  return std::unique_ptr<Plugin>(std::make_unique<NodePorts>());
}

std::vector<ClusterEventWithHint> NodePorts::EventsToRegister() const {
  return {
      {{EventResource::kAssignedPod, kActionDelete}, {}},
      {{EventResource::kNode, kActionAdd | kActionUpdate}, {}},
  };
}

}  // namespace copse::plugins
