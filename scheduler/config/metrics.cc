#include "scheduler/config/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <cmath>
#include <map>
#include <mutex>

namespace copse::scheduler::config {
namespace {

constexpr AttemptResult kResults[] = {AttemptResult::kScheduled, AttemptResult::kUnschedulable,
                                      AttemptResult::kError};
constexpr PendingQueue kQueues[] = {PendingQueue::kActive, PendingQueue::kBackoff,
                                    PendingQueue::kUnschedulable, PendingQueue::kGated};

// 1-2-5 steps from `from` to `to` (powers of ten), e.g. 1e-5, 2e-5, 5e-5,
// 1e-4, ... Computed as integer / power of ten so that bounds print short.
prometheus::Histogram::BucketBoundaries OneTwoFiveBuckets(int from_exp10, int to_exp10) {
  prometheus::Histogram::BucketBoundaries b;
  for (int e = from_exp10; e <= to_exp10; ++e) {
    for (int m : {1, 2, 5}) {
      if (e == to_exp10 && m != 1) break;
      b.push_back(e >= 0 ? m * std::pow(10.0, e) : m / std::pow(10.0, -e));
    }
  }
  return b;
}

double Seconds(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

std::string_view AttemptResultName(AttemptResult result) noexcept {
  switch (result) {
    case AttemptResult::kScheduled:
      return "scheduled";
    case AttemptResult::kUnschedulable:
      return "unschedulable";
    case AttemptResult::kError:
      return "error";
  }
  return "error";
}

std::string_view PendingQueueName(PendingQueue queue) noexcept {
  switch (queue) {
    case PendingQueue::kActive:
      return "active";
    case PendingQueue::kBackoff:
      return "backoff";
    case PendingQueue::kUnschedulable:
      return "unschedulable";
    case PendingQueue::kGated:
      return "gated";
  }
  return "active";
}

struct SchedulerMetrics::Impl {
  prometheus::Registry registry;
  // Copse attempts run in microseconds; kube's buckets (1 ms x2^15) would put
  // them all in the first one. 10 µs .. 10 s.
  const prometheus::Histogram::BucketBoundaries attempt_buckets = OneTwoFiveBuckets(-5, 1);
  // Gang cycles are longer: 100 µs .. 100 s.
  const prometheus::Histogram::BucketBoundaries group_buckets = OneTwoFiveBuckets(-4, 2);

  prometheus::Family<prometheus::Counter>& attempts =
      prometheus::BuildCounter()
          .Name("scheduler_schedule_attempts_total")
          .Help(
              "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod "
              "could not be scheduled, while 'error' means an internal scheduler problem.")
          .Register(registry);
  prometheus::Family<prometheus::Histogram>& attempt_duration =
      prometheus::BuildHistogram()
          .Name("scheduler_scheduling_attempt_duration_seconds")
          .Help("Scheduling attempt latency in seconds (scheduling algorithm + binding)")
          .Register(registry);
  prometheus::Family<prometheus::Gauge>& pending =
      prometheus::BuildGauge()
          .Name("scheduler_pending_pods")
          .Help(
              "Number of pending pods, by the queue type. 'active' means number of pods in "
              "activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means "
              "number of pods in unschedulablePods that the scheduler attempted to schedule "
              "and failed; 'gated' is the number of unschedulable pods that the scheduler "
              "never attempted to schedule because they are gated.")
          .Register(registry);
  prometheus::Family<prometheus::Counter>& preemption_attempts =
      prometheus::BuildCounter()
          .Name("scheduler_preemption_attempts_total")
          .Help("Total preemption attempts in the cluster till now")
          .Register(registry);
  prometheus::Family<prometheus::Histogram>& preemption_victims =
      prometheus::BuildHistogram()
          .Name("scheduler_preemption_victims")
          .Help("Number of selected preemption victims")
          .Register(registry);
  prometheus::Family<prometheus::Counter>& group_attempts =
      prometheus::BuildCounter()
          .Name("copse_podgroup_schedule_attempts_total")
          .Help("Number of Workload Scheduling Cycles for pod groups, by the result.")
          .Register(registry);
  prometheus::Family<prometheus::Histogram>& group_duration =
      prometheus::BuildHistogram()
          .Name("copse_podgroup_attempt_duration_seconds")
          .Help("Workload Scheduling Cycle latency in seconds, by the result.")
          .Register(registry);
  prometheus::Family<prometheus::Counter>& bind_failures =
      prometheus::BuildCounter()
          .Name("copse_bind_failures_total")
          .Help(
              "Number of pods/binding requests that failed (the pod was forgotten and "
              "requeued).")
          .Register(registry);
  prometheus::Family<prometheus::Gauge>& binds_in_flight =
      prometheus::BuildGauge()
          .Name("copse_binds_in_flight")
          .Help("Number of pods/binding requests sent and not yet answered.")
          .Register(registry);

  std::array<prometheus::Gauge*, 4> pending_by_queue{};
  prometheus::Counter* preemption_attempts_total = nullptr;
  prometheus::Histogram* preemption_victims_hist = nullptr;
  std::array<prometheus::Counter*, 3> group_attempts_by_result{};
  std::array<prometheus::Histogram*, 3> group_duration_by_result{};
  prometheus::Counter* bind_failures_total = nullptr;
  prometheus::Gauge* binds_in_flight_gauge = nullptr;

  std::mutex profiles_mu;
  std::map<std::string, std::unique_ptr<ProfileMetrics>, std::less<>> profiles;

  Impl() {
    for (PendingQueue q : kQueues) {
      pending_by_queue[static_cast<size_t>(q)] =
          &pending.Add({{"queue", std::string(PendingQueueName(q))}});
    }
    preemption_attempts_total = &preemption_attempts.Add({});
    preemption_victims_hist = &preemption_victims.Add({}, OneTwoFiveBuckets(0, 4));
    for (AttemptResult r : kResults) {
      const size_t i = static_cast<size_t>(r);
      const std::string name(AttemptResultName(r));
      group_attempts_by_result[i] = &group_attempts.Add({{"result", name}});
      group_duration_by_result[i] = &group_duration.Add({{"result", name}}, group_buckets);
    }
    bind_failures_total = &bind_failures.Add({});
    binds_in_flight_gauge = &binds_in_flight.Add({});
  }

  // Requires profiles_mu.
  const ProfileMetrics& AddProfile(std::string_view name) {
    auto it = profiles.find(name);
    if (it != profiles.end()) return *it->second;
    auto m = std::make_unique<ProfileMetrics>();
    for (AttemptResult r : kResults) {
      const size_t i = static_cast<size_t>(r);
      const prometheus::Labels labels{{"result", std::string(AttemptResultName(r))},
                                      {"profile", std::string(name)}};
      m->attempts_[i] = &attempts.Add(labels);
      m->durations_[i] = &attempt_duration.Add(labels, attempt_buckets);
    }
    return *profiles.emplace(std::string(name), std::move(m)).first->second;
  }
};

void SchedulerMetrics::ProfileMetrics::ObserveAttempt(AttemptResult result,
                                                      std::chrono::nanoseconds duration) const {
  const size_t i = static_cast<size_t>(result);
  attempts_[i]->Increment();
  durations_[i]->Observe(Seconds(duration));
}

SchedulerMetrics::SchedulerMetrics(const std::vector<std::string>& profiles)
    : impl_(std::make_unique<Impl>()) {
  std::lock_guard<std::mutex> lock(impl_->profiles_mu);
  for (const std::string& p : profiles) impl_->AddProfile(p);
}

SchedulerMetrics::~SchedulerMetrics() = default;

const SchedulerMetrics::ProfileMetrics& SchedulerMetrics::Profile(std::string_view scheduler_name) {
  std::lock_guard<std::mutex> lock(impl_->profiles_mu);
  return impl_->AddProfile(scheduler_name);
}

void SchedulerMetrics::ObserveScheduleAttempt(std::string_view scheduler_name, AttemptResult result,
                                              std::chrono::nanoseconds duration) {
  Profile(scheduler_name).ObserveAttempt(result, duration);
}

void SchedulerMetrics::SetPendingPods(PendingQueue queue, int64_t count) {
  impl_->pending_by_queue[static_cast<size_t>(queue)]->Set(static_cast<double>(count));
}

void SchedulerMetrics::SetPendingPods(int64_t active, int64_t backoff, int64_t unschedulable,
                                      int64_t gated) {
  SetPendingPods(PendingQueue::kActive, active);
  SetPendingPods(PendingQueue::kBackoff, backoff);
  SetPendingPods(PendingQueue::kUnschedulable, unschedulable);
  SetPendingPods(PendingQueue::kGated, gated);
}

void SchedulerMetrics::IncPreemptionAttempts() { impl_->preemption_attempts_total->Increment(); }

void SchedulerMetrics::ObservePreemptionVictims(size_t victims) {
  impl_->preemption_victims_hist->Observe(static_cast<double>(victims));
}

void SchedulerMetrics::ObservePodGroupAttempt(AttemptResult result,
                                              std::chrono::nanoseconds duration) {
  const size_t i = static_cast<size_t>(result);
  impl_->group_attempts_by_result[i]->Increment();
  impl_->group_duration_by_result[i]->Observe(Seconds(duration));
}

void SchedulerMetrics::IncBindFailures() { impl_->bind_failures_total->Increment(); }
void SchedulerMetrics::BindStarted() { impl_->binds_in_flight_gauge->Increment(); }
void SchedulerMetrics::BindFinished() { impl_->binds_in_flight_gauge->Decrement(); }
void SchedulerMetrics::SetBindsInFlight(int64_t count) {
  impl_->binds_in_flight_gauge->Set(static_cast<double>(count));
}

std::string SchedulerMetrics::Serialize() const {
  const prometheus::TextSerializer serializer;
  return serializer.Serialize(impl_->registry.Collect());
}

}  // namespace copse::scheduler::config
