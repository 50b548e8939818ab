#include "scheduler/informers.h"

#include <algorithm>
#include <utility>

#include "core/log.h"
#include "kube/discovery.h"
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

// The pod's condition Ready is True (what a kubelet reports once every
// container is ready).
bool IsReady(const Pod& pod) {
  const kube::Condition* ready = kube::FindCondition(pod.status.conditions, "Ready");
  return ready != nullptr && ready->status == "True";
}

// The node's own fields (no pods): what the cache row is refreshed from.
std::shared_ptr<const NodeInfo> Decode(const Node& node, ResourceNames& names) {
  auto info = std::make_shared<NodeInfo>(node.meta.name);
  if (Status applied = ApplyNode(node, names, *info); !applied.ok()) {
    LogWarning("scheduler", "node " + node.meta.name + ": " + applied.error().message);
  }
  return info;
}

// An informer on the first of `candidates` the server serves; `without` says
// what copse does when none is (logged once).
kube::ServedInformerOptions Served(std::vector<kube::ResourceRef> candidates, std::string without,
                                   bool wait_until_served, kube::Decoder decoder = {}) {
  kube::ServedInformerOptions o;
  o.candidates = std::move(candidates);
  o.without = std::move(without);
  o.wait_until_served = wait_until_served;
  o.informer.decoder = std::move(decoder);
  o.log = [](const std::string& line) { LogWarning("scheduler", line); };
  return o;
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
  in.client = client;
  Inbox* box = &inbox;
  ResourceNames* interned = &names;

  // The scheduler reads pods' and nodes' typed fields only (writes are patches).
  in.pods = std::make_unique<kube::TypedServedInformer<Pod>>(
      client, Served({kube::resources::kPods}, "copse cannot schedule", true,
                     kube::TypedDecoderWithoutRaw<Pod>()));
  in.pods->AddEventHandler(
      [box, interned](const auto& pod) {
        if (IsTerminal(*pod)) return;
        if (PodPtr info = Decode(*pod, *interned, /*log=*/true)) {
          box->Push(PodChanged{std::move(info), false, false, IsReady(*pod)});
        }
      },
      [box, interned](const auto& old_pod, const auto& new_pod) {
        if (IsTerminal(*new_pod)) {
          box->Push(PodGone{new_pod->meta.uid, Decode(*new_pod, *interned, false), true,
                            new_pod->status.phase == kube::kPodSucceeded});
          return;
        }
        if (PodPtr info = Decode(*new_pod, *interned, false)) {
          box->Push(PodChanged{std::move(info), true, !old_pod->spec.node_name.empty(),
                               IsReady(*new_pod)});
        }
      },
      [box, interned](const auto& pod) {
        box->Push(PodGone{pod->meta.uid, Decode(*pod, *interned, false)});
      });

  in.nodes = std::make_unique<kube::TypedServedInformer<Node>>(
      client, Served({kube::resources::kNodes}, "copse cannot schedule", true,
                     kube::TypedDecoderWithoutRaw<Node>()));
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

  in.namespaces = std::make_unique<kube::TypedServedInformer<kube::Namespace>>(
      client, Served({kube::resources::kNamespaces}, "copse cannot schedule", true));
  in.namespaces->AddEventHandler(
      [box](const auto& ns) {
        box->Push(NamespaceChanged{ns->meta.name, ns->meta.labels, false});
      },
      [box](const auto&, const auto& ns) {
        box->Push(NamespaceChanged{ns->meta.name, ns->meta.labels, true});
      },
      [box](const auto& ns) { box->Push(NamespaceGone{ns->meta.name}); });

  // v1.20 serves PodDisruptionBudgets only as policy/v1beta1 (policy/v1 is 1.21+).
  in.pdbs = std::make_unique<kube::TypedServedInformer<kube::PodDisruptionBudget>>(
      client, Served({kube::resources::kPodDisruptionBudgets,
                      kube::resources::kPodDisruptionBudgetsV1beta1},
                     "preemption chooses victims without regard to PodDisruptionBudgets", false));
  in.pdbs->AddEventHandler(
      [box](const auto& p) {
        box->Push(PdbChanged{p->meta.Key(), ToPdbInfo(*p)});
      },
      [box](const auto&, const auto& p) {
        box->Push(PdbChanged{p->meta.Key(), ToPdbInfo(*p)});
      },
      [box](const auto& p) { box->Push(PdbGone{p->meta.Key()}); });

  in.pod_groups = std::make_unique<kube::TypedServedInformer<kube::PodGroup>>(
      client, Served({kube::resources::kPodGroups},
                     "KEP-4671 Workload/PodGroup gangs are not available; copse PodGroups "
                     "(scheduling.copse.dev) are",
                     false));
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

  // copse's CRDs may be installed after copse starts: their informers keep
  // trying (wait_until_served) and pick them up.
  in.copse_pod_groups = std::make_unique<kube::TypedServedInformer<kube::CopsePodGroup>>(
      client, Served({kube::resources::kCopsePodGroups},
                     "copse PodGroup gangs wait until its CRD is installed (deploy/crds)", true));
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

  in.topologies = std::make_unique<kube::TypedServedInformer<kube::Topology>>(
      client,
      Served({kube::resources::kTopologies},
             "gangs get no topology constraints until its CRD is installed (deploy/crds)", true));
  in.topologies->AddEventHandler(
      [box](const auto& t) { box->Push(TopologyChanged{t}); },
      [box](const auto&, const auto& t) { box->Push(TopologyChanged{t}); },
      [box](const auto& t) { box->Push(TopologyGone{t->meta.name}); });
  return in;
}

void Informers::Start() {
  // What the server serves decides the informers' versions. Without an
  // answer the newest versions are tried, and a 404 reads discovery again.
  auto discovery = kube::Discovery::ReadBlocking(
      client, {"", "policy", "scheduling.k8s.io", "scheduling.copse.dev"},
      std::chrono::seconds(10));
  if (!discovery.ok()) {
    LogWarning("scheduler", "reading the API server's discovery failed (" +
                                discovery.error().ToString() +
                                "); assuming the newest API versions");
  }
  const kube::Discovery* served = discovery.ok() ? &discovery.value() : nullptr;
  nodes->Start(served);
  namespaces->Start(served);
  pdbs->Start(served);
  // Gang objects first, so that members find their group when pods arrive.
  // Their informers are not waited for: a cluster without the CRDs still
  // schedules ordinary pods.
  pod_groups->Start(served);
  copse_pod_groups->Start(served);
  topologies->Start(served);
  // One 2 s budget for the three. One that discovery says is not served
  // counts as synced at once (a CRD installed later arrives through its
  // informer); the budget covers a slow list, not a missing CRD.
  const auto group_sync_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  auto sync_left = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
        std::max(group_sync_deadline - std::chrono::steady_clock::now(),
                 std::chrono::steady_clock::duration::zero()));
  };
  pod_groups->WaitForSync(sync_left());
  copse_pod_groups->WaitForSync(sync_left());
  topologies->WaitForSync(sync_left());
  pods->Start(served);
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

std::vector<std::string> Informers::Unsynced() const {
  std::vector<std::string> out;
  auto check = [&](const auto& informer) {
    if (!informer->HasSynced()) out.push_back(informer->Describe());
  };
  check(nodes);
  check(pods);
  check(namespaces);
  check(pdbs);
  return out;
}

}  // namespace copse::scheduler
