// The Workload API's pure parts: the schema walker (Go encoding, defaults,
// declarative validation with ratcheting), the conversions between
// v1alpha2 and the stored version, field error messages and cause types,
// the OpenAPI schemas against kube-apiserver v1.36.3's recorded document,
// and the Job controller's Workload and PodGroup names.

#include "apiserver/scheduling_api.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "apiserver/controllers/job_workload.h"
#include "apiserver/field_error.h"
#include "apiserver/openapi.h"
#include "apiserver/resource_info.h"
#include "apiserver/schema_rules.h"
#include "tests/support/paths.h"

namespace copse::apiserver {
namespace scheduling_api_test {

using nlohmann::json;

json PodGroupV1beta1() {
  return json::parse(R"({
    "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
    "metadata": {"name": "pg", "namespace": "default"},
    "spec": {"workloadRef": {"workloadName": "w", "templateName": "t"},
             "schedulingPolicy": {"gang": {"minCount": 4}},
             "disruptionMode": {"all": {}}, "priority": 0, "preemptionPolicy": "Never"},
    "status": {"conditions": [{"type": "PodGroupInitiallyScheduled", "status": "True",
                               "reason": "Scheduled", "message": "",
                               "lastTransitionTime": "2026-01-02T03:04:05Z"}]}})");
}

std::vector<std::string> Fields(const FieldErrorList& errors) {
  std::vector<std::string> out;
  for (const FieldError& e : errors) out.push_back(e.field);
  return out;
}

TEST(FieldError, MessagesAndCauseReasonsAreUpstreams) {
  EXPECT_EQ(FieldError::Required("spec.x").Message(), "spec.x: Required value");
  EXPECT_EQ(FieldError::Invalid("spec.n", -3, "must be greater than or equal to 1").Message(),
            "spec.n: Invalid value: -3: must be greater than or equal to 1");
  EXPECT_EQ(FieldError::Invalid("spec.p", nullptr, "field is immutable").Message(),
            "spec.p: Invalid value: null: field is immutable");
  EXPECT_EQ(FieldError::TooMany("spec.t", 2, 1).Message(),
            "spec.t: Too many: 2: must have at most 1 item");
  EXPECT_EQ(FieldError::NotSupported("spec.d", "x", {"Pod", "PodGroup"}).Message(),
            "spec.d: Unsupported value: \"x\": supported values: \"Pod\", \"PodGroup\"");
  EXPECT_EQ(FieldError::Forbidden("spec.l[1]", "item may not be added").Message(),
            "spec.l[1]: Forbidden: item may not be added");
  for (const auto& [text, reason] : std::vector<std::pair<std::string, std::string>>{
           {"Required value", "FieldValueRequired"},
           {"Too many: 9: must have at most 8 items", "FieldValueTooMany"},
           {"Duplicate value: \"a\"", "FieldValueDuplicate"},
           {"Unsupported value: \"x\"", "FieldValueNotSupported"},
           {"Forbidden: no", "FieldValueForbidden"},
           {"Too long: may not be more than 1024 bytes", "FieldValueTooLong"},
           {"Invalid value: 1: bad", "FieldValueInvalid"},
           {"something else", "FieldValueInvalid"}}) {
    EXPECT_EQ(CauseReasonOfMessage(text), reason) << text;
  }
}

TEST(SchemaRules, NormalizeAsGoEncodesAsTheGoStructWould) {
  json obj = json::parse(R"({
    "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "pg"},
    "spec": {"schedulingPolicy": {"gang": {"minCount": 2, "unknown": 1}}, "bogus": true,
             "priority": 0},
    "status": {"conditions": [{"type": "A", "status": "True", "reason": "R",
                               "lastTransitionTime": "2026-01-02T04:04:05+01:00"}]}})");
  ASSERT_TRUE(NormalizeAsGo("scheduling.v1alpha2.PodGroup", obj).ok());
  // Unknown fields go; a pointer without omitempty is null; a set pointer
  // is kept even at zero; the struct status is always written; times in UTC;
  // a condition's message (no omitempty) is written empty.
  EXPECT_FALSE(obj["spec"].contains("bogus"));
  EXPECT_FALSE(obj["spec"]["schedulingPolicy"]["gang"].contains("unknown"));
  EXPECT_TRUE(obj["spec"].contains("podGroupTemplateRef"));
  EXPECT_TRUE(obj["spec"]["podGroupTemplateRef"].is_null());
  EXPECT_EQ(obj["spec"]["priority"], 0);
  EXPECT_FALSE(obj["spec"].contains("disruptionMode"));
  EXPECT_EQ(obj["status"]["conditions"][0]["lastTransitionTime"], "2026-01-02T03:04:05Z");
  EXPECT_EQ(obj["status"]["conditions"][0]["message"], "");
  ApplySchemaDefaults("scheduling.v1alpha2.PodGroup", obj);
  EXPECT_EQ(obj["spec"]["disruptionMode"], "Pod");

  json empty_status = json::parse(R"({"spec": {"schedulingPolicy": {"basic": {}}}})");
  ASSERT_TRUE(NormalizeAsGo("scheduling.v1beta1.PodGroup", empty_status).ok());
  EXPECT_EQ(empty_status["status"], json::object());
  ApplySchemaDefaults("scheduling.v1beta1.PodGroup", empty_status);
  EXPECT_EQ(empty_status["spec"]["disruptionMode"], json::parse(R"({"single": {}})"));

  json wrong = json::parse(R"({"spec": {"podGroupTemplates": [
    {"name": "a", "schedulingPolicy": {"gang": {"minCount": "four"}}}]}})");
  Status decoded = NormalizeAsGo("scheduling.v1beta1.Workload", wrong);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.error().message,
            "json: cannot unmarshal string into Go struct field GangSchedulingPolicy."
            "spec.podGroupTemplates.schedulingPolicy.gang.minCount of type int32");
  json too_big = json::parse(R"({"spec": {"priority": 3000000000}})");
  decoded = NormalizeAsGo("scheduling.v1beta1.PodGroup", too_big);
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.error().message.find("cannot unmarshal number 3000000000"), std::string::npos)
      << decoded.error().message;
}

TEST(SchemaRules, UpdatesRatchetAndCheckEachRule) {
  json old_obj = PodGroupV1beta1();
  ASSERT_TRUE(NormalizeAsGo("scheduling.v1beta1.PodGroup", old_obj).ok());
  // Unchanged: nothing to report, even on create-only rules.
  EXPECT_TRUE(ValidateBySchema("scheduling.v1beta1.PodGroup", old_obj, &old_obj).empty());
  // minCount may change in v1beta1; the disruption mode may not.
  json changed = old_obj;
  changed["spec"]["schedulingPolicy"]["gang"]["minCount"] = 6;
  EXPECT_TRUE(ValidateBySchema("scheduling.v1beta1.PodGroup", changed, &old_obj).empty());
  changed["spec"]["disruptionMode"] = {{"single", json::object()}};
  EXPECT_EQ(Fields(ValidateBySchema("scheduling.v1beta1.PodGroup", changed, &old_obj)),
            std::vector<std::string>{"spec.disruptionMode"});
  // gang may not be unset nor basic set.
  json switched = old_obj;
  switched["spec"]["schedulingPolicy"] = {{"basic", json::object()}};
  EXPECT_EQ(
      Fields(ValidateBySchema("scheduling.v1beta1.PodGroup", switched, &old_obj)),
      (std::vector<std::string>{"spec.schedulingPolicy.basic", "spec.schedulingPolicy.gang"}));
  // A value already stored stays acceptable (ratcheting) while a new one is checked.
  json stored = old_obj;
  stored["status"]["conditions"][0]["reason"] = "not valid";
  json with_more = stored;
  with_more["status"]["conditions"].push_back({{"type", "DisruptionTarget"},
                                               {"status", "Maybe"},
                                               {"reason", "R"},
                                               {"message", ""},
                                               {"lastTransitionTime", "2026-01-02T03:04:05Z"}});
  EXPECT_EQ(Fields(ValidateBySchema("scheduling.v1beta1.PodGroup", with_more, &stored)),
            std::vector<std::string>{"status.conditions[1].status"});
  // On create the same invalid reason is reported.
  EXPECT_EQ(Fields(ValidateBySchema("scheduling.v1beta1.PodGroup", stored, nullptr)),
            std::vector<std::string>{"status.conditions[0].reason"});
}

TEST(SchedulingApi, V1alpha2ConvertsToTheStoredVersionAndBack) {
  json hub = PodGroupV1beta1();
  ASSERT_TRUE(NormalizeAsGo("scheduling.v1beta1.PodGroup", hub).ok());
  const json v1alpha2 = SchedulingFromHub("PodGroup", "v1alpha2", hub);
  EXPECT_EQ(v1alpha2["apiVersion"], "scheduling.k8s.io/v1alpha2");
  EXPECT_EQ(v1alpha2["spec"]["podGroupTemplateRef"],
            json::parse(R"({"workload": {"workloadName": "w", "podGroupTemplateName": "t"}})"));
  EXPECT_FALSE(v1alpha2["spec"].contains("workloadRef"));
  EXPECT_FALSE(v1alpha2["spec"].contains("preemptionPolicy"));  // not in v1alpha2
  EXPECT_EQ(v1alpha2["spec"]["disruptionMode"], "PodGroup");
  EXPECT_EQ(v1alpha2["status"]["conditions"][0]["type"], "PodGroupScheduled");
  // Back, with the stored object: what v1alpha2 cannot say is kept.
  EXPECT_EQ(SchedulingToHub("PodGroup", "v1alpha2", v1alpha2, &hub), hub);
  // Without it, preemptionPolicy is lost and nothing else.
  json expected = hub;
  expected["spec"].erase("preemptionPolicy");
  EXPECT_EQ(SchedulingToHub("PodGroup", "v1alpha2", v1alpha2, nullptr), expected);
  // v1alpha3 is the same shape under another apiVersion.
  json v1alpha3 = SchedulingFromHub("PodGroup", "v1alpha3", hub);
  EXPECT_EQ(v1alpha3["apiVersion"], "scheduling.k8s.io/v1alpha3");
  v1alpha3["apiVersion"] = hub["apiVersion"];
  EXPECT_EQ(v1alpha3, hub);
  // Any stored object of another kind only changes its apiVersion.
  EXPECT_EQ(StoredObjectInVersion(json::parse(R"({"kind": "ConfigMap", "apiVersion": "v1"})"),
                                  "v2")["apiVersion"],
            "v2");
}

TEST(SchedulingApi, WorkloadTreeRulesAreChecked) {
  auto check = [](const char* spec) {
    json obj = {{"apiVersion", "scheduling.k8s.io/v1beta1"},
                {"kind", "Workload"},
                {"metadata", {{"name", "w"}}},
                {"spec", json::parse(spec)}};
    EXPECT_TRUE(NormalizeAsGo("scheduling.v1beta1.Workload", obj).ok());
    return ValidateSchedulingApi("Workload", "v1beta1", obj, nullptr);
  };
  EXPECT_TRUE(check(R"({"compositePodGroupTemplates": [{"name": "c",
      "schedulingPolicy": {"gang": {"minGroupCount": 1}},
      "podGroupTemplates": [{"name": "a", "schedulingPolicy": {"basic": {}}}]}]})")
                  .empty());
  EXPECT_EQ(check(R"({"compositePodGroupTemplates": [{"name": "c",
      "schedulingPolicy": {"basic": {}}, "podGroupTemplates": [
        {"name": "a", "schedulingPolicy": {"basic": {}}, "priority": 1},
        {"name": "b", "schedulingPolicy": {"basic": {}}}]}]})"),
            std::vector<std::string>{
                "spec: Invalid value: null: all priority and priorityClassName values must be "
                "identical, detected multiple values"});
  EXPECT_EQ(check(R"({"compositePodGroupTemplates": [{"name": "c",
      "schedulingPolicy": {"basic": {}}}]})"),
            std::vector<std::string>{
                "spec.compositePodGroupTemplates[0]: Invalid value: \"c\": must have at least one "
                "child PodGroupTemplate or CompositePodGroupTemplate"});
}

TEST(SchedulingApi, PodSchedulingGroupIsValidatedAsUpstream) {
  EXPECT_TRUE(ValidatePodSchedulingGroup(json::object()).empty());
  EXPECT_TRUE(ValidatePodSchedulingGroup(json::parse(R"({"schedulingGroup":
      {"podGroupName": "pg-1"}})"))
                  .empty());
  EXPECT_EQ(ValidatePodSchedulingGroup(json::parse(R"({"schedulingGroup": {}})")),
            std::vector<std::string>{"spec.schedulingGroup.podGroupName: Invalid value: null: "
                                     "must specify one of: `podGroupName`"});
  auto bad = ValidatePodSchedulingGroup(json::parse(R"({"schedulingGroup":
      {"podGroupName": "Not_A_Name"}})"));
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_TRUE(bad[0].starts_with(
      "spec.schedulingGroup.podGroupName: Invalid value: \"Not_A_Name\": a lowercase RFC 1123 "
      "subdomain"))
      << bad[0];
}

// Every v1alpha2 type kube-apiserver v1.36.3 published has the same fields
// and required fields in the embedded server's document (kubectl explain).
TEST(SchedulingApi, OpenApiV1alpha2MatchesKubeApiserver) {
  std::ifstream in(std::string(COPSE_SOURCE_DIR) +
                   "/tests/data/kube-1.36.3/openapi-v3-scheduling.k8s.io-v1alpha2.json");
  ASSERT_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const json upstream = json::parse(text.str())["components"]["schemas"];
  const json ours = json::parse(OpenApiV3Document(BuiltinResources(), "scheduling.k8s.io",
                                                  "v1alpha2"))["components"]["schemas"];
  int compared = 0;
  for (const auto& [name, schema] : upstream.items()) {
    if (name.find("io.k8s.api.scheduling.v1alpha2.") != 0 || name.ends_with("List")) continue;
    ASSERT_TRUE(ours.contains(name)) << name;
    std::set<std::string> want;
    std::set<std::string> got;
    const json want_properties = schema.value("properties", json::object());
    const json got_properties = ours[name].value("properties", json::object());
    for (const auto& [field, s] : want_properties.items()) want.insert(field);
    for (const auto& [field, s] : got_properties.items()) got.insert(field);
    EXPECT_EQ(got, want) << name;
    EXPECT_EQ(ours[name].value("required", json::array()), schema.value("required", json::array()))
        << name;
    ++compared;
  }
  EXPECT_GE(compared, 12);
  for (const char* version : {"v1alpha3", "v1beta1"}) {
    const json doc =
        json::parse(OpenApiV3Document(BuiltinResources(), "scheduling.k8s.io", version));
    EXPECT_TRUE(doc["components"]["schemas"].contains(std::string("io.k8s.api.scheduling.") +
                                                      version + ".PodGroup"));
    EXPECT_TRUE(doc["paths"].contains(std::string("/apis/scheduling.k8s.io/") + version +
                                      "/namespaces/{namespace}/podgroups/{name}/status"));
  }
}

TEST(JobWorkload, NamesAreUpstreams) {
  kube::Job job;
  job.meta.name = "train";
  job.meta.uid = "3a8f6c2e-1b4d-4e5f-9a7b-0c1d2e3f4a5b";
  // FNV-32a of "(types.UID)<uid>" (hashutil.DeepHashObject's text), 2311196999,
  // written in rand.SafeEncodeString's alphabet.
  EXPECT_EQ(controllers::JobWorkloadName(job), "train-67555fbfff");
  EXPECT_EQ(controllers::JobPodGroupName("train-abc", "train-pgt-0"),
            "train-abc-train-pgt-0-66cc9f69d5");
  // Long names are cut to a DNS subdomain's 253 characters.
  job.meta.name = std::string(300, 'a');
  EXPECT_EQ(controllers::JobWorkloadName(job).size(), 253u);
  EXPECT_EQ(controllers::JobPodGroupName(std::string(200, 'w'), std::string(200, 't')).size(),
            253u);
}

}  // namespace scheduling_api_test
}  // namespace copse::apiserver
