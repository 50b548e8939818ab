#include "apiserver/controllers/job.h"

#include <algorithm>
#include <map>
#include <set>

#include "apiserver/controllers/job_workload.h"
#include "kube/controller/objects.h"
#include "kube/controller/sync.h"

namespace copse::apiserver::controllers {

namespace kc = kube::controller;
using kc::ReconcileResult;

namespace {

// The pod's completion index, or -1.
int32_t PodIndex(const kube::Pod& pod) {
  for (const Labels* map : {&pod.meta.annotations, &pod.meta.labels}) {
    auto it = map->find(kJobCompletionIndex);
    if (it == map->end() || it->second.empty() || it->second.size() > 9 ||
        it->second.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    return static_cast<int32_t>(std::stol(it->second));
  }
  return -1;
}

bool ConditionTrue(const std::vector<kube::Condition>& conditions, std::string_view type) {
  const kube::Condition* c = kube::FindCondition(conditions, type);
  return c != nullptr && c->status == "True";
}

kube::Condition JobCondition(std::string_view type, std::string_view status,
                             std::string_view reason, std::string_view message,
                             const std::string& now) {
  kube::Condition c;
  c.type = std::string(type);
  c.status = std::string(status);
  c.reason = std::string(reason);
  c.message = std::string(message);
  c.last_probe_time = now;
  c.last_transition_time = now;
  return c;
}

// Sets the condition, keeping both times when nothing about it changed.
void SetJobCondition(std::vector<kube::Condition>& conditions, kube::Condition c) {
  kube::Condition* current = kube::FindCondition(conditions, c.type);
  if (current != nullptr) {
    if (current->status == c.status && current->reason == c.reason &&
        current->message == c.message) {
      return;
    }
    if (current->status == c.status) c.last_transition_time = current->last_transition_time;
    *current = std::move(c);
    return;
  }
  conditions.push_back(std::move(c));
}

// When the pod finished (its Ready condition's last transition), or null.
std::optional<std::chrono::system_clock::time_point> FinishedAt(const kube::Pod& pod) {
  const kube::Condition* ready = kube::FindCondition(pod.status.conditions, "Ready");
  if (ready == nullptr) return std::nullopt;
  return kc::ParseRfc3339(ready->last_transition_time);
}

}  // namespace

JobReconciler::JobReconciler(const Context& ctx, JobOptions options)
    : ctx_(ctx), options_(options), expectations_(ctx.clock) {}

ReconcileResult JobReconciler::Reconcile(const std::string& key) {
  auto job = ctx_.caches->jobs.Get(key);
  if (job == nullptr) {
    expectations_.Forget(key);
    return ReconcileResult::Done();
  }
  if (kc::IsTerminating(job->meta)) return ReconcileResult::Done();
  const auto now = ctx_.clock->WallNow();
  const std::string now_text = ctx_.Now();
  const std::vector<PodPtr> pods = ctx_.caches->PodsOwnedBy(job->meta.uid);
  kube::JobStatus status = job->status;
  std::optional<std::chrono::milliseconds> requeue;
  auto requeue_in = [&](std::chrono::milliseconds ms) {
    if (ms < std::chrono::milliseconds(0)) ms = std::chrono::milliseconds(0);
    if (!requeue || ms < *requeue) requeue = ms;
  };

  std::vector<PodPtr> active;
  int32_t terminating = 0;
  int32_t ready = 0;
  int32_t succeeded_pods = 0;
  int32_t failed_pods = 0;
  std::optional<std::chrono::system_clock::time_point> last_failure;
  for (const auto& pod : pods) {
    if (pod->status.phase == kube::kPodSucceeded) {
      ++succeeded_pods;
    } else if (pod->status.phase == kube::kPodFailed) {
      ++failed_pods;
      if (auto at = FinishedAt(*pod); at && (!last_failure || *at > *last_failure))
        last_failure = at;
    } else if (kc::IsTerminating(pod->meta)) {
      ++terminating;
    } else {
      active.push_back(pod);
      if (IsPodReady(*pod)) ++ready;
    }
  }

  const bool indexed = job->spec.completion_mode == kube::kIndexedCompletion;
  const int32_t parallelism = job->spec.parallelism.value_or(1);
  const std::optional<int32_t> completions = job->spec.completions;
  const int32_t backoff_limit = job->spec.backoff_limit.value_or(6);
  const bool suspended = job->spec.suspend.value_or(false);

  // Counts never go down: a finished pod that was deleted stays counted.
  status.failed = std::max(status.failed, failed_pods);
  std::vector<int32_t> completed;
  if (indexed) {
    const int32_t limit = completions.value_or(0);
    completed = ParseIndexes(status.completed_indexes, limit);
    std::set<int32_t> done(completed.begin(), completed.end());
    for (const auto& pod : pods) {
      const int32_t i = PodIndex(*pod);
      if (pod->status.phase == kube::kPodSucceeded && i >= 0 && i < limit) done.insert(i);
    }
    completed.assign(done.begin(), done.end());
    status.completed_indexes = FormatIndexes(completed);
    status.succeeded = static_cast<int32_t>(completed.size());
  } else {
    status.succeeded = std::max(status.succeeded, succeeded_pods);
  }

  const bool finished =
      ConditionTrue(status.conditions, "Complete") || ConditionTrue(status.conditions, "Failed");
  int32_t created = 0;
  Status first_error;
  auto note = [&](const Status& s) {
    if (!s.ok() && first_error.ok()) first_error = s;
  };

  if (finished) {
    // ttlSecondsAfterFinished (kube's TTL-after-finished controller).
    if (job->spec.ttl_seconds_after_finished.has_value()) {
      std::string at = status.completion_time;
      if (at.empty()) {
        if (const auto* c = kube::FindCondition(status.conditions, "Failed")) {
          at = c->last_transition_time;
        }
      }
      if (auto t = kc::ParseRfc3339(at)) {
        const auto expires = *t + std::chrono::seconds(*job->spec.ttl_seconds_after_finished);
        if (expires <= now) {
          kube::DeleteOptions options;
          options.precondition_uid = job->meta.uid;
          options.propagation_policy = "Background";
          Status deleted = kc::Await(
              *ctx_.client, ctx_.client->Delete(kube::resources::kJobs, job->meta.namespace_,
                                                job->meta.name, options));
          if (!deleted.ok() && deleted.error().code != ErrorCode::kNotFound) {
            return ReconcileResult::Failed(deleted.error());
          }
          return ReconcileResult::Done();
        }
        requeue_in(std::chrono::duration_cast<std::chrono::milliseconds>(expires - now) +
                   std::chrono::milliseconds(1));
      }
    }
  } else {
    if (status.start_time.empty() && !suspended) status.start_time = now_text;
    // Failure: too many failed pods, or past the deadline.
    std::string fail_reason;
    std::string fail_message;
    if (ConditionTrue(status.conditions, "FailureTarget")) {
      const auto* c = kube::FindCondition(status.conditions, "FailureTarget");
      fail_reason = c->reason;
      fail_message = c->message;
    } else if (status.failed > backoff_limit) {
      fail_reason = "BackoffLimitExceeded";
      fail_message = "Job has reached the specified backoff limit";
    } else if (job->spec.active_deadline_seconds.has_value() && !suspended) {
      if (auto started = kc::ParseRfc3339(status.start_time)) {
        const auto deadline = *started + std::chrono::seconds(*job->spec.active_deadline_seconds);
        if (deadline <= now) {
          fail_reason = "DeadlineExceeded";
          fail_message = "Job was active longer than specified deadline";
        } else {
          requeue_in(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now) +
                     std::chrono::milliseconds(1));
        }
      }
    }
    bool succeeded = false;
    if (fail_reason.empty()) {
      if (indexed) {
        succeeded = static_cast<int32_t>(completed.size()) >= completions.value_or(0);
      } else if (completions.has_value()) {
        succeeded = status.succeeded >= *completions;
      } else {
        succeeded = status.succeeded > 0 && active.empty();
      }
    }

    if (!fail_reason.empty() || succeeded) {
      // The end: no pod keeps running (kube deletes the rest).
      if (expectations_.Satisfied(key)) {
        note(DeletePods(ctx_, active, expectations_, key));
        terminating += static_cast<int32_t>(active.size());
        active.clear();
        ready = 0;
      }
      if (!fail_reason.empty()) {
        SetJobCondition(status.conditions,
                        JobCondition("FailureTarget", "True", fail_reason, fail_message, now_text));
      } else {
        SetJobCondition(status.conditions,
                        JobCondition("SuccessCriteriaMet", "True", "CompletionsReached",
                                     "Reached expected number of succeeded pods", now_text));
      }
      if (active.empty() && terminating == 0) {
        if (!fail_reason.empty()) {
          SetJobCondition(status.conditions,
                          JobCondition("Failed", "True", fail_reason, fail_message, now_text));
          RecordEvent(ctx_, *job, kube::Job::kApiVersion, kube::Job::kKind, kube::kEventTypeWarning,
                      fail_reason, fail_message);
        } else {
          SetJobCondition(status.conditions,
                          JobCondition("Complete", "True", "CompletionsReached",
                                       "Reached expected number of succeeded pods", now_text));
          status.completion_time = now_text;
          RecordEvent(ctx_, *job, kube::Job::kApiVersion, kube::Job::kKind, kube::kEventTypeNormal,
                      "Completed", "Job completed");
        }
      }
    } else if (suspended) {
      if (expectations_.Satisfied(key)) {
        note(DeletePods(ctx_, active, expectations_, key));
        terminating += static_cast<int32_t>(active.size());
        active.clear();
        ready = 0;
      }
      SetJobCondition(status.conditions,
                      JobCondition("Suspended", "True", "JobSuspended", "Job suspended", now_text));
    } else {
      if (ConditionTrue(status.conditions, "Suspended")) {
        SetJobCondition(status.conditions,
                        JobCondition("Suspended", "False", "JobResumed", "Job resumed", now_text));
        // The deadline counts from the resumption.
        status.start_time = now_text;
      }
      if (expectations_.Satisfied(key)) {
        // Which pods to remove and which indexes (or how many pods) to add.
        std::vector<PodPtr> surplus;
        std::vector<int32_t> to_create;  // indexes; -1 for NonIndexed pods
        if (indexed) {
          const int32_t limit = completions.value_or(0);
          std::set<int32_t> done(completed.begin(), completed.end());
          std::map<int32_t, PodPtr> running;
          std::vector<PodPtr> sorted = active;
          SortForDeletion(sorted);
          // Keep the most valuable pod per index; the rest, and pods of
          // indexes that are done or out of range, go.
          for (auto it = sorted.rbegin(); it != sorted.rend(); ++it) {
            const int32_t i = PodIndex(**it);
            if (i < 0 || i >= limit || done.count(i) || running.count(i)) {
              surplus.push_back(*it);
            } else {
              running[i] = *it;
            }
          }
          int32_t want = std::min(parallelism, limit - static_cast<int32_t>(done.size()));
          int32_t have = static_cast<int32_t>(running.size());
          if (have > want) {
            // Highest indexes go first.
            for (auto it = running.rbegin(); it != running.rend() && have > want; ++it) {
              surplus.push_back(it->second);
              --have;
            }
          }
          for (int32_t i = 0; i < limit && have < want; ++i) {
            if (done.count(i) || running.count(i)) continue;
            to_create.push_back(i);
            ++have;
          }
        } else {
          int32_t want;
          const int32_t have = static_cast<int32_t>(active.size());
          if (!completions.has_value()) {
            want = status.succeeded > 0 ? have : parallelism;
          } else {
            want = std::clamp(*completions - status.succeeded, 0, parallelism);
          }
          if (have > want) {
            std::vector<PodPtr> sorted = active;
            SortForDeletion(sorted);
            sorted.resize(static_cast<size_t>(have - want));
            surplus = std::move(sorted);
          }
          for (int32_t i = have; i < want; ++i) to_create.push_back(-1);
        }
        if (!surplus.empty()) {
          note(DeletePods(ctx_, surplus, expectations_, key));
          terminating += static_cast<int32_t>(surplus.size());
          std::erase_if(active, [&](const PodPtr& p) {
            return std::find(surplus.begin(), surplus.end(), p) != surplus.end();
          });
        }
        // New pods after failures wait an exponential backoff.
        if (!to_create.empty() && status.failed > 0 && last_failure.has_value()) {
          auto delay = options_.pod_failure_backoff;
          for (int32_t i = 1; i < status.failed && delay < options_.max_pod_failure_backoff; ++i) {
            delay *= 2;
          }
          delay = std::min(delay, options_.max_pod_failure_backoff);
          const auto at = *last_failure + delay;
          if (at > now) {
            requeue_in(std::chrono::duration_cast<std::chrono::milliseconds>(at - now) +
                       std::chrono::milliseconds(1));
            to_create.clear();
          }
        }
        // The gang its pods join, made before its first pod (WorkloadWithJob).
        std::optional<JobPodGroup> gang;
        if (!to_create.empty() && options_.gang_scheduling) {
          const bool new_job = pods.empty() && job->status.start_time.empty() &&
                               job->status.succeeded == 0 && job->status.failed == 0 &&
                               kube::FindCondition(job->status.conditions, "Suspended") == nullptr;
          auto ensured = EnsureJobGang(ctx_, *job, new_job);
          if (!ensured.ok()) {
            note(ensured.error());
            to_create.clear();
          } else {
            gang = std::move(ensured).value();
          }
        }
        if (!to_create.empty()) {
          std::vector<std::string> bodies;
          for (int32_t i : to_create) {
            PodOptions options;
            if (gang.has_value()) {
              options.pod_group_name = gang->name;
              options.extra_owners.push_back(gang->owner);
            }
            if (i < 0) {
              options.generate_name = job->meta.name + "-";
            } else {
              const std::string index = std::to_string(i);
              options.generate_name = job->meta.name + "-" + index + "-";
              options.extra_annotations[std::string(kJobCompletionIndex)] = index;
              options.extra_labels[std::string(kJobCompletionIndex)] = index;
              options.hostname = job->meta.name + "-" + index;
              options.field_ref_env.emplace_back(
                  "JOB_COMPLETION_INDEX",
                  "metadata.annotations['" + std::string(kJobCompletionIndex) + "']");
            }
            auto body = BuildPod(job->spec.template_, *job, kube::Job::kApiVersion,
                                 kube::Job::kKind, options);
            if (!body.ok()) {
              note(body.error());
              break;
            }
            bodies.push_back(std::move(body).value());
          }
          CreateOutcome outcome =
              CreatePods(ctx_, job->meta.namespace_, std::move(bodies), expectations_, key);
          note(outcome.error);
          if (outcome.created > 0) {
            RecordEvent(ctx_, *job, kube::Job::kApiVersion, kube::Job::kKind,
                        kube::kEventTypeNormal, "SuccessfulCreate",
                        "Created " + std::to_string(outcome.created) + " pod(s)");
          }
          if (!outcome.error.ok()) {
            RecordEvent(ctx_, *job, kube::Job::kApiVersion, kube::Job::kKind,
                        kube::kEventTypeWarning, "FailedCreate",
                        "Error creating: " + outcome.error.error().message);
          }
          created = outcome.created;
        }
      }
    }
  }

  // Pods created in this pass count at once, as kube does, so status does
  // not lag the creations.
  status.active = static_cast<int32_t>(active.size()) + created;
  status.ready = ready;
  status.terminating = terminating;
  if (!(status == job->status)) {
    kube::Job updated = *job;
    updated.status = std::move(status);
    auto written = kc::Await(*ctx_.client,
                             ctx_.client->UpdateStatus(kube::resources::kJobs, job->meta.namespace_,
                                                       job->meta.name, kc::StatusBody(updated)));
    if (!written.ok() && written.error().code != ErrorCode::kNotFound) {
      return ReconcileResult::Failed(written.error());
    }
  }
  if (!first_error.ok()) return ReconcileResult::Failed(first_error.error());
  if (requeue) return ReconcileResult::RequeueAfter(*requeue);
  return ReconcileResult::Done();
}

}  // namespace copse::apiserver::controllers
