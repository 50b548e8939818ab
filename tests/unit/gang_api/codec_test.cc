// kube/workload.h, kube/pod_group.h, kube/topology.h: decode/encode round
// trips (unknown fields survive), decode errors naming the field, the
// GangSpec conversions of both PodGroup kinds, status patches and conditions.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "kube/pod_group.h"
#include "kube/topology.h"
#include "kube/workload.h"

namespace copse::kube {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kWorkload = R"json({
  "apiVersion": "scheduling.k8s.io/v1alpha2",
  "kind": "Workload",
  "metadata": {"name": "job-1", "namespace": "ns-1", "uid": "w-uid",
               "managedFields": [{"manager": "kubectl"}]},
  "spec": {
    "controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "job-1"},
    "futureSpecField": {"x": 1},
    "podGroupTemplates": [
      {"name": "worker",
       "schedulingPolicy": {"gang": {"minCount": 100, "futureGangField": "kept"}},
       "schedulingConstraints": {"topologyConstraints": [{"topologyKey": "topology.kubernetes.io/zone"}]},
       "disruptionMode": "PodGroup",
       "priorityClassName": "high",
       "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpus"}]},
      {"name": "driver",
       "schedulingPolicy": {"basic": {"futureBasicField": true}},
       "schedulingConstraints": null}
    ]
  }
})json";

constexpr const char* kPodGroup = R"json({
  "apiVersion": "scheduling.k8s.io/v1alpha2",
  "kind": "PodGroup",
  "metadata": {"name": "training-worker-0", "namespace": "ns-1", "uid": "pg-uid", "generation": 2},
  "spec": {
    "podGroupTemplateRef": {"workload": {"workloadName": "job-1", "podGroupTemplateName": "worker"}},
    "schedulingPolicy": {"gang": {"minCount": 4}},
    "schedulingConstraints": {"topologyConstraints": [{"topologyKey": "copse.dev/rack"}]},
    "disruptionMode": "PodGroup",
    "priorityClassName": "high",
    "priority": 1000,
    "resourceClaims": [{"name": "gpu"}]
  },
  "status": {
    "conditions": [{"type": "PodGroupScheduled", "status": "False", "reason": "Unschedulable",
                    "message": "2/4 pods fit", "lastTransitionTime": "2025-01-01T00:00:00Z",
                    "observedGeneration": 2}],
    "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "pg-gpu-x"}]
  }
})json";

constexpr const char* kCopsePodGroup = R"json({
  "apiVersion": "scheduling.copse.dev/v1alpha1",
  "kind": "PodGroup",
  "metadata": {"name": "dynamo", "namespace": "default", "uid": "c-uid", "generation": 3,
               "annotations": {"note": "kept"}},
  "spec": {
    "minMember": 28,
    "minSubGroup": 2,
    "priorityClassName": "inference-high",
    "preemptibility": "semi-preemptible",
    "queue": "inference",
    "topologyConstraint": {"topology": "dc", "requiredTopologyLevel": "topology.kubernetes.io/zone"},
    "subGroups": [
      {"name": "prefill", "minMember": 24, "minSubGroup": 3,
       "topologyConstraint": {"requiredTopologyLevel": "zone"}, "futureSubGroupField": [1, 2]},
      {"name": "prefill-0", "parent": "prefill", "minMember": 8,
       "topologyConstraint": {"requiredTopologyLevel": "rack", "preferredTopologyLevel": "hostname"}},
      {"name": "prefill-1", "parent": "prefill", "minMember": 8},
      {"name": "prefill-2", "parent": "prefill", "minMember": 8},
      {"name": "prefill-3", "parent": "prefill", "minMember": 8},
      {"name": "decode", "parent": null, "minMember": 4, "minSubGroup": 1},
      {"name": "decode-0", "parent": "decode", "minMember": 4},
      {"name": "decode-1", "parent": "decode", "minMember": 4}
    ]
  },
  "status": {
    "phase": "Pending",
    "scheduled": 0,
    "futureStatusField": "kept",
    "subGroups": [{"name": "prefill", "scheduled": 3, "ready": 1, "extra": 5}],
    "conditions": []
  }
})json";

constexpr const char* kTopology = R"json({
  "apiVersion": "scheduling.copse.dev/v1alpha1",
  "kind": "Topology",
  "metadata": {"name": "dc"},
  "spec": {"levels": [{"nodeLabel": "topology.kubernetes.io/zone"},
                      {"nodeLabel": "copse.dev/block", "displayName": "block"},
                      {"nodeLabel": "copse.dev/rack"}],
           "futureTopologyField": 1}
})json";

// ------------------------------------------------------------------ Workload

TEST(WorkloadCodec, DecodesEveryTypedField) {
  Result<Workload> w = Workload::Decode(kWorkload);
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(w->meta.Key(), "ns-1/job-1");
  ASSERT_TRUE(w->spec.controller_ref.has_value());
  EXPECT_EQ(w->spec.controller_ref->api_group, "batch");
  EXPECT_EQ(w->spec.controller_ref->kind, "Job");
  ASSERT_EQ(w->spec.pod_group_templates.size(), 2u);
  const PodGroupTemplate& worker = w->spec.pod_group_templates[0];
  EXPECT_EQ(worker.name, "worker");
  EXPECT_FALSE(worker.scheduling_policy.basic);
  ASSERT_TRUE(worker.scheduling_policy.gang.has_value());
  EXPECT_EQ(worker.scheduling_policy.gang->min_count, 100);
  ASSERT_TRUE(worker.scheduling_constraints.has_value());
  EXPECT_THAT(worker.scheduling_constraints->TopologyKeys(),
              ElementsAre("topology.kubernetes.io/zone"));
  EXPECT_EQ(worker.disruption_mode, "PodGroup");
  EXPECT_EQ(worker.priority_class_name, "high");
  const PodGroupTemplate& driver = w->spec.pod_group_templates[1];
  EXPECT_TRUE(driver.scheduling_policy.basic);
  EXPECT_FALSE(driver.scheduling_policy.gang.has_value());
  EXPECT_FALSE(driver.scheduling_constraints.has_value());
  EXPECT_EQ(w->FindTemplate("driver"), &driver);
  EXPECT_EQ(w->FindTemplate("nope"), nullptr);
  EXPECT_TRUE(w->Validate().ok()) << w->Validate().error().message;
}

TEST(WorkloadCodec, UneditedEncodesByteForByteAndEditsKeepUnknownFields) {
  Result<Workload> w = Workload::Decode(kWorkload);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->Encode(), kWorkload);

  w->spec.pod_group_templates[0].scheduling_policy.gang->min_count = 64;
  w->spec.pod_group_templates[1].priority = 7;
  json out = json::parse(w->Encode());
  const json& spec = out["spec"];
  EXPECT_EQ(spec["futureSpecField"], json({{"x", 1}}));
  EXPECT_EQ(out["metadata"]["managedFields"][0]["manager"], "kubectl");
  const json& worker = spec["podGroupTemplates"][0];
  EXPECT_EQ(worker["schedulingPolicy"]["gang"]["minCount"], 64);
  EXPECT_EQ(worker["schedulingPolicy"]["gang"]["futureGangField"], "kept");
  EXPECT_EQ(worker["resourceClaims"][0]["resourceClaimTemplateName"], "gpus");
  EXPECT_EQ(worker["disruptionMode"], "PodGroup");
  const json& driver = spec["podGroupTemplates"][1];
  EXPECT_EQ(driver["schedulingPolicy"]["basic"]["futureBasicField"], true);
  EXPECT_EQ(driver["priority"], 7);

  // Round trip: what was encoded decodes to the edited values.
  Result<Workload> again = Workload::Decode(out.dump());
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->spec, w->spec);
}

TEST(WorkloadCodec, SwitchingPolicyRewritesTheUnion) {
  Result<Workload> w = Workload::Decode(kWorkload);
  ASSERT_TRUE(w.ok());
  PodGroupSchedulingPolicy& policy = w->spec.pod_group_templates[1].scheduling_policy;
  policy.basic = false;
  policy.gang = GangSchedulingPolicy{3};
  json out = json::parse(w->Encode());
  EXPECT_EQ(out["spec"]["podGroupTemplates"][1]["schedulingPolicy"],
            json({{"gang", {{"minCount", 3}}}}));
}

TEST(WorkloadCodec, DecodeErrorsNameTheField) {
  json bad = json::parse(kWorkload);
  bad["spec"]["podGroupTemplates"][1]["schedulingPolicy"]["gang"] = {{"minCount", "3"}};
  Result<Workload> w = Workload::Decode(bad.dump());
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().code, ErrorCode::kInvalid);
  EXPECT_EQ(w.error().message,
            "spec.podGroupTemplates[1].schedulingPolicy.gang.minCount: expected integer, got "
            "string");

  bad = json::parse(kWorkload);
  bad["spec"]["podGroupTemplates"][0]["schedulingPolicy"]["basic"] = true;
  w = Workload::Decode(bad.dump());
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().message,
            "spec.podGroupTemplates[0].schedulingPolicy.basic: expected object, got boolean");

  bad = json::parse(kWorkload);
  bad["spec"]["podGroupTemplates"][0]["schedulingConstraints"]["topologyConstraints"][0]
     ["topologyKey"] = 5;
  w = Workload::Decode(bad.dump());
  ASSERT_FALSE(w.ok());
  EXPECT_THAT(w.error().message,
              HasSubstr("spec.podGroupTemplates[0].schedulingConstraints.topologyConstraints[0]."
                        "topologyKey: expected string"));

  w = Workload::Decode(R"({"kind":"PodGroup","apiVersion":"scheduling.k8s.io/v1alpha2"})");
  EXPECT_FALSE(w.ok());
  w = Workload::Decode(R"({"kind":"Workload","spec":)");
  EXPECT_FALSE(w.ok());
}

TEST(WorkloadValidate, UpstreamRulesWithTemplatePaths) {
  Result<Workload> w = Workload::Decode(kWorkload);
  ASSERT_TRUE(w.ok());
  Workload edited = *w;
  edited.spec.pod_group_templates[1].name = "worker";
  edited.spec.pod_group_templates[1].scheduling_policy.gang = GangSchedulingPolicy{0};
  edited.spec.pod_group_templates[0].disruption_mode = "Whole";
  Status status = edited.Validate();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message,
            "spec.podGroupTemplates[0].disruptionMode: Unsupported value: \"Whole\": supported "
            "values: \"Pod\", \"PodGroup\"; spec.podGroupTemplates[1].name: Duplicate value: "
            "\"worker\"; spec.podGroupTemplates[1].schedulingPolicy: Invalid value: {basic, gang}: "
            "exactly one of basic, gang may be set");

  edited = *w;
  edited.spec.pod_group_templates[1].scheduling_policy = {};
  edited.spec.pod_group_templates[0].scheduling_policy.gang->min_count = 0;
  edited.spec.pod_group_templates[0].name = "Worker";
  status = edited.Validate();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message,
            "spec.podGroupTemplates[0].name: Invalid value: \"Worker\": must be a DNS label (lower "
            "case alphanumerics and '-', at most 63); "
            "spec.podGroupTemplates[0].schedulingPolicy.gang.minCount: Invalid value: 0: must be "
            ">= 1; spec.podGroupTemplates[1].schedulingPolicy: Required value: exactly one of "
            "basic, gang must be set");

  edited = *w;
  edited.spec.pod_group_templates.clear();
  EXPECT_EQ(edited.Validate().error().message, "spec.podGroupTemplates: Required value");
  for (int i = 0; i < 9; ++i) {
    PodGroupTemplate t;
    t.name = "t" + std::to_string(i);
    t.scheduling_policy.basic = true;
    edited.spec.pod_group_templates.push_back(t);
  }
  EXPECT_EQ(edited.Validate().error().message,
            "spec.podGroupTemplates: Too many: 9: must have at most 8 items");
}

// ------------------------------------------------------------ v1alpha2 PodGroup

TEST(PodGroupCodec, RoundTripKeepsUnknownFields) {
  Result<PodGroup> pg = PodGroup::Decode(kPodGroup);
  ASSERT_TRUE(pg.ok()) << pg.error().message;
  EXPECT_EQ(pg->Encode(), kPodGroup);
  ASSERT_TRUE(pg->spec.pod_group_template_ref.has_value());
  ASSERT_TRUE(pg->spec.pod_group_template_ref->workload.has_value());
  EXPECT_EQ(pg->spec.pod_group_template_ref->workload->workload_name, "job-1");
  EXPECT_EQ(pg->spec.pod_group_template_ref->workload->pod_group_template_name, "worker");
  EXPECT_EQ(pg->spec.priority, 1000);
  ASSERT_EQ(pg->status.conditions.size(), 1u);
  EXPECT_EQ(pg->status.conditions[0].observed_generation, 2);

  pg->status.conditions[0].status = "True";
  pg->status.conditions[0].reason = std::string(kReasonScheduled);
  pg->spec.priority_class_name = "low";
  json out = json::parse(pg->Encode());
  EXPECT_EQ(out["status"]["resourceClaimStatuses"][0]["resourceClaimName"], "pg-gpu-x");
  EXPECT_EQ(out["spec"]["resourceClaims"][0]["name"], "gpu");
  EXPECT_EQ(out["status"]["conditions"][0]["status"], "True");
  EXPECT_EQ(out["status"]["conditions"][0]["message"], "2/4 pods fit");
  EXPECT_EQ(out["spec"]["priorityClassName"], "low");
  Result<PodGroup> again = PodGroup::Decode(out.dump());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->spec, pg->spec);
  EXPECT_EQ(again->status, pg->status);
}

TEST(PodGroupCodec, DecodeErrorsNameTheField) {
  json bad = json::parse(kPodGroup);
  bad["spec"]["priority"] = "high";
  Result<PodGroup> pg = PodGroup::Decode(bad.dump());
  ASSERT_FALSE(pg.ok());
  EXPECT_EQ(pg.error().message, "spec.priority: expected integer, got string");
  bad = json::parse(kPodGroup);
  bad["spec"]["podGroupTemplateRef"]["workload"]["workloadName"] = json::array();
  pg = PodGroup::Decode(bad.dump());
  ASSERT_FALSE(pg.ok());
  EXPECT_EQ(pg.error().message,
            "spec.podGroupTemplateRef.workload.workloadName: expected string, got array");
  bad = json::parse(kPodGroup);
  bad["status"]["conditions"][0]["observedGeneration"] = "2";
  pg = PodGroup::Decode(bad.dump());
  ASSERT_FALSE(pg.ok());
  EXPECT_THAT(pg.error().message, HasSubstr("status.conditions[0].observedGeneration: expected"));
}

TEST(PodGroupToGangSpec, GangPolicyWithTopologyAndDisruption) {
  Result<PodGroup> pg = PodGroup::Decode(kPodGroup);
  ASSERT_TRUE(pg.ok());
  Result<GangSpec> gang = pg->ToGangSpec();
  ASSERT_TRUE(gang.ok()) << gang.error().message;
  EXPECT_EQ(gang->source, GangSource::kWorkloadPodGroup);
  EXPECT_EQ(gang->policy, GangPolicy::kGang);
  EXPECT_EQ(gang->namespace_, "ns-1");
  EXPECT_EQ(gang->name, "training-worker-0");
  EXPECT_EQ(gang->uid, "pg-uid");
  EXPECT_EQ(gang->generation, 2);
  EXPECT_EQ(gang->min_member, 4);
  EXPECT_EQ(gang->disruption_mode, DisruptionMode::kPodGroup);
  EXPECT_EQ(gang->preemptibility, Preemptibility::kPreemptible);
  EXPECT_EQ(gang->priority_class_name, "high");
  EXPECT_EQ(gang->priority, 1000);
  EXPECT_EQ(gang->topology_constraint, (TopologyConstraint{"", "copse.dev/rack", ""}));
  EXPECT_TRUE(gang->sub_groups.empty());
  EXPECT_EQ(gang->RequiredPods(kRootGroup), 4);
  EXPECT_TRUE(ValidateGangSpec(*gang).ok());
}

TEST(PodGroupToGangSpec, BasicPolicyAndTheLaterTopologySpelling) {
  PodGroup pg;
  pg.meta.name = "basic";
  pg.spec.scheduling_policy.basic = true;
  pg.spec.scheduling_constraints.emplace();
  pg.spec.scheduling_constraints->topology.push_back({"topology.kubernetes.io/zone"});
  Result<GangSpec> gang = pg.ToGangSpec();
  ASSERT_TRUE(gang.ok()) << gang.error().message;
  EXPECT_EQ(gang->policy, GangPolicy::kBasic);
  EXPECT_EQ(gang->min_member, 0);
  EXPECT_FALSE(gang->IsGang());
  EXPECT_EQ(gang->topology_constraint.required_level, "topology.kubernetes.io/zone");

  // The later spelling encodes back under its own keys.
  json out = json::parse(pg.Encode());
  EXPECT_EQ(out["spec"]["schedulingConstraints"],
            json({{"topology", {{{"key", "topology.kubernetes.io/zone"}}}}}));
  EXPECT_EQ(out["spec"]["schedulingPolicy"], json({{"basic", json::object()}}));
  EXPECT_EQ(out["apiVersion"], "scheduling.k8s.io/v1alpha2");
  EXPECT_EQ(out["kind"], "PodGroup");
}

TEST(PodGroupToGangSpec, ErrorsNameTheField) {
  auto error_of = [](const PodGroup& pg) {
    Result<GangSpec> gang = pg.ToGangSpec();
    EXPECT_FALSE(gang.ok());
    return gang.ok() ? std::string() : gang.error().message;
  };
  PodGroup pg;
  pg.meta.name = "x";
  EXPECT_EQ(error_of(pg),
            "spec.schedulingPolicy: Required value: exactly one of basic, gang must be set");
  pg.spec.scheduling_policy.gang = GangSchedulingPolicy{0};
  EXPECT_EQ(error_of(pg), "spec.schedulingPolicy.gang.minCount: Invalid value: 0: must be >= 1");
  pg.spec.scheduling_policy.gang = GangSchedulingPolicy{2};
  pg.spec.disruption_mode = "All";
  EXPECT_EQ(error_of(pg),
            "spec.disruptionMode: Unsupported value: \"All\": supported values: \"Pod\", "
            "\"PodGroup\"");
  pg.spec.disruption_mode = "PodGroup";
  pg.spec.scheduling_constraints.emplace();
  pg.spec.scheduling_constraints->topology_constraints = {{"a.io/zone"}, {"a.io/rack"}};
  EXPECT_EQ(error_of(pg),
            "spec.schedulingConstraints.topologyConstraints: Too many: 2: must have at most 1 "
            "items");
  pg.spec.scheduling_constraints->topology_constraints = {{"bad key/x/y"}};
  EXPECT_THAT(error_of(pg),
              HasSubstr("spec.schedulingConstraints.topologyConstraints[0].topologyKey: Invalid "
                        "value: \"bad key/x/y\": must be a node label key"));
  pg.spec.scheduling_constraints->topology_constraints = {{""}};
  EXPECT_EQ(error_of(pg),
            "spec.schedulingConstraints.topologyConstraints[0].topologyKey: Required value");
  pg.spec.scheduling_constraints->topology_constraints.clear();
  pg.spec.scheduling_constraints->topology = {{"x y"}};
  EXPECT_THAT(error_of(pg), HasSubstr("spec.schedulingConstraints.topology[0].key: Invalid value"));
  pg.spec.scheduling_constraints.reset();
  pg.spec.scheduling_policy.gang.reset();
  pg.spec.scheduling_policy.basic = true;
  EXPECT_EQ(error_of(pg),
            "spec.disruptionMode: Invalid value: \"PodGroup\": a basic (non-gang) group can only "
            "be disrupted per Pod");
}

TEST(PodGroupFromTemplate, CopiesTheTemplateAndPointsBack) {
  Result<Workload> w = Workload::Decode(kWorkload);
  ASSERT_TRUE(w.ok());
  Result<PodGroup> pg = PodGroupFromTemplate(*w, "worker", "job-1-worker-0");
  ASSERT_TRUE(pg.ok()) << pg.error().message;
  Result<PodGroup> decoded = PodGroup::Decode(pg->Encode());
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(decoded->meta.Key(), "ns-1/job-1-worker-0");
  ASSERT_EQ(decoded->meta.owner_references.size(), 1u);
  const OwnerReference& owner = decoded->meta.owner_references[0];
  EXPECT_EQ(owner.kind, "Workload");
  EXPECT_EQ(owner.api_version, "scheduling.k8s.io/v1alpha2");
  EXPECT_EQ(owner.uid, "w-uid");
  EXPECT_TRUE(owner.controller);
  EXPECT_EQ(decoded->spec.pod_group_template_ref->workload->pod_group_template_name, "worker");
  EXPECT_EQ(decoded->spec.scheduling_policy.gang->min_count, 100);
  EXPECT_EQ(decoded->spec.disruption_mode, "PodGroup");
  Result<GangSpec> gang = decoded->ToGangSpec();
  ASSERT_TRUE(gang.ok());
  EXPECT_EQ(gang->topology_constraint.required_level, "topology.kubernetes.io/zone");

  Result<PodGroup> missing = PodGroupFromTemplate(*w, "ps", "x");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(missing.error().message, "workload ns-1/job-1 has no podGroupTemplate \"ps\"");
}

TEST(PodGroupStatus, ScheduledConditionIsStickyAndPatchCarriesTheWholeList) {
  std::vector<Condition> conditions;
  EXPECT_TRUE(SetPodGroupScheduled(conditions, false, std::string(kReasonUnschedulable),
                                   "1/4 pods fit", "2025-01-01T00:00:00Z", 1));
  EXPECT_FALSE(SetPodGroupScheduled(conditions, false, std::string(kReasonUnschedulable),
                                    "1/4 pods fit", "2025-01-01T00:00:05Z", 1));  // no change
  EXPECT_EQ(conditions[0].last_transition_time, "2025-01-01T00:00:00Z");
  EXPECT_TRUE(SetPodGroupScheduled(conditions, false, std::string(kReasonUnschedulable),
                                   "2/4 pods fit", "2025-01-01T00:00:09Z", 1));
  EXPECT_EQ(conditions[0].message, "2/4 pods fit");
  EXPECT_EQ(conditions[0].last_transition_time, "2025-01-01T00:00:00Z");  // same status
  EXPECT_TRUE(SetPodGroupScheduled(conditions, true, std::string(kReasonScheduled), "4/4",
                                   "2025-01-01T00:01:00Z", 1));
  EXPECT_EQ(conditions[0].status, "True");
  EXPECT_EQ(conditions[0].last_transition_time, "2025-01-01T00:01:00Z");
  // Once True, never False again (KEP-4671 alpha rule).
  EXPECT_FALSE(SetPodGroupScheduled(conditions, false, std::string(kReasonUnschedulable), "0/4",
                                    "2025-01-01T00:02:00Z", 1));
  EXPECT_EQ(conditions[0].status, "True");
  ASSERT_EQ(conditions.size(), 1u);

  Condition disruption;
  disruption.type = std::string(kDisruptionTarget);
  disruption.status = "True";
  disruption.reason = std::string(kReasonPreemptionByScheduler);
  disruption.message = "preempted by \"gang-a\"\n\tfor 2 pods";
  disruption.last_transition_time = "2025-01-01T00:03:00Z";
  EXPECT_TRUE(SetCondition(conditions, disruption));
  EXPECT_FALSE(SetCondition(conditions, disruption));

  PodGroupStatus status;
  status.conditions = conditions;
  json patch = json::parse(PodGroup::StatusPatch(status, "42"));
  EXPECT_EQ(patch["metadata"]["resourceVersion"], "42");
  ASSERT_EQ(patch["status"]["conditions"].size(), 2u);
  EXPECT_EQ(patch["status"]["conditions"][0], json({{"type", "PodGroupScheduled"},
                                                    {"status", "True"},
                                                    {"reason", "Scheduled"},
                                                    {"message", "4/4"},
                                                    {"lastTransitionTime", "2025-01-01T00:01:00Z"},
                                                    {"observedGeneration", 1}}));
  EXPECT_EQ(patch["status"]["conditions"][1]["type"], "DisruptionTarget");
  // Written as text: quotes and control characters are escaped.
  EXPECT_EQ(patch["status"]["conditions"][1]["message"], disruption.message);
  EXPECT_FALSE(json::parse(PodGroup::StatusPatch(status)).contains("metadata"));
}

// ------------------------------------------------------------- copse PodGroup

TEST(CopsePodGroupCodec, DecodesAndRoundTrips) {
  Result<CopsePodGroup> pg = CopsePodGroup::Decode(kCopsePodGroup);
  ASSERT_TRUE(pg.ok()) << pg.error().message;
  EXPECT_EQ(pg->Encode(), kCopsePodGroup);
  EXPECT_EQ(pg->spec.min_member, 28);
  EXPECT_EQ(pg->spec.min_sub_group, 2);
  EXPECT_EQ(pg->spec.preemptibility, "semi-preemptible");
  ASSERT_TRUE(pg->spec.topology_constraint.has_value());
  EXPECT_EQ(pg->spec.topology_constraint->topology, "dc");
  ASSERT_EQ(pg->spec.sub_groups.size(), 8u);
  EXPECT_EQ(pg->spec.sub_groups[1].parent, "prefill");
  EXPECT_EQ(pg->spec.sub_groups[5].parent, "");  // null
  EXPECT_EQ(pg->spec.sub_groups[1].topology_constraint->preferred_topology_level, "hostname");
  EXPECT_EQ(pg->status.phase, "Pending");
  ASSERT_EQ(pg->status.sub_groups.size(), 1u);
  EXPECT_EQ(pg->status.sub_groups[0].scheduled, 3);

  pg->spec.sub_groups[2].min_member = 6;
  pg->spec.sub_groups[0].min_member = 22;
  pg->status.phase = std::string(kPodGroupPhaseScheduled);
  pg->status.scheduled = 28;
  pg->status.sub_groups[0].ready = 2;
  json out = json::parse(pg->Encode());
  EXPECT_EQ(out["spec"]["queue"], "inference");
  EXPECT_EQ(out["metadata"]["annotations"]["note"], "kept");
  EXPECT_EQ(out["spec"]["subGroups"][0]["futureSubGroupField"], json::array({1, 2}));
  EXPECT_EQ(out["spec"]["subGroups"][0]["minMember"], 22);
  EXPECT_EQ(out["spec"]["subGroups"][2]["minMember"], 6);
  EXPECT_EQ(out["status"]["futureStatusField"], "kept");
  EXPECT_EQ(out["status"]["subGroups"][0]["extra"], 5);
  EXPECT_EQ(out["status"]["subGroups"][0]["ready"], 2);
  EXPECT_EQ(out["status"]["phase"], "Scheduled");
  EXPECT_EQ(out["status"]["scheduled"], 28);
  Result<CopsePodGroup> again = CopsePodGroup::Decode(out.dump());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->spec, pg->spec);
  EXPECT_EQ(again->status, pg->status);

  // Removing a subgroup keeps the others' unknown fields (matched by name).
  pg->spec.sub_groups.erase(pg->spec.sub_groups.begin() + 1);
  out = json::parse(pg->Encode());
  ASSERT_EQ(out["spec"]["subGroups"].size(), 7u);
  EXPECT_EQ(out["spec"]["subGroups"][0]["futureSubGroupField"], json::array({1, 2}));
  EXPECT_EQ(out["spec"]["subGroups"][1]["name"], "prefill-1");
}

TEST(CopsePodGroupCodec, BuiltInCodeEncodesTypeMeta) {
  CopsePodGroup pg;
  pg.meta.name = "simple";
  pg.meta.namespace_ = "default";
  pg.spec.min_member = 2;
  json out = json::parse(pg.Encode());
  EXPECT_EQ(out["apiVersion"], "scheduling.copse.dev/v1alpha1");
  EXPECT_EQ(out["kind"], "PodGroup");
  EXPECT_EQ(out["spec"], json({{"minMember", 2}}));
  EXPECT_FALSE(out.contains("status"));
}

TEST(CopsePodGroupCodec, DecodeErrorsNameTheField) {
  json bad = json::parse(kCopsePodGroup);
  bad["spec"]["subGroups"][1]["minMember"] = "8";
  Result<CopsePodGroup> pg = CopsePodGroup::Decode(bad.dump());
  ASSERT_FALSE(pg.ok());
  EXPECT_EQ(pg.error().message, "spec.subGroups[1].minMember: expected integer, got string");
  bad = json::parse(kCopsePodGroup);
  bad["spec"]["topologyConstraint"] = "dc";
  pg = CopsePodGroup::Decode(bad.dump());
  ASSERT_FALSE(pg.ok());
  EXPECT_EQ(pg.error().message, "spec.topologyConstraint: expected object, got string");
  bad = json::parse(kCopsePodGroup);
  bad["status"]["subGroups"][0]["scheduled"] = 1.5;
  pg = CopsePodGroup::Decode(bad.dump());
  ASSERT_FALSE(pg.ok());
  EXPECT_THAT(pg.error().message, HasSubstr("status.subGroups[0].scheduled: "));
  bad = json::parse(kCopsePodGroup);
  bad["spec"]["minSubGroup"] = 3000000000LL;
  pg = CopsePodGroup::Decode(bad.dump());
  ASSERT_FALSE(pg.ok());
  EXPECT_THAT(pg.error().message, HasSubstr("spec.minSubGroup: "));
  bad = json::parse(kCopsePodGroup);
  bad["kind"] = "Topology";
  EXPECT_FALSE(CopsePodGroup::Decode(bad.dump()).ok());
}

TEST(CopsePodGroupToGangSpec, ConvertsTheWholeTree) {
  Result<CopsePodGroup> pg = CopsePodGroup::Decode(kCopsePodGroup);
  ASSERT_TRUE(pg.ok());
  Result<GangSpec> gang = pg->ToGangSpec();
  ASSERT_TRUE(gang.ok()) << gang.error().message;
  EXPECT_EQ(gang->source, GangSource::kCopsePodGroup);
  EXPECT_EQ(gang->policy, GangPolicy::kGang);
  EXPECT_EQ(gang->Key(), "default/dynamo");
  EXPECT_EQ(gang->uid, "c-uid");
  EXPECT_EQ(gang->generation, 3);
  EXPECT_EQ(gang->min_member, 28);
  EXPECT_EQ(gang->min_sub_group, 2);
  EXPECT_EQ(gang->preemptibility, Preemptibility::kSemiPreemptible);
  EXPECT_EQ(gang->disruption_mode, DisruptionMode::kPod);
  EXPECT_EQ(gang->priority_class_name, "inference-high");
  EXPECT_EQ(gang->topology_constraint,
            (TopologyConstraint{"dc", "topology.kubernetes.io/zone", ""}));
  ASSERT_EQ(gang->sub_groups.size(), 8u);
  EXPECT_EQ(gang->sub_groups[1].topology_constraint, (TopologyConstraint{"", "rack", "hostname"}));
  EXPECT_EQ(gang->sub_groups[5].parent, "");
  EXPECT_EQ(gang->RequiredPods(kRootGroup), 28);
  EXPECT_EQ(gang->EffectiveTopology("prefill-0"), "dc");

  // With the Topology it names, levels resolve.
  Result<Topology> topology = Topology::Decode(kTopology);
  ASSERT_TRUE(topology.ok());
  std::vector<TopologyDefinition> topologies{topology->ToDefinition()};
  GangValidationOptions options;
  options.topologies = &topologies;
  std::vector<std::string> errors = GangSpecErrors(*gang, options);
  // "hostname" is not a level of this Topology.
  EXPECT_THAT(errors, ElementsAre("spec.subGroups[1].topologyConstraint.preferredTopologyLevel: "
                                  "Not found: \"hostname\": topology \"dc\" has levels "
                                  "\"topology.kubernetes.io/zone\", \"copse.dev/block\", "
                                  "\"copse.dev/rack\""));
}

TEST(CopsePodGroupToGangSpec, ErrorsNameTheField) {
  Result<CopsePodGroup> pg = CopsePodGroup::Decode(kCopsePodGroup);
  ASSERT_TRUE(pg.ok());
  CopsePodGroup edited = *pg;
  edited.spec.preemptibility = "sometimes";
  edited.spec.sub_groups[2].parent = "decode-x";
  edited.spec.min_sub_group = 5;
  Result<GangSpec> gang = edited.ToGangSpec();
  ASSERT_FALSE(gang.ok());
  EXPECT_EQ(gang.error().code, ErrorCode::kInvalid);
  EXPECT_EQ(gang.error().message,
            "spec.preemptibility: Unsupported value: \"sometimes\": supported values: "
            "\"preemptible\", \"non-preemptible\", \"semi-preemptible\"; spec.minSubGroup: Invalid "
            "value: 5: must be <= 2 (the number of direct child subgroups); "
            "spec.subGroups[2].parent: Not found: \"decode-x\"");

  edited = *pg;
  edited.spec.min_member = 0;
  edited.spec.sub_groups.clear();
  edited.spec.min_sub_group.reset();
  gang = edited.ToGangSpec();
  ASSERT_FALSE(gang.ok());
  EXPECT_EQ(gang.error().message, "spec.minMember: Invalid value: 0: must be >= 1");
}

TEST(CopsePodGroupStatus, PatchWritesEveryTypedField) {
  CopsePodGroupStatus status;
  status.phase = std::string(kPodGroupPhaseUnschedulable);
  status.scheduled = 0;
  status.sub_groups = {{"prefill", 6, 0}, {"decode", 0, 0}};
  SetPodGroupScheduled(status.conditions, false, std::string(kReasonUnschedulable),
                       "best rack rack-17 fits 6/8 pods: 2 Insufficient nvidia.com/gpu",
                       "2025-01-01T00:00:00Z", 3);
  json patch = json::parse(CopsePodGroup::StatusPatch(status));
  EXPECT_EQ(patch, json::parse(R"({"status":{"phase":"Unschedulable","scheduled":0,"ready":0,
              "observedGeneration":null,"allocatedNonPreemptible":null,
              "subGroups":[{"name":"prefill","scheduled":6,"ready":0},
                           {"name":"decode","scheduled":0,"ready":0}],
              "conditions":[{"type":"PodGroupScheduled","status":"False","reason":"Unschedulable",
                "message":"best rack rack-17 fits 6/8 pods: 2 Insufficient nvidia.com/gpu",
                "lastTransitionTime":"2025-01-01T00:00:00Z","observedGeneration":3}]}})"));
  status.phase.clear();
  status.observed_generation = 3;
  patch = json::parse(CopsePodGroup::StatusPatch(status, "7"));
  EXPECT_TRUE(patch["status"]["phase"].is_null());
  EXPECT_EQ(patch["status"]["observedGeneration"], 3);
  EXPECT_EQ(patch["metadata"]["resourceVersion"], "7");
  status.allocated_non_preemptible = {{"cpu", "1500m"}, {"nvidia.com/gpu", "8"}};
  patch = json::parse(CopsePodGroup::StatusPatch(status));
  EXPECT_EQ(patch["status"]["allocatedNonPreemptible"],
            json::parse(R"({"cpu":"1500m","nvidia.com/gpu":"8"})"));
  // And it reads back.
  CopsePodGroup group;
  group.meta.name = "g";
  group.status = status;
  Result<CopsePodGroup> decoded = CopsePodGroup::Decode(group.Encode());
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(decoded->status.allocated_non_preemptible, status.allocated_non_preemptible);
}

// ------------------------------------------------------------------- Topology

TEST(TopologyCodec, RoundTripDefinitionAndValidation) {
  Result<Topology> t = Topology::Decode(kTopology);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->Encode(), kTopology);
  EXPECT_TRUE(t->meta.namespace_.empty());
  TopologyDefinition definition = t->ToDefinition();
  EXPECT_EQ(definition.name, "dc");
  EXPECT_THAT(definition.levels,
              ElementsAre("topology.kubernetes.io/zone", "copse.dev/block", "copse.dev/rack"));
  EXPECT_TRUE(t->Validate().ok());

  t->spec.levels.push_back({"kubernetes.io/hostname"});
  json out = json::parse(t->Encode());
  EXPECT_EQ(out["spec"]["futureTopologyField"], 1);
  EXPECT_EQ(out["spec"]["levels"][1]["displayName"], "block");
  EXPECT_EQ(out["spec"]["levels"][3]["nodeLabel"], "kubernetes.io/hostname");

  t->spec.levels.push_back({"copse.dev/rack"});
  t->spec.levels.push_back({""});
  t->spec.levels.push_back({"-bad-"});
  Status status = t->Validate();
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.error().message,
              HasSubstr("spec.levels[4].nodeLabel: Duplicate value: \"copse.dev/rack\"; "
                        "spec.levels[5].nodeLabel: Required value; spec.levels[6].nodeLabel: "
                        "Invalid value: \"-bad-\""));
  Topology empty;
  EXPECT_EQ(empty.Validate().error().message, "spec.levels: Required value");

  json bad = json::parse(kTopology);
  bad["spec"]["levels"][2]["nodeLabel"] = false;
  Result<Topology> decoded = Topology::Decode(bad.dump());
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.error().message, "spec.levels[2].nodeLabel: expected string, got boolean");
}

TEST(ResourceRefs, PathsOfTheGangResources) {
  EXPECT_EQ(resources::kWorkloads.Path("ns-1", "job-1"),
            "/apis/scheduling.k8s.io/v1alpha2/namespaces/ns-1/workloads/job-1");
  EXPECT_EQ(resources::kPodGroups.Path("ns-1", "pg", "status"),
            "/apis/scheduling.k8s.io/v1alpha2/namespaces/ns-1/podgroups/pg/status");
  EXPECT_EQ(resources::kCopsePodGroups.ApiVersion(), "scheduling.copse.dev/v1alpha1");
  EXPECT_EQ(resources::kTopologies.Path("ignored", "dc"),
            "/apis/scheduling.copse.dev/v1alpha1/topologies/dc");
}

}  // namespace
}  // namespace copse::kube
