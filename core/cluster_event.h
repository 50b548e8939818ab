#pragma once
// Cluster events, as kube-scheduler's framework.ClusterEvent: a resource kind
// and a bitmask of actions. Plugins declare the events that can resolve
// their rejections (plugins::EnqueueExtensions::EventsToRegister, with a
// queueing hint each); the scheduler reports what happened to the queue
// (queue::SchedulingQueue::MoveAllToActiveOrBackoffQueue and friends), with
// the old and new versions of the object as type-erased EventObjects. The
// model lives in core/ because both sides use it: plugins/ declares, queue/
// matches.
//
// Matching (kube's MatchClusterEvents): a registered event matches an
// incoming one when the resources agree (the registered resource is
// kWildCard, or equal, or kPod for an incoming kAssignedPod/kUnscheduledPod)
// and the action masks intersect.
//
// Thread-safety: value types. EventObject shares ownership of an immutable
// object, so copies may cross threads.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <typeinfo>
#include <utility>

#include "core/pod_info.h"

namespace copse {

enum class EventResource : uint8_t {
  kPod,             // registration: any pod; incoming: rarely used (prefer the two below)
  kAssignedPod,     // a pod bound (or assumed) to a node
  kUnscheduledPod,  // a pending pod, the subject of the queue
  kNode,
  kNamespace,
  kService,
  kPodGroup,  // gang objects: KEP-4671 PodGroup, copse PodGroup, Grove PodGang
  kWorkload,  // KEP-4671 Workload
  kTopology,  // copse Topology
  kWildCard,  // registration: every resource; incoming: forces a requeue
};

std::string_view EventResourceName(EventResource resource) noexcept;

// A set of actions (kube fwk.ActionType): Add, Delete and fine-grained
// updates, combinable with |. kActionUpdate is every update bit.
class ActionType {
 public:
  constexpr ActionType() = default;
  constexpr explicit ActionType(uint32_t bits) : bits_(bits) {}
  constexpr uint32_t bits() const noexcept { return bits_; }
  constexpr bool Intersects(ActionType other) const noexcept { return (bits_ & other.bits_) != 0; }
  constexpr bool Empty() const noexcept { return bits_ == 0; }
  friend constexpr ActionType operator|(ActionType a, ActionType b) noexcept {
    return ActionType(a.bits_ | b.bits_);
  }
  friend constexpr bool operator==(ActionType, ActionType) = default;

 private:
  uint32_t bits_ = 0;
};

inline constexpr ActionType kActionAdd{1u << 0};
inline constexpr ActionType kActionDelete{1u << 1};
inline constexpr ActionType kActionUpdateNodeAllocatable{1u << 2};
inline constexpr ActionType kActionUpdateNodeLabel{1u << 3};
inline constexpr ActionType kActionUpdateNodeTaint{1u << 4};
inline constexpr ActionType kActionUpdateNodeCondition{1u << 5};
inline constexpr ActionType kActionUpdateNodeAnnotation{1u << 6};
inline constexpr ActionType kActionUpdatePodLabel{1u << 7};
// A pod's requests went down (in-place resize, or an assigned pod shrinking).
inline constexpr ActionType kActionUpdatePodScaleDown{1u << 8};
inline constexpr ActionType kActionUpdatePodToleration{1u << 9};
inline constexpr ActionType kActionUpdatePodSchedulingGatesEliminated{1u << 10};
// Any other pod change, and any update of a resource without finer actions.
inline constexpr ActionType kActionUpdateOther{1u << 11};
inline constexpr ActionType kActionUpdate{
    kActionUpdateNodeAllocatable | kActionUpdateNodeLabel | kActionUpdateNodeTaint |
    kActionUpdateNodeCondition | kActionUpdateNodeAnnotation | kActionUpdatePodLabel |
    kActionUpdatePodScaleDown | kActionUpdatePodToleration |
    kActionUpdatePodSchedulingGatesEliminated | kActionUpdateOther};
inline constexpr ActionType kActionAll{kActionAdd | kActionDelete | kActionUpdate};

// "Add", "Delete", "UpdateNodeLabel", ..., "Update" or "All" for those
// combinations; other combinations are joined with '|'.
std::string ActionTypeName(ActionType action);

struct ClusterEvent {
  EventResource resource = EventResource::kWildCard;
  ActionType action = kActionAll;
  // A static label replacing the derived one in logs and metrics
  // ("UnschedulableTimeout"); must point at a string literal.
  std::string_view custom_label = {};

  bool IsWildCard() const noexcept {
    return resource == EventResource::kWildCard && action == kActionAll;
  }
  // custom_label, or resource + action ("NodeAdd", "UnscheduledPodUpdatePodLabel").
  std::string Label() const;
  // Resource and action only; the label is decoration.
  friend bool operator==(const ClusterEvent& a, const ClusterEvent& b) noexcept {
    return a.resource == b.resource && a.action == b.action;
  }
};

// True when the `registered` interest covers the `incoming` event.
bool MatchClusterEvents(const ClusterEvent& registered, const ClusterEvent& incoming) noexcept;

// One version of the object an event is about (a Node, a Pod, a PodGroup...):
// shared ownership of an immutable object of any type, or nothing (the old
// object of an Add, the new object of a Delete). Hint functions read it with
// As<T>(), which is nullptr when the object is absent or of another type.
// Built without allocation from a shared_ptr (aliasing).
class EventObject {
 public:
  EventObject() = default;
  template <typename T>
  EventObject(std::shared_ptr<const T> object)  // NOLINT: implicit by design
      : object_(std::move(object)), type_(object_ ? &typeid(T) : nullptr) {}
  template <typename T>
  EventObject(std::shared_ptr<T> object)  // NOLINT: implicit by design
      : EventObject(std::shared_ptr<const T>(std::move(object))) {}

  template <typename T>
  const T* As() const noexcept {
    return type_ != nullptr && *type_ == typeid(T) ? static_cast<const T*>(object_.get()) : nullptr;
  }
  bool Empty() const noexcept { return object_ == nullptr; }
  explicit operator bool() const noexcept { return object_ != nullptr; }

 private:
  std::shared_ptr<const void> object_;
  const std::type_info* type_ = nullptr;
};

// A plugin's answer for one pending pod and one event it registered: can
// the event make the pod schedulable (kube's QueueingHint)?
enum class QueueingHint : uint8_t {
  kQueueSkip,  // the event cannot make the pod schedulable
  kQueue,      // the event may make the pod schedulable: retry it
};

// Decides per pod and event. Runs on the scheduling loop while the queue
// evaluates the pod: must be cheap and must not block. A hint that throws
// counts as kQueue (no pod gets stranded on a failing hint).
using QueueingHintFn = std::function<QueueingHint(const PodInfo& pod, const EventObject& old_obj,
                                                  const EventObject& new_obj)>;

}  // namespace copse
