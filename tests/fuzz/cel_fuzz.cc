// CEL selectors (cel/): any input is compiled against the DRA environment
// and, when it compiles, evaluated against a fixed device. Nothing may crash,
// overflow the stack or hang (the nesting and cost limits see to it), an
// evaluation must cost no more than its estimate, and evaluating twice must
// give the same outcome.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "cel/cel.h"
#include "core/check.h"

namespace {

using copse::Quantity;
using copse::cel::Device;
using copse::cel::DeviceAttribute;
using copse::cel::DeviceCapacity;
using copse::cel::Semver;

struct FixedDevice {
  FixedDevice() {
    attributes = {
        {"gpu.example.com", "model", std::string_view("H100")},
        {"gpu.example.com", "index", int64_t{3}},
        {"gpu.example.com", "healthy", true},
        {"gpu.example.com", "driverVersion", &version},
        {"gpu.example.com", "nvlinkDomain", std::string_view("nvl-a")},
        {"other.example.com", "family", std::string_view("hopper")},
    };
    capacity = {{"gpu.example.com", "memory", &memory}, {"gpu.example.com", "cores", &cores}};
    device.driver = "gpu.example.com";
    device.attributes = attributes;
    device.capacity = capacity;
    device.allow_multiple_allocations = true;
  }
  Semver version = Semver::Parse("1.2.3-rc.1+build.5").value();
  Quantity memory = Quantity::MustParse("80Gi");
  Quantity cores = Quantity::MustParse("132");
  std::vector<DeviceAttribute> attributes;
  std::vector<DeviceCapacity> capacity;
  Device device;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const FixedDevice fixed;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto program = copse::cel::Compile(text);
  if (!program.ok()) {
    COPSE_CHECK(!program.error().message.empty());
    return 0;
  }
  auto first = program->Evaluate(fixed.device);
  auto second = program->Evaluate(fixed.device);
  COPSE_CHECK(first.ok() == second.ok());
  if (first.ok()) {
    COPSE_CHECK(first->matches == second->matches);
    COPSE_CHECK(first->actual_cost == second->actual_cost);
    COPSE_CHECK(first->actual_cost <= program->estimated_max_cost())
        << first->actual_cost << " > " << program->estimated_max_cost() << " for " << text;
  } else {
    COPSE_CHECK(first.error().message == second.error().message);
  }
  return 0;
}
