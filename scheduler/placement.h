#pragma once
// Placement on a snapshot, shared by the pod cycle and the Workload
// Scheduling Cycle:
//
// PodClassReuse (KEP-5598 opportunistic batching): after a full filter+score
// pass for a pod, the pass's feasible nodes, raw scores and CycleState are
// kept; the next pod of the same class (signature + priority) on an
// unchanged snapshot — except the one node that received the previous pod —
// re-filters and re-scores only that node, then normalizes and picks again.
// Only pods whose scores on other nodes cannot depend on where their class
// lands qualify (Batchable: no pod (anti-)affinity, spread constraints,
// default spreading or host ports).
//
// PlaceGang: places a group's members on a snapshot (editing it with
// Snapshot::AddPod, so later members see earlier ones), class by class:
//   1. group members into classes by (signature, priority); order classes by
//      priority (higher first), then size (larger first), then signature;
//      members within a class by name;
//   2. each class is filtered once (PodClassReuse), its pods placed one by
//      one; a pod that fits nowhere ends its class (the rest of the class
//      cannot fit a fuller snapshot either);
//   3. stop as soon as `required` can no longer be reached; otherwise keep
//      placing (when place_all) so optional members land too.
// Nothing here assumes pods in the cache or binds: the caller decides
// (all-or-nothing) and rolls back by re-syncing the snapshot.
//
// Thread-safety: one caller per object; the framework may run Filter chunks
// in parallel through parallel_for.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/pod_info.h"
#include "core/snapshot.h"
#include "plugins/framework/framework.h"

namespace copse::scheduler {

using PodPtr = std::shared_ptr<const PodInfo>;
using ParallelForFn = std::function<void(size_t, const std::function<void(size_t)>&)>;

bool Batchable(const PodInfo& pod) noexcept;

class PodClassReuse {
 public:
  void Invalidate() noexcept { valid_ = false; }
  // Whether `pod` may reuse the last pass (same class, same node count).
  // labels_matter = false (no pod in the cluster has an affinity term): pods
  // that differ only in their labels are of one class.
  bool Matches(const PodInfo& pod, size_t profile, size_t num_nodes,
               bool labels_matter = true) const noexcept;
  // Keeps the pass SchedulePod just made for `pod` (which chose `chosen`).
  // The pass's state is shared (read-only from now on): the pods placed with
  // it layer their binding cycle's state over it.
  void Remember(const PodInfo& pod, size_t profile, size_t num_nodes,
                std::shared_ptr<const plugins::CycleState> state,
                const plugins::Workspace& workspace, NodeIndex chosen);
  // The state of the kept pass (what the pods it places see as their cycle's
  // PreFilter/PreScore state); null when none.
  const std::shared_ptr<const plugins::CycleState>& state() const noexcept { return state_; }
  // Re-checks the node that received the previous pod; nullopt when the
  // class has no feasible node left or something failed (do a full pass).
  std::optional<NodeIndex> Place(const plugins::Framework& fw, const PodInfo& pod,
                                 const Snapshot& snapshot, plugins::RandomSource& random);

 private:
  bool valid_ = false;
  uint64_t signature_ = 0;
  uint64_t unlabeled_signature_ = 0;
  int32_t priority_ = 0;
  size_t profile_ = 0;
  size_t num_nodes_ = 0;
  std::shared_ptr<const plugins::CycleState> state_;
  std::vector<NodeIndex> feasible_;
  std::vector<int64_t> raw_;  // [plugin * feasible_.size() + i]
  size_t last_position_ = 0;
  std::vector<int64_t> scores_;
  std::vector<int64_t> totals_;
};

struct GangPlacementOptions {
  size_t required = 0;    // members that must fit for the group to succeed
  bool place_all = true;  // keep placing optional members once required is reached
  size_t chunk_size = 256;
  ParallelForFn parallel_for;
  size_t start_index = 0;
  // Place only on these nodes (sorted ascending, unique; e.g. one topology
  // domain's nodes); null: every node. Must stay valid during the call.
  const std::vector<NodeIndex>* allowed_nodes = nullptr;
  // False when no pod in the cluster has a pod (anti-)affinity term: the
  // kept pass then serves gangs whose pods differ only in labels.
  bool labels_matter = true;
  // The injected clock's wall time, for PostFilter-style time checks (kube's
  // cycle start); the default is the epoch, so callers set it.
  std::chrono::system_clock::time_point now{};
  // A pod class pass kept from the previous gang (the scheduler's, across
  // attempts): used for a gang of one class, whose pass it then keeps;
  // invalidated for any other gang. The caller invalidates it whenever the
  // snapshot changed beyond the rows of the previous gang's placement. Null:
  // a pass per gang.
  PodClassReuse* reuse = nullptr;
};

struct MemberPlacement {
  PodPtr pod;  // the member (node_name unset)
  NodeIndex node = 0;
  // The CycleState of the pass that placed it (its class's PreFilter and
  // PreScore), for its binding cycle.
  std::shared_ptr<const plugins::CycleState> state;
};

struct GangPlacement {
  std::vector<MemberPlacement> placed;  // in placement order
  std::vector<PodPtr> unplaced;
  bool satisfied = false;  // placed.size() >= required
  bool error = false;      // a plugin failed with an error (message in `failure`)
  // The FitError message of the first class that did not fit ("" if none).
  std::string failure;
  uint64_t unschedulable_plugins = 0;
  size_t evaluated_nodes = 0;
  size_t reused = 0;  // members placed by reusing a pod class's pass
};

GangPlacement PlaceGang(const plugins::Framework& fw, Snapshot& snapshot,
                        std::span<const PodPtr> members, const GangPlacementOptions& options,
                        plugins::RandomSource& random, plugins::Workspace& workspace);

// The member classes in PlaceGang's order (step 1).
std::vector<std::vector<PodPtr>> OrderedClasses(std::span<const PodPtr> members);

}  // namespace copse::scheduler
