#include "kube/controller/workqueue.h"

#include <algorithm>

namespace copse::kube::controller {

WorkQueue::WorkQueue(std::shared_ptr<const Clock> clock, WorkQueueOptions options)
    : clock_(std::move(clock)), options_(options) {
  delay_thread_ = std::thread([this] { DelayLoop(); });
}

WorkQueue::~WorkQueue() {
  ShutDown();
  if (delay_thread_.joinable()) delay_thread_.join();
}

void WorkQueue::AddLocked(const std::string& key) {
  if (shutdown_) return;
  if (dirty_.count(key)) return;
  dirty_.insert(key);
  if (processing_.count(key)) return;  // re-queued by Done()
  queue_.push_back(key);
  cv_.notify_one();
}

void WorkQueue::Add(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  AddLocked(key);
}

void WorkQueue::AddAfter(const std::string& key, Clock::Duration delay) {
  if (delay <= Clock::Duration::zero()) {
    Add(key);
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (shutdown_) return;
  delayed_.emplace(clock_->Now() + delay, key);
  delay_cv_.notify_one();
}

void WorkQueue::AddCoalesced(const std::string& key, std::chrono::milliseconds delay) {
  std::lock_guard<std::mutex> lock(mu_);
  if (shutdown_ || coalescing_.count(key) || dirty_.count(key)) return;
  coalescing_.insert(key);
  coalesced_.emplace(std::chrono::steady_clock::now() + delay, key);
  delay_cv_.notify_one();
}

void WorkQueue::AddRateLimited(const std::string& key) {
  Clock::Duration delay;
  {
    std::lock_guard<std::mutex> lock(mu_);
    int n = failures_[key]++;
    delay = options_.base_delay;
    for (int i = 0; i < n && delay < options_.max_delay; ++i) delay *= 2;
    delay = std::min(delay, options_.max_delay);
  }
  AddAfter(key, delay);
}

void WorkQueue::Forget(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  failures_.erase(key);
}

bool WorkQueue::Get(std::string* key) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return shutdown_ || !queue_.empty(); });
  if (queue_.empty()) return false;
  *key = std::move(queue_.front());
  queue_.pop_front();
  processing_.insert(*key);
  dirty_.erase(*key);
  return true;
}

void WorkQueue::Done(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  processing_.erase(key);
  if (dirty_.count(key) && !shutdown_) {
    queue_.push_back(key);
    cv_.notify_one();
  }
}

void WorkQueue::ShutDown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    shutdown_ = true;
  }
  cv_.notify_all();
  delay_cv_.notify_all();
}

size_t WorkQueue::Len() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

bool WorkQueue::Idle() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.empty() && processing_.empty() && delayed_.empty() && coalesced_.empty();
}

void WorkQueue::DelayLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!shutdown_) {
    Clock::TimePoint now = clock_->Now();
    while (!delayed_.empty() && delayed_.begin()->first <= now) {
      std::string key = delayed_.begin()->second;
      delayed_.erase(delayed_.begin());
      AddLocked(key);
    }
    auto real_now = std::chrono::steady_clock::now();
    while (!coalesced_.empty() && coalesced_.begin()->first <= real_now) {
      std::string key = coalesced_.begin()->second;
      coalesced_.erase(coalesced_.begin());
      coalescing_.erase(key);
      AddLocked(key);
    }
    if (delayed_.empty() && coalesced_.empty()) {
      delay_cv_.wait(lock,
                     [this] { return shutdown_ || !delayed_.empty() || !coalesced_.empty(); });
      continue;
    }
    auto wait = options_.poll;
    if (!delayed_.empty()) {
      auto remaining =
          std::chrono::duration_cast<std::chrono::milliseconds>(delayed_.begin()->first - now);
      wait = std::min<std::chrono::milliseconds>(remaining + std::chrono::milliseconds(1), wait);
    }
    if (!coalesced_.empty()) {
      auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(
          coalesced_.begin()->first - real_now);
      wait = std::min<std::chrono::milliseconds>(remaining + std::chrono::milliseconds(1), wait);
    }
    delay_cv_.wait_for(lock, wait);
  }
}

}  // namespace copse::kube::controller
