#include "grove/runtime/lookups.h"

#include <map>

#include "grove/api/defaults.h"
#include "grove/api/names.h"
#include "kube/controller/objects.h"

namespace copse::grove::runtime {

std::vector<PodPtr> ActivePodsOf(const Caches& caches, const api::PodClique& pclq) {
  std::vector<PodPtr> out;
  for (auto& pod :
       caches.pods.ByIndex(kIndexPclq, IndexValue(pclq.meta.namespace_, pclq.meta.name))) {
    if (kube::controller::IsTerminating(pod->meta) || kube::controller::IsPodTerminal(*pod))
      continue;
    if (!kube::controller::IsControlledBy(pod->meta, pclq.meta.uid)) continue;
    out.push_back(std::move(pod));
  }
  return out;
}

std::vector<PodPtr> AllPodsOf(const Caches& caches, std::string_view ns, std::string_view pclq) {
  return caches.pods.ByIndex(kIndexPclq, IndexValue(ns, pclq));
}

std::shared_ptr<const api::PodCliqueSet> OwningPodCliqueSet(const Caches& caches,
                                                            DefaultedCache& defaulted,
                                                            const kube::ObjectMeta& meta) {
  auto it = meta.labels.find(api::kLabelPartOf);
  if (it == meta.labels.end()) return nullptr;
  auto pcs = caches.pcs.Get(meta.namespace_, it->second);
  if (pcs == nullptr) return nullptr;
  return defaulted.Get(pcs);
}

bool IsGangScheduled(const Caches& caches, const api::PodGang& gang) {
  std::map<std::string, int32_t> bound;
  for (const auto& pod :
       caches.pods.ByIndex(kIndexGang, IndexValue(gang.meta.namespace_, gang.meta.name))) {
    if (kube::controller::IsTerminating(pod->meta) || !kube::controller::IsPodScheduled(*pod))
      continue;
    auto it = pod->meta.labels.find(api::kLabelPodClique);
    if (it != pod->meta.labels.end()) ++bound[it->second];
  }
  for (const auto& group : gang.spec.pod_groups) {
    if (bound[group.name] < group.min_replicas) return false;
  }
  return true;
}

int IntLabel(const kube::ObjectMeta& meta, std::string_view key) {
  auto it = meta.labels.find(key);
  if (it == meta.labels.end()) return -1;
  auto value = api::ParseIndex(it->second);
  return value.has_value() ? *value : -1;
}

}  // namespace copse::grove::runtime
