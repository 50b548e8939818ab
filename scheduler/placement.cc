#include "scheduler/placement.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace copse::scheduler {

bool Batchable(const PodInfo& pod) noexcept {
  return !pod.has_pod_affinity && pod.topology_spread_constraints.empty() &&
         !pod.default_spread_selector.has_value() && pod.host_ports.empty();
}

bool PodClassReuse::Matches(const PodInfo& pod, size_t profile, size_t num_nodes,
                            bool labels_matter) const noexcept {
  if (!valid_ || priority_ != pod.priority || profile_ != profile || num_nodes_ != num_nodes ||
      !Batchable(pod)) {
    return false;
  }
  if (signature_ == pod.signature) return true;
  return !labels_matter && unlabeled_signature_ == ComputePodClassSignature(pod, false);
}

void PodClassReuse::Remember(const PodInfo& pod, size_t profile, size_t num_nodes,
                             std::shared_ptr<const plugins::CycleState> state,
                             const plugins::Workspace& workspace, NodeIndex chosen) {
  valid_ = Batchable(pod);
  if (!valid_) return;
  signature_ = pod.signature;
  unlabeled_signature_ = ComputePodClassSignature(pod, false);
  priority_ = pod.priority;
  profile_ = profile;
  num_nodes_ = num_nodes;
  state_ = std::move(state);
  feasible_ = workspace.feasible;
  raw_ = workspace.raw_scores;
  last_position_ = static_cast<size_t>(std::find(feasible_.begin(), feasible_.end(), chosen) -
                                       feasible_.begin());
  if (last_position_ >= feasible_.size()) valid_ = false;
}

std::optional<NodeIndex> PodClassReuse::Place(const plugins::Framework& fw, const PodInfo& pod,
                                              const Snapshot& snapshot,
                                              plugins::RandomSource& random) {
  const size_t k = feasible_.size();
  if (!valid_ || k == 0 || last_position_ >= k) return std::nullopt;
  const size_t num_score = fw.num_score_plugins();
  const bool have_scores = num_score > 0 && raw_.size() == num_score * k;
  if (state_ == nullptr) return std::nullopt;
  const NodeIndex last = feasible_[last_position_];
  const plugins::CycleContext ctx{pod, snapshot, *state_};
  plugins::Status fit = fw.RunFilterOnNode(pod, snapshot, *state_, last);
  if (fit.IsError()) {
    valid_ = false;
    return std::nullopt;
  }
  if (!fit.IsSuccess()) {
    const size_t pos = last_position_;
    if (have_scores) {
      std::vector<int64_t> raw;
      raw.reserve(num_score * (k - 1));
      for (size_t p = 0; p < num_score; ++p) {
        for (size_t i = 0; i < k; ++i) {
          if (i != pos) raw.push_back(raw_[p * k + i]);
        }
      }
      raw_ = std::move(raw);
    }
    feasible_.erase(feasible_.begin() + static_cast<ptrdiff_t>(pos));
  } else if (have_scores) {
    for (size_t p = 0; p < num_score; ++p) {
      int64_t score = 0;
      plugins::Status s = fw.ScoreChunk(ctx, p, std::span<const NodeIndex>(&last, 1),
                                        std::span<int64_t>(&score, 1));
      if (!s.IsSuccess()) {
        valid_ = false;
        return std::nullopt;
      }
      raw_[p * k + last_position_] = score;
    }
  }
  const size_t n = feasible_.size();
  if (n == 0) {
    valid_ = false;
    return std::nullopt;
  }
  if (n == 1) {
    last_position_ = 0;
    return feasible_[0];
  }
  if (num_score == 0 || raw_.size() != num_score * n) {
    valid_ = false;
    return std::nullopt;
  }
  scores_ = raw_;
  totals_.assign(n, 0);
  if (!fw.CombineScores(ctx, feasible_, scores_, totals_).IsSuccess()) {
    valid_ = false;
    return std::nullopt;
  }
  std::optional<size_t> best = plugins::Framework::SelectHost(totals_, random);
  if (!best.has_value()) return std::nullopt;
  last_position_ = *best;
  return feasible_[*best];
}

std::vector<std::vector<PodPtr>> OrderedClasses(std::span<const PodPtr> members) {
  std::map<std::pair<uint64_t, int32_t>, std::vector<PodPtr>> by_class;
  for (const PodPtr& pod : members) by_class[{pod->signature, pod->priority}].push_back(pod);
  std::vector<std::vector<PodPtr>> classes;
  classes.reserve(by_class.size());
  for (auto& [key, pods] : by_class) {
    std::sort(pods.begin(), pods.end(),
              [](const PodPtr& a, const PodPtr& b) { return a->name < b->name; });
    classes.push_back(std::move(pods));
  }
  std::stable_sort(classes.begin(), classes.end(), [](const auto& a, const auto& b) {
    return std::make_tuple(-a.front()->priority, -static_cast<int64_t>(a.size()),
                           a.front()->signature) < std::make_tuple(-b.front()->priority,
                                                                   -static_cast<int64_t>(b.size()),
                                                                   b.front()->signature);
  });
  return classes;
}

GangPlacement PlaceGang(const plugins::Framework& fw, Snapshot& snapshot,
                        std::span<const PodPtr> members, const GangPlacementOptions& options,
                        plugins::RandomSource& random, plugins::Workspace& workspace) {
  GangPlacement out;
  size_t remaining = members.size();
  size_t start_index = options.start_index;
  std::vector<std::vector<PodPtr>> classes = OrderedClasses(members);
  PodClassReuse local;
  const bool keep = options.reuse != nullptr && classes.size() == 1;
  if (options.reuse != nullptr && !keep) options.reuse->Invalidate();
  PodClassReuse& reuse = keep ? *options.reuse : local;
  size_t c = 0;
  for (; c < classes.size(); ++c) {
    if (out.placed.size() + remaining < options.required) break;  // cannot be reached
    if (!options.place_all && out.placed.size() >= options.required) break;
    const std::vector<PodPtr>& cls = classes[c];
    if (!keep) reuse.Invalidate();
    size_t i = 0;
    for (; i < cls.size(); ++i) {
      const PodPtr& pod = cls[i];
      std::optional<NodeIndex> node;
      std::shared_ptr<const plugins::CycleState> pass_state;
      if (reuse.Matches(*pod, 0, snapshot.num_nodes(), options.labels_matter)) {
        node = reuse.Place(fw, *pod, snapshot, random);
        out.reused += node.has_value() ? 1 : 0;
      }
      if (!node.has_value()) {
        auto state = std::make_shared<plugins::CycleState>();
        plugins::ScheduleOptions so;
        so.chunk_size = options.chunk_size;
        so.start_index = start_index;
        so.keep_raw_scores = true;
        so.run_post_filter = false;
        so.parallel_for = options.parallel_for;
        so.allowed_nodes = options.allowed_nodes;
        plugins::ScheduleResult r =
            fw.SchedulePod(*pod, snapshot, *state, workspace, random, so, options.now);
        out.evaluated_nodes += r.evaluated_nodes;
        if (snapshot.num_nodes() > 0)
          start_index = (start_index + r.evaluated_nodes) % snapshot.num_nodes();
        if (r.code != plugins::Code::kSuccess) {
          reuse.Invalidate();
          if (out.failure.empty()) out.failure = r.message;
          out.unschedulable_plugins |= r.unschedulable_plugins;
          if (r.code == plugins::Code::kError) out.error = true;
          break;
        }
        node = r.node;
        pass_state = state;
        reuse.Remember(*pod, 0, snapshot.num_nodes(), std::move(state), workspace, *node);
      } else {
        pass_state = reuse.state();
      }
      auto placed = std::make_shared<PodInfo>(*pod);
      placed->node_name = snapshot.node_name(*node);
      snapshot.AddPod(*node, placed);
      out.placed.push_back({pod, *node, pass_state});
      --remaining;
    }
    for (; i < cls.size(); ++i) {
      out.unplaced.push_back(cls[i]);
      --remaining;
    }
    if (out.error) {
      ++c;
      break;
    }
  }
  for (; c < classes.size(); ++c) {
    for (const PodPtr& pod : classes[c]) out.unplaced.push_back(pod);
  }
  out.satisfied = !out.error && out.placed.size() >= options.required;
  return out;
}

}  // namespace copse::scheduler
