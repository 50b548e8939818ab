#include <gtest/gtest.h>

#include <algorithm>

#include "kube/informer.h"

namespace copse::kube {
namespace {

ObjectPtr MakeObject(std::string ns, std::string name, std::string rv, Labels labels = {}) {
  auto object = std::make_shared<KubeObject>();
  object->meta.namespace_ = std::move(ns);
  object->meta.name = std::move(name);
  object->meta.resource_version = std::move(rv);
  object->meta.labels = std::move(labels);
  return object;
}

std::vector<std::string> Names(std::vector<ObjectPtr> objects) {
  std::vector<std::string> names;
  for (const auto& o : objects) names.push_back(o->meta.name);
  std::sort(names.begin(), names.end());
  return names;
}

Indexers AppIndex() {
  Indexers indexers;
  indexers["app"] = [](const KubeObject& o) -> std::vector<std::string> {
    auto it = o.meta.labels.find("app");
    if (it == o.meta.labels.end()) return {};
    return {it->second};
  };
  return indexers;
}

TEST(Indexer, KeysAndNamespaceIndex) {
  Indexer store;
  EXPECT_EQ(store.Upsert(MakeObject("a", "x", "1")), nullptr);
  EXPECT_EQ(store.Upsert(MakeObject("a", "y", "2")), nullptr);
  EXPECT_EQ(store.Upsert(MakeObject("b", "x", "3")), nullptr);
  EXPECT_EQ(store.Upsert(MakeObject("", "node-1", "4")), nullptr);
  EXPECT_EQ(store.size(), 4u);
  ASSERT_NE(store.Get("a/x"), nullptr);
  EXPECT_EQ(store.Get("a", "x")->meta.resource_version, "1");
  EXPECT_EQ(store.Get("", "node-1")->meta.resource_version, "4");
  EXPECT_EQ(store.Get("node-1")->meta.resource_version, "4");
  EXPECT_EQ(store.Get("c/x"), nullptr);
  EXPECT_EQ(Names(store.ByIndex(Indexer::kNamespaceIndex, "a")),
            (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(Names(store.ByIndex("namespace", "")), (std::vector<std::string>{"node-1"}));
  EXPECT_TRUE(store.ByIndex("unknown", "a").empty());

  ObjectPtr previous = store.Upsert(MakeObject("a", "x", "5"));
  ASSERT_NE(previous, nullptr);
  EXPECT_EQ(previous->meta.resource_version, "1");
  EXPECT_EQ(store.Get("a/x")->meta.resource_version, "5");
  EXPECT_EQ(store.size(), 4u);

  ObjectPtr removed = store.Remove("a/y");
  ASSERT_NE(removed, nullptr);
  EXPECT_EQ(store.Remove("a/y"), nullptr);
  EXPECT_EQ(Names(store.ByIndex("namespace", "a")), (std::vector<std::string>{"x"}));
  auto keys = store.ListKeys();
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys, (std::vector<std::string>{"a/x", "b/x", "node-1"}));
}

TEST(Indexer, CustomIndexFollowsUpdates) {
  Indexer store(AppIndex());
  store.Upsert(MakeObject("ns", "p1", "1", {{"app", "web"}}));
  store.Upsert(MakeObject("ns", "p2", "1", {{"app", "web"}}));
  store.Upsert(MakeObject("ns", "p3", "1", {{"app", "db"}}));
  store.Upsert(MakeObject("ns", "p4", "1"));
  EXPECT_EQ(Names(store.ByIndex("app", "web")), (std::vector<std::string>{"p1", "p2"}));
  store.Upsert(MakeObject("ns", "p2", "2", {{"app", "db"}}));
  EXPECT_EQ(Names(store.ByIndex("app", "web")), (std::vector<std::string>{"p1"}));
  EXPECT_EQ(Names(store.ByIndex("app", "db")), (std::vector<std::string>{"p2", "p3"}));
  store.Remove("ns/p1");
  EXPECT_TRUE(store.ByIndex("app", "web").empty());
  auto values = store.IndexValues("app");
  EXPECT_EQ(values, (std::vector<std::string>{"db"}));
  size_t visited = 0;
  store.ForEach([&](const ObjectPtr&) { ++visited; });
  EXPECT_EQ(visited, 3u);
}

TEST(Indexer, ObjectsOutliveTheirReplacement) {
  Indexer store;
  store.Upsert(MakeObject("ns", "p", "1"));
  ObjectPtr held = store.Get("ns/p");
  store.Upsert(MakeObject("ns", "p", "2"));
  store.Remove("ns/p");
  EXPECT_EQ(held->meta.resource_version, "1");
}

}  // namespace
}  // namespace copse::kube
