#include "grove/runtime/context.h"

#include "grove/api/defaults.h"
#include "kube/controller/objects.h"

namespace copse::grove::runtime {

std::shared_ptr<const api::PodCliqueSet> DefaultedCache::Get(
    const std::shared_ptr<const api::PodCliqueSet>& raw) {
  std::string key = kube::controller::Key(raw->meta.namespace_, raw->meta.name);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(key);
    if (it != entries_.end() && it->second.uid == raw->meta.uid &&
        it->second.generation == raw->meta.generation &&
        it->second.defaulted->meta.labels == raw->meta.labels &&
        it->second.defaulted->meta.annotations == raw->meta.annotations) {
      return it->second.defaulted;
    }
  }
  auto defaulted = std::make_shared<const api::PodCliqueSet>(api::Defaulted(*raw));
  std::lock_guard<std::mutex> lock(mu_);
  entries_[key] = Entry{raw->meta.uid, raw->meta.generation, defaulted};
  return defaulted;
}

void DefaultedCache::Forget(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  entries_.erase(key);
}

void GangSyncTracker::MarkSynced(const std::string& key, const std::string& uid,
                                 int64_t generation) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& entry = synced_[key];
  if (entry.first != uid || entry.second < generation) entry = {uid, generation};
}

bool GangSyncTracker::IsSynced(const std::string& key, const std::string& uid) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = synced_.find(key);
  return it != synced_.end() && it->second.first == uid;
}

bool GangSyncTracker::IsSyncedAt(const std::string& key, const std::string& uid,
                                 int64_t generation) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = synced_.find(key);
  return it != synced_.end() && it->second.first == uid && it->second.second >= generation;
}

void GangSyncTracker::Forget(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  synced_.erase(key);
}

}  // namespace copse::grove::runtime
