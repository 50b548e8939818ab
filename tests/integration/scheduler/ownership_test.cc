// Ownership (issue 14): copse writes conditions, events, finalizers and
// status only for pods whose schedulerName is one of its profiles and for
// groups whose members are all copse's. Groups of other schedulers' pods are
// never touched; a group mixing schedulers gets PodGroupScheduled=False,
// reason MixedSchedulers, and its copse members stay unbound.

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "kube/pod_group.h"
#include "tests/integration/scheduler/harness.h"

namespace copse::scheduler::testing {
namespace ownership_test {

using kube::resources::kCopsePodGroups;
using kube::resources::kNodes;
using kube::resources::kPodGroups;
using kube::resources::kPods;

std::string WorkloadGroupJson(const std::string& name, int min_count) {
  return R"({"apiVersion":"scheduling.k8s.io/v1alpha2","kind":"PodGroup","metadata":{"name":")" +
         name + R"(","namespace":"default"},"spec":{"schedulingPolicy":{"gang":{"minCount":)" +
         std::to_string(min_count) + "}}}}";
}

std::string CopseGroupJson(const std::string& name, int min_member) {
  return R"({"apiVersion":"scheduling.copse.dev/v1alpha1","kind":"PodGroup","metadata":{"name":")" +
         name + R"(","namespace":"default"},"spec":{"minMember":)" + std::to_string(min_member) +
         "}}";
}

PodSpecOptions WorkloadMember(const std::string& group, const std::string& name,
                              const std::string& scheduler) {
  PodSpecOptions p;
  p.name = name;
  p.scheduler = scheduler;
  p.extra_spec = R"(,"schedulingGroup":{"podGroupName":")" + group + "\"}";
  return p;
}

PodSpecOptions CopseMember(const std::string& group, const std::string& name,
                           const std::string& scheduler) {
  PodSpecOptions p;
  p.name = name;
  p.scheduler = scheduler;
  p.labels["scheduling.copse.dev/pod-group"] = group;
  return p;
}

nlohmann::json Object(Cluster& cluster, const kube::ResourceRef& resource,
                      const std::string& name) {
  auto got = cluster.store().Get(resource, "default", name);
  if (!got.ok()) return nullptr;
  return nlohmann::json::parse((*got)->json);
}

// Names of the objects events were recorded about (any kind).
std::multiset<std::string> EventSubjects(Cluster& cluster) {
  std::multiset<std::string> out;
  auto list = cluster.store().List(kube::resources::kEvents, {});
  if (!list.ok()) return out;
  for (const auto& item : list->items) {
    nlohmann::json event = nlohmann::json::parse(item->json, nullptr, false);
    if (event.is_discarded()) continue;
    const nlohmann::json involved = event.value("involvedObject", nlohmann::json::object());
    out.insert(involved.value("name", "") + " " + event.value("reason", ""));
  }
  return out;
}

bool Bound(Cluster& cluster, const std::string& name) {
  auto pod = cluster.GetPod("default", name);
  return pod.has_value() && !pod->spec.node_name.empty();
}

// A v1alpha2 PodGroup and a copse PodGroup of default-scheduler pods stay as
// their owners made them while copse schedules a gang of its own beside
// them: no condition on the pods or the groups, no event, no finalizer, no
// status, and no unit of theirs in copse's queue.
TEST(OwnershipIntegration, GroupsOfOtherSchedulersAreNeverTouched) {
  Cluster cluster;
  InstallCopseCrds(cluster);
  for (int i = 0; i < 2; ++i) {
    NodeSpec node;
    node.name = "node-" + std::to_string(i);
    node.cpu = "8";
    cluster.Create(kNodes, "", NodeJson(node));
  }
  cluster.StartScheduler();
  // Theirs: a gang of two (both members there) and one still short of a member.
  cluster.Create(kPodGroups, "default", WorkloadGroupJson("kube-gang", 2));
  cluster.Create(kPodGroups, "default", WorkloadGroupJson("kube-short", 3));
  cluster.Create(kCopsePodGroups, "default", CopseGroupJson("other-gang", 2));
  const std::vector<std::string> theirs = {"kube-0", "kube-1", "short-0", "other-0", "other-1"};
  cluster.Create(kPods, "default",
                 PodJson(WorkloadMember("kube-gang", "kube-0", "default-scheduler")));
  cluster.Create(kPods, "default",
                 PodJson(WorkloadMember("kube-gang", "kube-1", "default-scheduler")));
  cluster.Create(kPods, "default",
                 PodJson(WorkloadMember("kube-short", "short-0", "default-scheduler")));
  cluster.Create(kPods, "default",
                 PodJson(CopseMember("other-gang", "other-0", "default-scheduler")));
  cluster.Create(kPods, "default",
                 PodJson(CopseMember("other-gang", "other-1", "default-scheduler")));
  // Ours, beside them, so the window is one of real scheduling.
  cluster.Create(kCopsePodGroups, "default", CopseGroupJson("ours", 2));
  cluster.Create(kPods, "default", PodJson(CopseMember("ours", "ours-0", "copse-scheduler")));
  cluster.Create(kPods, "default", PodJson(CopseMember("ours", "ours-1", "copse-scheduler")));
  ASSERT_TRUE(WaitUntil([&] { return Bound(cluster, "ours-0") && Bound(cluster, "ours-1"); }));

  // The point of this test is a window of scheduling in which nothing happens
  // to the others' objects: 5 s (more than the waiting-report delay, the
  // unschedulable flush and the group backoffs of the harness).
  std::this_thread::sleep_for(std::chrono::seconds(5));

  for (const std::string& name : theirs) {
    auto pod = cluster.GetPod("default", name);
    ASSERT_TRUE(pod.has_value()) << name;
    EXPECT_TRUE(pod->spec.node_name.empty()) << name;
    EXPECT_TRUE(pod->status.conditions.empty()) << name << " got a condition";
    EXPECT_TRUE(pod->status.nominated_node_name.empty()) << name;
  }
  for (const auto& [resource, name] :
       std::vector<std::pair<kube::ResourceRef, std::string>>{{kPodGroups, "kube-gang"},
                                                              {kPodGroups, "kube-short"},
                                                              {kCopsePodGroups, "other-gang"}}) {
    nlohmann::json group = Object(cluster, resource, name);
    ASSERT_FALSE(group.is_null()) << name;
    // The API server's own finalizer (scheduling.k8s.io/podgroup-protection,
    // as kube-apiserver puts on every PodGroup) aside, none is copse's.
    for (const auto& f : group["metadata"].value("finalizers", nlohmann::json::array())) {
      EXPECT_NE(f, kube::kPodGroupProtectionFinalizer) << name << ": " << group.dump();
    }
    EXPECT_TRUE(!group.contains("status") || group["status"].empty() ||
                group["status"] == nlohmann::json::object())
        << name << ": " << group["status"].dump();
  }
  const std::multiset<std::string> events = EventSubjects(cluster);
  for (const std::string& subject : events) {
    const std::string name = subject.substr(0, subject.find(' '));
    for (const std::string& other : theirs) EXPECT_NE(name, other) << subject;
    for (const char* group : {"kube-gang", "kube-short", "other-gang"})
      EXPECT_NE(name, group) << subject;
  }
  EXPECT_TRUE(events.contains("ours-0 Scheduled")) << "copse wrote about its own pods";
  const SchedulerStats stats = cluster.scheduler()->stats();
  EXPECT_EQ(
      stats.active_units + stats.backoff_units + stats.unschedulable_units + stats.gated_units, 0u)
      << "their groups are not in copse's queue";
  nlohmann::json ours = Object(cluster, kCopsePodGroups, "ours");
  ASSERT_FALSE(ours.is_null());
  // Placed, and Ready by the node simulator long since.
  EXPECT_EQ(ours["status"].value("phase", ""), "Running") << "copse reports its own group";
}

// A group whose members name copse and another scheduler is copse's to
// explain, not to schedule: PodGroupScheduled=False, reason MixedSchedulers,
// naming the other scheduler; copse's members are told and stay unbound;
// the other scheduler's member is not written to.
TEST(OwnershipIntegration, AMixedGroupGetsMixedSchedulersAndIsNotBound) {
  Cluster cluster;
  for (int i = 0; i < 2; ++i) {
    NodeSpec node;
    node.name = "node-" + std::to_string(i);
    node.cpu = "8";
    cluster.Create(kNodes, "", NodeJson(node));
  }
  cluster.StartScheduler();
  cluster.Create(kPodGroups, "default", WorkloadGroupJson("mixed", 3));
  cluster.Create(kPods, "default", PodJson(WorkloadMember("mixed", "mixed-0", "copse-scheduler")));
  cluster.Create(kPods, "default", PodJson(WorkloadMember("mixed", "mixed-1", "copse-scheduler")));
  cluster.Create(kPods, "default",
                 PodJson(WorkloadMember("mixed", "mixed-2", "default-scheduler")));
  const kube::Condition* condition = nullptr;
  kube::PodGroup group;
  ASSERT_TRUE(WaitUntil([&] {
    auto got = cluster.store().Get(kPodGroups, "default", "mixed");
    if (!got.ok()) return false;
    auto decoded = kube::PodGroup::Decode((*got)->json);
    if (!decoded.ok()) return false;
    group = std::move(decoded).value();
    condition = kube::FindCondition(group.status.conditions, kube::kPodGroupScheduled);
    return condition != nullptr;
  }));
  EXPECT_EQ(condition->status, "False");
  EXPECT_EQ(condition->reason, "MixedSchedulers");
  EXPECT_NE(condition->message.find("default-scheduler"), std::string::npos) << condition->message;
  // While only copse's members were known the group was copse's, and
  // protected; once mixed, copse takes its finalizer back.
  EXPECT_TRUE(WaitUntil([&] {
    auto got = cluster.store().Get(kPodGroups, "default", "mixed");
    auto decoded =
        got.ok() ? kube::PodGroup::Decode((*got)->json) : Result<kube::PodGroup>(got.error());
    return decoded.ok() &&
           std::find(decoded->meta.finalizers.begin(), decoded->meta.finalizers.end(),
                     kube::kPodGroupProtectionFinalizer) == decoded->meta.finalizers.end();
  }));
  for (const char* name : {"mixed-0", "mixed-1"}) {
    ASSERT_TRUE(WaitUntil([&] {
      auto pod = cluster.GetPod("default", name);
      const kube::Condition* c = pod ? PodScheduledCondition(*pod) : nullptr;
      return c != nullptr && c->status == "False" &&
             c->message.find("different schedulers") != std::string::npos;
    })) << name;
  }
  // Not queued, so never placed: a short window to show it.
  EXPECT_FALSE(WaitUntil([&] { return Bound(cluster, "mixed-0") || Bound(cluster, "mixed-1"); },
                         std::chrono::seconds(1)));
  auto theirs = cluster.GetPod("default", "mixed-2");
  ASSERT_TRUE(theirs.has_value());
  EXPECT_TRUE(theirs->status.conditions.empty()) << "the other scheduler's pod is not ours";
  EXPECT_EQ(cluster.scheduler()->stats().attempts, 0u) << "a mixed group costs no cycle";
}

}  // namespace ownership_test
}  // namespace copse::scheduler::testing
