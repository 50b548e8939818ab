// One scheduling pass of the default profile over a 5,000-node snapshot
// (README, "A scheduling cycle"), for a few pod shapes. SchedulePod5000/*
// times Framework::SchedulePod itself, the loop's own pass; FilterScore5000/*
// times the same stages one by one and fails on any allocation inside
// Filter/Score. Shapes:
//
//   plain                 cpu/memory requests only
//   affinity_tolerations  required + preferred node affinity, tolerations
//   topology_spread       zone DoNotSchedule + hostname ScheduleAnyway
//   anti_affinity         required + preferred inter-pod anti-affinity
//
// A pass is what the scheduling loop does for one pod class, on one core:
//   1. RunPreFilter (may allocate: per-cycle state).
//   2. FilterChunk over the candidates in chunks of 256. Mode "all_nodes"
//      filters every node (percentageOfNodesToScore 100); mode "adaptive"
//      stops at kube's numFeasibleNodesToFind (500 of 5,000) and rotates the
//      start like nextStartNodeIndex.
//   3. RunPreScore, then ScoreChunk per score plugin over the feasible nodes.
//   4. CombineScores (normalize, weights).
//
// Filter and Score must not allocate: this binary replaces the global
// operator new, counts allocations made inside FilterChunk/ScoreChunk only,
// and on any such allocation fails the benchmark (SkipWithError) and exits
// nonzero, which fails the ctest registered in CMakeLists.txt.
//
// Run with --benchmark_repetitions=N to get a "min" row per benchmark (the
// figure least disturbed by other work on a shared machine).
//
// Counters (per pass): prefilter_us (RunPreFilter and the candidate list),
// filter_us (FilterChunk), prescore_us (RunPreScore), score_us (ScoreChunk and
// CombineScores); feasible and evaluated nodes; hot_allocs (always 0 when
// passing).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "core/labels.h"
#include "core/node_info.h"
#include "core/pod_info.h"
#include "core/quantity.h"
#include "core/resource_vector.h"
#include "core/snapshot.h"
#include "plugins/defaults/defaults.h"
#include "plugins/framework/framework.h"

// ---------------------------------------------------------------------------
// Allocation counting (whole binary; counted only while g_counting is set).

namespace {
std::atomic<bool> g_counting{false};
std::atomic<uint64_t> g_allocations{0};
std::atomic<bool> g_failed{false};

void* CountedAlloc(std::size_t size) {
  if (g_counting.load(std::memory_order_relaxed)) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
  }
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}

void* CountedAlignedAlloc(std::size_t size, std::align_val_t align) {
  if (g_counting.load(std::memory_order_relaxed)) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
  }
  const auto a = static_cast<std::size_t>(align);
  const std::size_t rounded = (std::max<std::size_t>(size, 1) + a - 1) / a * a;
  if (void* p = std::aligned_alloc(a, rounded)) return p;
  throw std::bad_alloc();
}
}  // namespace

void* operator new(std::size_t size) { return CountedAlloc(size); }
void* operator new[](std::size_t size) { return CountedAlloc(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return CountedAlloc(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return CountedAlloc(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new(std::size_t size, std::align_val_t align) {
  return CountedAlignedAlloc(size, align);
}
void* operator new[](std::size_t size, std::align_val_t align) {
  return CountedAlignedAlloc(size, align);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace copse::bench {
namespace {

using plugins::CycleContext;
using plugins::CycleState;
using plugins::FilterScratch;
using plugins::Framework;
using plugins::PluginIndex;
using plugins::Status;

constexpr int kNumNodes = 5'000;
constexpr int kNumZones = 10;
constexpr int kPodsPerNode = 4;
constexpr size_t kChunk = 256;
const std::string kZone(kLabelTopologyZone);
const std::string kHostname(kLabelHostname);

// RAII: counts allocations made while alive.
class CountAllocations {
 public:
  CountAllocations() { g_counting.store(true, std::memory_order_relaxed); }
  ~CountAllocations() { g_counting.store(false, std::memory_order_relaxed); }
};

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "filter_score_bench: %s\n", what.c_str());
  std::exit(2);
}

ResourceVector Resources(ResourceNames& names, const ResourceList& list) {
  Result<ResourceVector> v = ResourceVector::FromResourceList(list, names);
  if (!v.ok()) Die(v.error().message);
  return *v;
}

ResourceList List(std::initializer_list<std::pair<const char*, const char*>> items) {
  ResourceList out;
  for (const auto& [name, value] : items) out.emplace(name, Quantity::MustParse(value));
  return out;
}

LabelSelector Selector(std::string_view text) {
  Result<LabelSelector> s = LabelSelector::Parse(text);
  if (!s.ok()) Die(s.error().message);
  return *s;
}

PodAffinityTerm Term(std::string_view selector, const std::string& topology_key) {
  PodAffinityTerm t;
  t.label_selector = Selector(selector);
  t.topology_key = topology_key;
  return t;
}

std::shared_ptr<const PodInfo> Finalized(PodInfo pod) {
  auto p = std::make_shared<PodInfo>(std::move(pod));
  if (copse::Status s = p->Finalize(); !s.ok()) Die(s.error().message);
  return p;
}

std::string ZoneName(int z) { return "zone-" + std::to_string(z); }

// The cluster: 5,000 nodes (32 cpu, 128Gi, 110 pods) in 10 zones, hostname
// and zone labels; every 10th node tainted dedicated=infer:NoSchedule, every
// 15th spot=true:PreferNoSchedule, every 97th cordoned; 4 pods per node
// (20,000) with app=web/batch/cache labels, a few of them with required
// anti-affinity or preferred affinity; every 25th node nearly full.
struct World {
  ResourceNames names;
  std::vector<std::unique_ptr<NodeInfo>> nodes;
  Snapshot snapshot{names};
  std::unique_ptr<Framework> framework;

  World() {
    const char* apps[] = {"web", "batch", "cache"};
    nodes.reserve(kNumNodes);
    for (int i = 0; i < kNumNodes; ++i) {
      auto node = std::make_unique<NodeInfo>("node-" + std::to_string(i));
      node->SetLabels(Labels{{kZone, ZoneName(i % kNumZones)},
                             {kHostname, node->name()},
                             {"node.copse.dev/pool", i % 4 == 0 ? "gpu" : "cpu"}});
      node->SetAllocatable(
          Resources(names, List({{"cpu", "32"}, {"memory", "128Gi"}, {"pods", "110"}})));
      std::vector<Taint> taints;
      if (i % 10 == 0) taints.push_back({"dedicated", "infer", TaintEffect::kNoSchedule});
      if (i % 15 == 0) taints.push_back({"spot", "true", TaintEffect::kPreferNoSchedule});
      node->SetTaints(std::move(taints));
      node->SetUnschedulable(i % 97 == 0);
      for (int k = 0; k < kPodsPerNode; ++k) {
        PodInfo pod;
        pod.namespace_name = "default";
        pod.name = "p-" + std::to_string(i) + "-" + std::to_string(k);
        pod.uid = "uid-" + pod.name;
        pod.scheduler_name = "copse-scheduler";
        pod.node_name = node->name();
        // Uneven app mix so that spreading has something to balance.
        const char* app = apps[(i / 7 + k * (i % 3 + 1)) % 3];
        pod.labels = {{"app", app}, {"tier", k % 2 ? "backend" : "frontend"}};
        const bool full = i % 25 == 0;
        pod.requests = Resources(names, full ? List({{"cpu", "7900m"}, {"memory", "30Gi"}})
                                             : List({{"cpu", "1500m"}, {"memory", "3Gi"}}));
        if (k == 2 && i % 50 == 0) {
          pod.required_anti_affinity.push_back(Term("app=" + std::string(app), kHostname));
        }
        if (k == 1 && i % 20 == 0) {
          pod.preferred_affinity.push_back({5, Term("app=web", kZone)});
        }
        node->AddPod(Finalized(std::move(pod)));
      }
      nodes.push_back(std::move(node));
    }
    std::vector<const NodeInfo*> ptrs;
    for (const auto& n : nodes) ptrs.push_back(n.get());
    snapshot.Sync(ptrs);
    snapshot.SetNamespaceLabels("default", {{"kubernetes.io/metadata.name", "default"}});

    plugins::Registry registry;
    if (copse::Status s = plugins::RegisterDefaultPlugins(registry); !s.ok()) {
      Die(s.error().message);
    }
    auto fw = Framework::Create(registry, plugins::DefaultProfile());
    if (!fw.ok()) Die(fw.error().message);
    framework = std::move(*fw);
  }

  PodInfo BasePod(const std::string& name, const std::string& app) {
    PodInfo pod;
    pod.namespace_name = "default";
    pod.name = name;
    pod.uid = "uid-" + name;
    pod.scheduler_name = "copse-scheduler";
    pod.labels = {{"app", app}};
    pod.requests = Resources(names, List({{"cpu", "1"}, {"memory", "2Gi"}}));
    return pod;
  }
};

World& TheWorld() {
  static World* world = new World();
  return *world;
}

enum class Shape { kPlain, kAffinity, kSpread, kAntiAffinity };

struct ShapeSpec {
  std::shared_ptr<const PodInfo> pod;
  // Filter plugins that must not be skipped for the shape to mean anything.
  std::vector<std::string> must_filter;
};

ShapeSpec MakeShape(World& w, Shape shape) {
  ShapeSpec spec;
  switch (shape) {
    case Shape::kPlain: {
      spec.pod = Finalized(w.BasePod("plain", "bench"));
      spec.must_filter = {"TaintToleration", "NodeResourcesFit"};
      break;
    }
    case Shape::kAffinity: {
      PodInfo pod = w.BasePod("affinity", "bench");
      pod.required_node_affinity = NodeSelector{{NodeSelectorTerm{
          {Requirement{kZone,
                       SelectorOp::kIn,
                       {ZoneName(0), ZoneName(1), ZoneName(2), ZoneName(3), ZoneName(4)}}},
          {}}}};
      pod.preferred_node_affinity.push_back(
          {10, NodeSelectorTerm{{Requirement{kZone, SelectorOp::kIn, {ZoneName(1)}}}, {}}});
      pod.preferred_node_affinity.push_back(
          {5,
           NodeSelectorTerm{{Requirement{"node.copse.dev/pool", SelectorOp::kIn, {"cpu"}}}, {}}});
      pod.tolerations.push_back(
          Toleration{"dedicated", TolerationOperator::kEqual, "infer", TaintEffect::kNoSchedule});
      pod.tolerations.push_back(
          Toleration{"spot", TolerationOperator::kExists, "", TaintEffect::kPreferNoSchedule});
      spec.pod = Finalized(std::move(pod));
      spec.must_filter = {"TaintToleration", "NodeAffinity", "NodeResourcesFit"};
      break;
    }
    case Shape::kSpread: {
      PodInfo pod = w.BasePod("spread", "web");
      TopologySpreadConstraint zone;
      zone.max_skew = 1;
      zone.topology_key = kZone;
      zone.when_unsatisfiable = UnsatisfiableConstraintAction::kDoNotSchedule;
      zone.label_selector = Selector("app=web");
      TopologySpreadConstraint host;
      host.max_skew = 1;
      host.topology_key = kHostname;
      host.when_unsatisfiable = UnsatisfiableConstraintAction::kScheduleAnyway;
      host.label_selector = Selector("app=web");
      pod.topology_spread_constraints = {zone, host};
      spec.pod = Finalized(std::move(pod));
      spec.must_filter = {"TaintToleration", "NodeResourcesFit", "PodTopologySpread"};
      break;
    }
    case Shape::kAntiAffinity: {
      PodInfo pod = w.BasePod("anti", "cache");
      pod.required_anti_affinity.push_back(Term("app=cache", kHostname));
      pod.preferred_anti_affinity.push_back({10, Term("app=web", kZone)});
      spec.pod = Finalized(std::move(pod));
      spec.must_filter = {"TaintToleration", "NodeResourcesFit", "InterPodAffinity"};
      break;
    }
  }
  return spec;
}

// Buffers the loop keeps per worker, sized once.
struct Buffers {
  FilterScratch scratch;
  std::vector<Status> node_statuses;
  std::vector<NodeIndex> candidates;
  std::vector<NodeIndex> feasible;
  std::vector<int64_t> plugin_scores;
  std::vector<int64_t> totals;

  Buffers(size_t num_nodes, size_t num_score_plugins) {
    scratch.Reserve(kChunk);
    node_statuses.resize(num_nodes);
    candidates.reserve(num_nodes);
    feasible.resize(num_nodes);
    plugin_scores.resize(num_nodes * num_score_plugins);
    totals.resize(num_nodes);
  }
};

void BM_FilterScore(benchmark::State& state, Shape shape, bool adaptive) {
  World& w = TheWorld();
  const ShapeSpec spec = MakeShape(w, shape);
  const Framework& fw = *w.framework;
  const Snapshot& snap = w.snapshot;
  const PodInfo& pod = *spec.pod;
  const size_t num_nodes = snap.num_nodes();
  Buffers buf(num_nodes, fw.num_score_plugins());

  // The shape must exercise its plugins.
  {
    CycleState probe;
    plugins::PreFilterOutcome pre = fw.RunPreFilter(pod, snap, probe);
    if (!pre.status.IsSuccess()) {
      state.SkipWithError("PreFilter rejected the pod");
      g_failed = true;
      return;
    }
    for (const std::string& name : spec.must_filter) {
      const std::optional<PluginIndex> index = fw.FindPlugin(name);
      if (!index || probe.FilterSkipped(*index)) {
        state.SkipWithError(("shape does not exercise " + name + "'s Filter").c_str());
        g_failed = true;
        return;
      }
    }
  }

  size_t start_index = 0;
  uint64_t hot_allocs = 0;
  double prefilter_ns = 0;
  double filter_ns = 0;
  double prescore_ns = 0;
  double score_ns = 0;
  size_t feasible_total = 0;
  size_t evaluated_total = 0;
  using Clock = std::chrono::steady_clock;

  for (auto _ : state) {
    const auto t_start = Clock::now();
    CycleState cycle;
    // 1. PreFilter.
    plugins::PreFilterOutcome pre = fw.RunPreFilter(pod, snap, cycle);
    buf.candidates.clear();
    if (pre.nodes.has_value()) {
      buf.candidates.assign(pre.nodes->begin(), pre.nodes->end());
    } else {
      for (NodeIndex n = 0; n < num_nodes; ++n) buf.candidates.push_back(n);
    }
    const size_t num_candidates = buf.candidates.size();
    const size_t to_find = adaptive ? plugins::NumFeasibleNodesToFind(
                                          fw.percentage_of_nodes_to_score(), num_candidates)
                                    : num_candidates;
    const CycleContext ctx{pod, snap, cycle};

    // 2. Filter in chunks, round-robin from start_index.
    const auto t0 = Clock::now();
    size_t num_feasible = 0;
    size_t evaluated = 0;
    uint64_t rejected_by = 0;
    const size_t start = num_candidates == 0 ? 0 : start_index % num_candidates;
    for (int segment = 0; segment < 2 && num_feasible < to_find; ++segment) {
      const size_t begin = segment == 0 ? start : 0;
      const size_t end = segment == 0 ? num_candidates : start;
      for (size_t pos = begin; pos < end && num_feasible < to_find; pos += kChunk) {
        const size_t len = std::min(kChunk, end - pos);
        size_t found = 0;
        Status s;
        {
          CountAllocations counting;
          s = fw.FilterChunk(ctx, std::span<const NodeIndex>(buf.candidates.data() + pos, len),
                             buf.scratch, buf.node_statuses,
                             std::span<NodeIndex>(buf.feasible.data() + num_feasible, len), found,
                             rejected_by);
        }
        if (s.IsError()) {
          state.SkipWithError("FilterChunk returned an error");
          g_failed = true;
          return;
        }
        evaluated += len;
        num_feasible += found;
      }
    }
    if (num_feasible > to_find) {
      evaluated -= num_feasible - to_find;
      num_feasible = to_find;
    }
    start_index = num_candidates == 0 ? 0 : (start + evaluated) % num_candidates;
    const auto t1 = Clock::now();
    if (num_feasible == 0) {
      state.SkipWithError("no feasible node");
      g_failed = true;
      return;
    }
    const std::span<const NodeIndex> feasible(buf.feasible.data(), num_feasible);

    // 3. PreScore, Score per plugin.
    if (!fw.RunPreScore(pod, snap, feasible, cycle).IsSuccess()) {
      state.SkipWithError("PreScore failed");
      g_failed = true;
      return;
    }
    const auto t2 = Clock::now();
    for (size_t p = 0; p < fw.num_score_plugins(); ++p) {
      for (size_t pos = 0; pos < num_feasible; pos += kChunk) {
        const size_t len = std::min(kChunk, num_feasible - pos);
        Status s;
        {
          CountAllocations counting;
          s = fw.ScoreChunk(
              ctx, p, feasible.subspan(pos, len),
              std::span<int64_t>(buf.plugin_scores.data() + p * num_feasible + pos, len));
        }
        if (!s.IsSuccess()) {
          state.SkipWithError("ScoreChunk returned an error");
          g_failed = true;
          return;
        }
      }
    }
    // 4. Combine (normalize, weights). SelectHost is left out: its cost is
    // the injected RandomSource's (one draw per tie).
    Status combined = fw.CombineScores(
        ctx, feasible,
        std::span<int64_t>(buf.plugin_scores.data(), fw.num_score_plugins() * num_feasible),
        std::span<int64_t>(buf.totals.data(), num_feasible));
    if (!combined.IsSuccess()) {
      state.SkipWithError("CombineScores failed");
      g_failed = true;
      return;
    }
    benchmark::DoNotOptimize(buf.totals.data());
    const auto t3 = Clock::now();

    hot_allocs = g_allocations.exchange(0, std::memory_order_relaxed);
    if (hot_allocs != 0) {
      state.SkipWithError(
          ("Filter/Score allocated " + std::to_string(hot_allocs) + " time(s) in one pass")
              .c_str());
      g_failed = true;
      return;
    }
    prefilter_ns += std::chrono::duration<double, std::nano>(t0 - t_start).count();
    filter_ns += std::chrono::duration<double, std::nano>(t1 - t0).count();
    prescore_ns += std::chrono::duration<double, std::nano>(t2 - t1).count();
    score_ns += std::chrono::duration<double, std::nano>(t3 - t2).count();
    feasible_total += num_feasible;
    evaluated_total += evaluated;
  }
  const double iters = static_cast<double>(state.iterations());
  if (iters > 0) {
    state.counters["prefilter_us"] = prefilter_ns / iters / 1e3;
    state.counters["filter_us"] = filter_ns / iters / 1e3;
    state.counters["prescore_us"] = prescore_ns / iters / 1e3;
    state.counters["score_us"] = score_ns / iters / 1e3;
    state.counters["feasible"] = static_cast<double>(feasible_total) / iters;
    state.counters["evaluated"] = static_cast<double>(evaluated_total) / iters;
    state.counters["hot_allocs"] = static_cast<double>(hot_allocs);
  }
}

// The scheduling loop's own pass: Framework::SchedulePod (PreFilter, Filter
// over node chunks, PreScore, Score, normalize and weights, SelectHost), with
// the workspace kept across passes as the loop keeps it. Sequential (no
// parallel_for): one core's cost per pod. Allocation is not checked here
// (PreFilter's per-cycle state may allocate); BM_FilterScore checks the hot
// Filter/Score chunks and breaks the pass into its stages.
void BM_SchedulePod(benchmark::State& state, Shape shape, bool adaptive) {
  World& w = TheWorld();
  const ShapeSpec spec = MakeShape(w, shape);
  const Framework& fw = *w.framework;
  const Snapshot& snap = w.snapshot;
  const PodInfo& pod = *spec.pod;
  plugins::Workspace workspace;
  plugins::Mt19937Random random(1);
  plugins::ScheduleOptions options;
  options.chunk_size = kChunk;
  options.num_feasible_to_find = adaptive ? 0 : snap.num_nodes();
  options.run_post_filter = false;
  const auto now = std::chrono::system_clock::now();
  size_t evaluated_total = 0;
  size_t feasible_total = 0;
  for (auto _ : state) {
    CycleState cycle;
    const plugins::ScheduleResult r =
        fw.SchedulePod(pod, snap, cycle, workspace, random, options, now);
    if (r.code != plugins::Code::kSuccess || !r.node) {
      state.SkipWithError(("SchedulePod did not place the pod: " + r.message).c_str());
      g_failed = true;
      return;
    }
    benchmark::DoNotOptimize(r.node);
    // kube's nextStartNodeIndex: the next pass starts after the nodes this one evaluated.
    options.start_index = (options.start_index + r.evaluated_nodes) % snap.num_nodes();
    evaluated_total += r.evaluated_nodes;
    feasible_total += r.feasible_nodes;
  }
  const double iters = static_cast<double>(state.iterations());
  if (iters > 0) {
    state.counters["feasible"] = static_cast<double>(feasible_total) / iters;
    state.counters["evaluated"] = static_cast<double>(evaluated_total) / iters;
  }
}

void RegisterAll() {
  const std::pair<Shape, const char*> shapes[] = {{Shape::kPlain, "plain"},
                                                  {Shape::kAffinity, "affinity_tolerations"},
                                                  {Shape::kSpread, "topology_spread"},
                                                  {Shape::kAntiAffinity, "anti_affinity"}};
  for (const auto& [shape, name] : shapes) {
    for (const bool adaptive : {false, true}) {
      const std::string full =
          std::string("FilterScore5000/") + name + (adaptive ? "/adaptive" : "/all_nodes");
      // "min" over --benchmark_repetitions: the figure least disturbed by
      // other work on a shared machine.
      benchmark::RegisterBenchmark(full.c_str(), BM_FilterScore, shape, adaptive)
          ->Unit(benchmark::kMicrosecond)
          ->ComputeStatistics("min", [](const std::vector<double>& v) {
            return *std::min_element(v.begin(), v.end());
          });
      const std::string pass =
          std::string("SchedulePod5000/") + name + (adaptive ? "/adaptive" : "/all_nodes");
      benchmark::RegisterBenchmark(pass.c_str(), BM_SchedulePod, shape, adaptive)
          ->Unit(benchmark::kMicrosecond)
          ->ComputeStatistics("min", [](const std::vector<double>& v) {
            return *std::min_element(v.begin(), v.end());
          });
    }
  }
}

}  // namespace
}  // namespace copse::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  // all_nodes: every node filtered and every feasible node scored
  // (percentageOfNodesToScore 100); adaptive: kube's numFeasibleNodesToFind.
  copse::bench::RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (g_failed.load()) {
    std::fprintf(stderr, "FAILED: Filter/Score allocated or a pass went wrong (see above)\n");
    return 1;
  }
  return 0;
}
