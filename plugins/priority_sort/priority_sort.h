#pragma once
// PrioritySort (QueueSort): higher priority first; equal priorities in the
// order they entered the queue (kube-scheduler queuesort.PrioritySort).
//
// Algorithm:
//   1. Compare the units' priorities (a pod's own, a pod group's lowest
//      member's); the higher one goes first.
//   2. On a tie, the earlier queue timestamp goes first.
//
// Thread-safety: stateless.

#include <memory>
#include <string_view>

#include "core/result.h"
#include "plugins/framework/plugin.h"
#include "plugins/framework/registry.h"

namespace copse::plugins {

inline constexpr std::string_view kPrioritySortName = "PrioritySort";

class PrioritySort final : public QueueSortPlugin {
 public:
  std::string_view Name() const noexcept override { return kPrioritySortName; }
  bool Less(const QueuedPodView& a, const QueuedPodView& b) const noexcept override;

  static Result<std::unique_ptr<Plugin>> Create(const PluginArgs* args);
};

}  // namespace copse::plugins
