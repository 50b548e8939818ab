// SchedulerMetrics: drives the API and reads the values back from the
// Prometheus text exposition.

#include "scheduler/config/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace copse::scheduler::config {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

// The value of the sample whose line starts with `series` followed by a space
// (e.g. `scheduler_pending_pods{queue="active"}`), or nullopt.
std::optional<double> Sample(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 &&
        line[series.size()] == ' ') {
      return std::stod(line.substr(series.size() + 1));
    }
  }
  return std::nullopt;
}

// (le, cumulative count) of every bucket line of a histogram series whose
// labels start with `labels` (without braces).
std::vector<std::pair<double, double>> Buckets(const std::string& text, const std::string& name,
                                               const std::string& labels) {
  std::vector<std::pair<double, double>> out;
  const std::string prefix = name + "_bucket{" + labels + (labels.empty() ? "" : ",") + "le=\"";
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, prefix.size(), prefix) != 0) continue;
    const size_t end = line.find('"', prefix.size());
    const std::string le = line.substr(prefix.size(), end - prefix.size());
    const double bound = le == "+Inf" ? 1e300 : std::stod(le);
    out.emplace_back(bound, std::stod(line.substr(line.rfind(' ') + 1)));
  }
  return out;
}

// The cumulative count of the first bucket whose bound is >= v.
double CountAtOrBelow(const std::vector<std::pair<double, double>>& buckets, double v) {
  for (const auto& [le, count] : buckets) {
    if (le >= v) return count;
  }
  return -1;
}

TEST(SchedulerMetricsTest, RegisteredProfilesAndQueuesStartAtZero) {
  SchedulerMetrics m({"copse-scheduler"});
  const std::string text = m.Serialize();
  EXPECT_THAT(text, HasSubstr("# TYPE scheduler_schedule_attempts_total counter"));
  EXPECT_THAT(text, HasSubstr("# TYPE scheduler_scheduling_attempt_duration_seconds histogram"));
  EXPECT_THAT(text, HasSubstr("# TYPE scheduler_pending_pods gauge"));
  EXPECT_THAT(text, HasSubstr("# HELP scheduler_preemption_victims "));
  for (const char* result : {"scheduled", "unschedulable", "error"}) {
    EXPECT_EQ(Sample(text, std::string("scheduler_schedule_attempts_total{profile=\"copse-"
                                       "scheduler\",result=\"") +
                               result + "\"}"),
              0.0)
        << result;
  }
  for (const char* queue : {"active", "backoff", "unschedulable", "gated"}) {
    EXPECT_EQ(Sample(text, std::string("scheduler_pending_pods{queue=\"") + queue + "\"}"), 0.0);
  }
  EXPECT_EQ(Sample(text, "scheduler_preemption_attempts_total"), 0.0);
  EXPECT_EQ(Sample(text, "copse_bind_failures_total"), 0.0);
  EXPECT_EQ(Sample(text, "copse_binds_in_flight"), 0.0);
}

TEST(SchedulerMetricsTest, RecordsAttemptsPendingPodsPreemptionAndBinds) {
  SchedulerMetrics m({"copse-scheduler"});
  const SchedulerMetrics::ProfileMetrics& p = m.Profile("copse-scheduler");
  for (int i = 0; i < 3; ++i) p.ObserveAttempt(AttemptResult::kScheduled, 40us);
  p.ObserveAttempt(AttemptResult::kUnschedulable, 1500us);
  m.ObserveScheduleAttempt("copse-scheduler", AttemptResult::kError, 1s);
  m.ObserveScheduleAttempt("batch", AttemptResult::kScheduled, 10us);  // a new profile
  m.SetPendingPods(5, 2, 7, 1);
  m.SetPendingPods(PendingQueue::kBackoff, 4);
  m.IncPreemptionAttempts();
  m.IncPreemptionAttempts();
  m.ObservePreemptionVictims(3);
  m.ObservePodGroupAttempt(AttemptResult::kScheduled, 20ms);
  m.ObservePodGroupAttempt(AttemptResult::kUnschedulable, 5ms);
  m.IncBindFailures();
  m.BindStarted();
  m.BindStarted();
  m.BindStarted();
  m.BindFinished();

  const std::string text = m.Serialize();
  const std::string cs = "profile=\"copse-scheduler\",result=";
  EXPECT_EQ(Sample(text, "scheduler_schedule_attempts_total{" + cs + "\"scheduled\"}"), 3.0);
  EXPECT_EQ(Sample(text, "scheduler_schedule_attempts_total{" + cs + "\"unschedulable\"}"), 1.0);
  EXPECT_EQ(Sample(text, "scheduler_schedule_attempts_total{" + cs + "\"error\"}"), 1.0);
  EXPECT_EQ(Sample(text,
                   "scheduler_schedule_attempts_total{profile=\"batch\",result="
                   "\"scheduled\"}"),
            1.0);

  const std::string hist = "scheduler_scheduling_attempt_duration_seconds";
  EXPECT_EQ(Sample(text, hist + "_count{" + cs + "\"scheduled\"}"), 3.0);
  EXPECT_NEAR(*Sample(text, hist + "_sum{" + cs + "\"scheduled\"}"), 120e-6, 1e-9);
  EXPECT_NEAR(*Sample(text, hist + "_sum{" + cs + "\"error\"}"), 1.0, 1e-9);
  // The 40 µs observations land in a bucket below 100 µs: microsecond-scale
  // attempts must be distinguishable, unlike with kube's 1 ms first bucket.
  const auto scheduled = Buckets(text, hist, cs + "\"scheduled\"");
  ASSERT_GE(scheduled.size(), 10u);
  EXPECT_EQ(CountAtOrBelow(scheduled, 1e-5), 0.0);
  EXPECT_EQ(CountAtOrBelow(scheduled, 4e-5), 3.0);
  EXPECT_LT(std::find_if(scheduled.begin(), scheduled.end(),
                         [](const auto& b) { return b.second == 3.0; })
                ->first,
            1e-4);
  const auto unschedulable = Buckets(text, hist, cs + "\"unschedulable\"");
  EXPECT_EQ(CountAtOrBelow(unschedulable, 1e-3), 0.0);
  EXPECT_EQ(CountAtOrBelow(unschedulable, 1.5e-3), 1.0);

  EXPECT_EQ(Sample(text, "scheduler_pending_pods{queue=\"active\"}"), 5.0);
  EXPECT_EQ(Sample(text, "scheduler_pending_pods{queue=\"backoff\"}"), 4.0);
  EXPECT_EQ(Sample(text, "scheduler_pending_pods{queue=\"unschedulable\"}"), 7.0);
  EXPECT_EQ(Sample(text, "scheduler_pending_pods{queue=\"gated\"}"), 1.0);

  EXPECT_EQ(Sample(text, "scheduler_preemption_attempts_total"), 2.0);
  EXPECT_EQ(Sample(text, "scheduler_preemption_victims_count"), 1.0);
  EXPECT_EQ(Sample(text, "scheduler_preemption_victims_sum"), 3.0);
  const auto victims = Buckets(text, "scheduler_preemption_victims", "");
  EXPECT_EQ(CountAtOrBelow(victims, 2), 0.0);
  EXPECT_EQ(CountAtOrBelow(victims, 4), 1.0);

  EXPECT_EQ(Sample(text, "copse_podgroup_schedule_attempts_total{result=\"scheduled\"}"), 1.0);
  EXPECT_EQ(Sample(text, "copse_podgroup_schedule_attempts_total{result=\"unschedulable\"}"), 1.0);
  EXPECT_EQ(Sample(text, "copse_podgroup_schedule_attempts_total{result=\"error\"}"), 0.0);
  EXPECT_NEAR(*Sample(text, "copse_podgroup_attempt_duration_seconds_sum{result=\"scheduled\"}"),
              0.02, 1e-9);
  EXPECT_EQ(Sample(text, "copse_bind_failures_total"), 1.0);
  EXPECT_EQ(Sample(text, "copse_binds_in_flight"), 2.0);
  m.SetBindsInFlight(0);
  EXPECT_EQ(Sample(m.Serialize(), "copse_binds_in_flight"), 0.0);
}

TEST(SchedulerMetricsTest, ProfileHandlesAreStable) {
  SchedulerMetrics m;
  const SchedulerMetrics::ProfileMetrics* a = &m.Profile("a");
  for (int i = 0; i < 50; ++i) m.Profile("p" + std::to_string(i));
  EXPECT_EQ(a, &m.Profile("a"));
}

TEST(SchedulerMetricsTest, ConcurrentObservationsAreAllCounted) {
  SchedulerMetrics m({"copse-scheduler"});
  constexpr int kThreads = 4;
  constexpr int kPerThread = 5000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      const SchedulerMetrics::ProfileMetrics& p = m.Profile("copse-scheduler");
      for (int i = 0; i < kPerThread; ++i) {
        p.ObserveAttempt(AttemptResult::kScheduled, 30us);
        m.IncBindFailures();
        m.BindStarted();
        m.BindFinished();
      }
    });
  }
  for (auto& t : threads) t.join();
  const std::string text = m.Serialize();
  EXPECT_EQ(Sample(text,
                   "scheduler_schedule_attempts_total{profile=\"copse-scheduler\",result="
                   "\"scheduled\"}"),
            kThreads * kPerThread);
  EXPECT_EQ(Sample(text,
                   "scheduler_scheduling_attempt_duration_seconds_count{profile=\"copse-"
                   "scheduler\",result=\"scheduled\"}"),
            kThreads * kPerThread);
  EXPECT_EQ(Sample(text, "copse_bind_failures_total"), kThreads * kPerThread);
  EXPECT_EQ(Sample(text, "copse_binds_in_flight"), 0.0);
}

TEST(SchedulerMetricsTest, LabelNames) {
  EXPECT_EQ(AttemptResultName(AttemptResult::kUnschedulable), "unschedulable");
  EXPECT_EQ(PendingQueueName(PendingQueue::kGated), "gated");
}

}  // namespace
}  // namespace copse::scheduler::config
