#pragma once
// YAML (one or more documents, as kubectl reads manifests) to JSON text.
// Plain scalars are typed as YAML 1.2's core schema does (null, true/false,
// integers, floats, else strings); quoted scalars stay strings.
//
// Thread-safety: pure functions.

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace copse::grove::api {

// Every non-empty document as compact JSON. Errors are kInvalid with
// yaml-cpp's line/column.
Result<std::vector<std::string>> YamlToJsonDocuments(std::string_view yaml);

}  // namespace copse::grove::api
