#pragma once
// OpenAPI documents of the embedded API server, as kube-apiserver serves them
// at /openapi/v3/{api/v1,apis/G/V}: the paths of every served resource (with
// the write operations' fieldValidation parameter, which tells kubectl to
// leave --validate=strict to the server) and components.schemas describing
// the kinds, for `kubectl explain`.
//
// Schemas: built-in kinds from the compact table in openapi_builtin.cc (pod,
// node, deployment, job and the types they use); every other built-in kind
// gets apiVersion/kind/metadata and keeps unknown fields; custom resources
// get their CRD version's openAPIV3Schema with metadata as ObjectMeta.
//
// Thread-safety: pure functions.

#include <memory>
#include <string>
#include <vector>

#include "apiserver/resource_info.h"

namespace copse::apiserver {

// The OpenAPI v3 document (JSON text) of one group version ("" for core).
std::string OpenApiV3Document(const std::vector<std::shared_ptr<const ResourceInfo>>& resources,
                              const std::string& group, const std::string& version);

}  // namespace copse::apiserver
