// CRUD, discovery, selectors, pagination, concurrency, patches, subresources
// and bad requests, over real HTTP against the embedded API server.

#include <set>

#include "tests/integration/apiserver/test_util.h"

namespace copse::apiserver::testing {
namespace {

TEST_F(ApiServerTest, DiscoveryDocuments) {
  auto api = client().Get("/api");
  ASSERT_EQ(api.status, 200);
  EXPECT_EQ(api.Json()["kind"], "APIVersions");
  EXPECT_EQ(api.Json()["versions"][0], "v1");

  // kubectl's aggregated-discovery Accept header gets the legacy document as JSON.
  auto apis =
      client().Request("GET", "/apis", {}, {},
                       "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
                       "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
                       "application/json");
  ASSERT_EQ(apis.status, 200);
  EXPECT_EQ(apis.content_type, "application/json");
  EXPECT_EQ(apis.Json()["kind"], "APIGroupList");
  std::set<std::string> groups;
  const json apis_doc = apis.Json();
  for (const auto& g : apis_doc["groups"]) groups.insert(g["name"].get<std::string>());
  EXPECT_TRUE(groups.count("apps")) << apis.body;
  EXPECT_TRUE(groups.count("policy"));
  EXPECT_TRUE(groups.count("apiextensions.k8s.io"));

  auto v1 = client().Get("/api/v1");
  ASSERT_EQ(v1.status, 200);
  bool pods = false;
  bool binding = false;
  const json v1_doc = v1.Json();
  for (const auto& r : v1_doc["resources"]) {
    if (r["name"] == "pods") {
      pods = true;
      EXPECT_EQ(r["kind"], "Pod");
      EXPECT_TRUE(r["namespaced"].get<bool>());
      EXPECT_EQ(r["shortNames"][0], "po");
    }
    if (r["name"] == "pods/binding") binding = true;
  }
  EXPECT_TRUE(pods) << v1.body;
  EXPECT_TRUE(binding);

  auto policy = client().Get("/apis/policy/v1");
  ASSERT_EQ(policy.status, 200);
  EXPECT_EQ(policy.Json()["groupVersion"], "policy/v1");
  EXPECT_EQ(client().Get("/apis/nope.example.com/v1").status, 404);

  auto version = client().Get("/version");
  ASSERT_EQ(version.status, 200);
  EXPECT_EQ(version.Json()["major"], "1");

  auto openapi = client().Get("/openapi/v3");
  ASSERT_EQ(openapi.status, 200);
  ASSERT_TRUE(openapi.Json()["paths"].contains("api/v1"));
  const std::string url = openapi.Json()["paths"]["api/v1"]["serverRelativeURL"];
  auto gv = client().Get(url);
  ASSERT_EQ(gv.status, 200);
  EXPECT_TRUE(gv.Json()["paths"].contains("/api/v1/namespaces/{namespace}/pods/{name}"));
}

TEST_F(ApiServerTest, CreateGetListUpdate) {
  auto created = client().Post("/api/v1/namespaces/default/pods", MakePod("web-1"));
  ASSERT_EQ(created.status, 201) << created.body;
  json pod = created.Json();
  EXPECT_FALSE(pod["metadata"]["uid"].get<std::string>().empty());
  EXPECT_FALSE(pod["metadata"]["resourceVersion"].get<std::string>().empty());
  EXPECT_FALSE(pod["metadata"]["creationTimestamp"].get<std::string>().empty());
  EXPECT_EQ(pod["status"]["phase"], "Pending");
  EXPECT_EQ(pod["spec"]["schedulerName"], "default-scheduler");

  // Namespace defaults from the URL.
  json no_ns = MakePod("web-2");
  no_ns["metadata"].erase("namespace");
  ASSERT_EQ(client().Post("/api/v1/namespaces/default/pods", no_ns).status, 201);

  // generateName.
  json gen = MakePod("");
  gen["metadata"].erase("name");
  gen["metadata"]["generateName"] = "worker-";
  auto generated = client().Post("/api/v1/namespaces/default/pods", gen);
  ASSERT_EQ(generated.status, 201) << generated.body;
  const std::string gen_name = generated.Json()["metadata"]["name"];
  EXPECT_EQ(gen_name.rfind("worker-", 0), 0u);
  EXPECT_EQ(gen_name.size(), 12u);

  auto got = client().Get("/api/v1/namespaces/default/pods/web-1");
  ASSERT_EQ(got.status, 200);
  EXPECT_EQ(got.Json()["metadata"]["uid"], pod["metadata"]["uid"]);

  auto missing = client().Get("/api/v1/namespaces/default/pods/nope");
  ASSERT_EQ(missing.status, 404);
  EXPECT_EQ(missing.Json()["kind"], "Status");
  EXPECT_EQ(missing.Json()["reason"], "NotFound");
  EXPECT_EQ(missing.Json()["message"], "pods \"nope\" not found");
  EXPECT_EQ(missing.Json()["details"]["name"], "nope");

  auto dup = client().Post("/api/v1/namespaces/default/pods", MakePod("web-1"));
  ASSERT_EQ(dup.status, 409);
  EXPECT_EQ(dup.Json()["reason"], "AlreadyExists");

  auto list = client().Get("/api/v1/namespaces/default/pods");
  ASSERT_EQ(list.status, 200);
  EXPECT_EQ(list.Json()["kind"], "PodList");
  EXPECT_EQ(list.Json()["items"].size(), 3u);
  EXPECT_FALSE(list.Json()["metadata"]["resourceVersion"].get<std::string>().empty());
  EXPECT_EQ(client().Get("/api/v1/pods").Json()["items"].size(), 3u);
  EXPECT_EQ(client().Get("/api/v1/namespaces/kube-system/pods").Json()["items"].size(), 0u);

  // Update with the current version works; a stale one is a conflict.
  json updated = got.Json();
  updated["metadata"]["labels"] = {{"tier", "web"}};
  auto put = client().Put("/api/v1/namespaces/default/pods/web-1", updated);
  ASSERT_EQ(put.status, 200) << put.body;
  EXPECT_NE(put.Json()["metadata"]["resourceVersion"], got.Json()["metadata"]["resourceVersion"]);
  auto stale = client().Put("/api/v1/namespaces/default/pods/web-1", updated);
  ASSERT_EQ(stale.status, 409);
  EXPECT_EQ(stale.Json()["reason"], "Conflict");
  EXPECT_EQ(stale.Json()["message"],
            "Operation cannot be fulfilled on pods \"web-1\": the object has been modified; "
            "please apply your changes to the latest version and try again");

  // Cluster-scoped resources.
  json node = {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "n1"}}}};
  ASSERT_EQ(client().Post("/api/v1/nodes", node).status, 201);
  EXPECT_EQ(client().Get("/api/v1/nodes/n1").status, 200);
  EXPECT_EQ(client().Get("/api/v1/nodes").Json()["items"].size(), 1u);
}

TEST_F(ApiServerTest, PodInMissingNamespaceIsNotFound) {
  auto created = client().Post("/api/v1/namespaces/ghost/pods", MakePod("p", {}, "ghost"));
  ASSERT_EQ(created.status, 404);
  EXPECT_EQ(created.Json()["message"], "namespaces \"ghost\" not found");
}

TEST_F(ApiServerTest, BadRequestsChangeNothing) {
  ASSERT_EQ(client().Post("/api/v1/namespaces/default/pods", MakePod("keep")).status, 201);
  const auto before = Snapshot(resources::kPods);

  auto malformed = client().Request("POST", "/api/v1/namespaces/default/pods", "{\"kind\": ");
  EXPECT_EQ(malformed.status, 400);
  EXPECT_EQ(malformed.Json()["kind"], "Status");
  EXPECT_EQ(malformed.Json()["status"], "Failure");
  EXPECT_EQ(malformed.Json()["code"], 400);

  json wrong_kind = MakePod("x");
  wrong_kind["kind"] = "Service";
  auto kind = client().Post("/api/v1/namespaces/default/pods", wrong_kind);
  EXPECT_EQ(kind.status, 400) << kind.body;

  json wrong_version = MakePod("x");
  wrong_version["apiVersion"] = "apps/v1";
  EXPECT_EQ(client().Post("/api/v1/namespaces/default/pods", wrong_version).status, 400);

  json no_name = MakePod("");
  no_name["metadata"].erase("name");
  auto unnamed = client().Post("/api/v1/namespaces/default/pods", no_name);
  EXPECT_EQ(unnamed.status, 422);
  EXPECT_EQ(unnamed.Json()["reason"], "Invalid");
  EXPECT_NE(unnamed.Json()["message"].get<std::string>().find(
                "metadata.name: Required value: name or generateName is required"),
            std::string::npos)
      << unnamed.body;

  auto bad_selector = client().Get("/api/v1/pods?labelSelector=a%20in%20");
  EXPECT_EQ(bad_selector.status, 400);
  auto bad_field = client().Get("/api/v1/pods?fieldSelector=spec.bogus%3Dx");
  EXPECT_EQ(bad_field.status, 400);
  EXPECT_EQ(bad_field.Json()["message"], "field label not supported: spec.bogus");
  EXPECT_EQ(client().Get("/api/v1/widgets").status, 404);
  EXPECT_EQ(client().Get("/apis/nope.io/v1/things").status, 404);
  EXPECT_EQ(client().Request("POST", "/api/v1/namespaces/default/pods/keep").status, 405);

  auto bad_patch = client().Request("PATCH", "/api/v1/namespaces/default/pods/keep", "{nope",
                                    "application/merge-patch+json");
  EXPECT_EQ(bad_patch.status, 400);
  auto bad_type =
      client().Request("PATCH", "/api/v1/namespaces/default/pods/keep", "{}", "text/plain");
  EXPECT_EQ(bad_type.status, 415);
  auto bad_put = client().Request("PUT", "/api/v1/namespaces/default/pods/keep", "[1,2");
  EXPECT_EQ(bad_put.status, 400);

  EXPECT_EQ(Snapshot(resources::kPods), before);
  // The server still serves.
  EXPECT_EQ(client().Get("/api/v1/namespaces/default/pods/keep").status, 200);
}

TEST_F(ApiServerTest, SelectorsAndPagination) {
  for (int i = 0; i < 10; ++i) {
    json labels = {{"app", i % 2 == 0 ? "even" : "odd"}, {"idx", std::to_string(i)}};
    json pod = MakePod("p" + std::to_string(i), labels);
    if (i < 3) pod["spec"]["nodeName"] = "node-a";
    ASSERT_EQ(client().Post("/api/v1/namespaces/default/pods", pod).status, 201);
  }
  auto even = client().Get("/api/v1/namespaces/default/pods?labelSelector=app%3Deven");
  EXPECT_EQ(even.Json()["items"].size(), 5u);
  auto set = client().Get("/api/v1/pods?labelSelector=idx%20in%20(1,2,3),app!%3Dodd");
  EXPECT_EQ(set.Json()["items"].size(), 1u);
  auto exists = client().Get("/api/v1/pods?labelSelector=!app");
  EXPECT_EQ(exists.Json()["items"].size(), 0u);
  auto on_node = client().Get("/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-a");
  EXPECT_EQ(on_node.Json()["items"].size(), 3u);
  auto unbound = client().Get("/api/v1/pods?fieldSelector=spec.nodeName%3D");
  EXPECT_EQ(unbound.Json()["items"].size(), 7u);
  auto by_name = client().Get("/api/v1/pods?fieldSelector=metadata.name%3Dp4");
  EXPECT_EQ(by_name.Json()["items"].size(), 1u);
  auto pending = client().Get(
      "/api/v1/pods?fieldSelector=status.phase%3DPending,spec.schedulerName%3Ddefault-scheduler,"
      "metadata.namespace%3Ddefault");
  EXPECT_EQ(pending.Json()["items"].size(), 10u);

  std::set<std::string> seen;
  std::string cont;
  int pages = 0;
  do {
    std::string url = "/api/v1/namespaces/default/pods?limit=3";
    if (!cont.empty()) url += "&continue=" + cont;
    auto page = client().Get(url);
    ASSERT_EQ(page.status, 200) << page.body;
    json body = page.Json();
    EXPECT_LE(body["items"].size(), 3u);
    for (const auto& item : body["items"]) seen.insert(item["metadata"]["name"].get<std::string>());
    cont = body["metadata"].value("continue", "");
    ++pages;
  } while (!cont.empty() && pages < 10);
  EXPECT_EQ(seen.size(), 10u);
  EXPECT_EQ(pages, 4);
  EXPECT_EQ(client().Get("/api/v1/pods?limit=2&continue=garbage!").status, 400);
}

TEST_F(ApiServerTest, PatchesAndGeneration) {
  json deploy = {
      {"apiVersion", "apps/v1"},
      {"kind", "Deployment"},
      {"metadata", {{"name", "d"}}},
      {"spec",
       {{"replicas", 1},
        {"selector", {{"matchLabels", {{"app", "d"}}}}},
        {"template",
         {{"metadata", {{"labels", {{"app", "d"}}}}},
          {"spec", {{"containers", json::array({{{"name", "c"}, {"image", "i"}}})}}}}}}}};
  auto created = client().Post("/apis/apps/v1/namespaces/default/deployments", deploy);
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(created.Json()["metadata"]["generation"], 1);
  const std::string path = "/apis/apps/v1/namespaces/default/deployments/d";

  // Metadata-only change: no generation bump.
  auto labeled = client().Patch(path, {{"metadata", {{"labels", {{"x", "y"}}}}}});
  ASSERT_EQ(labeled.status, 200) << labeled.body;
  EXPECT_EQ(labeled.Json()["metadata"]["generation"], 1);
  EXPECT_EQ(labeled.Json()["metadata"]["labels"]["x"], "y");

  // Spec change: bumped.
  auto scaled = client().Patch(path, {{"spec", {{"replicas", 3}}}});
  ASSERT_EQ(scaled.status, 200);
  EXPECT_EQ(scaled.Json()["metadata"]["generation"], 2);

  // Status through the main resource is ignored; through /status it lands
  // without a generation bump.
  auto ignored = client().Patch(path, {{"status", {{"replicas", 7}}}});
  ASSERT_EQ(ignored.status, 200);
  EXPECT_FALSE(ignored.Json().contains("status") && ignored.Json()["status"].contains("replicas"));
  auto status = client().Patch(path + "/status",
                               {{"status", {{"replicas", 7}}}, {"spec", {{"replicas", 9}}}});
  ASSERT_EQ(status.status, 200) << status.body;
  EXPECT_EQ(status.Json()["status"]["replicas"], 7);
  EXPECT_EQ(status.Json()["spec"]["replicas"], 3);
  EXPECT_EQ(status.Json()["metadata"]["generation"], 2);

  // JSON patch.
  json ops = json::array({{{"op", "replace"}, {"path", "/spec/replicas"}, {"value", 5}}});
  auto jp = client().Patch(path, ops, "application/json-patch+json");
  ASSERT_EQ(jp.status, 200) << jp.body;
  EXPECT_EQ(jp.Json()["spec"]["replicas"], 5);
  json bad_ops = json::array({{{"op", "test"}, {"path", "/spec/replicas"}, {"value", 99}}});
  EXPECT_EQ(client().Patch(path, bad_ops, "application/json-patch+json").status, 422);

  // A no-op patch keeps the resourceVersion.
  const std::string rv = jp.Json()["metadata"]["resourceVersion"];
  auto noop = client().Patch(path, {{"spec", {{"replicas", 5}}}});
  EXPECT_EQ(noop.Json()["metadata"]["resourceVersion"], rv);

  // Optimistic concurrency in a patch.
  auto conflict =
      client().Patch(path, {{"metadata", {{"resourceVersion", "1"}}}, {"spec", {{"replicas", 2}}}});
  EXPECT_EQ(conflict.status, 409);

  // Strategic merge patch on a pod merges containers by name.
  ASSERT_EQ(client().Post("/api/v1/namespaces/default/pods", MakePod("smp")).status, 201);
  json smp = {{"metadata", {{"labels", {{"a", "b"}}}}},
              {"spec", {{"containers", json::array({{{"name", "main"}, {"image", "nginx:2"}}})}}}};
  auto patched = client().Patch("/api/v1/namespaces/default/pods/smp", smp,
                                "application/strategic-merge-patch+json");
  ASSERT_EQ(patched.status, 200) << patched.body;
  EXPECT_EQ(patched.Json()["spec"]["containers"].size(), 1u);
  EXPECT_EQ(patched.Json()["spec"]["containers"][0]["image"], "nginx:2");
  EXPECT_EQ(patched.Json()["metadata"]["labels"]["a"], "b");

  // Scale subresource.
  auto scale = client().Get(path + "/scale");
  ASSERT_EQ(scale.status, 200) << scale.body;
  EXPECT_EQ(scale.Json()["kind"], "Scale");
  EXPECT_EQ(scale.Json()["spec"]["replicas"], 5);
  EXPECT_EQ(scale.Json()["status"]["selector"], "app=d");
  auto rescaled = client().Patch(path + "/scale", {{"spec", {{"replicas", 4}}}});
  ASSERT_EQ(rescaled.status, 200) << rescaled.body;
  EXPECT_EQ(client().Get(path).Json()["spec"]["replicas"], 4);
}

TEST_F(ApiServerTest, DryRunChangesNothing) {
  const auto before = Snapshot(resources::kPods);
  auto dry = client().Post("/api/v1/namespaces/default/pods?dryRun=All", MakePod("dry"));
  EXPECT_EQ(dry.status, 201);
  EXPECT_EQ(Snapshot(resources::kPods), before);
}

TEST_F(ApiServerTest, TableOutput) {
  ASSERT_EQ(client().Post("/api/v1/namespaces/default/pods", MakePod("t1")).status, 201);
  auto table = client().Request("GET", "/api/v1/namespaces/default/pods", {}, {},
                                "application/json;as=Table;v=v1;g=meta.k8s.io,application/json");
  ASSERT_EQ(table.status, 200) << table.body;
  json t = table.Json();
  EXPECT_EQ(t["kind"], "Table");
  ASSERT_EQ(t["rows"].size(), 1u);
  EXPECT_EQ(t["rows"][0]["cells"][0], "t1");
  EXPECT_FALSE(t["columnDefinitions"].empty());
}

TEST_F(ApiServerTest, TokenAuth) {
  Options options;
  options.token = "s3cret";
  server_.reset();
  StartServer(options);
  auto denied = client().Get("/api/v1/pods");
  EXPECT_EQ(denied.status, 401);
  EXPECT_EQ(denied.Json()["reason"], "Unauthorized");
  WatchReader watch(port(), "/api/v1/pods?watch=true");
  EXPECT_EQ(watch.status(), 401);
  HttpClient authed(port(), ClientOptions{"s3cret", false, ""});
  EXPECT_EQ(authed.Get("/api/v1/pods").status, 200);
  HttpClient wrong(port(), ClientOptions{"nope", false, ""});
  EXPECT_EQ(wrong.Get("/api/v1/pods").status, 401);
  EXPECT_NE(server_->Kubeconfig().find("token: s3cret"), std::string::npos);
}

TEST_F(ApiServerTest, HttpsWithCa) {
  ASSERT_FALSE(server_->ca_pem().empty());
  HttpClient tls(server_->https_port(), ClientOptions{"", true, server_->ca_pem()});
  auto res = tls.Get("/api/v1/namespaces");
  ASSERT_EQ(res.status, 200) << res.body;
  EXPECT_GE(res.Json()["items"].size(), 3u);
  EXPECT_NE(server_->Kubeconfig().find("certificate-authority-data:"), std::string::npos);
  EXPECT_EQ(server_->https_url(), "https://127.0.0.1:" + std::to_string(server_->https_port()));
}

TEST(ApiServerRestart, SamePortsSameStore) {
  auto store = NewStore();
  Options options;
  options.store = store;
  auto first = ApiServer::Start(options);
  ASSERT_TRUE(first.ok()) << first.error().ToString();
  const uint16_t http_port = (*first)->http_port();
  const uint16_t https_port = (*first)->https_port();
  {
    HttpClient c(http_port);
    ASSERT_EQ(c.Post("/api/v1/namespaces/default/pods", MakePod("survivor")).status, 201);
  }
  (*first)->Stop();
  first->reset();
  Options again;
  again.store = store;
  again.http_port = http_port;
  again.https_port = https_port;
  auto second = ApiServer::Start(again);
  ASSERT_TRUE(second.ok()) << second.error().ToString();
  EXPECT_EQ((*second)->http_port(), http_port);
  HttpClient c(http_port);
  EXPECT_EQ(c.Get("/api/v1/namespaces/default/pods/survivor").status, 200);
}

}  // namespace
}  // namespace copse::apiserver::testing
