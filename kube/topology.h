#pragma once
// scheduling.copse.dev/v1alpha1 Topology (cluster-scoped): the levels of a
// datacenter topology, outermost first, each named by the node label that
// holds a node's domain at that level:
//
//   apiVersion: scheduling.copse.dev/v1alpha1
//   kind: Topology
//   metadata: {name: dc}
//   spec:
//     levels:
//     - nodeLabel: topology.kubernetes.io/zone
//     - nodeLabel: copse.dev/block
//     - nodeLabel: copse.dev/rack
//     - nodeLabel: kubernetes.io/hostname
//
// PodGroups name a Topology in topologyConstraint.topology and its levels by
// node label key (or the key's name part, "rack"; see core/gang.h).
//
// Thread-safety: value types.

#include <string>
#include <string_view>
#include <vector>

#include "core/gang.h"
#include "core/result.h"
#include "kube/object.h"

namespace copse::kube {

namespace resources {
inline const ResourceRef kTopologies{"scheduling.copse.dev", "v1alpha1", "topologies", false};
}  // namespace resources

struct TopologyLevel {
  std::string node_label;
  bool operator==(const TopologyLevel&) const = default;
};

struct TopologySpec {
  std::vector<TopologyLevel> levels;  // outermost first
  bool operator==(const TopologySpec&) const = default;
};

class Topology : public KubeObject {
 public:
  static constexpr std::string_view kApiVersion = "scheduling.copse.dev/v1alpha1";
  static constexpr std::string_view kKind = "Topology";

  TopologySpec spec;

  // {metadata.name, the levels' node labels}: what gang validation and the
  // topology/ domain tree need.
  TopologyDefinition ToDefinition() const;

  // spec.levels required; every nodeLabel a valid label key and unique.
  // Errors joined by "; ", e.g. `spec.levels[2].nodeLabel: Duplicate value: "copse.dev/rack"`.
  Status Validate() const;

  static Result<Topology> Decode(std::string_view json);
  std::string Encode() const;
};

}  // namespace copse::kube
