#include "plugins/default_binder/default_binder.h"

namespace copse::plugins {

Status DefaultBinder::Bind(CycleState& /*state*/, const PodInfo& pod, std::string_view node_name,
                           BindingClient& client) {
  client.PostBinding(pod, node_name);
  return Status::Success();
}

Result<std::unique_ptr<Plugin>> DefaultBinder::Create(const PluginArgs* /*args*/) {
  return std::unique_ptr<Plugin>(std::make_unique<DefaultBinder>());
}

}  // namespace copse::plugins
