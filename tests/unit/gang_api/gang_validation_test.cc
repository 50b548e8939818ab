// The embedded API server's rules for the gang kinds: an invalid Workload or
// PodGroup is refused at create naming the field and nothing is stored (the
// Workload API's rules are upstream's, apiserver/scheduling_api.h); a
// v1alpha2 Workload's podGroupTemplates and a v1alpha2 PodGroup's policy are
// immutable; a copse PodGroup's spec may change (Grove scales it) but stays
// valid (apiserver/validation.h ValidateForCreate, gang_rules).

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "apiserver/apiserver.h"
#include "apiserver/store.h"
#include "deploy/crds.h"
#include "kube/pod_group.h"
#include "kube/workload.h"
#include "kube/yaml.h"

namespace copse::deploy {
namespace {

using nlohmann::json;
namespace resources = kube::resources;

std::shared_ptr<apiserver::Store> StoreWithCrds(apiserver::StoreOptions options = {}) {
  std::shared_ptr<apiserver::Store> store = apiserver::NewStore(std::move(options));
  for (const EmbeddedFile& file : BuiltinCrds()) {
    Result<std::vector<std::string>> docs = kube::YamlDocumentsToJson(file.content);
    EXPECT_TRUE(docs.ok()) << file.path;
    if (!docs.ok()) continue;
    for (const std::string& doc : *docs) {
      auto created = store->Create(resources::kCustomResourceDefinitions, "", doc);
      EXPECT_TRUE(created.ok()) << file.path << ": " << created.error().ToString();
    }
  }
  return store;
}

json Workload(int min_count) {
  return {{"apiVersion", "scheduling.k8s.io/v1alpha2"},
          {"kind", "Workload"},
          {"metadata", {{"name", "training"}, {"namespace", "default"}}},
          {"spec",
           {{"podGroupTemplates",
             json::array({{{"name", "workers"},
                           {"schedulingPolicy", {{"gang", {{"minCount", min_count}}}}}}})}}}};
}

json V1alpha2PodGroup(json policy) {
  return {{"apiVersion", "scheduling.k8s.io/v1alpha2"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", "training-workers"}, {"namespace", "default"}}},
          {"spec", {{"schedulingPolicy", std::move(policy)}}}};
}

json CopsePodGroup(int min_sub_group) {
  return {{"apiVersion", "scheduling.copse.dev/v1alpha1"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", "inference"}, {"namespace", "default"}}},
          {"spec",
           {{"minMember", 2},
            {"minSubGroup", min_sub_group},
            {"subGroups", json::array({{{"name", "a"}, {"minMember", 1}},
                                       {{"name", "b"}, {"minMember", 1}}})}}}};
}

TEST(GangValidation, InvalidWorkloadIsRefusedNamingTheFieldAndNotStored) {
  auto store = StoreWithCrds();
  auto created = store->Create(resources::kWorkloads, "default", Workload(0).dump());
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.error().http_status, 422);
  EXPECT_NE(created.error().message.find("Workload.scheduling.k8s.io \"training\" is invalid"),
            std::string::npos)
      << created.error().message;
  EXPECT_NE(
      created.error().message.find("spec.podGroupTemplates[0].schedulingPolicy.gang.minCount"),
      std::string::npos)
      << created.error().message;
  EXPECT_FALSE(store->Get(resources::kWorkloads, "default", "training").ok());

  json no_templates = Workload(1);
  no_templates["spec"]["podGroupTemplates"] = json::array();
  created = store->Create(resources::kWorkloads, "default", no_templates.dump());
  ASSERT_FALSE(created.ok());
  EXPECT_NE(created.error().message.find("spec.podGroupTemplates: Required value"),
            std::string::npos)
      << created.error().message;
}

TEST(GangValidation, WorkloadTemplatesAreImmutable) {
  auto store = StoreWithCrds();
  ASSERT_TRUE(store->Create(resources::kWorkloads, "default", Workload(4).dump()).ok());
  auto changed =
      store->Patch(resources::kWorkloads, "default", "training", apiserver::PatchType::kMerge,
                   R"({"spec":{"podGroupTemplates":[{"name":"workers",)"
                   R"("schedulingPolicy":{"gang":{"minCount":2}}}]}})");
  ASSERT_FALSE(changed.ok());
  EXPECT_EQ(changed.error().http_status, 422);
  EXPECT_NE(changed.error().message.find("spec.podGroupTemplates: Invalid value"),
            std::string::npos)
      << changed.error().message;
  EXPECT_NE(changed.error().message.find("field is immutable"), std::string::npos);
  auto got = store->Get(resources::kWorkloads, "default", "training");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(
      json::parse(
          (*got)->json)["spec"]["podGroupTemplates"][0]["schedulingPolicy"]["gang"]["minCount"],
      4);
  // Metadata still changes.
  EXPECT_TRUE(store
                  ->Patch(resources::kWorkloads, "default", "training",
                          apiserver::PatchType::kMerge, R"({"metadata":{"labels":{"team":"a"}}})")
                  .ok());
}

TEST(GangValidation, V1alpha2PodGroupIsCheckedAndItsSpecIsImmutable) {
  auto store = StoreWithCrds();
  auto both = store->Create(
      resources::kPodGroups, "default",
      V1alpha2PodGroup({{"basic", json::object()}, {"gang", {{"minCount", 2}}}}).dump());
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.error().http_status, 422);
  EXPECT_NE(both.error().message.find("spec.schedulingPolicy"), std::string::npos)
      << both.error().message;
  EXPECT_FALSE(store->Get(resources::kPodGroups, "default", "training-workers").ok());

  ASSERT_TRUE(store
                  ->Create(resources::kPodGroups, "default",
                           V1alpha2PodGroup({{"gang", {{"minCount", 2}}}}).dump())
                  .ok());
  auto changed = store->Patch(resources::kPodGroups, "default", "training-workers",
                              apiserver::PatchType::kMerge,
                              R"({"spec":{"schedulingPolicy":{"gang":{"minCount":3}}}})");
  ASSERT_FALSE(changed.ok());
  // As kube-apiserver v1.36: reported per immutable field.
  EXPECT_NE(changed.error().message.find("spec.schedulingPolicy: Invalid value"), std::string::npos)
      << changed.error().message;
  EXPECT_NE(changed.error().message.find("field is immutable"), std::string::npos);
}

TEST(GangValidation, CopsePodGroupIsCheckedOnCreateAndUpdate) {
  auto store = StoreWithCrds();
  auto bad = store->Create(resources::kCopsePodGroups, "default", CopsePodGroup(3).dump());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().http_status, 422);
  EXPECT_NE(bad.error().message.find(
                "spec.minSubGroup: Invalid value: 3: must be <= 2 (the number of direct child "
                "subgroups)"),
            std::string::npos)
      << bad.error().message;
  EXPECT_FALSE(store->Get(resources::kCopsePodGroups, "default", "inference").ok());

  ASSERT_TRUE(store->Create(resources::kCopsePodGroups, "default", CopsePodGroup(2).dump()).ok());
  // A valid change is taken (Grove changes minMember as it scales) ...
  EXPECT_TRUE(store
                  ->Patch(resources::kCopsePodGroups, "default", "inference",
                          apiserver::PatchType::kMerge, R"({"spec":{"minSubGroup":1}})")
                  .ok());
  // ... an invalid one is refused and leaves the stored spec alone.
  auto worse =
      store->Patch(resources::kCopsePodGroups, "default", "inference", apiserver::PatchType::kMerge,
                   R"({"spec":{"preemptibility":"sometimes"}})");
  ASSERT_FALSE(worse.ok());
  EXPECT_NE(worse.error().message.find("spec.preemptibility"), std::string::npos)
      << worse.error().message;
  auto got = store->Get(resources::kCopsePodGroups, "default", "inference");
  ASSERT_TRUE(got.ok());
  const json spec = json::parse((*got)->json)["spec"];
  EXPECT_EQ(spec["minSubGroup"], 1);
  EXPECT_FALSE(spec.contains("preemptibility"));
}

// Issue 15 item 5: a minMember above the pods its subgroups hold (spec 002:
// the sum of their minMember) would wait forever; refused on create and on
// update, naming the field, and nothing changes.
TEST(GangValidation, CopsePodGroupMinMemberAboveItsSubGroupsIsRefused) {
  auto store = StoreWithCrds();
  json group = CopsePodGroup(2);
  group["spec"]["minMember"] = 3;  // two subgroups of minMember 1 hold 2
  auto bad = store->Create(resources::kCopsePodGroups, "default", group.dump());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().http_status, 422);
  EXPECT_NE(bad.error().message.find("spec.minMember: Invalid value: 3: must be <= 2 (the pods "
                                     "its 2 subgroups hold: the sum of their minMember)"),
            std::string::npos)
      << bad.error().message;
  EXPECT_FALSE(store->Get(resources::kCopsePodGroups, "default", "inference").ok());

  ASSERT_TRUE(store->Create(resources::kCopsePodGroups, "default", CopsePodGroup(1).dump()).ok());
  // Raising a subgroup's minimum makes room for a larger group minimum ...
  EXPECT_TRUE(store
                  ->Patch(resources::kCopsePodGroups, "default", "inference",
                          apiserver::PatchType::kMerge,
                          R"({"spec":{"minMember":4,"subGroups":[{"name":"a","minMember":3},)"
                          R"({"name":"b","minMember":1}]}})")
                  .ok());
  // ... and an update past it is refused, leaving the stored spec alone.
  auto worse = store->Patch(resources::kCopsePodGroups, "default", "inference",
                            apiserver::PatchType::kMerge, R"({"spec":{"minMember":5}})");
  ASSERT_FALSE(worse.ok());
  EXPECT_EQ(worse.error().http_status, 422);
  EXPECT_NE(worse.error().message.find("spec.minMember: Invalid value: 5: must be <= 4"),
            std::string::npos)
      << worse.error().message;
  auto got = store->Get(resources::kCopsePodGroups, "default", "inference");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(json::parse((*got)->json)["spec"]["minMember"], 4);
}

TEST(GangValidation, SchemaOnlyStoreTakesWhatAKubeApiserverWould) {
  apiserver::StoreOptions options;
  options.gang_rules = false;
  auto store = StoreWithCrds(std::move(options));
  EXPECT_TRUE(store->Create(resources::kCopsePodGroups, "default", CopsePodGroup(3).dump()).ok());
  // scheduling.k8s.io is kube-apiserver's own API: its rules hold either way
  // (a gang's minCount is required, as upstream's declarative validation).
  auto workload = store->Create(resources::kWorkloads, "default", Workload(0).dump());
  ASSERT_FALSE(workload.ok());
  EXPECT_NE(workload.error().message.find(
                "spec.podGroupTemplates[0].schedulingPolicy.gang.minCount: Required value"),
            std::string::npos)
      << workload.error().message;
}

}  // namespace
}  // namespace copse::deploy
