#pragma once
// A rate-limited work queue of object keys, as client-go's workqueue:
//   - a key is queued at most once however often it is added (dedup);
//   - a key being processed is never handed to a second worker; if it is
//     added meanwhile it is queued again when Done() is called (dirty);
//   - AddAfter() delays an add; AddRateLimited() delays it by a per-key
//     exponential backoff (base * 2^failures, capped) that Forget() resets.
//
// Delays are measured on the injected Clock. A delivery thread waits on real
// time in steps of at most `poll` so a FakeClock advanced by a test releases
// delayed keys promptly.
//
// Thread-safety: all methods are thread-safe.

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "core/clock.h"

namespace copse::kube::controller {

struct WorkQueueOptions {
  Clock::Duration base_delay = std::chrono::milliseconds(5);
  Clock::Duration max_delay = std::chrono::seconds(10);
  std::chrono::milliseconds poll{20};
};

class WorkQueue {
 public:
  explicit WorkQueue(std::shared_ptr<const Clock> clock, WorkQueueOptions options = {});
  ~WorkQueue();  // ShutDown()
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  void Add(const std::string& key);
  void AddAfter(const std::string& key, Clock::Duration delay);
  void AddRateLimited(const std::string& key);
  // Adds the key after `delay` of *real* time unless it is already waiting
  // from an earlier coalesced add or queued: a burst of events becomes one
  // reconcile. Real time, because it batches work, it is not a timer the
  // injected clock should control.
  void AddCoalesced(const std::string& key, std::chrono::milliseconds delay);
  void Forget(const std::string& key);
  // Blocks until a key is available (true) or the queue shuts down (false).
  bool Get(std::string* key);
  void Done(const std::string& key);
  // Wakes every Get(); later adds are dropped. Idempotent.
  void ShutDown();

  size_t Len() const;
  // True when nothing is queued, delayed or being processed.
  bool Idle() const;

 private:
  void AddLocked(const std::string& key);
  void DelayLoop();

  std::shared_ptr<const Clock> clock_;
  WorkQueueOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable delay_cv_;
  std::deque<std::string> queue_;
  std::unordered_set<std::string> dirty_;
  std::unordered_set<std::string> processing_;
  std::multimap<Clock::TimePoint, std::string> delayed_;
  std::multimap<std::chrono::steady_clock::time_point, std::string> coalesced_;
  std::unordered_set<std::string> coalescing_;
  std::unordered_map<std::string, int> failures_;
  bool shutdown_ = false;
  std::thread delay_thread_;
};

}  // namespace copse::kube::controller
