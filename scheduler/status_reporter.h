#pragma once
// StatusReporter: everything the scheduler tells the API about scheduling,
// written through the ApiWriter (asynchronous) and only for what is copse's
// (issue 14):
//   - pods whose spec.schedulerName names one of copse's profiles:
//     PodScheduled=False with kube's message and status.nominatedNodeName,
//     FailedScheduling (Warning) and Scheduled (Normal) events;
//   - groups every member of which is copse's (GangTracker::Ownership::kOurs):
//     PodGroupScheduled (once True, stays True), the copse PodGroup's phase
//     (CopsePodGroupPhase) and its scheduled and ready counts, for the group
//     and each subgroup, the deletion-protection finalizer, and Warning
//     events about the object's spec;
//   - groups whose members name several schedulers, at least one copse's:
//     PodGroupScheduled=False, reason MixedSchedulers, and nothing else.
// Anything else is never written, whatever the caller asks.
//
// Algorithm (writes are deduplicated, so repeating a report costs nothing):
//   1. PodFailed writes the condition (and nomination) unless the same
//      reason and message were written last, and records a FailedScheduling
//      event when they change.
//   2. MembersWaiting: members of a group that is not ready are told why
//      only if they still wait after waiting_report_delay (a gang created in
//      one burst writes nothing); Flush re-evaluates the due groups.
//   3. MemberBound: the first time a group has its minimum bound it is
//      reported Scheduled; later count changes (members bound, Ready or
//      ended: MembersChanged), and the first Pending of a group copse owns,
//      are coalesced and written by Flush at most every
//      group_status_flush_interval (a gang placed within it is never shown
//      Pending: one write, not two).
//   4. Deletion protection: from the moment a group is copse's and has
//      members to schedule or bound (GroupSeen), it keeps copse's
//      finalizer; one whose members are all gone loses it (checked on every
//      object event, so a patch that lost a conflict is retried, and once at
//      start-up, for members that vanished while copse was down). A patch is
//      sent once per version of the object.
//
// Thread-safety: the scheduling loop's (it also owns the gang tracker).

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/clock.h"
#include "core/pod_info.h"
#include "kube/codec.h"
#include "scheduler/api_writer.h"
#include "scheduler/gangs.h"
#include "scheduler/profiles.h"

namespace copse::kube {
class PodGroup;
class CopsePodGroup;
class Topology;
}  // namespace copse::kube

namespace copse::scheduler {

// PodGroupScheduled=False on a group whose members name several schedulers.
inline constexpr std::string_view kReasonMixedSchedulers = "MixedSchedulers";

// The copse PodGroup's status.phase for a group with `spec`, its members
// `counts`, `pending` members not bound yet, and its PodGroupScheduled
// condition (nullopt: never written). "Satisfied" is spec 002's rule
// (GangSpec::IsSatisfied on the root), members that ended Succeeded counting
// as done. The first that holds:
//   Succeeded      no member waits or runs, and the Succeeded ones satisfy it;
//   Failed         a member ended Failed, and the bound and Succeeded ones
//                  no longer satisfy it (until replacements are bound);
//   Running        the Ready and Succeeded members satisfy it;
//   Scheduled      the bound and Succeeded members satisfy it, or
//                  PodGroupScheduled is True (it stays True while lost
//                  members are replaced);
//   Unschedulable  PodGroupScheduled is False (its last attempt failed);
//   Pending        waiting for members or for its first attempt.
std::string_view CopsePodGroupPhase(const GangSpec& spec, const GangTracker::MemberCounts& counts,
                                    size_t pending, std::optional<bool> scheduled_condition);

struct StatusReporterOptions {
  // Members still waiting for their group after this long are told why; 0:
  // at once.
  Clock::Duration waiting_report_delay = std::chrono::seconds(1);
  // Count updates of groups already reported Scheduled are written at most
  // this often.
  Clock::Duration group_status_flush_interval = std::chrono::milliseconds(100);
  // Resource names for status.allocatedNonPreemptible (null: not written).
  const ResourceNames* names = nullptr;
};

class StatusReporter {
 public:
  // Every reference must outlive the reporter.
  StatusReporter(ApiWriter& writer, GangTracker& gangs, const Profiles& profiles,
                 const Clock& clock, StatusReporterOptions options);

  // ---- Pods ----
  void PodFailed(const PodInfo& pod, std::string_view reason, const std::string& message,
                 std::optional<std::string> nominated);
  // The pod's bind succeeded: a Scheduled event.
  void PodScheduled(const PodInfo& pod);
  // The pod is bound or gone: its reports are over.
  void ForgetPod(std::string_view uid);
  // A group that is not ready (kMissingSpec, kWaitingForMembers): its
  // waiting members are told after the delay.
  void MembersWaiting(const GangTracker::Decision& decision);

  // ---- Groups ----
  // The latest version of each group object (status and finalizer patches
  // start from it).
  void SetGroupObject(std::shared_ptr<const kube::PodGroup> object);
  void SetGroupObject(std::shared_ptr<const kube::CopsePodGroup> object);
  void ForgetGroupObject(PodInfo::GroupKind kind, const std::string& ns, const std::string& name);
  // PodGroupScheduled=False with `reason` (Unschedulable, SchedulerError).
  void GroupFailed(const queue::UnitKey& key, std::string_view reason, const std::string& message);
  // kMixedSchedulers: the group (MixedSchedulers) and copse's waiting members.
  void GroupMixed(const GangTracker::Decision& decision);
  // After GangTracker::MarkBound: Scheduled once the minimum is bound.
  void MemberBound(const PodInfo& pod);
  // A gang is about to be bound: it takes copse's finalizer.
  void Protect(const queue::UnitKey& key);
  // After a member left: without members the group loses the finalizer.
  void MemberGone(const queue::UnitKey& key);
  // A member became Ready or not, ended, or left: the group's phase and
  // counts are written (coalesced, see Flush).
  void MembersChanged(const queue::UnitKey& key);
  // After every tracker decision about the group: once it is copse's with
  // members to schedule or bound, it takes the finalizer and (a copse
  // PodGroup without a phase) is reported Pending.
  void GroupSeen(const queue::UnitKey& key);
  // The group object changed (or the pods just synced): finalizer follows
  // the members.
  void ReconcileProtection(const queue::UnitKey& key);
  // Once the pods are known: every group object known.
  void ReconcileAllProtection();
  void SetPodsSynced() noexcept { pods_synced_ = true; }
  // Records the spec events the tracker holds for a group now copse's.
  void SpecEvents(const queue::UnitKey& key);
  // An InvalidSpec event found by a cycle (e.g. an unknown Topology).
  void GroupInvalid(const queue::UnitKey& key, const std::string& message);
  // A copse Topology that failed validation (copse's own object).
  void TopologyInvalid(const kube::Topology& topology, const std::string& message);
  // The group loses pods to the scheduler: DisruptionTarget=True with
  // `reason` (PreemptionByScheduler for victims, GangBelowMinimum for a
  // broken gang's recovery) on the group object, when the group is copse's.
  void GroupDisrupted(const queue::UnitKey& key, std::string_view reason,
                      const std::string& message);
  // GroupDisrupted for the group of each victim that is a member.
  void VictimGroupsDisrupted(std::span<const PodRef> victims, std::string_view reason,
                             const std::string& message);
  // A Warning event on the group object (e.g. GangBelowMinimum).
  void GroupEvent(const queue::UnitKey& key, std::string_view reason, const std::string& message);

  // ---- Timers ----
  // Writes what is due: waiting reports and coalesced group counts. `final`
  // (at stop): the coalesced counts whether due or not.
  void Flush(bool final = false);
  // When Flush next has something to do (nullopt: nothing pending).
  std::optional<Clock::TimePoint> NextDue() const;

 private:
  struct GroupObject {
    std::shared_ptr<const kube::PodGroup> pod_group;
    std::shared_ptr<const kube::CopsePodGroup> copse;
  };
  struct WaitingReport {
    std::string uid;
    queue::UnitKey key;
    Clock::TimePoint due;
  };

  struct ConditionUpdate {
    bool scheduled = false;
    std::string_view reason;
    const std::string* message = nullptr;
  };
  void WriteGroupStatus(const queue::UnitKey& key, bool scheduled, std::string_view reason,
                        const std::string& message);
  // PodGroupScheduled as `condition` says (null: unchanged) and, for copse
  // PodGroups, the phase and counts; writes only what changed.
  void WriteStatus(const queue::UnitKey& key, const ConditionUpdate* condition);
  void WriteScheduledStatus(const queue::UnitKey& key);
  void SetProtection(const queue::UnitKey& key, bool protect);
  void RecordGroupEvent(const queue::UnitKey& key, const std::string& uid, int64_t generation,
                        std::string_view reason, const std::string& message);
  void FlushWaitingReports();
  void FlushGroupStatuses(bool final);
  const GroupObject* FindObject(const queue::UnitKey& key) const;
  // The group's `conditions` as the server has them once copse's writes so
  // far have landed: every condition copse wrote on the group, as it last
  // wrote it, replaces the object copy's one of that type.
  void OverlayWritten(const std::string& key_text, std::vector<kube::Condition>& conditions) const;
  // `conditions` is about to be written: remember its entry of `type`.
  void RememberWritten(const std::string& key_text, const std::vector<kube::Condition>& conditions,
                       std::string_view type);

  ApiWriter& writer_;
  GangTracker& gangs_;
  const Profiles& profiles_;
  const Clock& clock_;
  const StatusReporterOptions options_;
  bool pods_synced_ = false;

  std::map<std::string, GroupObject> objects_;  // by unit key
  // Last PodScheduled reason + message written per pod uid.
  std::unordered_map<std::string, std::string> last_status_;
  // Members waiting for their group: uid -> when its report is due, and the
  // reports in due order (the delay is constant, so arrival order is due
  // order). A queued report whose uid no longer maps to its time was
  // cancelled.
  std::unordered_map<std::string, Clock::TimePoint> waiting_;
  std::deque<WaitingReport> waiting_queue_;
  // Last PodGroupScheduled reason + message written per group.
  std::map<std::string, std::string> last_group_status_;
  // The conditions (PodGroupScheduled, DisruptionTarget) copse wrote per
  // group, the latest of each type. A status patch is built from the
  // object's copy, which shows copse's own earlier write only once its watch
  // event is back, and a merge patch replaces the conditions list whole: a
  // patch built before that echo would erase the earlier condition for good
  // (a lost DisruptionTarget). Every conditions patch carries these.
  std::map<std::string, std::vector<kube::Condition>> written_conditions_;
  // Groups whose phase or counts may have changed since the last flush.
  std::map<std::string, queue::UnitKey> dirty_groups_;
  // Last phase and counts written per copse PodGroup (the object's copy
  // shows them only once the write's watch event is back).
  std::map<std::string, std::string> last_counts_;
  // Per group: the object's resourceVersion when a finalizer patch was
  // sent, and whether it added (true) or removed the finalizer.
  std::map<std::string, std::pair<std::string, bool>> protection_sent_;
  Clock::TimePoint last_group_flush_{};
  std::set<std::string> recorded_group_events_;  // uid, generation, reason, message
};

}  // namespace copse::scheduler
