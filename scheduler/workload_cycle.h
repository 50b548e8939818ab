#pragma once
// WorkloadCycle: the Workload Scheduling Cycle (KEP-4671) for one pod group,
// computed on the snapshot and returned as a CycleOutcome. The gang is
// placed all-or-nothing: the outcome is kPlaced only when at least its
// minimum (minCount / minMember, and minSubGroup at every level) has nodes.
//
// Run(unit):
//   1. Collect the pending members (skipping terminating ones and ones
//      already assumed or bound, which count towards the minimum). Skip a
//      group without a spec, without pending members, or not copse's.
//   2. Validate the spec against the copse Topologies known (an unknown
//      Topology or level is kUnschedulable with the field named, and an
//      InvalidSpec event on the group).
//   3. Refresh the snapshot; add pods nominated elsewhere (priority >= the
//      gang's lowest member priority).
//   4. Place (the members edit the snapshot as they land; nothing is
//      assumed): PlaceGangWithTopology when the spec has levels or
//      subgroups, else PlaceGang class by class; the next single-class gang
//      reuses the last one's pass when only that gang's rows changed.
//   5. Satisfied: kPlaced with every member that got a node; members left
//      without one are reported.
//   6. Not satisfied: kUnschedulable ("pod group ns/name: 3/8 pods fit; ...").
//      When every member may preempt and no earlier preemption of this gang
//      is still waiting for its victims to go, SelectGangVictims computes
//      one victim set for the whole gang (inside the domains it can be
//      packed into; VictimRules keep every other gang at its minimum) and returns it as a
//      PreemptionPlan with the members' nominations; the loop evicts only then (delayed actuation).
//
// Run(unit, steer): with `steer` (a BurstPlan's nodes for this gang, see
// scheduler/burst_plan.h), step 4 first places the members on exactly those
// nodes (PlaceGangOnNodes: the profile's Filter on each; the root's required
// domain checked); when that fails, its edits are dropped and step 4 runs as
// usual.
//
// PlanBurst(units, options): the pending members of each unit and a
// BurstPlan of them on the freshly synced snapshot.
//
// Placement quality (ordering of classes and domains, scoring) lives in
// scheduler/placement.h and scheduler/topology_placement.h; victim
// selection in scheduler/gang_preemption.h.
//
// Thread-safety: the scheduling loop's.

#include <optional>
#include <set>
#include <string>

#include "core/clock.h"
#include "queue/scheduling_queue.h"
#include "scheduler/burst_plan.h"
#include "scheduler/cache.h"
#include "scheduler/cycle_env.h"
#include "scheduler/cycle_outcome.h"
#include "scheduler/gang_preemption.h"
#include "scheduler/gangs.h"
#include "scheduler/profiles.h"
#include "scheduler/topology_placement.h"

namespace copse::scheduler {

class WorkloadCycle {
 public:
  // Every reference must outlive the cycle.
  WorkloadCycle(const Profiles& profiles, Cache& cache, const queue::SchedulingQueue& queue,
                const GangTracker& gangs, const TopologyCatalog& topologies, CycleEnv& env,
                const Clock& clock)
      : profiles_(profiles),
        cache_(cache),
        queue_(queue),
        gangs_(gangs),
        topologies_(topologies),
        env_(env),
        clock_(clock) {}

  CycleOutcome Run(const queue::PoppedUnit& unit, std::span<const NodePods> steer = {});
  BurstPlan PlanBurst(std::span<const queue::PoppedUnit> units, const BurstPlanOptions& options);

 private:
  // Adds pods nominated elsewhere (priority >= `priority`, not members,
  // not already counted by the cache); true when any was added.
  bool AddNominatedPods(const std::set<std::string>& members, int32_t priority);
  // Errors of `spec` against the copse Topologies known ("" when none).
  std::string TopologyErrors(const GangSpec& spec) const;
  // Whether every node of `steer` lies in one domain of the spec's required
  // level at the root (true when it has none).
  bool InOneRequiredDomain(const GangSpec& spec, std::span<const NodePods> steer) const;

  const Profiles& profiles_;
  Cache& cache_;
  const queue::SchedulingQueue& queue_;
  const GangTracker& gangs_;
  const TopologyCatalog& topologies_;
  CycleEnv& env_;
  const Clock& clock_;
  TopologyWorkspace topology_workspace_;
};

}  // namespace copse::scheduler
