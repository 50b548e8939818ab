#pragma once
// The scheduler's informers, built in one place (Informers::Create), and
// their handlers, which only translate: each event is decoded into the
// scheduler's model on its informer's thread (pure work: a Pod to a PodInfo,
// a Node to a NodeInfo, a PodDisruptionBudget to a PodDisruptionBudgetInfo,
// a node update to the actions that matter to scheduling) and pushed into the
// loop's inbox. No handler touches the cache, the queue or the gang tracker.
//
// Each informer watches what the server serves (kube/served_informer.h):
// Start reads discovery once and picks each resource's version
// (PodDisruptionBudgets in policy/v1 or policy/v1beta1, KEP-4671 PodGroups
// only where scheduling.k8s.io/v1alpha2 is served, copse's CRDs waited for
// until installed); a resource not served gets one log line saying what
// copse does without it.
//
// Start order: nodes, namespaces and PDBs; then the gang objects and copse
// Topologies, waited for up to 2 s together (so that members find their
// group when the pods arrive; a cluster without the CRDs still schedules
// ordinary pods); then pods.
//
// Thread-safety: Create/Start/Stop from one thread; HasSynced, WaitForSync
// and Unsynced from any.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "core/resource_vector.h"
#include "kube/namespace.h"
#include "kube/node.h"
#include "kube/pod.h"
#include "kube/pod_disruption_budget.h"
#include "kube/pod_group.h"
#include "kube/served_informer.h"
#include "kube/topology.h"
#include "scheduler/inbox.h"

namespace copse::scheduler {

struct Informers {
  std::shared_ptr<kube::Client> client;  // reads discovery at Start
  std::unique_ptr<kube::TypedServedInformer<kube::Pod>> pods;
  std::unique_ptr<kube::TypedServedInformer<kube::Node>> nodes;
  std::unique_ptr<kube::TypedServedInformer<kube::Namespace>> namespaces;
  std::unique_ptr<kube::TypedServedInformer<kube::PodDisruptionBudget>> pdbs;
  std::unique_ptr<kube::TypedServedInformer<kube::PodGroup>> pod_groups;
  std::unique_ptr<kube::TypedServedInformer<kube::CopsePodGroup>> copse_pod_groups;
  std::unique_ptr<kube::TypedServedInformer<kube::Topology>> topologies;

  // Builds every informer with its translating handlers; `inbox` and `names`
  // must outlive them. Nothing runs until Start.
  static Informers Create(const std::shared_ptr<kube::Client>& client, Inbox& inbox,
                          ResourceNames& names);

  // Reads the server's discovery (up to 10 s; without an answer the newest
  // versions are tried, and a 404 reads it again) and starts the informers.
  void Start();
  void Stop();
  // The informers the cycles need before they run: pods, nodes, namespaces, PDBs.
  bool HasSynced() const;
  bool WaitForSync(std::chrono::milliseconds timeout) const;
  // Those of them not synced, each as "<api version> <resource>: not synced
  // (last error: ...)".
  std::vector<std::string> Unsynced() const;
};

// kube's nodeSchedulingPropertiesChange: allocatable, labels, taints (and
// spec.unschedulable), conditions, annotations. Empty when nothing relevant changed.
ActionType NodeUpdateActions(const kube::Node& old_node, const kube::Node& new_node);

}  // namespace copse::scheduler
