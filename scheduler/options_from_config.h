#pragma once
// The runtime options (scheduler/scheduler.h) a configuration file
// (scheduler/config/config.h) asks for; used by `copse run` and `copse local`.

namespace copse::scheduler {

namespace config {
struct SchedulerConfig;
}
struct SchedulerOptions;

SchedulerOptions SchedulerOptionsFromConfig(const config::SchedulerConfig& cfg);

}  // namespace copse::scheduler
