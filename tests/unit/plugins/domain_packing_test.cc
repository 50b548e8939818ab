#include "plugins/domain_packing/domain_packing.h"

#include <gtest/gtest.h>

#include "tests/unit/plugins/test_util.h"

namespace copse::plugins {
namespace {

using testing::Cluster;
using testing::MakePlugin;
using testing::PodBuilder;
using testing::RunScore;

constexpr const char* kRack = "copse.dev/rack";
constexpr const char* kBlock = "copse.dev/block";

class DomainPackingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // rack-a: 10 GPUs free (6 in use on a1), rack-b: 16 free, rack-c: 4 free;
    // x has no rack label.
    Add("a1", "rack-a", "block-1", 6);
    Add("a2", "rack-a", "block-1", 0);
    Add("b1", "rack-b", "block-2", 0);
    Add("b2", "rack-b", "block-2", 0);
    Add("c1", "rack-c", "block-2", 4);
    c_.AddNode("x", {{"cpu", "16"}, {"memory", "64Gi"}, {"pods", "110"}, {"nvidia.com/gpu", "8"}});
  }
  void Add(const std::string& name, const std::string& rack, const std::string& block, int used) {
    c_.AddNode(name, {{"cpu", "16"}, {"memory", "64Gi"}, {"pods", "110"}, {"nvidia.com/gpu", "8"}},
               Labels{{kRack, rack}, {kBlock, block}});
    if (used > 0) {
      c_.AddPod(name, PodBuilder("u-" + name)
                          .Requests(c_.names, {{"nvidia.com/gpu", std::to_string(used).c_str()}})
                          .Obj());
    }
  }
  Cluster c_;
};

TEST_F(DomainPackingTest, LeastFreeRackScoresHighest) {
  DomainPackingArgs args;
  args.levels = {kRack};
  std::any a = args;
  auto plugin = MakePlugin(&DomainPacking::Create, &a);
  auto gpu = PodBuilder("g").Requests(c_.names, {{"cpu", "1"}, {"nvidia.com/gpu", "1"}}).Obj();
  // 1000 * (16 - free) / 16, scaled to 0..100: rack-a 37, rack-b 0, rack-c 75; x unranked 0.
  EXPECT_EQ(RunScore(*plugin, *gpu, c_.snapshot()).scores,
            (std::vector<int64_t>{37, 37, 0, 0, 75, 0}));
}

TEST_F(DomainPackingTest, InnerLevelsWeighMore) {
  DomainPackingArgs args;
  args.levels = {kBlock, kRack};
  std::any a = args;
  auto plugin = MakePlugin(&DomainPacking::Create, &a);
  auto gpu = PodBuilder("g").Requests(c_.names, {{"nvidia.com/gpu", "2"}}).Obj();
  // block-1 10 free, block-2 20 free (max): block-1 500, block-2 0; racks as above
  // (375, 0, 750); weights 1 (block) and 2 (rack): a (500 + 2 * 375) / 3 = 416,
  // b 0, c 1500 / 3 = 500.
  EXPECT_EQ(RunScore(*plugin, *gpu, c_.snapshot()).scores,
            (std::vector<int64_t>{41, 41, 0, 0, 50, 0}));
}

TEST_F(DomainPackingTest, CpuOnlyPodsAreSkipped) {
  auto plugin = MakePlugin(&DomainPacking::Create);
  auto cpu = PodBuilder("c").Requests(c_.names, {{"cpu", "1"}}).Obj();
  EXPECT_TRUE(RunScore(*plugin, *cpu, c_.snapshot()).prescore.IsSkip());
  // With an explicit list, other extended resources are not accelerators.
  DomainPackingArgs args;
  args.resources = {{"example.com/fpga", 1}};
  std::any a = args;
  auto fpga = MakePlugin(&DomainPacking::Create, &a);
  auto gpu = PodBuilder("g").Requests(c_.names, {{"nvidia.com/gpu", "1"}}).Obj();
  EXPECT_TRUE(RunScore(*fpga, *gpu, c_.snapshot()).prescore.IsSkip());
  // The default levels (zone, block, rack) apply to a GPU pod.
  EXPECT_TRUE(RunScore(*plugin, *gpu, c_.snapshot()).prescore.IsSuccess());
}

TEST(DomainPackingArgsTest, ErrorsNameTheField) {
  auto error = [](DomainPackingArgs args) {
    std::any a = args;
    Result<std::unique_ptr<Plugin>> p = DomainPacking::Create(&a);
    EXPECT_FALSE(p.ok());
    return p.ok() ? std::string() : p.error().message;
  };
  DomainPackingArgs dup;
  dup.levels = {kRack, kRack};
  EXPECT_NE(error(dup).find("DomainPackingArgs.levels[1]: Duplicate value"), std::string::npos);
  DomainPackingArgs empty;
  empty.levels = {""};
  EXPECT_NE(error(empty).find("DomainPackingArgs.levels[0]: Required value"), std::string::npos);
  DomainPackingArgs many;
  for (int i = 0; i < 9; ++i) many.levels.push_back("l" + std::to_string(i));
  EXPECT_NE(error(many).find("DomainPackingArgs.levels: Too many"), std::string::npos);
  DomainPackingArgs cpu;
  cpu.resources = {{"cpu", 1}};
  EXPECT_NE(error(cpu).find("DomainPackingArgs.resources[0].name"), std::string::npos);
  std::any wrong = 42;
  EXPECT_FALSE(DomainPacking::Create(&wrong).ok());
}

}  // namespace
}  // namespace copse::plugins
