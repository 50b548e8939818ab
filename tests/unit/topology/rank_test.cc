#include "topology/rank.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/topology/topology_test_util.h"

namespace copse::topology {
namespace {

using testing::AddSyntheticNodes;
using testing::Shape;
using testing::TestCluster;
using testing::ZoneBlockRack;

constexpr int64_t kGi = int64_t{1} << 30;

// One zone, two blocks of three racks, two 8-GPU nodes per rack; GPUs in use
// leave racks with 16, 6 (3+3), 4 (4+0), 3 (3+0), 6 (6+0), 10 (8+2) free.
class RankTest : public ::testing::Test {
 protected:
  void SetUp() override {
    AddSyntheticNodes(cluster_, 1, 2, 3, 2, {8000, 64 * kGi, 8, 110});
    const std::vector<int> used = {0, 0, 5, 5, 4, 8, 5, 8, 2, 8, 0, 6};
    for (size_t n = 0; n < used.size(); ++n) {
      if (used[n] > 0) cluster_.node(n).AddPod(cluster_.MakePod({100, kGi, used[n], 0}));
    }
    tree_.Refresh(cluster_.Sync());
    ASSERT_EQ(tree_.num_domains(2), 6u);
  }

  std::vector<std::string> Names(const std::vector<RankedDomain>& ranked, uint32_t level = 2) {
    std::vector<std::string> names;
    for (const RankedDomain& r : ranked) names.emplace_back(tree_.name(level, r.domain));
    return names;
  }

  Demand Gpus(int64_t per_pod, uint32_t pods) {
    Demand demand;
    demand.Add(cluster_.Vector({0, 0, per_pod, 0}), pods);
    return demand;
  }

  TestCluster cluster_;
  DomainTree tree_{ZoneBlockRack()};
  std::vector<RankedDomain> out_;
};

TEST_F(RankTest, TightestFirstOnTheDominantResource) {
  const Demand demand = Gpus(1, 4);
  EXPECT_EQ(demand.total.Get(kResourceIdPods), 4);
  EXPECT_EQ(demand.total.Get(cluster_.gpu), 4);
  RankDomains(tree_, 2, demand, {}, out_);
  // rack-1-1-2 and rack-1-2-2 are equally tight (6 free): the one in the
  // least free block (block-1-2, 19 free against 26) goes first.
  EXPECT_EQ(Names(out_), (std::vector<std::string>{"rack-1-1-3", "rack-1-2-2", "rack-1-1-2",
                                                   "rack-1-2-3", "rack-1-1-1"}));
  EXPECT_EQ(out_[0].key, 0);
  EXPECT_EQ(out_[1].key, 2);
  EXPECT_EQ(out_[1].outer, 19);
  EXPECT_EQ(out_[2].key, 2);
  EXPECT_EQ(out_[2].outer, 26);
  EXPECT_EQ(out_[4].key, 12);
}

TEST_F(RankTest, MostFreeFirst) {
  RankOptions options;
  options.order = RankOrder::kMostFreeFirst;
  RankDomains(tree_, 2, Gpus(1, 4), options, out_);
  EXPECT_EQ(Names(out_), (std::vector<std::string>{"rack-1-1-1", "rack-1-2-3", "rack-1-1-2",
                                                   "rack-1-2-2", "rack-1-1-3"}));
  EXPECT_EQ(out_[0].key, 16);
  options.require_fit = false;  // spill: every rack, even the one with 3 GPUs
  RankDomains(tree_, 2, Gpus(1, 4), options, out_);
  ASSERT_EQ(out_.size(), 6u);
  EXPECT_EQ(tree_.name(2, out_.back().domain), "rack-1-2-1");
  EXPECT_EQ(out_.back().key, 3);
}

TEST_F(RankTest, CapsLikePercentageOfPlacementsToScore) {
  RankOptions options;
  options.percentage = 50;  // ceil(5 * 50%) = 3
  RankDomains(tree_, 2, Gpus(1, 4), options, out_);
  EXPECT_EQ(Names(out_), (std::vector<std::string>{"rack-1-1-3", "rack-1-2-2", "rack-1-1-2"}));
  options.max_candidates = 2;
  RankDomains(tree_, 2, Gpus(1, 4), options, out_);
  EXPECT_EQ(Names(out_), (std::vector<std::string>{"rack-1-1-3", "rack-1-2-2"}));
  options.max_candidates = 0;
  options.percentage = 1;
  RankDomains(tree_, 2, Gpus(1, 4), options, out_);
  EXPECT_EQ(out_.size(), 1u);  // min_candidates 1
  options.min_candidates = 4;
  RankDomains(tree_, 2, Gpus(1, 4), options, out_);
  EXPECT_EQ(out_.size(), 4u);
  options.min_candidates = 100;
  RankDomains(tree_, 2, Gpus(1, 4), options, out_);
  EXPECT_EQ(out_.size(), 5u);
  options.percentage = 0;  // clamped to 1
  options.min_candidates = 0;
  RankDomains(tree_, 2, Gpus(1, 4), options, out_);
  EXPECT_EQ(out_.size(), 1u);
}

TEST_F(RankTest, WithinAnAncestor) {
  RankOptions options;
  options.within_level = 1;
  options.within = 1;  // block-1-2
  RankDomains(tree_, 2, Gpus(1, 4), options, out_);
  EXPECT_EQ(Names(out_), (std::vector<std::string>{"rack-1-2-2", "rack-1-2-3"}));
  options.within_level = 0;
  options.within = 0;
  RankDomains(tree_, 1, Gpus(1, 4), options, out_);
  EXPECT_EQ(Names(out_, 1), (std::vector<std::string>{"block-1-2", "block-1-1"}));  // 19, 26 free
  EXPECT_EQ(out_[0].key, 15);
}

TEST_F(RankTest, PerClassFitCountsPrune) {
  // One pod with 4 GPUs: rack-1-1-2 has 6 GPUs free but 3 + 3.
  const PodClass big{cluster_.Vector({0, 0, 4, 0}), {}};
  FitCounts fits;
  CountFits(tree_, big, fits);
  const std::vector<ClassNeed> needs = {{&fits, 1}};
  Demand demand = Gpus(4, 1);
  RankDomains(tree_, 2, demand, {}, out_);
  EXPECT_EQ(out_.size(), 5u);  // the aggregate alone lets rack-1-1-2 through
  demand.classes = needs;
  RankDomains(tree_, 2, demand, {}, out_);
  EXPECT_EQ(Names(out_),
            (std::vector<std::string>{"rack-1-1-3", "rack-1-2-2", "rack-1-2-3", "rack-1-1-1"}));

  const BoundCheck class_short = CheckBounds(tree_, 2, 1, demand);  // rack-1-1-2
  EXPECT_EQ(class_short.kind, BoundCheck::Kind::kClassCount);
  EXPECT_EQ(class_short.class_index, 0u);
  EXPECT_EQ(class_short.class_fit, 0u);
  const BoundCheck gpu_short = CheckBounds(tree_, 2, 3, Gpus(1, 4));  // rack-1-2-1: 3 GPUs
  EXPECT_EQ(gpu_short.kind, BoundCheck::Kind::kResource);
  EXPECT_EQ(gpu_short.resource, cluster_.gpu);
  EXPECT_TRUE(MayHold(tree_, 2, 0, demand));
  EXPECT_FALSE(MayHold(tree_, 2, 3, demand));
  // Pod slots count too.
  Demand many_pods;
  many_pods.Add(ResourceVector{}, 221);
  EXPECT_EQ(CheckBounds(tree_, 2, 0, many_pods).resource, kResourceIdPods);
}

TEST_F(RankTest, DominantResourceAndMeasure) {
  ResourceVector demand = cluster_.Vector({1000, 0, 4, 0});
  EXPECT_EQ(DominantResource(tree_, demand), cluster_.gpu);  // 4/96 > 1000/96000
  demand = cluster_.Vector({48000, 0, 4, 0});
  EXPECT_EQ(DominantResource(tree_, demand), kResourceIdCpu);
  EXPECT_EQ(DominantResource(tree_, ResourceVector{}), kResourceIdPods);
  ResourceVector untracked;
  untracked.Set(kResourceIdCpu, 96000);
  untracked.Set(static_cast<ResourceId>(kMaxResources - 1), 1);
  EXPECT_EQ(DominantResource(tree_, untracked), static_cast<ResourceId>(kMaxResources - 1));

  // Measured on cpu instead: every rack has 16000 minus 100 per pod placed.
  RankOptions options;
  options.measure = kResourceIdCpu;
  RankDomains(tree_, 2, Gpus(1, 4), options, out_);
  ASSERT_EQ(out_.size(), 5u);
  // Two pods each in rack-1-1-2 and rack-1-2-2 (15800): block-1-2 holds five
  // pods to block-1-1's four, so its rack goes first.
  EXPECT_EQ(tree_.name(2, out_[0].domain), "rack-1-2-2");
  EXPECT_EQ(out_[0].key, 15800);
}

TEST(Rank, TiesBrokenByNameNotPath) {
  TestCluster cluster;
  cluster.AddNode("x",
                  {{std::string(kLabelTopologyZone), "z"},
                   {std::string(kLabelBlock), "b1"},
                   {std::string(kLabelRack), "r9"}},
                  {8000, kGi, 8, 110});
  cluster.AddNode("y",
                  {{std::string(kLabelTopologyZone), "z"},
                   {std::string(kLabelBlock), "b2"},
                   {std::string(kLabelRack), "r1"}},
                  {8000, kGi, 8, 110});
  DomainTree tree(ZoneBlockRack());
  tree.Refresh(cluster.Sync());
  ASSERT_EQ(tree.name(2, 0), "r9");  // path order: under b1
  Demand demand;
  demand.Add(cluster.Vector({0, 0, 2, 0}), 1);
  std::vector<RankedDomain> out;
  RankDomains(tree, 2, demand, {}, out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(tree.name(2, out[0].domain), "r1");
  EXPECT_EQ(tree.name(2, out[1].domain), "r9");
}

}  // namespace
}  // namespace copse::topology
