#pragma once
// NodeName (Filter): a pod with spec.nodeName fits only the node of that name
// (kube-scheduler nodename.NodeName).
//
// Algorithm:
//   1. A pod without nodeName fits every node.
//   2. Otherwise a node fits iff its name equals nodeName; others get
//      UnschedulableAndUnresolvable "node(s) didn't match the requested node name".
//
// Thread-safety: stateless.

#include <memory>
#include <string_view>

#include "core/result.h"
#include "plugins/framework/plugin.h"
#include "plugins/framework/registry.h"

namespace copse::plugins {

inline constexpr std::string_view kNodeNameName = "NodeName";

class NodeName final : public FilterPlugin, public EnqueueExtensions {
 public:
  enum Reason : ReasonId { kReasonNodeName = 1 };

  std::string_view Name() const noexcept override { return kNodeNameName; }
  // kube-scheduler's EventsToRegister for this plugin (v1.32).
  std::vector<ClusterEventWithHint> EventsToRegister() const override;
  void Filter(const CycleContext& ctx, std::span<const NodeIndex> nodes,
              std::span<Status> out) const noexcept override;

  static Result<std::unique_ptr<Plugin>> Create(const PluginArgs* args);

 protected:
  std::string_view ReasonText(ReasonId reason) const noexcept override;
};

}  // namespace copse::plugins
