#include "plugins/balanced_allocation/balanced_allocation.h"

namespace copse::plugins {
namespace {

struct BalancedPreScoreState : ClonableState<BalancedPreScoreState> {
  ResourceAllocationInputs inputs;
};

}  // namespace

Result<std::unique_ptr<Plugin>> BalancedAllocation::Create(const PluginArgs* args) {
  Result<BalancedAllocationArgs> typed =
      ArgsOrDefault<BalancedAllocationArgs>(args, kBalancedAllocationName);
  if (!typed.ok()) return std::move(typed).error();
  if (typed->resources.empty()) {
    return MakeError(ErrorCode::kInvalid,
                     "NodeResourcesBalancedAllocationArgs.resources: must not be empty");
  }
  for (size_t i = 0; i < typed->resources.size(); ++i) {
    if (typed->resources[i].weight != 1) {
      return MakeError(ErrorCode::kInvalid, "NodeResourcesBalancedAllocationArgs.resources[" +
                                                std::to_string(i) + "].weight: must be 1");
    }
  }
  return std::unique_ptr<Plugin>(new BalancedAllocation(std::move(*typed)));
}

Status BalancedAllocation::PreScore(const PodInfo& pod, const Snapshot& snapshot,
                                    std::span<const NodeIndex> /*feasible*/,
                                    CycleState& state) const {
  auto& s = state.Emplace<BalancedPreScoreState>(PreScoreKey());
  s.inputs.Prepare(pod, snapshot, args_.resources, /*use_requested=*/true);
  if (s.inputs.AllPodRequestsZero()) {
    state.Erase(PreScoreKey());
    return Status::Skip();
  }
  return Status::Success();
}

Status BalancedAllocation::Score(const CycleContext& ctx, std::span<const NodeIndex> nodes,
                                 std::span<int64_t> out) const noexcept {
  const auto* s = ctx.state.Read<BalancedPreScoreState>(PreScoreKey());
  if (s == nullptr) return Status::MissingState();
  const size_t k = s->inputs.size();
  std::array<int64_t, kMaxResources> allocatable{};
  std::array<int64_t, kMaxResources> requested{};
  for (size_t i = 0; i < nodes.size(); ++i) {
    s->inputs.ForNode(ctx.snapshot, nodes[i], std::span<int64_t>(allocatable.data(), k),
                      std::span<int64_t>(requested.data(), k));
    out[i] = BalancedAllocationScore(std::span<const int64_t>(requested.data(), k),
                                     std::span<const int64_t>(allocatable.data(), k));
  }
  return Status::Success();
}

}  // namespace copse::plugins
