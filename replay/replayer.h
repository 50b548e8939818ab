#pragma once
// `copse replay`: one trace (replay/trace.h) replayed against an embedded API
// server with copse scheduling under one configuration, on a virtual clock.
//
// ReplayTrace, per configuration:
//   1. A Store and an ApiServer (plain HTTP on loopback) on a FakeClock that
//      starts at the trace's start; copse's CRDs; the trace's initial
//      objects written into the Store (pods and PodGroups over HTTP, once
//      the replay's watches run: a recorded pod with spec.nodeName is bound
//      at t = 0); the scheduler (SchedulerOptions from the configuration,
//      the same FakeClock, a fixed seed) as an HTTP client of that server,
//      like `copse local`.
//   2. Steps, in time order. At each step the scheduler is paused (it applies
//      events but starts no cycle), the step's writes happen — trace creates
//      and deletes over HTTP in trace order, pods whose runtime is over
//      made Succeeded then deleted in the Store (the kubelet's and the
//      owner's part; a pod name used again is another pod, and its earlier
//      pod ends at that create), a deleted Node's pods deleted with it (the
//      pod garbage collector's) — and once its informers have seen them the
//      scheduler runs until idle (no unit it may run now, nothing in its
//      inbox, no API write in flight). So every run of a trace presents the
//      scheduler the same states in the same order, whatever the threads'
//      timing.
//   3. Between steps the clock jumps to the next of: a trace event, a pod's
//      end (bind time + its runtime), the scheduler's next timer (backoff
//      expiry, flushes). With `speed` > 0 a step also waits for the real
//      time it would take at that multiple of the trace's pace. While no pod
//      waits, the ends before the next trace event or timer that can place
//      or evict are one step (most of a long trace's steps were such ends).
//      A step the clock jumped to for a timer that can neither place nor
//      evict (a status report, the unschedulable flush with nothing
//      unschedulable) runs like any other but is not counted in `steps`.
//   4. What the replay observes (one in-process watch on pods): binds (the
//      decisions), pods the scheduler evicts (victims; the replay deletes
//      them as their kubelet would, and they are not re-created), and after
//      every step the GPUs in use and stranded.
//
// Thread-safety: ReplayTrace may run from any thread; one replay at a time
// per process is what the CLI does (each has its own server and scheduler).

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/result.h"
#include "replay/trace.h"
#include "scheduler/scheduler.h"

namespace copse::replay {

struct ReplayConfig {
  std::string name;  // how reports name it (the --config file name)
  scheduler::SchedulerOptions options;
};

struct ReplayOptions {
  double speed = 0;  // 0: as fast as possible; N: N times the trace's pace
  // Real time one step may take before the replay fails (the scheduler never
  // went idle).
  std::chrono::seconds step_timeout{120};
  // Real time the whole replay may take before it stops with kTimeout
  // (`copse bench replay`); 0: no limit.
  std::chrono::seconds timeout{0};
  uint64_t seed = 1;  // the scheduler's (tie-breaks)
  // While nothing waits, pods that end before the next trace event or
  // decision timer are one step (Run::EndQuietly). Off: one step per end;
  // the decisions are the same (ReplayTest.QuietEndsInOneStepChangeNoDecision)
  // unless a gang is broken below its minimum meanwhile (gang recovery's
  // once-a-second checks then fall on other steps).
  bool batch_quiet_ends = true;
  // Progress lines ("replay A: 12:00:00 of 24:00:00, 4,512 pods placed").
  std::function<void(const std::string&)> progress;
};

struct Decision {
  std::string pod;   // namespace/name
  std::string node;  // "" never placed
  int64_t bound_ms = -1;
};

struct SeriesPoint {
  int64_t t_ms = 0;
  double value = 0;
};

struct WaitFigures {
  int64_t pods = 0;    // created with this priority
  int64_t placed = 0;  // of those, bound
  double p50_ms = 0;   // create -> bind of the bound ones
  double p99_ms = 0;
  double mean_ms = 0;
};

struct ConfigResult {
  std::string name;
  int64_t pods = 0;
  int64_t pods_placed = 0;
  int64_t gangs = 0;
  int64_t gangs_placed = 0;  // at least minMember members bound
  int64_t gangs_one_rack = 0;
  int64_t gangs_one_block = 0;
  // Invariants, checked by the replay: gangs with members bound but fewer
  // than minMember at the end, and the most nodes seen over allocatable at once.
  int64_t gangs_partial = 0;
  int64_t max_nodes_over_allocatable = 0;
  std::map<std::string, WaitFigures> wait_by_priority;  // by priorityClassName ("" none)
  WaitFigures wait_all;
  int64_t total_gpus = 0;              // the most GPUs in the cluster at once (nodes come and go)
  std::vector<SeriesPoint> gpus_used;  // after every step
  std::vector<SeriesPoint> gpus_stranded;  // free GPUs on nodes no pending GPU pod fits
  double mean_gpu_utilization = 0;         // GPU-time used / GPU-time in the cluster, [0, end_ms]
  double mean_stranded_gpus = 0;
  int64_t preemption_attempts = 0;  // the scheduler's count
  int64_t victims = 0;              // bound pods it evicted
  std::vector<Decision> decisions;  // every pod, sorted by pod
  int64_t end_ms = 0;               // virtual time of the last step
  // Steps that can decide: for a trace event, a pod's end or a timer that
  // can place or evict. Steps for a status report alone are not counted:
  // whether one falls due depends on how the scheduler's inbox batched
  // events, so they vary from run to run; these do not.
  int64_t steps = 0;
  int64_t cycles = 0;  // scheduling cycles run
  double wall_seconds = 0;
};

// Replays `trace` under `config`. Errors name what failed (a trace object
// the server refuses, the scheduler not going idle within step_timeout).
Result<ConfigResult> ReplayTrace(const Trace& trace, const ReplayConfig& config,
                                 const ReplayOptions& options);

}  // namespace copse::replay
