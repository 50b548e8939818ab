#pragma once
// SchedulerMetrics: the scheduler's Prometheus metrics, named as
// kube-scheduler's so existing dashboards work, plus copse's gang and binder
// metrics. Serialize() renders the Prometheus text exposition format
// (version 0.0.4) for the ops server's /metrics.
//
//   scheduler_schedule_attempts_total{result, profile}            counter
//   scheduler_scheduling_attempt_duration_seconds{result, profile} histogram
//   scheduler_pending_pods{queue=active|backoff|unschedulable|gated} gauge
//   scheduler_preemption_attempts_total                            counter
//   scheduler_preemption_victims                                   histogram
//   copse_podgroup_schedule_attempts_total{result}                 counter
//   copse_podgroup_attempt_duration_seconds{result}                histogram
//   copse_bind_failures_total                                      counter
//   copse_binds_in_flight                                          gauge
// result is one of scheduled, unschedulable, error.
//
// Cost: the loop calls these per attempt. Resolve a profile once with
// Profile(name) (a mutex and a map lookup) and keep the reference; after
// that an observation is an atomic add (counters, gauges) or a short
// uncontended lock inside prometheus-cpp (histograms). Nothing allocates.
//
// Thread-safety: every method may be called from any thread; references
// returned by Profile() live as long as the SchedulerMetrics.

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace prometheus {
class Counter;
class Histogram;
}  // namespace prometheus

namespace copse::scheduler::config {

enum class AttemptResult : uint8_t { kScheduled, kUnschedulable, kError };
enum class PendingQueue : uint8_t { kActive, kBackoff, kUnschedulable, kGated };

// "scheduled", "unschedulable", "error" / "active", "backoff", "unschedulable", "gated".
std::string_view AttemptResultName(AttemptResult result) noexcept;
std::string_view PendingQueueName(PendingQueue queue) noexcept;

class SchedulerMetrics {
 public:
  // The attempt metrics of one profile (label profile=<schedulerName>).
  class ProfileMetrics {
   public:
    void ObserveAttempt(AttemptResult result, std::chrono::nanoseconds duration) const;

   private:
    friend class SchedulerMetrics;
    std::array<prometheus::Counter*, 3> attempts_{};
    std::array<prometheus::Histogram*, 3> durations_{};
  };

  // `profiles` are registered up front so that their series exist (at zero)
  // before the first attempt; others are added on first use.
  explicit SchedulerMetrics(const std::vector<std::string>& profiles = {});
  ~SchedulerMetrics();
  SchedulerMetrics(const SchedulerMetrics&) = delete;
  SchedulerMetrics& operator=(const SchedulerMetrics&) = delete;

  const ProfileMetrics& Profile(std::string_view scheduler_name);
  // Profile(name).ObserveAttempt(...).
  void ObserveScheduleAttempt(std::string_view scheduler_name, AttemptResult result,
                              std::chrono::nanoseconds duration);

  void SetPendingPods(PendingQueue queue, int64_t count);
  void SetPendingPods(int64_t active, int64_t backoff, int64_t unschedulable, int64_t gated);

  // A PostFilter (preemption) run.
  void IncPreemptionAttempts();
  // The victims of a preemption that found a placement.
  void ObservePreemptionVictims(size_t victims);

  // One Workload Scheduling Cycle for a pod group.
  void ObservePodGroupAttempt(AttemptResult result, std::chrono::nanoseconds duration);

  void IncBindFailures();
  void BindStarted();   // copse_binds_in_flight + 1
  void BindFinished();  // copse_binds_in_flight - 1
  void SetBindsInFlight(int64_t count);

  // The text exposition format of every metric above.
  std::string Serialize() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace copse::scheduler::config
