// What the store does to apps/v1 and batch/v1 workloads (apiserver/workloads.h):
// upstream's defaults, the Job's generated selector, and field errors with
// upstream's messages that leave nothing stored. Also the typed codecs of
// kube/apps.h the controllers read them with.

#include "apiserver/workloads.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "apiserver/apiserver.h"
#include "apiserver/store.h"
#include "kube/apps.h"

namespace copse::apiserver {
namespace {

using nlohmann::json;

json Template(const json& labels, const std::string& restart = "") {
  json t = {{"metadata", {{"labels", labels}}},
            {"spec", {{"containers", json::array({{{"name", "c"}, {"image", "nginx"}}})}}}};
  if (!restart.empty()) t["spec"]["restartPolicy"] = restart;
  return t;
}

json Workload(const std::string& api_version, const std::string& kind, const std::string& name,
              json spec) {
  return {
      {"apiVersion", api_version}, {"kind", kind}, {"metadata", {{"name", name}}}, {"spec", spec}};
}

class WorkloadsTest : public ::testing::Test {
 protected:
  Result<json> Create(const kube::ResourceRef& ref, const json& obj) {
    auto created = store_->Create(ref, "default", obj.dump());
    if (!created.ok()) return created.error();
    return json::parse((*created)->json);
  }
  std::shared_ptr<Store> store_ = NewStore();
};

TEST_F(WorkloadsTest, DeploymentDefaults) {
  auto d = Create(kube::resources::kDeployments,
                  Workload("apps/v1", "Deployment", "d",
                           {{"selector", {{"matchLabels", {{"app", "d"}}}}},
                            {"template", Template({{"app", "d"}})}}));
  ASSERT_TRUE(d.ok()) << d.error().ToString();
  const json& spec = (*d)["spec"];
  EXPECT_EQ(spec["replicas"], 1);
  EXPECT_EQ(spec["strategy"],
            json({{"type", "RollingUpdate"},
                  {"rollingUpdate", {{"maxSurge", "25%"}, {"maxUnavailable", "25%"}}}}));
  EXPECT_EQ(spec["revisionHistoryLimit"], 10);
  EXPECT_EQ(spec["progressDeadlineSeconds"], 600);
  // Given values are kept; Recreate gets no rollingUpdate.
  auto r = Create(kube::resources::kDeployments,
                  Workload("apps/v1", "Deployment", "r",
                           {{"replicas", 0},
                            {"strategy", {{"type", "Recreate"}}},
                            {"revisionHistoryLimit", 2},
                            {"selector", {{"matchLabels", {{"app", "r"}}}}},
                            {"template", Template({{"app", "r"}})}}));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ((*r)["spec"]["replicas"], 0);
  EXPECT_EQ((*r)["spec"]["strategy"], json({{"type", "Recreate"}}));
  EXPECT_EQ((*r)["spec"]["revisionHistoryLimit"], 2);
}

TEST_F(WorkloadsTest, StatefulSetAndDaemonSetDefaults) {
  auto s = Create(kube::resources::kStatefulSets,
                  Workload("apps/v1", "StatefulSet", "s",
                           {{"serviceName", "s"},
                            {"selector", {{"matchLabels", {{"app", "s"}}}}},
                            {"template", Template({{"app", "s"}})}}));
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  EXPECT_EQ((*s)["spec"]["replicas"], 1);
  EXPECT_EQ((*s)["spec"]["podManagementPolicy"], "OrderedReady");
  EXPECT_EQ((*s)["spec"]["updateStrategy"],
            json({{"type", "RollingUpdate"}, {"rollingUpdate", {{"partition", 0}}}}));
  EXPECT_EQ((*s)["spec"]["persistentVolumeClaimRetentionPolicy"],
            json({{"whenDeleted", "Retain"}, {"whenScaled", "Retain"}}));
  auto ds = Create(kube::resources::kDaemonSets,
                   Workload("apps/v1", "DaemonSet", "ds",
                            {{"selector", {{"matchLabels", {{"app", "ds"}}}}},
                             {"template", Template({{"app", "ds"}})}}));
  ASSERT_TRUE(ds.ok()) << ds.error().ToString();
  EXPECT_EQ((*ds)["spec"]["updateStrategy"],
            json({{"type", "RollingUpdate"},
                  {"rollingUpdate", {{"maxSurge", 0}, {"maxUnavailable", 1}}}}));
}

TEST_F(WorkloadsTest, JobGetsDefaultsAndAGeneratedSelector) {
  auto j =
      Create(kube::resources::kJobs,
             Workload("batch/v1", "Job", "pi", {{"template", Template({{"team", "a"}}, "Never")}}));
  ASSERT_TRUE(j.ok()) << j.error().ToString();
  const std::string uid = (*j)["metadata"]["uid"];
  const json& spec = (*j)["spec"];
  EXPECT_EQ(spec["completions"], 1);
  EXPECT_EQ(spec["parallelism"], 1);
  EXPECT_EQ(spec["backoffLimit"], 6);
  EXPECT_EQ(spec["completionMode"], "NonIndexed");
  EXPECT_EQ(spec["suspend"], false);
  EXPECT_EQ(spec["selector"],
            json({{"matchLabels", {{"batch.kubernetes.io/controller-uid", uid}}}}));
  const json want_labels = {{"team", "a"},
                            {"job-name", "pi"},
                            {"batch.kubernetes.io/job-name", "pi"},
                            {"controller-uid", uid},
                            {"batch.kubernetes.io/controller-uid", uid}};
  EXPECT_EQ(spec["template"]["metadata"]["labels"], want_labels);
  EXPECT_EQ((*j)["metadata"]["labels"], want_labels);
  // An update keeps it valid (the selector matches the generated labels) and immutable.
  auto patched = store_->Patch(kube::resources::kJobs, "default", "pi", PatchType::kMerge,
                               R"({"spec":{"parallelism":3}})");
  ASSERT_TRUE(patched.ok()) << patched.error().ToString();
  patched = store_->Patch(kube::resources::kJobs, "default", "pi", PatchType::kMerge,
                          R"({"spec":{"selector":{"matchLabels":{"x":"y"}}}})");
  ASSERT_FALSE(patched.ok());
  EXPECT_NE(patched.error().message.find("spec.selector"), std::string::npos)
      << patched.error().message;
  EXPECT_NE(patched.error().message.find("field is immutable"), std::string::npos);
}

TEST_F(WorkloadsTest, InvalidWorkloadsAreRefusedWithUpstreamMessages) {
  struct Case {
    kube::ResourceRef ref;
    json obj;
    std::string message;
  };
  const json good_selector = {{"matchLabels", {{"app", "x"}}}};
  const std::vector<Case> cases = {
      {kube::resources::kDeployments,
       Workload("apps/v1", "Deployment", "x", {{"template", Template({{"app", "x"}})}}),
       "Deployment.apps \"x\" is invalid: spec.selector: Required value"},
      {kube::resources::kDeployments,
       Workload("apps/v1", "Deployment", "x",
                {{"selector", good_selector}, {"template", Template({{"app", "y"}})}}),
       "spec.template.metadata.labels: Invalid value: {\"app\":\"y\"}: `selector` does not match "
       "template `labels`"},
      {kube::resources::kDeployments,
       Workload(
           "apps/v1", "Deployment", "x",
           {{"replicas", -1}, {"selector", good_selector}, {"template", Template({{"app", "x"}})}}),
       "spec.replicas: Invalid value: -1: must be greater than or equal to 0"},
      {kube::resources::kDeployments,
       Workload("apps/v1", "Deployment", "x",
                {{"selector", good_selector},
                 {"strategy",
                  {{"type", "RollingUpdate"},
                   {"rollingUpdate", {{"maxSurge", 0}, {"maxUnavailable", "0%"}}}}},
                 {"template", Template({{"app", "x"}})}}),
       "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: \"0%\": may not be 0 when "
       "`maxSurge` is 0"},
      {kube::resources::kDeployments,
       Workload("apps/v1", "Deployment", "x",
                {{"selector", good_selector},
                 {"strategy", {{"type", "Rolling"}}},
                 {"template", Template({{"app", "x"}})}}),
       "spec.strategy.type: Unsupported value: \"Rolling\": supported values: \"Recreate\", "
       "\"RollingUpdate\""},
      {kube::resources::kReplicaSets,
       Workload("apps/v1", "ReplicaSet", "x",
                {{"selector", good_selector}, {"template", Template({{"app", "x"}}, "Never")}}),
       "spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: "
       "\"Always\""},
      {kube::resources::kStatefulSets,
       Workload("apps/v1", "StatefulSet", "x",
                {{"podManagementPolicy", "Random"},
                 {"selector", good_selector},
                 {"template", Template({{"app", "x"}})}}),
       "spec.podManagementPolicy: Unsupported value: \"Random\""},
      {kube::resources::kDaemonSets,
       Workload("apps/v1", "DaemonSet", "x",
                {{"selector", json::object()}, {"template", Template({{"app", "x"}})}}),
       "spec.selector: Invalid value: {}: empty selector is invalid for daemonset"},
      {kube::resources::kJobs,
       Workload("batch/v1", "Job", "x", {{"template", Template({{"app", "x"}})}}),
       "spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\""},
      {kube::resources::kJobs,
       Workload("batch/v1", "Job", "x",
                {{"completionMode", "Indexed"},
                 {"parallelism", 2},
                 {"template", Template({{"app", "x"}}, "Never")}}),
       "spec.completions: Required value: when completion mode is Indexed"},
      {kube::resources::kJobs,
       Workload("batch/v1", "Job", "x",
                {{"backoffLimit", -2}, {"template", Template({{"app", "x"}}, "Never")}}),
       "spec.backoffLimit: Invalid value: -2: must be greater than or equal to 0"},
  };
  for (const auto& c : cases) {
    auto created = Create(c.ref, c.obj);
    ASSERT_FALSE(created.ok()) << c.obj.dump();
    EXPECT_EQ(created.error().http_status, 422);
    EXPECT_NE(created.error().message.find(c.message), std::string::npos)
        << "got: " << created.error().message << "\nwant: " << c.message;
    EXPECT_FALSE(store_->Get(c.ref, "default", "x").ok());
  }
}

TEST_F(WorkloadsTest, StatefulSetSpecOutsideTheMutableFieldsIsForbiddenOnUpdate) {
  auto s = Create(kube::resources::kStatefulSets,
                  Workload("apps/v1", "StatefulSet", "s",
                           {{"serviceName", "s"},
                            {"selector", {{"matchLabels", {{"app", "s"}}}}},
                            {"template", Template({{"app", "s"}})}}));
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(store_
                  ->Patch(kube::resources::kStatefulSets, "default", "s", PatchType::kMerge,
                          R"({"spec":{"replicas":4}})")
                  .ok());
  auto bad = store_->Patch(kube::resources::kStatefulSets, "default", "s", PatchType::kMerge,
                           R"({"spec":{"serviceName":"other"}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find(
                "spec: Forbidden: updates to statefulset spec for fields other than"),
            std::string::npos)
      << bad.error().message;
}

TEST(AppsCodec, DecodesSpecAndEncodesStatusOverRaw) {
  const std::string text = R"({"apiVersion":"apps/v1","kind":"Deployment",
    "metadata":{"name":"d","namespace":"ns","resourceVersion":"7","generation":3},
    "spec":{"replicas":4,"selector":{"matchLabels":{"app":"d"}},
            "strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"50%","maxUnavailable":1}},
            "minReadySeconds":5,"progressDeadlineSeconds":60,"paused":true,
            "template":{"metadata":{"labels":{"app":"d"},"annotations":{"a":"b"}},
                        "spec":{"containers":[{"name":"c","image":"nginx"}]}}},
    "status":{"replicas":2,"conditions":[{"type":"Available","status":"True","lastUpdateTime":"t1",
              "lastTransitionTime":"t0","reason":"MinimumReplicasAvailable","message":"m"}],"unknown":1}})";
  auto d = kube::Deployment::Decode(text);
  ASSERT_TRUE(d.ok()) << d.error().ToString();
  EXPECT_EQ(d->spec.replicas, 4);
  EXPECT_EQ(d->spec.max_surge->ToString(), "50%");
  EXPECT_EQ(d->spec.max_unavailable->int_value, 1);
  EXPECT_EQ(d->spec.min_ready_seconds, 5);
  EXPECT_TRUE(d->spec.paused);
  EXPECT_EQ(d->spec.template_.labels, (Labels{{"app", "d"}}));
  EXPECT_EQ(d->spec.template_.annotations, (Labels{{"a", "b"}}));
  EXPECT_EQ(json::parse(d->spec.template_.json)["spec"]["containers"][0]["image"], "nginx");
  ASSERT_EQ(d->status.conditions.size(), 1u);
  EXPECT_EQ(d->status.conditions[0].last_update_time, "t1");
  // Unchanged: the same bytes. Changed status: the rest of raw survives.
  EXPECT_EQ(d->Encode(), d->raw);
  kube::Deployment edited = *d;
  edited.status.available_replicas = 2;
  edited.status.conditions[0].last_update_time = "t2";
  json out = json::parse(edited.Encode());
  EXPECT_EQ(out["status"]["availableReplicas"], 2);
  EXPECT_EQ(out["status"]["unknown"], 1);
  EXPECT_EQ(out["status"]["conditions"][0]["lastUpdateTime"], "t2");
  EXPECT_EQ(out["status"]["conditions"][0]["lastTransitionTime"], "t0");
  EXPECT_EQ(out["spec"]["strategy"]["rollingUpdate"]["maxSurge"], "50%");

  auto job = kube::Job::Decode(R"({"kind":"Job","spec":{"completions":4,"completionMode":"Indexed",
      "template":{"spec":{}}},"status":{"completedIndexes":"0-2","succeeded":3}})");
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->spec.completions, 4);
  EXPECT_EQ(job->spec.completion_mode, "Indexed");
  EXPECT_EQ(job->status.completed_indexes, "0-2");
  EXPECT_FALSE(kube::Job::Decode(R"({"kind":"Pod"})").ok());
  auto bad = kube::StatefulSet::Decode(R"({"spec":{"replicas":"three"}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("spec.replicas"), std::string::npos) << bad.error().message;
}

}  // namespace
}  // namespace copse::apiserver
