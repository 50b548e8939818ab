#include "plugins/node_resources_fit/resource_allocation.h"

#include <cmath>

#include "plugins/framework/plugin.h"

namespace copse::plugins {
namespace {

// x / y as C++ computes it (truncated). For 0 <= x, 0 < y below 2^52, the
// hot path (per node and resource) avoids the slow integer division: both
// are exact as doubles, the correctly rounded double quotient is off from
// the true floor by at most one, and the correction makes it exact.
inline int64_t Quotient(int64_t x, int64_t y) noexcept {
  constexpr int64_t kExact = int64_t{1} << 52;
  if (x >= 0 && x < kExact && y > 0 && y < kExact) {
    int64_t q = static_cast<int64_t>(static_cast<double>(x) / static_cast<double>(y));
    if (q * y > x) {
      --q;
    } else if ((q + 1) * y <= x) {
      ++q;
    }
    return q;
  }
  return x / y;
}

}  // namespace

int64_t LeastAllocatedScore(std::span<const int64_t> requested,
                            std::span<const int64_t> allocatable,
                            std::span<const int64_t> weights) noexcept {
  int64_t node_score = 0;
  int64_t weight_sum = 0;
  for (size_t i = 0; i < requested.size(); ++i) {
    const int64_t capacity = allocatable[i];
    if (capacity == 0) continue;
    const int64_t score =
        requested[i] > capacity ? 0 : Quotient((capacity - requested[i]) * kMaxNodeScore, capacity);
    node_score += score * weights[i];
    weight_sum += weights[i];
  }
  return weight_sum == 0 ? 0 : Quotient(node_score, weight_sum);
}

int64_t MostAllocatedScore(std::span<const int64_t> requested, std::span<const int64_t> allocatable,
                           std::span<const int64_t> weights) noexcept {
  int64_t node_score = 0;
  int64_t weight_sum = 0;
  for (size_t i = 0; i < requested.size(); ++i) {
    const int64_t capacity = allocatable[i];
    if (capacity == 0) continue;
    // Requests may exceed capacity because pods without requests count with defaults.
    const int64_t used = std::min(requested[i], capacity);
    node_score += Quotient(used * kMaxNodeScore, capacity) * weights[i];
    weight_sum += weights[i];
  }
  return weight_sum == 0 ? 0 : Quotient(node_score, weight_sum);
}

int64_t BrokenLinear(std::span<const UtilizationShapePoint> shape, int64_t p) noexcept {
  for (size_t i = 0; i < shape.size(); ++i) {
    if (p <= shape[i].utilization) {
      if (i == 0) return shape[0].score;
      const int64_t u0 = shape[i - 1].utilization;
      const int64_t s0 = shape[i - 1].score;
      return s0 + (shape[i].score - s0) * (p - u0) / (shape[i].utilization - u0);
    }
  }
  return shape.empty() ? 0 : shape.back().score;
}

int64_t RequestedToCapacityRatioScore(std::span<const int64_t> requested,
                                      std::span<const int64_t> allocatable,
                                      std::span<const int64_t> weights,
                                      std::span<const UtilizationShapePoint> shape) noexcept {
  int64_t node_score = 0;
  int64_t weight_sum = 0;
  for (size_t i = 0; i < requested.size(); ++i) {
    const int64_t capacity = allocatable[i];
    if (capacity == 0) continue;
    const int64_t score = requested[i] > capacity
                              ? BrokenLinear(shape, kMaxUtilization)
                              : BrokenLinear(shape, requested[i] * kMaxUtilization / capacity);
    if (score > 0) {
      node_score += score * weights[i];
      weight_sum += weights[i];
    }
  }
  if (weight_sum == 0) return 0;
  return static_cast<int64_t>(
      std::round(static_cast<double>(node_score) / static_cast<double>(weight_sum)));
}

int64_t BalancedAllocationScore(std::span<const int64_t> requested,
                                std::span<const int64_t> allocatable) noexcept {
  // Only fractions[0, n) are read; left uninitialised (this runs per node).
  std::array<double, kMaxResources> fractions;
  size_t n = 0;
  double total = 0;
  for (size_t i = 0; i < requested.size() && n < fractions.size(); ++i) {
    if (allocatable[i] == 0) continue;
    double f = static_cast<double>(requested[i]) / static_cast<double>(allocatable[i]);
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
    for (size_t i = 0; i < n; ++i) sum += (fractions[i] - mean) * (fractions[i] - mean);
    std_dev = std::sqrt(sum / static_cast<double>(n));
  }
  return static_cast<int64_t>((1 - std_dev) * static_cast<double>(kMaxNodeScore));
}

bool RequestsAccelerator(const PodInfo& pod, const Snapshot& snapshot,
                         std::span<const ResourceSpec> accelerators) noexcept {
  for (size_t r = 0; r < pod.requests.size(); ++r) {
    const auto id = static_cast<ResourceId>(r);
    if (id == kResourceIdPods || pod.requests.Get(id) <= 0) continue;
    const std::string_view name = snapshot.resources().Name(id);
    if (accelerators.empty()) {
      if (IsExtendedResourceName(name)) return true;
      continue;
    }
    for (const ResourceSpec& spec : accelerators) {
      if (spec.name == name) return true;
    }
  }
  return false;
}

void ResourceAllocationInputs::Prepare(const PodInfo& pod, const Snapshot& snapshot,
                                       std::span<const ResourceSpec> resources,
                                       bool use_requested) {
  use_requested_ = use_requested;
  count_ = std::min(resources.size(), kMaxResources);
  for (size_t i = 0; i < count_; ++i) {
    const std::optional<ResourceId> id = snapshot.resources().Find(resources[i].name);
    ids_[i] = id.has_value() ? *id : kUnknown;
    weights_[i] = resources[i].weight;
    int64_t request = 0;
    if (id.has_value()) {
      if (*id == kResourceIdCpu) {
        request = use_requested ? pod.requests.Get(*id) : pod.non_zero_cpu_milli;
      } else if (*id == kResourceIdMemory) {
        request = use_requested ? pod.requests.Get(*id) : pod.non_zero_memory;
      } else if (*id != kResourceIdPods) {
        request = pod.requests.Get(*id);
      }
    }
    pod_requests_[i] = request;
  }
}

bool ResourceAllocationInputs::AllPodRequestsZero() const noexcept {
  for (size_t i = 0; i < count_; ++i) {
    if (pod_requests_[i] != 0) return false;
  }
  return true;
}

void ResourceAllocationInputs::ForNode(const Snapshot& snapshot, NodeIndex n,
                                       std::span<int64_t> allocatable,
                                       std::span<int64_t> requested) const noexcept {
  for (size_t i = 0; i < count_; ++i) {
    allocatable[i] = 0;
    requested[i] = 0;
    const ResourceId id = ids_[i];
    // Unknown names and "pods" are not scored (calculateResourceAllocatableRequest).
    if (id == kUnknown || id == kResourceIdPods) continue;
    const int64_t pod_request = pod_requests_[i];
    int64_t used = 0;
    if (id == kResourceIdCpu) {
      used = use_requested_ ? snapshot.requested(id, n) : snapshot.non_zero_requested_cpu(n);
    } else if (id == kResourceIdMemory) {
      used = use_requested_ ? snapshot.requested(id, n) : snapshot.non_zero_requested_memory(n);
    } else if (id == kResourceIdEphemeralStorage) {
      used = snapshot.requested(id, n);
    } else {
      // Scalar resources the pod does not request are not scored.
      if (pod_request == 0) continue;
      used = snapshot.requested(id, n);
    }
    const int64_t alloc = snapshot.allocatable(id, n);
    if (alloc == 0) continue;
    allocatable[i] = alloc;
    requested[i] = used + pod_request;
  }
}

}  // namespace copse::plugins
