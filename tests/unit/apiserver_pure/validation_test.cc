#include "apiserver/validation.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace copse::apiserver {
namespace validation_test {

using json = nlohmann::json;

json J(const char* text) { return json::parse(text); }

json Pod(const char* name = "p") {
  json pod = J(R"({"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"default"},
    "spec":{"containers":[{"name":"main","image":"busybox"}]}})");
  pod["metadata"]["name"] = name;
  return pod;
}

Status CreatePod(const json& pod) { return ValidateForCreate(pod, "", "v1", "Pod", "pods", true); }

std::string Message(const Status& s) { return s.ok() ? std::string("<ok>") : s.error().message; }

constexpr const char* kSubdomainMsg =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

TEST(Validation, ValidPodPasses) {
  EXPECT_TRUE(CreatePod(Pod()).ok()) << Message(CreatePod(Pod()));
}

TEST(Validation, PodNameMustBeSubdomain) {
  Status s = CreatePod(Pod("Foo"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().http_status, 422);
  EXPECT_EQ(s.error().reason, "Invalid");
  EXPECT_EQ(s.error().code, ErrorCode::kInvalid);
  EXPECT_EQ(s.error().message,
            std::string("Pod \"Foo\" is invalid: metadata.name: Invalid value: \"Foo\": ") +
                kSubdomainMsg);
}

TEST(Validation, NameOrGenerateNameRequired) {
  json pod = Pod();
  pod["metadata"].erase("name");
  EXPECT_EQ(Message(CreatePod(pod)),
            "Pod \"\" is invalid: metadata.name: Required value: name or generateName is required");
  pod["metadata"]["generateName"] = "web-";
  EXPECT_TRUE(CreatePod(pod).ok()) << Message(CreatePod(pod));
  pod["metadata"]["generateName"] = "Web-";
  EXPECT_NE(Message(CreatePod(pod)).find("metadata.generateName: Invalid value: \"Web-\""),
            std::string::npos);
}

TEST(Validation, LabelVersusSubdomainPerResource) {
  json ns = J(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a.b"}})");
  EXPECT_EQ(
      Message(ValidateForCreate(ns, "", "v1", "Namespace", "namespaces", false)),
      "Namespace \"a.b\" is invalid: metadata.name: Invalid value: \"a.b\": must not contain dots");

  json svc =
      J(R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"1web","namespace":"default"},
    "spec":{"ports":[{"port":80}]}})");
  EXPECT_EQ(
      Message(ValidateForCreate(svc, "", "v1", "Service", "services", true)),
      "Service \"1web\" is invalid: metadata.name: Invalid value: \"1web\": a DNS-1035 label must "
      "consist of lower case alphanumeric characters or '-', start with an alphabetic character, "
      "and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
      "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')");

  json node = J(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"node-1.rack-2"}})");
  EXPECT_TRUE(ValidateForCreate(node, "", "v1", "Node", "nodes", false).ok());
}

TEST(Validation, NamespaceRequiredOrForbidden) {
  json pod = Pod();
  pod["metadata"].erase("namespace");
  EXPECT_EQ(Message(CreatePod(pod)), "Pod \"p\" is invalid: metadata.namespace: Required value");
  json node = J(R"({"metadata":{"name":"n","namespace":"default"}})");
  EXPECT_EQ(Message(ValidateForCreate(node, "", "v1", "Node", "nodes", false)),
            "Node \"n\" is invalid: metadata.namespace: Forbidden: not allowed on this type");
}

TEST(Validation, ApiVersionAndKindMismatchAreBadRequests) {
  json deploy =
      J(R"({"apiVersion":"v1","kind":"Deployment","metadata":{"name":"d","namespace":"default"}})");
  Status s = ValidateForCreate(deploy, "apps", "v1", "Deployment", "deployments", true);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().http_status, 400);
  EXPECT_EQ(s.error().reason, "BadRequest");
  EXPECT_EQ(s.error().message,
            "the API version in the data (v1) does not match the expected API version (apps/v1)");

  json svc = Pod();
  svc["kind"] = "Service";
  Status k = CreatePod(svc);
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.error().http_status, 400);
  EXPECT_EQ(k.error().message,
            "Service in version \"v1\" cannot be handled as a Pod: converting (v1.Service) to "
            "(core.Pod): unknown conversion");

  // Custom resources: kind mismatch is a field error (422).
  json cr = J(
      R"({"apiVersion":"grove.io/v1alpha1","kind":"PodClique","metadata":{"name":"x","namespace":"default"}})");
  Status c = ValidateForCreate(cr, "grove.io", "v1alpha1", "PodCliqueSet", "podcliquesets", true);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().http_status, 422);
  EXPECT_EQ(c.error().message,
            "PodClique.grove.io \"x\" is invalid: kind: Invalid value: \"PodClique\": must be "
            "PodCliqueSet");
}

TEST(Validation, LabelsAndAnnotations) {
  json pod = Pod();
  pod["metadata"]["labels"] = {{"bad key", "v"}};
  EXPECT_EQ(
      Message(CreatePod(pod)),
      "Pod \"p\" is invalid: metadata.labels: Invalid value: \"bad key\": name part must consist "
      "of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
      "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
      "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");
  pod["metadata"]["labels"] = {{"app", "-x"}};
  EXPECT_EQ(
      Message(CreatePod(pod)),
      "Pod \"p\" is invalid: metadata.labels: Invalid value: \"-x\": a valid label must be an "
      "empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and "
      "end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex "
      "used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");
  pod["metadata"]["labels"] = {{"example.com/app", std::string(64, 'a')}};
  EXPECT_NE(Message(CreatePod(pod)).find("must be no more than 63 characters"), std::string::npos);

  pod["metadata"]["labels"] = json::object();
  pod["metadata"]["annotations"] = {{"big", std::string(256 * 1024, 'x')}};
  EXPECT_EQ(
      Message(CreatePod(pod)),
      "Pod \"p\" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes");
  pod["metadata"]["annotations"] = {{"Example.com/Mixed-Case", "ok"}};
  EXPECT_TRUE(CreatePod(pod).ok()) << Message(CreatePod(pod));
}

TEST(Validation, MalformedMetadataIsBadRequest) {
  json pod = Pod();
  pod["metadata"]["labels"] = {{"app", 3}};
  Status s = CreatePod(pod);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().http_status, 400);
  EXPECT_EQ(
      s.error().message,
      "Pod in version \"v1\" cannot be handled as a Pod: json: cannot unmarshal number into Go "
      "struct field ObjectMeta.metadata.labels of type string");
}

TEST(Validation, PodSpecChecks) {
  json pod = Pod();
  pod["spec"]["containers"] = json::array();
  EXPECT_EQ(Message(CreatePod(pod)), "Pod \"p\" is invalid: spec.containers: Required value");

  pod = Pod();
  pod["spec"]["containers"] = J(R"([{"name":"a","image":"i"},{"name":"a"}])");
  EXPECT_EQ(Message(CreatePod(pod)),
            "Pod \"p\" is invalid: [spec.containers[1].image: Required value, "
            "spec.containers[1].name: Duplicate value: \"a\"]");

  pod = Pod();
  pod["spec"]["restartPolicy"] = "Sometimes";
  EXPECT_EQ(Message(CreatePod(pod)),
            "Pod \"p\" is invalid: spec.restartPolicy: Unsupported value: \"Sometimes\": supported "
            "values: \"Always\", \"OnFailure\", \"Never\"");

  pod = Pod();
  pod["spec"]["schedulingGates"] = J(R"([{"name":"copse.dev/wait"}])");
  pod["spec"]["nodeName"] = "node-1";
  EXPECT_EQ(
      Message(CreatePod(pod)),
      "Pod \"p\" is invalid: spec.nodeName: Forbidden: cannot be set until all schedulingGates "
      "have been cleared");

  pod = Pod();
  pod["spec"]["tolerations"] =
      J(R"([{"key":"k","operator":"Exists","value":"v"},{"operator":"Equal"}])");
  EXPECT_EQ(Message(CreatePod(pod)),
            "Pod \"p\" is invalid: [spec.tolerations[0].operator: Invalid value: "
            "core.Toleration{Key:\"k\", Operator:\"Exists\", Value:\"v\", Effect:\"\", "
            "TolerationSeconds:(*int64)(nil)}: value must be empty when `operator` is 'Exists', "
            "spec.tolerations[1].operator: Invalid value: \"Equal\": operator "
            "must be Exists when `key` is empty, which means \"match all values and all keys\"]");
}

TEST(Validation, ResourceQuantities) {
  json pod = Pod();
  pod["spec"]["containers"][0]["resources"] = J(R"({"requests":{"cpu":"2"},"limits":{"cpu":"1"}})");
  EXPECT_EQ(
      Message(CreatePod(pod)),
      "Pod \"p\" is invalid: spec.containers[0].resources.requests: Invalid value: \"2\": must "
      "be less than or equal to cpu limit of 1");

  pod["spec"]["containers"][0]["resources"] =
      J(R"({"requests":{"memory":"1Gi"},"limits":{"memory":"2Gi"}})");
  EXPECT_TRUE(CreatePod(pod).ok()) << Message(CreatePod(pod));

  pod["spec"]["containers"][0]["resources"] = J(R"({"requests":{"nvidia.com/gpu":"1"}})");
  EXPECT_EQ(
      Message(CreatePod(pod)),
      "Pod \"p\" is invalid: spec.containers[0].resources.limits: Required value: Limit must be "
      "set for non overcommitable resources");

  pod["spec"]["containers"][0]["resources"] = J(R"({"limits":{"nvidia.com/gpu":"500m"}})");
  EXPECT_EQ(
      Message(CreatePod(pod)),
      "Pod \"p\" is invalid: spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "
      "\"500m\": must be an integer");

  pod["spec"]["containers"][0]["resources"] = J(R"({"limits":{"cpu":"-1"}})");
  EXPECT_EQ(
      Message(CreatePod(pod)),
      "Pod \"p\" is invalid: spec.containers[0].resources.limits[cpu]: Invalid value: \"-1\": "
      "must be greater than or equal to 0");

  pod["spec"]["containers"][0]["resources"] = J(R"({"limits":{"cpu":"two"}})");
  Status bad = CreatePod(pod);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().http_status, 400);
  EXPECT_EQ(bad.error().message,
            "Pod in version \"v1\" cannot be handled as a Pod: quantities must match the regular "
            "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
}

TEST(Validation, NodeTaintsAndCapacity) {
  json node = J(R"({"metadata":{"name":"n"},"spec":{"taints":[
    {"key":"a","effect":"NoSchedule"},{"key":"a","effect":"NoSchedule"},{"key":"b","effect":"Sometimes"}]},
    "status":{"capacity":{"cpu":"8","pods":"110"}}})");
  EXPECT_EQ(
      Message(ValidateForCreate(node, "", "v1", "Node", "nodes", false)),
      "Node \"n\" is invalid: [metadata.taints[1]: Duplicate value: core.Taint{Key:\"a\", "
      "Value:\"\", Effect:\"NoSchedule\", TimeAdded:(*v1.Time)(nil)}: taints must be unique by "
      "key and effect pair, metadata.taints[2].effect: Unsupported value: \"Sometimes\": "
      "supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"]");

  json bad_capacity = J(R"({"metadata":{"name":"n"},"status":{"capacity":{"cpu":"x8"}}})");
  Status s = ValidateForCreate(bad_capacity, "", "v1", "Node", "nodes", false);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().http_status, 400);
}

TEST(Validation, QualifiedKindForGroups) {
  json pc = J(
      R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"system-mine"},"value":5})");
  EXPECT_EQ(Message(ValidateForCreate(pc, "scheduling.k8s.io", "v1", "PriorityClass",
                                      "priorityclasses", false)),
            "PriorityClass.scheduling.k8s.io \"system-mine\" is invalid: metadata.name: Forbidden: "
            "priority class names with 'system-' prefix are reserved for system use only. error: "
            "system-mine is not a known system priority class");
  json too_high = J(R"({"metadata":{"name":"x"},"value":2000000000})");
  EXPECT_EQ(
      Message(ValidateForCreate(too_high, "scheduling.k8s.io", "v1", "PriorityClass",
                                "priorityclasses", false)),
      "PriorityClass.scheduling.k8s.io \"x\" is invalid: value: Forbidden: maximum allowed value "
      "of a user defined priority is 1000000000");

  json lease =
      J(R"({"metadata":{"name":"l","namespace":"kube-system"},"spec":{"leaseDurationSeconds":0}})");
  EXPECT_EQ(
      Message(ValidateForCreate(lease, "coordination.k8s.io", "v1", "Lease", "leases", true)),
      "Lease.coordination.k8s.io \"l\" is invalid: spec.leaseDurationSeconds: Invalid value: 0: "
      "must be greater than 0");

  json pdb = J(R"({"metadata":{"name":"d","namespace":"default"},"spec":{"minAvailable":"120%"}})");
  EXPECT_EQ(Message(ValidateForCreate(pdb, "policy", "v1", "PodDisruptionBudget",
                                      "poddisruptionbudgets", true)),
            "PodDisruptionBudget.policy \"d\" is invalid: spec.minAvailable: Invalid value: "
            "intstr.IntOrString{Type:1, IntVal:0, StrVal:\"120%\"}: must not be greater than 100%");
}

json Crd() {
  return J(R"({"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
    "metadata":{"name":"podgangs.scheduler.grove.io"},
    "spec":{"group":"scheduler.grove.io","scope":"Namespaced",
      "names":{"plural":"podgangs","singular":"podgang","kind":"PodGang","listKind":"PodGangList"},
      "versions":[{"name":"v1alpha1","served":true,"storage":true,
        "additionalPrinterColumns":[{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}]}]}})");
}

Status CreateCrd(const json& crd) {
  return ValidateForCreate(crd, "apiextensions.k8s.io", "v1", "CustomResourceDefinition",
                           "customresourcedefinitions", false);
}

TEST(Validation, CustomResourceDefinitions) {
  EXPECT_TRUE(CreateCrd(Crd()).ok()) << Message(CreateCrd(Crd()));

  json crd = Crd();
  crd["spec"]["versions"][0]["storage"] = false;
  EXPECT_EQ(
      Message(CreateCrd(crd)),
      "CustomResourceDefinition.apiextensions.k8s.io \"podgangs.scheduler.grove.io\" is invalid: "
      "spec.versions: Invalid value: " +
          crd["spec"]["versions"].dump() +
          ": must have exactly one version marked as storage version");

  crd = Crd();
  crd["metadata"]["name"] = "gangs.scheduler.grove.io";
  EXPECT_EQ(
      Message(CreateCrd(crd)),
      "CustomResourceDefinition.apiextensions.k8s.io \"gangs.scheduler.grove.io\" is invalid: "
      "metadata.name: Invalid value: \"gangs.scheduler.grove.io\": must be "
      "spec.names.plural+\".\"+spec.group");

  crd = Crd();
  crd["spec"]["group"] = "grove";
  crd["metadata"]["name"] = "podgangs.grove";
  EXPECT_NE(
      Message(CreateCrd(crd))
          .find("spec.group: Invalid value: \"grove\": should be a domain with at least one dot"),
      std::string::npos);

  crd = Crd();
  crd["spec"]["scope"] = "Global";
  crd["spec"]["names"].erase("kind");
  EXPECT_EQ(
      Message(CreateCrd(crd)),
      "CustomResourceDefinition.apiextensions.k8s.io \"podgangs.scheduler.grove.io\" is invalid: "
      "[spec.scope: Unsupported value: \"Global\": supported values: \"Cluster\", \"Namespaced\", "
      "spec.names.kind: Required value]");
}

TEST(Validation, ImmutableMetadataOnUpdate) {
  json old_pod = Pod();
  old_pod["metadata"]["uid"] = "u1";
  json new_pod = old_pod;
  new_pod["metadata"]["name"] = "q";
  Status s = ValidateForUpdate(old_pod, new_pod, "", "v1", "Pod", "pods", true);
  EXPECT_EQ(Message(s),
            "Pod \"q\" is invalid: metadata.name: Invalid value: \"q\": field is immutable");

  new_pod = old_pod;
  new_pod["metadata"]["uid"] = "u2";
  EXPECT_EQ(Message(ValidateForUpdate(old_pod, new_pod, "", "v1", "Pod", "pods", true)),
            "Pod \"p\" is invalid: metadata.uid: Invalid value: \"u2\": field is immutable");
  new_pod["metadata"].erase("uid");  // taken from the stored object
  EXPECT_TRUE(ValidateForUpdate(old_pod, new_pod, "", "v1", "Pod", "pods", true).ok());

  old_pod["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z";
  new_pod = old_pod;
  new_pod["metadata"]["finalizers"] = {"example.com/late"};
  EXPECT_EQ(
      Message(ValidateForUpdate(old_pod, new_pod, "", "v1", "Pod", "pods", true)),
      "Pod \"p\" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if "
      "the object is being deleted, found new finalizers []string{\"example.com/late\"}");
}

TEST(Validation, PodSpecMostlyImmutable) {
  json old_pod = Pod();
  old_pod["spec"]["tolerations"] = J(R"([{"key":"a","operator":"Exists"}])");
  old_pod["spec"]["schedulingGates"] = J(R"([{"name":"copse.dev/a"},{"name":"copse.dev/b"}])");
  auto update = [&](const json& new_pod) {
    return ValidateForUpdate(old_pod, new_pod, "", "v1", "Pod", "pods", true);
  };

  json image = old_pod;
  image["spec"]["containers"][0]["image"] = "busybox:2";
  EXPECT_TRUE(update(image).ok()) << Message(update(image));

  json more_tolerations = old_pod;
  more_tolerations["spec"]["tolerations"].push_back(J(R"({"key":"b","operator":"Exists"})"));
  EXPECT_TRUE(update(more_tolerations).ok()) << Message(update(more_tolerations));

  json fewer_tolerations = old_pod;
  fewer_tolerations["spec"]["tolerations"] = json::array();
  EXPECT_EQ(Message(update(fewer_tolerations)),
            "Pod \"p\" is invalid: spec.tolerations: Forbidden: existing toleration can not be "
            "modified except its tolerationSeconds");

  json gate_removed = old_pod;
  gate_removed["spec"]["schedulingGates"] = J(R"([{"name":"copse.dev/b"}])");
  EXPECT_TRUE(update(gate_removed).ok()) << Message(update(gate_removed));

  json gate_added = old_pod;
  gate_added["spec"]["schedulingGates"].push_back(J(R"({"name":"copse.dev/c"})"));
  EXPECT_EQ(
      Message(update(gate_added)),
      "Pod \"p\" is invalid: spec.schedulingGates[2].name: Forbidden: only deletion is allowed, "
      "but found new scheduling gate 'copse.dev/c'");

  json deadline = old_pod;
  deadline["spec"]["activeDeadlineSeconds"] = 60;
  EXPECT_TRUE(update(deadline).ok()) << Message(update(deadline));
  json longer = deadline;
  longer["spec"]["activeDeadlineSeconds"] = 120;
  EXPECT_EQ(
      Message(ValidateForUpdate(deadline, longer, "", "v1", "Pod", "pods", true)),
      "Pod \"p\" is invalid: spec.activeDeadlineSeconds: Invalid value: 120: must be less than "
      "or equal to previous value");

  json bound = old_pod;
  bound["spec"].erase("schedulingGates");
  bound["spec"]["nodeName"] = "node-1";
  std::string msg = Message(update(bound));
  EXPECT_EQ(
      msg.rfind("Pod \"p\" is invalid: spec: Forbidden: pod updates may not change fields other "
                "than `spec.containers[*].image`",
                0),
      0u)
      << msg;
  EXPECT_NE(msg.find("spec.nodeName"), std::string::npos);

  json more_containers = old_pod;
  more_containers["spec"]["containers"].push_back(J(R"({"name":"side","image":"x"})"));
  EXPECT_EQ(Message(update(more_containers)),
            "Pod \"p\" is invalid: spec.containers: Forbidden: pod updates may not add or remove "
            "containers");

  // The status subresource does not look at spec changes.
  json status = old_pod;
  status["status"] = J(R"({"phase":"Running","nominatedNodeName":"Bad_Node"})");
  Status st = ValidateForUpdate(old_pod, status, "", "v1", "Pod", "pods", true, "status");
  EXPECT_NE(Message(st).find("status.nominatedNodeName: Invalid value: \"Bad_Node\""),
            std::string::npos);
}

TEST(Validation, OtherUpdates) {
  json pc = J(R"({"metadata":{"name":"high"},"value":100})");
  json pc2 = pc;
  pc2["value"] = 200;
  EXPECT_EQ(Message(ValidateForUpdate(pc, pc2, "scheduling.k8s.io", "v1", "PriorityClass",
                                      "priorityclasses", false)),
            "PriorityClass.scheduling.k8s.io \"high\" is invalid: value: Forbidden: may not be "
            "changed in an update.");

  json crd = Crd();
  json crd2 = crd;
  crd2["spec"]["group"] = "other.grove.io";
  crd2["metadata"]["name"] = "podgangs.other.grove.io";
  std::string msg =
      Message(ValidateForUpdate(crd, crd2, "apiextensions.k8s.io", "v1", "CustomResourceDefinition",
                                "customresourcedefinitions", false));
  EXPECT_NE(msg.find("spec.group: Invalid value: \"other.grove.io\": field is immutable"),
            std::string::npos)
      << msg;

  json node = J(R"({"metadata":{"name":"n"},"spec":{"podCIDRs":["10.0.0.0/24"]}})");
  json node2 = node;
  node2["spec"]["podCIDRs"][0] = "10.0.1.0/24";
  EXPECT_EQ(
      Message(ValidateForUpdate(node, node2, "", "v1", "Node", "nodes", false)),
      "Node \"n\" is invalid: spec.podCIDRs[0]: Forbidden: node updates may not change podCIDR "
      "except from \"\" to valid");
  json cordoned = node;
  cordoned["spec"]["unschedulable"] = true;
  EXPECT_TRUE(ValidateForUpdate(node, cordoned, "", "v1", "Node", "nodes", false).ok());
}

TEST(Validation, RequestNamespaceAndName) {
  json pod = Pod();
  pod["metadata"].erase("namespace");
  ASSERT_TRUE(EnsureNamespaceMatchesRequest(pod, "team-a", true).ok());
  EXPECT_EQ(pod["metadata"]["namespace"], "team-a");
  Status mismatch = EnsureNamespaceMatchesRequest(pod, "team-b", true);
  ASSERT_FALSE(mismatch.ok());
  EXPECT_EQ(mismatch.error().http_status, 400);
  EXPECT_EQ(
      mismatch.error().message,
      "the namespace of the provided object does not match the namespace sent on the request");
  json node = J(R"({"metadata":{"name":"n","namespace":"x"}})");
  ASSERT_TRUE(EnsureNamespaceMatchesRequest(node, "", false).ok());
  EXPECT_FALSE(node["metadata"].contains("namespace"));

  EXPECT_TRUE(CheckRequestName(Pod("a"), "a", "default").ok());
  EXPECT_EQ(Message(CheckRequestName(Pod("a"), "b", "default")),
            "the name of the object (a) does not match the name on the URL (b)");
}

TEST(Validation, NameValidators) {
  EXPECT_TRUE(IsDns1123Label("abc-1").empty());
  EXPECT_EQ(IsDns1123Label(std::string(64, 'a')).size(), 1u);
  EXPECT_TRUE(IsDns1123Subdomain("a.b-c.d").empty());
  EXPECT_FALSE(IsDns1123Subdomain("a..b").empty());
  EXPECT_FALSE(IsDns1123Subdomain("-a").empty());
  EXPECT_TRUE(IsDns1035Label("a1").empty());
  EXPECT_FALSE(IsDns1035Label("1a").empty());
  EXPECT_TRUE(IsQualifiedName("example.com/My_Name.1").empty());
  EXPECT_EQ(IsQualifiedName("/x"), (std::vector<std::string>{"prefix part must be non-empty"}));
  EXPECT_EQ(IsQualifiedName("a/b/c").size(), 1u);
}

}  // namespace validation_test
}  // namespace copse::apiserver
