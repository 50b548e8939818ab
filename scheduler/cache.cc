#include "scheduler/cache.h"

#include <utility>

namespace copse::scheduler {

Cache::Cache(const Clock& clock, Clock::Duration assumed_ttl)
    : clock_(clock), assumed_ttl_(assumed_ttl) {}

void Cache::Touch(size_t index) {
  if (index >= touched_flag_.size()) touched_flag_.resize(nodes_.size(), 0);
  if (touched_flag_[index] != 0) return;
  touched_flag_[index] = 1;
  touched_.push_back(static_cast<uint32_t>(index));
}

NodeInfo* Cache::FindNode(std::string_view name) {
  auto it = node_index_.find(name);
  if (it == node_index_.end()) return nullptr;
  Touch(it->second);
  return nodes_[it->second].get();
}

NodeInfo& Cache::UpsertNodeRow(std::string_view name) {
  if (NodeInfo* node = FindNode(name)) return *node;
  node_index_.emplace(std::string(name), nodes_.size());
  nodes_.push_back(std::make_unique<NodeInfo>(std::string(name)));
  rows_reordered_ = true;
  ++node_set_changes_;
  NodeInfo& node = *nodes_.back();
  // Pods that arrived before their node.
  for (auto& [uid, state] : pods_) {
    if (state.node == name) node.AddPod(state.pod);
  }
  return node;
}

void Cache::RemoveNode(std::string_view name) {
  auto it = node_index_.find(name);
  if (it == node_index_.end()) return;
  const size_t index = it->second;
  node_index_.erase(it);
  rows_reordered_ = true;
  ++node_set_changes_;
  if (index + 1 != nodes_.size()) {
    nodes_[index] = std::move(nodes_.back());
    node_index_[nodes_[index]->name()] = index;
  }
  nodes_.pop_back();
}

bool Cache::HasNode(std::string_view name) const { return node_index_.contains(name); }

void Cache::Attach(PodState& state) {
  if (state.pod->has_pod_affinity) ++pods_with_affinity_;
  if (NodeInfo* node = FindNode(state.node)) node->AddPod(state.pod);
}

void Cache::Detach(PodState& state) {
  if (state.pod->has_pod_affinity) --pods_with_affinity_;
  if (NodeInfo* node = FindNode(state.node)) node->RemovePod(state.pod->uid);
}

size_t Cache::PodsWithAffinity() const { return pods_with_affinity_; }

Status Cache::AssumePod(std::shared_ptr<const PodInfo> pod) {
  if (pods_.contains(pod->uid)) {
    return MakeError(ErrorCode::kAlreadyExists,
                     "pod " + pod->FullName() + " (uid " + pod->uid + ") is already in the cache");
  }
  PodState state;
  state.node = pod->node_name;
  state.pod = std::move(pod);
  state.assumed = true;
  auto [it, inserted] = pods_.emplace(state.pod->uid, std::move(state));
  Attach(it->second);
  ++assumed_count_;
  return Status::Ok();
}

void Cache::FinishBinding(std::string_view uid) {
  auto it = pods_.find(uid);
  if (it == pods_.end() || !it->second.assumed) return;
  it->second.binding_finished = true;
  it->second.deadline = clock_.Now() + assumed_ttl_;
  if (assumed_ttl_ != Clock::Duration::zero()) {
    expiry_.emplace_back(it->second.deadline, it->second.pod->uid);
  }
}

void Cache::ForgetPod(std::string_view uid) {
  auto it = pods_.find(uid);
  if (it == pods_.end() || !it->second.assumed) return;
  Detach(it->second);
  pods_.erase(it);
  --assumed_count_;
}

bool Cache::IsAssumed(std::string_view uid) const {
  auto it = pods_.find(uid);
  return it != pods_.end() && it->second.assumed;
}

void Cache::AddOrUpdatePod(std::shared_ptr<const PodInfo> pod) {
  auto it = pods_.find(pod->uid);
  if (it == pods_.end()) {
    PodState state;
    state.node = pod->node_name;
    state.pod = std::move(pod);
    auto [inserted, ok] = pods_.emplace(state.pod->uid, std::move(state));
    Attach(inserted->second);
    return;
  }
  PodState& state = it->second;
  Detach(state);
  if (state.assumed) {
    state.assumed = false;
    --assumed_count_;
  }
  state.node = pod->node_name;
  state.pod = std::move(pod);
  Attach(state);
}

void Cache::RemovePod(std::string_view uid) {
  auto it = pods_.find(uid);
  if (it == pods_.end()) return;
  Detach(it->second);
  if (it->second.assumed) --assumed_count_;
  pods_.erase(it);
}

std::optional<std::string> Cache::NodeOf(std::string_view uid) const {
  auto it = pods_.find(uid);
  if (it == pods_.end()) return std::nullopt;
  return it->second.node;
}

bool Cache::Knows(std::string_view uid) const { return pods_.find(uid) != pods_.end(); }

std::shared_ptr<const PodInfo> Cache::GetPod(std::string_view uid) const {
  auto it = pods_.find(uid);
  return it == pods_.end() ? nullptr : it->second.pod;
}

std::vector<std::shared_ptr<const PodInfo>> Cache::CleanupExpiredAssumedPods() {
  std::vector<std::shared_ptr<const PodInfo>> expired;
  if (assumed_ttl_ == Clock::Duration::zero()) return expired;
  const Clock::TimePoint now = clock_.Now();
  while (!expiry_.empty() && expiry_.front().first <= now) {
    const std::string uid = std::move(expiry_.front().second);
    expiry_.pop_front();
    auto it = pods_.find(uid);
    if (it == pods_.end()) continue;
    PodState& state = it->second;
    if (!state.assumed || !state.binding_finished || now < state.deadline) continue;
    Detach(state);
    expired.push_back(state.pod);
    --assumed_count_;
    ++expired_;
    pods_.erase(it);
  }
  return expired;
}

std::optional<Clock::TimePoint> Cache::NextAssumedExpiry() const {
  if (expiry_.empty()) return std::nullopt;
  return expiry_.front().first;
}

void Cache::SetNamespaceLabels(const std::string& ns, const Labels& labels) {
  namespaces_[ns] = labels;
  namespaces_dirty_ = true;
}

void Cache::RemoveNamespace(const std::string& ns) {
  namespaces_dirty_ |= namespaces_.erase(ns) > 0;
}

void Cache::SetPodDisruptionBudget(const std::string& key, PodDisruptionBudgetInfo pdb) {
  pdbs_[key] = std::move(pdb);
  pdbs_dirty_ = true;
}

void Cache::RemovePodDisruptionBudget(const std::string& key) {
  pdbs_dirty_ |= pdbs_.erase(key) > 0;
}

size_t Cache::UpdateSnapshot(Snapshot& snapshot) {
  size_t copied = 0;
  const bool incremental = !rows_reordered_ && snapshot.num_nodes() == nodes_.size() &&
                           snapshot.sync_mark().source == this &&
                           snapshot.sync_mark().step == sync_step_;
  if (incremental) {
    for (uint32_t row : touched_) copied += snapshot.SyncRow(row, *nodes_[row]) ? 1 : 0;
    for (NodeIndex row : snapshot.TakeScratchRows()) {
      copied += snapshot.SyncRow(row, *nodes_[row]) ? 1 : 0;
    }
  } else {
    node_ptrs_.clear();
    node_ptrs_.reserve(nodes_.size());
    for (const auto& node : nodes_) node_ptrs_.push_back(node.get());
    copied = snapshot.Sync(node_ptrs_);
  }
  for (uint32_t row : touched_) {
    if (row < touched_flag_.size()) touched_flag_[row] = 0;
  }
  touched_.clear();
  rows_reordered_ = false;
  snapshot.set_sync_mark({this, ++sync_step_});
  if (namespaces_dirty_) {
    // Drop namespaces that are gone, then (re)set the rest.
    std::vector<std::string> stale;
    for (const auto& [name, labels] : snapshot.namespaces()) {
      if (!namespaces_.contains(name)) stale.push_back(name);
    }
    for (const std::string& name : stale) snapshot.RemoveNamespace(name);
    for (const auto& [name, labels] : namespaces_) snapshot.SetNamespaceLabels(name, labels);
    namespaces_dirty_ = false;
  }
  if (pdbs_dirty_) {
    std::vector<PodDisruptionBudgetInfo> pdbs;
    pdbs.reserve(pdbs_.size());
    for (const auto& [key, pdb] : pdbs_) pdbs.push_back(pdb);
    snapshot.SetPodDisruptionBudgets(std::move(pdbs));
    pdbs_dirty_ = false;
  }
  return copied;
}

CacheStats Cache::stats() const {
  CacheStats s;
  s.nodes = nodes_.size();
  s.pods = pods_.size();
  s.assumed_pods = assumed_count_;
  s.expired_assumed = expired_;
  return s;
}

std::vector<std::string> Cache::NodeNames() const {
  std::vector<std::string> names;
  names.reserve(nodes_.size());
  for (const auto& node : nodes_) names.push_back(node->name());
  return names;
}

std::optional<NodeInfo> Cache::GetNode(std::string_view name) const {
  auto it = node_index_.find(name);
  if (it == node_index_.end()) return std::nullopt;
  return *nodes_[it->second];
}

}  // namespace copse::scheduler
