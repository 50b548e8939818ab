#pragma once
// An injectable clock. Production code takes `const Clock&` (or a shared_ptr)
// and never calls std::chrono::*::now() directly, so tests can use FakeClock
// to make backoff, expiry and timeouts deterministic without sleeping.
//
// Thread-safety: RealClock and FakeClock are safe to call from any thread.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>

namespace copse {

class Clock {
 public:
  using Duration = std::chrono::nanoseconds;
  using TimePoint = std::chrono::time_point<std::chrono::steady_clock, Duration>;

  virtual ~Clock() = default;
  // Monotonic time, for deadlines, backoff and latency.
  virtual TimePoint Now() const noexcept = 0;
  // Wall-clock time, for timestamps written into API objects.
  virtual std::chrono::system_clock::time_point WallNow() const noexcept = 0;

  // Whether time passes by itself (RealClock) or only when somebody moves
  // it (FakeClock). A sleeper on a clock that does not pass by itself
  // waits for a move, not for real time.
  virtual bool PassesByItself() const noexcept { return true; }
  // Calls `f` after every move of a clock that does not pass by itself,
  // until the returned handle is destroyed (which waits for a call under
  // way). A clock that passes by itself never calls it and returns null.
  virtual std::shared_ptr<void> OnMove(std::function<void()> f) const {
    (void)f;
    return nullptr;
  }
};

class RealClock final : public Clock {
 public:
  TimePoint Now() const noexcept override { return std::chrono::steady_clock::now(); }
  std::chrono::system_clock::time_point WallNow() const noexcept override {
    return std::chrono::system_clock::now();
  }
  // A process-wide instance for code that has no clock injected.
  static const RealClock& Get();
};

// Time moves only when a test says so. Wall time moves together with Now().
class FakeClock final : public Clock {
 public:
  explicit FakeClock(
      std::chrono::system_clock::time_point wall_start =
          std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000)));

  TimePoint Now() const noexcept override;
  std::chrono::system_clock::time_point WallNow() const noexcept override;
  bool PassesByItself() const noexcept override { return false; }
  std::shared_ptr<void> OnMove(std::function<void()> f) const override;

  // Moves the clock, then calls the OnMove listeners.
  void Advance(Duration d);
  // Blocks until Now() >= t, without sleeping on real time: returns when
  // another thread advances the clock far enough.
  void WaitUntil(TimePoint t) const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::atomic<int64_t> offset_ns_{0};
  std::chrono::system_clock::time_point wall_start_;
  // Held while listeners run and while one is removed, so a removed
  // listener is never called afterwards.
  mutable std::mutex listeners_mu_;
  mutable std::list<std::function<void()>> listeners_;
};

// RFC 3339 UTC, seconds precision, as Kubernetes writes metav1.Time ("2024-01-02T03:04:05Z").
std::string FormatRfc3339(std::chrono::system_clock::time_point t);
// RFC 3339 with microseconds, as metav1.MicroTime ("2024-01-02T03:04:05.123456Z").
std::string FormatRfc3339Micro(std::chrono::system_clock::time_point t);

}  // namespace copse
