#pragma once
// The built-in workload controllers of `copse local` as one object, in the
// role of kube-controller-manager: Deployment, ReplicaSet, Job, StatefulSet
// and DaemonSet controllers on shared informers (pods, ReplicaSets,
// Deployments, Jobs, StatefulSets, DaemonSets, nodes), wired by informer
// events; and, when the server serves the Workload API (read by discovery at
// Start; the newest of v1beta1, v1alpha3 and v1alpha2), informers on its
// Workloads and PodGroups, the Job controller's gangs
// (apiserver/controllers/job_workload.h) and the PodGroup protection
// controller (apiserver/controllers/podgroup_protection.h). Like the Grove operator it talks to the
// API server only through the kube::Client it is given, on kube/controller's runtime.
//
//   kube::IoThread io(1);
//   auto client = kube::Client::Create(config, io.executor()).value();
//   auto controllers = WorkloadControllers::Start(client, {});  // waits for the caches
//   ...
//   controllers.value()->Stop();   // before `client` and `io` go away
//
// Garbage collection of what the controllers create (ReplicaSets, pods) is
// the API server's: every object they create carries a controller
// ownerReference with blockOwnerDeletion.
//
// Events wiring: a pod event enqueues its controller owner (and counts
// towards that owner's expectations); a ReplicaSet event enqueues the
// ReplicaSet and its Deployment; a node event enqueues every DaemonSet;
// updates that change only status (the controllers' own writes) enqueue
// nothing but the owner that reads them.
//
// Thread-safety: Start/Stop from one owner thread; the rest from any thread.
// The client's io_context must keep running until Stop() returns.

#include <chrono>
#include <memory>
#include <string>

#include "apiserver/controllers/job.h"
#include "core/clock.h"
#include "core/result.h"
#include "kube/client.h"

namespace copse::apiserver::controllers {

struct ControllerOptions {
  ControllerOptions() = default;  // not an aggregate (kube/client.h's GCC 12 note)
  std::string namespace_;         // "": all namespaces
  int workers = 2;                // per controller
  // Condition timestamps, availability (minReadySeconds), backoffs and
  // requeue timers. Default: RealClock.
  std::shared_ptr<const Clock> clock;
  std::chrono::milliseconds sync_timeout{30'000};
  bool record_events = true;
  JobOptions job;
};

struct ControllerStats {
  uint64_t reconciles = 0;
  uint64_t errors = 0;
};

class WorkloadControllers {
 public:
  // kUnavailable names the resource whose informer did not sync.
  static Result<std::unique_ptr<WorkloadControllers>> Start(std::shared_ptr<kube::Client> client,
                                                            ControllerOptions options);
  ~WorkloadControllers();  // Stop()
  WorkloadControllers(const WorkloadControllers&) = delete;
  WorkloadControllers& operator=(const WorkloadControllers&) = delete;

  // Stops the controllers, then the informers. Idempotent.
  void Stop();
  bool HasSynced() const;
  // True when no controller has work queued, delayed or in progress.
  bool Idle() const;
  ControllerStats stats() const;

 private:
  struct Impl;
  explicit WorkloadControllers(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace copse::apiserver::controllers
