// The hot-path promise of cel/: evaluating a typical selector against a
// device allocates nothing (the device is read through views, constants are
// folded at compile time). A counting global operator new (this test binary
// only) checks it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <new>

#include "cel/cel.h"
#include "tests/unit/cel/test_device.h"

// GCC pairs the inlined replacement new/delete with malloc/free and warns;
// here they are the same allocator on purpose.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace {
thread_local bool g_cel_counting = false;
thread_local size_t g_cel_allocations = 0;
}  // namespace

namespace {
void* CelCountedMalloc(std::size_t size) noexcept {
  if (g_cel_counting) ++g_cel_allocations;
  return std::malloc(size == 0 ? 1 : size);
}
}  // namespace

// Every non-aligned form is replaced so that new and delete always pair up
// (also under sanitizers, whose own forms would otherwise mix in).
void* operator new(std::size_t size) {
  if (void* p = CelCountedMalloc(size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
  if (void* p = CelCountedMalloc(size)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return CelCountedMalloc(size);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return CelCountedMalloc(size);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace copse::cel {
namespace no_alloc_test {

template <typename Fn>
size_t CountAllocations(Fn&& fn) {
  g_cel_allocations = 0;
  g_cel_counting = true;
  fn();
  g_cel_counting = false;
  return g_cel_allocations;
}

TEST(CelNoAlloc, TypicalSelectorsEvaluateWithoutAllocating) {
  testing::TestDevice device;
  for (
      const char* expr : {
          R"(device.driver == "gpu.example.com")",
          R"(device.attributes["gpu.example.com"].model == "H100" && device.capacity["gpu.example.com"].memory.compareTo(quantity("64Gi")) >= 0)",
          R"(cel.bind(d, device.attributes["gpu.example.com"], d.model in ["A100", "H100"] && d.driverVersion.isGreaterThan(semver("1.0.0")) && has(d.nvlinkDomain) && d.nvlinkDomain.startsWith("nvl-")))",
          R"(device.attributes["gpu.example.com"].index > 1 && !has(device.attributes["x.example.com"].y))",
      }) {
    Result<Program> program = Compile(expr);
    ASSERT_TRUE(program.ok()) << program.error().message;
    bool matched = false;
    size_t n = CountAllocations([&] {
      Result<bool> m = program->Matches(device.device);
      matched = m.ok() && *m;
    });
    EXPECT_TRUE(matched) << expr;
    EXPECT_EQ(n, 0u) << expr;
  }
}

// The counter works: an evaluation that builds a list allocates.
TEST(CelNoAlloc, CounterSeesAllocations) {
  testing::TestDevice device;
  Result<Program> program =
      Compile(R"(device.attributes["gpu.example.com"].model.split("").size() == 4)");
  ASSERT_TRUE(program.ok());
  EXPECT_GT(CountAllocations([&] { (void)program->Matches(device.device); }), 0u);
}

}  // namespace no_alloc_test
}  // namespace copse::cel
