#pragma once
// The registry vocabulary of the embedded API server: what a served resource
// is (group, versions, names, scope, subresources, selectable fields), the
// built-in resources, and the mapping of a CustomResourceDefinition to one.
//
// Thread-safety: ResourceInfo is immutable once registered (the Store hands
// out shared_ptr<const ResourceInfo>); functions here are pure.

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace copse::apiserver {

struct ResourceInfo {
  std::string group;                  // "" for core
  std::vector<std::string> versions;  // served versions, preferred (storage) first
  std::string resource;               // plural, "pods"
  std::string singular;               // "pod"
  std::string kind;                   // "Pod"
  std::string list_kind;              // "PodList"
  bool namespaced = true;
  bool has_status = false;
  bool has_scale = false;
  // Scale subresource paths (CRD style, ".spec.replicas").
  std::string spec_replicas_path = ".spec.replicas";
  std::string status_replicas_path = ".status.replicas";
  std::string label_selector_path;
  std::vector<std::string> short_names;
  std::vector<std::string> categories;
  // Selectable fields besides metadata.name and metadata.namespace, as JSON
  // paths without the leading dot ("spec.nodeName"). Order is the order of
  // ObjectVersion::fields.
  std::vector<std::string> field_selectors;
  // Extra subresources served by POST (pods: binding, eviction).
  std::vector<std::string> post_subresources;
  bool crd = false;
  // For custom resources: the CRD's spec.versions[] entries (JSON text),
  // aligned with `versions`; used for printer columns.
  std::vector<std::string> crd_versions;

  // Requires !versions.empty() (a CRD may serve no version at all).
  const std::string& preferred_version() const { return versions.front(); }
  std::string ApiVersion(std::string_view version) const;  // "v1" or "group/version"
  std::string GroupResource() const;                       // "pods", "widgets.example.com"
  bool ServesVersion(std::string_view version) const;
  bool HasField(std::string_view field) const;
  int FieldIndex(std::string_view field) const;  // -1 when not selectable
};

// A custom resource's openAPIV3Schema at `version`, parsed once per CRD
// version and shared (a ResourceInfo is rebuilt whenever its CRD changes, so
// the version's text identifies the schema); null for built-in resources and
// versions without a schema. Thread-safe.
std::shared_ptr<const nlohmann::json> CrdVersionSchema(const ResourceInfo& info,
                                                       std::string_view version);

// Kubernetes version priority order: GA before beta before alpha, higher
// numbers first, then other names alphabetically ("v2" < "v1" < "v1beta1").
bool KubeVersionBefore(const std::string& a, const std::string& b);

// Every built-in resource the embedded server serves.
std::vector<std::shared_ptr<const ResourceInfo>> BuiltinResources();

// The resource a CustomResourceDefinition (apiextensions.k8s.io/v1 JSON)
// declares. Errors are 422 Invalid with upstream's messages.
Result<std::shared_ptr<const ResourceInfo>> ResourceFromCrd(const nlohmann::json& crd);

// Reads a dotted JSON path (".spec.replicas" or "spec.replicas"); nullptr
// when a step is missing.
const nlohmann::json* FindPath(const nlohmann::json& obj, std::string_view path);
// Writes a value at a dotted path, creating objects on the way.
void SetPath(nlohmann::json& obj, std::string_view path, nlohmann::json value);

}  // namespace copse::apiserver
