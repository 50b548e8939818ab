#pragma once
// Gang preemption: one victim set for a whole group, computed on scratch
// snapshots and never actuated here (delayed actuation: the scheduler evicts
// only when this returns a placement for at least `required` members).
//
// Algorithm (which pods may go, and in which units, is VictimRules'
// (scheduler/victim_rules.h), shared with single-pod preemption):
//   1. Every pod the rules let this group take (priority below the group's
//      lowest member priority; not of a non-preemptible group; not the
//      required part of a semi-preemptible one) is removed from a copy of
//      the snapshot (VictimRules::Removable over all of them) and the group
//      placed (PlaceGang). If even that fails, nobody is evicted: "not
//      enough lower-priority capacity".
//   2. Candidates are those pods on the nodes that placement used, in
//      units: a plain pod alone; a member of a Pod-mode group alone; a
//      member of a disruptionMode PodGroup group with its whole group,
//      wherever it runs.
//   3. Remove every candidate unit from a fresh copy and check the group
//      fits (else nobody is evicted).
//   4. Reprieve, keeping the set minimal: put units back one at a time and
//      keep each one whose return still lets the group fit. Order: units
//      covered by a PodDisruptionBudget with no disruptions left first,
//      then whole groups, then members of running groups (so members beyond
//      a group's minimum are taken before whole groups, and whole groups
//      before pods picked out of groups that would then have to go whole),
//      then more important units (higher priority) first.
//   5. The victims are the units not reprieved, completed by the rules: a
//      group they leave below its minimum goes whole (the rules allow that
//      only for a preemptible group of lower priority, and step 1 never
//      removes more of any other group than its spare pods). The placement
//      is the last one that fit.
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
#include "scheduler/victim_rules.h"

namespace copse::scheduler {

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
                                 const GangPlacementOptions& options, const VictimRules& rules,
                                 plugins::RandomSource& random, plugins::Workspace& workspace,
                                 const GangPlaceFn& place = {});

}  // namespace copse::scheduler
