#include "core/node_info.h"

#include <algorithm>
#include <atomic>

#include "core/check.h"

namespace copse {

uint64_t NextGeneration() noexcept {
  static std::atomic<uint64_t> counter{0};
  return counter.fetch_add(1, std::memory_order_relaxed) + 1;
}

NodeInfo::NodeInfo(std::string name) : name_(std::move(name)), generation_(NextGeneration()) {}

void NodeInfo::SetLabels(Labels labels) {
  labels_ = std::move(labels);
  generation_ = NextGeneration();
}

void NodeInfo::SetAllocatable(const ResourceVector& allocatable) {
  allocatable_ = allocatable;
  generation_ = NextGeneration();
}

void NodeInfo::SetTaints(std::vector<Taint> taints) {
  taints_ = std::move(taints);
  generation_ = NextGeneration();
}

void NodeInfo::SetUnschedulable(bool unschedulable) {
  unschedulable_ = unschedulable;
  generation_ = NextGeneration();
}

void NodeInfo::AddPod(std::shared_ptr<const PodInfo> pod) {
  COPSE_CHECK(pod != nullptr);
  COPSE_CHECK(pod->finalized) << "pod " << pod->FullName() << " added before Finalize()";
  requested_ += pod->requests;
  requested_.Add(kResourceIdPods, 1);
  non_zero_cpu_milli_ += pod->non_zero_cpu_milli;
  non_zero_memory_ += pod->non_zero_memory;
  used_ports_.insert(used_ports_.end(), pod->host_ports.begin(), pod->host_ports.end());
  pods_.push_back(std::move(pod));
  generation_ = NextGeneration();
}

bool NodeInfo::RemovePod(std::string_view uid) {
  auto it = std::find_if(pods_.begin(), pods_.end(), [&](const auto& p) { return p->uid == uid; });
  if (it == pods_.end()) return false;
  const PodInfo& pod = **it;
  requested_ -= pod.requests;
  requested_.Add(kResourceIdPods, -1);
  non_zero_cpu_milli_ -= pod.non_zero_cpu_milli;
  non_zero_memory_ -= pod.non_zero_memory;
  for (const HostPort& port : pod.host_ports) {
    auto used = std::find(used_ports_.begin(), used_ports_.end(), port);
    if (used != used_ports_.end()) used_ports_.erase(used);
  }
  pods_.erase(it);
  generation_ = NextGeneration();
  return true;
}

}  // namespace copse
