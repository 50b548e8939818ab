#pragma once
// Create/delete expectations per owner key, as kube-controller-manager's
// ControllerExpectations: before issuing N creates (or deletes) a controller
// records them; informer events for the owner's objects count them down.
// While an owner's expectations are pending its cache is known to be stale
// (the objects it created are not visible yet), so the controller must not
// act on it again: that is what keeps a reconcile that runs before its own
// creations arrive from creating the same pods twice.
//
// Expectations expire after `ttl` (a lost watch event must not wedge an
// owner forever); a create that fails is counted down by the caller.
//
// Thread-safety: thread-safe.

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/clock.h"

namespace copse::kube::controller {

class Expectations {
 public:
  explicit Expectations(std::shared_ptr<const Clock> clock,
                        Clock::Duration ttl = std::chrono::minutes(5));

  void ExpectCreations(const std::string& owner, int count);
  void ExpectDeletions(const std::string& owner, int count);
  void CreationObserved(const std::string& owner);
  void DeletionObserved(const std::string& owner);
  // True when nothing is pending for `owner` (or what is pending expired).
  bool Satisfied(const std::string& owner) const;
  void Forget(const std::string& owner);

 private:
  struct Entry {
    int adds = 0;
    int dels = 0;
    Clock::TimePoint set_at{};
  };
  std::shared_ptr<const Clock> clock_;
  Clock::Duration ttl_;
  mutable std::mutex mu_;
  std::map<std::string, Entry> entries_;
};

}  // namespace copse::kube::controller
