#include "topology/gang_packing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <random>
#include <set>
#include <vector>

namespace copse::topology {
namespace {

// Plain exhaustive search, independent of OptimalGangs' ordering, bounds and
// symmetry breaking: every gang is skipped or placed, every pod on every node
// with room (a rack gang's pods all in the rack of its first pod).
int BruteForce(const std::vector<PackingNode>& nodes, const std::vector<PackingGang>& gangs) {
  std::vector<int32_t> free;
  for (const PackingNode& n : nodes) free.push_back(n.free);
  int best = 0;
  std::function<void(size_t, int)> gang_step;
  std::function<bool(size_t, int32_t, int32_t, int)> pod_step =
      [&](size_t g, int32_t pod, int32_t rack, int placed) -> bool {
    const PackingGang& gang = gangs[g];
    if (pod == gang.pods) {
      gang_step(g + 1, placed + 1);
      return true;
    }
    for (size_t n = 0; n < nodes.size(); ++n) {
      if (free[n] < gang.per_pod) continue;
      if (gang.rack_required && rack >= 0 && nodes[n].rack != rack) continue;
      free[n] -= gang.per_pod;
      pod_step(g, pod + 1, rack >= 0 ? rack : (gang.rack_required ? nodes[n].rack : -1), placed);
      free[n] += gang.per_pod;
    }
    return false;
  };
  gang_step = [&](size_t g, int placed) {
    best = std::max(best, placed);
    if (g == gangs.size()) return;
    pod_step(g, 0, -1, placed);
    gang_step(g + 1, placed);
  };
  gang_step(0, 0);
  return best;
}

// The placement a result claims is consistent: free never negative, the
// accelerators taken are exactly those of the gangs marked placed, and the
// assignment (pods per node of each placed gang, none for the others, a rack
// gang inside one rack) leaves exactly the free counts claimed.
void ExpectConsistent(const std::vector<PackingNode>& nodes, const std::vector<PackingGang>& gangs,
                      const PackingResult& r) {
  ASSERT_EQ(r.free.size(), nodes.size());
  ASSERT_EQ(r.placed.size(), gangs.size());
  int64_t before = 0, after = 0, taken = 0;
  int32_t count = 0;
  for (size_t n = 0; n < nodes.size(); ++n) {
    EXPECT_GE(r.free[n], 0);
    EXPECT_LE(r.free[n], nodes[n].free);
    before += nodes[n].free;
    after += r.free[n];
  }
  for (size_t g = 0; g < gangs.size(); ++g) {
    if (!r.placed[g]) continue;
    ++count;
    taken += int64_t{gangs[g].pods} * gangs[g].per_pod;
  }
  EXPECT_EQ(count, r.gangs);
  EXPECT_EQ(before - after, taken);
  ASSERT_EQ(r.assignment.size(), gangs.size());
  std::vector<int64_t> free;
  for (const PackingNode& n : nodes) free.push_back(n.free);
  for (size_t g = 0; g < gangs.size(); ++g) {
    if (!r.placed[g]) {
      EXPECT_TRUE(r.assignment[g].empty()) << "gang " << g;
      continue;
    }
    int32_t pods = 0;
    std::set<int32_t> racks;
    for (const PodsOnNode& where : r.assignment[g]) {
      ASSERT_GE(where.node, 0);
      ASSERT_LT(static_cast<size_t>(where.node), nodes.size());
      EXPECT_GT(where.pods, 0);
      pods += where.pods;
      free[static_cast<size_t>(where.node)] -= int64_t{where.pods} * gangs[g].per_pod;
      racks.insert(nodes[static_cast<size_t>(where.node)].rack);
    }
    EXPECT_EQ(pods, gangs[g].pods) << "gang " << g;
    if (gangs[g].rack_required) {
      EXPECT_EQ(racks.size(), 1u) << "gang " << g;
    }
  }
  for (size_t n = 0; n < nodes.size(); ++n) EXPECT_EQ(free[n], r.free[n]) << "node " << n;
}

TEST(GangPacking, OptimumMatchesExhaustiveSearchOnSmallInstances) {
  std::mt19937 rng(21);
  int differs_from_first_fit = 0;
  for (int instance = 0; instance < 300; ++instance) {
    const int racks = 1 + static_cast<int>(rng() % 3);
    const int per_rack = 1 + static_cast<int>(rng() % 2);
    std::vector<PackingNode> nodes;
    for (int r = 0; r < racks; ++r) {
      for (int i = 0; i < per_rack; ++i) nodes.push_back({r, static_cast<int32_t>(rng() % 9)});
    }
    std::vector<PackingGang> gangs;
    const int num_gangs = 1 + static_cast<int>(rng() % 5);
    for (int g = 0; g < num_gangs; ++g) {
      gangs.push_back({1 + static_cast<int32_t>(rng() % 3), 1 + static_cast<int32_t>(rng() % 8),
                       rng() % 10 < 4});
    }
    const PackingResult opt = OptimalGangs(nodes, gangs);
    ASSERT_TRUE(opt.proven);
    EXPECT_EQ(opt.gangs, BruteForce(nodes, gangs)) << "instance " << instance;
    ExpectConsistent(nodes, gangs, opt);
    const PackingResult ff = FirstFitGangs(nodes, gangs);
    ExpectConsistent(nodes, gangs, ff);
    EXPECT_LE(ff.gangs, opt.gangs) << "instance " << instance;
    differs_from_first_fit += ff.gangs < opt.gangs;
  }
  // The instances are not all easy: first fit misses the optimum on some.
  EXPECT_GT(differs_from_first_fit, 0);
}

// Four racks of two 8-GPU nodes: an 8-pod x 4-GPU gang first, then four
// 2 x 8-GPU gangs that each need a whole rack. First fit in submission
// order places the big gang (two racks) and two rack gangs; the optimum
// leaves the big gang out and places all four rack gangs.
TEST(GangPacking, OrderCostsFirstFitAGang) {
  std::vector<PackingNode> nodes;
  for (int r = 0; r < 4; ++r) {
    nodes.push_back({r, 8});
    nodes.push_back({r, 8});
  }
  const std::vector<PackingGang> gangs = {
      {8, 4, false}, {2, 8, true}, {2, 8, true}, {2, 8, true}, {2, 8, true}};
  const PackingResult opt = OptimalGangs(nodes, gangs);
  EXPECT_TRUE(opt.proven);
  EXPECT_EQ(opt.gangs, 4);
  EXPECT_EQ(opt.placed, (std::vector<uint8_t>{0, 1, 1, 1, 1}));
  ExpectConsistent(nodes, gangs, opt);
  const PackingResult ff = FirstFitGangs(nodes, gangs);
  EXPECT_EQ(ff.gangs, 3);
  EXPECT_EQ(ff.placed, (std::vector<uint8_t>{1, 1, 1, 0, 0}));
  ExpectConsistent(nodes, gangs, ff);
}

TEST(GangPacking, RackGangsStayInOneRack) {
  // Two racks of one node with 4 free each: a 2 x 3-GPU rack gang cannot
  // split across them; without the rack requirement it fits.
  const std::vector<PackingNode> nodes = {{0, 4}, {1, 4}};
  EXPECT_EQ(OptimalGangs(nodes, std::vector<PackingGang>{{2, 3, true}}).gangs, 0);
  EXPECT_EQ(OptimalGangs(nodes, std::vector<PackingGang>{{2, 3, false}}).gangs, 1);
  EXPECT_EQ(FirstFitGangs(nodes, std::vector<PackingGang>{{2, 3, true}}).gangs, 0);
}

TEST(GangPacking, BudgetExhaustedIsReported) {
  // First fit (the incumbent) puts the 4-GPU pod on the 5-GPU node and then
  // has no room for the 5-GPU pod; the optimum swaps them.
  const std::vector<PackingNode> nodes = {{0, 5}, {1, 4}};
  const std::vector<PackingGang> gangs = {{1, 4, false}, {1, 5, false}};
  EXPECT_EQ(FirstFitGangs(nodes, gangs).gangs, 1);
  const PackingResult cut = OptimalGangs(nodes, gangs, /*budget=*/1);
  EXPECT_FALSE(cut.proven);
  EXPECT_EQ(cut.gangs, 1);  // the incumbent, a real placement
  ExpectConsistent(nodes, gangs, cut);
  const PackingResult full = OptimalGangs(nodes, gangs);
  EXPECT_TRUE(full.proven);
  EXPECT_EQ(full.gangs, 2);
  ExpectConsistent(nodes, gangs, full);
}

TEST(GangPacking, StrandedCapacityCountsFreeThatNoPendingPodUses) {
  const std::vector<int64_t> free = {0, 3, 5, 8, 1};
  EXPECT_EQ(StrandedCapacity(free, std::vector<int64_t>{4, 6}), 3 + 1);
  EXPECT_EQ(StrandedCapacity(free, std::vector<int64_t>{1}), 0);
  EXPECT_EQ(StrandedCapacity(free, std::vector<int64_t>{}), 0);  // nothing pending
  EXPECT_EQ(StrandedCapacity(free, std::vector<int64_t>{9}), 3 + 5 + 8 + 1);
}

}  // namespace
}  // namespace copse::topology

namespace copse::topology {
namespace {

// A deadline already past stops the search at its first check (every 256
// states): unproven, with a complete, consistent placement (at least the
// incumbent, first fit in the search order).
TEST(GangPacking, DeadlineStopsTheSearchWithAPlacement) {
  std::mt19937 rng(7);
  int cut = 0;
  for (int instance = 0; instance < 20; ++instance) {
    std::vector<PackingNode> nodes;
    for (int n = 0; n < 24; ++n) nodes.push_back({n / 3, static_cast<int32_t>(1 + rng() % 8)});
    std::vector<PackingGang> gangs;
    for (int g = 0; g < 14; ++g) {
      gangs.push_back({2 + static_cast<int32_t>(rng() % 6), 1 + static_cast<int32_t>(rng() % 8),
                       rng() % 10 < 4});
    }
    const PackingResult stopped =
        OptimalGangs(nodes, gangs, /*budget=*/50'000'000, std::chrono::steady_clock::now());
    EXPECT_LE(stopped.explored, 256u) << "instance " << instance;
    ExpectConsistent(nodes, gangs, stopped);
    // The incumbent holds: never below first fit in the input order.
    EXPECT_GE(stopped.gangs, FirstFitGangs(nodes, gangs).gangs) << "instance " << instance;
    if (stopped.proven) continue;  // solved within the first 256 states
    ++cut;
  }
  EXPECT_GT(cut, 0) << "every instance was solved within 256 states";
}

}  // namespace
}  // namespace copse::topology
