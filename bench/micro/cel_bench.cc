// DRA device selectors (cel/): compiling a typical selector, and evaluating
// selectors against a device as the DRA allocator does for every candidate
// device of a claim. The device view is built once per device (as the
// allocator keeps it with its device model), so an evaluation is the whole
// per-device cost. Figures are ns per compile or per evaluation.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "cel/cel.h"

namespace {

using copse::Quantity;
using copse::cel::Device;
using copse::cel::DeviceAttribute;
using copse::cel::DeviceCapacity;
using copse::cel::Program;
using copse::cel::Semver;

// The claim selector of the kube-scheduler allocation fixture
// (tests/unit/cel/dra_test.cc).
const char kClaimSelector[] =
    R"(device.attributes["gpu.example.com"].model == "H100" && device.capacity["gpu.example.com"].memory.compareTo(quantity("64Gi")) >= 0)";
const char kClassSelector[] = R"(device.driver == "gpu.example.com")";
const char kMacroSelector[] =
    R"(cel.bind(d, device.attributes["gpu.example.com"], d.model in ["A100", "H100", "H200"] && d.driverVersion.isGreaterThan(semver("1.0.0")) && has(d.nvlinkDomain) && d.nvlinkDomain.startsWith("nvl-")))";

struct BenchDevice {
  BenchDevice() {
    attributes = {
        {"gpu.example.com", "model", std::string_view("H100")},
        {"gpu.example.com", "index", int64_t{3}},
        {"gpu.example.com", "driverVersion", &version},
        {"gpu.example.com", "nvlinkDomain", std::string_view("nvl-a")},
        {"gpu.example.com", "uuid", std::string_view("GPU-6e1a2b3c-0000-1111-2222-333344445555")},
    };
    capacity = {{"gpu.example.com", "memory", &memory}};
    device.driver = "gpu.example.com";
    device.attributes = attributes;
    device.capacity = capacity;
  }
  Semver version = Semver::Parse("1.2.3").value();
  Quantity memory = Quantity::MustParse("80Gi");
  std::vector<DeviceAttribute> attributes;
  std::vector<DeviceCapacity> capacity;
  Device device;
};

void Compile(benchmark::State& state) {
  for (auto _ : state) {
    auto program = copse::cel::Compile(kClaimSelector);
    if (!program.ok()) state.SkipWithError(program.error().message.c_str());
    benchmark::DoNotOptimize(program);
  }
}
BENCHMARK(Compile);

void Evaluate(benchmark::State& state, const char* selector) {
  BenchDevice d;
  auto program = copse::cel::Compile(selector);
  if (!program.ok()) {
    state.SkipWithError(program.error().message.c_str());
    return;
  }
  for (auto _ : state) {
    auto matches = program->Matches(d.device);
    if (!matches.ok() || !*matches) state.SkipWithError("the selector did not match");
    benchmark::DoNotOptimize(matches);
  }
}
BENCHMARK_CAPTURE(Evaluate, claim_selector, kClaimSelector);
BENCHMARK_CAPTURE(Evaluate, class_selector, kClassSelector);
BENCHMARK_CAPTURE(Evaluate, bind_semver_selector, kMacroSelector);

}  // namespace

BENCHMARK_MAIN();
