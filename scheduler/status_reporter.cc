#include "scheduler/status_reporter.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "core/quantity.h"
#include "kube/pod_group.h"
#include "kube/topology.h"

namespace copse::scheduler {
namespace {

PodId IdOf(const PodInfo& pod) { return {pod.namespace_name, pod.name, pod.uid}; }

size_t RequiredPods(const GangSpec& spec) {
  return static_cast<size_t>(std::max(1, spec.IsGang() ? spec.RequiredPods(kRootGroup) : 1));
}

// The finalizer list with copse's protection added or removed; nullopt when
// it already is as wanted.
std::optional<std::vector<std::string>> WithProtection(const kube::ObjectMeta& meta, bool protect) {
  std::vector<std::string> finalizers = meta.finalizers;
  const auto it =
      std::find(finalizers.begin(), finalizers.end(), kube::kPodGroupProtectionFinalizer);
  if (protect == (it != finalizers.end())) return std::nullopt;
  if (protect) {
    finalizers.emplace_back(kube::kPodGroupProtectionFinalizer);
  } else {
    finalizers.erase(it);
  }
  return finalizers;
}

// Spec 002: what preemption may not take from the group's bound pods: all of
// a non-preemptible group's requests; of a semi-preemptible group's, those
// of its required part (RequiredPods members, taken in uid order: members of
// one subgroup usually ask alike).
std::map<std::string, std::string, std::less<>> AllocatedNonPreemptible(
    const GangSpec& spec, const std::vector<PodPtr>& bound, const ResourceNames* names) {
  std::map<std::string, std::string, std::less<>> out;
  if (names == nullptr || spec.preemptibility == Preemptibility::kPreemptible) return out;
  size_t count = bound.size();
  if (spec.preemptibility == Preemptibility::kSemiPreemptible) {
    count = std::min(count, static_cast<size_t>(std::max(0, spec.RequiredPods(kRootGroup))));
  }
  ResourceVector total;
  for (size_t i = 0; i < count; ++i) total += bound[i]->requests;
  for (ResourceId id = 0; id < total.size(); ++id) {
    const int64_t value = total.Get(id);
    if (value == 0 || id == kResourceIdPods) continue;
    const Quantity q = id == kResourceIdCpu ? Quantity::FromMilli(value)
                       : id == kResourceIdMemory || id == kResourceIdEphemeralStorage
                           ? Quantity::FromInt(value, Quantity::Format::kBinarySI)
                           : Quantity::FromInt(value);
    out.emplace(std::string(names->Name(id)), q.ToString());
  }
  return out;
}

// Members counted per subgroup: `a` plus `b`.
std::map<std::string, int32_t, std::less<>> Sum(
    const std::map<std::string, int32_t, std::less<>>& a,
    const std::map<std::string, int32_t, std::less<>>& b) {
  std::map<std::string, int32_t, std::less<>> out = a;
  for (const auto& [name, count] : b) out[name] += count;
  return out;
}

// Members of `counts` below subgroup `name` (its subtree).
int32_t InSubtree(const GangSpec& spec, const std::string& name,
                  const std::map<std::string, int32_t, std::less<>>& counts) {
  int32_t total = 0;
  for (size_t below : spec.Subtree(name)) {
    auto it = counts.find(spec.sub_groups[below].name);
    if (it != counts.end()) total += it->second;
  }
  return total;
}

int32_t Total(const std::map<std::string, int32_t, std::less<>>& counts) {
  int32_t total = 0;
  for (const auto& [name, count] : counts) total += count;
  return total;
}

}  // namespace

std::string_view CopsePodGroupPhase(const GangSpec& spec, const GangTracker::MemberCounts& counts,
                                    size_t pending, std::optional<bool> scheduled_condition) {
  const auto satisfied = [&](const std::map<std::string, int32_t, std::less<>>& members) {
    return spec.IsSatisfied(kRootGroup, members);
  };
  if (pending == 0 && counts.bound.empty() && !counts.succeeded.empty() &&
      satisfied(counts.succeeded)) {
    return kube::kPodGroupPhaseSucceeded;
  }
  const auto live = Sum(counts.bound, counts.succeeded);
  if (!counts.failed.empty() && !satisfied(live)) return kube::kPodGroupPhaseFailed;
  if (satisfied(Sum(counts.ready, counts.succeeded))) return kube::kPodGroupPhaseRunning;
  if (satisfied(live) || scheduled_condition == true) return kube::kPodGroupPhaseScheduled;
  if (scheduled_condition == false) return kube::kPodGroupPhaseUnschedulable;
  return kube::kPodGroupPhasePending;
}

StatusReporter::StatusReporter(ApiWriter& writer, GangTracker& gangs, const Profiles& profiles,
                               const Clock& clock, StatusReporterOptions options)
    : writer_(writer), gangs_(gangs), profiles_(profiles), clock_(clock), options_(options) {}

// ------------------------------------------------------------------ pods

void StatusReporter::PodFailed(const PodInfo& pod, std::string_view reason,
                               const std::string& message, std::optional<std::string> nominated) {
  if (!profiles_.Owns(pod)) return;
  std::string& last = last_status_[pod.uid];
  std::string stamp = std::string(reason) + "\n" + message;
  if (last == stamp && !nominated.has_value()) return;
  last = std::move(stamp);
  PodConditionUpdate condition;
  condition.reason = std::string(reason);
  condition.message = message;
  writer_.PatchPodStatus(IdOf(pod), condition, std::move(nominated));
  writer_.RecordPodEvent(IdOf(pod), "Warning", "FailedScheduling", message);
}

void StatusReporter::PodScheduled(const PodInfo& pod) {
  ForgetPod(pod.uid);
  if (!profiles_.Owns(pod)) return;
  writer_.RecordPodEvent(IdOf(pod), "Normal", "Scheduled",
                         "Successfully assigned " + pod.FullName() + " to " + pod.node_name);
}

void StatusReporter::ForgetPod(std::string_view uid) {
  if (last_status_.empty() && waiting_.empty()) return;
  const std::string key(uid);
  last_status_.erase(key);
  waiting_.erase(key);
}

void StatusReporter::MembersWaiting(const GangTracker::Decision& d) {
  if (options_.waiting_report_delay <= Clock::Duration::zero()) {
    for (const PodPtr& pod : d.waiting) PodFailed(*pod, "Unschedulable", d.message, std::nullopt);
    return;
  }
  const Clock::TimePoint due = clock_.Now() + options_.waiting_report_delay;
  for (const PodPtr& pod : d.waiting) {
    if (!profiles_.Owns(*pod)) continue;
    if (waiting_.try_emplace(pod->uid, due).second) {
      waiting_queue_.push_back(WaitingReport{pod->uid, d.key, due});
    }
  }
}

void StatusReporter::FlushWaitingReports() {
  std::map<std::string, queue::UnitKey> due_groups;  // each group once
  const Clock::TimePoint now = clock_.Now();
  while (!waiting_queue_.empty() && waiting_queue_.front().due <= now) {
    WaitingReport report = std::move(waiting_queue_.front());
    waiting_queue_.pop_front();
    auto it = waiting_.find(report.uid);
    if (it == waiting_.end() || it->second != report.due) continue;  // cancelled
    waiting_.erase(it);
    due_groups.try_emplace(report.key.ToString(), std::move(report.key));
  }
  for (const auto& [name, key] : due_groups) {
    // Still not ready: every member still waiting is told why, now (the
    // ones whose own delay has not passed yet too: one write each anyway).
    const GangTracker::Decision d = gangs_.Evaluate(key);
    if (d.readiness != GangTracker::Readiness::kMissingSpec &&
        d.readiness != GangTracker::Readiness::kWaitingForMembers) {
      continue;
    }
    for (const PodPtr& pod : d.waiting) waiting_.erase(pod->uid);
    for (const PodPtr& pod : d.waiting) PodFailed(*pod, "Unschedulable", d.message, std::nullopt);
  }
}

// ------------------------------------------------------------------ groups

void StatusReporter::SetGroupObject(std::shared_ptr<const kube::PodGroup> object) {
  const queue::UnitKey key = GroupUnitKey(PodInfo::GroupKind::kWorkloadPodGroup,
                                          object->meta.namespace_, object->meta.name);
  std::string key_text = key.ToString();
  // A new object under the old name: copse wrote nothing on it yet.
  if (auto it = objects_.find(key_text); it != objects_.end() && it->second.pod_group &&
                                         it->second.pod_group->meta.uid != object->meta.uid) {
    written_conditions_.erase(key_text);
  }
  objects_[std::move(key_text)] = GroupObject{std::move(object), nullptr};
}

void StatusReporter::SetGroupObject(std::shared_ptr<const kube::CopsePodGroup> object) {
  const queue::UnitKey key =
      GroupUnitKey(PodInfo::GroupKind::kCopsePodGroup, object->meta.namespace_, object->meta.name);
  std::string key_text = key.ToString();
  if (auto it = objects_.find(key_text);
      it != objects_.end() && it->second.copse && it->second.copse->meta.uid != object->meta.uid) {
    written_conditions_.erase(key_text);
  }
  objects_[std::move(key_text)] = GroupObject{nullptr, std::move(object)};
}

void StatusReporter::ForgetGroupObject(PodInfo::GroupKind kind, const std::string& ns,
                                       const std::string& name) {
  const std::string key = GroupUnitKey(kind, ns, name).ToString();
  objects_.erase(key);
  last_group_status_.erase(key);
  dirty_groups_.erase(key);
  last_counts_.erase(key);
  protection_sent_.erase(key);
  written_conditions_.erase(key);
}

const StatusReporter::GroupObject* StatusReporter::FindObject(const queue::UnitKey& key) const {
  auto it = objects_.find(key.ToString());
  return it == objects_.end() ? nullptr : &it->second;
}

void StatusReporter::OverlayWritten(const std::string& key_text,
                                    std::vector<kube::Condition>& conditions) const {
  auto written = written_conditions_.find(key_text);
  if (written == written_conditions_.end()) return;
  for (const kube::Condition& condition : written->second) {
    if (kube::Condition* existing = kube::FindCondition(conditions, condition.type)) {
      *existing = condition;
    } else {
      conditions.push_back(condition);
    }
  }
}

void StatusReporter::RememberWritten(const std::string& key_text,
                                     const std::vector<kube::Condition>& conditions,
                                     std::string_view type) {
  const kube::Condition* condition = kube::FindCondition(conditions, type);
  if (condition == nullptr) return;
  std::vector<kube::Condition>& written = written_conditions_[key_text];
  for (kube::Condition& entry : written) {
    if (entry.type == type) {
      entry = *condition;
      return;
    }
  }
  written.push_back(*condition);
}

void StatusReporter::GroupFailed(const queue::UnitKey& key, std::string_view reason,
                                 const std::string& message) {
  WriteGroupStatus(key, false, reason, message);
}

void StatusReporter::GroupMixed(const GangTracker::Decision& d) {
  for (const PodPtr& pod : d.waiting) PodFailed(*pod, "Unschedulable", d.message, std::nullopt);
  WriteGroupStatus(d.key, false, kReasonMixedSchedulers, d.message);
}

void StatusReporter::MemberBound(const PodInfo& pod) {
  const queue::UnitKey key = GroupUnitKey(pod.group_kind, pod.namespace_name, pod.pod_group);
  const GangTracker::GroupInfo info = gangs_.Info(key);
  if (!info.spec || info.ownership != GangTracker::Ownership::kOurs) return;
  if (info.bound >= RequiredPods(*info.spec) && gangs_.MarkScheduledReported(key)) {
    WriteScheduledStatus(key);
  } else if (info.scheduled_reported) {
    // Members bound after the group was reported Scheduled only move its
    // counts: coalesced (a 256-pod gang is one or two writes, not one per
    // member, each of which the informer would decode again).
    dirty_groups_.emplace(key.ToString(), key);
  }
}

void StatusReporter::WriteScheduledStatus(const queue::UnitKey& key) {
  const GangTracker::GroupInfo info = gangs_.Info(key);
  if (!info.spec) return;
  WriteGroupStatus(key, true, kube::kReasonScheduled,
                   std::to_string(info.bound) + " member pods scheduled (minimum " +
                       std::to_string(RequiredPods(*info.spec)) + ")");
}

void StatusReporter::WriteGroupStatus(const queue::UnitKey& key, bool scheduled,
                                      std::string_view reason, const std::string& message) {
  const ConditionUpdate update{scheduled, reason, &message};
  WriteStatus(key, &update);
}

// PodGroupScheduled on the group object (KEP rule: once True, stays True)
// and a copse PodGroup's phase and counts.
void StatusReporter::WriteStatus(const queue::UnitKey& key, const ConditionUpdate* condition) {
  const GangTracker::GroupInfo info = gangs_.Info(key);
  if (!info.spec) return;
  // Ownership: MixedSchedulers is the one thing written on a mixed group.
  const GangTracker::Ownership wanted =
      condition != nullptr && condition->reason == kReasonMixedSchedulers
          ? GangTracker::Ownership::kMixed
          : GangTracker::Ownership::kOurs;
  if (info.ownership != wanted) return;
  const std::string key_text = key.ToString();
  if (condition != nullptr) {
    // KEP-4671: once PodGroupScheduled is True it stays True. The object's
    // copy may not show our True write yet, so the tracker's flag decides.
    if (!condition->scheduled && info.scheduled_reported) {
      condition = nullptr;
    } else {
      std::string& last = last_group_status_[key_text];
      std::string stamp = std::string(condition->reason) + "\n" + *condition->message;
      if (last == stamp) {
        condition = nullptr;
      } else {
        last = std::move(stamp);
      }
    }
  }
  const GroupObject* object = FindObject(key);
  const std::string& ns = info.spec->namespace_;
  const std::string& name = info.spec->name;
  const std::string now = FormatRfc3339(clock_.WallNow());
  if (info.kind == PodInfo::GroupKind::kWorkloadPodGroup) {
    // Its status has conditions only.
    if (condition == nullptr) return;
    kube::PodGroupStatus status =
        object != nullptr && object->pod_group ? object->pod_group->status : kube::PodGroupStatus{};
    OverlayWritten(key_text, status.conditions);
    if (!kube::SetPodGroupScheduled(status.conditions, condition->scheduled,
                                    std::string(condition->reason), *condition->message, now,
                                    info.spec->generation)) {
      return;
    }
    RememberWritten(key_text, status.conditions, kube::kPodGroupScheduled);
    writer_.MergePatch(kube::resources::kPodGroups, ns, name, kube::PodGroup::StatusPatch(status),
                       "status");
    return;
  }
  if (info.kind != PodInfo::GroupKind::kCopsePodGroup) return;
  kube::CopsePodGroupStatus status =
      object != nullptr && object->copse ? object->copse->status : kube::CopsePodGroupStatus{};
  OverlayWritten(key_text, status.conditions);
  const bool changed = condition != nullptr &&
                       kube::SetPodGroupScheduled(status.conditions, condition->scheduled,
                                                  std::string(condition->reason),
                                                  *condition->message, now, info.spec->generation);
  if (changed) RememberWritten(key_text, status.conditions, kube::kPodGroupScheduled);
  // The condition as copse last wrote it (the object's copy may lag behind).
  std::optional<bool> scheduled_condition;
  if (info.scheduled_reported) {
    scheduled_condition = true;
  } else if (auto last = last_group_status_.find(key_text); last != last_group_status_.end()) {
    scheduled_condition = last->second.starts_with(std::string(kube::kReasonScheduled) + "\n");
  } else if (const kube::Condition* c =
                 kube::FindCondition(status.conditions, kube::kPodGroupScheduled)) {
    scheduled_condition = c->status == "True";
  }
  const GangTracker::MemberCounts counts = gangs_.CountMembers(key);
  const std::string phase(
      CopsePodGroupPhase(*info.spec, counts, info.pending, scheduled_condition));
  const auto bound = static_cast<int32_t>(info.bound);
  const int32_t ready = Total(counts.ready);
  // Per subgroup: the members naming it or a subgroup below it.
  std::vector<kube::CopseSubGroupStatus> sub_groups;
  std::string stamp = phase + " " + std::to_string(bound) + " " + std::to_string(ready);
  for (const SubGroupSpec& group : info.spec->sub_groups) {
    kube::CopseSubGroupStatus entry;
    entry.name = group.name;
    entry.scheduled = InSubtree(*info.spec, group.name, counts.bound);
    entry.ready = InSubtree(*info.spec, group.name, counts.ready);
    stamp += " " + entry.name + "=" + std::to_string(entry.scheduled) + "/" +
             std::to_string(entry.ready);
    sub_groups.push_back(std::move(entry));
  }
  std::map<std::string, std::string, std::less<>> non_preemptible =
      AllocatedNonPreemptible(*info.spec, gangs_.BoundMembers(key), options_.names);
  for (const auto& [resource, quantity] : non_preemptible) stamp += " " + resource + "=" + quantity;
  if (!changed) {
    if (status.phase == phase && status.scheduled == bound && status.ready == ready &&
        status.sub_groups == sub_groups && status.allocated_non_preemptible == non_preemptible) {
      last_counts_[key_text] = std::move(stamp);
      return;
    }
    // Written already; the object's copy has not caught up yet.
    if (auto last = last_counts_.find(key_text);
        last != last_counts_.end() && last->second == stamp) {
      return;
    }
  }
  last_counts_[key_text] = std::move(stamp);
  status.allocated_non_preemptible = std::move(non_preemptible);
  status.phase = phase;
  status.scheduled = bound;
  status.ready = ready;
  status.sub_groups = std::move(sub_groups);
  status.observed_generation = info.spec->generation;
  std::string patch = kube::CopsePodGroup::StatusPatch(status);
  if (!changed) {
    // Counts only: the conditions are left as they are on the server (the
    // object's copy may not show a condition written a moment ago).
    nlohmann::json counts_only = nlohmann::json::parse(patch);
    counts_only["status"].erase("conditions");
    patch = counts_only.dump();
  }
  writer_.MergePatch(kube::resources::kCopsePodGroups, ns, name, std::move(patch), "status");
}

void StatusReporter::FlushGroupStatuses(bool final) {
  if (dirty_groups_.empty()) return;
  const Clock::TimePoint now = clock_.Now();
  if (!final && now - last_group_flush_ < options_.group_status_flush_interval) return;
  last_group_flush_ = now;
  std::map<std::string, queue::UnitKey> keys;
  keys.swap(dirty_groups_);
  for (const auto& [text, key] : keys) {
    if (gangs_.Info(key).scheduled_reported) {
      WriteScheduledStatus(key);  // its message counts the bound members
    } else {
      WriteStatus(key, nullptr);
    }
  }
}

void StatusReporter::MembersChanged(const queue::UnitKey& key) {
  if (gangs_.OwnershipOf(key) != GangTracker::Ownership::kOurs) return;
  dirty_groups_.emplace(key.ToString(), key);
}

void StatusReporter::GroupSeen(const queue::UnitKey& key) { ReconcileProtection(key); }

// Deletion protection: a PodGroup copse placed members of keeps the
// finalizer until every member pod is terminal or gone.
void StatusReporter::SetProtection(const queue::UnitKey& key, bool protect) {
  const GroupObject* object = FindObject(key);
  if (object == nullptr) return;
  const kube::ObjectMeta& meta = object->pod_group ? object->pod_group->meta : object->copse->meta;
  const kube::ResourceRef& resource =
      object->pod_group ? kube::resources::kPodGroups : kube::resources::kCopsePodGroups;
  // Adding needs the group to be copse's; removing touches only copse's own
  // finalizer, which only copse's groups ever got.
  if (protect && gangs_.OwnershipOf(key) != GangTracker::Ownership::kOurs) return;
  std::optional<std::vector<std::string>> finalizers = WithProtection(meta, protect);
  if (!finalizers.has_value()) return;
  // Once per version of the object and direction: the object's copy shows
  // the patch only when its watch event is back, and events about the
  // group's members keep arriving meanwhile.
  std::pair<std::string, bool> sent{meta.resource_version, protect};
  auto [it, inserted] = protection_sent_.try_emplace(key.ToString(), sent);
  if (!inserted) {
    if (it->second == sent) return;
    it->second = std::move(sent);
  }
  nlohmann::json patch = {
      {"metadata", {{"finalizers", *finalizers}, {"resourceVersion", meta.resource_version}}}};
  writer_.MergePatch(resource, meta.namespace_, meta.name, patch.dump(), "");
}

void StatusReporter::Protect(const queue::UnitKey& key) { SetProtection(key, true); }

void StatusReporter::MemberGone(const queue::UnitKey& key) {
  const GangTracker::GroupInfo info = gangs_.Info(key);
  if (info.pending == 0 && info.bound == 0) SetProtection(key, false);
  MembersChanged(key);
}

// Called on every add/update of the group object, so a finalizer patch
// that lost a conflict (the group's status was written meanwhile) is
// retried with the newer version, after every tracker decision about the
// group (GroupSeen), and once after the pods are known at start-up (members
// that vanished while copse was down). Before the pods are synced nothing is
// known to be gone.
void StatusReporter::ReconcileProtection(const queue::UnitKey& key) {
  if (!pods_synced_) return;
  const GroupObject* object = FindObject(key);
  if (object == nullptr) return;
  const GangTracker::GroupInfo info = gangs_.Info(key);
  const kube::ObjectMeta& meta = object->pod_group ? object->pod_group->meta : object->copse->meta;
  if (info.pending == 0 && info.bound == 0) {
    SetProtection(key, false);
    return;
  }
  if (info.ownership != GangTracker::Ownership::kOurs) {
    // No longer copse's (a member naming another scheduler arrived): copse
    // holds nothing on it, its own finalizer included.
    SetProtection(key, false);
    return;
  }
  // Copse's from its first member on, placed or not: a waiting group is not
  // deleted under its pods. A terminating object takes no new finalizers.
  if (!meta.deletion_timestamp.has_value()) SetProtection(key, true);
  // A copse PodGroup copse owns shows Pending until something else holds.
  if (object->copse && object->copse->status.phase.empty() &&
      !last_counts_.contains(key.ToString())) {
    dirty_groups_.emplace(key.ToString(), key);
  }
}

void StatusReporter::ReconcileAllProtection() {
  std::vector<queue::UnitKey> keys;
  keys.reserve(objects_.size());
  for (const auto& [text, object] : objects_) {
    const kube::ObjectMeta& meta = object.pod_group ? object.pod_group->meta : object.copse->meta;
    keys.push_back(GroupUnitKey(object.pod_group ? PodInfo::GroupKind::kWorkloadPodGroup
                                                 : PodInfo::GroupKind::kCopsePodGroup,
                                meta.namespace_, meta.name));
  }
  for (const queue::UnitKey& key : keys) ReconcileProtection(key);
}

// ------------------------------------------------------------------ events

void StatusReporter::RecordGroupEvent(const queue::UnitKey& key, const std::string& uid,
                                      int64_t generation, std::string_view reason,
                                      const std::string& message) {
  if (gangs_.OwnershipOf(key) != GangTracker::Ownership::kOurs) return;
  const GroupObject* object = FindObject(key);
  if (object == nullptr) return;
  if (recorded_group_events_.size() > 100'000) recorded_group_events_.clear();
  const std::string stamp =
      uid + "\n" + std::to_string(generation) + "\n" + std::string(reason) + "\n" + message;
  if (!recorded_group_events_.insert(stamp).second) return;
  const kube::ObjectMeta& meta = object->pod_group ? object->pod_group->meta : object->copse->meta;
  const std::string_view api_version =
      object->pod_group ? kube::PodGroup::kApiVersion : kube::CopsePodGroup::kApiVersion;
  writer_.RecordEvent(std::string(api_version), "PodGroup",
                      PodId{meta.namespace_, meta.name, uid.empty() ? meta.uid : uid}, "Warning",
                      reason, message);
}

void StatusReporter::SpecEvents(const queue::UnitKey& key) {
  for (GangTracker::SpecEvent& event : gangs_.TakeSpecEvents(key)) {
    RecordGroupEvent(key, event.uid, event.generation, event.reason, event.message);
  }
}

void StatusReporter::GroupInvalid(const queue::UnitKey& key, const std::string& message) {
  const GangTracker::GroupInfo info = gangs_.Info(key);
  if (!info.spec) return;
  RecordGroupEvent(key, info.spec->uid, info.spec->generation, "InvalidSpec", message);
}

void StatusReporter::TopologyInvalid(const kube::Topology& topology, const std::string& message) {
  // Events about cluster-scoped objects live in "default", as kube's do.
  writer_.RecordEvent(std::string(kube::Topology::kApiVersion), "Topology",
                      PodId{"default", topology.meta.name, topology.meta.uid}, "Warning",
                      "InvalidSpec", message);
}

void StatusReporter::GroupDisrupted(const queue::UnitKey& key, std::string_view reason,
                                    const std::string& message) {
  const GangTracker::GroupInfo info = gangs_.Info(key);
  if (!info.spec || info.ownership != GangTracker::Ownership::kOurs) return;
  const GroupObject* object = FindObject(key);
  if (object == nullptr) return;
  kube::Condition condition;
  condition.type = std::string(kube::kDisruptionTarget);
  condition.status = "True";
  condition.reason = std::string(reason);
  condition.message = message;
  condition.last_transition_time = FormatRfc3339(clock_.WallNow());
  condition.observed_generation = info.spec->generation;
  const std::string& ns = info.spec->namespace_;
  const std::string& name = info.spec->name;
  const std::string key_text = key.ToString();
  if (object->pod_group) {
    kube::PodGroupStatus status = object->pod_group->status;
    OverlayWritten(key_text, status.conditions);
    if (!kube::SetCondition(status.conditions, condition)) return;
    RememberWritten(key_text, status.conditions, condition.type);
    writer_.MergePatch(kube::resources::kPodGroups, ns, name, kube::PodGroup::StatusPatch(status),
                       "status");
    return;
  }
  kube::CopsePodGroupStatus status = object->copse->status;
  OverlayWritten(key_text, status.conditions);
  if (!kube::SetCondition(status.conditions, condition)) return;
  RememberWritten(key_text, status.conditions, condition.type);
  writer_.MergePatch(kube::resources::kCopsePodGroups, ns, name,
                     kube::CopsePodGroup::StatusPatch(status), "status");
}

void StatusReporter::VictimGroupsDisrupted(std::span<const PodRef> victims, std::string_view reason,
                                           const std::string& message) {
  std::map<std::string, queue::UnitKey> groups;
  for (const PodRef& pod : victims) {
    if (pod->group_kind == PodInfo::GroupKind::kNone || pod->pod_group.empty()) continue;
    const queue::UnitKey key = GroupUnitKey(pod->group_kind, pod->namespace_name, pod->pod_group);
    groups.try_emplace(key.ToString(), key);
  }
  for (const auto& [text, key] : groups) GroupDisrupted(key, reason, message);
}

void StatusReporter::GroupEvent(const queue::UnitKey& key, std::string_view reason,
                                const std::string& message) {
  const GangTracker::GroupInfo info = gangs_.Info(key);
  if (!info.spec) return;
  RecordGroupEvent(key, info.spec->uid, info.spec->generation, reason, message);
}

// ------------------------------------------------------------------ timers

void StatusReporter::Flush(bool final) {
  FlushGroupStatuses(final);
  FlushWaitingReports();
}

std::optional<Clock::TimePoint> StatusReporter::NextDue() const {
  std::optional<Clock::TimePoint> next;
  if (!dirty_groups_.empty()) next = last_group_flush_ + options_.group_status_flush_interval;
  if (!waiting_queue_.empty()) {
    const Clock::TimePoint due = waiting_queue_.front().due;
    if (!next.has_value() || due < *next) next = due;
  }
  return next;
}

}  // namespace copse::scheduler
