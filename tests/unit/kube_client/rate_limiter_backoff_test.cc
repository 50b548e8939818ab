#include <gtest/gtest.h>

#include <chrono>

#include "core/clock.h"
#include "kube/informer.h"
#include "kube/rate_limiter.h"

namespace copse::kube {
namespace {

using std::chrono::milliseconds;

TEST(RateLimiter, BurstThenSpacedAtQps) {
  FakeClock clock;
  RateLimiter limiter(10, 3, clock);  // 10/s: one token every 100 ms
  EXPECT_EQ(limiter.Reserve(), Clock::Duration::zero());
  EXPECT_EQ(limiter.Reserve(), Clock::Duration::zero());
  EXPECT_EQ(limiter.Reserve(), Clock::Duration::zero());
  // The bucket is empty: each further request waits one more interval.
  EXPECT_EQ(limiter.Reserve(), milliseconds(100));
  EXPECT_EQ(limiter.Reserve(), milliseconds(200));
  clock.Advance(milliseconds(200));  // two tokens repaid the debt
  EXPECT_EQ(limiter.Reserve(), milliseconds(100));
}

TEST(RateLimiter, RefillIsCappedAtBurst) {
  FakeClock clock;
  RateLimiter limiter(100, 2, clock);
  EXPECT_TRUE(limiter.TryAcquire());
  EXPECT_TRUE(limiter.TryAcquire());
  EXPECT_FALSE(limiter.TryAcquire());
  clock.Advance(std::chrono::seconds(10));  // would be 1000 tokens without the cap
  EXPECT_TRUE(limiter.TryAcquire());
  EXPECT_TRUE(limiter.TryAcquire());
  EXPECT_FALSE(limiter.TryAcquire());
  clock.Advance(milliseconds(10));
  EXPECT_TRUE(limiter.TryAcquire());
}

TEST(RateLimiter, CancelReturnsTheToken) {
  FakeClock clock;
  RateLimiter limiter(1, 1, clock);
  EXPECT_EQ(limiter.Reserve(), Clock::Duration::zero());
  EXPECT_EQ(limiter.Reserve(), std::chrono::seconds(1));
  limiter.Cancel();
  EXPECT_EQ(limiter.Reserve(), std::chrono::seconds(1));
}

TEST(RateLimiter, ZeroQpsIsUnlimitedAndZeroBurstIsOne) {
  FakeClock clock;
  RateLimiter unlimited(0, 0, clock);
  EXPECT_TRUE(unlimited.unlimited());
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(unlimited.Reserve(), Clock::Duration::zero());
  RateLimiter one(5, 0, clock);
  EXPECT_EQ(one.burst(), 1);
  EXPECT_EQ(one.Reserve(), Clock::Duration::zero());
  EXPECT_EQ(one.Reserve(), milliseconds(200));
}

TEST(Backoff, GrowsExponentiallyToTheCap) {
  FakeClock clock;
  Backoff backoff({.initial = milliseconds(800),
                   .max = milliseconds(30'000),
                   .factor = 2.0,
                   .jitter = 0.0,
                   .reset_after = milliseconds(120'000)},
                  clock, [] { return 0.0; });
  const int64_t expected[] = {800, 1600, 3200, 6400, 12800, 25600, 30000, 30000};
  for (int64_t ms : expected) {
    EXPECT_EQ(backoff.Next(), milliseconds(ms));
    clock.Advance(milliseconds(ms));
  }
}

TEST(Backoff, JitterAddsUpToTheConfiguredFraction) {
  FakeClock clock;
  double next_random = 0.5;
  Backoff backoff(
      {.initial = milliseconds(1000), .max = milliseconds(10'000), .factor = 2.0, .jitter = 1.0},
      clock, [&] { return next_random; });
  EXPECT_EQ(backoff.Next(), milliseconds(1500));  // 1000 + 0.5 * 1.0 * 1000
  next_random = 0.0;
  EXPECT_EQ(backoff.Next(), milliseconds(2000));
  next_random = 0.999;
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(backoff.Next()), milliseconds(7996));

  Backoff half({.initial = milliseconds(1000), .jitter = 0.2}, clock, [] { return 0.5; });
  EXPECT_EQ(half.Next(), milliseconds(1100));
}

TEST(Backoff, ResetsAfterAQuietPeriod) {
  FakeClock clock;
  Backoff backoff({.initial = milliseconds(100),
                   .max = milliseconds(10'000),
                   .factor = 2.0,
                   .jitter = 0.0,
                   .reset_after = milliseconds(1000)},
                  clock, [] { return 0.0; });
  EXPECT_EQ(backoff.Next(), milliseconds(100));
  clock.Advance(milliseconds(500));
  EXPECT_EQ(backoff.Next(), milliseconds(200));
  clock.Advance(milliseconds(1000));  // exactly reset_after: not more, no reset
  EXPECT_EQ(backoff.Next(), milliseconds(400));
  clock.Advance(milliseconds(1001));
  EXPECT_EQ(backoff.Next(), milliseconds(100));
  EXPECT_EQ(backoff.Next(), milliseconds(200));
  backoff.Reset();
  EXPECT_EQ(backoff.Next(), milliseconds(100));
}

}  // namespace
}  // namespace copse::kube
