// Hot-path promises: selector Matches() and Quantity comparisons / integer
// views do not allocate. A counting global operator new (this test binary
// only) checks it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <new>

#include "core/labels.h"
#include "core/quantity.h"

// GCC pairs the inlined replacement new/delete with malloc/free and warns;
// here they are the same allocator on purpose.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace {
thread_local bool g_counting = false;
thread_local size_t g_allocations = 0;
}  // namespace

namespace {
void* CountedMalloc(std::size_t size) noexcept {
  if (g_counting) ++g_allocations;
  return std::malloc(size == 0 ? 1 : size);
}
}  // namespace

// Every non-aligned form is replaced so that new and delete always pair up
// (also under sanitizers, whose own forms would otherwise mix in).
void* operator new(std::size_t size) {
  if (void* p = CountedMalloc(size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
  if (void* p = CountedMalloc(size)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return CountedMalloc(size); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return CountedMalloc(size);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace copse {
namespace {

// Runs `fn` and returns how many allocations it made on this thread.
template <typename Fn>
size_t CountAllocations(Fn&& fn) {
  g_allocations = 0;
  g_counting = true;
  fn();
  g_counting = false;
  return g_allocations;
}

TEST(NoAlloc, CounterSeesAllocations) {
  // The hook itself must work, or the tests below prove nothing.
  const size_t n = CountAllocations([] {
    std::string* s = new std::string(100, 'x');
    delete s;
  });
  EXPECT_GE(n, 2u);
}

TEST(NoAlloc, LabelSelectorAndNodeSelectorMatches) {
  const LabelSelector selector =
      LabelSelector::Parse("app=web,tier in (a,b),zone notin (z1),!canary,gen>3,region").value();
  const Labels labels = {
      {"app", "web"},
      {"tier", "b"},
      {"gen", "12"},
      {"region", "eu-west-1"},
      {"a-rather-long-label-key-that-is-not-small", "and-a-long-value-too-for-sso"}};
  const NodeSelector node_selector{{
      NodeSelectorTerm{{{"topology.kubernetes.io/zone", SelectorOp::kIn, {"zone-1", "zone-2"}}},
                       {}},
      NodeSelectorTerm{{{"gen", SelectorOp::kGt, {"10"}}, {"app", SelectorOp::kExists, {}}},
                       {{"metadata.name", SelectorOp::kIn, {"node-with-a-long-name-0001"}}}},
  }};
  bool matched = false;
  bool node_matched = false;
  const size_t n = CountAllocations([&] {
    for (int i = 0; i < 100; ++i) {
      matched = selector.Matches(labels);
      node_matched = node_selector.Matches(labels, "node-with-a-long-name-0001");
    }
  });
  EXPECT_TRUE(matched);
  EXPECT_TRUE(node_matched);
  EXPECT_EQ(n, 0u);
}

TEST(NoAlloc, QuantityCompareAndIntegerViews) {
  const Quantity a = Quantity::Parse("1.5Gi").value();
  const Quantity b = Quantity::Parse("1e40").value();
  const Quantity c = Quantity::Parse("1536Mi").value();
  int64_t sum = 0;
  bool ordered = false;
  const size_t n = CountAllocations([&] {
    ordered = a < b && a == c && b > c;
    sum = a.Value() + b.Value() / 2 + c.MilliValue() % 7 + SchedulingUnits(kResourceCPU, a);
  });
  EXPECT_TRUE(ordered);
  EXPECT_NE(sum, 0);
  EXPECT_EQ(n, 0u);
}

}  // namespace
}  // namespace copse
