#pragma once
// The unit the scheduling queue orders: a single pod today, one PodGroup
// instance (KEP-4671 gang) next. Everything the queue keeps per unit — key,
// priority, timestamps, attempt counters, rejecting plugins — lives here, so
// that adding groups adds a kind, not a second queue:
//   - kPod: `pods` holds exactly the pod; priority is the pod's priority.
//   - kPodGroup: `pods` holds the group's member pods (members are not queued
//     individually); priority is the lowest member priority; the key names
//     the group instance; backoff may grow with the group size.
//
// Thread-safety: value types; the queue hands out copies or views valid for
// the documented lifetime.

#include <boost/container/small_vector.hpp>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/pod_info.h"
#include "queue/plugin_set.h"

namespace copse::queue {

enum class UnitKind : uint8_t { kPod, kPodGroup };

std::string_view UnitKindName(UnitKind kind) noexcept;

// Identifies a queued unit: (kind, namespace, name). Pods are keyed by
// namespace/name like kube's queue (a recreated pod replaces the old entry).
struct UnitKey {
  UnitKind kind = UnitKind::kPod;
  std::string namespace_name;
  std::string name;

  static UnitKey ForPod(const PodInfo& pod) {
    return {UnitKind::kPod, pod.namespace_name, pod.name};
  }
  static UnitKey ForPod(std::string_view namespace_name, std::string_view name) {
    return {UnitKind::kPod, std::string(namespace_name), std::string(name)};
  }
  static UnitKey ForPodGroup(std::string_view namespace_name, std::string_view name) {
    return {UnitKind::kPodGroup, std::string(namespace_name), std::string(name)};
  }
  // "pod:ns/name" or "podgroup:ns/name".
  std::string ToString() const;
  bool operator==(const UnitKey&) const = default;
};

// A non-owning UnitKey for lookups without building strings.
struct UnitKeyRef {
  UnitKind kind = UnitKind::kPod;
  std::string_view namespace_name;
  std::string_view name;

  UnitKeyRef() = default;
  UnitKeyRef(UnitKind k, std::string_view ns, std::string_view n)
      : kind(k), namespace_name(ns), name(n) {}
  UnitKeyRef(const UnitKey& key)  // NOLINT: implicit by design
      : kind(key.kind), namespace_name(key.namespace_name), name(key.name) {}
  static UnitKeyRef ForPod(const PodInfo& pod) {
    return {UnitKind::kPod, pod.namespace_name, pod.name};
  }
};

// Transparent hash and equality, so maps keyed by UnitKey accept UnitKeyRef.
struct UnitKeyHash {
  using is_transparent = void;
  size_t operator()(const UnitKeyRef& key) const noexcept;
  size_t operator()(const UnitKey& key) const noexcept { return (*this)(UnitKeyRef(key)); }
};
struct UnitKeyEqual {
  using is_transparent = void;
  bool operator()(const UnitKeyRef& a, const UnitKeyRef& b) const noexcept {
    return a.kind == b.kind && a.name == b.name && a.namespace_name == b.namespace_name;
  }
};

// Where a unit is. kNone: not in the queue.
enum class QueueLocation : uint8_t { kNone, kActive, kBackoff, kUnschedulable, kGated, kInFlight };

std::string_view QueueLocationName(QueueLocation location) noexcept;

using PodList = boost::container::small_vector<std::shared_ptr<const PodInfo>, 1>;

// What QueueSort compares. `pod` is the unit's pod (kPod) or its first member
// (kPodGroup); `priority` is the unit's (for groups, the lowest member's).
struct QueuedUnitView {
  UnitKind kind = UnitKind::kPod;
  const UnitKey* key = nullptr;
  const PodInfo* pod = nullptr;
  int32_t priority = 0;
  Clock::TimePoint timestamp{};
};

// Strict weak ordering for activeQ: true when `a` goes first.
using QueueLessFn = std::function<bool(const QueuedUnitView& a, const QueuedUnitView& b)>;

// kube's PrioritySort: higher priority first, then earlier timestamp.
inline bool PrioritySortLess(const QueuedUnitView& a, const QueuedUnitView& b) noexcept {
  if (a.priority != b.priority) return a.priority > b.priority;
  return a.timestamp < b.timestamp;
}

// The plugins that rejected one attempt. `unschedulable`: Unschedulable /
// UnschedulableAndUnresolvable (retried after backoff when a hint says Queue);
// `pending`: Pending (retried at once when a hint says Queue). Both empty
// means the attempt failed with an error.
struct Rejection {
  PluginSet unschedulable;
  PluginSet pending;
};

// The queue's record of a unit.
struct QueuedUnit {
  UnitKey key;
  PodList pods;
  int32_t priority = 0;
  // When the unit last entered the queue (Add, or a failed attempt): the
  // QueueSort tie-break, the start of backoff and of the unschedulable timeout.
  Clock::TimePoint timestamp{};
  // When it first entered activeQ (nullopt while it was only ever gated).
  std::optional<Clock::TimePoint> initial_attempt_timestamp;
  int32_t attempts = 0;                  // pops
  int32_t unschedulable_count = 0;       // attempts rejected by plugins
  int32_t consecutive_errors_count = 0;  // attempts failed with errors since the last rejection
  // Rejectors of the last attempt, plus the gating plugin while gated.
  PluginSet unschedulable_plugins;
  PluginSet pending_plugins;
  std::optional<PluginId> gating_plugin;
  // timestamp + backoff duration; <= now when not backing off.
  Clock::TimePoint backoff_expiration{};
  QueueLocation location = QueueLocation::kNone;

  const PodInfo& pod() const noexcept { return *pods.front(); }
  QueuedUnitView View() const noexcept {
    return {key.kind, &key, pods.empty() ? nullptr : pods.front().get(), priority, timestamp};
  }
};

// What Pop hands the scheduling loop. `key()` refers to the queue's record and
// stays valid until the unit is handed back (AddUnschedulableIfNotPresent,
// AddErroredIfNotPresent or Done); copy it to keep it longer.
class PoppedUnit {
 public:
  PoppedUnit(const QueuedUnit& unit, int64_t cycle_number)
      : pods(unit.pods),
        cycle(cycle_number),
        attempts(unit.attempts),
        priority(unit.priority),
        timestamp(unit.timestamp),
        initial_attempt_timestamp(unit.initial_attempt_timestamp.value_or(unit.timestamp)),
        key_(&unit.key) {}

  const UnitKey& key() const noexcept { return *key_; }
  UnitKind kind() const noexcept { return key_->kind; }
  const PodInfo& pod() const noexcept { return *pods.front(); }

  PodList pods;
  int64_t cycle;  // the scheduling cycle of this attempt
  int32_t attempts;
  int32_t priority;
  Clock::TimePoint timestamp;
  Clock::TimePoint initial_attempt_timestamp;

 private:
  const UnitKey* key_;
};

// Pending units (or pods) per sub-queue, for metrics.
struct PendingCounts {
  size_t active = 0;
  size_t backoff = 0;
  size_t unschedulable = 0;
  size_t gated = 0;
  size_t in_flight = 0;
  // Waiting in the queue (in-flight units are being scheduled, not pending).
  size_t Total() const noexcept { return active + backoff + unschedulable + gated; }
  bool operator==(const PendingCounts&) const = default;
};

}  // namespace copse::queue
