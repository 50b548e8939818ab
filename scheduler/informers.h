#pragma once
// The scheduler's informers, built in one place (Informers::Create), and
// their handlers, which only translate: each event is decoded into the
// scheduler's model on its informer's thread (pure work: a Pod to a PodInfo,
// a Node to a NodeInfo, a PodDisruptionBudget to a PodDisruptionBudgetInfo,
// a node update to the actions that matter to scheduling) and pushed into the
// loop's inbox. No handler touches the cache, the queue or the gang tracker.
//
// Start order: nodes, namespaces and PDBs; then the gang objects and copse
// Topologies, waited for up to 2 s together (so that members find their
// group when the pods arrive; a cluster without the CRDs still schedules
// ordinary pods); then pods.
//
// Thread-safety: Create/Start/Stop from one thread; HasSynced and
// WaitForSync from any.

#include <chrono>
#include <memory>

#include "core/resource_vector.h"
#include "kube/informer.h"
#include "kube/namespace.h"
#include "kube/node.h"
#include "kube/pod.h"
#include "kube/pod_disruption_budget.h"
#include "kube/pod_group.h"
#include "kube/topology.h"
#include "scheduler/inbox.h"

namespace copse::scheduler {

struct Informers {
  std::unique_ptr<kube::TypedInformer<kube::Pod>> pods;
  std::unique_ptr<kube::TypedInformer<kube::Node>> nodes;
  std::unique_ptr<kube::TypedInformer<kube::Namespace>> namespaces;
  std::unique_ptr<kube::TypedInformer<kube::PodDisruptionBudget>> pdbs;
  std::unique_ptr<kube::TypedInformer<kube::PodGroup>> pod_groups;
  std::unique_ptr<kube::TypedInformer<kube::CopsePodGroup>> copse_pod_groups;
  std::unique_ptr<kube::TypedInformer<kube::Topology>> topologies;

  // Builds every informer with its translating handlers; `inbox` and `names`
  // must outlive them. Nothing runs until Start.
  static Informers Create(const std::shared_ptr<kube::Client>& client, Inbox& inbox,
                          ResourceNames& names);

  void Start();
  void Stop();
  // The informers the cycles need before they run: pods, nodes, namespaces, PDBs.
  bool HasSynced() const;
  bool WaitForSync(std::chrono::milliseconds timeout) const;
};

// kube's nodeSchedulingPropertiesChange: allocatable, labels, taints (and
// spec.unschedulable), conditions, annotations. Empty when nothing relevant changed.
ActionType NodeUpdateActions(const kube::Node& old_node, const kube::Node& new_node);

}  // namespace copse::scheduler
