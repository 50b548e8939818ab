#pragma once
// Cache: the scheduler's view of nodes and of the pods that use them, as
// kube-scheduler's internal cache. Fed by informer events (nodes, assigned
// pods, namespaces, PDBs) and by the cycles (assumed pods), both applied by
// the scheduling loop.
//
// Pod states (by uid):
//   assumed   placed by the loop, bind in flight: counts on its node at once;
//   bound     seen assigned by the informer (an assumed pod is confirmed);
//   expired   an assumed pod whose bind finished but whose assignment the
//             informer did not confirm within the TTL is forgotten
//             (CleanupExpiredAssumedPods).
// Pods of every scheduler count; terminal pods (Succeeded/Failed) do not.
//
// Nodes keep a stable order (a deleted node's row is filled by the last one),
// so UpdateSnapshot copies only rows whose generation changed. Pods whose node
// is unknown (not yet added, or deleted) are kept and attached when it appears.
//
// Thread-safety: none; the cache has one owner, the scheduler's loop thread,
// which applies informer events and assumes pods in one order (so no lock is
// taken on the hot path).

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/clock.h"
#include "core/labels.h"
#include "core/node_info.h"
#include "core/pod_info.h"
#include "core/result.h"
#include "core/snapshot.h"

namespace copse::scheduler {

struct CacheStats {
  size_t nodes = 0;
  size_t pods = 0;          // assumed + bound
  size_t assumed_pods = 0;  // assumed, not yet confirmed
  uint64_t expired_assumed = 0;
};

class Cache {
 public:
  // `clock` must outlive the cache. An assumed pod whose bind finished expires
  // `assumed_ttl` later unless the informer confirms it (0: never).
  Cache(const Clock& clock, Clock::Duration assumed_ttl);

  // ---- Nodes (informer) ----
  // Adds the node or returns the existing one for update; `apply` edits it.
  template <typename Fn>
  void UpsertNode(std::string_view name, Fn&& apply) {
    NodeInfo& node = UpsertNodeRow(name);
    apply(node);
  }
  void RemoveNode(std::string_view name);
  bool HasNode(std::string_view name) const;
  // Counts nodes added and removed: equal counts, same set of names.
  uint64_t node_set_changes() const noexcept { return node_set_changes_; }

  // ---- Pods ----
  // Loop: the pod (with node_name set to `node`) counts on the node until it
  // is confirmed or forgotten. kAlreadyExists when the uid is known.
  Status AssumePod(std::shared_ptr<const PodInfo> pod);
  // Loop/binder: the bind call returned successfully; starts the TTL.
  void FinishBinding(std::string_view uid);
  // Binder: the bind failed; the assumed pod no longer counts.
  void ForgetPod(std::string_view uid);
  bool IsAssumed(std::string_view uid) const;
  // Cached (assumed or bound) pods with any pod affinity or anti-affinity
  // term: while there are none, an incoming pod's labels change no Filter or
  // Score result.
  size_t PodsWithAffinity() const;
  // Informer: an assigned, non-terminal pod was added or changed. Confirms an
  // assumed pod (moving it if it landed elsewhere).
  void AddOrUpdatePod(std::shared_ptr<const PodInfo> pod);
  // Informer: the pod was deleted or became terminal.
  void RemovePod(std::string_view uid);
  // The node a known pod counts on, if any.
  std::optional<std::string> NodeOf(std::string_view uid) const;
  // Whether the pod (by uid) is assumed or bound: it counts on a node.
  bool Knows(std::string_view uid) const;
  // The cached version of an assumed or bound pod; null when unknown.
  std::shared_ptr<const PodInfo> GetPod(std::string_view uid) const;
  // Forgets assumed pods whose TTL ran out; returns them.
  std::vector<std::shared_ptr<const PodInfo>> CleanupExpiredAssumedPods();
  // When CleanupExpiredAssumedPods next has something to look at (possibly
  // a pod confirmed since, which it then skips); nullopt when nothing can
  // expire.
  std::optional<Clock::TimePoint> NextAssumedExpiry() const;

  // ---- Cluster-wide objects ----
  void SetNamespaceLabels(const std::string& ns, const Labels& labels);
  void RemoveNamespace(const std::string& ns);
  void SetPodDisruptionBudget(const std::string& key, PodDisruptionBudgetInfo pdb);
  void RemovePodDisruptionBudget(const std::string& key);

  // Brings `snapshot` up to date; returns the number of node rows copied.
  size_t UpdateSnapshot(Snapshot& snapshot);

  CacheStats stats() const;
  // Every node's name, in row order.
  std::vector<std::string> NodeNames() const;
  // A copy of a node's current state (tests, diagnostics); nullopt if unknown.
  std::optional<NodeInfo> GetNode(std::string_view name) const;

 private:
  struct PodState {
    std::shared_ptr<const PodInfo> pod;
    std::string node;
    bool assumed = false;
    bool binding_finished = false;
    Clock::TimePoint deadline{};
  };
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept {
      return std::hash<std::string_view>{}(s);
    }
  };
  template <typename V>
  using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;

  NodeInfo& UpsertNodeRow(std::string_view name);
  NodeInfo* FindNode(std::string_view name);
  void Attach(PodState& state);
  void Detach(PodState& state);

  const Clock& clock_;
  const Clock::Duration assumed_ttl_;
  std::vector<std::unique_ptr<NodeInfo>> nodes_;
  StringMap<size_t> node_index_;
  StringMap<PodState> pods_;
  size_t assumed_count_ = 0;
  size_t pods_with_affinity_ = 0;  // cached pods with any pod (anti-)affinity term
  // (deadline, uid) of assumed pods whose bind finished, in deadline order
  // (the TTL is fixed); entries of pods confirmed or forgotten meanwhile are
  // skipped when they reach the front.
  std::deque<std::pair<Clock::TimePoint, std::string>> expiry_;
  uint64_t expired_ = 0;
  std::map<std::string, Labels, std::less<>> namespaces_;
  bool namespaces_dirty_ = true;
  std::map<std::string, PodDisruptionBudgetInfo, std::less<>> pdbs_;
  bool pdbs_dirty_ = true;
  std::vector<const NodeInfo*> node_ptrs_;  // scratch for UpdateSnapshot
  // Rows handed out for mutation since the last UpdateSnapshot (touched_flag_
  // dedupes), so that the snapshot that call synced is brought up to date by
  // re-checking only them; any other snapshot, or a change in the number or
  // order of nodes, gets a full Sync.
  std::vector<uint32_t> touched_;
  std::vector<uint8_t> touched_flag_;
  bool rows_reordered_ = true;
  uint64_t node_set_changes_ = 0;
  uint64_t sync_step_ = 0;
  void Touch(size_t index);
};

}  // namespace copse::scheduler
