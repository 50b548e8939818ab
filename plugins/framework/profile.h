#pragma once
// Profile: which plugins run at which extension point, with score weights and
// plugin arguments — kube-scheduler's KubeSchedulerProfile after defaulting.
//
// Expansion (as kube-scheduler's frameworkImpl.expandMultiPointPlugins):
//   1. A plugin enabled in `multi_point` is enabled at every extension point it
//      implements, unless disabled there (by name, or "*" for all).
//   2. A plugin enabled both in multi_point and at a specific point keeps the
//      specific entry (an explicit override).
//   3. Order per point: overrides (in the specific point's order), then
//      multi_point plugins, then the remaining specific entries.
//   4. Score weights: the specific Score entry's weight, else multi_point's,
//      else 1.
//
// Thread-safety: a value type.

#include <any>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace copse::plugins {

struct PluginRef {
  std::string name;
  int32_t weight = 0;  // Score only; 0 means "unset" (-> 1)
};

struct PluginSet {
  std::vector<PluginRef> enabled;
  std::vector<std::string> disabled;  // "*" disables every multi_point plugin at this point
};

struct PluginsConfig {
  PluginSet multi_point;
  PluginSet pre_enqueue;
  PluginSet queue_sort;
  PluginSet pre_filter;
  PluginSet filter;
  PluginSet post_filter;
  PluginSet pre_score;
  PluginSet score;
  PluginSet reserve;
  PluginSet permit;
  PluginSet pre_bind;
  PluginSet bind;
  PluginSet post_bind;
};

struct Profile {
  std::string scheduler_name = "copse-scheduler";
  PluginsConfig plugins;
  // Plugin name -> its args struct (e.g. plugins::FitArgs); absent: defaults.
  std::map<std::string, std::any, std::less<>> plugin_args;
  // 0: adaptive (50% - nodes/125, at least 5%), as kube-scheduler.
  int32_t percentage_of_nodes_to_score = 0;
};

}  // namespace copse::plugins
