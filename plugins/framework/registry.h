#pragma once
// Registry: plugin name -> factory. Populated explicitly by one function
// (plugins/defaults/defaults.h: RegisterDefaultPlugins), never by static
// initialisers, so the set of plugins in a binary is visible in one place.
//
// Plugin arguments are plain structs (FitArgs, ...) carried in a std::any;
// a factory receives null for "defaults" and rejects arguments of the wrong type.
//
// Thread-safety: fill it once at startup, then read from any thread.

#include <any>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "plugins/framework/plugin.h"

namespace copse::plugins {

using PluginArgs = std::any;
using PluginFactory = std::function<Result<std::unique_ptr<Plugin>>(const PluginArgs* args)>;

class Registry {
 public:
  // kAlreadyExists when the name is taken.
  copse::Status Register(std::string name, PluginFactory factory);
  const PluginFactory* Find(std::string_view name) const noexcept;
  std::vector<std::string> Names() const;

 private:
  std::map<std::string, PluginFactory, std::less<>> factories_;
};

// Unpacks typed args for a factory: defaults when `args` is null, kInvalid
// naming the plugin when the std::any holds another type.
template <typename Args>
Result<Args> ArgsOrDefault(const PluginArgs* args, std::string_view plugin_name) {
  if (args == nullptr || !args->has_value()) return Args{};
  if (const Args* typed = std::any_cast<Args>(args)) return *typed;
  return MakeError(ErrorCode::kInvalid,
                   "plugin " + std::string(plugin_name) + ": arguments of the wrong type");
}

}  // namespace copse::plugins
