// Informers against the real embedded API server: initial sync, events,
// indexes, and convergence after the server closes watches, after a forced
// 410 Gone, and after a server restart.

#include "kube/informer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "kube/pod.h"
#include "tests/integration/client/fixture.h"

namespace copse::kube {
namespace {

using std::chrono::milliseconds;
using testing::Meta;
using testing::Notifier;
using testing::PodJson;

// key -> resourceVersion of every pod the server has.
std::map<std::string, std::string> ServerPods(apiserver::Store& store) {
  std::map<std::string, std::string> out;
  auto list = store.List(resources::kPods, {});
  if (!list.ok()) {
    ADD_FAILURE() << list.error().ToString();
    return out;
  }
  for (const auto& item : list->items) {
    out[item->ns.empty() ? item->name : item->ns + "/" + item->name] = std::to_string(item->rv);
  }
  return out;
}

std::map<std::string, std::string> InformerPods(const Informer& informer) {
  std::map<std::string, std::string> out;
  for (const auto& object : informer.store().List()) {
    out[object->meta.Key()] = object->meta.resource_version;
  }
  return out;
}

// Counts handler calls and mirrors them into a map, to check that the
// notifications alone reproduce the server's state.
struct Recorder {
  std::mutex mu;
  std::map<std::string, std::string> mirror;
  int adds = 0;
  int updates = 0;
  int deletes = 0;
  std::set<std::string> deleted_keys;

  EventHandler Handler(Notifier& notifier) {
    EventHandler handler;
    handler.on_add = [this, &notifier](const ObjectPtr& o) {
      {
        std::lock_guard<std::mutex> lock(mu);
        ++adds;
        mirror[o->meta.Key()] = o->meta.resource_version;
      }
      notifier.Notify();
    };
    handler.on_update = [this, &notifier](const ObjectPtr& old_object, const ObjectPtr& o) {
      {
        std::lock_guard<std::mutex> lock(mu);
        ++updates;
        EXPECT_EQ(old_object->meta.Key(), o->meta.Key());
        mirror[o->meta.Key()] = o->meta.resource_version;
      }
      notifier.Notify();
    };
    handler.on_delete = [this, &notifier](const ObjectPtr& o) {
      {
        std::lock_guard<std::mutex> lock(mu);
        ++deletes;
        deleted_keys.insert(o->meta.Key());
        mirror.erase(o->meta.Key());
      }
      notifier.Notify();
    };
    return handler;
  }

  std::map<std::string, std::string> Mirror() {
    std::lock_guard<std::mutex> lock(mu);
    return mirror;
  }
};

InformerOptions PodInformerOptions(Notifier& notifier, std::atomic<int>* errors = nullptr) {
  InformerOptions options;
  options.resource = resources::kPods;
  options.page_size = 3;  // several pages even for small tests
  options.backoff = {
      .initial = milliseconds(20), .max = milliseconds(200), .factor = 2.0, .jitter = 0.5};
  options.on_error = [&notifier, errors](const Error&) {
    if (errors) errors->fetch_add(1);
    notifier.Notify();
  };
  options.indexers["app"] = [](const KubeObject& o) -> std::vector<std::string> {
    auto it = o.meta.labels.find("app");
    if (it == o.meta.labels.end()) return {};
    return {it->second};
  };
  return options;
}

class InformerTest : public ::testing::Test {
 protected:
  void StartServer(size_t watch_history = 200000) {
    store_ = apiserver::NewStore({.watch_history = watch_history});
    apiserver::Options options;
    options.store = store_;
    options.serve_https = false;  // a restarted server would have a new certificate
    options.bookmark_interval = milliseconds(200);
    server_ = testing::StartServer(options);
    ASSERT_NE(server_, nullptr);
  }

  void RestartServer() {
    const uint16_t port = server_->http_port();
    server_->Stop();
    server_.reset();
    Mutate();
    apiserver::Options options;
    options.store = store_;
    options.serve_https = false;
    options.http_port = port;
    options.bookmark_interval = milliseconds(200);
    server_ = testing::StartServer(options);
    ASSERT_NE(server_, nullptr);
  }

  void CreatePod(const std::string& name, const std::map<std::string, std::string>& labels = {}) {
    auto created = store_->Create(resources::kPods, "default", PodJson("default", name, labels));
    ASSERT_TRUE(created.ok()) << created.error().ToString();
  }
  void LabelPod(const std::string& name, const std::string& value) {
    auto patched = store_->Patch(resources::kPods, "default", name, apiserver::PatchType::kMerge,
                                 R"({"metadata":{"labels":{"app":")" + value + R"("}}})");
    ASSERT_TRUE(patched.ok()) << patched.error().ToString();
  }
  void DeletePod(const std::string& name) {
    apiserver::DeleteOptions options;
    options.grace_period_seconds = 0;
    auto deleted = store_->Delete(resources::kPods, "default", name, options);
    ASSERT_TRUE(deleted.ok()) << deleted.error().ToString();
  }

  bool Converged(const Informer& informer, Recorder& recorder) {
    const auto expected = ServerPods(*store_);
    return InformerPods(informer) == expected && recorder.Mirror() == expected;
  }

  std::function<void()> Mutate = [] {};
  IoThread io_;
  std::shared_ptr<apiserver::Store> store_;
  std::unique_ptr<apiserver::ApiServer> server_;
  Notifier notifier_;
  Recorder recorder_;
};

TEST_F(InformerTest, SyncsThenFollowsEventsWithIndexes) {
  StartServer();
  for (int i = 0; i < 10; ++i) CreatePod("p" + std::to_string(i), {{"app", i < 4 ? "web" : "db"}});
  auto client = testing::HttpClient(io_, *server_);
  Informer informer(client, PodInformerOptions(notifier_));
  informer.AddEventHandler(recorder_.Handler(notifier_));
  EXPECT_FALSE(informer.HasSynced());
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(milliseconds(30'000)));
  EXPECT_TRUE(informer.HasSynced());
  // HasSynced means the whole (paginated) list was delivered.
  EXPECT_EQ(informer.store().size(), 10u);
  EXPECT_EQ(recorder_.Mirror().size(), 10u);
  EXPECT_EQ(informer.store().ByIndex("app", "web").size(), 4u);
  EXPECT_EQ(informer.store().ByIndex(Indexer::kNamespaceIndex, "default").size(), 10u);
  ObjectPtr p0 = informer.store().Get("default", "p0");
  ASSERT_NE(p0, nullptr);
  EXPECT_EQ(p0->kind, "Pod");
  EXPECT_EQ(p0->api_version, "v1");
  EXPECT_FALSE(p0->raw.empty());

  CreatePod("new", {{"app", "web"}});
  LabelPod("p5", "web");
  DeletePod("p9");
  ASSERT_TRUE(notifier_.WaitFor([&] { return Converged(informer, recorder_); }));
  EXPECT_EQ(informer.store().ByIndex("app", "web").size(), 6u);
  EXPECT_EQ(informer.store().Get("default/p9"), nullptr);
  {
    std::lock_guard<std::mutex> lock(recorder_.mu);
    EXPECT_EQ(recorder_.adds, 11);
    EXPECT_EQ(recorder_.updates, 1);
    EXPECT_EQ(recorder_.deletes, 1);
  }
  EXPECT_EQ(informer.stats().lists, 1u);
  // The informer moves its resourceVersion after its handlers ran, so the
  // mirror can converge a moment before it does.
  const std::string current = std::to_string(store_->CurrentResourceVersion());
  const auto rv_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (informer.LastResourceVersion() != current &&
         std::chrono::steady_clock::now() < rv_deadline) {
    std::this_thread::sleep_for(milliseconds(1));
  }
  EXPECT_EQ(informer.LastResourceVersion(), current);

  informer.Stop();
  const int adds_before = [&] {
    std::lock_guard<std::mutex> lock(recorder_.mu);
    return recorder_.adds;
  }();
  CreatePod("after-stop");
  // Stop() guarantees no handler runs afterwards; give the server a round trip.
  auto list = io_.Run(client->List(resources::kPods, "default"));
  ASSERT_TRUE(list.ok());
  std::lock_guard<std::mutex> lock(recorder_.mu);
  EXPECT_EQ(recorder_.adds, adds_before);
}

TEST_F(InformerTest, ConvergesAfterTheServerClosesWatches) {
  StartServer();
  for (int i = 0; i < 5; ++i) CreatePod("p" + std::to_string(i));
  auto client = testing::HttpClient(io_, *server_);
  Informer informer(client, PodInformerOptions(notifier_));
  informer.AddEventHandler(recorder_.Handler(notifier_));
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(milliseconds(30'000)));
  for (int round = 0; round < 3; ++round) {
    server_->CloseWatches();
    CreatePod("r" + std::to_string(round));
    LabelPod("p" + std::to_string(round), "changed-" + std::to_string(round));
    DeletePod("p" + std::to_string(4 - round));
    ASSERT_TRUE(notifier_.WaitFor([&] { return Converged(informer, recorder_); }))
        << "round " << round;
  }
  // Each closed stream was resumed from its resourceVersion: no relist.
  EXPECT_EQ(informer.stats().lists, 1u);
  EXPECT_GE(informer.stats().watches, 2u);
  EXPECT_EQ(informer.stats().gone, 0u);
}

TEST_F(InformerTest, RelistsAfterGoneAndSynthesizesDeletes) {
  StartServer(/*watch_history=*/10);
  for (int i = 0; i < 6; ++i) CreatePod("p" + std::to_string(i));
  auto client = testing::HttpClient(io_, *server_);
  std::atomic<int> errors{0};
  Informer informer(client, PodInformerOptions(notifier_, &errors));
  informer.AddEventHandler(recorder_.Handler(notifier_));
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(milliseconds(30'000)));
  // While the server is down, far more changes than the watch history holds:
  // the informer's resourceVersion falls out of the window.
  Mutate = [&] {
    for (int i = 0; i < 30; ++i) LabelPod("p0", "v" + std::to_string(i));
    DeletePod("p1");
    DeletePod("p2");
    CreatePod("born-while-down");
  };
  RestartServer();
  ASSERT_TRUE(notifier_.WaitFor([&] { return Converged(informer, recorder_); }));
  EXPECT_GE(informer.stats().gone, 1u);
  EXPECT_GE(informer.stats().lists, 2u);
  {
    std::lock_guard<std::mutex> lock(recorder_.mu);
    EXPECT_TRUE(recorder_.deleted_keys.count("default/p1"));
    EXPECT_TRUE(recorder_.deleted_keys.count("default/p2"));
  }
  // And it keeps following changes after the relist.
  CreatePod("after-relist");
  DeletePod("p3");
  ASSERT_TRUE(notifier_.WaitFor([&] { return Converged(informer, recorder_); }));
}

TEST_F(InformerTest, ResumesAfterAServerRestart) {
  StartServer();
  for (int i = 0; i < 5; ++i) CreatePod("p" + std::to_string(i));
  auto client = testing::HttpClient(io_, *server_);
  Informer informer(client, PodInformerOptions(notifier_));
  informer.AddEventHandler(recorder_.Handler(notifier_));
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(milliseconds(30'000)));
  Mutate = [&] {
    CreatePod("while-down");
    LabelPod("p1", "edited");
    DeletePod("p4");
  };
  RestartServer();
  ASSERT_TRUE(notifier_.WaitFor([&] { return Converged(informer, recorder_); }));
  // The history still held the informer's resourceVersion: no relist needed.
  EXPECT_EQ(informer.stats().lists, 1u);
  EXPECT_EQ(informer.stats().gone, 0u);
  {
    std::lock_guard<std::mutex> lock(recorder_.mu);
    EXPECT_TRUE(recorder_.deleted_keys.count("default/p4"));
  }
  CreatePod("after-restart");
  ASSERT_TRUE(notifier_.WaitFor([&] { return Converged(informer, recorder_); }));
}

TEST_F(InformerTest, TypedInformerHandsOutTypedObjects) {
  StartServer();
  CreatePod("typed", {{"app", "web"}});
  auto client = testing::HttpClient(io_, *server_);
  InformerOptions options;
  options.resource = resources::kPods;
  options.namespace_ = "default";
  options.label_selector = "app=web";
  TypedInformer<Pod> informer(client, std::move(options));
  std::atomic<int> updates{0};
  informer.AddEventHandler(
      [&](const std::shared_ptr<const Pod>&) { notifier_.Notify(); },
      [&](const std::shared_ptr<const Pod>&, const std::shared_ptr<const Pod>& pod) {
        if (pod->spec.node_name == "n1") updates.fetch_add(1);
        notifier_.Notify();
      },
      nullptr);
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(milliseconds(30'000)));
  auto pod = informer.Get("default", "typed");
  ASSERT_NE(pod, nullptr);
  EXPECT_EQ(pod->spec.scheduler_name, "copse-scheduler");
  CreatePod("other", {{"app", "db"}});  // not selected
  ASSERT_TRUE(store_->Create(resources::kNodes, "", testing::NodeJson("n1")).ok());
  ASSERT_TRUE(io_.Run(client->Bind("default", "typed", "n1")).ok());
  ASSERT_TRUE(notifier_.WaitFor([&] { return updates.load() >= 1; }));
  EXPECT_EQ(informer.Get("default", "typed")->spec.node_name, "n1");
  EXPECT_EQ(informer.List().size(), 1u);
}

}  // namespace
}  // namespace copse::kube
