#pragma once
// Queueing hints and PreEnqueue gates: what the framework tells the queue
// about its plugins, independent of the plugin interfaces (queue/ depends on
// core/ only; plugins are named by their profile-local PluginId). The
// scheduler builds a QueueProfile from each profile's plugins
// (scheduler/queue_profile.h): their EventsToRegister and hints, their
// PreEnqueue checks, their QueueSort.
//
//   QueueProfile profile;
//   profile.scheduler_name = "copse-scheduler";
//   profile.hints.Register(fit_id, {EventResource::kNode, kActionAdd |
//   kActionUpdateNodeAllocatable},
//                          [](const PodInfo& pod, const EventObject& old_obj, const EventObject&
//                          new_obj) {
//                            return QueueingHint::kQueue;  // read new_obj.As<NodeInfo>() to decide
//                          });
//   profile.pre_enqueue.push_back({gates_id, "SchedulingGates", [](const PodInfo& pod) { ... }});
//
// Hint functions and gates run inside queue calls: they must be cheap, must
// not block, and must not call back into the queue. A hint function that
// throws counts as kQueue (kube treats hint errors the same way, so no pod
// gets stuck); a gate that throws keeps the pod gated.
//
// Thread-safety: a registry is built before the queue and read-only after;
// const methods are safe to call concurrently.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/pod_info.h"
#include "queue/cluster_event.h"
#include "queue/plugin_set.h"

namespace copse::queue {

using copse::QueueingHint;
using copse::QueueingHintFn;

// How a unit leaves the unschedulable pool, strongest last (kube's
// queueingStrategy).
enum class RequeueStrategy : uint8_t {
  kSkip,          // stay unschedulable
  kAfterBackoff,  // backoffQ while the backoff lasts, else activeQ
  kImmediately,   // activeQ now (a Pending plugin's hint said Queue)
};

// Which events can resolve which plugin's rejections.
//
// Evaluate (kube's isPodWorthRequeuing), for one pod and one event:
//   1. No rejecting plugin recorded (the attempt failed with an error):
//      kAfterBackoff.
//   2. A wildcard event: kSkip if its new object is a PodInfo with another
//      uid (a targeted ForceActivate for another pod), else kAfterBackoff.
//   3. For every registration whose event matches and whose plugin is among
//      the rejectors (unschedulable or pending), run its hint (none: kQueue).
//      kQueue from a pending plugin returns kImmediately at once; kQueue from
//      an unschedulable plugin gives kAfterBackoff (returned at once when the
//      pod has no pending plugins, which alone could raise it further).
//   4. Otherwise kSkip.
class QueueingHintRegistry {
 public:
  // `plugin` becomes interested in `event`; `hint` decides per pod (empty:
  // always kQueue). A plugin may register several events.
  void Register(PluginId plugin, ClusterEvent event, QueueingHintFn hint = {});

  // Some registration matches the event (wildcard events always do).
  bool IsEventOfInterest(const ClusterEvent& event) const noexcept;
  // `plugin` registered an event matching `event`.
  bool PluginInterestedIn(PluginId plugin, const ClusterEvent& event) const noexcept;

  RequeueStrategy Evaluate(const PodInfo& pod, PluginSet unschedulable_plugins,
                           PluginSet pending_plugins, const ClusterEvent& event,
                           const EventObject& old_obj, const EventObject& new_obj) const;

  size_t size() const noexcept { return registrations_.size(); }

 private:
  struct Registration {
    ClusterEvent event;
    PluginId plugin;
    QueueingHintFn hint;
  };
  std::vector<Registration> registrations_;
};

enum class GateDecision : uint8_t { kAdmit, kGate };

// A PreEnqueue check: kGate keeps the pod out of activeQ (in the gated set,
// costing no scheduling cycles) until an update of the pod or an event the
// gating plugin registered readmits it.
using PreEnqueueFn = std::function<GateDecision(const PodInfo& pod)>;

struct PreEnqueueGate {
  PluginId plugin = 0;
  std::string name;  // for logs ("SchedulingGates")
  PreEnqueueFn fn;
};

// The queue-facing part of one scheduling profile.
struct QueueProfile {
  // Pods whose spec.schedulerName equals this use the profile; "" matches
  // every pod (the usual single-profile setup).
  std::string scheduler_name;
  QueueingHintRegistry hints;
  // Run in order; the first kGate wins.
  std::vector<PreEnqueueGate> pre_enqueue;
  // Plugins whose rejection an assigned-pod event in the same namespace can
  // resolve whatever the pod's own terms say (kube hard-codes
  // PodTopologySpread for AssignedPodAdded/Updated).
  PluginSet cross_topology_plugins;
};

}  // namespace copse::queue
