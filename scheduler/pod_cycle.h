#pragma once
// PodCycle: kube-scheduler's scheduleOne for a single pod, computed on the
// snapshot and returned as a CycleOutcome (the loop assumes, binds, reports
// and preempts; this class only decides).
//
// Run(unit):
//   1. Skip a pod that is not copse's, is being deleted, or is already
//      assumed or bound (kSkipped: the unit is done).
//   2. Refresh the snapshot (changed node rows only), then add the pods
//      nominated to each node with priority >= the pod's (kube counts them
//      in Filter; copse adds them to the snapshot rows for the cycle).
//   3. Pod classes: when the pod has the same class (signature, priority,
//      profile) as the last one and no other node changed since, the kept
//      pass is reused; only the node that received the previous pod is
//      filtered and scored again (KEP-5598 opportunistic batching).
//   4. Otherwise Framework::SchedulePod: PreFilter, Filter over node chunks
//      in parallel from a rotating start, stopping at the adaptive number of
//      feasible nodes, PreScore, Score, pick (ties by the injected RNG), with
//      the injected clock's time. The pass is kept for the next pod of the
//      class (when batchable and no nominated pod was added).
//   5. kPlaced with the node and the pass's CycleState (for the binding
//      cycle), or kUnschedulable with kube's FitError message, the rejecting
//      plugins and PostFilter's (DefaultPreemption) victims and nominated
//      node as a PreemptionPlan, or kError. Preemption follows the same
//      gang rules as WorkloadCycle's (scheduler/victim_rules.h): a lone pod
//      never leaves a gang below its minimum.
//
// Thread-safety: the scheduling loop's (it owns the cache, queue and env).

#include "core/clock.h"
#include "queue/scheduling_queue.h"
#include "scheduler/cache.h"
#include "scheduler/cycle_env.h"
#include "scheduler/cycle_outcome.h"
#include "scheduler/gangs.h"
#include "scheduler/profiles.h"

namespace copse::scheduler {

class PodCycle {
 public:
  // Every reference must outlive the cycle.
  PodCycle(const Profiles& profiles, Cache& cache, const queue::SchedulingQueue& queue,
           const GangTracker& gangs, CycleEnv& env, const Clock& clock)
      : profiles_(profiles),
        cache_(cache),
        queue_(queue),
        gangs_(gangs),
        env_(env),
        clock_(clock) {}

  CycleOutcome Run(const queue::PoppedUnit& unit);

 private:
  // Step 2: nominated pods of priority >= the pod's; true when any was added.
  bool AddNominatedPods(const PodInfo& pod);

  const Profiles& profiles_;
  Cache& cache_;
  const queue::SchedulingQueue& queue_;
  const GangTracker& gangs_;
  CycleEnv& env_;
  const Clock& clock_;
};

}  // namespace copse::scheduler
