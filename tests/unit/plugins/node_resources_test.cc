// NodeResourcesFit and NodeResourcesBalancedAllocation, with scenarios ported
// from kube-scheduler's fit_test.go, least/most_allocated_test.go,
// requested_to_capacity_ratio_test.go and balanced_allocation_test.go.

#include <gtest/gtest.h>

#include "core/pending_requests.h"
#include "plugins/balanced_allocation/balanced_allocation.h"
#include "plugins/node_resources_fit/fit.h"
#include "plugins/node_resources_fit/resource_allocation.h"
#include "tests/unit/plugins/test_util.h"

namespace copse::plugins {
namespace {

using testing::Cluster;
using testing::MakePlugin;
using testing::PodBuilder;
using testing::RunFilter;
using testing::RunScore;

// fit_test.go: node allocatable milliCPU 10, memory 20, pods 32,
// example.com/aaa 5, hugepages-2Mi 5; an existing pod uses what `used` says.
class FitFilterTest : public ::testing::Test {
 protected:
  void SetUpNode(testing::Res used, const char* pods = "32") {
    cluster_.AddNode("node", {{"cpu", "10m"},
                              {"memory", "20"},
                              {"pods", pods},
                              {"example.com/aaa", "5"},
                              {"hugepages-2Mi", "5"}});
    cluster_.AddPod("node", PodBuilder("existing").Requests(cluster_.names, used).Obj());
  }
  std::vector<std::string> Reasons(testing::Res request, FitArgs args = {}) {
    std::any any_args = args;
    auto plugin = MakePlugin(&Fit::Create, &any_args);
    auto pod = PodBuilder("pod").Requests(cluster_.names, request).Obj();
    testing::FilterRun run = RunFilter(*plugin, *pod, cluster_.snapshot());
    EXPECT_TRUE(run.prefilter.IsSuccess());
    if (!run.statuses[0].IsSuccess()) {
      EXPECT_EQ(run.statuses[0].code, Code::kUnschedulable);
    }
    std::vector<std::string> r = run.reasons[0];
    std::sort(r.begin(), r.end());
    return r;
  }
  Cluster cluster_;
};

TEST_F(FitFilterTest, NoResourcesRequestedAlwaysFits) {
  SetUpNode({{"cpu", "10m"}, {"memory", "20"}});
  EXPECT_TRUE(Reasons({}).empty());
}

TEST_F(FitFilterTest, TooManyResourcesFailsWithEveryReason) {
  SetUpNode({{"cpu", "10m"}, {"memory", "20"}});
  EXPECT_EQ(Reasons({{"cpu", "1m"}, {"memory", "1"}}),
            (std::vector<std::string>{"Insufficient cpu", "Insufficient memory"}));
}

TEST_F(FitFilterTest, BothResourcesFit) {
  SetUpNode({{"cpu", "5m"}, {"memory", "5"}});
  EXPECT_TRUE(Reasons({{"cpu", "1m"}, {"memory", "1"}}).empty());
}

TEST_F(FitFilterTest, OneResourceMemoryFits) {
  SetUpNode({{"cpu", "9m"}, {"memory", "5"}});
  EXPECT_EQ(Reasons({{"cpu", "2m"}, {"memory", "1"}}),
            (std::vector<std::string>{"Insufficient cpu"}));
}

TEST_F(FitFilterTest, OneResourceCpuFits) {
  SetUpNode({{"cpu", "5m"}, {"memory", "19"}});
  EXPECT_EQ(Reasons({{"cpu", "1m"}, {"memory", "2"}}),
            (std::vector<std::string>{"Insufficient memory"}));
}

TEST_F(FitFilterTest, EqualEdgeCase) {
  SetUpNode({{"cpu", "5m"}, {"memory", "1"}});
  EXPECT_TRUE(Reasons({{"cpu", "5m"}, {"memory", "19"}}).empty());
}

TEST_F(FitFilterTest, ExtendedResourceFitsAndIsEnforced) {
  SetUpNode({{"example.com/aaa", "0"}});
  EXPECT_TRUE(Reasons({{"example.com/aaa", "1"}}).empty());
  EXPECT_TRUE(Reasons({{"example.com/aaa", "5"}}).empty());
  EXPECT_EQ(Reasons({{"example.com/aaa", "10"}}),
            (std::vector<std::string>{"Insufficient example.com/aaa"}));
}

TEST_F(FitFilterTest, ExtendedResourceAllocatableEnforcedWithExistingUse) {
  SetUpNode({{"example.com/aaa", "5"}});
  EXPECT_EQ(Reasons({{"example.com/aaa", "1"}}),
            (std::vector<std::string>{"Insufficient example.com/aaa"}));
}

TEST_F(FitFilterTest, UnknownExtendedResourceIsInsufficient) {
  SetUpNode({});
  EXPECT_EQ(Reasons({{"example.com/bbb", "1"}}),
            (std::vector<std::string>{"Insufficient example.com/bbb"}));
}

TEST_F(FitFilterTest, IgnoredExtendedResourcesAndGroups) {
  SetUpNode({});
  FitArgs args;
  args.ignored_resources = {"example.com/bbb"};
  EXPECT_TRUE(Reasons({{"example.com/bbb", "1"}}, args).empty());
  FitArgs groups;
  groups.ignored_resource_groups = {"example.com"};
  EXPECT_TRUE(Reasons({{"example.com/bbb", "1"}}, groups).empty());
}

TEST_F(FitFilterTest, HugePagesAreChecked) {
  SetUpNode({{"hugepages-2Mi", "3"}});
  EXPECT_EQ(Reasons({{"hugepages-2Mi", "3"}}),
            (std::vector<std::string>{"Insufficient hugepages-2Mi"}));
}

TEST_F(FitFilterTest, TooManyPods) {
  SetUpNode({}, /*pods=*/"1");
  EXPECT_EQ(Reasons({}), (std::vector<std::string>{"Too many pods"}));
  EXPECT_EQ(Reasons({{"cpu", "1m"}, {"memory", "1"}}), (std::vector<std::string>{"Too many pods"}));
}

TEST(FitArgsTest, Validation) {
  FitArgs args;
  args.scoring_strategy.type = ScoringStrategyType::kRequestedToCapacityRatio;
  std::any a = args;
  Result<std::unique_ptr<Plugin>> p = Fit::Create(&a);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("shape"), std::string::npos);
  args.scoring_strategy.shape = {{0, 0}, {50, 11}};
  a = args;
  EXPECT_FALSE(Fit::Create(&a).ok());
  args.scoring_strategy.shape = {{50, 0}, {10, 5}};
  a = args;
  EXPECT_FALSE(Fit::Create(&a).ok());
  args.scoring_strategy.shape = {{0, 0}, {100, 10}};
  args.scoring_strategy.resources = {{"cpu", 0}};
  a = args;
  EXPECT_FALSE(Fit::Create(&a).ok());
  std::any wrong = 42;
  EXPECT_FALSE(Fit::Create(&wrong).ok());
}

// least_allocated_test.go "nothing scheduled, resources requested, differently
// sized nodes": pod cpu 3000m memory 5000 on 4000m/10000 and 6000m/10000.
class ScoringTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_.AddNode("machine1", {{"cpu", "4000m"}, {"memory", "10000"}, {"pods", "110"}});
    cluster_.AddNode("machine2", {{"cpu", "6000m"}, {"memory", "10000"}, {"pods", "110"}});
    pod_ = PodBuilder("p").Requests(cluster_.names, {{"cpu", "3000m"}, {"memory", "5000"}}).Obj();
  }
  std::vector<int64_t> FitScores(ScoringStrategy strategy) {
    FitArgs args;
    args.scoring_strategy = std::move(strategy);
    std::any a = args;
    auto plugin = MakePlugin(&Fit::Create, &a);
    return RunScore(*plugin, *pod_, cluster_.snapshot()).scores;
  }
  Cluster cluster_;
  std::shared_ptr<PodInfo> pod_;
};

TEST_F(ScoringTest, LeastAllocated) {
  // machine1: cpu (4000-3000)*100/4000 = 25, memory 50 -> 37; machine2: 50, 50 -> 50.
  EXPECT_EQ(FitScores({}), (std::vector<int64_t>{37, 50}));
}

TEST_F(ScoringTest, MostAllocated) {
  ScoringStrategy s;
  s.type = ScoringStrategyType::kMostAllocated;
  // machine1: cpu 75, memory 50 -> 62; machine2: 50, 50 -> 50.
  EXPECT_EQ(FitScores(s), (std::vector<int64_t>{62, 50}));
}

TEST_F(ScoringTest, LeastAllocatedResourceWeights) {
  ScoringStrategy s;
  s.resources = {{"cpu", 3}, {"memory", 1}};
  // machine1: (25*3 + 50) / 4 = 31; machine2: 50.
  EXPECT_EQ(FitScores(s), (std::vector<int64_t>{31, 50}));
}

TEST_F(ScoringTest, RequestedToCapacityRatio) {
  ScoringStrategy s;
  s.type = ScoringStrategyType::kRequestedToCapacityRatio;
  s.shape = {{0, 10}, {100, 0}};
  // Shape scaled to 0..100: machine1 cpu 75% -> 25, memory 50% -> 50; round(37.5) = 38.
  // machine2: 50, 50 -> 50.
  EXPECT_EQ(FitScores(s), (std::vector<int64_t>{38, 50}));
}

TEST_F(ScoringTest, ExtendedResourceScoredOnlyWhenRequested) {
  Cluster c;
  c.AddNode("gpu",
            {{"cpu", "4000m"}, {"memory", "10000"}, {"pods", "110"}, {"nvidia.com/gpu", "8"}});
  ScoringStrategy s;
  s.type = ScoringStrategyType::kMostAllocated;
  s.resources = {{"cpu", 1}, {"memory", 1}, {"nvidia.com/gpu", 1}};
  FitArgs args;
  args.scoring_strategy = s;
  args.accelerator_strategy.enabled = false;  // kube-scheduler's scoring for every pod
  std::any a = args;
  auto plugin = MakePlugin(&Fit::Create, &a);
  auto no_gpu = PodBuilder("a").Requests(c.names, {{"cpu", "2000m"}, {"memory", "5000"}}).Obj();
  // gpu not requested: skipped, (50 + 50) / 2.
  EXPECT_EQ(RunScore(*plugin, *no_gpu, c.snapshot()).scores, (std::vector<int64_t>{50}));
  auto gpu = PodBuilder("b")
                 .Requests(c.names, {{"cpu", "2000m"}, {"memory", "5000"}, {"nvidia.com/gpu", "8"}})
                 .Obj();
  // (50 + 50 + 100) / 3 = 66.
  EXPECT_EQ(RunScore(*plugin, *gpu, c.snapshot()).scores, (std::vector<int64_t>{66}));
}

// copse's acceleratorStrategy: a GPU pod is packed (MostAllocated on the GPUs
// it requests), a CPU-only pod is spread (LeastAllocated on cpu and memory),
// with the same default arguments.
TEST(FitScoringTest, AcceleratorPodsPackCpuPodsSpread) {
  Cluster c;
  for (const char* name : {"empty", "half", "cpu-busy"}) {
    c.AddNode(name,
              {{"cpu", "8000m"}, {"memory", "16Gi"}, {"pods", "110"}, {"nvidia.com/gpu", "8"}});
  }
  c.AddPod("half",
           PodBuilder("h").Requests(c.names, {{"cpu", "1000m"}, {"nvidia.com/gpu", "4"}}).Obj());
  c.AddPod("cpu-busy",
           PodBuilder("b").Requests(c.names, {{"cpu", "6000m"}, {"memory", "8Gi"}}).Obj());
  auto plugin = MakePlugin(&Fit::Create);
  auto gpu = PodBuilder("g").Requests(c.names, {{"cpu", "1000m"}, {"nvidia.com/gpu", "2"}}).Obj();
  // GPUs only: empty 2/8 -> 25, half 6/8 -> 75; cpu-busy has no GPU in use -> 25.
  EXPECT_EQ(RunScore(*plugin, *gpu, c.snapshot()).scores, (std::vector<int64_t>{25, 75, 25}));
  auto cpu = PodBuilder("c").Requests(c.names, {{"cpu", "1000m"}, {"memory", "1Gi"}}).Obj();
  const std::vector<int64_t> spread = RunScore(*plugin, *cpu, c.snapshot()).scores;
  EXPECT_GT(spread[0], spread[2]);  // the CPU pod avoids the busy node
  EXPECT_GT(spread[1], spread[2]);

  // LeastAllocated accelerators spread the GPU pod instead; explicit
  // resources and weights select what counts as an accelerator.
  FitArgs least;
  least.accelerator_strategy.type = ScoringStrategyType::kLeastAllocated;
  std::any a = least;
  auto spreading = MakePlugin(&Fit::Create, &a);
  EXPECT_EQ(RunScore(*spreading, *gpu, c.snapshot()).scores, (std::vector<int64_t>{75, 25, 75}));
  FitArgs other;
  other.accelerator_strategy.resources = {{"example.com/fpga", 1}};
  std::any b = other;
  auto fpga_only = MakePlugin(&Fit::Create, &b);
  // nvidia.com/gpu is not an accelerator here: scored like a CPU pod (cpu + memory).
  const std::vector<int64_t> as_cpu = RunScore(*fpga_only, *gpu, c.snapshot()).scores;
  EXPECT_GT(as_cpu[0], as_cpu[2]);
}

// Stranding: free GPUs fewer than every other waiting pod asks are of no
// use. A 2-GPU pod on nodes with 2, 3, 4, 5 and 8 GPUs free.
TEST(FitScoringTest, AcceleratorScoreCountsWhatNoWaitingPodCanUse) {
  Cluster c;
  const std::vector<std::pair<const char*, const char*>> used = {
      {"free-2", "6"}, {"free-3", "5"}, {"free-4", "4"}, {"free-5", "3"}, {"free-8", "0"}};
  for (const auto& [name, gpus] : used) {
    c.AddNode(name,
              {{"cpu", "8000m"}, {"memory", "16Gi"}, {"pods", "110"}, {"nvidia.com/gpu", "8"}});
    if (std::string(gpus) != "0") {
      c.AddPod(name, PodBuilder(std::string("u-") + name)
                         .Requests(c.names, {{"cpu", "100m"}, {"nvidia.com/gpu", gpus}})
                         .Obj());
    }
  }
  auto plugin = MakePlugin(&Fit::Create);
  auto pod = PodBuilder("p").Requests(c.names, {{"cpu", "100m"}, {"nvidia.com/gpu", "2"}}).Obj();
  Snapshot& snapshot = c.mutable_snapshot();
  // Nothing known about waiting pods: plain MostAllocated, (used + 2) / 8.
  EXPECT_EQ(RunScore(*plugin, *pod, snapshot).scores, (std::vector<int64_t>{100, 87, 75, 62, 25}));

  PendingRequests pending;
  snapshot.set_pending_requests(&pending);
  pending.Add(*pod);  // the pod itself waits too, and is left out
  EXPECT_EQ(RunScore(*plugin, *pod, snapshot).scores, (std::vector<int64_t>{100, 87, 75, 62, 25}));

  // Another 2-GPU pod waits: free-3 would keep 1 GPU nobody can use
  // ((7 - 2) / 8: below free-4); free-5 keeps 3, which it can use.
  auto two = PodBuilder("two").Requests(c.names, {{"nvidia.com/gpu", "2"}}).Obj();
  pending.Add(*two);
  EXPECT_EQ(RunScore(*plugin, *pod, snapshot).scores, (std::vector<int64_t>{100, 62, 75, 62, 25}));

  // Only 4-GPU pods wait: free-2 and free-3 were no use to them (filling them
  // un-strands: 100); free-4 would keep 2 they cannot use ((6 - 4) / 8) and
  // free-5 3 ((5 - 6) / 8, at least 0); free-8 keeps room they can use.
  pending.Remove(*two);
  auto four = PodBuilder("four").Requests(c.names, {{"nvidia.com/gpu", "4"}}).Obj();
  pending.Add(*four);
  EXPECT_EQ(RunScore(*plugin, *pod, snapshot).scores, (std::vector<int64_t>{100, 100, 25, 0, 25}));

  // LeastAllocated accelerators ignore it.
  FitArgs least;
  least.accelerator_strategy.type = ScoringStrategyType::kLeastAllocated;
  std::any a = least;
  auto spreading = MakePlugin(&Fit::Create, &a);
  EXPECT_EQ(RunScore(*spreading, *pod, snapshot).scores, (std::vector<int64_t>{0, 12, 25, 37, 75}));
}

TEST(FitArgsTest, AcceleratorStrategyValidation) {
  FitArgs args;
  args.accelerator_strategy.resources = {{"cpu", 1}};
  std::any a = args;
  Result<std::unique_ptr<Plugin>> p = Fit::Create(&a);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("acceleratorStrategy.resources[0].name"), std::string::npos)
      << p.error().message;
  args.accelerator_strategy.resources = {{"nvidia.com/gpu", 101}};
  a = args;
  p = Fit::Create(&a);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("acceleratorStrategy.resources[0].weight"), std::string::npos);
  args.accelerator_strategy.resources = {};
  args.accelerator_strategy.type = ScoringStrategyType::kRequestedToCapacityRatio;
  a = args;
  p = Fit::Create(&a);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("acceleratorStrategy.type"), std::string::npos);
}

TEST(FitScoringTest, NonZeroDefaultsForPodsWithoutRequests) {
  Cluster c;
  c.AddNode("n", {{"cpu", "1000m"}, {"memory", "1000Mi"}, {"pods", "110"}});
  auto plugin = MakePlugin(&Fit::Create);
  auto pod = PodBuilder("p").Obj();
  // cpu: (1000-100)*100/1000 = 90; memory: (1000Mi-200Mi)*100/1000Mi = 80; -> 85.
  EXPECT_EQ(RunScore(*plugin, *pod, c.snapshot()).scores, (std::vector<int64_t>{85}));
}

TEST(ResourceAllocationTest, BrokenLinearFunction) {
  // requested_to_capacity_ratio_test.go TestBrokenLinearFunction.
  const std::vector<UtilizationShapePoint> shape = {{10, 1}, {90, 9}};
  const std::vector<std::pair<int64_t, int64_t>> cases = {{0, 1},  {5, 1},  {10, 1}, {15, 1},
                                                          {40, 4}, {45, 4}, {50, 5}, {65, 6},
                                                          {90, 9}, {95, 9}, {100, 9}};
  for (const auto& [p, want] : cases) EXPECT_EQ(BrokenLinear(shape, p), want) << p;
}

TEST(BalancedAllocationTest, DifferentlySizedNodes) {
  // balanced_allocation_test.go: cpu 3000m memory 5000 on 4000m/10000 and 6000m/10000.
  Cluster c;
  c.AddNode("machine1", {{"cpu", "4000m"}, {"memory", "10000"}, {"pods", "110"}});
  c.AddNode("machine2", {{"cpu", "6000m"}, {"memory", "10000"}, {"pods", "110"}});
  auto plugin = MakePlugin(&BalancedAllocation::Create);
  auto pod = PodBuilder("p").Requests(c.names, {{"cpu", "3000m"}, {"memory", "5000"}}).Obj();
  // machine1: fractions 0.75, 0.5 -> std 0.125 -> 87; machine2: 0.5, 0.5 -> 100.
  EXPECT_EQ(RunScore(*plugin, *pod, c.snapshot()).scores, (std::vector<int64_t>{87, 100}));
}

TEST(BalancedAllocationTest, ExistingRequestsAndThreeResources) {
  Cluster c;
  c.AddNode("n", {{"cpu", "4000m"}, {"memory", "10000"}, {"pods", "110"}, {"nvidia.com/gpu", "4"}});
  c.AddPod("n", PodBuilder("e").Requests(c.names, {{"cpu", "1000m"}, {"memory", "1000"}}).Obj());
  BalancedAllocationArgs args;
  args.resources = {{"cpu", 1}, {"memory", 1}, {"nvidia.com/gpu", 1}};
  std::any a = args;
  auto plugin = MakePlugin(&BalancedAllocation::Create, &a);
  auto pod = PodBuilder("p")
                 .Requests(c.names, {{"cpu", "1000m"}, {"memory", "4000"}, {"nvidia.com/gpu", "4"}})
                 .Obj();
  // fractions 0.5, 0.5, 1.0: mean 2/3, std sqrt((1/36 + 1/36 + 4/36) / 3) = 0.2357 -> 76.
  EXPECT_EQ(RunScore(*plugin, *pod, c.snapshot()).scores, (std::vector<int64_t>{76}));
}

TEST(BalancedAllocationTest, AcceleratorPodsAreSkippedUnlessBalanced) {
  Cluster c;
  c.AddNode("n", {{"cpu", "4000m"}, {"memory", "10000"}, {"pods", "110"}, {"nvidia.com/gpu", "4"}});
  auto gpu = PodBuilder("p")
                 .Requests(c.names, {{"cpu", "1000m"}, {"memory", "4000"}, {"nvidia.com/gpu", "1"}})
                 .Obj();
  auto plugin = MakePlugin(&BalancedAllocation::Create);
  EXPECT_TRUE(RunScore(*plugin, *gpu, c.snapshot()).prescore.IsSkip());
  BalancedAllocationArgs keep;
  keep.skip_accelerator_pods = false;
  std::any a = keep;
  auto keeping = MakePlugin(&BalancedAllocation::Create, &a);
  EXPECT_TRUE(RunScore(*keeping, *gpu, c.snapshot()).prescore.IsSuccess());
  // A GPU listed among the balanced resources is balanced, not skipped.
  BalancedAllocationArgs listed;
  listed.resources = {{"cpu", 1}, {"memory", 1}, {"nvidia.com/gpu", 1}};
  std::any b = listed;
  auto balancing = MakePlugin(&BalancedAllocation::Create, &b);
  EXPECT_TRUE(RunScore(*balancing, *gpu, c.snapshot()).prescore.IsSuccess());
  auto cpu = PodBuilder("c").Requests(c.names, {{"cpu", "1000m"}, {"memory", "4000"}}).Obj();
  EXPECT_TRUE(RunScore(*plugin, *cpu, c.snapshot()).prescore.IsSuccess());
}

TEST(BalancedAllocationTest, BestEffortPodIsSkipped) {
  Cluster c;
  c.AddNode("n");
  auto plugin = MakePlugin(&BalancedAllocation::Create);
  auto pod = PodBuilder("p").Obj();
  EXPECT_TRUE(RunScore(*plugin, *pod, c.snapshot()).prescore.IsSkip());
}

}  // namespace
}  // namespace copse::plugins
