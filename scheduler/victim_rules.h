#pragma once
// VictimRules: which running pods a preemptor may take and in which units,
// so that preemption never leaves a gang below its minimum (spec 002
// preemptibility, KEP-4671 disruptionMode). One set of rules for both
// single-pod preemption (DefaultPreemption, through plugins::VictimPolicy)
// and gang preemption (SelectGangVictims).
//
// For a potential victim (priority below the preemptor's, not excluded):
//   - a pod of no group, or of a group copse has no spec for: alone
//     (plain pods are preemptible);
//   - a member of a non-preemptible group: never;
//   - a member of a disruptionMode PodGroup group: only with its whole group;
//   - a member of a Pod-mode group (preemptible or semi-preemptible): alone,
//     as long as the rest of the group still meets its minimum (minMember
//     and minSubGroup at every level, counted over the group's pods in the
//     snapshot).
// A group may be taken whole only when it is preemptible (not semi- or
// non-preemptible) and every one of its pods has a priority below the
// preemptor's. So a semi-preemptible group loses at most the pods beyond
// its required part, and a preemptible one whose minimum must be broken
// goes whole.
//
// Thread-safety: immutable after construction (const calls from one thread;
// the snapshot and tracker it was built from must not change meanwhile).

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/gang.h"
#include "core/snapshot.h"
#include "plugins/framework/plugin.h"
#include "scheduler/gangs.h"

namespace copse::scheduler {

class VictimRules final : public plugins::VictimPolicy {
 public:
  enum class Unit : uint8_t {
    kPod,     // alone, no group
    kMember,  // alone while its group keeps its minimum; else with the whole group
    kWhole,   // only with its whole group
    kNever,   // not a victim of this preemptor
  };

  // `exclude`: uids that are never victims (the preemptor's own members).
  VictimRules(const Snapshot& snapshot, const GangTracker& gangs, int32_t preemptor_priority,
              std::set<std::string> exclude = {});
  // by_member_ points into groups_.
  VictimRules(const VictimRules&) = delete;
  VictimRules& operator=(const VictimRules&) = delete;

  // kNever also for pods not below the preemptor's priority or excluded.
  Unit UnitOf(const PodInfo& pod) const;
  // The group key of a member ("" for none).
  std::string GroupOf(const PodInfo& pod) const;
  // The pods of a group in the snapshot, with their nodes.
  const std::vector<std::pair<NodeIndex, PodRef>>& GroupPods(const std::string& group) const;
  // Whether the group may be taken whole by this preemptor.
  bool WholeAllowed(const std::string& group) const;
  // Whether the group still meets its minimum with `removed` (uids) gone.
  bool SatisfiedWithout(const std::string& group, const std::set<std::string>& removed) const;

  // plugins::VictimPolicy. Removable: plain pods, whole-group members whose
  // group may go whole, and members of Pod-mode groups (all of them when
  // the group may go whole; else, greedily in the order given, those whose
  // removal keeps the group at its minimum).
  std::vector<PodRef> Removable(std::span<const PodRef> candidates) const override;
  // Adds the remaining pods of each group that the victims leave below its
  // minimum (or that goes only whole); false when such a group may not go
  // whole. Never adds pods of groups the victims do not touch.
  bool Complete(std::vector<PodRef>& victims) const override;

 private:
  struct Group {
    std::shared_ptr<const GangSpec> spec;
    std::vector<std::pair<NodeIndex, PodRef>> pods;
    bool whole_allowed = false;
  };
  const Group* Find(const std::string& key) const;
  // A member's group without building its key: what a preemption attempt
  // does once per pod of the cluster and per candidate.
  struct PodGroupRef {
    PodInfo::GroupKind kind;
    std::string_view ns;
    std::string_view name;
    bool operator==(const PodGroupRef&) const = default;
  };
  struct PodGroupRefHash {
    size_t operator()(const PodGroupRef& r) const noexcept {
      const size_t h = std::hash<std::string_view>{}(r.ns);
      return (h * 31 + std::hash<std::string_view>{}(r.name)) * 31 + static_cast<size_t>(r.kind);
    }
  };
  const Group* FindOf(const PodInfo& pod) const;

  int32_t priority_;
  std::set<std::string> exclude_;
  std::map<std::string, Group> groups_;  // by unit key
  // The same groups by their members' fields; the views point into a
  // member's PodInfo, which the group's `pods` keep alive.
  std::unordered_map<PodGroupRef, Group*, PodGroupRefHash> by_member_;
};

}  // namespace copse::scheduler
