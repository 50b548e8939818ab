// Store::Bind writes exactly what kube-apiserver's binding does (spec.nodeName,
// PodScheduled=True, a new resourceVersion) and nothing else, whichever way it
// edits the stored text: the expected object is built independently here by
// editing the parsed pod with nlohmann and dumping it, and the stored text
// must match it byte for byte. Also the JSON splicing primitives on their own.

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apiserver/apiserver.h"
#include "apiserver/json_splice.h"
#include "apiserver/store.h"
#include "core/clock.h"

namespace copse::apiserver {
namespace bind_test {

using nlohmann::json;

class BindTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StoreOptions options;
    options.clock = clock_;
    store_ = NewStore(options);
  }

  std::string Create(json pod) {
    auto created = store_->Create(resources::kPods, "default", pod.dump());
    EXPECT_TRUE(created.ok()) << created.error().ToString();
    return created.ok() ? (*created)->json : "";
  }

  ObjectPtr Get(const std::string& name) {
    auto got = store_->Get(resources::kPods, "default", name);
    EXPECT_TRUE(got.ok());
    return got.ok() ? *got : nullptr;
  }

  // kube's binding applied to `before` with nlohmann: the reference result.
  json Expected(const std::string& before, const std::string& node, uint64_t rv) {
    json pod = json::parse(before);
    pod["spec"]["nodeName"] = node;
    pod["metadata"]["resourceVersion"] = std::to_string(rv);
    json& status = pod["status"];
    if (!status.is_object()) status = json::object();
    json& conds = status["conditions"];
    if (!conds.is_array()) conds = json::array();
    bool found = false;
    for (auto& c : conds) {
      if (c.value("type", "") != "PodScheduled") continue;
      found = true;
      if (c.value("status", "") != "True") c["lastTransitionTime"] = Now();
      c["status"] = "True";
      c.erase("reason");
      c.erase("message");
    }
    if (!found) {
      conds.push_back({{"type", "PodScheduled"},
                       {"status", "True"},
                       {"lastProbeTime", nullptr},
                       {"lastTransitionTime", Now()}});
    }
    return pod;
  }

  std::string Now() const { return FormatRfc3339(clock_->WallNow()); }

  static std::string Binding(const std::string& pod, const std::string& node) {
    return json{{"apiVersion", "v1"},
                {"kind", "Binding"},
                {"metadata", {{"name", pod}}},
                {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}}
        .dump();
  }

  // Creates `pod`, binds it to node-7, and checks the stored bytes and
  // metadata. `spliced`: whether the text splice covers this shape (else the
  // Store edits the parsed pod).
  void ExpectBindMatches(json pod, bool spliced = true) {
    const std::string name = pod["metadata"]["name"];
    json status = pod.contains("status") ? pod["status"] : json();
    pod.erase("status");
    std::string before = Create(std::move(pod));
    ASSERT_FALSE(before.empty());
    if (!status.is_null()) {  // create resets status: write it through /status
      json patch = {{"status", status}};
      auto patched = store_->Patch(resources::kPods, "default", name, PatchType::kMerge,
                                   patch.dump(), "status");
      ASSERT_TRUE(patched.ok()) << patched.error().ToString();
      before = (*patched)->json;
      for (const auto& [key, value] : status.items()) {
        ASSERT_EQ(json::parse(before)["status"][key], value) << key;
      }
    }
    EXPECT_EQ(splice::PlanPodBinding(before, "node-7", Now()).has_value(), spliced) << before;
    clock_->Advance(std::chrono::seconds(90));  // the condition's time is the bind's
    ASSERT_TRUE(store_->Bind("default", name, Binding(name, "node-7")).ok());
    ObjectPtr after = Get(name);
    ASSERT_NE(after, nullptr);
    EXPECT_EQ(after->json, Expected(before, "node-7", after->rv).dump()) << "before: " << before;
    EXPECT_EQ(after->node_name, "node-7");
    EXPECT_EQ(after->rv, store_->CurrentResourceVersion());
    // Field selectors see the node.
    ListOptions lo;
    lo.field_selector = "spec.nodeName=node-7,metadata.name=" + name;
    auto listed = store_->List(resources::kPods, lo);
    ASSERT_TRUE(listed.ok());
    ASSERT_EQ(listed->items.size(), 1u);
    EXPECT_EQ(listed->items[0], after);
  }

  std::shared_ptr<FakeClock> clock_ = std::make_shared<FakeClock>();
  std::shared_ptr<Store> store_;
};

json Pod(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"labels", {{"app", "x"}}}}},
          {"spec",
           {{"schedulerName", "copse-scheduler"},
            {"containers", json::array({{{"name", "c"}, {"image", "pause"}}})}}}};
}

TEST_F(BindTest, PodWithoutStatus) { ExpectBindMatches(Pod("plain")); }

TEST_F(BindTest, StatusWithoutConditions) {
  json pod = Pod("phase");
  pod["status"] = {{"phase", "Pending"}, {"qosClass", "BestEffort"}};
  ExpectBindMatches(pod);
}

TEST_F(BindTest, EmptyConditionsAndOtherConditions) {
  json empty = Pod("empty");
  empty["status"] = {{"conditions", json::array()}};
  ExpectBindMatches(empty);
  json other = Pod("other");
  other["status"] = {{"conditions", json::array({{{"type", "Initialized"}, {"status", "True"}},
                                                 {{"status", "False"}, {"type", "Ready"}}})}};
  ExpectBindMatches(other);
}

TEST_F(BindTest, ExistingUnschedulableConditionIsUpdated) {
  json pod = Pod("retry");
  pod["status"] = {{"conditions", json::array({{{"type", "PodScheduled"},
                                                {"status", "False"},
                                                {"reason", "Unschedulable"},
                                                {"message", "0/3 nodes are available"},
                                                {"lastTransitionTime", "2020-01-01T00:00:00Z"}}})}};
  ExpectBindMatches(pod, /*spliced=*/false);
}

TEST_F(BindTest, EmptyNodeNameAndKeysAroundIt) {
  json pod = Pod("keys");
  pod["spec"]["nodeName"] = "";
  pod["spec"]["nodeSelector"] = {{"zone", "a"}};
  pod["spec"]["affinity"] = json::object();
  pod["metadata"]["annotations"] = {{"a", "b\"c\\d}"}, {"note", "\u00e9t\u00e9 \u2603"}};
  // An owner that exists (a missing one would garbage-collect the pod).
  auto owner = store_->Create(
      resources::kServices, "default",
      std::string_view(R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"o"},)"
                       R"("spec":{"ports":[{"port":80}]}})"));
  ASSERT_TRUE(owner.ok()) << owner.error().ToString();
  pod["metadata"]["ownerReferences"] = json::array(
      {{{"apiVersion", "v1"}, {"kind", "Service"}, {"name", "o"}, {"uid", (*owner)->uid}}});
  ExpectBindMatches(pod);
  EXPECT_EQ(Get("keys")->owner_uids, std::vector<std::string>{(*owner)->uid});
}

TEST_F(BindTest, BindingAnnotationsAreMerged) {
  const std::string before = Create(Pod("annotated"));
  json binding = json::parse(Binding("annotated", "node-2"));
  binding["metadata"]["annotations"] = {{"copse.dev/by", "test"}};
  ASSERT_TRUE(store_->Bind("default", "annotated", binding.dump()).ok());
  ObjectPtr after = Get("annotated");
  json expected = Expected(before, "node-2", after->rv);
  expected["metadata"]["annotations"]["copse.dev/by"] = "test";
  EXPECT_EQ(after->json, expected.dump());
}

TEST_F(BindTest, ConflictsChangeNothing) {
  Create(Pod("once"));
  ASSERT_TRUE(store_->Bind("default", "once", Binding("once", "node-1")).ok());
  ObjectPtr bound = Get("once");
  Status again = store_->Bind("default", "once", Binding("once", "node-2"));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().http_status, 409);
  EXPECT_EQ(again.error().message,
            "Operation cannot be fulfilled on pods/binding \"once\": pod once is already "
            "assigned to node \"node-1\"");
  EXPECT_EQ(Get("once"), bound);

  Create(Pod("uid"));
  json binding = json::parse(Binding("uid", "node-1"));
  binding["metadata"]["uid"] = "not-the-uid";
  ObjectPtr unbound = Get("uid");
  Status wrong_uid = store_->Bind("default", "uid", binding.dump());
  ASSERT_FALSE(wrong_uid.ok());
  EXPECT_EQ(wrong_uid.error().http_status, 409);
  EXPECT_NE(wrong_uid.error().message.find("Precondition failed: UID in precondition: "
                                           "not-the-uid"),
            std::string::npos);
  EXPECT_EQ(Get("uid"), unbound);

  Status missing = store_->Bind("default", "nope", Binding("nope", "node-1"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().http_status, 404);
}

TEST_F(BindTest, BadBindingsAreRejectedAndChangeNothing) {
  Create(Pod("bad"));
  ObjectPtr before = Get("bad");
  struct Case {
    std::string body;
    int status;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"[]", 400, "couldn't get version/kind; json parse error: invalid Binding"},
      {"{\"target\":", 400, "couldn't get version/kind; json parse error: invalid Binding"},
      {R"({"metadata":{"name":"other"},"target":{"name":"n"}})", 400,
       "name in URL does not match name in Binding object"},
      {R"({"metadata":{"name":"bad"}})", 422,
       "Binding.meta.k8s.io \"bad\" is invalid: target.name: Required value"},
      {R"({"metadata":{"name":"bad"},"target":{"name":7}})", 422,
       "Binding.meta.k8s.io \"bad\" is invalid: target.name: Required value"},
  };
  for (const Case& c : cases) {
    Status st = store_->Bind("default", "bad", c.body);
    ASSERT_FALSE(st.ok()) << c.body;
    EXPECT_EQ(st.error().http_status, c.status) << c.body;
    EXPECT_EQ(st.error().message, c.message) << c.body;
  }
  EXPECT_EQ(Get("bad"), before);
}

TEST_F(BindTest, DuplicateKeysTakeTheLastValueAsJsonParsingDoes) {
  Create(Pod("dup"));
  ASSERT_TRUE(store_
                  ->Bind("default", "dup",
                         R"({"target":{"name":"first"},"metadata":{"name":"dup"},)"
                         R"("target":{"name":"second"}})")
                  .ok());
  EXPECT_EQ(Get("dup")->node_name, "second");
}

TEST_F(BindTest, WatchersSeeOneModifiedEvent) {
  Create(Pod("watched"));
  WatchOptions wo;
  wo.resource_version = store_->CurrentResourceVersion();
  auto stream = store_->Watch(resources::kPods, wo);
  ASSERT_TRUE(stream.ok());
  ASSERT_TRUE(store_->Bind("default", "watched", Binding("watched", "node-3")).ok());
  std::vector<WatchEvent> events;
  (*stream)->Take(&events);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, WatchEventType::kModified);
  EXPECT_EQ(events[0].object, Get("watched"));
  EXPECT_EQ(events[0].rv, events[0].object->rv);
}

// --- the splicing primitives

TEST(JsonSpliceTest, FindMemberAndSortedInsertPoints) {
  const std::string text = R"({"a":1,"c":{"x":[1,{"y":"}"}]},"e":"q\"}"})";
  splice::Lookup c = splice::FindMember(text, 0, "c");
  ASSERT_TRUE(c.ok);
  ASSERT_TRUE(c.member.has_value());
  EXPECT_EQ(text.substr(c.member->value_pos, c.member->value_end - c.member->value_pos),
            R"({"x":[1,{"y":"}"}]})");
  splice::Lookup b = splice::FindMember(text, 0, "b");
  ASSERT_TRUE(b.ok);
  EXPECT_FALSE(b.member.has_value());
  EXPECT_FALSE(b.insert_at_end);
  EXPECT_EQ(b.insert_pos, text.find("\"c\""));
  splice::Lookup z = splice::FindMember(text, 0, "z");
  ASSERT_TRUE(z.ok);
  EXPECT_TRUE(z.insert_at_end);
  EXPECT_EQ(z.insert_pos, text.size() - 1);
  splice::Lookup empty = splice::FindMember("{}", 0, "k");
  ASSERT_TRUE(empty.ok);
  EXPECT_TRUE(empty.empty_object);
}

TEST(JsonSpliceTest, RejectsWhatNlohmannDoesNotWrite) {
  EXPECT_FALSE(splice::FindMember(R"({ "a":1})", 0, "a").ok);             // whitespace
  EXPECT_FALSE(splice::FindMember(R"({"a":1,"c":2,"b":3})", 0, "d").ok);  // unsorted
  EXPECT_FALSE(splice::FindMember(R"({"a\u0041":1})", 0, "b").ok);        // escaped key
  EXPECT_FALSE(splice::FindMember(R"({"a":1)", 0, "b").ok);               // truncated
  EXPECT_FALSE(splice::FindMember(R"([1])", 0, "a").ok);                  // not an object
  EXPECT_EQ(splice::SkipValue(R"("abc)", 0), splice::kNpos);
  EXPECT_EQ(splice::SkipValue(R"({"a":[1,2})", 0), splice::kNpos);
  EXPECT_FALSE(splice::IsPlainString("a\"b"));
  EXPECT_FALSE(splice::IsPlainString("\xc3\xa9"));
  EXPECT_TRUE(splice::IsPlainString("node-1.example.com"));
}

TEST(JsonSpliceTest, PodBindingPlanBytes) {
  const std::string pod =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","resourceVersion":"5"},)"
      R"("spec":{"containers":[],"priority":0}})";
  auto plan = splice::PlanPodBinding(pod, "n1", "2024-01-02T03:04:05Z");
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(splice::Apply(pod, *plan, "\"6\""),
            R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","resourceVersion":"6"},)"
            R"("spec":{"containers":[],"nodeName":"n1","priority":0},)"
            R"("status":{"conditions":[{"lastProbeTime":null,)"
            R"("lastTransitionTime":"2024-01-02T03:04:05Z","status":"True",)"
            R"("type":"PodScheduled"}]}})");
  // Shapes left to the JSON edit.
  EXPECT_FALSE(splice::PlanPodBinding(R"({"metadata":{"resourceVersion":"1"},"spec":{},)"
                                      R"("status":null})",
                                      "n1", "t")
                   .has_value());
  EXPECT_FALSE(splice::PlanPodBinding(R"({"metadata":{"resourceVersion":"1"},"spec":{},)"
                                      R"("status":{"conditions":[{"type":1}]}})",
                                      "n1", "t")
                   .has_value());
  EXPECT_FALSE(
      splice::PlanPodBinding(R"({"metadata":{"name":"x"},"spec":{}})", "n1", "t").has_value());
}

TEST(JsonSpliceTest, ApplyInAnyOrderWithPlaceholder) {
  std::vector<splice::Edit> edits(2);
  edits[0].pos = 5;
  edits[0].erase = 1;
  edits[0].placeholder = true;
  edits[1].pos = 1;
  edits[1].insert = "\"a\":0,";
  EXPECT_EQ(splice::Apply(R"({"b":1})", edits, "42"), R"({"a":0,"b":42})");
}

}  // namespace bind_test
}  // namespace copse::apiserver
