#pragma once
// CycleState: per-pod-cycle scratch where plugins keep what PreFilter and
// PreScore computed for Filter and Score.
//
// Keys are the plugin's own address (Plugin::PreFilterKey / PreScoreKey), so
// no plugin can read or clobber another's state and no global registration is
// needed. Lookups are a linear scan over a handful of entries and allocate
// nothing.
//
// Preemption dry runs Clone() the state and let PreFilter extensions
// (AddPod/RemovePod) edit the copy.
//
// Layering: a state built over a base (CycleState(base)) reads through to it.
// The scheduler gives each pod's binding cycle (Reserve ... PostBind) a
// layered state over the pass that placed it, so those plugins see what
// PreFilter/PreScore wrote while their own writes stay the pod's, and pods
// that reuse one pod-class pass share it without copying it:
//   1. Read looks at this state's entries, then the base's.
//   2. Write and Emplace add entries here (shadowing the base's).
//   3. Mutable returns this state's entry, or copies the base's here first
//      (copy on write); the base is never changed.
//   4. Erase removes this state's entry and hides the base's.
//
// Thread-safety: written only by the thread running PreFilter/PreScore; after
// that, Filter and Score read it concurrently through const references. A
// base is shared read-only (shared_ptr<const>) and must not change once
// layered states refer to it.

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "plugins/framework/status.h"

namespace copse::plugins {

class PluginState {
 public:
  virtual ~PluginState() = default;
  virtual std::unique_ptr<PluginState> Clone() const = 0;
};

// PluginState with a copy-constructor Clone (CRTP): struct S : ClonableState<S> {...}.
template <typename Derived>
class ClonableState : public PluginState {
 public:
  std::unique_ptr<PluginState> Clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
};

class CycleState {
 public:
  CycleState() = default;
  // A state layered over `base` (may be null: an empty state).
  explicit CycleState(std::shared_ptr<const CycleState> base);
  CycleState(CycleState&&) noexcept = default;
  CycleState& operator=(CycleState&&) noexcept = default;
  CycleState(const CycleState&) = delete;
  CycleState& operator=(const CycleState&) = delete;

  // Stores (or replaces) the state under `key`.
  void Write(const void* key, std::unique_ptr<PluginState> state);
  // Creates a default-constructed T under `key` and returns it.
  template <typename T>
  T& Emplace(const void* key) {
    auto state = std::make_unique<T>();
    T& ref = *state;
    Write(key, std::move(state));
    return ref;
  }
  template <typename T>
  const T* Read(const void* key) const noexcept {
    return static_cast<const T*>(Find(key));
  }
  // The state under `key` for writing in place (a base's entry is copied
  // here first); null when there is none.
  template <typename T>
  T* Mutable(const void* key) {
    return static_cast<T*>(FindMutable(key));
  }
  void Erase(const void* key);

  // Deep copy (every PluginState cloned, a base's entries folded in)
  // including skip flags; the copy has no base.
  CycleState Clone() const;

  // Plugins whose PreFilter / PreScore returned Skip this cycle (by profile index).
  void SetFilterSkipped(PluginIndex plugin) noexcept { skip_filter_ |= uint64_t{1} << plugin; }
  bool FilterSkipped(PluginIndex plugin) const noexcept { return (skip_filter_ >> plugin) & 1; }
  void SetScoreSkipped(PluginIndex plugin) noexcept { skip_score_ |= uint64_t{1} << plugin; }
  bool ScoreSkipped(PluginIndex plugin) const noexcept { return (skip_score_ >> plugin) & 1; }

 private:
  // This state's entry or the base's; null when none or hidden.
  const PluginState* Find(const void* key) const noexcept;
  PluginState* FindMutable(const void* key);
  // This state's own entry for `key` (which may be a hiding null), or null.
  std::pair<const void*, std::unique_ptr<PluginState>>* OwnEntry(const void* key) noexcept;

  // Entries with a null state hide the base's entry of that key.
  std::vector<std::pair<const void*, std::unique_ptr<PluginState>>> entries_;
  std::shared_ptr<const CycleState> base_;
  uint64_t skip_filter_ = 0;
  uint64_t skip_score_ = 0;
};

}  // namespace copse::plugins
