// Scheduler configuration: parsing, defaults, merging with the default
// profile, plugin arguments and every validation error (with its field path).

#include "scheduler/config/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <any>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "plugins/balanced_allocation/balanced_allocation.h"
#include "plugins/default_preemption/default_preemption.h"
#include "plugins/defaults/defaults.h"
#include "plugins/domain_packing/domain_packing.h"
#include "plugins/framework/framework.h"
#include "plugins/inter_pod_affinity/inter_pod_affinity.h"
#include "plugins/node_affinity/node_affinity.h"
#include "plugins/node_resources_fit/fit.h"
#include "plugins/pod_topology_spread/pod_topology_spread.h"
#include "scheduler/config/plugin_args.h"
#include "tests/support/paths.h"

namespace copse::scheduler::config {
namespace {

using plugins::ExtensionPoint;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr std::string_view kCopse =
    "apiVersion: copse.dev/v1alpha1\nkind: CopseSchedulerConfiguration\n";
constexpr std::string_view kKube =
    "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";

std::string Doc(std::string_view header, std::string_view body) {
  return std::string(header) + std::string(body);
}

// A second queue sort plugin, to test that all profiles must share one.
class FifoSort final : public plugins::QueueSortPlugin {
 public:
  std::string_view Name() const noexcept override { return "FifoSort"; }
  bool Less(const plugins::QueuedPodView& a,
            const plugins::QueuedPodView& b) const noexcept override {
    return a.timestamp < b.timestamp;
  }
};

// An out-of-tree plugin with arguments, to test custom decoders.
struct GateArgs {
  int32_t limit = 3;
};
class Gate final : public plugins::PreEnqueuePlugin {
 public:
  explicit Gate(GateArgs args) : args_(args) {}
  std::string_view Name() const noexcept override { return "Gate"; }
  plugins::Status PreEnqueue(const PodInfo& /*pod*/) const noexcept override {
    return plugins::Status();
  }
  int32_t limit() const { return args_.limit; }

 private:
  GateArgs args_;
};

class ConfigTest : public ::testing::Test {
 protected:
  ConfigTest() {
    EXPECT_TRUE(plugins::RegisterDefaultPlugins(registry_).ok());
    EXPECT_TRUE(
        registry_
            .Register("FifoSort",
                      [](const plugins::PluginArgs*) -> Result<std::unique_ptr<plugins::Plugin>> {
                        return std::unique_ptr<plugins::Plugin>(new FifoSort());
                      })
            .ok());
  }

  Result<SchedulerConfig> Parse(std::string_view yaml) {
    return ParseSchedulerConfig(yaml, registry_);
  }

  // The error message of a document that must be rejected.
  std::string ErrorOf(std::string_view yaml) {
    Result<SchedulerConfig> r = Parse(yaml);
    EXPECT_FALSE(r.ok()) << "accepted:\n" << yaml;
    if (r.ok()) return "";
    EXPECT_EQ(r.error().code, ErrorCode::kInvalid);
    return r.error().message;
  }

  std::unique_ptr<plugins::Framework> Build(const plugins::Profile& profile) {
    Result<std::unique_ptr<plugins::Framework>> fw = plugins::Framework::Create(registry_, profile);
    EXPECT_TRUE(fw.ok()) << (fw.ok() ? "" : fw.error().message);
    return fw.ok() ? std::move(*fw) : nullptr;
  }

  plugins::Registry registry_;
};

// ---------------------------------------------------------------- defaults

TEST_F(ConfigTest, DefaultConfigHasOneDefaultProfileAndKubeLikeDefaults) {
  const SchedulerConfig c = DefaultSchedulerConfig();
  ASSERT_EQ(c.profiles.size(), 1u);
  EXPECT_EQ(c.profiles[0].scheduler_name, "copse-scheduler");
  EXPECT_EQ(c.parallelism, 16);
  EXPECT_EQ(c.percentage_of_nodes_to_score, 0);
  EXPECT_EQ(c.pod_initial_backoff, std::chrono::seconds(1));
  EXPECT_EQ(c.pod_max_backoff, std::chrono::seconds(10));
  EXPECT_EQ(c.pod_max_in_unschedulable_pods, std::chrono::minutes(5));
  EXPECT_EQ(c.pod_group_max_backoff, std::chrono::seconds(60));
  EXPECT_TRUE(c.leader_election.leader_elect);
  EXPECT_EQ(c.leader_election.lease_duration, std::chrono::seconds(15));
  EXPECT_EQ(c.leader_election.renew_deadline, std::chrono::seconds(10));
  EXPECT_EQ(c.leader_election.retry_period, std::chrono::seconds(2));
  EXPECT_EQ(c.leader_election.resource_name, "copse-scheduler");
  EXPECT_EQ(c.leader_election.resource_namespace, "kube-system");
  EXPECT_GT(c.client_connection.qps, 50.0);
  auto fw = Build(c.profiles[0]);
  ASSERT_NE(fw, nullptr);
  EXPECT_THAT(fw->PluginNames(ExtensionPoint::kQueueSort), ElementsAre("PrioritySort"));
}

TEST_F(ConfigTest, MinimalDocumentEqualsTheDefaults) {
  for (std::string_view header : {kCopse, kKube}) {
    Result<SchedulerConfig> r = Parse(header);
    ASSERT_TRUE(r.ok()) << r.error().message;
    const SchedulerConfig d = DefaultSchedulerConfig();
    ASSERT_EQ(r->profiles.size(), 1u);
    EXPECT_EQ(r->profiles[0].scheduler_name, "copse-scheduler");
    const plugins::Profile def = plugins::DefaultProfile("copse-scheduler");
    ASSERT_EQ(r->profiles[0].plugins.multi_point.enabled.size(),
              def.plugins.multi_point.enabled.size());
    for (size_t i = 0; i < def.plugins.multi_point.enabled.size(); ++i) {
      EXPECT_EQ(r->profiles[0].plugins.multi_point.enabled[i].name,
                def.plugins.multi_point.enabled[i].name);
      EXPECT_EQ(r->profiles[0].plugins.multi_point.enabled[i].weight,
                def.plugins.multi_point.enabled[i].weight);
    }
    EXPECT_TRUE(r->profiles[0].plugin_args.empty());
    EXPECT_EQ(r->parallelism, d.parallelism);
    EXPECT_EQ(r->pod_max_backoff, d.pod_max_backoff);
    EXPECT_EQ(r->client_connection.qps, d.client_connection.qps);
    EXPECT_EQ(r->api_version, header == kCopse ? kCopseApiVersion : kKubeSchedulerApiVersion);
  }
}

TEST_F(ConfigTest, SingleUnnamedProfileGetsTheDefaultName) {
  Result<SchedulerConfig> r = Parse(Doc(kCopse, "profiles:\n- percentageOfNodesToScore: 30\n"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->profiles.size(), 1u);
  EXPECT_EQ(r->profiles[0].scheduler_name, "copse-scheduler");
  EXPECT_EQ(r->profiles[0].percentage_of_nodes_to_score, 30);
}

TEST_F(ConfigTest, PipelinedConnectionsDefaultToTwoAndCanBeSet) {
  Result<SchedulerConfig> defaults = Parse(Doc(kCopse, "parallelism: 4\n"));
  ASSERT_TRUE(defaults.ok()) << defaults.error().message;
  EXPECT_EQ(defaults->client_connection.pipelined_connections, 2);
  Result<SchedulerConfig> set =
      Parse(Doc(kCopse, "clientConnection:\n  pipelinedConnections: 0\n"));
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(set->client_connection.pipelined_connections, 0);
}

// ---------------------------------------------------------------- full example

TEST_F(ConfigTest, ParsesAFullKubeSchedulerConfiguration) {
  const std::string yaml = Doc(kKube, R"(
parallelism: 8
percentageOfNodesToScore: 40
podInitialBackoffSeconds: 2
podMaxBackoffSeconds: 20
delayCacheUntilActive: true
debuggingConfiguration:
  enableProfiling: false
  enableContentionProfiling: false
clientConnection:
  kubeconfig: /etc/kubernetes/scheduler.conf
  acceptContentTypes: application/vnd.kubernetes.protobuf,application/json
  contentType: application/json
  qps: 250.5
  burst: 500
leaderElection:
  leaderElect: false
  leaseDuration: 30s
  renewDeadline: 20s
  retryPeriod: 1500ms
  resourceLock: leases
  resourceName: my-scheduler
  resourceNamespace: scheduling
extenders: []
profiles:
- schedulerName: copse-scheduler
  percentageOfNodesToScore: 70
  plugins:
    score:
      enabled:
      - name: NodeResourcesFit
        weight: 3
    filter:
      disabled:
      - name: NodePorts
  pluginConfig:
  - name: NodeResourcesFit
    args:
      apiVersion: kubescheduler.config.k8s.io/v1
      kind: NodeResourcesFitArgs
      ignoredResources: [example.com/foo]
      ignoredResourceGroups: [example.org]
      scoringStrategy:
        type: RequestedToCapacityRatio
        resources:
        - name: cpu
          weight: 2
        - name: nvidia.com/gpu
        requestedToCapacityRatio:
          shape:
          - utilization: 0
            score: 0
          - utilization: 100
            score: 10
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions:
            - key: pool
              operator: In
              values: [gpu, cpu]
        preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 10
          preference:
            matchExpressions:
            - key: zone
              operator: Exists
  - name: InterPodAffinity
    args:
      hardPodAffinityWeight: 7
      ignorePreferredTermsOfExistingPods: true
  - name: DefaultPreemption
    args:
      minCandidateNodesPercentage: 20
      minCandidateNodesAbsolute: 50
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints:
      - maxSkew: 2
        topologyKey: topology.kubernetes.io/zone
        whenUnsatisfiable: ScheduleAnyway
        nodeTaintsPolicy: Honor
  - name: NodeResourcesBalancedAllocation
    args:
      resources:
      - name: cpu
      - name: nvidia.com/gpu
        weight: 1
- schedulerName: second
)");
  Result<SchedulerConfig> r = Parse(yaml);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const SchedulerConfig& c = *r;
  EXPECT_EQ(c.kind, kKubeSchedulerKind);
  EXPECT_EQ(c.parallelism, 8);
  EXPECT_EQ(c.percentage_of_nodes_to_score, 40);
  EXPECT_EQ(c.pod_initial_backoff, std::chrono::seconds(2));
  EXPECT_EQ(c.pod_max_backoff, std::chrono::seconds(20));
  EXPECT_TRUE(c.delay_cache_until_active);
  EXPECT_FALSE(c.enable_profiling);
  EXPECT_EQ(c.client_connection.kubeconfig, "/etc/kubernetes/scheduler.conf");
  EXPECT_EQ(c.client_connection.accept_content_types,
            "application/vnd.kubernetes.protobuf,application/json");
  EXPECT_DOUBLE_EQ(c.client_connection.qps, 250.5);
  EXPECT_EQ(c.client_connection.burst, 500);
  EXPECT_FALSE(c.leader_election.leader_elect);
  EXPECT_EQ(c.leader_election.lease_duration, std::chrono::seconds(30));
  EXPECT_EQ(c.leader_election.renew_deadline, std::chrono::seconds(20));
  EXPECT_EQ(c.leader_election.retry_period, std::chrono::milliseconds(1500));
  EXPECT_EQ(c.leader_election.resource_name, "my-scheduler");
  EXPECT_EQ(c.leader_election.resource_namespace, "scheduling");

  ASSERT_EQ(c.profiles.size(), 2u);
  const plugins::Profile& p = c.profiles[0];
  EXPECT_EQ(p.percentage_of_nodes_to_score, 70);
  EXPECT_EQ(c.profiles[1].percentage_of_nodes_to_score, 40);  // the top-level value
  EXPECT_TRUE(c.profiles[1].plugin_args.empty());

  const auto* fit = std::any_cast<plugins::FitArgs>(&p.plugin_args.at("NodeResourcesFit"));
  ASSERT_NE(fit, nullptr);
  EXPECT_THAT(fit->ignored_resources, ElementsAre("example.com/foo"));
  EXPECT_THAT(fit->ignored_resource_groups, ElementsAre("example.org"));
  EXPECT_EQ(fit->scoring_strategy.type, plugins::ScoringStrategyType::kRequestedToCapacityRatio);
  ASSERT_EQ(fit->scoring_strategy.resources.size(), 2u);
  EXPECT_EQ(fit->scoring_strategy.resources[0].name, "cpu");
  EXPECT_EQ(fit->scoring_strategy.resources[0].weight, 2);
  EXPECT_EQ(fit->scoring_strategy.resources[1].name, "nvidia.com/gpu");
  EXPECT_EQ(fit->scoring_strategy.resources[1].weight, 1);  // defaulted
  ASSERT_EQ(fit->scoring_strategy.shape.size(), 2u);
  EXPECT_EQ(fit->scoring_strategy.shape[1].utilization, 100);
  EXPECT_EQ(fit->scoring_strategy.shape[1].score, 10);

  const auto* aff = std::any_cast<plugins::NodeAffinityArgs>(&p.plugin_args.at("NodeAffinity"));
  ASSERT_NE(aff, nullptr);
  ASSERT_TRUE(aff->added_required.has_value());
  ASSERT_EQ(aff->added_required->terms.size(), 1u);
  ASSERT_EQ(aff->added_required->terms[0].match_expressions.size(), 1u);
  EXPECT_EQ(aff->added_required->terms[0].match_expressions[0].key, "pool");
  EXPECT_EQ(aff->added_required->terms[0].match_expressions[0].op, SelectorOp::kIn);
  EXPECT_EQ(aff->added_required->terms[0].match_expressions[0].values.size(), 2u);
  EXPECT_TRUE(aff->added_required->Matches(Labels{{"pool", "gpu"}}, "n1"));
  EXPECT_FALSE(aff->added_required->Matches(Labels{{"pool", "arm"}}, "n1"));
  ASSERT_EQ(aff->added_preferred.size(), 1u);
  EXPECT_EQ(aff->added_preferred[0].weight, 10);
  EXPECT_EQ(aff->added_preferred[0].term.match_expressions[0].op, SelectorOp::kExists);

  const auto* ipa =
      std::any_cast<plugins::InterPodAffinityArgs>(&p.plugin_args.at("InterPodAffinity"));
  ASSERT_NE(ipa, nullptr);
  EXPECT_EQ(ipa->hard_pod_affinity_weight, 7);
  EXPECT_TRUE(ipa->ignore_preferred_terms_of_existing_pods);

  const auto* dp =
      std::any_cast<plugins::DefaultPreemptionArgs>(&p.plugin_args.at("DefaultPreemption"));
  ASSERT_NE(dp, nullptr);
  EXPECT_EQ(dp->min_candidate_nodes_percentage, 20);
  EXPECT_EQ(dp->min_candidate_nodes_absolute, 50);

  const auto* pts =
      std::any_cast<plugins::PodTopologySpreadArgs>(&p.plugin_args.at("PodTopologySpread"));
  ASSERT_NE(pts, nullptr);
  EXPECT_EQ(pts->defaulting_type, plugins::SpreadDefaultingType::kList);
  ASSERT_EQ(pts->default_constraints.size(), 1u);
  EXPECT_EQ(pts->default_constraints[0].max_skew, 2);
  EXPECT_EQ(pts->default_constraints[0].topology_key, "topology.kubernetes.io/zone");
  EXPECT_EQ(pts->default_constraints[0].when_unsatisfiable,
            UnsatisfiableConstraintAction::kScheduleAnyway);
  EXPECT_EQ(pts->default_constraints[0].node_taints_policy, NodeInclusionPolicy::kHonor);

  const auto* ba = std::any_cast<plugins::BalancedAllocationArgs>(
      &p.plugin_args.at("NodeResourcesBalancedAllocation"));
  ASSERT_NE(ba, nullptr);
  ASSERT_EQ(ba->resources.size(), 2u);
  EXPECT_EQ(ba->resources[1].name, "nvidia.com/gpu");

  // The merged profile builds and behaves as configured.
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  EXPECT_EQ(fw->ScoreWeight("NodeResourcesFit"), 3);
  EXPECT_EQ(fw->ScoreWeight("TaintToleration"), 3);
  const std::vector<std::string> filters = fw->PluginNames(ExtensionPoint::kFilter);
  EXPECT_EQ(std::count(filters.begin(), filters.end(), "NodePorts"), 0);
  EXPECT_EQ(std::count(filters.begin(), filters.end(), "NodeResourcesFit"), 1);
}

TEST_F(ConfigTest, TheDeployedExampleFileIsValid) {
  const std::string path = std::string(COPSE_SOURCE_DIR) + "/deploy/config/copse-scheduler.yaml";
  Result<SchedulerConfig> r = LoadSchedulerConfigFile(path, registry_);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->kind, kCopseKind);
  EXPECT_EQ(r->pod_group_max_backoff, std::chrono::seconds(60));
  EXPECT_EQ(r->pod_max_in_unschedulable_pods, std::chrono::minutes(5));
  EXPECT_EQ(r->ops_server.secure_port, 10259);
  EXPECT_EQ(r->ops_server.port, 0) << "no plain HTTP in the deployed config";
  ASSERT_EQ(r->profiles.size(), 2u);
  ASSERT_NE(r->FindProfile("copse-scheduler"), nullptr);
  ASSERT_NE(r->FindProfile("copse-spread"), nullptr);
  EXPECT_EQ(r->FindProfile("nobody"), nullptr);

  auto packer = Build(*r->FindProfile("copse-scheduler"));
  ASSERT_NE(packer, nullptr);
  // Accelerator pods packed, CPU-only pods balanced (the defaults, spelled out).
  EXPECT_EQ(packer->ScoreWeight("NodeResourcesFit"), 1);
  EXPECT_EQ(packer->ScoreWeight("NodeResourcesBalancedAllocation"), 1);
  EXPECT_EQ(packer->ScoreWeight("DomainPacking"), 1);
  const auto* fit = std::any_cast<plugins::FitArgs>(
      &r->FindProfile("copse-scheduler")->plugin_args.at("NodeResourcesFit"));
  ASSERT_NE(fit, nullptr);
  EXPECT_EQ(fit->scoring_strategy.type, plugins::ScoringStrategyType::kLeastAllocated);
  EXPECT_TRUE(fit->accelerator_strategy.enabled);
  EXPECT_EQ(fit->accelerator_strategy.type, plugins::ScoringStrategyType::kMostAllocated);
  EXPECT_TRUE(fit->accelerator_strategy.resources.empty());
  const auto* balanced = std::any_cast<plugins::BalancedAllocationArgs>(
      &r->FindProfile("copse-scheduler")->plugin_args.at("NodeResourcesBalancedAllocation"));
  ASSERT_NE(balanced, nullptr);
  EXPECT_TRUE(balanced->skip_accelerator_pods);
  const auto* packing = std::any_cast<plugins::DomainPackingArgs>(
      &r->FindProfile("copse-scheduler")->plugin_args.at("DomainPacking"));
  ASSERT_NE(packing, nullptr);
  EXPECT_EQ(packing->levels, plugins::DomainPackingArgs{}.levels);

  auto spread = Build(*r->FindProfile("copse-spread"));
  ASSERT_NE(spread, nullptr);
  EXPECT_EQ(spread->percentage_of_nodes_to_score(), 100);
  EXPECT_EQ(spread->ScoreWeight("InterPodAffinity"), 0);
  EXPECT_EQ(spread->ScoreWeight("NodeResourcesBalancedAllocation"), 1);
}

TEST_F(ConfigTest, AcceleratorStrategyAndDomainPackingArgs) {
  const char* yaml = R"(
apiVersion: copse.dev/v1alpha1
kind: CopseSchedulerConfiguration
profiles:
  - schedulerName: copse-scheduler
    pluginConfig:
      - name: NodeResourcesFit
        args:
          acceleratorStrategy:
            type: LeastAllocated
            resources:
              - name: example.com/fpga
                weight: 3
      - name: NodeResourcesBalancedAllocation
        args:
          skipAcceleratorPods: false
      - name: DomainPacking
        args:
          levels: [copse.dev/rack]
)";
  Result<SchedulerConfig> r = ParseSchedulerConfig(yaml, registry_);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const plugins::Profile& p = *r->FindProfile("copse-scheduler");
  const auto* fit = std::any_cast<plugins::FitArgs>(&p.plugin_args.at("NodeResourcesFit"));
  ASSERT_NE(fit, nullptr);
  EXPECT_EQ(fit->accelerator_strategy.type, plugins::ScoringStrategyType::kLeastAllocated);
  ASSERT_EQ(fit->accelerator_strategy.resources.size(), 1u);
  EXPECT_EQ(fit->accelerator_strategy.resources[0].name, "example.com/fpga");
  EXPECT_EQ(fit->accelerator_strategy.resources[0].weight, 3);
  const auto* balanced = std::any_cast<plugins::BalancedAllocationArgs>(
      &p.plugin_args.at("NodeResourcesBalancedAllocation"));
  ASSERT_NE(balanced, nullptr);
  EXPECT_FALSE(balanced->skip_accelerator_pods);
  const auto* packing =
      std::any_cast<plugins::DomainPackingArgs>(&p.plugin_args.at("DomainPacking"));
  ASSERT_NE(packing, nullptr);
  EXPECT_EQ(packing->levels, std::vector<std::string>{"copse.dev/rack"});
  EXPECT_NE(Build(p), nullptr);

  // type None turns it off; an unknown type and a non-extended resource are errors naming the
  // field.
  Result<SchedulerConfig> none = ParseSchedulerConfig(R"(
apiVersion: copse.dev/v1alpha1
kind: CopseSchedulerConfiguration
profiles:
  - schedulerName: copse-scheduler
    pluginConfig:
      - name: NodeResourcesFit
        args:
          acceleratorStrategy: {type: None}
)",
                                                      registry_);
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_FALSE(std::any_cast<plugins::FitArgs>(
                   &none->FindProfile("copse-scheduler")->plugin_args.at("NodeResourcesFit"))
                   ->accelerator_strategy.enabled);
  Result<SchedulerConfig> bad = ParseSchedulerConfig(R"(
apiVersion: copse.dev/v1alpha1
kind: CopseSchedulerConfiguration
profiles:
  - schedulerName: copse-scheduler
    pluginConfig:
      - name: NodeResourcesFit
        args:
          acceleratorStrategy: {type: Spread}
)",
                                                     registry_);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("acceleratorStrategy.type"), std::string::npos)
      << bad.error().message;
  Result<SchedulerConfig> cpu = ParseSchedulerConfig(R"(
apiVersion: copse.dev/v1alpha1
kind: CopseSchedulerConfiguration
profiles:
  - schedulerName: copse-scheduler
    pluginConfig:
      - name: NodeResourcesFit
        args:
          acceleratorStrategy:
            resources: [{name: cpu}]
)",
                                                     registry_);
  ASSERT_FALSE(cpu.ok());
  EXPECT_NE(cpu.error().message.find("acceleratorStrategy.resources[0].name"), std::string::npos)
      << cpu.error().message;
}

// ---------------------------------------------------------------- merging

plugins::PluginSet Set(std::vector<plugins::PluginRef> enabled,
                       std::vector<std::string> disabled = {}) {
  plugins::PluginSet s;
  s.enabled = std::move(enabled);
  s.disabled = std::move(disabled);
  return s;
}

std::vector<std::string> Names(const plugins::PluginSet& s) {
  std::vector<std::string> out;
  for (const auto& r : s.enabled) out.push_back(r.name + ":" + std::to_string(r.weight));
  return out;
}

// The cases of kube-scheduler's TestMergePlugins.
TEST(MergePluginsTest, FollowsKubeSchedulerMergePluginSet) {
  plugins::PluginsConfig defaults;
  defaults.multi_point = Set({{"A", 1}, {"B", 2}, {"C", 3}});
  defaults.filter = Set({{"F", 0}}, {"X"});

  {  // Disable one default, re-weight another in place, append a new one.
    plugins::PluginsConfig custom;
    custom.multi_point = Set({{"D", 4}, {"C", 30}}, {"B"});
    const plugins::PluginsConfig out = MergePlugins(defaults, custom);
    EXPECT_THAT(Names(out.multi_point), ElementsAre("A:1", "C:30", "D:4"));
    EXPECT_THAT(out.multi_point.disabled, ElementsAre("B"));
    // Points the user did not touch keep the defaults, including disabled ones.
    EXPECT_THAT(Names(out.filter), ElementsAre("F:0"));
    EXPECT_THAT(out.filter.disabled, ElementsAre("X"));
  }
  {  // "*" drops every default of that point; the user's list stays, in order.
    plugins::PluginsConfig custom;
    custom.multi_point = Set({{"C", 0}, {"E", 5}}, {"*"});
    custom.filter = Set({}, {"Y"});
    const plugins::PluginsConfig out = MergePlugins(defaults, custom);
    EXPECT_THAT(Names(out.multi_point), ElementsAre("C:0", "E:5"));
    EXPECT_THAT(out.multi_point.disabled, ElementsAre("*"));
    EXPECT_THAT(out.filter.disabled, ElementsAre("Y", "X"));  // user's first
  }
  {  // Duplicates in the user's list are kept for the framework to reject.
    plugins::PluginsConfig custom;
    custom.score = Set({{"S", 1}, {"S", 2}});
    EXPECT_THAT(Names(MergePlugins(defaults, custom).score), ElementsAre("S:1", "S:2"));
  }
}

TEST_F(ConfigTest, DisableAllScorePluginsThenEnableWithWeights) {
  Result<SchedulerConfig> r = Parse(Doc(kCopse, R"(
profiles:
- schedulerName: packer
  plugins:
    score:
      disabled:
      - name: "*"
      enabled:
      - name: NodeResourcesFit
        weight: 5
      - name: TaintToleration
        weight: 2
)"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->profiles.size(), 1u);
  EXPECT_EQ(r->profiles[0].scheduler_name, "packer");
  auto fw = Build(r->profiles[0]);
  ASSERT_NE(fw, nullptr);
  EXPECT_THAT(fw->PluginNames(ExtensionPoint::kScore),
              ElementsAre("NodeResourcesFit", "TaintToleration"));
  EXPECT_EQ(fw->ScoreWeight("NodeResourcesFit"), 5);
  EXPECT_EQ(fw->ScoreWeight("TaintToleration"), 2);
  // Filters are untouched: "*" applied to the score point only.
  auto defaults = Build(plugins::DefaultProfile("x"));
  ASSERT_NE(defaults, nullptr);
  EXPECT_EQ(fw->PluginNames(ExtensionPoint::kFilter),
            defaults->PluginNames(ExtensionPoint::kFilter));
  EXPECT_GT(defaults->num_score_plugins(), 2u);
}

TEST_F(ConfigTest, MultiPointWeightOverridesTheDefaultInPlace) {
  Result<SchedulerConfig> r = Parse(Doc(kCopse, R"(
profiles:
- plugins:
    multiPoint:
      enabled:
      - name: NodeAffinity
        weight: 9
      disabled:
      - name: NodeResourcesBalancedAllocation
)"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  const auto& mp = r->profiles[0].plugins.multi_point.enabled;
  // Same position as in the default list (after TaintToleration), new weight.
  const auto taints =
      std::find_if(mp.begin(), mp.end(), [](const auto& p) { return p.name == "TaintToleration"; });
  ASSERT_NE(taints, mp.end());
  ASSERT_NE(taints + 1, mp.end());
  EXPECT_EQ(taints[1].name, "NodeAffinity");
  EXPECT_EQ(taints[1].weight, 9);
  auto fw = Build(r->profiles[0]);
  ASSERT_NE(fw, nullptr);
  EXPECT_EQ(fw->ScoreWeight("NodeAffinity"), 9);
  EXPECT_EQ(fw->ScoreWeight("NodeResourcesBalancedAllocation"), 0);
  EXPECT_FALSE(fw->FindPlugin("NodeResourcesBalancedAllocation").has_value());
}

TEST_F(ConfigTest, DisablingEveryMultiPointDefaultLeavesOnlyTheUsersPlugins) {
  Result<SchedulerConfig> r = Parse(Doc(kCopse, R"(
profiles:
- schedulerName: minimal
  plugins:
    multiPoint:
      disabled:
      - name: "*"
      enabled:
      - name: PrioritySort
      - name: NodeResourcesFit
        weight: 4
)"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto fw = Build(r->profiles[0]);
  ASSERT_NE(fw, nullptr);
  EXPECT_THAT(fw->PluginNames(ExtensionPoint::kFilter), ElementsAre("NodeResourcesFit"));
  EXPECT_THAT(fw->PluginNames(ExtensionPoint::kScore), ElementsAre("NodeResourcesFit"));
  EXPECT_EQ(fw->ScoreWeight("NodeResourcesFit"), 4);
  EXPECT_TRUE(fw->PluginNames(ExtensionPoint::kPostFilter).empty());
}

TEST_F(ConfigTest, MultipleProfilesAreIndependent) {
  Result<SchedulerConfig> r = Parse(Doc(kCopse, R"(
percentageOfNodesToScore: 25
profiles:
- schedulerName: copse-scheduler
- schedulerName: no-scoring
  percentageOfNodesToScore: 0
  plugins:
    preScore:
      disabled:
      - name: "*"
    score:
      disabled:
      - name: "*"
- schedulerName: no-preemption
  plugins:
    postFilter:
      disabled:
      - name: DefaultPreemption
)"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->profiles.size(), 3u);
  auto full = Build(*r->FindProfile("copse-scheduler"));
  auto no_scoring = Build(*r->FindProfile("no-scoring"));
  auto no_preemption = Build(*r->FindProfile("no-preemption"));
  auto defaults = Build(plugins::DefaultProfile("x"));
  ASSERT_TRUE(full && no_scoring && no_preemption && defaults);
  EXPECT_EQ(full->num_score_plugins(), defaults->num_score_plugins());
  EXPECT_EQ(no_scoring->num_score_plugins(), 0u);
  EXPECT_TRUE(no_scoring->PluginNames(ExtensionPoint::kPreScore).empty());
  EXPECT_THAT(full->PluginNames(ExtensionPoint::kPostFilter), ElementsAre("DefaultPreemption"));
  EXPECT_TRUE(no_preemption->PluginNames(ExtensionPoint::kPostFilter).empty());
  EXPECT_EQ(no_preemption->num_score_plugins(), defaults->num_score_plugins());
  EXPECT_EQ(full->percentage_of_nodes_to_score(), 25);
  EXPECT_EQ(no_scoring->percentage_of_nodes_to_score(), 0);
  EXPECT_EQ(no_preemption->percentage_of_nodes_to_score(), 25);
}

TEST_F(ConfigTest, CustomArgsDecoderForAnOutOfTreePlugin) {
  ASSERT_TRUE(
      registry_
          .Register(
              "Gate",
              [](const plugins::PluginArgs* args) -> Result<std::unique_ptr<plugins::Plugin>> {
                Result<GateArgs> a = plugins::ArgsOrDefault<GateArgs>(args, "Gate");
                if (!a.ok()) return std::move(a).error();
                if (a->limit <= 0) {
                  return MakeError(ErrorCode::kInvalid,
                                   "GateArgs.limit: must be greater than zero");
                }
                return std::unique_ptr<plugins::Plugin>(new Gate(*a));
              })
          .ok());
  ArgsDecoders decoders;
  ASSERT_TRUE(RegisterDefaultArgsDecoders(decoders).ok());
  ASSERT_TRUE(decoders
                  .Register("Gate", "GateArgs",
                            [](MapReader& r) {
                              GateArgs a;
                              r.Int32("limit", a.limit);
                              return std::any(a);
                            })
                  .ok());
  EXPECT_FALSE(decoders.Register("Gate", "GateArgs", nullptr).ok());

  const std::string ok_doc = Doc(kCopse, R"(
profiles:
- plugins:
    preEnqueue:
      enabled:
      - name: Gate
  pluginConfig:
  - name: Gate
    args:
      kind: GateArgs
      limit: 7
)");
  Result<SchedulerConfig> r = ParseSchedulerConfig(ok_doc, registry_, decoders);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const auto* args = std::any_cast<GateArgs>(&r->profiles[0].plugin_args.at("Gate"));
  ASSERT_NE(args, nullptr);
  EXPECT_EQ(args->limit, 7);
  auto fw = Build(r->profiles[0]);
  ASSERT_NE(fw, nullptr);
  // After the default profile's own PreEnqueue plugin.
  EXPECT_THAT(fw->PluginNames(ExtensionPoint::kPreEnqueue), ElementsAre("SchedulingGates", "Gate"));

  // The plugin's own validation is reported under the pluginConfig entry.
  const std::string bad_doc = Doc(kCopse, R"(
profiles:
- pluginConfig:
  - name: Gate
    args:
      limit: 0
)");
  Result<SchedulerConfig> bad = ParseSchedulerConfig(bad_doc, registry_, decoders);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "profiles[0].pluginConfig[0].args.limit: must be greater than zero");

  // Without the decoder the same args are rejected.
  EXPECT_EQ(ErrorOf(ok_doc),
            "profiles[0].pluginConfig[0].args: Invalid value: object: plugin Gate takes no "
            "arguments");
}

// ---------------------------------------------------------------- validation

TEST_F(ConfigTest, DuplicateSchedulerName) {
  EXPECT_EQ(ErrorOf(Doc(kCopse, R"(
profiles:
- schedulerName: copse-scheduler
- schedulerName: copse-scheduler
)")),
            "profiles[1].schedulerName: Duplicate value: \"copse-scheduler\"");
}

TEST_F(ConfigTest, MissingSchedulerNameWithSeveralProfiles) {
  EXPECT_EQ(ErrorOf(Doc(kCopse, "profiles:\n- schedulerName: a\n- percentageOfNodesToScore: 5\n")),
            "profiles[1].schedulerName: Required value");
}

TEST_F(ConfigTest, ScoreWeightOutOfRange) {
  EXPECT_EQ(ErrorOf(Doc(kCopse, R"(
profiles:
- schedulerName: copse-scheduler
  plugins:
    score:
      enabled:
      - name: NodeResourcesFit
        weight: 1
      - name: NodeAffinity
        weight: 2
      - name: TaintToleration
        weight: 0
)")),
            "profiles[0].plugins.score.enabled[2].weight: Invalid value: 0: must be in the range "
            "[1, 100]");
  EXPECT_EQ(ErrorOf(Doc(kCopse, R"(
profiles:
- plugins:
    multiPoint:
      enabled:
      - name: NodeAffinity
        weight: 101
)")),
            "profiles[0].plugins.multiPoint.enabled[0].weight: Invalid value: 101: must be in the "
            "range [1, 100]");
}

TEST_F(ConfigTest, PercentageOfNodesToScoreOutOfRange) {
  EXPECT_EQ(ErrorOf(Doc(kCopse, "percentageOfNodesToScore: 120\n")),
            "percentageOfNodesToScore: Invalid value: 120: not in valid range [0-100]");
  EXPECT_EQ(ErrorOf(Doc(kCopse, "profiles:\n- percentageOfNodesToScore: -1\n")),
            "profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]");
}

TEST_F(ConfigTest, UnknownPluginNames) {
  EXPECT_EQ(ErrorOf(Doc(kCopse, R"(
profiles:
- plugins:
    filter:
      enabled:
      - name: NodeResourcesFit
      - name: Foo
)")),
            "profiles[0].plugins.filter.enabled[1].name: Not found: \"Foo\"");
  EXPECT_EQ(ErrorOf(Doc(kCopse, R"(
profiles:
- plugins:
    score:
      disabled:
      - name: NodeResourcesFitt
)")),
            "profiles[0].plugins.score.disabled[0].name: Not found: \"NodeResourcesFitt\"");
  EXPECT_EQ(ErrorOf(Doc(kCopse, R"(
profiles:
- pluginConfig:
  - name: Bar
    args: {}
)")),
            "profiles[0].pluginConfig[0].name: Not found: \"Bar\"");
}

TEST_F(ConfigTest, PluginSetMistakes) {
  EXPECT_EQ(ErrorOf(Doc(kCopse, R"(
profiles:
- plugins:
    score:
      enabled:
      - name: PrioritySort
)")),
            "profiles[0].plugins.score.enabled[0].name: Invalid value: \"PrioritySort\": plugin "
            "does not extend Score");
  EXPECT_EQ(ErrorOf(Doc(kCopse, R"(
profiles:
- plugins:
    filter:
      enabled:
      - name: NodePorts
      - name: NodePorts
)")),
            "profiles[0].plugins.filter.enabled[1].name: Duplicate value: \"NodePorts\"");
  EXPECT_EQ(ErrorOf(Doc(kCopse, R"(
profiles:
- plugins:
    filter:
      enabled:
      - name: "*"
)")),
            "profiles[0].plugins.filter.enabled[0].name: Invalid value: \"*\": \"*\" is only "
            "allowed in disabled");
  EXPECT_EQ(ErrorOf(Doc(kCopse, R"(
profiles:
- plugins:
    filter:
      enabled:
      - weight: 3
)")),
            "profiles[0].plugins.filter.enabled[0].name: Required value");
}

TEST_F(ConfigTest, QueueSortMustBeTheSameForAllProfiles) {
  EXPECT_EQ(ErrorOf(Doc(kCopse, R"(
profiles:
- schedulerName: a
- schedulerName: b
  plugins:
    queueSort:
      disabled:
      - name: "*"
      enabled:
      - name: FifoSort
)")),
            "profiles[1].plugins.queueSort: Invalid value: \"FifoSort\": must be the same for all "
            "profiles");
}

TEST_F(ConfigTest, FrameworkErrorsNameTheProfile) {
  EXPECT_EQ(ErrorOf(Doc(kCopse, R"(
profiles:
- schedulerName: a
  plugins:
    queueSort:
      disabled:
      - name: "*"
)")),
            "profiles[0]: profile a: exactly one queue sort plugin is required, but got 0");
}

TEST_F(ConfigTest, PluginArgumentErrorsNameTheArgsField) {
  EXPECT_EQ(ErrorOf(Doc(kCopse, R"(
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources:
        - name: cpu
          weight: 101
)")),
            "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: must be in "
            "the range [1, 100]");
  EXPECT_EQ(ErrorOf(Doc(kCopse, R"(
profiles:
- pluginConfig:
  - name: NodeResourcesFit
  - name: DefaultPreemption
    args:
      minCandidateNodesPercentage: 120
)")),
            "profiles[0].pluginConfig[1].args.minCandidateNodesPercentage: not in valid range "
            "[0, 100]");
  EXPECT_EQ(
      ErrorOf(Doc(kCopse, R"(
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: Spread
)")),
      "profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: \"Spread\": "
      "supported values: \"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\"");
  EXPECT_EQ(ErrorOf(Doc(kCopse, R"(
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: RequestedToCapacityRatio
)")),
            "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape: at "
            "least one point must be specified");
  EXPECT_EQ(ErrorOf(Doc(kCopse, R"(
profiles:
- pluginConfig:
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions:
            - key: pool
              operator: Near
)")),
            "profiles[0].pluginConfig[0].args.addedAffinity."
            "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
            "matchExpressions[0].operator: Unsupported value: \"Near\": supported values: "
            "\"DoesNotExist\", \"Exists\", \"Gt\", \"In\", \"Lt\", \"NotIn\"");
  EXPECT_EQ(ErrorOf(Doc(kCopse, R"(
profiles:
- pluginConfig:
  - name: PodTopologySpread
    args:
      defaultingType: System
      defaultConstraints:
      - maxSkew: 1
        topologyKey: zone
        whenUnsatisfiable: DoNotSchedule
)")),
            "profiles[0].pluginConfig[0].args.defaultConstraints: must be empty for System "
            "defaulting type");
  EXPECT_EQ(ErrorOf(Doc(kCopse, R"(
profiles:
- pluginConfig:
  - name: PodTopologySpread
    args:
      defaultConstraints:
      - maxSkew: 1
        topologyKey: zone
        whenUnsatisfiable: DoNotSchedule
      - maxSkew: 2
        topologyKey: zone
        whenUnsatisfiable: DoNotSchedule
)")),
            "profiles[0].pluginConfig[0].args.defaultConstraints[1]: Duplicate value: "
            "{\"zone\", \"DoNotSchedule\"}");
  EXPECT_EQ(ErrorOf(Doc(kCopse, R"(
profiles:
- pluginConfig:
  - name: InterPodAffinity
    args:
      kind: NodeResourcesFitArgs
)")),
            "profiles[0].pluginConfig[0].args.kind: Unsupported value: \"NodeResourcesFitArgs\": "
            "supported values: \"InterPodAffinityArgs\"");
  EXPECT_EQ(ErrorOf(Doc(kCopse, R"(
profiles:
- pluginConfig:
  - name: NodeName
    args:
      strict: true
)")),
            "profiles[0].pluginConfig[0].args: Invalid value: object: plugin NodeName takes no "
            "arguments");
  EXPECT_EQ(ErrorOf(Doc(kCopse, R"(
profiles:
- pluginConfig:
  - name: InterPodAffinity
  - name: InterPodAffinity
)")),
            "profiles[0].pluginConfig[1]: Duplicate value: \"InterPodAffinity\"");
}

TEST_F(ConfigTest, UnknownFieldsAreRejectedWithPathAndPosition) {
  EXPECT_EQ(ErrorOf(Doc(kCopse, "parallelizm: 4\n")),
            "unknown field \"parallelizm\" (line 3, column 1)");
  EXPECT_EQ(ErrorOf(Doc(kCopse, R"(profiles:
- schedulerName: a
  plugins:
    scor:
      enabled: []
)")),
            "unknown field \"profiles[0].plugins.scor\" (line 6, column 5)");
  EXPECT_EQ(ErrorOf(Doc(kCopse, R"(profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: LeastAllocated
        resource: []
)")),
            "unknown field \"profiles[0].pluginConfig[0].args.scoringStrategy.resource\" (line 9, "
            "column 9)");
  // Field names are case-sensitive, as in kube's strict decoding.
  EXPECT_EQ(ErrorOf(Doc(kCopse, "Parallelism: 4\n")),
            "unknown field \"Parallelism\" (line 3, column 1)");
}

TEST_F(ConfigTest, CopseFieldsAreUnknownInTheKubeKind) {
  const std::string message = ErrorOf(Doc(kKube, "podGroupMaxBackoffSeconds: 30\n"));
  EXPECT_THAT(message, HasSubstr("unknown field \"podGroupMaxBackoffSeconds\" (line 3, column 1)"));
  EXPECT_THAT(message, HasSubstr("copse.dev/v1alpha1"));
  Result<SchedulerConfig> r = Parse(Doc(kCopse, "podGroupMaxBackoffSeconds: 30\n"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->pod_group_max_backoff, std::chrono::seconds(30));
}

TEST_F(ConfigTest, GangBurstFields) {
  Result<SchedulerConfig> none = Parse(Doc(kCopse, ""));
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_EQ(none->gang_burst_window, std::chrono::nanoseconds::zero());  // off by default
  EXPECT_EQ(none->gang_burst_max_skips, 3);
  Result<SchedulerConfig> r = Parse(Doc(kCopse, "gangBurstWindow: 250ms\ngangBurstMaxSkips: 5\n"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->gang_burst_window, std::chrono::milliseconds(250));
  EXPECT_EQ(r->gang_burst_max_skips, 5);
  EXPECT_THAT(ErrorOf(Doc(kKube, "gangBurstWindow: 1s\n")),
              HasSubstr("unknown field \"gangBurstWindow\""));
  EXPECT_EQ(ErrorOf(Doc(kCopse, "gangBurstWindow: -1s\n")),
            "gangBurstWindow: Invalid value: \"-1s\": must be greater than or equal to 0");
  EXPECT_EQ(ErrorOf(Doc(kCopse, "gangBurstMaxSkips: -2\n")),
            "gangBurstMaxSkips: Invalid value: -2: must be greater than or equal to 0");
  // The exact plan of a burst: 5ms by default, 0s turns it off.
  EXPECT_EQ(none->gang_burst_plan_budget, std::chrono::milliseconds(5));
  Result<SchedulerConfig> off = Parse(Doc(kCopse, "gangBurstPlanBudget: 0s\n"));
  ASSERT_TRUE(off.ok()) << off.error().message;
  EXPECT_EQ(off->gang_burst_plan_budget, std::chrono::nanoseconds::zero());
  Result<SchedulerConfig> longer = Parse(Doc(kCopse, "gangBurstPlanBudget: 20ms\n"));
  ASSERT_TRUE(longer.ok()) << longer.error().message;
  EXPECT_EQ(longer->gang_burst_plan_budget, std::chrono::milliseconds(20));
  EXPECT_EQ(ErrorOf(Doc(kCopse, "gangBurstPlanBudget: -5ms\n")),
            "gangBurstPlanBudget: Invalid value: \"-5ms\": must be greater than or equal to 0");
  EXPECT_THAT(ErrorOf(Doc(kKube, "gangBurstPlanBudget: 5ms\n")),
              HasSubstr("unknown field \"gangBurstPlanBudget\""));
}

TEST_F(ConfigTest, DuplicateFields) {
  EXPECT_EQ(ErrorOf(Doc(kCopse, "parallelism: 4\nparallelism: 8\n")),
            "duplicate field \"parallelism\" (line 4, column 1)");
}

TEST_F(ConfigTest, WrongTypes) {
  EXPECT_EQ(ErrorOf(Doc(kCopse, "parallelism: many\n")),
            "parallelism: Invalid value: \"many\": must be an integer (line 3, column 14)");
  EXPECT_EQ(ErrorOf(Doc(kCopse, "parallelism: \"4\"\n")),
            "parallelism: Invalid value: \"4\": must be an integer (line 3, column 14)");
  EXPECT_EQ(ErrorOf(Doc(kCopse, "parallelism: 2.5\n")),
            "parallelism: Invalid value: \"2.5\": must be an integer (line 3, column 14)");
  EXPECT_EQ(ErrorOf(Doc(kCopse, "profiles: {a: 1}\n")),
            "profiles: Invalid value: object: must be a list (line 3, column 11)");
  EXPECT_EQ(ErrorOf(Doc(kCopse, "leaderElection:\n  leaderElect: maybe\n")),
            "leaderElection.leaderElect: Invalid value: \"maybe\": must be a boolean (true or "
            "false) (line 4, column 16)");
  EXPECT_THAT(ErrorOf(Doc(kCopse, "leaderElection:\n  leaseDuration: 15\n")),
              HasSubstr("leaderElection.leaseDuration: Invalid value: \"15\": must be a duration "
                        "such as \"15s\" or \"1m30s\""));
  EXPECT_THAT(ErrorOf(Doc(kCopse, "opsServer:\n  port: 70000\n")),
              HasSubstr("opsServer.port: Invalid value: \"70000\": must be an integer in [0, "
                        "65535]"));
}

TEST_F(ConfigTest, MalformedYamlReportsLineAndColumn) {
  const std::string message = ErrorOf(Doc(kCopse, "profiles:\n- schedulerName: [a\n"));
  EXPECT_THAT(message, HasSubstr("yaml: line "));
  EXPECT_THAT(message, HasSubstr("column"));
  EXPECT_EQ(ErrorOf("a: b\n  c: d\n").substr(0, 20), "yaml: line 2, column");
  EXPECT_EQ(ErrorOf("- just\n- a list\n"),
            "yaml: the document must be an object (line 1, column 1)");
  EXPECT_EQ(ErrorOf(Doc(kCopse, "---\nparallelism: 1\n")), "yaml: expected one document, found 2");
}

TEST_F(ConfigTest, VersionAndKindAreChecked) {
  EXPECT_EQ(ErrorOf("kind: KubeSchedulerConfiguration\n"),
            "apiVersion: Required value: must be \"copse.dev/v1alpha1\" or "
            "\"kubescheduler.config.k8s.io/v1\"");
  EXPECT_EQ(ErrorOf(""),
            "apiVersion: Required value: must be \"copse.dev/v1alpha1\" or "
            "\"kubescheduler.config.k8s.io/v1\"");
  EXPECT_EQ(ErrorOf("apiVersion: kubescheduler.config.k8s.io/v1beta3\n"
                    "kind: KubeSchedulerConfiguration\n"),
            "apiVersion: Unsupported value: \"kubescheduler.config.k8s.io/v1beta3\": supported "
            "values: \"copse.dev/v1alpha1\", \"kubescheduler.config.k8s.io/v1\"");
  EXPECT_EQ(
      ErrorOf("apiVersion: kubescheduler.config.k8s.io/v1\nkind: CopseSchedulerConfiguration\n"),
      "kind: Unsupported value: \"CopseSchedulerConfiguration\": supported values: "
      "\"KubeSchedulerConfiguration\"");
  EXPECT_EQ(ErrorOf("apiVersion: copse.dev/v1alpha1\n"),
            "kind: Required value: must be \"CopseSchedulerConfiguration\"");
}

TEST_F(ConfigTest, TopLevelValueChecks) {
  EXPECT_EQ(ErrorOf(Doc(kCopse, "parallelism: 0\n")),
            "parallelism: Invalid value: 0: should be an integer value greater than zero");
  EXPECT_EQ(ErrorOf(Doc(kCopse, "podInitialBackoffSeconds: 0\n")),
            "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0");
  EXPECT_EQ(ErrorOf(Doc(kCopse, "podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 2\n")),
            "podMaxBackoffSeconds: Invalid value: 2: must be greater than or equal to "
            "PodInitialBackoffSeconds");
  EXPECT_EQ(
      ErrorOf(Doc(kCopse, "podGroupInitialBackoffSeconds: 10\npodGroupMaxBackoffSeconds: 5\n")),
      "podGroupMaxBackoffSeconds: Invalid value: 5: must be greater than or equal to "
      "podGroupInitialBackoffSeconds");
  EXPECT_EQ(ErrorOf(Doc(kCopse, "podMaxInUnschedulablePodsDuration: 0s\n")),
            "podMaxInUnschedulablePodsDuration: Invalid value: \"0s\": must be greater than 0");
  EXPECT_EQ(ErrorOf(Doc(kCopse, "clientConnection:\n  burst: -1\n")),
            "clientConnection.burst: Invalid value: -1: must be greater than or equal to 0");
  EXPECT_EQ(ErrorOf(Doc(kCopse, "clientConnection:\n  pipelinedConnections: -1\n")),
            "clientConnection.pipelinedConnections: Invalid value: -1: must be greater than or "
            "equal to 0");
  EXPECT_EQ(ErrorOf(Doc(kCopse, "extenders:\n- urlPrefix: http://x\n")),
            "extenders: Forbidden: scheduler extenders are not supported by copse");
  // podMaxBackoffSeconds: 0 disables backoff (see queue/scheduling_queue.h).
  Result<SchedulerConfig> r = Parse(Doc(kCopse, "podMaxBackoffSeconds: 0\n"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->pod_max_backoff, std::chrono::seconds(0));
}

// opsServer: kube-scheduler's serving: HTTPS on 10259, plain HTTP off; each
// field checked, naming it.
TEST_F(ConfigTest, OpsServerDefaultsAndFields) {
  Result<SchedulerConfig> d = Parse(Doc(kCopse, ""));
  ASSERT_TRUE(d.ok()) << d.error().message;
  const OpsServerConfig& def = d->ops_server;
  EXPECT_TRUE(def.enabled);
  EXPECT_EQ(def.bind_address, "0.0.0.0");
  EXPECT_EQ(def.secure_port, 10259);
  EXPECT_EQ(def.port, 0);
  EXPECT_EQ(def.address, "127.0.0.1");
  EXPECT_TRUE(def.tls_cert_file.empty());
  EXPECT_TRUE(def.authentication.tolerate_lookup_failure);
  EXPECT_EQ(def.authentication.token_cache_ttl, std::chrono::seconds(10));
  EXPECT_EQ(def.authorization.always_allow_paths,
            (std::vector<std::string>{"/healthz", "/readyz", "/livez"}));
  EXPECT_EQ(def.authorization.always_allow_groups, std::vector<std::string>{"system:masters"});
  EXPECT_EQ(def.authorization.allow_cache_ttl, std::chrono::seconds(10));
  EXPECT_EQ(def.authorization.deny_cache_ttl, std::chrono::seconds(10));

  Result<SchedulerConfig> r = Parse(Doc(kCopse, R"(opsServer:
  bindAddress: "::"
  securePort: 0
  tlsCertFile: /tls/tls.crt
  tlsPrivateKeyFile: /tls/tls.key
  port: 10251
  address: 0.0.0.0
  authentication:
    kubeconfig: /etc/authn.kubeconfig
    clientCAFile: /etc/ca.crt
    skipLookup: true
    tolerateLookupFailure: false
    tokenCacheTTL: 1m
  authorization:
    kubeconfig: /etc/authz.kubeconfig
    alwaysAllowPaths: [/healthz, /debug/*]
    alwaysAllowGroups: []
    allowCacheTTL: 5s
    denyCacheTTL: 0s
)"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  const OpsServerConfig& o = r->ops_server;
  EXPECT_EQ(o.bind_address, "::");
  EXPECT_EQ(o.secure_port, 0);
  EXPECT_EQ(o.tls_cert_file, "/tls/tls.crt");
  EXPECT_EQ(o.tls_private_key_file, "/tls/tls.key");
  EXPECT_EQ(o.port, 10251);
  EXPECT_EQ(o.address, "0.0.0.0");
  EXPECT_EQ(o.authentication.kubeconfig, "/etc/authn.kubeconfig");
  EXPECT_EQ(o.authentication.client_ca_file, "/etc/ca.crt");
  EXPECT_TRUE(o.authentication.skip_lookup);
  EXPECT_FALSE(o.authentication.tolerate_lookup_failure);
  EXPECT_EQ(o.authentication.token_cache_ttl, std::chrono::minutes(1));
  EXPECT_EQ(o.authorization.kubeconfig, "/etc/authz.kubeconfig");
  EXPECT_EQ(o.authorization.always_allow_paths, (std::vector<std::string>{"/healthz", "/debug/*"}));
  EXPECT_TRUE(o.authorization.always_allow_groups.empty());
  EXPECT_EQ(o.authorization.allow_cache_ttl, std::chrono::seconds(5));
  EXPECT_EQ(o.authorization.deny_cache_ttl, std::chrono::seconds(0));
}

TEST_F(ConfigTest, OpsServerChecksNameTheField) {
  EXPECT_EQ(ErrorOf(Doc(kCopse, "opsServer:\n  bindAddress: localhost\n")),
            "opsServer.bindAddress: Invalid value: \"localhost\": must be an IPv4 or IPv6 address");
  EXPECT_EQ(ErrorOf(Doc(kCopse, "opsServer:\n  port: 8080\n  address: here\n")),
            "opsServer.address: Invalid value: \"here\": must be an IPv4 or IPv6 address");
  // The plain address does not matter while plain HTTP is off.
  EXPECT_TRUE(Parse(Doc(kCopse, "opsServer:\n  address: here\n")).ok());
  EXPECT_THAT(ErrorOf(Doc(kCopse, "opsServer:\n  securePort: 70000\n")),
              HasSubstr("opsServer.securePort: Invalid value: \"70000\": must be an integer in "
                        "[0, 65535]"));
  EXPECT_EQ(ErrorOf(Doc(kCopse, "opsServer:\n  port: 10259\n")),
            "opsServer.port: Invalid value: 10259: must differ from opsServer.securePort (plain "
            "HTTP and HTTPS)");
  EXPECT_EQ(ErrorOf(Doc(kCopse, "opsServer:\n  tlsCertFile: /a.crt\n")),
            "opsServer.tlsPrivateKeyFile: Required value: must be given with "
            "opsServer.tlsCertFile");
  EXPECT_EQ(ErrorOf(Doc(kCopse, "opsServer:\n  tlsPrivateKeyFile: /a.key\n")),
            "opsServer.tlsCertFile: Required value: must be given with "
            "opsServer.tlsPrivateKeyFile");
  EXPECT_EQ(
      ErrorOf(Doc(kCopse, "opsServer:\n  authorization:\n    alwaysAllowPaths: [/a*b, \"\"]\n")),
      "[opsServer.authorization.alwaysAllowPaths[0]: Invalid value: \"/a*b\": only a "
      "trailing * is allowed, opsServer.authorization.alwaysAllowPaths[1]: Invalid value: "
      "\"\": must not be empty]");
  EXPECT_EQ(ErrorOf(Doc(kCopse, "opsServer:\n  authentication:\n    tokenCacheTTL: -1s\n")),
            "opsServer.authentication.tokenCacheTTL: Invalid value: \"-1s\": must not be "
            "negative");
  EXPECT_THAT(ErrorOf(Doc(kCopse, "opsServer:\n  authorization:\n    denyCacheTTL: 10\n")),
              HasSubstr("opsServer.authorization.denyCacheTTL: Invalid value: \"10\": must be a "
                        "duration"));
  EXPECT_THAT(ErrorOf(Doc(kCopse, "opsServer:\n  authentication:\n    clientCA: x\n")),
              HasSubstr("unknown field \"opsServer.authentication.clientCA\""));
  // A disabled ops server is not checked.
  EXPECT_TRUE(Parse(Doc(kCopse, "opsServer:\n  enabled: false\n  bindAddress: x\n")).ok());
  // Flags' values are checked with their own names.
  OpsServerConfig ops;
  ops.secure_port = 9000;
  ops.port = 9000;
  FieldErrors errors;
  ValidateOpsServerConfig(ops, errors, [](std::string_view field) {
    return field == "port" ? std::string("--port") : "opsServer." + std::string(field);
  });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors.messages()[0],
            "--port: Invalid value: 9000: must differ from opsServer.securePort (plain HTTP and "
            "HTTPS)");
}

TEST_F(ConfigTest, LeaderElectionChecks) {
  EXPECT_EQ(ErrorOf(Doc(kCopse, "leaderElection:\n  leaseDuration: 10s\n  renewDeadline: 10s\n")),
            "leaderElection.leaseDuration: Invalid value: \"10s\": LeaseDuration must be greater "
            "than RenewDeadline");
  EXPECT_EQ(ErrorOf(Doc(kCopse, "leaderElection:\n  retryPeriod: 0s\n")),
            "leaderElection.retryPeriod: Invalid value: \"0s\": must be greater than zero");
  EXPECT_EQ(ErrorOf(Doc(kCopse, "leaderElection:\n  resourceLock: endpoints\n")),
            "leaderElection.resourceLock: Unsupported value: \"endpoints\": supported values: "
            "\"leases\"");
  EXPECT_EQ(ErrorOf(Doc(kCopse, "leaderElection:\n  resourceName: \"\"\n")),
            "leaderElection.resourceName: Invalid value: \"\": resourceName is required");
  // Not checked when leader election is off.
  Result<SchedulerConfig> r =
      Parse(Doc(kCopse, "leaderElection:\n  leaderElect: false\n  resourceName: \"\"\n"));
  ASSERT_TRUE(r.ok()) << r.error().message;
}

TEST_F(ConfigTest, EveryProblemIsReportedAtOnce) {
  EXPECT_EQ(ErrorOf(Doc(kCopse, R"(
parallelism: 0
percentageOfNodesToScore: 101
profiles:
- schedulerName: x
- schedulerName: x
)")),
            "[parallelism: Invalid value: 0: should be an integer value greater than zero, "
            "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100], "
            "profiles[1].schedulerName: Duplicate value: \"x\"]");
}

TEST_F(ConfigTest, LoadingAMissingFileNamesThePath) {
  Result<SchedulerConfig> r = LoadSchedulerConfigFile("/nonexistent/copse.yaml", registry_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kNotFound);
  EXPECT_THAT(r.error().message, HasSubstr("/nonexistent/copse.yaml"));

  r = LoadSchedulerConfigFile(std::string(COPSE_SOURCE_DIR) + "/deploy", registry_);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("is a directory"));
}

TEST_F(ConfigTest, FileParseErrorsArePrefixedWithThePath) {
  const std::string path = ::testing::TempDir() + "copse-config-test-bad.yaml";
  {
    std::ofstream out(path);
    out << kCopse << "parallelism: 0\n";
  }
  Result<SchedulerConfig> r = LoadSchedulerConfigFile(path, registry_);
  std::remove(path.c_str());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalid);
  EXPECT_EQ(r.error().message,
            path + ": parallelism: Invalid value: 0: should be an integer value greater than zero");
}

// Found by tests/fuzz/config_fuzz.cc: yaml-cpp 0.7's LoadAll loops forever,
// allocating, on a document that starts with a stray ','
// (core/yaml_documents.h).
TEST_F(ConfigTest, FuzzRegressionAStrayCommaIsAnErrorNotAnEndlessLoop) {
  std::ifstream in(std::string(COPSE_SOURCE_DIR) +
                   "/tests/unit/scheduler_config/fuzz/yaml-stray-comma.yaml");
  ASSERT_TRUE(in);
  const std::string fuzzed((std::istreambuf_iterator<char>(in)), {});
  EXPECT_THAT(ErrorOf(fuzzed), ::testing::HasSubstr("yaml: line 1, column 1: "));
  EXPECT_THAT(ErrorOf(","), ::testing::HasSubstr("yaml: line 1, column 1: "));
  EXPECT_THAT(ErrorOf("parallelism: 4\n---\n,\n"),
              ::testing::HasSubstr("yaml: line 3, column 1: "));
}

}  // namespace
}  // namespace copse::scheduler::config
