#include "queue/queueing_hint.h"

#include <utility>

#include "core/check.h"

namespace copse::queue {

void QueueingHintRegistry::Register(PluginId plugin, ClusterEvent event, QueueingHintFn hint) {
  COPSE_CHECK(plugin < kMaxQueuePlugins) << "plugin id " << int{plugin} << " out of range";
  COPSE_CHECK(!event.action.Empty()) << "event " << event.Label() << " has no action";
  registrations_.push_back({event, plugin, std::move(hint)});
}

bool QueueingHintRegistry::IsEventOfInterest(const ClusterEvent& event) const noexcept {
  if (event.IsWildCard()) return true;
  for (const Registration& r : registrations_) {
    if (MatchClusterEvents(r.event, event)) return true;
  }
  return false;
}

bool QueueingHintRegistry::PluginInterestedIn(PluginId plugin,
                                              const ClusterEvent& event) const noexcept {
  for (const Registration& r : registrations_) {
    if (r.plugin == plugin && MatchClusterEvents(r.event, event)) return true;
  }
  return false;
}

RequeueStrategy QueueingHintRegistry::Evaluate(const PodInfo& pod, PluginSet unschedulable_plugins,
                                               PluginSet pending_plugins, const ClusterEvent& event,
                                               const EventObject& old_obj,
                                               const EventObject& new_obj) const {
  const PluginSet rejectors = unschedulable_plugins.Union(pending_plugins);
  if (rejectors.Empty()) return RequeueStrategy::kAfterBackoff;

  if (event.IsWildCard()) {
    if (const PodInfo* target = new_obj.As<PodInfo>();
        target != nullptr && target->uid != pod.uid) {
      return RequeueStrategy::kSkip;
    }
    return RequeueStrategy::kAfterBackoff;
  }

  RequeueStrategy strategy = RequeueStrategy::kSkip;
  for (const Registration& r : registrations_) {
    if (!rejectors.Has(r.plugin) || !MatchClusterEvents(r.event, event)) continue;
    QueueingHint hint = QueueingHint::kQueue;
    if (r.hint) {
      try {
        hint = r.hint(pod, old_obj, new_obj);
      } catch (...) {
        hint = QueueingHint::kQueue;  // never strand a pod on a failing hint
      }
    }
    if (hint == QueueingHint::kQueueSkip) continue;
    if (pending_plugins.Has(r.plugin)) return RequeueStrategy::kImmediately;
    if (pending_plugins.Empty()) return RequeueStrategy::kAfterBackoff;
    strategy = RequeueStrategy::kAfterBackoff;
  }
  return strategy;
}

}  // namespace copse::queue
