#pragma once
// ExpiringLruCache: answers kept for a while, at most `capacity` of them,
// the least recently used going first when full: the caches of the ops
// port's delegated authentication and authorization (kube's webhook
// authenticator and authorizer keep theirs 10 s, the authorizer's in an LRU
// of 8192 entries).
//
//   ExpiringLruCache<std::string, Verdict> cache(4096, clock);
//   cache.Put(key, verdict, std::chrono::seconds(10));
//   if (std::optional<Verdict> v = cache.Get(key)) ...   // nullopt once expired
//
// An entry counts as expired at exactly `ttl` after its Put (a TTL of 0 keeps
// nothing). Expired entries are dropped when looked up or when their slot
// is needed; nothing runs in the background.
//
// Thread-safety: every member function may be called from any thread (one
// mutex); values are copied in and out.

#include <chrono>
#include <cstddef>
#include <list>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

#include "core/clock.h"

namespace copse::scheduler::config {

template <typename Key, typename Value, typename Hash = std::hash<Key>>
class ExpiringLruCache {
 public:
  // `capacity` 0 caches nothing. `clock` must outlive the cache.
  ExpiringLruCache(size_t capacity, const Clock& clock) : capacity_(capacity), clock_(clock) {}

  std::optional<Value> Get(const Key& key) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(key);
    if (it == index_.end()) return std::nullopt;
    if (clock_.Now() >= it->second->expires) {
      entries_.erase(it->second);
      index_.erase(it);
      return std::nullopt;
    }
    entries_.splice(entries_.begin(), entries_, it->second);  // most recently used
    return it->second->value;
  }

  void Put(const Key& key, Value value, Clock::Duration ttl) {
    if (capacity_ == 0 || ttl <= Clock::Duration::zero()) return;
    std::lock_guard<std::mutex> lock(mu_);
    const Clock::TimePoint expires = clock_.Now() + ttl;
    if (auto it = index_.find(key); it != index_.end()) {
      it->second->value = std::move(value);
      it->second->expires = expires;
      entries_.splice(entries_.begin(), entries_, it->second);
      return;
    }
    if (entries_.size() >= capacity_) {
      auto victim = std::prev(entries_.end());
      index_.erase(victim->key);
      entries_.erase(victim);
    }
    entries_.push_front(Entry{key, std::move(value), expires});
    index_.emplace(key, entries_.begin());
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return entries_.size();
  }
  size_t capacity() const noexcept { return capacity_; }

 private:
  struct Entry {
    Key key;
    Value value;
    Clock::TimePoint expires;
  };
  using Entries = std::list<Entry>;

  const size_t capacity_;
  const Clock& clock_;
  mutable std::mutex mu_;
  Entries entries_;  // most recently used first
  std::unordered_map<Key, typename Entries::iterator, Hash> index_;
};

}  // namespace copse::scheduler::config
