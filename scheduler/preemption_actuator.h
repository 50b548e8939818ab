#pragma once
// PreemptionActuator: carries out a PreemptionPlan the cycles computed (kube
// keeps computing and acting apart too; copse goes further for gangs:
// nothing is evicted until the whole gang has a placement).
//
// Actuate(plan):
//   1. Nominate each preemptor to its node in the queue's nominator (the
//      nodes' freed room is counted for it by later cycles; the status write
//      of nominatedNodeName goes with the preemptor's PodScheduled report).
//   2. For each victim: PodCondition DisruptionTarget=True (reason
//      PreemptionByScheduler, "<profile>: preempting to ...") and a delete
//      with the victim's uid as precondition (ApiWriter::PreemptVictim), and
//      a Normal "Preempted" event on the victim.
//   3. Return the victims' uids (a gang waits for them to be gone before it
//      preempts again).
// Drop(pods): the preemptors' nominations are over (placed, or the cycle
// found no use for them).
//
// Ownership: only copse's pods preempt (a plan whose preemptor is not
// copse's is a broken invariant and aborts).
//
// Victim selection is not here: DefaultPreemption (plugins/) for pods,
// SelectGangVictims (scheduler/gang_preemption.h) for gangs.
//
// Thread-safety: the scheduling loop's (it owns the queue).

#include <set>
#include <span>
#include <string>

#include "queue/scheduling_queue.h"
#include "scheduler/api_writer.h"
#include "scheduler/cycle_outcome.h"
#include "scheduler/profiles.h"

namespace copse::scheduler {

class PreemptionActuator {
 public:
  // Every reference must outlive the actuator.
  PreemptionActuator(ApiWriter& writer, queue::SchedulingQueue& queue, const Profiles& profiles)
      : writer_(writer), queue_(queue), profiles_(profiles) {}

  std::set<std::string> Actuate(const PreemptionPlan& plan);
  void Drop(std::span<const PodPtr> pods);

 private:
  ApiWriter& writer_;
  queue::SchedulingQueue& queue_;
  const Profiles& profiles_;
};

}  // namespace copse::scheduler
