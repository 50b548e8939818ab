// JSON nested up to the API server's depth limit (kMaxJsonDepth, 10,000)
// through every write path, and one level more (issue 17.1): a body inside
// the limit is answered (stored, or refused with a 4xx) by every recursive
// algorithm that meets it (merges, strategic merge, JSON patch, apply and
// managed fields, validation, defaulting, printing), whatever Content-Type
// it declares; a body over it gets 400 naming the limit before anything
// parses it; and the server keeps serving.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/json_text.h"
#include "tests/integration/apiserver/test_util.h"

namespace copse::apiserver::testing {
namespace depth_test {

// `levels` nested objects ({"a":{"a":...1}}) or arrays ([[...]]), as text:
// nlohmann would recurse to build them.
std::string Nest(size_t levels, bool objects) {
  std::string out;
  if (objects) {
    out.reserve(levels * 6 + 1);
    for (size_t i = 0; i < levels; ++i) out += "{\"a\":";
    out += '1';
    out.append(levels, '}');
  } else {
    out.append(levels, '[');
    out.append(levels, ']');
  }
  return out;
}

// One write: a body whose JSON nests `depth` levels in all.
struct Write {
  std::string what;
  std::string method;
  std::string target;
  std::string content_type;
  std::string body;
};

// Every write path, each with a body nested `depth` levels deep (the deep
// part at `objects` ? objects : arrays).
std::vector<Write> Writes(size_t depth, bool objects) {
  const std::string pod = "/api/v1/namespaces/default/pods/p";
  const std::string cms = "/api/v1/namespaces/default/configmaps";
  auto config_map = [&](const std::string& name, size_t levels) {
    // The object is level 1, "x" holds the rest.
    return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name +
           R"("},"data":{"k":"v"},"x":)" + Nest(levels - 1, objects) + "}";
  };
  // metadata.annotations at level 3.
  const std::string annotations =
      R"({"metadata":{"annotations":)" + Nest(depth - 2, objects) + "}}";
  // spec.containers[0].env[0].valueFrom at level 7.
  const std::string value_from =
      R"({"spec":{"containers":[{"name":"main","env":[{"name":"E","valueFrom":)" +
      Nest(depth - 6, objects) + "}]}]}}";
  // The value of the operation at level 3.
  const std::string json_patch =
      R"([{"op":"add","path":"/metadata/annotations","value":)" + Nest(depth - 2, objects) + "}]";
  const std::string cm_json_patch =
      R"([{"op":"add","path":"/x","value":)" + Nest(depth - 2, objects) + "}]";
  // YAML whose flow collection nests `depth` levels (what the bracket scan
  // counts; the server takes only JSON for apply and refuses other YAML).
  const std::string yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied-yaml\nx: " +
                           Nest(depth, objects) + "\n";
  std::vector<Write> writes = {
      {"create, application/json", "POST", cms, "application/json", config_map("c1", depth)},
      {"create, */*", "POST", cms, "*/*", config_map("c2", depth)},
      {"create, no Content-Type", "POST", cms, "", config_map("c3", depth)},
      {"create, application/yaml", "POST", cms, "application/yaml", config_map("c4", depth)},
      {"create, text/plain", "POST", cms, "text/plain", config_map("c5", depth)},
      {"update, application/json", "PUT", cms + "/cm", "application/json", config_map("cm", depth)},
      {"update, */*", "PUT", cms + "/cm", "*/*", config_map("cm", depth)},
      {"merge patch", "PATCH", pod, "application/merge-patch+json", annotations},
      {"merge patch, valueFrom", "PATCH", pod, "application/merge-patch+json", value_from},
      {"strategic merge patch", "PATCH", pod, "application/strategic-merge-patch+json",
       annotations},
      {"strategic merge patch, valueFrom", "PATCH", pod, "application/strategic-merge-patch+json",
       value_from},
      {"strategic merge patch of a ConfigMap", "PATCH", cms + "/cm",
       "application/strategic-merge-patch+json", config_map("cm", depth)},
      {"merge patch of a ConfigMap", "PATCH", cms + "/cm", "application/merge-patch+json",
       config_map("cm", depth)},
      {"JSON patch", "PATCH", pod, "application/json-patch+json", json_patch},
      {"JSON patch of a ConfigMap", "PATCH", cms + "/cm", "application/json-patch+json",
       cm_json_patch},
      {"status merge patch", "PATCH", pod + "/status", "application/merge-patch+json", annotations},
      {"apply (JSON)", "PATCH", cms + "/applied?fieldManager=depth", "application/apply-patch+yaml",
       config_map("applied", depth)},
      {"apply of a Pod (JSON)", "PATCH", pod + "?fieldManager=depth&force=true",
       "application/apply-patch+yaml",
       R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":)" +
           Nest(depth - 2, objects) + "}}"},
      {"apply (YAML)", "PATCH", cms + "/applied-yaml?fieldManager=depth",
       "application/apply-patch+yaml", yaml},
      {"dry-run create", "POST", cms + "?dryRun=All", "application/json", config_map("c6", depth)},
      {"delete with a body", "DELETE", cms + "/c7", "application/json",
       R"({"kind":"DeleteOptions","apiVersion":"v1","x":)" + Nest(depth - 1, objects) + "}"},
  };
  return writes;
}

class Depth : public ApiServerTest, public ::testing::WithParamInterface<bool> {
 protected:
  void SetUp() override {
    ApiServerTest::SetUp();
    ASSERT_EQ(client().Post("/api/v1/namespaces/default/pods", MakePod("p")).status, 201);
    ASSERT_EQ(client()
                  .Post("/api/v1/namespaces/default/configmaps", {{"apiVersion", "v1"},
                                                                  {"kind", "ConfigMap"},
                                                                  {"metadata", {{"name", "cm"}}},
                                                                  {"data", {{"k", "v"}}}})
                  .status,
              201);
  }
  void ExpectServing(const std::string& after) {
    auto got = client().Get("/api/v1/namespaces/default/pods/p");
    ASSERT_EQ(got.status, 200) << "after " << after;
  }
};

TEST_P(Depth, EveryWritePathAnswersBodiesNestedToTheLimit) {
  const bool objects = GetParam();
  for (const Write& w : Writes(kMaxJsonDepth, objects)) {
    ASSERT_FALSE(JsonDepthExceeds(w.body, kMaxJsonDepth)) << w.what;
    ASSERT_TRUE(JsonDepthExceeds(w.body, kMaxJsonDepth - 1)) << w.what;
    auto r = client().Request(w.method, w.target, w.body, w.content_type);
    EXPECT_GE(r.status, 200) << w.what;
    EXPECT_LT(r.status, 500) << w.what << ": " << r.body.substr(0, 300);
    ExpectServing(w.what);
  }
}

TEST_P(Depth, EveryWritePathRefusesBodiesNestedOneLevelMoreNamingTheLimit) {
  const bool objects = GetParam();
  const auto pods = Snapshot(kube::resources::kPods);
  for (const Write& w : Writes(kMaxJsonDepth + 1, objects)) {
    auto r = client().Request(w.method, w.target, w.body, w.content_type);
    EXPECT_EQ(r.status, 400) << w.what << ": " << r.body.substr(0, 300);
    const json status = r.Json();
    EXPECT_EQ(status.value("reason", ""), "BadRequest") << w.what;
    EXPECT_NE(status.value("message", "").find("10000 levels"), std::string::npos)
        << w.what << ": " << r.body.substr(0, 300);
    ExpectServing(w.what);
  }
  EXPECT_EQ(Snapshot(kube::resources::kPods), pods);
}

INSTANTIATE_TEST_SUITE_P(ObjectsAndArrays, Depth, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Objects" : "Arrays";
                         });

}  // namespace depth_test
}  // namespace copse::apiserver::testing
