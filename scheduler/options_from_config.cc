#include "scheduler/options_from_config.h"

#include <chrono>

#include "plugins/defaults/defaults.h"
#include "plugins/framework/registry.h"
#include "scheduler/config/config.h"
#include "scheduler/scheduler.h"

namespace copse::scheduler {

Result<SchedulerOptions> LoadSchedulerOptionsFile(const std::string& path) {
  plugins::Registry registry;
  if (Status s = plugins::RegisterDefaultPlugins(registry); !s.ok()) return s.error();
  auto cfg = config::LoadSchedulerConfigFile(path, registry);
  if (!cfg.ok()) return cfg.error();
  return SchedulerOptionsFromConfig(*cfg);
}

SchedulerOptions SchedulerOptionsFromConfig(const config::SchedulerConfig& cfg) {
  SchedulerOptions options;
  options.profiles = cfg.profiles;
  options.pod_initial_backoff =
      std::chrono::duration_cast<Clock::Duration>(cfg.pod_initial_backoff);
  options.pod_max_backoff = std::chrono::duration_cast<Clock::Duration>(cfg.pod_max_backoff);
  options.pod_max_in_unschedulable =
      std::chrono::duration_cast<Clock::Duration>(cfg.pod_max_in_unschedulable_pods);
  options.parallelism = cfg.parallelism;
  options.pod_group_initial_backoff =
      std::chrono::duration_cast<Clock::Duration>(cfg.pod_group_initial_backoff);
  options.pod_group_max_backoff =
      std::chrono::duration_cast<Clock::Duration>(cfg.pod_group_max_backoff);
  options.gang_burst_window = std::chrono::duration_cast<Clock::Duration>(cfg.gang_burst_window);
  options.gang_burst_max_skips = cfg.gang_burst_max_skips;
  options.gang_burst_plan_budget =
      std::chrono::duration_cast<Clock::Duration>(cfg.gang_burst_plan_budget);
  options.gang_recovery_timeout =
      std::chrono::duration_cast<Clock::Duration>(cfg.gang_recovery_timeout);
  return options;
}

}  // namespace copse::scheduler
