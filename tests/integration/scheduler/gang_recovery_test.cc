// Gangs under failure and preemption, end to end against the embedded API
// server, on the scheduler's injected clock (issue 15):
//   - a node deleted under a bound gang leaves it below its minimum: after
//     gangRecoveryTimeout its bound members are evicted (DisruptionTarget
//     GangBelowMinimum on the group, an event), the room is free and the
//     gang, recreated, is placed again whole;
//   - a member whose bind is rejected for good strands the rest of its gang
//     until the same recovery frees it;
//   - a victim gang of gang preemption gets DisruptionTarget
//     (PreemptionByScheduler), and keeps it when the next status write of
//     the group is built before the watch echoes the first.

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "core/clock.h"
#include "kube/client.h"
#include "kube/pod_group.h"
#include "plugins/defaults/defaults.h"
#include "scheduler/api_writer.h"
#include "scheduler/gangs.h"
#include "scheduler/profiles.h"
#include "scheduler/status_reporter.h"
#include "tests/integration/scheduler/harness.h"

namespace copse::scheduler::testing {
namespace gang_recovery_test {

using kube::resources::kNodes;
using kube::resources::kPods;

std::string PodGroupJson(const std::string& name, int min_count,
                         const std::string& extra_spec = "") {
  return R"({"apiVersion":"scheduling.k8s.io/v1alpha2","kind":"PodGroup","metadata":{"name":")" +
         name + R"(","namespace":"default"},"spec":{"schedulingPolicy":{"gang":{"minCount":)" +
         std::to_string(min_count) + "}}" + extra_spec + "}}";
}

PodSpecOptions Member(const std::string& group, const std::string& name, const std::string& cpu) {
  PodSpecOptions p;
  p.name = name;
  p.cpu = cpu;
  p.memory = "64Mi";
  p.labels["group"] = group;
  p.extra_spec = R"(,"schedulingGroup":{"podGroupName":")" + group + "\"}";
  return p;
}

void AddNode(Cluster& cluster, const std::string& name, const std::string& cpu) {
  NodeSpec node;
  node.name = name;
  node.cpu = cpu;
  cluster.Create(kNodes, "", NodeJson(node));
}

// Live (not terminating) pods of `group` bound to a node.
int Bound(Cluster& cluster, const std::string& group) {
  int n = 0;
  for (const kube::Pod& pod : cluster.Pods()) {
    auto g = pod.meta.labels.find("group");
    n += g != pod.meta.labels.end() && g->second == group && !pod.spec.node_name.empty() &&
         !pod.meta.deletion_timestamp.has_value();
  }
  return n;
}

std::optional<kube::PodGroup> Group(Cluster& cluster, const std::string& name) {
  auto got = cluster.store().Get(kube::resources::kPodGroups, "default", name);
  if (!got.ok()) return std::nullopt;
  auto group = kube::PodGroup::Decode((*got)->json);
  if (!group.ok()) return std::nullopt;
  return std::move(group).value();
}

// The group's DisruptionTarget condition (a copy), if any.
std::optional<kube::Condition> Disruption(const std::optional<kube::PodGroup>& group) {
  if (!group.has_value()) return std::nullopt;
  const kube::Condition* c = kube::FindCondition(group->status.conditions, kube::kDisruptionTarget);
  if (c == nullptr) return std::nullopt;
  return *c;
}

int EventsWithReason(Cluster& cluster, std::string_view reason) {
  int n = 0;
  auto list = cluster.store().List(kube::resources::kEvents, {});
  if (!list.ok()) return 0;
  for (const auto& item : list->items) {
    n += item->json.find("\"reason\":\"" + std::string(reason) + "\"") != std::string::npos;
  }
  return n;
}

// Moves the scheduler's clock on by `step` every few real milliseconds
// until `condition` holds (or the real-time deadline passes).
bool AdvanceUntil(FakeClock& clock, Clock::Duration step, const std::function<bool()>& condition) {
  return WaitUntil([&] {
    if (condition()) return true;
    clock.Advance(step);
    return false;
  });
}

TEST(GangRecoveryIntegration, NodeDeletedUnderABoundGangIsRecoveredAfterTheTimeout) {
  Cluster cluster;
  AddNode(cluster, "n0", "2");
  AddNode(cluster, "n1", "2");
  auto clock = std::make_shared<FakeClock>();
  SchedulerOptions options;
  options.clock = clock;
  options.gang_recovery_timeout = std::chrono::seconds(60);
  cluster.StartScheduler(options);
  cluster.Create(kube::resources::kPodGroups, "default", PodGroupJson("g", 2));
  for (int i = 0; i < 2; ++i) {
    cluster.Create(kPods, "default", PodJson(Member("g", "g-" + std::to_string(i), "2")));
  }
  ASSERT_TRUE(WaitUntil([&] { return Bound(cluster, "g") == 2; }));
  const auto on_n0 = [&] {
    for (const kube::Pod& pod : cluster.Pods()) {
      if (pod.spec.node_name == "n0") return pod.meta.name;
    }
    return std::string();
  };
  const std::string survivor = on_n0();
  ASSERT_FALSE(survivor.empty());

  // The node goes; its pod stays bound to it (nothing collects it here).
  ASSERT_TRUE(cluster.store().Delete(kNodes, "", "n1").ok());
  ASSERT_TRUE(AdvanceUntil(*clock, std::chrono::seconds(2), [&] {
    return !cluster.GetPod("default", survivor).has_value();
  })) << "the member left on n0 was never evicted";
  EXPECT_GE(cluster.scheduler()->stats().gangs_recovered, 1u);
  EXPECT_GE(clock->Now().time_since_epoch(), std::chrono::seconds(60))
      << "evicted before gangRecoveryTimeout passed on the scheduler's clock";
  ASSERT_TRUE(WaitUntil([&] {
    const std::optional<kube::Condition> c = Disruption(Group(cluster, "g"));
    return c.has_value() && c->reason == kube::kReasonGangBelowMinimum;
  }));
  EXPECT_NE(Disruption(Group(cluster, "g"))->message.find("no longer exist"), std::string::npos);
  EXPECT_GE(EventsWithReason(cluster, kube::kReasonGangBelowMinimum), 1);

  // The room on n0 is free: the gang, recreated, is placed again whole.
  AddNode(cluster, "n2", "2");
  for (int i = 0; i < 2; ++i) {
    cluster.Create(kPods, "default", PodJson(Member("g", "g2-" + std::to_string(i), "2")));
  }
  ASSERT_TRUE(AdvanceUntil(*clock, std::chrono::milliseconds(100),
                           [&] { return Bound(cluster, "g") == 2; }));
  std::set<std::string> nodes;
  for (const kube::Pod& pod : cluster.Pods()) {
    if (pod.meta.name.starts_with("g2-")) nodes.insert(pod.spec.node_name);
  }
  EXPECT_EQ(nodes, (std::set<std::string>{"n0", "n2"}));
  for (const std::string& p : CheckInvariants(cluster.Nodes(), cluster.Pods())) ADD_FAILURE() << p;
}

TEST(GangRecoveryIntegration, PermanentBindRejectionsDoNotStrandTheGang) {
  api::Options server;
  server.bind_reject_prefix = "bad-";
  Cluster cluster(server);
  AddNode(cluster, "n0", "2");
  AddNode(cluster, "n1", "2");
  auto clock = std::make_shared<FakeClock>();
  SchedulerOptions options;
  options.clock = clock;
  options.gang_recovery_timeout = std::chrono::seconds(30);
  cluster.StartScheduler(options);
  cluster.Create(kube::resources::kPodGroups, "default", PodGroupJson("s", 2));
  cluster.Create(kPods, "default", PodJson(Member("s", "ok-0", "2")));
  cluster.Create(kPods, "default", PodJson(Member("s", "bad-1", "2")));
  ASSERT_TRUE(AdvanceUntil(*clock, std::chrono::milliseconds(200), [&] {
    auto pod = cluster.GetPod("default", "ok-0");
    return pod.has_value() && !pod->spec.node_name.empty();
  }));
  ASSERT_TRUE(AdvanceUntil(*clock, std::chrono::seconds(1), [&] {
    return !cluster.GetPod("default", "ok-0").has_value();
  })) << "the bound half of the gang held its node forever";
  EXPECT_GE(clock->Now().time_since_epoch(), std::chrono::seconds(30));
  EXPECT_GE(cluster.scheduler()->stats().bind_failures, 1u);
  ASSERT_TRUE(WaitUntil([&] {
    const std::optional<kube::Condition> c = Disruption(Group(cluster, "s"));
    return c.has_value() && c->reason == kube::kReasonGangBelowMinimum;
  }));
  auto bad = cluster.GetPod("default", "bad-1");
  ASSERT_TRUE(bad.has_value());
  EXPECT_TRUE(bad->spec.node_name.empty());
  for (const std::string& p : CheckInvariants(cluster.Nodes(), cluster.Pods())) ADD_FAILURE() << p;
}

TEST(GangRecoveryIntegration, VictimPodGroupGetsDisruptionTarget) {
  Cluster cluster;
  cluster.Create(
      kube::resources::kPriorityClasses, "",
      R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"low"},"value":10})");
  cluster.Create(
      kube::resources::kPriorityClasses, "",
      R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"high"},"value":1000})");
  AddNode(cluster, "n0", "2");
  cluster.StartScheduler();
  cluster.Create(kube::resources::kPodGroups, "default", PodGroupJson("victim", 2));
  for (int i = 0; i < 2; ++i) {
    PodSpecOptions p = Member("victim", "victim-" + std::to_string(i), "1");
    p.priority_class = "low";
    cluster.Create(kPods, "default", PodJson(p));
  }
  ASSERT_TRUE(WaitUntil([&] { return Bound(cluster, "victim") == 2; }));
  // A lone pod needs one cpu: taking one member would break the gang, so
  // the gang goes whole.
  PodSpecOptions hi;
  hi.name = "hi";
  hi.cpu = "1";
  hi.priority_class = "high";
  cluster.Create(kPods, "default", PodJson(hi));
  ASSERT_TRUE(WaitUntil([&] {
    auto pod = cluster.GetPod("default", "hi");
    return pod.has_value() && !pod->spec.node_name.empty();
  }));
  // Both members are evicted together; the preemptor may bind as soon as the
  // first eviction lands (one cpu is enough), before the second is seen. A
  // member left alone would go only through gang recovery, 60 s later: the
  // wait ends well before.
  EXPECT_TRUE(WaitUntil([&] { return Bound(cluster, "victim") == 0; }, std::chrono::seconds(20)))
      << "a gang member alone was preempted";
  ASSERT_TRUE(WaitUntil([&] {
    const std::optional<kube::Condition> c = Disruption(Group(cluster, "victim"));
    return c.has_value() && c->reason == kube::kReasonPreemptionByScheduler;
  }));
}

// The lost update behind a rare failure of the test above (seen once under
// ThreadSanitizer: the victim group never got DisruptionTarget). Status
// patches of a group are built from the informer's copy of the object, and
// a merge patch replaces the conditions list whole. DisruptionTarget was
// written; the victims' deletion then made the group's counts dirty, and the
// coalesced PodGroupScheduled write that followed was built from a copy the
// DisruptionTarget patch had not reached yet (its watch event not back):
// it sent the list without DisruptionTarget, which nothing wrote again. Here
// the reporter's copy of the object is never refreshed, which is that
// window held open: every write is built before any echo.
TEST(GangRecoveryIntegration, DisruptionTargetSurvivesAStatusWriteBuiltBeforeItsEcho) {
  Cluster cluster({}, /*start_simulator=*/false);
  cluster.Create(kube::resources::kPodGroups, "default", PodGroupJson("victim", 2));
  const std::optional<kube::PodGroup> stale = Group(cluster, "victim");
  ASSERT_TRUE(stale.has_value());
  ASSERT_TRUE(stale->status.conditions.empty());

  kube::IoThread io(1);
  kube::ClientConfig config;
  config.server = cluster.http_url();
  auto client = kube::Client::Create(config, io.executor());
  ASSERT_TRUE(client.ok()) << client.error().ToString();
  ApiWriterOptions writer_options;
  writer_options.record_events = false;
  ApiWriter writer(*client, writer_options);
  plugins::Registry registry;
  ASSERT_TRUE(plugins::RegisterDefaultPlugins(registry).ok());
  auto profiles = Profiles::Create(registry, {plugins::DefaultProfile()});
  ASSERT_TRUE(profiles.ok()) << profiles.error().ToString();
  RealClock clock;
  GangTracker gangs;
  StatusReporterOptions options;
  options.group_status_flush_interval = Clock::Duration::zero();
  StatusReporter reporter(writer, gangs, *profiles, clock, options);

  auto spec = stale->ToGangSpec();
  ASSERT_TRUE(spec.ok()) << spec.error().ToString();
  gangs.SetSpec(PodInfo::GroupKind::kWorkloadPodGroup, *spec);
  reporter.SetGroupObject(std::make_shared<const kube::PodGroup>(*stale));
  const queue::UnitKey key =
      GroupUnitKey(PodInfo::GroupKind::kWorkloadPodGroup, "default", "victim");
  std::vector<std::shared_ptr<PodInfo>> members;
  for (int i = 0; i < 2; ++i) {
    auto pod = std::make_shared<PodInfo>();
    pod->namespace_name = "default";
    pod->name = "victim-" + std::to_string(i);
    pod->uid = pod->name;
    pod->scheduler_name = "copse-scheduler";
    pod->group_kind = PodInfo::GroupKind::kWorkloadPodGroup;
    pod->pod_group = "victim";
    members.push_back(pod);
    gangs.MarkBound(pod);
    reporter.MemberBound(*pod);  // the second one: PodGroupScheduled=True
  }
  reporter.GroupDisrupted(key, kube::kReasonPreemptionByScheduler, "preempted by default/hi");
  // The first victim goes; the group's counts change and are written.
  gangs.Remove(*members[0]);
  reporter.MemberGone(key);
  reporter.Flush(/*final=*/true);
  ASSERT_TRUE(writer.Drain(std::chrono::seconds(30)));
  EXPECT_EQ(writer.stats().status_patch_errors, 0u);

  const std::optional<kube::PodGroup> group = Group(cluster, "victim");
  ASSERT_TRUE(group.has_value());
  const std::optional<kube::Condition> disruption = Disruption(group);
  ASSERT_TRUE(disruption.has_value()) << "a later status write erased DisruptionTarget";
  EXPECT_EQ(disruption->reason, kube::kReasonPreemptionByScheduler);
  const kube::Condition* scheduled =
      kube::FindCondition(group->status.conditions, kube::kPodGroupScheduled);
  ASSERT_NE(scheduled, nullptr);
  EXPECT_EQ(scheduled->status, "True");
  EXPECT_EQ(scheduled->message, "1 member pods scheduled (minimum 2)")
      << "the coalesced count write did not happen, so nothing was tested";
}

}  // namespace gang_recovery_test
}  // namespace copse::scheduler::testing
