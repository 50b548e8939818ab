// OpenAPI v3 documents (schemas of built-in kinds and CRDs) and the
// authorization reviews, over HTTP against the embedded API server.

#include <functional>

#include "tests/integration/apiserver/test_util.h"

namespace copse::apiserver::testing {
namespace {

// Every "$ref" in `node` names a schema of `doc`.
void ExpectRefsResolve(const json& doc, const json& node, const std::string& where) {
  if (node.is_object()) {
    if (auto ref = node.find("$ref"); ref != node.end()) {
      const std::string target = ref->get<std::string>();
      const std::string prefix = "#/components/schemas/";
      ASSERT_TRUE(target.starts_with(prefix)) << where;
      EXPECT_TRUE(doc["components"]["schemas"].contains(target.substr(prefix.size())))
          << where << " names " << target;
    }
    for (const auto& [key, value] : node.items()) ExpectRefsResolve(doc, value, where + "/" + key);
  } else if (node.is_array()) {
    for (size_t i = 0; i < node.size(); ++i) ExpectRefsResolve(doc, node[i], where);
  }
}

TEST_F(ApiServerTest, OpenApiV3DescribesBuiltinKinds) {
  const Response index = client().Get("/openapi/v3");
  ASSERT_EQ(index.status, 200);
  const json paths = index.Json()["paths"];
  ASSERT_TRUE(paths.contains("api/v1")) << index.body;
  ASSERT_TRUE(paths.contains("apis/apps/v1")) << index.body;

  const Response core = client().Get(paths["api/v1"]["serverRelativeURL"].get<std::string>());
  ASSERT_EQ(core.status, 200);
  const json doc = core.Json();
  const json& schemas = doc["components"]["schemas"];
  const json& pod = schemas["io.k8s.api.core.v1.Pod"];
  EXPECT_EQ(pod["x-kubernetes-group-version-kind"][0],
            json({{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}));
  const json& spec = schemas["io.k8s.api.core.v1.PodSpec"];
  EXPECT_EQ(spec["properties"]["schedulerName"]["type"], "string");
  EXPECT_EQ(spec["properties"]["containers"]["x-kubernetes-list-type"], "map");
  EXPECT_EQ(spec["properties"]["containers"]["x-kubernetes-list-map-keys"], json({"name"}));
  EXPECT_EQ(spec["properties"]["tolerations"]["x-kubernetes-list-type"], "atomic");
  EXPECT_EQ(
      schemas["io.k8s.api.core.v1.Container"]["properties"]["ports"]["x-kubernetes-list-map-keys"],
      json({"containerPort", "protocol"}));
  EXPECT_TRUE(schemas.contains("io.k8s.api.core.v1.Node"));
  // Kinds outside the table still have a schema with their kind.
  EXPECT_EQ(schemas["io.k8s.api.core.v1.ConfigMap"]["x-kubernetes-group-version-kind"][0]["kind"],
            "ConfigMap");
  ExpectRefsResolve(doc, doc, "");
  // The write operations keep fieldValidation (kubectl leaves strict validation to the server).
  const json& patch = doc["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]["patch"];
  bool field_validation = false;
  for (const auto& p : patch["parameters"]) field_validation |= p["name"] == "fieldValidation";
  EXPECT_TRUE(field_validation);

  const Response apps = client().Get("/openapi/v3/apis/apps/v1");
  ASSERT_EQ(apps.status, 200);
  const json apps_doc = apps.Json();
  EXPECT_TRUE(apps_doc["components"]["schemas"].contains("io.k8s.api.apps.v1.DeploymentSpec"));
  ExpectRefsResolve(apps_doc, apps_doc, "");
  EXPECT_EQ(client().Get("/openapi/v3/apis/nope.example.com/v1").status, 404);
}

TEST_F(ApiServerTest, OpenApiV3DescribesCrdsFromTheirSchemas) {
  const json crd = json::parse(R"({
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "gadgets.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
      "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
      "versions": [{"name": "v1", "served": true, "storage": true,
        "schema": {"openAPIV3Schema": {"type": "object", "properties": {
          "spec": {"type": "object", "properties": {
            "size": {"type": "integer", "description": "How big the gadget is."}}}}}}}]}})");
  ASSERT_EQ(client().Post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd).status,
            201);
  const Response index = client().Get("/openapi/v3");
  ASSERT_TRUE(index.Json()["paths"].contains("apis/example.com/v1")) << index.body;
  const Response r = client().Get("/openapi/v3/apis/example.com/v1");
  ASSERT_EQ(r.status, 200);
  const json doc = r.Json();
  const json& gadget = doc["components"]["schemas"]["com.example.v1.Gadget"];
  EXPECT_EQ(gadget["properties"]["spec"]["properties"]["size"]["description"],
            "How big the gadget is.");
  EXPECT_EQ(gadget["x-kubernetes-group-version-kind"][0]["kind"], "Gadget");
  ExpectRefsResolve(doc, doc, "");
}

TEST_F(ApiServerTest, AuthorizationReviews) {
  const Response group = client().Get("/apis/authorization.k8s.io/v1");
  ASSERT_EQ(group.status, 200);
  EXPECT_EQ(group.Json()["resources"].size(), 3u) << group.body;  // and subjectaccessreviews
  const json review = {{"apiVersion", "authorization.k8s.io/v1"},
                       {"kind", "SelfSubjectAccessReview"},
                       {"spec",
                        {{"resourceAttributes",
                          {{"namespace", "default"}, {"verb", "create"}, {"resource", "pods"}}}}}};
  const Response access =
      client().Post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", review);
  ASSERT_EQ(access.status, 201) << access.body;
  EXPECT_EQ(access.Json()["status"]["allowed"], true);
  const Response rules = client().Post("/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
                                       {{"kind", "SelfSubjectRulesReview"},
                                        {"apiVersion", "authorization.k8s.io/v1"},
                                        {"spec", {{"namespace", "default"}}}});
  ASSERT_EQ(rules.status, 201) << rules.body;
  EXPECT_EQ(rules.Json()["status"]["resourceRules"][0]["verbs"], json({"*"}));
  const Response invalid = client().Post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                                         {{"kind", "SelfSubjectAccessReview"}, {"spec", {}}});
  EXPECT_EQ(invalid.status, 422) << invalid.body;
}

}  // namespace
}  // namespace copse::apiserver::testing
