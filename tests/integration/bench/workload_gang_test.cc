// `copse bench workload-gang` at a tiny size: upstream Workloads and
// PodGroups on the embedded server (copse in-process), the same against a
// server reached through a kubeconfig (what the side by side does: nodes,
// objects and cleanup over HTTP), the clear failure on a server that does not
// serve the Workload API, and the version choice from discovery documents.
// Invariants are checked from the placements, not from the scenario's own
// figures.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "apiserver/apiserver.h"
#include "apiserver/store.h"
#include "bench/bench.h"
#include "bench/harness.h"
#include "bench/workload_api.h"
#include "kube/discovery.h"
#include "kube/pod_group.h"
#include "kube/workload.h"

namespace copse::bench {
namespace workload_gang_test {

using json = nlohmann::json;

Result<BenchResult> RunWorkloadGang(BenchOptions options) {
  options.quiet = true;
  if (options.timeout_seconds == 0) options.timeout_seconds = 120;
  for (const Scenario& s : Scenarios()) {
    if (s.name != "workload-gang") continue;
    EXPECT_TRUE(s.external) << "runs against --kubeconfig";
    EXPECT_TRUE(s.takes_gang_shape);
    Progress progress(true);
    return s.run(options, progress);
  }
  return MakeError(ErrorCode::kNotFound, "workload-gang is not registered");
}

// 16 nodes x 8 GPUs in 2 racks of 8 nodes (node-1..8, node-9..16, as
// apiserver/synthetic.h numbers them); gangs of 4 pods x 2 GPUs: 16 gangs
// fit, 20 are offered (125%), the odd ones require one rack.
BenchOptions Tiny() {
  BenchOptions o;
  o.nodes = 16;
  o.gang_shape.racks = 2;
  o.gang_shape.over_capacity = 1.25;
  o.gang_shape.settle_seconds = 2;
  return o;
}

// The invariants, from the placements: at most 4 pods (8 GPUs) per node,
// every gang whole or absent, odd gangs in one rack. Returns gangs placed.
int64_t CheckPlacements(const BenchResult& r) {
  std::map<std::string, int64_t> per_node;
  std::map<std::string, std::set<int64_t>> racks;
  std::map<std::string, int64_t> per_gang;
  for (const auto& [pod, node] : r.placement) {
    ++per_node[node];
    const std::string gang = pod.substr(0, pod.rfind('-'));
    ++per_gang[gang];
    const int64_t k = std::stoll(node.substr(node.rfind('-') + 1));
    racks[gang].insert((k - 1) / 8);
  }
  for (const auto& [node, n] : per_node) EXPECT_LE(n, 4) << node << " over its 8 GPUs";
  for (const auto& [gang, n] : per_gang) EXPECT_EQ(n, 4) << gang << " partially bound";
  for (const auto& [gang, set] : racks) {
    const int64_t index = std::stoll(gang.substr(gang.rfind('-') + 1));
    if (index % 2 == 1) {
      EXPECT_EQ(set.size(), 1u) << gang << " requires one rack";
    }
  }
  return static_cast<int64_t>(per_gang.size());
}

TEST(WorkloadGangBench, PlacesWholeGangsUpToCapacityAndReportsTheRest) {
  auto r = RunWorkloadGang(Tiny());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_TRUE(r->failures.empty()) << r->failures.front();
  const json j = json::parse(ToJson(*r));
  EXPECT_EQ(j["scenario"], "workload-gang");
  EXPECT_EQ(j["nodes"], 16);
  EXPECT_EQ(j["pods"], 80);
  EXPECT_EQ(j["timed_out"], false) << "over capacity, the run ends by settling, not timing out";
  EXPECT_EQ(j["gangs"], 20);
  EXPECT_EQ(j["gangs_fit_at_most"], 16);
  EXPECT_EQ(j["rack_constrained_gangs"], 10);
  EXPECT_EQ(j["settle_seconds"], 2);
  const int64_t placed = CheckPlacements(*r);
  EXPECT_EQ(j["gangs_placed"], placed);
  EXPECT_EQ(j["pods_bound"], 4 * placed);
  EXPECT_LE(placed, 16);
  EXPECT_GE(placed, 12) << "copse packs 2-GPU pods: a gang fills one node";
  EXPECT_EQ(j["gangs_partial"], 0);
  EXPECT_EQ(j["nodes_over_allocatable"], 0);
  EXPECT_EQ(j["rack_constrained_gangs_in_one_rack"], j["rack_constrained_gangs_placed"]);
  EXPECT_GT(j["rack_constrained_gangs_placed"].get<int64_t>(), 0);
  // The gangs left over are the scheduler's to report on their PodGroups.
  EXPECT_LE(j["gangs_reported_unschedulable"].get<int64_t>(), 20 - placed);
  ASSERT_TRUE(j["time_to_last_bind_s"].is_number());
  EXPECT_GT(j["time_to_last_bind_s"].get<double>(), 0);
  ASSERT_TRUE(j["pods_per_second"].is_number());
  EXPECT_NEAR(j["pods_per_second"].get<double>(),
              static_cast<double>(4 * placed) / j["time_to_last_bind_s"].get<double>(),
              j["pods_per_second"].get<double>() * 1e-6);
  // In-process: the scheduler's CPU is measured, to the end and to the last bind.
  ASSERT_TRUE(j["scheduler_cpu_seconds"].is_number());
  ASSERT_TRUE(j["scheduler_cpu_seconds_to_last_bind"].is_number());
  EXPECT_GT(j["scheduler_cpu_seconds"].get<double>(), 0);
  EXPECT_LE(j["scheduler_cpu_seconds_to_last_bind"].get<double>(),
            j["scheduler_cpu_seconds"].get<double>());
  EXPECT_TRUE(j["api_server_cpu_seconds"].is_number());
}

TEST(WorkloadGangBench, EndsAsSoonAsEveryPodIsBound) {
  // 8 gangs that fit: no settle window to wait for (60 s would be seen).
  BenchOptions o = Tiny();
  o.pods = 32;
  o.gang_shape.settle_seconds = 60;
  const auto start = std::chrono::steady_clock::now();
  auto r = RunWorkloadGang(o);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(50));
  EXPECT_EQ(r->pods_bound, 32);
  EXPECT_EQ(r->extras.at("gangs_placed"), 8);
  EXPECT_EQ(CheckPlacements(*r), 8);
}

TEST(WorkloadGangBench, RefusesAShapeThatCannotBe) {
  BenchOptions o = Tiny();
  o.gang_shape.gpus_per_pod = 16;
  auto r = RunWorkloadGang(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("--gpus-per-pod 16"), std::string::npos) << r.error().message;
  o = Tiny();
  o.gang_shape.racks = 17;
  r = RunWorkloadGang(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("--racks 17"), std::string::npos) << r.error().message;
  o = Tiny();
  o.gang_shape.rack_share = 1.5;
  r = RunWorkloadGang(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("--rack-share"), std::string::npos) << r.error().message;
}

// A server of its own reached through a kubeconfig, as an external one is.
struct ExternalServer {
  explicit ExternalServer(apiserver::StoreOptions store_options = {}) {
    store = apiserver::NewStore(std::move(store_options));
    apiserver::Options options;
    options.store = store;
    options.serve_https = false;
    auto started = apiserver::ApiServer::Start(options);
    EXPECT_TRUE(started.ok()) << started.error().ToString();
    if (!started.ok()) return;
    server = std::move(started).value();
    char path[] = "/tmp/copse-bench-workload-gang-XXXXXX";
    const int fd = mkstemp(path);
    EXPECT_GE(fd, 0);
    close(fd);
    kubeconfig = path;
    std::ofstream out(kubeconfig);
    out << "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: "
        << server->http_url() << "\nusers:\n- name: u\n  user: {}\ncontexts:\n- name: c\n"
        << "  context:\n    cluster: c\n    user: u\ncurrent-context: c\n";
  }
  ~ExternalServer() {
    if (!kubeconfig.empty()) std::remove(kubeconfig.c_str());
  }
  size_t Count(const kube::ResourceRef& ref, const std::string& ns) {
    apiserver::ListOptions options;
    options.ns = ns;
    auto list = store->List(ref, options);
    if (!list.ok()) return 0;
    // Objects being deleted (a PodGroup waiting for its protection
    // finalizer) count as gone.
    size_t n = 0;
    for (const auto& item : list->items) {
      n += item->json.find("\"deletionTimestamp\"") == std::string::npos;
    }
    return n;
  }
  std::shared_ptr<apiserver::Store> store;
  std::unique_ptr<apiserver::ApiServer> server;
  std::string kubeconfig;
};

TEST(WorkloadGangBench, RunsAgainstAKubeconfigServerAndCleansUp) {
  ExternalServer external;
  ASSERT_NE(external.server, nullptr);
  BenchOptions o = Tiny();
  o.kubeconfig = external.kubeconfig;
  auto r = RunWorkloadGang(o);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_TRUE(r->failures.empty()) << r->failures.front();
  const json j = json::parse(ToJson(*r));
  EXPECT_GE(CheckPlacements(*r), 12);
  EXPECT_EQ(j["gangs_partial"], 0);
  // Not measured on an external server: missing, never 0.
  EXPECT_TRUE(j["api_server_cpu_seconds"].is_null());
  // The benchmark's pods, PodGroups, Workloads and nodes are gone.
  EXPECT_EQ(external.Count(kube::resources::kPods, kBenchNamespace), 0u);
  EXPECT_EQ(external.Count(kube::resources::kPodGroups, kBenchNamespace), 0u);
  EXPECT_EQ(external.Count(kube::resources::kWorkloads, kBenchNamespace), 0u);
  EXPECT_EQ(external.Count(kube::resources::kNodes, ""), 0u);
}

TEST(WorkloadGangBench, ExternalSchedulerWithoutItsPidHasNoCpuFigure) {
  // Nothing schedules these pods (no scheduler runs): the run settles with
  // none bound, and the scheduler's CPU is missing, not 0.
  ExternalServer external;
  ASSERT_NE(external.server, nullptr);
  BenchOptions o = Tiny();
  o.pods = 8;
  o.kubeconfig = external.kubeconfig;
  o.scheduler = "external";
  o.scheduler_name = "nobody";
  auto r = RunWorkloadGang(o);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  const json j = json::parse(ToJson(*r));
  EXPECT_EQ(j["pods_bound"], 0);
  EXPECT_EQ(j["gangs_placed"], 0);
  EXPECT_TRUE(j["scheduler_cpu_seconds"].is_null());
  EXPECT_TRUE(j["scheduler_cpu_seconds_to_last_bind"].is_null());
  EXPECT_TRUE(j["pods_per_second"].is_null());
  EXPECT_NE(FormatTable(*r).find("n/a"), std::string::npos);
}

TEST(WorkloadGangBench, FailsClearlyWhenTheServerDoesNotServeTheWorkloadApi) {
  // As v1.20 (or a v1.36 without the feature gates): no workloads, no podgroups.
  apiserver::StoreOptions v120;
  v120.served_versions = {{"podgroups.scheduling.k8s.io", {}}, {"workloads.scheduling.k8s.io", {}}};
  ExternalServer external(std::move(v120));
  ASSERT_NE(external.server, nullptr);
  BenchOptions o = Tiny();
  o.kubeconfig = external.kubeconfig;
  auto r = RunWorkloadGang(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalid);
  EXPECT_NE(r.error().message.find("does not serve the Workload API"), std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().message.find("scheduling.k8s.io serves v1 (no workloads or podgroups)"),
            std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().message.find("--runtime-config=scheduling.k8s.io/v1alpha2=true"),
            std::string::npos);
  // Nothing was left behind: the harness removed its nodes.
  EXPECT_EQ(external.Count(kube::resources::kNodes, ""), 0u);
}

// Discovery documents of a server: /api, /apis naming scheduling.k8s.io's
// versions, and one resource list per version.
Result<kube::Discovery> DiscoveryOf(const std::map<std::string, std::vector<std::string>>& lists) {
  json versions = json::array();
  std::vector<std::string> resource_lists;
  for (const auto& [version, resources] : lists) {
    versions.push_back({{"groupVersion", "scheduling.k8s.io/" + version}, {"version", version}});
    json list = {{"kind", "APIResourceList"},
                 {"apiVersion", "v1"},
                 {"groupVersion", "scheduling.k8s.io/" + version},
                 {"resources", json::array()}};
    for (const std::string& r : resources) {
      list["resources"].push_back({{"name", r},
                                   {"namespaced", r != "priorityclasses"},
                                   {"kind", r},
                                   {"verbs", {"create", "get", "list", "watch"}}});
    }
    resource_lists.push_back(list.dump());
  }
  const json api = {{"kind", "APIVersions"}, {"versions", {"v1"}}};
  const json groups = {{"kind", "APIGroupList"},
                       {"apiVersion", "v1"},
                       {"groups",
                        {{{"name", "scheduling.k8s.io"},
                          {"versions", versions},
                          {"preferredVersion", versions[0]}}}}};
  return kube::Discovery::FromDocuments(api.dump(), groups.dump(), resource_lists);
}

TEST(WorkloadApiChoice, TakesTheVersionTheServerServes) {
  auto v136 = DiscoveryOf(
      {{"v1", {"priorityclasses"}}, {"v1alpha2", {"podgroups", "podgroups/status", "workloads"}}});
  ASSERT_TRUE(v136.ok()) << v136.error().ToString();
  auto chosen = ChooseWorkloadApi(*v136);
  ASSERT_TRUE(chosen.ok()) << chosen.error().ToString();
  EXPECT_EQ((*chosen)->version, "v1alpha2");
  EXPECT_EQ((*chosen)->pod_groups().Path("bench"),
            "/apis/scheduling.k8s.io/v1alpha2/namespaces/bench/podgroups");
  EXPECT_EQ((*chosen)->workloads().Path("bench"),
            "/apis/scheduling.k8s.io/v1alpha2/namespaces/bench/workloads");
}

TEST(WorkloadApiChoice, NamesWhatAServerWithoutItServes) {
  // Only PodGroups is not enough: the benchmark writes both kinds.
  auto half = DiscoveryOf({{"v1", {"priorityclasses"}}, {"v1alpha2", {"podgroups"}}});
  ASSERT_TRUE(half.ok()) << half.error().ToString();
  auto chosen = ChooseWorkloadApi(*half);
  ASSERT_FALSE(chosen.ok());
  EXPECT_NE(chosen.error().message.find("v1alpha2 (podgroups)"), std::string::npos)
      << chosen.error().message;
  // A version this benchmark does not write is named, not guessed at.
  auto later = DiscoveryOf({{"v1", {"priorityclasses"}}, {"v1alpha9", {"podgroups", "workloads"}}});
  ASSERT_TRUE(later.ok()) << later.error().ToString();
  chosen = ChooseWorkloadApi(*later);
  ASSERT_FALSE(chosen.ok());
  EXPECT_NE(chosen.error().message.find("v1alpha9 (workloads, podgroups)"), std::string::npos)
      << chosen.error().message;
  EXPECT_NE(
      chosen.error().message.find("this benchmark writes Workloads and PodGroups of v1alpha2"),
      std::string::npos)
      << chosen.error().message;
}

// What the v1alpha2 row writes is what the API's own types decode: the gang
// policy, the topology constraint, the template reference and the pod's group.
TEST(WorkloadApiChoice, V1alpha2ObjectsAreTheUpstreamShape) {
  const WorkloadApi& api = WorkloadApis()[0];
  ASSERT_EQ(api.version, "v1alpha2");
  GangObjects gang{"bench", "w-1", "w-1", 4, "copse.dev/rack"};
  auto workload = kube::Workload::Decode(api.workload_json(gang));
  ASSERT_TRUE(workload.ok()) << workload.error().ToString();
  EXPECT_TRUE(workload->Validate().ok()) << workload->Validate().error().ToString();
  ASSERT_EQ(workload->spec.pod_group_templates.size(), 1u);
  const kube::PodGroupTemplate& t = workload->spec.pod_group_templates[0];
  ASSERT_TRUE(t.scheduling_policy.gang.has_value());
  EXPECT_EQ(t.scheduling_policy.gang->min_count, 4);
  ASSERT_TRUE(t.scheduling_constraints.has_value());
  EXPECT_EQ(t.scheduling_constraints->TopologyKeys(), std::vector<std::string>{"copse.dev/rack"});

  const json group = json::parse(api.pod_group_json(gang));
  EXPECT_EQ(group["apiVersion"], "scheduling.k8s.io/v1alpha2");
  EXPECT_EQ(group["spec"]["podGroupTemplateRef"]["workload"]["workloadName"], "w-1");
  EXPECT_EQ(group["spec"]["podGroupTemplateRef"]["workload"]["podGroupTemplateName"], t.name);
  EXPECT_EQ(group["spec"]["schedulingPolicy"]["gang"]["minCount"], 4);
  EXPECT_EQ(group["spec"]["schedulingConstraints"]["topology"][0]["key"], "copse.dev/rack");
  EXPECT_EQ(json::parse("{" + api.pod_membership(gang) + "}"),
            json({{"schedulingGroup", {{"podGroupName", "w-1"}}}}));

  // Without a rack: no constraints at all.
  gang.topology_key.clear();
  EXPECT_FALSE(json::parse(api.pod_group_json(gang))["spec"].contains("schedulingConstraints"));
  EXPECT_FALSE(json::parse(api.workload_json(gang))["spec"]["podGroupTemplates"][0].contains(
      "schedulingConstraints"));
}

}  // namespace workload_gang_test
}  // namespace copse::bench
