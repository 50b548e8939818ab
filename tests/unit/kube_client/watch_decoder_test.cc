#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "kube/watch.h"

namespace copse::kube {
namespace {

std::string PodJson(int i, int rv) {
  // About 1.3 KB, shaped like a scheduler-relevant pod.
  std::string name = "pod-" + std::to_string(i);
  return R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":")" + name +
         R"(","namespace":"default","uid":"0b8f3c2e-5b7a-4f7e-9a55-)" + std::to_string(100000 + i) +
         R"(","resourceVersion":")" + std::to_string(rv) +
         R"(","creationTimestamp":"2024-05-01T10:00:00Z","labels":{"app":"trainer","scheduling.copse.dev/pod-group":"gang-a","scheduling.copse.dev/subgroup":"workers"},"annotations":{"note":"escaped \"quote\" and \\ backslash"},"ownerReferences":[{"apiVersion":"grove.io/v1alpha1","kind":"PodClique","name":"pcs-0-workers","uid":"a1b2","controller":true}]},"spec":{"schedulerName":"copse-scheduler","priorityClassName":"high","containers":[{"name":"main","image":"registry.example.com/trainer:1.2.3","command":["python","train.py","--epochs","10"],"resources":{"requests":{"cpu":"4","memory":"16Gi","nvidia.com/gpu":"1"},"limits":{"cpu":"4","memory":"16Gi","nvidia.com/gpu":"1"}},"env":[{"name":"GROVE_PCS_NAME","value":"pcs"},{"name":"GROVE_PCS_INDEX","value":"0"},{"name":"GROVE_PCLQ_NAME","value":"pcs-0-workers"}],"ports":[{"containerPort":8080,"protocol":"TCP"}]}],"tolerations":[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}],"nodeSelector":{"topology.kubernetes.io/zone":"zone-1"},"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"copse.dev/rack","operator":"In","values":["rack-1-1-1","rack-1-1-2"]}]}]}}}},"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"0/5000 nodes are available"}]}})";
}

std::string EventLine(const char* type, const std::string& object) {
  return std::string(R"({"type":")") + type + R"(","object":)" + object + "}\n";
}

TEST(WatchEventDecoder, DecodesEventsSplitAnywhere) {
  const std::string pod1 = PodJson(1, 10);
  const std::string pod2 = PodJson(2, 11);
  const std::string bookmark =
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"12","annotations":{"k8s.io/initial-events-end":"true"}}})";
  const std::string stream = EventLine("ADDED", pod1) + "\r\n" + EventLine("MODIFIED", pod2) +
                             EventLine("DELETED", pod1) + EventLine("BOOKMARK", bookmark);
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    WatchEventDecoder decoder;
    std::vector<WatchEvent> events;
    size_t pos = 0;
    while (pos < stream.size()) {
      const size_t n = std::min<size_t>(stream.size() - pos, 1 + rng() % 700);
      decoder.Feed(std::string_view(stream).substr(pos, n));
      pos += n;
      WatchEvent event;
      while (true) {
        auto next = decoder.Next(event);
        ASSERT_TRUE(next.ok()) << next.error().ToString();
        if (!*next) break;
        events.push_back(event);
      }
    }
    ASSERT_EQ(events.size(), 4u);
    EXPECT_EQ(events[0].type, WatchEventType::kAdded);
    EXPECT_EQ(events[0].object, pod1);  // exact text, not re-serialized
    EXPECT_EQ(events[0].resource_version, "10");
    EXPECT_EQ(events[1].type, WatchEventType::kModified);
    EXPECT_EQ(events[1].object, pod2);
    EXPECT_EQ(events[1].resource_version, "11");
    EXPECT_EQ(events[2].type, WatchEventType::kDeleted);
    EXPECT_EQ(events[3].type, WatchEventType::kBookmark);
    EXPECT_EQ(events[3].resource_version, "12");
    EXPECT_EQ(decoder.pending_bytes(), 0u);
  }
}

TEST(WatchEventDecoder, FieldOrderDoesNotMatter) {
  WatchEventDecoder decoder;
  decoder.Feed(R"({"object":{"metadata":{"name":"a","resourceVersion":"5"}},"type":"ADDED"})"
               "\n");
  WatchEvent event;
  auto next = decoder.Next(event);
  ASSERT_TRUE(next.ok()) << next.error().ToString();
  ASSERT_TRUE(*next);
  EXPECT_EQ(event.type, WatchEventType::kAdded);
  EXPECT_EQ(event.resource_version, "5");
  EXPECT_EQ(event.object, R"({"metadata":{"name":"a","resourceVersion":"5"}})");
}

TEST(WatchEventDecoder, ExpiredErrorEventIsGone) {
  WatchEventDecoder decoder;
  decoder.Feed(
      R"json({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 5 (100)","reason":"Expired","code":410}})json"
      "\n");
  WatchEvent event;
  auto next = decoder.Next(event);
  ASSERT_FALSE(next.ok());
  EXPECT_EQ(next.error().code, ErrorCode::kGone);
  EXPECT_EQ(next.error().http_status, 410);
  EXPECT_EQ(next.error().reason, "Expired");
  EXPECT_EQ(next.error().message, "too old resource version: 5 (100)");
}

TEST(WatchEventDecoder, OtherErrorEventsKeepTheirCode) {
  WatchEventDecoder decoder;
  decoder.Feed(
      R"({"type":"ERROR","object":{"kind":"Status","status":"Failure","message":"boom","reason":"InternalError","code":500}})"
      "\n");
  WatchEvent event;
  auto next = decoder.Next(event);
  ASSERT_FALSE(next.ok());
  EXPECT_EQ(next.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(next.error().http_status, 500);
}

TEST(WatchEventDecoder, MalformedLinesAreErrorsAndDecodingContinues) {
  WatchEventDecoder decoder;
  decoder.Feed("{\"type\":\"ADDED\",\"object\":{\"metadata\":\n");
  decoder.Feed("{\"type\":\"EXPLODED\",\"object\":{}}\n");
  decoder.Feed("{\"type\":\"ADDED\"}\n");
  decoder.Feed("{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"resourceVersion\":\"9\"}}}\n");
  WatchEvent event;
  auto first = decoder.Next(event);
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.error().code, ErrorCode::kInternal);
  EXPECT_NE(first.error().message.find("malformed event"), std::string::npos);
  auto second = decoder.Next(event);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error().message.find("unknown event type \"EXPLODED\""), std::string::npos);
  auto third = decoder.Next(event);
  ASSERT_FALSE(third.ok());
  EXPECT_NE(third.error().message.find("without object"), std::string::npos);
  auto fourth = decoder.Next(event);
  ASSERT_TRUE(fourth.ok());
  ASSERT_TRUE(*fourth);
  EXPECT_EQ(event.resource_version, "9");
}

TEST(WatchEventDecoder, OversizedEventIsRejected) {
  WatchEventDecoder decoder(1024);
  WatchEvent event;
  decoder.Feed(EventLine("ADDED", PodJson(1, 1)).substr(0, 1100));
  auto next = decoder.Next(event);
  ASSERT_FALSE(next.ok());
  EXPECT_NE(next.error().message.find("larger than 1024 bytes"), std::string::npos);
  // The rest of the oversized line is dropped; the next line decodes.
  decoder.Feed(EventLine("ADDED", PodJson(1, 1)).substr(1100));
  decoder.Feed(EventLine("ADDED", R"({"metadata":{"resourceVersion":"2"}})"));
  next = decoder.Next(event);
  ASSERT_TRUE(next.ok()) << next.error().ToString();
  ASSERT_TRUE(*next);
  EXPECT_EQ(event.resource_version, "2");
}

TEST(WatchEventDecoder, PendingBytesShowATruncatedEvent) {
  WatchEventDecoder decoder;
  decoder.Feed("{\"type\":\"ADD");
  WatchEvent event;
  auto next = decoder.Next(event);
  ASSERT_TRUE(next.ok());
  EXPECT_FALSE(*next);
  EXPECT_EQ(decoder.pending_bytes(), 12u);
}

// The hot path's shape: 100,000 events fed in network-sized pieces through
// the zero-copy path all come out, in order. Its speed (>= 100,000 events/s)
// is a benchmark, not a test: bench/micro/watch_decoder_bench.cc.
TEST(WatchEventDecoder, DecodesAHundredThousandEventsFedInNetworkSizedPieces) {
  constexpr int kEvents = 100'000;
  std::string stream;
  for (int i = 0; i < 1000; ++i) stream += EventLine("MODIFIED", PodJson(i, 1000 + i));
  WatchEventDecoder decoder;
  WatchEvent event;
  size_t decoded = 0;
  for (int round = 0; round < kEvents / 1000; ++round) {
    for (size_t pos = 0; pos < stream.size(); pos += 16384) {
      const size_t n = std::min<size_t>(16384, stream.size() - pos);
      std::memcpy(decoder.Prepare(n), stream.data() + pos, n);
      decoder.Commit(n);
      while (true) {
        auto next = decoder.Next(event);
        ASSERT_TRUE(next.ok());
        if (!*next) break;
        ASSERT_EQ(event.resource_version, std::to_string(1000 + decoded % 1000));
        ++decoded;
      }
    }
  }
  EXPECT_EQ(decoded, static_cast<size_t>(kEvents));
}

TEST(DecodeList, ItemsAreRawTextAndMetadataIsRead) {
  const std::string pod = PodJson(1, 7);
  auto list = DecodeList(
      R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"42","continue":"tok","remainingItemCount":3},"items":[)" +
      pod + "," + pod + "]}");
  ASSERT_TRUE(list.ok()) << list.error().ToString();
  EXPECT_EQ(list->kind, "PodList");
  EXPECT_EQ(list->ItemKind(), "Pod");
  EXPECT_EQ(list->api_version, "v1");
  EXPECT_EQ(list->resource_version, "42");
  EXPECT_EQ(list->continue_token, "tok");
  EXPECT_EQ(list->remaining_item_count, 3);
  ASSERT_EQ(list->items.size(), 2u);
  EXPECT_EQ(list->items[0], pod);
}

TEST(DecodeList, NullItemsAndErrors) {
  auto empty = DecodeList(R"({"kind":"NodeList","metadata":{"resourceVersion":"1"},"items":null})");
  ASSERT_TRUE(empty.ok()) << empty.error().ToString();
  EXPECT_TRUE(empty->items.empty());
  EXPECT_FALSE(empty->remaining_item_count.has_value());
  EXPECT_FALSE(DecodeList("[]").ok());
  EXPECT_FALSE(DecodeList(R"({"kind":"Pod","metadata":{}})").ok());
  EXPECT_FALSE(DecodeList(R"({"items":[1,2]})").ok());
  EXPECT_EQ(DecodeList("{").error().code, ErrorCode::kInternal);
}

TEST(DecodeScale, ReadsSpecAndStatus) {
  auto scale = DecodeScale(
      R"({"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"web","namespace":"ns","uid":"u1","resourceVersion":"8"},"spec":{"replicas":3},"status":{"replicas":2,"selector":"app=web"}})");
  ASSERT_TRUE(scale.ok()) << scale.error().ToString();
  EXPECT_EQ(scale->name, "web");
  EXPECT_EQ(scale->namespace_, "ns");
  EXPECT_EQ(scale->uid, "u1");
  EXPECT_EQ(scale->resource_version, "8");
  EXPECT_EQ(scale->spec_replicas, 3);
  EXPECT_EQ(scale->status_replicas, 2);
  EXPECT_EQ(scale->selector, "app=web");
  EXPECT_FALSE(DecodeScale(R"({"kind":"Pod"})").ok());
}

TEST(ErrorFromResponse, DecodesStatus) {
  Error e = ErrorFromResponse(
      409,
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"a\" already exists","reason":"AlreadyExists","details":{"name":"a","kind":"pods"},"code":409})");
  EXPECT_EQ(e.code, ErrorCode::kAlreadyExists);
  EXPECT_EQ(e.http_status, 409);
  EXPECT_EQ(e.reason, "AlreadyExists");
  EXPECT_EQ(e.message, "pods \"a\" already exists");

  e = ErrorFromResponse(409,
                        R"({"kind":"Status","reason":"Conflict","message":"stale","code":409})");
  EXPECT_EQ(e.code, ErrorCode::kConflict);
  e = ErrorFromResponse(422, R"({"kind":"Status","reason":"Invalid","code":422})");
  EXPECT_EQ(e.code, ErrorCode::kInvalid);
  EXPECT_EQ(e.message, "the server responded with HTTP 422 (Invalid)");
  e = ErrorFromResponse(
      401, R"({"kind":"Status","reason":"Unauthorized","message":"Unauthorized","code":401})");
  EXPECT_EQ(e.code, ErrorCode::kUnauthorized);
  e = ErrorFromResponse(429, R"({"kind":"Status","reason":"TooManyRequests","code":429})");
  EXPECT_EQ(e.code, ErrorCode::kTooManyRequests);
  e = ErrorFromResponse(502, "<html>bad gateway</html>");
  EXPECT_EQ(e.code, ErrorCode::kUnavailable);
  EXPECT_EQ(e.message, "the server responded with HTTP 502: <html>bad gateway</html>");
  e = ErrorFromResponse(404, "");
  EXPECT_EQ(e.code, ErrorCode::kNotFound);
}

TEST(ErrorCodeFor, MapsStatusesAndReasons) {
  EXPECT_EQ(ErrorCodeFor(400, "BadRequest"), ErrorCode::kInvalid);
  EXPECT_EQ(ErrorCodeFor(403, "Forbidden"), ErrorCode::kForbidden);
  EXPECT_EQ(ErrorCodeFor(404, "NotFound"), ErrorCode::kNotFound);
  EXPECT_EQ(ErrorCodeFor(410, ""), ErrorCode::kGone);
  EXPECT_EQ(ErrorCodeFor(500, "Expired"), ErrorCode::kGone);
  EXPECT_EQ(ErrorCodeFor(504, "Timeout"), ErrorCode::kTimeout);
  EXPECT_EQ(ErrorCodeFor(503, ""), ErrorCode::kUnavailable);
  EXPECT_EQ(ErrorCodeFor(418, ""), ErrorCode::kInternal);
}

}  // namespace
}  // namespace copse::kube
