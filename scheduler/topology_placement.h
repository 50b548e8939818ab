#pragma once
// Topology-aware, hierarchical placement of one gang in the Workload
// Scheduling Cycle (issue 5): required and preferred topology levels on the
// gang and on its subgroups, and spec 002's elastic minimums (minMember
// counts descendant pods, minSubGroup counts direct children).
//
// PlaceGangWithTopology(fw, snapshot, members, spec, catalog, options, ...)
// places the pending `members` on `snapshot` (editing it with AddPod, as
// PlaceGang does) and leaves the all-or-nothing decision to the caller
// (`placement.satisfied`). The gang is a tree (core/gang.h): the root and
// its subgroups; a member belongs to the subgroup its
// scheduling.copse.dev/subgroup label names (the root when the label is
// absent or names no subgroup).
//
// Algorithm
//   0. Resolve levels: a constraint's `topology` (or the nearest ancestor's)
//      names a copse Topology in the catalog; its levels are referred to by
//      node label key or the key's name part ("rack"). Without a topology a
//      level is a bare node label key (KEP-4671 topologyKey; Grove's
//      ClusterTopologyBinding reaches copse as a copse Topology created by the
//      Grove backend). Each distinct level list is a DomainTree
//      (topology/domain_tree.h), refreshed incrementally from the snapshot.
//   1. Pod classes: members with the same signature share one PreFilter +
//      Filter pass over every node: the class's feasibility mask, from which
//      fit counts per domain follow (topology/fit.h), kept up to date as pods
//      are placed. Classes with the same requests and the same Filter mask
//      (e.g. replicas whose pods differ only in their subgroup label) are
//      counted as one, so that two replicas never both claim the same free
//      slots. (Optimistic first pass, TopologyPlacementOptions::
//      optimistic: no masks, fit counts from free capacity alone, which are
//      upper bounds, and one candidate per required level; steps 2-4 run
//      with masks only when that pass fails.)
//   2. Plan (which pods make each node's minimum): a leaf needs min_member
//      pods (less the members already bound); an inner node needs its
//      required children's minimums, and when min_member asks for more, the
//      rest from its own pods, then from its required children's spare pods,
//      then from its optional children. Any MinSubGroup(node) children
//      satisfy a node (spec 002's IsSubGroupReady, core/gang.h): they are
//      tried ready ones first (children the bound members already satisfy,
//      then those with more bound), then those needing the fewest pods, then
//      list order; children lacking members last. The first MinSubGroup(node)
//      of that order make the node's demand; the rest are optional.
//   3. Phase 1, the minimum, all-or-nothing per node, from the root down.
//      Placing node X inside scope S (a set of nodes; the whole cluster at
//      the root):
//      a. Required level L (unless S already lies inside one L domain):
//         candidate domains at L inside S that can hold X's minimum (per
//         class fit counts and summed requests, topology/rank.h), tightest
//         fit first (least capacity left on the dominant resource, keeping big
//         domains whole), capped like KEP-5732's percentageOfPlacementsToScore
//         (percentage / min / max of the candidates). Members already bound
//         pin the choice to their domains. Each candidate is tried in turn
//         (steps b-c inside it), undoing a failed try.
//      b. Preferred level P (a score): X's minimum goes into one P domain if
//         one can hold it, the tightest fit first (least free domain, as at
//         required levels; TopologyPlacementOptions::preferred_order; up to
//         preferred_domains_to_try); otherwise X's own pods spill over the P
//         domains most-free first (fewest domains). Children without a
//         preferred level of their own spill the same way.
//      Gangs and subgroups without any level are placed by PlaceGang and the
//      profile's Score plugins (DomainPacking sends accelerator pods to the
//      least free racks and blocks).
//      c. Inside: the children in step 2's order until MinSubGroup(X) of
//         them are placed (recursively, each in X's scope); one that does not
//         fit is undone and the next tried, while enough remain. Then X's
//         planned pods with PlaceGang restricted to the scope's nodes
//         (GangPlacementOptions::allowed_nodes), so every pod passes the
//         profile's Filter and is placed by its Score. When a child stood in
//         for another, or the minimum needs optional children's pods, X is
//         topped up to its min_member: spare pods of its placed subtree (each
//         in its subgroup's scope), then optional children placed whole.
//   4. Phase 2, elastic extras, only when the root is satisfied: optional
//      children (each all-or-nothing for its own minimum, in the scope of its
//      parent, with its own levels), then every remaining pod of a satisfied
//      node in that node's scope, best effort.
//   5. On failure everything is undone and `failure` explains the first node
//      that could not be placed, e.g.
//        best rack rack-17 fits 6/8 pods: 2 Insufficient nvidia.com/gpu
//        subgroup decode-0: best rack rack-1-1-2 fits 3/4 pods: 1 Insufficient cpu
//      (the best domain is the one whose fit counts cover most of the
//      minimum; the reason is the resource that bounds it, or the Filter
//      verdicts of its nodes).
//
// The implementation is split by these steps over scheduler/
// topology_placement*.cc; topology_placement_internal.h says which file holds
// which.
//
// Thread-safety: PlaceGangWithTopology is reentrant given distinct snapshots
// and workspaces. TopologyCatalog and TopologyWorkspace are not synchronised:
// one owner each (the scheduler's loop, which applies Topology events and runs
// the cycles).

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/gang.h"
#include "core/result.h"
#include "core/snapshot.h"
#include "plugins/framework/framework.h"
#include "scheduler/placement.h"
#include "topology/domain_tree.h"
#include "topology/levels.h"
#include "topology/rank.h"

namespace copse::kube {
class Topology;
}

namespace copse::scheduler {

// The copse Topology objects (scheduling.copse.dev/v1alpha1) known, by name.
class TopologyCatalog {
 public:
  // Validates the object (kube::Topology::Validate and the topology/ level
  // rules) and stores its levels under metadata.name. On error nothing is
  // stored (a previous version of the object is dropped) and the error names
  // the field, e.g. `spec.levels[2].nodeLabel: Duplicate value: "copse.dev/rack"`.
  Status Upsert(const kube::Topology& topology);
  // Stores levels under `name` directly (tests, other topology sources).
  void Set(std::string name, topology::TopologyLevels levels);
  // Returns whether it was present.
  bool Remove(std::string_view name);

  std::optional<topology::TopologyLevels> Find(std::string_view name) const;
  // For gang validation (GangValidationOptions::topologies).
  std::vector<TopologyDefinition> Definitions() const;
  // Changes on every Upsert/Set/Remove.
  uint64_t version() const;
  size_t size() const;

 private:
  std::map<std::string, topology::TopologyLevels, std::less<>> levels_;
  uint64_t version_ = 0;
};

// Domain trees kept between calls (one per distinct list of level label
// keys), so each call only refreshes the rows that changed. Not synchronised.
class TopologyWorkspace {
 public:
  // The tree of `levels`, refreshed against `snapshot` (whose label columns
  // for the level keys it indexes). Valid until the next call.
  topology::DomainTree& Tree(const topology::TopologyLevels& levels, Snapshot& snapshot);
  size_t num_trees() const noexcept { return trees_.size(); }

 private:
  std::map<std::string, std::unique_ptr<topology::DomainTree>, std::less<>> trees_;
};

// True when the spec needs PlaceGangWithTopology: any required or preferred
// level, or any subgroup.
bool NeedsTopologyPlacement(const GangSpec& spec) noexcept;

struct TopologyPlacementOptions {
  // chunk_size, parallel_for, start_index are used for every PlaceGang call;
  // `required`, `place_all` and `allowed_nodes` are ignored (the gang's tree
  // decides them).
  GangPlacementOptions placement;
  // Members already bound or assumed count towards the minimums and pin the
  // required domains. When true they are found in the snapshot (pods with
  // this gang's namespace, name and kind that are not in `members`).
  bool find_bound_members = false;
  // Candidate domains tried at a required level: max(min, ceil(percentage%
  // of the candidates)), at most max (0: no limit).
  uint32_t percentage_of_placements_to_try = 10;
  uint32_t min_placements_to_try = 5;
  uint32_t max_placements_to_try = 0;
  // Preferred-level domains tried whole before spilling.
  uint32_t preferred_domains_to_try = 2;
  // The order they are tried in: tightest fit first keeps roomy domains
  // whole; kMostFreeFirst leaves the most headroom around each subgroup.
  topology::RankOrder preferred_order = topology::RankOrder::kTightestFirst;
  // First try with fit counts from free capacity alone (no Filter pass over
  // every node) and one candidate per required level; only when that fails,
  // run the full search with per-class Filter masks (which also explains the
  // failure). Off: always the full search.
  bool optimistic = true;
  // Reused between calls; null: trees are built for this call only.
  TopologyWorkspace* workspace = nullptr;
};

struct SubGroupPlacement {
  std::string name;
  int32_t placed = 0;  // members placed by this call
  int32_t bound = 0;   // members already bound or assumed
  bool satisfied = false;
  // "rack rack-1-2-7" when the subgroup has a required level and was placed.
  std::string domain;
};

struct TopologyGangPlacement {
  // placed / unplaced / satisfied / error / failure / unschedulable_plugins /
  // evaluated_nodes as PlaceGang's. satisfied: the root's minimum (and
  // minSubGroup at every level) is met. unschedulable_plugins is empty when a
  // subgroup lacked pods (more members may still arrive): the caller's queue
  // then retries after backoff instead of waiting for a cluster event.
  GangPlacement placement;
  // One per subgroup, in spec.sub_groups order.
  std::vector<SubGroupPlacement> sub_groups;
  // Where the gang's own required level landed ("rack rack-1-2-7"), or "".
  std::string domain;
};

TopologyGangPlacement PlaceGangWithTopology(const plugins::Framework& fw, Snapshot& snapshot,
                                            std::span<const PodPtr> members, const GangSpec& spec,
                                            const TopologyCatalog& catalog,
                                            const TopologyPlacementOptions& options,
                                            plugins::RandomSource& random,
                                            plugins::Workspace& workspace);

}  // namespace copse::scheduler
