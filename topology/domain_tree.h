#pragma once
// DomainTree: the cluster's topology domains, built from node labels, with the
// free capacity of every domain, kept up to date from the Snapshot
// incrementally.
//
// Model
//   Level l (0 = outermost) is a node label key (TopologyLevels). A domain at
//   level l is one distinct value path (v0, ..., vl): zone-1/block-1-2/rack-1-2-7.
//   Two racks with the same label value under different blocks are different
//   domains. A node belongs to the domains of its value path at levels
//   0..depth-1, where depth is the number of leading levels whose label the
//   node has with a non-empty value: a node lacking a level's label (or with
//   an empty value) is outside every domain at that level and below, even if it
//   has labels of deeper levels. A node without the level-0 label is outside
//   every domain; it still counts in total_free()/total_allocatable().
//
// Layout (why lookups are cheap)
//   Domain ids at a level are dense, 0..num_domains(level)-1, and numbered in
//   path order: by parent id, then by label value (byte order). Hence a
//   domain's children, and its descendants at any deeper level, are contiguous
//   id ranges, and ties broken by id are ties broken by path.
//   Nodes are kept in one order (node_order()) in which every domain's nodes are
//   contiguous: a depth-first walk of the domains in id order, a domain's
//   children first and then its own direct nodes (those lacking the next
//   level's label), nodes in NodeIndex order within a group, nodes outside
//   every domain last. nodes(level, d) is a span into that order.
//   Free capacity of a node: max(0, allocatable - requested) per resource;
//   the pods entry is the free pod slots. A domain's free capacity is the sum
//   over its nodes. Unschedulable or tainted nodes are counted too: the domain
//   sums are upper bounds; feasibility is per pod class (topology/fit.h).
//
// Refresh
//   Refresh(snapshot) compares each row's generation with the one last seen
//   (a generation of 0, as scratch edits leave it, always counts as changed):
//   - usage change only: the node's free vector and the sums of its domains
//     are adjusted by the difference: O(levels x resources) per changed row,
//     plus one pass over the generation column (O(nodes), a few µs at 5,000);
//   - a row whose topology labels changed: the domains are renumbered and the
//     node order rebuilt from the stored per-node values, O(nodes x levels +
//     label values), without re-reading the other rows;
//   - a different node count or more resource columns: full rebuild.
//   Refresh(snapshot, rows) skips the generation scan when the caller knows
//   which rows it rewrote. Domain ids and node_order() stay valid until a
//   refresh that restructures (structure_version() changes); free capacities
//   change with usage_version().
//   The snapshot should index the level keys (Snapshot::IndexLabelKey) so that
//   a build reads interned columns; unindexed keys are read from the label maps.
//
// Thread-safety: a value type. Const methods may run concurrently from many
// threads (they are noexcept and allocate nothing, except Path()); Refresh and
// Rebuild must not run concurrently with anything else on the same tree.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/resource_vector.h"
#include "core/snapshot.h"
#include "topology/levels.h"

namespace copse::topology {

using DomainId = uint32_t;
inline constexpr DomainId kNoDomain = std::numeric_limits<DomainId>::max();

// Domain ids [first, last) at one level; iterable.
struct DomainRange {
  DomainId first = 0;
  DomainId last = 0;

  class iterator {
   public:
    using value_type = DomainId;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    explicit iterator(DomainId v) : v_(v) {}
    DomainId operator*() const noexcept { return v_; }
    iterator& operator++() noexcept {
      ++v_;
      return *this;
    }
    iterator operator++(int) noexcept {
      iterator old = *this;
      ++v_;
      return old;
    }
    bool operator==(const iterator&) const = default;

   private:
    DomainId v_ = 0;
  };

  iterator begin() const noexcept { return iterator(first); }
  iterator end() const noexcept { return iterator(last); }
  size_t size() const noexcept { return last - first; }
  bool empty() const noexcept { return first == last; }
  bool contains(DomainId d) const noexcept { return d >= first && d < last; }
  bool operator==(const DomainRange&) const = default;
};

// Positions [begin, end) in DomainTree::node_order().
struct PositionRange {
  uint32_t begin = 0;
  uint32_t end = 0;
  uint32_t size() const noexcept { return end - begin; }
};

struct RefreshStats {
  bool rebuilt = false;       // everything re-read (first refresh, node count or columns changed)
  bool restructured = false;  // domains renumbered (topology labels changed)
  size_t rows_updated = 0;    // rows re-read
};

class DomainTree {
 public:
  explicit DomainTree(TopologyLevels levels);

  // Brings the tree up to date with `snapshot` (see "Refresh" above). The first
  // call builds. Allocates only when rebuilding or restructuring.
  RefreshStats Refresh(const Snapshot& snapshot);
  // Same, re-reading only `rows` (each < num_nodes(); duplicates are fine);
  // falls back to a full rebuild when the node count or columns changed.
  RefreshStats Refresh(const Snapshot& snapshot, std::span<const NodeIndex> rows);
  // Re-reads every row.
  void Rebuild(const Snapshot& snapshot);

  // ---- Shape ----
  const TopologyLevels& levels() const noexcept { return levels_; }
  uint32_t num_levels() const noexcept { return num_levels_; }
  size_t num_nodes() const noexcept { return num_nodes_; }
  // Resource ids tracked: [0, num_resources()); others have no free capacity.
  size_t num_resources() const noexcept { return num_resources_; }
  // Changes when domain ids or the node order may have changed.
  uint64_t structure_version() const noexcept { return structure_version_; }
  // Changes when any free capacity may have changed.
  uint64_t usage_version() const noexcept { return usage_version_; }

  // ---- Domains ----
  size_t num_domains(uint32_t level) const noexcept { return levels_data_[level].parent.size(); }
  DomainRange domains(uint32_t level) const noexcept {
    return {0, static_cast<DomainId>(num_domains(level))};
  }
  // kNoDomain at level 0.
  DomainId parent(uint32_t level, DomainId d) const noexcept {
    return levels_data_[level].parent[d];
  }
  // The ancestor of (level, d) at `ancestor_level` <= level (d itself when equal).
  DomainId Ancestor(uint32_t level, DomainId d, uint32_t ancestor_level) const noexcept;
  // Children at level + 1 (empty at the last level).
  DomainRange children(uint32_t level, DomainId d) const noexcept;
  // Descendants at `descendant_level` >= level (just d when equal).
  DomainRange Descendants(uint32_t level, DomainId d, uint32_t descendant_level) const noexcept;
  // The label value that names the domain (unique among its siblings).
  std::string_view name(uint32_t level, DomainId d) const noexcept {
    const LevelData& ld = levels_data_[level];
    return ld.values[ld.value[d]];
  }
  // "zone-1/block-1-2/rack-1-2-7" (allocates; for messages).
  std::string Path(uint32_t level, DomainId d) const;
  // The first domain (in id order) at `level` named `name`, O(domains at level).
  std::optional<DomainId> Find(uint32_t level, std::string_view name) const noexcept;

  // ---- Nodes ----
  // The domain of node n at `level`, or kNoDomain when outside.
  DomainId domain_of(NodeIndex n, uint32_t level) const noexcept {
    return node_domain_[static_cast<size_t>(level) * num_nodes_ + n];
  }
  // Number of levels the node belongs to (0: outside every domain).
  uint32_t depth(NodeIndex n) const noexcept { return node_depth_[n]; }
  std::span<const NodeIndex> node_order() const noexcept { return order_; }
  // Where node n sits in node_order().
  uint32_t position_of(NodeIndex n) const noexcept { return node_pos_[n]; }
  // Where the domain's nodes sit in node_order().
  PositionRange positions(uint32_t level, DomainId d) const noexcept {
    const LevelData& ld = levels_data_[level];
    return {ld.begin[d], ld.end[d]};
  }
  std::span<const NodeIndex> nodes(uint32_t level, DomainId d) const noexcept {
    const PositionRange p = positions(level, d);
    return std::span<const NodeIndex>(order_).subspan(p.begin, p.size());
  }
  // Nodes without the level-0 label (the tail of node_order()).
  std::span<const NodeIndex> nodes_outside() const noexcept {
    return std::span<const NodeIndex>(order_).subspan(num_inside_);
  }

  // ---- Capacity ----
  int64_t free(uint32_t level, DomainId d, ResourceId r) const noexcept {
    return r < num_resources_ ? levels_data_[level].free[d * num_resources_ + r] : 0;
  }
  // num_resources() entries, indexed by ResourceId.
  std::span<const int64_t> free_vector(uint32_t level, DomainId d) const noexcept {
    return std::span<const int64_t>(levels_data_[level].free)
        .subspan(d * num_resources_, num_resources_);
  }
  int64_t free_pods(uint32_t level, DomainId d) const noexcept {
    return free(level, d, kResourceIdPods);
  }
  int64_t node_free(NodeIndex n, ResourceId r) const noexcept {
    return r < num_resources_ ? node_free_[r * num_nodes_ + n] : 0;
  }
  // Free capacity of resource r by NodeIndex (empty for r >= num_resources()).
  std::span<const int64_t> node_free_column(ResourceId r) const noexcept {
    if (r >= num_resources_) return {};
    return std::span<const int64_t>(node_free_).subspan(r * num_nodes_, num_nodes_);
  }
  int64_t node_allocatable(NodeIndex n, ResourceId r) const noexcept {
    return r < num_resources_ ? node_alloc_[r * num_nodes_ + n] : 0;
  }
  // Over every node, inside a domain or not.
  int64_t total_free(ResourceId r) const noexcept {
    return r < num_resources_ ? total_free_[r] : 0;
  }
  int64_t total_allocatable(ResourceId r) const noexcept {
    return r < num_resources_ ? total_alloc_[r] : 0;
  }
  // >= node_free(n, r) for every n (not tight after usage drops; reset by a rebuild).
  int64_t node_free_bound(ResourceId r) const noexcept {
    return r < num_resources_ ? free_bound_[r] : 0;
  }

 private:
  struct LevelData {
    // Label values seen at this level, interned; id 0 is "absent".
    std::vector<std::string> values;
    std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>> value_index;
    // Value ids sorted by string (absent excluded) and each id's rank in it.
    std::vector<uint32_t> sorted;
    std::vector<uint32_t> rank;
    // Domains, by id.
    std::vector<DomainId> parent;
    std::vector<uint32_t> value;
    std::vector<uint32_t> begin;
    std::vector<uint32_t> end;
    std::vector<DomainId> child_offset;  // num_domains + 1 entries: children at level + 1
    std::vector<int64_t> free;           // [d * num_resources + r]
  };

  uint32_t InternValue(uint32_t level, std::string_view value);
  // The node's label value at `level` as stored in the snapshot; nullopt when absent.
  std::optional<std::string_view> ReadValue(const Snapshot& snapshot, const LabelColumn* column,
                                            uint32_t level, NodeIndex n) const noexcept;
  // Re-reads row n; returns true when its topology labels changed (then the
  // domain sums are left for Restructure to recompute).
  bool UpdateRow(const Snapshot& snapshot, std::span<const LabelColumn* const> columns,
                 NodeIndex n);
  void ReadCapacity(const Snapshot& snapshot, NodeIndex n, bool apply_to_domains);
  void UpdateRanks(uint32_t level);
  // Derives domains, order, ranges and sums from the per-node values and free
  // vectors.
  void Restructure();
  RefreshStats RefreshRows(const Snapshot& snapshot, std::span<const NodeIndex> rows, bool all);
  bool NeedsRebuild(const Snapshot& snapshot) const noexcept;

  TopologyLevels levels_;
  uint32_t num_levels_ = 0;
  size_t num_nodes_ = 0;
  size_t num_resources_ = 0;
  size_t num_inside_ = 0;
  bool built_ = false;
  uint64_t structure_version_ = 0;
  uint64_t usage_version_ = 0;

  std::vector<uint64_t> generation_;   // [n]
  std::vector<int64_t> node_free_;     // [r * num_nodes + n]
  std::vector<int64_t> node_alloc_;    // [r * num_nodes + n]
  std::vector<uint32_t> node_value_;   // [level * num_nodes + n], 0 = absent
  std::vector<DomainId> node_domain_;  // [level * num_nodes + n]
  std::vector<uint8_t> node_depth_;    // [n]
  std::vector<NodeIndex> order_;
  std::vector<uint32_t> node_pos_;  // [n]: position in order_
  std::vector<NodeIndex> order_scratch_;
  std::vector<uint32_t> bucket_scratch_;
  std::vector<int64_t> total_free_;   // [r]
  std::vector<int64_t> total_alloc_;  // [r]
  std::vector<int64_t> free_bound_;   // [r]
  std::vector<LevelData> levels_data_;
};

}  // namespace copse::topology
