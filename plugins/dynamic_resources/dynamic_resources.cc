#include "plugins/dynamic_resources/dynamic_resources.h"

#include <string>

namespace copse::plugins {
namespace {

// "spec.resourceClaims[0] "gpus" (ResourceClaim "default/pod-gpus-x7k2")".
std::string DescribeClaim(const PodInfo& pod, size_t index) {
  const PodClaimRef& ref = pod.resource_claims[index];
  std::string out = "spec.resourceClaims[" + std::to_string(index) + "] \"" + ref.name + "\"";
  switch (ref.state) {
    case PodClaimRef::State::kResolved:
      out += " (ResourceClaim \"" + pod.namespace_name + "/" + ref.claim_name + "\")";
      break;
    case PodClaimRef::State::kNotCreated:
      out += " (its ResourceClaim is not created yet)";
      break;
    case PodClaimRef::State::kInvalid:
      out += " (names neither resourceClaimName nor resourceClaimTemplateName)";
      break;
    case PodClaimRef::State::kNotNeeded:
      break;
  }
  return out;
}

}  // namespace

Status DynamicResources::PreFilter(const PodInfo& pod, const Snapshot& /*snapshot*/,
                                   CycleState& /*state*/, PreFilterResult& result) const {
  for (size_t i = 0; i < pod.resource_claims.size(); ++i) {
    if (pod.resource_claims[i].state == PodClaimRef::State::kNotNeeded) continue;
    result.message = "pod " + pod.FullName() + " claims devices through " + DescribeClaim(pod, i) +
                     ", which this scheduler cannot allocate (Dynamic Resource Allocation)";
    return Status::Unresolvable(kReasonClaimsNotAllocatable);
  }
  return Status::Skip();
}

std::string_view DynamicResources::ReasonText(ReasonId reason) const noexcept {
  return reason == kReasonClaimsNotAllocatable
             ? "pod claims devices (resourceClaims) that this scheduler cannot allocate"
             : "";
}

Result<std::unique_ptr<Plugin>> DynamicResources::Create(const PluginArgs* /*args*/) {
  return std::unique_ptr<Plugin>(std::make_unique<DynamicResources>());
}

std::vector<ClusterEventWithHint> DynamicResources::EventsToRegister() const {
  return {
      {{EventResource::kNode, kActionAdd | kActionUpdateNodeLabel}, {}},
      {{EventResource::kUnscheduledPod, kActionUpdateOther}, {}},
  };
}

}  // namespace copse::plugins
