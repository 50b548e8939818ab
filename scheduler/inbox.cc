#include "scheduler/inbox.h"

#include <utility>

namespace copse::scheduler {

void Inbox::Push(LoopEvent event) {
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    if (closed_) return;
    events_.push_back(std::move(event));
    queued_.store(true, std::memory_order_release);
    wake = waiting_ && !notified_;
    notified_ = notified_ || wake;
  }
  pushed_.fetch_add(1, std::memory_order_relaxed);
  if (wake) cv_.notify_one();
}

bool Inbox::Drain(std::vector<LoopEvent>& batch) {
  batch.clear();
  if (!queued_.load(std::memory_order_acquire)) return false;
  std::lock_guard lock(mu_);
  batch.swap(events_);
  queued_.store(false, std::memory_order_relaxed);
  return !batch.empty();
}

void Inbox::WaitUntil(std::chrono::steady_clock::time_point deadline,
                      std::chrono::microseconds gather) {
  std::unique_lock lock(mu_);
  if (!events_.empty() || closed_ || woken_) {
    woken_ = false;
    return;
  }
  waiting_ = true;
  notified_ = false;
  cv_.wait_until(lock, deadline, [this] { return !events_.empty() || closed_ || woken_; });
  woken_ = false;
  if (!events_.empty() && !closed_ && gather > std::chrono::microseconds::zero()) {
    // Producers do not notify again meanwhile (notified_); Close does.
    cv_.wait_for(lock, gather, [this] { return closed_; });
  }
  waiting_ = false;
}

void Inbox::Wake() {
  {
    std::lock_guard lock(mu_);
    woken_ = true;
  }
  cv_.notify_all();
}

void Inbox::Close() {
  {
    std::lock_guard lock(mu_);
    closed_ = true;
  }
  cv_.notify_all();
}

bool Inbox::closed() const {
  std::lock_guard lock(mu_);
  return closed_;
}

}  // namespace copse::scheduler
