#pragma once
// PendingRequests: what the pods waiting to be scheduled ask for, per scalar
// resource (extended resources such as nvidia.com/gpu, hugepages): a
// multiset of per-pod requests. Its smallest entry decides whether free
// capacity is stranded: free accelerators on a node that are fewer than
// every waiting pod's request cannot be used by any of them.
//
// The scheduling queue keeps it as pods and gangs enter and leave it (a pod
// counts from its add until it is bound or deleted, also while a cycle
// places it); the scheduler hands it to its snapshot, where
// NodeResourcesFit's accelerator scoring reads it (plugins/node_resources_fit).
//
// Cost: O(log k) per scalar resource a pod requests, k the distinct request
// sizes of that resource (a handful); CPU-only pods cost nothing.
//
// Thread-safety: none; owned by the scheduling loop.

#include <cstdint>
#include <map>
#include <vector>

#include "core/pod_info.h"
#include "core/resource_vector.h"

namespace copse {

class PendingRequests {
 public:
  void Add(const PodInfo& pod);
  // `pod` must have been added (with the same requests).
  void Remove(const PodInfo& pod);

  // The smallest request of `resource` among the waiting pods, leaving out
  // one pod asking `own` (the pod being placed: it is no longer waiting once
  // placed; 0 leaves out nothing). 0 when no other waiting pod asks for it.
  int64_t SmallestOther(ResourceId resource, int64_t own = 0) const noexcept;
  // Waiting pods that request some scalar resource.
  size_t pods() const noexcept { return pods_; }

 private:
  // Indexed by resource id; only ids above kResourceIdPods are kept.
  std::vector<std::map<int64_t, uint32_t>> by_resource_;
  size_t pods_ = 0;
};

}  // namespace copse
