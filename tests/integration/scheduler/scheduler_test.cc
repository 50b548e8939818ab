// The scheduler end to end against the embedded API server: a mixed workload
// on labelled and tainted nodes with invariant checks, failure messages,
// preemption (minimal victims, preemptionPolicy Never, PDBs), restart while
// pods are pending, and pods of other schedulers.

#include <gtest/gtest.h>

#include <random>
#include <regex>
#include <set>

#include "tests/integration/scheduler/harness.h"

namespace copse::scheduler::testing {
namespace scheduler_test {

using kube::resources::kNodes;
using kube::resources::kPods;

const char* const kZones[] = {"zone-a", "zone-b", "zone-c", "zone-d"};
constexpr const char* kTaint = R"([{"key":"dedicated","value":"infer","effect":"NoSchedule"}])";

// Sum of the "<count> <reason>" entries of "0/N nodes are available: ..."
// (before any " preemption:" part); -1 when the message has another form.
int SumOfNodeCounts(const std::string& message, int* total) {
  std::smatch m;
  static const std::regex head(R"(^0/(\d+) nodes are available: (.*)$)");
  if (!std::regex_match(message, m, head)) return -1;
  *total = std::stoi(m[1]);
  std::string reasons = m[2];
  if (auto p = reasons.find(" preemption:"); p != std::string::npos) reasons = reasons.substr(0, p);
  int sum = 0;
  static const std::regex entry(R"((\d+) [^,]+)");
  for (auto it = std::sregex_iterator(reasons.begin(), reasons.end(), entry);
       it != std::sregex_iterator(); ++it) {
    sum += std::stoi((*it)[1]);
  }
  return sum;
}

TEST(SchedulerIntegration, ThousandMixedPodsOnHundredNodesKeepInvariants) {
  Cluster cluster;
  // 100 nodes in 4 zones; 20 tainted dedicated=infer:NoSchedule (5 per zone).
  for (int i = 0; i < 100; ++i) {
    NodeSpec node;
    node.name = "node-" + std::to_string(i);
    node.labels["topology.kubernetes.io/zone"] = kZones[i % 4];
    node.labels["tier"] = i % 2 == 0 ? "even" : "odd";
    if (i % 5 == 0) {
      node.taints_json = kTaint;
      node.labels["dedicated"] = "infer";
    }
    cluster.Create(kNodes, "", NodeJson(node));
  }
  cluster.StartScheduler();

  std::mt19937 rng(7);
  std::set<std::string> impossible;
  for (int i = 0; i < 1000; ++i) {
    PodSpecOptions p;
    p.name = "pod-" + std::to_string(i);
    p.cpu = std::to_string(100 + static_cast<int>(rng() % 10) * 100) + "m";
    p.memory = std::to_string(128 + static_cast<int>(rng() % 8) * 128) + "Mi";
    const int kind = static_cast<int>(rng() % 100);
    if (kind < 10) {
      p.extra_spec = R"(,"nodeSelector":{"topology.kubernetes.io/zone":")" +
                     std::string(kZones[rng() % 4]) + "\"}";
    } else if (kind < 20) {
      p.extra_spec =
          R"(,"tolerations":[{"key":"dedicated","operator":"Equal","value":"infer","effect":"NoSchedule"}],)"
          R"("affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"dedicated","operator":"In","values":["infer"]}]}]}}})";
    } else if (kind < 25) {
      p.extra_spec =
          R"(,"containers":[{"name":"main","image":"pause","ports":[{"containerPort":80,"hostPort":8080}],"resources":{"requests":{"cpu":")" +
          p.cpu + R"(","memory":")" + p.memory + R"("}}}])";
    } else if (kind < 35) {
      p.labels["app"] = "spread";
      p.extra_spec =
          R"(,"topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"topology.kubernetes.io/zone","whenUnsatisfiable":"DoNotSchedule","labelSelector":{"matchLabels":{"app":"spread"}}}])";
    } else if (kind < 40) {
      p.labels["app"] = "anti";
      p.extra_spec =
          R"(,"affinity":{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"topologyKey":"kubernetes.io/hostname","labelSelector":{"matchLabels":{"app":"anti"}}}]}})";
    } else if (kind < 45) {
      p.extra_spec =
          R"(,"affinity":{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":50,"preference":{"matchExpressions":[{"key":"tier","operator":"In","values":["odd"]}]}}]}})";
    } else if (kind < 47) {
      p.cpu = "40";  // more than any node has
      p.memory = "128Mi";
      impossible.insert(p.name);
    }
    // Containers replaced by the host-port variant: keep exactly one containers key.
    std::string json = PodJson(p);
    if (kind >= 20 && kind < 25) {
      const std::string containers =
          R"(,"containers":[{"name":"main","image":"pause","resources":{"requests":{"cpu":")" +
          p.cpu + R"(","memory":")" + p.memory + R"("}}}])";
      json.replace(json.find(containers), containers.size(), "");
    }
    cluster.Create(kPods, "default", json);
  }

  // Every pod ends bound or with PodScheduled=False.
  ASSERT_TRUE(WaitUntil(
      [&] {
        for (const kube::Pod& pod : cluster.Pods()) {
          if (!pod.spec.node_name.empty()) continue;
          const kube::Condition* c = PodScheduledCondition(pod);
          if (c == nullptr || c->status != "False") return false;
        }
        return true;
      },
      std::chrono::seconds(120)));

  const std::vector<kube::Pod> pods = cluster.Pods();
  const std::vector<std::string> problems = CheckInvariants(cluster.Nodes(), pods);
  for (const std::string& p : problems) ADD_FAILURE() << p;
  size_t bound = 0;
  for (const kube::Pod& pod : pods) {
    if (!pod.spec.node_name.empty()) {
      ++bound;
      EXPECT_FALSE(impossible.contains(pod.meta.name)) << pod.meta.name << " cannot fit anywhere";
      continue;
    }
    const kube::Condition* c = PodScheduledCondition(pod);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->reason, "Unschedulable") << pod.meta.name;
    int total = 0;
    EXPECT_EQ(SumOfNodeCounts(c->message, &total), 100) << pod.meta.name << ": " << c->message;
    EXPECT_EQ(total, 100) << c->message;
  }
  // Everything except the impossible pods (and anti-affinity pods beyond one
  // per node, which cannot exceed 100) fits this cluster.
  EXPECT_GE(bound, pods.size() - impossible.size() - 5);
  for (const std::string& name : impossible) {
    auto pod = cluster.GetPod("default", name);
    ASSERT_TRUE(pod.has_value());
    const kube::Condition* c = PodScheduledCondition(*pod);
    ASSERT_NE(c, nullptr);
    EXPECT_NE(c->message.find("Insufficient cpu"), std::string::npos) << c->message;
  }
}

void MakePriorityClasses(Cluster& cluster) {
  cluster.Create(
      kube::resources::kPriorityClasses, "",
      R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"low"},"value":10})");
  cluster.Create(
      kube::resources::kPriorityClasses, "",
      R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"high"},"value":1000})");
}

// Two 4-cpu nodes full of 1-cpu low-priority pods.
void FillTwoNodes(Cluster& cluster, const std::map<std::string, std::string>& labels_a = {}) {
  for (int n = 0; n < 2; ++n) {
    NodeSpec node;
    node.name = "node-" + std::to_string(n);
    node.cpu = "4";
    cluster.Create(kNodes, "", NodeJson(node));
  }
  cluster.StartScheduler();
  for (int i = 0; i < 8; ++i) {
    PodSpecOptions p;
    p.name = "low-" + std::to_string(i);
    p.cpu = "1";
    p.priority_class = "low";
    p.labels = i < 4 ? labels_a : std::map<std::string, std::string>{};
    p.labels["slot"] = std::to_string(i);
    // Pin the first four to node-0 so the PDB test knows where they are.
    p.extra_spec = R"(,"nodeSelector":{"kubernetes.io/hostname":"node-)" +
                   std::to_string(i < 4 ? 0 : 1) + "\"}";
    cluster.Create(kPods, "default", PodJson(p));
  }
  ASSERT_TRUE(WaitUntil([&] {
    int bound = 0;
    for (const kube::Pod& pod : cluster.Pods()) bound += !pod.spec.node_name.empty();
    return bound == 8;
  }));
}

TEST(SchedulerIntegration, PreemptionEvictsMinimalVictimsThenBinds) {
  Cluster cluster;
  MakePriorityClasses(cluster);
  FillTwoNodes(cluster);
  PodSpecOptions high;
  high.name = "high";
  high.cpu = "2";
  high.priority_class = "high";
  cluster.Create(kPods, "default", PodJson(high));

  ASSERT_TRUE(WaitUntil([&] {
    auto pod = cluster.GetPod("default", "high");
    return pod.has_value() && !pod->spec.node_name.empty();
  }));
  const std::vector<kube::Pod> pods = cluster.Pods();
  size_t low_left = 0;
  std::string high_node;
  for (const kube::Pod& pod : pods) {
    if (pod.meta.name == "high") high_node = pod.spec.node_name;
    if (pod.meta.name.starts_with("low-") && !pod.meta.deletion_timestamp.has_value()) ++low_left;
  }
  EXPECT_EQ(low_left, 6u) << "exactly two 1-cpu victims make room for a 2-cpu pod";
  for (const std::string& p : CheckInvariants(cluster.Nodes(), pods)) ADD_FAILURE() << p;
  EXPECT_GE(cluster.scheduler()->stats().preemption_attempts, 1u);
  EXPECT_EQ(cluster.scheduler()->stats().preemption_victims, 2u);
  EXPECT_FALSE(high_node.empty());
}

TEST(SchedulerIntegration, PreemptionPolicyNeverEvictsNobody) {
  Cluster cluster;
  MakePriorityClasses(cluster);
  FillTwoNodes(cluster);
  PodSpecOptions high;
  high.name = "polite";
  high.cpu = "2";
  high.priority_class = "high";
  high.extra_spec = R"(,"preemptionPolicy":"Never")";
  cluster.Create(kPods, "default", PodJson(high));
  ASSERT_TRUE(WaitUntil([&] {
    auto pod = cluster.GetPod("default", "polite");
    const kube::Condition* c = pod ? PodScheduledCondition(*pod) : nullptr;
    return c != nullptr && c->status == "False";
  }));
  auto pod = cluster.GetPod("default", "polite");
  ASSERT_TRUE(pod.has_value());
  EXPECT_TRUE(pod->spec.node_name.empty());
  const kube::Condition* c = PodScheduledCondition(*pod);
  EXPECT_NE(c->message.find("preemption: not eligible due to preemptionPolicy=Never."),
            std::string::npos)
      << c->message;
  size_t low_left = 0;
  for (const kube::Pod& p : cluster.Pods()) {
    low_left += p.meta.name.starts_with("low-") && !p.meta.deletion_timestamp.has_value();
  }
  EXPECT_EQ(low_left, 8u);
  EXPECT_EQ(cluster.scheduler()->stats().preemption_victims, 0u);
}

TEST(SchedulerIntegration, PreemptionAvoidsPdbViolationWhenAnAlternativeExists) {
  Cluster cluster;
  MakePriorityClasses(cluster);
  // node-0's pods are protected by a PDB allowing no disruption.
  cluster.Create(
      kube::resources::kPodDisruptionBudgets, "default",
      R"({"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"guard","namespace":"default"},"spec":{"minAvailable":4,"selector":{"matchLabels":{"guarded":"yes"}}}})");
  FillTwoNodes(cluster, {{"guarded", "yes"}});
  // Wait for the disruption controller to count the healthy guarded pods.
  ASSERT_TRUE(WaitUntil([&] {
    auto got = cluster.store().Get(kube::resources::kPodDisruptionBudgets, "default", "guard");
    return got.ok() && (*got)->json.find("\"currentHealthy\":4") != std::string::npos;
  }));
  PodSpecOptions high;
  high.name = "high";
  high.cpu = "2";
  high.priority_class = "high";
  cluster.Create(kPods, "default", PodJson(high));
  ASSERT_TRUE(WaitUntil([&] {
    auto pod = cluster.GetPod("default", "high");
    return pod.has_value() && !pod->spec.node_name.empty();
  }));
  auto pod = cluster.GetPod("default", "high");
  EXPECT_EQ(pod->spec.node_name, "node-1") << "victims come from the unprotected node";
  for (const kube::Pod& p : cluster.Pods()) {
    if (p.meta.labels.contains("guarded")) {
      EXPECT_FALSE(p.meta.deletion_timestamp.has_value()) << p.meta.name << " is protected";
    }
  }
}

TEST(SchedulerIntegration, RestartWithPendingPodsBindsEachExactlyOnce) {
  Cluster cluster;
  for (int i = 0; i < 20; ++i) {
    NodeSpec node;
    node.name = "node-" + std::to_string(i);
    node.cpu = "8";
    cluster.Create(kNodes, "", NodeJson(node));
  }
  cluster.StartScheduler();
  for (int i = 0; i < 400; ++i) {
    PodSpecOptions p;
    p.name = "pod-" + std::to_string(i);
    p.cpu = "300m";
    cluster.Create(kPods, "default", PodJson(p));
    if (i == 150) cluster.StopScheduler();  // killed while hundreds are pending
  }
  size_t bound_before = 0;
  for (const kube::Pod& pod : cluster.Pods()) bound_before += !pod.spec.node_name.empty();
  EXPECT_LT(bound_before, 400u);
  cluster.StartScheduler();
  ASSERT_TRUE(WaitUntil([&] {
    size_t bound = 0;
    for (const kube::Pod& pod : cluster.Pods()) bound += !pod.spec.node_name.empty();
    return bound == 400;  // 400 * 0.3 = 120 cpu of 160
  }));
  const auto pods = cluster.Pods();
  for (const std::string& p : CheckInvariants(cluster.Nodes(), pods)) ADD_FAILURE() << p;
  // The API server rejects a second bind (409), so each pod has one node; the
  // new scheduler's cache saw every earlier binding.
  EXPECT_EQ(cluster.scheduler()->stats().bind_failures, 0u);
}

// A bind the server applied but whose reply was lost (a 500 after the
// write) must not free the node for others: the scheduler reads the pod back
// before forgetting it. The cluster holds exactly 400 of the 500 pods, so any
// capacity freed by mistake shows up as a node over allocatable.
TEST(SchedulerIntegration, LostBindRepliesNeverOvercommit) {
  api::Options server_options;
  server_options.bind_lost_reply_rate = 0.3;
  Cluster cluster(server_options);
  for (int i = 0; i < 20; ++i) {
    NodeSpec node;
    node.name = "node-" + std::to_string(i);
    node.cpu = "8";
    cluster.Create(kNodes, "", NodeJson(node));
  }
  cluster.StartScheduler();
  for (int i = 0; i < 500; ++i) {
    PodSpecOptions p;
    p.name = "pod-" + std::to_string(i);
    p.cpu = "400m";
    cluster.Create(kPods, "default", PodJson(p));
  }
  auto bound_count = [&] {
    size_t bound = 0;
    for (const kube::Pod& pod : cluster.Pods()) bound += !pod.spec.node_name.empty();
    return bound;
  };
  ASSERT_TRUE(WaitUntil([&] { return bound_count() == 400; })) << bound_count() << " bound";
  // The 100 left over end Unschedulable (the cluster is full), never bound.
  ASSERT_TRUE(WaitUntil([&] {
    size_t unschedulable = 0;
    for (const kube::Pod& pod : cluster.Pods()) {
      const kube::Condition* c = PodScheduledCondition(pod);
      unschedulable += pod.spec.node_name.empty() && c != nullptr && c->reason == "Unschedulable";
    }
    return unschedulable == 100;
  }));
  EXPECT_EQ(bound_count(), 400u);
  for (const std::string& p : CheckInvariants(cluster.Nodes(), cluster.Pods())) ADD_FAILURE() << p;
  EXPECT_GT(cluster.scheduler()->stats().binds_verified, 50u) << "the lost replies were injected";
}

TEST(SchedulerIntegration, OtherSchedulersPodsAreUntouchedButCount) {
  Cluster cluster;
  NodeSpec node;
  node.name = "only";
  node.cpu = "4";
  cluster.Create(kNodes, "", NodeJson(node));
  // A pod of another scheduler, bound by "it", using 3 of 4 cpus.
  PodSpecOptions other;
  other.name = "theirs-bound";
  other.cpu = "3";
  other.scheduler = "default-scheduler";
  cluster.Create(kPods, "default", PodJson(other));
  ASSERT_TRUE(
      cluster.store()
          .Bind(
              "default", "theirs-bound",
              R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"theirs-bound"},"target":{"kind":"Node","name":"only"}})")
          .ok());
  // A pending pod of another scheduler: copse must leave it alone.
  other.name = "theirs-pending";
  other.cpu = "100m";
  cluster.Create(kPods, "default", PodJson(other));
  cluster.StartScheduler();

  PodSpecOptions mine;
  mine.name = "mine-fits";
  mine.cpu = "1";
  cluster.Create(kPods, "default", PodJson(mine));
  mine.name = "mine-too-big";
  mine.cpu = "2";
  cluster.Create(kPods, "default", PodJson(mine));
  ASSERT_TRUE(WaitUntil([&] {
    auto fits = cluster.GetPod("default", "mine-fits");
    auto big = cluster.GetPod("default", "mine-too-big");
    const kube::Condition* c = big ? PodScheduledCondition(*big) : nullptr;
    return fits && !fits->spec.node_name.empty() && c != nullptr && c->status == "False";
  }));
  auto big = cluster.GetPod("default", "mine-too-big");
  EXPECT_EQ(PodScheduledCondition(*big)->message,
            "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 "
            "No preemption victims found for incoming pod.");
  auto pending = cluster.GetPod("default", "theirs-pending");
  ASSERT_TRUE(pending.has_value());
  EXPECT_TRUE(pending->spec.node_name.empty());
  EXPECT_EQ(PodScheduledCondition(*pending), nullptr) << "copse wrote status on a foreign pod";
}

TEST(SchedulerIntegration, SchedulingGatesHoldPodsUntilRemoved) {
  Cluster cluster;
  NodeSpec node;
  node.name = "n";
  cluster.Create(kNodes, "", NodeJson(node));
  cluster.StartScheduler();
  PodSpecOptions p;
  p.name = "gated";
  p.extra_spec = R"(,"schedulingGates":[{"name":"example.com/wait"}])";
  cluster.Create(kPods, "default", PodJson(p));
  // The API server marks the pod gated at creation; the scheduler keeps it
  // in the gated pool without a cycle.
  auto gated = cluster.GetPod("default", "gated");
  ASSERT_TRUE(gated.has_value());
  const kube::Condition* c = PodScheduledCondition(*gated);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->reason, "SchedulingGated");
  EXPECT_EQ(c->message, "Scheduling is blocked due to non-empty scheduling gates");
  ASSERT_TRUE(WaitUntil([&] { return cluster.scheduler()->stats().gated_units == 1; }));
  EXPECT_EQ(cluster.scheduler()->stats().attempts, 0u) << "gated pods cost no cycles";
  auto patched = cluster.store().Patch(kPods, "default", "gated", api::PatchType::kMerge,
                                       R"({"spec":{"schedulingGates":null}})");
  ASSERT_TRUE(patched.ok()) << patched.error().ToString();
  ASSERT_TRUE(WaitUntil([&] {
    auto pod = cluster.GetPod("default", "gated");
    return pod.has_value() && pod->spec.node_name == "n";
  }));
}

// SchedulerOptions::write_thread false: binds and status writes share the
// informers' client and I/O threads (every other test uses the default, a
// client of their own on a dedicated thread).
TEST(SchedulerIntegration, WritesOnTheInformersClientStillBind) {
  Cluster cluster;
  NodeSpec node;
  node.name = "n";
  cluster.Create(kNodes, "", NodeJson(node));
  SchedulerOptions options;
  options.write_thread = false;
  cluster.StartScheduler(options);
  for (int i = 0; i < 3; ++i) {
    PodSpecOptions p;
    p.name = "shared-" + std::to_string(i);
    cluster.Create(kPods, "default", PodJson(p));
  }
  ASSERT_TRUE(WaitUntil([&] {
    for (int i = 0; i < 3; ++i) {
      auto pod = cluster.GetPod("default", "shared-" + std::to_string(i));
      if (!pod.has_value() || pod->spec.node_name != "n") return false;
    }
    return true;
  }));
  // Each bind's completion reaches the loop too.
  EXPECT_TRUE(WaitUntil([&] { return cluster.scheduler()->stats().bound == 3u; }));
}

// The loop has no periodic wake-up: idle on a clock that does not pass by
// itself, it sleeps until an event, a Wake or a move of the clock. (It used
// to wake every second of real time, which hid any lost wake-up.) The one
// real-time wait here watches for wake-ups that must not come.
TEST(SchedulerIntegration, AnIdleLoopWakesOnlyWhenTheClockMovesOrSomethingHappens) {
  Cluster cluster;
  NodeSpec node;
  node.name = "n0";
  cluster.Create(kNodes, "", NodeJson(node));
  auto clock = std::make_shared<FakeClock>();
  SchedulerOptions options;
  options.clock = clock;
  cluster.StartScheduler(options);
  PodSpecOptions pod;
  pod.name = "p0";
  cluster.Create(kPods, "default", PodJson(pod));
  ASSERT_TRUE(WaitUntil([&] {
    const std::optional<kube::Pod> p = cluster.GetPod("default", "p0");
    return p.has_value() && p->spec.node_name == "n0";
  }));
  ASSERT_TRUE(WaitUntil([&] { return cluster.scheduler()->IdleState().idle; }));
  // Late events (the pod's status as its node reports it) may still come
  // and wake it; a wake-up that no event explains may not.
  const SchedulerIdleState before = cluster.scheduler()->IdleState();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const SchedulerIdleState after = cluster.scheduler()->IdleState();
  EXPECT_LE(after.loop_wakes - before.loop_wakes, after.inbox_events - before.inbox_events)
      << "the loop woke with no event, no Wake and no move of its clock";
  clock->Advance(std::chrono::milliseconds(1));
  EXPECT_TRUE(WaitUntil([&] {
    const SchedulerIdleState now = cluster.scheduler()->IdleState();
    return now.loop_wakes - after.loop_wakes > now.inbox_events - after.inbox_events;
  })) << "a move of the clock did not wake the loop";
  // An event wakes it too, and is scheduled without any move of the clock.
  const uint64_t moved = cluster.scheduler()->IdleState().loop_wakes;
  pod.name = "p1";
  cluster.Create(kPods, "default", PodJson(pod));
  ASSERT_TRUE(WaitUntil([&] {
    const std::optional<kube::Pod> p = cluster.GetPod("default", "p1");
    return p.has_value() && p->spec.node_name == "n0";
  }));
  EXPECT_GT(cluster.scheduler()->IdleState().loop_wakes, moved);
}

}  // namespace scheduler_test
}  // namespace copse::scheduler::testing
