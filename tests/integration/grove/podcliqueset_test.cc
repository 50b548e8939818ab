// The PodCliqueSet and PodCliqueScalingGroup controllers on the embedded API
// server: upstream Grove's samples create exactly the upstream-named objects
// with upstream labels and owner references.

#include <gtest/gtest.h>

#include <set>

#include "tests/integration/grove/env.h"

namespace copse::grove::testing {
namespace {

std::string ControllerOwner(const json& obj) {
  for (const auto& ref : obj["metadata"]["ownerReferences"]) {
    if (ref.value("controller", false))
      return ref["kind"].get<std::string>() + "/" + ref["name"].get<std::string>();
  }
  return "";
}

class SimpleSample : public ::testing::Test {
 protected:
  void SetUp() override {
    env_.CreateFromFile("deploy/examples/grove/simple1.yaml");
    ASSERT_TRUE(env_.WaitFor([&] {
      return env_.Pods("app.kubernetes.io/part-of=simple1").size() == 9;
    })) << "pods: "
        << env_.Pods().size();
  }
  GroveEnv env_;
};

TEST_F(SimpleSample, CreatesUpstreamNamedObjects) {
  EXPECT_EQ(env_.Names(api::resources::kPodCliques),
            (std::vector<std::string>{"simple1-0-pca", "simple1-0-pcd", "simple1-0-sga-0-pcb",
                                      "simple1-0-sga-0-pcc"}));
  EXPECT_EQ(env_.Names(api::resources::kPodCliqueScalingGroups),
            std::vector<std::string>{"simple1-0-sga"});
  EXPECT_EQ(env_.Names(api::resources::kPodGangs), std::vector<std::string>{"simple1-0"});
  EXPECT_EQ(env_.Names(kube::resources::kServices, "default", "app.kubernetes.io/part-of=simple1"),
            std::vector<std::string>{"simple1-0"});
  std::map<std::string, int> per_clique;
  for (const auto& pod : env_.Pods("app.kubernetes.io/part-of=simple1")) {
    ++per_clique[pod.meta.labels.at("grove.io/podclique")];
    EXPECT_EQ(pod.meta.name.rfind(pod.meta.labels.at("grove.io/podclique") + "-", 0), 0u)
        << pod.meta.name;
  }
  EXPECT_EQ(per_clique, (std::map<std::string, int>{{"simple1-0-pca", 3},
                                                    {"simple1-0-pcd", 2},
                                                    {"simple1-0-sga-0-pcb", 2},
                                                    {"simple1-0-sga-0-pcc", 2}}));
}

TEST_F(SimpleSample, LabelsAndOwnerReferencesAreUpstreams) {
  auto pca = env_.Get(api::resources::kPodCliques, "default", "simple1-0-pca");
  ASSERT_TRUE(pca.has_value());
  EXPECT_EQ(Label(*pca, "app.kubernetes.io/managed-by"), "grove-operator");
  EXPECT_EQ(Label(*pca, "app.kubernetes.io/part-of"), "simple1");
  EXPECT_EQ(Label(*pca, "app.kubernetes.io/name"), "simple1-0-pca");
  EXPECT_EQ(Label(*pca, "app.kubernetes.io/component"), "pcs-podclique");
  EXPECT_EQ(Label(*pca, "grove.io/podgang"), "simple1-0");
  EXPECT_EQ(Label(*pca, "grove.io/podcliqueset-replica-index"), "0");
  EXPECT_FALSE(Label(*pca, "grove.io/pod-template-hash").empty());
  EXPECT_EQ(ControllerOwner(*pca), "PodCliqueSet/simple1");
  EXPECT_EQ((*pca)["spec"]["replicas"], 3);
  EXPECT_EQ((*pca)["spec"]["minAvailable"], 3);  // defaulted to replicas
  EXPECT_EQ((*pca)["spec"]["roleName"], "rolea");

  auto pcb = env_.Get(api::resources::kPodCliques, "default", "simple1-0-sga-0-pcb");
  ASSERT_TRUE(pcb.has_value());
  EXPECT_EQ(Label(*pcb, "app.kubernetes.io/component"), "pcsg-podclique");
  EXPECT_EQ(Label(*pcb, "grove.io/podcliquescalinggroup"), "simple1-0-sga");
  EXPECT_EQ(Label(*pcb, "grove.io/podcliquescalinggroup-replica-index"), "0");
  EXPECT_EQ(Label(*pcb, "grove.io/podgang"), "simple1-0");
  EXPECT_EQ(Label(*pcb, "grove.io/base-podgang"), "");  // replica 0 < minAvailable: base gang
  EXPECT_EQ(ControllerOwner(*pcb), "PodCliqueScalingGroup/simple1-0-sga");

  auto pcsg = env_.Get(api::resources::kPodCliqueScalingGroups, "default", "simple1-0-sga");
  ASSERT_TRUE(pcsg.has_value());
  EXPECT_EQ(Label(*pcsg, "app.kubernetes.io/component"), "pcs-podcliquescalinggroup");
  EXPECT_EQ(ControllerOwner(*pcsg), "PodCliqueSet/simple1");
  EXPECT_EQ((*pcsg)["spec"]["replicas"], 1);
  EXPECT_EQ((*pcsg)["spec"]["minAvailable"], 1);
  EXPECT_EQ((*pcsg)["spec"]["cliqueNames"], json::array({"pcb", "pcc"}));

  auto svc = env_.Get(kube::resources::kServices, "default", "simple1-0");
  ASSERT_TRUE(svc.has_value());
  EXPECT_EQ((*svc)["spec"]["clusterIP"], "None");
  EXPECT_EQ((*svc)["spec"]["publishNotReadyAddresses"], true);
  EXPECT_EQ((*svc)["spec"]["selector"], json({{"app.kubernetes.io/managed-by", "grove-operator"},
                                              {"app.kubernetes.io/part-of", "simple1"},
                                              {"grove.io/podcliqueset-replica-index", "0"}}));
  EXPECT_EQ(Label(*svc, "app.kubernetes.io/component"), "pcs-headless-service");
  EXPECT_EQ(ControllerOwner(*svc), "PodCliqueSet/simple1");

  auto gang = env_.Get(api::resources::kPodGangs, "default", "simple1-0");
  ASSERT_TRUE(gang.has_value());
  EXPECT_EQ(Label(*gang, "app.kubernetes.io/component"), "podgang");
  EXPECT_EQ(Label(*gang, "grove.io/scheduler-name"), "copse-scheduler");
  EXPECT_EQ(Label(*gang, "app"), "simple1");  // mirrored from the PodCliqueSet
  EXPECT_EQ(ControllerOwner(*gang), "PodCliqueSet/simple1");
  std::vector<std::pair<std::string, int>> groups;
  for (const auto& g : (*gang)["spec"]["podgroups"])
    groups.push_back({g["name"], g["minReplicas"]});
  EXPECT_EQ(groups, (std::vector<std::pair<std::string, int>>{{"simple1-0-pca", 3},
                                                              {"simple1-0-pcd", 2},
                                                              {"simple1-0-sga-0-pcb", 2},
                                                              {"simple1-0-sga-0-pcc", 2}}));
  ASSERT_EQ((*gang)["spec"]["topologyConstraintGroupConfigs"].size(), 1u);
  EXPECT_EQ((*gang)["spec"]["topologyConstraintGroupConfigs"][0]["name"], "simple1-0-sga-0");
}

TEST_F(SimpleSample, PodsCarryHostnamesEnvAndLabels) {
  std::set<std::string> hostnames;
  for (const auto& pod :
       env_.List(kube::resources::kPods, "default", "grove.io/podclique=simple1-0-sga-0-pcb")) {
    hostnames.insert(pod["spec"]["hostname"]);
    EXPECT_EQ(pod["spec"]["subdomain"], "simple1-0");
    std::string index = Label(pod, "grove.io/podclique-pod-index");
    EXPECT_EQ(pod["spec"]["hostname"], "simple1-0-sga-0-pcb-" + index);
    EXPECT_EQ(Label(pod, "grove.io/podgang"), "simple1-0");
    EXPECT_EQ(Label(pod, "grove.io/podcliqueset-replica-index"), "0");
    EXPECT_EQ(Label(pod, "scheduling.copse.dev/pod-group"), "simple1-0");
    EXPECT_EQ(Label(pod, "scheduling.copse.dev/subgroup"), "simple1-0-sga-0-pcb");
    EXPECT_EQ(pod["spec"]["schedulerName"], "copse-scheduler");
    EXPECT_EQ(pod["metadata"]["generateName"], "simple1-0-sga-0-pcb-");
    EXPECT_EQ(Env(pod, "GROVE_PCS_NAME"), "simple1");
    EXPECT_EQ(Env(pod, "GROVE_PCS_INDEX"), "0");
    EXPECT_EQ(Env(pod, "GROVE_PCLQ_NAME"), "simple1-0-sga-0-pcb");
    EXPECT_EQ(Env(pod, "GROVE_HEADLESS_SERVICE"), "simple1-0.default.svc.cluster.local");
    EXPECT_EQ(Env(pod, "GROVE_PCLQ_POD_INDEX"),
              "fieldRef:metadata.labels['grove.io/podclique-pod-index']");
    EXPECT_EQ(Env(pod, "GROVE_PCSG_NAME"),
              "fieldRef:metadata.labels['grove.io/podcliquescalinggroup']");
    EXPECT_EQ(Env(pod, "GROVE_PCSG_INDEX"),
              "fieldRef:metadata.labels['grove.io/podcliquescalinggroup-replica-index']");
    EXPECT_EQ(Env(pod, "GROVE_PCSG_TEMPLATE_NUM_PODS"), "4");
    EXPECT_EQ(ControllerOwner(pod), "PodClique/simple1-0-sga-0-pcb");
  }
  EXPECT_EQ(hostnames, (std::set<std::string>{"simple1-0-sga-0-pcb-0", "simple1-0-sga-0-pcb-1"}));
  for (const auto& pod :
       env_.List(kube::resources::kPods, "default", "grove.io/podclique=simple1-0-pca")) {
    EXPECT_EQ(Env(pod, "GROVE_PCSG_NAME"), "<unset>");  // standalone clique
  }
}

TEST_F(SimpleSample, ScalingTheGroupAddsAScaledGang) {
  // kubectl scale pcsg simple1-0-sga --replicas=2
  auto scaled = env_.io().Run(env_.client().UpdateScale(api::resources::kPodCliqueScalingGroups,
                                                        "default", "simple1-0-sga", 2));
  ASSERT_TRUE(scaled.ok()) << scaled.error().ToString();
  ASSERT_TRUE(
      env_.WaitFor([&] { return env_.Pods("app.kubernetes.io/part-of=simple1").size() == 13; }));
  EXPECT_EQ(env_.Names(api::resources::kPodGangs),
            (std::vector<std::string>{"simple1-0", "simple1-0-sga-0"}));
  auto pcb1 = env_.Get(api::resources::kPodCliques, "default", "simple1-0-sga-1-pcb");
  ASSERT_TRUE(pcb1.has_value());
  EXPECT_EQ(Label(*pcb1, "grove.io/podgang"), "simple1-0-sga-0");
  EXPECT_EQ(Label(*pcb1, "grove.io/base-podgang"), "simple1-0");
  auto gang = env_.Get(api::resources::kPodGangs, "default", "simple1-0-sga-0");
  EXPECT_EQ(Label(*gang, "grove.io/base-podgang"), "simple1-0");

  // ... and back in: the highest replica and its gang go.
  auto back = env_.io().Run(env_.client().UpdateScale(api::resources::kPodCliqueScalingGroups,
                                                      "default", "simple1-0-sga", 1));
  ASSERT_TRUE(back.ok());
  ASSERT_TRUE(env_.WaitFor([&] {
    return env_.Pods("app.kubernetes.io/part-of=simple1").size() == 9 &&
           env_.Names(api::resources::kPodGangs).size() == 1;
  }));
  EXPECT_FALSE(env_.Get(api::resources::kPodCliques, "default", "simple1-0-sga-1-pcb").has_value());
}

TEST_F(SimpleSample, ScalingThePodCliqueSetAddsAReplica) {
  auto scaled = env_.io().Run(
      env_.client().UpdateScale(api::resources::kPodCliqueSets, "default", "simple1", 2));
  ASSERT_TRUE(scaled.ok()) << scaled.error().ToString();
  ASSERT_TRUE(
      env_.WaitFor([&] { return env_.Pods("app.kubernetes.io/part-of=simple1").size() == 18; }));
  EXPECT_EQ(env_.Names(api::resources::kPodGangs),
            (std::vector<std::string>{"simple1-0", "simple1-1"}));
  EXPECT_TRUE(env_.Get(api::resources::kPodCliques, "default", "simple1-1-sga-0-pcc").has_value());
  EXPECT_TRUE(env_.Get(kube::resources::kServices, "default", "simple1-1").has_value());
  // The scale subresources carry the selectors HPA and KEDA need.
  ASSERT_TRUE(env_.WaitFor([&] {
    auto scale =
        env_.io().Run(env_.client().GetScale(api::resources::kPodCliqueSets, "default", "simple1"));
    return scale.ok() && scale->status_replicas == 2;
  }));
  auto pcs_scale =
      env_.io().Run(env_.client().GetScale(api::resources::kPodCliqueSets, "default", "simple1"));
  ASSERT_TRUE(pcs_scale.ok());
  EXPECT_EQ(pcs_scale->selector,
            "app.kubernetes.io/managed-by=grove-operator,app.kubernetes.io/part-of=simple1");
  auto pcsg_scale = env_.io().Run(
      env_.client().GetScale(api::resources::kPodCliqueScalingGroups, "default", "simple1-1-sga"));
  ASSERT_TRUE(pcsg_scale.ok());
  EXPECT_EQ(pcsg_scale->spec_replicas, 1);
  ASSERT_TRUE(env_.WaitFor([&] {
    auto scale = env_.io().Run(
        env_.client().GetScale(api::resources::kPodCliques, "default", "simple1-1-pca"));
    return scale.ok() && !scale->selector.empty();
  }));
  auto pclq_scale = env_.io().Run(
      env_.client().GetScale(api::resources::kPodCliques, "default", "simple1-1-pca"));
  EXPECT_EQ(
      pclq_scale->selector,
      "app.kubernetes.io/managed-by=grove-operator,app.kubernetes.io/part-of=simple1,grove.io/"
      "podclique=simple1-1-pca");
  auto back = env_.io().Run(
      env_.client().UpdateScale(api::resources::kPodCliqueSets, "default", "simple1", 1));
  ASSERT_TRUE(back.ok());
  ASSERT_TRUE(env_.WaitFor([&] {
    return env_.Pods("app.kubernetes.io/part-of=simple1").size() == 9 &&
           !env_.Get(kube::resources::kServices, "default", "simple1-1").has_value() &&
           env_.Names(api::resources::kPodGangs).size() == 1;
  }));
  EXPECT_EQ(env_.Names(api::resources::kPodGangs), std::vector<std::string>{"simple1-0"});
  EXPECT_EQ(env_.Names(api::resources::kPodCliqueScalingGroups),
            std::vector<std::string>{"simple1-0-sga"});
}

TEST(DisaggregatedSample, CreatesBaseAndScaledGangs) {
  GroveEnv env;
  env.CreateFromFile("deploy/examples/grove/multinode-disaggregated.yaml");
  const std::string sel = "app.kubernetes.io/part-of=multinode-disaggregated";
  ASSERT_TRUE(env.WaitFor([&] { return env.Pods(sel).size() == 13; })) << env.Pods(sel).size();
  EXPECT_EQ(env.Names(api::resources::kPodCliqueScalingGroups),
            (std::vector<std::string>{"multinode-disaggregated-0-decode",
                                      "multinode-disaggregated-0-prefill"}));
  EXPECT_EQ(env.Names(api::resources::kPodCliques),
            (std::vector<std::string>{"multinode-disaggregated-0-decode-0-dleader",
                                      "multinode-disaggregated-0-decode-0-dworker",
                                      "multinode-disaggregated-0-prefill-0-pleader",
                                      "multinode-disaggregated-0-prefill-0-pworker",
                                      "multinode-disaggregated-0-prefill-1-pleader",
                                      "multinode-disaggregated-0-prefill-1-pworker"}));
  EXPECT_EQ(env.Names(api::resources::kPodGangs),
            (std::vector<std::string>{"multinode-disaggregated-0",
                                      "multinode-disaggregated-0-prefill-0"}));
  auto base = env.Get(api::resources::kPodGangs, "default", "multinode-disaggregated-0");
  std::vector<std::string> base_groups;
  for (const auto& g : (*base)["spec"]["podgroups"]) base_groups.push_back(g["name"]);
  EXPECT_EQ(base_groups, (std::vector<std::string>{"multinode-disaggregated-0-prefill-0-pleader",
                                                   "multinode-disaggregated-0-prefill-0-pworker",
                                                   "multinode-disaggregated-0-decode-0-dleader",
                                                   "multinode-disaggregated-0-decode-0-dworker"}));
  auto scaled =
      env.Get(api::resources::kPodGangs, "default", "multinode-disaggregated-0-prefill-0");
  std::vector<std::string> scaled_groups;
  for (const auto& g : (*scaled)["spec"]["podgroups"]) scaled_groups.push_back(g["name"]);
  EXPECT_EQ(scaled_groups,
            (std::vector<std::string>{"multinode-disaggregated-0-prefill-1-pleader",
                                      "multinode-disaggregated-0-prefill-1-pworker"}));
  for (const auto& pod :
       env.List(kube::resources::kPods, "default",
                "grove.io/podclique=multinode-disaggregated-0-prefill-1-pworker")) {
    EXPECT_EQ(Label(pod, "grove.io/podgang"), "multinode-disaggregated-0-prefill-0");
    EXPECT_EQ(Label(pod, "grove.io/podcliquescalinggroup-replica-index"), "1");
    EXPECT_EQ(Env(pod, "GROVE_PCSG_TEMPLATE_NUM_PODS"), "5");
  }
}

}  // namespace
}  // namespace copse::grove::testing
