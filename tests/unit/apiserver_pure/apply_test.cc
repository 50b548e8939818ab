// Server-side apply's merge and ownership: list maps by key, atomic lists,
// sets, conflicts between managers, force, and removal of fields a manager
// stops applying.

#include "apiserver/apply.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace copse::apiserver {
namespace apply_test {

using nlohmann::json;

ApplyOptions As(const std::string& manager, bool force = false) {
  ApplyOptions o;
  o.manager = manager;
  o.force = force;
  o.api_version = "v1";
  o.now = "2026-01-01T00:00:00Z";
  o.ignore_status = true;
  return o;
}

json Pod(json containers) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", "p"}, {"namespace", "default"}}},
          {"spec", {{"containers", std::move(containers)}}}};
}

json Apply(const json* live, const json& applied, const ApplyOptions& options) {
  std::string causes;
  auto out = ApplyObject(live, applied, BuiltinApplySchema("v1", "Pod"), options, &causes);
  EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().ToString());
  return out.ok() ? *out : json();
}

const json* Entry(const json& object, const std::string& manager) {
  for (const json& e : object["metadata"]["managedFields"]) {
    if (e["manager"] == manager) return &e;
  }
  return nullptr;
}

TEST(ServerSideApply, CreateRecordsTheManagersFields) {
  const json applied =
      Pod({{{"name", "main"}, {"image", "a:1"}, {"ports", {{{"containerPort", 80}}}}}});
  const json out = Apply(nullptr, applied, As("alice"));
  EXPECT_EQ(out["spec"], applied["spec"]);
  const json* entry = Entry(out, "alice");
  ASSERT_NE(entry, nullptr) << out.dump();
  EXPECT_EQ((*entry)["operation"], "Apply");
  EXPECT_EQ((*entry)["fieldsType"], "FieldsV1");
  // Containers by name, ports by (containerPort, protocol) with TCP as the default protocol.
  const json expected = json::parse(R"({"f:spec":{"f:containers":{"k:{\"name\":\"main\"}":{
      ".":{},"f:name":{},"f:image":{},
      "f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}}}}}}})");
  EXPECT_EQ((*entry)["fieldsV1"], expected) << (*entry)["fieldsV1"].dump();
}

TEST(ServerSideApply, ListMapsMergeByKeyAcrossManagers) {
  const json first = Apply(nullptr, Pod({{{"name", "a"}, {"image", "a:1"}}}), As("alice"));
  const json second = Apply(&first, Pod({{{"name", "b"}, {"image", "b:1"}}}), As("bob"));
  ASSERT_EQ(second["spec"]["containers"].size(), 2u) << second.dump();
  EXPECT_EQ(second["spec"]["containers"][0]["name"], "a");
  EXPECT_EQ(second["spec"]["containers"][1]["name"], "b");
  EXPECT_NE(Entry(second, "alice"), nullptr);
  EXPECT_NE(Entry(second, "bob"), nullptr);
}

TEST(ServerSideApply, ConflictNamesTheFieldAndManagerAndForceTakesIt) {
  const json first = Apply(nullptr, Pod({{{"name", "main"}, {"image", "a:1"}}}), As("alice"));
  std::string causes;
  const json change = Pod({{{"name", "main"}, {"image", "b:2"}}});
  auto conflict = ApplyObject(&first, change, BuiltinApplySchema("v1", "Pod"), As("bob"), &causes);
  ASSERT_FALSE(conflict.ok());
  EXPECT_EQ(conflict.error().http_status, 409);
  EXPECT_NE(conflict.error().message.find("conflict with \"alice\""), std::string::npos)
      << conflict.error().message;
  EXPECT_NE(conflict.error().message.find(".spec.containers[name=\"main\"].image"),
            std::string::npos)
      << conflict.error().message;
  const json c = json::parse(causes);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0]["reason"], "FieldManagerConflict");
  EXPECT_EQ(c[0]["field"], ".spec.containers[name=\"main\"].image");

  // The same value is shared, not a conflict.
  const json same = Apply(&first, Pod({{{"name", "main"}, {"image", "a:1"}}}), As("bob"));
  EXPECT_NE(Entry(same, "alice"), nullptr);

  const json forced = Apply(&first, change, As("bob", true));
  EXPECT_EQ(forced["spec"]["containers"][0]["image"], "b:2");
  const json* alice = Entry(forced, "alice");
  ASSERT_NE(alice, nullptr);  // alice keeps the container's name, loses the image
  EXPECT_FALSE(
      (*alice)["fieldsV1"]["f:spec"]["f:containers"]["k:{\"name\":\"main\"}"].contains("f:image"))
      << forced.dump();
}

TEST(ServerSideApply, AtomicListsAreReplacedWhole) {
  json applied = Pod({{{"name", "main"}, {"image", "a:1"}, {"command", {"sh", "-c", "one"}}}});
  applied["spec"]["tolerations"] = {{{"key", "a"}, {"operator", "Exists"}}};
  const json first = Apply(nullptr, applied, As("alice"));
  applied["spec"]["containers"][0]["command"] = {"two"};
  applied["spec"]["tolerations"] = {{{"key", "b"}, {"operator", "Exists"}}};
  const json second = Apply(&first, applied, As("alice"));
  EXPECT_EQ(second["spec"]["containers"][0]["command"], json({"two"}));
  EXPECT_EQ(second["spec"]["tolerations"], applied["spec"]["tolerations"]);
  const json* entry = Entry(second, "alice");
  // An atomic list is one leaf.
  EXPECT_EQ((*entry)["fieldsV1"]["f:spec"]["f:tolerations"], json::object());
}

TEST(ServerSideApply, FieldsAManagerStopsApplyingAreRemovedUnlessOthersOwnThem) {
  json applied = Pod({{{"name", "main"}, {"image", "a:1"}}, {{"name", "side"}, {"image", "s:1"}}});
  applied["metadata"]["labels"] = {{"app", "web"}, {"tier", "front"}};
  const json first = Apply(nullptr, applied, As("alice"));
  // bob co-owns the label tier (same value).
  json bob = Pod(json::array());
  bob["spec"].erase("containers");
  bob["metadata"]["labels"] = {{"tier", "front"}};
  const json shared = Apply(&first, bob, As("bob"));

  json less = Pod({{{"name", "main"}, {"image", "a:1"}}});
  less["metadata"]["labels"] = json::object();
  less["metadata"].erase("labels");
  const json out = Apply(&shared, less, As("alice"));
  ASSERT_EQ(out["spec"]["containers"].size(), 1u) << out.dump();
  EXPECT_EQ(out["spec"]["containers"][0]["name"], "main");
  EXPECT_FALSE(out["metadata"]["labels"].contains("app")) << out.dump();
  EXPECT_EQ(out["metadata"]["labels"]["tier"], "front");  // bob still owns it
}

TEST(ServerSideApply, CrdListTypesComeFromTheSchema) {
  const json schema = json::parse(R"({"type":"object","properties":{"spec":{"type":"object",
    "properties":{"groups":{"type":"array","x-kubernetes-list-type":"map",
      "x-kubernetes-list-map-keys":["name"],
      "items":{"type":"object","properties":{"name":{"type":"string"},"size":{"type":"integer"}}}},
    "tags":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"string"}}}}}})");
  const ApplySchema s{&schema, nullptr};
  ApplyOptions a = As("alice");
  a.api_version = "example.com/v1";
  json applied = {{"apiVersion", "example.com/v1"},
                  {"kind", "Gadget"},
                  {"metadata", {{"name", "g"}}},
                  {"spec", {{"groups", {{{"name", "x"}, {"size", 1}}}}, {"tags", {"red"}}}}};
  std::string causes;
  auto first = ApplyObject(nullptr, applied, s, a, &causes);
  ASSERT_TRUE(first.ok());
  ApplyOptions b = a;
  b.manager = "bob";
  json other = applied;
  other["spec"] = {{"groups", {{{"name", "y"}, {"size", 2}}}}, {"tags", {"blue"}}};
  auto second = ApplyObject(&*first, other, s, b, &causes);
  ASSERT_TRUE(second.ok()) << second.error().ToString();
  EXPECT_EQ((*second)["spec"]["groups"].size(), 2u) << second->dump();
  EXPECT_EQ((*second)["spec"]["tags"], json({"red", "blue"}));

  // A list-map item without its key is refused, naming the list.
  json bad = applied;
  bad["spec"]["groups"] = {{{"size", 3}}};
  auto refused = ApplyObject(&*first, bad, s, a, &causes);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().http_status, 422);
  EXPECT_NE(refused.error().message.find(".spec.groups"), std::string::npos)
      << refused.error().message;
}

TEST(ServerSideApply, ManagedFieldsInTheAppliedObjectAreRefused) {
  json applied = Pod({{{"name", "main"}, {"image", "a:1"}}});
  applied["metadata"]["managedFields"] = json::array({json::object()});
  std::string causes;
  auto out = ApplyObject(nullptr, applied, BuiltinApplySchema("v1", "Pod"), As("a"), &causes);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().http_status, 400);
}

}  // namespace apply_test
}  // namespace copse::apiserver
