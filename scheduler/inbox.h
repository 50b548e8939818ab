#pragma once
// Inbox: the scheduling loop's one queue of events (scheduler/loop_events.h).
// Informer threads and the API writer's thread push; the loop drains them in
// batches and applies them in push order, then schedules. Pushing also wakes
// the loop when it sleeps, so a wake-up cannot be lost: the loop checks for
// events under the same lock it sleeps on.
//
//   producers:  Push(event) ──▶ [events] ──▶ Drain(batch)  :loop
//                                   └── wakes WaitUntil(deadline)
//
// Thread-safety: Push and Close from any thread; Drain and WaitUntil from the
// loop thread only (one consumer). Drain is lock-free when nothing was pushed.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "scheduler/loop_events.h"

namespace copse::scheduler {

class Inbox {
 public:
  // Queues the event and wakes the loop if it waits. Dropped after Close.
  void Push(LoopEvent event);
  // Moves every queued event, in push order, into `batch` (cleared first).
  // Returns false (leaving `batch` empty) when nothing was queued.
  bool Drain(std::vector<LoopEvent>& batch);
  // Returns when an event is queued (at once if one already is), Close or
  // Wake was called, or `deadline` passes. When it has slept and an event woke it,
  // it goes on gathering for `gather` (unless closed meanwhile): events come
  // in bursts (a watch chunk, a wave of bind answers), and a batch costs
  // one wake-up of the loop instead of one per event.
  void WaitUntil(std::chrono::steady_clock::time_point deadline,
                 std::chrono::microseconds gather = std::chrono::microseconds::zero());
  // Ends the current (or the next) WaitUntil without an event: the loop then
  // reads its clock again (a driver moved an injected clock).
  void Wake();
  // Nothing pushed is waiting to be drained.
  bool empty() const noexcept { return !queued_.load(std::memory_order_acquire); }
  // Wakes the loop for good: WaitUntil returns at once from now on and later
  // pushes are dropped.
  void Close();
  bool closed() const;
  // Events pushed so far (metrics, tests).
  uint64_t pushed() const noexcept { return pushed_.load(std::memory_order_relaxed); }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<LoopEvent> events_;
  bool waiting_ = false;
  bool notified_ = false;  // the sleeping loop was woken already
  bool woken_ = false;     // Wake() since the last WaitUntil
  bool closed_ = false;
  std::atomic<bool> queued_{false};
  std::atomic<uint64_t> pushed_{0};
};

}  // namespace copse::scheduler
