#pragma once
// What the scheduling queue needs to know about a profile's plugins: which
// cluster events can resolve each plugin's rejections (kube's
// EventsToRegister, per plugin name) and the PreEnqueue gates
// (SchedulingGates); and how node updates map to fine-grained actions.
//
// Thread-safety: pure functions.

#include "kube/node.h"
#include "plugins/framework/framework.h"
#include "queue/cluster_event.h"
#include "queue/queueing_hint.h"

namespace copse::scheduler {

// The plugin id the SchedulingGates PreEnqueue gate uses (one past the
// framework's plugins; kube has it as a plugin, copse as a built-in gate).
queue::PluginId SchedulingGatesPluginId(const plugins::Framework& framework);

queue::QueueProfile BuildQueueProfile(const plugins::Framework& framework);

// kube's nodeSchedulingPropertiesChange: allocatable, labels, taints (and
// spec.unschedulable), conditions, annotations. Empty when nothing relevant changed.
queue::ActionType NodeUpdateActions(const kube::Node& old_node, const kube::Node& new_node);

}  // namespace copse::scheduler
