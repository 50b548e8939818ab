// The StatefulSet and DaemonSet controllers against the embedded API server:
// ordinal pods, OrderedReady order on the way up and down, Parallel,
// headless-service hostnames, rolling updates, status; one daemon pod per
// eligible node, bound by the scheduler to the node it is pinned to.

#include <set>

#include "apiserver/controllers/daemonset.h"
#include "tests/integration/controllers/env.h"

namespace copse::apiserver::controllers::testing {
namespace {

json StatefulSetJson(const std::string& name, int replicas, const std::string& policy = "") {
  json sts = {{"apiVersion", "apps/v1"},
              {"kind", "StatefulSet"},
              {"metadata", {{"name", name}}},
              {"spec",
               {{"replicas", replicas},
                {"serviceName", name + "-hl"},
                {"selector", {{"matchLabels", {{"app", name}}}}},
                {"template", Template({{"app", name}})}}}};
  if (!policy.empty()) sts["spec"]["podManagementPolicy"] = policy;
  return sts;
}

bool StatefulSetReady(Env& env, const std::string& name, int replicas) {
  auto s = env.Get(kube::resources::kStatefulSets, name);
  return s && StatusInt(*s, "observedGeneration") >= (*s)["metadata"]["generation"].get<int>() &&
         StatusInt(*s, "readyReplicas") == replicas && StatusInt(*s, "replicas") == replicas &&
         (*s)["status"].value("currentRevision", "") == (*s)["status"].value("updateRevision", "x");
}

// The rv of the first event where `pod` exists; of the first where it is Ready; of its DELETED.
struct PodTimes {
  uint64_t added = 0;
  uint64_t ready = 0;
  uint64_t deleting = 0;
};
std::map<std::string, PodTimes> Times(Env& env, const std::string& app) {
  std::map<std::string, PodTimes> out;
  for (const auto& e : env.recorder().Events()) {
    if (e.resource != "pods" || Label(e.object, "app") != app) continue;
    PodTimes& t = out[e.object["metadata"]["name"]];
    if (t.added == 0) t.added = e.rv;
    if (t.ready == 0 && Env::IsReady(e.object)) t.ready = e.rv;
    if (t.deleting == 0 && (e.type == WatchEventType::kDeleted ||
                            e.object["metadata"].contains("deletionTimestamp"))) {
      t.deleting = e.rv;
    }
  }
  return out;
}

TEST(StatefulSetController, OrderedReadyCreatesOrdinalsOneAfterTheOther) {
  Env env;
  env.Create(kube::resources::kStatefulSets, StatefulSetJson("db", 3));
  ASSERT_TRUE(env.WaitFor([&] { return StatefulSetReady(env, "db", 3); }))
      << env.Get(kube::resources::kStatefulSets, "db")->dump();
  auto sts = *env.Get(kube::resources::kStatefulSets, "db");
  auto times = Times(env, "db");
  ASSERT_EQ(times.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const std::string name = "db-" + std::to_string(i);
    auto pod = env.Get(kube::resources::kPods, name);
    ASSERT_TRUE(pod) << name;
    EXPECT_EQ((*pod)["spec"]["hostname"], name);
    EXPECT_EQ((*pod)["spec"]["subdomain"], "db-hl");
    EXPECT_EQ(Label(*pod, "statefulset.kubernetes.io/pod-name"), name);
    EXPECT_EQ(Label(*pod, "apps.kubernetes.io/pod-index"), std::to_string(i));
    EXPECT_EQ(Label(*pod, "controller-revision-hash"), sts["status"]["updateRevision"]);
    EXPECT_TRUE(OwnedBy(*pod, "StatefulSet", sts["metadata"]["uid"]));
    EXPECT_FALSE((*pod)["spec"].value("nodeName", "").empty());
    if (i > 0) {
      // db-i was created only after db-(i-1) was Ready.
      EXPECT_GT(times[name].added, times["db-" + std::to_string(i - 1)].ready) << name;
    }
  }
  EXPECT_EQ(StatusInt(sts, "currentReplicas"), 3);
  EXPECT_EQ(StatusInt(sts, "updatedReplicas"), 3);
  EXPECT_EQ(StatusInt(sts, "availableReplicas"), 3);
  EXPECT_EQ(sts["spec"]["podManagementPolicy"], "OrderedReady");
  EXPECT_EQ(sts["spec"]["updateStrategy"]["type"], "RollingUpdate");

  // Down to one: the highest ordinal goes first.
  env.MergePatch(kube::resources::kStatefulSets, "db", {{"spec", {{"replicas", 1}}}});
  ASSERT_TRUE(env.WaitFor([&] {
    return StatefulSetReady(env, "db", 1) && !env.Get(kube::resources::kPods, "db-1") &&
           !env.Get(kube::resources::kPods, "db-2");
  }));
  times = Times(env, "db");
  EXPECT_LT(times["db-2"].deleting, times["db-1"].deleting);
  EXPECT_TRUE(env.Get(kube::resources::kPods, "db-0"));
}

TEST(StatefulSetController, ParallelCreatesWithoutWaiting) {
  EnvOptions options;
  options.pod_start_delay = std::chrono::milliseconds(1500);
  Env env(options);
  env.Create(kube::resources::kStatefulSets, StatefulSetJson("par", 3, "Parallel"));
  ASSERT_TRUE(env.WaitFor([&] { return StatefulSetReady(env, "par", 3); }));
  auto times = Times(env, "par");
  ASSERT_EQ(times.size(), 3u);
  uint64_t first_ready = UINT64_MAX;
  uint64_t last_added = 0;
  for (const auto& [name, t] : times) {
    first_ready = std::min(first_ready, t.ready);
    last_added = std::max(last_added, t.added);
  }
  EXPECT_LT(last_added, first_ready) << "every pod exists before any is ready";
}

TEST(StatefulSetController, RollingUpdateReplacesFromTheHighestOrdinal) {
  Env env;
  env.Create(kube::resources::kStatefulSets, StatefulSetJson("roll", 3));
  ASSERT_TRUE(env.WaitFor([&] { return StatefulSetReady(env, "roll", 3); }));
  const std::string old_revision =
      (*env.Get(kube::resources::kStatefulSets, "roll"))["status"]["updateRevision"];
  const uint64_t start_rv = env.recorder().Events().back().rv;
  env.StrategicPatch(
      kube::resources::kStatefulSets, "roll",
      {{"spec",
        {{"template",
          {{"spec",
            {{"containers", json::array({{{"name", "main"}, {"image", "nginx:1.26"}}})}}}}}}}});
  ASSERT_TRUE(env.WaitFor([&] {
    auto s = env.Get(kube::resources::kStatefulSets, "roll");
    return s && (*s)["status"].value("updateRevision", "") != old_revision &&
           StatefulSetReady(env, "roll", 3) && StatusInt(*s, "updatedReplicas") == 3;
  })) << env.Get(kube::resources::kStatefulSets, "roll")->dump();
  // Deletions of old pods in order 2, 1, 0, one at a time (the next after the
  // previous one's replacement is ready).
  std::vector<std::string> order;
  for (const auto& e : env.recorder().Events()) {
    if (e.rv <= start_rv || e.resource != "pods" || e.type == WatchEventType::kDeleted) continue;
    if (!e.object["metadata"].contains("deletionTimestamp")) continue;
    const std::string name = e.object["metadata"]["name"];
    if (order.empty() || order.back() != name) order.push_back(name);
  }
  EXPECT_EQ(order, (std::vector<std::string>{"roll-2", "roll-1", "roll-0"}));
  for (int i = 0; i < 3; ++i) {
    auto pod = env.Get(kube::resources::kPods, "roll-" + std::to_string(i));
    ASSERT_TRUE(pod);
    EXPECT_EQ((*pod)["spec"]["containers"][0]["image"], "nginx:1.26");
  }
}

TEST(StatefulSetController, DeletingTheStatefulSetDeletesItsPods) {
  Env env;
  env.Create(kube::resources::kStatefulSets, StatefulSetJson("bye", 2, "Parallel"));
  ASSERT_TRUE(env.WaitFor([&] { return StatefulSetReady(env, "bye", 2); }));
  env.Delete(kube::resources::kStatefulSets, "bye", "Foreground");
  ASSERT_TRUE(env.WaitFor([&] {
    return env.List(kube::resources::kPods, "app=bye").empty() &&
           !env.Get(kube::resources::kStatefulSets, "bye");
  }));
}

// ---------------------------------------------------------------- DaemonSet

json DaemonSetJson(const std::string& name, const json& node_selector = json()) {
  json ds = {{"apiVersion", "apps/v1"},
             {"kind", "DaemonSet"},
             {"metadata", {{"name", name}}},
             {"spec",
              {{"selector", {{"matchLabels", {{"app", name}}}}},
               {"template", Template({{"app", name}})}}}};
  if (!node_selector.is_null()) ds["spec"]["template"]["spec"]["nodeSelector"] = node_selector;
  return ds;
}

std::string PinnedNode(const json& pod) {
  return pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            ["nodeSelectorTerms"][0]["matchFields"][0]["values"][0];
}

TEST(DaemonSetController, RunsOnePodOnEveryEligibleNode) {
  Env env;
  const auto& nodes = env.node_names();
  ASSERT_EQ(nodes.size(), 4u);
  // Node 0 is left out by a label, node 1 by a taint the pods do not tolerate.
  for (size_t i = 1; i < nodes.size(); ++i) {
    ASSERT_TRUE(env.store()
                    .Patch(kube::resources::kNodes, "", nodes[i], PatchType::kMerge,
                           R"({"metadata":{"labels":{"role":"worker"}}})")
                    .ok());
  }
  ASSERT_TRUE(
      env.store()
          .Patch(kube::resources::kNodes, "", nodes[1], PatchType::kMerge,
                 R"({"spec":{"taints":[{"key":"gpu","value":"true","effect":"NoSchedule"}]}})")
          .ok());
  env.Create(kube::resources::kDaemonSets, DaemonSetJson("agent", {{"role", "worker"}}));
  auto settled = [&](int want) {
    auto ds = env.Get(kube::resources::kDaemonSets, "agent");
    return ds && StatusInt(*ds, "desiredNumberScheduled") == want &&
           StatusInt(*ds, "currentNumberScheduled") == want &&
           StatusInt(*ds, "numberReady") == want && StatusInt(*ds, "numberAvailable") == want &&
           StatusInt(*ds, "updatedNumberScheduled") == want && env.ReadyPods("app=agent") == want;
  };
  ASSERT_TRUE(env.WaitFor([&] { return settled(2); }))
      << env.Get(kube::resources::kDaemonSets, "agent")->dump();
  auto ds = *env.Get(kube::resources::kDaemonSets, "agent");
  std::set<std::string> on;
  for (const auto& pod : env.LivePods("app=agent")) {
    const std::string node = pod["spec"]["nodeName"];
    EXPECT_EQ(PinnedNode(pod), node) << "bound to the node it is pinned to";
    EXPECT_TRUE(OwnedBy(pod, "DaemonSet", ds["metadata"]["uid"]));
    EXPECT_EQ(Label(pod, "pod-template-generation"), "1");
    EXPECT_TRUE(on.insert(node).second) << "two pods on " << node;
  }
  EXPECT_EQ(on, (std::set<std::string>{nodes[2], nodes[3]}));
  EXPECT_EQ(StatusInt(ds, "numberMisscheduled"), 0);

  // A node that becomes eligible gets its pod; one that stops being eligible loses it.
  ASSERT_TRUE(env.store()
                  .Patch(kube::resources::kNodes, "", nodes[0], PatchType::kMerge,
                         R"({"metadata":{"labels":{"role":"worker"}}})")
                  .ok());
  ASSERT_TRUE(env.store()
                  .Patch(kube::resources::kNodes, "", nodes[3], PatchType::kMerge,
                         R"({"metadata":{"labels":{"role":null}}})")
                  .ok());
  ASSERT_TRUE(env.WaitFor([&] {
    std::set<std::string> now;
    for (const auto& pod : env.LivePods("app=agent")) now.insert(pod["spec"].value("nodeName", ""));
    return settled(2) && now == std::set<std::string>{nodes[0], nodes[2]};
  }));
}

TEST(DaemonSetController, RollingUpdateKeepsAtMostMaxUnavailableNodesWithout) {
  Env env;
  env.Create(kube::resources::kDaemonSets, DaemonSetJson("roll"));
  auto done = [&](const std::string& image) {
    auto ds = env.Get(kube::resources::kDaemonSets, "roll");
    auto pods = env.LivePods("app=roll");
    return ds &&
           StatusInt(*ds, "observedGeneration") == (*ds)["metadata"]["generation"].get<int>() &&
           StatusInt(*ds, "updatedNumberScheduled") == 4 &&
           StatusInt(*ds, "numberAvailable") == 4 && pods.size() == 4 &&
           std::all_of(pods.begin(), pods.end(), [&](const json& p) {
             return p["spec"]["containers"][0]["image"] == image && Env::IsReady(p);
           });
  };
  ASSERT_TRUE(env.WaitFor([&] { return done("nginx:1.25"); }));
  const uint64_t start_rv = env.recorder().Events().back().rv;
  std::map<std::string, json> before;
  for (const auto& p : env.List(kube::resources::kPods, "app=roll"))
    before[p["metadata"]["name"]] = p;
  env.StrategicPatch(
      kube::resources::kDaemonSets, "roll",
      {{"spec",
        {{"template",
          {{"spec",
            {{"containers", json::array({{{"name", "main"}, {"image", "nginx:1.26"}}})}}}}}}}});
  ASSERT_TRUE(env.WaitFor([&] { return done("nginx:1.26"); }));
  // maxUnavailable 1 (the default): at every step at least 3 of 4 nodes have a ready pod.
  std::map<std::string, json> pods = before;
  for (const auto& e : env.recorder().Events()) {
    if (e.rv <= start_rv || e.resource != "pods") continue;
    const std::string name = e.object["metadata"]["name"];
    if (e.type == WatchEventType::kDeleted) {
      pods.erase(name);
    } else {
      pods[name] = e.object;
    }
    std::set<std::string> served;
    for (const auto& [n, p] : pods) {
      if (!p["metadata"].contains("deletionTimestamp") && Env::IsReady(p))
        served.insert(p["spec"]["nodeName"]);
    }
    ASSERT_GE(served.size(), 3u) << "after event at rv " << e.rv;
  }
}

TEST(DaemonSetPredicates, TaintsSelectorsAndAffinity) {
  auto node = kube::Node::Decode(R"({"metadata":{"name":"n1","labels":{"zone":"a"}},
      "spec":{"unschedulable":true,"taints":[{"key":"node.kubernetes.io/unschedulable","effect":"NoSchedule"},
                                             {"key":"soft","effect":"PreferNoSchedule"}]}})");
  ASSERT_TRUE(node.ok());
  auto spec = [](const std::string& json_spec) {
    auto pod = kube::Pod::Decode(R"({"spec":)" + json_spec + "}");
    EXPECT_TRUE(pod.ok());
    return pod->spec;
  };
  // Daemon pods tolerate cordoning, and PreferNoSchedule never blocks.
  EXPECT_TRUE(NodeShouldRunDaemonPod(spec(R"({"containers":[]})"), *node));
  EXPECT_TRUE(NodeShouldRunDaemonPod(spec(R"({"nodeSelector":{"zone":"a"}})"), *node));
  EXPECT_FALSE(NodeShouldRunDaemonPod(spec(R"({"nodeSelector":{"zone":"b"}})"), *node));
  EXPECT_FALSE(NodeShouldRunDaemonPod(spec(R"({"nodeName":"n2"})"), *node));
  EXPECT_FALSE(NodeShouldRunDaemonPod(
      spec(R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
           {"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In","values":["b"]}]}]}}}})"),
      *node));
  auto tainted = kube::Node::Decode(R"({"metadata":{"name":"n2"},
      "spec":{"taints":[{"key":"gpu","value":"yes","effect":"NoExecute"}]}})");
  ASSERT_TRUE(tainted.ok());
  EXPECT_FALSE(NodeShouldRunDaemonPod(spec("{}"), *tainted));
  EXPECT_TRUE(NodeShouldRunDaemonPod(
      spec(R"({"tolerations":[{"key":"gpu","operator":"Equal","value":"yes"}]})"), *tainted));
}

}  // namespace
}  // namespace copse::apiserver::controllers::testing
