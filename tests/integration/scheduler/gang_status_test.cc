// What copse tells users about their gangs (issue 15, item 4), against the
// embedded API server with no node simulator: the test plays the kubelet and
// writes the members' status (Ready, Succeeded, Failed) through the API.
//   - A copse PodGroup goes Pending (waiting for members) -> Scheduled (its
//     minimum bound) -> Running (its required members Ready) and back to
//     Scheduled when a required member stops being Ready, -> Failed when a
//     required member fails; its scheduled and ready counts, for the group
//     and each subgroup, follow the members.
//   - A gang whose members all end Succeeded is Succeeded.
//   - A waiting group (one that does not fit, and one short of members)
//     carries copse's finalizer before anything of it is placed, so deleting
//     it leaves it terminating until its pods are gone.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "kube/pod_group.h"
#include "tests/integration/scheduler/harness.h"

namespace copse::scheduler::testing {
namespace gang_status_test {

using kube::resources::kCopsePodGroups;
using kube::resources::kNodes;
using kube::resources::kPodGroups;
using kube::resources::kPods;

std::string CopseGroupJson(const std::string& name, const std::string& spec) {
  return R"({"apiVersion":"scheduling.copse.dev/v1alpha1","kind":"PodGroup","metadata":{"name":")" +
         name + R"(","namespace":"default"},"spec":)" + spec + "}";
}

PodSpecOptions Member(const std::string& group, const std::string& name, const std::string& cpu,
                      const std::string& sub_group = "") {
  PodSpecOptions p;
  p.name = name;
  p.cpu = cpu;
  p.memory = "64Mi";
  p.labels["scheduling.copse.dev/pod-group"] = group;
  if (!sub_group.empty()) p.labels["scheduling.copse.dev/subgroup"] = sub_group;
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

std::optional<kube::CopsePodGroup> GetGroup(Cluster& cluster, const std::string& name) {
  auto got = cluster.store().Get(kCopsePodGroups, "default", name);
  if (!got.ok()) return std::nullopt;
  auto group = kube::CopsePodGroup::Decode((*got)->json);
  if (!group.ok()) return std::nullopt;
  return std::move(group).value();
}

bool Protected(const kube::ObjectMeta& meta) {
  for (const std::string& f : meta.finalizers) {
    if (f == kube::kPodGroupProtectionFinalizer) return true;
  }
  return false;
}

// What a kubelet writes: the pod Running with Ready `ready`.
void SetReady(Cluster& cluster, const std::string& name, bool ready) {
  const std::string status = ready ? "True" : "False";
  const std::string patch =
      R"({"status":{"phase":"Running","conditions":[{"type":"Ready","status":")" + status +
      R"("},{"type":"PodScheduled","status":"True"}]}})";
  auto patched =
      cluster.store().Patch(kPods, "default", name, api::PatchType::kMerge, patch, "status");
  ASSERT_TRUE(patched.ok()) << name << ": " << patched.error().ToString();
}

// What a kubelet writes when the pod's containers ended.
void SetEnded(Cluster& cluster, const std::string& name, bool succeeded) {
  const std::string patch = std::string(R"({"status":{"phase":")") +
                            (succeeded ? "Succeeded" : "Failed") +
                            R"(","conditions":[{"type":"Ready","status":"False"}]}})";
  auto patched =
      cluster.store().Patch(kPods, "default", name, api::PatchType::kMerge, patch, "status");
  ASSERT_TRUE(patched.ok()) << name << ": " << patched.error().ToString();
}

// "phase scheduled/ready leader=s/r workers=s/r": the reported status in one line.
std::string Summary(const kube::CopsePodGroup& group) {
  std::string out = group.status.phase + " " + std::to_string(group.status.scheduled) + "/" +
                    std::to_string(group.status.ready);
  for (const kube::CopseSubGroupStatus& sg : group.status.sub_groups) {
    out += " " + sg.name + "=" + std::to_string(sg.scheduled) + "/" + std::to_string(sg.ready);
  }
  return out;
}

// Waits until the group's status reads `want` (Summary); the last one seen otherwise.
::testing::AssertionResult StatusBecomes(Cluster& cluster, const std::string& name,
                                         const std::string& want) {
  std::string seen;
  const bool ok = WaitUntil(
      [&] {
        auto group = GetGroup(cluster, name);
        seen = group ? Summary(*group) : "(no group)";
        return seen == want;
      },
      std::chrono::seconds(30));
  if (ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "status of " << name << " never became \"" << want
                                       << "\"; last seen \"" << seen << "\"";
}

// A leader and two required workers (minSubGroup 2 of {leader, workers},
// workers minMember 2) plus a third, optional worker. Readiness of the
// required members moves the phase; the optional one's does not.
TEST(GangStatusIntegration, PhaseAndCountsFollowTheMembersFromPendingToRunningToFailed) {
  Cluster cluster({}, /*start_simulator=*/false);
  InstallCopseCrds(cluster);
  AddNodes(cluster, 2, "4");
  cluster.StartScheduler();
  cluster.Create(
      kCopsePodGroups, "default",
      CopseGroupJson("train", R"({"minMember":3,"subGroups":[{"name":"leader","minMember":1},)"
                              R"({"name":"workers","minMember":2}]})"));
  cluster.Create(kPods, "default", PodJson(Member("train", "leader-0", "1", "leader")));
  cluster.Create(kPods, "default", PodJson(Member("train", "worker-0", "1", "workers")));

  // Two of the three required members: copse's group, waiting. It is
  // Pending and already protected from deletion.
  ASSERT_TRUE(StatusBecomes(cluster, "train", "Pending 0/0 leader=0/0 workers=0/0"));
  ASSERT_TRUE(WaitUntil([&] {
    auto group = GetGroup(cluster, "train");
    return group && Protected(group->meta);
  })) << "a waiting group carries the finalizer";
  EXPECT_TRUE(cluster.GetPod("default", "leader-0")->spec.node_name.empty());

  // All members: the gang is bound whole; nobody is Ready yet.
  cluster.Create(kPods, "default", PodJson(Member("train", "worker-1", "1", "workers")));
  cluster.Create(kPods, "default", PodJson(Member("train", "worker-2", "1", "workers")));
  ASSERT_TRUE(StatusBecomes(cluster, "train", "Scheduled 4/0 leader=1/0 workers=3/0"));
  auto group = GetGroup(cluster, "train");
  ASSERT_TRUE(group.has_value());
  const kube::Condition* scheduled =
      kube::FindCondition(group->status.conditions, kube::kPodGroupScheduled);
  ASSERT_NE(scheduled, nullptr);
  EXPECT_EQ(scheduled->status, "True");

  // The leader and one worker Ready: the workers' minimum is not.
  SetReady(cluster, "leader-0", true);
  SetReady(cluster, "worker-0", true);
  ASSERT_TRUE(StatusBecomes(cluster, "train", "Scheduled 4/2 leader=1/1 workers=3/1"));
  // A second worker: every required member is Ready. The optional third
  // worker is not, and need not be.
  SetReady(cluster, "worker-1", true);
  ASSERT_TRUE(StatusBecomes(cluster, "train", "Running 4/3 leader=1/1 workers=3/2"));

  // The leader stops being Ready: the gang is placed but not running.
  SetReady(cluster, "leader-0", false);
  ASSERT_TRUE(StatusBecomes(cluster, "train", "Scheduled 4/2 leader=1/0 workers=3/2"));
  SetReady(cluster, "leader-0", true);
  ASSERT_TRUE(StatusBecomes(cluster, "train", "Running 4/3 leader=1/1 workers=3/2"));

  // The leader fails: without its one required leader the gang is broken.
  SetEnded(cluster, "leader-0", /*succeeded=*/false);
  ASSERT_TRUE(StatusBecomes(cluster, "train", "Failed 3/2 leader=0/0 workers=3/2"));
  // PodGroupScheduled stays True (KEP-4671): the phase says what happened since.
  group = GetGroup(cluster, "train");
  ASSERT_TRUE(group.has_value());
  scheduled = kube::FindCondition(group->status.conditions, kube::kPodGroupScheduled);
  ASSERT_NE(scheduled, nullptr);
  EXPECT_EQ(scheduled->status, "True");
  for (const std::string& p : CheckInvariants(cluster.Nodes(), cluster.Pods())) ADD_FAILURE() << p;
}

// A job-like gang: every member ends Succeeded, one after the other.
TEST(GangStatusIntegration, AGangWhoseMembersAllSucceedIsSucceeded) {
  Cluster cluster({}, /*start_simulator=*/false);
  InstallCopseCrds(cluster);
  AddNodes(cluster, 2, "4");
  cluster.StartScheduler();
  cluster.Create(kCopsePodGroups, "default", CopseGroupJson("job", R"({"minMember":2})"));
  for (const char* name : {"job-0", "job-1"}) {
    cluster.Create(kPods, "default", PodJson(Member("job", name, "1")));
  }
  ASSERT_TRUE(StatusBecomes(cluster, "job", "Scheduled 2/0"));
  SetReady(cluster, "job-0", true);
  SetReady(cluster, "job-1", true);
  ASSERT_TRUE(StatusBecomes(cluster, "job", "Running 2/2"));
  // One done, the other still running: the gang still runs.
  SetEnded(cluster, "job-0", /*succeeded=*/true);
  ASSERT_TRUE(StatusBecomes(cluster, "job", "Running 1/1"));
  SetEnded(cluster, "job-1", /*succeeded=*/true);
  ASSERT_TRUE(StatusBecomes(cluster, "job", "Succeeded 0/0"));
  // Nothing is left to protect: the finalizer is gone.
  ASSERT_TRUE(WaitUntil([&] {
    auto group = GetGroup(cluster, "job");
    return group && !Protected(group->meta);
  }));
}

// A copse PodGroup too big for the cluster and a v1alpha2 PodGroup short of
// members: neither has anything placed, both carry the finalizer, and a
// deleted one stays (terminating) until its pods are gone.
TEST(GangStatusIntegration, AWaitingGroupIsProtectedFromTheStart) {
  Cluster cluster;
  InstallCopseCrds(cluster);
  AddNodes(cluster, 2, "4");
  cluster.StartScheduler();
  // Three pods of 3 cpu on two nodes of 4: never placed.
  cluster.Create(kCopsePodGroups, "default", CopseGroupJson("huge", R"({"minMember":3})"));
  for (int i = 0; i < 3; ++i) {
    cluster.Create(kPods, "default", PodJson(Member("huge", "huge-" + std::to_string(i), "3")));
  }
  cluster.Create(kPodGroups, "default",
                 R"({"apiVersion":"scheduling.k8s.io/v1alpha2","kind":"PodGroup",)"
                 R"("metadata":{"name":"short","namespace":"default"},)"
                 R"("spec":{"schedulingPolicy":{"gang":{"minCount":3}}}})");
  PodSpecOptions lonely;
  lonely.name = "short-0";
  lonely.extra_spec = R"(,"schedulingGroup":{"podGroupName":"short"})";
  cluster.Create(kPods, "default", PodJson(lonely));

  ASSERT_TRUE(StatusBecomes(cluster, "huge", "Unschedulable 0/0"));
  ASSERT_TRUE(WaitUntil([&] {
    auto group = GetGroup(cluster, "huge");
    return group && Protected(group->meta);
  })) << "an unplaceable group carries the finalizer";
  ASSERT_TRUE(WaitUntil([&] {
    auto got = cluster.store().Get(kPodGroups, "default", "short");
    if (!got.ok()) return false;
    auto group = kube::PodGroup::Decode((*got)->json);
    return group.ok() && Protected(group->meta);
  })) << "a v1alpha2 PodGroup waiting for members carries the finalizer";
  for (const kube::Pod& pod : cluster.Pods()) EXPECT_EQ(pod.spec.node_name, "") << pod.meta.name;

  // Deleted while its pods wait: it stays, terminating, with its finalizer.
  ASSERT_TRUE(cluster.store().Delete(kCopsePodGroups, "default", "huge").ok());
  auto group = GetGroup(cluster, "huge");
  ASSERT_TRUE(group.has_value()) << "deleted under its pods";
  EXPECT_TRUE(group->meta.deletion_timestamp.has_value());
  EXPECT_TRUE(Protected(group->meta));
  // Its pods gone, copse lets it go.
  api::DeleteOptions now;
  now.grace_period_seconds = 0;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(cluster.store().Delete(kPods, "default", "huge-" + std::to_string(i), now).ok());
  }
  ASSERT_TRUE(WaitUntil([&] { return !GetGroup(cluster, "huge").has_value(); }));
}

}  // namespace gang_status_test
}  // namespace copse::scheduler::testing
