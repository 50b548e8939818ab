// Discovery::FromDocuments on documents shaped as v1.20.2's and v1.32's
// (trimmed to the fields discovery reads).

#include "kube/discovery.h"

#include <gtest/gtest.h>

#include <string>

namespace copse::kube {
namespace {

constexpr const char* kApi = R"({"kind":"APIVersions","versions":["v1"]})";

constexpr const char* kApisV120 = R"({"kind":"APIGroupList","groups":[
  {"name":"apps","versions":[{"groupVersion":"apps/v1","version":"v1"}]},
  {"name":"policy","versions":[{"groupVersion":"policy/v1beta1","version":"v1beta1"}],
   "preferredVersion":{"groupVersion":"policy/v1beta1","version":"v1beta1"}},
  {"name":"coordination.k8s.io","versions":[{"groupVersion":"coordination.k8s.io/v1","version":"v1"},
   {"groupVersion":"coordination.k8s.io/v1beta1","version":"v1beta1"}]}]})";

constexpr const char* kCoreV120 = R"({"kind":"APIResourceList","groupVersion":"v1","resources":[
  {"name":"pods","singularName":"","namespaced":true,"kind":"Pod","verbs":["create","delete","get","list","watch"]},
  {"name":"pods/binding","singularName":"","namespaced":true,"kind":"Binding","verbs":["create"]},
  {"name":"pods/eviction","singularName":"","namespaced":true,"group":"policy","version":"v1beta1","kind":"Eviction","verbs":["create"]},
  {"name":"nodes","singularName":"","namespaced":false,"kind":"Node","verbs":["get","list","watch"]}]})";

constexpr const char* kPolicyV1beta1 =
    R"({"kind":"APIResourceList","groupVersion":"policy/v1beta1","resources":[
  {"name":"poddisruptionbudgets","singularName":"","namespaced":true,"kind":"PodDisruptionBudget","verbs":["list","watch"]}]})";

TEST(Discovery, AV120ServerHasPdbsAndEvictionsOnlyInV1beta1) {
  auto d = Discovery::FromDocuments(kApi, kApisV120, {kCoreV120, kPolicyV1beta1});
  ASSERT_TRUE(d.ok()) << d.error().ToString();
  EXPECT_EQ(d->group_versions(),
            (std::vector<std::string>{"v1", "apps/v1", "policy/v1beta1", "coordination.k8s.io/v1",
                                      "coordination.k8s.io/v1beta1"}));
  EXPECT_TRUE(d->ServesGroupVersion("policy", "v1beta1"));
  EXPECT_FALSE(d->ServesGroupVersion("policy", "v1"));
  EXPECT_EQ(
      d->FirstServed({resources::kPodDisruptionBudgets, resources::kPodDisruptionBudgetsV1beta1}),
      resources::kPodDisruptionBudgetsV1beta1);
  EXPECT_FALSE(d->FirstServed({resources::kLeases}).has_value())
      << "coordination's list was not read";
  EXPECT_EQ(d->EvictionApiVersion(), "policy/v1beta1");
  const DiscoveredResource* nodes = d->Find("", "v1", "nodes");
  ASSERT_NE(nodes, nullptr);
  EXPECT_FALSE(nodes->namespaced);
  EXPECT_EQ(nodes->kind, "Node");
  EXPECT_EQ(nodes->verbs, (std::vector<std::string>{"get", "list", "watch"}));
}

TEST(Discovery, ANewerServerTakesPolicyV1Evictions) {
  constexpr const char* kCore = R"({"kind":"APIResourceList","groupVersion":"v1","resources":[
    {"name":"pods/eviction","namespaced":true,"group":"policy","version":"v1","kind":"Eviction","verbs":["create"]}]})";
  auto d = Discovery::FromDocuments(kApi, R"({"groups":[]})", {kCore});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->EvictionApiVersion(), "policy/v1");
  // Without the core list the default is the newest.
  auto bare = Discovery::FromDocuments(kApi, R"({"groups":[]})", {});
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->EvictionApiVersion(), "policy/v1");
}

TEST(Discovery, BadDocumentsAreErrorsNamingThem) {
  auto api = Discovery::FromDocuments("[", R"({"groups":[]})", {});
  ASSERT_FALSE(api.ok());
  EXPECT_EQ(api.error().code, ErrorCode::kInvalid);
  EXPECT_EQ(api.error().message, "discovery: /api is not a JSON object");
  auto list = Discovery::FromDocuments(kApi, R"({"groups":[]})", {R"({"resources":[]})"});
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.error().message, "discovery: an APIResourceList has no groupVersion");
}

// The client's depth limit (Kubernetes' 10,000 levels), as its other decoders
// apply it to what servers send.
TEST(Discovery, DocumentsNestedBeyondTheLimitAreRefused) {
  std::string deep = R"({"kind":"APIGroupList","groups":[],"x":)";
  deep.append(10000, '[');
  deep.append(10000, ']');
  deep += '}';
  auto refused = Discovery::FromDocuments(kApi, deep, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "discovery: /apis is JSON nested deeper than 10000 levels");
}

}  // namespace
}  // namespace copse::kube
