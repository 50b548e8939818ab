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
// Thread-safety: written only by the thread running PreFilter/PreScore; after
// that, Filter and Score read it concurrently through const references.

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
  template <typename T>
  T* Mutable(const void* key) noexcept {
    return static_cast<T*>(const_cast<PluginState*>(Find(key)));
  }
  void Erase(const void* key) noexcept;

  // Deep copy (every PluginState cloned) including skip flags.
  CycleState Clone() const;

  // Plugins whose PreFilter / PreScore returned Skip this cycle (by profile index).
  void SetFilterSkipped(PluginIndex plugin) noexcept { skip_filter_ |= uint64_t{1} << plugin; }
  bool FilterSkipped(PluginIndex plugin) const noexcept { return (skip_filter_ >> plugin) & 1; }
  void SetScoreSkipped(PluginIndex plugin) noexcept { skip_score_ |= uint64_t{1} << plugin; }
  bool ScoreSkipped(PluginIndex plugin) const noexcept { return (skip_score_ >> plugin) & 1; }

 private:
  const PluginState* Find(const void* key) const noexcept;

  std::vector<std::pair<const void*, std::unique_ptr<PluginState>>> entries_;
  uint64_t skip_filter_ = 0;
  uint64_t skip_score_ = 0;
};

}  // namespace copse::plugins
