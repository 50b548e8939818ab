#include "scheduler/commands.h"

#include <array>

namespace copse::scheduler {

std::span<const Command> Commands() {
  static const Command kCommands[] = {
      {"local", "embedded API server, synthetic nodes and node simulator on loopback", &RunLocal},
      {"run", "the scheduler against a cluster (--kubeconfig F | --in-cluster), leader-elected",
       &RunRun},
      {"bench", "benchmarks on synthetic clusters (copse bench --list)", &RunBench},
  };
  return kCommands;
}

}  // namespace copse::scheduler
