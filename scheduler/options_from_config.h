#pragma once
// The runtime options (scheduler/scheduler.h) a configuration file
// (scheduler/config/config.h) asks for; used by `copse run`, `copse local`,
// `copse replay` and `copse bench --config`.

#include <string>

#include "core/result.h"

namespace copse::scheduler {

namespace config {
struct SchedulerConfig;
}
struct SchedulerOptions;

SchedulerOptions SchedulerOptionsFromConfig(const config::SchedulerConfig& cfg);
// Reads the configuration file at `path` (the in-tree plugins registered)
// and converts it; errors are the loader's (the caller names the flag).
Result<SchedulerOptions> LoadSchedulerOptionsFile(const std::string& path);

}  // namespace copse::scheduler
