#include "grove/runtime/caches.h"

#include "grove/api/names.h"

namespace copse::grove::runtime {

namespace {

using kube::controller::LabelIndex;

kube::InformerOptions Options(const kube::ResourceRef& resource, const CacheOptions& options,
                              kube::Indexers indexers, std::string label_selector = {}) {
  return kube::controller::MakeInformerOptions(resource, options.namespace_, std::move(indexers),
                                               std::move(label_selector), options.clock);
}

std::string ManagedBy() {
  return std::string(api::kLabelManagedBy) + "=" + std::string(api::kManagedByValue);
}

}  // namespace

Caches::Caches(std::shared_ptr<kube::Client> client, const CacheOptions& options)
    : pcs(client, Options(api::resources::kPodCliqueSets, options, {})),
      pclq(client, Options(api::resources::kPodCliques, options,
                           {{std::string(kIndexPcs), LabelIndex(api::kLabelPartOf)},
                            {std::string(kIndexPcsg), LabelIndex(api::kLabelPcsg)}})),
      pcsg(client, Options(api::resources::kPodCliqueScalingGroups, options,
                           {{std::string(kIndexPcs), LabelIndex(api::kLabelPartOf)}})),
      podgang(client, Options(api::resources::kPodGangs, options,
                              {{std::string(kIndexPcs), LabelIndex(api::kLabelPartOf)}})),
      pods(client, Options(kube::resources::kPods, options,
                           {{std::string(kIndexPcs), LabelIndex(api::kLabelPartOf)},
                            {std::string(kIndexPclq), LabelIndex(api::kLabelPodClique)},
                            {std::string(kIndexGang), LabelIndex(api::kLabelPodGang)}},
                           ManagedBy())),
      services(client,
               Options(kube::resources::kServices, options,
                       {{std::string(kIndexPcs), LabelIndex(api::kLabelPartOf)}}, ManagedBy())),
      topologies(client, Options(api::resources::kClusterTopologyBindings, options, {})) {}

void Caches::Start() {
  pcs.Start();
  pclq.Start();
  pcsg.Start();
  podgang.Start();
  pods.Start();
  services.Start();
  topologies.Start();
}

void Caches::Stop() {
  pcs.Stop();
  pclq.Stop();
  pcsg.Stop();
  podgang.Stop();
  pods.Stop();
  services.Stop();
  topologies.Stop();
}

bool Caches::HasSynced() const {
  return pcs.HasSynced() && pclq.HasSynced() && pcsg.HasSynced() && podgang.HasSynced() &&
         pods.HasSynced() && services.HasSynced() && topologies.HasSynced();
}

bool Caches::WaitForSync(std::chrono::milliseconds timeout) const {
  return kube::controller::WaitForSync(
             {&pcs.informer(), &pclq.informer(), &pcsg.informer(), &podgang.informer(),
              &pods.informer(), &services.informer(), &topologies.informer()},
             timeout) == nullptr;
}

}  // namespace copse::grove::runtime
