// The ReplicaSet and Deployment controllers against the embedded API server:
// scale up and down, rolling updates checked at every observed step against
// maxSurge and maxUnavailable, Recreate, scaling events, revision history,
// rollout status fields and conditions, owner references and cascade deletion.

#include "tests/integration/controllers/env.h"

namespace copse::apiserver::controllers::testing {
namespace {

json ReplicaSetJson(const std::string& name, int replicas) {
  return {{"apiVersion", "apps/v1"},
          {"kind", "ReplicaSet"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"replicas", replicas},
            {"selector", {{"matchLabels", {{"app", name}}}}},
            {"template", Template({{"app", name}})}}}};
}

json DeploymentJson(const std::string& name, int replicas, const json& strategy = json(),
                    const std::string& image = "nginx:1.25") {
  json d = {{"apiVersion", "apps/v1"},
            {"kind", "Deployment"},
            {"metadata", {{"name", name}}},
            {"spec",
             {{"replicas", replicas},
              {"selector", {{"matchLabels", {{"app", name}}}}},
              {"template", Template({{"app", name}}, image)}}}};
  if (!strategy.is_null()) d["spec"]["strategy"] = strategy;
  return d;
}

// kubectl rollout status's test for a finished rollout.
bool RolledOut(Env& env, const std::string& name) {
  auto d = env.Get(kube::resources::kDeployments, name);
  if (!d) return false;
  const int replicas = (*d)["spec"]["replicas"];
  return StatusInt(*d, "observedGeneration") >= (*d)["metadata"]["generation"].get<int>() &&
         StatusInt(*d, "updatedReplicas") == replicas && StatusInt(*d, "replicas") == replicas &&
         StatusInt(*d, "availableReplicas") == replicas;
}

std::vector<json> ReplicaSetsOf(Env& env, const std::string& app) {
  return env.List(kube::resources::kReplicaSets, "app=" + app);
}

TEST(ReplicaSetController, ScalesUpAndDownWithOwnedPods) {
  Env env;
  env.Create(kube::resources::kReplicaSets, ReplicaSetJson("rs1", 3));
  ASSERT_TRUE(env.WaitFor([&] { return env.ReadyPods("app=rs1") == 3; }));
  auto rs = env.Get(kube::resources::kReplicaSets, "rs1");
  ASSERT_TRUE(rs);
  const std::string uid = (*rs)["metadata"]["uid"];
  for (const auto& pod : env.LivePods("app=rs1")) {
    EXPECT_TRUE(OwnedBy(pod, "ReplicaSet", uid));
    EXPECT_EQ(pod["metadata"]["name"].get<std::string>().rfind("rs1-", 0), 0u);
    EXPECT_FALSE(pod["spec"].value("nodeName", "").empty()) << "bound by the scheduler";
  }
  ASSERT_TRUE(env.WaitFor([&] {
    auto r = env.Get(kube::resources::kReplicaSets, "rs1");
    return r && StatusInt(*r, "readyReplicas") == 3 && StatusInt(*r, "availableReplicas") == 3 &&
           StatusInt(*r, "replicas") == 3 && StatusInt(*r, "fullyLabeledReplicas") == 3 &&
           StatusInt(*r, "observedGeneration") == 1;
  }));

  env.MergePatch(kube::resources::kReplicaSets, "rs1", {{"spec", {{"replicas", 5}}}});
  ASSERT_TRUE(env.WaitFor([&] { return env.ReadyPods("app=rs1") == 5; }));
  env.MergePatch(kube::resources::kReplicaSets, "rs1", {{"spec", {{"replicas", 2}}}});
  ASSERT_TRUE(env.WaitFor([&] {
    auto r = env.Get(kube::resources::kReplicaSets, "rs1");
    return env.LivePods("app=rs1").size() == 2 && r && StatusInt(*r, "replicas") == 2 &&
           StatusInt(*r, "observedGeneration") == 3;
  }));
  // Never more live pods than asked for at any point.
  std::map<std::string, bool> live;
  size_t max_live = 0;
  for (const auto& e : env.recorder().Events()) {
    if (e.resource != "pods") continue;
    const std::string name = e.object["metadata"]["name"];
    const bool gone =
        e.type == WatchEventType::kDeleted || e.object["metadata"].contains("deletionTimestamp");
    live[name] = !gone;
    max_live = std::max<size_t>(max_live, std::count_if(live.begin(), live.end(),
                                                        [](const auto& kv) { return kv.second; }));
  }
  EXPECT_EQ(max_live, 5u);
}

TEST(ReplicaSetController, ReplacesADeletedPod) {
  Env env;
  env.Create(kube::resources::kReplicaSets, ReplicaSetJson("rs2", 2));
  ASSERT_TRUE(env.WaitFor([&] { return env.ReadyPods("app=rs2") == 2; }));
  const std::string victim = env.LivePods("app=rs2")[0]["metadata"]["name"];
  env.Delete(kube::resources::kPods, victim);
  ASSERT_TRUE(env.WaitFor([&] {
    auto pods = env.LivePods("app=rs2");
    return env.ReadyPods("app=rs2") == 2 &&
           std::none_of(pods.begin(), pods.end(),
                        [&](const json& p) { return p["metadata"]["name"] == victim; });
  }));
}

TEST(DeploymentController, CreatesAReplicaSetAndReportsRolloutStatus) {
  Env env;
  env.Create(kube::resources::kDeployments, DeploymentJson("web", 3));
  ASSERT_TRUE(env.WaitFor([&] { return RolledOut(env, "web"); }));
  auto d = *env.Get(kube::resources::kDeployments, "web");
  auto rss = ReplicaSetsOf(env, "web");
  ASSERT_EQ(rss.size(), 1u);
  const json& rs = rss[0];
  const std::string hash = Label(rs, "pod-template-hash");
  ASSERT_FALSE(hash.empty());
  EXPECT_EQ(rs["metadata"]["name"], "web-" + hash);
  EXPECT_EQ(rs["spec"]["selector"]["matchLabels"]["pod-template-hash"], hash);
  EXPECT_TRUE(OwnedBy(rs, "Deployment", d["metadata"]["uid"]));
  EXPECT_EQ(Annotation(rs, "deployment.kubernetes.io/revision"), "1");
  EXPECT_EQ(Annotation(rs, "deployment.kubernetes.io/desired-replicas"), "3");
  EXPECT_EQ(Annotation(d, "deployment.kubernetes.io/revision"), "1");
  for (const auto& pod : env.LivePods("app=web")) {
    EXPECT_EQ(Label(pod, "pod-template-hash"), hash);
    EXPECT_TRUE(OwnedBy(pod, "ReplicaSet", rs["metadata"]["uid"]));
    EXPECT_EQ(pod["spec"]["schedulerName"], "default-scheduler");
    EXPECT_FALSE(pod["spec"].value("nodeName", "").empty());
  }
  EXPECT_EQ(StatusInt(d, "readyReplicas"), 3);
  EXPECT_EQ(StatusInt(d, "unavailableReplicas"), -1);  // 0 is omitted
  EXPECT_EQ(ConditionStatus(d, "Available"), "True");
  EXPECT_EQ(ConditionReason(d, "Available"), "MinimumReplicasAvailable");
  EXPECT_TRUE(env.WaitFor([&] {
    auto now = env.Get(kube::resources::kDeployments, "web");
    return now && ConditionStatus(*now, "Progressing") == "True" &&
           ConditionReason(*now, "Progressing") == "NewReplicaSetAvailable";
  })) << env.Get(kube::resources::kDeployments, "web")->dump();
  // Defaults the API server filled in.
  EXPECT_EQ(d["spec"]["strategy"]["type"], "RollingUpdate");
  EXPECT_EQ(d["spec"]["strategy"]["rollingUpdate"]["maxSurge"], "25%");
  EXPECT_EQ(d["spec"]["revisionHistoryLimit"], 10);
  EXPECT_EQ(d["spec"]["progressDeadlineSeconds"], 600);
}

struct RollingCase {
  json max_surge;
  json max_unavailable;
  int replicas;
  int surge;        // resolved
  int unavailable;  // resolved
};

class RollingUpdate : public ::testing::TestWithParam<RollingCase> {};

// Replays every recorded pod event from `from` on and checks the live and
// ready pods of the Deployment after each one.
void CheckEverySteps(const std::vector<RecordedEvent>& events, size_t from,
                     const std::map<std::string, json>& before, int max_live, int min_ready,
                     int* steps) {
  std::map<std::string, json> pods = before;
  for (size_t i = from; i < events.size(); ++i) {
    const auto& e = events[i];
    if (e.resource != "pods") continue;
    const std::string name = e.object["metadata"]["name"];
    if (e.type == WatchEventType::kDeleted) {
      pods.erase(name);
    } else {
      pods[name] = e.object;
    }
    int live = 0;
    int ready = 0;
    for (const auto& [n, p] : pods) {
      if (p["metadata"].contains("deletionTimestamp")) continue;
      ++live;
      ready += Env::IsReady(p);
    }
    ++*steps;
    ASSERT_LE(live, max_live) << "after event " << i << " (" << name << ")";
    ASSERT_GE(ready, min_ready) << "after event " << i << " (" << name << ")";
  }
}

TEST_P(RollingUpdate, NeverExceedsMaxSurgeOrMaxUnavailable) {
  const RollingCase& c = GetParam();
  Env env;
  json strategy = {
      {"type", "RollingUpdate"},
      {"rollingUpdate", {{"maxSurge", c.max_surge}, {"maxUnavailable", c.max_unavailable}}}};
  env.Create(kube::resources::kDeployments, DeploymentJson("roll", c.replicas, strategy));
  ASSERT_TRUE(env.WaitFor([&] { return RolledOut(env, "roll"); }));
  // The state the rollout starts from, and where its events begin.
  auto events = env.recorder().Events();
  std::map<std::string, json> before;
  for (const auto& p : env.List(kube::resources::kPods, "app=roll"))
    before[p["metadata"]["name"]] = p;
  const uint64_t start_rv = events.empty() ? 0 : events.back().rv;

  env.StrategicPatch(
      kube::resources::kDeployments, "roll",
      {{"spec",
        {{"template",
          {{"spec",
            {{"containers", json::array({{{"name", "main"}, {"image", "nginx:1.26"}}})}}}}}}}});
  ASSERT_TRUE(env.WaitFor([&] {
    auto d = env.Get(kube::resources::kDeployments, "roll");
    if (!d || (*d)["metadata"]["generation"] != 2 || !RolledOut(env, "roll")) return false;
    auto pods = env.LivePods("app=roll");
    return static_cast<int>(pods.size()) == c.replicas &&
           std::all_of(pods.begin(), pods.end(), [](const json& p) {
             return p["spec"]["containers"][0]["image"] == "nginx:1.26";
           });
  })) << env.Get(kube::resources::kDeployments, "roll")->dump();

  events = env.recorder().Events();
  size_t from = 0;
  while (from < events.size() && events[from].rv <= start_rv) ++from;
  int steps = 0;
  CheckEverySteps(events, from, before, c.replicas + c.surge, c.replicas - c.unavailable, &steps);
  EXPECT_GE(steps, 3 * c.replicas) << "each replaced pod is created, becomes ready and goes";

  auto rss = ReplicaSetsOf(env, "roll");
  ASSERT_EQ(rss.size(), 2u);
  std::map<std::string, int> replicas_by_revision;
  for (const auto& rs : rss) {
    replicas_by_revision[Annotation(rs, "deployment.kubernetes.io/revision")] =
        rs["spec"]["replicas"];
  }
  EXPECT_EQ(replicas_by_revision, (std::map<std::string, int>{{"1", 0}, {"2", c.replicas}}));
  EXPECT_EQ(Annotation(*env.Get(kube::resources::kDeployments, "roll"),
                       "deployment.kubernetes.io/revision"),
            "2");
}

INSTANTIATE_TEST_SUITE_P(Strategies, RollingUpdate,
                         ::testing::Values(RollingCase{"25%", "25%", 4, 1, 1},
                                           RollingCase{1, 0, 3, 1, 0}, RollingCase{0, 2, 5, 0, 2},
                                           RollingCase{"50%", "0%", 4, 2, 0}),
                         [](const ::testing::TestParamInfo<RollingCase>& info) {
                           return "Replicas" + std::to_string(info.param.replicas) + "Surge" +
                                  std::to_string(info.param.surge) + "Unavailable" +
                                  std::to_string(info.param.unavailable);
                         });

TEST(DeploymentController, RecreateRemovesEveryOldPodBeforeANewOne) {
  Env env;
  env.Create(kube::resources::kDeployments, DeploymentJson("re", 3, {{"type", "Recreate"}}));
  ASSERT_TRUE(env.WaitFor([&] { return RolledOut(env, "re"); }));
  const uint64_t start_rv = env.recorder().Events().back().rv;
  env.StrategicPatch(
      kube::resources::kDeployments, "re",
      {{"spec",
        {{"template",
          {{"spec",
            {{"containers", json::array({{{"name", "main"}, {"image", "nginx:1.26"}}})}}}}}}}});
  ASSERT_TRUE(env.WaitFor([&] {
    auto d = env.Get(kube::resources::kDeployments, "re");
    return d && (*d)["metadata"]["generation"] == 2 && RolledOut(env, "re");
  }));
  // From the first new pod on, no old pod exists at all (not even terminating).
  std::map<std::string, std::string> images;  // existing pods -> image
  for (const auto& e : env.recorder().Events()) {
    if (e.resource != "pods") continue;
    const std::string name = e.object["metadata"]["name"];
    if (e.type == WatchEventType::kDeleted) {
      images.erase(name);
      continue;
    }
    images[name] = e.object["spec"]["containers"][0]["image"];
    if (e.rv > start_rv && images[name] == "nginx:1.26") {
      for (const auto& [n, image] : images) {
        ASSERT_EQ(image, "nginx:1.26")
            << "old pod " << n << " still exists when " << name << " appears";
      }
    }
  }
}

TEST(DeploymentController, ScaleChangesTheActiveReplicaSet) {
  Env env;
  env.Create(kube::resources::kDeployments, DeploymentJson("sc", 3));
  ASSERT_TRUE(env.WaitFor([&] { return RolledOut(env, "sc"); }));
  env.MergePatch(kube::resources::kDeployments, "sc", {{"spec", {{"replicas", 5}}}});
  ASSERT_TRUE(env.WaitFor([&] {
    auto d = env.Get(kube::resources::kDeployments, "sc");
    return d && (*d)["spec"]["replicas"] == 5 && RolledOut(env, "sc");
  }));
  auto rss = ReplicaSetsOf(env, "sc");
  ASSERT_EQ(rss.size(), 1u);
  EXPECT_EQ(rss[0]["spec"]["replicas"], 5);
  EXPECT_EQ(Annotation(rss[0], "deployment.kubernetes.io/desired-replicas"), "5");
  EXPECT_EQ(Annotation(rss[0], "deployment.kubernetes.io/revision"), "1");
  EXPECT_EQ(env.ReadyPods("app=sc"), 5);
  env.MergePatch(kube::resources::kDeployments, "sc", {{"spec", {{"replicas", 1}}}});
  ASSERT_TRUE(env.WaitFor([&] {
    auto d = env.Get(kube::resources::kDeployments, "sc");
    return d && (*d)["spec"]["replicas"] == 1 && RolledOut(env, "sc") &&
           env.LivePods("app=sc").size() == 1;
  }));
}

TEST(DeploymentController, KeepsRevisionHistoryLimitOldReplicaSets) {
  Env env;
  json d = DeploymentJson("hist", 1);
  d["spec"]["revisionHistoryLimit"] = 1;
  env.Create(kube::resources::kDeployments, d);
  ASSERT_TRUE(env.WaitFor([&] { return RolledOut(env, "hist"); }));
  for (int v = 2; v <= 4; ++v) {
    const std::string image = "nginx:1." + std::to_string(20 + v);
    env.StrategicPatch(
        kube::resources::kDeployments, "hist",
        {{"spec",
          {{"template",
            {{"spec", {{"containers", json::array({{{"name", "main"}, {"image", image}}})}}}}}}}});
    ASSERT_TRUE(env.WaitFor([&] {
      auto now = env.Get(kube::resources::kDeployments, "hist");
      return now && (*now)["metadata"]["generation"] == v && RolledOut(env, "hist") &&
             Annotation(*now, "deployment.kubernetes.io/revision") == std::to_string(v);
    }));
  }
  // The new one and one old one (revision 3): revisions 1 and 2 were deleted.
  ASSERT_TRUE(env.WaitFor([&] { return ReplicaSetsOf(env, "hist").size() == 2; }));
  std::set<std::string> revisions;
  for (const auto& rs : ReplicaSetsOf(env, "hist")) {
    revisions.insert(Annotation(rs, "deployment.kubernetes.io/revision"));
  }
  EXPECT_EQ(revisions, (std::set<std::string>{"3", "4"}));
}

TEST(DeploymentController, RollingBackReusesTheOldReplicaSetWithANewRevision) {
  Env env;
  env.Create(kube::resources::kDeployments, DeploymentJson("back", 2));
  ASSERT_TRUE(env.WaitFor([&] { return RolledOut(env, "back"); }));
  const std::string first = ReplicaSetsOf(env, "back")[0]["metadata"]["name"];
  auto set_image = [&](const std::string& image, int generation) {
    env.StrategicPatch(
        kube::resources::kDeployments, "back",
        {{"spec",
          {{"template",
            {{"spec", {{"containers", json::array({{{"name", "main"}, {"image", image}}})}}}}}}}});
    ASSERT_TRUE(env.WaitFor([&] {
      auto now = env.Get(kube::resources::kDeployments, "back");
      return now && (*now)["metadata"]["generation"] == generation && RolledOut(env, "back");
    }));
  };
  set_image("nginx:1.26", 2);
  set_image("nginx:1.25", 3);
  auto rs = env.Get(kube::resources::kReplicaSets, first);
  ASSERT_TRUE(rs);
  EXPECT_EQ((*rs)["spec"]["replicas"], 2);
  EXPECT_EQ(Annotation(*rs, "deployment.kubernetes.io/revision"), "3");
  EXPECT_EQ(Annotation(*rs, "deployment.kubernetes.io/revision-history"), "1");
  EXPECT_EQ(ReplicaSetsOf(env, "back").size(), 2u);
}

TEST(DeploymentController, DeletingTheDeploymentDeletesItsReplicaSetsAndPods) {
  Env env;
  env.Create(kube::resources::kDeployments, DeploymentJson("gone", 2));
  ASSERT_TRUE(env.WaitFor([&] { return RolledOut(env, "gone"); }));
  ASSERT_EQ(env.List(kube::resources::kPods, "app=gone").size(), 2u);
  env.Delete(kube::resources::kDeployments, "gone", "Background");
  ASSERT_TRUE(env.WaitFor([&] {
    return ReplicaSetsOf(env, "gone").empty() &&
           env.List(kube::resources::kPods, "app=gone").empty();
  }));
}

TEST(DeploymentController, InvalidDeploymentsAreRefusedNamingTheField) {
  Env env;
  json bad = DeploymentJson("bad", 1);
  bad["spec"]["selector"]["matchLabels"]["app"] = "other";
  auto s = env.store().Create(kube::resources::kDeployments, "default", bad.dump());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("spec.template.metadata.labels"), std::string::npos)
      << s.error().message;
  bad = DeploymentJson(
      "bad", 1,
      {{"type", "RollingUpdate"}, {"rollingUpdate", {{"maxSurge", 0}, {"maxUnavailable", 0}}}});
  s = env.store().Create(kube::resources::kDeployments, "default", bad.dump());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("spec.strategy.rollingUpdate.maxUnavailable"), std::string::npos)
      << s.error().message;
  EXPECT_FALSE(env.Get(kube::resources::kDeployments, "bad"));
}

}  // namespace
}  // namespace copse::apiserver::controllers::testing
