#include "tests/unit/cel/test_device.h"

namespace copse::cel::testing {

TestDevice::TestDevice()
    : version(Semver::Parse("1.2.3-rc.1+build.5").value()),
      memory(Quantity::MustParse("80Gi")),
      cores(Quantity::MustParse("132")) {
  attributes = {
      {"gpu.example.com", "model", std::string_view("H100")},
      {"gpu.example.com", "index", int64_t{3}},
      {"gpu.example.com", "healthy", true},
      {"gpu.example.com", "driverVersion", &version},
      {"gpu.example.com", "nvlinkDomain", std::string_view("nvl-a")},
      {"other.example.com", "family", std::string_view("hopper")},
      {"other.example.com", "count", int64_t{4}},
  };
  capacity = {
      {"gpu.example.com", "memory", &memory},
      {"gpu.example.com", "cores", &cores},
  };
  device.driver = "gpu.example.com";
  device.attributes = attributes;
  device.capacity = capacity;
  device.allow_multiple_allocations = true;
}

std::string Outcome(std::string_view expression, const Device& device,
                    const CompileOptions& options) {
  Result<Program> program = Compile(expression, options);
  if (!program.ok()) return "compile error: " + program.error().message;
  Result<bool> matches = program->Matches(device);
  if (!matches.ok()) return "runtime error: " + matches.error().message;
  return *matches ? "true" : "false";
}

}  // namespace copse::cel::testing
