#pragma once
// `copse record` and `copse local --record`: a cluster's history written as a
// trace (replay/trace.h, replay/README.md) for `copse replay`.
//
// Recorder::Start:
//   1. Creates OUT.tmp next to OUT (a path that cannot be written fails
//      before anything is read from the server).
//   2. Reads discovery and runs one ServedInformer (list + watch, relist on
//      410 Gone, kube/served_informer.h) per kind, in the version the server
//      serves: Namespaces, Nodes, PriorityClasses, copse Topologies,
//      PodDisruptionBudgets (policy/v1, or v1beta1 written as policy/v1),
//      Workloads and PodGroups of scheduling.k8s.io/v1alpha2 where served,
//      copse PodGroups (its CRDs are picked up when installed later), Pods.
//      Objects are reduced (ReduceObject) as they are decoded: env values,
//      secrets and annotations outside scheduling are never kept, let alone
//      written.
//   3. Once every kind served at start has listed, that state is t = 0: the
//      header, one `init` line per object (Namespaces, Nodes,
//      PriorityClasses, Topologies, PDBs, Workloads, PodGroups, Pods), then
//      `bound` at t = 0 for the pods that were already bound. Those pods
//      keep spec.nodeName in their init line: a replay starts from the
//      recorded cluster's occupancy.
//   4. Then, as watch events arrive, t = milliseconds since t = 0:
//        create  an object that appeared (a pod without spec.nodeName: the
//                replay decides where it goes). A pod created with
//                scheduling gates is written when its gates are gone (it
//                cannot be scheduled before, and the replay runs no
//                controller that would lift them).
//        bound   a pod got spec.nodeName.
//        end     a bound pod became Succeeded or Failed, or was deleted
//                (evicted pods included): with `bound`, its runtime.
//        delete  an object was deleted; a pod only when it was never bound
//                (a bound pod's deletion is its `end`: a later delete would
//                cut short a pod the replay bound later than the cluster did).
//      Other updates are not written: the replay reads none of them (a
//      PodGroup's status, a pod's phase while it runs). A Node keeps the
//      state it had when first seen: later changes of its labels, taints,
//      unschedulable or allocatable are not recorded (the format has no
//      update; a delete + create would make the replay drop the node's pods).
//      A PodDisruptionBudget of policy/v1beta1 with an empty selector
//      (which selects no pod there, and every pod in policy/v1) is left out.
// Lines are flushed to OUT.tmp as they are written (it can be followed while
// recording). Recorder::Stop stops the informers, writes the header again
// with the duration (line 1 is padded with spaces so that it is rewritten in
// place) and renames OUT.tmp to OUT, so OUT appears complete or not at all.
//
// Thread-safety: Start/Stop/stats may be called from any thread but the
// client's executor; handlers run on the informers' strands and serialize on
// one mutex, which also orders the lines (t never decreases). The client and
// its executor must outlive the Recorder.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/clock.h"
#include "core/result.h"

namespace copse::kube {
class Client;
}

namespace copse::replay {

struct RecorderOptions {
  std::string out;  // the trace's path
  // Written into the header, for the replay's report.
  std::string rack_label = "copse.dev/rack";
  std::string block_label = "copse.dev/block";
  std::string gpu_resource = "nvidia.com/gpu";
  // How long the initial lists may take before Start fails.
  std::chrono::milliseconds sync_timeout{60'000};
  std::shared_ptr<const Clock> clock;  // default: RealClock
  // Progress and warnings (a kind the server does not serve, list errors);
  // default: the leveled logger (core/log.h), component "record": progress
  // at level 0 (always printed), list and watch errors as warnings.
  std::function<void(const std::string&)> log;
};

struct RecorderStats {
  int64_t init = 0;
  int64_t create = 0;
  int64_t bound = 0;
  int64_t end = 0;
  int64_t deleted = 0;
  int64_t duration_ms = 0;  // since t = 0 (final after Stop)
};

class Recorder {
 public:
  // Steps 1-3 above. Errors: kInvalid naming the file when OUT.tmp cannot be
  // written; the discovery error when the server cannot be reached
  // (kUnavailable, kUnauthorized, ...); kTimeout naming the resource whose
  // list did not complete within sync_timeout. On error nothing is left
  // behind.
  static Result<std::unique_ptr<Recorder>> Start(std::shared_ptr<kube::Client> client,
                                                 RecorderOptions options);
  ~Recorder();  // Stop(), its error dropped
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // Stops recording and completes OUT. Idempotent (later calls return the
  // first result). Errors: kInvalid naming the file when a write, the
  // header rewrite or the rename failed.
  Status Stop();
  RecorderStats stats() const;

 private:
  struct Impl;
  explicit Recorder(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace copse::replay
