#pragma once
// What every Grove controller shares: the client (writes), the informer
// caches (reads), the scheduler backends, pod-creation expectations, the
// clock, the record of which PodGangs their backend has synced, and the
// enqueue hooks of the other controllers (so one controller can nudge another).
//
// Thread-safety: every member is thread-safe; the struct itself is immutable
// after Operator::Start wires it.

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/clock.h"
#include "grove/api/validation.h"
#include "grove/backend/manager.h"
#include "grove/runtime/caches.h"
#include "kube/client.h"
#include "kube/controller/expectations.h"

namespace copse::grove::runtime {

// PodGangs whose scheduler objects their backend has created (by UID), so
// Initialized=True - and with it the lifting of gates - waits for them.
class GangSyncTracker {
 public:
  void MarkSynced(const std::string& key, const std::string& uid, int64_t generation);
  // Synced at least once for this UID.
  bool IsSynced(const std::string& key, const std::string& uid) const;
  // Synced at this generation (or later).
  bool IsSyncedAt(const std::string& key, const std::string& uid, int64_t generation) const;
  void Forget(const std::string& key);

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::pair<std::string, int64_t>> synced_;
};

// Defaulted PodCliqueSets, computed once per (uid, generation, labels,
// annotations): every controller needs the defaulted object and copying a
// PodCliqueSet with its pod templates on every reconcile is the hot path.
class DefaultedCache {
 public:
  std::shared_ptr<const api::PodCliqueSet> Get(const std::shared_ptr<const api::PodCliqueSet>& raw);
  void Forget(const std::string& key);

 private:
  struct Entry {
    std::string uid;
    int64_t generation = 0;
    std::shared_ptr<const api::PodCliqueSet> defaulted;
  };
  std::mutex mu_;
  std::map<std::string, Entry> entries_;
};

struct Context {
  std::shared_ptr<kube::Client> client;
  std::shared_ptr<const Clock> clock;
  Caches* caches = nullptr;
  backend::BackendManager* backends = nullptr;
  kube::controller::Expectations* expectations =
      nullptr;  // pod creations/deletions per PodClique key
  GangSyncTracker* synced = nullptr;
  DefaultedCache* defaulted = nullptr;
  // Bumped on every ClusterTopologyBinding event (validation depends on them).
  std::atomic<uint64_t>* topology_generation = nullptr;
  std::string initc_image;
  // Validation context built from the backends and the topology cache.
  api::ValidationContext validation;

  std::function<void(const std::string&)> enqueue_pcs;
  std::function<void(const std::string&)> enqueue_pcsg;
  std::function<void(const std::string&)> enqueue_pclq;

  // The wall clock as RFC 3339 (condition timestamps).
  std::string Now() const { return FormatRfc3339(clock->WallNow()); }
};

}  // namespace copse::grove::runtime
