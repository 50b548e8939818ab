// copse replay end to end in-process (replay/replayer.h, replay/report.h):
// an embedded API server and the copse scheduler per configuration, on a
// virtual clock.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "apiserver/synthetic.h"
#include "core/quantity.h"
#include "plugins/defaults/defaults.h"
#include "plugins/framework/registry.h"
#include "replay/replayer.h"
#include "replay/report.h"
#include "replay/synth.h"
#include "replay/trace.h"
#include "scheduler/config/config.h"
#include "scheduler/options_from_config.h"
#include "tests/support/paths.h"

namespace copse::replay {
namespace {

using nlohmann::json;

ReplayConfig ConfigFile(const std::string& name) {
  plugins::Registry registry;
  EXPECT_TRUE(plugins::RegisterDefaultPlugins(registry).ok());
  const std::string path = std::string(COPSE_SOURCE_DIR) + "/deploy/examples/traces/" + name;
  auto cfg = scheduler::config::LoadSchedulerConfigFile(path, registry);
  EXPECT_TRUE(cfg.ok()) << path << ": " << (cfg.ok() ? "" : cfg.error().message);
  ReplayConfig rc;
  rc.name = name;
  if (cfg.ok()) rc.options = scheduler::SchedulerOptionsFromConfig(*cfg);
  rc.options.parallelism = 2;
  return rc;
}

Trace ParseText(const std::string& text) {
  std::istringstream in(text);
  Result<Trace> t = ParseTrace(in);
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().message);
  return t.ok() ? *t : Trace{};
}

Trace SynthTrace(const SynthOptions& o) {
  std::ostringstream text;
  EXPECT_TRUE(WriteSynthTrace(o, text).ok());
  return ParseText(text.str());
}

// Every pod's decision (node and bind time) is the same in both.
void ExpectSameDecisions(const ConfigResult& a, const ConfigResult& b) {
  ASSERT_EQ(a.decisions.size(), b.decisions.size());
  int64_t differing = 0;
  for (size_t i = 0; i < a.decisions.size() && differing <= 10; ++i) {
    const Decision& x = a.decisions[i];
    const Decision& y = b.decisions[i];
    if (x.pod != y.pod || x.node != y.node || x.bound_ms != y.bound_ms) {
      ++differing;
      ADD_FAILURE() << x.pod << ": " << x.node << "@" << x.bound_ms << " (" << a.name << ") vs "
                    << y.pod << ": " << y.node << "@" << y.bound_ms << " (" << b.name << ")";
    }
  }
}

// A pod asking for `gpus` GPUs, in the trace's namespace.
json GpuPod(const std::string& name, int gpus, const json& labels = json::object(),
            const std::string& priority_class = "") {
  json spec = {
      {"schedulerName", "copse-scheduler"},
      {"containers",
       json::array(
           {{{"name", "c"},
             {"image", "pause"},
             {"resources",
              {{"requests",
                {{"cpu", "1"}, {"memory", "1Gi"}, {"nvidia.com/gpu", std::to_string(gpus)}}},
               {"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}}})}};
  if (!priority_class.empty()) spec["priorityClassName"] = priority_class;
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "trace"}, {"labels", labels}}},
          {"spec", spec}};
}

void ExpectInvariants(const ConfigResult& r) {
  EXPECT_EQ(r.gangs_partial, 0) << r.name << ": a gang bound below its minimum";
  EXPECT_EQ(r.max_nodes_over_allocatable, 0) << r.name << ": a node held more than allocatable";
  for (const SeriesPoint& p : r.gpus_used) {
    EXPECT_LE(p.value, static_cast<double>(r.total_gpus));
    EXPECT_GE(p.value, 0);
  }
}

TEST(ReplayTest, TheSameTraceTwiceGivesIdenticalDecisions) {
  SynthOptions o;
  o.seed = 7;
  o.nodes = 16;
  o.topology = "block=2,rack=2";  // 4 racks of 4 nodes, 32 GPUs each
  o.duration = std::chrono::minutes(90);
  o.jobs_per_hour = 60;
  o.median_runtime = std::chrono::minutes(15);
  const Trace trace = SynthTrace(o);
  const ReplayConfig config = ConfigFile("pack.yaml");
  ReplayOptions options;
  Result<ConfigResult> first = ReplayTrace(trace, config, options);
  ASSERT_TRUE(first.ok()) << first.error().message;
  Result<ConfigResult> second = ReplayTrace(trace, config, options);
  ASSERT_TRUE(second.ok()) << second.error().message;

  ASSERT_GT(first->pods, 50);
  EXPECT_GT(first->pods_placed, first->pods / 2);
  EXPECT_GT(first->gangs_placed, 0);
  ExpectInvariants(*first);
  ExpectSameDecisions(*first, *second);
  EXPECT_EQ(first->gpus_used.size(), second->gpus_used.size());
  const Comparison c = Compare({*first, *second});
  EXPECT_EQ(c.differing, 0);
  // The replay itself: the same cycles, and the same steps. `steps` counts
  // the steps that can decide (a trace event, a pod's end, a timer that can
  // place or evict); a step for a status report alone is not counted: the
  // loop's inbox batches a pod's update and deletion together or not, as
  // the threads go, and only in the second case does a group status fall
  // due 100 ms later (replay/README.md, "How a replay runs", 3).
  EXPECT_EQ(first->cycles, second->cycles);
  EXPECT_EQ(first->steps, second->steps);
}

// While no pod waits, the pods that end before the next trace event or
// decision timer are one step (ReplayOptions::batch_quiet_ends). On a trace
// that is sometimes full and sometimes quiet, the decisions (node and bind
// time) and the GPU series must be what one step per end gives.
TEST(ReplayTest, QuietEndsInOneStepChangeNoDecision) {
  SynthOptions o;
  o.seed = 11;
  o.nodes = 16;
  o.topology = "block=2,rack=2";
  o.duration = std::chrono::hours(3);
  o.jobs_per_hour = 40;
  o.diurnal_amplitude = 0.9;  // busy and quiet stretches
  o.median_runtime = std::chrono::minutes(10);
  const Trace trace = SynthTrace(o);
  const ReplayConfig config = ConfigFile("pack.yaml");
  ReplayOptions batched;
  ReplayOptions stepwise;
  stepwise.batch_quiet_ends = false;
  Result<ConfigResult> a = ReplayTrace(trace, config, batched);
  ASSERT_TRUE(a.ok()) << a.error().message;
  Result<ConfigResult> b = ReplayTrace(trace, config, stepwise);
  ASSERT_TRUE(b.ok()) << b.error().message;
  ExpectInvariants(*a);
  ExpectInvariants(*b);
  ASSERT_GT(a->pods, 50);
  EXPECT_GT(a->wait_all.p99_ms, 0) << "the trace never made a pod wait: nothing is tested";
  EXPECT_LT(a->steps, b->steps) << "no ends were batched";
  ExpectSameDecisions(*a, *b);
  EXPECT_NEAR(a->mean_gpu_utilization, b->mean_gpu_utilization, 1e-9);
  EXPECT_NEAR(a->mean_stranded_gpus, b->mean_stranded_gpus, 1e-9);
}

// Eight 4-GPU single pods (an hour each) arrive first, then two gangs of two
// 8-GPU pods that require one rack, on 4 racks of 2 nodes of 8 GPUs. Packing
// fills two racks with the singles and the gangs start at once in the other
// two; spreading puts a single on every node, so no rack is free and the
// gangs wait for the singles to end, while 4 GPUs per node sit stranded.
std::string PackVersusSpreadTrace() {
  std::ostringstream out;
  TraceHeader header;
  header.source = "test";
  header.duration_ms = 120'000;
  out << HeaderLine(header) << "\n";
  auto line = [&out](int64_t t, TraceOp op, const json& object, std::optional<int64_t> runtime) {
    TraceEvent e;
    e.t_ms = t;
    e.op = op;
    e.object = object.dump();
    e.runtime_ms = runtime;
    out << EventLine(e) << "\n";
  };
  line(0, TraceOp::kInit,
       {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "trace"}}}}, {});
  line(0, TraceOp::kInit,
       {{"apiVersion", "scheduling.copse.dev/v1alpha1"},
        {"kind", "Topology"},
        {"metadata", {{"name", "dc"}}},
        {"spec",
         {{"levels", json::array({{{"nodeLabel", "copse.dev/rack"}},
                                  {{"nodeLabel", "kubernetes.io/hostname"}}})}}}},
       {});
  auto topology = apiserver::ParseTopology("rack=4");
  auto nodes = apiserver::MakeSyntheticNodes(
      8, *ParseResourceList("cpu=64,memory=512Gi,nvidia.com/gpu=8"), *topology);
  EXPECT_TRUE(nodes.ok());
  for (const std::string& node : *nodes)
    line(0, TraceOp::kInit, ReduceObject(json::parse(node)), {});
  auto pod = [](const std::string& name, const std::string& group, int gpus) {
    json labels = json::object();
    if (!group.empty()) labels["scheduling.copse.dev/pod-group"] = group;
    return GpuPod(name, gpus, labels);
  };
  for (int i = 0; i < 8; ++i) {
    line(1000 * (i + 1), TraceOp::kCreate, pod("single-" + std::to_string(i), "", 4), 3'600'000);
  }
  for (int g = 0; g < 2; ++g) {
    const std::string name = "gang-" + std::to_string(g);
    line(60'000, TraceOp::kCreate,
         {{"apiVersion", "scheduling.copse.dev/v1alpha1"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", name}, {"namespace", "trace"}}},
          {"spec",
           {{"minMember", 2},
            {"topologyConstraint", {{"topology", "dc"}, {"requiredTopologyLevel", "rack"}}}}}},
         {});
    for (int i = 0; i < 2; ++i) {
      line(60'000, TraceOp::kCreate, pod(name + "-" + std::to_string(i), name, 8), 600'000);
    }
  }
  return out.str();
}

TEST(ReplayTest, RackPackingBeatsSpreadingForRackRequiredGangs) {
  const Trace trace = ParseText(PackVersusSpreadTrace());
  ReplayOptions options;
  std::vector<ConfigResult> results;
  for (const char* file : {"spread.yaml", "pack.yaml"}) {
    Result<ConfigResult> r = ReplayTrace(trace, ConfigFile(file), options);
    ASSERT_TRUE(r.ok()) << file << ": " << r.error().message;
    ExpectInvariants(*r);
    EXPECT_EQ(r->pods_placed, 12) << file;
    EXPECT_EQ(r->gangs_placed, 2) << file;
    EXPECT_EQ(r->gangs_one_rack, 2) << file << ": the gangs require one rack";
    results.push_back(std::move(r).value());
  }
  const ConfigResult& spread = results[0];
  const ConfigResult& pack = results[1];
  // Spreading: the gangs wait for the singles (started at 1..8 s, an hour each).
  EXPECT_GT(spread.wait_all.p99_ms, 3'000'000);
  EXPECT_EQ(pack.wait_all.p99_ms, 0);
  EXPECT_GT(spread.mean_stranded_gpus, pack.mean_stranded_gpus);

  const Comparison c = Compare(results);
  EXPECT_EQ(c.best.at("wait_p99_ms"), "pack.yaml");
  EXPECT_EQ(c.best.at("wait_mean_ms"), "pack.yaml");
  EXPECT_EQ(c.best.at("mean_stranded_gpus"), "pack.yaml");
  EXPECT_GE(c.differing, 4);  // at least the gang pods' bind times

  const json report = json::parse(ReportJson(trace.header, c));
  EXPECT_EQ(report["best"]["wait_p99_ms"], "pack.yaml");
  ASSERT_EQ(report["configs"].size(), 2u);
  EXPECT_EQ(report["configs"][1]["name"], "pack.yaml");
  EXPECT_EQ(report["configs"][1]["gangs_placed"], 2);
  const std::string html = ReportHtml(trace.header, c);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);  // self-contained, static
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));
}

// A trace line builder for hand-written traces.
class TraceText {
 public:
  explicit TraceText(int64_t duration_ms) {
    TraceHeader header;
    header.source = "test";
    header.duration_ms = duration_ms;
    out_ << HeaderLine(header) << "\n";
    Add(0, TraceOp::kInit,
        {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "trace"}}}});
  }
  void Add(int64_t t, TraceOp op, const json& object, std::optional<int64_t> runtime = {}) {
    TraceEvent e;
    e.t_ms = t;
    e.op = op;
    e.object = object.dump();
    e.runtime_ms = runtime;
    out_ << EventLine(e) << "\n";
  }
  // A recorded pod's bound or end line.
  void Happened(int64_t t, TraceOp op, const std::string& name, const std::string& node = "") {
    TraceEvent e;
    e.t_ms = t;
    e.op = op;
    e.ns = "trace";
    e.name = name;
    e.node = node;
    out_ << EventLine(e) << "\n";
  }
  void Delete(int64_t t, const std::string& api_version, const std::string& kind,
              const std::string& ns, const std::string& name) {
    TraceEvent e;
    e.t_ms = t;
    e.op = TraceOp::kDelete;
    e.api_version = api_version;
    e.kind = kind;
    e.ns = ns;
    e.name = name;
    out_ << EventLine(e) << "\n";
  }
  // `count` synthetic nodes (8 GPUs) named <prefix>-1.., in `racks` racks.
  void Nodes(int64_t t, int count, int racks, const std::string& prefix = "node") {
    auto topology = apiserver::ParseTopology("rack=" + std::to_string(racks));
    auto nodes = apiserver::MakeSyntheticNodes(
        count, *ParseResourceList("cpu=64,memory=512Gi,nvidia.com/gpu=8"), *topology, prefix);
    ASSERT_TRUE(nodes.ok());
    for (const std::string& node : *nodes) {
      Add(t, t == 0 ? TraceOp::kInit : TraceOp::kCreate, ReduceObject(json::parse(node)));
    }
  }
  std::string str() const { return out_.str(); }

 private:
  std::ostringstream out_;
};

std::vector<std::pair<int64_t, double>> Points(const std::vector<SeriesPoint>& series) {
  std::vector<std::pair<int64_t, double>> out;
  for (const SeriesPoint& p : series) out.emplace_back(p.t_ms, p.value);
  return out;
}

// A recorded StatefulSet pod deleted and created again under its name, and a
// Job's pod retried under its name while the replay still runs the first.
// Each pod runs its own runtime; the name's earlier pod is Succeeded and
// deleted when its runtime ends (or, still running in the replay, when the
// trace creates the next one), so the create succeeds.
TEST(ReplayTest, APodNameUsedAgainRunsEachPodsOwnRuntime) {
  TraceText t(600'000);
  t.Nodes(0, 2, 1);
  t.Add(1'000, TraceOp::kCreate, GpuPod("web-0", 1));
  t.Happened(1'000, TraceOp::kBound, "web-0", "node-1");
  t.Happened(61'000, TraceOp::kEnd, "web-0");  // ran 60 s
  t.Add(100'000, TraceOp::kCreate, GpuPod("web-0", 1));
  t.Happened(100'000, TraceOp::kBound, "web-0", "node-1");
  t.Add(200'000, TraceOp::kCreate, GpuPod("job-a", 2), 500'000);
  t.Add(250'000, TraceOp::kCreate, GpuPod("job-a", 2), 10'000);
  t.Happened(400'000, TraceOp::kEnd, "web-0");  // ran 300 s
  const Trace trace = ParseText(t.str());
  Result<ConfigResult> r = ReplayTrace(trace, ConfigFile("pack.yaml"), ReplayOptions{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ExpectInvariants(*r);
  EXPECT_EQ(r->pods, 4);
  EXPECT_EQ(r->pods_placed, 4);
  EXPECT_EQ(r->victims, 0) << "the replay's own ends are not evictions";
  std::vector<std::string> names;
  for (const Decision& d : r->decisions) {
    names.push_back(d.pod);
    EXPECT_FALSE(d.node.empty()) << d.pod;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"trace/job-a", "trace/job-a#2", "trace/web-0",
                                             "trace/web-0#2"}));
  // GPUs in use: web-0 1 s..61 s, again 100 s..400 s (its own 300 s, not
  // the first pod's 60 s); job-a from 200 s until its retry at 250 s, which
  // runs 10 s.
  EXPECT_EQ(Points(r->gpus_used), (std::vector<std::pair<int64_t, double>>{{0, 0},
                                                                           {1'000, 1},
                                                                           {61'000, 0},
                                                                           {100'000, 1},
                                                                           {200'000, 3},
                                                                           {260'000, 1},
                                                                           {400'000, 0}}));
}

// Nodes the trace adds and deletes after t = 0 count in the GPUs of the
// cluster and in the racks gangs are placed in. Two full nodes at t = 0;
// two more at 10 s, where a gang of two 8-GPU pods goes at 20 s; node-1 is
// deleted at 200 s, and its pod with it (as the pod garbage collector would).
TEST(ReplayTest, NodesAddedAndDeletedMidTraceCount) {
  TraceText t(300'000);
  t.Nodes(0, 2, 1);
  t.Add(1'000, TraceOp::kCreate, GpuPod("s-0", 8), 1'000'000);
  t.Add(2'000, TraceOp::kCreate, GpuPod("s-1", 8), 1'000'000);
  t.Nodes(10'000, 2, 1, "late");
  t.Add(20'000, TraceOp::kCreate,
        {{"apiVersion", "scheduling.copse.dev/v1alpha1"},
         {"kind", "PodGroup"},
         {"metadata", {{"name", "g"}, {"namespace", "trace"}}},
         {"spec", {{"minMember", 2}}}});
  for (const char* name : {"g-0", "g-1"}) {
    t.Add(20'000, TraceOp::kCreate, GpuPod(name, 8, {{"scheduling.copse.dev/pod-group", "g"}}),
          100'000);
  }
  t.Delete(200'000, "v1", "Node", "", "node-1");
  const Trace trace = ParseText(t.str());
  Result<ConfigResult> r = ReplayTrace(trace, ConfigFile("pack.yaml"), ReplayOptions{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ExpectInvariants(*r);
  EXPECT_EQ(r->total_gpus, 32) << "the most GPUs at once: 4 nodes of 8";
  EXPECT_EQ(r->pods_placed, 4);
  EXPECT_EQ(r->gangs_placed, 1);
  EXPECT_EQ(r->gangs_one_rack, 1) << "the late nodes' rack counts";
  EXPECT_EQ(r->victims, 0) << "a pod lost with its node is not the scheduler's victim";
  for (const Decision& d : r->decisions) {
    if (d.pod.starts_with("trace/g-")) {
      EXPECT_TRUE(d.node.starts_with("late-")) << d.pod;
    }
  }
  const auto used = Points(r->gpus_used);
  ASSERT_GE(used.size(), 7u);
  EXPECT_EQ(std::vector(used.begin(), used.begin() + 6),
            (std::vector<std::pair<int64_t, double>>{
                {0, 0}, {1'000, 8}, {2'000, 16}, {20'000, 32}, {120'000, 16}, {200'000, 8}}));
  EXPECT_EQ(used.back().second, 0);
  // GPU-time used over GPU-time in the cluster: 16 GPUs until 10 s, 32
  // until 200 s, then 24.
  double used_area = 0;
  for (size_t i = 0; i < used.size(); ++i) {
    const int64_t next = i + 1 < used.size() ? used[i + 1].first : r->end_ms;
    used_area += used[i].second * static_cast<double>(next - used[i].first);
  }
  ASSERT_GT(r->end_ms, 200'000);
  const double total_area =
      16.0 * 10'000 + 32.0 * 190'000 + 24.0 * static_cast<double>(r->end_ms - 200'000);
  EXPECT_NEAR(r->mean_gpu_utilization, used_area / total_area, 1e-9);
  EXPECT_LE(r->mean_gpu_utilization, 1.0);
}

// PodDisruptionBudgets are live in a replay: their status is computed as
// kube's disruption controller does (bound pods are Running and Ready at
// once). Two full nodes: one holds "covered" (priority 100, the budget's
// pod), the other "other" (priority 200). A priority-1000 pod must preempt
// one. Preemption picks the node whose victims violate no budget, then the
// one with the lowest-priority victim: "covered" when its budget allows a
// disruption, "other" when the budget keeps every covered pod.
std::string PdbTrace(const json& pdb_spec) {
  TraceText t(120'000);
  for (auto [name, value] :
       {std::pair{"low", 100}, std::pair{"mid", 200}, std::pair{"high", 1000}}) {
    t.Add(0, TraceOp::kInit,
          {{"apiVersion", "scheduling.k8s.io/v1"},
           {"kind", "PriorityClass"},
           {"metadata", {{"name", name}}},
           {"value", value}});
  }
  t.Nodes(0, 2, 1);
  t.Add(0, TraceOp::kInit,
        {{"apiVersion", "policy/v1"},
         {"kind", "PodDisruptionBudget"},
         {"metadata", {{"name", "db"}, {"namespace", "trace"}}},
         {"spec", pdb_spec}});
  t.Add(1'000, TraceOp::kCreate, GpuPod("covered", 8, {{"app", "db"}}, "low"));
  t.Add(2'000, TraceOp::kCreate, GpuPod("other", 8, json::object(), "mid"));
  t.Add(10'000, TraceOp::kCreate, GpuPod("urgent", 8, json::object(), "high"));
  return t.str();
}

TEST(ReplayTest, DisruptionBudgetsDecideWhichPodPreemptionTakes) {
  const json selector = {{"matchLabels", {{"app", "db"}}}};
  struct Case {
    const char* what;
    json spec;
    const char* victim;
  } cases[] = {
      {"maxUnavailable 1 allows one disruption",
       {{"maxUnavailable", 1}, {"selector", selector}},
       "trace/covered"},
      {"minAvailable 1 keeps the one covered pod",
       {{"minAvailable", 1}, {"selector", selector}},
       "trace/other"},
  };
  for (const Case& c : cases) {
    const Trace trace = ParseText(PdbTrace(c.spec));
    Result<ConfigResult> r = ReplayTrace(trace, ConfigFile("pack.yaml"), ReplayOptions{});
    ASSERT_TRUE(r.ok()) << c.what << ": " << r.error().message;
    ExpectInvariants(*r);
    std::map<std::string, Decision> by_pod;
    for (const Decision& d : r->decisions) by_pod[d.pod] = d;
    ASSERT_EQ(by_pod.size(), 3u);
    EXPECT_EQ(r->victims, 1) << c.what;
    EXPECT_GE(r->preemption_attempts, 1) << c.what;
    ASSERT_FALSE(by_pod["trace/urgent"].node.empty()) << c.what << ": urgent never placed";
    EXPECT_EQ(by_pod["trace/urgent"].node, by_pod[c.victim].node)
        << c.what << ": urgent should take " << c.victim << "'s node";
  }
}

// --speed N paces the replay at N times the trace's pace: a trace whose last
// event is at 100 s takes at least 1 s of real time at speed 100 (a lower
// bound only; the upper bound is generous), and decides as the virtual
// clock does.
TEST(ReplayTest, SpeedPacesTheReplayInRealTime) {
  TraceText t(100'000);
  t.Nodes(0, 2, 1);
  for (int i = 0; i < 5; ++i) {
    t.Add(25'000 * i, i == 0 ? TraceOp::kInit : TraceOp::kCreate,
          GpuPod("p-" + std::to_string(i), 1), 30'000);
  }
  const Trace trace = ParseText(t.str());
  ReplayOptions paced;
  paced.speed = 100;
  const auto start = std::chrono::steady_clock::now();
  Result<ConfigResult> r = ReplayTrace(trace, ConfigFile("pack.yaml"), paced);
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_GE(elapsed, 1.0) << "100 s of trace at speed 100";
  EXPECT_GE(r->wall_seconds, 1.0);
  EXPECT_LT(elapsed, 120.0);
  EXPECT_EQ(r->pods_placed, 5);
  Result<ConfigResult> fast = ReplayTrace(trace, ConfigFile("pack.yaml"), ReplayOptions{});
  ASSERT_TRUE(fast.ok()) << fast.error().message;
  ExpectSameDecisions(*r, *fast);
}

}  // namespace
}  // namespace copse::replay
