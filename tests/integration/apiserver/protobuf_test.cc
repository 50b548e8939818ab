// The embedded API server's protobuf content negotiation over HTTP: protobuf
// request bodies, protobuf answers (objects, lists, Status errors, watch
// frames) when the Accept header prefers them, and JSON only for custom
// resources, as kube-apiserver behaves.

#include <gtest/gtest.h>

#include "kube/protobuf/codec.h"
#include "tests/integration/apiserver/test_util.h"

namespace copse::apiserver::testing {
namespace {

namespace pb = kube::protobuf;

constexpr std::string_view kProto = "application/vnd.kubernetes.protobuf";
// What client-go and kubectl send for built-in types.
constexpr std::string_view kProtoFirst = "application/vnd.kubernetes.protobuf,application/json";

std::string Encode(const json& object) {
  auto encoded = pb::EncodeObject(object.dump());
  EXPECT_TRUE(encoded.ok()) << encoded.error().ToString();
  return encoded.ok() ? *encoded : std::string();
}

json Decode(const Response& r) {
  EXPECT_EQ(r.content_type, kProto) << r.body;
  auto decoded = pb::DecodeObject(r.body);
  EXPECT_TRUE(decoded.ok()) << decoded.error().ToString();
  return decoded.ok() ? json::parse(*decoded) : json();
}

json Widgets() {
  return json::parse(R"({"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
    "metadata":{"name":"widgets.example.com"},"spec":{"group":"example.com","scope":"Namespaced",
    "names":{"plural":"widgets","singular":"widget","kind":"Widget"},"versions":[{"name":"v1",
    "served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object",
    "x-kubernetes-preserve-unknown-fields":true}}}]}})");
}

TEST_F(ApiServerTest, ProtobufCreateAnswersProtobufAndStoresJson) {
  const json cm = {{"apiVersion", "v1"},
                   {"kind", "ConfigMap"},
                   {"metadata", {{"name", "cm1"}}},
                   {"data", {{"a", "1"}}},
                   {"binaryData", {{"b", "AAE="}}}};
  auto created = client().Request("POST", "/api/v1/namespaces/default/configmaps", Encode(cm),
                                  kProto, kProtoFirst);
  ASSERT_EQ(created.status, 201) << created.body;
  const json answer = Decode(created);
  EXPECT_EQ(answer["metadata"]["name"], "cm1");
  EXPECT_EQ(answer["metadata"]["namespace"], "default");
  EXPECT_FALSE(answer["metadata"]["uid"].get<std::string>().empty());
  EXPECT_EQ(answer["binaryData"]["b"], "AAE=");

  // A JSON client reads the same object.
  auto got = client().Get("/api/v1/namespaces/default/configmaps/cm1");
  ASSERT_EQ(got.status, 200);
  EXPECT_EQ(got.content_type, "application/json");
  EXPECT_EQ(got.Json()["data"], cm["data"]);
  EXPECT_EQ(got.Json()["binaryData"], cm["binaryData"]);
  EXPECT_EQ(got.Json()["metadata"]["uid"], answer["metadata"]["uid"]);
}

TEST_F(ApiServerTest, AcceptOrderAndQualityPickTheMediaType) {
  ASSERT_EQ(client().Post("/api/v1/namespaces/default/pods", MakePod("p1")).status, 201);
  const std::string path = "/api/v1/namespaces/default/pods/p1";
  EXPECT_EQ(client().Request("GET", path, {}, {}, kProtoFirst).content_type, kProto);
  EXPECT_EQ(client().Request("GET", path, {}, {}, kProto).content_type, kProto);
  EXPECT_EQ(client()
                .Request("GET", path, {}, {}, "application/vnd.kubernetes.protobuf, */*")
                .content_type,
            kProto);
  EXPECT_EQ(client()
                .Request("GET", path, {}, {}, "application/json, " + std::string(kProto))
                .content_type,
            "application/json");
  EXPECT_EQ(client()
                .Request("GET", path, {}, {},
                         "application/vnd.kubernetes.protobuf;q=0.5, application/json")
                .content_type,
            "application/json");
  // kubectl get's Table request stays JSON.
  auto table = client().Request("GET", path, {}, {},
                                "application/json;as=Table;v=v1;g=meta.k8s.io,application/json");
  EXPECT_EQ(table.content_type, "application/json");
  EXPECT_EQ(table.Json()["kind"], "Table");
  EXPECT_EQ(client().Request("GET", path, {}, {}, "text/html").status, 406);
}

TEST_F(ApiServerTest, ProtobufListsAndStatusErrors) {
  for (const char* name : {"a", "b", "c"}) {
    ASSERT_EQ(client().Post("/api/v1/namespaces/default/pods", MakePod(name)).status, 201);
  }
  auto list = client().Request("GET", "/api/v1/namespaces/default/pods", {}, {}, kProtoFirst);
  ASSERT_EQ(list.status, 200);
  const json pods = Decode(list);
  EXPECT_EQ(pods["kind"], "PodList");
  ASSERT_EQ(pods["items"].size(), 3u);
  EXPECT_EQ(pods["items"][1]["metadata"]["name"], "b");
  EXPECT_EQ(pods["items"][1]["spec"]["containers"][0]["resources"]["requests"]["cpu"], "100m");
  EXPECT_FALSE(pods["metadata"]["resourceVersion"].get<std::string>().empty());

  auto missing =
      client().Request("GET", "/api/v1/namespaces/default/pods/nope", {}, {}, kProtoFirst);
  EXPECT_EQ(missing.status, 404);
  const json status = Decode(missing);
  EXPECT_EQ(status["kind"], "Status");
  EXPECT_EQ(status["reason"], "NotFound");
  EXPECT_EQ(status["code"], 404);
}

TEST_F(ApiServerTest, MalformedProtobufIs400AndChangesNothing) {
  const auto before = Snapshot(kube::resources::kPods);
  std::string body = Encode(MakePod("bad"));
  body.resize(body.size() - 5);  // truncated
  auto r = client().Request("POST", "/api/v1/namespaces/default/pods", body, kProto);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.Json()["message"].get<std::string>().find("protobuf body"), std::string::npos)
      << r.body;
  auto garbage = client().Request("POST", "/api/v1/namespaces/default/pods",
                                  std::string("\x00\x01\x02", 3), kProto);
  EXPECT_EQ(garbage.status, 400) << garbage.body;
  EXPECT_EQ(Snapshot(kube::resources::kPods), before);
}

TEST_F(ApiServerTest, CustomResourcesStayJsonOnly) {
  ASSERT_EQ(
      client().Post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", Widgets()).status,
      201);
  const std::string base = "/apis/example.com/v1/namespaces/default/widgets";
  json w = {{"apiVersion", "example.com/v1"}, {"kind", "Widget"}, {"metadata", {{"name", "w1"}}}};
  ASSERT_EQ(client().Post(base, w).status, 201);
  // Protobuf first, JSON acceptable: JSON. Protobuf only: 406.
  auto both = client().Request("GET", base + "/w1", {}, {}, kProtoFirst);
  EXPECT_EQ(both.status, 200);
  EXPECT_EQ(both.content_type, "application/json");
  EXPECT_EQ(client().Request("GET", base + "/w1", {}, {}, kProto).status, 406);
  EXPECT_EQ(client().Request("GET", base, {}, {}, kProto).status, 406);
  // A protobuf body for a custom resource: 415, as kube-apiserver answers.
  // "k8s\0" + Unknown{typeMeta{apiVersion: example.com/v1, kind: Widget}}.
  const std::string type_meta = std::string("\x0a\x0e") + "example.com/v1" + "\x12\x06" + "Widget";
  const std::string fake_body =
      std::string(pb::kMagic) + "\x0a" + static_cast<char>(type_meta.size()) + type_meta;
  auto posted = client().Request("POST", base, fake_body, kProto, kProtoFirst);
  EXPECT_EQ(posted.status, 415) << posted.body;
}

TEST_F(ApiServerTest, ProtobufBindingDeleteOptionsAndUpdate) {
  ASSERT_EQ(client().Post("/api/v1/namespaces/default/pods", MakePod("p")).status, 201);
  const json binding = {{"apiVersion", "v1"},
                        {"kind", "Binding"},
                        {"metadata", {{"name", "p"}}},
                        {"target", {{"kind", "Node"}, {"name", "node-7"}}}};
  auto bound = client().Request("POST", "/api/v1/namespaces/default/pods/p/binding",
                                Encode(binding), kProto, kProtoFirst);
  ASSERT_EQ(bound.status, 201) << bound.body;
  EXPECT_EQ(Decode(bound)["status"], "Success");
  EXPECT_EQ(client().Get("/api/v1/namespaces/default/pods/p").Json()["spec"]["nodeName"], "node-7");

  // PUT in protobuf: the labels change.
  json pod = Decode(client().Request("GET", "/api/v1/namespaces/default/pods/p", {}, {}, kProto));
  pod["metadata"]["labels"] = {{"tier", "web"}};
  auto updated = client().Request("PUT", "/api/v1/namespaces/default/pods/p", Encode(pod), kProto,
                                  kProtoFirst);
  ASSERT_EQ(updated.status, 200) << updated.body;
  EXPECT_EQ(Decode(updated)["metadata"]["labels"]["tier"], "web");

  // DELETE with protobuf DeleteOptions (client-go sends them so).
  const json options = {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}, {"gracePeriodSeconds", 0}};
  auto deleted = client().Request("DELETE", "/api/v1/namespaces/default/pods/p", Encode(options),
                                  kProto, kProtoFirst);
  EXPECT_TRUE(deleted.status == 200 || deleted.status == 202) << deleted.body;
  EXPECT_TRUE(
      WaitFor([&] { return client().Get("/api/v1/namespaces/default/pods/p").status == 404; }));
}

TEST_F(ApiServerTest, ProtobufWatchStreamsLengthPrefixedFrames) {
  for (const char* name : {"w1", "w2"}) {
    ASSERT_EQ(client().Post("/api/v1/namespaces/default/pods", MakePod(name)).status, 201);
  }
  // From the beginning, ending after a second: the whole stream is the body.
  auto r = client().Request(
      "GET", "/api/v1/namespaces/default/pods?watch=1&resourceVersion=0&timeoutSeconds=1", {}, {},
      kProtoFirst);
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, pb::kWatchMediaType);
  std::vector<std::string> names;
  std::string_view rest = r.body;
  while (!rest.empty()) {
    auto frame = pb::ReadWatchFrame(rest);
    ASSERT_TRUE(frame.ok()) << frame.error().ToString();
    ASSERT_GT(frame->consumed, 0u) << "incomplete frame at the end of the stream";
    EXPECT_EQ(frame->type, "ADDED");
    names.push_back(json::parse(frame->object_json)["metadata"]["name"]);
    rest.remove_prefix(frame->consumed);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"w1", "w2"}));

  // A JSON watch of the same stays newline-delimited JSON.
  auto j = client().Request(
      "GET", "/api/v1/namespaces/default/pods?watch=1&resourceVersion=0&timeoutSeconds=1");
  EXPECT_EQ(j.content_type, "application/json");
  EXPECT_EQ(std::count(j.body.begin(), j.body.end(), '\n'), 2);
}

}  // namespace
}  // namespace copse::apiserver::testing
