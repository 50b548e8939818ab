#include "scheduler/commands.h"

#include <array>

namespace copse::scheduler {

std::span<const Command> Commands() {
  static const std::array<Command, 2> kCommands{{
      {"local", "embedded API server, synthetic nodes and node simulator on loopback", &RunLocal},
      {"bench", "benchmarks on synthetic clusters (copse bench --list)", &RunBench},
  }};
  return kCommands;
}

}  // namespace copse::scheduler
