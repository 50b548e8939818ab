#pragma once
// DefaultBinder (Bind): binds the pod to the chosen node with the API's
// binding subresource (kube-scheduler defaultbinder.DefaultBinder). The
// plugin does no I/O itself: it asks the runtime's BindingClient, whose API
// writer POSTs pods/<name>/binding asynchronously and reports the outcome to
// the scheduling loop.
//
// Algorithm:
//   1. client.PostBinding(pod, node_name).
//   2. Return Success (the outcome arrives later; a failed bind is the
//      runtime's to handle: unreserve, forget, requeue).
//
// Thread-safety: stateless; called on the scheduling loop.

#include <memory>
#include <string_view>

#include "core/result.h"
#include "plugins/framework/plugin.h"
#include "plugins/framework/registry.h"

namespace copse::plugins {

inline constexpr std::string_view kDefaultBinderName = "DefaultBinder";

class DefaultBinder final : public BindPlugin {
 public:
  std::string_view Name() const noexcept override { return kDefaultBinderName; }
  Status Bind(CycleState& state, const PodInfo& pod, std::string_view node_name,
              BindingClient& client) override;

  static Result<std::unique_ptr<Plugin>> Create(const PluginArgs* args);
};

}  // namespace copse::plugins
