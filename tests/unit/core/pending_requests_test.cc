#include "core/pending_requests.h"

#include <gtest/gtest.h>

namespace copse {
namespace {

constexpr ResourceId kGpu = kResourceIdPods + 1;
constexpr ResourceId kFpga = kResourceIdPods + 2;

PodInfo Asking(int64_t gpus, int64_t fpgas = 0, int64_t cpu = 100) {
  PodInfo pod;
  pod.requests.Set(kResourceIdCpu, cpu);
  if (gpus > 0) pod.requests.Set(kGpu, gpus);
  if (fpgas > 0) pod.requests.Set(kFpga, fpgas);
  return pod;
}

TEST(PendingRequests, SmallestOtherLeavesOutOnePodOfTheGivenSize) {
  PendingRequests pending;
  EXPECT_EQ(pending.SmallestOther(kGpu), 0) << "nothing waits";
  pending.Add(Asking(0));  // CPU only: not counted
  EXPECT_EQ(pending.pods(), 0u);
  pending.Add(Asking(4));
  pending.Add(Asking(2, 1));
  EXPECT_EQ(pending.pods(), 2u);
  EXPECT_EQ(pending.SmallestOther(kGpu), 2);
  EXPECT_EQ(pending.SmallestOther(kGpu, 2), 4) << "the only 2-GPU pod left out";
  EXPECT_EQ(pending.SmallestOther(kGpu, 4), 2);
  EXPECT_EQ(pending.SmallestOther(kFpga), 1);
  EXPECT_EQ(pending.SmallestOther(kFpga, 1), 0);
  EXPECT_EQ(pending.SmallestOther(kResourceIdPods + 9), 0) << "a resource nobody asks";
  pending.Add(Asking(2));
  EXPECT_EQ(pending.SmallestOther(kGpu, 2), 2) << "another 2-GPU pod waits";
  pending.Remove(Asking(2, 1));
  pending.Remove(Asking(2));
  EXPECT_EQ(pending.SmallestOther(kGpu), 4);
  EXPECT_EQ(pending.SmallestOther(kFpga), 0);
  pending.Remove(Asking(4));
  EXPECT_EQ(pending.pods(), 0u);
  EXPECT_EQ(pending.SmallestOther(kGpu), 0);
}

}  // namespace
}  // namespace copse
