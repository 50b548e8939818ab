// The embedded API server's limits (issue 17.1): request body size (refused
// while it arrives), JSON nesting depth (refused before any parse), stored
// object size, and the JSON types of ConfigMap, Secret, Node and Pod fields.
// Each refusal is a Status naming the limit or the field, changes nothing,
// and leaves the server serving.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "core/json_text.h"
#include "tests/integration/apiserver/test_util.h"
#include "tests/unit/net/net_test_util.h"

namespace copse::apiserver::testing {
namespace limits_test {

using namespace std::chrono_literals;

const ResourceRef kConfigMaps{"", "v1", "configmaps", true};
const ResourceRef kWidgets{"example.com", "v1", "widgets", true};

json ConfigMap(const std::string& name, json data) {
  return {
      {"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", name}}}, {"data", data}};
}

// A ConfigMap whose data.x nests `arrays` arrays, as text (nlohmann would
// recurse to build it).
std::string NestedConfigMap(size_t arrays) {
  std::string body =
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"data":{"x":)";
  body.append(arrays, '[');
  body.append(arrays, ']');
  body += "}}";
  return body;
}

class Limits : public ApiServerTest {
 protected:
  void ExpectServing() {
    auto list = client().Get("/api/v1/namespaces/default/configmaps");
    EXPECT_EQ(list.status, 200) << list.body;
    auto created = client().Post("/api/v1/namespaces/default/configmaps",
                                 ConfigMap("alive-" + std::to_string(++alive_), {{"k", "v"}}));
    EXPECT_EQ(created.status, 201) << created.body;
  }
  void InstallWidgets() {
    json crd = json::parse(R"({
      "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
      "metadata": {"name": "widgets.example.com"},
      "spec": {"group": "example.com", "scope": "Namespaced",
               "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
               "versions": [{"name": "v1", "served": true, "storage": true,
                 "schema": {"openAPIV3Schema": {"type": "object",
                                                "x-kubernetes-preserve-unknown-fields": true}}}]}})");
    auto created = client().Post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
    ASSERT_EQ(created.status, 201) << created.body;
    ASSERT_TRUE(WaitFor([&] {
      return client().Get("/apis/example.com/v1/namespaces/default/widgets").status == 200;
    }));
  }
  int alive_ = 0;
};

TEST_F(Limits, JsonNested100000DeepIsRefusedBeforeParsingAndTheServerKeepsServing) {
  const auto before = Snapshot(kConfigMaps);
  auto refused =
      client().Request("POST", "/api/v1/namespaces/default/configmaps", NestedConfigMap(100000));
  EXPECT_EQ(refused.status, 400) << refused.body.substr(0, 300);
  const json status = refused.Json();
  EXPECT_EQ(status["kind"], "Status");
  EXPECT_EQ(status["reason"], "BadRequest");
  EXPECT_NE(status["message"].get<std::string>().find("10000"), std::string::npos) << status;
  EXPECT_EQ(Snapshot(kConfigMaps), before);
  // The same through PUT and PATCH bodies.
  EXPECT_EQ(client()
                .Request("PATCH", "/api/v1/namespaces/default/configmaps/deep",
                         NestedConfigMap(100000), "application/merge-patch+json")
                .status,
            400);
  ExpectServing();
}

TEST_F(Limits, JsonNestedUpToTheLimitIsStoredAndServed) {
  InstallWidgets();
  // The object is one level, spec.x two more: 10,000 levels in all.
  const size_t arrays = kMaxJsonDepth - 2;
  std::string widget =
      R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"deep"},"spec":{"x":)";
  widget.append(arrays, '[');
  widget.append(arrays, ']');
  widget += "}}";
  auto created =
      client().Request("POST", "/apis/example.com/v1/namespaces/default/widgets", widget);
  ASSERT_EQ(created.status, 201) << created.body.substr(0, 300);
  auto got = client().Get("/apis/example.com/v1/namespaces/default/widgets/deep");
  ASSERT_EQ(got.status, 200);
  EXPECT_FALSE(JsonDepthExceeds(got.body));
  EXPECT_EQ(static_cast<size_t>(std::count(got.body.begin(), got.body.end(), '[')), arrays);
  // One level more is refused.
  std::string deeper = widget;
  deeper.insert(deeper.find("\"x\":") + 4, "[");
  deeper.insert(deeper.size() - 2, "]");
  auto refused =
      client().Request("POST", "/apis/example.com/v1/namespaces/default/widgets", deeper);
  EXPECT_EQ(refused.status, 400) << refused.body.substr(0, 300);
  ExpectServing();
}

// 200 MB announced and streamed: refused as soon as the head is read, long
// before it could arrive, and the server's memory does not grow with it.
TEST_F(Limits, A200MegabyteBodyIsRefusedQuicklyWithoutBeingRead) {
  const int64_t rss_before = net::testing::ResidentBytes();
  net::testing::RawSocket socket(port());
  ASSERT_TRUE(socket.connected());
  const size_t total = size_t{200} << 20;
  ASSERT_TRUE(
      socket.Write("POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\n"
                   "Content-Type: application/json\r\nContent-Length: " +
                   std::to_string(total) + "\r\n\r\n"));
  const std::string piece(1 << 20, ' ');
  size_t sent = 0;
  std::string out;
  const auto started = std::chrono::steady_clock::now();
  while (sent < total && out.find("\r\n\r\n") == std::string::npos &&
         std::chrono::steady_clock::now() - started < 30s) {
    if (socket.WaitReadable(0ms)) {
      if (!socket.ReadSome(out, 100ms)) break;
      continue;
    }
    if (!socket.Write(piece)) break;
    sent += piece.size();
  }
  socket.ReadUntil(out, "}", 5s);
  const auto elapsed = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(out.rfind("HTTP/1.1 413 ", 0), 0u) << out.substr(0, 300);
  const size_t body_at = out.find("\r\n\r\n");
  ASSERT_NE(body_at, std::string::npos);
  const json status = json::parse(out.substr(body_at + 4), nullptr, false);
  EXPECT_EQ(status["reason"], "RequestEntityTooLarge") << out;
  EXPECT_EQ(status["code"], 413);
  EXPECT_NE(status["message"].get<std::string>().find("limit is 3145728"), std::string::npos);
  EXPECT_LT(elapsed, 10s);
  EXPECT_LT(sent, total / 4) << "the refusal came after " << sent << " bytes";
  EXPECT_LT(net::testing::ResidentBytes() - rss_before, int64_t{50} << 20);
  ExpectServing();
}

TEST_F(Limits, TheBodyLimitIsAnOption) {
  Options options;
  options.max_request_body_bytes = 64 * 1024;
  StartServer(options);
  auto small = client().Post("/api/v1/namespaces/default/configmaps",
                             ConfigMap("small", {{"v", std::string(50 * 1024, 'x')}}));
  EXPECT_EQ(small.status, 201) << small.body;
  auto big = client().Post("/api/v1/namespaces/default/configmaps",
                           ConfigMap("big", {{"v", std::string(70 * 1024, 'x')}}));
  EXPECT_EQ(big.status, 413) << big.body;
  EXPECT_NE(big.body.find("limit is 65536"), std::string::npos) << big.body;
  EXPECT_EQ(store().Count(kConfigMaps), 1u);
}

TEST_F(Limits, ObjectsAboveTheStoredObjectLimitAreRefused) {
  Options options;
  options.max_request_body_bytes = size_t{64} << 20;
  StartServer(options);
  InstallWidgets();
  const auto widgets_before = Snapshot(kWidgets);
  json widget = {{"apiVersion", "example.com/v1"},
                 {"kind", "Widget"},
                 {"metadata", {{"name", "big"}}},
                 {"spec", {{"blob", std::string(2 << 20, 'x')}}}};
  auto refused = client().Post("/apis/example.com/v1/namespaces/default/widgets", widget);
  EXPECT_EQ(refused.status, 413) << refused.body.substr(0, 300);
  EXPECT_EQ(refused.Json()["reason"], "RequestEntityTooLarge");
  EXPECT_NE(refused.body.find("1572864"), std::string::npos) << refused.body.substr(0, 300);
  EXPECT_EQ(Snapshot(kWidgets), widgets_before);
  // Growing a stored object past the limit is refused too, and keeps it.
  widget["spec"]["blob"] = "small";
  ASSERT_EQ(client().Post("/apis/example.com/v1/namespaces/default/widgets", widget).status, 201);
  auto grown = client().Patch("/apis/example.com/v1/namespaces/default/widgets/big",
                              {{"spec", {{"blob", std::string(2 << 20, 'y')}}}});
  EXPECT_EQ(grown.status, 413) << grown.body.substr(0, 300);
  EXPECT_EQ(
      client().Get("/apis/example.com/v1/namespaces/default/widgets/big").Json()["spec"]["blob"],
      "small");
}

TEST_F(Limits, A20MegabyteConfigMapIsRefused) {
  const std::string twenty(20 << 20, 'x');
  // At the default request limit the body is refused while it arrives.
  auto body_limit =
      client().Post("/api/v1/namespaces/default/configmaps", ConfigMap("huge", {{"v", twenty}}));
  EXPECT_EQ(body_limit.status, 413) << body_limit.body.substr(0, 300);
  EXPECT_NE(body_limit.body.find("limit is 3145728"), std::string::npos);
  // With the request limit raised, ConfigMap validation refuses it (1 MiB of data).
  Options options;
  options.max_request_body_bytes = size_t{64} << 20;
  StartServer(options);
  auto invalid =
      client().Post("/api/v1/namespaces/default/configmaps", ConfigMap("huge", {{"v", twenty}}));
  EXPECT_EQ(invalid.status, 422) << invalid.body.substr(0, 300);
  EXPECT_NE(invalid.body.find("[]: Too long: may not be more than 1048576 bytes"),
            std::string::npos)
      << invalid.body.substr(0, 300);
  EXPECT_EQ(store().Count(kConfigMaps), 0u);
  ExpectServing();
}

// --- field types (kube-apiserver answers 400 from its decoder) -------------

void ExpectDecodeError(const Response& r, std::string_view message) {
  EXPECT_EQ(r.status, 400) << r.body;
  const json status = r.Json();
  EXPECT_EQ(status["reason"], "BadRequest") << r.body;
  EXPECT_NE(status["message"].get<std::string>().find(message), std::string::npos)
      << "want \"" << message << "\" in " << status["message"];
}

using Types = Limits;

TEST_F(Types, ConfigMapDataValuesMustBeStringsAndBinaryDataBase64) {
  const auto before = Snapshot(kConfigMaps);
  ExpectDecodeError(client().Post("/api/v1/namespaces/default/configmaps",
                                  ConfigMap("arrays", {{"foo", json::array({1, 2})}})),
                    "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot "
                    "unmarshal array into Go struct field ConfigMap.data of type string");
  ExpectDecodeError(
      client().Post("/api/v1/namespaces/default/configmaps", ConfigMap("number", {{"foo", 7}})),
      "cannot unmarshal number into Go struct field ConfigMap.data of type string");
  json binary = ConfigMap("binary", json::object());
  binary["binaryData"] = {{"b", "not base64!"}};
  ExpectDecodeError(client().Post("/api/v1/namespaces/default/configmaps", binary),
                    "illegal base64 data at input byte 3");
  EXPECT_EQ(Snapshot(kConfigMaps), before);

  binary["binaryData"] = {{"b", "aGVsbG8="}};
  EXPECT_EQ(client().Post("/api/v1/namespaces/default/configmaps", binary).status, 201);
  auto bad_key =
      client().Post("/api/v1/namespaces/default/configmaps", ConfigMap("keys", {{"bad key", "v"}}));
  EXPECT_EQ(bad_key.status, 422) << bad_key.body;
  EXPECT_NE(bad_key.body.find("data[bad key]: Invalid value: \\\"bad key\\\": a valid config key"),
            std::string::npos)
      << bad_key.body;
  // A patch that would store the wrong type is refused and changes nothing.
  ASSERT_EQ(
      client().Post("/api/v1/namespaces/default/configmaps", ConfigMap("ok", {{"a", "b"}})).status,
      201);
  ExpectDecodeError(client().Patch("/api/v1/namespaces/default/configmaps/ok",
                                   {{"data", {{"a", {{"nested", true}}}}}}),
                    "cannot unmarshal object into Go struct field ConfigMap.data of type string");
  EXPECT_EQ(client().Get("/api/v1/namespaces/default/configmaps/ok").Json()["data"]["a"], "b");
}

TEST_F(Types, SecretDataIsBase64) {
  auto post = [&](json data) {
    return client().Post("/api/v1/namespaces/default/secrets", {{"apiVersion", "v1"},
                                                                {"kind", "Secret"},
                                                                {"metadata", {{"name", "s"}}},
                                                                {"data", std::move(data)}});
  };
  ExpectDecodeError(post({{"k", 12}}),
                    "cannot unmarshal number into Go struct field Secret.data of type []uint8");
  ExpectDecodeError(post({{"k", "abc"}}), "illegal base64 data at input byte 0");
  ExpectDecodeError(post({{"k", "ab=c"}}), "illegal base64 data at input byte 2");
  EXPECT_EQ(post({{"k", "c2VjcmV0"}}).status, 201);
}

TEST_F(Types, NodeFieldsHaveTheirTypes) {
  auto node = [](json spec) {
    return json{{"apiVersion", "v1"},
                {"kind", "Node"},
                {"metadata", {{"name", "n1"}}},
                {"spec", std::move(spec)}};
  };
  ExpectDecodeError(client().Post("/api/v1/nodes", node({{"unschedulable", "yes"}})),
                    "cannot unmarshal string into Go struct field NodeSpec.spec.unschedulable of "
                    "type bool");
  ExpectDecodeError(
      client().Post("/api/v1/nodes",
                    node({{"taints", json::array({{{"key", 5}, {"effect", "NoSchedule"}}})}})),
      "cannot unmarshal number into Go struct field Taint.spec.taints.key of type string");
  ExpectDecodeError(client().Post("/api/v1/nodes", node({{"taints", "none"}})),
                    "cannot unmarshal string into Go struct field NodeSpec.spec.taints of type "
                    "[]v1.Taint");
  EXPECT_EQ(client().Post("/api/v1/nodes", node({{"unschedulable", true}})).status, 201);
}

// Every field of Node and Pod that the built-in schema table describes (the
// one the OpenAPI documents are made of) is decoded with its type, however
// deep, and the error names its path.
TEST_F(Types, EveryDescribedNodeAndPodFieldHasItsType) {
  json node = {{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata", {{"name", "n2"}}},
               {"status", {{"capacity", json::array({1})}}}};
  ExpectDecodeError(client().Post("/api/v1/nodes", node),
                    "cannot unmarshal array into Go struct field NodeStatus.status.capacity of "
                    "type map[string]resource.Quantity");
  node["status"] = {{"allocatable", {{"cpu", json::array({1})}}}};
  ExpectDecodeError(client().Post("/api/v1/nodes", node), "quantities must match");
  node["status"] = {{"addresses", json::array({{{"address", 7}}})}};
  ExpectDecodeError(client().Post("/api/v1/nodes", node),
                    "cannot unmarshal number into Go struct field "
                    "NodeAddress.status.addresses.address of type string");
  EXPECT_EQ(store().Count(kube::resources::kNodes), 0u);

  struct Case {
    json patch;  // merged into a valid pod's spec
    std::string message;
  };
  const std::vector<Case> cases = {
      {{{"containers", json::array({{{"name", "main"}, {"image", "i"}, {"resources", "x"}}})}},
       "cannot unmarshal string into Go struct field Container.spec.containers.resources of type "
       "v1.ResourceRequirements"},
      {{{"affinity", 5}},
       "cannot unmarshal number into Go struct field PodSpec.spec.affinity of type v1.Affinity"},
      {{{"affinity", {{"nodeAffinity", "zzz"}}}},
       "cannot unmarshal string into Go struct field Affinity.spec.affinity.nodeAffinity of type "
       "v1.NodeAffinity"},
      {{{"affinity",
         {{"nodeAffinity",
           {{"requiredDuringSchedulingIgnoredDuringExecution",
             {{"nodeSelectorTerms",
               json::array({{{"matchExpressions", json::array({{{"key", "k"},
                                                                {"operator", "In"},
                                                                {"values", {1}}}})}}})}}}}}}}},
       "cannot unmarshal number into Go struct field "
       "NodeSelectorRequirement.spec.affinity.nodeAffinity."
       "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.matchExpressions.values "
       "of type string"},
      {{{"affinity",
         {{"podAntiAffinity",
           {{"preferredDuringSchedulingIgnoredDuringExecution",
             json::array({{{"weight", "high"}, {"podAffinityTerm", {{"topologyKey", "k"}}}}})}}}}}},
       "cannot unmarshal string into Go struct field WeightedPodAffinityTerm.spec.affinity."
       "podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution.weight of type int32"},
      {{{"containers", json::array({{{"name", "main"},
                                     {"image", "i"},
                                     {"env", json::array({{{"name", "E"}, {"valueFrom", 3}}})}}})}},
       "cannot unmarshal number into Go struct field EnvVar.spec.containers.env.valueFrom of type "
       "v1.EnvVarSource"},
      {{{"topologySpreadConstraints", json::array({{{"maxSkew", 1},
                                                    {"topologyKey", "zone"},
                                                    {"whenUnsatisfiable", "DoNotSchedule"},
                                                    {"minDomains", "2"}}})}},
       "cannot unmarshal string into Go struct field "
       "TopologySpreadConstraint.spec.topologySpreadConstraints.minDomains of type int32"},
      {{{"overhead", json::array()}},
       "cannot unmarshal array into Go struct field PodSpec.spec.overhead of type "
       "map[string]resource.Quantity"},
      {{{"resources", {{"limits", "x"}}}},
       "cannot unmarshal string into Go struct field ResourceRequirements.spec.resources.limits "
       "of type map[string]resource.Quantity"},
      {{{"schedulingGroup", {{"podGroupName", false}}}},
       "cannot unmarshal bool into Go struct field PodSchedulingGroup.spec.schedulingGroup."
       "podGroupName of type string"},
      {{{"volumes", json::array({{{"name", "v"}, {"emptyDir", "yes"}}})}},
       "cannot unmarshal string into Go struct field Volume.spec.volumes.emptyDir of type "
       "v1.EmptyDirVolumeSource"},
  };
  for (const Case& c : cases) {
    json pod = MakePod("p");
    pod["spec"].merge_patch(c.patch);
    ExpectDecodeError(client().Post("/api/v1/namespaces/default/pods", pod), c.message);
  }
  json pod = MakePod("p");
  pod["status"] = {{"startTime", 12}};
  ExpectDecodeError(client().Post("/api/v1/namespaces/default/pods", pod),
                    "cannot unmarshal number into Go struct field PodStatus.status.startTime of "
                    "type v1.Time");
  EXPECT_EQ(store().Count(kube::resources::kPods), 0u);
  // A patch that would store the wrong type changes nothing either.
  ASSERT_EQ(client().Post("/api/v1/namespaces/default/pods", MakePod("p")).status, 201);
  const auto before = Snapshot(kube::resources::kPods);
  ExpectDecodeError(
      client().Patch("/api/v1/namespaces/default/pods/p", {{"spec", {{"affinity", 5}}}},
                     "application/strategic-merge-patch+json"),
      "PodSpec.spec.affinity of type v1.Affinity");
  EXPECT_EQ(Snapshot(kube::resources::kPods), before);
}

TEST_F(Types, PodFieldsHaveTheirTypes) {
  json pod = MakePod("p");
  pod["spec"]["priority"] = 1.5;
  ExpectDecodeError(client().Post("/api/v1/namespaces/default/pods", pod),
                    "cannot unmarshal number 1.5 into Go struct field PodSpec.spec.priority of "
                    "type int32");
  pod = MakePod("p");
  pod["spec"]["priority"] = int64_t{1} << 40;
  ExpectDecodeError(client().Post("/api/v1/namespaces/default/pods", pod),
                    "cannot unmarshal number 1099511627776 into Go struct field "
                    "PodSpec.spec.priority of type int32");
  pod = MakePod("p");
  pod["spec"]["containers"][0]["image"] = 7;
  ExpectDecodeError(client().Post("/api/v1/namespaces/default/pods", pod),
                    "cannot unmarshal number into Go struct field Container.spec.containers.image "
                    "of type string");
  pod = MakePod("p");
  pod["spec"]["nodeSelector"] = {{"zone", json::array()}};
  ExpectDecodeError(client().Post("/api/v1/namespaces/default/pods", pod),
                    "cannot unmarshal array into Go struct field PodSpec.spec.nodeSelector of type "
                    "string");
  pod = MakePod("p");
  pod["spec"]["tolerations"] = json::array({{{"key", "k"}, {"tolerationSeconds", "60"}}});
  ExpectDecodeError(client().Post("/api/v1/namespaces/default/pods", pod),
                    "cannot unmarshal string into Go struct field "
                    "Toleration.spec.tolerations.tolerationSeconds of type int64");
  EXPECT_EQ(store().Count(kube::resources::kPods), 0u);
  EXPECT_EQ(client().Post("/api/v1/namespaces/default/pods", MakePod("p")).status, 201);
}

}  // namespace limits_test
}  // namespace copse::apiserver::testing
