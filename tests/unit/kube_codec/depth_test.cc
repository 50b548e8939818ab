// The client's decoders read JSON nested as deep as Kubernetes allows
// (kMaxJsonDepth, 10,000 levels, where simdjson stops at 1,024 by default)
// and refuse deeper documents with an error naming the limit, without
// recursing through them.

#include <gtest/gtest.h>

#include <string>

#include "core/json_text.h"
#include "kube/codec.h"
#include "kube/watch.h"

namespace copse::kube {
namespace {

// {"apiVersion":"example.com/v1","kind":"Deep","metadata":{...},"spec":[[...]]}
// with `depth` levels in all.
std::string DeepObject(size_t depth, const std::string& name = "deep") {
  const size_t arrays = depth - 1;  // the object itself is one level
  std::string out = R"({"apiVersion":"example.com/v1","kind":"Deep","metadata":{"name":")" + name +
                    R"(","resourceVersion":"7"},"spec":)";
  out.append(arrays, '[');
  out.append(arrays, ']');
  out += '}';
  return out;
}

TEST(JsonDepth, TheScanCountsObjectsAndArraysAndSkipsStrings) {
  EXPECT_FALSE(JsonDepthExceeds(DeepObject(kMaxJsonDepth)));
  EXPECT_TRUE(JsonDepthExceeds(DeepObject(kMaxJsonDepth + 1)));
  // Brackets inside strings (escaped quotes included) do not count.
  const std::string in_strings =
      "[\"" + std::string(20000, '[') + "\\\"" + std::string(20000, '{') + "\"]";
  EXPECT_FALSE(JsonDepthExceeds(in_strings));
  EXPECT_TRUE(JsonDepthExceeds(std::string(3, '[') + "1", 2));
  EXPECT_FALSE(JsonDepthExceeds("[[1],[2],[3]]", 2));
}

TEST(JsonDepth, ObjectsNestedToTheLimitDecode) {
  // 5,000 levels: beyond simdjson's default, within Kubernetes'.
  auto object = Unstructured::Decode(DeepObject(5000));
  ASSERT_TRUE(object.ok()) << object.error().ToString();
  EXPECT_EQ(object->meta.name, "deep");
  auto at_limit = Unstructured::Decode(DeepObject(kMaxJsonDepth));
  ASSERT_TRUE(at_limit.ok()) << at_limit.error().ToString();
}

TEST(JsonDepth, DeeperObjectsAreRefusedNamingTheLimit) {
  auto refused = Unstructured::Decode(DeepObject(kMaxJsonDepth + 1));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalid);
  EXPECT_NE(refused.error().message.find("nested deeper than 10000 levels"), std::string::npos)
      << refused.error().message;
  // Far deeper: the same answer, no stack overflow.
  auto far = Unstructured::Decode(DeepObject(1'000'000));
  ASSERT_FALSE(far.ok());
  EXPECT_NE(far.error().message.find("10000"), std::string::npos);
}

TEST(JsonDepth, WatchEventsAndListsFollowTheSameLimit) {
  WatchEventDecoder decoder;
  decoder.Feed(R"({"type":"ADDED","object":)" + DeepObject(5000) + "}\n");
  decoder.Feed(R"({"type":"ADDED","object":)" + DeepObject(kMaxJsonDepth + 5) + "}\n");
  WatchEvent event;
  auto first = decoder.Next(event);
  ASSERT_TRUE(first.ok()) << first.error().ToString();
  ASSERT_TRUE(*first);
  EXPECT_EQ(event.resource_version, "7");
  auto second = decoder.Next(event);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error().message.find("nested deeper than 10000 levels"), std::string::npos)
      << second.error().message;

  auto list = DecodeList(R"({"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":"9"},)"
                         R"("items":[)" +
                         DeepObject(5000) + "]}");
  ASSERT_TRUE(list.ok()) << list.error().ToString();
  ASSERT_EQ(list->items.size(), 1u);
  auto too_deep = DecodeList(R"({"apiVersion":"v1","kind":"List","metadata":{},"items":[)" +
                             DeepObject(kMaxJsonDepth) + "]}");
  ASSERT_FALSE(too_deep.ok());
  EXPECT_NE(too_deep.error().message.find("10000"), std::string::npos) << too_deep.error().message;
}

// A Scale whose unknown field "x" nests so that the document is `depth`
// levels deep (the object is level 1).
std::string DeepScale(size_t depth) {
  std::string out = R"({"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"web",)"
                    R"("namespace":"default","resourceVersion":"7"},"spec":{"replicas":3},)"
                    R"("status":{"replicas":2,"selector":"app=web"},"x":)";
  out.append(depth - 1, '[');
  out.append(depth - 1, ']');
  out += '}';
  return out;
}

TEST(JsonDepth, ScalesFollowTheSameLimit) {
  auto scale = DecodeScale(DeepScale(5000));
  ASSERT_TRUE(scale.ok()) << scale.error().ToString();
  EXPECT_EQ(scale->spec_replicas, 3);
  EXPECT_EQ(scale->selector, "app=web");
  ASSERT_TRUE(DecodeScale(DeepScale(kMaxJsonDepth)).ok());
  auto too_deep = DecodeScale(DeepScale(kMaxJsonDepth + 1));
  ASSERT_FALSE(too_deep.ok());
  EXPECT_NE(too_deep.error().message.find("nested deeper than 10000 levels"), std::string::npos)
      << too_deep.error().message;
  auto far = DecodeScale(DeepScale(1'000'000));
  ASSERT_FALSE(far.ok());
  EXPECT_NE(far.error().message.find("10000"), std::string::npos);
}

}  // namespace
}  // namespace copse::kube
