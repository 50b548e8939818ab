#include "kube/controller/informers.h"

#include "core/log.h"

namespace copse::kube::controller {

std::string IndexValue(std::string_view ns, std::string_view value) {
  std::string out;
  out.reserve(ns.size() + value.size() + 1);
  out.append(ns).append("/").append(value);
  return out;
}

IndexFunction LabelIndex(std::string_view label) {
  std::string key(label);
  return [key](const KubeObject& object) -> std::vector<std::string> {
    auto it = object.meta.labels.find(key);
    if (it == object.meta.labels.end()) return {};
    return {IndexValue(object.meta.namespace_, it->second)};
  };
}

IndexFunction ControllerUidIndex() {
  return [](const KubeObject& object) -> std::vector<std::string> {
    const OwnerReference* ref = object.meta.ControllerRef();
    if (ref == nullptr || ref->uid.empty()) return {};
    return {ref->uid};
  };
}

InformerOptions MakeInformerOptions(const ResourceRef& resource, std::string namespace_,
                                    Indexers indexers, std::string label_selector,
                                    std::shared_ptr<const Clock> clock) {
  InformerOptions out;
  out.resource = resource;
  out.namespace_ = std::move(namespace_);
  out.label_selector = std::move(label_selector);
  out.indexers = std::move(indexers);
  out.clock = std::move(clock);
  std::string name = resource.resource;
  out.on_error = [name](const Error& error) { Log(1, "informer", name + ": " + error.ToString()); };
  return out;
}

const Informer* WaitForSync(std::initializer_list<const Informer*> informers,
                            std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (const Informer* informer : informers) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left < std::chrono::milliseconds::zero()) left = std::chrono::milliseconds::zero();
    if (!informer->WaitForSync(left)) return informer;
  }
  return nullptr;
}

}  // namespace copse::kube::controller
