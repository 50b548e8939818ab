// Deletion (finalizers, grace periods, preconditions, propagation and GC),
// binding, eviction against PodDisruptionBudgets, CRDs, namespaces.

#include "tests/integration/apiserver/test_util.h"

namespace copse::apiserver::testing {
namespace lifecycle_test {

json ConfigMap(const std::string& name, json owner = nullptr) {
  json cm = {{"apiVersion", "v1"},
             {"kind", "ConfigMap"},
             {"metadata", {{"name", name}}},
             {"data", {{"k", "v"}}}};
  if (!owner.is_null()) cm["metadata"]["ownerReferences"] = json::array({owner});
  return cm;
}

json OwnerRef(const json& owner) {
  return {{"apiVersion", owner["apiVersion"]},
          {"kind", owner["kind"]},
          {"name", owner["metadata"]["name"]},
          {"uid", owner["metadata"]["uid"]},
          {"controller", true},
          {"blockOwnerDeletion", true}};
}

constexpr const char* kCm = "/api/v1/namespaces/default/configmaps";

TEST_F(ApiServerTest, FinalizersDelayRemoval) {
  json cm = ConfigMap("held");
  cm["metadata"]["finalizers"] = json::array({"example.com/hold"});
  ASSERT_EQ(client().Post(kCm, cm).status, 201);
  // As kube-apiserver: a deletion held by finalizers is 200 with the object,
  // 202 only when orphanDependents=false was asked for.
  auto deleted = client().Delete(std::string(kCm) + "/held");
  ASSERT_EQ(deleted.status, 200) << deleted.body;
  EXPECT_TRUE(deleted.Json()["metadata"].contains("deletionTimestamp")) << deleted.body;
  json held2 = ConfigMap("held2");
  held2["metadata"]["finalizers"] = json::array({"example.com/hold"});
  ASSERT_EQ(client().Post(kCm, held2).status, 201);
  EXPECT_EQ(client().Delete(std::string(kCm) + "/held2?orphanDependents=false").status, 202);
  auto got = client().Get(std::string(kCm) + "/held");
  ASSERT_EQ(got.status, 200);
  EXPECT_TRUE(got.Json()["metadata"].contains("deletionTimestamp"));
  auto released =
      client().Patch(std::string(kCm) + "/held", {{"metadata", {{"finalizers", nullptr}}}});
  ASSERT_EQ(released.status, 200) << released.body;
  EXPECT_EQ(client().Get(std::string(kCm) + "/held").status, 404);
}

TEST_F(ApiServerTest, DeletePreconditions) {
  auto created = client().Post(kCm, ConfigMap("pre"));
  ASSERT_EQ(created.status, 201);
  json wrong = {
      {"kind", "DeleteOptions"}, {"apiVersion", "v1"}, {"preconditions", {{"uid", "not-the-uid"}}}};
  auto conflict = client().Delete(std::string(kCm) + "/pre", wrong.dump());
  EXPECT_EQ(conflict.status, 409);
  EXPECT_EQ(conflict.Json()["reason"], "Conflict");
  json stale_rv = {{"preconditions", {{"resourceVersion", "1"}}}};
  EXPECT_EQ(client().Delete(std::string(kCm) + "/pre", stale_rv.dump()).status, 409);
  EXPECT_EQ(client().Get(std::string(kCm) + "/pre").status, 200);
  json right = {{"preconditions", {{"uid", created.Json()["metadata"]["uid"]}}}};
  EXPECT_EQ(client().Delete(std::string(kCm) + "/pre", right.dump()).status, 200);
  EXPECT_EQ(client().Get(std::string(kCm) + "/pre").status, 404);
}

TEST_F(ApiServerTest, GarbageCollectionBackgroundOrphanForeground) {
  auto owner = client().Post(kCm, ConfigMap("owner")).Json();
  ASSERT_EQ(client().Post(kCm, ConfigMap("child-1", OwnerRef(owner))).status, 201);
  auto grand = client().Post(kCm, ConfigMap("child-2", OwnerRef(owner))).Json();
  ASSERT_EQ(client().Post(kCm, ConfigMap("grandchild", OwnerRef(grand))).status, 201);
  ASSERT_EQ(client().Delete(std::string(kCm) + "/owner").status, 200);
  EXPECT_TRUE(WaitFor([&] {
    return client().Get(std::string(kCm) + "/child-1").status == 404 &&
           client().Get(std::string(kCm) + "/child-2").status == 404 &&
           client().Get(std::string(kCm) + "/grandchild").status == 404;
  }));

  // Orphan keeps dependents and drops their owner references.
  auto owner2 = client().Post(kCm, ConfigMap("owner2")).Json();
  ASSERT_EQ(client().Post(kCm, ConfigMap("kept", OwnerRef(owner2))).status, 201);
  json orphan = {{"propagationPolicy", "Orphan"}};
  ASSERT_EQ(client().Delete(std::string(kCm) + "/owner2", orphan.dump()).status, 200);
  auto kept = client().Get(std::string(kCm) + "/kept");
  ASSERT_EQ(kept.status, 200);
  EXPECT_FALSE(kept.Json()["metadata"].contains("ownerReferences"));

  // Foreground: the owner waits (with the foregroundDeletion finalizer) for
  // dependents; a finalizer on a dependent holds both.
  auto owner3 = client().Post(kCm, ConfigMap("owner3")).Json();
  json held = ConfigMap("held-child", OwnerRef(owner3));
  held["metadata"]["finalizers"] = json::array({"example.com/hold"});
  ASSERT_EQ(client().Post(kCm, held).status, 201);
  json foreground = {{"propagationPolicy", "Foreground"}};
  ASSERT_EQ(client().Delete(std::string(kCm) + "/owner3", foreground.dump()).status, 200);
  auto waiting = client().Get(std::string(kCm) + "/owner3");
  ASSERT_EQ(waiting.status, 200);
  EXPECT_EQ(waiting.Json()["metadata"]["finalizers"][0], "foregroundDeletion");
  ASSERT_EQ(client()
                .Patch(std::string(kCm) + "/held-child", {{"metadata", {{"finalizers", nullptr}}}})
                .status,
            200);
  EXPECT_TRUE(WaitFor([&] {
    return client().Get(std::string(kCm) + "/held-child").status == 404 &&
           client().Get(std::string(kCm) + "/owner3").status == 404;
  }));

  // A dependent whose owner never existed is collected.
  json ghost_ref = {{"apiVersion", "v1"},
                    {"kind", "ConfigMap"},
                    {"name", "ghost"},
                    {"uid", "00000000-0000-0000-0000-000000000000"}};
  ASSERT_EQ(client().Post(kCm, ConfigMap("dangling", ghost_ref)).status, 201);
  EXPECT_TRUE(WaitFor([&] { return client().Get(std::string(kCm) + "/dangling").status == 404; }));
}

TEST_F(ApiServerTest, BindingAndGracefulDeletion) {
  ASSERT_EQ(client().Post("/api/v1/namespaces/default/pods", MakePod("b1")).status, 201);
  json binding = {{"apiVersion", "v1"},
                  {"kind", "Binding"},
                  {"metadata", {{"name", "b1"}}},
                  {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", "node-1"}}}};
  auto bound = client().Post("/api/v1/namespaces/default/pods/b1/binding", binding);
  ASSERT_EQ(bound.status, 201) << bound.body;
  EXPECT_EQ(bound.Json()["status"], "Success");
  auto pod = client().Get("/api/v1/namespaces/default/pods/b1").Json();
  EXPECT_EQ(pod["spec"]["nodeName"], "node-1");
  bool scheduled = false;
  for (const auto& c : pod["status"]["conditions"]) {
    if (c["type"] == "PodScheduled") scheduled = c["status"] == "True";
  }
  EXPECT_TRUE(scheduled);
  auto again = client().Post("/api/v1/namespaces/default/pods/b1/binding", binding);
  EXPECT_EQ(again.status, 409);
  EXPECT_EQ(again.Json()["reason"], "Conflict");
  EXPECT_EQ(client().Post("/api/v1/namespaces/default/pods/b9/binding", binding).status, 400);
  json missing_binding = binding;
  missing_binding["metadata"]["name"] = "nope";
  EXPECT_EQ(client().Post("/api/v1/namespaces/default/pods/nope/binding", missing_binding).status,
            404);

  // A bound pod terminates gracefully; an unbound one goes at once.
  auto graceful = client().Delete("/api/v1/namespaces/default/pods/b1");
  ASSERT_EQ(graceful.status, 200);
  EXPECT_EQ(graceful.Json()["metadata"]["deletionGracePeriodSeconds"], 30);
  EXPECT_EQ(client().Get("/api/v1/namespaces/default/pods/b1").status, 200);
  EXPECT_EQ(client().Delete("/api/v1/namespaces/default/pods/b1?gracePeriodSeconds=0").status, 200);
  EXPECT_EQ(client().Get("/api/v1/namespaces/default/pods/b1").status, 404);
  ASSERT_EQ(client().Post("/api/v1/namespaces/default/pods", MakePod("b2")).status, 201);
  EXPECT_EQ(client().Delete("/api/v1/namespaces/default/pods/b2").status, 200);
  EXPECT_EQ(client().Get("/api/v1/namespaces/default/pods/b2").status, 404);
}

TEST_F(ApiServerTest, BindFailureRate) {
  Options options;
  options.bind_failure_rate = 1.0;
  server_.reset();
  StartServer(options);
  ASSERT_EQ(client().Post("/api/v1/namespaces/default/pods", MakePod("f")).status, 201);
  json binding = {{"metadata", {{"name", "f"}}}, {"target", {{"name", "n"}}}};
  EXPECT_EQ(client().Post("/api/v1/namespaces/default/pods/f/binding", binding).status, 500);
  EXPECT_EQ(client().Get("/api/v1/namespaces/default/pods/f").Json()["spec"].value("nodeName", ""),
            "");
}

TEST_F(ApiServerTest, EvictionHonoursDisruptionBudget) {
  for (const char* name : {"e1", "e2"}) {
    ASSERT_EQ(
        client().Post("/api/v1/namespaces/default/pods", MakePod(name, {{"app", "e"}})).status,
        201);
    json binding = {{"metadata", {{"name", name}}}, {"target", {{"name", "node-1"}}}};
    ASSERT_EQ(
        client()
            .Post(std::string("/api/v1/namespaces/default/pods/") + name + "/binding", binding)
            .status,
        201);
    json status = {{"status",
                    {{"phase", "Running"},
                     {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
    ASSERT_EQ(client()
                  .Patch(std::string("/api/v1/namespaces/default/pods/") + name + "/status", status)
                  .status,
              200);
  }
  json pdb = {{"apiVersion", "policy/v1"},
              {"kind", "PodDisruptionBudget"},
              {"metadata", {{"name", "pdb"}}},
              {"spec", {{"minAvailable", 2}, {"selector", {{"matchLabels", {{"app", "e"}}}}}}}};
  ASSERT_EQ(client().Post("/apis/policy/v1/namespaces/default/poddisruptionbudgets", pdb).status,
            201);
  json eviction = {{"apiVersion", "policy/v1"},
                   {"kind", "Eviction"},
                   {"metadata", {{"name", "e1"}, {"namespace", "default"}}}};
  auto blocked = client().Post("/api/v1/namespaces/default/pods/e1/eviction", eviction);
  ASSERT_EQ(blocked.status, 429) << blocked.body;
  EXPECT_EQ(blocked.Json()["reason"], "TooManyRequests");
  EXPECT_EQ(blocked.Json()["message"],
            "Cannot evict pod as it would violate the pod's disruption budget.");
  EXPECT_FALSE(client()
                   .Get("/api/v1/namespaces/default/pods/e1")
                   .Json()["metadata"]
                   .contains("deletionTimestamp"));

  ASSERT_EQ(client()
                .Patch("/apis/policy/v1/namespaces/default/poddisruptionbudgets/pdb",
                       {{"spec", {{"minAvailable", 1}}}})
                .status,
            200);
  auto allowed = client().Post("/api/v1/namespaces/default/pods/e1/eviction", eviction);
  ASSERT_EQ(allowed.status, 201) << allowed.body;
  EXPECT_TRUE(client()
                  .Get("/api/v1/namespaces/default/pods/e1")
                  .Json()["metadata"]
                  .contains("deletionTimestamp"));
  // e1 is terminating, so evicting e2 now would leave none healthy.
  json eviction2 = eviction;
  eviction2["metadata"]["name"] = "e2";
  EXPECT_EQ(client().Post("/api/v1/namespaces/default/pods/e2/eviction", eviction2).status, 429);
}

json WidgetCrd() {
  return json::parse(R"({
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
      "group": "example.com",
      "scope": "Namespaced",
      "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"]},
      "versions": [{
        "name": "v1", "served": true, "storage": true,
        "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
        "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                                 "statusReplicasPath": ".status.replicas"}},
        "additionalPrinterColumns": [{"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"}]
      }]
    }
  })");
}

TEST_F(ApiServerTest, CustomResourceDefinitionLifecycle) {
  auto created =
      client().Post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", WidgetCrd());
  ASSERT_EQ(created.status, 201) << created.body;
  bool established = false;
  const json crd = created.Json();
  for (const auto& c : crd["status"]["conditions"]) {
    if (c["type"] == "Established") established = c["status"] == "True";
  }
  EXPECT_TRUE(established);
  auto discovery = client().Get("/apis/example.com/v1");
  ASSERT_EQ(discovery.status, 200);
  EXPECT_EQ(discovery.Json()["resources"][0]["name"], "widgets") << discovery.body;

  const std::string base = "/apis/example.com/v1/namespaces/default/widgets";
  json widget = {{"apiVersion", "example.com/v1"},
                 {"kind", "Widget"},
                 {"metadata", {{"name", "w1"}}},
                 {"spec", {{"replicas", 2}}},
                 {"status", {{"replicas", 5}}}};
  auto w = client().Post(base, widget);
  ASSERT_EQ(w.status, 201) << w.body;
  EXPECT_FALSE(w.Json().contains("status"));  // status subresource: dropped on create
  auto status = client().Patch(base + "/w1/status", {{"status", {{"replicas", 2}}}});
  ASSERT_EQ(status.status, 200) << status.body;
  EXPECT_EQ(status.Json()["status"]["replicas"], 2);
  auto scale = client().Get(base + "/w1/scale");
  ASSERT_EQ(scale.status, 200) << scale.body;
  EXPECT_EQ(scale.Json()["spec"]["replicas"], 2);
  EXPECT_EQ(scale.Json()["status"]["replicas"], 2);
  json new_scale = scale.Json();
  new_scale["spec"]["replicas"] = 4;
  ASSERT_EQ(client().Put(base + "/w1/scale", new_scale).status, 200);
  EXPECT_EQ(client().Get(base + "/w1").Json()["spec"]["replicas"], 4);
  EXPECT_EQ(client().Get(base + "/w1").Json()["metadata"]["generation"], 2);

  // Strategic merge is for built-in kinds only.
  auto smp = client().Patch(base + "/w1", {{"spec", {{"replicas", 1}}}},
                            "application/strategic-merge-patch+json");
  EXPECT_EQ(smp.status, 415);
  EXPECT_EQ(smp.Json()["reason"], "UnsupportedMediaType");

  auto table =
      client().Request("GET", base, {}, {}, "application/json;as=Table;v=v1;g=meta.k8s.io");
  ASSERT_EQ(table.status, 200) << table.body;
  EXPECT_EQ(table.Json()["columnDefinitions"][1]["name"], "Replicas");

  // A badly named CRD is rejected.
  json bad = WidgetCrd();
  bad["metadata"]["name"] = "gadgets.example.com";
  EXPECT_EQ(client().Post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", bad).status,
            422);

  WatchReader watch(port(), base + "?watch=true&resourceVersion=" +
                                w.Json()["metadata"]["resourceVersion"].get<std::string>());
  ASSERT_EQ(watch.status(), 200);
  auto first_event = watch.Next();
  ASSERT_TRUE(first_event);
  EXPECT_EQ((*first_event)["type"], "MODIFIED") << first_event->dump();
  ASSERT_EQ(
      client()
          .Delete("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com")
          .status,
      200);
  EXPECT_EQ(client().Get(base + "/w1").status, 404);
  EXPECT_EQ(client().Get("/apis/example.com/v1").status, 404);
  bool deleted = false;
  while (auto e = watch.Next(std::chrono::seconds(5))) {
    if ((*e)["type"] == "DELETED") deleted = true;
  }
  EXPECT_TRUE(deleted);
  EXPECT_TRUE(watch.WaitEnded());
}

TEST_F(ApiServerTest, ACrdVersionNoLongerServedEndsItsWatches) {
  ASSERT_EQ(
      client().Post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", WidgetCrd()).status,
      201);
  const std::string v1 = "/apis/example.com/v1/namespaces/default/widgets";
  WatchReader watch(port(), v1 + "?watch=true");
  ASSERT_EQ(watch.status(), 200);
  // The same CRD, now storing v2 and no longer serving v1.
  auto crd =
      client().Get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com");
  ASSERT_EQ(crd.status, 200) << crd.body;
  json updated = crd.Json();
  json v2 = updated["spec"]["versions"][0];
  v2["name"] = "v2";
  updated["spec"]["versions"][0]["served"] = false;
  updated["spec"]["versions"][0]["storage"] = false;
  updated["spec"]["versions"].push_back(v2);
  auto put = client().Put(
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com", updated);
  ASSERT_EQ(put.status, 200) << put.body;
  EXPECT_TRUE(watch.WaitEnded());
  EXPECT_EQ(client().Get(v1).status, 404);
  EXPECT_EQ(client().Get("/apis/example.com/v2/namespaces/default/widgets").status, 200);
}

TEST_F(ApiServerTest, NamespaceDeletionRemovesContent) {
  json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "team"}}}};
  ASSERT_EQ(client().Post("/api/v1/namespaces", ns).status, 201);
  ASSERT_EQ(client().Post("/api/v1/namespaces/team/configmaps", ConfigMap("c")).status, 201);
  ASSERT_EQ(client().Post("/api/v1/namespaces/team/pods", MakePod("p", {}, "team")).status, 201);
  EXPECT_EQ(client().Delete("/api/v1/namespaces/team").status, 200);
  EXPECT_EQ(client().Get("/api/v1/namespaces/team").status, 404);
  EXPECT_EQ(client().Get("/api/v1/namespaces/team/configmaps/c").status, 404);
  EXPECT_EQ(client().Delete("/api/v1/namespaces/default").status, 403);
}

TEST_F(ApiServerTest, PriorityAdmission) {
  json pc = {{"apiVersion", "scheduling.k8s.io/v1"},
             {"kind", "PriorityClass"},
             {"metadata", {{"name", "high"}}},
             {"value", 1000}};
  ASSERT_EQ(client().Post("/apis/scheduling.k8s.io/v1/priorityclasses", pc).status, 201);
  json pod = MakePod("prio");
  pod["spec"]["priorityClassName"] = "high";
  auto created = client().Post("/api/v1/namespaces/default/pods", pod);
  ASSERT_EQ(created.status, 201);
  EXPECT_EQ(created.Json()["spec"]["priority"], 1000);
  json missing = MakePod("prio2");
  missing["spec"]["priorityClassName"] = "nope";
  EXPECT_EQ(client().Post("/api/v1/namespaces/default/pods", missing).status, 403);
}

}  // namespace lifecycle_test
}  // namespace copse::apiserver::testing
