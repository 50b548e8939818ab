// Strict field checking of built-in objects against the protobuf schema.

#include "kube/protobuf/unknown_fields.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace copse::kube::protobuf {
namespace {

using ::testing::ElementsAre;

FieldProblems Check(std::string_view api_version, std::string_view kind, std::string_view json,
                    bool patch = false) {
  auto checked = CheckObjectFields(api_version, kind, json, patch);
  EXPECT_TRUE(checked.ok()) << checked.error().message;
  if (!checked.ok() || !checked->has_value()) {
    ADD_FAILURE() << kind << " is not a covered kind";
    return {};
  }
  return **checked;
}

TEST(UnknownFields, AValidPodHasNone) {
  const FieldProblems p = Check("v1", "Pod", R"({"apiVersion":"v1","kind":"Pod",
    "metadata":{"name":"a","labels":{"x":"y"},"ownerReferences":[{"apiVersion":"v1","kind":"X","name":"n","uid":"u"}]},
    "spec":{"schedulerName":"copse-scheduler","schedulingGroup":{"podGroupName":"g"},"containers":[{"name":"c","image":"i",
      "resources":{"requests":{"cpu":"1"}},"ports":[{"containerPort":80}]}],
      "affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
        {"matchExpressions":[{"key":"k","operator":"In","values":["v"]}]}]}}}},
    "status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False"}]}})");
  EXPECT_TRUE(p.empty()) << (p.unknown.empty() ? p.duplicate[0] : p.unknown[0]);
}

TEST(UnknownFields, NamesUnknownFieldsByPathInDocumentOrder) {
  const FieldProblems p =
      Check("v1", "Pod", R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","colour":1},
    "spec":{"bogus":1,"containers":[{"name":"a"},{"name":"b","imagePullPolicyy":"Always"}]}})");
  EXPECT_THAT(p.unknown,
              ElementsAre("metadata.colour", "spec.bogus", "spec.containers[1].imagePullPolicyy"));
  EXPECT_TRUE(p.duplicate.empty());
}

TEST(UnknownFields, NamesDuplicateFields) {
  const FieldProblems p =
      Check("v1", "ConfigMap",
            R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","name":"b"},
    "data":{"k":"1","k":"2"}})");
  EXPECT_THAT(p.duplicate, ElementsAre("metadata.name", "data[k]"));
  EXPECT_TRUE(p.unknown.empty());
}

TEST(UnknownFields, InlineStructsAndFreeFormFields) {
  // Deep inside a Deployment's pod template; managedFields' FieldsV1 holds any JSON.
  const FieldProblems d =
      Check("apps/v1", "Deployment", R"({"apiVersion":"apps/v1","kind":"Deployment",
    "metadata":{"name":"d","managedFields":[{"manager":"m","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:anything":{}}}}]},
    "spec":{"replicas":2,"selector":{"matchLabels":{"a":"b"}},"strategy":{"rollingUpdate":{"maxSurge":"25%"}},
      "template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","imagee":"x"}]}}}})");
  EXPECT_THAT(d.unknown, ElementsAre("spec.template.spec.containers[0].imagee"));
}

TEST(UnknownFields, PatchDirectivesAreNotFields) {
  const FieldProblems p =
      Check("v1", "Pod", R"({"spec":{"$setElementOrder/containers":[{"name":"c"}],
    "containers":[{"name":"c","$patch":"delete"}],"nope":null}})",
            /*patch=*/true);
  EXPECT_THAT(p.unknown, ElementsAre("spec.nope"));
}

TEST(UnknownFields, KindsOutsideTheSchemaAreNotChecked) {
  auto checked = CheckObjectFields("example.com/v1", "Widget", R"({"anything":1})");
  ASSERT_TRUE(checked.ok());
  EXPECT_FALSE(checked->has_value());
}

TEST(UnknownFields, MalformedJsonIsAnError) {
  EXPECT_FALSE(CheckObjectFields("v1", "Pod", R"({"spec":)").ok());
}

TEST(UnknownFields, MessageFieldsUseThePrefix) {
  auto checked = CheckMessageFields("meta.v1.ObjectMeta", R"({"name":"a","nmae":"b"})", "metadata");
  ASSERT_TRUE(checked.ok());
  ASSERT_TRUE(checked->has_value());
  EXPECT_THAT((*checked)->unknown, ElementsAre("metadata.nmae"));
}

}  // namespace
}  // namespace copse::kube::protobuf
