#pragma once
// Framework: one profile's plugins, instantiated from a Registry, and the
// runner that drives them through a scheduling cycle.
//
// SchedulePod (the sequential reference pipeline; the loop runs the same steps
// and parallelises FilterChunk/ScoreChunk over node chunks):
//   1. PreFilter every plugin in order; Skip marks the plugin's Filter as
//      skipped; a rejection fails the cycle with that plugin's message;
//      PreFilterResults are intersected (empty intersection: "node(s) didn't
//      satisfy plugin(s) [...] simultaneously").
//   2. Filter the candidate nodes in chunks, starting at `start_index`, each
//      node going through the Filter plugins in order until the first
//      rejection, which is recorded per node with the plugin's index; stop
//      once enough feasible nodes are found (kube's numFeasibleNodesToFind).
//   3. No feasible node: build kube-scheduler's FitError message (reasons
//      counted per node, "<count> <reason>" sorted), run PostFilter
//      (preemption: victims computed, not evicted) and append its message.
//   4. One feasible node: take it. Otherwise PreScore, Score each plugin over
//      the feasible nodes, NormalizeScore, check [0, 100], multiply by the
//      weight, sum.
//   5. Pick the highest total; ties are broken uniformly at random by
//      reservoir sampling with the injected RandomSource.
//
// Thread-safety: a built Framework is immutable; every const method except
// the binding-cycle ones (Reserve..PostBind, loop thread only) may run
// concurrently. FilterChunk and ScoreChunk are noexcept and allocation-free
// given pre-sized scratch buffers.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/pod_info.h"
#include "core/result.h"
#include "core/snapshot.h"
#include "plugins/framework/cycle_state.h"
#include "plugins/framework/plugin.h"
#include "plugins/framework/profile.h"
#include "plugins/framework/random.h"
#include "plugins/framework/registry.h"
#include "plugins/framework/status.h"

namespace copse::plugins {

enum class ExtensionPoint : uint8_t {
  kPreEnqueue,
  kQueueSort,
  kPreFilter,
  kFilter,
  kPostFilter,
  kPreScore,
  kScore,
  kReserve,
  kPermit,
  kPreBind,
  kBind,
  kPostBind,
};

// Reasons of statuses the framework itself produces (Status.plugin == kFrameworkPlugin).
enum FrameworkReason : ReasonId {
  kFrameworkReasonPreFilterExcluded = 1,  // detail: mask of plugins that restricted the nodes
  kFrameworkReasonPreFilterConflict =
      2,                             // detail: mask of plugins whose node sets do not intersect
  kFrameworkReasonInvalidScore = 3,  // arg: plugin index, detail: the score
  kFrameworkReasonNoNodes = 4,       // "no nodes available to schedule pods"
  kFrameworkReasonNotAllowed = 5,    // outside ScheduleOptions::allowed_nodes
};

// kube-scheduler's numFeasibleNodesToFind: all nodes below 100; otherwise
// percentage (0: adaptive 50 - nodes/125, at least 5) of the nodes, at least 100.
size_t NumFeasibleNodesToFind(int32_t percentage_of_nodes_to_score, size_t num_nodes) noexcept;

// Per-chunk scratch for FilterChunk; one per worker thread.
struct FilterScratch {
  std::vector<NodeIndex> alive;
  std::vector<Status> verdicts;
  void Reserve(size_t chunk_size) {
    if (alive.size() < chunk_size) alive.resize(chunk_size);
    if (verdicts.size() < chunk_size) verdicts.resize(chunk_size);
  }
};

// Reusable buffers for SchedulePod; grown on demand, never shrunk.
struct Workspace {
  FilterScratch filter;
  // Parallel filtering: candidates in walk order, one scratch and result slot per chunk.
  std::vector<NodeIndex> rotated;
  std::vector<FilterScratch> chunk_scratch;
  struct ChunkResult {
    Status status;
    size_t found = 0;
    uint64_t rejected_by = 0;
    bool skipped = false;
  };
  std::vector<ChunkResult> chunk_results;
  std::vector<Status> node_statuses;  // by NodeIndex
  std::vector<NodeIndex> candidates;
  std::vector<NodeIndex> feasible;
  std::vector<int64_t> plugin_scores;  // [score plugin * feasible.size() + i]
  std::vector<int64_t> total_scores;   // by position in `feasible`
  // With ScheduleOptions::keep_raw_scores: plugin_scores before normalization
  // and weights (empty when no scoring ran: fewer than two feasible nodes).
  std::vector<int64_t> raw_scores;
};

struct ScheduleOptions {
  size_t chunk_size = 256;
  // Stop filtering after this many feasible nodes; 0: NumFeasibleNodesToFind
  // with the profile's percentage.
  size_t num_feasible_to_find = 0;
  // Where the round-robin walk over the candidates starts (kube's nextStartNodeIndex).
  size_t start_index = 0;
  bool run_post_filter = true;
  // Limits on PostFilter's (preemption's) victims; null: none. Must stay
  // valid during the call.
  const VictimPolicy* victim_policy = nullptr;
  // Copy the raw scores to Workspace::raw_scores (for reuse by pod classes).
  bool keep_raw_scores = false;
  // Only these nodes are candidates (sorted ascending, unique), e.g. the
  // nodes of the topology domain a gang is being placed in; the others are
  // reported as "node(s) outside the topology domain being tried". Null:
  // every node. Must stay valid during the call.
  const std::vector<NodeIndex>* allowed_nodes = nullptr;
  // Runs body(i) for every i in [0, count), possibly concurrently, and returns
  // when all are done (the scheduler passes a oneTBB parallel_for). Empty:
  // sequential. Filter chunks and score chunks go through it when there are
  // at least two chunks of work.
  std::function<void(size_t count, const std::function<void(size_t)>& body)> parallel_for;
};

struct PreFilterOutcome {
  Status status;                                // Success, rejection (with plugin) or Error
  std::optional<std::vector<NodeIndex>> nodes;  // intersected PreFilterResults; nullopt: all
  uint64_t plugins_with_nodes = 0;              // plugins that restricted the nodes
  // The rejecting plugin's PreFilterResult::message ("" when it gave none).
  std::string message;
};

struct ScheduleResult {
  // kSuccess: `node` is the choice. kUnschedulable: no node fits (message is
  // the FitError text, post_filter tells whether preemption can help).
  // kError: an internal error (message says which plugin).
  Code code = Code::kSuccess;
  std::optional<NodeIndex> node;
  size_t evaluated_nodes = 0;
  size_t feasible_nodes = 0;
  uint64_t unschedulable_plugins = 0;  // mask of plugin indices that rejected the pod
  std::string message;
  std::optional<PostFilterResult> post_filter;
};

class Framework final : public FrameworkHandle {
 public:
  static Result<std::unique_ptr<Framework>> Create(const Registry& registry,
                                                   const Profile& profile);

  const std::string& scheduler_name() const noexcept { return scheduler_name_; }
  int32_t percentage_of_nodes_to_score() const noexcept { return percentage_of_nodes_to_score_; }
  size_t num_plugins() const noexcept { return plugins_.size(); }
  const Plugin& plugin(PluginIndex index) const noexcept { return *plugins_[index]; }
  std::optional<PluginIndex> FindPlugin(std::string_view name) const noexcept;
  // Plugin names at an extension point, in run order.
  std::vector<std::string> PluginNames(ExtensionPoint point) const;
  // Weight of a score plugin (0 when it is not a score plugin of this profile).
  int32_t ScoreWeight(std::string_view plugin_name) const noexcept;

  // ---- Queue ----
  // Every PreEnqueue plugin in order; the first rejection (with its plugin
  // index) wins.
  Status RunPreEnqueue(const PodInfo& pod) const noexcept;
  // The PreEnqueue plugins in run order (the queue gates with each one
  // separately, to know which plugin gated a pod).
  struct PreEnqueueEntry {
    PluginIndex index;
    const PreEnqueuePlugin* plugin;
  };
  std::vector<PreEnqueueEntry> PreEnqueuePlugins() const;
  bool QueueLess(const QueuedPodView& a, const QueuedPodView& b) const noexcept;
  const QueueSortPlugin& queue_sort() const noexcept { return *queue_sort_.front().plugin; }
  // Whether the plugin runs at an extension point where it can reject a pod
  // (PreEnqueue, PreFilter, Filter, Reserve, Permit, PreBind).
  bool CanReject(PluginIndex index) const noexcept;

  // ---- Scheduling cycle, step by step ----
  PreFilterOutcome RunPreFilter(const PodInfo& pod, const Snapshot& snapshot,
                                CycleState& state) const;
  // The text of a PreFilter rejection: the plugin's message, or its reasons.
  std::string PreFilterMessage(const PreFilterOutcome& outcome, const Snapshot& snapshot) const;
  // Filters one chunk of candidate nodes. Writes node_statuses[n] for every
  // candidate n (Success when feasible), the feasible ones to feasible_out
  // (their count to num_feasible) and ORs rejecting plugin bits into
  // rejected_by. Returns Success or the first Error (with plugin index).
  // Requires scratch.Reserve(candidates.size()) and feasible_out.size() >=
  // candidates.size(). Reentrant for disjoint chunks.
  Status FilterChunk(const CycleContext& ctx, std::span<const NodeIndex> candidates,
                     FilterScratch& scratch, std::span<Status> node_statuses,
                     std::span<NodeIndex> feasible_out, size_t& num_feasible,
                     uint64_t& rejected_by) const noexcept;
  Status RunPreScore(const PodInfo& pod, const Snapshot& snapshot,
                     std::span<const NodeIndex> feasible, CycleState& state) const;
  size_t num_score_plugins() const noexcept { return score_.size(); }
  // Whether a score plugin that ran for this pass (not skipped) scores nodes
  // by what other nodes hold (ScorePlugin::ScoreDependsOnOtherNodes).
  bool ScoresDependOnOtherNodes(const CycleState& state) const noexcept;
  // Raw scores of score plugin `score_plugin` (0-based among score plugins)
  // for `nodes`. A skipped plugin writes zeros. Reentrant.
  Status ScoreChunk(const CycleContext& ctx, size_t score_plugin, std::span<const NodeIndex> nodes,
                    std::span<int64_t> out) const noexcept;
  // NormalizeScore, range check and weights over the whole feasible list;
  // plugin_scores holds the raw scores as [score plugin * feasible.size() + i].
  Status CombineScores(const CycleContext& ctx, std::span<const NodeIndex> feasible,
                       std::span<int64_t> plugin_scores, std::span<int64_t> totals) const noexcept;
  // Position of the best total; ties broken uniformly at random.
  static std::optional<size_t> SelectHost(std::span<const int64_t> totals,
                                          RandomSource& random) noexcept;
  PostFilterResult RunPostFilter(const PodInfo& pod, const Snapshot& snapshot,
                                 const CycleState& state, std::span<const Status> node_statuses,
                                 RandomSource& random, std::chrono::system_clock::time_point now,
                                 const VictimPolicy* victim_policy = nullptr) const;

  // Steps 1-5 above, sequentially.
  ScheduleResult SchedulePod(const PodInfo& pod, const Snapshot& snapshot, CycleState& state,
                             Workspace& workspace, RandomSource& random,
                             const ScheduleOptions& options,
                             std::chrono::system_clock::time_point now) const;

  // ---- Binding cycle (loop thread only) ----
  // Runs Reserve in order; on failure runs Unreserve of all, in reverse.
  Status RunReserve(CycleState& state, const PodInfo& pod, std::string_view node_name) const;
  void RunUnreserve(CycleState& state, const PodInfo& pod,
                    std::string_view node_name) const noexcept;
  // Any rejection wins; otherwise Wait with the shortest timeout if any plugin waits.
  PermitDecision RunPermit(CycleState& state, const PodInfo& pod, std::string_view node_name) const;
  Status RunPreBind(CycleState& state, const PodInfo& pod, std::string_view node_name) const;
  // The first Bind plugin that does not Skip decides; Skip when all skip.
  // A plugin that returns Success has asked `client` for the binding.
  Status RunBind(CycleState& state, const PodInfo& pod, std::string_view node_name,
                 BindingClient& client) const;
  void RunPostBind(CycleState& state, const PodInfo& pod,
                   std::string_view node_name) const noexcept;

  // ---- FrameworkHandle ----
  Status RunFilterOnNode(const PodInfo& pod, const Snapshot& snapshot, const CycleState& state,
                         NodeIndex node) const noexcept override;
  Status RunPreFilterExtensionAddPod(CycleState& state, const PodInfo& pod, const PodInfo& added,
                                     NodeIndex node, const Snapshot& snapshot) const override;
  Status RunPreFilterExtensionRemovePod(CycleState& state, const PodInfo& pod,
                                        const PodInfo& removed, NodeIndex node,
                                        const Snapshot& snapshot) const override;
  PluginIndex IndexOf(const Plugin* plugin) const noexcept override;
  std::string FormatFitError(size_t num_all_nodes, std::string_view prefilter_message,
                             std::span<const Status> node_statuses,
                             std::string_view post_filter_message,
                             const Snapshot& snapshot) const override;
  std::string StatusMessage(const Status& status, const Snapshot& snapshot) const override;

  // Reason strings of one status (rendered by its plugin or the framework).
  void AppendReasons(const Status& status, const Snapshot& snapshot,
                     std::vector<std::string>& out) const;

 private:
  template <typename T>
  struct Entry {
    PluginIndex index;
    T* plugin;
  };
  struct ScoreEntry {
    PluginIndex index;
    ScorePlugin* plugin;
    int32_t weight;
  };

  Framework() = default;
  std::string PluginList(uint64_t mask) const;
  // "running <Point> plugin "<name>": <message>" for an Error status.
  std::string ErrorMessage(std::string_view point, const Status& status,
                           const Snapshot& snapshot) const;

  std::string scheduler_name_;
  int32_t percentage_of_nodes_to_score_ = 0;
  std::vector<std::unique_ptr<Plugin>> plugins_;
  std::vector<Entry<PreEnqueuePlugin>> pre_enqueue_;
  std::vector<Entry<QueueSortPlugin>> queue_sort_;
  std::vector<Entry<PreFilterPlugin>> pre_filter_;
  std::vector<Entry<FilterPlugin>> filter_;
  std::vector<Entry<PostFilterPlugin>> post_filter_;
  std::vector<Entry<PreScorePlugin>> pre_score_;
  std::vector<ScoreEntry> score_;
  std::vector<Entry<ReservePlugin>> reserve_;
  std::vector<Entry<PermitPlugin>> permit_;
  std::vector<Entry<PreBindPlugin>> pre_bind_;
  std::vector<Entry<BindPlugin>> bind_;
  std::vector<Entry<PostBindPlugin>> post_bind_;
};

}  // namespace copse::plugins
