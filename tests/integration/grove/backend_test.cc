// The scheduler backends on the embedded API server: the objects each
// creates, pass-through conditions, topology translation, and the backend
// controller's reaction to PodGang creation and spec changes only.

#include "grove/backend/copse/backend.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>

#include "tests/integration/grove/env.h"

namespace copse::grove::testing {
namespace {

backend::SchedulerConfiguration Config(const std::string& yaml) {
  auto config = backend::ParseOperatorConfiguration(yaml);
  EXPECT_TRUE(config.ok()) << config.error().ToString();
  return config.ok() ? *config : backend::SchedulerConfiguration{};
}

EnvOptions WithScheduler(const std::string& yaml) {
  EnvOptions options;
  options.op.scheduler = Config(yaml);
  return options;
}

std::string WithSchedulerName(const std::string& file, const std::string& scheduler,
                              const std::map<std::string, std::string>& labels = {}) {
  json doc = json::parse(YamlDocs(ReadSourceFile(file)).front());
  for (auto& clique : doc["spec"]["template"]["cliques"]) {
    if (!scheduler.empty()) clique["spec"]["podSpec"]["schedulerName"] = scheduler;
  }
  for (const auto& [k, v] : labels) doc["metadata"]["labels"][k] = v;
  return doc.dump();
}

const kube::Condition* PcsCondition(const json& pcs, std::vector<kube::Condition>& storage,
                                    const std::string& type) {
  auto decoded = api::PodCliqueSet::Decode(pcs.dump());
  if (!decoded.ok()) return nullptr;
  storage = decoded->status.conditions;
  return kube::FindCondition(storage, type);
}

TEST(KubeSchedulerBackend, GangSchedulingCreatesWorkloadAndPodGroup) {
  GroveEnv env(
      WithScheduler("scheduler:\n  profiles:\n  - name: kube-scheduler\n    config:\n      "
                    "GangScheduling: true\n    default: true\n"));
  env.CreateFromFile("deploy/examples/grove/simple1.yaml");
  ASSERT_TRUE(env.WaitFor([&] {
    return env.Get(kK8sPodGroups, "default", "simple1-0").has_value() &&
           env.Pods("app.kubernetes.io/part-of=simple1").size() == 9;
  }));
  auto workload = env.Get(kWorkloads, "default", "simple1-0");
  ASSERT_TRUE(workload.has_value());
  EXPECT_EQ((*workload)["spec"]["podGroupTemplates"][0]["schedulingPolicy"]["gang"]["minCount"], 9);
  EXPECT_EQ((*workload)["metadata"]["ownerReferences"][0]["kind"], "PodGang");
  auto pg = env.Get(kK8sPodGroups, "default", "simple1-0");
  EXPECT_EQ((*pg)["spec"]["podGroupTemplateRef"]["workload"]["workloadName"], "simple1-0");
  for (const auto& pod :
       env.List(kube::resources::kPods, "default", "app.kubernetes.io/part-of=simple1")) {
    EXPECT_EQ(pod["spec"]["schedulerName"], "default-scheduler");
    EXPECT_EQ(pod["spec"]["schedulingGroup"]["podGroupName"], "simple1-0");
  }
  // Gang scheduling is honoured: no pass-through condition.
  ASSERT_TRUE(env.WaitFor([&] {
    auto pcs = env.Get(api::resources::kPodCliqueSets, "default", "simple1");
    return pcs && StatusInt(*pcs, "replicas") == 1;
  }));
  std::vector<kube::Condition> conditions;
  EXPECT_EQ(PcsCondition(*env.Get(api::resources::kPodCliqueSets, "default", "simple1"), conditions,
                         "SchedulingFeaturesIgnored"),
            nullptr);
}

TEST(KubeSchedulerBackend, PassesThroughWithACondition) {
  GroveEnv env(WithScheduler("{}"));  // scheduler omitted: kube-scheduler only
  env.CreateFromFile("deploy/examples/grove/simple1.yaml");
  std::vector<kube::Condition> conditions;
  ASSERT_TRUE(env.WaitFor([&] {
    auto pcs = env.Get(api::resources::kPodCliqueSets, "default", "simple1");
    return pcs && PcsCondition(*pcs, conditions, "SchedulingFeaturesIgnored") != nullptr;
  }));
  const kube::Condition* c = kube::FindCondition(conditions, "SchedulingFeaturesIgnored");
  EXPECT_EQ(c->status, "True");
  EXPECT_EQ(c->message,
            "kube-scheduler: GangScheduling requested but not supported by this backend: workload "
            "scheduled without gang guarantees");
  ASSERT_TRUE(
      env.WaitFor([&] { return env.Pods("app.kubernetes.io/part-of=simple1").size() == 9; }));
  EXPECT_EQ(env.List(kube::resources::kPods).front()["spec"]["schedulerName"], "default-scheduler");
  EXPECT_TRUE(env.List(kCopsePodGroups).empty());
}

TEST(KaiSchedulerBackend, CreatesAKaiPodGroupPerGang) {
  GroveEnv env(
      WithScheduler("scheduler:\n  profiles:\n  - name: kai-scheduler\n    default: true\n"));
  env.CreateJson(WithSchedulerName("deploy/examples/grove/multinode-disaggregated.yaml", "",
                                   {{"kai.scheduler/queue", "team-a"}}));
  ASSERT_TRUE(env.WaitFor([&] {
    return env.List(kKaiPodGroups).size() == 2 &&
           env.Pods("app.kubernetes.io/part-of=multinode-disaggregated").size() == 13;
  }));
  auto base = env.Get(kKaiPodGroups, "default", "multinode-disaggregated-0");
  ASSERT_TRUE(base.has_value());
  EXPECT_EQ((*base)["spec"]["queue"], "team-a");
  EXPECT_EQ((*base)["spec"]["minMember"], 8);
  EXPECT_EQ((*base)["spec"]["minSubGroup"], 2);  // prefill-0 and decode-0
  auto scaled = env.Get(kKaiPodGroups, "default", "multinode-disaggregated-0-prefill-0");
  EXPECT_EQ((*scaled)["spec"]["minMember"], 5);
  for (const auto& pod :
       env.List(kube::resources::kPods, "default",
                "grove.io/podclique=multinode-disaggregated-0-prefill-1-pworker")) {
    EXPECT_EQ(pod["spec"]["schedulerName"], "kai-scheduler");
    EXPECT_EQ(pod["metadata"]["annotations"]["pod-group-name"],
              "multinode-disaggregated-0-prefill-0");
    EXPECT_EQ(Label(pod, "kai.scheduler/subgroup-name"),
              "multinode-disaggregated-0-prefill-1-pworker");
  }
}

TEST(CopseSchedulerBackend, TranslatesTopologyConstraints) {
  GroveEnv env;
  env.CreateJson(R"({"apiVersion":"grove.io/v1alpha1","kind":"ClusterTopologyBinding",
    "metadata":{"name":"dc"},
    "spec":{"levels":[{"domain":"zone","key":"topology.kubernetes.io/zone"},
                      {"domain":"rack","key":"copse.dev/rack"},
                      {"domain":"host","key":"kubernetes.io/hostname"}]}})");
  json pcs = json::parse(
      YamlDocs(ReadSourceFile("deploy/examples/grove/multinode-disaggregated.yaml")).front());
  pcs["spec"]["template"]["topologyConstraint"] = {{"topologyName", "dc"},
                                                   {"pack", {{"required", "zone"}}}};
  pcs["spec"]["template"]["podCliqueScalingGroups"][0]["topologyConstraint"] = {
      {"pack", {{"required", "rack"}, {"preferred", "host"}}}};
  ASSERT_TRUE(env.WaitFor(
      [&] { return env.Get(api::resources::kClusterTopologyBindings, "", "dc").has_value(); }));
  // Let the operator's topology cache catch up before the PodCliqueSet arrives.
  ASSERT_TRUE(env.WaitFor([&] { return env.op()->Idle(); }));
  env.CreateJson(pcs.dump());
  // Each PodGang gets its PodGroup on its own reconcile, and the Topology is
  // written on first use: wait for all of them.
  ASSERT_TRUE(env.WaitFor([&] {
    return env.Get(kCopsePodGroups, "default", "multinode-disaggregated-0-prefill-0").has_value() &&
           env.Get(kCopsePodGroups, "default", "multinode-disaggregated-0").has_value() &&
           env.Get(kCopseTopologies, "", "dc").has_value();
  }));
  auto gang = env.Get(api::resources::kPodGangs, "default", "multinode-disaggregated-0");
  EXPECT_EQ((*gang)["metadata"]["annotations"]["grove.io/topology-name"], "dc");
  EXPECT_EQ((*gang)["spec"]["topologyConstraint"]["packConstraint"]["required"],
            "topology.kubernetes.io/zone");
  EXPECT_EQ(
      (*gang)["spec"]["topologyConstraintGroupConfigs"][0]["topologyConstraint"]["packConstraint"],
      json({{"required", "copse.dev/rack"}, {"preferred", "kubernetes.io/hostname"}}));
  auto pg = env.Get(kCopsePodGroups, "default", "multinode-disaggregated-0");
  ASSERT_TRUE(pg.has_value());
  EXPECT_EQ((*pg)["spec"]["topologyConstraint"],
            json({{"topology", "dc"}, {"requiredTopologyLevel", "topology.kubernetes.io/zone"}}));
  EXPECT_EQ((*pg)["spec"]["subGroups"][0]["name"], "multinode-disaggregated-0-prefill-0");
  EXPECT_EQ((*pg)["spec"]["subGroups"][0]["topologyConstraint"]["requiredTopologyLevel"],
            "copse.dev/rack");
  // A scaled gang packs by its scaling group's constraint.
  auto scaled = env.Get(kCopsePodGroups, "default", "multinode-disaggregated-0-prefill-0");
  EXPECT_EQ((*scaled)["spec"]["topologyConstraint"]["preferredTopologyLevel"],
            "kubernetes.io/hostname");
  // The copse Topology the constraints name, built from the binding's levels.
  auto topology = env.Get(kCopseTopologies, "", "dc");
  ASSERT_TRUE(topology.has_value());
  EXPECT_EQ((*topology)["spec"]["levels"],
            json::array({{{"nodeLabel", "topology.kubernetes.io/zone"}},
                         {{"nodeLabel", "copse.dev/rack"}},
                         {{"nodeLabel", "kubernetes.io/hostname"}}}));
}

// A copse-scheduler backend that counts SyncPodGang calls per PodGang generation.
class CountingBackend final : public backend::SchedulerBackend {
 public:
  CountingBackend(std::unique_ptr<backend::SchedulerBackend> inner,
                  std::shared_ptr<std::vector<int64_t>> generations)
      : inner_(std::move(inner)), generations_(std::move(generations)) {}
  std::string_view Name() const override { return inner_->Name(); }
  std::string_view SchedulerName() const override { return inner_->SchedulerName(); }
  Status Init() override { return inner_->Init(); }
  Status SyncPodGang(const api::PodGang& gang) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (gang.meta.name == "simple1-0") generations_->push_back(gang.meta.generation);
    }
    return inner_->SyncPodGang(gang);
  }
  Status OnPodGangDelete(const api::PodGang& gang) override {
    return inner_->OnPodGangDelete(gang);
  }
  Status PreparePod(nlohmann::json& pod) const override { return inner_->PreparePod(pod); }
  Result<backend::Admission> ValidatePodCliqueSet(const api::PodCliqueSet& pcs) const override {
    return inner_->ValidatePodCliqueSet(pcs);
  }

 private:
  std::unique_ptr<backend::SchedulerBackend> inner_;
  std::shared_ptr<std::vector<int64_t>> generations_;
  std::mutex mu_;
};

TEST(BackendController, SyncsOnCreateAndSpecChangesOnly) {
  auto generations = std::make_shared<std::vector<int64_t>>();
  EnvOptions options;
  options.op.register_backends = [generations](backend::Registry& registry) {
    registry.Register(
        "copse-scheduler",
        [generations](const backend::SchedulerProfile& p, const backend::BackendContext& c)
            -> Result<std::unique_ptr<backend::SchedulerBackend>> {
          auto inner = backend::NewCopseBackend(p, c);
          if (!inner.ok()) return inner.error();
          return std::unique_ptr<backend::SchedulerBackend>(
              std::make_unique<CountingBackend>(std::move(inner).value(), generations));
        });
  };
  GroveEnv env(options);
  env.CreateFromFile("deploy/examples/grove/simple1.yaml");
  const std::string sel = "app.kubernetes.io/part-of=simple1";
  ASSERT_TRUE(env.BindUntilReady(sel, 9));
  ASSERT_TRUE(env.WaitFor([&] {
    auto gang = env.Get(api::resources::kPodGangs, "default", "simple1-0");
    return gang && (*gang)["status"]["phase"] == "Running" && env.op()->Idle();
  }));
  std::set<int64_t> spec_generations;
  int status_updates = 0;
  for (const auto& e : env.recorder().Events()) {
    if (e.resource != "podgangs" || e.object["metadata"]["name"] != "simple1-0") continue;
    spec_generations.insert(e.object["metadata"]["generation"].get<int64_t>());
    ++status_updates;
  }
  status_updates -= static_cast<int>(spec_generations.size());
  EXPECT_GE(status_updates, 3) << "the gang's status changed several times";
  // One sync per spec generation (create, then the references), none for status updates.
  std::set<int64_t> synced(generations->begin(), generations->end());
  EXPECT_EQ(synced, spec_generations);
  EXPECT_EQ(generations->size(), spec_generations.size());
}

}  // namespace
}  // namespace copse::grove::testing
