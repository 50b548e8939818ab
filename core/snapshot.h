#pragma once
// Snapshot: the cluster as one scheduling cycle sees it, laid out as
// struct-of-arrays so that Filter and Score walk contiguous columns.
//
//   Per node (index i in [0, num_nodes())):
//     name, labels (full map), generation
//     one int64 column per resource for allocatable and requested
//       (requested[pods] = number of pods), non-zero cpu/memory requested
//     unschedulable flag, taint ids (into an interned taint table)
//     used host ports, the pods on the node (shared, immutable PodInfos) and
//       the positions of pods with affinity / required anti-affinity
//   Interned label columns for hot keys (hostname, zone, region and whatever
//     the cache indexes, e.g. topology levels): one uint32 value id per node.
//   Cluster-wide: namespace -> labels, PodDisruptionBudgets.
//
// Updating: the cache keeps NodeInfos and calls Sync() once per cycle; only
// rows whose (name, generation) changed are copied. Preemption works on a copy
// and edits rows with RemovePod/AddPod, restoring them with CopyNodeFrom.
//
// Thread-safety: a value type. All const methods are safe to call from many
// threads at once (Filter/Score chunks run in parallel); mutators are not.
// Readers are noexcept and allocation-free.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/labels.h"
#include "core/node_info.h"
#include "core/pod_info.h"
#include "core/resource_vector.h"
#include "core/scheduling_types.h"

namespace copse {

using NodeIndex = uint32_t;
using TaintId = uint32_t;
using PodRef = std::shared_ptr<const PodInfo>;

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

// One label key over all nodes, values interned to dense ids. Id 0 means the
// node does not have the label; other ids index value().
class LabelColumn {
 public:
  static constexpr uint32_t kAbsent = 0;

  LabelColumn();

  uint32_t id(NodeIndex node) const noexcept { return ids_[node]; }
  std::span<const uint32_t> ids() const noexcept { return ids_; }
  // Every id is < num_values() (id 0 included).
  size_t num_values() const noexcept { return values_.size(); }
  const std::string& value(uint32_t id) const noexcept { return values_[id]; }
  std::optional<uint32_t> Find(std::string_view value) const noexcept;

  uint32_t Intern(std::string_view value);
  void Resize(size_t num_nodes) { ids_.resize(num_nodes, kAbsent); }
  void Set(NodeIndex node, uint32_t id) noexcept { ids_[node] = id; }

 private:
  std::vector<uint32_t> ids_;
  std::vector<std::string> values_;
  std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>> index_;
};

class Snapshot;
class PendingRequests;

// A label column borrowed from the snapshot when the key is indexed, or built
// (O(nodes), allocating) for this cycle when it is not. Cheap to copy.
class LabelColumnRef {
 public:
  LabelColumnRef() = default;
  LabelColumnRef(const Snapshot& snapshot, std::string_view key);

  const LabelColumn& operator*() const noexcept { return *column_; }
  const LabelColumn* operator->() const noexcept { return column_; }
  bool valid() const noexcept { return column_ != nullptr; }

 private:
  const LabelColumn* column_ = nullptr;
  std::shared_ptr<const LabelColumn> owned_;
};

class Snapshot {
 public:
  // `resources` must outlive the snapshot and its copies.
  explicit Snapshot(const ResourceNames& resources);

  // ---- Building (the cache's side) ----

  // Adds an interned column for a label key (no-op if present). Hostname,
  // zone and region are indexed from the start.
  void IndexLabelKey(std::string_view key);
  // Makes row i mirror *nodes[i], copying only rows whose name or generation
  // differ; drops rows beyond nodes.size(). Returns the number of rows copied.
  size_t Sync(std::span<const NodeInfo* const> nodes);
  // Incremental form of Sync for a caller that knows which rows may have
  // changed since its last Sync of this snapshot: re-checks only row `n`
  // (which must exist) against `node`. Returns whether the row was copied.
  bool SyncRow(NodeIndex n, const NodeInfo& node);
  // Rows edited by AddPod/RemovePod/CopyNodeFrom since the last call or full
  // Sync (possibly repeated); an incremental syncer must re-check them too.
  std::vector<NodeIndex> TakeScratchRows();
  // Opaque mark of who synced this snapshot last and at which step (see
  // scheduler::Cache::UpdateSnapshot); a copy carries its source's mark.
  struct SyncMark {
    const void* source = nullptr;
    uint64_t step = 0;
  };
  const SyncMark& sync_mark() const noexcept { return sync_mark_; }
  void set_sync_mark(SyncMark mark) noexcept { sync_mark_ = mark; }
  void SetNamespaceLabels(std::string ns, Labels labels);
  void RemoveNamespace(std::string_view ns);
  void SetPodDisruptionBudgets(std::vector<PodDisruptionBudgetInfo> pdbs);

  // Scratch edits (preemption dry runs). They keep the row self-consistent
  // and mark it dirty (generation 0) so the next Sync rewrites it.
  void AddPod(NodeIndex node, PodRef pod);
  bool RemovePod(NodeIndex node, std::string_view uid);
  // Copies row `node` from `other`, which must have the same node order.
  void CopyNodeFrom(const Snapshot& other, NodeIndex node);

  // ---- Reading (plugins) ----

  size_t num_nodes() const noexcept { return names_.size(); }
  const ResourceNames& resources() const noexcept { return *resources_; }
  std::optional<NodeIndex> FindNode(std::string_view name) const noexcept;

  const std::string& node_name(NodeIndex n) const noexcept { return names_[n]; }
  const Labels& node_labels(NodeIndex n) const noexcept { return labels_[n]; }
  uint64_t generation(NodeIndex n) const noexcept { return generations_[n]; }

  int64_t allocatable(ResourceId r, NodeIndex n) const noexcept {
    return r < allocatable_.size() ? allocatable_[r][n] : 0;
  }
  int64_t requested(ResourceId r, NodeIndex n) const noexcept {
    return r < requested_.size() ? requested_[r][n] : 0;
  }
  // Columns for resources with id < num_resource_columns(); empty otherwise.
  size_t num_resource_columns() const noexcept { return allocatable_.size(); }
  std::span<const int64_t> allocatable_column(ResourceId r) const noexcept;
  std::span<const int64_t> requested_column(ResourceId r) const noexcept;
  int64_t non_zero_requested_cpu(NodeIndex n) const noexcept { return non_zero_cpu_[n]; }
  int64_t non_zero_requested_memory(NodeIndex n) const noexcept { return non_zero_memory_[n]; }
  size_t pod_count(NodeIndex n) const noexcept { return pods_[n].size(); }

  bool unschedulable(NodeIndex n) const noexcept { return unschedulable_[n] != 0; }
  std::span<const TaintId> node_taints(NodeIndex n) const noexcept { return node_taints_[n]; }
  size_t num_taints() const noexcept { return taints_.size(); }
  const Taint& taint(TaintId id) const noexcept { return taints_[id]; }

  std::span<const HostPort> used_ports(NodeIndex n) const noexcept { return used_ports_[n]; }
  std::span<const PodRef> pods(NodeIndex n) const noexcept { return pods_[n]; }
  // Positions in pods(n) of pods with any pod (anti-)affinity term.
  std::span<const uint32_t> pods_with_affinity(NodeIndex n) const noexcept {
    return pods_with_affinity_[n];
  }
  // Positions in pods(n) of pods with required anti-affinity terms.
  std::span<const uint32_t> pods_with_required_anti_affinity(NodeIndex n) const noexcept {
    return pods_with_required_anti_affinity_[n];
  }
  // Whether any node holds such a pod (kube's
  // HavePodsWithAffinityNodeInfoList / ...RequiredAntiAffinity... being
  // non-empty): InterPodAffinity skips its per-node walk when none does.
  bool any_pod_with_affinity() const noexcept { return rows_with_affinity_ != 0; }
  bool any_pod_with_required_anti_affinity() const noexcept {
    return rows_with_required_anti_affinity_ != 0;
  }

  // The interned column for `key`, or null when the key is not indexed.
  const LabelColumn* label_column(std::string_view key) const noexcept;
  // Builds a column for any key (allocates; prefer LabelColumnRef).
  LabelColumn BuildLabelColumn(std::string_view key) const;

  // Labels of a namespace, or null when the namespace is unknown.
  const Labels* namespace_labels(std::string_view ns) const noexcept;
  const std::map<std::string, Labels, std::less<>>& namespaces() const noexcept {
    return namespaces_;
  }
  std::span<const PodDisruptionBudgetInfo> pdbs() const noexcept { return pdbs_; }

  // What the waiting pods request (core/pending_requests.h), or null when
  // unknown (a snapshot outside a scheduler). Set by the scheduler, which
  // owns it; copies share it.
  const PendingRequests* pending_requests() const noexcept { return pending_requests_; }
  void set_pending_requests(const PendingRequests* pending) noexcept {
    pending_requests_ = pending;
  }

 private:
  void Resize(size_t num_nodes);
  void EnsureResourceColumns(size_t count);
  void WriteRow(NodeIndex n, const NodeInfo& node);
  void SetName(NodeIndex n, const std::string& name);
  TaintId InternTaint(const Taint& taint);
  void RebuildAffinityLists(NodeIndex n);
  // Keep rows_with_* in step: uncount row n before its lists change, count it after.
  void UncountAffinity(NodeIndex n);
  void CountAffinity(NodeIndex n);
  void MarkScratch(NodeIndex n);  // generation 0 and remembered in scratch_rows_
  void SetLabelIds(NodeIndex n);

  const ResourceNames* resources_;
  std::vector<std::string> names_;
  std::unordered_map<std::string, NodeIndex, StringHash, std::equal_to<>> name_index_;
  std::vector<uint64_t> generations_;
  std::vector<NodeIndex> scratch_rows_;  // rows edited since the last Sync/Take
  SyncMark sync_mark_;
  std::vector<Labels> labels_;
  std::vector<std::vector<int64_t>> allocatable_;  // [resource][node]
  std::vector<std::vector<int64_t>> requested_;    // [resource][node]
  std::vector<int64_t> non_zero_cpu_;
  std::vector<int64_t> non_zero_memory_;
  std::vector<uint8_t> unschedulable_;
  std::vector<std::vector<TaintId>> node_taints_;
  std::vector<Taint> taints_;
  std::unordered_map<std::string, TaintId, StringHash, std::equal_to<>> taint_index_;
  std::vector<std::vector<HostPort>> used_ports_;
  std::vector<std::vector<PodRef>> pods_;
  std::vector<std::vector<uint32_t>> pods_with_affinity_;
  std::vector<std::vector<uint32_t>> pods_with_required_anti_affinity_;
  size_t rows_with_affinity_ = 0;                // rows with a non-empty pods_with_affinity_
  size_t rows_with_required_anti_affinity_ = 0;  // ... pods_with_required_anti_affinity_
  std::vector<std::pair<std::string, LabelColumn>> label_columns_;
  std::map<std::string, Labels, std::less<>> namespaces_;
  std::vector<PodDisruptionBudgetInfo> pdbs_;
  const PendingRequests* pending_requests_ = nullptr;
};

}  // namespace copse
