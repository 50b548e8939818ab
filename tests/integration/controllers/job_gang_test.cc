// Jobs as gangs (Kubernetes 1.36's WorkloadWithJob) and the PodGroup
// protection finalizer, against the embedded API server with the scheduler
// and the workload controllers (tests/integration/controllers/env.h).

#include <algorithm>

#include "apiserver/controllers/job_workload.h"
#include "tests/integration/controllers/env.h"

namespace copse::apiserver::controllers::testing {
namespace job_gang_test {

json IndexedJob(const std::string& name, int parallelism, int completions,
                const std::string& run_for) {
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"completionMode", "Indexed"},
            {"parallelism", parallelism},
            {"completions", completions},
            {"template", Template({{"app", name}}, "busybox",
                                  {{"copse.dev/simulate-run-for", run_for}}, "Never")}}}};
}

bool HasOwner(const json& obj, const std::string& kind, const std::string& uid, bool controller) {
  for (const json& r : obj["metadata"].value("ownerReferences", json::array())) {
    if (r.value("kind", "") == kind && r.value("uid", "") == uid &&
        r.value("controller", false) == controller) {
      return true;
    }
  }
  return false;
}

kube::Job JobNamed(const json& job) {
  kube::Job out;
  out.meta.name = job["metadata"]["name"];
  out.meta.uid = job["metadata"]["uid"];
  return out;
}

TEST(JobGang, AnIndexedJobBecomesOneWorkloadAndOnePodGroupItsPodsJoin) {
  Env env;
  env.Create(kube::resources::kJobs, IndexedJob("train", 4, 4, "300ms"));
  ASSERT_TRUE(env.WaitFor([&] {
    auto j = env.Get(kube::resources::kJobs, "train");
    return j && ConditionStatus(*j, "Complete") == "True";
  })) << env.Get(kube::resources::kJobs, "train")->dump();
  const json job = *env.Get(kube::resources::kJobs, "train");
  const std::string job_uid = job["metadata"]["uid"];

  // The Workload: upstream's name, owned by the Job, one gang template.
  const std::string workload_name = JobWorkloadName(JobNamed(job));
  auto workload = env.Get(kWorkloadsNewest, workload_name);
  ASSERT_TRUE(workload.has_value()) << workload_name;
  EXPECT_TRUE(HasOwner(*workload, "Job", job_uid, true)) << workload->dump();
  EXPECT_EQ((*workload)["spec"]["controllerRef"],
            json::parse(R"({"apiGroup": "batch", "kind": "Job", "name": "train"})"));
  ASSERT_EQ((*workload)["spec"]["podGroupTemplates"].size(), 1u);
  const json& tmpl = (*workload)["spec"]["podGroupTemplates"][0];
  EXPECT_EQ(tmpl["name"], "train-pgt-0");
  EXPECT_EQ(tmpl["schedulingPolicy"], json::parse(R"({"gang": {"minCount": 4}})"));

  // The PodGroup made from it, owned by the Job (controller) and the Workload.
  const std::string group_name = JobPodGroupName(workload_name, "train-pgt-0");
  auto group = env.Get(kPodGroupsNewest, group_name);
  ASSERT_TRUE(group.has_value()) << group_name;
  EXPECT_TRUE(HasOwner(*group, "Job", job_uid, true)) << group->dump();
  EXPECT_TRUE(HasOwner(*group, "Workload", (*workload)["metadata"]["uid"], false)) << group->dump();
  EXPECT_EQ((*group)["spec"]["workloadRef"],
            json({{"workloadName", workload_name}, {"templateName", "train-pgt-0"}}));
  EXPECT_EQ((*group)["spec"]["schedulingPolicy"], json::parse(R"({"gang": {"minCount": 4}})"));
  const json finalizers = (*group)["metadata"].value("finalizers", json::array());
  EXPECT_NE(
      std::find(finalizers.begin(), finalizers.end(), "scheduling.k8s.io/podgroup-protection"),
      finalizers.end())
      << group->dump();

  // Every pod joins it.
  auto pods = env.List(kube::resources::kPods, "app=train");
  ASSERT_EQ(pods.size(), 4u);
  for (const json& pod : pods) {
    EXPECT_EQ(pod["spec"]["schedulingGroup"]["podGroupName"], group_name) << pod.dump();
    EXPECT_TRUE(HasOwner(pod, "PodGroup", (*group)["metadata"]["uid"], false)) << pod.dump();
    EXPECT_TRUE(HasOwner(pod, "Job", job_uid, true));
  }

  // Deleting the Job takes the Workload and the PodGroup with it: the
  // PodGroup's finalizer goes once its pods are gone or finished.
  env.Delete(kube::resources::kJobs, "train");
  EXPECT_TRUE(env.WaitFor([&] {
    return !env.Get(kPodGroupsNewest, group_name).has_value() &&
           !env.Get(kWorkloadsNewest, workload_name).has_value();
  })) << (env.Get(kPodGroupsNewest, group_name) ? env.Get(kPodGroupsNewest, group_name)->dump()
                                                : std::string("workload left"));
}

TEST(JobGang, OtherJobsAreScheduledPodByPod) {
  Env env;
  // Completions above parallelism, and a NonIndexed Job: no gang, as upstream.
  env.Create(kube::resources::kJobs, IndexedJob("wide", 2, 3, "200ms"));
  json plain = IndexedJob("plain", 2, 2, "200ms");
  plain["spec"].erase("completionMode");
  env.Create(kube::resources::kJobs, plain);
  for (const char* name : {"wide", "plain"}) {
    ASSERT_TRUE(env.WaitFor([&] {
      auto j = env.Get(kube::resources::kJobs, name);
      return j && ConditionStatus(*j, "Complete") == "True";
    })) << name;
  }
  EXPECT_TRUE(env.List(kWorkloadsNewest).empty());
  EXPECT_TRUE(env.List(kPodGroupsNewest).empty());
  for (const json& pod : env.List(kube::resources::kPods)) {
    EXPECT_FALSE(pod["spec"].contains("schedulingGroup")) << pod.dump();
  }
}

TEST(JobGang, TurnedOffTheJobMakesNoGang) {
  EnvOptions options;
  options.controllers.job.gang_scheduling = false;
  Env env(options);
  env.Create(kube::resources::kJobs, IndexedJob("train", 2, 2, "200ms"));
  ASSERT_TRUE(env.WaitFor([&] {
    auto j = env.Get(kube::resources::kJobs, "train");
    return j && ConditionStatus(*j, "Complete") == "True";
  }));
  EXPECT_TRUE(env.List(kWorkloadsNewest).empty());
  EXPECT_TRUE(env.List(kPodGroupsNewest).empty());
}

// A 1.36 server (v1alpha2 only): the objects are written in the version served.
TEST(JobGang, OnlyV1alpha2ServedTheGangIsWrittenInV1alpha2) {
  EnvOptions options;
  options.store.served_versions = {{"workloads.scheduling.k8s.io", {"v1alpha2"}},
                                   {"podgroups.scheduling.k8s.io", {"v1alpha2"}},
                                   {"compositepodgroups.scheduling.k8s.io", {}}};
  Env env(options);
  env.Create(kube::resources::kJobs, IndexedJob("train", 2, 2, "200ms"));
  ASSERT_TRUE(env.WaitFor([&] {
    auto j = env.Get(kube::resources::kJobs, "train");
    return j && ConditionStatus(*j, "Complete") == "True";
  }));
  const json job = *env.Get(kube::resources::kJobs, "train");
  const std::string workload_name = JobWorkloadName(JobNamed(job));
  const kube::ResourceRef podgroups{"scheduling.k8s.io", "v1alpha2", "podgroups", true};
  auto group = env.Get(podgroups, JobPodGroupName(workload_name, "train-pgt-0"));
  ASSERT_TRUE(group.has_value());
  EXPECT_EQ((*group)["spec"]["podGroupTemplateRef"]["workload"],
            json({{"workloadName", workload_name}, {"podGroupTemplateName", "train-pgt-0"}}));
  for (const json& pod : env.List(kube::resources::kPods, "app=train")) {
    bool owned = false;
    for (const json& r : pod["metadata"]["ownerReferences"]) {
      owned = owned || (r["kind"] == "PodGroup" && r["apiVersion"] == "scheduling.k8s.io/v1alpha2");
    }
    EXPECT_TRUE(owned) << pod.dump();
  }
}

// kube-controller-manager's podgroup-protection-controller: a PodGroup
// being deleted stays while a pod that has not finished joins it.
TEST(PodGroupProtection, TheFinalizerGoesWhenNoPodUsesTheGroup) {
  Env env;
  env.Create(kPodGroupsNewest,
             json::parse(R"({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                 "metadata": {"name": "held"}, "spec": {"schedulingPolicy": {"basic": {}}}})"));
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "member"}}},
              {"spec",
               {{"schedulerName", "nobody"},
                {"schedulingGroup", {{"podGroupName", "held"}}},
                {"containers", json::array({{{"name", "c"}, {"image", "busybox"}}})}}}};
  env.Create(kube::resources::kPods, pod);
  env.Delete(kPodGroupsNewest, "held");
  auto deleting = env.Get(kPodGroupsNewest, "held");
  ASSERT_TRUE(deleting.has_value());
  EXPECT_TRUE((*deleting)["metadata"].contains("deletionTimestamp"));
  // While the pod exists the group stays: wait until the controller has
  // seen the deletion (its informer, then a second write to be sure any
  // reaction would have happened) and check it is still there.
  env.MergePatch(kube::resources::kPods, "member", {{"metadata", {{"labels", {{"a", "b"}}}}}});
  ASSERT_FALSE(env.WaitFor([&] { return !env.Get(kPodGroupsNewest, "held").has_value(); },
                           std::chrono::milliseconds(1500)));
  env.Delete(kube::resources::kPods, "member", "Background");
  EXPECT_TRUE(env.WaitFor([&] { return !env.Get(kPodGroupsNewest, "held").has_value(); }));
}

}  // namespace job_gang_test
}  // namespace copse::apiserver::controllers::testing
