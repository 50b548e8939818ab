#pragma once
// Gang preemption: one victim set for a whole group, computed on scratch
// snapshots and never actuated here (delayed actuation: the scheduler evicts
// only when this returns a placement for at least `required` members).
//
// Algorithm:
//   1. Every pod with priority below the group's (the lowest member
//      priority) is a potential victim. Remove them all from a copy of the
//      snapshot and place the group (PlaceGang). If even that fails, nobody
//      is evicted: "not enough lower-priority capacity".
//   2. Candidates are the lower-priority pods on the nodes that placement
//      used. Candidates form units: a pod alone, or — when `unit_of` names an
//      all-or-nothing group for it (disruptionMode PodGroup, or the minimum
//      of a non-preemptible copse group) — every lower-priority member of
//      that group, wherever it runs.
//   3. Remove every candidate unit from a fresh copy and check the group
//      fits (else nobody is evicted).
//   4. Reprieve, keeping the set minimal: put units back one at a time and
//      keep each one whose return still lets the group fit. Order: units
//      covered by a PodDisruptionBudget with no disruptions left first,
//      then pieces of running groups (so whole groups are preferred as
//      victims over pods picked out of several), then more important units
//      (higher priority) first.
//   5. The victims are the units not reprieved; the placement is the last
//      one that fit.
//
// Thread-safety: pure; works on copies of the snapshot.

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/snapshot.h"
#include "plugins/framework/framework.h"
#include "scheduler/placement.h"

namespace copse::scheduler {

// For a potential victim: the key of the group it belongs to, if any, and
// whether that group must be evicted whole.
struct VictimGroup {
  std::string key;
  bool all_or_nothing = false;
};
using VictimGroupFn = std::function<std::optional<VictimGroup>(const PodInfo& pod)>;

struct GangPreemption {
  bool found = false;
  std::vector<PodRef> victims;
  std::vector<MemberPlacement> placement;
  std::string message;  // why not, when !found
};

// How the group is placed on a scratch snapshot in steps 1, 3 and 4; empty:
// PlaceGang with `options`. A gang with topology constraints passes
// PlaceGangWithTopology (scheduler/topology_placement.h), so victims are
// looked for inside the domains it can be packed into.
using GangPlaceFn =
    std::function<GangPlacement(Snapshot& scratch, std::span<const PodPtr> members)>;

GangPreemption SelectGangVictims(const plugins::Framework& fw, const Snapshot& snapshot,
                                 std::span<const PodPtr> members,
                                 const GangPlacementOptions& options, const VictimGroupFn& unit_of,
                                 plugins::RandomSource& random, plugins::Workspace& workspace,
                                 const GangPlaceFn& place = {});

}  // namespace copse::scheduler
