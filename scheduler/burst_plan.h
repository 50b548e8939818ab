#pragma once
// BurstPlan: an exact plan for a small gang burst (issue 21, item 3: "an
// exact search for small batches with a time budget").
//
// GangBurst (scheduler/gang_burst.h) orders the pod groups of a burst by a
// rule (rack-required first, then smallest demand). A rule cannot see that a
// gang's pods, spread by scoring, strand what three later gangs needed.
// PlanBurst instead solves the burst on the current free capacity:
//   1. Model (topology/gang_packing.h): every gang of the burst must be a
//      plain gang (no subgroups, no preferred level, minMember = its pending
//      members, none bound or in flight) whose members ask the same requests
//      with exactly one extended resource (the same one for the whole burst,
//      e.g. nvidia.com/gpu); gangs with a required level must all name the
//      same level (resolved as the topology placement does). Nodes: every
//      schedulable node, its free amount of that resource; its domain at the
//      required level is the path of its label values from the outermost
//      level down to it (a node missing one of them offers no capacity).
//      Anything else: no plan (`reason` says why) and the burst keeps
//      GangBurst's order.
//   2. OptimalGangs (branch and bound) until `budget` runs out; an unproven
//      search still yields a complete placement at least as good as first
//      fit in the rule's order, and is used (`proven` false).
//   3. The plan: which gangs to place and, for each, the pods per node.
// The loop runs the planned gangs first, each steered to its planned nodes
// (PlaceGangOnNodes), then the others as before. The model covers one
// resource only: every pod still passes the profile's Filter plugins on its
// planned node, and a gang whose plan does not hold is placed the usual way.
//
// PlaceGangOnNodes: places `members` on exactly `nodes` (pods per node),
// running PlaceGang restricted to each node in turn (PreFilter, Filter,
// Score of the profile: nothing bypassed); the result is satisfied only if
// every member landed. The caller undoes the snapshot edits of a failure (as
// for PlaceGang).
//
// Thread-safety: free functions over their arguments; reentrant.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/gang.h"
#include "core/snapshot.h"
#include "plugins/framework/framework.h"
#include "scheduler/placement.h"
#include "scheduler/topology_placement.h"

namespace copse::scheduler {

struct BurstPlanOptions {
  Clock::Duration budget = std::chrono::milliseconds(5);  // 0: no plan
  size_t max_gangs = 16;                                  // larger bursts keep GangBurst's order
  size_t max_nodes = 1024;                                // larger clusters too
};

struct BurstPlanGang {
  const GangSpec* spec = nullptr;  // null: no plan
  std::span<const PodPtr> members;
  size_t bound = 0;  // members bound or in flight (any: no plan)
};

struct NodePods {
  std::string node;
  int32_t pods = 0;
  bool operator==(const NodePods&) const = default;
};

struct BurstPlan {
  bool planned = false;  // false: keep GangBurst's order (`reason`)
  bool proven = false;   // the search finished within the budget
  std::string reason;
  std::vector<uint8_t> place;                // per gang: placed by the plan
  std::vector<std::vector<NodePods>> nodes;  // per gang: where its pods go
};

BurstPlan PlanBurst(const Snapshot& snapshot, const TopologyCatalog& catalog,
                    std::span<const BurstPlanGang> gangs, const BurstPlanOptions& options);

// The node label keys, outermost first, down to the spec's required level
// at the root (resolved in its Topology, or a bare label key); nullopt when
// it has none or it does not resolve.
std::optional<std::vector<std::string>> RequiredDomainLabels(const GangSpec& spec,
                                                             const TopologyCatalog& catalog);

GangPlacement PlaceGangOnNodes(const plugins::Framework& fw, Snapshot& snapshot,
                               std::span<const PodPtr> members, std::span<const NodePods> nodes,
                               const GangPlacementOptions& options, plugins::RandomSource& random,
                               plugins::Workspace& workspace);

}  // namespace copse::scheduler
