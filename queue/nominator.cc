#include "queue/nominator.h"

#include <algorithm>
#include <utility>

namespace copse::queue {

void Nominator::Add(std::shared_ptr<const PodInfo> pod,
                    std::optional<std::string_view> node_override) {
  if (pod == nullptr) return;
  Delete(pod->uid);
  const std::string_view node = node_override.value_or(pod->nominated_node_name);
  if (node.empty() || !pod->node_name.empty()) return;
  node_of_pod_.emplace(pod->uid, std::string(node));
  auto it = pods_on_node_.find(node);
  if (it == pods_on_node_.end()) it = pods_on_node_.try_emplace(std::string(node)).first;
  it->second.push_back(std::move(pod));
}

void Nominator::Update(const PodInfo* old_pod, std::shared_ptr<const PodInfo> new_pod) {
  if (new_pod == nullptr) return;
  std::optional<std::string> keep;
  const std::string_view old_uid =
      old_pod != nullptr ? std::string_view(old_pod->uid) : std::string_view(new_pod->uid);
  const bool api_nominated = (old_pod != nullptr && !old_pod->nominated_node_name.empty()) ||
                             !new_pod->nominated_node_name.empty();
  if (!api_nominated) {
    if (auto node = NominatedNode(old_uid)) keep = std::string(*node);
  }
  Delete(old_uid);
  if (keep) {
    Add(std::move(new_pod), std::string_view(*keep));
  } else {
    Add(std::move(new_pod), std::nullopt);
  }
}

bool Nominator::Delete(std::string_view uid) {
  auto it = node_of_pod_.find(uid);
  if (it == node_of_pod_.end()) return false;
  auto node_it = pods_on_node_.find(it->second);
  if (node_it != pods_on_node_.end()) {
    auto& pods = node_it->second;
    // A uid is nominated once; erase after the search so `uid` (which may
    // view into the pod being dropped) is not read afterwards.
    auto pos =
        std::find_if(pods.begin(), pods.end(),
                     [uid](const std::shared_ptr<const PodInfo>& p) { return p->uid == uid; });
    if (pos != pods.end()) pods.erase(pos);
    if (pods.empty()) pods_on_node_.erase(node_it);
  }
  node_of_pod_.erase(it);
  return true;
}

std::optional<std::string_view> Nominator::NominatedNode(std::string_view uid) const {
  auto it = node_of_pod_.find(uid);
  if (it == node_of_pod_.end()) return std::nullopt;
  return std::string_view(it->second);
}

const std::vector<std::shared_ptr<const PodInfo>>& Nominator::PodsForNode(
    std::string_view node) const {
  static const std::vector<std::shared_ptr<const PodInfo>> kNone;
  auto it = pods_on_node_.find(node);
  return it == pods_on_node_.end() ? kNone : it->second;
}

}  // namespace copse::queue
