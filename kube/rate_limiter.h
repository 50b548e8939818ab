#pragma once
// Client-side request rate limiting: a token bucket with client-go's
// QPS/Burst semantics (golang.org/x/time/rate reservation style).
//
// The bucket holds at most `burst` tokens and refills at `qps` tokens per
// second. Reserve() always takes a token, letting the count go negative, and
// returns how long the caller must wait before sending; callers that give up
// (e.g. their deadline is shorter than the wait) hand the token back with
// Cancel(). qps <= 0 means unlimited: Reserve() always returns zero.
//
// Thread-safety: all methods may be called concurrently from any thread.

#include <algorithm>
#include <mutex>

#include "core/clock.h"

namespace copse::kube {

class RateLimiter {
 public:
  // `clock` must outlive the limiter.
  explicit RateLimiter(double qps, int burst, const Clock& clock = RealClock::Get())
      : qps_(qps),
        burst_(std::max(burst, 1)),
        clock_(clock),
        tokens_(std::max(burst, 1)),
        last_(clock.Now()) {}

  bool unlimited() const noexcept { return qps_ <= 0; }
  double qps() const noexcept { return qps_; }
  int burst() const noexcept { return burst_; }

  // Takes a token; returns the wait before the caller may proceed (zero when a
  // token was available).
  Clock::Duration Reserve() {
    if (unlimited()) return Clock::Duration::zero();
    std::lock_guard<std::mutex> lock(mu_);
    Refill();
    tokens_ -= 1.0;
    if (tokens_ >= 0) return Clock::Duration::zero();
    return Clock::Duration(static_cast<Clock::Duration::rep>(-tokens_ / qps_ * 1e9 + 0.5));
  }

  // Takes a token only if one is available now.
  bool TryAcquire() {
    if (unlimited()) return true;
    std::lock_guard<std::mutex> lock(mu_);
    Refill();
    if (tokens_ < 1.0) return false;
    tokens_ -= 1.0;
    return true;
  }

  // Returns a token taken by Reserve() whose request was not sent.
  void Cancel() {
    if (unlimited()) return;
    std::lock_guard<std::mutex> lock(mu_);
    Refill();
    tokens_ = std::min(tokens_ + 1.0, static_cast<double>(burst_));
  }

 private:
  void Refill() {
    const Clock::TimePoint now = clock_.Now();
    if (now > last_) {
      const double elapsed = std::chrono::duration<double>(now - last_).count();
      tokens_ = std::min(static_cast<double>(burst_), tokens_ + elapsed * qps_);
      last_ = now;
    }
  }

  const double qps_;
  const int burst_;
  const Clock& clock_;
  std::mutex mu_;
  double tokens_;
  Clock::TimePoint last_;
};

}  // namespace copse::kube
