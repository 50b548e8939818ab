#pragma once
// NodePorts (PreFilter, Filter): a node fits when none of the pod's host ports
// is already bound there (kube-scheduler nodeports.NodePorts).
//
// Algorithm:
//   1. PreFilter: Skip when the pod asks for no host port.
//   2. Filter: for each wanted (ip, protocol, port), conflict with a used one
//      on the same protocol and port when either binds 0.0.0.0 or both bind
//      the same IP: Unschedulable
//      "node(s) didn't have free ports for the requested pod ports".
//
// Thread-safety: stateless; reads the pod's ports directly.

#include <memory>
#include <string_view>

#include "core/result.h"
#include "plugins/framework/plugin.h"
#include "plugins/framework/registry.h"

namespace copse::plugins {

inline constexpr std::string_view kNodePortsName = "NodePorts";

class NodePorts final : public PreFilterPlugin, public FilterPlugin, public EnqueueExtensions {
 public:
  enum Reason : ReasonId { kReasonPortsInUse = 1 };

  std::string_view Name() const noexcept override { return kNodePortsName; }
  // kube-scheduler's EventsToRegister for this plugin (v1.32).
  std::vector<ClusterEventWithHint> EventsToRegister() const override;
  Status PreFilter(const PodInfo& pod, const Snapshot& snapshot, CycleState& state,
                   PreFilterResult& result) const override;
  void Filter(const CycleContext& ctx, std::span<const NodeIndex> nodes,
              std::span<Status> out) const noexcept override;

  static Result<std::unique_ptr<Plugin>> Create(const PluginArgs* args);

 protected:
  std::string_view ReasonText(ReasonId reason) const noexcept override;
};

}  // namespace copse::plugins
