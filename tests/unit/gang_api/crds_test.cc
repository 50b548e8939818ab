// deploy/crds.h: YAML -> JSON, the embedded CRDs (each converts, decodes as a
// CustomResourceDefinition and has a structural schema), and installing them
// into an embedded API server makes the gang resources served.

#include "deploy/crds.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "apiserver/apiserver.h"
#include "apiserver/store.h"
#include "kube/custom_resource_definition.h"
#include "kube/pod_group.h"
#include "kube/topology.h"

namespace copse::deploy {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

json YamlJson(std::string_view yaml) {
  Result<std::string> converted = YamlToJson(yaml);
  EXPECT_TRUE(converted.ok()) << converted.error().message;
  return converted.ok() ? json::parse(*converted) : json();
}

std::string YamlError(std::string_view yaml) {
  Result<std::string> converted = YamlToJson(yaml);
  EXPECT_FALSE(converted.ok()) << *converted;
  if (converted.ok()) return {};
  EXPECT_EQ(converted.error().code, ErrorCode::kInvalid);
  return converted.error().message;
}

TEST(YamlToJson, ScalarTypesFollowTheCoreSchema) {
  json j = YamlJson(R"(
int: 42
negative: -7
plus: +3
hex: 0x1F
octal: 0o17
leading_zero: 012
big: 9223372036854775807
smallest: -9223372036854775808
float: 1.5
exp: 1e3
dot: .5
yes_no: yes
on: off
t: true
T: True
f: FALSE
nul: null
tilde: ~
empty:
quoted_true: "True"
quoted_int: '42'
str_tag: !!str 7
version: 1.2.3
time: 2025-01-01T00:00:00Z
block: |
  line one
  line two
folded: >-
  a
  b
list: [1, "two", 3.0, null]
nested: {a: {b: [x, {c: d}]}}
)");
  EXPECT_EQ(j["int"], 42);
  EXPECT_TRUE(j["int"].is_number_integer());
  EXPECT_EQ(j["negative"], -7);
  EXPECT_EQ(j["plus"], 3);
  EXPECT_EQ(j["hex"], 31);
  EXPECT_EQ(j["octal"], 15);
  EXPECT_EQ(j["leading_zero"], 12);
  EXPECT_EQ(j["big"], INT64_MAX);
  EXPECT_EQ(j["smallest"], INT64_MIN);
  EXPECT_TRUE(j["float"].is_number_float());
  EXPECT_DOUBLE_EQ(j["float"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(j["exp"].get<double>(), 1000.0);
  EXPECT_DOUBLE_EQ(j["dot"].get<double>(), 0.5);
  EXPECT_EQ(j["yes_no"], "yes");  // YAML 1.1 words stay strings
  EXPECT_EQ(j["on"], "off");
  EXPECT_EQ(j["t"], true);
  EXPECT_EQ(j["T"], true);
  EXPECT_EQ(j["f"], false);
  EXPECT_TRUE(j["nul"].is_null());
  EXPECT_TRUE(j["tilde"].is_null());
  EXPECT_TRUE(j["empty"].is_null());
  EXPECT_EQ(j["quoted_true"], "True");
  EXPECT_EQ(j["quoted_int"], "42");
  EXPECT_EQ(j["str_tag"], "7");
  EXPECT_EQ(j["version"], "1.2.3");
  EXPECT_EQ(j["time"], "2025-01-01T00:00:00Z");
  EXPECT_EQ(j["block"], "line one\nline two\n");
  EXPECT_EQ(j["folded"], "a b");
  EXPECT_EQ(j["list"], json::parse(R"([1, "two", 3.0, null])"));
  EXPECT_EQ(j["nested"]["a"]["b"][1]["c"], "d");
}

TEST(YamlToJson, MultipleDocuments) {
  const char* yaml = "---\na: 1\n---\n# only a comment\n---\nkind: B\n...\n";
  Result<std::vector<std::string>> docs = YamlDocumentsToJson(yaml);
  ASSERT_TRUE(docs.ok()) << docs.error().message;
  ASSERT_EQ(docs->size(), 2u);
  EXPECT_EQ((*docs)[0], R"({"a":1})");
  EXPECT_EQ((*docs)[1], R"({"kind":"B"})");
  EXPECT_EQ(YamlJson(yaml),
            json::parse(R"({"apiVersion":"v1","kind":"List","items":[{"a":1},{"kind":"B"}]})"));
  EXPECT_EQ(YamlJson("[1, 2]"), json::parse("[1, 2]"));
  Result<std::vector<std::string>> none = YamlDocumentsToJson("# nothing\n");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  EXPECT_EQ(YamlError("# nothing\n"), "yaml: no document");
}

TEST(YamlToJson, ErrorsSayWhereAndWhat) {
  EXPECT_EQ(YamlError("a: [1, 2\nb: 3\n"),
            "yaml: line 2, column 2: end of sequence flow not found");
  EXPECT_EQ(YamlError("spec:\n  versions:\n  - name: v1\n    name: v2\n"),
            "spec.versions[0]: duplicate key \"name\"");
  EXPECT_EQ(YamlError("a: 1\n---\nx: {y: .inf}\n"),
            "document 2: x.y: the value .inf has no JSON representation");
  EXPECT_EQ(YamlError("n: 9223372036854775808\n"),
            "n: integer 9223372036854775808 does not fit in 64 bits");
  EXPECT_EQ(YamlError("n: !custom 3\n"), "n: unsupported tag \"!custom\"");
  EXPECT_EQ(YamlError("? [a, b]\n: c\n"), "mapping keys must be scalars");
}

// A CRD schema is structural when every node states its type (or is an
// int-or-string); checked on the CRDs this change ships.
void ExpectStructural(const json& schema, const std::string& path, std::vector<std::string>& bad) {
  if (!schema.is_object()) {
    bad.push_back(path + ": not an object");
    return;
  }
  if (!schema.contains("type") && !schema.value("x-kubernetes-int-or-string", false)) {
    bad.push_back(path + ": no type");
  }
  if (auto it = schema.find("properties"); it != schema.end()) {
    for (const auto& [name, child] : it->items()) {
      ExpectStructural(child, path + ".properties." + name, bad);
    }
  }
  if (auto it = schema.find("items"); it != schema.end()) {
    ExpectStructural(*it, path + ".items", bad);
  }
  if (schema.contains("x-kubernetes-list-type") && schema["x-kubernetes-list-type"] == "map") {
    for (const auto& key : schema.value("x-kubernetes-list-map-keys", json::array())) {
      const json& required = schema["items"].value("required", json::array());
      if (std::find(required.begin(), required.end(), key) == required.end()) {
        bad.push_back(path + ": list map key " + key.dump() + " is not required");
      }
    }
  }
}

TEST(BuiltinCrds, EveryFileConvertsAndDecodes) {
  std::span<const EmbeddedFile> files = BuiltinCrds();
  std::set<std::string> paths;
  std::string previous;
  for (const EmbeddedFile& file : files) {
    SCOPED_TRACE(std::string(file.path));
    EXPECT_LT(previous, file.path);  // sorted
    previous = std::string(file.path);
    paths.insert(std::string(file.path));
    EXPECT_TRUE(file.path.starts_with("crds/"));
    EXPECT_TRUE(file.path.ends_with(".yaml"));
    Result<std::vector<std::string>> docs = YamlDocumentsToJson(file.content);
    ASSERT_TRUE(docs.ok()) << docs.error().message;
    ASSERT_FALSE(docs->empty());
    for (const std::string& doc : *docs) {
      Result<kube::CustomResourceDefinition> crd = kube::CustomResourceDefinition::Decode(doc);
      ASSERT_TRUE(crd.ok()) << crd.error().message;
      EXPECT_EQ(crd->meta.name, crd->spec.names.plural + "." + crd->spec.group);
      ASSERT_NE(crd->StorageVersion(), nullptr);
      int storage = 0;
      for (const auto& version : crd->spec.versions) {
        storage += version.storage ? 1 : 0;
        ASSERT_TRUE(version.schema.has_value()) << version.name;
        json schema = json::parse(*version.schema);
        ASSERT_TRUE(schema.contains("openAPIV3Schema"));
        EXPECT_EQ(schema["openAPIV3Schema"]["type"], "object");
        if (file.path.starts_with("crds/copse/") || file.path.starts_with("crds/kubernetes/")) {
          std::vector<std::string> bad;
          ExpectStructural(schema["openAPIV3Schema"], "openAPIV3Schema", bad);
          EXPECT_TRUE(bad.empty()) << ::testing::PrintToString(bad);
        }
      }
      EXPECT_EQ(storage, 1);
    }
  }
  for (const char* expected : {"crds/copse/scheduling.copse.dev_podgroups.yaml",
                               "crds/copse/scheduling.copse.dev_topologies.yaml",
                               "crds/kubernetes/scheduling.k8s.io_podgroups.yaml",
                               "crds/kubernetes/scheduling.k8s.io_workloads.yaml"}) {
    EXPECT_TRUE(paths.count(expected)) << expected;
  }
}

TEST(BuiltinCrds, CopsePodGroupCrdShape) {
  for (const EmbeddedFile& file : BuiltinCrds()) {
    if (file.path != "crds/copse/scheduling.copse.dev_podgroups.yaml") continue;
    Result<std::string> doc = YamlToJson(file.content);
    ASSERT_TRUE(doc.ok());
    Result<kube::CustomResourceDefinition> crd = kube::CustomResourceDefinition::Decode(*doc);
    ASSERT_TRUE(crd.ok());
    EXPECT_EQ(crd->spec.scope, kube::kNamespaceScoped);
    EXPECT_EQ(crd->spec.names.short_names, std::vector<std::string>{"cpg"});
    EXPECT_EQ(crd->Resource("v1alpha1"), kube::resources::kCopsePodGroups);
    const auto* version = crd->FindVersion("v1alpha1");
    ASSERT_NE(version, nullptr);
    ASSERT_TRUE(version->subresources.has_value());
    EXPECT_TRUE(version->subresources->status);
    std::vector<std::string> columns;
    for (const auto& column : version->additional_printer_columns) columns.push_back(column.name);
    EXPECT_THAT(columns, ::testing::IsSupersetOf({"MinMember", "Phase", "Age"}));
    return;
  }
  FAIL() << "copse PodGroup CRD not embedded";
}

// The gang objects as a user writes them.
constexpr const char* kCopsePodGroupYaml = R"(
apiVersion: scheduling.copse.dev/v1alpha1
kind: PodGroup
metadata:
  name: inference
  namespace: default
spec:
  minMember: 10
  minSubGroup: 2
  preemptibility: semi-preemptible
  topologyConstraint:
    topology: dc
    requiredTopologyLevel: zone
  subGroups:
  - name: prefill
    minMember: 6
    minSubGroup: 2
  - name: prefill-0
    parent: prefill
    minMember: 3
  - name: prefill-1
    parent: prefill
    minMember: 3
  - name: decode
    minMember: 4
)";

constexpr const char* kV1alpha2PodGroupYaml = R"(
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata:
  name: training-worker-0
  namespace: default
spec:
  podGroupTemplateRef:
    workload:
      workloadName: training
      podGroupTemplateName: worker
  schedulingPolicy:
    gang:
      minCount: 4
  disruptionMode: PodGroup
)";

constexpr const char* kTopologyYaml = R"(
apiVersion: scheduling.copse.dev/v1alpha1
kind: Topology
metadata:
  name: dc
spec:
  levels:
  - nodeLabel: topology.kubernetes.io/zone
  - nodeLabel: copse.dev/rack
)";

TEST(BuiltinCrds, InstalledInAnEmbeddedApiServerTheGangResourcesAreServed) {
  apiserver::Options options;
  options.serve_https = false;
  auto started = apiserver::ApiServer::Start(options);
  ASSERT_TRUE(started.ok()) << started.error().ToString();
  std::unique_ptr<apiserver::ApiServer> server = std::move(started).value();
  apiserver::Store& store = server->store();

  Result<std::string> copse_json = YamlToJson(kCopsePodGroupYaml);
  ASSERT_TRUE(copse_json.ok());
  // Before the CRDs copse PodGroups are not served.
  auto before = store.Create(kube::resources::kCopsePodGroups, "default", *copse_json);
  ASSERT_FALSE(before.ok());
  EXPECT_EQ(before.error().code, ErrorCode::kNotFound);

  for (const EmbeddedFile& file : BuiltinCrds()) {
    Result<std::vector<std::string>> docs = YamlDocumentsToJson(file.content);
    ASSERT_TRUE(docs.ok());
    for (const std::string& doc : *docs) {
      auto created = store.Create(kube::resources::kCustomResourceDefinitions, "", doc);
      ASSERT_TRUE(created.ok()) << file.path << ": " << created.error().ToString();
    }
  }
  EXPECT_TRUE(store.Resolve("scheduling.copse.dev", "v1alpha1", "podgroups").ok());
  EXPECT_TRUE(store.Resolve("scheduling.copse.dev", "v1alpha1", "topologies").ok());
  EXPECT_TRUE(store.Resolve("scheduling.k8s.io", "v1alpha2", "workloads").ok());
  EXPECT_TRUE(store.Resolve("scheduling.k8s.io", "v1alpha2", "podgroups").ok());

  // copse PodGroup: create, get, decode, convert, write status.
  auto created = store.Create(kube::resources::kCopsePodGroups, "default", *copse_json);
  ASSERT_TRUE(created.ok()) << created.error().ToString();
  auto got = store.Get(kube::resources::kCopsePodGroups, "default", "inference");
  ASSERT_TRUE(got.ok()) << got.error().ToString();
  Result<kube::CopsePodGroup> pg = kube::CopsePodGroup::Decode((*got)->json);
  ASSERT_TRUE(pg.ok()) << pg.error().message;
  EXPECT_FALSE(pg->meta.uid.empty());
  Result<GangSpec> gang = pg->ToGangSpec();
  ASSERT_TRUE(gang.ok()) << gang.error().message;
  EXPECT_EQ(gang->RequiredPods(kRootGroup), 10);
  EXPECT_EQ(gang->preemptibility, Preemptibility::kSemiPreemptible);

  kube::CopsePodGroupStatus status;
  status.phase = std::string(kube::kPodGroupPhaseScheduled);
  status.scheduled = 10;
  status.sub_groups = {{"prefill", 6, 0}, {"decode", 4, 0}};
  kube::SetPodGroupScheduled(status.conditions, true, std::string(kube::kReasonScheduled),
                             "10/10 pods bound", "2025-01-01T00:00:00Z", pg->meta.generation);
  auto patched =
      store.Patch(kube::resources::kCopsePodGroups, "default", "inference",
                  apiserver::PatchType::kMerge, kube::CopsePodGroup::StatusPatch(status), "status");
  ASSERT_TRUE(patched.ok()) << patched.error().ToString();
  got = store.Get(kube::resources::kCopsePodGroups, "default", "inference");
  ASSERT_TRUE(got.ok());
  pg = kube::CopsePodGroup::Decode((*got)->json);
  ASSERT_TRUE(pg.ok());
  EXPECT_EQ(pg->status, status);
  EXPECT_EQ(pg->spec.min_member, 10);  // the status write left the spec alone

  // Topology (cluster-scoped).
  Result<std::string> topology_json = YamlToJson(kTopologyYaml);
  ASSERT_TRUE(topology_json.ok());
  ASSERT_TRUE(store.Create(kube::resources::kTopologies, "", *topology_json).ok());
  got = store.Get(kube::resources::kTopologies, "", "dc");
  ASSERT_TRUE(got.ok()) << got.error().ToString();
  Result<kube::Topology> topology = kube::Topology::Decode((*got)->json);
  ASSERT_TRUE(topology.ok());
  std::vector<TopologyDefinition> topologies{topology->ToDefinition()};
  GangValidationOptions validation;
  validation.topologies = &topologies;
  EXPECT_TRUE(ValidateGangSpec(*gang, validation).ok());

  // v1alpha2 PodGroup.
  Result<std::string> v1alpha2_json = YamlToJson(kV1alpha2PodGroupYaml);
  ASSERT_TRUE(v1alpha2_json.ok());
  created = store.Create(kube::resources::kPodGroups, "default", *v1alpha2_json);
  ASSERT_TRUE(created.ok()) << created.error().ToString();
  got = store.Get(kube::resources::kPodGroups, "default", "training-worker-0");
  ASSERT_TRUE(got.ok()) << got.error().ToString();
  Result<kube::PodGroup> v1alpha2 = kube::PodGroup::Decode((*got)->json);
  ASSERT_TRUE(v1alpha2.ok()) << v1alpha2.error().message;
  Result<GangSpec> v1alpha2_gang = v1alpha2->ToGangSpec();
  ASSERT_TRUE(v1alpha2_gang.ok()) << v1alpha2_gang.error().message;
  EXPECT_EQ(v1alpha2_gang->min_member, 4);
  EXPECT_EQ(v1alpha2_gang->disruption_mode, DisruptionMode::kPodGroup);
  kube::PodGroupStatus v1alpha2_status;
  kube::SetPodGroupScheduled(v1alpha2_status.conditions, false,
                             std::string(kube::kReasonUnschedulable), "2/4 pods fit",
                             "2025-01-01T00:00:00Z");
  patched = store.Patch(kube::resources::kPodGroups, "default", "training-worker-0",
                        apiserver::PatchType::kMerge, kube::PodGroup::StatusPatch(v1alpha2_status),
                        "status");
  ASSERT_TRUE(patched.ok()) << patched.error().ToString();
  v1alpha2 = kube::PodGroup::Decode((*patched)->json);
  ASSERT_TRUE(v1alpha2.ok());
  EXPECT_EQ(v1alpha2->status, v1alpha2_status);
}

}  // namespace
}  // namespace copse::deploy
