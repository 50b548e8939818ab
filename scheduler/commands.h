#pragma once
// The subcommands of the copse binary. Each takes argv from the subcommand's
// name on (argv[0] == "local", ...) and returns the process exit code:
// 0 success, 1 runtime failure, 2 bad flags (the message names the flag).

#include <span>
#include <string_view>

namespace copse::scheduler {

namespace config {
struct SchedulerConfig;
}
struct SchedulerOptions;
// The runtime options a configuration file asks for (scheduler/cmd_run.cc).
SchedulerOptions SchedulerOptionsFromConfig(const config::SchedulerConfig& cfg);

struct Command {
  std::string_view name;
  std::string_view summary;
  int (*run)(int argc, char** argv);
};

// Registered explicitly, in the order `copse help` lists them.
std::span<const Command> Commands();

int RunLocal(int argc, char** argv);  // scheduler/cmd_local.cc
int RunBench(int argc, char** argv);  // scheduler/cmd_bench.cc
int RunRun(int argc, char** argv);    // scheduler/cmd_run.cc
int RunGrove(int argc, char** argv);  // scheduler/cmd_grove.cc
int RunInitc(int argc, char** argv);  // scheduler/cmd_grove.cc

}  // namespace copse::scheduler
