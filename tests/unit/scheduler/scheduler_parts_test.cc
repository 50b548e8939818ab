// The scheduler runtime's pure parts: the cache (assume, confirm, forget,
// expiry with a fake clock, pods before their node), conversions from API
// objects, the gang tracker's barrier decisions, and PlaceGang's
// all-or-nothing placement and pod-class reuse on an in-memory snapshot.

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "core/clock.h"
#include "kube/pod.h"
#include "plugins/defaults/defaults.h"
#include "plugins/framework/framework.h"
#include "scheduler/cache.h"
#include "scheduler/convert.h"
#include "scheduler/gangs.h"
#include "scheduler/placement.h"
#include "tests/unit/plugins/test_util.h"

namespace copse::scheduler {
namespace {

using plugins::testing::Cluster;
using plugins::testing::FixedRandom;
using plugins::testing::PodBuilder;

std::shared_ptr<const PodInfo> OnNode(std::shared_ptr<PodInfo> pod, const std::string& node) {
  pod->node_name = node;
  return pod;
}

TEST(Cache, AssumedPodCountsUntilForgotten) {
  FakeClock clock;
  Cache cache(clock, std::chrono::seconds(30));
  ResourceNames names;
  cache.UpsertNode("n1", [&](NodeInfo& n) {
    n.SetAllocatable(plugins::testing::MakeResources(names, {{"cpu", "4"}, {"pods", "10"}}));
  });
  auto pod = OnNode(PodBuilder("p").Requests(names, {{"cpu", "1"}}).Obj(), "n1");
  ASSERT_TRUE(cache.AssumePod(pod).ok());
  EXPECT_FALSE(cache.AssumePod(pod).ok()) << "the same uid twice";
  EXPECT_TRUE(cache.IsAssumed(pod->uid));
  EXPECT_EQ(cache.GetNode("n1")->requested().Get(kResourceIdCpu), 1000);
  cache.ForgetPod(pod->uid);
  EXPECT_FALSE(cache.IsAssumed(pod->uid));
  EXPECT_EQ(cache.GetNode("n1")->requested().Get(kResourceIdCpu), 0);
}

TEST(Cache, CountsPodsWithAffinityThroughAssumeConfirmAndRemove) {
  FakeClock clock;
  Cache cache(clock, std::chrono::seconds(30));
  ResourceNames names;
  cache.UpsertNode("n1", [&](NodeInfo& n) {
    n.SetAllocatable(plugins::testing::MakeResources(names, {{"cpu", "4"}, {"pods", "10"}}));
  });
  auto plain = OnNode(PodBuilder("plain").Obj(), "n1");
  auto anti =
      OnNode(PodBuilder("anti")
                 .PodAntiAffinity(plugins::testing::AffinityTerm("app=x", "kubernetes.io/hostname"))
                 .Obj(),
             "n1");
  ASSERT_TRUE(anti->has_pod_affinity);
  ASSERT_TRUE(cache.AssumePod(plain).ok());
  EXPECT_EQ(cache.PodsWithAffinity(), 0u);
  ASSERT_TRUE(cache.AssumePod(anti).ok());
  EXPECT_EQ(cache.PodsWithAffinity(), 1u);
  cache.AddOrUpdatePod(anti);  // confirmed: still one
  EXPECT_EQ(cache.PodsWithAffinity(), 1u);
  cache.RemovePod(anti->uid);
  EXPECT_EQ(cache.PodsWithAffinity(), 0u);
  cache.ForgetPod(plain->uid);
  EXPECT_EQ(cache.PodsWithAffinity(), 0u);
}

TEST(Cache, ConfirmedPodStaysAndExpiredAssumedPodGoes) {
  FakeClock clock;
  Cache cache(clock, std::chrono::seconds(30));
  ResourceNames names;
  cache.UpsertNode("n1", [&](NodeInfo& n) {
    n.SetAllocatable(plugins::testing::MakeResources(names, {{"cpu", "8"}, {"pods", "10"}}));
  });
  auto confirmed = OnNode(PodBuilder("a").Requests(names, {{"cpu", "1"}}).Obj(), "n1");
  auto lost = OnNode(PodBuilder("b").Requests(names, {{"cpu", "2"}}).Obj(), "n1");
  ASSERT_TRUE(cache.AssumePod(confirmed).ok());
  ASSERT_TRUE(cache.AssumePod(lost).ok());
  cache.FinishBinding(confirmed->uid);
  cache.FinishBinding(lost->uid);
  cache.AddOrUpdatePod(confirmed);  // the informer saw it bound
  clock.Advance(std::chrono::seconds(29));
  EXPECT_TRUE(cache.CleanupExpiredAssumedPods().empty());
  clock.Advance(std::chrono::seconds(2));
  auto expired = cache.CleanupExpiredAssumedPods();
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0]->uid, lost->uid);
  EXPECT_EQ(cache.GetNode("n1")->requested().Get(kResourceIdCpu), 1000);
  EXPECT_EQ(cache.stats().expired_assumed, 1u);
}

// The loop sleeps until this due (it has no periodic wake-up), so it must
// name the first finished bind's deadline, and nothing while no bind is
// finished.
TEST(Cache, NextAssumedExpiryIsTheFirstFinishedBindsDeadline) {
  FakeClock clock;
  Cache cache(clock, std::chrono::seconds(30));
  ResourceNames names;
  cache.UpsertNode("n1", [&](NodeInfo& n) {
    n.SetAllocatable(plugins::testing::MakeResources(names, {{"cpu", "8"}, {"pods", "10"}}));
  });
  auto a = OnNode(PodBuilder("a").Requests(names, {{"cpu", "1"}}).Obj(), "n1");
  auto b = OnNode(PodBuilder("b").Requests(names, {{"cpu", "1"}}).Obj(), "n1");
  ASSERT_TRUE(cache.AssumePod(a).ok());
  ASSERT_TRUE(cache.AssumePod(b).ok());
  EXPECT_FALSE(cache.NextAssumedExpiry().has_value()) << "binds in flight never expire";
  clock.Advance(std::chrono::seconds(5));
  cache.FinishBinding(a->uid);
  const Clock::TimePoint a_due = clock.Now() + std::chrono::seconds(30);
  clock.Advance(std::chrono::seconds(5));
  cache.FinishBinding(b->uid);
  ASSERT_TRUE(cache.NextAssumedExpiry().has_value());
  EXPECT_EQ(*cache.NextAssumedExpiry(), a_due);
  clock.Advance(std::chrono::seconds(25));
  ASSERT_EQ(cache.CleanupExpiredAssumedPods().size(), 1u);
  ASSERT_TRUE(cache.NextAssumedExpiry().has_value());
  EXPECT_EQ(*cache.NextAssumedExpiry(), a_due + std::chrono::seconds(5));
  clock.Advance(std::chrono::seconds(5));
  ASSERT_EQ(cache.CleanupExpiredAssumedPods().size(), 1u);
  EXPECT_FALSE(cache.NextAssumedExpiry().has_value());
}

TEST(Cache, PodsBeforeTheirNodeAndNodeRemovalKeepRowsStable) {
  FakeClock clock;
  Cache cache(clock, std::chrono::seconds(30));
  ResourceNames names;
  auto early = OnNode(PodBuilder("early").Requests(names, {{"cpu", "1"}}).Obj(), "late-node");
  cache.AddOrUpdatePod(early);
  for (const char* name : {"a", "b", "late-node"}) {
    cache.UpsertNode(name, [&](NodeInfo& n) {
      n.SetAllocatable(plugins::testing::MakeResources(names, {{"cpu", "4"}, {"pods", "10"}}));
    });
  }
  EXPECT_EQ(cache.GetNode("late-node")->requested().Get(kResourceIdCpu), 1000);
  Snapshot snapshot(names);
  EXPECT_EQ(cache.UpdateSnapshot(snapshot), 3u);
  EXPECT_EQ(cache.UpdateSnapshot(snapshot), 0u) << "nothing changed";
  cache.RemoveNode("a");  // the last row moves into a's place
  EXPECT_EQ(cache.UpdateSnapshot(snapshot), 1u);
  ASSERT_EQ(snapshot.num_nodes(), 2u);
  EXPECT_EQ(snapshot.node_name(0), "late-node");
  EXPECT_EQ(snapshot.requested(kResourceIdCpu, 0), 1000);
}

// The snapshot the cache synced last is brought up to date by re-checking
// only the rows touched since (and rows the cycle edited itself); it must
// always equal a snapshot synced from scratch.
TEST(Cache, IncrementalSnapshotMatchesAFullSync) {
  // Every change goes to both caches: `cache` syncs one snapshot over and
  // over, `mirror` syncs a new snapshot (in full) each time.
  FakeClock clock;
  Cache cache(clock, std::chrono::seconds(30));
  Cache mirror(clock, std::chrono::seconds(30));
  ResourceNames names;
  std::mt19937 rng(7);
  auto add_node = [&](const std::string& name) {
    for (Cache* c : {&cache, &mirror}) {
      c->UpsertNode(name, [&](NodeInfo& n) {
        n.SetAllocatable(plugins::testing::MakeResources(names, {{"cpu", "64"}, {"pods", "200"}}));
      });
    }
  };
  for (int i = 0; i < 20; ++i) add_node("n" + std::to_string(i));
  Snapshot incremental(names);
  cache.UpdateSnapshot(incremental);
  std::vector<std::shared_ptr<const PodInfo>> pods;
  int next_node = 20;
  for (int step = 0; step < 400; ++step) {
    const int op = static_cast<int>(rng() % 10);
    const std::string node = "n" + std::to_string(rng() % static_cast<unsigned>(next_node));
    if (op < 5) {
      auto pod = OnNode(
          PodBuilder("p" + std::to_string(step)).Requests(names, {{"cpu", "1"}}).Obj(), node);
      for (Cache* c : {&cache, &mirror}) {
        if (op < 3) {
          ASSERT_TRUE(c->AssumePod(pod).ok());
        } else {
          c->AddOrUpdatePod(pod);
        }
      }
      pods.push_back(pod);
    } else if (op < 7 && !pods.empty()) {
      const size_t i = rng() % pods.size();
      for (Cache* c : {&cache, &mirror}) c->RemovePod(pods[i]->uid);
      pods.erase(pods.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (op == 7) {
      // A cycle's own edit of the synced snapshot (e.g. a nominated pod).
      auto row = incremental.FindNode(node);
      if (row)
        incremental.AddPod(
            *row,
            OnNode(
                PodBuilder("scratch" + std::to_string(step)).Requests(names, {{"cpu", "2"}}).Obj(),
                node));
    } else if (op == 8) {
      if (rng() % 4 == 0) {
        for (Cache* c : {&cache, &mirror}) c->RemoveNode(node);
      } else {
        add_node("n" + std::to_string(next_node++));
      }
    }
    if (rng() % 3 == 0) continue;  // several changes between syncs
    cache.UpdateSnapshot(incremental);
    Snapshot full(names);
    mirror.UpdateSnapshot(full);
    ASSERT_EQ(incremental.num_nodes(), full.num_nodes()) << "step " << step;
    for (NodeIndex n = 0; n < full.num_nodes(); ++n) {
      ASSERT_EQ(incremental.node_name(n), full.node_name(n)) << "step " << step;
      ASSERT_EQ(incremental.requested(kResourceIdCpu, n), full.requested(kResourceIdCpu, n))
          << "step " << step << " node " << full.node_name(n);
      ASSERT_EQ(incremental.requested(kResourceIdPods, n), full.requested(kResourceIdPods, n));
    }
  }
}

TEST(Convert, PodFieldsAndErrorsNameTheField) {
  auto pod = kube::Pod::Decode(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns","uid":"u1","labels":{"scheduling.copse.dev/pod-group":"g","scheduling.copse.dev/subgroup":"leaf"}},
    "spec":{"schedulerName":"copse-scheduler","priority":7,"preemptionPolicy":"Never","schedulingGates":[{"name":"x"}],
    "containers":[{"name":"c","resources":{"requests":{"cpu":"500m","nvidia.com/gpu":"2"}},"ports":[{"containerPort":80,"hostPort":8080}]}],
    "tolerations":[{"key":"k","operator":"Exists","effect":"NoSchedule"}]},
    "status":{"startTime":"2026-11-22T01:02:03.5Z"}})");
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  ResourceNames names;
  auto info = ToPodInfo(*pod, names);
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_EQ((*info)->priority, 7);
  EXPECT_EQ((*info)->preemption_policy, PreemptionPolicy::kNever);
  EXPECT_EQ((*info)->requests.Get(kResourceIdCpu), 500);
  EXPECT_EQ((*info)->requests.Get(*names.Find("nvidia.com/gpu")), 2);
  ASSERT_EQ((*info)->host_ports.size(), 1u);
  EXPECT_EQ((*info)->host_ports[0].port, 8080);
  EXPECT_EQ((*info)->scheduling_gates, std::vector<std::string>{"x"});
  EXPECT_EQ((*info)->group_kind, PodInfo::GroupKind::kCopsePodGroup);
  EXPECT_EQ((*info)->pod_group, "g");
  EXPECT_EQ((*info)->sub_group, "leaf");
  ASSERT_TRUE((*info)->start_time.has_value());
  EXPECT_EQ(
      std::chrono::duration_cast<std::chrono::milliseconds>((*info)->start_time->time_since_epoch())
              .count() %
          1000,
      500);

  auto bad = kube::Pod::Decode(
      R"({"metadata":{"name":"p","namespace":"ns"},"spec":{"tolerations":[{"key":"k","operator":"Maybe"}],"containers":[]}})");
  ASSERT_TRUE(bad.ok());
  auto rejected = ToPodInfo(*bad, names);
  ASSERT_FALSE(rejected.ok());
  EXPECT_EQ(rejected.error().message, "spec.tolerations[0].operator: Unsupported value: \"Maybe\"");
}

// spec.resourceClaims resolved as kube's resourceclaim.Name: a claim name
// as is, a template's claim from status.resourceClaimStatuses (absent: not
// created yet; without a name: not needed).
TEST(Convert, ResourceClaimsResolveToTheirClaims) {
  auto pod = kube::Pod::Decode(R"({"metadata":{"name":"p","namespace":"ns","uid":"u"},
    "spec":{"containers":[],"resourceClaims":[
      {"name":"a","resourceClaimName":"shared"},
      {"name":"b","resourceClaimTemplateName":"t"},
      {"name":"c","resourceClaimTemplateName":"t"},
      {"name":"d","resourceClaimTemplateName":"t"},
      {"name":"e"}]},
    "status":{"resourceClaimStatuses":[{"name":"b","resourceClaimName":"p-b-x7k2"},{"name":"d"}]}})");
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  ResourceNames names;
  auto info = ToPodInfo(*pod, names);
  ASSERT_TRUE(info.ok()) << info.error().message;
  using State = PodClaimRef::State;
  const std::vector<PodClaimRef> want = {
      {"a", "shared", State::kResolved, false}, {"b", "p-b-x7k2", State::kResolved, true},
      {"c", "", State::kNotCreated, true},      {"d", "", State::kNotNeeded, true},
      {"e", "", State::kInvalid, false},
  };
  EXPECT_EQ((*info)->resource_claims, want);
  // The claims are part of the pod class: a pod with other claims is another class.
  auto other = kube::Pod::Decode(R"({"metadata":{"name":"q","namespace":"ns","uid":"v"},
    "spec":{"containers":[],"resourceClaims":[{"name":"a","resourceClaimName":"other"}]}})");
  ASSERT_TRUE(other.ok());
  auto plain = kube::Pod::Decode(
      R"({"metadata":{"name":"r","namespace":"ns","uid":"w"},"spec":{"containers":[]}})");
  ASSERT_TRUE(plain.ok());
  EXPECT_NE((*ToPodInfo(*other, names))->signature, (*ToPodInfo(*plain, names))->signature);
}

TEST(Convert, Rfc3339) {
  auto a = ParseRfc3339("2026-11-22T00:00:00Z");
  auto b = ParseRfc3339("2026-11-22T02:00:00+02:00");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*a, *b);
  EXPECT_FALSE(ParseRfc3339("yesterday").has_value());
}

GangSpec Gang(const std::string& name, int32_t min) {
  GangSpec spec;
  spec.namespace_ = "default";
  spec.name = name;
  spec.source = GangSource::kWorkloadPodGroup;
  spec.policy = GangPolicy::kGang;
  spec.min_member = min;
  return spec;
}

std::shared_ptr<PodInfo> Member(const std::string& name, const std::string& group) {
  auto pod = PodBuilder(name).Obj();
  pod->group_kind = PodInfo::GroupKind::kWorkloadPodGroup;
  pod->pod_group = group;
  return pod;
}

TEST(GangTracker, BarrierWaitsForTheObjectAndForMinCount) {
  GangTracker tracker;
  auto d = tracker.UpsertPending(Member("a", "g"));
  EXPECT_EQ(d.readiness, GangTracker::Readiness::kMissingSpec);
  EXPECT_EQ(d.message,
            "scheduling.k8s.io/v1alpha2 PodGroup \"default/g\" does not exist; the pod waits "
            "until it is created");
  d = tracker.SetSpec(PodInfo::GroupKind::kWorkloadPodGroup, Gang("g", 3));
  EXPECT_EQ(d.readiness, GangTracker::Readiness::kWaitingForMembers);
  EXPECT_NE(d.message.find("waiting for members: 3 pods required"), std::string::npos) << d.message;
  const std::string first_message = d.message;
  d = tracker.UpsertPending(Member("b", "g"));
  EXPECT_EQ(d.message, first_message)
      << "one more member does not change the message (one status write per pod)";
  auto c = Member("c", "g");
  d = tracker.UpsertPending(c);
  ASSERT_EQ(d.readiness, GangTracker::Readiness::kReady);
  EXPECT_EQ(d.members.size(), 3u);
  EXPECT_EQ(d.key, GroupUnitKey(PodInfo::GroupKind::kWorkloadPodGroup, "default", "g"));
  // A bound member still counts towards the barrier but is not queued.
  d = tracker.MarkBound(c);
  ASSERT_EQ(d.readiness, GangTracker::Readiness::kReady);
  EXPECT_EQ(d.members.size(), 2u);
  EXPECT_TRUE(tracker.MarkScheduledReported(d.key));
  EXPECT_FALSE(tracker.MarkScheduledReported(d.key)) << "reported once";
  d = tracker.Remove(*Member("a", "g"));
  d = tracker.Remove(*Member("b", "g"));
  EXPECT_EQ(d.readiness, GangTracker::Readiness::kEmpty);
}

// Members a PreEnqueue plugin gates (spec.schedulingGates, ...) neither count
// towards the group's minimum nor are queued with it; once the gate lifts
// the member counts, and the group is queued with it.
TEST(GangTracker, GatedMembersCountOnceTheirGateLifts) {
  GangTracker tracker;
  tracker.SetSpec(PodInfo::GroupKind::kWorkloadPodGroup, Gang("g", 3));
  tracker.UpsertPending(Member("a", "g"));
  tracker.UpsertPending(Member("b", "g"));
  auto gated = Member("c", "g");
  auto d = tracker.UpsertGated(gated);
  EXPECT_EQ(d.readiness, GangTracker::Readiness::kWaitingForMembers) << d.message;
  EXPECT_TRUE(d.members.empty());
  // Another gated member does not make it ready either.
  d = tracker.UpsertGated(Member("d", "g"));
  EXPECT_EQ(d.readiness, GangTracker::Readiness::kWaitingForMembers);
  // c's gate lifts: 3 pending members, ready; d stays out of the unit.
  d = tracker.UpsertPending(gated);
  ASSERT_EQ(d.readiness, GangTracker::Readiness::kReady);
  std::set<std::string> names;
  for (const auto& pod : d.members) names.insert(pod->name);
  EXPECT_EQ(names, (std::set<std::string>{"a", "b", "c"}));
  // A member gated again (its gates changed back) leaves the unit.
  d = tracker.UpsertGated(gated);
  EXPECT_EQ(d.readiness, GangTracker::Readiness::kWaitingForMembers);
}

// The scheduler skips re-deriving a group's spec for an update of the same
// object at the same generation (its status or finalizer written); a new
// generation, another object under the name, or a removed spec is not that.
TEST(GangTracker, HasSpecFromMatchesTheObjectAndGeneration) {
  GangTracker tracker;
  const auto key = GroupUnitKey(PodInfo::GroupKind::kWorkloadPodGroup, "default", "g");
  EXPECT_FALSE(tracker.HasSpecFrom(key, "uid-1", 3));
  GangSpec spec = Gang("g", 2);
  spec.uid = "uid-1";
  spec.generation = 3;
  tracker.SetSpec(PodInfo::GroupKind::kWorkloadPodGroup, spec);
  EXPECT_TRUE(tracker.HasSpecFrom(key, "uid-1", 3));
  EXPECT_FALSE(tracker.HasSpecFrom(key, "uid-1", 4));
  EXPECT_FALSE(tracker.HasSpecFrom(key, "uid-2", 3));
  tracker.RemoveSpec(PodInfo::GroupKind::kWorkloadPodGroup, "default", "g");
  EXPECT_FALSE(tracker.HasSpecFrom(key, "uid-1", 3));
}

// Ownership (issue 14): a group none of whose members is copse's is never
// queued; one whose members name several schedulers is not either, and says
// so; gated members count for ownership (not for the minimum).
TEST(GangTracker, OwnershipFollowsEveryMembersScheduler) {
  GangTracker tracker({"copse-scheduler", "copse-gpu"});
  const auto key = GroupUnitKey(PodInfo::GroupKind::kWorkloadPodGroup, "default", "g");
  tracker.SetSpec(PodInfo::GroupKind::kWorkloadPodGroup, Gang("g", 2));
  auto foreign = Member("f", "g");
  foreign->scheduler_name = "default-scheduler";
  auto d = tracker.UpsertPending(foreign);
  EXPECT_EQ(d.readiness, GangTracker::Readiness::kNotOurs);
  EXPECT_TRUE(d.waiting.empty()) << "nobody to tell";
  EXPECT_EQ(tracker.OwnershipOf(key), GangTracker::Ownership::kNone);

  auto ours = Member("o", "g");
  d = tracker.UpsertGated(ours);  // gated: counts for ownership, not for the minimum
  EXPECT_EQ(d.readiness, GangTracker::Readiness::kMixedSchedulers);
  EXPECT_EQ(tracker.OwnershipOf(key), GangTracker::Ownership::kMixed);
  EXPECT_EQ(d.message,
            "pod group default/g: members name different schedulers (copse-scheduler, "
            "default-scheduler); every member of a group must use the same schedulerName");
  EXPECT_EQ(tracker.SchedulerNames(key),
            (std::vector<std::string>{"copse-scheduler", "default-scheduler"}));

  d = tracker.Remove(*foreign);
  EXPECT_EQ(d.readiness, GangTracker::Readiness::kEmpty) << "the gated member is not pending";
  EXPECT_EQ(tracker.OwnershipOf(key), GangTracker::Ownership::kOurs);
  d = tracker.UpsertPending(ours);  // its gate was lifted
  EXPECT_EQ(d.readiness, GangTracker::Readiness::kWaitingForMembers);
  auto other_profile = Member("p", "g");
  other_profile->scheduler_name = "copse-gpu";
  d = tracker.UpsertPending(other_profile);
  EXPECT_EQ(d.readiness, GangTracker::Readiness::kMixedSchedulers)
      << "two of copse's profiles in one group are still different schedulers";
  d = tracker.Remove(*other_profile);
  auto second = Member("o2", "g");
  d = tracker.UpsertPending(second);
  EXPECT_EQ(d.readiness, GangTracker::Readiness::kReady);
  EXPECT_EQ(tracker.Info(key).ownership, GangTracker::Ownership::kOurs);
}

// Warnings about a group's object wait until the group is copse's: a group
// of other schedulers' pods gets no event from copse.
TEST(GangTracker, SpecEventsAreHeldUntilTheGroupIsCopses) {
  GangTracker tracker;
  const auto key = GroupUnitKey(PodInfo::GroupKind::kWorkloadPodGroup, "default", "bad");
  auto d = tracker.SetInvalidSpec(PodInfo::GroupKind::kWorkloadPodGroup, "default", "bad",
                                  "PodGroup default/bad is invalid: spec.x: Required value",
                                  {"uid-1", 1, "InvalidSpec", "spec.x: Required value"});
  EXPECT_FALSE(d.spec_events);
  EXPECT_TRUE(tracker.TakeSpecEvents(key).empty()) << "no member yet: not copse's";
  auto foreign = Member("f", "bad");
  foreign->scheduler_name = "default-scheduler";
  d = tracker.UpsertPending(foreign);
  EXPECT_FALSE(d.spec_events);
  EXPECT_TRUE(tracker.TakeSpecEvents(key).empty());
  tracker.Remove(*foreign);
  d = tracker.UpsertPending(Member("o", "bad"));
  EXPECT_EQ(d.readiness, GangTracker::Readiness::kMissingSpec);
  EXPECT_EQ(d.message, "PodGroup default/bad is invalid: spec.x: Required value");
  EXPECT_TRUE(d.spec_events);
  std::vector<GangTracker::SpecEvent> events = tracker.TakeSpecEvents(key);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].reason, "InvalidSpec");
  EXPECT_TRUE(tracker.TakeSpecEvents(key).empty()) << "handed out once";
}

TEST(GangTracker, CopseAndWorkloadGroupsWithOneNameDoNotCollide) {
  EXPECT_NE(GroupUnitKey(PodInfo::GroupKind::kWorkloadPodGroup, "ns", "g"),
            GroupUnitKey(PodInfo::GroupKind::kCopsePodGroup, "ns", "g"));
}

std::unique_ptr<plugins::Framework> DefaultFramework(plugins::Registry& registry) {
  EXPECT_TRUE(plugins::RegisterDefaultPlugins(registry).ok());
  auto fw = plugins::Framework::Create(registry, plugins::DefaultProfile());
  EXPECT_TRUE(fw.ok());
  return std::move(fw).value();
}

TEST(PlaceGang, PlacesAllOrReportsWhyAndNeverOverAllocates) {
  plugins::Registry registry;
  auto fw = DefaultFramework(registry);
  Cluster cluster;
  for (int i = 0; i < 3; ++i)
    cluster.AddNode("n" + std::to_string(i), {{"cpu", "4"}, {"pods", "110"}});
  Snapshot& snapshot = cluster.mutable_snapshot();
  std::vector<PodPtr> members;
  for (int i = 0; i < 10; ++i) {
    members.push_back(
        PodBuilder("m" + std::to_string(i)).Requests(cluster.names, {{"cpu", "1"}}).Obj());
  }
  FixedRandom random(0);
  plugins::Workspace ws;
  GangPlacementOptions options;
  options.required = 10;  // 12 cpu for 10: fits
  GangPlacement p = PlaceGang(*fw, snapshot, members, options, random, ws);
  EXPECT_TRUE(p.satisfied);
  EXPECT_EQ(p.placed.size(), 10u);
  for (NodeIndex n = 0; n < snapshot.num_nodes(); ++n) {
    EXPECT_LE(snapshot.requested(kResourceIdCpu, n), snapshot.allocatable(kResourceIdCpu, n));
  }

  // On the now fuller snapshot, 10 more cannot all fit: 2 cpu are left.
  std::vector<PodPtr> more;
  for (int i = 0; i < 10; ++i) {
    more.push_back(
        PodBuilder("x" + std::to_string(i)).Requests(cluster.names, {{"cpu", "1"}}).Obj());
  }
  GangPlacement q = PlaceGang(*fw, snapshot, more, options, random, ws);
  EXPECT_FALSE(q.satisfied);
  EXPECT_EQ(q.placed.size(), 2u);
  EXPECT_EQ(q.unplaced.size(), 8u);
  EXPECT_EQ(q.failure, "0/3 nodes are available: 3 Insufficient cpu.");
}

TEST(PlaceGang, StopsEarlyWhenTheMinimumCannotBeReached) {
  plugins::Registry registry;
  auto fw = DefaultFramework(registry);
  Cluster cluster;
  cluster.AddNode("n0", {{"cpu", "2"}, {"pods", "110"}});
  Snapshot& snapshot = cluster.mutable_snapshot();
  // Two classes: the big one (3 x 4 cpu) fails first, so the small class is
  // never tried: 3 of 4 required can no longer be reached.
  std::vector<PodPtr> members;
  for (int i = 0; i < 3; ++i) {
    members.push_back(PodBuilder("big" + std::to_string(i))
                          .Priority(5)
                          .Requests(cluster.names, {{"cpu", "4"}})
                          .Obj());
  }
  members.push_back(PodBuilder("small").Requests(cluster.names, {{"cpu", "1"}}).Obj());
  FixedRandom random(0);
  plugins::Workspace ws;
  GangPlacementOptions options;
  options.required = 2;
  GangPlacement p = PlaceGang(*fw, snapshot, members, options, random, ws);
  EXPECT_FALSE(p.satisfied);
  EXPECT_TRUE(p.placed.empty());
  EXPECT_EQ(p.unplaced.size(), 4u);
}

TEST(PodClassReuse, MatchesAFullPassForEveryPod) {
  // Placing 40 identical pods with reuse gives the same per-node totals as
  // full passes; reuse must never pick an infeasible node.
  plugins::Registry registry;
  auto fw = DefaultFramework(registry);
  for (bool reuse_enabled : {false, true}) {
    Cluster cluster;
    for (int i = 0; i < 8; ++i)
      cluster.AddNode("n" + std::to_string(i), {{"cpu", "5"}, {"pods", "110"}});
    Snapshot& snapshot = cluster.mutable_snapshot();
    std::vector<PodPtr> members;
    for (int i = 0; i < 40; ++i) {
      members.push_back(
          PodBuilder("p" + std::to_string(i)).Requests(cluster.names, {{"cpu", "1"}}).Obj());
    }
    FixedRandom random(0);
    plugins::Workspace ws;
    GangPlacementOptions options;
    options.required = 40;
    if (!reuse_enabled) {
      // One pod per call: every placement is a full pass.
      size_t placed = 0;
      for (const PodPtr& pod : members) {
        GangPlacement p = PlaceGang(*fw, snapshot, std::span<const PodPtr>(&pod, 1),
                                    GangPlacementOptions{1}, random, ws);
        placed += p.placed.size();
      }
      EXPECT_EQ(placed, 40u);
    } else {
      GangPlacement p = PlaceGang(*fw, snapshot, members, options, random, ws);
      EXPECT_TRUE(p.satisfied);
    }
    for (NodeIndex n = 0; n < snapshot.num_nodes(); ++n) {
      EXPECT_EQ(snapshot.requested(kResourceIdCpu, n), 5000) << "LeastAllocated fills evenly";
    }
  }
}

// A pass kept across gangs (GangPlacementOptions::reuse): gangs whose pods
// differ only in their labels reuse it while labels do not matter, and the
// result never over-allocates; when labels matter each gang has its pass.
TEST(PodClassReuse, KeptAcrossGangsThatDifferOnlyInLabels) {
  plugins::Registry registry;
  auto fw = DefaultFramework(registry);
  for (bool labels_matter : {true, false}) {
    Cluster cluster;
    for (int i = 0; i < 6; ++i)
      cluster.AddNode("n" + std::to_string(i), {{"cpu", "4"}, {"pods", "110"}});
    Snapshot& snapshot = cluster.mutable_snapshot();
    FixedRandom random(0);
    plugins::Workspace ws;
    PodClassReuse kept;
    size_t reused = 0;
    for (int g = 0; g < 8; ++g) {
      std::vector<PodPtr> members;
      for (int i = 0; i < 3; ++i) {
        members.push_back(PodBuilder("g" + std::to_string(g) + "-" + std::to_string(i))
                              .Label("gang", "g" + std::to_string(g))
                              .Requests(cluster.names, {{"cpu", "1"}})
                              .Obj());
      }
      GangPlacementOptions options;
      options.required = 3;
      options.reuse = &kept;
      options.labels_matter = labels_matter;
      GangPlacement p = PlaceGang(*fw, snapshot, members, options, random, ws);
      ASSERT_TRUE(p.satisfied) << "gang " << g << ": " << p.failure;
      reused += p.reused;
    }
    // 24 cpu for 24 pods: full, and nothing over.
    for (NodeIndex n = 0; n < snapshot.num_nodes(); ++n) {
      EXPECT_EQ(snapshot.requested(kResourceIdCpu, n), 4000) << "node " << n;
    }
    // Within a gang the 2nd and 3rd pods reuse the 1st's pass (16); across
    // gangs the 1st pod does too when labels do not matter (7 more).
    EXPECT_EQ(reused, labels_matter ? 16u : 23u);
  }
}

}  // namespace
}  // namespace copse::scheduler
