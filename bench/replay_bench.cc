// Scenario "replay": how long `copse replay` takes on a day of a large
// cluster (issue 19: a 24-hour trace of 2,000 nodes and ~100k pods replays
// in <= 2 minutes per configuration).
//
//   1. The trace, synthesized in memory with the generator of
//      `copse trace synth --nodes 2000 --topology block=4,rack=8
//      --duration 24h --jobs-per-hour 1150 --seed 7` (replay/synth.h; the
//      other options at their defaults) and parsed. Not counted:
//      synth_seconds reports it separately.
//   2. Per configuration (deploy/examples/traces/pack.yaml and spread.yaml,
//      embedded at build time; or --config), ReplayTrace as `copse replay`
//      runs it (replay/replayer.h): wall seconds, process CPU seconds (the
//      embedded API server, the scheduler and the replay's driver together),
//      steps, cycles, pods and gangs placed, and that replay's peak RSS
//      (VmHWM reset before it through /proc/self/clear_refs; n/a where the
//      kernel refuses).
//
// --nodes N scales the cluster (racks of about 62 nodes, at most 4 blocks x
// 8 racks) and the arrival rate with it; --pods N sets the arrival rate for
// about N pods instead (the trace's count is reported). --timeout S bounds
// each replay (default 900 s): a replay that does not finish fails the run.
// pods_per_second, the latencies and the split CPU figures are n/a: a replay
// runs on a virtual clock, one process for server and scheduler.
// Target: replay seconds per config <= 120, per configuration.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench.h"
#include "bench/replay_configs.h"
#include "plugins/defaults/defaults.h"
#include "plugins/framework/registry.h"
#include "replay/replayer.h"
#include "replay/synth.h"
#include "replay/trace.h"
#include "scheduler/config/config.h"
#include "scheduler/options_from_config.h"

namespace copse::bench {
namespace replay_bench {
namespace {

// The trace: 2,000 nodes, 1,150 jobs per hour for 24 hours, seed 7,
// which is 100,595 pods.
constexpr int kFullNodes = 2000;
constexpr double kFullJobsPerHour = 1150;
constexpr int64_t kFullPods = 100'595;
constexpr double kTargetSeconds = 120;

// Resets VmHWM to the current RSS (Linux >= 4.0); false when refused.
bool ResetPeakRss() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.close();
  return static_cast<bool>(out);
}

std::string Topology(int nodes) {
  const int racks = std::clamp(nodes / 62, 1, 32);
  const int blocks = racks >= 8 ? 4 : 1;
  return "block=" + std::to_string(blocks) + ",rack=" + std::to_string(racks / blocks);
}

Result<replay::ReplayConfig> EmbeddedConfig(const std::string& name, std::string_view yaml) {
  plugins::Registry registry;
  if (Status s = plugins::RegisterDefaultPlugins(registry); !s.ok()) return s.error();
  auto cfg = scheduler::config::ParseSchedulerConfig(yaml, registry);
  if (!cfg.ok()) {
    return MakeError(ErrorCode::kInternal, "embedded " + name + ": " + cfg.error().message);
  }
  replay::ReplayConfig rc;
  rc.name = name;
  rc.options = scheduler::SchedulerOptionsFromConfig(*cfg);
  return rc;
}

}  // namespace
}  // namespace replay_bench

Result<BenchResult> RunReplayBench(const BenchOptions& options, Progress& progress) {
  using namespace replay_bench;
  replay::SynthOptions synth;
  synth.seed = 7;
  synth.nodes = options.nodes > 0 ? static_cast<int>(options.nodes) : kFullNodes;
  synth.topology = Topology(synth.nodes);
  synth.duration = std::chrono::hours(24);
  synth.jobs_per_hour = options.pods > 0
                            ? kFullJobsPerHour * static_cast<double>(options.pods) / kFullPods
                            : kFullJobsPerHour * synth.nodes / kFullNodes;

  std::vector<replay::ReplayConfig> configs;
  if (!options.scheduler_config.empty()) {
    auto loaded = scheduler::LoadSchedulerOptionsFile(options.scheduler_config);
    if (!loaded.ok()) {
      return MakeError(ErrorCode::kInvalid,
                       "--config " + options.scheduler_config + ": " + loaded.error().message);
    }
    replay::ReplayConfig rc;
    const size_t slash = options.scheduler_config.rfind('/');
    rc.name = slash == std::string::npos ? options.scheduler_config
                                         : options.scheduler_config.substr(slash + 1);
    rc.options = std::move(loaded).value();
    configs.push_back(std::move(rc));
  } else {
    for (const auto& [name, yaml] :
         {std::pair{"pack.yaml", kReplayPackYaml}, std::pair{"spread.yaml", kReplaySpreadYaml}}) {
      auto rc = EmbeddedConfig(name, yaml);
      if (!rc.ok()) return rc.error();
      configs.push_back(std::move(rc).value());
    }
  }

  BenchResult result;
  result.scenario = "replay";
  result.nodes = synth.nodes;
  const auto synth_start = std::chrono::steady_clock::now();
  replay::Trace trace;
  {
    std::stringstream text;
    if (Status s = replay::WriteSynthTrace(synth, text); !s.ok()) {
      return MakeError(ErrorCode::kInvalid, "replay trace: " + s.error().message);
    }
    auto parsed = replay::ParseTrace(text);
    if (!parsed.ok()) return parsed.error();
    trace = std::move(parsed).value();
  }
  const double synth_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - synth_start).count();
  int64_t trace_pods = 0;
  for (const replay::TraceEvent& e : trace.events) trace_pods += e.kind == "Pod";
  progress.Done("synth", static_cast<int64_t>(trace.events.size()), synth_seconds);
  result.extras["synth_seconds"] = synth_seconds;
  result.extras["trace_events"] = static_cast<double>(trace.events.size());
  result.pods = trace_pods;
  int64_t peak = PeakRssBytes();

  replay::ReplayOptions replay_options;
  replay_options.timeout =
      std::chrono::seconds(options.timeout_seconds > 0 ? options.timeout_seconds : 900);
  if (!options.quiet) {
    replay_options.progress = [](const std::string& line) {
      std::fprintf(stderr, "  %s\n", line.c_str());
    };
  }
  std::optional<int64_t> fewest_placed;
  for (const replay::ReplayConfig& config : configs) {
    const std::string& name = config.name;
    auto figure = [&](const char* what) { return std::string(what) + "[" + name + "]"; };
    const bool peak_reset = ResetPeakRss();
    const double cpu_before = ProcessCpuSeconds();
    const auto start = std::chrono::steady_clock::now();
    Result<replay::ConfigResult> r = replay::ReplayTrace(trace, config, replay_options);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double cpu = ProcessCpuSeconds() - cpu_before;
    const int64_t config_peak = PeakRssBytes();
    peak = std::max(peak, config_peak);
    const std::string target = "replay seconds per config <= 120 [" + name + "]";
    if (!r.ok()) {
      if (r.error().code != ErrorCode::kTimeout) {
        return MakeError(r.error().code, name + ": " + r.error().message);
      }
      // Its figures are not measured (missing, never 0); the run fails.
      result.timed_out = true;
      result.targets[target] = false;
      result.failures.push_back(r.error().message);
      continue;
    }
    progress.Done("replay", r->steps, seconds);
    result.extras[figure("replay_seconds")] = seconds;
    result.extras[figure("cpu_seconds")] = cpu;
    result.extras[figure("steps")] = static_cast<double>(r->steps);
    result.extras[figure("cycles")] = static_cast<double>(r->cycles);
    result.extras[figure("pods_placed")] = static_cast<double>(r->pods_placed);
    result.extras[figure("gangs")] = static_cast<double>(r->gangs);
    result.extras[figure("gangs_placed")] = static_cast<double>(r->gangs_placed);
    result.extras[figure("victims")] = static_cast<double>(r->victims);
    result.extras[figure("mean_gpu_utilization")] = r->mean_gpu_utilization;
    if (peak_reset) result.extras[figure("peak_rss_bytes")] = static_cast<double>(config_peak);
    result.targets[target] = seconds <= kTargetSeconds;
    fewest_placed = std::min(fewest_placed.value_or(r->pods_placed), r->pods_placed);
    if (r->pods != trace_pods) {
      result.failures.push_back(name + ": replayed " + std::to_string(r->pods) + " pods of " +
                                std::to_string(trace_pods) + " in the trace");
    }
    if (r->gangs_partial > 0) {
      result.failures.push_back(name + ": " + std::to_string(r->gangs_partial) +
                                " gangs bound below their minimum");
    }
    if (r->max_nodes_over_allocatable > 0) {
      result.failures.push_back(name + ": " + std::to_string(r->max_nodes_over_allocatable) +
                                " nodes over their allocatable at once");
    }
  }
  result.pods_bound = fewest_placed.value_or(0);
  result.peak_rss_bytes = peak;
  return result;
}

}  // namespace copse::bench
