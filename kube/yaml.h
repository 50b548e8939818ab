#pragma once
// YAML manifests to JSON, with the scalar types kubectl gives them: kubectl
// converts YAML with sigs.k8s.io/yaml, which decodes with go-yaml v2's
// resolver (YAML 1.1 flavoured), so copse reads a manifest as kubectl sends
// it to the API server. The one YAML -> JSON converter of copse (CRDs,
// Grove manifests and configuration, test fixtures).
//
// Plain (unquoted, untagged) scalars:
//   null    "", ~, null, Null, NULL
//   bool    true/True/TRUE, false/False/FALSE, and YAML 1.1's y/Y/yes/Yes/YES,
//           on/On/ON, n/N/no/No/NO, off/Off/OFF (quote them to keep strings:
//           a ConfigMap value `enabled: yes` is refused by the API server)
//   int     underscores dropped, then Go's base prefixes: 0x1F, 0o17, 0b101,
//           and a leading 0 for octal (012 is 10); an optional sign; beyond
//           int64 an unsigned 64-bit integer, or the exact decimal digits of
//           a prefixed number of any size
//   float   [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? (1e3, .5, 1.);
//           written as Go's encoding/json writes float64 (1.0 -> 1, 1e3 ->
//           1000); out of range: a string; .inf and .nan: an error (JSON has
//           no such numbers)
//   string  everything else (versions like 1.2.3, timestamps, 10m, yES)
// Quoted and block scalars and !!str are strings. Mapping keys are written as
// strings of their resolved value (`1: a` -> "1", `on: x` -> "true",
// `0x10: a` -> "16"); a null key is an error. Keys come out sorted, as Go's
// encoding/json writes maps.
//
// Where copse is stricter than kubectl (which silently keeps the last of two
// equal keys and makes unknown tags strings): duplicate keys (after
// resolution) and tags outside the YAML core schema are errors naming the
// path. The merge key `<<` is not expanded. Aliases are expanded up to a
// budget of nodes (a "billion laughs" document is an error, not a hang).
//
// Errors are kInvalid: "yaml: line 3, column 5: <parser message>",
// "spec.versions[0]: duplicate key \"name\"", "document 2: x.y: the value .inf
// has no JSON representation".
//
// Thread-safety: pure functions.

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace copse::kube {

// Every non-empty document ("---" separated) as compact JSON.
Result<std::vector<std::string>> YamlDocumentsToJson(std::string_view yaml);

// One document -> its JSON. Several -> {"apiVersion":"v1","kind":"List",
// "items":[...]} (how kubectl carries several objects). None -> kInvalid.
Result<std::string> YamlToJson(std::string_view yaml);

}  // namespace copse::kube
