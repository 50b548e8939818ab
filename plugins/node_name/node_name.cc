#include "plugins/node_name/node_name.h"

#include <algorithm>

namespace copse::plugins {

void NodeName::Filter(const CycleContext& ctx, std::span<const NodeIndex> nodes,
                      std::span<Status> out) const noexcept {
  const std::string& wanted = ctx.pod.node_name;
  if (wanted.empty()) {
    std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(nodes.size()),
              Status::Success());
    return;
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    out[i] = ctx.snapshot.node_name(nodes[i]) == wanted ? Status::Success()
                                                        : Status::Unresolvable(kReasonNodeName);
  }
}

std::string_view NodeName::ReasonText(ReasonId reason) const noexcept {
  return reason == kReasonNodeName ? "node(s) didn't match the requested node name" : "";
}

Result<std::unique_ptr<Plugin>> NodeName::Create(const PluginArgs* /*args*/) {
  return std::unique_ptr<Plugin>(std::make_unique<NodeName>());
}

std::vector<ClusterEventWithHint> NodeName::EventsToRegister() const {
  return {
      {{EventResource::kNode, kActionAdd | kActionUpdate}, {}},
  };
}

}  // namespace copse::plugins
