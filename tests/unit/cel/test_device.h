#pragma once
// The device the cel/ tests evaluate against, and a helper that compiles and
// evaluates in one step.

#include <string>
#include <string_view>
#include <vector>

#include "cel/cel.h"

namespace copse::cel::testing {

// driver gpu.example.com with
//   attributes gpu.example.com: model "H100", index 3, healthy true,
//              driverVersion 1.2.3-rc.1+build.5, nvlinkDomain "nvl-a"
//              other.example.com: family "hopper", count 4
//   capacity   gpu.example.com: memory 80Gi, cores 132
//   allowMultipleAllocations true
struct TestDevice {
  TestDevice();
  TestDevice(const TestDevice&) = delete;
  TestDevice& operator=(const TestDevice&) = delete;

  Semver version;
  Quantity memory;
  Quantity cores;
  std::vector<DeviceAttribute> attributes;
  std::vector<DeviceCapacity> capacity;
  Device device;
};

// What evaluating `expression` against `device` gave: "true", "false",
// "runtime error: <message>" or "compile error: <message>".
std::string Outcome(std::string_view expression, const Device& device,
                    const CompileOptions& options = {});

}  // namespace copse::cel::testing
