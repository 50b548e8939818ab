#include "scheduler/gangs.h"

namespace copse::scheduler {

queue::UnitKey GroupUnitKey(PodInfo::GroupKind kind, std::string_view ns, std::string_view name) {
  if (kind == PodInfo::GroupKind::kCopsePodGroup) {
    return queue::UnitKey::ForPodGroup(ns, "copse/" + std::string(name));
  }
  return queue::UnitKey::ForPodGroup(ns, name);
}

std::string_view GroupKindName(PodInfo::GroupKind kind) noexcept {
  switch (kind) {
    case PodInfo::GroupKind::kWorkloadPodGroup:
      return "scheduling.k8s.io/v1alpha2 PodGroup";
    case PodInfo::GroupKind::kCopsePodGroup:
      return "scheduling.copse.dev/v1alpha1 PodGroup";
    case PodInfo::GroupKind::kNone:
      break;
  }
  return "PodGroup";
}

GangTracker::Group& GangTracker::GroupFor(PodInfo::GroupKind kind, std::string_view ns,
                                          std::string_view name) {
  const std::string key = GroupUnitKey(kind, ns, name).ToString();
  Group& group = groups_[key];
  group.kind = kind;
  group.ns = std::string(ns);
  group.name = std::string(name);
  return group;
}

GangTracker::Decision GangTracker::EvaluateLocked(const queue::UnitKey& key, Group& group) {
  Decision d;
  d.key = key;
  if (group.pending.empty()) {
    d.readiness = Readiness::kEmpty;
    return d;
  }
  auto waiting = [&] {
    for (const auto& [uid, pod] : group.pending) d.waiting.push_back(pod);
  };
  const std::string what =
      std::string(GroupKindName(group.kind)) + " \"" + group.ns + "/" + group.name + "\"";
  if (!group.spec) {
    d.readiness = Readiness::kMissingSpec;
    d.message = what + " does not exist; the pod waits until it is created";
    waiting();
    return d;
  }
  const size_t required =
      group.spec->IsGang() ? static_cast<size_t>(std::max(0, group.spec->RequiredPods(kRootGroup)))
                           : 0;
  const size_t observed = group.pending.size() + group.bound.size();
  if (observed < required) {
    d.readiness = Readiness::kWaitingForMembers;
    // No running count in the message: each waiting member's status is
    // written once, not again for every member that arrives after it (a gang
    // of n pods arriving one by one would cost ~n^2/2 status writes).
    d.message = what + ": waiting for members: " + std::to_string(required) +
                " pods required, fewer observed so far";
    waiting();
    return d;
  }
  d.readiness = Readiness::kReady;
  for (const auto& [uid, pod] : group.pending) d.members.push_back(pod);
  return d;
}

GangTracker::Decision GangTracker::SetSpec(PodInfo::GroupKind kind, GangSpec spec) {
  std::lock_guard lock(mu_);
  const queue::UnitKey key = GroupUnitKey(kind, spec.namespace_, spec.name);
  Group& group = GroupFor(kind, spec.namespace_, spec.name);
  group.spec = std::make_shared<const GangSpec>(std::move(spec));
  return EvaluateLocked(key, group);
}

GangTracker::Decision GangTracker::RemoveSpec(PodInfo::GroupKind kind, const std::string& ns,
                                              const std::string& name) {
  std::lock_guard lock(mu_);
  const queue::UnitKey key = GroupUnitKey(kind, ns, name);
  Group& group = GroupFor(kind, ns, name);
  group.spec.reset();
  group.scheduled_reported = false;
  Decision d = EvaluateLocked(key, group);
  if (group.pending.empty() && group.bound.empty()) groups_.erase(key.ToString());
  return d;
}

GangTracker::Decision GangTracker::UpsertPending(PodPtr pod) {
  std::lock_guard lock(mu_);
  const queue::UnitKey key = GroupUnitKey(pod->group_kind, pod->namespace_name, pod->pod_group);
  Group& group = GroupFor(pod->group_kind, pod->namespace_name, pod->pod_group);
  group.bound.erase(pod->uid);
  group.pending[pod->uid] = std::move(pod);
  return EvaluateLocked(key, group);
}

GangTracker::Decision GangTracker::MarkBound(const PodInfo& pod) {
  std::lock_guard lock(mu_);
  const queue::UnitKey key = GroupUnitKey(pod.group_kind, pod.namespace_name, pod.pod_group);
  Group& group = GroupFor(pod.group_kind, pod.namespace_name, pod.pod_group);
  group.pending.erase(pod.uid);
  group.bound.insert(pod.uid);
  group.pending_victims.clear();  // the delayed preemption has landed
  return EvaluateLocked(key, group);
}

GangTracker::Decision GangTracker::Remove(const PodInfo& pod) {
  std::lock_guard lock(mu_);
  const queue::UnitKey key = GroupUnitKey(pod.group_kind, pod.namespace_name, pod.pod_group);
  Group& group = GroupFor(pod.group_kind, pod.namespace_name, pod.pod_group);
  group.pending.erase(pod.uid);
  group.bound.erase(pod.uid);
  Decision d = EvaluateLocked(key, group);
  if (!group.spec && group.pending.empty() && group.bound.empty()) {
    groups_.erase(key.ToString());
  }
  return d;
}

GangTracker::Decision GangTracker::Evaluate(const queue::UnitKey& key) {
  std::lock_guard lock(mu_);
  auto it = groups_.find(key.ToString());
  if (it == groups_.end()) {
    Decision d;
    d.key = key;
    return d;
  }
  return EvaluateLocked(key, it->second);
}

std::vector<GangTracker::Decision> GangTracker::ReadyGroups() {
  std::lock_guard lock(mu_);
  std::vector<Decision> out;
  for (auto& [name, group] : groups_) {
    if (group.pending.empty()) continue;
    Decision d = EvaluateLocked(GroupUnitKey(group.kind, group.ns, group.name), group);
    if (d.readiness == Readiness::kReady) out.push_back(std::move(d));
  }
  return out;
}

std::shared_ptr<const GangSpec> GangTracker::Spec(const queue::UnitKey& key) const {
  std::lock_guard lock(mu_);
  auto it = groups_.find(key.ToString());
  if (it == groups_.end()) return nullptr;
  return it->second.spec;
}

bool GangTracker::HasSpecFrom(const queue::UnitKey& key, std::string_view uid,
                              int64_t generation) const {
  std::lock_guard lock(mu_);
  auto it = groups_.find(key.ToString());
  return it != groups_.end() && it->second.spec != nullptr && it->second.spec->uid == uid &&
         it->second.spec->generation == generation;
}

GangTracker::GroupInfo GangTracker::Info(const queue::UnitKey& key) const {
  std::lock_guard lock(mu_);
  GroupInfo info;
  auto it = groups_.find(key.ToString());
  if (it == groups_.end()) return info;
  info.spec = it->second.spec;
  info.kind = it->second.kind;
  info.pending = it->second.pending.size();
  info.bound = it->second.bound.size();
  info.scheduled_reported = it->second.scheduled_reported;
  return info;
}

bool GangTracker::MarkScheduledReported(const queue::UnitKey& key) {
  std::lock_guard lock(mu_);
  auto it = groups_.find(key.ToString());
  if (it == groups_.end() || it->second.scheduled_reported) return false;
  it->second.scheduled_reported = true;
  return true;
}

void GangTracker::SetPendingVictims(const queue::UnitKey& key, std::set<std::string> victims) {
  std::lock_guard lock(mu_);
  auto it = groups_.find(key.ToString());
  if (it != groups_.end()) it->second.pending_victims = std::move(victims);
}

std::set<std::string> GangTracker::PendingVictims(const queue::UnitKey& key) const {
  std::lock_guard lock(mu_);
  auto it = groups_.find(key.ToString());
  return it == groups_.end() ? std::set<std::string>{} : it->second.pending_victims;
}

}  // namespace copse::scheduler
