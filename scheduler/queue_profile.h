#pragma once
// What the scheduling queue needs to know about a profile, taken from the
// profile's plugins (the framework is the one path):
//   1. PreEnqueue gates: one per PreEnqueue plugin, in run order
//      (SchedulingGates is one of them); a pod a plugin rejects waits gated.
//   2. Queueing hints: each plugin's EventsToRegister (with its hints). A
//      plugin that can reject pods but declares nothing reacts to every event
//      (kube's default for plugins without EnqueueExtensions).
//   3. Cross-topology plugins: PodTopologySpread, whose rejection an assigned
//      pod in the same namespace may resolve (kube hard-codes it too).
//   4. QueueSort: the order of activeQ, from the profile's QueueSort plugin.
//
// Thread-safety: pure functions; the returned profile and comparator refer to
// `framework`, which must outlive the queue.

#include "plugins/framework/framework.h"
#include "queue/queued_unit.h"
#include "queue/queueing_hint.h"

namespace copse::scheduler {

queue::QueueProfile BuildQueueProfile(const plugins::Framework& framework);

// activeQ's ordering: the framework's QueueSort plugin on the units' views.
queue::QueueLessFn QueueSortLess(const plugins::Framework& framework);

}  // namespace copse::scheduler
