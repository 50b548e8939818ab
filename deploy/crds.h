#pragma once
// The CustomResourceDefinitions copse ships, embedded in the binary at build
// time, and the YAML -> JSON conversion that turns them (or any manifest)
// into what the API server takes.
//
//   crds/copse/       scheduling.copse.dev: PodGroup, Topology
//   crds/kubernetes/  scheduling.k8s.io/v1alpha2 Workload, PodGroup (KEP-4671),
//                     for clusters that do not serve them (Kubernetes v1.32).
//                     copse's embedded API server serves these natively:
//                     installing them there replaces the built-in resource
//                     with a CRD-backed one (no strategic merge patch), so
//                     `copse local` should install only the others.
//   crds/<other>/     every deploy/crds/**/*.yaml is picked up (e.g. grove/).
//
// deploy/CMakeLists.txt globs deploy/crds/**/*.yaml (CONFIGURE_DEPENDS) and
// regenerates the embedded table when a file is added, removed or changed.
//
// Thread-safety: BuiltinCrds() returns static data; the functions are reentrant.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace copse::deploy {

struct EmbeddedFile {
  // Relative to deploy/, e.g. "crds/copse/scheduling.copse.dev_podgroups.yaml".
  std::string_view path;
  std::string_view content;  // the file's bytes
};

// Every embedded CRD file, sorted by path. The views point to static storage.
std::span<const EmbeddedFile> BuiltinCrds();

// YAML (YAML 1.2 core schema, as yaml-cpp parses it) to compact JSON, one
// string per non-empty document ("---" separated; empty documents skipped).
// Plain scalars resolve to null (~, null, empty), bool (true/false in any of
// the core spellings), int (decimal, 0x hex, 0o octal; must fit int64),
// float (e.g. 1.5, 1e3; .inf and .nan are rejected: JSON has no such
// numbers) or string; quoted and block scalars and `!!str` are strings.
// YAML 1.1 words (yes/no/on/off) stay strings. Mapping keys become JSON
// strings; duplicate keys are rejected; the merge key `<<` is not expanded.
// Errors are kInvalid: "yaml: line 3, column 5: <parser message>" or
// "document 2: spec.versions[0]: duplicate key \"name\"".
Result<std::vector<std::string>> YamlDocumentsToJson(std::string_view yaml);

// One document -> its JSON. Several -> {"apiVersion":"v1","kind":"List",
// "items":[...]} (how kubectl carries several objects). None -> kInvalid.
Result<std::string> YamlToJson(std::string_view yaml);

}  // namespace copse::deploy
