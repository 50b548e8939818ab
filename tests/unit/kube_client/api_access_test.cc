// The API access tables (kube/api_access.h): request classification as
// kube-apiserver's RequestInfo does it for RBAC, the check, and a client
// given a table refusing a call outside it before anything is sent.

#include "kube/api_access.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "kube/client.h"

namespace copse::kube {
namespace {

struct Case {
  const char* method;
  const char* target;
  const char* verb;
  const char* group;
  const char* resource;
  const char* subresource;
  const char* ns;
  const char* name;
};

TEST(ApiAccess, ClassifiesRequestsAsRbacDoes) {
  const Case cases[] = {
      {"GET", "/api/v1/pods", "list", "", "pods", "", "", ""},
      {"GET", "/api/v1/pods?watch=1&resourceVersion=5", "watch", "", "pods", "", "", ""},
      {"GET", "/api/v1/namespaces/a/pods?watch=true", "watch", "", "pods", "", "a", ""},
      {"GET", "/api/v1/namespaces/a/pods?watch=0", "list", "", "pods", "", "a", ""},
      {"GET", "/api/v1/namespaces/a/pods/p", "get", "", "pods", "", "a", "p"},
      {"POST", "/api/v1/namespaces/a/pods/p/binding", "create", "", "pods", "binding", "a", "p"},
      {"PATCH", "/api/v1/namespaces/a/pods/p/status?fieldManager=x", "patch", "", "pods", "status",
       "a", "p"},
      {"DELETE", "/api/v1/namespaces/a/pods/p", "delete", "", "pods", "", "a", "p"},
      {"DELETE", "/api/v1/namespaces/a/pods", "deletecollection", "", "pods", "", "a", ""},
      {"PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l", "update",
       "coordination.k8s.io", "leases", "", "kube-system", "l"},
      {"GET", "/apis/policy/v1beta1/poddisruptionbudgets", "list", "policy", "poddisruptionbudgets",
       "", "", ""},
      {"GET", "/api/v1/nodes/n", "get", "", "nodes", "", "", "n"},
      // The namespace itself, and its own subresources.
      {"GET", "/api/v1/namespaces/a", "get", "", "namespaces", "", "", "a"},
      {"PUT", "/api/v1/namespaces/a/finalize", "update", "", "namespaces", "finalize", "", "a"},
      {"GET", "/api/v1/namespaces", "list", "", "namespaces", "", "", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.method) + " " + c.target);
    const ApiRequest r = ClassifyApiRequest(c.method, c.target);
    EXPECT_TRUE(r.resource_request);
    EXPECT_EQ(r.verb, c.verb);
    EXPECT_EQ(r.group, c.group);
    EXPECT_EQ(r.resource, c.resource);
    EXPECT_EQ(r.subresource, c.subresource);
    EXPECT_EQ(r.namespace_, c.ns);
    EXPECT_EQ(r.name, c.name);
  }
}

TEST(ApiAccess, DiscoveryAndOtherPathsAreNonResourceRequests) {
  for (const char* target : {"/api", "/apis", "/api/v1", "/apis/policy", "/apis/policy/v1",
                             "/version", "/healthz", "/openapi/v2"}) {
    EXPECT_FALSE(ClassifyApiRequest("GET", target).resource_request) << target;
    EXPECT_TRUE(CheckApiAccess(SchedulerApiAccess(), "GET", target).ok()) << target;
  }
}

TEST(ApiAccess, TheSchedulersTableAllowsItsCallsAndNothingElse) {
  const ApiAccessTable& t = SchedulerApiAccess();
  EXPECT_TRUE(CheckApiAccess(t, "POST", "/api/v1/namespaces/a/pods/p/binding").ok());
  EXPECT_TRUE(CheckApiAccess(t, "GET", "/apis/policy/v1beta1/poddisruptionbudgets?watch=1").ok());
  EXPECT_TRUE(
      CheckApiAccess(t, "PUT",
                     "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/copse-scheduler")
          .ok());
  // The ops port's delegation: reviews, and the client CA's ConfigMap (read only).
  EXPECT_TRUE(CheckApiAccess(t, "POST", "/apis/authentication.k8s.io/v1/tokenreviews").ok());
  EXPECT_TRUE(CheckApiAccess(t, "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews").ok());
  EXPECT_TRUE(CheckApiAccess(t, "GET",
                             "/api/v1/namespaces/kube-system/configmaps?fieldSelector=metadata."
                             "name%3Dextension-apiserver-authentication&watch=1")
                  .ok());
  EXPECT_FALSE(CheckApiAccess(t, "POST", "/api/v1/namespaces/kube-system/configmaps").ok());
  // The scheduler creates no pods, writes no Services and evicts nothing.
  Status create = CheckApiAccess(t, "POST", "/api/v1/namespaces/a/pods");
  ASSERT_FALSE(create.ok());
  EXPECT_EQ(create.error().code, ErrorCode::kForbidden);
  EXPECT_EQ(
      create.error().message,
      "copse run may not create pods (POST /api/v1/namespaces/a/pods): the call is not in its "
      "API access table. Add it to the table in kube/api_access.cc and to the component's "
      "role in deploy/manifests/base, or do not make it");
  Status eviction = CheckApiAccess(t, "POST", "/api/v1/namespaces/a/pods/p/eviction");
  ASSERT_FALSE(eviction.ok());
  EXPECT_NE(eviction.error().message.find("may not create pods/eviction"), std::string::npos);
  Status status_update = CheckApiAccess(t, "PUT", "/api/v1/namespaces/a/pods/p/status");
  ASSERT_FALSE(status_update.ok());
  EXPECT_NE(status_update.error().message.find("may not update pods/status"), std::string::npos);
  Status group =
      CheckApiAccess(t, "DELETE", "/apis/scheduling.copse.dev/v1alpha1/namespaces/a/podgroups/g");
  ASSERT_FALSE(group.ok());
  EXPECT_NE(group.error().message.find("may not delete podgroups.scheduling.copse.dev"),
            std::string::npos);
}

TEST(ApiAccess, TablesNameEveryVerbAsRbacSpellsIt) {
  const std::set<std::string> rbac = {"get",    "list",  "watch",  "create",
                                      "update", "patch", "delete", "deletecollection"};
  for (const ApiAccessTable* t : {&SchedulerApiAccess(), &GroveApiAccess()}) {
    EXPECT_FALSE(t->rules.empty());
    for (const ApiAccessRule& rule : t->rules) {
      EXPECT_FALSE(rule.resource.empty()) << t->component;
      EXPECT_FALSE(rule.why.empty()) << t->component << " " << rule.Name();
      EXPECT_FALSE(rule.verbs.empty()) << t->component << " " << rule.Name();
      for (const std::string& verb : rule.verbs) {
        EXPECT_TRUE(rbac.contains(verb)) << t->component << " " << rule.Name() << ": " << verb;
      }
    }
  }
}

// A client given a table refuses before connecting: the server address is
// one nothing listens on, so only the check can answer.
TEST(ApiAccess, TheClientRefusesACallOutsideItsTableBeforeSendingIt) {
  IoThread io(1);
  ClientConfig config;
  config.server = "http://127.0.0.1:1";
  config.timeout = std::chrono::milliseconds(2000);
  config.api_access = &SchedulerApiAccess();
  auto client = Client::Create(config, io.executor());
  ASSERT_TRUE(client.ok());
  auto created = io.Run((*client)->Create(resources::kServices, "default", "{}"));
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.error().code, ErrorCode::kForbidden);
  EXPECT_NE(created.error().message.find("copse run may not create services"), std::string::npos)
      << created.error().message;
  auto watch = io.Run((*client)->Watch(resources::kServices, ""));
  ASSERT_FALSE(watch.ok());
  EXPECT_NE(watch.error().message.find("copse run may not watch services"), std::string::npos)
      << watch.error().message;
  // A call in the table goes out (and fails to connect).
  auto listed = io.Run((*client)->List(resources::kPods, ""));
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.error().code, ErrorCode::kUnavailable) << listed.error().ToString();
}

}  // namespace
}  // namespace copse::kube
