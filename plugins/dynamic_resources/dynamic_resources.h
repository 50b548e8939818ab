#pragma once
// DynamicResources (PreFilter): pods that claim devices through Dynamic
// Resource Allocation (spec.resourceClaims, resource.k8s.io) are never bound
// without their claims allocated.
//
// Algorithm:
//   1. PreFilter: Skip a pod without resourceClaims (or whose every entry the
//      resourceclaim controller reported as not needed).
//   2. Otherwise UnschedulableAndUnresolvable, with a message naming the
//      first claim ("spec.resourceClaims[0] \"gpus\" (ResourceClaim
//      \"default/pod-gpus-x7k2\")"): this scheduler does not allocate devices
//      yet, and binding such a pod to a node would leave it waiting forever
//      for devices the kubelet cannot prepare.
//   3. EventsToRegister: node additions and label changes, and updates of the
//      pending pod (its status.resourceClaimStatuses), as kube's plugin.
//
// Thread-safety: stateless.

#include <memory>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "plugins/framework/plugin.h"
#include "plugins/framework/registry.h"

namespace copse::plugins {

inline constexpr std::string_view kDynamicResourcesName = "DynamicResources";

class DynamicResources final : public PreFilterPlugin, public EnqueueExtensions {
 public:
  enum Reason : ReasonId { kReasonClaimsNotAllocatable = 1 };

  std::string_view Name() const noexcept override { return kDynamicResourcesName; }
  std::vector<ClusterEventWithHint> EventsToRegister() const override;
  Status PreFilter(const PodInfo& pod, const Snapshot& snapshot, CycleState& state,
                   PreFilterResult& result) const override;

  static Result<std::unique_ptr<Plugin>> Create(const PluginArgs* args);

 protected:
  std::string_view ReasonText(ReasonId reason) const noexcept override;
};

}  // namespace copse::plugins
