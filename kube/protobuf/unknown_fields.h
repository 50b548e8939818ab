#pragma once
// Strict field checking of built-in objects, as kube-apiserver's strict
// decoding does for ?fieldValidation=Strict|Warn: the JSON members an
// object's type does not declare ("unknown field") and members that appear
// twice in one JSON object ("duplicate field"), named by their path as kube
// names them: "spec.containers[0].imagePullPolicyy", "metadata.labels".
//
// The types are those of the protobuf schema (kube/protobuf/schema_data.cc:
// every field of the built-in kinds kube/protobuf/codec.h covers). Inline
// (embedded) structs contribute their fields to the parent; RawExtension and
// FieldsV1 hold any JSON; Time, Quantity and IntOrString are leaves.
//
// No JSON library appears in this header. Thread-safety: reentrant.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace copse::kube::protobuf {

struct FieldProblems {
  std::vector<std::string> unknown;    // paths, in document order
  std::vector<std::string> duplicate;  // paths, in document order
  bool empty() const { return unknown.empty() && duplicate.empty(); }
};

// The problems of the JSON of an object of `kind` at `api_version` ("apps/v1")
// when that is a covered built-in kind; nullopt for any other kind (nothing to
// check it against). `patch`: the JSON is a merge or strategic merge patch,
// whose "$..." directive keys are not fields. Malformed JSON is
// ErrorCode::kInvalid.
Result<std::optional<FieldProblems>> CheckObjectFields(std::string_view api_version,
                                                       std::string_view kind, std::string_view json,
                                                       bool patch = false);

// The same for a JSON value of one message type ("meta.v1.ObjectMeta"),
// whose paths start with `prefix` ("metadata"). nullopt for an unknown type.
Result<std::optional<FieldProblems>> CheckMessageFields(std::string_view message,
                                                        std::string_view json,
                                                        std::string_view prefix);

}  // namespace copse::kube::protobuf
