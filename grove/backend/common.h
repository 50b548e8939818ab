#pragma once
// Helpers shared by the built-in backends (private to grove/backend/*.cc):
// the gang tree of a PodGang (scaling-group replicas as parents of their
// cliques), topology names, and create-or-update of a backend's own object.
//
// Thread-safety: pure functions, except ApplyObject (blocking API calls).

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "grove/api/types.h"
#include "grove/backend/backend.h"
#include "kube/object.h"

namespace copse::grove::backend {

// One level of a PodGang as a tree: the root (the gang), parents (one per
// topologyConstraintGroupConfig: a scaling-group replica) and leaves (one per
// PodGroup = PodClique).
struct GangNode {
  std::string name;
  std::string parent;                    // "" = the root
  int32_t min_member = 0;                // pods in the subtree that must be placed
  std::optional<int32_t> min_sub_group;  // parents: all of their leaves
  const api::GangTopologyConstraint* topology = nullptr;
};

struct GangTree {
  int32_t min_member = 0;       // sum of every leaf's minReplicas
  int32_t min_sub_group = 0;    // direct children of the root
  std::vector<GangNode> nodes;  // parents first, then leaves in PodGroup order
};

GangTree BuildGangTree(const api::PodGang& gang);

// The backend topology name for `gang`'s constraints: the ClusterTopologyBinding
// named by the grove.io/topology-name annotation, or its schedulerTopologyBindings
// entry for `backend_name`. "" when the gang has no topology name.
std::string TopologyReference(const BackendContext& context, std::string_view backend_name,
                              const api::PodGang& gang);
bool HasTopologyConstraints(const api::PodGang& gang);

// metadata.ownerReferences entry making `gang` the controller.
nlohmann::json GangOwnerReference(const api::PodGang& gang);

// Creates `desired` (a full object) or, when it exists, replaces its spec,
// labels and annotations if they differ (status and other metadata are kept).
Status ApplyObject(const BackendContext& context, const kube::ResourceRef& resource,
                   const nlohmann::json& desired);
// Deletes the object; NotFound is success.
Status DeleteObject(const BackendContext& context, const kube::ResourceRef& resource,
                    std::string_view ns, std::string_view name);

}  // namespace copse::grove::backend
