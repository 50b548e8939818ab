#include "plugins/taint_toleration/taint_toleration.h"

#include <algorithm>

#include "core/scheduling_types.h"

namespace copse::plugins {
namespace {

// One byte per taint id of the snapshot's table: 1 = counts against the pod.
struct TaintMarks : ClonableState<TaintMarks> {
  std::vector<uint8_t> marked;
};

}  // namespace

Status TaintToleration::PreFilter(const PodInfo& pod, const Snapshot& snapshot, CycleState& state,
                                  PreFilterResult& /*result*/) const {
  auto& marks = state.Emplace<TaintMarks>(PreFilterKey());
  marks.marked.assign(snapshot.num_taints(), 0);
  for (TaintId id = 0; id < snapshot.num_taints(); ++id) {
    const Taint& t = snapshot.taint(id);
    if (t.effect == TaintEffect::kPreferNoSchedule) continue;
    marks.marked[id] = TolerationsTolerateTaint(pod.tolerations, t) ? 0 : 1;
  }
  return Status::Success();
}

void TaintToleration::Filter(const CycleContext& ctx, std::span<const NodeIndex> nodes,
                             std::span<Status> out) const noexcept {
  const auto* marks = ctx.state.Read<TaintMarks>(PreFilterKey());
  if (marks == nullptr) {
    std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(nodes.size()),
              Status::MissingState());
    return;
  }
  const uint8_t* marked = marks->marked.data();
  const size_t num_marked = marks->marked.size();
  for (size_t i = 0; i < nodes.size(); ++i) {
    Status verdict = Status::Success();
    for (TaintId id : ctx.snapshot.node_taints(nodes[i])) {
      if (id < num_marked && marked[id] != 0) {
        verdict = Status::Unresolvable(kReasonUntoleratedTaint, id);
        break;
      }
    }
    out[i] = verdict;
  }
}

Status TaintToleration::PreScore(const PodInfo& pod, const Snapshot& snapshot,
                                 std::span<const NodeIndex> /*feasible*/, CycleState& state) const {
  std::vector<Toleration> prefer;
  for (const Toleration& t : pod.tolerations) {
    if (!t.effect.has_value() || *t.effect == TaintEffect::kPreferNoSchedule) prefer.push_back(t);
  }
  auto& marks = state.Emplace<TaintMarks>(PreScoreKey());
  marks.marked.assign(snapshot.num_taints(), 0);
  for (TaintId id = 0; id < snapshot.num_taints(); ++id) {
    const Taint& t = snapshot.taint(id);
    if (t.effect != TaintEffect::kPreferNoSchedule) continue;
    marks.marked[id] = TolerationsTolerateTaint(prefer, t) ? 0 : 1;
  }
  return Status::Success();
}

Status TaintToleration::Score(const CycleContext& ctx, std::span<const NodeIndex> nodes,
                              std::span<int64_t> out) const noexcept {
  const auto* marks = ctx.state.Read<TaintMarks>(PreScoreKey());
  if (marks == nullptr) return Status::MissingState();
  const uint8_t* marked = marks->marked.data();
  const size_t num_marked = marks->marked.size();
  for (size_t i = 0; i < nodes.size(); ++i) {
    int64_t count = 0;
    for (TaintId id : ctx.snapshot.node_taints(nodes[i])) {
      if (id < num_marked && marked[id] != 0) ++count;
    }
    out[i] = count;
  }
  return Status::Success();
}

Status TaintToleration::NormalizeScore(const CycleContext& /*ctx*/,
                                       std::span<const NodeIndex> /*nodes*/,
                                       std::span<int64_t> scores) const noexcept {
  DefaultNormalizeScore(kMaxNodeScore, /*reverse=*/true, scores);
  return Status::Success();
}

void TaintToleration::AppendReasons(const Status& status, const Snapshot& snapshot,
                                    std::vector<std::string>& out) const {
  if (status.reason == kReasonUntoleratedTaint && status.arg < snapshot.num_taints()) {
    const Taint& t = snapshot.taint(status.arg);
    out.push_back("node(s) had untolerated taint {" + t.key + ": " + t.value + "}");
    return;
  }
  Plugin::AppendReasons(status, snapshot, out);
}

Result<std::unique_ptr<Plugin>> TaintToleration::Create(const PluginArgs* /*args*/) {
  return std::unique_ptr<Plugin>(std::make_unique<TaintToleration>());
}

std::vector<ClusterEventWithHint> TaintToleration::EventsToRegister() const {
  return {
      {{EventResource::kNode, kActionAdd | kActionUpdateNodeTaint}, {}},
      {{EventResource::kUnscheduledPod, kActionUpdatePodToleration}, {}},
  };
}

}  // namespace copse::plugins
