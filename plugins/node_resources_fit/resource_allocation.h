#pragma once
// Resource scoring shared by NodeResourcesFit and
// NodeResourcesBalancedAllocation (kube-scheduler noderesources
// resource_allocation.go, least/most_allocated.go,
// requested_to_capacity_ratio.go, balanced_allocation.go).
//
// All functions take parallel arrays over the configured resources; entries
// with allocatable 0 are ignored. Pure, noexcept, allocation-free.

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/pod_info.h"
#include "core/resource_vector.h"
#include "core/snapshot.h"

namespace copse::plugins {

// One resource to score and its weight (config.ResourceSpec).
struct ResourceSpec {
  std::string name;
  int64_t weight = 1;
};

// A point of RequestedToCapacityRatio's shape: utilization 0..100 -> score 0..10.
struct UtilizationShapePoint {
  int32_t utilization = 0;
  int32_t score = 0;
};

inline constexpr int64_t kMaxCustomPriorityScore = 10;
inline constexpr int64_t kMaxUtilization = 100;

// sum(weight * (capacity - requested) * 100 / capacity) / sum(weight), 0 for
// a resource whose request exceeds capacity.
int64_t LeastAllocatedScore(std::span<const int64_t> requested,
                            std::span<const int64_t> allocatable,
                            std::span<const int64_t> weights) noexcept;
// sum(weight * min(requested, capacity) * 100 / capacity) / sum(weight).
int64_t MostAllocatedScore(std::span<const int64_t> requested, std::span<const int64_t> allocatable,
                           std::span<const int64_t> weights) noexcept;
// helper.BuildBrokenLinearFunction over `shape` (scores already scaled to 0..100).
int64_t BrokenLinear(std::span<const UtilizationShapePoint> scaled_shape,
                     int64_t utilization) noexcept;
// round(sum(weight * f(utilization)) / sum(weight)) over resources with f > 0;
// utilization above capacity counts as 100.
int64_t RequestedToCapacityRatioScore(std::span<const int64_t> requested,
                                      std::span<const int64_t> allocatable,
                                      std::span<const int64_t> weights,
                                      std::span<const UtilizationShapePoint> scaled_shape) noexcept;
// (1 - standard deviation of requested/allocatable fractions, capped at 1) * 100.
int64_t BalancedAllocationScore(std::span<const int64_t> requested,
                                std::span<const int64_t> allocatable) noexcept;

// Whether `pod` requests an accelerator: a non-zero request of a resource in
// `accelerators` or, when that list is empty, of any extended resource
// (IsExtendedResourceName: nvidia.com/gpu, example.com/fpga). copse's
// accelerator-aware scoring (NodeResourcesFit acceleratorStrategy,
// BalancedAllocation skipAcceleratorPods, DomainPacking) keys on it.
bool RequestsAccelerator(const PodInfo& pod, const Snapshot& snapshot,
                         std::span<const ResourceSpec> accelerators) noexcept;

// resourceAllocationScorer: resolves configured resource names once per cycle
// and produces (allocatable, requested-with-pod) per node.
class ResourceAllocationInputs {
 public:
  // `use_requested`: cpu/memory from requests (BalancedAllocation) instead of
  // the non-zero requests (NodeResourcesFit scoring).
  void Prepare(const PodInfo& pod, const Snapshot& snapshot,
               std::span<const ResourceSpec> resources, bool use_requested);
  // The pod requests nothing of the configured resources (best-effort).
  bool AllPodRequestsZero() const noexcept;
  size_t size() const noexcept { return count_; }
  std::span<const int64_t> weights() const noexcept { return {weights_.data(), count_}; }
  // Fills allocatable[i], requested[i] (zero when the resource is skipped).
  void ForNode(const Snapshot& snapshot, NodeIndex node, std::span<int64_t> allocatable,
               std::span<int64_t> requested) const noexcept;

 private:
  static constexpr ResourceId kUnknown = 0xFF;
  size_t count_ = 0;
  bool use_requested_ = false;
  std::array<ResourceId, kMaxResources> ids_{};
  std::array<int64_t, kMaxResources> weights_{};
  std::array<int64_t, kMaxResources> pod_requests_{};
};

}  // namespace copse::plugins
