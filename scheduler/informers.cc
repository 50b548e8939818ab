#include "scheduler/informers.h"

#include <algorithm>
#include <utility>

#include "core/log.h"
#include "scheduler/convert.h"

namespace copse::scheduler {
namespace {

using kube::Node;
using kube::Pod;

// The pod as the scheduler models it; null (logged) when it cannot be.
PodPtr Decode(const Pod& pod, ResourceNames& names, bool log) {
  Result<PodPtr> info = ToPodInfo(pod, names);
  if (info.ok()) return std::move(info).value();
  if (log) {
    LogWarning("scheduler", "pod " + pod.meta.namespace_ + "/" + pod.meta.name +
                                " ignored: " + info.error().message);
  }
  return nullptr;
}

// The node's own fields (no pods): what the cache row is refreshed from.
std::shared_ptr<const NodeInfo> Decode(const Node& node, ResourceNames& names) {
  auto info = std::make_shared<NodeInfo>(node.meta.name);
  if (Status applied = ApplyNode(node, names, *info); !applied.ok()) {
    LogWarning("scheduler", "node " + node.meta.name + ": " + applied.error().message);
  }
  return info;
}

}  // namespace

ActionType NodeUpdateActions(const kube::Node& old_node, const kube::Node& new_node) {
  ActionType action;
  if (old_node.status.allocatable != new_node.status.allocatable) {
    action = action | kActionUpdateNodeAllocatable;
  }
  if (old_node.meta.labels != new_node.meta.labels) action = action | kActionUpdateNodeLabel;
  if (old_node.spec.taints != new_node.spec.taints ||
      old_node.spec.unschedulable != new_node.spec.unschedulable) {
    action = action | kActionUpdateNodeTaint;
  }
  if (old_node.meta.annotations != new_node.meta.annotations) {
    action = action | kActionUpdateNodeAnnotation;
  }
  // Conditions: only readiness-relevant changes (heartbeats are not events).
  if (old_node.IsReady() != new_node.IsReady()) action = action | kActionUpdateNodeCondition;
  return action;
}

Informers Informers::Create(const std::shared_ptr<kube::Client>& client, Inbox& inbox,
                            ResourceNames& names) {
  Informers in;
  Inbox* box = &inbox;
  ResourceNames* interned = &names;

  kube::InformerOptions pods;
  pods.resource = kube::resources::kPods;
  // The scheduler reads pods' and nodes' typed fields only (writes are patches).
  pods.decoder = kube::TypedDecoderWithoutRaw<Pod>();
  in.pods = std::make_unique<kube::TypedInformer<Pod>>(client, pods);
  in.pods->AddEventHandler(
      [box, interned](const auto& pod) {
        if (IsTerminal(*pod)) return;
        if (PodPtr info = Decode(*pod, *interned, /*log=*/true)) {
          box->Push(PodChanged{std::move(info), false, false});
        }
      },
      [box, interned](const auto& old_pod, const auto& new_pod) {
        if (IsTerminal(*new_pod)) {
          box->Push(PodGone{new_pod->meta.uid, Decode(*new_pod, *interned, false)});
          return;
        }
        if (PodPtr info = Decode(*new_pod, *interned, false)) {
          box->Push(PodChanged{std::move(info), true, !old_pod->spec.node_name.empty()});
        }
      },
      [box, interned](const auto& pod) {
        box->Push(PodGone{pod->meta.uid, Decode(*pod, *interned, false)});
      });

  kube::InformerOptions nodes;
  nodes.resource = kube::resources::kNodes;
  nodes.decoder = kube::TypedDecoderWithoutRaw<Node>();
  in.nodes = std::make_unique<kube::TypedInformer<Node>>(client, nodes);
  in.nodes->AddEventHandler(
      [box, interned](const auto& node) {
        box->Push(NodeChanged{Decode(*node, *interned), nullptr, kActionAdd});
      },
      [box, interned](const auto& old_node, const auto& new_node) {
        // Only what the scheduler models is pushed: the NodeInfo fields
        // (labels, allocatable, taints, unschedulable) all change with one
        // of these actions.
        const ActionType action = NodeUpdateActions(*old_node, *new_node);
        if (action.Empty()) return;
        box->Push(NodeChanged{Decode(*new_node, *interned), Decode(*old_node, *interned), action});
      },
      [box, interned](const auto& node) { box->Push(NodeGone{Decode(*node, *interned)}); });

  kube::InformerOptions namespaces;
  namespaces.resource = kube::resources::kNamespaces;
  in.namespaces = std::make_unique<kube::TypedInformer<kube::Namespace>>(client, namespaces);
  in.namespaces->AddEventHandler(
      [box](const auto& ns) {
        box->Push(NamespaceChanged{ns->meta.name, ns->meta.labels, false});
      },
      [box](const auto&, const auto& ns) {
        box->Push(NamespaceChanged{ns->meta.name, ns->meta.labels, true});
      },
      [box](const auto& ns) { box->Push(NamespaceGone{ns->meta.name}); });

  kube::InformerOptions pdbs;
  pdbs.resource = kube::resources::kPodDisruptionBudgets;
  in.pdbs = std::make_unique<kube::TypedInformer<kube::PodDisruptionBudget>>(client, pdbs);
  in.pdbs->AddEventHandler(
      [box](const auto& p) {
        box->Push(PdbChanged{p->meta.Key(), ToPdbInfo(*p)});
      },
      [box](const auto&, const auto& p) {
        box->Push(PdbChanged{p->meta.Key(), ToPdbInfo(*p)});
      },
      [box](const auto& p) { box->Push(PdbGone{p->meta.Key()}); });

  kube::InformerOptions pod_groups;
  pod_groups.resource = kube::resources::kPodGroups;
  in.pod_groups = std::make_unique<kube::TypedInformer<kube::PodGroup>>(client, pod_groups);
  constexpr auto kWorkload = PodInfo::GroupKind::kWorkloadPodGroup;
  in.pod_groups->AddEventHandler(
      [box](const auto& g) {
        box->Push(GroupObjectChanged{kWorkload, g, nullptr});
      },
      [box](const auto&, const auto& g) {
        box->Push(GroupObjectChanged{kWorkload, g, nullptr});
      },
      [box](const auto& g) {
        box->Push(GroupObjectGone{kWorkload, g->meta.namespace_, g->meta.name});
      });

  kube::InformerOptions copse_groups;
  copse_groups.resource = kube::resources::kCopsePodGroups;
  in.copse_pod_groups =
      std::make_unique<kube::TypedInformer<kube::CopsePodGroup>>(client, copse_groups);
  constexpr auto kCopse = PodInfo::GroupKind::kCopsePodGroup;
  in.copse_pod_groups->AddEventHandler(
      [box](const auto& g) {
        box->Push(GroupObjectChanged{kCopse, nullptr, g});
      },
      [box](const auto&, const auto& g) {
        box->Push(GroupObjectChanged{kCopse, nullptr, g});
      },
      [box](const auto& g) {
        box->Push(GroupObjectGone{kCopse, g->meta.namespace_, g->meta.name});
      });

  kube::InformerOptions topology_objects;
  topology_objects.resource = kube::resources::kTopologies;
  in.topologies = std::make_unique<kube::TypedInformer<kube::Topology>>(client, topology_objects);
  in.topologies->AddEventHandler(
      [box](const auto& t) { box->Push(TopologyChanged{t}); },
      [box](const auto&, const auto& t) { box->Push(TopologyChanged{t}); },
      [box](const auto& t) { box->Push(TopologyGone{t->meta.name}); });
  return in;
}

void Informers::Start() {
  nodes->Start();
  namespaces->Start();
  pdbs->Start();
  // Gang objects first, so that members find their group when pods arrive.
  // Their informers are not waited for: a cluster without the CRDs still
  // schedules ordinary pods.
  pod_groups->Start();
  copse_pod_groups->Start();
  topologies->Start();
  // One 2 s budget for the three (a cluster without the CRDs waits it once).
  const auto group_sync_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  auto sync_left = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
        std::max(group_sync_deadline - std::chrono::steady_clock::now(),
                 std::chrono::steady_clock::duration::zero()));
  };
  pod_groups->WaitForSync(sync_left());
  copse_pod_groups->WaitForSync(sync_left());
  topologies->WaitForSync(sync_left());
  pods->Start();
}

void Informers::Stop() {
  pods->Stop();
  nodes->Stop();
  namespaces->Stop();
  pdbs->Stop();
  pod_groups->Stop();
  copse_pod_groups->Stop();
  topologies->Stop();
}

bool Informers::HasSynced() const {
  return nodes->HasSynced() && pods->HasSynced() && namespaces->HasSynced() && pdbs->HasSynced();
}

bool Informers::WaitForSync(std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto left = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                 std::chrono::steady_clock::now());
  };
  return nodes->WaitForSync(left()) && pods->WaitForSync(left()) &&
         namespaces->WaitForSync(left()) && pdbs->WaitForSync(left());
}

}  // namespace copse::scheduler
