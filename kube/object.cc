#include "kube/object.h"

namespace copse::kube {

std::string ObjectMeta::Key() const {
  if (namespace_.empty()) return name;
  std::string key;
  key.reserve(namespace_.size() + 1 + name.size());
  key += namespace_;
  key += '/';
  key += name;
  return key;
}

const OwnerReference* ObjectMeta::ControllerRef() const noexcept {
  for (const auto& ref : owner_references) {
    if (ref.controller) return &ref;
  }
  return nullptr;
}

std::string ResourceRef::ApiVersion() const {
  return group.empty() ? version : group + "/" + version;
}

std::string ResourceRef::Path(std::string_view ns, std::string_view name,
                              std::string_view subresource) const {
  std::string path = group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
  if (namespaced && !ns.empty()) {
    path += "/namespaces/";
    path += ns;
  }
  path += '/';
  path += resource;
  if (!name.empty()) {
    path += '/';
    path += name;
    if (!subresource.empty()) {
      path += '/';
      path += subresource;
    }
  }
  return path;
}

}  // namespace copse::kube
