#pragma once
// A model of gang placement on accelerators, for measuring placement quality
// (the `quality` benchmark and the placement tests): nodes with a number of
// free accelerators, in racks; gangs of identical pods, each asking a number
// of accelerators, placed all-or-nothing, some required to sit in one rack.
//
// OptimalGangs: the most gangs placeable at once (the exact optimum), by
// branch and bound:
//   1. Gangs are decided in a fixed order: rack-required ones first, then
//      the others, each group by demand ascending; the incumbent is the
//      better of first fit in that order and first fit in the input order.
//   2. At each gang: cut when placed + bound <= best, where bound counts the
//      undecided gangs that fit alone in the current state, capped by how
//      many of the smallest of them the total free capacity holds.
//   3. Branch "place" over every distinct way to put the gang: a rack gang
//      chooses a rack (racks whose free multisets are equal are tried once),
//      then distributes its pods over that rack's nodes; pods are identical,
//      so a distribution is a count per node, and nodes that are
//      interchangeable (same free count, and the same rack while a
//      rack-required gang is still undecided) take non-increasing counts.
//      Then branch "skip".
//   4. Once only gangs without a rack requirement are left, nodes differ by
//      their free count alone: the rest is solved exactly by the same
//      branching, memoised on (position, sorted free counts), and one best
//      placement is read back from the memo.
//   5. The search stops after `budget` explored states, or at `deadline`
//      (checked every 256 states); `proven` is false then and `gangs` is the
//      best found (a lower bound of the optimum, at least the incumbent's:
//      never below FirstFitGangs).
//   `assignment` gives the best placement found: per placed gang, the pods
//   on each node (the scheduler's gang burst steers its placements to it).
//
// FirstFitGangs: the naive baseline, in submission order: each pod on the
// first node (by index) with room; a rack gang in the first rack (by id)
// where that succeeds for every pod; a gang that does not fit whole is
// skipped (nothing of it stays).
//
// StrandedCapacity: free accelerators on nodes where no pending pod fits
// (a node with 0 < free < the smallest pending request); 0 when nothing is
// pending.
//
// Thread-safety: free functions over their arguments; reentrant.

#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

namespace copse::topology {

struct PackingNode {
  int32_t rack = 0;  // dense rack id
  int32_t free = 0;  // free accelerators
};

struct PackingGang {
  int32_t pods = 0;
  int32_t per_pod = 0;  // accelerators per pod (>= 1)
  bool rack_required = false;
};

struct PodsOnNode {
  int32_t node = 0;  // index into the nodes given
  int32_t pods = 0;
  bool operator==(const PodsOnNode&) const = default;
};

struct PackingResult {
  int32_t gangs = 0;            // gangs placed
  std::vector<uint8_t> placed;  // per input gang
  // Per input gang: where its pods go (empty for a gang not placed), nodes
  // ascending. OptimalGangs and FirstFitGangs both fill it.
  std::vector<std::vector<PodsOnNode>> assignment;
  std::vector<int32_t> free;  // free accelerators per node after placement
  bool proven = true;         // OptimalGangs: the search finished within budget
  uint64_t explored = 0;      // OptimalGangs: states explored
};

PackingResult OptimalGangs(
    std::span<const PackingNode> nodes, std::span<const PackingGang> gangs,
    uint64_t budget = 50'000'000,
    std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max());

PackingResult FirstFitGangs(std::span<const PackingNode> nodes, std::span<const PackingGang> gangs);

int64_t StrandedCapacity(std::span<const int64_t> node_free,
                         std::span<const int64_t> pending_requests) noexcept;

}  // namespace copse::topology
