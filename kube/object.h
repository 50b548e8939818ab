#pragma once
// Shared vocabulary of kube/: object metadata, the base of all typed objects,
// and references to API resources. Light header: no JSON or network includes.
//
// Every decoded object keeps the exact JSON it was decoded from (`raw`) so
// that fields copse does not model survive a decode/encode round trip; the
// typed fields are what copse reads and edits.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/labels.h"
#include "core/result.h"

namespace copse::kube {

struct OwnerReference {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
  bool controller = false;
  bool block_owner_deletion = false;
  bool operator==(const OwnerReference&) const = default;
};

struct ObjectMeta {
  std::string name;
  std::string namespace_;  // empty for cluster-scoped objects
  std::string generate_name;
  std::string uid;
  std::string resource_version;
  int64_t generation = 0;
  std::string creation_timestamp;                 // RFC 3339, empty if unset
  std::optional<std::string> deletion_timestamp;  // set once deletion started
  std::optional<int64_t> deletion_grace_period_seconds;
  Labels labels;
  Labels annotations;
  std::vector<OwnerReference> owner_references;
  std::vector<std::string> finalizers;

  // "namespace/name", or "name" for cluster-scoped objects (cache keys, as client-go).
  std::string Key() const;
  const OwnerReference* ControllerRef() const noexcept;
};

// Base of every typed object (Pod, Node, ...). Value semantics; informers hand
// out std::shared_ptr<const T> so the same decoded object is shared read-only.
class KubeObject {
 public:
  KubeObject() = default;
  // Declared so that the virtual destructor does not turn every move of a
  // decoded object (into a Result, into a shared_ptr) into a deep copy of its
  // metadata and raw JSON.
  KubeObject(const KubeObject&) = default;
  KubeObject(KubeObject&&) = default;
  KubeObject& operator=(const KubeObject&) = default;
  KubeObject& operator=(KubeObject&&) = default;
  virtual ~KubeObject() = default;
  ObjectMeta meta;
  std::string api_version;  // "v1", "apps/v1", ...
  std::string kind;
  // The JSON this object was decoded from (empty for objects built in code).
  std::string raw;
};

// Where a resource lives in the API: group ("" for core), version, plural
// resource name and whether it is namespaced.
struct ResourceRef {
  std::string group;
  std::string version;
  std::string resource;
  bool namespaced = true;

  std::string ApiVersion() const;  // "v1" or "group/version"
  // URL path: /api/v1/namespaces/ns/pods/name/status. `ns` is ignored for
  // cluster-scoped resources; empty `ns` on a namespaced resource lists across
  // all namespaces; empty `name` addresses the collection.
  std::string Path(std::string_view ns = {}, std::string_view name = {},
                   std::string_view subresource = {}) const;
  bool operator==(const ResourceRef&) const = default;
};

namespace resources {
inline const ResourceRef kPods{"", "v1", "pods", true};
inline const ResourceRef kNodes{"", "v1", "nodes", false};
inline const ResourceRef kNamespaces{"", "v1", "namespaces", false};
inline const ResourceRef kServices{"", "v1", "services", true};
inline const ResourceRef kEvents{"", "v1", "events", true};
inline const ResourceRef kEventsV1{"events.k8s.io", "v1", "events", true};
inline const ResourceRef kLeases{"coordination.k8s.io", "v1", "leases", true};
inline const ResourceRef kPriorityClasses{"scheduling.k8s.io", "v1", "priorityclasses", false};
inline const ResourceRef kPodDisruptionBudgets{"policy", "v1", "poddisruptionbudgets", true};
// The only PodDisruptionBudget version up to v1.20 (removed in v1.25).
inline const ResourceRef kPodDisruptionBudgetsV1beta1{"policy", "v1beta1", "poddisruptionbudgets",
                                                      true};
inline const ResourceRef kCustomResourceDefinitions{"apiextensions.k8s.io", "v1",
                                                    "customresourcedefinitions", false};
}  // namespace resources

}  // namespace copse::kube
