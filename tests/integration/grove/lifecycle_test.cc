// GREP-375's PodGang lifecycle, proven from the API server's watch history
// (one resourceVersion counter for all kinds, so rv order is write order):
//   PodGang before any pod; the copse PodGroup before any gate is lifted;
//   Initialized goes PodsPending -> RefsSyncing -> Ready with sorted, complete
//   references; no gate is lifted before Initialized=True; scaled gangs wait
//   for the base gang; scale-out/in never flips Initialized back.

#include <gtest/gtest.h>

#include <set>

#include "tests/integration/grove/env.h"

namespace copse::grove::testing {
namespace {

std::string InitializedReason(const json& gang) {
  if (!gang.contains("status") || !gang["status"].is_object()) return "";
  for (const auto& c : gang["status"].value("conditions", json::array())) {
    if (c["type"] == "Initialized")
      return c["status"].get<std::string>() + "/" + c["reason"].get<std::string>();
  }
  return "";
}

bool HasGate(const json& pod) {
  if (!pod.contains("spec")) return false;
  for (const auto& g : pod["spec"].value("schedulingGates", json::array())) {
    if (g["name"] == "grove.io/podgang-pending-creation") return true;
  }
  return false;
}

bool AllUngated(GroveEnv& env, const std::string& selector, size_t count) {
  auto pods = env.Pods(selector);
  if (pods.size() != count) return false;
  for (const auto& p : pods) {
    if (!p.spec.scheduling_gates.empty()) return false;
  }
  return true;
}

TEST(PodGangLifecycle, WatchHistoryOrder) {
  GroveEnv env;
  env.CreateFromFile("deploy/examples/grove/simple1.yaml");
  const std::string sel = "app.kubernetes.io/part-of=simple1";
  ASSERT_TRUE(env.WaitFor([&] { return AllUngated(env, sel, 9); }));
  ASSERT_TRUE(env.BindUntilReady(sel, 9));
  ASSERT_TRUE(env.WaitFor([&] {
    auto gang = env.Get(api::resources::kPodGangs, "default", "simple1-0");
    return gang && (*gang)["status"]["phase"] == "Running";
  }));

  uint64_t first_gang = 0, first_pod = 0, first_podgroup = 0, initialized_true = 0;
  uint64_t first_ungate = 0;
  std::vector<std::string> reasons;
  std::map<std::string, bool> gated;  // pod name -> last seen gated
  json refs_at_initialized;
  for (const auto& e : env.recorder().Events()) {
    const json& o = e.object;
    std::string name = o["metadata"].value("name", "");
    if (e.resource == "podgangs" && name == "simple1-0") {
      if (first_gang == 0) first_gang = e.rv;
      std::string reason = InitializedReason(o);
      if (!reason.empty() && (reasons.empty() || reasons.back() != reason))
        reasons.push_back(reason);
      if (reason == "True/Ready" && initialized_true == 0) {
        initialized_true = e.rv;
        refs_at_initialized = o["spec"]["podgroups"];
      }
    } else if (e.resource == "podgroups" && name == "simple1-0" && first_podgroup == 0 &&
               o["apiVersion"] == "scheduling.copse.dev/v1alpha1") {
      first_podgroup = e.rv;
    } else if (e.resource == "pods" && Label(o, "app.kubernetes.io/part-of") == "simple1") {
      if (e.type == apisrv::WatchEventType::kAdded) {
        if (first_pod == 0) first_pod = e.rv;
        EXPECT_TRUE(HasGate(o)) << name << " was created without the gate";
      }
      bool now_gated = HasGate(o);
      auto it = gated.find(name);
      if (it != gated.end() && it->second && !now_gated && first_ungate == 0) first_ungate = e.rv;
      gated[name] = now_gated;
    }
  }
  ASSERT_NE(first_gang, 0u);
  ASSERT_NE(first_pod, 0u);
  ASSERT_NE(first_podgroup, 0u);
  ASSERT_NE(initialized_true, 0u);
  ASSERT_NE(first_ungate, 0u);
  EXPECT_LT(first_gang, first_pod) << "PodGang must exist before any pod";
  EXPECT_LT(first_podgroup, first_ungate) << "copse PodGroup must exist before a gate is lifted";
  EXPECT_LT(initialized_true, first_ungate) << "no gate may be lifted before Initialized=True";
  EXPECT_EQ(reasons,
            (std::vector<std::string>{"False/PodsPending", "False/RefsSyncing", "True/Ready"}));

  // At Initialized=True every PodGroup lists all of its pods, sorted.
  size_t total = 0;
  for (const auto& group : refs_at_initialized) {
    std::vector<std::string> names;
    for (const auto& ref : group["podReferences"]) {
      EXPECT_EQ(ref["namespace"], "default");
      names.push_back(ref["name"]);
    }
    EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
    EXPECT_EQ(static_cast<int>(names.size()), group["minReplicas"].get<int>()) << group.dump();
    total += names.size();
  }
  EXPECT_EQ(total, 9u);

  // The copse PodGroup mirrors the gang: minMember, subgroups, scaling-group replicas as parents.
  auto pg = env.Get(kCopsePodGroups, "default", "simple1-0");
  ASSERT_TRUE(pg.has_value());
  EXPECT_EQ((*pg)["spec"]["minMember"], 9);
  EXPECT_EQ((*pg)["spec"]["minSubGroup"], 3);  // pca, pcd, sga-0
  std::map<std::string, json> subgroups;
  for (const auto& sg : (*pg)["spec"]["subGroups"]) subgroups[sg["name"]] = sg;
  ASSERT_EQ(subgroups.size(), 5u);
  EXPECT_EQ(subgroups["simple1-0-sga-0"]["minSubGroup"], 2);
  EXPECT_EQ(subgroups["simple1-0-sga-0"]["minMember"], 4);
  EXPECT_EQ(subgroups["simple1-0-sga-0-pcb"]["parent"], "simple1-0-sga-0");
  EXPECT_EQ(subgroups["simple1-0-sga-0-pcb"]["minMember"], 2);
  EXPECT_FALSE(subgroups["simple1-0-pca"].contains("parent"));
  EXPECT_EQ(subgroups["simple1-0-pca"]["minMember"], 3);

  // Status of the tree once everything runs.
  ASSERT_TRUE(env.WaitFor([&] {
    auto pcs = env.Get(api::resources::kPodCliqueSets, "default", "simple1");
    return pcs && StatusInt(*pcs, "availableReplicas") == 1;
  }));
  auto pcs = env.Get(api::resources::kPodCliqueSets, "default", "simple1");
  EXPECT_EQ((*pcs)["status"]["replicas"], 1);
  EXPECT_EQ((*pcs)["status"]["hpaPodSelector"],
            "app.kubernetes.io/managed-by=grove-operator,app.kubernetes.io/part-of=simple1");
  EXPECT_EQ((*pcs)["status"]["podGangStatuses"][0]["name"], "simple1-0");
  ASSERT_TRUE(env.WaitFor([&] {
    auto pclq = env.Get(api::resources::kPodCliques, "default", "simple1-0-pca");
    return pclq && StatusInt(*pclq, "readyReplicas") == 3;
  }));
  auto pclq = env.Get(api::resources::kPodCliques, "default", "simple1-0-pca");
  EXPECT_EQ((*pclq)["status"]["scheduledReplicas"], 3);
  EXPECT_EQ((*pclq)["status"]["scheduleGatedReplicas"], 0);
  EXPECT_EQ(
      (*pclq)["status"]["hpaPodSelector"],
      "app.kubernetes.io/managed-by=grove-operator,app.kubernetes.io/part-of=simple1,grove.io/"
      "podclique=simple1-0-pca");
}

TEST(PodGangLifecycle, ScaledGangWaitsForTheBaseGang) {
  GroveEnv env;
  env.CreateFromFile("deploy/examples/grove/multinode-disaggregated.yaml");
  const std::string base = "grove.io/podgang=multinode-disaggregated-0";
  const std::string scaled = "grove.io/podgang=multinode-disaggregated-0-prefill-0";
  ASSERT_TRUE(env.WaitFor([&] { return AllUngated(env, base, 8); }));
  ASSERT_TRUE(env.WaitFor([&] {
    auto gang =
        env.Get(api::resources::kPodGangs, "default", "multinode-disaggregated-0-prefill-0");
    return gang && InitializedReason(*gang) == "True/Ready";
  }));
  // The scaled gang is Initialized but its base gang is not scheduled yet.
  for (const auto& pod : env.Pods(scaled)) {
    EXPECT_FALSE(pod.spec.scheduling_gates.empty()) << pod.meta.name;
  }
  ASSERT_EQ(env.Pods(scaled).size(), 5u);
  EXPECT_EQ(env.BindUngated(base), 8);
  ASSERT_TRUE(env.WaitFor([&] { return AllUngated(env, scaled, 5); }));
  auto pg = env.Get(kCopsePodGroups, "default", "multinode-disaggregated-0-prefill-0");
  ASSERT_TRUE(pg.has_value());
  EXPECT_EQ((*pg)["spec"]["minMember"], 5);
  EXPECT_EQ(Label(*pg, "grove.io/base-podgang"), "multinode-disaggregated-0");
}

TEST(PodGangLifecycle, ScaleOutAndReplacementKeepInitialized) {
  GroveEnv env;
  env.CreateFromFile("deploy/examples/grove/simple1.yaml");
  const std::string pca = "grove.io/podclique=simple1-0-pca";
  ASSERT_TRUE(env.WaitFor([&] { return AllUngated(env, "app.kubernetes.io/part-of=simple1", 9); }));
  auto scaled = env.io().Run(
      env.client().UpdateScale(api::resources::kPodCliques, "default", "simple1-0-pca", 4));
  ASSERT_TRUE(scaled.ok());
  auto refs_of = [&](const std::string& group) {
    std::set<std::string> out;
    auto gang = env.Get(api::resources::kPodGangs, "default", "simple1-0");
    if (!gang) return out;
    for (const auto& g : (*gang)["spec"]["podgroups"]) {
      if (g["name"] != group) continue;
      for (const auto& r : g["podReferences"]) out.insert(r["name"]);
    }
    return out;
  };
  auto pod_names = [&](const std::string& selector) {
    std::set<std::string> out;
    for (const auto& p : env.Pods(selector)) out.insert(p.meta.name);
    return out;
  };
  ASSERT_TRUE(env.WaitFor([&] {
    return pod_names(pca).size() == 4 && refs_of("simple1-0-pca") == pod_names(pca) &&
           AllUngated(env, pca, 4);
  }));
  // Replace a pod: the new one is referenced and ungated, Initialized stays True.
  std::string victim = *pod_names(pca).begin();
  kube::DeleteOptions now;
  now.grace_period_seconds = 0;
  ASSERT_TRUE(
      env.io().Run(env.client().Delete(kube::resources::kPods, "default", victim, now)).ok());
  ASSERT_TRUE(env.WaitFor([&] {
    auto names = pod_names(pca);
    return names.size() == 4 && !names.count(victim) && refs_of("simple1-0-pca") == names &&
           AllUngated(env, pca, 4);
  }));
  // Scale in again: references shrink.
  ASSERT_TRUE(
      env.io()
          .Run(env.client().UpdateScale(api::resources::kPodCliques, "default", "simple1-0-pca", 3))
          .ok());
  ASSERT_TRUE(env.WaitFor(
      [&] { return pod_names(pca).size() == 3 && refs_of("simple1-0-pca") == pod_names(pca); }));
  bool seen_true = false;
  for (const auto& e : env.recorder().Events()) {
    if (e.resource != "podgangs" || e.object["metadata"]["name"] != "simple1-0") continue;
    std::string reason = InitializedReason(e.object);
    if (reason == "True/Ready") seen_true = true;
    if (seen_true) {
      EXPECT_EQ(reason, "True/Ready") << "Initialized flipped back at rv " << e.rv;
    }
  }
  EXPECT_TRUE(seen_true);
}

}  // namespace
}  // namespace copse::grove::testing
