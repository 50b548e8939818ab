#pragma once
// Plugin statuses: the outcome of one extension point for one pod (and, for
// Filter, one node). A Status is 16 bytes and never allocates: it carries a
// code, the profile-local index of the plugin that produced it, and a
// plugin-defined reason id with two plugin-defined words (e.g. a taint id, a
// bitmask of insufficient resources). Reason text is rendered only when a
// message or event is emitted, by the producing plugin (Plugin::AppendReasons).
//
// Codes (kube-scheduler framework.Code):
//   kSuccess                       the plugin is satisfied.
//   kError                         internal error; the cycle aborts (never retried as
//   "unschedulable"). kUnschedulable                 rejected; preemption may help (e.g.
//   Insufficient cpu). kUnschedulableAndUnresolvable  rejected; preemption cannot help (e.g. node
//   affinity). kWait                          Permit only: hold the pod until allowed or timed out.
//   kSkip                          PreFilter/PreScore/Bind: the plugin has nothing to do for
//                                  this pod; its Filter/Score is skipped this cycle.
//   kPending                       rejected, waiting for an external event (not a failure).
//
// Thread-safety: a trivially copyable value type.

#include <cstdint>
#include <string_view>

namespace copse::plugins {

enum class Code : uint8_t {
  kSuccess,
  kError,
  kUnschedulable,
  kUnschedulableAndUnresolvable,
  kWait,
  kSkip,
  kPending,
};

std::string_view CodeName(Code code) noexcept;

using ReasonId = uint16_t;
using PluginIndex = uint8_t;

inline constexpr PluginIndex kNoPlugin = 0xFF;
// Statuses the framework itself produces (PreFilter result exclusions, ...).
inline constexpr PluginIndex kFrameworkPlugin = 0xFE;
// A profile holds at most this many plugins (bitmasks of plugin indices are 64-bit).
inline constexpr size_t kMaxPluginsPerProfile = 64;

inline constexpr ReasonId kReasonNone = 0;
// Shared by all plugins: the state PreFilter/PreScore should have written is missing.
inline constexpr ReasonId kReasonMissingState = 0xFFFF;

struct Status {
  Code code = Code::kSuccess;
  PluginIndex plugin = kNoPlugin;  // set by the framework, not by plugins
  ReasonId reason = kReasonNone;
  uint32_t arg = 0;
  uint64_t detail = 0;

  static constexpr Status Make(Code code, ReasonId reason = kReasonNone, uint32_t arg = 0,
                               uint64_t detail = 0) noexcept {
    return Status{code, kNoPlugin, reason, arg, detail};
  }
  static constexpr Status Success() noexcept { return Status{}; }
  static constexpr Status Skip() noexcept { return Make(Code::kSkip); }
  static constexpr Status Unschedulable(ReasonId reason, uint32_t arg = 0,
                                        uint64_t detail = 0) noexcept {
    return Make(Code::kUnschedulable, reason, arg, detail);
  }
  static constexpr Status Unresolvable(ReasonId reason, uint32_t arg = 0,
                                       uint64_t detail = 0) noexcept {
    return Make(Code::kUnschedulableAndUnresolvable, reason, arg, detail);
  }
  static constexpr Status Error(ReasonId reason, uint32_t arg = 0, uint64_t detail = 0) noexcept {
    return Make(Code::kError, reason, arg, detail);
  }
  static constexpr Status MissingState() noexcept {
    return Make(Code::kError, kReasonMissingState);
  }

  constexpr bool IsSuccess() const noexcept { return code == Code::kSuccess; }
  constexpr bool IsSkip() const noexcept { return code == Code::kSkip; }
  constexpr bool IsError() const noexcept { return code == Code::kError; }
  // Unschedulable, UnschedulableAndUnresolvable or Pending.
  constexpr bool IsRejected() const noexcept {
    return code == Code::kUnschedulable || code == Code::kUnschedulableAndUnresolvable ||
           code == Code::kPending;
  }
  constexpr Status WithPlugin(PluginIndex index) const noexcept {
    Status s = *this;
    s.plugin = index;
    return s;
  }
  friend constexpr bool operator==(const Status&, const Status&) = default;
};

static_assert(sizeof(Status) == 16, "Status must stay a 16-byte value");

}  // namespace copse::plugins
