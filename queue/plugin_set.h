#pragma once
// PluginSet: the plugins that rejected (or gate) a queued unit, as a 64-bit
// mask of profile-local plugin ids. The ids are the framework's plugin indices
// (plugins::PluginIndex, < plugins::kMaxPluginsPerProfile == 64), so a
// ScheduleResult's `unschedulable_plugins` mask converts with FromMask without
// translation. The queue does not depend on plugins/; it only agrees on the
// numbering.
//
// Thread-safety: a trivially copyable value type.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "core/check.h"

namespace copse::queue {

using PluginId = uint8_t;

// Plugin ids are < kMaxQueuePlugins (one bit each in a PluginSet).
inline constexpr size_t kMaxQueuePlugins = 64;

class PluginSet {
 public:
  constexpr PluginSet() = default;
  static constexpr PluginSet FromMask(uint64_t mask) noexcept { return PluginSet(mask); }
  static PluginSet Of(std::initializer_list<PluginId> ids) {
    PluginSet set;
    for (PluginId id : ids) set.Insert(id);
    return set;
  }

  // Ids >= kMaxQueuePlugins are a programming error and abort.
  void Insert(PluginId id) {
    COPSE_CHECK(id < kMaxQueuePlugins) << "plugin id " << int{id} << " out of range";
    mask_ |= uint64_t{1} << id;
  }
  constexpr bool Has(PluginId id) const noexcept {
    return id < kMaxQueuePlugins && (mask_ >> id & 1u) != 0;
  }
  constexpr bool Empty() const noexcept { return mask_ == 0; }
  constexpr size_t Size() const noexcept { return static_cast<size_t>(std::popcount(mask_)); }
  constexpr uint64_t mask() const noexcept { return mask_; }
  constexpr bool Intersects(PluginSet other) const noexcept { return (mask_ & other.mask_) != 0; }
  constexpr PluginSet Union(PluginSet other) const noexcept {
    return PluginSet(mask_ | other.mask_);
  }
  constexpr void Clear() noexcept { mask_ = 0; }

  friend constexpr bool operator==(PluginSet, PluginSet) = default;

 private:
  constexpr explicit PluginSet(uint64_t mask) : mask_(mask) {}
  uint64_t mask_ = 0;
};

}  // namespace copse::queue
