#include "queue/scheduling_queue.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <ostream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/clock.h"
#include "tests/unit/queue/queue_test_util.h"

namespace copse::queue {

// Readable gtest output for locations.
void PrintTo(QueueLocation location, std::ostream* os) { *os << QueueLocationName(location); }

namespace {

using namespace std::chrono_literals;
using testing::DrainNames;
using testing::Edited;
using testing::Key;
using testing::LocationOf;
using testing::MakeNode;
using testing::MakePod;
using testing::NewPod;
using testing::PopAndReject;

// Plugin ids of the test profile.
constexpr PluginId kFit = 1;        // Node Add/UpdateNodeAllocatable; Queue only for "ready" nodes
constexpr PluginId kPodLabels = 2;  // unscheduled pod label updates
constexpr PluginId kTaints = 3;     // Node UpdateNodeTaint, always Queue
constexpr PluginId kGangWait = 4;   // PodGroup Add, always Queue (used as a Pending plugin)
constexpr PluginId kThrowing = 5;   // Node Delete; its hint throws
constexpr PluginId kAffinity = 6;   // AssignedPod Add, always Queue
constexpr PluginId kGates = 7;      // PreEnqueue: gated while the pod has label "gated"
constexpr PluginId kSpread = 8;     // Pod Add/Delete, a cross-topology plugin
constexpr PluginId kGroupGate = 9;  // PreEnqueue: gated until `group_exists`; PodGroup Add

const ClusterEvent kNodeAdd{EventResource::kNode, kActionAdd};
const ClusterEvent kNodeDelete{EventResource::kNode, kActionDelete};
const ClusterEvent kNodeTaint{EventResource::kNode, kActionUpdateNodeTaint};
const ClusterEvent kPodGroupAdd{EventResource::kPodGroup, kActionAdd};
const ClusterEvent kNamespaceAdd{EventResource::kNamespace, kActionAdd};

class SchedulingQueueTest : public ::testing::Test {
 protected:
  QueueProfile MakeProfile() {
    QueueProfile profile;
    profile.hints.Register(kFit, {EventResource::kNode, kActionAdd | kActionUpdateNodeAllocatable},
                           [](const PodInfo&, const EventObject&, const EventObject& new_obj) {
                             const NodeInfo* node = new_obj.As<NodeInfo>();
                             const bool ready =
                                 node != nullptr && node->labels().count("ready") > 0;
                             return ready ? QueueingHint::kQueue : QueueingHint::kQueueSkip;
                           });
    profile.hints.Register(kPodLabels, {EventResource::kUnscheduledPod, kActionUpdatePodLabel});
    profile.hints.Register(kTaints, kNodeTaint);
    profile.hints.Register(kGangWait, kPodGroupAdd);
    profile.hints.Register(
        kThrowing, kNodeDelete,
        [](const PodInfo&, const EventObject&, const EventObject&) -> QueueingHint {
          throw std::runtime_error("hint failed");
        });
    profile.hints.Register(kAffinity, kEventAssignedPodAdd);
    profile.hints.Register(kSpread, {EventResource::kPod, kActionAdd | kActionDelete});
    profile.hints.Register(kGroupGate, kPodGroupAdd);
    profile.cross_topology_plugins = PluginSet::Of({kSpread});
    profile.pre_enqueue.push_back({kGates, "LabelGate", [](const PodInfo& pod) {
                                     return pod.labels.count("gated") > 0 ? GateDecision::kGate
                                                                          : GateDecision::kAdmit;
                                   }});
    profile.pre_enqueue.push_back({kGroupGate, "GroupGate", [this](const PodInfo& pod) {
                                     const bool needs_group = pod.labels.count("group") > 0;
                                     return needs_group && !group_exists_ ? GateDecision::kGate
                                                                          : GateDecision::kAdmit;
                                   }});
    return profile;
  }

  std::unique_ptr<SchedulingQueue> NewQueue(QueueOptions options = {}) {
    std::vector<QueueProfile> profiles;
    profiles.push_back(MakeProfile());
    return std::make_unique<SchedulingQueue>(clock_, std::move(options), std::move(profiles));
  }

  FakeClock clock_;
  bool group_exists_ = false;
};

// ---------------------------------------------------------------------------
// Ordering

TEST_F(SchedulingQueueTest, PopsByPriorityThenTimestampThenFifo) {
  auto queue = NewQueue();
  queue->Add(MakePod("low-early", 0));
  clock_.Advance(1s);
  queue->Add(MakePod("high-late", 10));
  clock_.Advance(1s);
  queue->Add(MakePod("low-late-1", 0));
  queue->Add(MakePod("low-late-2", 0));  // same timestamp: FIFO
  queue->Add(MakePod("high-latest", 10));
  EXPECT_EQ(queue->PendingUnits().active, 5u);
  EXPECT_EQ(DrainNames(*queue), (std::vector<std::string>{"high-late", "high-latest", "low-early",
                                                          "low-late-1", "low-late-2"}));
  EXPECT_FALSE(queue->Pop().has_value());
  EXPECT_EQ(queue->SchedulingCycle(), 5);
}

TEST_F(SchedulingQueueTest, CustomQueueSortIsUsed) {
  QueueOptions options;
  options.less = [](const QueuedUnitView& a, const QueuedUnitView& b) {
    return a.priority < b.priority;  // lowest priority first
  };
  auto queue = NewQueue(std::move(options));
  queue->Add(MakePod("p5", 5));
  queue->Add(MakePod("p1", 1));
  queue->Add(MakePod("p9", 9));
  queue->Add(MakePod("p1-again", 1));
  EXPECT_EQ(DrainNames(*queue), (std::vector<std::string>{"p1", "p1-again", "p5", "p9"}));
}

TEST_F(SchedulingQueueTest, UpdateInActiveQReordersByNewPriority) {
  auto queue = NewQueue();
  auto a = MakePod("a", 1);
  queue->Add(a);
  queue->Add(MakePod("b", 2));
  EXPECT_EQ(queue->Update(a, Edited(a, [](PodInfo& p) { p.priority = 5; })),
            QueueLocation::kActive);
  EXPECT_EQ(DrainNames(*queue), (std::vector<std::string>{"a", "b"}));
}

TEST_F(SchedulingQueueTest, ScalesTo100kPendingPods) {
  auto queue = NewQueue();
  std::mt19937 rng(42);
  std::uniform_int_distribution<int32_t> priority(0, 1000);
  constexpr int kPods = 100'000;
  for (int i = 0; i < kPods; ++i) {
    queue->Add(MakePod("pod-" + std::to_string(i), priority(rng)));
    if (i % 1000 == 0) clock_.Advance(1ms);
  }
  EXPECT_EQ(queue->PendingPods().active, static_cast<size_t>(kPods));
  int32_t last_priority = 1'000'000;
  Clock::TimePoint last_timestamp{};
  int popped = 0;
  while (std::optional<PoppedUnit> unit = queue->Pop()) {
    ASSERT_LE(unit->priority, last_priority);
    if (unit->priority == last_priority) {
      ASSERT_GE(unit->timestamp, last_timestamp);
    }
    last_priority = unit->priority;
    last_timestamp = unit->timestamp;
    queue->Done(unit->key());
    ++popped;
  }
  EXPECT_EQ(popped, kPods);
  EXPECT_EQ(queue->PendingUnits(), PendingCounts{});
}

// ---------------------------------------------------------------------------
// Backoff

TEST_F(SchedulingQueueTest, ErrorBackoffDoublesAndCapsAtMax) {
  auto queue = NewQueue();
  queue->Add(MakePod("p"));
  const std::vector<Clock::Duration> expected = {1s, 2s, 4s, 8s, 10s, 10s};
  for (size_t attempt = 0; attempt < expected.size(); ++attempt) {
    std::optional<PoppedUnit> popped = queue->Pop();
    ASSERT_TRUE(popped.has_value()) << "attempt " << attempt;
    EXPECT_EQ(popped->attempts, static_cast<int32_t>(attempt + 1));
    const Clock::TimePoint failed_at = clock_.Now();
    ASSERT_EQ(queue->AddErroredIfNotPresent(popped->key(), popped->cycle), QueueLocation::kBackoff);
    ASSERT_EQ(queue->NextBackoffExpiry(), failed_at + expected[attempt]) << "attempt " << attempt;
    EXPECT_EQ(queue->Find(Key("p"))->consecutive_errors_count, static_cast<int32_t>(attempt + 1));

    clock_.Advance(expected[attempt] - 1ns);
    EXPECT_EQ(queue->FlushBackoffQCompleted(), 0u);
    EXPECT_FALSE(queue->Pop().has_value());
    clock_.Advance(1ns);
    EXPECT_EQ(queue->FlushBackoffQCompleted(), 1u);
  }
}

TEST_F(SchedulingQueueTest, BackoffDurationsAreConfigurable) {
  QueueOptions options;
  options.pod_initial_backoff = 100ms;
  options.pod_max_backoff = 250ms;
  auto queue = NewQueue(options);
  queue->Add(MakePod("p"));
  for (Clock::Duration want :
       {Clock::Duration(100ms), Clock::Duration(200ms), Clock::Duration(250ms)}) {
    std::optional<PoppedUnit> popped = queue->Pop();
    ASSERT_TRUE(popped.has_value());
    ASSERT_EQ(queue->AddErroredIfNotPresent(popped->key(), popped->cycle), QueueLocation::kBackoff);
    EXPECT_EQ(*queue->NextBackoffExpiry() - clock_.Now(), want);
    clock_.Advance(want);
    ASSERT_EQ(queue->FlushBackoffQCompleted(), 1u);
  }
}

// A group backs off by the group settings, not the pod ones: from
// pod_group_initial_backoff scaled by 1 + floor(log2(members)) (4 members:
// x3), doubling, capped at pod_group_max_backoff; its priority is its lowest
// member's; deleting it empties the queue.
TEST_F(SchedulingQueueTest, GroupBacksOffByItsOwnSettings) {
  QueueOptions options;
  options.pod_initial_backoff = 1s;
  options.pod_max_backoff = 10s;
  options.pod_group_initial_backoff = 3s;
  options.pod_group_max_backoff = 30s;
  auto queue = NewQueue(options);
  const UnitKey key = UnitKey::ForPodGroup(testing::kNamespace, "g");
  PodList members = {MakePod("g-0", 50), MakePod("g-1", 7), MakePod("g-2", 50), MakePod("g-3", 9)};
  EXPECT_EQ(queue->UpsertGroup(key, members), QueueLocation::kActive);
  for (Clock::Duration want :
       {Clock::Duration(9s), Clock::Duration(18s), Clock::Duration(30s), Clock::Duration(30s)}) {
    std::optional<PoppedUnit> popped = queue->Pop();
    ASSERT_TRUE(popped.has_value());
    EXPECT_EQ(popped->key(), key);
    EXPECT_EQ(popped->priority, 7) << "a group's priority is its lowest member's";
    EXPECT_EQ(popped->pods.size(), 4u);
    ASSERT_EQ(queue->AddErroredIfNotPresent(popped->key(), popped->cycle), QueueLocation::kBackoff);
    EXPECT_EQ(*queue->NextBackoffExpiry() - clock_.Now(), want);
    clock_.Advance(want);
    ASSERT_EQ(queue->FlushBackoffQCompleted(), 1u);
  }
  // An upsert with fewer members replaces them; a delete removes the unit.
  EXPECT_NE(queue->UpsertGroup(key, {members[0], members[2]}), QueueLocation::kNone);
  std::optional<PoppedUnit> popped = queue->Pop();
  ASSERT_TRUE(popped.has_value());
  EXPECT_EQ(popped->pods.size(), 2u);
  EXPECT_EQ(popped->priority, 50);
  queue->Done(popped->key());
  EXPECT_EQ(queue->UpsertGroup(key, members), QueueLocation::kActive);
  EXPECT_TRUE(queue->DeleteGroup(key));
  EXPECT_FALSE(queue->Pop().has_value());
  EXPECT_FALSE(queue->DeleteGroup(key));
}

// What the queued pods request (stranding-aware scoring reads it): a pod
// counts from its add until it is done or deleted, also while in flight; an
// update replaces its requests; a group's members count as the group's
// current list.
TEST_F(SchedulingQueueTest, PendingRequestsFollowThePodsInTheQueue) {
  constexpr ResourceId kGpu = kResourceIdPods + 1;
  auto gpus = [](std::shared_ptr<const PodInfo> pod, int64_t n) {
    return Edited(pod, [n](PodInfo& p) { p.requests.Set(kGpu, n); });
  };
  auto queue = NewQueue();
  const PendingRequests& pending = queue->pending_requests();
  const auto single = gpus(MakePod("single"), 4);
  queue->Add(single);
  queue->Add(MakePod("cpu-only"));
  EXPECT_EQ(pending.pods(), 1u);
  EXPECT_EQ(pending.SmallestOther(kGpu), 4);
  EXPECT_EQ(pending.SmallestOther(kGpu, 4), 0) << "the pod itself left out";
  const UnitKey key = UnitKey::ForPodGroup(testing::kNamespace, "g");
  PodList members = {gpus(MakePod("g-0"), 2), gpus(MakePod("g-1"), 2)};
  queue->UpsertGroup(key, members);
  EXPECT_EQ(pending.pods(), 3u);
  EXPECT_EQ(pending.SmallestOther(kGpu, 2), 2) << "another member asks 2 too";
  queue->UpsertGroup(key, {gpus(MakePod("g-0"), 3)});
  EXPECT_EQ(pending.pods(), 2u);
  EXPECT_EQ(pending.SmallestOther(kGpu), 3);
  queue->Update(single, gpus(single, 1));
  EXPECT_EQ(pending.SmallestOther(kGpu), 1);
  // Popped: still waiting until done.
  std::vector<UnitKey> popped;
  while (std::optional<PoppedUnit> unit = queue->Pop()) popped.push_back(unit->key());
  EXPECT_EQ(popped.size(), 3u);
  EXPECT_EQ(pending.pods(), 2u);
  for (const UnitKey& done : popped) queue->Done(done);
  EXPECT_EQ(pending.pods(), 0u);
  EXPECT_EQ(pending.SmallestOther(kGpu), 0);
  queue->UpsertGroup(key, members);
  EXPECT_TRUE(queue->DeleteGroup(key));
  EXPECT_EQ(pending.pods(), 0u);
}

// A group unit passes the PreEnqueue gates only when every member does: one
// gated member keeps the whole group in the gated pool (not popped, no
// attempt counted); an upsert whose members are all admitted takes it out.
TEST_F(SchedulingQueueTest, GroupWithAGatedMemberWaitsInTheGatedPool) {
  auto queue = NewQueue();
  const UnitKey key = UnitKey::ForPodGroup(testing::kNamespace, "g");
  auto gated = MakePod("g-1", 5, {{"gated", "yes"}});
  PodList members = {MakePod("g-0", 5), gated};
  EXPECT_EQ(queue->UpsertGroup(key, members), QueueLocation::kGated);
  EXPECT_EQ(queue->PendingUnits().gated, 1u);
  EXPECT_EQ(queue->PendingPods().gated, 2u);
  EXPECT_EQ(queue->Find(key)->gating_plugin, std::optional<PluginId>(kGates));
  EXPECT_FALSE(queue->Pop().has_value());
  // Cluster events and flushes leave it there.
  queue->MoveAllToActiveOrBackoffQueue(ClusterEvent{}, {}, {});
  clock_.Advance(1h);
  EXPECT_EQ(queue->FlushUnschedulablePodsLeftover(), 0u);
  EXPECT_EQ(queue->Find(key)->location, QueueLocation::kGated);

  // The gate lifts on the member: the group leaves the gated pool.
  members[1] = Edited(gated, [](PodInfo& p) { p.labels.erase("gated"); });
  const QueueLocation moved = queue->UpsertGroup(key, members);
  EXPECT_NE(moved, QueueLocation::kGated);
  EXPECT_EQ(queue->PendingUnits().gated, 0u);
  if (moved == QueueLocation::kBackoff) {
    clock_.Advance(1h);
    EXPECT_EQ(queue->FlushBackoffQCompleted(), 1u);
  }
  std::optional<PoppedUnit> popped = queue->Pop();
  ASSERT_TRUE(popped.has_value());
  EXPECT_EQ(popped->key(), key);
  EXPECT_EQ(popped->pods.size(), 2u);
  EXPECT_EQ(popped->attempts, 1) << "time in the gated pool is no attempt";
}

TEST_F(SchedulingQueueTest, ZeroMaxBackoffDisablesBackoff) {
  QueueOptions options;
  options.pod_max_backoff = 0s;
  auto queue = NewQueue(options);
  queue->Add(MakePod("p"));
  std::optional<PoppedUnit> popped = queue->Pop();
  ASSERT_TRUE(popped.has_value());
  EXPECT_EQ(queue->AddErroredIfNotPresent(popped->key(), popped->cycle), QueueLocation::kActive);
}

TEST_F(SchedulingQueueTest, RejectionCountDrivesBackoffAndResetsErrors) {
  auto queue = NewQueue();
  queue->Add(MakePod("p"));
  // Two errors, then a rejection: the rejection count (1) sets the backoff.
  for (int i = 0; i < 2; ++i) {
    std::optional<PoppedUnit> popped = queue->Pop();
    ASSERT_TRUE(popped.has_value());
    ASSERT_EQ(queue->AddErroredIfNotPresent(popped->key(), popped->cycle), QueueLocation::kBackoff);
    clock_.Advance(10s);
    ASSERT_EQ(queue->FlushBackoffQCompleted(), 1u);
  }
  ASSERT_EQ(PopAndReject(*queue, "p", {PluginSet::Of({kTaints}), {}}),
            QueueLocation::kUnschedulable);
  std::optional<QueuedUnit> unit = queue->Find(Key("p"));
  ASSERT_TRUE(unit.has_value());
  EXPECT_EQ(unit->consecutive_errors_count, 0);
  EXPECT_EQ(unit->unschedulable_count, 1);
  EXPECT_EQ(unit->backoff_expiration - unit->timestamp, 1s);
  EXPECT_EQ(unit->unschedulable_plugins, PluginSet::Of({kTaints}));
}

// ---------------------------------------------------------------------------
// Queueing hints

TEST_F(SchedulingQueueTest, UnschedulablePodMovesOnlyOnEventItsRejectorsQueue) {
  auto queue = NewQueue();
  queue->Add(MakePod("fit"));
  queue->Add(MakePod("taint"));
  ASSERT_EQ(PopAndReject(*queue, "fit", {PluginSet::Of({kFit}), {}}),
            QueueLocation::kUnschedulable);
  ASSERT_EQ(PopAndReject(*queue, "taint", {PluginSet::Of({kTaints}), {}}),
            QueueLocation::kUnschedulable);

  // Nobody registered Namespace events; Node Delete is registered only by a
  // plugin that rejected neither pod.
  queue->MoveAllToActiveOrBackoffQueue(kNamespaceAdd, {}, {});
  queue->MoveAllToActiveOrBackoffQueue(kNodeDelete, MakeNode("gone"), {});
  // A node without the "ready" label: NodeResourcesFit's hint says QueueSkip.
  queue->MoveAllToActiveOrBackoffQueue(kNodeAdd, {}, MakeNode("n1"));
  EXPECT_EQ(queue->PendingUnits().unschedulable, 2u);

  queue->MoveAllToActiveOrBackoffQueue(kNodeAdd, {}, MakeNode("n2", {{"ready", "true"}}));
  EXPECT_EQ(LocationOf(*queue, "fit"), QueueLocation::kBackoff);  // still backing off (1 s)
  EXPECT_EQ(LocationOf(*queue, "taint"), QueueLocation::kUnschedulable);
  EXPECT_FALSE(queue->Pop().has_value());

  clock_.Advance(1s);
  EXPECT_EQ(queue->FlushBackoffQCompleted(), 1u);
  EXPECT_EQ(DrainNames(*queue), (std::vector<std::string>{"fit"}));
  EXPECT_EQ(LocationOf(*queue, "taint"), QueueLocation::kUnschedulable);
}

TEST_F(SchedulingQueueTest, EventAfterBackoffExpiredGoesStraightToActive) {
  auto queue = NewQueue();
  queue->Add(MakePod("p"));
  ASSERT_EQ(PopAndReject(*queue, "p", {PluginSet::Of({kTaints}), {}}),
            QueueLocation::kUnschedulable);
  clock_.Advance(2s);
  queue->MoveAllToActiveOrBackoffQueue(kNodeTaint, {}, MakeNode("n"));
  EXPECT_EQ(LocationOf(*queue, "p"), QueueLocation::kActive);
}

TEST_F(SchedulingQueueTest, PendingPluginHintQueuesImmediatelyDespiteBackoff) {
  auto queue = NewQueue();
  queue->Add(MakePod("member"));
  ASSERT_EQ(PopAndReject(*queue, "member", {{}, PluginSet::Of({kGangWait})}),
            QueueLocation::kUnschedulable);
  queue->MoveAllToActiveOrBackoffQueue(kPodGroupAdd, {}, {});
  EXPECT_EQ(LocationOf(*queue, "member"), QueueLocation::kActive);
}

TEST_F(SchedulingQueueTest, ThrowingHintCountsAsQueue) {
  auto queue = NewQueue();
  queue->Add(MakePod("p"));
  ASSERT_EQ(PopAndReject(*queue, "p", {PluginSet::Of({kThrowing}), {}}),
            QueueLocation::kUnschedulable);
  queue->MoveAllToActiveOrBackoffQueue(kNodeDelete, MakeNode("n"), {});
  EXPECT_EQ(LocationOf(*queue, "p"), QueueLocation::kBackoff);
}

TEST_F(SchedulingQueueTest, UnschedulableLeftoversFlushAfterMaxDuration) {
  auto queue = NewQueue();
  queue->Add(MakePod("old"));
  ASSERT_EQ(PopAndReject(*queue, "old", {PluginSet::Of({kTaints}), {}}),
            QueueLocation::kUnschedulable);
  clock_.Advance(4min);
  queue->Add(MakePod("young"));
  ASSERT_EQ(PopAndReject(*queue, "young", {PluginSet::Of({kTaints}), {}}),
            QueueLocation::kUnschedulable);

  clock_.Advance(1min);  // "old" has waited exactly 5 min: not longer than the limit
  EXPECT_EQ(queue->FlushUnschedulablePodsLeftover(), 0u);
  clock_.Advance(1ns);
  EXPECT_EQ(queue->FlushUnschedulablePodsLeftover(), 1u);
  EXPECT_EQ(LocationOf(*queue, "old"), QueueLocation::kActive);  // its 1 s backoff is long over
  EXPECT_EQ(LocationOf(*queue, "young"), QueueLocation::kUnschedulable);
}

TEST_F(SchedulingQueueTest, LeftoverFlushRespectsRunningBackoff) {
  QueueOptions options;
  options.pod_max_in_unschedulable_pods = 1s;
  options.pod_initial_backoff = 8s;
  options.pod_max_backoff = 8s;
  auto queue = NewQueue(options);
  queue->Add(MakePod("p"));
  ASSERT_EQ(PopAndReject(*queue, "p", {PluginSet::Of({kTaints}), {}}),
            QueueLocation::kUnschedulable);
  clock_.Advance(2s);
  EXPECT_EQ(queue->FlushUnschedulablePodsLeftover(), 1u);
  EXPECT_EQ(LocationOf(*queue, "p"), QueueLocation::kBackoff);
}

TEST_F(SchedulingQueueTest, UnschedulablePodUpdateMovesOnlyWhenHintCares) {
  auto queue = NewQueue();
  auto pod = MakePod("p", 0, {{"app", "web"}});
  queue->Add(pod);
  ASSERT_EQ(PopAndReject(*queue, "p", {PluginSet::Of({kPodLabels}), {}}),
            QueueLocation::kUnschedulable);

  auto tolerating = Edited(pod, [](PodInfo& p) {
    p.tolerations.push_back(Toleration{"k", TolerationOperator::kExists, "", std::nullopt});
  });
  EXPECT_EQ(queue->Update(pod, tolerating), QueueLocation::kUnschedulable);
  // The record holds the newest version even when it stays put.
  EXPECT_EQ(queue->Find(Key("p"))->pod().tolerations.size(), 1u);

  auto relabelled = Edited(tolerating, [](PodInfo& p) { p.labels["app"] = "db"; });
  EXPECT_EQ(queue->Update(tolerating, relabelled), QueueLocation::kBackoff);
  clock_.Advance(1s);
  ASSERT_EQ(queue->FlushBackoffQCompleted(), 1u);
  std::optional<PoppedUnit> popped = queue->Pop();
  ASSERT_TRUE(popped.has_value());
  EXPECT_EQ(popped->pod().labels.at("app"), "db");
}

TEST_F(SchedulingQueueTest, AssignedPodAddedMovesOnlyPodsItCanHelp) {
  auto queue = NewQueue();
  auto with_affinity = NewPod({"with-affinity"});
  PodAffinityTerm term;
  term.label_selector = *LabelSelector::Parse("app=db");
  term.namespaces = {std::string(testing::kNamespace)};
  term.topology_key = "kubernetes.io/hostname";
  with_affinity->required_affinity.push_back(term);
  queue->Add(with_affinity);
  queue->Add(MakePod("no-affinity"));
  queue->Add(MakePod("spread-same-ns"));
  queue->Add(NewPod({"spread-other-ns", 0, {}, "other"}));
  ASSERT_EQ(PopAndReject(*queue, "with-affinity", {PluginSet::Of({kAffinity}), {}}),
            QueueLocation::kUnschedulable);
  ASSERT_EQ(PopAndReject(*queue, "no-affinity", {PluginSet::Of({kAffinity}), {}}),
            QueueLocation::kUnschedulable);
  ASSERT_EQ(PopAndReject(*queue, "spread-same-ns", {PluginSet::Of({kSpread}), {}}),
            QueueLocation::kUnschedulable);
  ASSERT_EQ(PopAndReject(*queue, "spread-other-ns", {PluginSet::Of({kSpread}), {}}),
            QueueLocation::kUnschedulable);

  auto web = MakePod("web", 0, {{"app", "web"}});
  queue->AssignedPodAdded(web);
  EXPECT_EQ(queue->PendingUnits().unschedulable, 3u);  // only the spread pod in "default" moved
  EXPECT_EQ(LocationOf(*queue, "spread-same-ns"), QueueLocation::kBackoff);

  queue->AssignedPodAdded(MakePod("db", 0, {{"app", "db"}}));
  EXPECT_EQ(LocationOf(*queue, "with-affinity"), QueueLocation::kBackoff);
  EXPECT_EQ(LocationOf(*queue, "no-affinity"), QueueLocation::kUnschedulable);
  EXPECT_EQ(queue->Find(UnitKey::ForPod("other", "spread-other-ns"))->location,
            QueueLocation::kUnschedulable);
}

TEST_F(SchedulingQueueTest, AssignedPodDeletedWakesPodsOfInterestedPlugins) {
  auto queue = NewQueue();
  queue->Add(MakePod("spread"));
  queue->Add(MakePod("fit"));
  ASSERT_EQ(PopAndReject(*queue, "spread", {PluginSet::Of({kSpread}), {}}),
            QueueLocation::kUnschedulable);
  ASSERT_EQ(PopAndReject(*queue, "fit", {PluginSet::Of({kFit}), {}}),
            QueueLocation::kUnschedulable);
  queue->AssignedPodDeleted(MakePod("victim"));
  EXPECT_EQ(LocationOf(*queue, "spread"), QueueLocation::kBackoff);
  EXPECT_EQ(LocationOf(*queue, "fit"), QueueLocation::kUnschedulable);
}

TEST_F(SchedulingQueueTest, ActivateSkipsBackoffAndUnschedulable) {
  auto queue = NewQueue();
  queue->Add(MakePod("a"));
  queue->Add(MakePod("b"));
  ASSERT_EQ(PopAndReject(*queue, "a", {PluginSet::Of({kTaints}), {}}),
            QueueLocation::kUnschedulable);
  std::optional<PoppedUnit> b = queue->Pop();
  ASSERT_TRUE(b.has_value());
  ASSERT_EQ(queue->AddErroredIfNotPresent(b->key(), b->cycle), QueueLocation::kBackoff);
  const std::vector<UnitKey> keys = {Key("a"), Key("b"), Key("unknown")};
  queue->Activate(keys);
  EXPECT_EQ(queue->PendingUnits().active, 2u);
  EXPECT_EQ(queue->PendingUnits().backoff + queue->PendingUnits().unschedulable, 0u);
}

TEST_F(SchedulingQueueTest, ActivateOfInFlightPodIsReplayed) {
  auto queue = NewQueue();
  queue->Add(MakePod("a"));
  queue->Add(MakePod("b"));
  std::optional<PoppedUnit> a = queue->Pop();
  std::optional<PoppedUnit> b = queue->Pop();
  ASSERT_TRUE(a.has_value() && b.has_value());
  const std::vector<UnitKey> keys = {Key("a")};
  queue->Activate(keys);
  // The ForceActivate targets "a" only.
  EXPECT_EQ(queue->AddUnschedulableIfNotPresent(b->key(), b->cycle, {PluginSet::Of({kTaints}), {}}),
            QueueLocation::kUnschedulable);
  EXPECT_EQ(queue->AddUnschedulableIfNotPresent(a->key(), a->cycle, {PluginSet::Of({kTaints}), {}}),
            QueueLocation::kBackoff);
}

// ---------------------------------------------------------------------------
// In-flight events

TEST_F(SchedulingQueueTest, EventDuringSchedulingIsReplayedOnRejection) {
  auto queue = NewQueue();
  queue->Add(MakePod("p"));
  std::optional<PoppedUnit> popped = queue->Pop();
  ASSERT_TRUE(popped.has_value());
  queue->MoveAllToActiveOrBackoffQueue(kNodeAdd, {}, MakeNode("n", {{"ready", "true"}}));
  EXPECT_EQ(queue->AddUnschedulableIfNotPresent(popped->key(), popped->cycle,
                                                {PluginSet::Of({kFit}), {}}),
            QueueLocation::kBackoff);
}

TEST_F(SchedulingQueueTest, EventBeforePopOrIrrelevantIsNotReplayed) {
  auto queue = NewQueue();
  queue->Add(MakePod("p"));
  queue->Add(MakePod("q"));
  // Logged for nobody: nothing is in flight yet.
  queue->MoveAllToActiveOrBackoffQueue(kNodeAdd, {}, MakeNode("n1", {{"ready", "true"}}));
  std::optional<PoppedUnit> p = queue->Pop();
  ASSERT_TRUE(p.has_value());
  // In flight, but skipped by the hint or of no interest to p's rejector.
  queue->MoveAllToActiveOrBackoffQueue(kNodeAdd, {}, MakeNode("n2"));
  queue->MoveAllToActiveOrBackoffQueue(kNodeTaint, {}, MakeNode("n3"));
  EXPECT_EQ(queue->AddUnschedulableIfNotPresent(p->key(), p->cycle, {PluginSet::Of({kFit}), {}}),
            QueueLocation::kUnschedulable);
}

TEST_F(SchedulingQueueTest, EachInFlightPodSeesOnlyEventsSinceItsOwnPop) {
  auto queue = NewQueue();
  queue->Add(MakePod("a", 2));
  queue->Add(MakePod("b", 1));
  std::optional<PoppedUnit> a = queue->Pop();
  ASSERT_TRUE(a.has_value());
  queue->MoveAllToActiveOrBackoffQueue(kNodeTaint, {}, MakeNode("n"));
  std::optional<PoppedUnit> b = queue->Pop();
  ASSERT_TRUE(b.has_value());
  ASSERT_EQ(b->pod().name, "b");
  EXPECT_EQ(queue->AddUnschedulableIfNotPresent(b->key(), b->cycle, {PluginSet::Of({kTaints}), {}}),
            QueueLocation::kUnschedulable);
  EXPECT_EQ(queue->AddUnschedulableIfNotPresent(a->key(), a->cycle, {PluginSet::Of({kTaints}), {}}),
            QueueLocation::kBackoff);
}

TEST_F(SchedulingQueueTest, UpdateOfInFlightPodIsReplayedWithNewVersion) {
  auto queue = NewQueue();
  auto pod = MakePod("p", 0, {{"app", "web"}});
  queue->Add(pod);
  std::optional<PoppedUnit> popped = queue->Pop();
  ASSERT_TRUE(popped.has_value());
  auto relabelled = Edited(pod, [](PodInfo& p) { p.labels["app"] = "db"; });
  EXPECT_EQ(queue->Update(pod, relabelled), QueueLocation::kInFlight);
  EXPECT_EQ(queue->AddUnschedulableIfNotPresent(popped->key(), popped->cycle,
                                                {PluginSet::Of({kPodLabels}), {}}),
            QueueLocation::kBackoff);
  EXPECT_EQ(queue->Find(Key("p"))->pod().labels.at("app"), "db");
}

TEST_F(SchedulingQueueTest, StaleOrUnknownHandBackIsIgnored) {
  auto queue = NewQueue();
  queue->Add(MakePod("p"));
  std::optional<PoppedUnit> popped = queue->Pop();
  ASSERT_TRUE(popped.has_value());
  const UnitKey key = popped->key();
  EXPECT_EQ(queue->AddUnschedulableIfNotPresent(key, popped->cycle + 1, {}), QueueLocation::kNone);
  EXPECT_EQ(queue->AddUnschedulableIfNotPresent(Key("nope"), popped->cycle, {}),
            QueueLocation::kNone);
  EXPECT_EQ(queue->PendingUnits().in_flight, 1u);
  queue->Done(key);
  EXPECT_FALSE(queue->Find(key).has_value());
  EXPECT_EQ(queue->AddUnschedulableIfNotPresent(key, popped->cycle, {}), QueueLocation::kNone);
  queue->Done(key);  // no-op
  EXPECT_EQ(queue->PendingUnits(), PendingCounts{});
}

// ---------------------------------------------------------------------------
// PreEnqueue gates

TEST_F(SchedulingQueueTest, GatedPodWaitsUntilUpdateLiftsTheGate) {
  auto queue = NewQueue();
  auto gated = MakePod("gated", 100, {{"gated", "yes"}});
  EXPECT_EQ(queue->Add(gated), QueueLocation::kGated);
  queue->Add(MakePod("free", 0));
  PendingCounts pending = queue->PendingUnits();
  EXPECT_EQ(pending.gated, 1u);
  EXPECT_EQ(pending.active, 1u);
  EXPECT_EQ(queue->Find(Key("gated"))->gating_plugin, std::optional<PluginId>(kGates));
  EXPECT_EQ(DrainNames(*queue), (std::vector<std::string>{"free"}));

  // Events and flushes do not touch it; an update that keeps the gate neither.
  queue->MoveAllToActiveOrBackoffQueue(kNodeAdd, {}, MakeNode("n", {{"ready", "true"}}));
  queue->MoveAllToActiveOrBackoffQueue(ClusterEvent{}, {}, {});  // wildcard
  clock_.Advance(1h);
  EXPECT_EQ(queue->FlushUnschedulablePodsLeftover(), 0u);
  auto still_gated = Edited(gated, [](PodInfo& p) { p.labels["other"] = "x"; });
  EXPECT_EQ(queue->Update(gated, still_gated), QueueLocation::kGated);
  EXPECT_FALSE(queue->Pop().has_value());

  auto ungated = Edited(still_gated, [](PodInfo& p) { p.labels.erase("gated"); });
  EXPECT_EQ(queue->Update(still_gated, ungated), QueueLocation::kActive);
  EXPECT_EQ(queue->PendingUnits().gated, 0u);
  std::optional<PoppedUnit> popped = queue->Pop();
  ASSERT_TRUE(popped.has_value());
  EXPECT_EQ(popped->pod().name, "gated");
  EXPECT_EQ(popped->attempts, 1);
}

TEST_F(SchedulingQueueTest, GatedPodReadmittedByItsGatingPluginsEvent) {
  auto queue = NewQueue();
  EXPECT_EQ(queue->Add(MakePod("member", 0, {{"group", "g1"}})), QueueLocation::kGated);
  EXPECT_EQ(queue->Find(Key("member"))->gating_plugin, std::optional<PluginId>(kGroupGate));
  queue->MoveAllToActiveOrBackoffQueue(kPodGroupAdd, {}, {});  // gate still closed
  EXPECT_EQ(LocationOf(*queue, "member"), QueueLocation::kGated);
  group_exists_ = true;
  queue->MoveAllToActiveOrBackoffQueue(kNodeTaint, {}, MakeNode("n"));  // not the gate's event
  EXPECT_EQ(LocationOf(*queue, "member"), QueueLocation::kGated);
  queue->MoveAllToActiveOrBackoffQueue(kPodGroupAdd, {}, {});
  EXPECT_EQ(LocationOf(*queue, "member"), QueueLocation::kActive);
}

// ---------------------------------------------------------------------------
// Delete and re-add

TEST_F(SchedulingQueueTest, DeleteRemovesFromEverySubQueue) {
  auto queue = NewQueue();
  auto active = MakePod("active");
  auto backoff = MakePod("backoff", 5);
  auto unschedulable = MakePod("unschedulable", 4);
  auto gated = MakePod("gated", 0, {{"gated", "y"}});
  auto in_flight = MakePod("in-flight", 3);
  for (const auto& pod : {backoff, unschedulable, in_flight}) queue->Add(pod);
  std::optional<PoppedUnit> b = queue->Pop();
  ASSERT_TRUE(b.has_value());
  ASSERT_EQ(queue->AddErroredIfNotPresent(b->key(), b->cycle), QueueLocation::kBackoff);
  ASSERT_EQ(PopAndReject(*queue, "unschedulable", {PluginSet::Of({kTaints}), {}}),
            QueueLocation::kUnschedulable);
  std::optional<PoppedUnit> f = queue->Pop();
  ASSERT_TRUE(f.has_value());
  queue->Add(active);
  queue->Add(gated);
  queue->AddNominatedPod(active, "node-1");
  EXPECT_EQ(queue->PendingUnits(), (PendingCounts{1, 1, 1, 1, 1}));

  for (const auto& pod : {active, backoff, unschedulable, gated, in_flight}) {
    EXPECT_TRUE(queue->Delete(*pod)) << pod->name;
  }
  EXPECT_FALSE(queue->Delete(*active));
  EXPECT_EQ(queue->PendingUnits(), (PendingCounts{0, 0, 0, 0, 1}));  // still being scheduled
  EXPECT_TRUE(queue->NominatedPodsForNode("node-1").empty());
  for (auto location : {QueueLocation::kActive, QueueLocation::kBackoff,
                        QueueLocation::kUnschedulable, QueueLocation::kGated}) {
    EXPECT_TRUE(queue->List(location).empty()) << QueueLocationName(location);
  }
  // The deleted in-flight pod is dropped when its attempt is handed back.
  EXPECT_EQ(queue->AddUnschedulableIfNotPresent(f->key(), f->cycle, {PluginSet::Of({kTaints}), {}}),
            QueueLocation::kNone);
  EXPECT_EQ(queue->PendingUnits(), PendingCounts{});
  EXPECT_FALSE(queue->Find(Key("in-flight")).has_value());
  queue->MoveAllToActiveOrBackoffQueue(ClusterEvent{}, {}, {});
  clock_.Advance(1h);
  queue->FlushBackoffQCompleted();
  EXPECT_FALSE(queue->Pop().has_value());
}

TEST_F(SchedulingQueueTest, PodRecreatedWhileInFlightComesBackFresh) {
  auto queue = NewQueue();
  auto old_pod = MakePod("p");
  queue->Add(old_pod);
  std::optional<PoppedUnit> popped = queue->Pop();
  ASSERT_TRUE(popped.has_value());
  ASSERT_TRUE(queue->Delete(*old_pod));
  auto new_pod = Edited(old_pod, [](PodInfo& p) { p.uid = "uid-recreated"; });
  EXPECT_EQ(queue->Add(new_pod), QueueLocation::kInFlight);
  const UnitKey key = popped->key();
  queue->Done(key);  // the old incarnation got bound; the new one must still be scheduled
  std::optional<QueuedUnit> unit = queue->Find(key);
  ASSERT_TRUE(unit.has_value());
  EXPECT_EQ(unit->location, QueueLocation::kActive);
  EXPECT_EQ(unit->attempts, 0);
  EXPECT_EQ(unit->pod().uid, "uid-recreated");
}

TEST_F(SchedulingQueueTest, DoneAfterSuccessRemovesTheUnit) {
  auto queue = NewQueue();
  queue->Add(MakePod("p"));
  std::optional<PoppedUnit> popped = queue->Pop();
  ASSERT_TRUE(popped.has_value());
  EXPECT_EQ(queue->PendingUnits().in_flight, 1u);
  EXPECT_EQ(queue->List(QueueLocation::kInFlight), std::vector<UnitKey>{Key("p")});
  queue->Done(popped->key());
  EXPECT_EQ(queue->PendingUnits(), PendingCounts{});
  EXPECT_FALSE(queue->Find(Key("p")).has_value());
}

// ---------------------------------------------------------------------------
// Nominator

TEST_F(SchedulingQueueTest, NominatorTracksNominationsAcrossUpdates) {
  auto queue = NewQueue();
  auto preemptor = MakePod("preemptor", 100);
  queue->Add(preemptor);
  EXPECT_TRUE(queue->NominatedPodsForNode("node-a").empty());

  queue->AddNominatedPod(preemptor, "node-a");
  ASSERT_EQ(queue->NominatedPodsForNode("node-a").size(), 1u);
  EXPECT_EQ(queue->NominatedPodsForNode("node-a")[0]->name, "preemptor");
  queue->AddNominatedPod(preemptor, "node-b");  // override moves it
  EXPECT_TRUE(queue->NominatedPodsForNode("node-a").empty());
  EXPECT_EQ(queue->NominatedNodeOf(preemptor->uid), std::optional<std::string>("node-b"));

  // An update racing the nomination's API write keeps the in-memory node.
  auto updated = Edited(preemptor, [](PodInfo& p) { p.labels["x"] = "y"; });
  queue->Update(preemptor, updated);
  ASSERT_EQ(queue->NominatedPodsForNode("node-b").size(), 1u);
  EXPECT_EQ(queue->NominatedPodsForNode("node-b")[0]->labels.count("x"), 1u);

  // status.nominatedNodeName written by the API wins; clearing it clears the nomination.
  auto api_nominated = Edited(updated, [](PodInfo& p) { p.nominated_node_name = "node-c"; });
  queue->Update(updated, api_nominated);
  EXPECT_EQ(queue->NominatedNodeOf(preemptor->uid), std::optional<std::string>("node-c"));
  auto api_cleared = Edited(api_nominated, [](PodInfo& p) { p.nominated_node_name.clear(); });
  queue->Update(api_nominated, api_cleared);
  EXPECT_FALSE(queue->NominatedNodeOf(preemptor->uid).has_value());

  queue->AddNominatedPod(api_cleared, "node-d");
  queue->AddNominatedPod(api_cleared, "");  // explicit clear
  EXPECT_TRUE(queue->NominatedPodsForNode("node-d").empty());

  // A pod added with status.nominatedNodeName is nominated; a bound pod never is.
  queue->Add(Edited(MakePod("nominated"), [](PodInfo& p) { p.nominated_node_name = "node-e"; }));
  EXPECT_EQ(queue->NominatedPodsForNode("node-e").size(), 1u);
  auto bound = Edited(MakePod("bound"), [](PodInfo& p) { p.node_name = "node-f"; });
  queue->AddNominatedPod(bound, "node-f");
  EXPECT_TRUE(queue->NominatedPodsForNode("node-f").empty());
  queue->DeleteNominatedPodIfExists(*queue->NominatedPodsForNode("node-e")[0]);
  EXPECT_TRUE(queue->NominatedPodsForNode("node-e").empty());
}

// ---------------------------------------------------------------------------
// Profiles

TEST_F(SchedulingQueueTest, ProfilesAreChosenBySchedulerName) {
  QueueProfile strict;
  strict.scheduler_name = "strict";
  strict.pre_enqueue.push_back({0, "DenyAll", [](const PodInfo&) { return GateDecision::kGate; }});
  QueueProfile open;  // "" matches the rest
  std::vector<QueueProfile> profiles;
  profiles.push_back(std::move(strict));
  profiles.push_back(std::move(open));
  SchedulingQueue queue(clock_, {}, std::move(profiles));
  EXPECT_EQ(queue.Add(Edited(MakePod("s"), [](PodInfo& p) { p.scheduler_name = "strict"; })),
            QueueLocation::kGated);
  EXPECT_EQ(queue.Add(Edited(MakePod("o"), [](PodInfo& p) { p.scheduler_name = "other"; })),
            QueueLocation::kActive);
}

}  // namespace
}  // namespace copse::queue
