#include "plugins/node_resources_fit/fit.h"

#include <algorithm>

namespace copse::plugins {
namespace {

struct FitPreFilterState : ClonableState<FitPreFilterState> {
  ResourceVector requests;
  std::array<ResourceId, kMaxResources>
      checked{};  // resources with a non-zero, non-ignored request
  size_t num_checked = 0;
};

struct FitPreScoreState : ClonableState<FitPreScoreState> {
  ResourceAllocationInputs inputs;
};

copse::Status ValidateResources(const std::vector<ResourceSpec>& resources,
                                const std::string& path) {
  for (size_t i = 0; i < resources.size(); ++i) {
    if (resources[i].weight < 1 || resources[i].weight > 100) {
      return MakeError(ErrorCode::kInvalid,
                       path + "[" + std::to_string(i) + "].weight: must be in the range [1, 100]");
    }
  }
  return copse::Status::Ok();
}

}  // namespace

Fit::Fit(FitArgs args) : args_(std::move(args)) {
  for (const UtilizationShapePoint& p : args_.scoring_strategy.shape) {
    scaled_shape_.push_back(UtilizationShapePoint{
        p.utilization, static_cast<int32_t>(p.score * (kMaxNodeScore / kMaxCustomPriorityScore))});
  }
}

Result<std::unique_ptr<Plugin>> Fit::Create(const PluginArgs* args) {
  Result<FitArgs> typed = ArgsOrDefault<FitArgs>(args, kNodeResourcesFitName);
  if (!typed.ok()) return std::move(typed).error();
  const ScoringStrategy& strategy = typed->scoring_strategy;
  copse::Status s =
      ValidateResources(strategy.resources, "NodeResourcesFitArgs.scoringStrategy.resources");
  if (!s.ok()) return s.error();
  if (strategy.type == ScoringStrategyType::kRequestedToCapacityRatio) {
    const auto& shape = strategy.shape;
    const std::string path = "NodeResourcesFitArgs.scoringStrategy.requestedToCapacityRatio.shape";
    if (shape.empty())
      return MakeError(ErrorCode::kInvalid, path + ": at least one point must be specified");
    for (size_t i = 0; i < shape.size(); ++i) {
      const std::string p = path + "[" + std::to_string(i) + "]";
      if (shape[i].utilization < 0 || shape[i].utilization > kMaxUtilization) {
        return MakeError(ErrorCode::kInvalid, p + ".utilization: must be in the range [0, 100]");
      }
      if (i > 0 && shape[i].utilization <= shape[i - 1].utilization) {
        return MakeError(ErrorCode::kInvalid,
                         p + ".utilization: values must be sorted in increasing order");
      }
      if (shape[i].score < 0 || shape[i].score > kMaxCustomPriorityScore) {
        return MakeError(ErrorCode::kInvalid, p + ".score: must be in the range [0, 10]");
      }
    }
  }
  for (size_t i = 0; i < typed->ignored_resource_groups.size(); ++i) {
    if (typed->ignored_resource_groups[i].find('/') != std::string::npos) {
      return MakeError(ErrorCode::kInvalid, "NodeResourcesFitArgs.ignoredResourceGroups[" +
                                                std::to_string(i) +
                                                "]: resource group name can't contain '/'");
    }
  }
  return std::unique_ptr<Plugin>(new Fit(std::move(*typed)));
}

bool Fit::Ignored(std::string_view name) const noexcept {
  if (!IsExtendedResourceName(name)) return false;
  for (const std::string& r : args_.ignored_resources) {
    if (r == name) return true;
  }
  const std::string_view prefix = name.substr(0, name.find('/'));
  for (const std::string& g : args_.ignored_resource_groups) {
    if (g == prefix) return true;
  }
  return false;
}

Status Fit::PreFilter(const PodInfo& pod, const Snapshot& snapshot, CycleState& state,
                      PreFilterResult& /*result*/) const {
  auto& s = state.Emplace<FitPreFilterState>(PreFilterKey());
  s.requests = pod.requests;
  s.num_checked = 0;
  for (size_t r = 0; r < pod.requests.size(); ++r) {
    const auto id = static_cast<ResourceId>(r);
    if (id == kResourceIdPods || pod.requests.Get(id) == 0) continue;
    if (Ignored(snapshot.resources().Name(id))) continue;
    s.checked[s.num_checked++] = id;
  }
  return Status::Success();
}

void Fit::Filter(const CycleContext& ctx, std::span<const NodeIndex> nodes,
                 std::span<Status> out) const noexcept {
  const auto* s = ctx.state.Read<FitPreFilterState>(PreFilterKey());
  if (s == nullptr) {
    std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(nodes.size()),
              Status::MissingState());
    return;
  }
  const Snapshot& snap = ctx.snapshot;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const NodeIndex n = nodes[i];
    uint64_t insufficient = 0;
    if (snap.requested(kResourceIdPods, n) + 1 > snap.allocatable(kResourceIdPods, n)) {
      insufficient |= uint64_t{1} << kResourceIdPods;
    }
    for (size_t k = 0; k < s->num_checked; ++k) {
      const ResourceId r = s->checked[k];
      if (s->requests.Get(r) > snap.allocatable(r, n) - snap.requested(r, n))
        insufficient |= uint64_t{1} << r;
    }
    out[i] = insufficient == 0 ? Status::Success()
                               : Status::Unschedulable(kReasonInsufficient, 0, insufficient);
  }
}

void Fit::AppendReasons(const Status& status, const Snapshot& snapshot,
                        std::vector<std::string>& out) const {
  if (status.reason != kReasonInsufficient) {
    Plugin::AppendReasons(status, snapshot, out);
    return;
  }
  if ((status.detail >> kResourceIdPods) & 1) out.emplace_back("Too many pods");
  for (size_t r = 0; r < kMaxResources; ++r) {
    if (r == kResourceIdPods || ((status.detail >> r) & 1) == 0) continue;
    out.push_back("Insufficient " +
                  std::string(snapshot.resources().Name(static_cast<ResourceId>(r))));
  }
}

Status Fit::PreScore(const PodInfo& pod, const Snapshot& snapshot,
                     std::span<const NodeIndex> /*feasible*/, CycleState& state) const {
  auto& s = state.Emplace<FitPreScoreState>(PreScoreKey());
  s.inputs.Prepare(pod, snapshot, args_.scoring_strategy.resources, /*use_requested=*/false);
  return Status::Success();
}

Status Fit::Score(const CycleContext& ctx, std::span<const NodeIndex> nodes,
                  std::span<int64_t> out) const noexcept {
  const auto* s = ctx.state.Read<FitPreScoreState>(PreScoreKey());
  if (s == nullptr) return Status::MissingState();
  const size_t k = s->inputs.size();
  std::array<int64_t, kMaxResources> allocatable{};
  std::array<int64_t, kMaxResources> requested{};
  const std::span<int64_t> alloc(allocatable.data(), k);
  const std::span<int64_t> req(requested.data(), k);
  for (size_t i = 0; i < nodes.size(); ++i) {
    s->inputs.ForNode(ctx.snapshot, nodes[i], alloc, req);
    switch (args_.scoring_strategy.type) {
      case ScoringStrategyType::kLeastAllocated:
        out[i] = LeastAllocatedScore(req, alloc, s->inputs.weights());
        break;
      case ScoringStrategyType::kMostAllocated:
        out[i] = MostAllocatedScore(req, alloc, s->inputs.weights());
        break;
      case ScoringStrategyType::kRequestedToCapacityRatio:
        out[i] = RequestedToCapacityRatioScore(req, alloc, s->inputs.weights(), scaled_shape_);
        break;
    }
  }
  return Status::Success();
}

}  // namespace copse::plugins
