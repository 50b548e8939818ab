#pragma once
// The Job controller (kube's job controller, without pod finalizers: the
// counts come from the pods that exist, and never go down):
//   1. Its pods are those it controls. Succeeded and Failed pods are counted
//      (status.succeeded, status.failed); for Indexed Jobs the indexes of
//      succeeded pods join status.completedIndexes ("0-2,5").
//   2. A Job fails when failed > backoffLimit (reason BackoffLimitExceeded)
//      or when it has been active longer than activeDeadlineSeconds
//      (DeadlineExceeded): its active pods are deleted, FailureTarget=True is
//      set, then Failed=True once no pod is left running.
//   3. It succeeds when succeeded reaches completions (NonIndexed), every
//      index in [0, completions) has succeeded (Indexed), or, without
//      completions, a pod succeeded and none is active: SuccessCriteriaMet,
//      then Complete=True (reason CompletionsReached) and completionTime.
//   4. Otherwise it keeps min(parallelism, what is left) pods active:
//      NonIndexed pods are named "<job>-xxxxx"; Indexed pods "<job>-<i>-xxxxx"
//      get the lowest missing indexes, the annotation and label
//      batch.kubernetes.io/job-completion-index, hostname "<job>-<i>" and the
//      env var JOB_COMPLETION_INDEX. After a failure new pods wait an
//      exponential backoff (pod_failure_backoff * 2^(failures-1), capped).
//   5. suspend: true deletes active pods and sets Suspended=True; resuming
//      sets Suspended=False (JobResumed).
//   6. ttlSecondsAfterFinished deletes a finished Job (and, by garbage
//      collection, its pods) that long after it finished.
//   7. With JobOptions::gang_scheduling (kube's WorkloadWithJob), an Indexed
//      Job with parallelism > 1 and completions == parallelism becomes a
//      gang: a scheduling.k8s.io Workload and PodGroup that its pods join
//      (apiserver/controllers/job_workload.h).
//
// Thread-safety: Reconcile may run on several workers for different keys.

#include <chrono>
#include <string>

#include "apiserver/controllers/common.h"
#include "kube/controller/controller.h"
#include "kube/controller/expectations.h"

namespace copse::apiserver::controllers {

inline constexpr std::string_view kJobCompletionIndex = "batch.kubernetes.io/job-completion-index";

struct JobOptions {
  // kube's DefaultJobPodFailureBackOff and MaxJobPodFailureBackOff.
  std::chrono::milliseconds pod_failure_backoff{10'000};
  std::chrono::milliseconds max_pod_failure_backoff{600'000};
  // Kubernetes 1.36's WorkloadWithJob (see 7 above); needs the Workload API
  // served (Caches::WatchSchedulingApi).
  bool gang_scheduling = true;
};

class JobReconciler {
 public:
  JobReconciler(const Context& ctx, JobOptions options);
  kube::controller::ReconcileResult Reconcile(const std::string& key);
  kube::controller::Expectations& expectations() { return expectations_; }

 private:
  const Context& ctx_;
  JobOptions options_;
  kube::controller::Expectations expectations_;
};

}  // namespace copse::apiserver::controllers
