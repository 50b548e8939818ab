#pragma once
// CycleOutcome: what one scheduling cycle (PodCycle or WorkloadCycle)
// decided, as a value. The cycles compute and never act; the loop applies
// the outcome (scheduler/loop.h): it assumes and binds the placements,
// requeues the unit, reports failures (StatusReporter) and actuates the
// preemption (PreemptionActuator).
//
// Thread-safety: a value type.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/pod_info.h"
#include "core/snapshot.h"
#include "plugins/framework/cycle_state.h"
#include "queue/queued_unit.h"

namespace copse::scheduler {

using PodPtr = std::shared_ptr<const PodInfo>;

// A pod placed on a node by the cycle.
struct Assignment {
  PodPtr pod;  // as popped (node_name unset)
  std::string node;
  // The pass that placed it (PreFilter/PreScore state): its binding cycle's
  // CycleState is layered over it.
  std::shared_ptr<const plugins::CycleState> state;
};

// A pod to tell why it was not placed: PodScheduled=False with the outcome's
// reason and message, and its status.nominatedNodeName (nullopt: leave as
// is; "": clear).
struct FailedPod {
  PodPtr pod;
  std::optional<std::string> nominated;
};

// Victims to evict for a placement found with them gone: computed by the
// cycle, actuated by the loop only when the whole pod (or gang) has a
// placement (delayed actuation).
struct PreemptionPlan {
  std::string scheduler_name;  // the preemptor's profile
  std::string group;           // "ns/name" of the preempting gang; "" for a pod
  std::vector<PodRef> victims;
  // Preemptors nominated to the nodes made free (status.nominatedNodeName).
  std::vector<std::pair<PodPtr, std::string>> nominations;
};

struct CycleOutcome {
  enum class Kind : uint8_t {
    kSkipped,        // nothing to schedule (gone, bound, not copse's): the unit is done
    kPlaced,         // `placed` is the placement (a gang: at least its minimum)
    kUnschedulable,  // no placement; `message` says why
    kError,          // an internal error (a plugin failed); retried after backoff
  };
  Kind kind = Kind::kSkipped;
  size_t profile = 0;
  std::vector<Assignment> placed;
  // Pods to report (the pod, the gang's members, or a placed gang's members
  // left without a node), with `reason` ("Unschedulable", "SchedulerError")
  // and `message`.
  std::vector<FailedPod> failed;
  std::string reason;
  std::string message;
  // Why the attempt failed, for the queue's hints (kPlaced with `failed`
  // members: why those were not placed).
  queue::Rejection rejection;
  std::optional<PreemptionPlan> preemption;
  // Pods whose in-memory nomination is dropped (their preemption is over).
  std::vector<PodPtr> drop_nominations;
  bool preemption_attempted = false;
  size_t batched = 0;  // pods placed by reusing a pod class's pass
  // A gang run with a BurstPlan's nodes (scheduler/burst_plan.h): placed on
  // them (steered), or they did not hold and it was placed as usual.
  bool steered = false;
  bool steer_failed = false;
  // A gang whose spec is invalid against the cluster (e.g. an unknown
  // Topology): the InvalidSpec event to record on its object.
  std::string invalid_spec;
};

}  // namespace copse::scheduler
