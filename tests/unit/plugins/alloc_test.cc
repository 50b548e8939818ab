// Filter, Score and NormalizeScore must not allocate (README, "A scheduling cycle").
// This binary replaces the global operator new with a counting one; the count
// is taken only around a filter + score pass of every default plugin, with a
// pod that exercises all of them.

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "plugins/balanced_allocation/balanced_allocation.h"
#include "plugins/defaults/defaults.h"
#include "plugins/domain_packing/domain_packing.h"
#include "plugins/dynamic_resources/dynamic_resources.h"
#include "plugins/framework/framework.h"
#include "tests/unit/plugins/test_util.h"

namespace {
std::atomic<bool> g_counting{false};
std::atomic<size_t> g_allocations{0};

void* CountedAlloc(size_t size) {
  if (g_counting.load(std::memory_order_relaxed))
    g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
}  // namespace

void* operator new(size_t size) { return CountedAlloc(size); }
void* operator new[](size_t size) { return CountedAlloc(size); }
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  try {
    return CountedAlloc(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](size_t size, const std::nothrow_t&) noexcept {
  try {
    return CountedAlloc(size);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }

namespace copse::plugins {
namespace {

using testing::AffinityTerm;
using testing::Cluster;
using testing::PodBuilder;
using testing::Req;
using testing::Selector;

TEST(AllocationTest, FilterAndScoreDoNotAllocate) {
  Cluster c;
  const std::string zone(kLabelTopologyZone);
  for (int i = 0; i < 600; ++i) {
    Labels labels = {{zone, "zone-" + std::to_string(i % 3)},
                     {"rack", "rack-" + std::to_string(i % 20)},
                     {"pool", i % 5 == 0 ? "infer" : "train"}};
    auto& node = c.AddNode("node-" + std::to_string(i),
                           {{"cpu", "64"},
                            {"memory", "512Gi"},
                            {"pods", "110"},
                            {"nvidia.com/gpu", i % 2 ? "8" : "0"}},
                           labels);
    if (i % 7 == 0) node.SetTaints({{"dedicated", "infer", TaintEffect::kNoSchedule}});
    if (i % 11 == 0) node.SetTaints({{"spot", "true", TaintEffect::kPreferNoSchedule}});
    for (int k = 0; k < 3; ++k) {
      PodBuilder existing("e-" + std::to_string(i) + "-" + std::to_string(k));
      existing.Label("app", k == 0 ? "web" : "batch")
          .Requests(c.names, {{"cpu", "1"}, {"memory", "1Gi"}});
      existing.HostPort("", Protocol::kTCP, 9000 + k);
      if (k == 2 && i % 13 == 0)
        existing.PodAntiAffinity(AffinityTerm("app=trainer", std::string(kLabelHostname)));
      if (k == 1) existing.PreferredPodAffinity(3, AffinityTerm("app=trainer", zone));
      c.AddPod(node.name(), existing.Obj());
    }
  }
  auto pod =
      PodBuilder("trainer")
          .Label("app", "trainer")
          .Requests(c.names, {{"cpu", "4"}, {"memory", "16Gi"}, {"nvidia.com/gpu", "2"}})
          .Toleration("dedicated", TolerationOperator::kEqual, "infer", TaintEffect::kNoSchedule)
          .HostPort("", Protocol::kTCP, 8080)
          .NodeSelector("pool", "train")
          .RequiredNodeAffinity(NodeSelector{
              {NodeSelectorTerm{{Req(zone, SelectorOp::kIn, {"zone-0", "zone-1"})}, {}}}})
          .PreferredNodeAffinity(
              5, NodeSelectorTerm{{Req("rack", SelectorOp::kIn, {"rack-1", "rack-3"})}, {}})
          .PodAffinity(AffinityTerm("app=web", zone))
          .PodAntiAffinity(AffinityTerm("app=trainer", std::string(kLabelHostname)))
          .PreferredPodAffinity(10, AffinityTerm("app=batch", "rack"))
          .PreferredPodAntiAffinity(10, AffinityTerm("app=other", zone))
          .Spread(2, zone, UnsatisfiableConstraintAction::kDoNotSchedule, Selector("app=trainer"))
          .Spread(1, std::string(kLabelHostname), UnsatisfiableConstraintAction::kScheduleAnyway,
                  Selector("app=trainer"))
          .Spread(1, "rack", UnsatisfiableConstraintAction::kScheduleAnyway,
                  Selector("app=trainer"))
          .Obj();

  Registry registry;
  ASSERT_TRUE(RegisterDefaultPlugins(registry).ok());
  // The GPU pod is scored by every score plugin: BalancedAllocation told not
  // to skip accelerator pods, DomainPacking ranking zones and racks.
  Profile profile = DefaultProfile();
  BalancedAllocationArgs balanced;
  balanced.skip_accelerator_pods = false;
  profile.plugin_args[std::string(kBalancedAllocationName)] = balanced;
  DomainPackingArgs packing;
  packing.levels = {zone, "rack"};
  profile.plugin_args[std::string(kDomainPackingName)] = packing;
  Result<std::unique_ptr<Framework>> fw = Framework::Create(registry, profile);
  ASSERT_TRUE(fw.ok());
  const Snapshot& snap = c.snapshot();
  CycleState state;
  PreFilterOutcome pre = (*fw)->RunPreFilter(*pod, snap, state);
  ASSERT_TRUE(pre.status.IsSuccess());
  // Every filter plugin must actually run (the pod claims no devices:
  // DynamicResources skips it).
  for (PluginIndex i = 0; i < (*fw)->num_plugins(); ++i) {
    if ((*fw)->plugin(i).Name() == kDynamicResourcesName) continue;
    EXPECT_FALSE(state.FilterSkipped(i)) << int(i);
  }

  const CycleContext ctx{*pod, snap, state};
  std::vector<NodeIndex> candidates(snap.num_nodes());
  for (NodeIndex n = 0; n < candidates.size(); ++n) candidates[n] = n;
  constexpr size_t kChunk = 128;
  FilterScratch scratch;
  scratch.Reserve(kChunk);
  std::vector<Status> statuses(snap.num_nodes());
  std::vector<NodeIndex> feasible(snap.num_nodes());
  size_t num_feasible = 0;
  uint64_t rejected = 0;

  // The counter works: a vector of runtime size allocates once.
  g_allocations = 0;
  g_counting = true;
  std::vector<int> probe(snap.num_nodes(), 1);
  g_counting = false;
  EXPECT_EQ(probe.size(), snap.num_nodes());
  EXPECT_EQ(g_allocations.load(), 1u);

  g_allocations = 0;
  g_counting = true;
  for (size_t pos = 0; pos < candidates.size(); pos += kChunk) {
    const size_t len = std::min(kChunk, candidates.size() - pos);
    size_t found = 0;
    Status s = (*fw)->FilterChunk(
        ctx, std::span<const NodeIndex>(candidates.data() + pos, len), scratch, statuses,
        std::span<NodeIndex>(feasible.data() + num_feasible, len), found, rejected);
    if (!s.IsSuccess()) break;
    num_feasible += found;
  }
  g_counting = false;
  EXPECT_EQ(g_allocations.load(), 0u) << "Filter allocated";
  ASSERT_GT(num_feasible, 10u) << (*fw)->FormatFitError(snap.num_nodes(), {}, statuses, {}, snap);
  ASSERT_LT(num_feasible, snap.num_nodes());
  feasible.resize(num_feasible);

  ASSERT_TRUE((*fw)->RunPreScore(*pod, snap, feasible, state).IsSuccess());
  for (PluginIndex i = 0; i < (*fw)->num_plugins(); ++i)
    EXPECT_FALSE(state.ScoreSkipped(i)) << int(i);
  const size_t num_score = (*fw)->num_score_plugins();
  std::vector<int64_t> plugin_scores(num_score * num_feasible);
  std::vector<int64_t> totals(num_feasible);

  g_allocations = 0;
  g_counting = true;
  for (size_t p = 0; p < num_score; ++p) {
    for (size_t pos = 0; pos < num_feasible; pos += kChunk) {
      const size_t len = std::min(kChunk, num_feasible - pos);
      Status s =
          (*fw)->ScoreChunk(ctx, p, std::span<const NodeIndex>(feasible.data() + pos, len),
                            std::span<int64_t>(plugin_scores.data() + p * num_feasible + pos, len));
      if (!s.IsSuccess()) break;
    }
  }
  Status combined = (*fw)->CombineScores(ctx, feasible, plugin_scores, totals);
  g_counting = false;
  EXPECT_EQ(g_allocations.load(), 0u) << "Score/NormalizeScore allocated";
  EXPECT_TRUE(combined.IsSuccess());
}

}  // namespace
}  // namespace copse::plugins
