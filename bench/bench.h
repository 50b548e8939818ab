#pragma once
// Benchmark scenarios of `copse bench` (README, "Using it"): each builds a
// synthetic cluster, drives a workload through the real HTTP path, and
// returns its figures. Scenarios are registered explicitly in Scenarios().
//
// Results carry the fields every scenario reports (scenario, nodes, pods,
// pods_per_second, p50_ms, p99_ms, scheduler_cpu_seconds, peak_rss_bytes)
// plus named extras (e.g. creates_per_second, gang_attempt_ms).

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace copse::bench {

struct BenchOptions {
  int64_t pods = 0;     // 0: the scenario's default
  int64_t nodes = 0;    // 0: the scenario's default
  bool tls = false;     // talk HTTPS instead of plain HTTP on loopback
  bool quiet = false;   // no progress lines
  int connections = 8;  // the creator's concurrent client connections
  // Seconds to wait for the measured pods to be bound; 0: the scenario's default.
  int64_t timeout_seconds = 0;
  // An external API server (kubeconfig file); "" runs the embedded one.
  std::string kubeconfig;
  bool allow_remote = false;  // allow a kubeconfig server that is not on loopback
  // "copse" (in-process) or "external" (already running, e.g. kube-scheduler).
  std::string scheduler = "copse";
  std::string scheduler_name;  // the pods' schedulerName; "" : copse-scheduler / default-scheduler
  int64_t scheduler_pid = 0;   // external scheduler's pid, for its CPU figure; 0: not measured
  // apiserver: the embedded store on this data directory (apiserver/commit_log.h),
  // so every write waits for its fsync'd batch; "" keeps it in memory.
  std::string data_dir;
  // The in-process scheduler's configuration file (as `copse run --config`
  // reads it); "" runs copse's default profile. It must have a profile for
  // the pods' schedulerName. Scenarios that start copse through the harness
  // (basic, gang, gang-large, gang-preempt, topology, topology-large, scale).
  std::string scheduler_config;
  // quality: one line per instance on stderr (its gangs, copse's placement,
  // the optimum and first fit), to find where copse loses.
  bool detail = false;
  // workload-gang's shape; 0 (or unset) is the scenario's default.
  struct GangShape {
    int64_t gang_size = 0;                // pods per gang (default 4)
    int64_t gpus_per_pod = 0;             // default 2
    int64_t gpus_per_node = 0;            // default 8
    int64_t racks = 0;                    // default: one per 8 nodes
    std::optional<double> rack_share;     // share of gangs that require one rack (0.5)
    std::optional<double> over_capacity;  // gangs offered / gangs that fit (1.1)
    int64_t settle_seconds = 0;           // the run ends this long after the last bind (15)
  } gang_shape;
};

// A figure that was not measured stays nullopt: JSON null, printed "n/a".
struct BenchResult {
  std::string scenario;
  int64_t nodes = 0;
  int64_t pods = 0;        // measured pods submitted
  int64_t pods_bound = 0;  // of those, bound when the run ended
  std::optional<double> pods_per_second;
  std::optional<double> p50_ms;
  std::optional<double> p99_ms;
  std::optional<double> scheduler_cpu_seconds;
  std::optional<double> api_server_cpu_seconds;
  int64_t peak_rss_bytes = 0;
  // The run hit its deadline: the command exits non-zero.
  bool timed_out = false;
  // For --plot (not in the JSON): each bound pod's bind time in seconds
  // after the first create, and each one's create -> bind latency in ms.
  std::vector<double> bind_seconds;
  std::vector<double> latencies_ms;
  // Every pod of the bench namespace seen bound and not deleted (warm-up
  // included) -> its node, for the invariant checks of the tests.
  std::map<std::string, std::string> placement;
  // Scenario-specific figures, printed and written in this (name) order; NaN
  // is a figure that was not measured (JSON null, printed "n/a").
  std::map<std::string, double> extras;
  // Target checks: name -> whether the measured figure met its target.
  std::map<std::string, bool> targets;
  // Broken invariants (e.g. a gang left below its minimum): the command
  // prints them and exits non-zero, as for a timeout.
  std::vector<std::string> failures;
};

// Progress reporting: scenarios call it for each phase; it prints a line at
// most every 250 ms unless quiet.
class Progress {
 public:
  explicit Progress(bool quiet) : quiet_(quiet) {}
  void Update(std::string_view phase, int64_t done, int64_t total);
  void Done(std::string_view phase, int64_t total, double seconds);

 private:
  bool quiet_;
  int64_t last_print_ns_ = 0;
};

struct Scenario {
  std::string_view name;
  std::string_view summary;
  std::function<Result<BenchResult>(const BenchOptions&, Progress&)> run;
  bool external = false;          // runs against --kubeconfig servers too
  bool takes_config = true;       // its scheduler can be configured (--config)
  bool takes_gang_shape = false;  // reads BenchOptions::gang_shape (--gang-size, ...)
};

std::span<const Scenario> Scenarios();

// Process figures.
int64_t PeakRssBytes();      // VmHWM
int64_t CurrentRssBytes();   // VmRSS
double ProcessCpuSeconds();  // user + system
double ThreadCpuSeconds();   // the calling thread's user + system
// User + system CPU seconds of this process's threads named `name` (summed
// over every live thread of that name, from /proc/self/task).
double NamedThreadsCpuSeconds(const std::string& name);
// Names the calling thread (at most 15 characters), so that its CPU can be
// attributed with NamedThreadsCpuSeconds.
void NameThisThread(const char* name);

// Latency percentiles (ms) over samples in nanoseconds; sorts `samples`.
double PercentileMs(std::vector<int64_t>& samples, double p);

// The table `copse bench` prints and the JSON it writes.
std::string FormatTable(const BenchResult& result);
std::string ToJson(const BenchResult& result);
// A self-contained SVG: pods bound over time and the latency CDF (--plot).
std::string PlotSvg(const BenchResult& result);

// Scenario implementations (one file each).
Result<BenchResult> RunApiServerBench(const BenchOptions& options, Progress& progress);
Result<BenchResult> RunBasicBench(const BenchOptions& options, Progress& progress);
Result<BenchResult> RunGangBench(const BenchOptions& options, Progress& progress);
Result<BenchResult> RunGangLargeBench(const BenchOptions& options, Progress& progress);
Result<BenchResult> RunGangPreemptBench(const BenchOptions& options, Progress& progress);
Result<BenchResult> RunTopologyBench(const BenchOptions& options, Progress& progress);
Result<BenchResult> RunTopologyLargeBench(const BenchOptions& options, Progress& progress);
Result<BenchResult> RunGroveBench(const BenchOptions& options, Progress& progress);
Result<BenchResult> RunQualityBench(const BenchOptions& options, Progress& progress);
Result<BenchResult> RunQualityBurstBench(const BenchOptions& options, Progress& progress);
Result<BenchResult> RunScaleBench(const BenchOptions& options, Progress& progress);
Result<BenchResult> RunReplayBench(const BenchOptions& options, Progress& progress);
Result<BenchResult> RunWorkloadGangBench(const BenchOptions& options, Progress& progress);

}  // namespace copse::bench
