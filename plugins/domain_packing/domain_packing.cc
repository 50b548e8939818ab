#include "plugins/domain_packing/domain_packing.h"

#include <algorithm>
#include <array>

namespace copse::plugins {
namespace {

struct PackingLevel {
  LabelColumnRef column;
  std::vector<int64_t> free;  // by label value id (id 0: nodes without the label)
  int64_t max_free = 0;
};

struct PackingState : ClonableState<PackingState> {
  std::array<PackingLevel, kMaxPackingLevels> levels;
  size_t num_levels = 0;
};

copse::Status ValidateSpecs(const std::vector<ResourceSpec>& resources, const std::string& path) {
  for (size_t i = 0; i < resources.size(); ++i) {
    const std::string item = path + "[" + std::to_string(i) + "]";
    if (!IsExtendedResourceName(resources[i].name)) {
      return MakeError(ErrorCode::kInvalid,
                       item + ".name: Invalid value: \"" + resources[i].name +
                           "\": must be an extended resource name (e.g. nvidia.com/gpu)");
    }
    if (resources[i].weight < 1 || resources[i].weight > 100) {
      return MakeError(ErrorCode::kInvalid, item + ".weight: must be in the range [1, 100]");
    }
  }
  return copse::Status::Ok();
}

}  // namespace

Result<std::unique_ptr<Plugin>> DomainPacking::Create(const PluginArgs* args) {
  Result<DomainPackingArgs> typed = ArgsOrDefault<DomainPackingArgs>(args, kDomainPackingName);
  if (!typed.ok()) return std::move(typed).error();
  if (typed->levels.size() > kMaxPackingLevels) {
    return MakeError(ErrorCode::kInvalid,
                     "DomainPackingArgs.levels: Too many: " + std::to_string(typed->levels.size()) +
                         ": must have at most " + std::to_string(kMaxPackingLevels) + " items");
  }
  for (size_t i = 0; i < typed->levels.size(); ++i) {
    const std::string& key = typed->levels[i];
    const std::string item = "DomainPackingArgs.levels[" + std::to_string(i) + "]";
    if (key.empty()) return MakeError(ErrorCode::kInvalid, item + ": Required value");
    for (size_t j = 0; j < i; ++j) {
      if (typed->levels[j] == key) {
        return MakeError(ErrorCode::kInvalid, item + ": Duplicate value: \"" + key + "\"");
      }
    }
  }
  if (copse::Status s = ValidateSpecs(typed->resources, "DomainPackingArgs.resources"); !s.ok()) {
    return s.error();
  }
  return std::unique_ptr<Plugin>(new DomainPacking(std::move(*typed)));
}

Status DomainPacking::PreScore(const PodInfo& pod, const Snapshot& snapshot,
                               std::span<const NodeIndex> /*feasible*/, CycleState& state) const {
  if (args_.levels.empty() || !RequestsAccelerator(pod, snapshot, args_.resources)) {
    state.Erase(PreScoreKey());
    return Status::Skip();
  }
  // The accelerator columns the pod requests, with their weights.
  std::array<ResourceId, kMaxResources> ids{};
  std::array<int64_t, kMaxResources> weights{};
  size_t k = 0;
  for (size_t r = 0; r < pod.requests.size() && k < kMaxResources; ++r) {
    const auto id = static_cast<ResourceId>(r);
    if (id == kResourceIdPods || pod.requests.Get(id) <= 0) continue;
    const std::string_view name = snapshot.resources().Name(id);
    int64_t weight = 0;
    if (args_.resources.empty()) {
      weight = IsExtendedResourceName(name) ? 1 : 0;
    } else {
      for (const ResourceSpec& spec : args_.resources) {
        if (spec.name == name) weight = spec.weight;
      }
    }
    if (weight == 0 || snapshot.allocatable_column(id).empty()) continue;
    ids[k] = id;
    weights[k] = weight;
    ++k;
  }
  auto& s = state.Emplace<PackingState>(PreScoreKey());
  s.num_levels = 0;
  const size_t num_nodes = snapshot.num_nodes();
  for (const std::string& key : args_.levels) {
    PackingLevel& level = s.levels[s.num_levels++];
    level.column = LabelColumnRef(snapshot, key);
    level.free.assign(level.column->num_values(), 0);
    for (NodeIndex n = 0; n < num_nodes; ++n) {
      const uint32_t value = level.column->id(n);
      if (value == LabelColumn::kAbsent) continue;
      int64_t free = 0;
      for (size_t r = 0; r < k; ++r) {
        const int64_t left = snapshot.allocatable(ids[r], n) - snapshot.requested(ids[r], n);
        free += std::max<int64_t>(0, left) * weights[r];
      }
      level.free[value] += free;
    }
    level.max_free = 0;
    for (size_t v = 1; v < level.free.size(); ++v) {
      level.max_free = std::max(level.max_free, level.free[v]);
    }
  }
  return Status::Success();
}

Status DomainPacking::Score(const CycleContext& ctx, std::span<const NodeIndex> nodes,
                            std::span<int64_t> out) const noexcept {
  const auto* s = ctx.state.Read<PackingState>(PreScoreKey());
  if (s == nullptr) return Status::MissingState();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const NodeIndex n = nodes[i];
    int64_t total = 0;
    int64_t weight_sum = 0;
    for (size_t l = 0; l < s->num_levels; ++l) {
      const PackingLevel& level = s->levels[l];
      const uint32_t value = level.column->id(n);
      if (value == LabelColumn::kAbsent) continue;
      const auto weight = static_cast<int64_t>(l) + 1;
      weight_sum += weight;
      if (level.max_free <= 0) {
        total += 1000 * weight;  // every domain full: all equally packed
        continue;
      }
      total += (level.max_free - level.free[value]) * 1000 / level.max_free * weight;
    }
    out[i] = weight_sum == 0 ? 0 : total * kMaxNodeScore / (1000 * weight_sum);
  }
  return Status::Success();
}

}  // namespace copse::plugins
