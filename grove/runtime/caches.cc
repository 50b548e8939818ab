#include "grove/runtime/caches.h"

#include "grove/api/names.h"
#include "core/log.h"

namespace copse::grove::runtime {

namespace {

kube::IndexFunction LabelIndex(std::string_view label) {
  std::string key(label);
  return [key](const kube::KubeObject& object) -> std::vector<std::string> {
    auto it = object.meta.labels.find(key);
    if (it == object.meta.labels.end()) return {};
    return {IndexValue(object.meta.namespace_, it->second)};
  };
}

kube::InformerOptions Options(const kube::ResourceRef& resource, const CacheOptions& options,
                              kube::Indexers indexers, std::string label_selector = {}) {
  kube::InformerOptions out;
  out.resource = resource;
  out.namespace_ = options.namespace_;
  out.label_selector = std::move(label_selector);
  out.indexers = std::move(indexers);
  out.clock = options.clock;
  std::string name = resource.resource;
  out.on_error = [name](const Error& error) {
    Log(1, "informer", name + ": " + error.ToString());
  };
  return out;
}

std::string ManagedBy() {
  return std::string(api::kLabelManagedBy) + "=" + std::string(api::kManagedByValue);
}

}  // namespace

std::string IndexValue(std::string_view ns, std::string_view value) {
  std::string out(ns);
  out += '/';
  out += value;
  return out;
}

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
      services(client, Options(kube::resources::kServices, options,
                               {{std::string(kIndexPcs), LabelIndex(api::kLabelPartOf)}},
                               ManagedBy())),
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
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto left = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                 std::chrono::steady_clock::now());
  };
  return pcs.WaitForSync(left()) && pclq.WaitForSync(left()) && pcsg.WaitForSync(left()) &&
         podgang.WaitForSync(left()) && pods.WaitForSync(left()) && services.WaitForSync(left()) &&
         topologies.WaitForSync(left());
}

}  // namespace copse::grove::runtime
