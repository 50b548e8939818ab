#include "core/scheduling_types.h"

namespace copse {

Result<TaintEffect> ParseTaintEffect(std::string_view text) {
  if (text == "NoSchedule") return TaintEffect::kNoSchedule;
  if (text == "PreferNoSchedule") return TaintEffect::kPreferNoSchedule;
  if (text == "NoExecute") return TaintEffect::kNoExecute;
  return MakeError(ErrorCode::kInvalid,
                   "unsupported taint effect \"" + std::string(text) +
                       "\": must be NoSchedule, PreferNoSchedule or NoExecute");
}

std::string_view TaintEffectName(TaintEffect effect) noexcept {
  switch (effect) {
    case TaintEffect::kNoSchedule:
      return "NoSchedule";
    case TaintEffect::kPreferNoSchedule:
      return "PreferNoSchedule";
    case TaintEffect::kNoExecute:
      return "NoExecute";
  }
  return "";
}

bool Toleration::ToleratesTaint(std::string_view taint_key, std::string_view taint_value,
                                TaintEffect taint_effect) const noexcept {
  if (effect.has_value() && *effect != taint_effect) return false;
  if (!key.empty() && key != taint_key) return false;
  switch (op) {
    case TolerationOperator::kEqual:
      return value == taint_value;
    case TolerationOperator::kExists:
      return true;
  }
  return false;
}

bool TolerationsTolerateTaint(std::span<const Toleration> tolerations, std::string_view key,
                              std::string_view value, TaintEffect effect) noexcept {
  for (const Toleration& t : tolerations) {
    if (t.ToleratesTaint(key, value, effect)) return true;
  }
  return false;
}

bool TolerationsTolerateTaint(std::span<const Toleration> tolerations,
                              const Taint& taint) noexcept {
  return TolerationsTolerateTaint(tolerations, taint.key, taint.value, taint.effect);
}

Result<Protocol> ParseProtocol(std::string_view text) {
  if (text.empty() || text == "TCP") return Protocol::kTCP;
  if (text == "UDP") return Protocol::kUDP;
  if (text == "SCTP") return Protocol::kSCTP;
  return MakeError(ErrorCode::kInvalid,
                   "unsupported protocol \"" + std::string(text) + "\": must be TCP, UDP or SCTP");
}

std::string_view ProtocolName(Protocol protocol) noexcept {
  switch (protocol) {
    case Protocol::kTCP:
      return "TCP";
    case Protocol::kUDP:
      return "UDP";
    case Protocol::kSCTP:
      return "SCTP";
  }
  return "";
}

HostPort HostPort::Make(std::string_view ip, Protocol protocol, int32_t port) {
  HostPort p;
  p.ip = ip.empty() ? std::string(kBindAllHostIP) : std::string(ip);
  p.protocol = protocol;
  p.port = port;
  return p;
}

bool HostPortConflicts(const HostPort& wanted, std::span<const HostPort> used) noexcept {
  if (wanted.port <= 0) return false;
  const bool wanted_all = wanted.ip == kBindAllHostIP;
  for (const HostPort& u : used) {
    if (u.port != wanted.port || u.protocol != wanted.protocol) continue;
    if (wanted_all || u.ip == kBindAllHostIP || u.ip == wanted.ip) return true;
  }
  return false;
}

}  // namespace copse
