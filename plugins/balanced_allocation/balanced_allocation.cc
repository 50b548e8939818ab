#include "plugins/balanced_allocation/balanced_allocation.h"

#include <algorithm>
#include <cmath>

namespace copse::plugins {
namespace {

struct BalancedPreScoreState : ClonableState<BalancedPreScoreState> {
  ResourceAllocationInputs inputs;
  // The resources ForNode reports (requested cpu/memory, as
  // ResourceAllocationInputs::Prepare with use_requested): ids and the pod's
  // requests, resolved once per cycle so that Score reads snapshot columns.
  std::array<ResourceId, kMaxResources> ids{};
  std::array<int64_t, kMaxResources> pod_requests{};
  size_t num = 0;
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

bool BalancedAllocation::AcceleratorNotBalanced(const PodInfo& pod,
                                                const Snapshot& snapshot) const noexcept {
  for (size_t r = 0; r < pod.requests.size(); ++r) {
    const auto id = static_cast<ResourceId>(r);
    if (id == kResourceIdPods || pod.requests.Get(id) <= 0) continue;
    const std::string_view name = snapshot.resources().Name(id);
    if (!IsExtendedResourceName(name)) continue;
    const bool balanced = std::any_of(args_.resources.begin(), args_.resources.end(),
                                      [&](const ResourceSpec& spec) { return spec.name == name; });
    if (!balanced) return true;
  }
  return false;
}

Status BalancedAllocation::PreScore(const PodInfo& pod, const Snapshot& snapshot,
                                    std::span<const NodeIndex> /*feasible*/,
                                    CycleState& state) const {
  if (args_.skip_accelerator_pods && AcceleratorNotBalanced(pod, snapshot)) {
    state.Erase(PreScoreKey());
    return Status::Skip();
  }
  auto& s = state.Emplace<BalancedPreScoreState>(PreScoreKey());
  s.inputs.Prepare(pod, snapshot, args_.resources, /*use_requested=*/true);
  if (s.inputs.AllPodRequestsZero()) {
    state.Erase(PreScoreKey());
    return Status::Skip();
  }
  s.num = 0;
  for (size_t i = 0; i < args_.resources.size() && i < kMaxResources; ++i) {
    const std::optional<ResourceId> id = snapshot.resources().Find(args_.resources[i].name);
    if (!id.has_value() || *id == kResourceIdPods) continue;
    const int64_t request = pod.requests.Get(*id);
    // Scalar resources the pod does not request are not scored.
    if (*id > kResourceIdEphemeralStorage && request == 0) continue;
    s.ids[s.num] = *id;
    s.pod_requests[s.num] = request;
    ++s.num;
  }
  return Status::Success();
}

Status BalancedAllocation::Score(const CycleContext& ctx, std::span<const NodeIndex> nodes,
                                 std::span<int64_t> out) const noexcept {
  const auto* s = ctx.state.Read<BalancedPreScoreState>(PreScoreKey());
  if (s == nullptr) return Status::MissingState();
  // BalancedAllocationScore (resource_allocation.h) over snapshot columns:
  // the same fractions, in the same order, with the same arithmetic; a call
  // to ForNode per node cost more than the score itself. Resources without a
  // column have allocatable 0 everywhere and are skipped like ForNode's zeros.
  std::array<const int64_t*, kMaxResources> alloc_columns;
  std::array<const int64_t*, kMaxResources> req_columns;
  std::array<int64_t, kMaxResources> pod_requests;
  size_t k = 0;
  for (size_t r = 0; r < s->num; ++r) {
    const std::span<const int64_t> alloc = ctx.snapshot.allocatable_column(s->ids[r]);
    if (alloc.empty()) continue;
    const std::span<const int64_t> req = ctx.snapshot.requested_column(s->ids[r]);
    alloc_columns[k] = alloc.data();
    req_columns[k] = req.empty() ? nullptr : req.data();
    pod_requests[k] = s->pod_requests[r];
    ++k;
  }
  std::array<double, kMaxResources> fractions;  // only [0, n) is read
  for (size_t i = 0; i < nodes.size(); ++i) {
    const NodeIndex node = nodes[i];
    size_t n = 0;
    double total = 0;
    for (size_t r = 0; r < k; ++r) {
      const int64_t allocatable = alloc_columns[r][node];
      if (allocatable == 0) continue;
      const int64_t requested =
          (req_columns[r] != nullptr ? req_columns[r][node] : 0) + pod_requests[r];
      double f = static_cast<double>(requested) / static_cast<double>(allocatable);
      if (f > 1) f = 1;
      total += f;
      fractions[n++] = f;
    }
    double std_dev = 0;
    if (n == 2) {
      std_dev = std::abs((fractions[0] - fractions[1]) / 2);
    } else if (n > 2) {
      const double mean = total / static_cast<double>(n);
      double sum = 0;
      for (size_t j = 0; j < n; ++j) sum += (fractions[j] - mean) * (fractions[j] - mean);
      std_dev = std::sqrt(sum / static_cast<double>(n));
    }
    out[i] = static_cast<int64_t>((1 - std_dev) * static_cast<double>(kMaxNodeScore));
  }
  return Status::Success();
}

}  // namespace copse::plugins
