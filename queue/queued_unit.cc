#include "queue/queued_unit.h"

namespace copse::queue {

std::string_view UnitKindName(UnitKind kind) noexcept {
  switch (kind) {
    case UnitKind::kPod:
      return "pod";
    case UnitKind::kPodGroup:
      return "podgroup";
  }
  return "unknown";
}

std::string UnitKey::ToString() const {
  std::string out(UnitKindName(kind));
  out += ':';
  out += namespace_name;
  out += '/';
  out += name;
  return out;
}

size_t UnitKeyHash::operator()(const UnitKeyRef& key) const noexcept {
  const std::hash<std::string_view> hash;
  size_t h = hash(key.namespace_name);
  h ^= hash(key.name) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h ^= static_cast<size_t>(key.kind) * 0xff51afd7ed558ccdULL;
  return h;
}

std::string_view QueueLocationName(QueueLocation location) noexcept {
  switch (location) {
    case QueueLocation::kNone:
      return "None";
    case QueueLocation::kActive:
      return "Active";
    case QueueLocation::kBackoff:
      return "Backoff";
    case QueueLocation::kUnschedulable:
      return "Unschedulable";
    case QueueLocation::kGated:
      return "Gated";
    case QueueLocation::kInFlight:
      return "InFlight";
  }
  return "Unknown";
}

}  // namespace copse::queue
