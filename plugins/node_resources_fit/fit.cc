#include "plugins/node_resources_fit/fit.h"

#include <algorithm>

#include "core/pending_requests.h"

namespace copse::plugins {
namespace {

struct FitPreFilterState : ClonableState<FitPreFilterState> {
  ResourceVector requests;
  std::array<ResourceId, kMaxResources>
      checked{};  // resources with a non-zero, non-ignored request
  size_t num_checked = 0;
};

// Where one configured resource's (allocatable, requested) come from, as
// ResourceAllocationInputs::Prepare/ForNode define them for NodeResourcesFit
// (non-zero cpu/memory requests): resolved once per cycle so that Score reads
// snapshot columns directly instead of calling ForNode per node.
struct ScoredResource {
  enum class Used : uint8_t { kNonZeroCpu, kNonZeroMemory, kColumn };
  ResourceId id = 0;
  Used used = Used::kColumn;
  int64_t pod_request = 0;
  int64_t weight = 0;
  // Accelerators under MostAllocated: free capacity below this many units
  // is stranded (no other waiting pod asks for so few); 0: not counted.
  int64_t strand_below = 0;
};

struct FitPreScoreState : ClonableState<FitPreScoreState> {
  // The strategy for this pod: the accelerator strategy's for a pod that
  // requests an accelerator.
  ScoringStrategyType type = ScoringStrategyType::kLeastAllocated;
  ResourceAllocationInputs inputs;  // RequestedToCapacityRatio
  // LeastAllocated / MostAllocated: the resources ForNode would report with a
  // non-zero allocatable on some node (unknown names, pods and scalar
  // resources the pod does not request are never scored).
  std::array<ScoredResource, kMaxResources> scored{};
  size_t num_scored = 0;
};

// Free capacity `free` is stranded when 0 < free < strand_below: no waiting
// pod could use it.
int64_t Stranded(int64_t free, int64_t strand_below) noexcept {
  return free > 0 && free < strand_below ? free : 0;
}

// MostAllocated's allocated amount, less twice what the placement newly
// strands (or plus twice what it un-strands: a pod that fills free capacity
// no other waiting pod could use is the best use of it), within
// [0, capacity]. Twice: a node the pod would leave with stranded units then
// ranks below one it leaves with usable room, rather than level with it.
int64_t Unstranded(int64_t allocated, int64_t used, int64_t capacity,
                   int64_t strand_below) noexcept {
  const int64_t before = Stranded(capacity - used, strand_below);
  const int64_t after = Stranded(capacity - allocated, strand_below);
  return std::clamp<int64_t>(allocated - 2 * (after - before), 0, capacity);
}

// x / y truncated, as C++ divides, for the per-node scoring loop: the
// reciprocal of the last divisor is kept, so nodes of equal capacity cost a
// multiply instead of a division. The reciprocal is biased up by 2^-50: for
// 0 <= x < 2^49 and 0 < y < 2^52 the product then lies in
// [x/y, x/y + x/y * 2^-49], which holds no integer above floor(x/y) (the next
// one is at least 1/y away), so truncating it gives the exact quotient
// without a data-dependent correction on the hot path. The check behind it
// never fails for such operands; it keeps the result exact regardless.
class Divider {
 public:
  int64_t operator()(int64_t x, int64_t y) noexcept {
    constexpr int64_t kMaxDividend = int64_t{1} << 49;
    constexpr int64_t kMaxDivisor = int64_t{1} << 52;
    if (x < 0 || x >= kMaxDividend || y <= 0 || y >= kMaxDivisor) return x / y;
    if (y != divisor_) {
      divisor_ = y;
      inverse_ = (1.0 / static_cast<double>(y)) * (1.0 + 0x1p-50);
    }
    const auto q = static_cast<int64_t>(static_cast<double>(x) * inverse_);
    if (q * y > x || (q + 1) * y <= x) [[unlikely]]
      return x / y;
    return q;
  }

 private:
  int64_t divisor_ = 0;
  double inverse_ = 0;
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
  const AcceleratorStrategy& accelerators = typed->accelerator_strategy;
  s = ValidateResources(accelerators.resources,
                        "NodeResourcesFitArgs.acceleratorStrategy.resources");
  if (!s.ok()) return s.error();
  if (accelerators.enabled && accelerators.type == ScoringStrategyType::kRequestedToCapacityRatio) {
    return MakeError(ErrorCode::kInvalid,
                     "NodeResourcesFitArgs.acceleratorStrategy.type: Unsupported value: "
                     "\"RequestedToCapacityRatio\": supported values: \"LeastAllocated\", "
                     "\"MostAllocated\", \"None\"");
  }
  for (size_t i = 0; i < accelerators.resources.size(); ++i) {
    if (!IsExtendedResourceName(accelerators.resources[i].name)) {
      return MakeError(ErrorCode::kInvalid,
                       "NodeResourcesFitArgs.acceleratorStrategy.resources[" + std::to_string(i) +
                           "].name: Invalid value: \"" + accelerators.resources[i].name +
                           "\": must be an extended resource name (e.g. nvidia.com/gpu)");
    }
  }
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
  // The columns, resolved once per chunk; a resource without a column reads as 0.
  struct Checked {
    const int64_t* allocatable;
    const int64_t* requested;
    int64_t request;
    uint64_t bit;
  };
  std::array<Checked, kMaxResources + 1> checked;
  size_t num = 0;
  const auto add = [&](ResourceId r, int64_t request) {
    const std::span<const int64_t> alloc = snap.allocatable_column(r);
    const std::span<const int64_t> used = snap.requested_column(r);
    checked[num++] = Checked{alloc.empty() ? nullptr : alloc.data(),
                             used.empty() ? nullptr : used.data(), request, uint64_t{1} << r};
  };
  add(kResourceIdPods, 1);  // every pod takes a pod slot
  for (size_t k = 0; k < s->num_checked; ++k) add(s->checked[k], s->requests.Get(s->checked[k]));
  for (size_t i = 0; i < nodes.size(); ++i) {
    const NodeIndex n = nodes[i];
    uint64_t insufficient = 0;
    for (size_t k = 0; k < num; ++k) {
      const Checked& c = checked[k];
      const int64_t alloc = c.allocatable != nullptr ? c.allocatable[n] : 0;
      const int64_t used = c.requested != nullptr ? c.requested[n] : 0;
      if (c.request > alloc - used) insufficient |= c.bit;
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
  s.num_scored = 0;
  const AcceleratorStrategy& accelerators = args_.accelerator_strategy;
  if (accelerators.enabled && RequestsAccelerator(pod, snapshot, accelerators.resources)) {
    // The accelerators the pod requests, and nothing else: their packing is
    // what decides whether whole nodes stay free for the pods that need them.
    s.type = accelerators.type;
    for (size_t r = 0; r < pod.requests.size() && s.num_scored < kMaxResources; ++r) {
      const auto id = static_cast<ResourceId>(r);
      const int64_t request = pod.requests.Get(id);
      if (id == kResourceIdPods || request <= 0) continue;
      const std::string_view name = snapshot.resources().Name(id);
      int64_t weight = 0;
      if (accelerators.resources.empty()) {
        weight = IsExtendedResourceName(name) ? 1 : 0;
      } else {
        for (const ResourceSpec& spec : accelerators.resources) {
          if (spec.name == name) weight = spec.weight;
        }
      }
      if (weight == 0) continue;
      ScoredResource sr;
      sr.id = id;
      sr.weight = weight;
      sr.pod_request = request;
      if (s.type == ScoringStrategyType::kMostAllocated && snapshot.pending_requests() != nullptr) {
        sr.strand_below = snapshot.pending_requests()->SmallestOther(id, request);
      }
      s.scored[s.num_scored++] = sr;
    }
    return Status::Success();
  }
  s.type = args_.scoring_strategy.type;
  const std::vector<ResourceSpec>& resources = args_.scoring_strategy.resources;
  s.inputs.Prepare(pod, snapshot, resources, /*use_requested=*/false);
  for (size_t i = 0; i < resources.size() && i < kMaxResources; ++i) {
    const std::optional<ResourceId> id = snapshot.resources().Find(resources[i].name);
    if (!id.has_value() || *id == kResourceIdPods) continue;
    ScoredResource r;
    r.id = *id;
    r.weight = resources[i].weight;
    if (*id == kResourceIdCpu) {
      r.used = ScoredResource::Used::kNonZeroCpu;
      r.pod_request = pod.non_zero_cpu_milli;
    } else if (*id == kResourceIdMemory) {
      r.used = ScoredResource::Used::kNonZeroMemory;
      r.pod_request = pod.non_zero_memory;
    } else {
      r.pod_request = pod.requests.Get(*id);
      // Scalar resources the pod does not request are not scored.
      if (*id != kResourceIdEphemeralStorage && r.pod_request == 0) continue;
    }
    s.scored[s.num_scored++] = r;
  }
  return Status::Success();
}

Status Fit::Score(const CycleContext& ctx, std::span<const NodeIndex> nodes,
                  std::span<int64_t> out) const noexcept {
  const auto* s = ctx.state.Read<FitPreScoreState>(PreScoreKey());
  if (s == nullptr) return Status::MissingState();
  const ScoringStrategyType type = s->type;
  if (type == ScoringStrategyType::kRequestedToCapacityRatio) {
    const size_t k = s->inputs.size();
    std::array<int64_t, kMaxResources> allocatable{};
    std::array<int64_t, kMaxResources> requested{};
    const std::span<int64_t> alloc(allocatable.data(), k);
    const std::span<int64_t> req(requested.data(), k);
    const std::span<const int64_t> weights = s->inputs.weights();
    for (size_t i = 0; i < nodes.size(); ++i) {
      s->inputs.ForNode(ctx.snapshot, nodes[i], alloc, req);
      out[i] = RequestedToCapacityRatioScore(req, alloc, weights, scaled_shape_);
    }
    return Status::Success();
  }
  // LeastAllocatedScore / MostAllocatedScore (resource_allocation.h) over
  // the columns resolved in PreScore, with a Divider per resource: a call to
  // ForNode and a division per node and resource dominated the whole
  // filter+score pass otherwise. Resources without a column on this snapshot
  // have allocatable 0 everywhere and are skipped like ForNode's zeros.
  struct Column {
    const int64_t* allocatable;
    const int64_t* requested;  // kColumn only; null: nothing requested yet
    ScoredResource::Used used;
    int64_t pod_request;
    int64_t weight;
    int64_t strand_below;
  };
  std::array<Column, kMaxResources> columns;
  size_t num_columns = 0;
  for (size_t r = 0; r < s->num_scored; ++r) {
    const ScoredResource& sr = s->scored[r];
    const std::span<const int64_t> alloc_column = ctx.snapshot.allocatable_column(sr.id);
    if (alloc_column.empty()) continue;
    const std::span<const int64_t> req_column = ctx.snapshot.requested_column(sr.id);
    columns[num_columns++] = Column{alloc_column.data(),
                                    req_column.empty() ? nullptr : req_column.data(),
                                    sr.used,
                                    sr.pod_request,
                                    sr.weight,
                                    sr.strand_below};
  }
  std::array<Divider, kMaxResources> by_capacity;
  Divider by_weight_sum;
  const bool least = type == ScoringStrategyType::kLeastAllocated;
  const Snapshot& snap = ctx.snapshot;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const NodeIndex n = nodes[i];
    int64_t node_score = 0;
    int64_t weight_sum = 0;
    for (size_t r = 0; r < num_columns; ++r) {
      const Column& c = columns[r];
      const int64_t capacity = c.allocatable[n];
      if (capacity == 0) continue;
      int64_t used;
      switch (c.used) {
        case ScoredResource::Used::kNonZeroCpu:
          used = snap.non_zero_requested_cpu(n);
          break;
        case ScoredResource::Used::kNonZeroMemory:
          used = snap.non_zero_requested_memory(n);
          break;
        default:
          used = c.requested != nullptr ? c.requested[n] : 0;
          break;
      }
      const int64_t requested = used + c.pod_request;
      int64_t score;
      if (least) {
        score = requested > capacity
                    ? 0
                    : by_capacity[r]((capacity - requested) * kMaxNodeScore, capacity);
      } else {
        // Requests may exceed capacity because pods without requests count with defaults.
        int64_t allocated = std::min(requested, capacity);
        if (c.strand_below > 0) allocated = Unstranded(allocated, used, capacity, c.strand_below);
        score = by_capacity[r](allocated * kMaxNodeScore, capacity);
      }
      node_score += score * c.weight;
      weight_sum += c.weight;
    }
    out[i] = weight_sum == 0 ? 0 : by_weight_sum(node_score, weight_sum);
  }
  return Status::Success();
}

std::vector<ClusterEventWithHint> Fit::EventsToRegister() const {
  return {
      {{EventResource::kAssignedPod, kActionDelete | kActionUpdatePodScaleDown}, {}},
      {{EventResource::kNode, kActionAdd | kActionUpdateNodeAllocatable | kActionUpdateNodeTaint |
                                  kActionUpdateNodeLabel},
       {}},
      {{EventResource::kUnscheduledPod, kActionUpdatePodScaleDown}, {}},
  };
}

}  // namespace copse::plugins
