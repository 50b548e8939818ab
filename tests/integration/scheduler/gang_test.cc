// Gang scheduling end to end against the embedded API server
// (scheduling.k8s.io/v1alpha2 PodGroups): all-or-nothing under contention,
// two gangs racing for 60% of the cluster each, gang preemption with delayed
// actuation (nobody evicted when it cannot help; minimal victims; whole
// victim gangs with disruptionMode PodGroup), binds failing at random, and a
// PodGroup created after its pods.

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "kube/pod_group.h"
#include "scheduler/cache.h"
#include "tests/integration/scheduler/harness.h"

namespace copse::scheduler::testing {
namespace gang_test {

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

void AddNodes(Cluster& cluster, int count, const std::string& cpu) {
  for (int i = 0; i < count; ++i) {
    NodeSpec node;
    node.name = "node-" + std::to_string(i);
    node.cpu = cpu;
    cluster.Create(kNodes, "", NodeJson(node));
  }
}

std::map<std::string, int> BoundPerGroup(const std::vector<kube::Pod>& pods) {
  std::map<std::string, int> bound;
  for (const kube::Pod& pod : pods) {
    auto g = pod.meta.labels.find("group");
    if (g == pod.meta.labels.end()) continue;
    bound[g->second] += !pod.spec.node_name.empty() && !pod.meta.deletion_timestamp.has_value();
  }
  return bound;
}

const kube::Condition* GroupCondition(Cluster& cluster, const std::string& name,
                                      kube::PodGroup* out) {
  auto got = cluster.store().Get(kube::resources::kPodGroups, "default", name);
  if (!got.ok()) return nullptr;
  auto group = kube::PodGroup::Decode((*got)->json);
  if (!group.ok()) return nullptr;
  *out = std::move(group).value();
  return kube::FindCondition(out->status.conditions, kube::kPodGroupScheduled);
}

TEST(GangIntegration, TwoHundredRandomGangsAreAllOrNothing) {
  Cluster cluster;
  AddNodes(cluster, 20, "8");  // 160 cpu for ~3,400 requested
  cluster.StartScheduler();
  std::mt19937 rng(11);
  std::map<std::string, int> min_count;
  for (int g = 0; g < 200; ++g) {
    const std::string name = "gang-" + std::to_string(g);
    const int size = 2 + static_cast<int>(rng() % 31);
    const int min = 1 + static_cast<int>(rng() % size);
    min_count[name] = min;
    cluster.Create(kube::resources::kPodGroups, "default", PodGroupJson(name, min));
    for (int i = 0; i < size; ++i) {
      cluster.Create(kPods, "default", PodJson(Member(name, name + "-" + std::to_string(i), "1")));
    }
  }
  // Quiescent: nothing assumed in flight, and every group's PodGroupScheduled
  // agrees with its bound members (True exactly when >= minCount are bound).
  ASSERT_TRUE(WaitUntil(
      [&] {
        if (cluster.scheduler()->stats().assumed_pods != 0) return false;
        const auto bound = BoundPerGroup(cluster.Pods());
        for (const auto& [name, min] : min_count) {
          kube::PodGroup group;
          const kube::Condition* c = GroupCondition(cluster, name, &group);
          const int n = bound.contains(name) ? bound.at(name) : 0;
          if (c == nullptr || (c->status == "True") != (n >= min)) return false;
        }
        return true;
      },
      std::chrono::seconds(120)));
  const auto pods = cluster.Pods();
  for (const std::string& p : CheckInvariants(cluster.Nodes(), pods)) ADD_FAILURE() << p;
  const auto bound = BoundPerGroup(pods);
  int placed_groups = 0;
  int bound_pods = 0;
  for (const auto& [name, min] : min_count) {
    const int n = bound.contains(name) ? bound.at(name) : 0;
    EXPECT_TRUE(n == 0 || n >= min) << name << ": " << n << " bound, minCount " << min;
    kube::PodGroup group;
    const kube::Condition* c = GroupCondition(cluster, name, &group);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->status == "True", n >= min) << name << ": " << c->message;
    placed_groups += n >= min;
    bound_pods += n;
  }
  EXPECT_GT(placed_groups, 0);
  EXPECT_LE(bound_pods, 160);
}

TEST(GangIntegration, TwoGangsNeedingSixtyPercentEach) {
  Cluster cluster;
  AddNodes(cluster, 10, "4");  // 40 cpu
  cluster.StartScheduler();
  for (const std::string name : {"left", "right"}) {
    cluster.Create(kube::resources::kPodGroups, "default", PodGroupJson(name, 24));
  }
  for (int i = 0; i < 24; ++i) {
    for (const std::string name : {"left", "right"}) {
      cluster.Create(kPods, "default", PodJson(Member(name, name + "-" + std::to_string(i), "1")));
    }
  }
  ASSERT_TRUE(WaitUntil([&] {
    kube::PodGroup a, b;
    return GroupCondition(cluster, "left", &a) != nullptr &&
           GroupCondition(cluster, "right", &b) != nullptr &&
           cluster.scheduler()->stats().assumed_pods == 0;
  }));
  const auto bound = BoundPerGroup(cluster.Pods());
  const int left = bound.contains("left") ? bound.at("left") : 0;
  const int right = bound.contains("right") ? bound.at("right") : 0;
  EXPECT_TRUE((left == 24 && right == 0) || (left == 0 && right == 24))
      << "left " << left << ", right " << right;
  kube::PodGroup loser;
  const std::string losing = left == 24 ? "right" : "left";
  const kube::Condition* c = GroupCondition(cluster, losing, &loser);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, "False");
  EXPECT_EQ(c->reason, "Unschedulable");
  EXPECT_NE(c->message.find("pods fit"), std::string::npos) << c->message;
}

void PriorityClasses(Cluster& cluster) {
  cluster.Create(
      kube::resources::kPriorityClasses, "",
      R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"low"},"value":10})");
  cluster.Create(
      kube::resources::kPriorityClasses, "",
      R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"high"},"value":1000})");
}

// 4 nodes x 4 cpu, each full of four 1-cpu low-priority pods.
void FillWithLowPods(Cluster& cluster) {
  PriorityClasses(cluster);
  AddNodes(cluster, 4, "4");
  cluster.StartScheduler();
  for (int i = 0; i < 16; ++i) {
    PodSpecOptions p;
    p.name = "low-" + std::to_string(i);
    p.cpu = "1";
    p.priority_class = "low";
    cluster.Create(kPods, "default", PodJson(p));
  }
  ASSERT_TRUE(WaitUntil([&] {
    int n = 0;
    for (const auto& pod : cluster.Pods()) n += !pod.spec.node_name.empty();
    return n == 16;
  }));
}

int LiveLowPods(Cluster& cluster) {
  int n = 0;
  for (const auto& pod : cluster.Pods()) {
    n += pod.meta.name.starts_with("low-") && !pod.meta.deletion_timestamp.has_value();
  }
  return n;
}

TEST(GangIntegration, GangThatCannotFitEvenWithPreemptionEvictsNobody) {
  Cluster cluster;
  FillWithLowPods(cluster);
  cluster.Create(kube::resources::kPodGroups, "default", PodGroupJson("big", 5));
  for (int i = 0; i < 5; ++i) {
    PodSpecOptions p = Member("big", "big-" + std::to_string(i), "4");
    p.priority_class = "high";
    cluster.Create(kPods, "default", PodJson(p));
  }
  ASSERT_TRUE(WaitUntil([&] {
    kube::PodGroup g;
    const kube::Condition* c = GroupCondition(cluster, "big", &g);
    return c != nullptr && c->message.find("preemption") != std::string::npos;
  }));
  kube::PodGroup g;
  const kube::Condition* c = GroupCondition(cluster, "big", &g);
  EXPECT_EQ(c->status, "False");
  EXPECT_NE(c->message.find("does not fit even with every lower-priority pod evicted"),
            std::string::npos)
      << c->message;
  EXPECT_EQ(LiveLowPods(cluster), 16);
  EXPECT_EQ(cluster.scheduler()->stats().preemption_victims, 0u);
}

TEST(GangIntegration, GangPreemptionEvictsMinimalVictimsThenBinds) {
  Cluster cluster;
  FillWithLowPods(cluster);
  cluster.Create(kube::resources::kPodGroups, "default", PodGroupJson("pair", 2));
  for (int i = 0; i < 2; ++i) {
    PodSpecOptions p = Member("pair", "pair-" + std::to_string(i), "4");
    p.priority_class = "high";
    cluster.Create(kPods, "default", PodJson(p));
  }
  ASSERT_TRUE(WaitUntil([&] { return BoundPerGroup(cluster.Pods())["pair"] == 2; }));
  EXPECT_EQ(LiveLowPods(cluster), 8) << "two nodes' worth of 1-cpu pods, no more";
  EXPECT_EQ(cluster.scheduler()->stats().preemption_victims, 8u);
  for (const std::string& p : CheckInvariants(cluster.Nodes(), cluster.Pods())) ADD_FAILURE() << p;
  kube::PodGroup g;
  ASSERT_TRUE(WaitUntil([&] {
    const kube::Condition* c = GroupCondition(cluster, "pair", &g);
    return c != nullptr && c->status == "True";
  }));
}

TEST(GangIntegration, VictimGangWithDisruptionModePodGroupIsEvictedWhole) {
  Cluster cluster;
  PriorityClasses(cluster);
  AddNodes(cluster, 2, "2");
  cluster.StartScheduler();
  cluster.Create(
      kube::resources::kPodGroups, "default",
      PodGroupJson("victim", 2, R"(,"disruptionMode":"PodGroup","priorityClassName":"low")"));
  for (int i = 0; i < 2; ++i) {
    PodSpecOptions p = Member("victim", "victim-" + std::to_string(i), "1");
    p.priority_class = "low";
    p.extra_spec +=
        R"(,"nodeSelector":{"kubernetes.io/hostname":"node-)" + std::to_string(i) + "\"}";
    cluster.Create(kPods, "default", PodJson(p));
  }
  for (int i = 0; i < 2; ++i) {
    PodSpecOptions p;
    p.name = "solo-" + std::to_string(i);
    p.cpu = "1";
    p.priority_class = "low";
    p.extra_spec =
        R"(,"nodeSelector":{"kubernetes.io/hostname":"node-)" + std::to_string(i) + "\"}";
    cluster.Create(kPods, "default", PodJson(p));
  }
  ASSERT_TRUE(WaitUntil([&] {
    int n = 0;
    for (const auto& pod : cluster.Pods()) n += !pod.spec.node_name.empty();
    return n == 4;
  }));
  cluster.Create(kube::resources::kPodGroups, "default", PodGroupJson("hi", 1));
  PodSpecOptions hi = Member("hi", "hi-0", "2");
  hi.priority_class = "high";
  cluster.Create(kPods, "default", PodJson(hi));
  ASSERT_TRUE(WaitUntil([&] { return BoundPerGroup(cluster.Pods())["hi"] == 1; }));
  std::set<std::string> gone;
  std::set<std::string> live;
  for (const auto& pod : cluster.Pods()) {
    (pod.meta.deletion_timestamp.has_value() ? gone : live).insert(pod.meta.name);
  }
  for (const char* name : {"victim-0", "victim-1"}) {
    EXPECT_FALSE(live.contains(name)) << name << " survived: its group goes whole";
  }
  // Exactly one solo pod (the one on the chosen node) was needed.
  EXPECT_EQ(live.contains("solo-0") + live.contains("solo-1"), 1);
}

TEST(GangIntegration, GangsCompleteDespiteRandomBindFailures) {
  api::Options server_options;
  server_options.bind_failure_rate = 0.1;
  Cluster cluster(server_options);
  AddNodes(cluster, 10, "16");
  cluster.StartScheduler();
  std::map<std::string, int> min_count;
  for (int g = 0; g < 30; ++g) {
    const std::string name = "g" + std::to_string(g);
    min_count[name] = 3;
    cluster.Create(kube::resources::kPodGroups, "default", PodGroupJson(name, 3));
    for (int i = 0; i < 4; ++i) {
      cluster.Create(kPods, "default",
                     PodJson(Member(name, name + "-" + std::to_string(i), "500m")));
    }
  }
  ASSERT_TRUE(WaitUntil(
      [&] {
        const auto bound = BoundPerGroup(cluster.Pods());
        for (const auto& [name, min] : min_count) {
          if (!bound.contains(name) || bound.at(name) < min) return false;
        }
        return true;
      },
      std::chrono::seconds(120)));
  EXPECT_GT(cluster.scheduler()->stats().bind_failures, 0u) << "the failure injection ran";
  for (const std::string& p : CheckInvariants(cluster.Nodes(), cluster.Pods())) ADD_FAILURE() << p;
}

TEST(GangIntegration, PodWaitsForItsPodGroupThenSchedules) {
  Cluster cluster;
  AddNodes(cluster, 2, "4");
  cluster.StartScheduler();
  for (int i = 0; i < 2; ++i) {
    cluster.Create(kPods, "default", PodJson(Member("late", "late-" + std::to_string(i), "1")));
  }
  ASSERT_TRUE(WaitUntil([&] {
    auto pod = cluster.GetPod("default", "late-0");
    const kube::Condition* c = pod ? PodScheduledCondition(*pod) : nullptr;
    return c != nullptr && c->message.find("does not exist") != std::string::npos;
  }));
  auto pod = cluster.GetPod("default", "late-0");
  EXPECT_EQ(PodScheduledCondition(*pod)->message,
            "scheduling.k8s.io/v1alpha2 PodGroup \"default/late\" does not exist; the pod waits "
            "until it is created");
  EXPECT_TRUE(pod->spec.node_name.empty());
  cluster.Create(kube::resources::kPodGroups, "default", PodGroupJson("late", 2));
  ASSERT_TRUE(WaitUntil([&] { return BoundPerGroup(cluster.Pods())["late"] == 2; }));
}

}  // namespace gang_test
}  // namespace copse::scheduler::testing

namespace copse::scheduler::testing {
namespace gang_test {

bool HasProtection(Cluster& cluster, const std::string& name) {
  auto got = cluster.store().Get(kube::resources::kPodGroups, "default", name);
  return got.ok() &&
         (*got)->json.find(std::string(kube::kPodGroupProtectionFinalizer)) != std::string::npos;
}

TEST(GangIntegration, FinalizerProtectsAScheduledGroupUntilItsMembersAreGone) {
  Cluster cluster;
  AddNodes(cluster, 2, "4");
  cluster.StartScheduler();
  cluster.Create(kube::resources::kPodGroups, "default", PodGroupJson("kept", 2));
  for (int i = 0; i < 2; ++i) {
    cluster.Create(kPods, "default", PodJson(Member("kept", "kept-" + std::to_string(i), "1")));
  }
  ASSERT_TRUE(WaitUntil([&] { return BoundPerGroup(cluster.Pods())["kept"] == 2; }));
  ASSERT_TRUE(WaitUntil([&] { return HasProtection(cluster, "kept"); }));
  for (int i = 0; i < 2; ++i) {
    api::DeleteOptions options;
    options.grace_period_seconds = 0;
    ASSERT_TRUE(
        cluster.store().Delete(kPods, "default", "kept-" + std::to_string(i), options).ok());
  }
  ASSERT_TRUE(WaitUntil([&] { return !HasProtection(cluster, "kept"); }));
}

}  // namespace gang_test
}  // namespace copse::scheduler::testing

namespace copse::scheduler::testing {
namespace gang_test {

std::vector<std::string> FailedSchedulingEvents(Cluster& cluster) {
  std::vector<std::string> out;
  auto list = cluster.store().List(kube::resources::kEvents, {});
  if (!list.ok()) return out;
  for (const auto& item : list->items) {
    if (item->json.find("\"FailedScheduling\"") != std::string::npos) out.push_back(item->json);
  }
  return out;
}

// Members of a gang created in one burst are placed without a word: the
// "waiting for members" report is due only after waiting_report_delay, on
// the scheduler's clock, which this test never advances.
TEST(GangIntegration, MembersOfABurstWriteNoWaitingStatus) {
  Cluster cluster;
  AddNodes(cluster, 2, "4");
  SchedulerOptions options;
  options.clock = std::make_shared<FakeClock>();
  cluster.StartScheduler(options);
  cluster.Create(kube::resources::kPodGroups, "default", PodGroupJson("burst", 3));
  for (int i = 0; i < 3; ++i) {
    cluster.Create(kPods, "default", PodJson(Member("burst", "burst-" + std::to_string(i), "1")));
  }
  ASSERT_TRUE(WaitUntil([&] { return BoundPerGroup(cluster.Pods())["burst"] == 3; }));
  for (int i = 0; i < 3; ++i) {
    auto pod = cluster.GetPod("default", "burst-" + std::to_string(i));
    ASSERT_TRUE(pod.has_value());
    const kube::Condition* c = PodScheduledCondition(*pod);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->status, "True") << c->message;
  }
  EXPECT_TRUE(FailedSchedulingEvents(cluster).empty());
}

// Choosing among queued gangs (SchedulerOptions::gang_burst_window): a big
// gang that arrived first would take both nodes first come, first served;
// ordered within the burst, the two small gangs that fit beside each other
// go first and the big one stays pending, whole.
TEST(GangIntegration, BurstWindowPlacesMoreGangsThanArrivalOrder) {
  Cluster cluster;
  AddNodes(cluster, 2, "8");
  SchedulerOptions options;
  options.gang_burst_window = std::chrono::seconds(2);
  cluster.StartScheduler(options);
  for (const auto& [name, cpu] : {std::pair<std::string, std::string>{"big", "8"},
                                  std::pair<std::string, std::string>{"left", "4"},
                                  std::pair<std::string, std::string>{"right", "4"}}) {
    cluster.Create(kube::resources::kPodGroups, "default", PodGroupJson(name, 2));
    for (int i = 0; i < 2; ++i) {
      cluster.Create(kPods, "default", PodJson(Member(name, name + "-" + std::to_string(i), cpu)));
    }
  }
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto bound = BoundPerGroup(cluster.Pods());
        kube::PodGroup group;
        const kube::Condition* c = GroupCondition(cluster, "big", &group);
        return bound["left"] == 2 && bound["right"] == 2 && c != nullptr && c->status == "False";
      },
      std::chrono::seconds(30)));
  const auto pods = cluster.Pods();
  for (const std::string& p : CheckInvariants(cluster.Nodes(), pods)) ADD_FAILURE() << p;
  EXPECT_EQ(BoundPerGroup(pods)["big"], 0);
}

// The exact plan of a burst (scheduler/burst_plan.h) on two empty 8-GPU
// nodes: "small" (2 pods x 2 GPUs) and "large" (2 x 6). GangBurst's order
// runs small first, and packing puts both its pods on one node, which
// leaves no room for large; first fit does the same. The plan splits small
// over the two nodes and places both gangs. Run twice: with the plan (the
// default budget), and with gangBurstPlanBudget 0 as the contrast.
TEST(GangIntegration, BurstPlanSplitsAGangSoThatTheNextOneFits) {
  auto run = [](Clock::Duration plan_budget) {
    Cluster cluster;
    for (int i = 0; i < 2; ++i) {
      NodeSpec node;
      node.name = "gpu-" + std::to_string(i);
      node.extra_allocatable = R"(,"nvidia.com/gpu":"8")";
      cluster.Create(kNodes, "", NodeJson(node));
    }
    for (const auto& [name, gpus] : {std::pair<std::string, std::string>{"small", "2"},
                                     std::pair<std::string, std::string>{"large", "6"}}) {
      cluster.Create(kube::resources::kPodGroups, "default", PodGroupJson(name, 2));
      for (int i = 0; i < 2; ++i) {
        std::string json = PodJson(Member(name, name + "-" + std::to_string(i), "100m"));
        const std::string requests = R"("requests":{"cpu":"100m","memory":"64Mi"})";
        const size_t at = json.find(requests);
        EXPECT_NE(at, std::string::npos);
        if (at == std::string::npos) return std::map<std::string, int>{};
        json.replace(at, requests.size(),
                     R"("requests":{"cpu":"100m","memory":"64Mi","nvidia.com/gpu":")" + gpus +
                         R"("},"limits":{"nvidia.com/gpu":")" + gpus + R"("})");
        cluster.Create(kPods, "default", json);
      }
    }
    // Everything exists before the scheduler starts: one burst.
    SchedulerOptions options;
    options.gang_burst_window = std::chrono::milliseconds(500);
    options.gang_burst_plan_budget = plan_budget;
    cluster.StartScheduler(options);
    EXPECT_TRUE(WaitUntil(
        [&] {
          auto bound = BoundPerGroup(cluster.Pods());
          kube::PodGroup group;
          const kube::Condition* large = GroupCondition(cluster, "large", &group);
          return bound["small"] == 2 &&
                 (bound["large"] == 2 || (large != nullptr && large->status == "False"));
        },
        std::chrono::seconds(30)));
    const auto pods = cluster.Pods();
    for (const std::string& p : CheckInvariants(cluster.Nodes(), pods)) ADD_FAILURE() << p;
    std::map<std::string, int> gpus_on;
    for (const kube::Pod& pod : pods) {
      if (pod.spec.node_name.empty()) continue;
      gpus_on[pod.spec.node_name] += pod.meta.name.starts_with("large") ? 6 : 2;
    }
    for (const auto& [node, gpus] : gpus_on) EXPECT_LE(gpus, 8) << node;
    auto bound = BoundPerGroup(pods);
    EXPECT_TRUE(bound["large"] == 0 || bound["large"] == 2) << "all or nothing";
    return bound;
  };
  auto planned = run(std::chrono::milliseconds(5));
  EXPECT_EQ(planned["small"], 2);
  EXPECT_EQ(planned["large"], 2) << "the plan places both gangs";
  auto ordered = run(Clock::Duration::zero());
  EXPECT_EQ(ordered["small"], 2);
  EXPECT_EQ(ordered["large"], 0) << "without a plan, small is packed on one node";
}

// A member that keeps waiting is told why once the delay has passed.
TEST(GangIntegration, AMemberStillWaitingAfterTheDelayIsTold) {
  Cluster cluster;
  AddNodes(cluster, 2, "4");
  auto clock = std::make_shared<FakeClock>();
  SchedulerOptions options;
  options.clock = clock;
  options.waiting_report_delay = std::chrono::seconds(5);
  cluster.StartScheduler(options);
  cluster.Create(kube::resources::kPodGroups, "default", PodGroupJson("short", 3));
  cluster.Create(kPods, "default", PodJson(Member("short", "short-0", "1")));
  const auto started = clock->Now();
  ASSERT_TRUE(WaitUntil([&] {
    clock->Advance(std::chrono::milliseconds(100));
    auto pod = cluster.GetPod("default", "short-0");
    const kube::Condition* c = pod ? PodScheduledCondition(*pod) : nullptr;
    return c != nullptr && c->reason == "Unschedulable";
  }));
  EXPECT_GE(clock->Now() - started, std::chrono::seconds(5));
  auto pod = cluster.GetPod("default", "short-0");
  EXPECT_EQ(PodScheduledCondition(*pod)->message,
            "scheduling.k8s.io/v1alpha2 PodGroup \"default/short\": waiting for members: 3 pods "
            "required, fewer observed so far");
  // The event is a write of its own, sent after the condition's patch: it
  // may land a moment later.
  WaitUntil([&] { return !FailedSchedulingEvents(cluster).empty(); });
  EXPECT_EQ(FailedSchedulingEvents(cluster).size(), 1u);
}

}  // namespace gang_test
}  // namespace copse::scheduler::testing
