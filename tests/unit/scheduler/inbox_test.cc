// The loop's inbox: events drained in push order and in batches; a push
// wakes a waiting loop (no lost wake-up: events pushed before the wait make
// it return at once); Close wakes it for good and drops later pushes.

#include "scheduler/inbox.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <variant>

namespace copse::scheduler {
namespace {

using namespace std::chrono_literals;

std::string UidOf(const LoopEvent& event) { return std::get<PodGone>(event).uid; }

TEST(Inbox, DrainsEverythingInPushOrder) {
  Inbox inbox;
  std::vector<LoopEvent> batch;
  EXPECT_FALSE(inbox.Drain(batch));
  for (const char* uid : {"a", "b", "c"}) inbox.Push(PodGone{uid, nullptr});
  ASSERT_TRUE(inbox.Drain(batch));
  ASSERT_EQ(batch.size(), 3u);
  EXPECT_EQ(UidOf(batch[0]), "a");
  EXPECT_EQ(UidOf(batch[1]), "b");
  EXPECT_EQ(UidOf(batch[2]), "c");
  EXPECT_FALSE(inbox.Drain(batch)) << "a batch is handed out once";
  EXPECT_TRUE(batch.empty());
  EXPECT_EQ(inbox.pushed(), 3u);
}

TEST(Inbox, AnEventPushedBeforeTheWaitIsNotLost) {
  Inbox inbox;
  inbox.Push(PodGone{"early", nullptr});
  const auto started = std::chrono::steady_clock::now();
  inbox.WaitUntil(started + 60s);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 30s) << "returned at once";
}

TEST(Inbox, APushFromAnotherThreadWakesTheLoop) {
  Inbox inbox;
  std::vector<LoopEvent> batch;
  std::thread producer([&] { inbox.Push(PodGone{"wake", nullptr}); });
  const auto started = std::chrono::steady_clock::now();
  // Whether the push lands before or during the wait, the loop returns.
  inbox.WaitUntil(started + 60s);
  producer.join();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 30s) << "woken, not timed out";
  ASSERT_TRUE(inbox.Drain(batch));
  EXPECT_EQ(UidOf(batch[0]), "wake");
}

TEST(Inbox, WaitReturnsAtTheDeadlineAndCloseWakesForGood) {
  Inbox inbox;
  const auto started = std::chrono::steady_clock::now();
  inbox.WaitUntil(started + 20ms);
  EXPECT_GE(std::chrono::steady_clock::now() - started, 20ms);

  std::thread closer([&] { inbox.Close(); });
  inbox.WaitUntil(std::chrono::steady_clock::now() + 60s);
  closer.join();
  EXPECT_TRUE(inbox.closed());
  const auto again = std::chrono::steady_clock::now();
  inbox.WaitUntil(again + 60s);
  EXPECT_LT(std::chrono::steady_clock::now() - again, 30s);
  inbox.Push(PodGone{"late", nullptr});
  std::vector<LoopEvent> batch;
  EXPECT_FALSE(inbox.Drain(batch)) << "pushes after Close are dropped";
}

}  // namespace
}  // namespace copse::scheduler

namespace copse::scheduler {
namespace {

using namespace std::chrono_literals;

// A burst becomes one batch: what follows the first event within the gather
// window is drained with it; Close cuts the window short.
TEST(Inbox, AWokenLoopGathersTheBurst) {
  Inbox inbox;
  std::thread producer([&] {
    inbox.Push(PodGone{"first", nullptr});
    std::this_thread::sleep_for(5ms);  // the burst's spacing
    inbox.Push(PodGone{"second", nullptr});
  });
  // Whether the loop sleeps before the first push or not, both events are
  // in the batch it drains.
  inbox.WaitUntil(std::chrono::steady_clock::now() + 60s, 2s);
  producer.join();
  std::vector<LoopEvent> batch;
  ASSERT_TRUE(inbox.Drain(batch));
  EXPECT_EQ(batch.size(), 2u) << "the second event joined the first one's batch";

  std::thread closer([&] {
    inbox.Push(PodGone{"third", nullptr});
    std::this_thread::sleep_for(5ms);
    inbox.Close();
  });
  const auto again = std::chrono::steady_clock::now();
  inbox.WaitUntil(again + 60s, 60s);
  closer.join();
  EXPECT_LT(std::chrono::steady_clock::now() - again, 30s) << "Close ends the gathering";
}

}  // namespace
}  // namespace copse::scheduler
