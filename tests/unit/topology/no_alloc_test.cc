// Hot-path promises of topology/: readers, a usage-only Refresh, CountFits,
// RankDomains and DomainPacker::TryPlace allocate nothing once their buffers
// have grown. A counting global operator new (this test binary only) checks it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <new>

#include "tests/unit/topology/topology_test_util.h"
#include "topology/fit.h"
#include "topology/pack.h"
#include "topology/rank.h"

// GCC pairs the inlined replacement new/delete with malloc/free and warns;
// here they are the same allocator on purpose.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace no_alloc_counter {
thread_local bool g_counting = false;
thread_local size_t g_allocations = 0;

void* CountedMalloc(std::size_t size) noexcept {
  if (g_counting) ++g_allocations;
  return std::malloc(size == 0 ? 1 : size);
}
}  // namespace no_alloc_counter

using no_alloc_counter::CountedMalloc;

void* operator new(std::size_t size) {
  if (void* p = CountedMalloc(size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
  if (void* p = CountedMalloc(size)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return CountedMalloc(size); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return CountedMalloc(size);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace copse::topology {
namespace no_alloc_test {

using ::no_alloc_counter::g_allocations;
using ::no_alloc_counter::g_counting;
using testing::AddSyntheticNodes;
using testing::TestCluster;
using testing::ZoneBlockRack;

constexpr int64_t kGi = int64_t{1} << 30;

template <typename Fn>
size_t CountAllocations(Fn&& fn) {
  g_allocations = 0;
  g_counting = true;
  fn();
  g_counting = false;
  return g_allocations;
}

TEST(TopologyNoAlloc, HotPathsDoNotAllocate) {
  TestCluster cluster;
  AddSyntheticNodes(cluster, 2, 2, 4, 4, {8000, 64 * kGi, 8, 110});
  DomainTree tree(ZoneBlockRack());
  tree.Refresh(cluster.Sync());
  auto pod = cluster.MakePod({1000, kGi, 2, 0});
  const PodClass cls{cluster.Vector({1000, kGi, 2, 0}), {}};
  FitCounts fits;
  CountFits(tree, cls, fits);
  const std::vector<ClassNeed> needs = {{&fits, 8}};
  Demand demand;
  demand.Add(cls.request, 8);
  demand.classes = needs;
  std::vector<RankedDomain> ranked;
  ranked.reserve(tree.num_domains(2));
  const std::vector<ClassDemand> classes = {{cls, 8}};
  DomainPacker packer;
  packer.Reset(tree, 1, 0);
  ASSERT_TRUE(packer.TryPlace(classes).ok);  // grows the packer's buffers

  // A pod lands on node 5: a usage-only refresh.
  cluster.node(5).AddPod(pod);
  const Snapshot& snapshot = cluster.Sync();

  RefreshStats stats;
  int64_t sink = 0;
  const size_t allocations = CountAllocations([&] {
    stats = tree.Refresh(snapshot);
    for (uint32_t l = 0; l < tree.num_levels(); ++l)
      for (DomainId d : tree.domains(l)) {
        sink += tree.free(l, d, cluster.gpu) + static_cast<int64_t>(tree.nodes(l, d).size());
        sink += tree.children(l, d).size() + tree.Ancestor(l, d, 0);
      }
    sink += tree.Find(2, "rack-1-2-3").value_or(0);
    CountFits(tree, cls, fits);
    const NodeIndex rows[] = {5, 6};
    UpdateFits(tree, cls, rows, fits);
    RankDomains(tree, 2, demand, {}, ranked);
    packer.Reset(tree, 1, 0);
    sink += packer.TryPlace(classes).ok ? 1 : 0;
    sink += static_cast<int64_t>(packer.CountFit(cls, 2, 0));
  });
  EXPECT_EQ(allocations, 0u);
  EXPECT_EQ(stats.rows_updated, 1u);
  EXPECT_FALSE(stats.restructured);
  EXPECT_EQ(fits.node(5), 3u);
  EXPECT_EQ(ranked.size(), tree.num_domains(2));
  EXPECT_NE(sink, 0);
}

}  // namespace no_alloc_test
}  // namespace copse::topology
