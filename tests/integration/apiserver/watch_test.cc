// Watches: initial state, live events, resume, 410 Gone, selectors,
// bookmarks, timeouts, CloseWatches; and the node simulator.

#include <set>

#include "apiserver/node_simulator.h"
#include "tests/integration/apiserver/test_util.h"

namespace copse::apiserver::testing {
namespace {

constexpr const char* kPods = "/api/v1/namespaces/default/pods";

std::string Rv(const json& obj) { return obj["metadata"]["resourceVersion"]; }

TEST_F(ApiServerTest, WatchInitialLiveAndResume) {
  auto first = client().Post(kPods, MakePod("w1")).Json();
  WatchReader watch(port(), std::string(kPods) + "?watch=true");
  ASSERT_EQ(watch.status(), 200);
  auto added = watch.Next();
  ASSERT_TRUE(added);
  EXPECT_EQ((*added)["type"], "ADDED");
  EXPECT_EQ((*added)["object"]["metadata"]["name"], "w1");

  auto second = client().Post(kPods, MakePod("w2")).Json();
  auto labeled =
      client().Patch(std::string(kPods) + "/w1", {{"metadata", {{"labels", {{"a", "b"}}}}}});
  ASSERT_EQ(client().Delete(std::string(kPods) + "/w2").status, 200);
  std::vector<std::string> types;
  for (int i = 0; i < 3; ++i) {
    auto e = watch.Next();
    ASSERT_TRUE(e);
    types.push_back((*e)["type"]);
    if ((*e)["type"] == "DELETED") {
      EXPECT_EQ((*e)["object"]["metadata"]["name"], "w2");
      EXPECT_GT(std::stoull(Rv((*e)["object"])), std::stoull(Rv(second)));
    }
  }
  EXPECT_EQ(types, (std::vector<std::string>{"ADDED", "MODIFIED", "DELETED"}));

  // Resume from the first object's version: every later change, in order.
  WatchReader resumed(port(), std::string(kPods) + "?watch=1&resourceVersion=" + Rv(first));
  std::vector<std::string> replay;
  for (int i = 0; i < 3; ++i) {
    auto e = resumed.Next();
    ASSERT_TRUE(e);
    replay.push_back((*e)["type"]);
  }
  EXPECT_EQ(replay, types);

  // /watch/ paths too.
  WatchReader legacy(port(), "/api/v1/watch/namespaces/default/pods");
  auto e = legacy.Next();
  ASSERT_TRUE(e);
  EXPECT_EQ((*e)["object"]["metadata"]["name"], "w1");
}

// A stream that has just written holds what comes next for
// watch_write_interval, then writes it together: a burst of changes is a
// few chunks, not one write (and one client wake-up) per event.
TEST_F(ApiServerTest, WatchWritesEventsThatFollowAWriteTogether) {
  server_.reset();
  Options options;
  options.watch_write_interval = std::chrono::milliseconds(300);
  StartServer(options);
  WatchReader watch(port(), std::string(kPods) + "?watch=true");
  ASSERT_EQ(watch.status(), 200);
  ASSERT_TRUE(store().Create(resources::kPods, "default", MakePod("first").dump()).ok());
  auto first = watch.NextWithChunk();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->first["object"]["metadata"]["name"], "first");
  // Created within the interval that follows the first write.
  for (const char* name : {"b", "c", "d"}) {
    ASSERT_TRUE(store().Create(resources::kPods, "default", MakePod(name).dump()).ok());
  }
  std::vector<std::string> names;
  std::set<size_t> chunks;
  for (int i = 0; i < 3; ++i) {
    auto e = watch.NextWithChunk();
    ASSERT_TRUE(e);
    names.push_back(e->first["object"]["metadata"]["name"]);
    chunks.insert(e->second);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"b", "c", "d"}));
  ASSERT_EQ(chunks.size(), 1u) << "the held events were written in separate chunks";
  EXPECT_GT(*chunks.begin(), first->second);
}

TEST_F(ApiServerTest, WatchGoneWhenHistoryTrimmed) {
  server_.reset();
  StoreOptions small;
  small.watch_history = 3;
  StartServer(Options{}, small);
  auto first = client().Post(kPods, MakePod("g0")).Json();
  for (int i = 1; i < 8; ++i) {
    ASSERT_EQ(client().Post(kPods, MakePod("g" + std::to_string(i))).status, 201);
  }
  WatchReader watch(port(), std::string(kPods) + "?watch=true&resourceVersion=" + Rv(first));
  EXPECT_EQ(watch.status(), 200);
  auto e = watch.Next();
  ASSERT_TRUE(e);
  EXPECT_EQ((*e)["type"], "ERROR");
  EXPECT_EQ((*e)["object"]["code"], 410);
  EXPECT_EQ((*e)["object"]["reason"], "Expired");
  EXPECT_TRUE(watch.WaitEnded());
  // The current version still works.
  const std::string now = client().Get(kPods).Json()["metadata"]["resourceVersion"];
  WatchReader fresh(port(), std::string(kPods) + "?watch=true&resourceVersion=" + now);
  ASSERT_EQ(client().Post(kPods, MakePod("g8")).status, 201);
  auto live = fresh.Next();
  ASSERT_TRUE(live);
  EXPECT_EQ((*live)["type"], "ADDED");
  EXPECT_EQ((*live)["object"]["metadata"]["name"], "g8");
}

TEST_F(ApiServerTest, WatchSelectorsSeeObjectsLeave) {
  ASSERT_EQ(client().Post(kPods, MakePod("s1", {{"team", "a"}})).status, 201);
  ASSERT_EQ(client().Post(kPods, MakePod("s2", {{"team", "b"}})).status, 201);
  WatchReader watch(port(), std::string(kPods) + "?watch=true&labelSelector=team%3Da");
  auto initial = watch.Next();
  ASSERT_TRUE(initial);
  EXPECT_EQ((*initial)["object"]["metadata"]["name"], "s1");
  ASSERT_EQ(client()
                .Patch(std::string(kPods) + "/s1", {{"metadata", {{"labels", {{"team", "b"}}}}}})
                .status,
            200);
  auto left = watch.Next();
  ASSERT_TRUE(left);
  EXPECT_EQ((*left)["type"], "DELETED");
  EXPECT_EQ((*left)["object"]["metadata"]["name"], "s1");
  ASSERT_EQ(client()
                .Patch(std::string(kPods) + "/s2", {{"metadata", {{"labels", {{"team", "a"}}}}}})
                .status,
            200);
  auto joined = watch.Next();
  ASSERT_TRUE(joined);
  EXPECT_EQ((*joined)["type"], "ADDED");
  EXPECT_EQ((*joined)["object"]["metadata"]["name"], "s2");

  WatchReader by_node(port(), "/api/v1/pods?watch=true&fieldSelector=spec.nodeName%3Dn9");
  json binding = {{"metadata", {{"name", "s2"}}}, {"target", {{"name", "n9"}}}};
  ASSERT_EQ(client().Post(std::string(kPods) + "/s2/binding", binding).status, 201);
  auto bound = by_node.Next();
  ASSERT_TRUE(bound);
  EXPECT_EQ((*bound)["type"], "ADDED");
  EXPECT_EQ((*bound)["object"]["spec"]["nodeName"], "n9");

  WatchReader bad(port(), "/api/v1/pods?watch=true&fieldSelector=spec.nope%3Dx");
  EXPECT_EQ(bad.status(), 400);
}

TEST_F(ApiServerTest, WatchBookmarksTimeoutAndClose) {
  Options options;
  options.bookmark_interval = std::chrono::milliseconds(50);
  server_.reset();
  StartServer(options);
  ASSERT_EQ(client().Post(kPods, MakePod("bm")).status, 201);
  const std::string rv = client().Get(kPods).Json()["metadata"]["resourceVersion"];
  WatchReader watch(
      port(), std::string(kPods) + "?watch=true&allowWatchBookmarks=true&resourceVersion=" + rv);
  auto bookmark = watch.Next();
  ASSERT_TRUE(bookmark);
  EXPECT_EQ((*bookmark)["type"], "BOOKMARK");
  EXPECT_EQ(Rv((*bookmark)["object"]), rv);
  EXPECT_EQ((*bookmark)["object"]["kind"], "Pod");

  WatchReader timed(port(),
                    std::string(kPods) + "?watch=true&timeoutSeconds=1&resourceVersion=" + rv);
  EXPECT_TRUE(timed.WaitEnded(std::chrono::seconds(10)));

  WatchReader closed(port(), std::string(kPods) + "?watch=true&resourceVersion=" + rv);
  ASSERT_EQ(closed.status(), 200);
  // Wait until the server registered the stream, then end every watch.
  ASSERT_EQ(client().Post(kPods, MakePod("bm2")).status, 201);
  ASSERT_TRUE(closed.Next());
  server_->CloseWatches();
  EXPECT_TRUE(closed.WaitEnded(std::chrono::seconds(10)));
  // The server keeps serving.
  EXPECT_EQ(client().Get(kPods).status, 200);
}

TEST_F(ApiServerTest, InProcessWatch) {
  auto stream = store().Watch(resources::kPods, WatchOptions{});
  ASSERT_TRUE(stream.ok());
  ASSERT_TRUE(store().Create(resources::kPods, "default", MakePod("inproc").dump()).ok());
  std::vector<WatchEvent> events;
  EXPECT_TRUE(WaitFor([&] {
    (*stream)->Take(&events);
    return !events.empty();
  }));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, WatchEventType::kAdded);
  EXPECT_EQ(events[0].object->name, "inproc");
  (*stream)->Close();
}

TEST(NodeSimulator, BoundPodBecomesRunningAndGracefulDeleteCompletes) {
  auto store = NewStore();
  NodeSimulatorOptions options;
  options.pod_start_delay = std::chrono::milliseconds(50);
  options.max_termination_delay = std::chrono::milliseconds(200);
  NodeSimulator sim(store, options);
  sim.Start();
  json node = {{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata", {{"name", "sim-1"}}},
               {"status",
                {{"addresses", json::array({{{"type", "InternalIP"}, {"address", "10.1.2.3"}}})},
                 {"allocatable", {{"cpu", "8"}, {"pods", "110"}}}}}};
  ASSERT_TRUE(sim.CreateNodes({node.dump()}).ok());
  EXPECT_TRUE(WaitFor([&] {
    auto n = store->Get(resources::kNodes, "", "sim-1");
    return n.ok() && (*n)->json.find("\"KubeletReady\"") != std::string::npos;
  }));

  ASSERT_TRUE(store->Create(resources::kPods, "default", MakePod("run").dump()).ok());
  ASSERT_TRUE(
      store
          ->Bind("default", "run",
                 json{{"metadata", {{"name", "run"}}}, {"target", {{"name", "sim-1"}}}}.dump())
          .ok());
  json pod;
  EXPECT_TRUE(WaitFor([&] {
    auto p = store->Get(resources::kPods, "default", "run");
    if (!p.ok()) return false;
    pod = json::parse((*p)->json);
    return pod["status"].value("phase", "") == "Running";
  }));
  EXPECT_EQ(pod["status"]["hostIP"], "10.1.2.3");
  EXPECT_FALSE(pod["status"]["podIP"].get<std::string>().empty());
  EXPECT_TRUE(pod["status"]["containerStatuses"][0]["ready"].get<bool>());
  bool ready = false;
  for (const auto& c : pod["status"]["conditions"]) {
    if (c["type"] == "Ready") ready = c["status"] == "True";
  }
  EXPECT_TRUE(ready);

  auto deleted = store->Delete(resources::kPods, "default", "run");
  ASSERT_TRUE(deleted.ok());
  EXPECT_FALSE(deleted->removed);
  EXPECT_TRUE(WaitFor([&] { return !store->Get(resources::kPods, "default", "run").ok(); }));
  EXPECT_EQ(sim.pods_started(), 1u);
  sim.Stop();
}

TEST(NodeSimulator, MaintainsDisruptionBudgetStatus) {
  auto store = NewStore();
  NodeSimulatorOptions options;
  options.pod_start_delay = std::chrono::milliseconds(10);
  options.disruption_resync = std::chrono::milliseconds(10);
  NodeSimulator sim(store, options);
  sim.Start();
  json node = {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "pdb-node"}}}};
  ASSERT_TRUE(sim.CreateNodes({node.dump()}).ok());
  for (const char* name : {"d1", "d2", "d3"}) {
    json pod = MakePod(name, {{"app", "db"}});
    pod["spec"]["nodeName"] = "pdb-node";
    ASSERT_TRUE(store->Create(resources::kPods, "default", pod.dump()).ok());
  }
  json pdb = {{"apiVersion", "policy/v1"},
              {"kind", "PodDisruptionBudget"},
              {"metadata", {{"name", "db"}}},
              {"spec", {{"maxUnavailable", 1}, {"selector", {{"matchLabels", {{"app", "db"}}}}}}}};
  ASSERT_TRUE(store->Create(resources::kPodDisruptionBudgets, "default", pdb.dump()).ok());
  json status;
  EXPECT_TRUE(WaitFor([&] {
    auto got = store->Get(resources::kPodDisruptionBudgets, "default", "db");
    status = json::parse((*got)->json)["status"];
    return status.is_object() && status.value("currentHealthy", 0) == 3;
  })) << status.dump();
  EXPECT_EQ(status["expectedPods"], 3);
  EXPECT_EQ(status["desiredHealthy"], 2);
  EXPECT_EQ(status["disruptionsAllowed"], 1);
  EXPECT_EQ(status["conditions"][0]["status"], "True");
  sim.Stop();
}

TEST(NodeSimulator, FakeClockDrivesStartDelay) {
  auto clock = std::make_shared<FakeClock>();
  StoreOptions store_options;
  store_options.clock = clock;
  auto store = NewStore(store_options);
  NodeSimulatorOptions options;
  options.pod_start_delay = std::chrono::seconds(30);
  options.poll_interval = std::chrono::milliseconds(2);
  NodeSimulator sim(store, options);
  sim.Start();
  json node = {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "fake-1"}}}};
  ASSERT_TRUE(sim.CreateNodes({node.dump()}).ok());
  json pod = MakePod("slow");
  pod["spec"]["nodeName"] = "fake-1";
  ASSERT_TRUE(store->Create(resources::kPods, "default", pod.dump()).ok());
  auto phase = [&] {
    auto p = store->Get(resources::kPods, "default", "slow");
    return p.ok() ? json::parse((*p)->json)["status"].value("phase", "") : std::string();
  };
  // The node gets Ready (so the simulator knows it) before time moves.
  EXPECT_TRUE(WaitFor([&] {
    auto n = store->Get(resources::kNodes, "", "fake-1");
    return n.ok() && (*n)->json.find("KubeletReady") != std::string::npos;
  }));
  // ...and has timed the pod's start, so the delay runs from the fake now.
  EXPECT_TRUE(WaitFor([&] { return sim.pods_awaiting_start() == 1; }));
  EXPECT_EQ(phase(), "Pending");
  clock->Advance(std::chrono::seconds(29));
  EXPECT_EQ(phase(), "Pending");
  clock->Advance(std::chrono::seconds(2));
  EXPECT_TRUE(WaitFor([&] { return phase() == "Running"; }));
  sim.Stop();
}

}  // namespace
}  // namespace copse::apiserver::testing

namespace copse::apiserver::testing {
namespace {

TEST(StoreInProcess, PatchAndDeleteByName) {
  auto store = NewStore();
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(
        store->Create(resources::kPods, "default", MakePod("p" + std::to_string(i)).dump()).ok());
  }
  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(
        store->Create(resources::kPods, "default", MakePod("r" + std::to_string(round)).dump())
            .ok());
    auto patched = store->Patch(resources::kPods, "default", "p" + std::to_string(round),
                                PatchType::kMerge, R"({"metadata":{"labels":{"app":"changed"}}})");
    ASSERT_TRUE(patched.ok()) << "round " << round << ": " << patched.error().ToString();
    DeleteOptions options;
    options.grace_period_seconds = 0;
    auto deleted =
        store->Delete(resources::kPods, "default", "p" + std::to_string(4 - round), options);
    ASSERT_TRUE(deleted.ok()) << deleted.error().ToString();
    ASSERT_TRUE(deleted->removed);
    ASSERT_EQ(deleted->object->name, "p" + std::to_string(4 - round));
  }
  EXPECT_EQ(store->Count(resources::kPods), 5u);
}

}  // namespace
}  // namespace copse::apiserver::testing
