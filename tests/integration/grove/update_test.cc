// Template updates (RollingRecreate one pod at a time, OnDelete on user
// deletion only), and PodCliqueSets that fail validation without a webhook
// in front of the API server: nothing is created.

#include <gtest/gtest.h>

#include <set>

#include "tests/integration/grove/env.h"

namespace copse::grove::testing {
namespace {

const std::string kPcd = "grove.io/podclique=simple1-0-pcd";

json SimpleWith(const std::string& strategy) {
  json pcs = json::parse(YamlDocs(ReadSourceFile("deploy/examples/grove/simple1.yaml")).front());
  if (!strategy.empty()) pcs["spec"]["updateStrategy"] = {{"type", strategy}};
  return pcs;
}

// Read, modify, write, as kubectl edit does: the operator writes the
// PodCliqueSet's status meanwhile, so a Conflict means read again and retry.
void SetPcdImage(GroveEnv& env, const std::string& image) {
  Result<std::string> updated = MakeError(ErrorCode::kConflict, "not tried");
  for (int attempt = 0; attempt < 20; ++attempt) {
    auto pcs = env.Get(api::resources::kPodCliqueSets, "default", "simple1");
    ASSERT_TRUE(pcs.has_value());
    for (auto& clique : (*pcs)["spec"]["template"]["cliques"]) {
      if (clique["name"] == "pcd") clique["spec"]["podSpec"]["containers"][0]["image"] = image;
    }
    updated = env.io().Run(
        env.client().Update(api::resources::kPodCliqueSets, "default", "simple1", pcs->dump()));
    if (updated.ok() || updated.error().code != ErrorCode::kConflict) break;
  }
  ASSERT_TRUE(updated.ok()) << updated.error().ToString();
}

std::map<std::string, std::string> ImageByPod(GroveEnv& env, const std::string& selector) {
  std::map<std::string, std::string> out;
  for (const auto& pod : env.List(kube::resources::kPods, "default", selector)) {
    if (pod["metadata"].contains("deletionTimestamp")) continue;
    out[pod["metadata"]["name"]] = pod["spec"]["containers"][0]["image"];
  }
  return out;
}

TEST(Updates, RollingRecreateReplacesOnePodAtATime) {
  GroveEnv env;
  env.CreateJson(SimpleWith("RollingRecreate").dump());
  ASSERT_TRUE(env.BindUntilReady("app.kubernetes.io/part-of=simple1", 9));
  auto before = ImageByPod(env, kPcd);
  ASSERT_EQ(before.size(), 2u);
  SetPcdImage(env, "nginx:1.27");
  // Keep binding replacements until both pods run the new image and are Ready.
  ASSERT_TRUE(env.WaitFor([&] {
    env.BindUngated(kPcd);
    auto now = ImageByPod(env, kPcd);
    if (now.size() != 2) return false;
    for (const auto& [name, image] : now) {
      if (image != "nginx:1.27" || before.count(name)) return false;
    }
    auto pclq = env.Get(api::resources::kPodCliques, "default", "simple1-0-pcd");
    return pclq && StatusInt(*pclq, "readyReplicas") == 2 &&
           StatusInt(*pclq, "updatedReplicas") == 2;
  }));
  // Never were both old pods gone before a replacement was Ready: deletions of
  // outdated pods are separated by a Ready replacement.
  int old_deleted = 0;
  std::set<std::string> replacements_ready;
  for (const auto& e : env.recorder().Events()) {
    if (e.resource != "pods" || Label(e.object, "grove.io/podclique") != "simple1-0-pcd") continue;
    std::string name = e.object["metadata"]["name"];
    bool deleting = e.object["metadata"].contains("deletionTimestamp") ||
                    e.type == apisrv::WatchEventType::kDeleted;
    if (before.count(name) && deleting && e.type != apisrv::WatchEventType::kDeleted) {
      if (++old_deleted == 2) {
        EXPECT_GE(replacements_ready.size(), 1u)
            << "second old pod deleted before a replacement was Ready";
      }
    }
    if (!before.count(name)) {
      for (const auto& c : e.object["status"].value("conditions", json::array())) {
        if (c["type"] == "Ready" && c["status"] == "True") replacements_ready.insert(name);
      }
    }
  }
  EXPECT_EQ(old_deleted, 2);
  // Other cliques were not touched.
  EXPECT_EQ(env.Pods("grove.io/podclique=simple1-0-pca").size(), 3u);
}

TEST(Updates, OnDeleteWaitsForTheUser) {
  GroveEnv env;
  env.CreateJson(SimpleWith("OnDelete").dump());
  ASSERT_TRUE(env.BindUntilReady("app.kubernetes.io/part-of=simple1", 9));
  auto before = ImageByPod(env, kPcd);
  SetPcdImage(env, "nginx:1.27");
  // The PodClique takes the new template ...
  ASSERT_TRUE(env.WaitFor([&] {
    auto pclq = env.Get(api::resources::kPodCliques, "default", "simple1-0-pcd");
    return pclq && (*pclq)["spec"]["podSpec"]["containers"][0]["image"] == "nginx:1.27" &&
           StatusInt(*pclq, "updatedReplicas") == 0;
  }));
  // ... but its pods stay as they are until someone deletes them.
  EXPECT_EQ(ImageByPod(env, kPcd), before);
  kube::DeleteOptions now;
  now.grace_period_seconds = 0;
  std::string victim = before.begin()->first;
  ASSERT_TRUE(
      env.io().Run(env.client().Delete(kube::resources::kPods, "default", victim, now)).ok());
  ASSERT_TRUE(env.WaitFor([&] {
    auto images = ImageByPod(env, kPcd);
    int updated = 0;
    for (const auto& [name, image] : images) updated += image == "nginx:1.27";
    return images.size() == 2 && updated == 1 && !images.count(victim);
  }));
}

TEST(Validation, WithoutAWebhookInvalidPodCliqueSetsCreateNothing) {
  GroveEnv env;
  json bad = SimpleWith("");
  bad["spec"]["template"]["cliques"][1]["spec"]["minAvailable"] = 5;  // pcb has 2 replicas
  env.CreateJson(bad.dump());
  json good = SimpleWith("");
  good["metadata"]["name"] = "simple2";
  env.CreateJson(good.dump());
  // The valid one is reconciled; by then the invalid one (created first) was seen too.
  ASSERT_TRUE(
      env.WaitFor([&] { return env.Pods("app.kubernetes.io/part-of=simple2").size() == 9; }));
  ASSERT_TRUE(env.WaitFor([&] { return env.op()->Idle(); }));
  EXPECT_TRUE(env.List(api::resources::kPodCliques, "default", "app.kubernetes.io/part-of=simple1")
                  .empty());
  EXPECT_TRUE(
      env.List(api::resources::kPodGangs, "default", "app.kubernetes.io/part-of=simple1").empty());
  EXPECT_TRUE(env.Pods("app.kubernetes.io/part-of=simple1").empty());
  // The operator's admission names the field.
  auto admitted = env.op()->ValidatePodCliqueSet(bad.dump());
  ASSERT_FALSE(admitted.ok());
  EXPECT_EQ(
      admitted.error().message,
      "PodCliqueSet.grove.io \"simple1\" is invalid: spec.template.cliques[1].spec.minAvailable: "
      "Invalid value: 5: minAvailable must not be greater than replicas");
}

}  // namespace
}  // namespace copse::grove::testing
