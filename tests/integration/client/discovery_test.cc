// Discovery, ServedInformer and Eviction versions against the embedded API
// server, as it is by default and made to look like v1.20 (PodDisruptionBudgets
// and Evictions only in policy/v1beta1, no scheduling.k8s.io/v1alpha2).

#include "kube/discovery.h"

#include <gtest/gtest.h>

#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "kube/pod_disruption_budget.h"
#include "kube/pod_group.h"
#include "kube/served_informer.h"
#include "tests/integration/client/fixture.h"

namespace copse::kube {
namespace {

using nlohmann::json;

const ResourceRef kPdbV1 = resources::kPodDisruptionBudgets;
const ResourceRef kPdbV1beta1 = resources::kPodDisruptionBudgetsV1beta1;

bool WaitUntil(const std::function<bool()>& condition,
               std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return condition();
}

apiserver::StoreOptions V120Apis() {
  apiserver::StoreOptions options;
  options.served_versions = {{"poddisruptionbudgets.policy", {"v1beta1"}},
                             {"podgroups.scheduling.k8s.io", {}},
                             {"workloads.scheduling.k8s.io", {}}};
  return options;
}

struct Server {
  explicit Server(apiserver::StoreOptions store_options = {}) {
    apiserver::Options options;
    options.store = apiserver::NewStore(std::move(store_options));
    server = testing::StartServer(options);
    if (server) client = testing::HttpClient(io, *server);
  }
  apiserver::Store& store() { return server->store(); }
  IoThread io{1};
  std::unique_ptr<apiserver::ApiServer> server;
  std::shared_ptr<Client> client;
};

// Collects ServedInformer log lines.
struct LogLines {
  std::function<void(const std::string&)> Sink() {
    return [this](const std::string& line) {
      std::lock_guard lock(mu);
      lines.push_back(line);
    };
  }
  std::vector<std::string> Get() {
    std::lock_guard lock(mu);
    return lines;
  }
  std::mutex mu;
  std::vector<std::string> lines;
};

TEST(DiscoveryIntegration, ReadsTheEmbeddedServersApis) {
  Server s;
  ASSERT_NE(s.client, nullptr);
  auto discovery = Discovery::ReadBlocking(s.client);
  ASSERT_TRUE(discovery.ok()) << discovery.error().ToString();
  EXPECT_TRUE(discovery->ServesGroupVersion("", "v1"));
  EXPECT_TRUE(discovery->ServesGroupVersion("policy", "v1"));
  EXPECT_FALSE(discovery->ServesGroupVersion("policy", "v1beta1"));
  EXPECT_TRUE(discovery->Serves(resources::kPods));
  EXPECT_TRUE(discovery->Serves(resources::kPodGroups));
  EXPECT_EQ(discovery->FirstServed({kPdbV1, kPdbV1beta1}), kPdbV1);
  EXPECT_EQ(discovery->EvictionApiVersion(), "policy/v1");
  EXPECT_TRUE(discovery->failures().empty());
}

TEST(DiscoveryIntegration, AV120LikeServerHasPdbsOnlyInV1beta1AndNoV1alpha2) {
  Server s(V120Apis());
  ASSERT_NE(s.client, nullptr);
  auto discovery = Discovery::ReadBlocking(s.client, {"", "policy", "scheduling.k8s.io"});
  ASSERT_TRUE(discovery.ok()) << discovery.error().ToString();
  EXPECT_FALSE(discovery->ServesGroupVersion("policy", "v1"));
  EXPECT_EQ(discovery->FirstServed({kPdbV1, kPdbV1beta1}), kPdbV1beta1);
  EXPECT_FALSE(discovery->FirstServed({resources::kPodGroups}).has_value());
  EXPECT_EQ(discovery->EvictionApiVersion(), "policy/v1beta1");
  // Groups not asked for are known by name but their resources are not read.
  EXPECT_TRUE(discovery->ServesGroupVersion("apps", "v1"));
  EXPECT_EQ(discovery->Find("apps", "v1", "deployments"), nullptr);
}

TEST(DiscoveryIntegration, EvictionTakesTheVersionTheServerNames) {
  Server s(V120Apis());
  ASSERT_NE(s.client, nullptr);
  ASSERT_TRUE(
      s.io.Run(s.client->Create(resources::kPods, "default", testing::PodJson("default", "victim")))
          .ok());
  // policy/v1 is refused as v1.20 refuses it, and nothing happens to the pod.
  Status v1 = s.io.Run(s.client->Evict("default", "victim", {}, "policy/v1"));
  ASSERT_FALSE(v1.ok());
  EXPECT_EQ(v1.error().code, ErrorCode::kInvalid);
  EXPECT_NE(v1.error().message.find("no kind \"Eviction\" is registered for version \"policy/v1\""),
            std::string::npos)
      << v1.error().message;
  ASSERT_TRUE(s.store().Get(resources::kPods, "default", "victim").ok());
  auto discovery = Discovery::ReadBlocking(s.client, {""});
  ASSERT_TRUE(discovery.ok());
  Status evicted =
      s.io.Run(s.client->Evict("default", "victim", {}, discovery->EvictionApiVersion()));
  EXPECT_TRUE(evicted.ok()) << evicted.error().ToString();
  EXPECT_FALSE(s.store().Get(resources::kPods, "default", "victim").ok())
      << "an unbound pod goes at once";
}

TEST(ServedInformerIntegration, UsesTheVersionTheServerServes) {
  Server s(V120Apis());
  ASSERT_NE(s.client, nullptr);
  ASSERT_TRUE(
      s.store()
          .Create(
              kPdbV1beta1, "default",
              R"({"apiVersion":"policy/v1beta1","kind":"PodDisruptionBudget","metadata":{"name":"guard","namespace":"default"},"spec":{"minAvailable":1,"selector":{}}})")
          .ok());
  auto discovery = Discovery::ReadBlocking(s.client, {"policy"});
  ASSERT_TRUE(discovery.ok());
  LogLines log;
  ServedInformerOptions options;
  options.candidates = {kPdbV1, kPdbV1beta1};
  options.without = "budgets are ignored";
  options.log = log.Sink();
  TypedServedInformer<PodDisruptionBudget> informer(s.client, options);
  informer.Start(&*discovery);
  ASSERT_TRUE(informer.WaitForSync(std::chrono::seconds(10))) << informer.Describe();
  EXPECT_EQ(informer.resource(), kPdbV1beta1);
  EXPECT_EQ(informer.Describe(), "policy/v1beta1 poddisruptionbudgets: synced");
  auto guard = informer.Get("default", "guard");
  ASSERT_NE(guard, nullptr);
  EXPECT_EQ(guard->api_version, "policy/v1beta1");
  // v1beta1: an empty selector selects no pod (policy/v1's selects all).
  EXPECT_FALSE(guard->spec.selector.has_value());
  EXPECT_TRUE(log.Get().empty());
  informer.Stop();
}

TEST(ServedInformerIntegration, NothingServedIsSyncedAndSaidOnce) {
  Server s(V120Apis());
  ASSERT_NE(s.client, nullptr);
  auto discovery = Discovery::ReadBlocking(s.client, {"scheduling.k8s.io"});
  ASSERT_TRUE(discovery.ok());
  LogLines log;
  ServedInformerOptions options;
  options.candidates = {resources::kPodGroups};
  options.without = "Workload gangs are not scheduled as gangs";
  options.log = log.Sink();
  TypedServedInformer<PodGroup> informer(s.client, options);
  informer.Start(&*discovery);
  EXPECT_TRUE(informer.HasSynced());
  EXPECT_TRUE(informer.WaitForSync(std::chrono::milliseconds(0)));
  EXPECT_FALSE(informer.resource().has_value());
  EXPECT_TRUE(informer.List().empty());
  EXPECT_EQ(informer.Describe(), "scheduling.k8s.io/v1alpha2 podgroups: not served");
  ASSERT_EQ(log.Get().size(), 1u);
  EXPECT_EQ(log.Get()[0],
            "the API server serves no scheduling.k8s.io/v1alpha2 podgroups: Workload gangs are "
            "not scheduled as gangs");
  informer.Stop();
}

std::string WidgetCrd(const std::string& resource_version, bool v2_served) {
  json crd = {
      {"apiVersion", "apiextensions.k8s.io/v1"},
      {"kind", "CustomResourceDefinition"},
      {"metadata", {{"name", "widgets.example.com"}}},
      {"spec",
       {{"group", "example.com"},
        {"scope", "Namespaced"},
        {"names", {{"plural", "widgets"}, {"singular", "widget"}, {"kind", "Widget"}}},
        {"versions",
         json::array(
             {{{"name", "v2"},
               {"served", v2_served},
               {"storage", true},
               {"schema",
                {{"openAPIV3Schema",
                  {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}}}}},
              {{"name", "v1"},
               {"served", true},
               {"storage", false},
               {"schema",
                {{"openAPIV3Schema",
                  {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}}}}}})}}}};
  if (!resource_version.empty()) crd["metadata"]["resourceVersion"] = resource_version;
  return crd.dump();
}

// The informer watches v2; the CRD then stops serving v2. Its next watch
// gets 404, discovery is read again, and it moves to v1: the widget is
// deleted and added again through the handlers, and it syncs.
TEST(ServedInformerIntegration, MovesToAnotherVersionAfterA404) {
  Server s;
  ASSERT_NE(s.client, nullptr);
  auto crd = s.store().Create(resources::kCustomResourceDefinitions, "", WidgetCrd("", true));
  ASSERT_TRUE(crd.ok()) << crd.error().ToString();
  const ResourceRef v2{"example.com", "v2", "widgets", true};
  const ResourceRef v1{"example.com", "v1", "widgets", true};
  ASSERT_TRUE(
      s.store()
          .Create(
              v2, "default",
              R"({"apiVersion":"example.com/v2","kind":"Widget","metadata":{"name":"w","namespace":"default"}})")
          .ok());
  auto discovery = Discovery::ReadBlocking(s.client, {"example.com"});
  ASSERT_TRUE(discovery.ok());
  LogLines log;
  ServedInformerOptions options;
  options.candidates = {v2, v1};
  options.without = "no widgets";
  options.rediscovery_interval = std::chrono::milliseconds(0);
  options.informer.backoff.initial = std::chrono::milliseconds(20);
  options.informer.backoff.max = std::chrono::milliseconds(100);
  options.log = log.Sink();
  ServedInformer informer(s.client, options);
  std::mutex mu;
  std::vector<std::string> events;
  EventHandler handler;
  handler.on_add = [&](const ObjectPtr& o) {
    std::lock_guard lock(mu);
    events.push_back("add " + o->meta.name + " " + o->api_version);
  };
  handler.on_delete = [&](const ObjectPtr& o) {
    std::lock_guard lock(mu);
    events.push_back("delete " + o->meta.name);
  };
  informer.AddEventHandler(handler);
  informer.Start(&*discovery);
  ASSERT_TRUE(informer.WaitForSync(std::chrono::seconds(10))) << informer.Describe();
  EXPECT_EQ(informer.resource(), v2);

  auto current = s.store().Get(resources::kCustomResourceDefinitions, "", "widgets.example.com");
  ASSERT_TRUE(current.ok());
  ASSERT_TRUE(s.store()
                  .Update(resources::kCustomResourceDefinitions, "", "widgets.example.com",
                          WidgetCrd(testing::Meta((*current)->json).resource_version, false))
                  .ok());
  // The server ends the watches of the version it no longer serves (as
  // kube-apiserver's CRD handler does); the informer watches again, on v2:
  // 404, and moves to v1.
  ASSERT_TRUE(WaitUntil([&] { return informer.resource() == v1 && informer.HasSynced(); }))
      << informer.Describe();
  {
    // Released before Stop(): the informer's thread takes `mu` in the
    // handlers while it holds the informer's lock, which Stop() takes
    // (ThreadSanitizer reported the lock-order inversion).
    std::lock_guard lock(mu);
    ASSERT_EQ(events.size(), 3u);
    EXPECT_EQ(events[0], "add w example.com/v2");
    EXPECT_EQ(events[1], "delete w");
    EXPECT_EQ(events[2], "add w example.com/v1");
  }
  ASSERT_EQ(log.Get().size(), 1u);
  EXPECT_NE(log.Get()[0].find("from example.com/v2 widgets to example.com/v1 widgets"),
            std::string::npos)
      << log.Get()[0];
  informer.Stop();
}

// A CRD that is not installed when copse starts: nothing to wait for
// (the scheduler used to wait 2 s for it at every start), and its objects
// arrive once it is installed.
TEST(ServedInformerIntegration, ACrdNotInstalledYetIsSyncedAtOnceAndPickedUpLater) {
  Server s;
  ASSERT_NE(s.client, nullptr);
  auto discovery = Discovery::ReadBlocking(s.client, {"example.com"});
  ASSERT_TRUE(discovery.ok());
  const ResourceRef v1{"example.com", "v1", "widgets", true};
  LogLines log;
  ServedInformerOptions options;
  options.candidates = {v1};
  options.without = "no widgets until the CRD is installed";
  options.wait_until_served = true;
  options.informer.backoff.initial = std::chrono::milliseconds(20);
  options.informer.backoff.max = std::chrono::milliseconds(100);
  options.log = log.Sink();
  ServedInformer informer(s.client, options);
  std::mutex mu;
  std::vector<std::string> added;
  EventHandler handler;
  handler.on_add = [&](const ObjectPtr& o) {
    std::lock_guard lock(mu);
    added.push_back(o->meta.name);
  };
  informer.AddEventHandler(handler);
  informer.Start(&*discovery);
  EXPECT_TRUE(informer.HasSynced()) << informer.Describe();
  EXPECT_TRUE(informer.WaitForSync(std::chrono::milliseconds(0)));
  EXPECT_EQ(informer.resource(), v1) << "it watches for the resource meanwhile";
  ASSERT_EQ(log.Get().size(), 1u);

  ASSERT_TRUE(
      s.store().Create(resources::kCustomResourceDefinitions, "", WidgetCrd("", false)).ok());
  ASSERT_TRUE(
      s.store()
          .Create(
              v1, "default",
              R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"}})")
          .ok());
  EXPECT_TRUE(WaitUntil([&] {
    std::lock_guard lock(mu);
    return added == std::vector<std::string>{"w"};
  })) << informer.Describe();
  informer.Stop();
}

TEST(ServedInformerIntegration, AnUnsyncedInformerTellsItsLastError) {
  apiserver::Options options;
  options.token = "secret";
  auto server = testing::StartServer(options);
  ASSERT_NE(server, nullptr);
  IoThread io(1);
  auto client = testing::HttpClient(io, *server, "wrong");
  ServedInformerOptions served;
  served.candidates = {resources::kPods};
  served.wait_until_served = true;
  served.informer.backoff.initial = std::chrono::milliseconds(20);
  ServedInformer informer(client, served);
  informer.Start(nullptr);  // no discovery: the first candidate
  ASSERT_TRUE(WaitUntil([&] { return informer.last_error().has_value(); }));
  EXPECT_FALSE(informer.HasSynced());
  EXPECT_EQ(informer.last_error()->code, ErrorCode::kUnauthorized);
  const std::string describe = informer.Describe();
  EXPECT_EQ(describe.rfind("v1 pods: not synced (last error: Unauthorized", 0), 0u) << describe;
  informer.Stop();
}

}  // namespace
}  // namespace copse::kube
