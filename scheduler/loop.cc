#include "scheduler/loop.h"

#include <algorithm>
#include <utility>

#include "core/log.h"
#include "kube/pod_group.h"
#include "scheduler/config/metrics.h"
#include "scheduler/queue_profile.h"

namespace copse::scheduler {
namespace {

queue::QueueOptions QueueOptionsOf(const SchedulerOptions& options, const Profiles& profiles) {
  queue::QueueOptions qo;
  qo.pod_initial_backoff = options.pod_initial_backoff;
  qo.pod_max_backoff = options.pod_max_backoff;
  qo.pod_max_in_unschedulable_pods = options.pod_max_in_unschedulable;
  qo.pod_group_initial_backoff = options.pod_group_initial_backoff;
  qo.pod_group_max_backoff = options.pod_group_max_backoff;
  // One activeQ for every profile: they share the QueueSort plugin.
  qo.less = QueueSortLess(profiles.at(0));
  return qo;
}

std::vector<queue::QueueProfile> QueueProfilesOf(const Profiles& profiles) {
  std::vector<queue::QueueProfile> out;
  for (size_t i = 0; i < profiles.size(); ++i) out.push_back(BuildQueueProfile(profiles.at(i)));
  return out;
}

CycleEnvOptions EnvOptionsOf(const SchedulerOptions& options) {
  CycleEnvOptions eo;
  eo.parallelism = options.parallelism;
  eo.filter_chunk_size = options.filter_chunk_size;
  eo.batch_pod_classes = options.batch_pod_classes;
  eo.seed = options.seed;
  return eo;
}

StatusReporterOptions ReporterOptionsOf(const SchedulerOptions& options,
                                        const ResourceNames& names) {
  StatusReporterOptions ro;
  ro.names = &names;
  ro.waiting_report_delay = options.waiting_report_delay;
  return ro;
}

// Every timer the loop has is one of its dues (NextDues), and every event
// wakes it, so it sleeps until the next due. This cap only keeps the
// deadline arithmetic finite when nothing is due at all.
constexpr std::chrono::hours kLongestSleep{24};
constexpr std::chrono::milliseconds kMetricsInterval{500};
// While the informers list the cluster: how often their sync is checked.
constexpr std::chrono::milliseconds kSyncPoll{50};

}  // namespace

SchedulerLoop::SchedulerLoop(const SchedulerOptions& options, const Profiles& profiles,
                             ResourceNames& names, Inbox& inbox, ApiWriter& writer,
                             const Clock& clock)
    : options_(options),
      profiles_(profiles),
      inbox_(inbox),
      writer_(writer),
      clock_(clock),
      cache_(clock, options.assumed_pod_ttl),
      queue_(clock, QueueOptionsOf(options, profiles), QueueProfilesOf(profiles)),
      gangs_(profiles.names()),
      env_(names, EnvOptionsOf(options)),
      pod_cycle_(profiles, cache_, queue_, gangs_, env_, clock),
      workload_cycle_(profiles, cache_, queue_, gangs_, topologies_, env_, clock),
      reporter_(writer, gangs_, profiles, clock, ReporterOptionsOf(options, names)),
      preemption_(writer, queue_, profiles),
      burst_(GangBurstOptions{options.gang_burst_window, options.gang_burst_max_skips, 64,
                              options.gang_burst_plan_budget}),
      recovery_(options.gang_recovery_timeout),
      // A clock that passes only when moved (a FakeClock in tests and in
      // replay) wakes the loop on every move, so it never sleeps past a due.
      clock_moved_(clock.OnMove([&inbox] { inbox.Wake(); })) {
  // Stranding-aware accelerator scoring reads what the queue's pods request.
  env_.snapshot().set_pending_requests(&queue_.pending_requests());
}

void SchedulerLoop::Stop() {
  stopping_.store(true);
  inbox_.Close();
}

SchedulerStats SchedulerLoop::stats() const {
  std::lock_guard lock(published_mu_);
  return published_;
}

void SchedulerLoop::Run(const std::function<bool()>& synced) {
  // 1. Apply what the informers list; schedule only once the cluster state
  // is known (kube waits for cache sync).
  while (!stopping_.load()) {
    ApplyInbox();
    if (synced()) break;
    inbox_.WaitUntil(std::chrono::steady_clock::now() + kSyncPoll);
  }
  ApplyInbox();  // what was listed before the informers reported synced
  if (!stopping_.load()) Log(0, "scheduler", "informers synced; scheduling");
  reporter_.SetPodsSynced();
  if (!stopping_.load()) reporter_.ReconcileAllProtection();
  // 2. Events, timers, one cycle at a time.
  while (!stopping_.load()) {
    wake_requests_seen_.store(wake_requests_.load());
    ApplyInbox();
    RunTimers();
    Publish();
    hold_until_.reset();
    // A driver may hold the cycles and grant them one at a time (copse replay
    // lets every cycle's writes come back before the next one starts).
    const bool paused = paused_.load();
    runnable_.store(false);
    if (paused && cycle_credits_.load() == 0) {
      runnable_.store(queue_.PeekActive() != nullptr);
    } else if (const queue::QueuedUnit* head = queue_.PeekActive();
               burst_.enabled() && head != nullptr &&
               head->key.kind == queue::UnitKind::kPodGroup) {
      // Choosing among queued gangs (scheduler/gang_burst.h): a fresh gang
      // waits out the window for the rest of its burst.
      hold_until_ = burst_.HoldUntil(*head, clock_.Now());
      if (!hold_until_.has_value()) {
        if (paused) cycle_credits_.fetch_sub(1);
        RunGangBurst();
        continue;
      }
    } else if (std::optional<queue::PoppedUnit> unit = queue_.Pop()) {
      if (paused) cycle_credits_.fetch_sub(1);
      RunCycle(*unit);
      continue;
    } else if (paused) {
      cycle_credits_.store(0);  // granted, but the unit it was for is gone
    }
    const Clock::TimePoint now = clock_.Now();
    const Dues dues = NextDues();
    const Clock::TimePoint due = dues.any;
    if (due > now) {
      next_due_ns_.store(due.time_since_epoch().count());
      next_decision_due_ns_.store(dues.decisions.time_since_epoch().count());
      asleep_.store(true);
    }
    // On a clock that does not pass by itself, real time brings no due
    // closer: sleep until an event, a Wake or a move of the clock.
    const Clock::Duration wait =
        clock_.PassesByItself()
            ? std::clamp<Clock::Duration>(due - now, Clock::Duration::zero(), kLongestSleep)
            : Clock::Duration(kLongestSleep);
    inbox_.WaitUntil(std::chrono::steady_clock::now() + wait, options_.inbox_gather);
    asleep_.store(false);
    wakes_.fetch_add(1);
  }
  ApplyInbox();
  reporter_.Flush(/*final=*/true);
  Publish();
}

void SchedulerLoop::ApplyInbox() {
  if (!inbox_.Drain(batch_)) return;
  for (LoopEvent& event : batch_) {
    std::visit([this](auto& e) { Apply(e); }, event);
  }
  batch_.clear();
}

void SchedulerLoop::RunTimers() {
  queue_.FlushBackoffQCompleted();
  const Clock::TimePoint now = clock_.Now();
  if (options_.metrics != nullptr && now - last_metrics_update_ >= kMetricsInterval) {
    last_metrics_update_ = now;
    const queue::PendingCounts pending = queue_.PendingPods();
    options_.metrics->SetPendingPods(
        static_cast<int64_t>(pending.active), static_cast<int64_t>(pending.backoff),
        static_cast<int64_t>(pending.unschedulable), static_cast<int64_t>(pending.gated));
    options_.metrics->SetBindsInFlight(static_cast<int64_t>(writer_.stats().in_flight));
  }
  if (const Clock::Duration every = options_.unschedulable_flush_interval;
      now - last_unschedulable_flush_ >= every) {
    // Flushes keep their phase (whole intervals after the last): when the
    // loop happens to run its timers does not move the next flush. A replay
    // that skips steps while nothing is unschedulable relies on it.
    last_unschedulable_flush_ =
        every > Clock::Duration::zero()
            ? last_unschedulable_flush_ + every * ((now - last_unschedulable_flush_) / every)
            : now;
    queue_.FlushUnschedulablePodsLeftover();
  }
  for (const PodPtr& expired : cache_.CleanupExpiredAssumedPods()) {
    queue_.AssignedPodDeleted(expired);
  }
  for (const GangRecovery::Due& due : recovery_.Check(gangs_, cache_, now)) RecoverGang(due);
  reporter_.Flush();
}

void SchedulerLoop::RecoverGang(const GangRecovery::Due& due) {
  ++stats_.gangs_recovered;
  Log(0, "scheduler", due.message);
  reporter_.GroupDisrupted(due.key, kube::kReasonGangBelowMinimum, due.message);
  reporter_.GroupEvent(due.key, kube::kReasonGangBelowMinimum, due.message);
  for (const PodPtr& pod : due.bound) {
    const PodId id{pod->namespace_name, pod->name, pod->uid};
    writer_.PreemptVictim(
        id, due.message, [](Status) {}, kube::kReasonGangBelowMinimum);
    writer_.RecordPodEvent(id, "Warning", kube::kReasonGangBelowMinimum, due.message);
  }
}

void SchedulerLoop::SetPaused(bool paused) {
  paused_.store(paused);
  Wake();
}

void SchedulerLoop::GrantCycle() {
  cycle_credits_.fetch_add(1);
  Wake();
}

void SchedulerLoop::Wake() {
  wake_requests_.fetch_add(1);
  inbox_.Wake();
}

SchedulerLoop::Sleep SchedulerLoop::sleep() const {
  Sleep out;
  out.wakes = wakes_.load();
  // Requests first: a request after this read makes `wakes` move or the
  // caller's next reading not current.
  const uint64_t requests = wake_requests_.load();
  out.asleep = asleep_.load();
  out.current = wake_requests_seen_.load() == requests;
  out.runnable = runnable_.load();
  out.next_due = Clock::TimePoint(Clock::Duration(next_due_ns_.load()));
  out.next_decision_due = Clock::TimePoint(Clock::Duration(next_decision_due_ns_.load()));
  return out;
}

SchedulerLoop::Dues SchedulerLoop::NextDues() const {
  Dues dues;
  Clock::TimePoint& decisions = dues.decisions;
  if (std::optional<Clock::TimePoint> backoff = queue_.NextBackoffExpiry()) {
    decisions = std::min(decisions, *backoff);
  }
  if (std::optional<Clock::TimePoint> recovery = recovery_.NextDue()) {
    decisions = std::min(decisions, *recovery);
  }
  if (hold_until_.has_value()) decisions = std::min(decisions, *hold_until_);
  const Clock::TimePoint flush = last_unschedulable_flush_ + options_.unschedulable_flush_interval;
  // The flush moves unschedulable pods only: with none, it cannot decide anything.
  if (queue_.PendingPods().unschedulable > 0) decisions = std::min(decisions, flush);
  dues.any = std::min(decisions, flush);
  if (std::optional<Clock::TimePoint> report = reporter_.NextDue()) {
    dues.any = std::min(dues.any, *report);
  }
  // An assumed pod whose bind finished but that the informer has not
  // confirmed stops counting on its node at its expiry.
  if (std::optional<Clock::TimePoint> expiry = cache_.NextAssumedExpiry()) {
    dues.any = std::min(dues.any, *expiry);
  }
  if (options_.metrics != nullptr) {
    dues.any = std::min(dues.any, last_metrics_update_ + kMetricsInterval);
  }
  return dues;
}

void SchedulerLoop::RunCycle(const queue::PoppedUnit& unit, std::span<const NodePods> steer) {
  const auto start = std::chrono::steady_clock::now();
  const SchedulerStats before = stats_;
  if (unit.kind() == queue::UnitKind::kPodGroup) {
    CycleOutcome outcome = workload_cycle_.Run(unit, steer);
    ApplyGroupOutcome(unit, outcome);
    if (options_.metrics != nullptr) {
      options_.metrics->ObservePodGroupAttempt(
          stats_.scheduled > before.scheduled           ? config::AttemptResult::kScheduled
          : stats_.unschedulable > before.unschedulable ? config::AttemptResult::kUnschedulable
                                                        : config::AttemptResult::kError,
          std::chrono::steady_clock::now() - start);
    }
  } else {
    const std::string scheduler_name = unit.pod().scheduler_name;
    CycleOutcome outcome = pod_cycle_.Run(unit);
    ApplyPodOutcome(unit, outcome);
    if (options_.metrics != nullptr && stats_.attempts > before.attempts) {
      options_.metrics->ObserveScheduleAttempt(
          scheduler_name,
          stats_.scheduled > before.scheduled           ? config::AttemptResult::kScheduled
          : stats_.unschedulable > before.unschedulable ? config::AttemptResult::kUnschedulable
                                                        : config::AttemptResult::kError,
          std::chrono::steady_clock::now() - start);
    }
  }
  stats_.scheduling_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void SchedulerLoop::RunGangBurst() {
  // The pod groups of the head's priority at activeQ's head, in queue order.
  std::vector<queue::PoppedUnit> units;
  const int32_t priority = queue_.PeekActive()->priority;
  while (units.size() < std::max<size_t>(1, burst_.options().max_batch)) {
    const queue::QueuedUnit* head = queue_.PeekActive();
    if (head == nullptr || head->key.kind != queue::UnitKind::kPodGroup ||
        head->priority != priority) {
      break;
    }
    units.push_back(*queue_.Pop());
  }
  std::vector<BurstGang> burst;
  burst.reserve(units.size());
  for (const queue::PoppedUnit& unit : units) {
    const std::shared_ptr<const GangSpec> spec = gangs_.Info(unit.key()).spec;
    burst.push_back(DescribeBurstGang(unit.key().ToString(), spec.get(), unit.pods));
  }
  // An exact plan of the batch (scheduler/burst_plan.h), unless a gang is
  // overdue (fairness first).
  BurstPlan plan;
  if (burst_.options().plan_budget > Clock::Duration::zero() && !burst_.AnyOverdue(burst)) {
    BurstPlanOptions plan_options;
    plan_options.budget = burst_.options().plan_budget;
    const auto plan_start = std::chrono::steady_clock::now();
    plan = workload_cycle_.PlanBurst(units, plan_options);
    const double plan_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - plan_start)
            .count();
    if (plan.planned) {
      ++stats_.burst_plans;
      stats_.burst_plans_unproven += plan.proven ? 0 : 1;
    } else {
      ++stats_.burst_plans_declined;
    }
    if (LogEnabled(2)) {
      const auto placed = std::count(plan.place.begin(), plan.place.end(), uint8_t{1});
      Log(2, "scheduler",
          "gang burst of " + std::to_string(units.size()) + ": " +
              (plan.planned ? "plan places " + std::to_string(placed) +
                                  (plan.proven ? " (optimal)" : " (budget ran out)")
                            : "no plan (" + plan.reason + ")") +
              " in " + std::to_string(plan_ms) + " ms");
    }
  }
  bool first = true;
  for (size_t i : burst_.Order(burst, plan.planned ? std::span<const uint8_t>(plan.place)
                                                   : std::span<const uint8_t>())) {
    // Events that arrived meanwhile (a member or group deleted, a bind
    // confirmed) are applied between the cycles, as between any two pops.
    if (!first) ApplyInbox();
    first = false;
    const uint64_t scheduled = stats_.scheduled;
    RunCycle(units[i], plan.planned && plan.place[i] ? std::span<const NodePods>(plan.nodes[i])
                                                     : std::span<const NodePods>());
    if (stats_.scheduled > scheduled) burst_.Forget(burst[i].key);
  }
}

void SchedulerLoop::ReportFailed(const CycleOutcome& outcome) {
  for (const FailedPod& failed : outcome.failed) {
    reporter_.PodFailed(*failed.pod, outcome.reason, outcome.message, failed.nominated);
  }
}

void SchedulerLoop::CountPreemption(const PreemptionPlan& plan) {
  stats_.preemption_victims += plan.victims.size();
  if (options_.metrics != nullptr) options_.metrics->ObservePreemptionVictims(plan.victims.size());
  if (LogEnabled(1) && !plan.nominations.empty()) {
    Log(1, "scheduler",
        "preempting " + std::to_string(plan.victims.size()) + " pod(s) for " +
            (plan.group.empty() ? "pod " + plan.nominations.front().first->FullName()
                                : "pod group " + plan.group));
  }
}

void SchedulerLoop::ApplyPodOutcome(const queue::PoppedUnit& unit, CycleOutcome& outcome) {
  const queue::UnitKey& key = unit.key();
  if (outcome.kind == CycleOutcome::Kind::kSkipped) {
    queue_.Done(key);
    return;
  }
  ++stats_.attempts;
  switch (outcome.kind) {
    case CycleOutcome::Kind::kPlaced:
      stats_.batched += outcome.batched;
      AssumeAndBind(key, unit.cycle, outcome.profile, outcome.placed.front(),
                    /*group_member=*/false);
      return;
    case CycleOutcome::Kind::kError:
      ++stats_.errors;
      queue_.AddErroredIfNotPresent(key, unit.cycle);
      ReportFailed(outcome);
      return;
    case CycleOutcome::Kind::kUnschedulable:
      ++stats_.unschedulable;
      if (outcome.preemption_attempted && options_.metrics != nullptr) {
        options_.metrics->IncPreemptionAttempts();
      }
      if (outcome.preemption.has_value()) {
        ++stats_.preemption_attempts;
        CountPreemption(*outcome.preemption);
        gangs_.AddEvicting(preemption_.Actuate(*outcome.preemption));
        reporter_.VictimGroupsDisrupted(
            outcome.preemption->victims, kube::kReasonPreemptionByScheduler,
            "member pods preempted to make room for pod " + unit.pod().FullName());
      }
      preemption_.Drop(outcome.drop_nominations);
      queue_.AddUnschedulableIfNotPresent(key, unit.cycle, outcome.rejection);
      ReportFailed(outcome);
      return;
    case CycleOutcome::Kind::kSkipped:
      return;
  }
}

void SchedulerLoop::ApplyGroupOutcome(const queue::PoppedUnit& unit, CycleOutcome& outcome) {
  const queue::UnitKey key = unit.key();  // copied: Done/requeue end the popped record
  if (outcome.kind == CycleOutcome::Kind::kSkipped) {
    queue_.Done(key);
    return;
  }
  ++stats_.attempts;
  stats_.batched += outcome.batched;
  stats_.burst_gangs_steered += outcome.steered ? 1 : 0;
  stats_.burst_steer_failures += outcome.steer_failed ? 1 : 0;
  switch (outcome.kind) {
    case CycleOutcome::Kind::kPlaced: {
      gangs_.SetPendingVictims(key, {});
      reporter_.Protect(key);
      for (const Assignment& assignment : outcome.placed) {
        AssumeAndBind(key, unit.cycle, outcome.profile, assignment, /*group_member=*/true);
      }
      if (outcome.failed.empty()) {
        queue_.Done(key);
      } else {
        queue_.AddUnschedulableIfNotPresent(key, unit.cycle, outcome.rejection);
        ReportFailed(outcome);
      }
      return;
    }
    case CycleOutcome::Kind::kError:
      ++stats_.errors;
      queue_.AddErroredIfNotPresent(key, unit.cycle);
      ReportFailed(outcome);
      reporter_.GroupFailed(key, kube::kReasonSchedulerError, outcome.message);
      return;
    case CycleOutcome::Kind::kUnschedulable:
      ++stats_.unschedulable;
      if (!outcome.invalid_spec.empty()) reporter_.GroupInvalid(key, outcome.invalid_spec);
      if (outcome.preemption_attempted) {
        ++stats_.preemption_attempts;
        if (options_.metrics != nullptr) options_.metrics->IncPreemptionAttempts();
      }
      if (outcome.preemption.has_value()) {
        CountPreemption(*outcome.preemption);
        std::set<std::string> victims = preemption_.Actuate(*outcome.preemption);
        gangs_.AddEvicting(victims);
        gangs_.SetPendingVictims(key, std::move(victims));
        reporter_.VictimGroupsDisrupted(
            outcome.preemption->victims, kube::kReasonPreemptionByScheduler,
            "member pods preempted to make room for pod group " + outcome.preemption->group);
      }
      preemption_.Drop(outcome.drop_nominations);
      queue_.AddUnschedulableIfNotPresent(key, unit.cycle, outcome.rejection);
      ReportFailed(outcome);
      reporter_.GroupFailed(key, kube::kReasonUnschedulable, outcome.message);
      return;
    case CycleOutcome::Kind::kSkipped:
      return;
  }
}

void SchedulerLoop::Publish() {
  stats_.assumed_pods = cache_.stats().assumed_pods;
  const queue::PendingCounts units = queue_.PendingUnits();
  stats_.active_units = units.active;
  stats_.backoff_units = units.backoff;
  stats_.unschedulable_units = units.unschedulable;
  stats_.gated_units = units.gated;
  std::lock_guard lock(published_mu_);
  published_ = stats_;
}

}  // namespace copse::scheduler
