// The loop's handling of informer events (SchedulerLoop::Apply): each event,
// already translated on its informer's thread (scheduler/informers.h), is
// applied to the cache, the queue and the gang tracker here, on the loop
// thread, in the order the events arrived. A gang decision is applied before
// the next event, so a group cannot become ready unnoticed.
#include <algorithm>
#include <utility>

#include "core/log.h"
#include "kube/pod_group.h"
#include "kube/topology.h"
#include "scheduler/loop.h"

namespace copse::scheduler {
namespace {

bool IsMember(const PodInfo& pod) {
  return pod.group_kind != PodInfo::GroupKind::kNone && !pod.pod_group.empty();
}

}  // namespace

// ------------------------------------------------------------------ pods

void SchedulerLoop::Apply(PodChanged& event) {
  const PodPtr& pod = event.pod;
  if (!pod->node_name.empty()) {
    if (event.update && event.was_assigned) {
      // A member's readiness moves its group's status (Running, ready counts).
      if (IsMember(*pod) && gangs_.SetReady(*pod, event.ready)) {
        reporter_.MembersChanged(
            GroupUnitKey(pod->group_kind, pod->namespace_name, pod->pod_group));
      }
      // An assigned pod changed: labels or smaller requests may help others.
      const PodPtr old = cache_.GetPod(pod->uid);
      cache_.AddOrUpdatePod(pod);
      if (old == nullptr) return;
      const bool labels = old->labels != pod->labels;
      if (labels || old->requests.Get(kResourceIdCpu) != pod->requests.Get(kResourceIdCpu) ||
          old->requests.Get(kResourceIdMemory) != pod->requests.Get(kResourceIdMemory)) {
        const queue::ClusterEvent change{
            queue::EventResource::kAssignedPod,
            labels ? queue::kActionUpdatePodLabel : queue::kActionUpdatePodScaleDown};
        queue_.AssignedPodUpdated(old, pod, change);
      }
      return;
    }
    // Bound (by copse or another scheduler), or first seen bound: it leaves
    // the queue and counts on its node.
    if (event.update) {
      queue_.Delete(*pod);
      reporter_.ForgetPod(pod->uid);
    }
    cache_.AddOrUpdatePod(pod);
    queue_.AssignedPodAdded(pod);
    if (IsMember(*pod)) MemberBound(pod, event.ready);
    return;
  }
  if (IsMember(*pod)) {
    // Every member goes to the tracker, whatever its scheduler: ownership
    // of the group is decided by all of them.
    PendingMember(pod);
    return;
  }
  if (!profiles_.Owns(*pod)) return;
  if (event.update) {
    queue_.Update(nullptr, pod);  // the queued version is the old one
  } else {
    // A gated pod carries PodScheduled=False/SchedulingGated from its
    // creation (the API server sets it); nothing to write.
    queue_.Add(pod);
  }
}

void SchedulerLoop::Apply(PodGone& event) {
  reporter_.ForgetPod(event.uid);
  gangs_.ForgetEvicting(event.uid);
  if (cache_.Knows(event.uid)) {
    cache_.RemovePod(event.uid);
    if (event.pod) queue_.AssignedPodDeleted(event.pod);
  }
  if (!event.pod) return;
  queue_.Delete(*event.pod);
  if (IsMember(*event.pod)) MemberGone(*event.pod, event.terminal, event.succeeded);
}

// ------------------------------------------------------------------ gangs

// A pending member: the profile's PreEnqueue plugins (SchedulingGates, ...)
// decide whether it counts towards its group yet. Another scheduler's
// member counts for the group's ownership only.
void SchedulerLoop::PendingMember(const PodPtr& pod) {
  if (std::optional<size_t> profile = profiles_.IndexOf(pod->scheduler_name)) {
    if (!profiles_.at(*profile).RunPreEnqueue(*pod).IsSuccess()) {
      ApplyDecision(gangs_.UpsertGated(pod));
      return;
    }
  }
  ApplyDecision(gangs_.UpsertPending(pod));
}

void SchedulerLoop::MemberBound(const PodPtr& pod, bool ready) {
  ApplyDecision(gangs_.MarkBound(pod, ready));
  reporter_.MemberBound(*pod);
}

void SchedulerLoop::MemberGone(const PodInfo& pod, bool finished, bool succeeded) {
  const GangTracker::Decision d = gangs_.Remove(pod, finished, succeeded);
  ApplyDecision(d);
  reporter_.MemberGone(d.key);
}

// Every member is assumed (its bind is in flight): the group needs no cycle.
bool SchedulerLoop::AllBinding(const queue::PodList& members) const {
  return std::all_of(members.begin(), members.end(),
                     [&](const PodPtr& pod) { return cache_.IsAssumed(pod->uid); });
}

void SchedulerLoop::ApplyDecision(const GangTracker::Decision& d) {
  // First (its patch goes out before the status writes below): a group is
  // protected from the moment it is copse's, with members to schedule or
  // bound, not only once placed, and no longer once it is not copse's.
  reporter_.GroupSeen(d.key);
  switch (d.readiness) {
    case GangTracker::Readiness::kEmpty:
    case GangTracker::Readiness::kNotOurs:
      queue_.DeleteGroup(d.key);
      break;
    case GangTracker::Readiness::kMixedSchedulers:
      queue_.DeleteGroup(d.key);
      reporter_.GroupMixed(d);
      break;
    case GangTracker::Readiness::kMissingSpec:
    case GangTracker::Readiness::kWaitingForMembers:
      queue_.DeleteGroup(d.key);
      reporter_.MembersWaiting(d);
      break;
    case GangTracker::Readiness::kReady:
      // Members whose binds are in flight need no cycle: when the group was
      // just placed, each confirmed bind re-evaluates it with the others
      // still assumed, and queueing it then only costs a pop that finds
      // nothing to place. A bind that fails forgets its pod and
      // re-evaluates the group, which queues it again.
      if (!AllBinding(d.members)) queue_.UpsertGroup(d.key, d.members);
      break;
  }
  if (d.spec_events) reporter_.SpecEvents(d.key);
}

template <typename T>
void SchedulerLoop::OnGroupObject(PodInfo::GroupKind kind, const std::shared_ptr<const T>& object) {
  const kube::ObjectMeta& meta = object->meta;
  const queue::UnitKey key = GroupUnitKey(kind, meta.namespace_, meta.name);
  reporter_.SetGroupObject(object);
  // A write of the group's status or metadata (copse's own PodGroupScheduled
  // condition and finalizer: two per gang) leaves metadata.generation as it
  // is, and the spec with it: only the deletion protection may change.
  if (meta.generation > 0 && gangs_.HasSpecFrom(key, meta.uid, meta.generation)) {
    reporter_.ReconcileProtection(key);
    return;
  }
  Result<GangSpec> spec = object->ToGangSpec();
  if (!spec.ok()) {
    LogWarning("scheduler", std::string(GroupKindName(kind)) + " " + meta.Key() +
                                " ignored: " + spec.error().message);
    ApplyDecision(gangs_.SetInvalidSpec(
        kind, meta.namespace_, meta.name,
        std::string(GroupKindName(kind)) + " " + meta.Key() +
            " is invalid: " + spec.error().message,
        GangTracker::SpecEvent{meta.uid, meta.generation, "InvalidSpec", spec.error().message}));
    return;
  }
  // Spec 002's consistency check: legal, but worth a Warning event.
  std::vector<GangTracker::SpecEvent> warnings;
  const std::vector<TopologyDefinition> known = topologies_.Definitions();
  for (std::string& warning : GangSpecWarnings(*spec, &known)) {
    warnings.push_back({meta.uid, meta.generation, "InconsistentSpec", std::move(warning)});
  }
  ApplyDecision(gangs_.SetSpec(kind, std::move(spec).value(), std::move(warnings)));
  reporter_.ReconcileProtection(key);
}

void SchedulerLoop::Apply(GroupObjectChanged& event) {
  if (event.pod_group) {
    OnGroupObject(event.kind, event.pod_group);
  } else if (event.copse_pod_group) {
    OnGroupObject(event.kind, event.copse_pod_group);
  }
}

void SchedulerLoop::Apply(GroupObjectGone& event) {
  ApplyDecision(gangs_.RemoveSpec(event.kind, event.namespace_name, event.name));
  reporter_.ForgetGroupObject(event.kind, event.namespace_name, event.name);
}

// Topology objects feed the catalog; groups waiting on one are retried.
void SchedulerLoop::Apply(TopologyChanged& event) {
  if (Status s = topologies_.Upsert(*event.topology); !s.ok()) {
    LogWarning("scheduler",
               "Topology " + event.topology->meta.name + " ignored: " + s.error().message);
    reporter_.TopologyInvalid(*event.topology, s.error().message);
  }
  queue_.MoveAllToActiveOrBackoffQueue(queue::kEventForceActivate, {}, {});
}

void SchedulerLoop::Apply(TopologyGone& event) { topologies_.Remove(event.name); }

// ------------------------------------------------------------------ cluster

void SchedulerLoop::Apply(NodeChanged& event) {
  const NodeInfo& node = *event.node;
  cache_.UpsertNode(node.name(), [&](NodeInfo& info) {
    info.SetLabels(node.labels());
    info.SetAllocatable(node.allocatable());
    info.SetTaints(node.taints());
    info.SetUnschedulable(node.unschedulable());
  });
  if (event.action.Empty()) return;
  queue_.MoveAllToActiveOrBackoffQueue({queue::EventResource::kNode, event.action},
                                       queue::EventObject(event.old_node),
                                       queue::EventObject(event.node));
}

void SchedulerLoop::Apply(NodeGone& event) {
  cache_.RemoveNode(event.node->name());
  queue_.MoveAllToActiveOrBackoffQueue({queue::EventResource::kNode, queue::kActionDelete},
                                       queue::EventObject(event.node), {});
}

void SchedulerLoop::Apply(NamespaceChanged& event) {
  cache_.SetNamespaceLabels(event.name, event.labels);
  if (event.update) {
    queue_.MoveAllToActiveOrBackoffQueue({queue::EventResource::kNamespace, queue::kActionUpdate},
                                         {}, {});
  }
}

void SchedulerLoop::Apply(NamespaceGone& event) { cache_.RemoveNamespace(event.name); }

void SchedulerLoop::Apply(PdbChanged& event) {
  cache_.SetPodDisruptionBudget(event.key, std::move(event.pdb));
}

void SchedulerLoop::Apply(PdbGone& event) { cache_.RemovePodDisruptionBudget(event.key); }

}  // namespace copse::scheduler
