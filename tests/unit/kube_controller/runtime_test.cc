// kube/controller: the work queue (dedup, no concurrent processing of a key,
// delays on the injected clock, per-key backoff, coalescing), expectations,
// conditions and status bodies.

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "kube/controller/expectations.h"
#include "kube/controller/objects.h"
#include "kube/controller/workqueue.h"
#include "kube/pod_disruption_budget.h"

namespace copse::kube::controller {
namespace {

using namespace std::chrono_literals;

// Get() with a deadline, so a test cannot hang on an empty queue.
bool GetWithin(WorkQueue& queue, std::string* key, std::chrono::milliseconds timeout = 2s) {
  auto future = std::async(std::launch::async, [&] {
    std::string k;
    bool ok = queue.Get(&k);
    return std::make_pair(ok, k);
  });
  if (future.wait_for(timeout) != std::future_status::ready) {
    queue.ShutDown();
    future.get();
    return false;
  }
  auto [ok, k] = future.get();
  *key = k;
  return ok;
}

TEST(WorkQueue, DeduplicatesAndNeverHandsOutAKeyTwiceAtOnce) {
  auto clock = std::make_shared<FakeClock>();
  WorkQueue queue(clock);
  queue.Add("a");
  queue.Add("a");
  queue.Add("b");
  EXPECT_EQ(queue.Len(), 2u);
  std::string key;
  ASSERT_TRUE(GetWithin(queue, &key));
  EXPECT_EQ(key, "a");
  queue.Add("a");  // while processing: marked dirty, not queued
  EXPECT_EQ(queue.Len(), 1u);
  ASSERT_TRUE(GetWithin(queue, &key));
  EXPECT_EQ(key, "b");
  queue.Done("b");
  EXPECT_EQ(queue.Len(), 0u);
  queue.Done("a");  // requeued now
  EXPECT_EQ(queue.Len(), 1u);
  ASSERT_TRUE(GetWithin(queue, &key));
  EXPECT_EQ(key, "a");
  queue.Done("a");
  EXPECT_TRUE(queue.Idle());
}

TEST(WorkQueue, DelaysFollowTheInjectedClock) {
  auto clock = std::make_shared<FakeClock>();
  WorkQueue queue(clock);
  queue.AddAfter("later", 10min);
  EXPECT_FALSE(queue.Idle());
  EXPECT_EQ(queue.Len(), 0u);
  clock->Advance(9min);
  std::string key;
  EXPECT_EQ(queue.Len(), 0u);  // still delayed
  clock->Advance(2min);
  ASSERT_TRUE(GetWithin(queue, &key));
  EXPECT_EQ(key, "later");
  queue.Done(key);
}

TEST(WorkQueue, RateLimitedBackoffGrowsAndForgetResetsIt) {
  auto clock = std::make_shared<FakeClock>();
  WorkQueueOptions options;
  options.base_delay = 1s;
  options.max_delay = 8s;
  WorkQueue queue(clock, options);
  std::string key;
  queue.AddRateLimited("k");  // 1 s
  clock->Advance(1s);
  ASSERT_TRUE(GetWithin(queue, &key));
  queue.Done(key);
  queue.AddRateLimited("k");  // 2 s
  clock->Advance(1s);
  EXPECT_EQ(queue.Len(), 0u);
  clock->Advance(1s);
  ASSERT_TRUE(GetWithin(queue, &key));
  queue.Done(key);
  queue.Forget("k");
  queue.AddRateLimited("k");  // back to 1 s
  clock->Advance(1s);
  ASSERT_TRUE(GetWithin(queue, &key));
  queue.Done(key);
}

TEST(WorkQueue, CoalescesABurstIntoOneAdd) {
  auto clock = std::make_shared<FakeClock>();
  WorkQueue queue(clock);
  for (int i = 0; i < 100; ++i) queue.AddCoalesced("burst", 5ms);
  std::string key;
  ASSERT_TRUE(GetWithin(queue, &key));
  EXPECT_EQ(key, "burst");
  EXPECT_EQ(queue.Len(), 0u);
  queue.Done(key);
  EXPECT_TRUE(queue.Idle());
}

TEST(WorkQueue, ShutDownReleasesWaiters) {
  WorkQueue queue(std::make_shared<FakeClock>());
  auto waiter = std::async(std::launch::async, [&] {
    std::string k;
    return queue.Get(&k);
  });
  queue.ShutDown();
  EXPECT_FALSE(waiter.get());
}

TEST(Expectations, PendingUntilObservedOrExpired) {
  auto clock = std::make_shared<FakeClock>();
  Expectations expectations(clock, 5min);
  EXPECT_TRUE(expectations.Satisfied("ns/pclq"));
  expectations.ExpectCreations("ns/pclq", 2);
  EXPECT_FALSE(expectations.Satisfied("ns/pclq"));
  expectations.CreationObserved("ns/pclq");
  EXPECT_FALSE(expectations.Satisfied("ns/pclq"));
  expectations.CreationObserved("ns/pclq");
  EXPECT_TRUE(expectations.Satisfied("ns/pclq"));
  expectations.CreationObserved("ns/pclq");  // an extra observation does not go negative
  expectations.ExpectDeletions("ns/pclq", 1);
  EXPECT_FALSE(expectations.Satisfied("ns/pclq"));
  clock->Advance(6min);  // a lost event must not wedge the clique
  EXPECT_TRUE(expectations.Satisfied("ns/pclq"));
}

TEST(Conditions, TransitionTimeChangesOnlyWithTheStatus) {
  std::vector<kube::Condition> conditions;
  kube::Condition c;
  c.type = "MinAvailableBreached";
  c.status = "False";
  c.reason = "SufficientReadyPods";
  EXPECT_TRUE(SetCondition(conditions, c, "2024-01-01T00:00:00Z"));
  c.message = "3 >= 3";
  EXPECT_TRUE(SetCondition(conditions, c, "2024-01-01T00:01:00Z"));
  EXPECT_EQ(conditions[0].last_transition_time, "2024-01-01T00:00:00Z");
  EXPECT_FALSE(SetCondition(conditions, c, "2024-01-01T00:02:00Z"));
  c.status = "True";
  EXPECT_TRUE(SetCondition(conditions, c, "2024-01-01T00:03:00Z"));
  EXPECT_EQ(conditions[0].last_transition_time, "2024-01-01T00:03:00Z");
  EXPECT_EQ(
      ParseRfc3339("2024-01-01T00:03:00Z").value() - ParseRfc3339("2024-01-01T00:00:00Z").value(),
      std::chrono::minutes(3));
  EXPECT_FALSE(ParseRfc3339("yesterday").has_value());
}

TEST(StatusBody, CarriesOnlyIdentityAndStatus) {
  PodDisruptionBudget pdb;
  pdb.meta.name = "p";
  pdb.meta.namespace_ = "ns";
  pdb.meta.resource_version = "42";
  pdb.meta.labels = {{"a", "b"}};
  pdb.spec.min_available = IntOrString::FromInt(2);
  pdb.status.current_healthy = 2;
  auto body = nlohmann::json::parse(StatusBody(pdb));
  EXPECT_EQ(body["metadata"],
            nlohmann::json({{"name", "p"}, {"namespace", "ns"}, {"resourceVersion", "42"}}));
  EXPECT_EQ(body["status"]["currentHealthy"], 2);
  EXPECT_FALSE(body.contains("spec") && body["spec"].contains("minAvailable"));  // no spec
  EXPECT_EQ(body["kind"], "PodDisruptionBudget");
}

}  // namespace
}  // namespace copse::kube::controller
