#include "plugins/framework/framework.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <tuple>

#include "core/check.h"

namespace copse::plugins {
namespace {

uint64_t Bit(PluginIndex index) noexcept { return uint64_t{1} << index; }

std::string_view PointName(ExtensionPoint point) noexcept {
  switch (point) {
    case ExtensionPoint::kPreEnqueue:
      return "PreEnqueue";
    case ExtensionPoint::kQueueSort:
      return "QueueSort";
    case ExtensionPoint::kPreFilter:
      return "PreFilter";
    case ExtensionPoint::kFilter:
      return "Filter";
    case ExtensionPoint::kPostFilter:
      return "PostFilter";
    case ExtensionPoint::kPreScore:
      return "PreScore";
    case ExtensionPoint::kScore:
      return "Score";
    case ExtensionPoint::kReserve:
      return "Reserve";
    case ExtensionPoint::kPermit:
      return "Permit";
    case ExtensionPoint::kPreBind:
      return "PreBind";
    case ExtensionPoint::kBind:
      return "Bind";
    case ExtensionPoint::kPostBind:
      return "PostBind";
  }
  return "";
}

// Builds a Framework from a profile: instantiates plugins once each and
// expands multi_point per extension point.
class Builder {
 public:
  Builder(const Registry& registry, const Profile& profile,
          std::vector<std::unique_ptr<Plugin>>& plugins)
      : registry_(registry), profile_(profile), plugins_(plugins) {}

  Result<PluginIndex> Instantiate(const std::string& name) {
    if (auto it = index_.find(name); it != index_.end()) return it->second;
    const PluginFactory* factory = registry_.Find(name);
    if (factory == nullptr)
      return MakeError(ErrorCode::kInvalid, "plugin \"" + name + "\" does not exist");
    const std::any* args = nullptr;
    if (auto it = profile_.plugin_args.find(name); it != profile_.plugin_args.end())
      args = &it->second;
    Result<std::unique_ptr<Plugin>> plugin = (*factory)(args);
    if (!plugin.ok()) return std::move(plugin).error();
    if (plugins_.size() >= kMaxPluginsPerProfile) {
      return MakeError(ErrorCode::kInvalid, "profile " + profile_.scheduler_name + ": more than " +
                                                std::to_string(kMaxPluginsPerProfile) + " plugins");
    }
    const auto index = static_cast<PluginIndex>(plugins_.size());
    plugins_.push_back(std::move(*plugin));
    index_.emplace(name, index);
    return index;
  }

  // The ordered (name, weight) list for one extension point; `implements`
  // tells whether a plugin instance implements the point's interface.
  template <typename T>
  Result<std::vector<std::pair<PluginIndex, int32_t>>> Expand(const PluginSet& specific,
                                                              ExtensionPoint point) {
    std::vector<std::pair<std::string, int32_t>> specific_enabled;
    std::set<std::string, std::less<>> specific_names;
    for (const PluginRef& ref : specific.enabled) {
      if (!specific_names.insert(ref.name).second) {
        return MakeError(ErrorCode::kInvalid, "plugin \"" + ref.name + "\" already registered as " +
                                                  std::string(PointName(point)) + " plugin");
      }
      specific_enabled.emplace_back(ref.name, ref.weight);
    }
    const std::set<std::string, std::less<>> disabled(specific.disabled.begin(),
                                                      specific.disabled.end());
    std::vector<std::pair<std::string, int32_t>> multi;
    std::set<std::string, std::less<>> overrides;
    if (disabled.count("*") == 0) {
      std::set<std::string, std::less<>> multi_names;
      for (const PluginRef& ref : profile_.plugins.multi_point.enabled) {
        Result<PluginIndex> index = Instantiate(ref.name);
        if (!index.ok()) return std::move(index).error();
        if (dynamic_cast<T*>(plugins_[*index].get()) == nullptr) continue;
        if (disabled.count(ref.name) != 0) continue;
        if (specific_names.count(ref.name) != 0) {
          overrides.insert(ref.name);
          continue;
        }
        if (!multi_names.insert(ref.name).second) {
          return MakeError(ErrorCode::kInvalid, "plugin \"" + ref.name +
                                                    "\" already registered as " +
                                                    std::string(PointName(point)) + " plugin");
        }
        multi.emplace_back(ref.name, ref.weight);
      }
    }
    std::vector<std::pair<std::string, int32_t>> ordered;
    for (const auto& e : specific_enabled) {
      if (overrides.count(e.first) != 0) ordered.push_back(e);
    }
    ordered.insert(ordered.end(), multi.begin(), multi.end());
    for (const auto& e : specific_enabled) {
      if (overrides.count(e.first) == 0) ordered.push_back(e);
    }
    std::vector<std::pair<PluginIndex, int32_t>> out;
    for (const auto& [name, weight] : ordered) {
      Result<PluginIndex> index = Instantiate(name);
      if (!index.ok()) return std::move(index).error();
      if (dynamic_cast<T*>(plugins_[*index].get()) == nullptr) {
        return MakeError(ErrorCode::kInvalid, "plugin \"" + name + "\" does not extend " +
                                                  std::string(PointName(point)) + " plugin");
      }
      int32_t w = weight;
      if (w == 0 && overrides.count(name) != 0) {
        for (const PluginRef& ref : profile_.plugins.multi_point.enabled) {
          if (ref.name == name) w = ref.weight;
        }
      }
      out.emplace_back(*index, w == 0 ? 1 : w);
    }
    return out;
  }

 private:
  const Registry& registry_;
  const Profile& profile_;
  std::vector<std::unique_ptr<Plugin>>& plugins_;
  std::map<std::string, PluginIndex, std::less<>> index_;
};

template <typename T, typename EntryT>
copse::Status Fill(Builder& builder, const PluginSet& set, ExtensionPoint point,
                   const std::vector<std::unique_ptr<Plugin>>& plugins, std::vector<EntryT>& out) {
  Result<std::vector<std::pair<PluginIndex, int32_t>>> expanded = builder.Expand<T>(set, point);
  if (!expanded.ok()) return std::move(expanded).error();
  for (const auto& [index, weight] : *expanded) {
    out.push_back(EntryT{index, dynamic_cast<T*>(plugins[index].get())});
  }
  return copse::Status::Ok();
}

}  // namespace

size_t NumFeasibleNodesToFind(int32_t percentage_of_nodes_to_score, size_t num_nodes) noexcept {
  constexpr size_t kMinFeasibleNodesToFind = 100;
  constexpr int64_t kMinFeasibleNodesPercentageToFind = 5;
  if (num_nodes < kMinFeasibleNodesToFind || percentage_of_nodes_to_score >= 100) return num_nodes;
  int64_t percentage = percentage_of_nodes_to_score;
  if (percentage <= 0) {
    percentage = 50 - static_cast<int64_t>(num_nodes / 125);
    if (percentage < kMinFeasibleNodesPercentageToFind)
      percentage = kMinFeasibleNodesPercentageToFind;
  }
  const size_t n = num_nodes * static_cast<size_t>(percentage) / 100;
  if (n < kMinFeasibleNodesToFind) return kMinFeasibleNodesToFind;
  return n;
}

Result<std::unique_ptr<Framework>> Framework::Create(const Registry& registry,
                                                     const Profile& profile) {
  std::unique_ptr<Framework> fw(new Framework());
  fw->scheduler_name_ = profile.scheduler_name;
  fw->percentage_of_nodes_to_score_ = profile.percentage_of_nodes_to_score;
  Builder builder(registry, profile, fw->plugins_);
  const PluginsConfig& p = profile.plugins;
  const auto& plugins = fw->plugins_;
  copse::Status s = Fill<PreEnqueuePlugin>(builder, p.pre_enqueue, ExtensionPoint::kPreEnqueue,
                                           plugins, fw->pre_enqueue_);
  if (s.ok())
    s = Fill<QueueSortPlugin>(builder, p.queue_sort, ExtensionPoint::kQueueSort, plugins,
                              fw->queue_sort_);
  if (s.ok())
    s = Fill<PreFilterPlugin>(builder, p.pre_filter, ExtensionPoint::kPreFilter, plugins,
                              fw->pre_filter_);
  if (s.ok())
    s = Fill<FilterPlugin>(builder, p.filter, ExtensionPoint::kFilter, plugins, fw->filter_);
  if (s.ok())
    s = Fill<PostFilterPlugin>(builder, p.post_filter, ExtensionPoint::kPostFilter, plugins,
                               fw->post_filter_);
  if (s.ok())
    s = Fill<PreScorePlugin>(builder, p.pre_score, ExtensionPoint::kPreScore, plugins,
                             fw->pre_score_);
  if (s.ok()) {
    Result<std::vector<std::pair<PluginIndex, int32_t>>> scores =
        builder.Expand<ScorePlugin>(p.score, ExtensionPoint::kScore);
    if (!scores.ok()) return std::move(scores).error();
    for (const auto& [index, weight] : *scores) {
      fw->score_.push_back(
          ScoreEntry{index, dynamic_cast<ScorePlugin*>(plugins[index].get()), weight});
    }
  }
  if (s.ok())
    s = Fill<ReservePlugin>(builder, p.reserve, ExtensionPoint::kReserve, plugins, fw->reserve_);
  if (s.ok())
    s = Fill<PermitPlugin>(builder, p.permit, ExtensionPoint::kPermit, plugins, fw->permit_);
  if (s.ok())
    s = Fill<PreBindPlugin>(builder, p.pre_bind, ExtensionPoint::kPreBind, plugins, fw->pre_bind_);
  if (s.ok()) s = Fill<BindPlugin>(builder, p.bind, ExtensionPoint::kBind, plugins, fw->bind_);
  if (s.ok())
    s = Fill<PostBindPlugin>(builder, p.post_bind, ExtensionPoint::kPostBind, plugins,
                             fw->post_bind_);
  if (!s.ok()) return s.error();
  if (fw->queue_sort_.size() != 1) {
    return MakeError(ErrorCode::kInvalid,
                     "profile " + profile.scheduler_name +
                         ": exactly one queue sort plugin is required, but got " +
                         std::to_string(fw->queue_sort_.size()));
  }
  return fw;
}

std::optional<PluginIndex> Framework::FindPlugin(std::string_view name) const noexcept {
  for (size_t i = 0; i < plugins_.size(); ++i) {
    if (plugins_[i]->Name() == name) return static_cast<PluginIndex>(i);
  }
  return std::nullopt;
}

std::vector<std::string> Framework::PluginNames(ExtensionPoint point) const {
  std::vector<std::string> names;
  const auto add = [&](const auto& entries) {
    for (const auto& e : entries) names.emplace_back(plugins_[e.index]->Name());
  };
  switch (point) {
    case ExtensionPoint::kPreEnqueue:
      add(pre_enqueue_);
      break;
    case ExtensionPoint::kQueueSort:
      add(queue_sort_);
      break;
    case ExtensionPoint::kPreFilter:
      add(pre_filter_);
      break;
    case ExtensionPoint::kFilter:
      add(filter_);
      break;
    case ExtensionPoint::kPostFilter:
      add(post_filter_);
      break;
    case ExtensionPoint::kPreScore:
      add(pre_score_);
      break;
    case ExtensionPoint::kScore:
      add(score_);
      break;
    case ExtensionPoint::kReserve:
      add(reserve_);
      break;
    case ExtensionPoint::kPermit:
      add(permit_);
      break;
    case ExtensionPoint::kPreBind:
      add(pre_bind_);
      break;
    case ExtensionPoint::kBind:
      add(bind_);
      break;
    case ExtensionPoint::kPostBind:
      add(post_bind_);
      break;
  }
  return names;
}

int32_t Framework::ScoreWeight(std::string_view plugin_name) const noexcept {
  for (const ScoreEntry& e : score_) {
    if (plugins_[e.index]->Name() == plugin_name) return e.weight;
  }
  return 0;
}

Status Framework::RunPreEnqueue(const PodInfo& pod) const noexcept {
  for (const auto& e : pre_enqueue_) {
    Status s = e.plugin->PreEnqueue(pod);
    if (!s.IsSuccess()) return s.WithPlugin(e.index);
  }
  return Status::Success();
}

std::vector<Framework::PreEnqueueEntry> Framework::PreEnqueuePlugins() const {
  std::vector<PreEnqueueEntry> out;
  out.reserve(pre_enqueue_.size());
  for (const auto& e : pre_enqueue_) out.push_back({e.index, e.plugin});
  return out;
}

bool Framework::QueueLess(const QueuedPodView& a, const QueuedPodView& b) const noexcept {
  return queue_sort_.front().plugin->Less(a, b);
}

bool Framework::CanReject(PluginIndex index) const noexcept {
  const auto has = [index](const auto& entries) {
    return std::any_of(entries.begin(), entries.end(),
                       [index](const auto& e) { return e.index == index; });
  };
  return has(pre_enqueue_) || has(pre_filter_) || has(filter_) || has(reserve_) || has(permit_) ||
         has(pre_bind_);
}

PreFilterOutcome Framework::RunPreFilter(const PodInfo& pod, const Snapshot& snapshot,
                                         CycleState& state) const {
  PreFilterOutcome out;
  for (const auto& e : pre_filter_) {
    PreFilterResult result;
    Status s = e.plugin->PreFilter(pod, snapshot, state, result);
    if (s.IsSkip()) {
      state.SetFilterSkipped(e.index);
      continue;
    }
    if (!s.IsSuccess()) {
      out.status = s.WithPlugin(e.index);
      if (!s.IsRejected()) out.status.code = Code::kError;
      out.message = std::move(result.message);
      return out;
    }
    if (!result.nodes.has_value()) continue;
    std::vector<NodeIndex> nodes = std::move(*result.nodes);
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    out.plugins_with_nodes |= Bit(e.index);
    if (!out.nodes.has_value()) {
      out.nodes = std::move(nodes);
    } else {
      std::vector<NodeIndex> both;
      std::set_intersection(out.nodes->begin(), out.nodes->end(), nodes.begin(), nodes.end(),
                            std::back_inserter(both));
      out.nodes = std::move(both);
    }
    if (out.nodes->empty()) {
      out.status =
          Status::Unresolvable(kFrameworkReasonPreFilterConflict, 0, out.plugins_with_nodes)
              .WithPlugin(kFrameworkPlugin);
      return out;
    }
  }
  return out;
}

std::string Framework::PreFilterMessage(const PreFilterOutcome& outcome,
                                        const Snapshot& snapshot) const {
  return outcome.message.empty() ? StatusMessage(outcome.status, snapshot) : outcome.message;
}

Status Framework::FilterChunk(const CycleContext& ctx, std::span<const NodeIndex> candidates,
                              FilterScratch& scratch, std::span<Status> node_statuses,
                              std::span<NodeIndex> feasible_out, size_t& num_feasible,
                              uint64_t& rejected_by) const noexcept {
  const size_t n = candidates.size();
  num_feasible = 0;
  if (n == 0) return Status::Success();
  COPSE_CHECK(scratch.alive.size() >= n && scratch.verdicts.size() >= n && feasible_out.size() >= n)
      << "FilterChunk scratch not reserved";
  std::copy(candidates.begin(), candidates.end(), scratch.alive.begin());
  size_t alive = n;
  for (const auto& e : filter_) {
    if (ctx.state.FilterSkipped(e.index)) continue;
    std::span<const NodeIndex> nodes(scratch.alive.data(), alive);
    std::span<Status> verdicts(scratch.verdicts.data(), alive);
    e.plugin->Filter(ctx, nodes, verdicts);
    size_t kept = 0;
    for (size_t i = 0; i < alive; ++i) {
      const Status& v = scratch.verdicts[i];
      const NodeIndex node = scratch.alive[i];
      if (v.IsSuccess()) {
        scratch.alive[kept++] = node;
        continue;
      }
      if (v.IsError()) return v.WithPlugin(e.index);
      node_statuses[node] = v.WithPlugin(e.index);
      rejected_by |= Bit(e.index);
    }
    alive = kept;
    if (alive == 0) break;
  }
  for (size_t i = 0; i < alive; ++i) {
    feasible_out[i] = scratch.alive[i];
    node_statuses[scratch.alive[i]] = Status::Success();
  }
  num_feasible = alive;
  return Status::Success();
}

Status Framework::RunFilterOnNode(const PodInfo& pod, const Snapshot& snapshot,
                                  const CycleState& state, NodeIndex node) const noexcept {
  const CycleContext ctx{pod, snapshot, state};
  const NodeIndex nodes[1] = {node};
  for (const auto& e : filter_) {
    if (state.FilterSkipped(e.index)) continue;
    Status verdict[1];
    e.plugin->Filter(ctx, nodes, verdict);
    if (!verdict[0].IsSuccess()) return verdict[0].WithPlugin(e.index);
  }
  return Status::Success();
}

Status Framework::RunPreFilterExtensionAddPod(CycleState& state, const PodInfo& pod,
                                              const PodInfo& added, NodeIndex node,
                                              const Snapshot& snapshot) const {
  for (const auto& e : pre_filter_) {
    if (state.FilterSkipped(e.index) || !e.plugin->HasPreFilterExtensions()) continue;
    Status s = e.plugin->AddPod(state, pod, added, node, snapshot);
    if (!s.IsSuccess()) return s.WithPlugin(e.index);
  }
  return Status::Success();
}

Status Framework::RunPreFilterExtensionRemovePod(CycleState& state, const PodInfo& pod,
                                                 const PodInfo& removed, NodeIndex node,
                                                 const Snapshot& snapshot) const {
  for (const auto& e : pre_filter_) {
    if (state.FilterSkipped(e.index) || !e.plugin->HasPreFilterExtensions()) continue;
    Status s = e.plugin->RemovePod(state, pod, removed, node, snapshot);
    if (!s.IsSuccess()) return s.WithPlugin(e.index);
  }
  return Status::Success();
}

PluginIndex Framework::IndexOf(const Plugin* plugin) const noexcept {
  for (size_t i = 0; i < plugins_.size(); ++i) {
    if (plugins_[i].get() == plugin) return static_cast<PluginIndex>(i);
  }
  return kNoPlugin;
}

Status Framework::RunPreScore(const PodInfo& pod, const Snapshot& snapshot,
                              std::span<const NodeIndex> feasible, CycleState& state) const {
  for (const auto& e : pre_score_) {
    Status s = e.plugin->PreScore(pod, snapshot, feasible, state);
    if (s.IsSkip()) {
      state.SetScoreSkipped(e.index);
      continue;
    }
    if (!s.IsSuccess()) {
      Status err = s.WithPlugin(e.index);
      err.code = Code::kError;
      return err;
    }
  }
  return Status::Success();
}

bool Framework::ScoresDependOnOtherNodes(const CycleState& state) const noexcept {
  return std::any_of(score_.begin(), score_.end(), [&](const ScoreEntry& e) {
    return !state.ScoreSkipped(e.index) && e.plugin->ScoreDependsOnOtherNodes();
  });
}

Status Framework::ScoreChunk(const CycleContext& ctx, size_t score_plugin,
                             std::span<const NodeIndex> nodes,
                             std::span<int64_t> out) const noexcept {
  const ScoreEntry& e = score_[score_plugin];
  if (ctx.state.ScoreSkipped(e.index)) {
    std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(nodes.size()), 0);
    return Status::Success();
  }
  Status s = e.plugin->Score(ctx, nodes, out);
  if (!s.IsSuccess()) {
    Status err = s.WithPlugin(e.index);
    err.code = Code::kError;
    return err;
  }
  return Status::Success();
}

Status Framework::CombineScores(const CycleContext& ctx, std::span<const NodeIndex> feasible,
                                std::span<int64_t> plugin_scores,
                                std::span<int64_t> totals) const noexcept {
  const size_t f = feasible.size();
  std::fill(totals.begin(), totals.begin() + static_cast<std::ptrdiff_t>(f), 0);
  for (size_t p = 0; p < score_.size(); ++p) {
    const ScoreEntry& e = score_[p];
    if (ctx.state.ScoreSkipped(e.index)) continue;
    std::span<int64_t> scores = plugin_scores.subspan(p * f, f);
    if (e.plugin->HasNormalizeScore()) {
      Status s = e.plugin->NormalizeScore(ctx, feasible, scores);
      if (!s.IsSuccess()) {
        Status err = s.WithPlugin(e.index);
        err.code = Code::kError;
        return err;
      }
    }
    for (size_t i = 0; i < f; ++i) {
      if (scores[i] < kMinNodeScore || scores[i] > kMaxNodeScore) {
        return Status::Error(kFrameworkReasonInvalidScore, e.index,
                             static_cast<uint64_t>(scores[i]))
            .WithPlugin(kFrameworkPlugin);
      }
      totals[i] += scores[i] * e.weight;
    }
  }
  return Status::Success();
}

std::optional<size_t> Framework::SelectHost(std::span<const int64_t> totals,
                                            RandomSource& random) noexcept {
  if (totals.empty()) return std::nullopt;
  size_t selected = 0;
  int64_t max_score = totals[0];
  uint64_t count_of_max = 1;
  for (size_t i = 1; i < totals.size(); ++i) {
    if (totals[i] > max_score) {
      max_score = totals[i];
      selected = i;
      count_of_max = 1;
    } else if (totals[i] == max_score) {
      ++count_of_max;
      // Replace the candidate with probability 1/count_of_max (reservoir sampling).
      if (random.Uniform(count_of_max) == 0) selected = i;
    }
  }
  return selected;
}

PostFilterResult Framework::RunPostFilter(const PodInfo& pod, const Snapshot& snapshot,
                                          const CycleState& state,
                                          std::span<const Status> node_statuses,
                                          RandomSource& random,
                                          std::chrono::system_clock::time_point now,
                                          const VictimPolicy* victim_policy) const {
  const PostFilterContext ctx{pod,   snapshot, state, node_statuses,
                              *this, random,   now,   victim_policy};
  PostFilterResult combined;
  combined.status = Status::Unschedulable(kReasonNone);
  std::string message;
  for (const auto& e : post_filter_) {
    PostFilterResult r = e.plugin->PostFilter(ctx);
    r.status.plugin = e.index;
    if (r.status.IsSuccess() || r.status.code == Code::kUnschedulableAndUnresolvable ||
        !r.status.IsRejected()) {
      if (!r.status.IsSuccess() && !r.status.IsRejected()) r.status.code = Code::kError;
      return r;
    }
    if (r.clear_nomination) combined.clear_nomination = true;
    if (!r.message.empty()) {
      if (!message.empty()) message += ", ";
      message += r.message;
    }
    if (combined.status.plugin == kNoPlugin) combined.status.plugin = e.index;
  }
  combined.message = std::move(message);
  return combined;
}

ScheduleResult Framework::SchedulePod(const PodInfo& pod, const Snapshot& snapshot,
                                      CycleState& state, Workspace& ws, RandomSource& random,
                                      const ScheduleOptions& options,
                                      std::chrono::system_clock::time_point now) const {
  ScheduleResult result;
  const size_t num_nodes = snapshot.num_nodes();
  if (num_nodes == 0) {
    result.code = Code::kUnschedulable;
    result.message = "no nodes available to schedule pods";
    return result;
  }
  ws.node_statuses.assign(num_nodes, Status::Success());

  const auto fail = [&](std::string_view prefilter_message) {
    result.code = Code::kUnschedulable;
    std::string post_message;
    if (options.run_post_filter && !post_filter_.empty()) {
      result.post_filter =
          RunPostFilter(pod, snapshot, state, ws.node_statuses, random, now, options.victim_policy);
      if (result.post_filter->status.IsError()) {
        result.code = Code::kError;
        result.message = ErrorMessage("PostFilter", result.post_filter->status, snapshot);
        return;
      }
      post_message = result.post_filter->message;
    }
    result.message =
        FormatFitError(num_nodes, prefilter_message, ws.node_statuses, post_message, snapshot);
  };

  // 1. PreFilter.
  PreFilterOutcome pre = RunPreFilter(pod, snapshot, state);
  if (pre.status.IsError()) {
    result.code = Code::kError;
    result.message = ErrorMessage("PreFilter", pre.status, snapshot);
    if (!pre.message.empty()) result.message += ": " + pre.message;
    return result;
  }
  if (!pre.status.IsSuccess()) {
    std::fill(ws.node_statuses.begin(), ws.node_statuses.end(), pre.status);
    if (pre.status.plugin < plugins_.size()) result.unschedulable_plugins |= Bit(pre.status.plugin);
    result.unschedulable_plugins |= pre.plugins_with_nodes;
    fail(PreFilterMessage(pre, snapshot));
    return result;
  }
  ws.candidates.clear();
  if (pre.nodes.has_value()) {
    const Status excluded =
        Status::Unresolvable(kFrameworkReasonPreFilterExcluded, 0, pre.plugins_with_nodes)
            .WithPlugin(kFrameworkPlugin);
    std::fill(ws.node_statuses.begin(), ws.node_statuses.end(), excluded);
    for (NodeIndex n : *pre.nodes) {
      if (n < num_nodes) ws.candidates.push_back(n);
    }
  } else {
    for (NodeIndex n = 0; n < num_nodes; ++n) ws.candidates.push_back(n);
  }
  if (options.allowed_nodes != nullptr) {
    // Both lists are sorted: one merge marks the nodes outside and keeps the
    // allowed candidates.
    const Status outside =
        Status::Unresolvable(kFrameworkReasonNotAllowed).WithPlugin(kFrameworkPlugin);
    const std::vector<NodeIndex>& allowed = *options.allowed_nodes;
    size_t a = 0;
    for (NodeIndex n = 0; n < num_nodes; ++n) {
      while (a < allowed.size() && allowed[a] < n) ++a;
      if (a >= allowed.size() || allowed[a] != n) ws.node_statuses[n] = outside;
    }
    size_t kept = 0;
    a = 0;
    for (NodeIndex n : ws.candidates) {
      while (a < allowed.size() && allowed[a] < n) ++a;
      if (a < allowed.size() && allowed[a] == n) ws.candidates[kept++] = n;
    }
    ws.candidates.resize(kept);
  }

  // 2. Filter, round-robin from start_index, in chunks.
  const size_t num_candidates = ws.candidates.size();
  const size_t to_find =
      options.num_feasible_to_find != 0
          ? options.num_feasible_to_find
          : NumFeasibleNodesToFind(percentage_of_nodes_to_score_, num_candidates);
  const size_t chunk = std::max<size_t>(1, options.chunk_size);
  ws.feasible.resize(num_candidates);
  size_t num_feasible = 0;
  size_t evaluated = 0;
  const CycleContext ctx{pod, snapshot, state};
  const size_t start = num_candidates == 0 ? 0 : options.start_index % num_candidates;
  const size_t num_chunks = (num_candidates + chunk - 1) / chunk;
  if (options.parallel_for && num_chunks >= 2) {
    // Chunks of the rotated walk run concurrently; a chunk starting after
    // enough feasible nodes were found (by any chunks) is skipped. Results
    // are then taken in walk order; a skipped chunk still needed there (the
    // chunks that filled the quota came after it in the walk) is filtered
    // then, so the outcome is always the sequential one.
    ws.rotated.resize(num_candidates);
    std::copy(ws.candidates.begin() + static_cast<ptrdiff_t>(start), ws.candidates.end(),
              ws.rotated.begin());
    std::copy(ws.candidates.begin(), ws.candidates.begin() + static_cast<ptrdiff_t>(start),
              ws.rotated.begin() + static_cast<ptrdiff_t>(num_candidates - start));
    if (ws.chunk_scratch.size() < num_chunks) ws.chunk_scratch.resize(num_chunks);
    ws.chunk_results.assign(num_chunks, Workspace::ChunkResult{});
    // Filters chunk c of the rotated walk into its own slice of ws.feasible.
    const auto filter_chunk = [&](size_t c) {
      Workspace::ChunkResult& out = ws.chunk_results[c];
      const size_t pos = c * chunk;
      const size_t len = std::min(chunk, num_candidates - pos);
      ws.chunk_scratch[c].Reserve(len);
      out.status = FilterChunk(ctx, std::span<const NodeIndex>(ws.rotated.data() + pos, len),
                               ws.chunk_scratch[c], ws.node_statuses,
                               std::span<NodeIndex>(ws.feasible.data() + pos, len), out.found,
                               out.rejected_by);
      out.skipped = false;
    };
    std::atomic<size_t> found_total{0};
    options.parallel_for(num_chunks, [&](size_t c) {
      if (found_total.load(std::memory_order_relaxed) >= to_find) {
        ws.chunk_results[c].skipped = true;
        return;
      }
      filter_chunk(c);
      found_total.fetch_add(ws.chunk_results[c].found, std::memory_order_relaxed);
    });
    for (size_t c = 0; c < num_chunks && num_feasible < to_find; ++c) {
      Workspace::ChunkResult& r = ws.chunk_results[c];
      const size_t pos = c * chunk;
      if (r.skipped) filter_chunk(c);
      if (r.status.IsError()) {
        result.code = Code::kError;
        result.message = ErrorMessage("Filter", r.status, snapshot);
        return result;
      }
      result.unschedulable_plugins |= r.rejected_by;
      std::copy_n(ws.feasible.begin() + static_cast<ptrdiff_t>(pos), r.found,
                  ws.feasible.begin() + static_cast<ptrdiff_t>(num_feasible));
      evaluated += std::min(chunk, num_candidates - pos);
      num_feasible += r.found;
    }
  } else {
    ws.filter.Reserve(chunk);
    for (size_t segment = 0; segment < 2 && num_feasible < to_find; ++segment) {
      const size_t begin = segment == 0 ? start : 0;
      const size_t end = segment == 0 ? num_candidates : start;
      for (size_t pos = begin; pos < end && num_feasible < to_find; pos += chunk) {
        const size_t len = std::min(chunk, end - pos);
        std::span<const NodeIndex> part(ws.candidates.data() + pos, len);
        size_t found = 0;
        Status s = FilterChunk(ctx, part, ws.filter, ws.node_statuses,
                               std::span<NodeIndex>(ws.feasible.data() + num_feasible, len), found,
                               result.unschedulable_plugins);
        if (s.IsError()) {
          result.code = Code::kError;
          result.message = ErrorMessage("Filter", s, snapshot);
          return result;
        }
        evaluated += len;
        num_feasible += found;
      }
    }
  }
  if (num_feasible > to_find) {
    evaluated -= num_feasible - to_find;
    num_feasible = to_find;
  }
  ws.feasible.resize(num_feasible);
  ws.raw_scores.clear();
  result.evaluated_nodes = evaluated;
  result.feasible_nodes = num_feasible;

  // 3. Nothing fits.
  if (num_feasible == 0) {
    fail({});
    return result;
  }
  // 4. One node: no scoring.
  if (num_feasible == 1) {
    result.node = ws.feasible[0];
    return result;
  }
  Status s = RunPreScore(pod, snapshot, ws.feasible, state);
  if (!s.IsSuccess()) {
    result.code = Code::kError;
    result.message = ErrorMessage("PreScore", s, snapshot);
    return result;
  }
  ws.plugin_scores.assign(score_.size() * num_feasible, 0);
  ws.total_scores.assign(num_feasible, 0);
  const size_t score_chunks = (num_feasible + chunk - 1) / chunk;
  const size_t score_jobs = score_.size() * score_chunks;
  if (options.parallel_for && score_jobs >= 2 && num_feasible * score_.size() >= 2 * chunk) {
    ws.chunk_results.assign(score_jobs, Workspace::ChunkResult{});
    options.parallel_for(score_jobs, [&](size_t job) {
      const size_t p = job / score_chunks;
      const size_t pos = (job % score_chunks) * chunk;
      const size_t len = std::min(chunk, num_feasible - pos);
      ws.chunk_results[job].status =
          ScoreChunk(ctx, p, std::span<const NodeIndex>(ws.feasible.data() + pos, len),
                     std::span<int64_t>(ws.plugin_scores.data() + p * num_feasible + pos, len));
    });
    for (const Workspace::ChunkResult& r : ws.chunk_results) {
      if (!r.status.IsSuccess()) {
        result.code = Code::kError;
        result.message = ErrorMessage("Score", r.status, snapshot);
        return result;
      }
    }
  } else {
    for (size_t p = 0; p < score_.size(); ++p) {
      for (size_t pos = 0; pos < num_feasible; pos += chunk) {
        const size_t len = std::min(chunk, num_feasible - pos);
        s = ScoreChunk(ctx, p, std::span<const NodeIndex>(ws.feasible.data() + pos, len),
                       std::span<int64_t>(ws.plugin_scores.data() + p * num_feasible + pos, len));
        if (!s.IsSuccess()) {
          result.code = Code::kError;
          result.message = ErrorMessage("Score", s, snapshot);
          return result;
        }
      }
    }
  }
  if (options.keep_raw_scores) ws.raw_scores = ws.plugin_scores;
  s = CombineScores(ctx, ws.feasible, ws.plugin_scores, ws.total_scores);
  if (!s.IsSuccess()) {
    result.code = Code::kError;
    result.message = ErrorMessage("Score", s, snapshot);
    return result;
  }
  // 5. Best total, random among ties.
  const std::optional<size_t> best = SelectHost(ws.total_scores, random);
  result.node = ws.feasible[*best];
  return result;
}

Status Framework::RunReserve(CycleState& state, const PodInfo& pod,
                             std::string_view node_name) const {
  for (const auto& e : reserve_) {
    Status s = e.plugin->Reserve(state, pod, node_name);
    if (!s.IsSuccess()) {
      RunUnreserve(state, pod, node_name);
      return s.WithPlugin(e.index);
    }
  }
  return Status::Success();
}

void Framework::RunUnreserve(CycleState& state, const PodInfo& pod,
                             std::string_view node_name) const noexcept {
  for (auto it = reserve_.rbegin(); it != reserve_.rend(); ++it)
    it->plugin->Unreserve(state, pod, node_name);
}

PermitDecision Framework::RunPermit(CycleState& state, const PodInfo& pod,
                                    std::string_view node_name) const {
  PermitDecision combined;
  bool waiting = false;
  for (const auto& e : permit_) {
    PermitDecision d = e.plugin->Permit(state, pod, node_name);
    d.status.plugin = e.index;
    if (d.status.code == Code::kWait) {
      if (!waiting || d.timeout < combined.timeout) {
        combined.timeout = d.timeout;
        combined.status = d.status;
      }
      waiting = true;
      continue;
    }
    if (!d.status.IsSuccess()) return d;
  }
  return combined;
}

Status Framework::RunPreBind(CycleState& state, const PodInfo& pod,
                             std::string_view node_name) const {
  for (const auto& e : pre_bind_) {
    Status s = e.plugin->PreBind(state, pod, node_name);
    if (s.IsSkip()) continue;
    if (!s.IsSuccess()) return s.WithPlugin(e.index);
  }
  return Status::Success();
}

Status Framework::RunBind(CycleState& state, const PodInfo& pod, std::string_view node_name,
                          BindingClient& client) const {
  for (const auto& e : bind_) {
    Status s = e.plugin->Bind(state, pod, node_name, client);
    if (s.IsSkip()) continue;
    return s.WithPlugin(e.index);
  }
  return Status::Skip();
}

void Framework::RunPostBind(CycleState& state, const PodInfo& pod,
                            std::string_view node_name) const noexcept {
  for (const auto& e : post_bind_) e.plugin->PostBind(state, pod, node_name);
}

std::string Framework::PluginList(uint64_t mask) const {
  std::vector<std::string> names;
  for (size_t i = 0; i < plugins_.size(); ++i) {
    if ((mask >> i) & 1) names.emplace_back(plugins_[i]->Name());
  }
  std::sort(names.begin(), names.end());
  std::string out = "[";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += " ";
    out += names[i];
  }
  out += "]";
  return out;
}

void Framework::AppendReasons(const Status& status, const Snapshot& snapshot,
                              std::vector<std::string>& out) const {
  if (status.plugin < plugins_.size()) {
    plugins_[status.plugin]->AppendReasons(status, snapshot, out);
    return;
  }
  if (status.plugin != kFrameworkPlugin) {
    out.emplace_back(CodeName(status.code));
    return;
  }
  switch (status.reason) {
    case kFrameworkReasonPreFilterExcluded:
      out.push_back("node(s) didn't satisfy plugin(s) " + PluginList(status.detail));
      return;
    case kFrameworkReasonPreFilterConflict: {
      if (__builtin_popcountll(status.detail) == 1) {
        std::string list = PluginList(status.detail);
        out.push_back("node(s) didn't satisfy plugin " + list.substr(1, list.size() - 2));
      } else {
        out.push_back("node(s) didn't satisfy plugin(s) " + PluginList(status.detail) +
                      " simultaneously");
      }
      return;
    }
    case kFrameworkReasonInvalidScore: {
      const std::string name =
          status.arg < plugins_.size() ? std::string(plugins_[status.arg]->Name()) : "?";
      out.push_back("plugin \"" + name + "\" returns an invalid score " +
                    std::to_string(static_cast<int64_t>(status.detail)) +
                    ", it should in the range of [" + std::to_string(kMinNodeScore) + ", " +
                    std::to_string(kMaxNodeScore) + "] after normalizing");
      return;
    }
    case kFrameworkReasonNoNodes:
      out.emplace_back("no nodes available to schedule pods");
      return;
    case kFrameworkReasonNotAllowed:
      out.emplace_back("node(s) outside the topology domain being tried");
      return;
    default:
      out.emplace_back(CodeName(status.code));
  }
}

std::string Framework::StatusMessage(const Status& status, const Snapshot& snapshot) const {
  std::vector<std::string> reasons;
  AppendReasons(status, snapshot, reasons);
  std::string out;
  for (size_t i = 0; i < reasons.size(); ++i) {
    if (i > 0) out += ", ";
    out += reasons[i];
  }
  return out;
}

std::string Framework::ErrorMessage(std::string_view point, const Status& status,
                                    const Snapshot& snapshot) const {
  if (status.plugin >= plugins_.size()) {
    return "running " + std::string(point) + " plugins: " + StatusMessage(status, snapshot);
  }
  return "running " + std::string(point) + " plugin \"" +
         std::string(plugins_[status.plugin]->Name()) + "\": " + StatusMessage(status, snapshot);
}

std::string Framework::FormatFitError(size_t num_all_nodes, std::string_view prefilter_message,
                                      std::span<const Status> node_statuses,
                                      std::string_view post_filter_message,
                                      const Snapshot& snapshot) const {
  std::string msg = "0/" + std::to_string(num_all_nodes) + " nodes are available:";
  if (!prefilter_message.empty()) {
    msg += " ";
    msg += prefilter_message;
    msg += ".";
  } else {
    // Count identical statuses first so each distinct one is rendered once.
    using Key = std::tuple<Code, PluginIndex, ReasonId, uint32_t, uint64_t>;
    std::map<Key, size_t> by_status;
    for (const Status& s : node_statuses) {
      if (s.IsSuccess()) continue;
      ++by_status[Key{s.code, s.plugin, s.reason, s.arg, s.detail}];
    }
    std::map<std::string, size_t> by_reason;
    std::vector<std::string> reasons;
    for (const auto& [key, count] : by_status) {
      Status s;
      std::tie(s.code, s.plugin, s.reason, s.arg, s.detail) = key;
      reasons.clear();
      AppendReasons(s, snapshot, reasons);
      for (const std::string& r : reasons) by_reason[r] += count;
    }
    std::vector<std::string> histogram;
    histogram.reserve(by_reason.size());
    for (const auto& [reason, count] : by_reason)
      histogram.push_back(std::to_string(count) + " " + reason);
    std::sort(histogram.begin(), histogram.end());
    if (!histogram.empty()) {
      msg += " ";
      for (size_t i = 0; i < histogram.size(); ++i) {
        if (i > 0) msg += ", ";
        msg += histogram[i];
      }
      msg += ".";
    }
  }
  if (!post_filter_message.empty()) {
    msg += " ";
    msg += post_filter_message;
  }
  return msg;
}

}  // namespace copse::plugins
