// GREP-375's scheduler backend framework: every row of spec 000's
// configuration table (active backends, default, admitted PodCliqueSets),
// configuration errors, and each built-in backend's hooks.

#include "grove/backend/copse/backend.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "grove/api/defaults.h"
#include "grove/api/validation.h"
#include "grove/backend/kai/backend.h"
#include "grove/backend/manager.h"
#include "kube/yaml.h"
#include "tests/support/paths.h"

namespace copse::grove::backend {
namespace {

using nlohmann::json;

std::unique_ptr<BackendManager> Manager(const std::string& config_yaml) {
  auto config = ParseOperatorConfiguration(config_yaml);
  EXPECT_TRUE(config.ok()) << config.error().ToString();
  if (!config.ok()) return nullptr;
  Registry registry;
  RegisterBuiltinBackends(registry);
  auto manager = BackendManager::Initialize(*config, BackendContext{}, registry);
  EXPECT_TRUE(manager.ok()) << manager.error().ToString();
  return manager.ok() ? std::move(manager).value() : nullptr;
}

api::PodCliqueSet SampleWithScheduler(const std::string& scheduler_name) {
  std::ifstream in(std::string(COPSE_SOURCE_DIR) +
                   "/deploy/examples/grove/multinode-disaggregated.yaml");
  std::stringstream buffer;
  buffer << in.rdbuf();
  auto docs = kube::YamlDocumentsToJson(buffer.str());
  json doc = json::parse(docs->front());
  if (!scheduler_name.empty()) {
    for (auto& clique : doc["spec"]["template"]["cliques"]) {
      clique["spec"]["podSpec"]["schedulerName"] = scheduler_name;
    }
  }
  return api::Defaulted(*api::PodCliqueSet::Decode(doc.dump()));
}

// Whether the manager's validation admits a PodCliqueSet whose pods use `scheduler_name`.
bool Admits(const BackendManager& manager, const std::string& scheduler_name) {
  api::PodCliqueSet pcs = SampleWithScheduler(scheduler_name);
  if (!api::ValidatePodCliqueSet(pcs, manager.ValidationContext()).empty()) return false;
  SchedulerBackend* backend = manager.ForSchedulerName(
      api::ResolvedSchedulerName(pcs, manager.GetDefault().SchedulerName()));
  return backend != nullptr && backend->ValidatePodCliqueSet(pcs).ok();
}

struct Row {
  const char* goal;
  const char* config;
  std::vector<std::string> enabled;
  std::string default_backend;
  std::vector<std::string> admitted;  // schedulerNames ("" = unset) that are admitted
  std::vector<std::string> rejected;
};

// Spec 000's "Configuration options and ways to configure" table, plus copse's shipped default.
const std::vector<Row>& Table() {
  static const std::vector<Row> rows = {
      {"Style 1: omit scheduler",
       "logLevel: info\n",
       {"kube-scheduler"},
       "kube-scheduler",
       {"", "default-scheduler"},
       {"kai-scheduler", "copse-scheduler"}},
      {"empty profiles",
       "scheduler:\n  profiles: []\n",
       {"kube-scheduler"},
       "kube-scheduler",
       {"", "default-scheduler"},
       {"kai-scheduler", "copse-scheduler"}},
      {"Style 2: kube-scheduler only",
       "scheduler:\n  profiles:\n  - name: kube-scheduler\n    default: true\n",
       {"kube-scheduler"},
       "kube-scheduler",
       {"", "default-scheduler"},
       {"kai-scheduler"}},
      {"Style 3: kube-scheduler with GangScheduling",
       "scheduler:\n  profiles:\n  - name: kube-scheduler\n    config:\n      GangScheduling: "
       "true\n    default: true\n",
       {"kube-scheduler"},
       "kube-scheduler",
       {"", "default-scheduler"},
       {"kai-scheduler"}},
      {"Style 4: multiple backends, kube-scheduler default",
       "scheduler:\n  profiles:\n  - name: kube-scheduler\n    config:\n      GangScheduling: "
       "true\n    default: true\n  - name: kai-scheduler\n    config: {}\n",
       {"kai-scheduler", "kube-scheduler"},
       "kube-scheduler",
       {"", "default-scheduler", "kai-scheduler"},
       {"copse-scheduler"}},
      {"Style 5: multiple backends, kai-scheduler default",
       "scheduler:\n  profiles:\n  - name: kube-scheduler\n    config:\n      GangScheduling: "
       "true\n  - name: kai-scheduler\n    config: {}\n    default: true\n",
       {"kai-scheduler", "kube-scheduler"},
       "kai-scheduler",
       {"", "default-scheduler", "kai-scheduler"},
       {"copse-scheduler"}},
      {"Style 6: only a kai-scheduler profile",
       "scheduler:\n  profiles:\n  - name: kai-scheduler\n    config: {}\n    default: true\n",
       {"kai-scheduler", "kube-scheduler"},
       "kai-scheduler",
       {"", "default-scheduler", "kai-scheduler"},
       {"copse-scheduler"}},
      {"copse's shipped configuration",
       "scheduler:\n  profiles:\n  - name: copse-scheduler\n    default: true\n",
       {"copse-scheduler", "kube-scheduler"},
       "copse-scheduler",
       {"", "copse-scheduler", "default-scheduler"},
       {"kai-scheduler"}},
  };
  return rows;
}

TEST(BackendConfigurationTable, EveryRow) {
  for (const Row& row : Table()) {
    SCOPED_TRACE(row.goal);
    auto manager = Manager(row.config);
    ASSERT_NE(manager, nullptr);
    EXPECT_EQ(manager->Enabled(), row.enabled);
    EXPECT_EQ(manager->GetDefault().Name(), row.default_backend);
    EXPECT_NE(manager->Get("kube-scheduler"), nullptr) << "kube-scheduler is always active";
    for (const auto& name : row.admitted) {
      // kai-scheduler needs a queue; the sample gets one for that check.
      api::PodCliqueSet pcs = SampleWithScheduler(name);
      pcs.meta.labels["kai.scheduler/queue"] = "q";
      auto errors = api::ValidatePodCliqueSet(pcs, manager->ValidationContext());
      EXPECT_TRUE(errors.empty()) << "schedulerName \"" << name << "\": " << errors[0].ToString();
      auto* backend = manager->ForSchedulerName(
          api::ResolvedSchedulerName(pcs, manager->GetDefault().SchedulerName()));
      ASSERT_NE(backend, nullptr) << name;
      EXPECT_TRUE(backend->ValidatePodCliqueSet(pcs).ok()) << name;
    }
    for (const auto& name : row.rejected) {
      EXPECT_FALSE(Admits(*manager, name)) << "schedulerName \"" << name << "\" was admitted";
    }
  }
}

TEST(BackendConfigurationTable, EmptySchedulerNameUsesTheDefaultBackend) {
  EXPECT_EQ(Manager("scheduler:\n  profiles:\n  - name: kai-scheduler\n    default: true\n")
                ->ForSchedulerName("")
                ->Name(),
            "kai-scheduler");
  EXPECT_EQ(Manager("{}")->ForSchedulerName("")->Name(), "kube-scheduler");
  EXPECT_EQ(Manager("{}")->ForSchedulerName("default-scheduler")->Name(), "kube-scheduler");
  EXPECT_EQ(Manager("{}")->ForSchedulerName("kai-scheduler"), nullptr);
}

TEST(BackendConfiguration, ErrorsNameTheField) {
  struct Case {
    const char* yaml;
    const char* message;
  };
  const Case cases[] = {
      {"scheduler:\n  profiles:\n  - name: kai-scheduler\n    default: true\n  - name: "
       "kube-scheduler\n    default: true\n",
       "scheduler.profiles[1].default: only one profile may be the default"},
      {"scheduler:\n  profiles:\n  - name: volcano\n",
       "scheduler.profiles[0].name: Unsupported value: \"volcano\": supported values: "
       "\"copse-scheduler\", \"kai-scheduler\", \"kube-scheduler\""},
      {"scheduler:\n  profiles:\n  - name: kai-scheduler\n  - name: kai-scheduler\n",
       "scheduler.profiles[1].name: Duplicate value: \"kai-scheduler\""},
      {"scheduler:\n  profiles:\n  - name: kube-scheduler\n    config:\n      GangScheduling: "
       "maybe\n",
       "scheduler.profiles[0].config.GangScheduling: expected boolean"},
      {"scheduler:\n  profiles:\n  - name: kube-scheduler\n    config:\n      Gang: true\n",
       "scheduler.profiles[0].config.Gang: unknown field"},
      {"scheduler:\n  profiles:\n  - name: kai-scheduler\n    config:\n      queue: q\n",
       "scheduler.profiles[0].config.queue: unknown field"},
      {"scheduler:\n  profiles:\n  - default: true\n",
       "scheduler.profiles[0].name: Required value"},
      {"scheduler:\n  profilez: []\n", "scheduler.profilez: unknown field"},
      {"scheduler:\n  profiles: {}\n", "scheduler.profiles: expected an array"},
  };
  for (const auto& c : cases) {
    auto config = ParseOperatorConfiguration(c.yaml);
    ASSERT_FALSE(config.ok()) << c.yaml;
    EXPECT_EQ(config.error().code, ErrorCode::kInvalid);
    EXPECT_EQ(config.error().message, c.message);
  }
  auto json_config = ParseOperatorConfiguration(
      R"({"scheduler":{"profiles":[{"name":"copse-scheduler","default":true}]}})");
  ASSERT_TRUE(json_config.ok());
  EXPECT_EQ(json_config->profiles->size(), 1u);
}

// ------------------------------------------------------------------ backends

api::PodGang Gang() {
  api::PodGang gang;
  gang.meta.name = "pcs-0";
  gang.meta.namespace_ = "ns";
  gang.meta.uid = "uid-1";
  gang.meta.labels = {{"grove.io/scheduler-name", "copse-scheduler"},
                      {"kai.scheduler/queue", "team-a"}};
  gang.meta.annotations = {{"grove.io/topology-name", "dc"}};
  gang.spec.priority_class_name = "high";
  api::PackConstraint rack;
  rack.required = "copse.dev/rack";
  rack.preferred = "kubernetes.io/hostname";
  gang.spec.topology_constraint = api::GangTopologyConstraint{rack};
  auto group = [](std::string name, int32_t min) {
    api::PodGroup g;
    g.name = std::move(name);
    g.min_replicas = min;
    return g;
  };
  gang.spec.pod_groups = {group("pcs-0-frontend", 1), group("pcs-0-sg-0-leader", 1),
                          group("pcs-0-sg-0-worker", 4)};
  api::TopologyConstraintGroupConfig sg;
  sg.name = "pcs-0-sg-0";
  sg.pod_group_names = {"pcs-0-sg-0-leader", "pcs-0-sg-0-worker"};
  api::PackConstraint host;
  host.required = "kubernetes.io/hostname";
  sg.topology_constraint = api::GangTopologyConstraint{host};
  gang.spec.topology_constraint_group_configs = {sg};
  return gang;
}

TEST(CopseBackend, PodGroupMirrorsTheGangTree) {
  json pg = json::parse(CopsePodGroupFor(Gang(), "dc"));
  EXPECT_EQ(pg["apiVersion"], "scheduling.copse.dev/v1alpha1");
  EXPECT_EQ(pg["kind"], "PodGroup");
  EXPECT_EQ(pg["metadata"]["name"], "pcs-0");
  EXPECT_EQ(pg["metadata"]["namespace"], "ns");
  EXPECT_EQ(pg["metadata"]["ownerReferences"][0]["kind"], "PodGang");
  EXPECT_EQ(pg["metadata"]["ownerReferences"][0]["uid"], "uid-1");
  EXPECT_EQ(pg["metadata"]["labels"]["grove.io/podgang"], "pcs-0");
  EXPECT_EQ(pg["spec"]["minMember"], 6);
  EXPECT_EQ(pg["spec"]["minSubGroup"], 2);  // frontend + the scaling-group replica
  EXPECT_EQ(pg["spec"]["priorityClassName"], "high");
  EXPECT_EQ(pg["spec"]["topologyConstraint"],
            json({{"topology", "dc"},
                  {"requiredTopologyLevel", "copse.dev/rack"},
                  {"preferredTopologyLevel", "kubernetes.io/hostname"}}));
  json expected_subgroups =
      json::array({{{"name", "pcs-0-sg-0"},
                    {"minMember", 5},
                    {"minSubGroup", 2},
                    {"topologyConstraint",
                     {{"topology", "dc"}, {"requiredTopologyLevel", "kubernetes.io/hostname"}}}},
                   {{"name", "pcs-0-frontend"}, {"minMember", 1}},
                   {{"name", "pcs-0-sg-0-leader"}, {"minMember", 1}, {"parent", "pcs-0-sg-0"}},
                   {{"name", "pcs-0-sg-0-worker"}, {"minMember", 4}, {"parent", "pcs-0-sg-0"}}});
  EXPECT_EQ(pg["spec"]["subGroups"], expected_subgroups);
}

TEST(CopseBackend, PreparePodJoinsThePodGroup) {
  auto backend = NewCopseBackend(SchedulerProfile{}, BackendContext{});
  ASSERT_TRUE(backend.ok());
  json pod = {
      {"metadata",
       {{"labels", {{"grove.io/podgang", "pcs-0"}, {"grove.io/podclique", "pcs-0-frontend"}}}}},
      {"spec", {{"containers", json::array()}}}};
  ASSERT_TRUE((*backend)->PreparePod(pod).ok());
  EXPECT_EQ(pod["spec"]["schedulerName"], "copse-scheduler");
  EXPECT_EQ(pod["metadata"]["labels"]["scheduling.copse.dev/pod-group"], "pcs-0");
  EXPECT_EQ(pod["metadata"]["labels"]["scheduling.copse.dev/subgroup"], "pcs-0-frontend");
  json unlabelled = {{"metadata", {{"labels", json::object()}}}, {"spec", json::object()}};
  EXPECT_FALSE((*backend)->PreparePod(unlabelled).ok());
}

TEST(KaiBackend, PodGroupAndPodsAsUpstream) {
  json pg = json::parse(KaiPodGroupFor(Gang(), "dc"));
  EXPECT_EQ(pg["apiVersion"], "scheduling.run.ai/v2alpha2");
  EXPECT_EQ(pg["spec"]["queue"], "team-a");
  EXPECT_EQ(pg["spec"]["minMember"], 6);
  EXPECT_EQ(pg["spec"]["topologyConstraint"]["requiredTopologyLevel"], "copse.dev/rack");
  EXPECT_EQ(pg["spec"]["subGroups"].size(), 4u);
  EXPECT_EQ(pg["spec"]["subGroups"][1]["minMember"], 1);
  auto backend = NewKaiBackend(SchedulerProfile{}, BackendContext{});
  json pod = {
      {"metadata",
       {{"labels", {{"grove.io/podgang", "pcs-0"}, {"grove.io/podclique", "pcs-0-frontend"}}}}},
      {"spec", json::object()}};
  ASSERT_TRUE((*backend)->PreparePod(pod).ok());
  EXPECT_EQ(pod["spec"]["schedulerName"], "kai-scheduler");
  EXPECT_EQ(pod["metadata"]["annotations"]["pod-group-name"], "pcs-0");
  EXPECT_EQ(pod["metadata"]["annotations"]["kai.scheduler/skip-podgrouper"], "true");
  EXPECT_EQ(pod["metadata"]["labels"]["kai.scheduler/subgroup-name"], "pcs-0-frontend");
}

TEST(KaiBackend, RejectsAPodCliqueSetWithoutAQueue) {
  auto backend = NewKaiBackend(SchedulerProfile{}, BackendContext{});
  api::PodCliqueSet pcs = SampleWithScheduler("kai-scheduler");
  auto rejected = (*backend)->ValidatePodCliqueSet(pcs);
  ASSERT_FALSE(rejected.ok());
  EXPECT_NE(rejected.error().message.find("metadata.labels[kai.scheduler/queue]: Required value"),
            std::string::npos)
      << rejected.error().message;
  pcs.spec.template_.cliques[0].labels["kai.scheduler/queue"] = "q";
  EXPECT_TRUE((*backend)->ValidatePodCliqueSet(pcs).ok());
}

TEST(KubeBackend, FailsOrPassesThroughByCapability) {
  auto manager = Manager("{}");
  SchedulerBackend& kube = manager->GetDefault();
  api::PodCliqueSet plain = SampleWithScheduler("");
  auto admitted = kube.ValidatePodCliqueSet(plain);
  ASSERT_TRUE(admitted.ok());
  ASSERT_EQ(admitted->ignored.size(), 1u);  // pass through: no gang guarantees
  EXPECT_NE(admitted->ignored[0].find("GangScheduling requested but not supported"),
            std::string::npos);

  api::PodCliqueSet required = plain;
  required.spec.template_.topology_constraint =
      api::TopologyConstraint{"dc", api::TopologyPackConstraint{"rack", ""}, ""};
  auto rejected = kube.ValidatePodCliqueSet(required);  // fail: required packing
  ASSERT_FALSE(rejected.ok());
  EXPECT_EQ(rejected.error().message,
            "spec.template.topologyConstraint: Forbidden: the kube-scheduler backend cannot "
            "honour required topology packing without GangScheduling");

  auto gang_manager = Manager(
      "scheduler:\n  profiles:\n  - name: kube-scheduler\n    config:\n      GangScheduling: "
      "true\n");
  auto with_gang = gang_manager->GetDefault().ValidatePodCliqueSet(required);
  ASSERT_TRUE(with_gang.ok());
  EXPECT_TRUE(with_gang->ignored.empty());
  json pod = {{"metadata", {{"labels", {{"grove.io/podgang", "pcs-0"}}}}},
              {"spec", json::object()}};
  ASSERT_TRUE(gang_manager->GetDefault().PreparePod(pod).ok());
  EXPECT_EQ(pod["spec"]["schedulerName"], "default-scheduler");
  EXPECT_EQ(pod["spec"]["schedulingGroup"]["podGroupName"], "pcs-0");
}

}  // namespace
}  // namespace copse::grove::backend
