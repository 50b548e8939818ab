#include "plugins/framework/registry.h"

namespace copse::plugins {

copse::Status Registry::Register(std::string name, PluginFactory factory) {
  if (factories_.count(name) != 0) {
    return MakeError(ErrorCode::kAlreadyExists, "plugin \"" + name + "\" is already registered");
  }
  factories_.emplace(std::move(name), std::move(factory));
  return copse::Status::Ok();
}

const PluginFactory* Registry::Find(std::string_view name) const noexcept {
  auto it = factories_.find(name);
  return it == factories_.end() ? nullptr : &it->second;
}

std::vector<std::string> Registry::Names() const {
  std::vector<std::string> names;
  for (const auto& [name, factory] : factories_) names.push_back(name);
  return names;
}

}  // namespace copse::plugins
