#include "core/clock.h"

#include <cstdio>
#include <ctime>
#include <string>

namespace copse {

const RealClock& RealClock::Get() {
  static const RealClock clock;
  return clock;
}

FakeClock::FakeClock(std::chrono::system_clock::time_point wall_start) : wall_start_(wall_start) {}

Clock::TimePoint FakeClock::Now() const noexcept {
  return TimePoint(Duration(offset_ns_.load(std::memory_order_acquire)));
}

std::chrono::system_clock::time_point FakeClock::WallNow() const noexcept {
  return wall_start_ + std::chrono::duration_cast<std::chrono::system_clock::duration>(
                           Duration(offset_ns_.load(std::memory_order_acquire)));
}

void FakeClock::Advance(Duration d) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    offset_ns_.fetch_add(d.count(), std::memory_order_acq_rel);
  }
  cv_.notify_all();
  std::lock_guard<std::mutex> lock(listeners_mu_);
  for (const std::function<void()>& f : listeners_) f();
}

std::shared_ptr<void> FakeClock::OnMove(std::function<void()> f) const {
  std::lock_guard<std::mutex> lock(listeners_mu_);
  auto it = listeners_.insert(listeners_.end(), std::move(f));
  return std::shared_ptr<void>(nullptr, [this, it](void*) {
    std::lock_guard<std::mutex> lock(listeners_mu_);
    listeners_.erase(it);
  });
}

void FakeClock::WaitUntil(TimePoint t) const {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return Now() >= t; });
}

namespace {
std::string Format(std::chrono::system_clock::time_point t, bool micro) {
  // floor, not time_point_cast: before 1970 the fraction must stay positive.
  const auto secs = std::chrono::floor<std::chrono::seconds>(t);
  const std::time_t tt = std::chrono::system_clock::to_time_t(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[40];
  size_t n = std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  std::string out(buf, n);
  if (micro) {
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(t - secs).count();
    char frac[32];
    std::snprintf(frac, sizeof(frac), ".%06lld", static_cast<long long>(us));
    out += frac;
  }
  out += 'Z';
  return out;
}
}  // namespace

std::string FormatRfc3339(std::chrono::system_clock::time_point t) { return Format(t, false); }
std::string FormatRfc3339Micro(std::chrono::system_clock::time_point t) { return Format(t, true); }

}  // namespace copse
