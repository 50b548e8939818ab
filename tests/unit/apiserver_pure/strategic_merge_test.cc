#include "apiserver/strategic_merge.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace copse::apiserver {
namespace {

using json = nlohmann::json;

json J(const char* text) { return json::parse(text); }

json Patch(const json& original, const json& patch, std::string_view api_version = "v1",
           std::string_view kind = "Pod") {
  Result<json> r = ApplyStrategicMergePatch(original, patch, api_version, kind);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : json();
}

std::vector<std::string> Names(const json& list, const char* key = "name") {
  std::vector<std::string> out;
  for (const json& v : list) out.push_back(v.at(key).get<std::string>());
  return out;
}

json TwoContainerPod() {
  return J(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "labels": {"app": "web", "tier": "fe"}},
    "spec": {"containers": [
      {"name": "a", "image": "a:1", "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}]},
      {"name": "b", "image": "b:1", "ports": [{"containerPort": 80}]}
    ]}
  })");
}

TEST(StrategicMerge, CordonAndUncordonNode) {
  const json node = J(
      R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},"spec":{"podCIDR":"10.0.0.0/24"}})");
  json cordoned = Patch(node, J(R"({"spec":{"unschedulable":true}})"), "v1", "Node");
  EXPECT_EQ(cordoned["spec"]["unschedulable"], true);
  EXPECT_EQ(cordoned["spec"]["podCIDR"], "10.0.0.0/24");
  json uncordoned = Patch(cordoned, J(R"({"spec":{"unschedulable":null}})"), "v1", "Node");
  EXPECT_FALSE(uncordoned["spec"].contains("unschedulable"));
  EXPECT_EQ(uncordoned["spec"]["podCIDR"], "10.0.0.0/24");
}

TEST(StrategicMerge, ContainerImageChangedByName) {
  json out = Patch(TwoContainerPod(), J(R"({"spec":{"containers":[{"name":"b","image":"b:2"}]}})"));
  ASSERT_EQ(out["spec"]["containers"].size(), 2u);
  EXPECT_EQ(Names(out["spec"]["containers"]), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(out["spec"]["containers"][1]["image"], "b:2");
  EXPECT_EQ(out["spec"]["containers"][1]["ports"][0]["containerPort"], 80);  // merged, not replaced
  EXPECT_EQ(out["spec"]["containers"][0]["image"], "a:1");
}

TEST(StrategicMerge, NewListItemWithoutOrderGoesFirstAsUpstream) {
  json out = Patch(TwoContainerPod(), J(R"({"spec":{"containers":[{"name":"c","image":"c:1"}]}})"));
  EXPECT_EQ(Names(out["spec"]["containers"]), (std::vector<std::string>{"c", "a", "b"}));
}

TEST(StrategicMerge, NestedEnvMergedByName) {
  json out =
      Patch(TwoContainerPod(),
            J(R"({"spec":{"containers":[{"name":"a","env":[{"name":"Y","value":"20"}]}]}})"));
  const json& env = out["spec"]["containers"][0]["env"];
  EXPECT_EQ(Names(env), (std::vector<std::string>{"X", "Y"}));
  EXPECT_EQ(env[1]["value"], "20");
}

TEST(StrategicMerge, KubectlApplyPatchWithSetElementOrder) {
  // What kubectl apply sends when the manifest reorders containers, changes
  // b and adds c.
  json out = Patch(TwoContainerPod(), J(R"({
    "spec": {
      "$setElementOrder/containers": [{"name": "b"}, {"name": "c"}, {"name": "a"}],
      "containers": [{"name": "b", "image": "b:3"}, {"name": "c", "image": "c:1"}]
    }
  })"));
  EXPECT_EQ(Names(out["spec"]["containers"]), (std::vector<std::string>{"b", "c", "a"}));
  EXPECT_EQ(out["spec"]["containers"][0]["image"], "b:3");
  EXPECT_EQ(out["spec"]["containers"][1]["image"], "c:1");
  EXPECT_FALSE(out["spec"].contains("$setElementOrder/containers"));
}

TEST(StrategicMerge, KubectlApplyRemovesContainerWithDeleteDirective) {
  json out = Patch(TwoContainerPod(), J(R"({
    "spec": {
      "$setElementOrder/containers": [{"name": "a"}],
      "containers": [{"$patch": "delete", "name": "b"}]
    }
  })"));
  EXPECT_EQ(Names(out["spec"]["containers"]), (std::vector<std::string>{"a"}));
}

TEST(StrategicMerge, DeleteDirectiveRemovesEnvVar) {
  json out = Patch(TwoContainerPod(), J(R"({"spec":{"containers":[
    {"name":"a","env":[{"name":"X","$patch":"delete"}]}]}})"));
  EXPECT_EQ(Names(out["spec"]["containers"][0]["env"]), (std::vector<std::string>{"Y"}));
}

TEST(StrategicMerge, NullDeletesLabelAndAnnotateAddsOne) {
  json out =
      Patch(TwoContainerPod(),
            J(R"({"metadata":{"labels":{"tier":null,"env":"prod"},"annotations":{"note":"x"}}})"));
  EXPECT_EQ(out["metadata"]["labels"], J(R"({"app":"web","env":"prod"})"));
  EXPECT_EQ(out["metadata"]["annotations"], J(R"({"note":"x"})"));
}

TEST(StrategicMerge, ReplaceDirectiveOnMapAndList) {
  json labels =
      Patch(TwoContainerPod(), J(R"({"metadata":{"labels":{"$patch":"replace","only":"this"}}})"));
  EXPECT_EQ(labels["metadata"]["labels"], J(R"({"only":"this"})"));

  json list =
      Patch(TwoContainerPod(),
            J(R"({"spec":{"containers":[{"$patch":"replace"},{"name":"z","image":"z:1"}]}})"));
  EXPECT_EQ(Names(list["spec"]["containers"]), (std::vector<std::string>{"z"}));
}

TEST(StrategicMerge, DeleteDirectiveOnMapEmptiesIt) {
  json out = Patch(TwoContainerPod(), J(R"({"metadata":{"labels":{"$patch":"delete"}}})"));
  EXPECT_EQ(out["metadata"]["labels"], json::object());
}

TEST(StrategicMerge, MergeDirectiveIsTheDefault) {
  json out = Patch(TwoContainerPod(), J(R"({"metadata":{"labels":{"$patch":"merge","x":"1"}}})"));
  EXPECT_EQ(out["metadata"]["labels"], J(R"({"app":"web","tier":"fe","x":"1"})"));
}

TEST(StrategicMerge, RetainKeysClearsOtherVolumeSource) {
  json pod = TwoContainerPod();
  pod["spec"]["volumes"] = J(R"([{"name":"data","emptyDir":{}},{"name":"other","emptyDir":{}}])");
  json out = Patch(pod, J(R"({"spec":{"volumes":[
    {"name":"data","hostPath":{"path":"/x"},"$retainKeys":["hostPath","name"]}]}})"));
  ASSERT_EQ(out["spec"]["volumes"].size(), 2u);
  EXPECT_EQ(out["spec"]["volumes"][0], J(R"({"name":"data","hostPath":{"path":"/x"}})"));
  EXPECT_EQ(out["spec"]["volumes"][1], J(R"({"name":"other","emptyDir":{}})"));
}

TEST(StrategicMerge, RetainKeysMismatchIs422) {
  Result<json> r = ApplyStrategicMergePatch(
      J(R"({"spec":{"strategy":{"type":"Recreate"}}})"),
      J(R"({"spec":{"strategy":{"type":"RollingUpdate","rollingUpdate":{},"$retainKeys":["type"]}}})"),
      "apps/v1", "Deployment");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().http_status, 422);
  EXPECT_EQ(r.error().message, "patch content doesn't match retainKeys list");
}

TEST(StrategicMerge, FinalizersArePrimitiveMergeList) {
  const json obj = J(R"({"metadata":{"name":"p","finalizers":["a.io/x","b.io/y"]}})");
  json added = Patch(obj, J(R"({"metadata":{"finalizers":["c.io/z","a.io/x"]}})"));
  EXPECT_EQ(added["metadata"]["finalizers"], J(R"(["c.io/z","a.io/x","b.io/y"])"));

  json ordered = Patch(obj, J(R"({"metadata":{
    "$setElementOrder/finalizers":["a.io/x","b.io/y","c.io/z"],"finalizers":["c.io/z"]}})"));
  EXPECT_EQ(ordered["metadata"]["finalizers"], J(R"(["a.io/x","b.io/y","c.io/z"])"));

  json removed =
      Patch(obj, J(R"({"metadata":{"$deleteFromPrimitiveList/finalizers":["a.io/x"]}})"));
  EXPECT_EQ(removed["metadata"]["finalizers"], J(R"(["b.io/y"])"));

  // Deleting from a list that does not exist adds nothing.
  json none = Patch(J(R"({"metadata":{"name":"p"}})"),
                    J(R"({"metadata":{"$deleteFromPrimitiveList/finalizers":["a.io/x"]}})"));
  EXPECT_FALSE(none["metadata"].contains("finalizers"));
}

TEST(StrategicMerge, ListsWithoutStrategyAreReplaced) {
  json pod = TwoContainerPod();
  pod["spec"]["tolerations"] = J(R"([{"key":"a","operator":"Exists"}])");
  json out = Patch(pod, J(R"({"spec":{"tolerations":[{"key":"b","operator":"Exists"}]}})"));
  EXPECT_EQ(out["spec"]["tolerations"], J(R"([{"key":"b","operator":"Exists"}])"));

  const json node = J(R"({"spec":{"taints":[{"key":"a","effect":"NoSchedule"}]}})");
  json tainted =
      Patch(node, J(R"({"spec":{"taints":[{"key":"b","effect":"NoExecute"}]}})"), "v1", "Node");
  EXPECT_EQ(tainted["spec"]["taints"], J(R"([{"key":"b","effect":"NoExecute"}])"));
}

TEST(StrategicMerge, PodConditionsMergeByType) {
  const json pod = J(R"({"status":{"conditions":[
    {"type":"PodScheduled","status":"True"},{"type":"Ready","status":"False"}]}})");
  json out = Patch(pod, J(R"({"status":{"conditions":[{"type":"Ready","status":"True"}]}})"));
  EXPECT_EQ(out["status"]["conditions"],
            J(R"([{"type":"PodScheduled","status":"True"},{"type":"Ready","status":"True"}])"));
}

TEST(StrategicMerge, OwnerReferencesMergeByUid) {
  const json obj = J(
      R"({"metadata":{"ownerReferences":[{"uid":"1","name":"a","kind":"X","apiVersion":"v1"}]}})");
  json out = Patch(obj, J(R"({"metadata":{"ownerReferences":[{"uid":"1","controller":true}]}})"));
  ASSERT_EQ(out["metadata"]["ownerReferences"].size(), 1u);
  EXPECT_EQ(out["metadata"]["ownerReferences"][0]["controller"], true);
  EXPECT_EQ(out["metadata"]["ownerReferences"][0]["name"], "a");
}

TEST(StrategicMerge, ServicePortsMergeByPort) {
  const json svc =
      J(R"({"spec":{"ports":[{"port":80,"name":"http"},{"port":443,"name":"https"}]}})");
  json out =
      Patch(svc, J(R"({"spec":{"ports":[{"port":443,"targetPort":8443}]}})"), "v1", "Service");
  EXPECT_EQ(out["spec"]["ports"],
            J(R"([{"port":80,"name":"http"},{"port":443,"name":"https","targetPort":8443}])"));
}

TEST(StrategicMerge, DeploymentTemplateContainersMergeByName) {
  const json deploy = J(R"({"spec":{"replicas":1,"template":{"spec":{"containers":[
    {"name":"a","image":"a:1"},{"name":"b","image":"b:1"}]}}}})");
  json out = Patch(deploy, J(R"({"spec":{"replicas":3,"template":{"spec":{"containers":[
    {"name":"a","image":"a:2"}]}}}})"),
                   "apps/v1", "Deployment");
  EXPECT_EQ(out["spec"]["replicas"], 3);
  EXPECT_EQ(out["spec"]["template"]["spec"]["containers"],
            J(R"([{"name":"a","image":"a:2"},{"name":"b","image":"b:1"}])"));
}

TEST(StrategicMerge, DirectivesInNewFieldsAreNotStored) {
  json out = Patch(J(R"({"metadata":{"name":"p"}})"),
                   J(R"({"metadata":{"labels":{"$patch":"replace","a":"1","b":null}}})"));
  EXPECT_EQ(out["metadata"]["labels"], J(R"({"a":"1"})"));
  json list = Patch(
      J(R"({"spec":{}})"),
      J(R"({"spec":{"containers":[{"name":"x","image":"i"},{"name":"y","$patch":"delete"}]}})"));
  EXPECT_EQ(list["spec"]["containers"], J(R"([{"name":"x","image":"i"}])"));
}

TEST(StrategicMerge, MissingMergeKeyIsAnErrorLikeUpstream) {
  Result<json> r = ApplyStrategicMergePatch(
      TwoContainerPod(), J(R"({"spec":{"containers":[{"image":"foo"}]}})"), "v1", "Pod");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().http_status, 500);
  EXPECT_EQ(r.error().message, "map: map[image:foo] does not contain declared merge key: name");
}

TEST(StrategicMerge, MalformedPatches) {
  Result<json> array = ApplyStrategicMergePatch(TwoContainerPod(), J("[1]"), "v1", "Pod");
  ASSERT_FALSE(array.ok());
  EXPECT_EQ(array.error().http_status, 400);
  EXPECT_EQ(array.error().reason, "BadRequest");
  EXPECT_EQ(array.error().message,
            "json: cannot unmarshal array into Go value of type map[string]interface {}");

  Result<json> bad_directive = ApplyStrategicMergePatch(
      TwoContainerPod(), J(R"({"metadata":{"$patch":"explode"}})"), "v1", "Pod");
  ASSERT_FALSE(bad_directive.ok());
  EXPECT_EQ(bad_directive.error().message,
            "unknown patch type: explode in map: map[$patch:explode]");

  Result<json> bad_retain = ApplyStrategicMergePatch(
      TwoContainerPod(), J(R"({"metadata":{"$retainKeys":"name"}})"), "v1", "Pod");
  ASSERT_FALSE(bad_retain.ok());
  EXPECT_EQ(bad_retain.error().http_status, 400);
  EXPECT_EQ(bad_retain.error().message, "invalid patch format of retainKeys");

  Result<json> list_of_lists =
      ApplyStrategicMergePatch(J(R"({"metadata":{"finalizers":[]}})"),
                               J(R"({"metadata":{"finalizers":[["b"]]}})"), "v1", "Pod");
  ASSERT_FALSE(list_of_lists.ok());
  EXPECT_EQ(list_of_lists.error().http_status, 422);

  Result<json> bad_order = ApplyStrategicMergePatch(
      TwoContainerPod(),
      J(R"({"spec":{"$setElementOrder/containers":[{"name":"a"}],"containers":[{"name":"b","image":"x"}]}})"),
      "v1", "Pod");
  ASSERT_FALSE(bad_order.ok());
  EXPECT_NE(bad_order.error().message.find("doesn't match $setElementOrder list"),
            std::string::npos);
}

TEST(StrategicMerge, NullPatchIsANoOp) {
  EXPECT_EQ(Patch(TwoContainerPod(), json(nullptr)), TwoContainerPod());
  EXPECT_EQ(Patch(TwoContainerPod(), json::object()), TwoContainerPod());
}

TEST(StrategicMerge, SupportsStrategicMergeOnlyForBuiltins) {
  EXPECT_TRUE(SupportsStrategicMerge("v1", "Pod"));
  EXPECT_TRUE(SupportsStrategicMerge("v1", "Node"));
  EXPECT_TRUE(SupportsStrategicMerge("apps/v1", "Deployment"));
  EXPECT_TRUE(SupportsStrategicMerge("coordination.k8s.io/v1", "Lease"));
  EXPECT_TRUE(SupportsStrategicMerge("apiextensions.k8s.io/v1", "CustomResourceDefinition"));
  EXPECT_FALSE(SupportsStrategicMerge("grove.io/v1alpha1", "PodCliqueSet"));
  EXPECT_FALSE(SupportsStrategicMerge("scheduling.copse.dev/v1alpha1", "PodGroup"));
  EXPECT_FALSE(SupportsStrategicMerge("", "Pod"));
}

TEST(JsonPatch, AppliesOperationsInOrder) {
  const json doc =
      json::parse(R"({"metadata":{"name":"p","labels":{"a":"1"}},"spec":{"xs":[1,2]}})");
  const json patch = json::parse(R"([
    {"op":"add","path":"/metadata/labels/b","value":"2"},
    {"op":"add","path":"/spec/xs/-","value":3},
    {"op":"remove","path":"/metadata/labels/a"},
    {"op":"test","path":"/metadata/labels/b","value":"2"}])");
  auto patched = ApplyJsonPatch(doc, patch);
  ASSERT_TRUE(patched.ok()) << patched.error().ToString();
  EXPECT_EQ(*patched,
            json::parse(R"({"metadata":{"name":"p","labels":{"b":"2"}},"spec":{"xs":[1,2,3]}})"));
}

// Found by the patch fuzzer: an add below a string aborted on nlohmann's
// assertion (a release build did nothing and reported success).
TEST(JsonPatch, AddInsideAStringFailsNamingThePath) {
  const json doc = json::parse(R"({"metadata":{"name":"p"}})");
  for (const char* op : {"add", "copy", "move"}) {
    json patch = json::array(
        {{{"op", op}, {"path", "/metadata/name/x"}, {"value", "v"}, {"from", "/metadata/name"}}});
    auto patched = ApplyJsonPatch(doc, patch);
    ASSERT_FALSE(patched.ok()) << op;
    EXPECT_EQ(patched.error().http_status, 422);
    EXPECT_NE(patched.error().message.find("\"/metadata/name/x\" is inside a string"),
              std::string::npos)
        << patched.error().message;
  }
  // The check sees the document as the earlier operations left it.
  auto later = ApplyJsonPatch(doc, json::parse(R"([{"op":"add","path":"/a","value":1},
                                                  {"op":"add","path":"/a/b","value":2}])"));
  ASSERT_FALSE(later.ok());
  EXPECT_NE(later.error().message.find("inside a number"), std::string::npos)
      << later.error().message;
}

TEST(JsonPatch, BadPatchesAreInvalid) {
  const json doc = json::parse(R"({"a":1})");
  for (const char* bad :
       {R"({"op":"add"})", R"([{"op":"remove","path":"/missing"}])",
        R"([{"op":"test","path":"/a","value":2}])", R"([{"op":"nope","path":"/a"}])",
        R"([{"op":"add","path":"a","value":1}])"}) {
    auto patched = ApplyJsonPatch(doc, json::parse(bad));
    ASSERT_FALSE(patched.ok()) << bad;
    EXPECT_EQ(patched.error().http_status, 422) << bad;
  }
}

}  // namespace
}  // namespace copse::apiserver
