#pragma once
// Fit counting: how many pods of one pod class fit on every node and in every
// domain of a DomainTree, from the tree's free capacity.
//
//   fit(n) = 0                                 if the class's Filter rejected n
//          = min(free pods(n), min over resources r the class requests of
//                free_r(n) / request_r)        otherwise (integer division)
//   fit(level, d) = sum of fit(n) over the nodes of d
//
// For a single class this is exact: pods of one class on different nodes do
// not interact through resources, so a domain can hold k pods of the class iff
// fit(level, d) >= k. (Interactions through pod affinity, host ports or spread
// between pods of the same gang are not modelled: the feasibility mask is
// what Filter said for one pod against the current snapshot.)
// For several classes at once this is bin packing; the per-class counts are
// upper bounds (see topology/pack.h for a constructive check).
//
// Cost: O(nodes x requested resources) for the node counts (divisions done in
// double precision where exact, which vectorises), then one prefix sum over
// the tree's node order and O(1) per domain. Per-node counts saturate at
// 2^31 - 1; domain counts are 64-bit sums.
//
// Thread-safety: FitCounts is a value type; CountFits reads the tree (const)
// and writes only `out`, so classes can be counted concurrently into
// different FitCounts.

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "core/resource_vector.h"
#include "core/snapshot.h"
#include "topology/domain_tree.h"

namespace copse::topology {

struct PodClass {
  // Requests of one pod; the pods entry is ignored (every pod takes one slot).
  ResourceVector request;
  // Filter verdict by NodeIndex (non-zero = feasible), num_nodes() entries;
  // empty means every node is feasible.
  std::span<const uint8_t> feasible;
};

class FitCounts {
 public:
  uint32_t node(NodeIndex n) const noexcept { return per_node_[n]; }
  std::span<const uint32_t> nodes() const noexcept { return per_node_; }
  uint64_t domain(uint32_t level, DomainId d) const noexcept {
    return per_domain_[level_offset_[level] + d];
  }
  // Counts of every domain at `level`, by DomainId.
  std::span<const uint64_t> level(uint32_t level) const noexcept {
    return std::span<const uint64_t>(per_domain_)
        .subspan(level_offset_[level], level_offset_[level + 1] - level_offset_[level]);
  }
  // Over every node, inside a domain or not.
  uint64_t total() const noexcept { return total_; }
  // The tree's structure_version() when counted (domain ids are only
  // meaningful for that structure).
  uint64_t structure_version() const noexcept { return structure_version_; }

 private:
  friend void CountFits(const DomainTree& tree, const PodClass& cls, FitCounts& out) noexcept;

  // Brings `out` (CountFits of the same class on this tree) up to date after
  // only `rows` changed usage (e.g. Refresh(snapshot, rows) after a gang was
  // assumed): O(rows x (resources + levels)) instead of O(nodes). The tree's
  // structure must not have changed since (checked); duplicates are fine.
  void UpdateFits(const DomainTree& tree, const PodClass& cls, std::span<const NodeIndex> rows,
                  FitCounts& out) noexcept;
  friend void UpdateFits(const DomainTree& tree, const PodClass& cls,
                         std::span<const NodeIndex> rows, FitCounts& out) noexcept;

  std::vector<uint32_t> per_node_;
  std::vector<uint64_t> prefix_;  // over node_order() positions
  std::vector<uint64_t> per_domain_;
  std::array<size_t, kMaxLevels + 1> level_offset_{};
  uint64_t total_ = 0;
  uint64_t structure_version_ = 0;
};

// How many pods with `request` fit on node n given its free capacity in the
// tree (feasibility not considered). Saturates at 2^31 - 1.
uint32_t NodeFit(const DomainTree& tree, const ResourceVector& request, NodeIndex n) noexcept;

// Counts `cls` over the tree into `out`. Allocation-free once `out` has been
// used with a tree at least as large (its buffers are reused).
void CountFits(const DomainTree& tree, const PodClass& cls, FitCounts& out) noexcept;

// Brings `out` (CountFits of the same class on this tree) up to date after
// only `rows` changed usage (e.g. Refresh(snapshot, rows) after a gang was
// assumed): O(rows x (resources + levels)) instead of O(nodes). The tree's
// structure must not have changed since (checked); duplicates are fine.
void UpdateFits(const DomainTree& tree, const PodClass& cls, std::span<const NodeIndex> rows,
                FitCounts& out) noexcept;

}  // namespace copse::topology
