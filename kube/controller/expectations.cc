#include "kube/controller/expectations.h"

namespace copse::kube::controller {

Expectations::Expectations(std::shared_ptr<const Clock> clock, Clock::Duration ttl)
    : clock_(std::move(clock)), ttl_(ttl) {}

void Expectations::ExpectCreations(const std::string& owner, int count) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry& e = entries_[owner];
  e.adds = std::max(e.adds, 0) + count;
  e.set_at = clock_->Now();
}

void Expectations::ExpectDeletions(const std::string& owner, int count) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry& e = entries_[owner];
  e.dels = std::max(e.dels, 0) + count;
  e.set_at = clock_->Now();
}

void Expectations::CreationObserved(const std::string& owner) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(owner);
  if (it != entries_.end() && it->second.adds > 0) --it->second.adds;
}

void Expectations::DeletionObserved(const std::string& owner) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(owner);
  if (it != entries_.end() && it->second.dels > 0) --it->second.dels;
}

bool Expectations::Satisfied(const std::string& owner) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(owner);
  if (it == entries_.end()) return true;
  if (it->second.adds <= 0 && it->second.dels <= 0) return true;
  return clock_->Now() - it->second.set_at > ttl_;
}

void Expectations::Forget(const std::string& owner) {
  std::lock_guard<std::mutex> lock(mu_);
  entries_.erase(owner);
}

}  // namespace copse::kube::controller
