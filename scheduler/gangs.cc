#include "scheduler/gangs.h"

#include <algorithm>
#include <utility>

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

GangTracker::GangTracker(std::vector<std::string> our_scheduler_names)
    : ours_(our_scheduler_names.begin(), our_scheduler_names.end()) {}

GangTracker::Group& GangTracker::GroupFor(PodInfo::GroupKind kind, std::string_view ns,
                                          std::string_view name) {
  ++changes_;  // every change to a group's members or spec comes through here
  const std::string key = GroupUnitKey(kind, ns, name).ToString();
  Group& group = groups_[key];
  group.key = key;
  group.kind = kind;
  group.ns = std::string(ns);
  group.name = std::string(name);
  return group;
}

GangTracker::Group* GangTracker::Find(const queue::UnitKey& key) {
  auto it = groups_.find(key.ToString());
  return it == groups_.end() ? nullptr : &it->second;
}

const GangTracker::Group* GangTracker::Find(const queue::UnitKey& key) const {
  auto it = groups_.find(key.ToString());
  return it == groups_.end() ? nullptr : &it->second;
}

void GangTracker::Forget(Group& group, const std::string& uid) {
  for (auto* members : {&group.pending, &group.gated, &group.bound}) {
    auto it = members->find(uid);
    if (it == members->end()) continue;
    auto count = group.schedulers.find(it->second->scheduler_name);
    if (count != group.schedulers.end() && --count->second == 0) group.schedulers.erase(count);
    members->erase(it);
  }
  if (group.bound.empty()) with_bound_.erase(group.key);
  group.ready.erase(uid);
}

void GangTracker::Insert(Group& group, std::map<std::string, PodPtr>& into, PodPtr pod) {
  Forget(group, pod->uid);
  ++group.schedulers[pod->scheduler_name];
  const std::string uid = pod->uid;
  into.emplace(uid, std::move(pod));
  if (&into == &group.bound) with_bound_.insert(group.key);
}

GangTracker::Ownership GangTracker::OwnershipOf(const Group& group) const {
  // Members that ran and ended still say whose the group is (its status
  // is copse's to finish: Succeeded, Failed).
  bool any_ours = false;
  size_t others = 0;
  for (const auto& [name, count] : group.schedulers) any_ours = any_ours || ours_.contains(name);
  for (const auto& [name, count] : group.finished_schedulers) {
    any_ours = any_ours || ours_.contains(name);
    if (!group.schedulers.contains(name)) ++others;
  }
  if (!any_ours) return Ownership::kNone;
  return group.schedulers.size() + others > 1 ? Ownership::kMixed : Ownership::kOurs;
}

GangTracker::Decision GangTracker::Evaluate(const queue::UnitKey& key, const Group& group) const {
  Decision d;
  d.key = key;
  d.spec_events = !group.spec_events.empty() && OwnershipOf(group) == Ownership::kOurs;
  if (group.pending.empty()) {
    d.readiness = Readiness::kEmpty;
    return d;
  }
  auto waiting = [&] {
    for (const auto& [uid, pod] : group.pending) d.waiting.push_back(pod);
  };
  switch (OwnershipOf(group)) {
    case Ownership::kNone:
      d.readiness = Readiness::kNotOurs;
      return d;
    case Ownership::kMixed: {
      d.readiness = Readiness::kMixedSchedulers;
      std::string list;
      for (const auto& [name, count] : group.schedulers) {
        list += (list.empty() ? "" : ", ") + (name.empty() ? std::string("\"\"") : name);
      }
      d.message = "pod group " + group.ns + "/" + group.name +
                  ": members name different schedulers (" + list +
                  "); every member of a group must use the same schedulerName";
      waiting();
      return d;
    }
    case Ownership::kOurs:
      break;
  }
  const std::string what =
      std::string(GroupKindName(group.kind)) + " \"" + group.ns + "/" + group.name + "\"";
  if (!group.spec) {
    d.readiness = Readiness::kMissingSpec;
    d.message = !group.invalid.empty()
                    ? group.invalid
                    : what + " does not exist; the pod waits until it is created";
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

void GangTracker::EraseIfUnused(const queue::UnitKey& key) {
  auto it = groups_.find(key.ToString());
  if (it == groups_.end()) return;
  const Group& group = it->second;
  if (!group.spec && group.invalid.empty() && group.pending.empty() && group.gated.empty() &&
      group.bound.empty()) {
    groups_.erase(it);
  }
}

GangTracker::Decision GangTracker::SetSpec(PodInfo::GroupKind kind, GangSpec spec,
                                           std::vector<SpecEvent> warnings) {
  const queue::UnitKey key = GroupUnitKey(kind, spec.namespace_, spec.name);
  Group& group = GroupFor(kind, spec.namespace_, spec.name);
  group.spec = std::make_shared<const GangSpec>(std::move(spec));
  group.invalid.clear();
  group.spec_events = std::move(warnings);
  return Evaluate(key, group);
}

GangTracker::Decision GangTracker::SetInvalidSpec(PodInfo::GroupKind kind, const std::string& ns,
                                                  const std::string& name, std::string why,
                                                  SpecEvent event) {
  const queue::UnitKey key = GroupUnitKey(kind, ns, name);
  Group& group = GroupFor(kind, ns, name);
  group.spec.reset();
  group.scheduled_reported = false;
  group.invalid = std::move(why);
  group.spec_events = {std::move(event)};
  return Evaluate(key, group);
}

GangTracker::Decision GangTracker::RemoveSpec(PodInfo::GroupKind kind, const std::string& ns,
                                              const std::string& name) {
  const queue::UnitKey key = GroupUnitKey(kind, ns, name);
  Group& group = GroupFor(kind, ns, name);
  group.spec.reset();
  group.invalid.clear();
  group.spec_events.clear();
  group.scheduled_reported = false;
  Decision d = Evaluate(key, group);
  EraseIfUnused(key);
  return d;
}

GangTracker::Decision GangTracker::UpsertPending(PodPtr pod) {
  const queue::UnitKey key = GroupUnitKey(pod->group_kind, pod->namespace_name, pod->pod_group);
  Group& group = GroupFor(pod->group_kind, pod->namespace_name, pod->pod_group);
  Insert(group, group.pending, std::move(pod));
  return Evaluate(key, group);
}

GangTracker::Decision GangTracker::UpsertGated(PodPtr pod) {
  const queue::UnitKey key = GroupUnitKey(pod->group_kind, pod->namespace_name, pod->pod_group);
  Group& group = GroupFor(pod->group_kind, pod->namespace_name, pod->pod_group);
  Insert(group, group.gated, std::move(pod));
  return Evaluate(key, group);
}

GangTracker::Decision GangTracker::MarkBound(PodPtr pod, bool ready) {
  const queue::UnitKey key = GroupUnitKey(pod->group_kind, pod->namespace_name, pod->pod_group);
  Group& group = GroupFor(pod->group_kind, pod->namespace_name, pod->pod_group);
  const std::string uid = pod->uid;
  Insert(group, group.bound, std::move(pod));  // forgets the uid's old readiness
  if (ready) group.ready.insert(uid);
  group.pending_victims.clear();  // the delayed preemption has landed
  return Evaluate(key, group);
}

bool GangTracker::SetReady(const PodInfo& pod, bool ready) {
  Group* group = Find(GroupUnitKey(pod.group_kind, pod.namespace_name, pod.pod_group));
  if (group == nullptr || !group->bound.contains(pod.uid)) return false;
  return ready ? group->ready.insert(pod.uid).second : group->ready.erase(pod.uid) > 0;
}

GangTracker::Decision GangTracker::Remove(const PodInfo& pod, bool finished, bool succeeded) {
  const queue::UnitKey key = GroupUnitKey(pod.group_kind, pod.namespace_name, pod.pod_group);
  Group& group = GroupFor(pod.group_kind, pod.namespace_name, pod.pod_group);
  if (auto it = group.bound.find(pod.uid); finished && it != group.bound.end()) {
    if (group.finished.emplace(pod.uid, pod.sub_group).second) {
      ++group.finished_schedulers[it->second->scheduler_name];
    }
    if (!succeeded) group.failed.insert(pod.uid);
  }
  Forget(group, pod.uid);
  Decision d = Evaluate(key, group);
  EraseIfUnused(key);
  return d;
}

GangTracker::Decision GangTracker::Evaluate(const queue::UnitKey& key) {
  if (const Group* group = Find(key)) return Evaluate(key, *group);
  Decision d;
  d.key = key;
  return d;
}

std::shared_ptr<const GangSpec> GangTracker::Spec(const queue::UnitKey& key) const {
  const Group* group = Find(key);
  return group == nullptr ? nullptr : group->spec;
}

bool GangTracker::HasSpecFrom(const queue::UnitKey& key, std::string_view uid,
                              int64_t generation) const {
  const Group* group = Find(key);
  return group != nullptr && group->spec != nullptr && group->spec->uid == uid &&
         group->spec->generation == generation;
}

GangTracker::GroupInfo GangTracker::Info(const queue::UnitKey& key) const {
  GroupInfo info;
  const Group* group = Find(key);
  if (group == nullptr) return info;
  info.spec = group->spec;
  info.kind = group->kind;
  info.pending = group->pending.size();
  info.bound = group->bound.size();
  info.ready = group->ready.size();
  info.scheduled_reported = group->scheduled_reported;
  info.ownership = OwnershipOf(*group);
  return info;
}

std::vector<PodPtr> GangTracker::BoundMembers(const queue::UnitKey& key) const {
  std::vector<PodPtr> out;
  if (const Group* group = Find(key)) {
    for (const auto& [uid, pod] : group->bound) out.push_back(pod);
  }
  return out;
}

GangTracker::Ownership GangTracker::OwnershipOf(const queue::UnitKey& key) const {
  const Group* group = Find(key);
  return group == nullptr ? Ownership::kNone : OwnershipOf(*group);
}

std::vector<std::string> GangTracker::SchedulerNames(const queue::UnitKey& key) const {
  std::vector<std::string> names;
  if (const Group* group = Find(key)) {
    for (const auto& [name, count] : group->schedulers) names.push_back(name);
  }
  return names;
}

std::map<std::string, int32_t> GangTracker::BoundPerSubGroup(const queue::UnitKey& key) const {
  std::map<std::string, int32_t> out;
  if (const Group* group = Find(key)) {
    for (const auto& [uid, pod] : group->bound) ++out[pod->sub_group];
  }
  return out;
}

GangTracker::MemberCounts GangTracker::CountMembers(const queue::UnitKey& key) const {
  MemberCounts out;
  const Group* group = Find(key);
  if (group == nullptr) return out;
  for (const auto& [uid, pod] : group->bound) {
    ++out.bound[pod->sub_group];
    if (group->ready.contains(uid)) ++out.ready[pod->sub_group];
  }
  for (const auto& [uid, sub_group] : group->finished) {
    ++(group->failed.contains(uid) ? out.failed : out.succeeded)[sub_group];
  }
  return out;
}

bool GangTracker::MarkScheduledReported(const queue::UnitKey& key) {
  Group* group = Find(key);
  if (group == nullptr || group->scheduled_reported) return false;
  group->scheduled_reported = true;
  return true;
}

void GangTracker::SetPendingVictims(const queue::UnitKey& key, std::set<std::string> victims) {
  if (Group* group = Find(key)) group->pending_victims = std::move(victims);
}

std::set<std::string> GangTracker::PendingVictims(const queue::UnitKey& key) const {
  const Group* group = Find(key);
  return group == nullptr ? std::set<std::string>{} : group->pending_victims;
}

void GangTracker::AddEvicting(const std::set<std::string>& uids) {
  evicting_.insert(uids.begin(), uids.end());
}

void GangTracker::ForgetEvicting(const std::string& uid) { evicting_.erase(uid); }

std::vector<GangTracker::SpecEvent> GangTracker::TakeSpecEvents(const queue::UnitKey& key) {
  Group* group = Find(key);
  if (group == nullptr || group->spec_events.empty() || OwnershipOf(*group) != Ownership::kOurs) {
    return {};
  }
  return std::exchange(group->spec_events, {});
}

}  // namespace copse::scheduler
