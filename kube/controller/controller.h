#pragma once
// A level-triggered controller: a WorkQueue of object keys ("namespace/name")
// drained by N worker threads that call a reconcile function.
//
// Contract of the reconcile function: it reads the current state (informer
// caches), makes the world match the desired state and returns; it must be
// idempotent (it runs again for every event and on every requeue) and may
// block on API calls. Outcomes:
//   Done()              success; the key's backoff is reset
//   RequeueAfter(d)     success, look again after d (timers: terminationDelay)
//   error               retried with per-key exponential backoff
// A key is never reconciled by two workers at once.
//
// Thread-safety: Enqueue* are thread-safe and cheap (informer handlers call
// them); Start/Stop from one owner thread.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/result.h"
#include "kube/controller/workqueue.h"

namespace copse::kube::controller {

struct ReconcileResult {
  Status status;
  std::optional<Clock::Duration> requeue_after;

  static ReconcileResult Done() { return {}; }
  static ReconcileResult RequeueAfter(Clock::Duration d) { return {Status::Ok(), d}; }
  static ReconcileResult Failed(Error error) { return {Status(std::move(error)), std::nullopt}; }
};

using ReconcileFn = std::function<ReconcileResult(const std::string& key)>;

class Controller {
 public:
  // `thread_name` (at most 15 characters) names the worker threads, so CPU
  // accounting can tell one owner's controllers apart (copse bench grove).
  Controller(std::string name, int workers, ReconcileFn reconcile,
             std::shared_ptr<const Clock> clock, std::string thread_name = "ctrl-worker");
  ~Controller();  // Stop()
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  void Enqueue(const std::string& key) { queue_.Add(key); }
  void EnqueueAfter(const std::string& key, Clock::Duration delay) { queue_.AddAfter(key, delay); }
  void EnqueueCoalesced(const std::string& key, std::chrono::milliseconds delay) {
    queue_.AddCoalesced(key, delay);
  }

  void Start();
  void Stop();  // waits for the workers; idempotent

  const std::string& name() const { return name_; }
  bool Idle() const { return queue_.Idle(); }
  uint64_t reconciles() const { return reconciles_.load(); }
  uint64_t errors() const { return errors_.load(); }

 private:
  void Worker();

  std::string name_;
  std::string thread_name_;
  int workers_;
  ReconcileFn reconcile_;
  WorkQueue queue_;
  std::vector<std::thread> threads_;
  std::atomic<uint64_t> reconciles_{0};
  std::atomic<uint64_t> errors_{0};
  bool started_ = false;
};

}  // namespace copse::kube::controller
