#include "plugins/scheduling_gates/scheduling_gates.h"

namespace copse::plugins {

Status SchedulingGates::PreEnqueue(const PodInfo& pod) const noexcept {
  return pod.scheduling_gates.empty() ? Status::Success() : Status::Unresolvable(kReasonGated);
}

std::vector<ClusterEventWithHint> SchedulingGates::EventsToRegister() const {
  return {{{EventResource::kUnscheduledPod, kActionUpdatePodSchedulingGatesEliminated}, {}}};
}

std::string_view SchedulingGates::ReasonText(ReasonId reason) const noexcept {
  return reason == kReasonGated ? "waiting for scheduling gates" : "";
}

Result<std::unique_ptr<Plugin>> SchedulingGates::Create(const PluginArgs* /*args*/) {
  return std::unique_ptr<Plugin>(std::make_unique<SchedulingGates>());
}

}  // namespace copse::plugins
