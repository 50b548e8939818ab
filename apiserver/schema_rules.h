#pragma once
// The schema walker: what kube-apiserver does with a typed object that the
// tagged schema tables (apiserver/openapi_internal.h; today the Workload API,
// apiserver/scheduling_schema.cc) describe, driven by the tables alone:
//
//   NormalizeAsGo       decoding into the Go struct and encoding it back:
//                       a value of the wrong JSON type is the decoder's
//                       error; unknown fields are dropped; a field without
//                       omitempty (+emit) is written when unset (null for
//                       a pointer, list or map, its zero value otherwise);
//                       a struct held by value is always written; a set
//                       pointer (+ptr) is written even when zero; times are
//                       RFC 3339 in UTC.
//   ApplySchemaDefaults the +default=JSON of each unset field.
//   ValidateBySchema    declarative validation (k8s.io/apimachinery's
//                       api/validate), per field as the generated
//                       validators do: first every gate below, each
//                       reporting its error; when any fired (an unset
//                       +optional field counts, silently) the field's
//                       content is not checked:
//                         +immutable   an update may not change it
//                                      ("field is immutable");
//                         +maxitems=N  "Too many";
//                         +required    unset (nil, empty, zero) is
//                                      "Required value"; +optional: unset
//                                      skips the content without an error;
//                         +noset/+nounset   a pointer may not be set or
//                                      cleared by an update;
//                         +noadd/+noremove  list items (by the list's map
//                                      key) may not be added or removed;
//                       then the content: duplicate keys of a list map
//                       ("[]T/key": "Duplicate value" at the later index),
//                       +format=NAME (k8s-short-name, k8s-long-name,
//                       k8s-label-key, k8s-path-segment-name,
//                       condition-reason), +min=N/+max=N, +maxbytes=N
//                       ("Too long"), +enum=A,B ("Unsupported value"), and
//                       the field's own type, recursively. A type tagged
//                       +union needs exactly one of its +member fields set;
//                       +dependent-required=F on a set field requires F.
//                       Updates ratchet as upstream: a field (or list item,
//                       matched by its key) equal to its old value is not
//                       checked again.
//
// Objects are whole kinds ("scheduling.v1beta1.PodGroup"): apiVersion, kind
// and metadata pass through untouched (ObjectMeta has its own validation,
// apiserver/validation.h). Validate and compare normalized objects.
//
// Thread-safety: pure functions (the parsed rules are built once).

#include <nlohmann/json_fwd.hpp>
#include <string_view>

#include "apiserver/field_error.h"
#include "core/result.h"

namespace copse::apiserver {

// Rewrites `value` as the table type `type_name` encodes. A value of the
// wrong JSON type is kInvalid with encoding/json's message ("json: cannot
// unmarshal string into Go struct field GangSchedulingPolicy.spec.
// schedulingPolicy.gang.minCount of type int32"), `value` then unspecified.
Status NormalizeAsGo(std::string_view type_name, nlohmann::json& value);

// Sets the +default of every unset field of `value` (a normalized object of
// `type_name`) and of the structs and list items it holds.
void ApplySchemaDefaults(std::string_view type_name, nlohmann::json& value);

// The declarative validation errors of `obj` (a create when `old_obj` is
// null, else an update from `old_obj`), both normalized objects of
// `type_name`.
FieldErrorList ValidateBySchema(std::string_view type_name, const nlohmann::json& obj,
                                const nlohmann::json* old_obj);

}  // namespace copse::apiserver
