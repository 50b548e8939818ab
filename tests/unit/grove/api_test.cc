// grove/api: codecs (round trip of unknown fields, field-named errors),
// defaulting, validation, names, durations and the compiled-in CRDs.

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "grove/api/crds.h"
#include "grove/api/defaults.h"
#include "grove/api/names.h"
#include "grove/api/types.h"
#include "grove/api/validation.h"
#include "kube/custom_resource_definition.h"
#include "kube/yaml.h"
#include "tests/support/paths.h"

namespace copse::grove::api {
namespace {

using nlohmann::json;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string SampleJson(const std::string& name) {
  auto docs = kube::YamlDocumentsToJson(
      ReadFile(std::string(COPSE_SOURCE_DIR) + "/deploy/examples/grove/" + name));
  EXPECT_TRUE(docs.ok()) << docs.error().ToString();
  EXPECT_EQ(docs->size(), 1u);
  return docs->front();
}

PodCliqueSet Sample(const std::string& name) {
  auto pcs = PodCliqueSet::Decode(SampleJson(name));
  EXPECT_TRUE(pcs.ok()) << pcs.error().ToString();
  return std::move(pcs).value();
}

bool HasMessage(const FieldErrors& errors, const std::string& text) {
  for (const auto& e : errors) {
    if (e.ToString() == text) return true;
  }
  return false;
}

std::string Joined(const FieldErrors& errors) {
  std::string out;
  for (const auto& e : errors) out += e.ToString() + "\n";
  return out;
}

// ------------------------------------------------------------------- codecs

TEST(GroveCodec, DecodesTheDisaggregatedSample) {
  PodCliqueSet pcs = Sample("multinode-disaggregated.yaml");
  EXPECT_EQ(pcs.meta.name, "multinode-disaggregated");
  EXPECT_EQ(pcs.spec.replicas, 1);
  ASSERT_EQ(pcs.spec.template_.cliques.size(), 4u);
  EXPECT_EQ(pcs.spec.template_.cliques[1].name, "pworker");
  EXPECT_EQ(pcs.spec.template_.cliques[1].spec.replicas, 4);
  EXPECT_FALSE(pcs.spec.template_.cliques[1].spec.min_available.has_value());
  EXPECT_EQ(json::parse(pcs.spec.template_.cliques[1].spec.pod_spec)["containers"][0]["name"],
            "prefill-worker");
  ASSERT_EQ(pcs.spec.template_.scaling_groups.size(), 2u);
  EXPECT_EQ(pcs.spec.template_.scaling_groups[0].clique_names,
            (std::vector<std::string>{"pleader", "pworker"}));
  EXPECT_EQ(pcs.spec.template_.scaling_groups[0].replicas, std::optional<int32_t>(2));
  EXPECT_EQ(pcs.spec.template_.ScalingGroupOf("dworker")->name, "decode");
  EXPECT_EQ(pcs.spec.template_.ScalingGroupOf("nope"), nullptr);
}

TEST(GroveCodec, UneditedObjectEncodesAsItsRawText) {
  std::string text = SampleJson("simple1.yaml");
  auto pcs = PodCliqueSet::Decode(text);
  ASSERT_TRUE(pcs.ok());
  EXPECT_EQ(pcs->Encode(), text);
}

TEST(GroveCodec, EditsKeepUnknownFields) {
  json doc = json::parse(SampleJson("simple1.yaml"));
  doc["spec"]["template"]["resourceSharing"] = json::array({{{"name", "gpu"}}});
  doc["spec"]["template"]["cliques"][0]["rollingUpdate"] = {{"maxUnavailable", 2}};
  doc["metadata"]["managedFields"] = json::array({{{"manager", "kubectl"}}});
  auto pcs = PodCliqueSet::Decode(doc.dump());
  ASSERT_TRUE(pcs.ok()) << pcs.error().ToString();
  pcs->spec.replicas = 3;
  pcs->spec.template_.cliques[0].spec.replicas = 4;
  pcs->status.available_replicas = 1;
  json out = json::parse(pcs->Encode());
  EXPECT_EQ(out["spec"]["replicas"], 3);
  EXPECT_EQ(out["spec"]["template"]["cliques"][0]["spec"]["replicas"], 4);
  EXPECT_EQ(out["spec"]["template"]["resourceSharing"][0]["name"], "gpu");
  EXPECT_EQ(out["spec"]["template"]["cliques"][0]["rollingUpdate"]["maxUnavailable"], 2);
  // Unmodelled parts of the clique (autoScalingConfig.metrics, podSpec) survive.
  EXPECT_EQ(
      out["spec"]["template"]["cliques"][0]["spec"]["autoScalingConfig"]["metrics"][0]["type"],
      "Resource");
  EXPECT_EQ(out["spec"]["template"]["cliques"][0]["spec"]["podSpec"]["containers"][0]["image"],
            "nginx:latest");
  EXPECT_EQ(out["metadata"]["managedFields"][0]["manager"], "kubectl");
  EXPECT_EQ(out["status"]["availableReplicas"], 1);
}

TEST(GroveCodec, DecodeErrorsNameTheField) {
  json doc = json::parse(SampleJson("simple1.yaml"));
  doc["spec"]["template"]["cliques"][1]["spec"]["replicas"] = "two";
  auto pcs = PodCliqueSet::Decode(doc.dump());
  ASSERT_FALSE(pcs.ok());
  EXPECT_EQ(pcs.error().code, ErrorCode::kInvalid);
  EXPECT_EQ(pcs.error().message,
            "spec.template.cliques[1].spec.replicas: expected integer, got string");

  auto bad_kind = PodClique::Decode(R"({"apiVersion":"grove.io/v1alpha1","kind":"PodGang"})");
  ASSERT_FALSE(bad_kind.ok());
  EXPECT_EQ(bad_kind.error().message, "kind: expected \"PodClique\", got \"PodGang\"");

  auto bad_gang = PodGang::Decode(
      R"({"kind":"PodGang","spec":{"podgroups":[{"name":"a","minReplicas":1,"podReferences":[{"name":3}]}]}})");
  ASSERT_FALSE(bad_gang.ok());
  EXPECT_EQ(bad_gang.error().message,
            "spec.podgroups[0].podReferences[0].name: expected string, got number");
}

TEST(GroveCodecFuzzRegression, ARepeatedMetadataKeyRoundTripsItsName) {
  // tests/fuzz/grove_codec_fuzz.cc's input (first byte: the kind, a
  // PodCliqueScalingGroup): two "metadata" keys, only the first with a
  // name. The typed name came from the first, Encode() wrote the second.
  const std::string input =
      ReadFile(std::string(COPSE_SOURCE_DIR) + "/tests/unit/grove/fuzz/pcsg-repeated-metadata");
  ASSERT_GT(input.size(), 1u);
  auto pcsg = PodCliqueScalingGroup::Decode(std::string_view(input).substr(1));
  ASSERT_TRUE(pcsg.ok()) << pcsg.error().ToString();
  EXPECT_EQ(pcsg->meta.name, json::parse(input.substr(1))["metadata"].value("name", ""));
  pcsg->meta.labels["copse.dev/fuzz"] = "x";
  const std::string encoded = pcsg->Encode();
  auto again = PodCliqueScalingGroup::Decode(encoded);
  ASSERT_TRUE(again.ok()) << again.error().ToString() << " in " << encoded;
  EXPECT_EQ(again->meta.name, pcsg->meta.name) << encoded;
  EXPECT_EQ(again->meta.labels, pcsg->meta.labels) << encoded;
}

TEST(GroveCodec, PodGangRoundTripWritesRequiredFields) {
  PodGang gang;
  gang.meta.name = "simple1-0";
  gang.meta.namespace_ = "default";
  PodGroup group;
  group.name = "simple1-0-pca";
  group.min_replicas = 3;
  gang.spec.pod_groups.push_back(group);
  gang.status.phase = std::string(kPodGangPending);
  json out = json::parse(gang.Encode());
  EXPECT_EQ(out["apiVersion"], "scheduler.grove.io/v1alpha1");
  EXPECT_EQ(out["kind"], "PodGang");
  EXPECT_EQ(out["spec"]["podgroups"][0]["podReferences"], json::array());
  EXPECT_EQ(out["spec"]["podgroups"][0]["minReplicas"], 3);

  auto decoded = PodGang::Decode(out.dump());
  ASSERT_TRUE(decoded.ok()) << decoded.error().ToString();
  EXPECT_EQ(decoded->spec, gang.spec);
  decoded->spec.pod_groups[0].pod_references.push_back({"default", "simple1-0-pca-abcde"});
  decoded->status.conditions.push_back(
      kube::Condition{"Initialized", "True", "Ready", "ok", "2024-01-01T00:00:00Z", {}, {}, {}});
  auto again = PodGang::Decode(decoded->Encode());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->spec.pod_groups[0].pod_references[0].name, "simple1-0-pca-abcde");
  EXPECT_TRUE(again->IsInitialized());
}

TEST(GroveCodec, OtherKindsRoundTrip) {
  auto pclq = PodClique::Decode(
      R"({"apiVersion":"grove.io/v1alpha1","kind":"PodClique","metadata":{"name":"a"},"spec":{"roleName":"r","replicas":2,"minAvailable":1,"startsAfter":["b"],"podSpec":{"containers":[{"name":"c","image":"i"}]},"x":1},"status":{"readyReplicas":1,"y":2}})");
  ASSERT_TRUE(pclq.ok()) << pclq.error().ToString();
  EXPECT_EQ(pclq->spec.starts_after, std::vector<std::string>{"b"});
  pclq->status.scheduled_replicas = 2;
  json out = json::parse(pclq->Encode());
  EXPECT_EQ(out["spec"]["x"], 1);
  EXPECT_EQ(out["status"]["y"], 2);
  EXPECT_EQ(out["status"]["scheduledReplicas"], 2);
  EXPECT_EQ(out["status"]["readyReplicas"], 1);

  auto pcsg = PodCliqueScalingGroup::Decode(
      R"({"kind":"PodCliqueScalingGroup","spec":{"replicas":2,"minAvailable":1,"cliqueNames":["a","b"]}})");
  ASSERT_TRUE(pcsg.ok());
  pcsg->spec.replicas = 3;
  auto pcsg2 = PodCliqueScalingGroup::Decode(pcsg->Encode());
  ASSERT_TRUE(pcsg2.ok());
  EXPECT_EQ(pcsg2->spec.replicas, 3);
  EXPECT_EQ(pcsg2->spec.clique_names, (std::vector<std::string>{"a", "b"}));

  auto ctb = ClusterTopologyBinding::Decode(
      R"({"kind":"ClusterTopologyBinding","metadata":{"name":"t"},"spec":{"levels":[{"domain":"zone","key":"topology.kubernetes.io/zone"},{"domain":"rack","key":"copse.dev/rack"}]}})");
  ASSERT_TRUE(ctb.ok());
  EXPECT_EQ(ctb->spec.KeyOf("rack"), "copse.dev/rack");
  EXPECT_EQ(ctb->spec.KeyOf("host"), "");
}

// ------------------------------------------------------------------- defaults

TEST(GroveDefaults, AppliesUpstreamDefaults) {
  PodCliqueSet pcs = Defaulted(Sample("simple1.yaml"));
  const auto& t = pcs.spec.template_;
  EXPECT_EQ(pcs.spec.update_strategy->type, "RollingRecreate");
  EXPECT_EQ(t.startup_type, std::optional<std::string>("CliqueStartupTypeAnyOrder"));
  EXPECT_EQ(t.termination_delay, std::optional<std::string>("4h0m0s"));
  EXPECT_EQ(TerminationDelay(pcs), std::chrono::hours(4));
  ASSERT_TRUE(t.headless_service_config.has_value());
  EXPECT_TRUE(t.headless_service_config->publish_not_ready_addresses);
  EXPECT_EQ(t.cliques[0].spec.min_available, std::optional<int32_t>(3));  // = replicas
  EXPECT_EQ(t.cliques[0].spec.scale_config->min_replicas, std::optional<int32_t>(3));
  EXPECT_EQ(t.scaling_groups[0].replicas, std::optional<int32_t>(1));
  EXPECT_EQ(t.scaling_groups[0].min_available, std::optional<int32_t>(1));
  EXPECT_EQ(t.scaling_groups[0].scale_config->min_replicas, std::optional<int32_t>(1));
  EXPECT_EQ(pcs.meta.namespace_, "default");
}

TEST(GroveDefaults, KeepsExplicitValues) {
  PodCliqueSet pcs = Sample("multinode-disaggregated.yaml");
  pcs.spec.template_.termination_delay = "30s";
  pcs.spec.template_.startup_type = std::string(kStartupInOrder);
  pcs.spec.template_.headless_service_config = HeadlessServiceConfig{false};
  pcs.spec.template_.cliques[1].spec.min_available = 2;
  DefaultPodCliqueSet(pcs);
  EXPECT_EQ(TerminationDelay(pcs), std::chrono::seconds(30));
  EXPECT_EQ(*pcs.spec.template_.startup_type, "CliqueStartupTypeInOrder");
  EXPECT_FALSE(pcs.spec.template_.headless_service_config->publish_not_ready_addresses);
  EXPECT_EQ(pcs.spec.template_.cliques[1].spec.min_available, std::optional<int32_t>(2));
  EXPECT_EQ(pcs.spec.template_.scaling_groups[0].replicas, std::optional<int32_t>(2));
}

// ------------------------------------------------------------------- validation

class GroveValidation : public ::testing::Test {
 protected:
  PodCliqueSet Valid() { return Defaulted(Sample("multinode-disaggregated.yaml")); }
  FieldErrors Validate(const PodCliqueSet& pcs) { return ValidatePodCliqueSet(pcs, context_); }
  void SetPodSpecField(PodCliqueSet& pcs, size_t clique, const std::string& key, json value) {
    json spec = json::parse(pcs.spec.template_.cliques[clique].spec.pod_spec);
    spec[key] = std::move(value);
    pcs.spec.template_.cliques[clique].spec.pod_spec = spec.dump();
  }
  ValidationContext context_;
};

TEST_F(GroveValidation, SamplesAreValid) {
  EXPECT_EQ(Joined(Validate(Valid())), "");
  EXPECT_EQ(Joined(Validate(Defaulted(Sample("simple1.yaml")))), "");
}

TEST_F(GroveValidation, RejectsNodeNameAndTopologySpread) {
  PodCliqueSet pcs = Valid();
  SetPodSpecField(pcs, 1, "nodeName", "node-1");
  SetPodSpecField(pcs, 2, "topologySpreadConstraints", json::array({{{"maxSkew", 1}}}));
  auto errors = Validate(pcs);
  EXPECT_TRUE(HasMessage(errors,
                         "spec.template.cliques[1].spec.podSpec.nodeName: Invalid value: "
                         "\"node-1\": must not be set"))
      << Joined(errors);
  EXPECT_TRUE(HasMessage(errors,
                         "spec.template.cliques[2].spec.podSpec.topologySpreadConstraints: Invalid "
                         "value: [{\"maxSkew\":1}]: must not be set"))
      << Joined(errors);
  EXPECT_EQ(errors.size(), 2u);
}

TEST_F(GroveValidation, OneSchedulerNameAcrossCliques) {
  PodCliqueSet pcs = Valid();
  SetPodSpecField(pcs, 0, "schedulerName", "kai-scheduler");
  auto errors = Validate(pcs);
  ASSERT_EQ(errors.size(), 1u) << Joined(errors);
  EXPECT_EQ(errors[0].ToString(),
            "spec.template.cliques.spec.podSpec.schedulerName: Invalid value: \"kai-scheduler, "
            "default-scheduler\": the schedulerName for all pods have to be the same");

  PodCliqueSet all = Valid();
  for (size_t i = 0; i < all.spec.template_.cliques.size(); ++i) {
    SetPodSpecField(all, i, "schedulerName", "kai-scheduler");
  }
  ValidationContext only_kube;
  only_kube.scheduler_enabled = [](std::string_view name) { return name == "default-scheduler"; };
  auto disabled = ValidatePodCliqueSet(all, only_kube);
  ASSERT_EQ(disabled.size(), 1u) << Joined(disabled);
  EXPECT_EQ(disabled[0].ToString(),
            "spec.template.cliques.spec.podSpec.schedulerName: Invalid value: \"kai-scheduler\": "
            "schedulerName must be an enabled scheduler backend; this scheduler is not enabled in "
            "OperatorConfiguration");
}

TEST_F(GroveValidation, MinAvailableNotAboveReplicas) {
  PodCliqueSet pcs = Valid();
  pcs.spec.template_.cliques[1].spec.min_available = 5;
  pcs.spec.template_.scaling_groups[0].min_available = 3;
  auto errors = Validate(pcs);
  EXPECT_TRUE(HasMessage(errors,
                         "spec.template.cliques[1].spec.minAvailable: Invalid value: 5: "
                         "minAvailable must not be greater than replicas"))
      << Joined(errors);
  EXPECT_TRUE(HasMessage(errors,
                         "spec.template.podCliqueScalingGroups[0].minAvailable: Invalid value: 3: "
                         "minAvailable must not be greater than replicas"))
      << Joined(errors);
}

TEST_F(GroveValidation, StartsAfterCyclesAndUnknownCliques) {
  PodCliqueSet pcs = Valid();
  pcs.spec.template_.startup_type = std::string(kStartupExplicit);
  pcs.spec.template_.cliques[0].spec.starts_after = {"pworker"};
  pcs.spec.template_.cliques[1].spec.starts_after = {"dleader"};
  pcs.spec.template_.cliques[2].spec.starts_after = {"pleader", "ghost"};
  auto errors = Validate(pcs);
  EXPECT_TRUE(HasMessage(errors,
                         "spec.template.cliques: Invalid value: [[\"dleader\",\"pleader\","
                         "\"pworker\"]]: clique must not have circular dependencies"))
      << Joined(errors);
  EXPECT_TRUE(HasMessage(errors,
                         "spec.template.cliques.startsAfter: Invalid value: \"ghost\": "
                         "unknown clique names found, all clique dependencies must be "
                         "defined as cliques"))
      << Joined(errors);

  PodCliqueSet self = Valid();
  self.spec.template_.startup_type = std::string(kStartupExplicit);
  self.spec.template_.cliques[3].spec.starts_after = {"dworker"};
  EXPECT_TRUE(HasMessage(Validate(self),
                         "spec.template.cliques[3].spec.startsAfter: Invalid "
                         "value: \"dworker\": clique dependency cannot refer to "
                         "itself"));
  // An acyclic chain is fine.
  PodCliqueSet chain = Valid();
  chain.spec.template_.startup_type = std::string(kStartupExplicit);
  chain.spec.template_.cliques[1].spec.starts_after = {"pleader"};
  chain.spec.template_.cliques[2].spec.starts_after = {"pleader", "pworker"};
  EXPECT_EQ(Joined(Validate(chain)), "");
}

TEST_F(GroveValidation, FieldLevelRules) {
  PodCliqueSet pcs = Valid();
  pcs.spec.replicas = -1;
  pcs.spec.template_.startup_type = "Sometimes";
  pcs.spec.template_.termination_delay = "0s";
  pcs.spec.template_.cliques[0].spec.replicas = 0;
  pcs.spec.template_.cliques[3].name = "dleader";
  pcs.spec.template_.scaling_groups[1].clique_names.push_back("nope");
  auto errors = Validate(pcs);
  std::string all = Joined(errors);
  EXPECT_TRUE(HasMessage(errors,
                         "spec.replicas: Invalid value: -1: must be greater than or equal "
                         "to 0"))
      << all;
  EXPECT_TRUE(HasMessage(errors,
                         "spec.template.cliqueStartupType: Unsupported value: "
                         "\"Sometimes\": supported values: \"CliqueStartupTypeAnyOrder\", "
                         "\"CliqueStartupTypeInOrder\", \"CliqueStartupTypeExplicit\""))
      << all;
  EXPECT_TRUE(HasMessage(errors,
                         "spec.template.terminationDelay: Invalid value: \"0s\": "
                         "terminationDelay must be greater than 0"))
      << all;
  EXPECT_TRUE(HasMessage(errors,
                         "spec.template.cliques[0].spec.replicas: Invalid value: 0: must "
                         "be greater than 0"))
      << all;
  EXPECT_TRUE(HasMessage(errors, "spec.template.cliques.name: Duplicate value: \"dleader\""))
      << all;
  EXPECT_TRUE(HasMessage(errors,
                         "spec.template.podCliqueScalingGroups[1].cliqueNames: Invalid "
                         "value: \"dworker,nope\": unidentified PodClique names found"))
      << all;
}

TEST_F(GroveValidation, NoCliquesAndLongNames) {
  PodCliqueSet pcs = Valid();
  pcs.spec.template_.cliques.clear();
  pcs.spec.template_.scaling_groups.clear();
  EXPECT_TRUE(HasMessage(Validate(pcs),
                         "spec.template.cliques: Required value: at least one "
                         "PodClique must be defined"));
  PodCliqueSet long_name = Valid();
  long_name.meta.name = std::string(40, 'a');
  auto errors = Validate(long_name);
  EXPECT_FALSE(errors.empty());
  EXPECT_EQ(errors[0].field, "spec.template.podCliqueScalingGroups[0].cliqueNames[0]");
}

TEST_F(GroveValidation, TopologyDomainsMustExist) {
  ClusterTopologyBindingSpec binding;
  binding.levels = {{"zone", "topology.kubernetes.io/zone"},
                    {"rack", "copse.dev/rack"},
                    {"host", "kubernetes.io/hostname"}};
  context_.topology = [&](std::string_view name) -> std::optional<ClusterTopologyBindingSpec> {
    if (name == "cluster") return binding;
    return std::nullopt;
  };
  PodCliqueSet pcs = Valid();
  pcs.spec.template_.topology_constraint =
      TopologyConstraint{"cluster", TopologyPackConstraint{"rack", ""}, ""};
  pcs.spec.template_.scaling_groups[0].topology_constraint =
      TopologyConstraint{"", TopologyPackConstraint{"host", ""}, ""};
  EXPECT_EQ(Joined(Validate(pcs)), "");

  pcs.spec.template_.scaling_groups[0].topology_constraint->pack->required = "zone";
  pcs.spec.template_.cliques[0].topology_constraint =
      TopologyConstraint{"", TopologyPackConstraint{"galaxy", ""}, ""};
  auto errors = Validate(pcs);
  EXPECT_TRUE(
      HasMessage(errors,
                 "spec.template.podCliqueScalingGroups[0].topologyConstraint.pack.required: "
                 "Invalid value: \"zone\": must be equal to or stricter than the "
                 "PodCliqueSet's required domain"))
      << Joined(errors);
  EXPECT_TRUE(HasMessage(errors,
                         "spec.template.cliques[0].topologyConstraint.pack.required: "
                         "Invalid value: \"galaxy\": topology domain not defined in "
                         "ClusterTopologyBinding \"cluster\""))
      << Joined(errors);

  PodCliqueSet missing = Valid();
  missing.spec.template_.topology_constraint =
      TopologyConstraint{"nope", TopologyPackConstraint{"rack", ""}, ""};
  EXPECT_TRUE(HasMessage(Validate(missing),
                         "spec.template.topologyConstraint.topologyName: Invalid "
                         "value: \"nope\": ClusterTopologyBinding \"nope\" not "
                         "found"));
}

TEST_F(GroveValidation, UpdatesKeepImmutableFields) {
  PodCliqueSet old = Valid();
  PodCliqueSet now = Valid();
  now.spec.replicas = 3;  // scaling is allowed
  now.spec.template_.cliques[1].spec.replicas = 6;
  EXPECT_EQ(Joined(ValidatePodCliqueSetUpdate(now, old, context_)), "");

  now.spec.template_.startup_type = std::string(kStartupInOrder);
  now.spec.template_.scaling_groups[0].clique_names = {"pleader"};
  now.spec.template_.cliques[0].spec.min_available = 1;
  auto errors = ValidatePodCliqueSetUpdate(now, old, context_);
  EXPECT_TRUE(HasMessage(errors, "spec.template.cliqueStartupType: Forbidden: field is immutable"))
      << Joined(errors);
  EXPECT_TRUE(HasMessage(errors,
                         "spec.template.podCliqueScalingGroups[0].cliqueNames: Forbidden: "
                         "field is immutable"))
      << Joined(errors);

  PodCliqueSet fewer = Valid();
  fewer.spec.template_.scaling_groups.pop_back();
  EXPECT_TRUE(HasMessage(ValidatePodCliqueSetUpdate(fewer, old, context_),
                         "spec.template.podCliqueScalingGroups: Forbidden: not allowed to add or "
                         "remove PodCliqueScalingGroupConfigs"));
}

TEST_F(GroveValidation, AggregateErrorNamesKindAndObject) {
  PodCliqueSet pcs = Valid();
  pcs.spec.replicas = -2;
  Error error = ToError(Validate(pcs), "PodCliqueSet.grove.io", pcs.meta.name);
  EXPECT_EQ(error.code, ErrorCode::kInvalid);
  EXPECT_EQ(error.http_status, 422);
  EXPECT_EQ(error.message,
            "PodCliqueSet.grove.io \"multinode-disaggregated\" is invalid: "
            "spec.replicas: Invalid value: -2: must be greater than or equal to 0");
}

// ------------------------------------------------------------------- names, durations

TEST(GroveNames, UpstreamNaming) {
  EXPECT_EQ(PodCliqueName("simple1", 0, "pca"), "simple1-0-pca");
  EXPECT_EQ(ScalingGroupName("simple1", 0, "sga"), "simple1-0-sga");
  EXPECT_EQ(PodCliqueName("simple1-0-sga", 1, "pcb"), "simple1-0-sga-1-pcb");
  EXPECT_EQ(BasePodGangName("simple1", 2), "simple1-2");
  EXPECT_EQ(PodGangNameForGroupReplica("simple1", 0, "simple1-0-sga", 0, 1), "simple1-0");
  EXPECT_EQ(PodGangNameForGroupReplica("simple1", 0, "simple1-0-sga", 2, 1), "simple1-0-sga-1");
  EXPECT_EQ(HeadlessServiceAddress("simple1", 0, "ns1"), "simple1-0.ns1.svc.cluster.local");
  EXPECT_EQ(IndexFromHostname("simple1-0-pca-12", "simple1-0-pca"), std::optional<int>(12));
  EXPECT_EQ(IndexFromHostname("simple1-0-pca-x", "simple1-0-pca"), std::nullopt);
  EXPECT_EQ(IndexFromHostname("simple1-0-pca-01", "simple1-0-pca"), std::nullopt);
  EXPECT_EQ(IndexFromHostname("other-3", "simple1-0-pca"), std::nullopt);
  EXPECT_EQ(ParseIndex("-1"), std::nullopt);
}

TEST(GroveDuration, ParsesAndFormatsLikeGo) {
  EXPECT_EQ(*ParseDuration("4h"), std::chrono::hours(4));
  EXPECT_EQ(*ParseDuration("1h30m"), std::chrono::minutes(90));
  EXPECT_EQ(*ParseDuration("1.5s"), std::chrono::milliseconds(1500));
  EXPECT_EQ(*ParseDuration("300ms"), std::chrono::milliseconds(300));
  EXPECT_EQ(*ParseDuration("0"), std::chrono::nanoseconds(0));
  EXPECT_FALSE(ParseDuration("4 hours").ok());
  EXPECT_FALSE(ParseDuration("").ok());
  EXPECT_FALSE(ParseDuration("h").ok());
  EXPECT_EQ(FormatDuration(std::chrono::hours(4)), "4h0m0s");
  EXPECT_EQ(FormatDuration(std::chrono::seconds(90)), "1m30s");
  EXPECT_EQ(FormatDuration(std::chrono::seconds(30)), "30s");
  EXPECT_EQ(FormatDuration(std::chrono::milliseconds(500)), "500ms");
  EXPECT_EQ(FormatDuration(std::chrono::nanoseconds(0)), "0s");
}

// ------------------------------------------------------------------- CRDs

TEST(GroveCrds, ManifestsDeclareUpstreamResources) {
  std::vector<std::string> crds = CrdManifests();
  ASSERT_EQ(crds.size(), 5u);
  std::map<std::string, kube::CustomResourceDefinition> by_plural;
  for (const auto& text : crds) {
    auto crd = kube::CustomResourceDefinition::Decode(text);
    ASSERT_TRUE(crd.ok()) << crd.error().ToString();
    by_plural[crd->spec.names.plural] = *crd;
  }
  const auto& pcs = by_plural.at("podcliquesets");
  EXPECT_EQ(pcs.spec.group, "grove.io");
  EXPECT_EQ(pcs.spec.names.short_names, std::vector<std::string>{"pcs"});
  ASSERT_TRUE(pcs.spec.versions[0].subresources.has_value());
  EXPECT_TRUE(pcs.spec.versions[0].subresources->status);
  EXPECT_EQ(pcs.spec.versions[0].subresources->scale->label_selector_path,
            std::optional<std::string>(".status.hpaPodSelector"));
  EXPECT_EQ(by_plural.at("podcliquescalinggroups")
                .spec.versions[0]
                .subresources->scale->label_selector_path,
            std::optional<std::string>(".status.selector"));
  EXPECT_TRUE(by_plural.at("podcliques").spec.versions[0].subresources->scale.has_value());
  const auto& pg = by_plural.at("podgangs");
  EXPECT_EQ(pg.spec.group, "scheduler.grove.io");
  EXPECT_FALSE(pg.spec.versions[0].subresources->scale.has_value());
  EXPECT_EQ(by_plural.at("clustertopologybindings").spec.scope, "Cluster");
}

}  // namespace
}  // namespace copse::grove::api
