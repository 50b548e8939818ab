#pragma once
// NodeInfo: one node as the scheduler cache keeps it — the node's own fields
// plus the pods assigned (or assumed) to it and their aggregates.
//
// Invariants (kept by the mutators):
//   requested = sum of pods' requests, with requested[pods] = number of pods;
//   non_zero_cpu_milli / non_zero_memory = sums of the pods' non-zero requests;
//   used_ports = concatenation of the pods' host ports;
//   generation changes on every mutation (a process-wide increasing counter),
//   so a snapshot copies only nodes whose generation differs from its own row.
//
// Thread-safety: not synchronised; owned by the cache.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/labels.h"
#include "core/pod_info.h"
#include "core/resource_vector.h"
#include "core/scheduling_types.h"

namespace copse {

// The next value of the process-wide generation counter (never 0).
uint64_t NextGeneration() noexcept;

class NodeInfo {
 public:
  explicit NodeInfo(std::string name);

  void SetLabels(Labels labels);
  // Allocatable in scheduling units; the pods entry is the allowed pod count.
  void SetAllocatable(const ResourceVector& allocatable);
  void SetTaints(std::vector<Taint> taints);
  void SetUnschedulable(bool unschedulable);

  // Adds a finalized pod. The same uid must not be added twice.
  void AddPod(std::shared_ptr<const PodInfo> pod);
  // Removes the pod with this uid; false when it is not on the node.
  bool RemovePod(std::string_view uid);

  const std::string& name() const noexcept { return name_; }
  const Labels& labels() const noexcept { return labels_; }
  const ResourceVector& allocatable() const noexcept { return allocatable_; }
  const std::vector<Taint>& taints() const noexcept { return taints_; }
  bool unschedulable() const noexcept { return unschedulable_; }
  const std::vector<std::shared_ptr<const PodInfo>>& pods() const noexcept { return pods_; }
  const ResourceVector& requested() const noexcept { return requested_; }
  int64_t non_zero_cpu_milli() const noexcept { return non_zero_cpu_milli_; }
  int64_t non_zero_memory() const noexcept { return non_zero_memory_; }
  const std::vector<HostPort>& used_ports() const noexcept { return used_ports_; }
  uint64_t generation() const noexcept { return generation_; }

 private:
  std::string name_;
  Labels labels_;
  ResourceVector allocatable_;
  std::vector<Taint> taints_;
  bool unschedulable_ = false;
  std::vector<std::shared_ptr<const PodInfo>> pods_;
  ResourceVector requested_;
  int64_t non_zero_cpu_milli_ = 0;
  int64_t non_zero_memory_ = 0;
  std::vector<HostPort> used_ports_;
  uint64_t generation_;
};

}  // namespace copse
