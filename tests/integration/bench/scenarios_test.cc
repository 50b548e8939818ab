// A tiny run of every `copse bench` scenario (tens of nodes, a few hundred
// pods): the JSON contract (bench/README.md) and the scheduling invariants —
// every measured pod bound, gangs all-or-nothing, no node over its
// allocatable — checked here from the placements, not from the scenario's
// own figures. Sizes stay small: the whole suite shares 2 cores.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "bench/bench.h"
#include "bench/harness.h"
#include "tests/support/paths.h"

namespace copse::bench {
namespace {

using json = nlohmann::json;

Result<BenchResult> RunScenario(std::string_view name, BenchOptions options) {
  options.quiet = true;
  if (options.timeout_seconds == 0) options.timeout_seconds = 120;
  for (const Scenario& s : Scenarios()) {
    if (s.name != name) continue;
    Progress progress(true);
    return s.run(options, progress);
  }
  return MakeError(ErrorCode::kNotFound, std::string(name));
}

// The fields every scenario writes, with what they must hold for a run that
// finished in time on the embedded server.
void ExpectContract(const BenchResult& r, bool scheduler) {
  const json j = json::parse(ToJson(r));
  for (const char* key : {"scenario", "nodes", "pods", "pods_bound", "pods_per_second", "p50_ms",
                          "p99_ms", "scheduler_cpu_seconds", "api_server_cpu_seconds",
                          "peak_rss_bytes", "timed_out", "targets_met"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["scenario"], r.scenario);
  EXPECT_EQ(j["timed_out"], false);
  EXPECT_GT(j["pods"].get<int64_t>(), 0);
  EXPECT_EQ(j["pods_bound"], j["pods"]) << "every measured pod bound";
  ASSERT_TRUE(j["pods_per_second"].is_number());
  EXPECT_GT(j["pods_per_second"].get<double>(), 0);
  ASSERT_TRUE(j["p50_ms"].is_number());
  ASSERT_TRUE(j["p99_ms"].is_number());
  EXPECT_GE(j["p50_ms"].get<double>(), 0);
  EXPECT_LE(j["p50_ms"].get<double>(), j["p99_ms"].get<double>());
  if (scheduler) {
    ASSERT_TRUE(j["scheduler_cpu_seconds"].is_number());
    EXPECT_GT(j["scheduler_cpu_seconds"].get<double>(), 0);
  }
  ASSERT_TRUE(j["api_server_cpu_seconds"].is_number());
  EXPECT_GT(j["peak_rss_bytes"].get<int64_t>(), 0);
  // pods/s is the contract's: pods bound / (last bind - first create).
  ASSERT_FALSE(r.bind_seconds.empty());
  EXPECT_NEAR(*r.pods_per_second, static_cast<double>(r.pods_bound) / r.bind_seconds.back(),
              *r.pods_per_second * 1e-6);
  EXPECT_EQ(r.latencies_ms.size(), static_cast<size_t>(r.pods_bound));
}

// Pods per node never exceed `slots`; every gang (the name up to its last
// '-') with a member bound has `gang_size` members bound.
void ExpectInvariants(const BenchResult& r, int64_t slots, int gang_size) {
  std::map<std::string, int64_t> per_node;
  std::map<std::string, int64_t> per_gang;
  for (const auto& [pod, node] : r.placement) {
    ++per_node[node];
    ++per_gang[pod.substr(0, pod.rfind('-'))];
  }
  for (const auto& [node, n] : per_node) EXPECT_LE(n, slots) << node << " over its allocatable";
  if (gang_size > 1) {
    for (const auto& [gang, n] : per_gang) EXPECT_EQ(n, gang_size) << gang << " partially bound";
  }
}

TEST(BenchScenarios, Basic) {
  BenchOptions o;
  o.nodes = 20;
  o.pods = 200;
  auto r = RunScenario("basic", o);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ExpectContract(*r, true);
  // 4 cpu nodes, 100m pods: 40 per node. 20 init pods + 200 measured.
  ExpectInvariants(*r, 40, 1);
  EXPECT_EQ(r->placement.size(), 220u);
}

TEST(BenchScenarios, BasicTimeoutIsAFailureWithFigures) {
  // One node holds 40 of the 100m pods: the rest can never be bound.
  BenchOptions o;
  o.nodes = 1;
  o.pods = 100;
  o.timeout_seconds = 3;
  auto r = RunScenario("basic", o);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_TRUE(r->timed_out);
  const json j = json::parse(ToJson(*r));
  EXPECT_EQ(j["timed_out"], true);
  EXPECT_EQ(j["pods"], 100);
  EXPECT_LT(j["pods_bound"].get<int64_t>(), 100);
  ExpectInvariants(*r, 40, 1);
  EXPECT_FALSE(r->targets.at("pods_per_second >= 20000"));
}

TEST(BenchScenarios, Gang) {
  BenchOptions o;
  o.nodes = 20;
  o.pods = 150;
  auto r = RunScenario("gang", o);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ExpectContract(*r, true);
  ExpectInvariants(*r, 40, 3);
}

TEST(BenchScenarios, GangTimesOutWhenGangsCannotFit) {
  // 10 nodes x 40 slots = 400: the 300 warm-up pods fit, the 150 measured
  // ones cannot all fit, so the run must time out and say so.
  BenchOptions o;
  o.nodes = 10;
  o.pods = 150;
  o.timeout_seconds = 3;
  auto r = RunScenario("gang", o);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_TRUE(r->timed_out);
  EXPECT_LT(r->pods_bound, r->pods);
  EXPECT_EQ(json::parse(ToJson(*r))["timed_out"], true);
  ExpectInvariants(*r, 40, 3);
}

// --config configures the in-process scheduler. One 256-pod gang of 1-GPU
// pods on 100 nodes of 8 GPUs, after 512 warm-up pods: copse's default packs
// GPU pods (the gang fills 32 nodes), the example spread config (LeastAllocated
// for accelerators too) puts them on the emptiest nodes, all over the cluster.
TEST(BenchScenarios, ConfigChoosesTheSchedulerProfile) {
  auto nodes_of_gang = [](const BenchResult& r) {
    std::set<std::string> nodes;
    for (const auto& [pod, node] : r.placement) {
      if (pod.starts_with("large-")) nodes.insert(node);
    }
    return nodes.size();
  };
  BenchOptions o;
  o.nodes = 100;
  o.pods = 256;
  auto packed = RunScenario("gang-large", o);
  ASSERT_TRUE(packed.ok()) << packed.error().ToString();
  ExpectContract(*packed, true);
  ExpectInvariants(*packed, 8, 256);
  o.scheduler_config = std::string(COPSE_SOURCE_DIR) + "/deploy/examples/traces/spread.yaml";
  auto spread = RunScenario("gang-large", o);
  ASSERT_TRUE(spread.ok()) << spread.error().ToString();
  ExpectContract(*spread, true);
  ExpectInvariants(*spread, 8, 256);
  EXPECT_LE(nodes_of_gang(*packed), 34u);
  EXPECT_GE(nodes_of_gang(*spread), 60u);

  // A file without a profile for the pods' schedulerName is refused, by name.
  const std::string other = ::testing::TempDir() + "copse-bench-other-profile.yaml";
  {
    std::ofstream out(other);
    out << "apiVersion: copse.dev/v1alpha1\nkind: CopseSchedulerConfiguration\n"
           "profiles:\n  - schedulerName: someone-else\n";
  }
  o.scheduler_config = other;
  auto refused = RunScenario("gang-large", o);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("no profile has schedulerName copse-scheduler"),
            std::string::npos)
      << refused.error().message;
  std::remove(other.c_str());
}

TEST(BenchScenarios, GangPreempt) {
  BenchOptions o;
  o.nodes = 20;
  o.pods = 40;
  auto r = RunScenario("gang-preempt", o);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ExpectContract(*r, true);
  ExpectInvariants(*r, 3, 1);
  EXPECT_EQ(r->extras.at("doomed_pods_bound"), 0);
  // Semi-preemptible gangs (a quarter of the 20 filling gangs) lose at most
  // their third pod; no gang is left bound below its minimum.
  EXPECT_EQ(r->extras.at("semi_preemptible_gangs"), 5);
  EXPECT_LE(r->extras.at("semi_preemptible_victims"), 5);
  EXPECT_EQ(r->extras.at("gangs_below_minimum"), 0);
  EXPECT_TRUE(r->failures.empty()) << r->failures.front();
  std::map<std::string, int64_t> semi_bound;
  for (const auto& [pod, node] : r->placement) {
    if (pod.starts_with("semi-")) ++semi_bound[pod.substr(0, pod.rfind('-'))];
  }
  EXPECT_EQ(semi_bound.size(), 5u) << "every semi-preemptible gang keeps its minimum";
  for (const auto& [gang, n] : semi_bound) EXPECT_GE(n, 2) << gang;
  EXPECT_GT(r->extras.at("victims_per_placed_gang"), 0);
}

TEST(BenchScenarios, Topology) {
  BenchOptions o;
  o.nodes = 50;
  o.pods = 200;
  auto r = RunScenario("topology", o);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ExpectContract(*r, true);
  ExpectInvariants(*r, 40, 4);
  EXPECT_EQ(r->extras.at("packed_fraction"), 1.0);
}

TEST(BenchScenarios, TopologyLarge) {
  BenchOptions o;
  // 3 zones x 10 blocks x 10 racks of 2 nodes: a block holds 20 x 18 = 360
  // pods, room for the largest gang (256). --pods 100 draws one gang.
  o.nodes = 600;
  o.pods = 100;
  auto r = RunScenario("topology-large", o);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_FALSE(r->timed_out);
  const json j = json::parse(ToJson(*r));
  EXPECT_TRUE(j["pods_per_second"].is_number());
  EXPECT_TRUE(j["scheduler_cpu_seconds"].is_number());
  // 64 cpu / 3500m = 18 pods per node; copse PodGroups need every member.
  std::map<std::string, int64_t> per_node;
  for (const auto& [pod, node] : r->placement) ++per_node[node];
  for (const auto& [node, n] : per_node) EXPECT_LE(n, 18) << node;
  EXPECT_GT(r->extras.at("gangs_bound"), 0);
  EXPECT_EQ(r->extras.at("gangs_partially_bound"), 0);
  EXPECT_EQ(r->extras.at("gang_one_block_fraction"), 1.0);
  // Bound, or in a gang its PodGroup reported Unschedulable: every pod is accounted for.
  EXPECT_EQ(r->extras.at("gangs_bound") + r->extras.at("gangs_unschedulable"),
            r->extras.at("gangs"));
}

TEST(BenchScenarios, ApiServerReportsWhatItDoesNotMeasureAsMissing) {
  BenchOptions o;
  o.nodes = 10;
  o.pods = 200;
  auto r = RunScenario("apiserver", o);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  const json j = json::parse(ToJson(*r));
  // No scheduler: no pods/s, no create -> bound latency, no scheduler CPU; null, never 0.
  EXPECT_TRUE(j["pods_per_second"].is_null());
  EXPECT_TRUE(j["p50_ms"].is_null());
  EXPECT_TRUE(j["scheduler_cpu_seconds"].is_null());
  EXPECT_TRUE(j["api_server_cpu_seconds"].is_number());
  EXPECT_EQ(j["watch_events"], 400) << "the watch replays one ADDED and one MODIFIED per pod";
  EXPECT_GT(j["creates_per_second"].get<double>(), 0);
  EXPECT_EQ(j["timed_out"], false);
  EXPECT_NE(FormatTable(*r).find("n/a"), std::string::npos);
}

TEST(BenchScenarios, Grove) {
  BenchOptions o;
  o.nodes = 10;
  o.pods = 26;  // two PodCliqueSets of 13 pods
  auto r = RunScenario("grove", o);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  const json j = json::parse(ToJson(*r));
  EXPECT_EQ(j["timed_out"], false);
  EXPECT_EQ(j["pods"], 26);
  EXPECT_EQ(j["pods_bound"], 26);
  ASSERT_TRUE(j["scheduler_cpu_seconds"].is_number());
  EXPECT_GT(j["scheduler_cpu_seconds"].get<double>(), 0) << "measured, not left at 0";
  EXPECT_TRUE(j["pods_per_second"].is_number());
  EXPECT_LE(j["p50_ms"].get<double>(), j["p99_ms"].get<double>());
}

TEST(BenchScenarios, Scale) {
  BenchOptions o;
  o.nodes = 50;
  o.pods = 300;
  auto r = RunScenario("scale", o);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ExpectContract(*r, true);
  // 32 cpu / 500m = 64 pods per node (pods=110 is looser).
  ExpectInvariants(*r, 64, 1);
  std::map<std::string, int64_t> per_gang;
  for (const auto& [pod, node] : r->placement) {
    if (pod.starts_with("gang-")) ++per_gang[pod.substr(0, pod.rfind('-'))];
  }
  EXPECT_FALSE(per_gang.empty()) << "30% of the pods are in gangs";
  for (const auto& [gang, n] : per_gang) EXPECT_GE(n, 8) << gang;
  EXPECT_EQ(r->extras.at("gangs_partially_bound"), 0);
  EXPECT_EQ(r->extras.at("gangs_outside_one_rack"), 0);
  EXPECT_TRUE(r->failures.empty());
  // The rack each gang requires, checked here from the placements too: 50
  // nodes in racks of 5 (node-1..5 rack 0, ...), as apiserver/synthetic.h
  // numbers them.
  std::map<std::string, std::set<int64_t>> racks;
  for (const auto& [pod, node] : r->placement) {
    if (!pod.starts_with("gang-")) continue;
    const int64_t k = std::stoll(node.substr(node.rfind('-') + 1));
    racks[pod.substr(0, pod.rfind('-'))].insert((k - 1) / 5);
  }
  for (const auto& [gang, set] : racks) EXPECT_EQ(set.size(), 1u) << gang << " spans racks";
  EXPECT_GT(r->extras.at("rss_per_pod_bytes"), 0);
}

// The replay scenario at a tiny size: the trace generator scaled
// to 16 nodes and about 300 pods, replayed under both shipped configs.
TEST(BenchScenarios, Replay) {
  BenchOptions o;
  o.nodes = 16;
  o.pods = 300;
  auto r = RunScenario("replay", o);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_FALSE(r->timed_out);
  EXPECT_TRUE(r->failures.empty()) << r->failures.front();
  const json j = json::parse(ToJson(*r));
  EXPECT_EQ(j["scenario"], "replay");
  EXPECT_EQ(j["nodes"], 16);
  // About 300 pods: the arrival rate is scaled, the count is the trace's.
  EXPECT_GT(j["pods"].get<int64_t>(), 150);
  EXPECT_LT(j["pods"].get<int64_t>(), 600);
  // A virtual clock: no pods/s and no create -> bind latency in real time.
  EXPECT_TRUE(j["pods_per_second"].is_null());
  EXPECT_TRUE(j["p50_ms"].is_null());
  EXPECT_TRUE(j["scheduler_cpu_seconds"].is_null());
  EXPECT_NE(FormatTable(*r).find("n/a"), std::string::npos);
  ASSERT_TRUE(j["synth_seconds"].is_number());
  EXPECT_GT(j["synth_seconds"].get<double>(), 0);
  int64_t fewest = j["pods"].get<int64_t>();
  for (const std::string name : {"pack.yaml", "spread.yaml"}) {
    auto at = [&](const std::string& what) -> double {
      const std::string key = what + "[" + name + "]";
      EXPECT_TRUE(j.contains(key) && j[key].is_number()) << key;
      return j.contains(key) && j[key].is_number() ? j[key].get<double>() : -1;
    };
    EXPECT_GT(at("replay_seconds"), 0);
    EXPECT_GT(at("cpu_seconds"), 0);
    EXPECT_GT(at("steps"), 0);
    EXPECT_GT(at("pods_placed"), j["pods"].get<double>() / 2) << name;
    EXPECT_LE(at("pods_placed"), j["pods"].get<double>()) << name;
    EXPECT_GT(at("gangs_placed"), 0) << name;
    EXPECT_LE(at("gangs_placed"), at("gangs")) << name;
    EXPECT_GT(at("peak_rss_bytes"), 0);
    EXPECT_LE(at("peak_rss_bytes"), j["peak_rss_bytes"].get<double>());
    fewest = std::min(fewest, static_cast<int64_t>(at("pods_placed")));
    const std::string target = "replay seconds per config <= 120 [" + name + "]";
    ASSERT_TRUE(j["targets_met"].contains(target)) << target;
    EXPECT_EQ(j["targets_met"][target], at("replay_seconds") <= 120);
  }
  EXPECT_EQ(j["pods_bound"], fewest) << "the fewest placed under any config";
}

// --config replaces the two shipped configs; a replay that runs out of time
// fails the run, and its figures are missing, not 0.
TEST(BenchScenarios, ReplayTimeoutIsAFailureWithoutFigures) {
  BenchOptions o;
  o.scheduler_config = std::string(COPSE_SOURCE_DIR) + "/deploy/examples/traces/spread.yaml";
  // ~10,000 pods on 200 nodes: far more than a second of replay.
  o.nodes = 200;
  o.pods = 10'000;
  o.timeout_seconds = 1;
  auto r = RunScenario("replay", o);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_TRUE(r->timed_out);
  ASSERT_EQ(r->failures.size(), 1u);
  EXPECT_NE(r->failures[0].find("did not finish within 1s"), std::string::npos) << r->failures[0];
  const json j = json::parse(ToJson(*r));
  EXPECT_EQ(j["timed_out"], true);
  EXPECT_FALSE(j.contains("replay_seconds[spread.yaml]"));
  EXPECT_FALSE(j.contains("steps[spread.yaml]"));
  EXPECT_FALSE(j.contains("replay_seconds[pack.yaml]")) << "--config replaces the shipped ones";
  ASSERT_EQ(j["targets_met"].size(), 1u);
  EXPECT_EQ(j["targets_met"]["replay seconds per config <= 120 [spread.yaml]"], false);
}

TEST(BenchScenarios, KubeconfigRefusesANonLoopbackServer) {
  char path[] = "/tmp/copse-bench-kubeconfig-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  {
    std::ofstream out(path);
    out << "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n"
           "    server: https://10.1.2.3:6443\n    insecure-skip-tls-verify: true\n"
           "users:\n- name: u\n  user:\n    token: x\ncontexts:\n- name: c\n  context:\n"
           "    cluster: c\n    user: u\ncurrent-context: c\n";
  }
  BenchOptions o;
  o.kubeconfig = path;
  o.nodes = 5;
  o.pods = 5;
  auto r = RunScenario("basic", o);
  std::remove(path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("--allow-remote"), std::string::npos) << r.error().ToString();
}

TEST(BenchScenarios, PlotIsAnSvgOfBothPanels) {
  BenchOptions o;
  o.nodes = 10;
  o.pods = 50;
  auto r = RunScenario("basic", o);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  const std::string svg = PlotSvg(*r);
  EXPECT_TRUE(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_NE(svg.find("pods bound over time"), std::string::npos);
  EXPECT_NE(svg.find("latency CDF"), std::string::npos);
  EXPECT_NE(svg.find("<polyline"), svg.rfind("<polyline")) << "two curves";
  EXPECT_TRUE(svg.ends_with("</svg>\n"));
  // Well-formed: every element opened is closed (a truncated line would not be).
  auto count = [&](std::string_view what) {
    size_t n = 0;
    for (size_t at = svg.find(what); at != std::string::npos; at = svg.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("<text"), count("</text>"));
  EXPECT_EQ(count("<line") + count("<polyline") + count("<rect"), count("/>"));
  EXPECT_EQ(count("<text"), 11u) << "a title, and per panel a title, two axis labels, two values";
}

}  // namespace
}  // namespace copse::bench
