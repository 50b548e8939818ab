#pragma once
// Server-side field validation (?fieldValidation=Ignore|Warn|Strict), as
// kube-apiserver does it for create, update and patch: the body's fields
// that the kind does not declare and fields given twice are reported. Warn
// (the default) returns them as warnings, which the transport sends as
// `Warning: 299 - "unknown field \"spec.foo\""` headers (kubectl prints
// them); Strict refuses the request with 400 BadRequest, "Pod in version
// \"v1\" cannot be handled as a Pod: strict decoding error: unknown field
// \"spec.foo\""; Ignore checks nothing. This is what `kubectl --validate=strict`
// (its default) asks for.
//
// Built-in kinds are checked against the protobuf schema of their types
// (kube/protobuf/unknown_fields.h), or, for kinds it lacks, against the
// schema table's (apiserver/openapi_internal.h: the Workload API); custom
// resources against their CRD
// version's structural schema (properties, additionalProperties, items,
// x-kubernetes-preserve-unknown-fields, x-kubernetes-embedded-resource), with
// metadata checked as ObjectMeta. Kinds with neither are not checked.
// Merge and strategic merge patches are checked as partial objects (their
// "$" directives skipped); JSON patches and apply bodies are not checked here
// (apply reads the schema itself).
//
// Thread-safety: all functions may be called concurrently (parsed CRD
// schemas are cached under a mutex).

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "apiserver/resource_info.h"
#include "core/result.h"

namespace copse::apiserver {

enum class FieldValidation { kIgnore, kWarn, kStrict };

// The ?fieldValidation= value; empty is Warn. Anything else is 400
// BadRequest naming the supported values.
Result<FieldValidation> ParseFieldValidation(std::string_view value);

// Checks `body` (JSON) written as `info` at `version`. Ok with the warnings
// to send (Warn; empty for Ignore or a clean body), or the Strict error.
// `patch`: a merge or strategic merge patch body. Malformed JSON is left to
// the write itself (no warnings).
Result<std::vector<std::string>> ValidateFields(FieldValidation directive, const ResourceInfo& info,
                                                std::string_view version, std::string_view body,
                                                bool patch = false);

}  // namespace copse::apiserver
