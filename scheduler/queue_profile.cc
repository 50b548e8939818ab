#include "scheduler/queue_profile.h"

#include "plugins/framework/plugin.h"

namespace copse::scheduler {

queue::QueueProfile BuildQueueProfile(const plugins::Framework& framework) {
  queue::QueueProfile profile;
  profile.scheduler_name = framework.scheduler_name();
  for (const plugins::Framework::PreEnqueueEntry& entry : framework.PreEnqueuePlugins()) {
    const plugins::PreEnqueuePlugin* plugin = entry.plugin;
    profile.pre_enqueue.push_back({static_cast<queue::PluginId>(entry.index),
                                   std::string(plugin->Name()), [plugin](const PodInfo& pod) {
                                     return plugin->PreEnqueue(pod).IsSuccess()
                                                ? queue::GateDecision::kAdmit
                                                : queue::GateDecision::kGate;
                                   }});
  }
  for (size_t i = 0; i < framework.num_plugins(); ++i) {
    const auto index = static_cast<plugins::PluginIndex>(i);
    const plugins::Plugin& plugin = framework.plugin(index);
    const auto id = static_cast<queue::PluginId>(index);
    if (const auto* extensions = dynamic_cast<const plugins::EnqueueExtensions*>(&plugin)) {
      for (plugins::ClusterEventWithHint& registration : extensions->EventsToRegister()) {
        profile.hints.Register(id, registration.event, std::move(registration.hint));
      }
    } else if (framework.CanReject(index)) {
      profile.hints.Register(id, ClusterEvent{EventResource::kWildCard, kActionAll});
    }
  }
  if (std::optional<plugins::PluginIndex> spread = framework.FindPlugin("PodTopologySpread")) {
    profile.cross_topology_plugins.Insert(static_cast<queue::PluginId>(*spread));
  }
  return profile;
}

queue::QueueLessFn QueueSortLess(const plugins::Framework& framework) {
  const plugins::QueueSortPlugin* sort = &framework.queue_sort();
  return [sort](const queue::QueuedUnitView& a, const queue::QueuedUnitView& b) {
    return sort->Less(plugins::QueuedPodView(a.pod, a.timestamp, a.priority),
                      plugins::QueuedPodView(b.pod, b.timestamp, b.priority));
  };
}

}  // namespace copse::scheduler
