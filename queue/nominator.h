#pragma once
// Nominator: pods nominated to nodes (by preemption: status.nominatedNodeName,
// or an in-memory nomination made before the API write lands), so that the
// framework can count them on those nodes when it filters pods of lower or
// equal priority (kube's nominator / PodNominator).
//
// Algorithm:
//   1. Add(pod, node_override): drop the pod's previous nomination (by uid);
//      the node is `node_override` when given ("" means: no nomination), else
//      the pod's nominated_node_name; a pod already bound (node_name set) or
//      without a node is not nominated; otherwise it is appended to the
//      node's list and indexed by uid.
//   2. Update(old, new): when neither version carries nominatedNodeName but
//      the old pod is nominated in memory, the update raced the nomination's
//      API write: keep the in-memory node. Then Delete(old) + Add(new).
//   3. Delete(uid): unlink from its node's list (lists are short: the pods
//      preempting on one node).
//
// Thread-safety: not synchronised; owned by its SchedulingQueue.

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/pod_info.h"

namespace copse::queue {

class Nominator {
 public:
  void Add(std::shared_ptr<const PodInfo> pod, std::optional<std::string_view> node_override);
  void Update(const PodInfo* old_pod, std::shared_ptr<const PodInfo> new_pod);
  // False when the pod was not nominated.
  bool Delete(std::string_view uid);

  // The node the pod (by uid) is nominated to.
  std::optional<std::string_view> NominatedNode(std::string_view uid) const;
  // Pods nominated to `node`, in nomination order (empty when none). The
  // reference is valid until the next mutation.
  const std::vector<std::shared_ptr<const PodInfo>>& PodsForNode(std::string_view node) const;
  size_t size() const noexcept { return node_of_pod_.size(); }
  // Calls fn(node, pod) for every nomination.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    for (const auto& [node, pods] : pods_on_node_) {
      for (const auto& pod : pods) fn(node, pod);
    }
  }

 private:
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept {
      return std::hash<std::string_view>{}(s);
    }
  };
  template <typename V>
  using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;

  StringMap<std::string> node_of_pod_;  // uid -> node
  StringMap<std::vector<std::shared_ptr<const PodInfo>>> pods_on_node_;
};

}  // namespace copse::queue
