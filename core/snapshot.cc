#include "core/snapshot.h"

#include <algorithm>

#include "core/check.h"

namespace copse {

LabelColumn::LabelColumn() { values_.emplace_back(); }

std::optional<uint32_t> LabelColumn::Find(std::string_view value) const noexcept {
  auto it = index_.find(value);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

uint32_t LabelColumn::Intern(std::string_view value) {
  auto it = index_.find(value);
  if (it != index_.end()) return it->second;
  const auto id = static_cast<uint32_t>(values_.size());
  values_.emplace_back(value);
  index_.emplace(std::string(value), id);
  return id;
}

LabelColumnRef::LabelColumnRef(const Snapshot& snapshot, std::string_view key) {
  column_ = snapshot.label_column(key);
  if (column_ == nullptr) {
    owned_ = std::make_shared<const LabelColumn>(snapshot.BuildLabelColumn(key));
    column_ = owned_.get();
  }
}

Snapshot::Snapshot(const ResourceNames& resources) : resources_(&resources) {
  IndexLabelKey(kLabelHostname);
  IndexLabelKey(kLabelTopologyZone);
  IndexLabelKey(kLabelTopologyRegion);
}

void Snapshot::IndexLabelKey(std::string_view key) {
  if (label_column(key) != nullptr) return;
  label_columns_.emplace_back(std::string(key), BuildLabelColumn(key));
}

LabelColumn Snapshot::BuildLabelColumn(std::string_view key) const {
  LabelColumn column;
  column.Resize(num_nodes());
  for (NodeIndex n = 0; n < num_nodes(); ++n) {
    auto it = labels_[n].find(key);
    if (it != labels_[n].end()) column.Set(n, column.Intern(it->second));
  }
  return column;
}

const LabelColumn* Snapshot::label_column(std::string_view key) const noexcept {
  for (const auto& [k, column] : label_columns_) {
    if (k == key) return &column;
  }
  return nullptr;
}

std::optional<NodeIndex> Snapshot::FindNode(std::string_view name) const noexcept {
  auto it = name_index_.find(name);
  if (it == name_index_.end()) return std::nullopt;
  return it->second;
}

std::span<const int64_t> Snapshot::allocatable_column(ResourceId r) const noexcept {
  if (r >= allocatable_.size()) return {};
  return allocatable_[r];
}

std::span<const int64_t> Snapshot::requested_column(ResourceId r) const noexcept {
  if (r >= requested_.size()) return {};
  return requested_[r];
}

const Labels* Snapshot::namespace_labels(std::string_view ns) const noexcept {
  auto it = namespaces_.find(ns);
  return it == namespaces_.end() ? nullptr : &it->second;
}

void Snapshot::SetNamespaceLabels(std::string ns, Labels labels) {
  namespaces_.insert_or_assign(std::move(ns), std::move(labels));
}

void Snapshot::RemoveNamespace(std::string_view ns) {
  auto it = namespaces_.find(ns);
  if (it != namespaces_.end()) namespaces_.erase(it);
}

void Snapshot::SetPodDisruptionBudgets(std::vector<PodDisruptionBudgetInfo> pdbs) {
  for (PodDisruptionBudgetInfo& pdb : pdbs)
    std::sort(pdb.disrupted_pods.begin(), pdb.disrupted_pods.end());
  pdbs_ = std::move(pdbs);
}

void Snapshot::Resize(size_t num_nodes) {
  for (size_t n = num_nodes; n < pods_with_affinity_.size(); ++n) {
    UncountAffinity(static_cast<NodeIndex>(n));
  }
  for (size_t n = num_nodes; n < names_.size(); ++n) {
    auto it = name_index_.find(names_[n]);
    if (it != name_index_.end() && it->second == n) name_index_.erase(it);
  }
  names_.resize(num_nodes);
  generations_.resize(num_nodes, 0);
  labels_.resize(num_nodes);
  for (auto& column : allocatable_) column.resize(num_nodes, 0);
  for (auto& column : requested_) column.resize(num_nodes, 0);
  non_zero_cpu_.resize(num_nodes, 0);
  non_zero_memory_.resize(num_nodes, 0);
  unschedulable_.resize(num_nodes, 0);
  node_taints_.resize(num_nodes);
  used_ports_.resize(num_nodes);
  pods_.resize(num_nodes);
  pods_with_affinity_.resize(num_nodes);
  pods_with_required_anti_affinity_.resize(num_nodes);
  for (auto& [key, column] : label_columns_) column.Resize(num_nodes);
}

void Snapshot::EnsureResourceColumns(size_t count) {
  while (allocatable_.size() < count) {
    allocatable_.emplace_back(num_nodes(), 0);
    requested_.emplace_back(num_nodes(), 0);
  }
}

void Snapshot::SetName(NodeIndex n, const std::string& name) {
  if (names_[n] == name) return;
  auto it = name_index_.find(names_[n]);
  if (it != name_index_.end() && it->second == n) name_index_.erase(it);
  names_[n] = name;
  name_index_.insert_or_assign(name, n);
}

TaintId Snapshot::InternTaint(const Taint& taint) {
  std::string key = taint.key;
  key.push_back('\0');
  key += taint.value;
  key.push_back('\0');
  key += TaintEffectName(taint.effect);
  auto it = taint_index_.find(key);
  if (it != taint_index_.end()) return it->second;
  const auto id = static_cast<TaintId>(taints_.size());
  taints_.push_back(taint);
  taint_index_.emplace(std::move(key), id);
  return id;
}

void Snapshot::SetLabelIds(NodeIndex n) {
  for (auto& [key, column] : label_columns_) {
    auto it = labels_[n].find(key);
    column.Set(n, it == labels_[n].end() ? LabelColumn::kAbsent : column.Intern(it->second));
  }
}

void Snapshot::UncountAffinity(NodeIndex n) {
  if (!pods_with_affinity_[n].empty()) --rows_with_affinity_;
  if (!pods_with_required_anti_affinity_[n].empty()) --rows_with_required_anti_affinity_;
}

void Snapshot::CountAffinity(NodeIndex n) {
  if (!pods_with_affinity_[n].empty()) ++rows_with_affinity_;
  if (!pods_with_required_anti_affinity_[n].empty()) ++rows_with_required_anti_affinity_;
}

void Snapshot::RebuildAffinityLists(NodeIndex n) {
  UncountAffinity(n);
  pods_with_affinity_[n].clear();
  pods_with_required_anti_affinity_[n].clear();
  for (uint32_t i = 0; i < pods_[n].size(); ++i) {
    const PodInfo& pod = *pods_[n][i];
    if (pod.has_pod_affinity) pods_with_affinity_[n].push_back(i);
    if (pod.HasRequiredAntiAffinity()) pods_with_required_anti_affinity_[n].push_back(i);
  }
  CountAffinity(n);
}

void Snapshot::WriteRow(NodeIndex n, const NodeInfo& node) {
  SetName(n, node.name());
  generations_[n] = node.generation();
  // Most rewrites are pod changes: the labels (and so their interned column
  // ids, which depend on nothing else) stay as they are.
  const bool labels_changed = labels_[n] != node.labels();
  if (labels_changed) labels_[n] = node.labels();
  EnsureResourceColumns(std::max(node.allocatable().size(), node.requested().size()));
  for (size_t r = 0; r < allocatable_.size(); ++r) {
    allocatable_[r][n] = node.allocatable().Get(static_cast<ResourceId>(r));
    requested_[r][n] = node.requested().Get(static_cast<ResourceId>(r));
  }
  non_zero_cpu_[n] = node.non_zero_cpu_milli();
  non_zero_memory_[n] = node.non_zero_memory();
  unschedulable_[n] = node.unschedulable() ? 1 : 0;
  node_taints_[n].clear();
  for (const Taint& t : node.taints()) node_taints_[n].push_back(InternTaint(t));
  used_ports_[n] = node.used_ports();
  pods_[n] = node.pods();
  RebuildAffinityLists(n);
  if (labels_changed) SetLabelIds(n);
}

size_t Snapshot::Sync(std::span<const NodeInfo* const> nodes) {
  EnsureResourceColumns(kNumBuiltinResources);
  const size_t old_size = num_nodes();
  if (nodes.size() < old_size) Resize(nodes.size());
  if (nodes.size() > old_size) Resize(nodes.size());
  size_t copied = 0;
  scratch_rows_.clear();  // every row is checked below
  for (NodeIndex n = 0; n < nodes.size(); ++n) {
    const NodeInfo& node = *nodes[n];
    // Generations come from one process-wide counter, so an equal (non-zero)
    // generation means this very node state: no name comparison needed.
    if (n < old_size && generations_[n] == node.generation() && generations_[n] != 0) continue;
    WriteRow(n, node);
    ++copied;
  }
  return copied;
}

bool Snapshot::SyncRow(NodeIndex n, const NodeInfo& node) {
  COPSE_CHECK(n < num_nodes());
  if (generations_[n] == node.generation() && generations_[n] != 0) return false;
  WriteRow(n, node);
  return true;
}

std::vector<NodeIndex> Snapshot::TakeScratchRows() {
  std::vector<NodeIndex> rows;
  rows.swap(scratch_rows_);
  return rows;
}

void Snapshot::MarkScratch(NodeIndex n) {
  if (generations_[n] != 0) scratch_rows_.push_back(n);
  generations_[n] = 0;
}

void Snapshot::AddPod(NodeIndex n, PodRef pod) {
  COPSE_CHECK(pod != nullptr && n < num_nodes());
  EnsureResourceColumns(pod->requests.size());
  for (size_t r = 0; r < pod->requests.size(); ++r) {
    requested_[r][n] =
        SaturatingAdd(requested_[r][n], pod->requests.Get(static_cast<ResourceId>(r)));
  }
  requested_[kResourceIdPods][n] += 1;
  non_zero_cpu_[n] += pod->non_zero_cpu_milli;
  non_zero_memory_[n] += pod->non_zero_memory;
  used_ports_[n].insert(used_ports_[n].end(), pod->host_ports.begin(), pod->host_ports.end());
  pods_[n].push_back(std::move(pod));
  RebuildAffinityLists(n);
  MarkScratch(n);
}

bool Snapshot::RemovePod(NodeIndex n, std::string_view uid) {
  auto& pods = pods_[n];
  auto it = std::find_if(pods.begin(), pods.end(), [&](const PodRef& p) { return p->uid == uid; });
  if (it == pods.end()) return false;
  const PodInfo& pod = **it;
  for (size_t r = 0; r < pod.requests.size() && r < requested_.size(); ++r) {
    requested_[r][n] =
        SaturatingSub(requested_[r][n], pod.requests.Get(static_cast<ResourceId>(r)));
  }
  requested_[kResourceIdPods][n] -= 1;
  non_zero_cpu_[n] -= pod.non_zero_cpu_milli;
  non_zero_memory_[n] -= pod.non_zero_memory;
  for (const HostPort& port : pod.host_ports) {
    auto used = std::find(used_ports_[n].begin(), used_ports_[n].end(), port);
    if (used != used_ports_[n].end()) used_ports_[n].erase(used);
  }
  pods.erase(it);
  RebuildAffinityLists(n);
  MarkScratch(n);
  return true;
}

void Snapshot::CopyNodeFrom(const Snapshot& other, NodeIndex n) {
  COPSE_CHECK(n < num_nodes() && n < other.num_nodes() && names_[n] == other.names_[n]);
  scratch_rows_.push_back(n);  // its generation may not match the syncer's node
  generations_[n] = other.generations_[n];
  EnsureResourceColumns(other.allocatable_.size());
  for (size_t r = 0; r < allocatable_.size(); ++r) {
    allocatable_[r][n] = other.allocatable(static_cast<ResourceId>(r), n);
    requested_[r][n] = other.requested(static_cast<ResourceId>(r), n);
  }
  non_zero_cpu_[n] = other.non_zero_cpu_[n];
  non_zero_memory_[n] = other.non_zero_memory_[n];
  unschedulable_[n] = other.unschedulable_[n];
  used_ports_[n] = other.used_ports_[n];
  pods_[n] = other.pods_[n];
  UncountAffinity(n);
  pods_with_affinity_[n] = other.pods_with_affinity_[n];
  pods_with_required_anti_affinity_[n] = other.pods_with_required_anti_affinity_[n];
  CountAffinity(n);
}

}  // namespace copse
