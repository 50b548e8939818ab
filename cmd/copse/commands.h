#pragma once
// The subcommands of the copse binary. Each takes argv from the subcommand's
// name on (argv[0] == "local", ...) and returns the process exit code:
// 0 success, 1 runtime failure, 2 bad flags (the message names the flag).

#include <span>
#include <string_view>

namespace copse::cmd {

struct Command {
  std::string_view name;
  std::string_view summary;
  int (*run)(int argc, char** argv);
};

// Registered explicitly, in the order `copse help` lists them.
std::span<const Command> Commands();

int RunLocal(int argc, char** argv);    // cmd/copse/local.cc
int RunBench(int argc, char** argv);    // cmd/copse/bench.cc
int RunRun(int argc, char** argv);      // cmd/copse/run.cc
int RunGrove(int argc, char** argv);    // cmd/copse/grove.cc
int RunInitc(int argc, char** argv);    // cmd/copse/grove.cc
int RunVersion(int argc, char** argv);  // cmd/copse/version.cc
int RunReplay(int argc, char** argv);   // cmd/copse/replay.cc
int RunTrace(int argc, char** argv);    // cmd/copse/trace.cc
int RunRecord(int argc, char** argv);   // cmd/copse/record.cc

}  // namespace copse::cmd
