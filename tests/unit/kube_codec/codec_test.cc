// Shared codec pieces: ObjectMeta, Unstructured (custom resources),
// IntOrString, label/node selectors, malformed input.

#include "kube/codec.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <thread>

namespace copse::kube {
namespace {

using nlohmann::json;

constexpr const char* kPodGang = R"json({
  "apiVersion": "scheduler.grove.io/v1alpha1",
  "kind": "PodGang",
  "metadata": {
    "name": "simple1-0",
    "namespace": "default",
    "uid": "8d3f1f5c-3333-4a57-8bd2-000000000003",
    "resourceVersion": "4242",
    "generation": 3,
    "creationTimestamp": "2024-06-01T00:00:00Z",
    "deletionTimestamp": "2024-06-02T00:00:00Z",
    "deletionGracePeriodSeconds": 0,
    "finalizers": ["grove.io/podgang"],
    "labels": {"app.kubernetes.io/managed-by": "grove-operator", "app.kubernetes.io/part-of": "simple1"},
    "ownerReferences": [{"apiVersion": "grove.io/v1alpha1", "kind": "PodCliqueSet", "name": "simple1",
                         "uid": "u-pcs", "controller": true, "blockOwnerDeletion": true},
                        {"apiVersion": "v1", "kind": "ConfigMap", "name": "cm", "uid": "u-cm"}],
    "managedFields": [{"manager": "grove", "operation": "Apply"}]
  },
  "spec": {
    "podgroups": [{"name": "simple1-0-pca", "minReplicas": 2,
                   "podReferences": [{"name": "simple1-0-pca-0", "namespace": "default"}]}],
    "priorityClassName": "high"
  },
  "status": {"phase": "Pending"}
})json";

TEST(ObjectMetaCodec, DecodesEveryField) {
  Result<ObjectMeta> meta = DecodeObjectMeta(kPodGang);
  ASSERT_TRUE(meta.ok()) << meta.error().message;
  EXPECT_EQ(meta->name, "simple1-0");
  EXPECT_EQ(meta->namespace_, "default");
  EXPECT_EQ(meta->uid, "8d3f1f5c-3333-4a57-8bd2-000000000003");
  EXPECT_EQ(meta->resource_version, "4242");
  EXPECT_EQ(meta->generation, 3);
  EXPECT_EQ(meta->creation_timestamp, "2024-06-01T00:00:00Z");
  EXPECT_EQ(meta->deletion_timestamp, "2024-06-02T00:00:00Z");
  EXPECT_EQ(meta->deletion_grace_period_seconds, 0);
  EXPECT_EQ(meta->finalizers, std::vector<std::string>{"grove.io/podgang"});
  EXPECT_EQ(meta->labels.size(), 2u);
  ASSERT_EQ(meta->owner_references.size(), 2u);
  EXPECT_FALSE(meta->owner_references[1].controller);
  ASSERT_NE(meta->ControllerRef(), nullptr);
  EXPECT_EQ(meta->ControllerRef()->name, "simple1");
  EXPECT_EQ(meta->Key(), "default/simple1-0");
}

TEST(ObjectMetaCodec, ARepeatedMetadataKeyKeepsItsLastValueAsJsonParsersDo) {
  // Found by tests/fuzz/grove_codec_fuzz.cc (tests/unit/grove/fuzz/): the
  // second "metadata" was merged into the first, so the typed name was the
  // first one's while the raw text (and every JSON parser) had the second.
  const std::string text =
      R"({"metadata":{"name":"a","labels":{"x":"1"}},"metadata":{"namespace":"b"}})";
  Result<ObjectMeta> meta = DecodeObjectMeta(text);
  ASSERT_TRUE(meta.ok()) << meta.error().message;
  const nlohmann::json reference = nlohmann::json::parse(text)["metadata"];
  EXPECT_EQ(meta->name, reference.value("name", ""));
  EXPECT_EQ(meta->namespace_, reference.value("namespace", ""));
  EXPECT_EQ(meta->labels.size(), reference.value("labels", nlohmann::json::object()).size());
}

TEST(ObjectMetaCodec, MissingMetadataIsEmptyAndErrorsNameTheField) {
  Result<ObjectMeta> meta = DecodeObjectMeta(R"({"kind":"Foo"})");
  ASSERT_TRUE(meta.ok());
  EXPECT_TRUE(meta->name.empty());
  EXPECT_FALSE(meta->deletion_timestamp.has_value());

  meta = DecodeObjectMeta(R"({"metadata":{"generation":"3"}})");
  ASSERT_FALSE(meta.ok());
  EXPECT_EQ(meta.error().message, "metadata.generation: expected integer, got string");
  meta = DecodeObjectMeta(R"({"metadata":{"ownerReferences":[{"controller":"yes"}]}})");
  ASSERT_FALSE(meta.ok());
  EXPECT_EQ(meta.error().message,
            "metadata.ownerReferences[0].controller: expected boolean, got string");
  meta = DecodeObjectMeta(R"({"metadata":{"finalizers":["a",1]}})");
  ASSERT_FALSE(meta.ok());
  EXPECT_EQ(meta.error().message, "metadata.finalizers[1]: expected string, got number");
  meta = DecodeObjectMeta(R"({"metadata": "x"})");
  ASSERT_FALSE(meta.ok());
  EXPECT_EQ(meta.error().message, "metadata: expected object, got string");
}

TEST(UnstructuredCodec, DecodesAnyKind) {
  Result<std::shared_ptr<Unstructured>> object = DecodeUnstructured(kPodGang);
  ASSERT_TRUE(object.ok()) << object.error().message;
  const Unstructured& gang = **object;
  EXPECT_EQ(gang.api_version, "scheduler.grove.io/v1alpha1");
  EXPECT_EQ(gang.kind, "PodGang");
  EXPECT_EQ(gang.meta.name, "simple1-0");
  EXPECT_EQ(gang.raw, kPodGang);
  // Usable through the base class, as informers hand objects out.
  const KubeObject& base = gang;
  EXPECT_EQ(base.meta.ControllerRef()->kind, "PodCliqueSet");
}

TEST(UnstructuredCodec, MetadataEditsKeepTheBody) {
  Unstructured gang = Unstructured::Decode(kPodGang).value();
  EXPECT_EQ(gang.Encode(), kPodGang);  // unedited: raw, byte for byte

  gang.meta.resource_version = "4243";
  gang.meta.labels["copse.dev/seen"] = "true";
  gang.meta.finalizers.clear();
  gang.meta.deletion_timestamp.reset();
  gang.meta.owner_references.pop_back();
  json encoded = json::parse(gang.Encode());
  EXPECT_EQ(encoded["metadata"]["resourceVersion"], "4243");
  EXPECT_EQ(encoded["metadata"]["labels"]["copse.dev/seen"], "true");
  EXPECT_FALSE(encoded["metadata"].contains("finalizers"));
  EXPECT_FALSE(encoded["metadata"].contains("deletionTimestamp"));
  EXPECT_EQ(encoded["metadata"]["deletionGracePeriodSeconds"], 0);
  EXPECT_EQ(encoded["metadata"]["ownerReferences"].size(), 1u);
  EXPECT_EQ(encoded["metadata"]["managedFields"][0]["manager"], "grove");
  EXPECT_EQ(encoded["spec"], json::parse(kPodGang)["spec"]);
  EXPECT_EQ(encoded["status"]["phase"], "Pending");
  EXPECT_EQ(encoded["kind"], "PodGang");

  Unstructured again = Unstructured::Decode(encoded.dump()).value();
  EXPECT_EQ(again.meta.resource_version, "4243");
  EXPECT_EQ(again.meta.labels, gang.meta.labels);
  EXPECT_EQ(again.meta.owner_references, gang.meta.owner_references);
}

TEST(UnstructuredCodec, BuiltInCodeAndRejectedInput) {
  Unstructured object;
  object.api_version = "scheduling.copse.dev/v1alpha1";
  object.kind = "Topology";
  object.meta.name = "default";
  EXPECT_EQ(json::parse(object.Encode()),
            json::parse(R"({"apiVersion":"scheduling.copse.dev/v1alpha1","kind":"Topology",
                            "metadata":{"name":"default"}})"));

  Result<std::shared_ptr<Unstructured>> bad = DecodeUnstructured("[1,2]");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "expected object, got array");
  bad = DecodeUnstructured(R"({"kind": 5})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "kind: expected string, got number");
  bad = DecodeUnstructured(R"({"metadata": {"labels": {"a": "b"}, }})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.rfind("metadata.labels: malformed JSON: parse error at line 1", 0),
            0u)
      << bad.error().message;
}

TEST(IntOrStringCodec, ScalesPercentages) {
  EXPECT_EQ(IntOrString::FromInt(3).ScaledValue(10, true).value(), 3);
  EXPECT_EQ(IntOrString::FromString("50%").ScaledValue(5, true).value(), 3);
  EXPECT_EQ(IntOrString::FromString("50%").ScaledValue(5, false).value(), 2);
  EXPECT_EQ(IntOrString::FromString("100%").ScaledValue(7, false).value(), 7);
  EXPECT_EQ(IntOrString::FromString("0%").ScaledValue(7, true).value(), 0);
  EXPECT_TRUE(IntOrString::FromString("10%").IsPercent());
  EXPECT_FALSE(IntOrString::FromString("10").IsPercent());
  EXPECT_EQ(IntOrString::FromString("10%").ToString(), "10%");
  EXPECT_EQ(IntOrString::FromInt(4).ToString(), "4");

  Result<int32_t> bad = IntOrString::FromString("10").ScaledValue(10, true);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("not a percentage"), std::string::npos);
  bad = IntOrString::FromString("x%").ScaledValue(10, true);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("\"x%\""), std::string::npos);
  EXPECT_FALSE(IntOrString::FromString("%").ScaledValue(10, true).ok());
}

TEST(LabelSelectorCodec, RoundTripsMatchLabelsAndExpressions) {
  Result<LabelSelector> selector = DecodeLabelSelector(
      R"({"matchLabels":{"app":"web"},"matchExpressions":[{"key":"tier","operator":"NotIn","values":["cache","db"]},{"key":"canary","operator":"DoesNotExist"}]})");
  ASSERT_TRUE(selector.ok()) << selector.error().message;
  EXPECT_TRUE(selector->Matches({{"app", "web"}, {"tier", "frontend"}}));
  EXPECT_FALSE(selector->Matches({{"app", "web"}, {"tier", "db"}}));
  EXPECT_FALSE(selector->Matches({{"app", "web"}, {"canary", "1"}}));
  EXPECT_FALSE(selector->Matches({{"app", "api"}}));

  json encoded = json::parse(EncodeLabelSelector(*selector));
  EXPECT_EQ(encoded["matchLabels"], json::parse(R"({"app":"web"})"));
  EXPECT_EQ(encoded["matchExpressions"].size(), 2u);
  Result<LabelSelector> again = DecodeLabelSelector(encoded.dump());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *selector);
}

TEST(LabelSelectorCodec, NullEmptyAndStringForm) {
  Result<LabelSelector> nothing = DecodeLabelSelector("null");
  ASSERT_TRUE(nothing.ok());
  EXPECT_TRUE(nothing->MatchesNothing());
  EXPECT_FALSE(nothing->Matches({}));
  EXPECT_EQ(EncodeLabelSelector(*nothing), "null");

  Result<LabelSelector> everything = DecodeLabelSelector("{}");
  ASSERT_TRUE(everything.ok());
  EXPECT_TRUE(everything->Empty());
  EXPECT_TRUE(everything->Matches({{"any", "thing"}}));
  EXPECT_EQ(EncodeLabelSelector(*everything), "{}");

  // The string form ("a!=b") has no matchLabels equivalent: it becomes NotIn.
  LabelSelector parsed = LabelSelector::Parse("env!=prod,app=web,gpu").value();
  Result<LabelSelector> via_json = DecodeLabelSelector(EncodeLabelSelector(parsed));
  ASSERT_TRUE(via_json.ok()) << via_json.error().message;
  for (const Labels& labels : std::vector<Labels>{{{"app", "web"}, {"gpu", ""}},
                                                  {{"app", "web"}, {"gpu", ""}, {"env", "prod"}},
                                                  {{"app", "web"}},
                                                  {{"app", "api"}, {"gpu", "1"}}}) {
    EXPECT_EQ(via_json->Matches(labels), parsed.Matches(labels));
  }
}

TEST(LabelSelectorCodec, ErrorsNameTheExpression) {
  Result<LabelSelector> bad = DecodeLabelSelector(
      R"({"matchExpressions":[{"key":"a","operator":"Exists"},{"key":"b","operator":"Gt","values":["1"]}]})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("matchExpressions[1]"), std::string::npos)
      << bad.error().message;
  bad = DecodeLabelSelector(R"({"matchLabels":{"a":["b"]}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "matchLabels.a: expected string, got array");
  bad = DecodeLabelSelector(R"({"matchExpressions":[{"key":"a","operator":"In","values":"b"}]})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "matchExpressions[0].values: expected array, got string");
}

TEST(NodeSelectorCodec, RoundTripsTermsAndFields) {
  Result<NodeSelector> selector = DecodeNodeSelector(R"({"nodeSelectorTerms":[
      {"matchExpressions":[{"key":"gpu.count","operator":"Lt","values":["4"]}]},
      {"matchFields":[{"key":"metadata.name","operator":"In","values":["node-9"]}]}]})");
  ASSERT_TRUE(selector.ok()) << selector.error().message;
  ASSERT_EQ(selector->terms.size(), 2u);
  EXPECT_TRUE(selector->Matches({{"gpu.count", "2"}}, "node-1"));
  EXPECT_FALSE(selector->Matches({{"gpu.count", "8"}}, "node-1"));
  EXPECT_TRUE(selector->Matches({{"gpu.count", "8"}}, "node-9"));

  Result<NodeSelector> again = DecodeNodeSelector(EncodeNodeSelector(*selector));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *selector);
  EXPECT_EQ(
      json::parse(EncodeNodeSelector(*selector))["nodeSelectorTerms"][1]["matchFields"][0]["key"],
      "metadata.name");

  Result<NodeSelector> bad = DecodeNodeSelector(
      R"({"nodeSelectorTerms":[{},{"matchExpressions":[{"key":"a","operator":"Maybe"}]}]})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.rfind("nodeSelectorTerms[1].matchExpressions[0].operator: ", 0), 0u)
      << bad.error().message;
}

TEST(ConditionHelpers, FindByType) {
  std::vector<Condition> conditions{{"Ready", "False", "", "", "", "", "", {}},
                                    {"PodGroupScheduled", "True", "Scheduled", "", "", "", "", 4}};
  ASSERT_NE(FindCondition(conditions, "PodGroupScheduled"), nullptr);
  EXPECT_EQ(FindCondition(conditions, "PodGroupScheduled")->observed_generation, 4);
  EXPECT_EQ(FindCondition(conditions, "Missing"), nullptr);
  FindCondition(conditions, "Ready")->status = "True";
  EXPECT_EQ(conditions[0].status, "True");
}

TEST(DecoderThreads, ParallelDecodesDoNotInterfere) {
  auto work = [](int id, bool* ok) {
    for (int i = 0; i < 200; ++i) {
      std::string name = "obj-" + std::to_string(id) + "-" + std::to_string(i);
      std::string text = R"({"kind":"X","metadata":{"name":")" + name + R"("}})";
      Result<std::shared_ptr<Unstructured>> object = DecodeUnstructured(text);
      if (!object.ok() || (*object)->meta.name != name) *ok = false;
    }
  };
  bool ok1 = true;
  bool ok2 = true;
  std::thread t1(work, 1, &ok1);
  std::thread t2(work, 2, &ok2);
  t1.join();
  t2.join();
  EXPECT_TRUE(ok1);
  EXPECT_TRUE(ok2);
}

}  // namespace
}  // namespace copse::kube
