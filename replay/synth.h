#pragma once
// `copse trace synth`: synthetic traces for people without a cluster, in the
// trace format (replay/trace.h), from a seeded random generator (the same
// options and seed give the same bytes).
//
//   1. The cluster: `nodes` synthetic Nodes of `node_shape` spread over
//      `topology` (apiserver/synthetic.h: labels copse.dev/block,
//      copse.dev/rack, ...), a copse Topology "trace" over those labels, the
//      namespace "trace", PriorityClasses trace-low (100) and trace-high (1000).
//   2. Jobs arrive as a Poisson process of `jobs_per_hour`, modulated by a
//      day/night cycle of amplitude `diurnal_amplitude` (thinning).
//   3. A job is a gang with probability `gang_fraction` (size drawn from
//      `gang_sizes`; a copse PodGroup with minMember = size, rack required
//      with probability `rack_required_fraction`, else block required) or a
//      single pod. GPUs per pod come from `gpus_per_pod` (capped so that a
//      rack-required gang fits one rack); CPU and memory scale with GPUs.
//   4. A job runs a log-normal time (median `median_runtime`, shape
//      `runtime_sigma`); priority trace-high with `high_priority_fraction`.
//
// Thread-safety: pure function.

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "core/result.h"

namespace copse::replay {

struct SynthOptions {
  uint64_t seed = 1;
  int nodes = 64;
  std::string node_shape = "cpu=64,memory=512Gi,nvidia.com/gpu=8";
  std::string topology = "block=2,rack=4";
  std::chrono::milliseconds duration = std::chrono::hours(2);
  double jobs_per_hour = 120;
  double diurnal_amplitude = 0.3;  // 0: a flat rate; < 1
  double gang_fraction = 0.4;
  std::vector<int> gang_sizes = {2, 4, 8, 16};
  std::vector<int> gpus_per_pod = {1, 2, 4, 8};
  double rack_required_fraction = 0.5;
  std::chrono::milliseconds median_runtime = std::chrono::minutes(20);
  double runtime_sigma = 1.0;
  double high_priority_fraction = 0.3;
  std::string scheduler_name = "copse-scheduler";
};

// Writes the whole trace to `out`. Errors (kInvalid) name the option.
Status WriteSynthTrace(const SynthOptions& options, std::ostream& out);

}  // namespace copse::replay
