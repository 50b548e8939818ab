#include "topology/domain_tree.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <utility>

#include "core/check.h"

namespace copse::topology {
namespace {

constexpr uint32_t kUnmapped = std::numeric_limits<uint32_t>::max();
// Up to this many new label values are inserted into a level's sorted value
// list one by one; more are sorted in bulk.
constexpr size_t kIncrementalRankLimit = 16;

size_t EffectiveResources(const Snapshot& snapshot) noexcept {
  return std::max<size_t>(snapshot.num_resource_columns(), kNumBuiltinResources);
}

}  // namespace

DomainTree::DomainTree(TopologyLevels levels)
    : levels_(std::move(levels)), num_levels_(static_cast<uint32_t>(levels_.size())) {
  COPSE_CHECK(num_levels_ <= kMaxLevels) << "too many topology levels: " << num_levels_;
  levels_data_.resize(num_levels_);
  for (LevelData& ld : levels_data_) {
    ld.values.emplace_back();  // id 0: absent
    ld.rank.push_back(0);
    ld.child_offset.push_back(0);
  }
}

// ---------------------------------------------------------------------------
// Refresh

bool DomainTree::NeedsRebuild(const Snapshot& snapshot) const noexcept {
  return !built_ || snapshot.num_nodes() != num_nodes_ ||
         EffectiveResources(snapshot) != num_resources_;
}

RefreshStats DomainTree::Refresh(const Snapshot& snapshot) {
  return RefreshRows(snapshot, {}, /*all=*/true);
}

RefreshStats DomainTree::Refresh(const Snapshot& snapshot, std::span<const NodeIndex> rows) {
  return RefreshRows(snapshot, rows, /*all=*/false);
}

RefreshStats DomainTree::RefreshRows(const Snapshot& snapshot, std::span<const NodeIndex> rows,
                                     bool all) {
  RefreshStats stats;
  if (NeedsRebuild(snapshot)) {
    Rebuild(snapshot);
    stats.rebuilt = true;
    stats.restructured = true;
    stats.rows_updated = num_nodes_;
    return stats;
  }
  std::array<const LabelColumn*, kMaxLevels> columns{};
  bool columns_read = false;
  bool restructure = false;
  auto visit = [&](NodeIndex n) {
    if (!columns_read) {
      for (uint32_t l = 0; l < num_levels_; ++l)
        columns[l] = snapshot.label_column(levels_.node_label(l));
      columns_read = true;
    }
    if (UpdateRow(snapshot, std::span<const LabelColumn* const>(columns.data(), num_levels_), n))
      restructure = true;
    ++stats.rows_updated;
  };
  if (all) {
    // A call-free inner loop, so the column pointers stay in registers.
    const size_t n_nodes = num_nodes_;
    for (NodeIndex n = 0; n < n_nodes; ++n) {
      const uint64_t* seen = generation_.data();
      while (n < n_nodes) {
        const uint64_t g = snapshot.generation(n);
        if (g == 0 || g != seen[n]) break;
        ++n;
      }
      if (n == n_nodes) break;
      visit(n);
    }
  } else {
    for (NodeIndex n : rows) {
      COPSE_CHECK(n < num_nodes_) << "row " << n << " >= " << num_nodes_;
      visit(n);
    }
  }
  if (restructure) {
    Restructure();
    ++structure_version_;
    stats.restructured = true;
  }
  if (stats.rows_updated > 0) ++usage_version_;
  return stats;
}

void DomainTree::Rebuild(const Snapshot& snapshot) {
  const size_t n_nodes = snapshot.num_nodes();
  const size_t n_res = EffectiveResources(snapshot);
  num_nodes_ = n_nodes;
  num_resources_ = n_res;
  generation_.resize(n_nodes);
  node_free_.assign(n_res * n_nodes, 0);
  node_alloc_.assign(n_res * n_nodes, 0);
  node_value_.assign(static_cast<size_t>(num_levels_) * n_nodes, 0);
  node_domain_.assign(static_cast<size_t>(num_levels_) * n_nodes, kNoDomain);
  node_depth_.assign(n_nodes, 0);
  total_free_.assign(n_res, 0);
  total_alloc_.assign(n_res, 0);
  free_bound_.assign(n_res, 0);

  std::vector<uint32_t> id_map;
  for (uint32_t l = 0; l < num_levels_; ++l) {
    LevelData& ld = levels_data_[l];
    // Label churn only ever adds values; start over when most are stale.
    if (ld.values.size() > 2 * n_nodes + 64) {
      ld.values.resize(1);
      ld.value_index.clear();
      ld.sorted.clear();
      ld.rank.assign(1, 0);
    }
    uint32_t* values = node_value_.data() + static_cast<size_t>(l) * n_nodes;
    if (const LabelColumn* column = snapshot.label_column(levels_.node_label(l))) {
      id_map.assign(column->num_values(), kUnmapped);
      id_map[LabelColumn::kAbsent] = 0;
      for (NodeIndex n = 0; n < n_nodes; ++n) {
        const uint32_t id = column->id(n);
        if (id_map[id] == kUnmapped) {
          const std::string& v = column->value(id);
          id_map[id] = v.empty() ? 0 : InternValue(l, v);
        }
        values[n] = id_map[id];
      }
    } else {
      for (NodeIndex n = 0; n < n_nodes; ++n) {
        const std::optional<std::string_view> v = ReadValue(snapshot, nullptr, l, n);
        values[n] = v ? InternValue(l, *v) : 0;
      }
    }
  }
  for (NodeIndex n = 0; n < n_nodes; ++n) generation_[n] = snapshot.generation(n);
  for (size_t r = 0; r < n_res; ++r) {
    const auto rid = static_cast<ResourceId>(r);
    const std::span<const int64_t> alloc = snapshot.allocatable_column(rid);
    const std::span<const int64_t> req = snapshot.requested_column(rid);
    int64_t* free = node_free_.data() + r * n_nodes;
    int64_t* allocatable = node_alloc_.data() + r * n_nodes;
    int64_t total_free = 0;
    int64_t total_alloc = 0;
    int64_t bound = 0;
    for (NodeIndex n = 0; n < n_nodes && n < alloc.size(); ++n) {
      const int64_t a = alloc[n];
      const int64_t q = n < req.size() ? req[n] : 0;
      const int64_t f = a > q ? a - q : 0;
      free[n] = f;
      allocatable[n] = a;
      total_free += f;
      total_alloc += a;
      bound = std::max(bound, f);
    }
    total_free_[r] = total_free;
    total_alloc_[r] = total_alloc;
    free_bound_[r] = bound;
  }
  Restructure();
  built_ = true;
  ++structure_version_;
  ++usage_version_;
}

uint32_t DomainTree::InternValue(uint32_t level, std::string_view value) {
  LevelData& ld = levels_data_[level];
  auto it = ld.value_index.find(value);
  if (it != ld.value_index.end()) return it->second;
  const auto id = static_cast<uint32_t>(ld.values.size());
  ld.values.emplace_back(value);
  ld.value_index.emplace(std::string(value), id);
  return id;
}

std::optional<std::string_view> DomainTree::ReadValue(const Snapshot& snapshot,
                                                      const LabelColumn* column, uint32_t level,
                                                      NodeIndex n) const noexcept {
  std::string_view value;
  if (column != nullptr) {
    const uint32_t id = column->id(n);
    if (id == LabelColumn::kAbsent) return std::nullopt;
    value = column->value(id);
  } else {
    const Labels& labels = snapshot.node_labels(n);
    auto it = labels.find(levels_.node_label(level));
    if (it == labels.end()) return std::nullopt;
    value = it->second;
  }
  if (value.empty()) return std::nullopt;
  return value;
}

bool DomainTree::UpdateRow(const Snapshot& snapshot, std::span<const LabelColumn* const> columns,
                           NodeIndex n) {
  generation_[n] = snapshot.generation(n);
  bool labels_changed = false;
  for (uint32_t l = 0; l < num_levels_; ++l) {
    const std::optional<std::string_view> v = ReadValue(snapshot, columns[l], l, n);
    uint32_t& stored = node_value_[static_cast<size_t>(l) * num_nodes_ + n];
    if (!v) {
      if (stored != 0) {
        stored = 0;
        labels_changed = true;
      }
    } else if (stored == 0 || levels_data_[l].values[stored] != *v) {
      stored = InternValue(l, *v);
      labels_changed = true;
    }
  }
  ReadCapacity(snapshot, n, /*apply_to_domains=*/!labels_changed);
  return labels_changed;
}

void DomainTree::ReadCapacity(const Snapshot& snapshot, NodeIndex n, bool apply_to_domains) {
  const uint32_t depth = node_depth_[n];
  for (size_t r = 0; r < num_resources_; ++r) {
    const auto rid = static_cast<ResourceId>(r);
    const int64_t a = snapshot.allocatable(rid, n);
    const int64_t q = snapshot.requested(rid, n);
    const int64_t f = a > q ? a - q : 0;
    const size_t idx = r * num_nodes_ + n;
    const int64_t df = f - node_free_[idx];
    const int64_t da = a - node_alloc_[idx];
    if (df == 0 && da == 0) continue;
    node_free_[idx] = f;
    node_alloc_[idx] = a;
    total_free_[r] += df;
    total_alloc_[r] += da;
    free_bound_[r] = std::max(free_bound_[r], f);
    if (apply_to_domains && df != 0) {
      for (uint32_t l = 0; l < depth; ++l) {
        const DomainId d = node_domain_[static_cast<size_t>(l) * num_nodes_ + n];
        levels_data_[l].free[d * num_resources_ + r] += df;
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Structure

void DomainTree::UpdateRanks(uint32_t level) {
  LevelData& ld = levels_data_[level];
  const size_t num_values = ld.values.size();
  if (ld.sorted.size() + 1 == num_values) return;
  auto less = [&ld](uint32_t a, uint32_t b) { return ld.values[a] < ld.values[b]; };
  const size_t first_new = ld.sorted.size() + 1;
  if (num_values - first_new > kIncrementalRankLimit) {
    ld.sorted.resize(num_values - 1);
    std::iota(ld.sorted.begin(), ld.sorted.end(), 1u);
    std::sort(ld.sorted.begin(), ld.sorted.end(), less);
  } else {
    for (size_t id = first_new; id < num_values; ++id) {
      const auto v = static_cast<uint32_t>(id);
      ld.sorted.insert(std::lower_bound(ld.sorted.begin(), ld.sorted.end(), v, less), v);
    }
  }
  ld.rank.assign(num_values, 0);
  for (size_t i = 0; i < ld.sorted.size(); ++i) ld.rank[ld.sorted[i]] = static_cast<uint32_t>(i);
}

void DomainTree::Restructure() {
  const size_t n_nodes = num_nodes_;
  const size_t n_res = num_resources_;

  // 1. Depth: leading levels with a value.
  for (NodeIndex n = 0; n < n_nodes; ++n) {
    uint32_t depth = 0;
    while (depth < num_levels_ && node_value_[depth * n_nodes + n] != 0) ++depth;
    node_depth_[n] = static_cast<uint8_t>(depth);
  }

  // 2. Node order: stable LSD radix sort by the value path, each level keyed by
  //    the value's rank in byte order; a node outside a level sorts after
  //    every node inside it (so a domain's direct nodes follow its children).
  order_.resize(n_nodes);
  order_scratch_.resize(n_nodes);
  std::iota(order_.begin(), order_.end(), NodeIndex{0});
  for (uint32_t l = num_levels_; l-- > 0;) {
    UpdateRanks(l);
    const LevelData& ld = levels_data_[l];
    const uint32_t outside = static_cast<uint32_t>(ld.values.size()) - 1;  // the last bucket
    const uint32_t* values = node_value_.data() + static_cast<size_t>(l) * n_nodes;
    auto key = [&](NodeIndex n) { return node_depth_[n] > l ? ld.rank[values[n]] : outside; };
    bucket_scratch_.assign(static_cast<size_t>(outside) + 2, 0);
    for (NodeIndex n : order_) ++bucket_scratch_[key(n) + 1];
    for (size_t b = 1; b < bucket_scratch_.size(); ++b)
      bucket_scratch_[b] += bucket_scratch_[b - 1];
    for (NodeIndex n : order_) order_scratch_[bucket_scratch_[key(n)]++] = n;
    order_.swap(order_scratch_);
  }
  node_pos_.resize(n_nodes);
  for (uint32_t i = 0; i < n_nodes; ++i) node_pos_[order_[i]] = i;

  // 3. Domains, numbered in path order while walking the node order.
  for (LevelData& ld : levels_data_) {
    ld.parent.clear();
    ld.value.clear();
    ld.begin.clear();
    ld.end.clear();
  }
  std::array<DomainId, kMaxLevels> current;
  current.fill(kNoDomain);
  num_inside_ = 0;
  for (uint32_t i = 0; i < n_nodes; ++i) {
    const NodeIndex n = order_[i];
    const uint32_t depth = node_depth_[n];
    if (depth > 0) num_inside_ = i + 1;
    bool fresh = false;  // a new domain started at a shallower level
    for (uint32_t l = 0; l < depth; ++l) {
      LevelData& ld = levels_data_[l];
      const uint32_t v = node_value_[static_cast<size_t>(l) * n_nodes + n];
      if (fresh || current[l] == kNoDomain || ld.value[current[l]] != v) {
        current[l] = static_cast<DomainId>(ld.parent.size());
        ld.parent.push_back(l == 0 ? kNoDomain : current[l - 1]);
        ld.value.push_back(v);
        ld.begin.push_back(i);
        ld.end.push_back(i + 1);
        fresh = true;
      } else {
        ld.end[current[l]] = i + 1;
      }
      node_domain_[static_cast<size_t>(l) * n_nodes + n] = current[l];
    }
    for (uint32_t l = depth; l < num_levels_; ++l) {
      current[l] = kNoDomain;
      node_domain_[static_cast<size_t>(l) * n_nodes + n] = kNoDomain;
    }
  }

  // 4. Children: contiguous id ranges, since ids follow the parents' order.
  for (uint32_t l = 0; l < num_levels_; ++l) {
    LevelData& ld = levels_data_[l];
    ld.child_offset.assign(ld.parent.size() + 1, 0);
    if (l + 1 < num_levels_) {
      for (DomainId p : levels_data_[l + 1].parent) ++ld.child_offset[p + 1];
      for (size_t d = 1; d < ld.child_offset.size(); ++d)
        ld.child_offset[d] += ld.child_offset[d - 1];
    }
  }

  // 5. Free capacity: each node into its deepest domain, then bottom-up.
  for (LevelData& ld : levels_data_) ld.free.assign(ld.parent.size() * n_res, 0);
  for (size_t r = 0; r < n_res; ++r) {
    const int64_t* free = node_free_.data() + r * n_nodes;
    for (uint32_t i = 0; i < num_inside_; ++i) {
      const NodeIndex n = order_[i];
      const uint32_t deepest = node_depth_[n] - 1u;
      const DomainId d = node_domain_[static_cast<size_t>(deepest) * n_nodes + n];
      levels_data_[deepest].free[d * n_res + r] += free[n];
    }
  }
  for (uint32_t l = num_levels_; l-- > 1;) {
    const LevelData& ld = levels_data_[l];
    LevelData& up = levels_data_[l - 1];
    for (DomainId d = 0; d < ld.parent.size(); ++d) {
      const DomainId p = ld.parent[d];
      for (size_t r = 0; r < n_res; ++r) up.free[p * n_res + r] += ld.free[d * n_res + r];
    }
  }
}

// ---------------------------------------------------------------------------
// Readers

DomainId DomainTree::Ancestor(uint32_t level, DomainId d, uint32_t ancestor_level) const noexcept {
  while (level > ancestor_level && d != kNoDomain) {
    d = levels_data_[level].parent[d];
    --level;
  }
  return d;
}

DomainRange DomainTree::children(uint32_t level, DomainId d) const noexcept {
  const LevelData& ld = levels_data_[level];
  return {ld.child_offset[d], ld.child_offset[d + 1]};
}

DomainRange DomainTree::Descendants(uint32_t level, DomainId d,
                                    uint32_t descendant_level) const noexcept {
  DomainRange range{d, d + 1};
  for (uint32_t l = level; l < descendant_level; ++l) {
    const LevelData& ld = levels_data_[l];
    range = {ld.child_offset[range.first], ld.child_offset[range.last]};
  }
  return range;
}

std::string DomainTree::Path(uint32_t level, DomainId d) const {
  std::array<DomainId, kMaxLevels> chain{};
  for (uint32_t l = level + 1; l-- > 0;) {
    chain[l] = d;
    if (l > 0) d = levels_data_[l].parent[d];
  }
  std::string path;
  for (uint32_t l = 0; l <= level; ++l) {
    if (l > 0) path += '/';
    path += name(l, chain[l]);
  }
  return path;
}

std::optional<DomainId> DomainTree::Find(uint32_t level,
                                         std::string_view domain_name) const noexcept {
  const LevelData& ld = levels_data_[level];
  for (DomainId d = 0; d < ld.value.size(); ++d) {
    if (ld.values[ld.value[d]] == domain_name) return d;
  }
  return std::nullopt;
}

}  // namespace copse::topology
