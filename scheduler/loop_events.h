#pragma once
// What the scheduling loop is told: informer events, translated on the
// informer threads into the scheduler's model (pods decoded to PodInfo, nodes
// to NodeInfo, PDBs to PodDisruptionBudgetInfo: pure work that needs no
// scheduler state), and the outcomes of the API writes the loop started
// (binds). Each is applied by the loop thread alone, in the order pushed
// (scheduler/handlers.cc, scheduler/binding.cc).
//
// Thread-safety: value types; their objects are immutable and shared.

#include <cstdint>
#include <memory>
#include <string>
#include <variant>

#include "core/cluster_event.h"
#include "core/labels.h"
#include "core/node_info.h"
#include "core/pod_info.h"
#include "core/result.h"

namespace copse::kube {
class PodGroup;
class CopsePodGroup;
class Topology;
}  // namespace copse::kube

namespace copse::scheduler {

using PodPtr = std::shared_ptr<const PodInfo>;

// A pod that is not terminal was added, or changed. `was_assigned`: the
// previous version had spec.nodeName (an update only). `ready`: its
// condition Ready is True (a gang's status counts its ready members; the
// scheduling model itself does not depend on it, so it is not in PodInfo).
struct PodChanged {
  PodPtr pod;
  bool update = false;
  bool was_assigned = false;
  bool ready = false;
};
// A pod was deleted or became terminal (Succeeded/Failed). `pod` is null
// when its last version could not be decoded.
struct PodGone {
  std::string uid;
  PodPtr pod;
  bool terminal = false;   // it ended (Succeeded/Failed) rather than being deleted
  bool succeeded = false;  // terminal: it ended Succeeded (else Failed)
};
// A node was added (action kActionAdd) or changed (the actions that matter
// to scheduling; empty: nothing that matters, only the cache row is
// refreshed). `node` holds the node's own fields (no pods).
struct NodeChanged {
  std::shared_ptr<const NodeInfo> node;
  std::shared_ptr<const NodeInfo> old_node;  // updates only
  ActionType action;
};
struct NodeGone {
  std::shared_ptr<const NodeInfo> node;
};
struct NamespaceChanged {
  std::string name;
  Labels labels;
  bool update = false;
};
struct NamespaceGone {
  std::string name;
};
struct PdbChanged {
  std::string key;
  PodDisruptionBudgetInfo pdb;
};
struct PdbGone {
  std::string key;
};
// A gang object was added or changed (one of the two is set).
struct GroupObjectChanged {
  PodInfo::GroupKind kind = PodInfo::GroupKind::kNone;
  std::shared_ptr<const kube::PodGroup> pod_group;
  std::shared_ptr<const kube::CopsePodGroup> copse_pod_group;
};
struct GroupObjectGone {
  PodInfo::GroupKind kind = PodInfo::GroupKind::kNone;
  std::string namespace_name;
  std::string name;
};
struct TopologyChanged {
  std::shared_ptr<const kube::Topology> topology;
};
struct TopologyGone {
  std::string name;
};
// A bind the loop asked for finished (attempt: the binding's attempt number,
// so a late answer to an attempt already replaced is ignored).
struct BindDone {
  std::string uid;
  uint64_t attempt = 0;
  Status status;
};
// The read-back of a bind whose outcome was unknown: the pod's spec.nodeName
// ("" while unbound), or kNotFound when the pod is gone.
struct BindChecked {
  std::string uid;
  uint64_t attempt = 0;
  Result<std::string> node_name;
};

using LoopEvent =
    std::variant<PodChanged, PodGone, NodeChanged, NodeGone, NamespaceChanged, NamespaceGone,
                 PdbChanged, PdbGone, GroupObjectChanged, GroupObjectGone, TopologyChanged,
                 TopologyGone, BindDone, BindChecked>;

}  // namespace copse::scheduler
