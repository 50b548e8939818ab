#pragma once
// GangTracker: what the scheduler knows about each pod group (KEP-4671
// PodGroup or copse PodGroup): its spec, its member pods (pending, gated by a
// PreEnqueue plugin, or bound) and which schedulers they name. It decides
// when a group is ready to be queued (the PreEnqueue barrier) and whether the
// group is copse's at all:
//
//   kEmpty             no pending members: the group leaves the queue;
//   kNotOurs           no member names one of copse's profiles: another
//                      scheduler's group, never queued and never written to;
//   kMixedSchedulers   members name several schedulers (at least one of them
//                      copse's): never queued; copse's members and the group
//                      are told why (PodGroupScheduled=False, MixedSchedulers);
//   kMissingSpec       members name a PodGroup that does not exist (yet), or
//                      whose object is invalid: they wait, unqueued, with a
//                      message saying so; the group is queued as soon as a
//                      valid object appears;
//   kWaitingForMembers fewer members observed (pending + bound) than the
//                      group's required minimum: they wait, unqueued;
//   kReady             queue one unit for the group holding its pending members.
//
// Ownership (issue 14): copse writes statuses, finalizers and events of a
// group only while every member it knows names one of copse's profiles
// (Ownership::kOurs); a group whose members name several schedulers gets only
// the MixedSchedulers condition. Gated members count for ownership, not for
// the minimum.
//
// Member pods are never queued individually. Units are keyed
// UnitKey::ForPodGroup(namespace, name) for scheduling.k8s.io/v1alpha2
// groups and (namespace, "copse/" + name) for copse groups ('/' cannot occur
// in object names, so the two kinds never collide).
//
// Thread-safety: none; one owner, the scheduler's loop thread, which applies
// pod and group events in order (a decision is applied before the next event,
// so no readiness change can be missed).

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/gang.h"
#include "core/pod_info.h"
#include "queue/queued_unit.h"

namespace copse::scheduler {

using PodPtr = std::shared_ptr<const PodInfo>;

queue::UnitKey GroupUnitKey(PodInfo::GroupKind kind, std::string_view ns, std::string_view name);
// "scheduling.k8s.io/v1alpha2 PodGroup" or "scheduling.copse.dev/v1alpha1 PodGroup".
std::string_view GroupKindName(PodInfo::GroupKind kind) noexcept;

class GangTracker {
 public:
  enum class Readiness : uint8_t {
    kEmpty,
    kNotOurs,
    kMixedSchedulers,
    kMissingSpec,
    kWaitingForMembers,
    kReady,
  };
  enum class Ownership : uint8_t {
    kNone,   // no member names one of copse's profiles (or no member known)
    kMixed,  // members name several schedulers, at least one of them copse's
    kOurs,   // every member names the same one of copse's profiles
  };

  struct Decision {
    queue::UnitKey key;
    Readiness readiness = Readiness::kEmpty;
    queue::PodList members;       // kReady: the pending members to queue
    std::vector<PodPtr> waiting;  // kMissingSpec / kWaitingForMembers / kMixedSchedulers
    std::string message;          // why they wait
    // The group is copse's and holds spec events to record (TakeSpecEvents).
    bool spec_events = false;
  };

  struct GroupInfo {
    // Shared with the tracker (a spec is replaced whole, never changed in
    // place): handing it out is a reference count, not a copy.
    std::shared_ptr<const GangSpec> spec;
    PodInfo::GroupKind kind = PodInfo::GroupKind::kNone;
    size_t pending = 0;
    size_t bound = 0;
    size_t ready = 0;  // bound members whose condition Ready is True
    bool scheduled_reported = false;
    Ownership ownership = Ownership::kNone;
  };

  // A problem with the group object worth a Warning event on it, held until
  // the group is copse's (TakeSpecEvents).
  struct SpecEvent {
    std::string uid;
    int64_t generation = 0;
    std::string reason;  // "InvalidSpec", "InconsistentSpec"
    std::string message;
  };

  // `our_scheduler_names`: copse's profiles (spec.schedulerName values).
  explicit GangTracker(std::vector<std::string> our_scheduler_names = {"copse-scheduler"});

  // A valid object: its spec (and the warnings to report once the group is
  // copse's).
  Decision SetSpec(PodInfo::GroupKind kind, GangSpec spec, std::vector<SpecEvent> warnings = {});
  // An object that failed validation: the members wait with `why` as their
  // message (naming the field); an InvalidSpec event is held for the group.
  Decision SetInvalidSpec(PodInfo::GroupKind kind, const std::string& ns, const std::string& name,
                          std::string why, SpecEvent event);
  // The object is gone.
  Decision RemoveSpec(PodInfo::GroupKind kind, const std::string& ns, const std::string& name);
  // A pending (unassigned) member a PreEnqueue plugin admitted was added or changed.
  Decision UpsertPending(PodPtr pod);
  // A pending member a PreEnqueue plugin keeps out: it counts for ownership only.
  Decision UpsertGated(PodPtr pod);
  // The member was bound (assigned); `ready`: its condition Ready is True.
  Decision MarkBound(PodPtr pod, bool ready = false);
  // A bound member's readiness as last seen; returns whether it changed
  // (false for pods that are not bound members).
  bool SetReady(const PodInfo& pod, bool ready);
  // The member was deleted or became terminal (`finished`: it ran and
  // ended, Succeeded or Failed; it keeps counting for the group's minimum
  // when broken gangs are looked for, since it did its part). `succeeded`
  // (with `finished`): it ended Succeeded rather than Failed.
  Decision Remove(const PodInfo& pod, bool finished = false, bool succeeded = false);
  // Re-evaluates (e.g. after a failed bind of a member).
  Decision Evaluate(const queue::UnitKey& key);

  std::shared_ptr<const GangSpec> Spec(const queue::UnitKey& key) const;
  // Whether the group's spec was set from this object (uid) at this
  // metadata.generation: an update of its status or metadata changes nothing.
  bool HasSpecFrom(const queue::UnitKey& key, std::string_view uid, int64_t generation) const;
  GroupInfo Info(const queue::UnitKey& key) const;
  Ownership OwnershipOf(const queue::UnitKey& key) const;
  // The distinct scheduler names of the members, sorted.
  std::vector<std::string> SchedulerNames(const queue::UnitKey& key) const;
  // The bound members, by uid.
  std::vector<PodPtr> BoundMembers(const queue::UnitKey& key) const;
  // Bound members per subgroup label value ("" for none).
  std::map<std::string, int32_t> BoundPerSubGroup(const queue::UnitKey& key) const;
  // Members per subgroup label value ("" for none), by state: what a
  // group's status reports (GangSpec::IsSatisfied takes these maps).
  struct MemberCounts {
    std::map<std::string, int32_t, std::less<>> bound;      // bound, not ended
    std::map<std::string, int32_t, std::less<>> ready;      // ... and Ready
    std::map<std::string, int32_t, std::less<>> succeeded;  // bound once, ended Succeeded
    std::map<std::string, int32_t, std::less<>> failed;     // bound once, ended Failed
  };
  MemberCounts CountMembers(const queue::UnitKey& key) const;
  // Sticky PodGroupScheduled=True: returns true only the first time.
  bool MarkScheduledReported(const queue::UnitKey& key);
  // Delayed preemption in progress for the group: the victims' uids.
  void SetPendingVictims(const queue::UnitKey& key, std::set<std::string> victims);
  std::set<std::string> PendingVictims(const queue::UnitKey& key) const;
  // Victims whose eviction copse has sent (any preemptor, pod or group) and
  // whose deletion it has not seen yet. VictimRules counts them as gone, as
  // terminating pods: two cycles in a row must not each take the one pod a
  // semi-preemptible or Pod-mode group can spare. Forgotten when the pod is.
  void AddEvicting(const std::set<std::string>& uids);
  void ForgetEvicting(const std::string& uid);
  bool Evicting(const std::string& uid) const { return evicting_.contains(uid); }
  // Counts changes to groups' members (pending, gated, bound, finished) and
  // specs: equal counts, same groups (readiness and victims aside).
  uint64_t changes() const noexcept { return changes_; }
  // A group copse owns with bound members: what gang recovery looks at.
  // Views into the tracker, valid during the visit only.
  struct BoundGroupView {
    const std::string& key;  // UnitKey::ToString()
    PodInfo::GroupKind kind;
    const std::string& ns;
    const std::string& name;
    const GangSpec& spec;
    const std::map<std::string, PodPtr>& bound;          // uid -> pod
    const std::map<std::string, std::string>& finished;  // uid -> subgroup label value
  };
  // Calls `visit` for every group that is copse's, has a spec of the gang
  // policy and has bound members, in key order. O(those groups); copies
  // nothing, so the loop's once-a-second check stays cheap with many large
  // gangs bound and many more done.
  template <typename Visit>
  void ForEachGroupWithBoundMembers(Visit&& visit) const {
    for (const std::string& text : with_bound_) {
      const auto found = groups_.find(text);
      if (found == groups_.end()) continue;
      const Group& group = found->second;
      if (group.bound.empty() || group.spec == nullptr || !group.spec->IsGang()) continue;
      if (OwnershipOf(group) != Ownership::kOurs) continue;
      visit(BoundGroupView{text, group.kind, group.ns, group.name, *group.spec, group.bound,
                           group.finished});
    }
  }
  // The held spec events, once the group is copse's (empty otherwise); each
  // is handed out once.
  std::vector<SpecEvent> TakeSpecEvents(const queue::UnitKey& key);

 private:
  struct Group {
    std::string key;  // UnitKey::ToString(), as in groups_
    std::shared_ptr<const GangSpec> spec;
    PodInfo::GroupKind kind = PodInfo::GroupKind::kNone;
    std::string ns;
    std::string name;
    std::string invalid;                    // why the object was rejected ("" when valid or absent)
    std::map<std::string, PodPtr> pending;  // uid -> pod
    std::map<std::string, PodPtr> gated;    // uid -> pod
    std::map<std::string, PodPtr> bound;    // uid -> pod
    std::set<std::string> ready;            // uids of bound members that are Ready
    std::map<std::string, size_t> schedulers;  // spec.schedulerName -> members
    bool scheduled_reported = false;
    std::set<std::string> pending_victims;
    std::vector<SpecEvent> spec_events;
    std::map<std::string, std::string> finished;        // uid -> subgroup label value
    std::set<std::string> failed;                       // uids of finished members that Failed
    std::map<std::string, size_t> finished_schedulers;  // their spec.schedulerName -> members
  };
  Group& GroupFor(PodInfo::GroupKind kind, std::string_view ns, std::string_view name);
  Group* Find(const queue::UnitKey& key);
  const Group* Find(const queue::UnitKey& key) const;
  // Drops the member (by uid) from every state, keeping the scheduler counts.
  void Forget(Group& group, const std::string& uid);
  void Insert(Group& group, std::map<std::string, PodPtr>& into, PodPtr pod);
  Ownership OwnershipOf(const Group& group) const;
  Decision Evaluate(const queue::UnitKey& key, const Group& group) const;
  void EraseIfUnused(const queue::UnitKey& key);

  std::set<std::string, std::less<>> ours_;
  uint64_t changes_ = 0;
  std::map<std::string, Group> groups_;  // by UnitKey::ToString()
  // Keys of the groups with bound members: gang recovery visits these only,
  // not every group that ever had one.
  std::set<std::string, std::less<>> with_bound_;
  std::set<std::string> evicting_;  // uids
};

}  // namespace copse::scheduler
