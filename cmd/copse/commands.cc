#include "cmd/copse/commands.h"

#include <array>

namespace copse::cmd {

std::span<const Command> Commands() {
  static const Command kCommands[] = {
      {"local", "embedded API server, synthetic nodes and node simulator on loopback", &RunLocal},
      {"run", "the scheduler against a cluster (--kubeconfig F | --in-cluster), leader-elected",
       &RunRun},
      {"bench", "benchmarks on synthetic clusters (copse bench --list)", &RunBench},
      {"grove", "the Grove operator (and its admission webhook) alone, against a cluster",
       &RunGrove},
      {"initc", "Grove's startup-order init container: waits for the cliques it starts after",
       &RunInitc},
      {"record", "record a cluster's history as a trace for replay (--kubeconfig F --out T)",
       &RunRecord},
      {"replay", "replay a trace under scheduler configurations and compare them", &RunReplay},
      {"trace", "synthetic traces for replay (copse trace synth)", &RunTrace},
      {"version", "the version and git commit copse was built from", &RunVersion},
  };
  return kCommands;
}

}  // namespace copse::cmd
