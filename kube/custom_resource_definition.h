#pragma once
// apiextensions.k8s.io/v1 CustomResourceDefinition: group, names, scope and
// versions with their subresources and printer columns. The OpenAPI schema
// is kept as JSON text (copse does not interpret it).
//
// Thread-safety: value types.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "kube/codec.h"
#include "kube/object.h"

namespace copse::kube {

inline constexpr std::string_view kNamespaceScoped = "Namespaced";
inline constexpr std::string_view kClusterScoped = "Cluster";

struct CustomResourceNames {
  std::string plural;
  std::string singular;
  std::string kind;
  std::string list_kind;
  std::vector<std::string> short_names;
  std::vector<std::string> categories;
  bool operator==(const CustomResourceNames&) const = default;
};

struct CustomResourceScale {
  std::string spec_replicas_path;    // e.g. ".spec.replicas"
  std::string status_replicas_path;  // e.g. ".status.replicas"
  std::optional<std::string> label_selector_path;
  bool operator==(const CustomResourceScale&) const = default;
};

struct CustomResourceSubresources {
  bool status = false;  // "status": {} enables /status
  std::optional<CustomResourceScale> scale;
  bool operator==(const CustomResourceSubresources&) const = default;
};

struct CustomResourceColumn {
  std::string name;
  std::string type;  // integer, number, string, boolean, date
  std::string format;
  std::string description;
  int32_t priority = 0;
  std::string json_path;
  bool operator==(const CustomResourceColumn&) const = default;
};

struct CustomResourceDefinitionVersion {
  std::string name;
  bool served = false;
  bool storage = false;
  bool deprecated = false;
  std::optional<std::string> deprecation_warning;
  // The `schema` object ({"openAPIV3Schema": {...}}) as JSON text, decoded
  // in canonical form (compact, keys sorted); when edited it must stay a
  // valid JSON object (anything else is not encoded).
  std::optional<std::string> schema;
  std::optional<CustomResourceSubresources> subresources;
  std::vector<CustomResourceColumn> additional_printer_columns;
  bool operator==(const CustomResourceDefinitionVersion&) const = default;
};

struct CustomResourceDefinitionSpec {
  std::string group;
  CustomResourceNames names;
  std::string scope;  // "Namespaced" | "Cluster"
  std::vector<CustomResourceDefinitionVersion> versions;
  bool operator==(const CustomResourceDefinitionSpec&) const = default;
};

struct CustomResourceDefinitionStatus {
  std::vector<Condition> conditions;  // Established, NamesAccepted, ...
  CustomResourceNames accepted_names;
  std::vector<std::string> stored_versions;
  bool operator==(const CustomResourceDefinitionStatus&) const = default;
};

class CustomResourceDefinition : public KubeObject {
 public:
  static constexpr std::string_view kApiVersion = "apiextensions.k8s.io/v1";
  static constexpr std::string_view kKind = "CustomResourceDefinition";

  CustomResourceDefinitionSpec spec;
  CustomResourceDefinitionStatus status;

  const CustomResourceDefinitionVersion* FindVersion(std::string_view name) const noexcept;
  // The version with storage: true, or nullptr.
  const CustomResourceDefinitionVersion* StorageVersion() const noexcept;
  // Where objects of `version` live: {group, version, plural, scope == Namespaced}.
  ResourceRef Resource(std::string_view version) const;

  static Result<CustomResourceDefinition> Decode(std::string_view json);
  std::string Encode() const;
};

}  // namespace copse::kube
