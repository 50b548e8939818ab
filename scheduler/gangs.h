#pragma once
// GangTracker: what the scheduler knows about each pod group (KEP-4671
// PodGroup or copse PodGroup): its spec, its pending member pods and how
// many members are bound. It decides when a group is ready to be queued
// (the PreEnqueue barrier) and tells the scheduler what to do:
//
//   kEmpty             no pending members: the group leaves the queue;
//   kMissingSpec       members name a PodGroup that does not exist (yet): they
//                      wait, unqueued, with a message saying so; the group is
//                      queued as soon as the object appears;
//   kWaitingForMembers fewer members observed (pending + bound) than the
//                      group's required minimum: they wait, unqueued;
//   kReady             queue one unit for the group holding its pending members.
//
// Member pods are never queued individually. Units are keyed
// UnitKey::ForPodGroup(namespace, name) for scheduling.k8s.io/v1alpha2
// groups and (namespace, "copse/" + name) for copse groups ('/' cannot occur
// in object names, so the two kinds never collide).
//
// Thread-safety: every method takes the tracker's mutex.

#include <map>
#include <mutex>
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
  enum class Readiness : uint8_t { kEmpty, kMissingSpec, kWaitingForMembers, kReady };

  struct Decision {
    queue::UnitKey key;
    Readiness readiness = Readiness::kEmpty;
    queue::PodList members;        // kReady: the pending members to queue
    std::vector<PodPtr> waiting;   // kMissingSpec / kWaitingForMembers: pods to tell
    std::string message;           // why they wait
  };

  struct GroupInfo {
    // Shared with the tracker (a spec is replaced whole, never changed in
    // place): handing it out is a reference count, not a copy.
    std::shared_ptr<const GangSpec> spec;
    PodInfo::GroupKind kind = PodInfo::GroupKind::kNone;
    size_t pending = 0;
    size_t bound = 0;
    bool scheduled_reported = false;
  };

  Decision SetSpec(PodInfo::GroupKind kind, GangSpec spec);
  Decision RemoveSpec(PodInfo::GroupKind kind, const std::string& ns, const std::string& name);
  // A pending (unassigned) member was added or changed.
  Decision UpsertPending(PodPtr pod);
  // The member was bound (assigned) or deleted / became terminal.
  Decision MarkBound(const PodInfo& pod);
  Decision Remove(const PodInfo& pod);
  // Re-evaluates (e.g. after a failed bind of a member).
  Decision Evaluate(const queue::UnitKey& key);
  // Every group that is ready now (the scheduler's periodic resync of the
  // tracker against the queue).
  std::vector<Decision> ReadyGroups();

  std::shared_ptr<const GangSpec> Spec(const queue::UnitKey& key) const;
  // Whether the group's spec was set from this object (uid) at this
  // metadata.generation: an update of its status or metadata changes nothing.
  bool HasSpecFrom(const queue::UnitKey& key, std::string_view uid, int64_t generation) const;
  GroupInfo Info(const queue::UnitKey& key) const;
  // Sticky PodGroupScheduled=True: returns true only the first time.
  bool MarkScheduledReported(const queue::UnitKey& key);
  // Delayed preemption in progress for the group: the victims' uids.
  void SetPendingVictims(const queue::UnitKey& key, std::set<std::string> victims);
  std::set<std::string> PendingVictims(const queue::UnitKey& key) const;

 private:
  struct Group {
    std::shared_ptr<const GangSpec> spec;
    PodInfo::GroupKind kind = PodInfo::GroupKind::kNone;
    std::string ns;
    std::string name;
    std::map<std::string, PodPtr> pending;  // uid -> pod
    std::set<std::string> bound;            // uids
    bool scheduled_reported = false;
    std::set<std::string> pending_victims;
  };
  Group& GroupFor(PodInfo::GroupKind kind, std::string_view ns, std::string_view name);
  Decision EvaluateLocked(const queue::UnitKey& key, Group& group);

  mutable std::mutex mu_;
  std::map<std::string, Group> groups_;  // by UnitKey::ToString()
};

}  // namespace copse::scheduler
