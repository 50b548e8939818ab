#pragma once
// Small scheduling vocabulary shared by pods and nodes: taints, tolerations,
// host ports and well-known label keys, with core/v1 semantics.
//
// Thread-safety: value types; all predicates are const, noexcept and
// allocation-free.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/result.h"

namespace copse {

inline constexpr std::string_view kLabelHostname = "kubernetes.io/hostname";
inline constexpr std::string_view kLabelTopologyZone = "topology.kubernetes.io/zone";
inline constexpr std::string_view kLabelTopologyRegion = "topology.kubernetes.io/region";
inline constexpr std::string_view kTaintNodeUnschedulable = "node.kubernetes.io/unschedulable";

enum class TaintEffect : uint8_t { kNoSchedule, kPreferNoSchedule, kNoExecute };

// "NoSchedule", "PreferNoSchedule", "NoExecute" (case-sensitive).
Result<TaintEffect> ParseTaintEffect(std::string_view text);
std::string_view TaintEffectName(TaintEffect effect) noexcept;

struct Taint {
  std::string key;
  std::string value;
  TaintEffect effect = TaintEffect::kNoSchedule;
  bool operator==(const Taint&) const = default;
};

enum class TolerationOperator : uint8_t { kEqual, kExists };

struct Toleration {
  std::string key;  // empty with kExists: every key
  TolerationOperator op = TolerationOperator::kEqual;
  std::string value;
  std::optional<TaintEffect> effect;  // nullopt: every effect

  // core/v1 Toleration.ToleratesTaint.
  bool ToleratesTaint(std::string_view taint_key, std::string_view taint_value,
                      TaintEffect taint_effect) const noexcept;
  bool ToleratesTaint(const Taint& taint) const noexcept {
    return ToleratesTaint(taint.key, taint.value, taint.effect);
  }
  bool operator==(const Toleration&) const = default;
};

// True when any toleration tolerates the taint (v1helper.TolerationsTolerateTaint).
bool TolerationsTolerateTaint(std::span<const Toleration> tolerations, const Taint& taint) noexcept;
bool TolerationsTolerateTaint(std::span<const Toleration> tolerations, std::string_view key,
                              std::string_view value, TaintEffect effect) noexcept;

enum class Protocol : uint8_t { kTCP, kUDP, kSCTP };

// "TCP" (also for ""), "UDP", "SCTP".
Result<Protocol> ParseProtocol(std::string_view text);
std::string_view ProtocolName(Protocol protocol) noexcept;

inline constexpr std::string_view kBindAllHostIP = "0.0.0.0";

// A host port a container binds, as the scheduler's HostPortInfo keeps it:
// the IP defaults to 0.0.0.0 (every address).
struct HostPort {
  std::string ip = std::string(kBindAllHostIP);
  Protocol protocol = Protocol::kTCP;
  int32_t port = 0;

  // Applies the defaults: an empty IP becomes 0.0.0.0.
  static HostPort Make(std::string_view ip, Protocol protocol, int32_t port);
  bool operator==(const HostPort&) const = default;
};

// HostPortInfo.CheckConflict: a wanted port conflicts with a used one on the
// same protocol and port when either side binds 0.0.0.0 or both bind the same
// IP. Ports <= 0 never conflict.
bool HostPortConflicts(const HostPort& wanted, std::span<const HostPort> used) noexcept;

}  // namespace copse
