#pragma once
// DomainPacker: a constructive check that several pod classes fit in one
// domain at once, returning the node assignment.
//
// Deciding whether pods of several shapes fit on a set of nodes is bin
// packing (NP-hard), so this is a greedy check that never over-reports: a
// "yes" is a real placement, built by subtracting every pod's requests from a
// private copy of the nodes' free capacity; a "no" may be wrong for
// adversarial instances (use the per-class fit counts of topology/fit.h and
// MayHold in topology/rank.h as cheap upper bounds to prune first).
//
// TryPlace(classes), first-fit decreasing:
//   1. Order the classes by the size of one pod, largest first: its dominant
//      share, max over resources of request / cluster allocatable (ties: more
//      pods first, then input order).
//   2. For each class, walk the domain's nodes in the tree's node order and put
//      on each feasible node as many of the remaining pods as its remaining
//      capacity allows (pod slots and every requested resource).
//   3. If some class cannot be placed in full, undo this pass's placements.
//   4. Retry once (when the order differs) with the most constrained class
//      first: fewest spare pods when placed alone (fit count - count), ties as
//      in 1. If that fails too, report the first pass's failure: the class and
//      how many of its pods fit. On success the placements are kept.
// Placements accumulate across calls (required members first, then optional
// ones, each call all-or-nothing), and Mark()/RollbackTo() undo a sequence of
// calls, e.g. a subgroup tree whose parent turned out not to fit. TryPlace can
// be restricted to a sub-domain (a rack of the packer's block) so that nested
// subgroups share one capacity ledger.
//
// Cost: Reset copies free capacity for the domain's nodes, O(nodes x
// resources). TryPlace is O(classes log classes + nodes visited x requested
// resources); a class stops at the node where it is complete. A failing
// multi-class call costs up to two passes plus one count per class.
//
// Thread-safety: not synchronised; one packer per thread. The tree is read
// only and must not be refreshed while a packer uses it. Allocation-free once
// the packer's buffers have grown to the largest domain and placement seen.

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "core/resource_vector.h"
#include "core/snapshot.h"
#include "topology/domain_tree.h"
#include "topology/fit.h"
#include "topology/rank.h"

namespace copse::topology {

// `count` pods of one class.
struct ClassDemand {
  PodClass cls;
  uint32_t count = 0;
};

struct Assignment {
  uint32_t class_index = 0;  // into the classes of the TryPlace call that made it
  NodeIndex node = 0;
  uint32_t count = 0;  // pods of that class on that node
  bool operator==(const Assignment&) const = default;
};

struct PackResult {
  bool ok = false;
  // When !ok: the first class (index into the call's classes, in placement
  // order) that could not be placed in full, and how many of its pods fit
  // after the classes placed before it.
  uint32_t failed_class = 0;
  uint32_t failed_placed = 0;
};

class DomainPacker {
 public:
  DomainPacker() = default;

  // Starts packing into the nodes of (level, d), from their free capacity in
  // `tree`, with no placements. `tree` must outlive the packer's use.
  void Reset(const DomainTree& tree, uint32_t level, DomainId d);
  // Starts packing into every node of the tree (no topology constraint).
  void ResetAll(const DomainTree& tree);

  // Places every class's `count` pods or none of them (see above).
  PackResult TryPlace(std::span<const ClassDemand> classes) noexcept;
  // Same, using only the nodes of (level, d), which must lie inside the
  // packer's domain (level >= the packer's level, or the packer was ResetAll).
  PackResult TryPlace(std::span<const ClassDemand> classes, uint32_t level, DomainId d) noexcept;

  // Every placement kept since Reset, in placement order.
  std::span<const Assignment> assignments() const noexcept { return assignments_; }
  // A point to roll back to: placements made after it are undone by RollbackTo.
  size_t Mark() const noexcept { return assignments_.size(); }
  void RollbackTo(size_t mark) noexcept;

  // Capacity left on a node of the packer's domain after the kept placements.
  int64_t remaining(NodeIndex n, ResourceId r) const noexcept;
  // Sum of remaining(n, r) over the nodes of (level, d), inside the packer's domain.
  int64_t RemainingFree(uint32_t level, DomainId d, ResourceId r) const noexcept;
  // How many pods of `cls` alone would still fit in (level, d) (inside the
  // packer's domain), like fit.h's count but on the remaining capacity.
  uint64_t CountFit(const PodClass& cls, uint32_t level, DomainId d) const noexcept;

  // Ranks the domains at `level` inside the packer's domain (level >= the
  // packer's level) like RankDomains, but on the remaining capacity: a
  // candidate can hold every class's count when placed alone and the summed
  // requests; options.within is ignored. This is how nested subgroups choose
  // among their parent's racks after siblings took their share.
  // O(nodes in the packer's domain x (classes + resources)).
  void RankRemaining(uint32_t level, std::span<const ClassDemand> classes,
                     const RankOptions& options, std::vector<RankedDomain>& out) const;

  // Number of nodes in the packer's domain.
  size_t num_nodes() const noexcept { return end_ - begin_; }

 private:
  // Requested resources of one class (the pods slot is implicit).
  struct Shape {
    uint32_t size = 0;
    bool impossible = false;  // requests a resource the tree does not track
    std::array<ResourceId, kMaxResources> ids{};
    std::array<int64_t, kMaxResources> amounts{};
  };
  void Start(const DomainTree& tree, uint32_t level, DomainId domain, uint32_t begin, uint32_t end);
  Shape MakeShape(const ResourceVector& request) const noexcept;
  // Pods of `shape` that fit on the node at `slot` (offset from begin_).
  int64_t SlotFit(const Shape& shape, size_t slot) const noexcept;
  void Apply(size_t slot, const Shape& shape, int64_t pods) noexcept;
  PackResult Place(std::span<const ClassDemand> classes, uint32_t begin, uint32_t end) noexcept;
  // One first-fit pass in class_order_; rolls back on failure.
  PackResult Attempt(std::span<const ClassDemand> classes, size_t shapes_base, uint32_t begin,
                     uint32_t end) noexcept;
  // Pods of one class alone that fit in positions [begin, end).
  uint64_t CountRange(const Shape& shape, const PodClass& cls, uint32_t begin,
                      uint32_t end) const noexcept;

  const DomainTree* tree_ = nullptr;
  uint32_t level_ = 0;
  DomainId domain_ = kNoDomain;  // kNoDomain after ResetAll
  uint32_t begin_ = 0;           // positions in tree_->node_order()
  uint32_t end_ = 0;
  size_t stride_ = 0;               // resources per node in remaining_
  std::vector<int64_t> remaining_;  // [(position - begin_) * stride_ + r]
  std::vector<Assignment> assignments_;
  std::vector<uint32_t> assignment_shape_;  // [assignment]: index into shapes_
  std::vector<Shape> shapes_;               // classes of the calls with kept placements
  struct ClassKey {
    int64_t slack = 0;  // retry pass: pods that fit alone minus pods needed
    double size = 0;    // dominant share of one pod
  };
  std::vector<uint32_t> class_order_;
  std::vector<uint32_t> retry_order_;
  std::vector<ClassKey> class_key_;
};

}  // namespace copse::topology
