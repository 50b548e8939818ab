// A Store on a data directory (apiserver/commit_log.h): what was written is
// there after a reopen, resourceVersions continue, old watches get 410 Gone,
// a torn log tail is cut off, compaction keeps everything, a damaged
// snapshot is an error naming the file, and a directory is used by one
// Store at a time. (The crash itself, SIGKILL during a write burst, is
// tests/e2e/persist.)

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>

#include "apiserver/commit_log.h"
#include "tests/integration/apiserver/test_util.h"

namespace copse::apiserver::testing {
namespace {

namespace fs = std::filesystem;

class PersistenceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/copse-persist-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  Result<std::shared_ptr<Store>> Open(RecoveryReport* report = nullptr,
                                      size_t snapshot_log_bytes = size_t{64} << 20) {
    CommitLogOptions options;
    options.dir = dir_;
    options.snapshot_log_bytes = snapshot_log_bytes;
    return OpenPersistentStore(StoreOptions{}, options, report);
  }
  // Every object of the store, "group/resource ns/name" -> JSON text.
  static std::map<std::string, std::string> Dump(Store& store) {
    std::map<std::string, std::string> out;
    for (const auto& info : store.Resources()) {
      ResourceRef ref{info->group, info->versions.front(), info->resource};
      auto listed = store.List(ref, ListOptions{});
      if (!listed.ok()) continue;
      for (const auto& obj : listed->items) {
        out[info->group + "/" + info->resource + " " + obj->ns + "/" + obj->name] = obj->json;
      }
    }
    return out;
  }
  std::string dir_;
};

json Crd() {
  return json::parse(R"({
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
      "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
      "versions": [{"name": "v1", "served": true, "storage": true,
        "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}})");
}

TEST_F(PersistenceTest, ObjectsAndResourceVersionsSurviveAReopen) {
  std::map<std::string, std::string> before;
  uint64_t rv_before = 0;
  {
    RecoveryReport report;
    auto store = Open(&report);
    ASSERT_TRUE(store.ok()) << store.error().ToString();
    EXPECT_TRUE(report.fresh);
    Store& s = **store;
    for (int i = 0; i < 20; ++i) {
      ASSERT_TRUE(
          s.CreateFromJson(resources::kPods, "default", MakePod("p" + std::to_string(i))).ok());
    }
    ASSERT_TRUE(s.Patch(resources::kPods, "default", "p3", PatchType::kMerge,
                        R"({"metadata":{"labels":{"x":"y"}}})")
                    .ok());
    ASSERT_TRUE(
        s.Delete(resources::kPods, "default", "p4", DeleteOptions{.grace_period_seconds = 0}).ok());
    ASSERT_TRUE(s.CreateFromJson(resources::kCustomResourceDefinitions, "", Crd()).ok());
    json widget = {{"apiVersion", "example.com/v1"},
                   {"kind", "Widget"},
                   {"metadata", {{"name", "w1"}, {"namespace", "default"}}},
                   {"spec", {{"size", 3}}}};
    ASSERT_TRUE(s.CreateFromJson({"example.com", "v1", "widgets"}, "default", widget).ok());
    json svc = {{"apiVersion", "v1"},
                {"kind", "Service"},
                {"metadata", {{"name", "s1"}, {"namespace", "default"}}},
                {"spec", {{"ports", json::array({{{"port", 80}}})}}}};
    ASSERT_TRUE(s.CreateFromJson(resources::kServices, "default", svc).ok());
    before = Dump(s);
    rv_before = s.CurrentResourceVersion();
  }
  RecoveryReport report;
  auto store = Open(&report);
  ASSERT_TRUE(store.ok()) << store.error().ToString();
  Store& s = **store;
  EXPECT_FALSE(report.fresh);
  EXPECT_EQ(report.dropped_log_bytes, 0u);
  EXPECT_EQ(Dump(s), before);
  EXPECT_EQ(before.count("/pods default/p4"), 0u);
  EXPECT_EQ(before.count("example.com/widgets default/w1"), 1u);
  // A clean close: the numbers continue exactly.
  EXPECT_EQ(s.CurrentResourceVersion(), rv_before);
  auto next = s.CreateFromJson(resources::kPods, "default", MakePod("after"));
  ASSERT_TRUE(next.ok());
  EXPECT_EQ((*next)->rv, rv_before + 1);
  // The restored indexes work: a restored name conflicts, the CRD's resource
  // is served, and a new Service does not reuse the restored one's IP.
  auto dup = s.CreateFromJson(resources::kPods, "default", MakePod("p1"));
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().code, ErrorCode::kAlreadyExists);
  EXPECT_TRUE(s.Resolve("example.com", "v1", "widgets").ok());
  json svc2 = {{"apiVersion", "v1"},
               {"kind", "Service"},
               {"metadata", {{"name", "s2"}, {"namespace", "default"}}},
               {"spec", {{"ports", json::array({{{"port", 80}}})}}}};
  auto s2 = s.CreateFromJson(resources::kServices, "default", svc2);
  ASSERT_TRUE(s2.ok());
  auto s1 = s.Get(resources::kServices, "default", "s1");
  ASSERT_TRUE(s1.ok());
  EXPECT_NE(json::parse((*s1)->json)["spec"]["clusterIP"],
            json::parse((*s2)->json)["spec"]["clusterIP"]);
  // The namespace still counts its restored objects: deleting the CRD
  // removes its widgets, and the pods keep "default" alive.
  EXPECT_EQ(s.Count(resources::kPods), 20u);
}

TEST_F(PersistenceTest, AWatchFromBeforeTheRestartGetsGoneAndFromNowSeesNewWrites) {
  uint64_t old_rv = 0;
  {
    auto store = Open();
    ASSERT_TRUE(store.ok()) << store.error().ToString();
    ASSERT_TRUE((*store)->CreateFromJson(resources::kPods, "default", MakePod("a")).ok());
    old_rv = (*store)->CurrentResourceVersion();
    ASSERT_TRUE((*store)->CreateFromJson(resources::kPods, "default", MakePod("b")).ok());
  }
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.error().ToString();
  auto gone = (*store)->Watch(resources::kPods, WatchOptions{.resource_version = old_rv});
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, ErrorCode::kGone);
  const uint64_t now = (*store)->CurrentResourceVersion();
  auto watch = (*store)->Watch(resources::kPods, WatchOptions{.resource_version = now});
  ASSERT_TRUE(watch.ok()) << watch.error().ToString();
  ASSERT_TRUE((*store)->CreateFromJson(resources::kPods, "default", MakePod("c")).ok());
  std::vector<WatchEvent> events;
  (*watch)->Take(&events);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].object->name, "c");
  EXPECT_EQ(events[0].rv, now + 1);
}

TEST_F(PersistenceTest, ATornLogTailIsCutOffAndTheRestRecovered) {
  {
    auto store = Open();
    ASSERT_TRUE(store.ok()) << store.error().ToString();
    for (int i = 0; i < 10; ++i) {
      ASSERT_TRUE(
          (*store)
              ->CreateFromJson(resources::kPods, "default", MakePod("p" + std::to_string(i)))
              .ok());
    }
  }
  const fs::path log = fs::path(dir_) / "log";
  // The clean close's record is last and small; cut into the record of p9
  // before it (as a crash in the middle of its write would), then add junk.
  std::ifstream in(log, std::ios::binary);
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  const size_t p9 = data.rfind("\"p9\"");
  ASSERT_NE(p9, std::string::npos);
  data.resize(p9);
  data += "garbage";
  std::ofstream(log, std::ios::binary | std::ios::trunc) << data;

  RecoveryReport report;
  auto store = Open(&report);
  ASSERT_TRUE(store.ok()) << store.error().ToString();
  EXPECT_GT(report.dropped_log_bytes, 7u);
  EXPECT_TRUE((*store)->Get(resources::kPods, "default", "p8").ok());
  EXPECT_FALSE((*store)->Get(resources::kPods, "default", "p9").ok());
  // The file was cut at the last whole record: new writes append cleanly.
  ASSERT_TRUE((*store)->CreateFromJson(resources::kPods, "default", MakePod("p9")).ok());
  store = Result<std::shared_ptr<Store>>(std::shared_ptr<Store>());
  RecoveryReport again;
  auto reopened = Open(&again);
  ASSERT_TRUE(reopened.ok()) << reopened.error().ToString();
  EXPECT_EQ(again.dropped_log_bytes, 0u);
  EXPECT_TRUE((*reopened)->Get(resources::kPods, "default", "p9").ok());
}

TEST_F(PersistenceTest, CompactionKeepsEveryObjectAndADamagedSnapshotIsAnErrorNamingIt) {
  std::map<std::string, std::string> before;
  {
    auto store = Open(nullptr, 16 << 10);  // compact every 16 KiB of log
    ASSERT_TRUE(store.ok()) << store.error().ToString();
    for (int i = 0; i < 200; ++i) {
      ASSERT_TRUE(
          (*store)
              ->CreateFromJson(resources::kPods, "default", MakePod("p" + std::to_string(i)))
              .ok());
      if (i % 3 == 0) {
        ASSERT_TRUE((*store)
                        ->Delete(resources::kPods, "default", "p" + std::to_string(i),
                                 DeleteOptions{.grace_period_seconds = 0})
                        .ok());
      }
    }
    before = Dump(**store);
  }
  const fs::path snap = fs::path(dir_) / "snapshot";
  ASSERT_TRUE(fs::exists(snap));
  EXPECT_LT(fs::file_size(fs::path(dir_) / "log"), size_t{16} << 10);
  {
    auto store = Open();
    ASSERT_TRUE(store.ok()) << store.error().ToString();
    EXPECT_EQ(Dump(**store), before);
  }
  // Flip one byte in the middle of the snapshot.
  std::fstream f(snap, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(fs::file_size(snap) / 2));
  char c = 0;
  f.read(&c, 1);
  f.seekp(static_cast<std::streamoff>(fs::file_size(snap) / 2));
  c = static_cast<char>(c ^ 0x5a);
  f.write(&c, 1);
  f.close();
  auto store = Open();
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error().message.find(snap.string()), std::string::npos) << store.error().message;
  EXPECT_NE(store.error().message.find("corrupt"), std::string::npos) << store.error().message;
}

TEST_F(PersistenceTest, ConcurrentWritersAcrossManyReservationsAllComplete) {
  // Small blocks: writers often wait for a reservation while others queue
  // (a lost wake-up of the log's writer thread once hung every writer here).
  CommitLogOptions options;
  options.dir = dir_;
  options.rv_reservation = 7;
  auto store = OpenPersistentStore(StoreOptions{}, options);
  ASSERT_TRUE(store.ok()) << store.error().ToString();
  std::vector<std::future<void>> writers;
  for (int t = 0; t < 8; ++t) {
    writers.push_back(std::async(std::launch::async, [&s = **store, t] {
      for (int i = 0; i < 300; ++i) {
        auto created = s.CreateFromJson(resources::kPods, "default",
                                        MakePod("w" + std::to_string(t) + "-" + std::to_string(i)));
        EXPECT_TRUE(created.ok());
      }
    }));
  }
  for (auto& w : writers) {
    if (w.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
      // Writers stuck in the Store cannot be joined: report and end the run.
      std::fprintf(stderr, "writers did not finish within 60s: the commit log hangs\n");
      std::_Exit(1);
    }
  }
  EXPECT_EQ((*store)->Count(resources::kPods), 2400u);
}

TEST_F(PersistenceTest, ADirectoryServesOneStoreAtATime) {
  auto first = Open();
  ASSERT_TRUE(first.ok()) << first.error().ToString();
  auto second = Open();
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error().message.find("in use"), std::string::npos) << second.error().message;
}

}  // namespace
}  // namespace copse::apiserver::testing
