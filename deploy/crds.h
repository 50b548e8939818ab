#pragma once
// The CustomResourceDefinitions copse ships, embedded in the binary at build
// time (YAML; kube/yaml.h turns them into what the API server takes).
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
// Thread-safety: BuiltinCrds() returns static data.

#include <span>
#include <string_view>

namespace copse::deploy {

struct EmbeddedFile {
  // Relative to deploy/, e.g. "crds/copse/scheduling.copse.dev_podgroups.yaml".
  std::string_view path;
  std::string_view content;  // the file's bytes
};

// Every embedded CRD file, sorted by path. The views point to static storage.
std::span<const EmbeddedFile> BuiltinCrds();

}  // namespace copse::deploy
