#include "core/clock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

namespace copse {
namespace {

using std::chrono::hours;
using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::seconds;
using SysTime = std::chrono::system_clock::time_point;

TEST(FakeClock, StartsAtZeroAndMovesOnlyWhenAdvanced) {
  FakeClock clock;
  const Clock::TimePoint start = clock.Now();
  EXPECT_EQ(start.time_since_epoch().count(), 0);
  EXPECT_EQ(clock.WallNow(), SysTime(seconds(1'700'000'000)));
  EXPECT_EQ(clock.Now(), start);  // no drift without Advance
  clock.Advance(milliseconds(1500));
  EXPECT_EQ(clock.Now() - start, milliseconds(1500));
  EXPECT_EQ(clock.WallNow(), SysTime(seconds(1'700'000'000) + milliseconds(1500)));
  clock.Advance(hours(2));
  EXPECT_EQ(clock.Now() - start, hours(2) + milliseconds(1500));
}

TEST(FakeClock, CallsItsMoveListenersUntilTheirHandleIsGone) {
  FakeClock clock;
  int first = 0;
  int second = 0;
  std::shared_ptr<void> a = clock.OnMove([&] { ++first; });
  std::shared_ptr<void> b = clock.OnMove([&] { ++second; });
  EXPECT_FALSE(clock.PassesByItself());
  clock.Advance(milliseconds(1));
  EXPECT_EQ(first, 1);
  EXPECT_EQ(second, 1);
  a.reset();
  clock.Advance(milliseconds(1));
  EXPECT_EQ(first, 1);
  EXPECT_EQ(second, 2);
}

TEST(RealClock, PassesByItselfAndHasNoMoveListeners) {
  const RealClock& clock = RealClock::Get();
  EXPECT_TRUE(clock.PassesByItself());
  EXPECT_EQ(clock.OnMove([] {}), nullptr);
}

TEST(FakeClock, CustomWallStart) {
  FakeClock clock(SysTime(seconds(86'400)));
  clock.Advance(seconds(5));
  EXPECT_EQ(FormatRfc3339(clock.WallNow()), "1970-01-02T00:00:05Z");
}

TEST(FakeClock, WaitUntilPastDeadlineReturnsAtOnce) {
  FakeClock clock;
  clock.Advance(seconds(10));
  clock.WaitUntil(clock.Now() - seconds(1));
  clock.WaitUntil(clock.Now());
  EXPECT_EQ(clock.Now().time_since_epoch(), seconds(10));
}

TEST(FakeClock, WaitUntilIsReleasedByAnotherThreadAdvancing) {
  FakeClock clock;
  const Clock::TimePoint deadline = clock.Now() + seconds(30);
  std::atomic<bool> waiting{false};
  std::atomic<int64_t> woke_at_ns{-1};
  std::thread waiter([&] {
    waiting.store(true);
    clock.WaitUntil(deadline);
    woke_at_ns.store(clock.Now().time_since_epoch().count());
  });
  while (!waiting.load()) std::this_thread::yield();
  // Short of the deadline: the waiter may run, but must keep waiting.
  clock.Advance(seconds(10));
  clock.Advance(seconds(19));
  EXPECT_EQ(woke_at_ns.load(), -1);
  clock.Advance(seconds(1));
  waiter.join();
  // The waiter only returned once the clock had reached the deadline.
  EXPECT_GE(woke_at_ns.load(), deadline.time_since_epoch().count());
}

TEST(FakeClock, ManyWaitersWithDifferentDeadlines) {
  FakeClock clock;
  constexpr int kWaiters = 4;
  std::atomic<int> ready{0};
  std::atomic<int64_t> woke[kWaiters];
  std::thread threads[kWaiters];
  for (int i = 0; i < kWaiters; ++i) {
    woke[i].store(-1);
    threads[i] = std::thread([&, i] {
      ready.fetch_add(1);
      clock.WaitUntil(Clock::TimePoint(seconds(i + 1)));
      woke[i].store(clock.Now().time_since_epoch().count());
    });
  }
  while (ready.load() < kWaiters) std::this_thread::yield();
  for (int step = 0; step < kWaiters; ++step) clock.Advance(seconds(1));
  for (auto& t : threads) t.join();
  for (int i = 0; i < kWaiters; ++i) {
    EXPECT_GE(woke[i].load(), std::chrono::nanoseconds(seconds(i + 1)).count()) << "waiter " << i;
  }
}

TEST(RealClock, IsMonotonicAndShared) {
  const RealClock& clock = RealClock::Get();
  EXPECT_EQ(&clock, &RealClock::Get());
  const Clock::TimePoint a = clock.Now();
  const Clock::TimePoint b = clock.Now();
  EXPECT_LE(a, b);
  EXPECT_GT(clock.WallNow(), SysTime(seconds(1'600'000'000)));
}

TEST(Rfc3339, SecondsAndMicroseconds) {
  const SysTime t = SysTime(seconds(1'700'000'000));
  EXPECT_EQ(FormatRfc3339(t), "2023-11-14T22:13:20Z");
  EXPECT_EQ(FormatRfc3339(SysTime()), "1970-01-01T00:00:00Z");
  EXPECT_EQ(FormatRfc3339(t + milliseconds(999)), "2023-11-14T22:13:20Z");  // truncates
  EXPECT_EQ(FormatRfc3339Micro(t + microseconds(123456)), "2023-11-14T22:13:20.123456Z");
  EXPECT_EQ(FormatRfc3339Micro(t), "2023-11-14T22:13:20.000000Z");
  EXPECT_EQ(FormatRfc3339Micro(t + microseconds(7)), "2023-11-14T22:13:20.000007Z");
  // 2024-02-29 (leap day) 23:59:59 UTC.
  EXPECT_EQ(FormatRfc3339(SysTime(seconds(1'709'251'199))), "2024-02-29T23:59:59Z");
  // Before 1970 the fraction still counts forward from the whole second.
  EXPECT_EQ(FormatRfc3339Micro(SysTime(microseconds(-1))), "1969-12-31T23:59:59.999999Z");
  EXPECT_EQ(FormatRfc3339(SysTime(microseconds(-1))), "1969-12-31T23:59:59Z");
}

}  // namespace
}  // namespace copse
