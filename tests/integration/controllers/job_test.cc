// The Job controller against the embedded API server, with pods that end by
// the node simulator's simulated lifetimes: NonIndexed and Indexed
// completions, parallelism, backoffLimit, conditions and cascade deletion.

#include <set>

#include "tests/integration/controllers/env.h"

namespace copse::apiserver::controllers::testing {
namespace {

json JobJson(const std::string& name, const json& spec_extra, const std::string& run_for,
             int exit_code = 0) {
  json annotations = {{"copse.dev/simulate-run-for", run_for}};
  if (exit_code != 0) annotations["copse.dev/simulate-exit-code"] = std::to_string(exit_code);
  json job = {{"apiVersion", "batch/v1"},
              {"kind", "Job"},
              {"metadata", {{"name", name}}},
              {"spec", {{"template", Template({{"app", name}}, "busybox", annotations, "Never")}}}};
  for (const auto& [k, v] : spec_extra.items()) job["spec"][k] = v;
  return job;
}

EnvOptions FastBackoff() {
  EnvOptions options;
  options.controllers.job.pod_failure_backoff = std::chrono::milliseconds(20);
  return options;
}

// The most pods of the Job that were ever live (not finished, not terminating) at once.
int MaxLive(Env& env, const std::string& app) {
  std::map<std::string, bool> live;
  int max = 0;
  for (const auto& e : env.recorder().Events()) {
    if (e.resource != "pods" || Label(e.object, "app") != app) continue;
    const std::string name = e.object["metadata"]["name"];
    const std::string phase = e.object["status"].value("phase", "");
    live[name] = e.type != WatchEventType::kDeleted &&
                 !e.object["metadata"].contains("deletionTimestamp") && phase != "Succeeded" &&
                 phase != "Failed";
    max = std::max<int>(
        max, std::count_if(live.begin(), live.end(), [](const auto& kv) { return kv.second; }));
  }
  return max;
}

TEST(JobController, NonIndexedJobCompletesWithinParallelism) {
  Env env;
  env.Create(kube::resources::kJobs,
             JobJson("batch", {{"completions", 5}, {"parallelism", 2}}, "300ms"));
  ASSERT_TRUE(env.WaitFor([&] {
    auto j = env.Get(kube::resources::kJobs, "batch");
    return j && ConditionStatus(*j, "Complete") == "True";
  })) << env.Get(kube::resources::kJobs, "batch")->dump();
  auto job = *env.Get(kube::resources::kJobs, "batch");
  EXPECT_EQ(StatusInt(job, "succeeded"), 5);
  EXPECT_EQ(StatusInt(job, "active"), -1);  // 0 is omitted
  EXPECT_EQ(StatusInt(job, "failed"), -1);
  EXPECT_EQ(ConditionStatus(job, "SuccessCriteriaMet"), "True");
  EXPECT_EQ(ConditionReason(job, "Complete"), "CompletionsReached");
  EXPECT_FALSE(job["status"].value("startTime", "").empty());
  EXPECT_FALSE(job["status"].value("completionTime", "").empty());
  EXPECT_LE(MaxLive(env, "batch"), 2);
  EXPECT_EQ(MaxLive(env, "batch"), 2) << "parallelism is used";
  // Server-generated selector and labels; every pod owned by the Job.
  const std::string uid = job["metadata"]["uid"];
  EXPECT_EQ(job["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"], uid);
  auto pods = env.List(kube::resources::kPods, "app=batch");
  EXPECT_EQ(pods.size(), 5u);
  for (const auto& pod : pods) {
    EXPECT_TRUE(OwnedBy(pod, "Job", uid));
    EXPECT_EQ(pod["status"]["phase"], "Succeeded");
    EXPECT_EQ(Label(pod, "batch.kubernetes.io/job-name"), "batch");
    EXPECT_EQ(Label(pod, "controller-uid"), uid);
    EXPECT_FALSE(pod["spec"].value("nodeName", "").empty());
  }
}

TEST(JobController, IndexedJobCompletesEveryIndex) {
  Env env;
  env.Create(kube::resources::kJobs,
             JobJson("idx", {{"completions", 4}, {"parallelism", 2}, {"completionMode", "Indexed"}},
                     "200ms"));
  ASSERT_TRUE(env.WaitFor([&] {
    auto j = env.Get(kube::resources::kJobs, "idx");
    return j && ConditionStatus(*j, "Complete") == "True";
  })) << env.Get(kube::resources::kJobs, "idx")->dump();
  auto job = *env.Get(kube::resources::kJobs, "idx");
  EXPECT_EQ(job["status"]["completedIndexes"], "0-3");
  EXPECT_EQ(StatusInt(job, "succeeded"), 4);
  EXPECT_LE(MaxLive(env, "idx"), 2);
  std::set<std::string> indexes;
  for (const auto& pod : env.List(kube::resources::kPods, "app=idx")) {
    const std::string index = Annotation(pod, "batch.kubernetes.io/job-completion-index");
    indexes.insert(index);
    EXPECT_EQ(Label(pod, "batch.kubernetes.io/job-completion-index"), index);
    EXPECT_EQ(pod["spec"]["hostname"], "idx-" + index);
    EXPECT_EQ(pod["metadata"]["name"].get<std::string>().rfind("idx-" + index + "-", 0), 0u);
    bool env_var = false;
    for (const auto& e : pod["spec"]["containers"][0]["env"]) {
      env_var = env_var || (e["name"] == "JOB_COMPLETION_INDEX" &&
                            e["valueFrom"]["fieldRef"]["fieldPath"] ==
                                "metadata.annotations['batch.kubernetes.io/job-completion-index']");
    }
    EXPECT_TRUE(env_var) << pod["spec"].dump();
  }
  EXPECT_EQ(indexes, (std::set<std::string>{"0", "1", "2", "3"}));
}

TEST(JobController, BackoffLimitFailsAJobWhosePodsFail) {
  Env env(FastBackoff());
  env.Create(kube::resources::kJobs, JobJson("crash", {{"backoffLimit", 1}}, "50ms", 2));
  ASSERT_TRUE(env.WaitFor([&] {
    auto j = env.Get(kube::resources::kJobs, "crash");
    return j && ConditionStatus(*j, "Failed") == "True";
  })) << env.Get(kube::resources::kJobs, "crash")->dump();
  auto job = *env.Get(kube::resources::kJobs, "crash");
  EXPECT_EQ(ConditionReason(job, "Failed"), "BackoffLimitExceeded");
  EXPECT_EQ(ConditionStatus(job, "FailureTarget"), "True");
  EXPECT_EQ(StatusInt(job, "failed"), 2);
  EXPECT_NE(ConditionStatus(job, "Complete"), "True");
  // No pod after the one that exhausted the limit, even later.
  const auto pods_now = env.List(kube::resources::kPods, "app=crash");
  EXPECT_EQ(pods_now.size(), 2u);
  for (const auto& pod : pods_now) {
    EXPECT_EQ(pod["status"]["phase"], "Failed");
    EXPECT_EQ(pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"], 2);
  }
  EXPECT_FALSE(env.WaitFor([&] { return env.List(kube::resources::kPods, "app=crash").size() > 2; },
                           std::chrono::milliseconds(300)));
}

TEST(JobController, WorkQueueJobCompletesWhenAPodSucceeds) {
  Env env;
  env.Create(kube::resources::kJobs, JobJson("queue", {{"parallelism", 3}}, "100ms"));
  ASSERT_TRUE(env.WaitFor([&] {
    auto j = env.Get(kube::resources::kJobs, "queue");
    return j && ConditionStatus(*j, "Complete") == "True";
  }));
  auto job = *env.Get(kube::resources::kJobs, "queue");
  // parallelism set and completions unset: no defaulting of completions.
  EXPECT_FALSE(job["spec"].contains("completions"));
  EXPECT_GE(StatusInt(job, "succeeded"), 1);
  EXPECT_LE(MaxLive(env, "queue"), 3);
}

TEST(JobController, DeletingAJobDeletesItsPods) {
  Env env;
  env.Create(kube::resources::kJobs,
             JobJson("long", {{"parallelism", 2}, {"completions", 2}}, "1h"));
  ASSERT_TRUE(env.WaitFor([&] { return env.ReadyPods("app=long") == 2; }));
  env.Delete(kube::resources::kJobs, "long", "Background");
  ASSERT_TRUE(env.WaitFor([&] { return env.List(kube::resources::kPods, "app=long").empty(); }));
}

TEST(JobController, AJobWithoutAValidRestartPolicyIsRefused) {
  Env env;
  json job = JobJson("always", json::object(), "1s");
  job["spec"]["template"]["spec"].erase("restartPolicy");
  auto created = env.store().Create(kube::resources::kJobs, "default", job.dump());
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.error().http_status, 422);
  EXPECT_NE(created.error().message.find("spec.template.spec.restartPolicy: Required value"),
            std::string::npos)
      << created.error().message;
  // With parallelism set, completions is not defaulted.
  json indexed = JobJson("noc", {{"completionMode", "Indexed"}, {"parallelism", 2}}, "1s");
  created = env.store().Create(kube::resources::kJobs, "default", indexed.dump());
  ASSERT_FALSE(created.ok());
  EXPECT_NE(created.error().message.find("spec.completions"), std::string::npos)
      << created.error().message;
}

}  // namespace
}  // namespace copse::apiserver::controllers::testing
