#include "grove/runtime/context.h"

namespace copse::grove::runtime {

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
