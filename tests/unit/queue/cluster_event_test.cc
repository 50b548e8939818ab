#include "queue/cluster_event.h"

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <vector>

#include "queue/indexed_heap.h"
#include "queue/plugin_set.h"
#include "queue/queued_unit.h"
#include "queue/queueing_hint.h"
#include "tests/unit/queue/queue_test_util.h"

namespace copse::queue {
namespace {

using testing::Edited;
using testing::MakeNode;
using testing::MakePod;

TEST(ClusterEvent, MatchingFollowsResourceAndActionBits) {
  const ClusterEvent node_add{EventResource::kNode, kActionAdd};
  const ClusterEvent node_label{EventResource::kNode, kActionUpdateNodeLabel};
  const ClusterEvent node_any_update{EventResource::kNode, kActionUpdate};
  const ClusterEvent any_pod_delete{EventResource::kPod, kActionDelete};

  EXPECT_TRUE(MatchClusterEvents(node_add, node_add));
  EXPECT_FALSE(MatchClusterEvents(node_add, node_label));
  EXPECT_TRUE(MatchClusterEvents(node_any_update, node_label));
  EXPECT_TRUE(MatchClusterEvents(node_label, node_any_update));
  EXPECT_FALSE(MatchClusterEvents(node_add, {EventResource::kPodGroup, kActionAdd}));
  // kPod registrations cover assigned and unscheduled pods, not the reverse.
  EXPECT_TRUE(MatchClusterEvents(any_pod_delete, {EventResource::kAssignedPod, kActionDelete}));
  EXPECT_TRUE(MatchClusterEvents(any_pod_delete, {EventResource::kUnscheduledPod, kActionDelete}));
  EXPECT_FALSE(MatchClusterEvents({EventResource::kAssignedPod, kActionDelete}, any_pod_delete));
  // A wildcard registration matches every resource.
  EXPECT_TRUE(MatchClusterEvents({EventResource::kWildCard, kActionAdd}, node_add));
  EXPECT_FALSE(MatchClusterEvents({EventResource::kWildCard, kActionDelete}, node_add));
}

TEST(ClusterEvent, LabelsAndWildcards) {
  EXPECT_EQ((ClusterEvent{EventResource::kNode, kActionAdd}.Label()), "NodeAdd");
  EXPECT_EQ(
      (ClusterEvent{EventResource::kNode, kActionUpdateNodeLabel | kActionUpdateNodeTaint}.Label()),
      "NodeUpdateNodeLabel|UpdateNodeTaint");
  EXPECT_EQ((ClusterEvent{EventResource::kPodGroup, kActionUpdate}.Label()), "PodGroupUpdate");
  EXPECT_EQ(kEventUnschedulableTimeout.Label(), "UnschedulableTimeout");
  EXPECT_TRUE(kEventUnschedulableTimeout.IsWildCard());
  EXPECT_TRUE(kEventForceActivate.IsWildCard());
  EXPECT_FALSE(kEventAssignedPodAdd.IsWildCard());
  EXPECT_EQ(kActionAll, kActionAdd | kActionDelete | kActionUpdate);
}

TEST(EventObject, TypedAccess) {
  const EventObject empty;
  EXPECT_TRUE(empty.Empty());
  EXPECT_EQ(empty.As<NodeInfo>(), nullptr);

  auto node = MakeNode("n1");
  const EventObject object(node);
  ASSERT_NE(object.As<NodeInfo>(), nullptr);
  EXPECT_EQ(object.As<NodeInfo>()->name(), "n1");
  EXPECT_EQ(object.As<PodInfo>(), nullptr);  // wrong type
  const EventObject copy = object;           // shares ownership
  node.reset();
  ASSERT_NE(copy.As<NodeInfo>(), nullptr);
  EXPECT_EQ(copy.As<NodeInfo>()->name(), "n1");
}

TEST(PodSchedulingPropertiesChange, DerivesFineGrainedPodUpdates) {
  auto pod = MakePod("p", 0, {{"app", "web"}});
  auto same = PodSchedulingPropertiesChange(pod.get(), *pod);
  ASSERT_EQ(same.size(), 1u);
  EXPECT_EQ(same[0], (ClusterEvent{EventResource::kUnscheduledPod, kActionUpdateOther}));

  auto relabelled_and_tolerating = Edited(pod, [](PodInfo& p) {
    p.labels["app"] = "db";
    p.tolerations.push_back(Toleration{"k", TolerationOperator::kExists, "", std::nullopt});
  });
  auto events = PodSchedulingPropertiesChange(pod.get(), *relabelled_and_tolerating);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].action, kActionUpdatePodLabel);
  EXPECT_EQ(events[1].action, kActionUpdatePodToleration);

  auto big = Edited(pod, [](PodInfo& p) { p.requests.Set(kResourceIdCpu, 2000); });
  auto small = Edited(big, [](PodInfo& p) { p.requests.Set(kResourceIdCpu, 500); });
  auto scale_down = PodSchedulingPropertiesChange(big.get(), *small);
  ASSERT_EQ(scale_down.size(), 1u);
  EXPECT_EQ(scale_down[0].action, kActionUpdatePodScaleDown);
  auto scale_up = PodSchedulingPropertiesChange(small.get(), *big);
  ASSERT_EQ(scale_up.size(), 1u);
  EXPECT_EQ(scale_up[0].action, kActionUpdateOther);

  EXPECT_EQ(PodSchedulingPropertiesChange(nullptr, *pod)[0].action, kActionUpdateOther);
}

TEST(PluginSet, BitOperations) {
  PluginSet set = PluginSet::Of({0, 5, 63});
  EXPECT_EQ(set.Size(), 3u);
  EXPECT_TRUE(set.Has(63));
  EXPECT_FALSE(set.Has(6));
  EXPECT_FALSE(set.Has(200));
  EXPECT_TRUE(set.Intersects(PluginSet::Of({5})));
  EXPECT_FALSE(set.Intersects(PluginSet::Of({6})));
  EXPECT_EQ(set.Union(PluginSet::Of({6})).mask(), set.mask() | (uint64_t{1} << 6));
  EXPECT_EQ(PluginSet::FromMask(0b100001), PluginSet::Of({0, 5}));
  set.Clear();
  EXPECT_TRUE(set.Empty());
}

TEST(QueueingHintRegistry, EvaluateFollowsKubeStrategy) {
  QueueingHintRegistry hints;
  int calls = 0;
  hints.Register(1, {EventResource::kNode, kActionAdd},
                 [&calls](const PodInfo&, const EventObject&, const EventObject&) {
                   ++calls;
                   return QueueingHint::kQueueSkip;
                 });
  hints.Register(2, {EventResource::kNode, kActionAdd});
  hints.Register(3, {EventResource::kPodGroup, kActionAdd});
  auto pod = MakePod("p");
  const ClusterEvent node_add{EventResource::kNode, kActionAdd};
  EXPECT_TRUE(hints.IsEventOfInterest(node_add));
  EXPECT_FALSE(hints.IsEventOfInterest({EventResource::kNode, kActionDelete}));
  EXPECT_TRUE(hints.PluginInterestedIn(3, {EventResource::kPodGroup, kActionAdd}));
  EXPECT_FALSE(hints.PluginInterestedIn(3, node_add));

  // No rejector: an error, retried after backoff.
  EXPECT_EQ(hints.Evaluate(*pod, {}, {}, node_add, {}, {}), RequeueStrategy::kAfterBackoff);
  // Only the rejector's hint runs; it says skip.
  EXPECT_EQ(hints.Evaluate(*pod, PluginSet::Of({1}), {}, node_add, {}, {}), RequeueStrategy::kSkip);
  EXPECT_EQ(calls, 1);
  // Plugin 3 rejected, but the event is not its.
  EXPECT_EQ(hints.Evaluate(*pod, PluginSet::Of({3}), {}, node_add, {}, {}), RequeueStrategy::kSkip);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(hints.Evaluate(*pod, PluginSet::Of({1, 2}), {}, node_add, {}, {}),
            RequeueStrategy::kAfterBackoff);
  // A pending plugin saying Queue wins over an unschedulable one.
  EXPECT_EQ(hints.Evaluate(*pod, PluginSet::Of({1}), PluginSet::Of({2}), node_add, {}, {}),
            RequeueStrategy::kImmediately);
  // Wildcards requeue, unless they target another pod.
  EXPECT_EQ(hints.Evaluate(*pod, PluginSet::Of({3}), {}, kEventUnschedulableTimeout, {}, {}),
            RequeueStrategy::kAfterBackoff);
  EXPECT_EQ(hints.Evaluate(*pod, PluginSet::Of({3}), {}, kEventForceActivate, {}, MakePod("other")),
            RequeueStrategy::kSkip);
  EXPECT_EQ(hints.Evaluate(*pod, PluginSet::Of({3}), {}, kEventForceActivate, {}, pod),
            RequeueStrategy::kAfterBackoff);
}

struct HeapItem {
  int value = 0;
  size_t heap_index = 0;
};
struct HeapItemLess {
  bool operator()(const HeapItem& a, const HeapItem& b) const noexcept { return a.value < b.value; }
};

TEST(IndexedHeap, PushPopEraseFixKeepOrder) {
  std::vector<HeapItem> items(500);
  std::mt19937 rng(7);
  IndexedHeap<HeapItem, HeapItemLess> heap;
  for (HeapItem& item : items) {
    item.value = static_cast<int>(rng() % 1000);
    heap.Push(&item);
  }
  // Erase every third item, re-key every fifth.
  size_t live = items.size();
  for (size_t i = 0; i < items.size(); i += 3) {
    heap.Erase(&items[i]);
    items[i].value = -1;  // marks erased
    --live;
  }
  for (size_t i = 1; i < items.size(); i += 5) {
    if (items[i].value < 0) continue;
    items[i].value = static_cast<int>(rng() % 1000);
    heap.Fix(&items[i]);
  }
  ASSERT_EQ(heap.size(), live);
  int last = -1;
  while (HeapItem* top = heap.Pop()) {
    ASSERT_GE(top->value, last);
    ASSERT_GE(top->value, 0) << "erased item popped";
    last = top->value;
  }
  EXPECT_TRUE(heap.empty());
}

}  // namespace
}  // namespace copse::queue
