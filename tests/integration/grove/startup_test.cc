// Startup order (AnyOrder / InOrder / Explicit) through the grove-initc init
// container, and the `copse initc` wait itself. There is no kubelet: the test
// plays one that starts a pod (binds it) only when its init container's
// dependencies are met, so the order becomes visible in the watch history.

#include <gtest/gtest.h>

#include <future>
#include <set>

#include "grove/initc/initc.h"
#include "tests/integration/grove/env.h"

namespace copse::grove::testing {
namespace {

std::string OrderedPcs(const std::string& startup, bool explicit_deps) {
  json pcs = {{"apiVersion", "grove.io/v1alpha1"},
              {"kind", "PodCliqueSet"},
              {"metadata", {{"name", "ordered"}}},
              {"spec",
               {{"replicas", 1},
                {"template",
                 {{"cliqueStartupType", startup},
                  {"cliques", json::array()},
                  {"podCliqueScalingGroups", json::array({{{"name", "sg"},
                                                           {"cliqueNames", {"c"}},
                                                           {"replicas", 2},
                                                           {"minAvailable", 1}}})}}}}}};
  auto clique = [](const std::string& name, int replicas, json starts_after) {
    json c = {
        {"name", name},
        {"spec",
         {{"roleName", name},
          {"replicas", replicas},
          {"podSpec", {{"containers", json::array({{{"name", name}, {"image", "busybox"}}})}}}}}};
    if (!starts_after.empty()) c["spec"]["startsAfter"] = starts_after;
    return c;
  };
  pcs["spec"]["template"]["cliques"].push_back(clique("a", 2, json::array()));
  pcs["spec"]["template"]["cliques"].push_back(
      clique("b", 2, explicit_deps ? json::array({"a"}) : json::array()));
  pcs["spec"]["template"]["cliques"].push_back(
      clique("c", 1, explicit_deps ? json::array({"a", "b"}) : json::array()));
  return pcs.dump();
}

std::vector<std::string> InitcArgs(const json& pod) {
  std::vector<std::string> out;
  for (const auto& c : pod["spec"].value("initContainers", json::array())) {
    if (c["name"] != "grove-initc") continue;
    EXPECT_EQ(c["command"], json::array({"copse", "initc"}));
    EXPECT_EQ(c["image"], "copse:test");
    for (const auto& a : c["args"]) out.push_back(a);
  }
  return out;
}

EnvOptions WithInitcImage() {
  EnvOptions options;
  options.op.initc_image = "copse:test";
  return options;
}

// One pass of a kubelet that honours grove-initc: binds ungated pods whose
// dependencies have enough Ready pods.
void StartPodsWhoseDependenciesAreReady(GroveEnv& env) {
  auto pods = env.Pods("app.kubernetes.io/part-of=ordered");
  auto ready = initc::ReadyPerClique(pods);
  for (const auto& pod : pods) {
    if (!pod.spec.scheduling_gates.empty() || !pod.spec.node_name.empty()) continue;
    auto raw = env.Get(kube::resources::kPods, "default", pod.meta.name);
    if (!raw) continue;
    auto deps = initc::ParsePodCliques(InitcArgs(*raw));
    ASSERT_TRUE(deps.ok());
    if (!initc::Satisfied(*deps, ready)) continue;
    Status s = env.io().Run(env.client().Bind("default", pod.meta.name, env.node_names()[0]));
    ASSERT_TRUE(s.ok()) << s.error().ToString();
  }
}

// rv at which clique `pclq` first had `count` Ready pods, from the watch history.
uint64_t ReadyAt(GroveEnv& env, const std::string& pclq, int count) {
  std::set<std::string> ready;
  for (const auto& e : env.recorder().Events()) {
    if (e.resource != "pods" || Label(e.object, "grove.io/podclique") != pclq) continue;
    for (const auto& c : e.object["status"].value("conditions", json::array())) {
      if (c["type"] == "Ready" && c["status"] == "True") ready.insert(e.object["metadata"]["name"]);
    }
    if (static_cast<int>(ready.size()) >= count) return e.rv;
  }
  return 0;
}

uint64_t FirstBoundAt(GroveEnv& env, const std::string& pclq) {
  for (const auto& e : env.recorder().Events()) {
    if (e.resource != "pods" || Label(e.object, "grove.io/podclique") != pclq) continue;
    if (!e.object["spec"].value("nodeName", "").empty()) return e.rv;
  }
  return 0;
}

TEST(StartupOrder, InOrderStartsCliquesInTemplateOrder) {
  GroveEnv env(WithInitcImage());
  env.CreateJson(OrderedPcs("CliqueStartupTypeInOrder", false));
  const std::string sel = "app.kubernetes.io/part-of=ordered";
  ASSERT_TRUE(env.WaitFor([&] { return env.Pods(sel).size() == 6; }));
  auto args_of = [&](const std::string& pclq) {
    return InitcArgs(
        env.List(kube::resources::kPods, "default", "grove.io/podclique=" + pclq).front());
  };
  EXPECT_TRUE(args_of("ordered-0-a").empty());
  EXPECT_EQ(args_of("ordered-0-b"), std::vector<std::string>{"--podcliques=ordered-0-a:2"});
  // c is in scaling group sg: replica 0 belongs to the base gang and waits for b;
  // replica 1 is a scaled gang, ordered only within its scaling group.
  EXPECT_EQ(args_of("ordered-0-sg-0-c"), std::vector<std::string>{"--podcliques=ordered-0-b:2"});
  EXPECT_TRUE(args_of("ordered-0-sg-1-c").empty());
  auto pclq_b = env.Get(api::resources::kPodCliques, "default", "ordered-0-b");
  EXPECT_EQ((*pclq_b)["spec"]["startsAfter"], json::array({"ordered-0-a"}));
  auto pod = env.List(kube::resources::kPods, "default", "grove.io/podclique=ordered-0-b").front();
  EXPECT_EQ(pod["spec"]["volumes"].back()["name"], "pod-info-vol");

  ASSERT_TRUE(env.WaitFor([&] {
    StartPodsWhoseDependenciesAreReady(env);
    return ReadyAt(env, "ordered-0-sg-0-c", 1) != 0;
  }));
  uint64_t a_ready = ReadyAt(env, "ordered-0-a", 2);
  uint64_t b_ready = ReadyAt(env, "ordered-0-b", 2);
  ASSERT_NE(a_ready, 0u);
  ASSERT_NE(b_ready, 0u);
  EXPECT_LT(a_ready, FirstBoundAt(env, "ordered-0-b")) << "b started before a was Ready";
  EXPECT_LT(b_ready, FirstBoundAt(env, "ordered-0-sg-0-c")) << "c started before b was Ready";
}

TEST(StartupOrder, ExplicitStartsAfterAndTheInitcWait) {
  GroveEnv env(WithInitcImage());
  env.CreateJson(OrderedPcs("CliqueStartupTypeExplicit", true));
  const std::string sel = "grove.io/podgang=ordered-0";  // the base gang
  ASSERT_TRUE(env.WaitFor([&] {
    auto pods = env.Pods(sel);
    if (pods.size() != 5) return false;
    for (const auto& p : pods) {
      if (!p.spec.scheduling_gates.empty()) return false;
    }
    return true;
  }));
  auto c_pod =
      env.List(kube::resources::kPods, "default", "grove.io/podclique=ordered-0-sg-0-c").front();
  EXPECT_EQ(InitcArgs(c_pod), std::vector<std::string>{"--podcliques=ordered-0-a:2,ordered-0-b:2"});
  auto deps = initc::ParsePodCliques(InitcArgs(c_pod));
  ASSERT_TRUE(deps.ok());
  // `copse initc` for c waits until a and b each have 2 Ready pods.
  auto waiting =
      env.io().Spawn(initc::Wait(env.client_ptr(), "default", *deps, std::chrono::seconds(30)));
  ASSERT_TRUE(env.BindUntilReady("grove.io/podclique=ordered-0-a", 2));
  EXPECT_EQ(waiting.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout)
      << "initc returned before b was Ready";
  ASSERT_TRUE(env.BindUntilReady("grove.io/podclique=ordered-0-b", 2));
  ASSERT_EQ(waiting.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  Status done = waiting.get();
  EXPECT_TRUE(done.ok()) << done.error().ToString();
}

TEST(StartupOrder, AnyOrderHasNoInitContainer) {
  GroveEnv env(WithInitcImage());
  env.CreateJson(OrderedPcs("CliqueStartupTypeAnyOrder", false));
  ASSERT_TRUE(
      env.WaitFor([&] { return env.Pods("app.kubernetes.io/part-of=ordered").size() == 6; }));
  for (const auto& pod : env.List(kube::resources::kPods)) EXPECT_TRUE(InitcArgs(pod).empty());
}

TEST(Initc, ParsesTheFlag) {
  auto deps = initc::ParsePodCliques({"--podcliques=x"});
  EXPECT_FALSE(deps.ok());
  auto ok = initc::ParsePodCliques({"pcs-0-a:2,pcs-0-sg-0-b:1", "pcs-0-c:3"});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok,
            (std::vector<initc::Dependency>{{"pcs-0-a", 2}, {"pcs-0-sg-0-b", 1}, {"pcs-0-c", 3}}));
  auto bad = initc::ParsePodCliques({"pcs-0-a:two"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "--podcliques: \"pcs-0-a:two\": minAvailable must be a non-negative integer");
}

}  // namespace
}  // namespace copse::grove::testing
