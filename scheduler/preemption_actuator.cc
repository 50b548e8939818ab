#include "scheduler/preemption_actuator.h"

#include "core/check.h"

namespace copse::scheduler {
namespace {

PodId IdOf(const PodInfo& pod) { return {pod.namespace_name, pod.name, pod.uid}; }

}  // namespace

std::set<std::string> PreemptionActuator::Actuate(const PreemptionPlan& plan) {
  // 1. Nominations.
  for (const auto& [preemptor, node] : plan.nominations) {
    COPSE_CHECK(profiles_.Owns(*preemptor))
        << "preemption for pod " << preemptor->FullName() << " of scheduler "
        << preemptor->scheduler_name << ", not one of copse's profiles";
    auto nominated = std::make_shared<PodInfo>(*preemptor);
    nominated->nominated_node_name = node;
    queue_.AddNominatedPod(std::move(nominated), node);
  }
  // 2. Victims.
  std::string condition;
  std::string event;
  if (plan.group.empty()) {
    condition = plan.scheduler_name + ": preempting to accommodate a higher priority pod";
    const auto& [preemptor, node] = plan.nominations.front();
    event = "Preempted by pod " + preemptor->uid + " on node " + node;
  } else {
    condition = plan.scheduler_name + ": preempting to make room for pod group " + plan.group;
    event = "Preempted by pod group " + plan.group;
  }
  std::set<std::string> uids;
  for (const PodRef& victim : plan.victims) {
    uids.insert(victim->uid);
    writer_.PreemptVictim(IdOf(*victim), condition, [](Status) {});
    writer_.RecordPodEvent(IdOf(*victim), "Normal", "Preempted", event);
  }
  return uids;
}

void PreemptionActuator::Drop(std::span<const PodPtr> pods) {
  for (const PodPtr& pod : pods) queue_.DeleteNominatedPodIfExists(*pod);
}

}  // namespace copse::scheduler
