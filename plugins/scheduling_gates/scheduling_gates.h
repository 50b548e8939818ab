#pragma once
// SchedulingGates (PreEnqueue): a pod with spec.schedulingGates waits outside
// the active queue, costing no scheduling cycles, until its last gate is
// removed (kube-scheduler schedulinggates.SchedulingGates). A gated gang member
// does not count towards its group's minimum either.
//
// Algorithm:
//   1. No gates: Success (admit).
//   2. Otherwise UnschedulableAndUnresolvable, reason "waiting for scheduling
//      gates".
//   3. EventsToRegister: an update of the pending pod that removes its gates
//      (the queue also re-runs PreEnqueue on every update of a gated pod).
//
// Thread-safety: stateless.

#include <memory>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "plugins/framework/plugin.h"
#include "plugins/framework/registry.h"

namespace copse::plugins {

inline constexpr std::string_view kSchedulingGatesName = "SchedulingGates";

class SchedulingGates final : public PreEnqueuePlugin, public EnqueueExtensions {
 public:
  enum Reason : ReasonId { kReasonGated = 1 };

  std::string_view Name() const noexcept override { return kSchedulingGatesName; }
  Status PreEnqueue(const PodInfo& pod) const noexcept override;
  std::vector<ClusterEventWithHint> EventsToRegister() const override;

  static Result<std::unique_ptr<Plugin>> Create(const PluginArgs* args);

 protected:
  std::string_view ReasonText(ReasonId reason) const noexcept override;
};

}  // namespace copse::plugins
