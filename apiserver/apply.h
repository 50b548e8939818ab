#pragma once
// Server-side apply (PATCH with application/apply-patch+yaml), the merge and
// field ownership part, independent of the store.
//
// Ownership is kept as kube-apiserver keeps it, in metadata.managedFields:
// one entry per (manager, operation) with the set of fields it owns in the
// FieldsV1 form ("f:<field>", "k:<key object>" for items of a list map,
// "v:<value>" for items of a set, "." for an item itself). Applying:
//   1. the applied object's field set is built (lists by their schema:
//      x-kubernetes-list-type map with x-kubernetes-list-map-keys, set, or
//      atomic, the default);
//   2. a field in that set whose live value differs from the applied one and
//      that another manager owns is a conflict; without force the apply fails
//      with every conflict named, with force the other managers lose it;
//   3. fields the manager applied before and applies no more are removed from
//      the object unless another manager owns them;
//   4. the applied values are merged into the live object (objects by field,
//      list maps by key, sets by value, atomic lists and scalars replaced);
//   5. the manager's Apply entry becomes the new set.
// Identity and server-owned fields (apiVersion, kind, metadata name,
// namespace, uid, resourceVersion, generation, creationTimestamp,
// managedFields) are never owned; status is left out when `ignore_status`.
//
// Thread-safety: pure functions.

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "apiserver/resource_info.h"
#include "core/result.h"

namespace copse::apiserver {

struct ApplyOptions {
  std::string manager;      // required (fieldManager)
  bool force = false;       // force=true: take the conflicting fields
  std::string api_version;  // recorded in the entry, "apps/v1"
  std::string now;          // RFC 3339 time recorded in the entry
  bool ignore_status = false;
};

// The OpenAPI schema of the applied kind (a node with properties, items,
// additionalProperties, allOf/$ref into `components`, and the list
// extensions). `root` null: every list is atomic.
struct ApplySchema {
  const nlohmann::json* root = nullptr;
  const nlohmann::json* components = nullptr;  // name -> schema, for "#/components/schemas/name"
};

// The object after applying `applied` (a JSON object) as `options.manager`
// to `live` (nullptr: the object does not exist yet; the result creates it).
// Errors: 409 Conflict (reason Conflict, message "Apply failed with N
// conflict(s): ..."; `causes_json` gets a JSON array of one
// {reason: FieldManagerConflict, message, field} per field, as kube's Status
// details carry them), 422 for an applied list item missing one of its keys,
// 400 for an applied object that is not an object or sets
// metadata.managedFields.
Result<nlohmann::json> ApplyObject(const nlohmann::json* live, const nlohmann::json& applied,
                                   const ApplySchema& schema, const ApplyOptions& options,
                                   std::string* causes_json);

// A write other than apply (create, update, patch) by a named field manager
// (?fieldManager=), recorded as kube-apiserver records it: the manager's
// Update entry (per subresource) gains every field the write set or changed;
// other managers lose those fields and fields the write removed; entries left
// owning nothing go. `before` null: a create, whose manager owns every field.
// The managedFields `after` arrives with are replaced by the result.
struct UpdateOptions {
  std::string manager;
  std::string subresource;  // "" or "status"
  std::string api_version;
  std::string now;
};
Status RecordUpdate(const nlohmann::json* before, nlohmann::json& after, const ApplySchema& schema,
                    const UpdateOptions& options);

// The schema for server-side apply of a built-in kind from the table in
// openapi_builtin.cc; a null root for a kind the table does not have.
ApplySchema BuiltinApplySchema(std::string_view api_version, std::string_view kind);

// The schema of a served resource at `version`: the built-in table's, or the
// CRD version's openAPIV3Schema (copied into `crd_schema`, which must outlive
// the result).
ApplySchema ResourceApplySchema(const ResourceInfo& info, std::string_view version,
                                nlohmann::json* crd_schema);

}  // namespace copse::apiserver
