// Selectors as Kubernetes DRA users write them, against devices as
// ResourceSlices publish them: the objects kube-scheduler v1.36.3 allocated
// (the DeviceClass and claim selectors of the two-H100 example, whose three
// devices are copied here), and the examples of the Kubernetes DRA
// documentation and API reference.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cel/cel.h"

namespace copse::cel {
namespace dra_test {

// One device of a ResourceSlice, from its qualified attribute names.
struct SliceDevice {
  std::string name;
  std::string driver;
  std::vector<std::pair<std::string, AttributeValue>> attributes;  // qualified name -> value
  std::vector<std::pair<std::string, Quantity>> capacity;
  bool allow_multiple_allocations = false;

  // The evaluation's view; the vectors must outlive it.
  Device View(std::vector<DeviceAttribute>& attrs, std::vector<DeviceCapacity>& caps) const {
    attrs.clear();
    caps.clear();
    for (const auto& [qualified, value] : attributes) {
      auto [domain, id] = SplitQualifiedName(qualified, driver);
      attrs.push_back({domain, id, value});
    }
    for (const auto& [qualified, value] : capacity) {
      auto [domain, id] = SplitQualifiedName(qualified, driver);
      caps.push_back({domain, id, &value});
    }
    Device d;
    d.driver = driver;
    d.attributes = attrs;
    d.capacity = caps;
    d.allow_multiple_allocations = allow_multiple_allocations;
    return d;
  }
};

std::vector<std::string> Matching(const std::vector<std::string>& selectors,
                                  const std::vector<SliceDevice>& devices) {
  std::vector<Program> programs;
  for (const std::string& s : selectors) {
    Result<Program> p = Compile(s);
    EXPECT_TRUE(p.ok()) << s << ": " << (p.ok() ? "" : p.error().message);
    if (p.ok()) programs.push_back(*p);
  }
  std::vector<std::string> names;
  for (const SliceDevice& d : devices) {
    std::vector<DeviceAttribute> attrs;
    std::vector<DeviceCapacity> caps;
    Device view = d.View(attrs, caps);
    bool all = true;
    for (const Program& p : programs) {
      Result<bool> m = p.Matches(view);
      EXPECT_TRUE(m.ok()) << d.name << ": " << (m.ok() ? "" : m.error().message);
      all = all && m.ok() && *m;
    }
    if (all) names.push_back(d.name);
  }
  return names;
}

// The objects of ../shared/fixtures/kube-1.36.3/dra-allocation-example.yaml
// (recorded from kube-scheduler v1.36.3, which chose gpu-0 and gpu-1 for the
// claim): its ResourceSlice's three devices and its two selectors.
TEST(CelDra, AllocationExampleOfKubeScheduler) {
  auto gpu = [](std::string name, std::string_view model, int64_t index,
                std::string_view nvlink_domain, std::string_view memory) {
    SliceDevice d;
    d.name = std::move(name);
    d.driver = "gpu.example.com";
    d.attributes = {{"model", model}, {"index", index}, {"nvlinkDomain", nvlink_domain}};
    d.capacity = {{"memory", Quantity::MustParse(memory)}};
    return d;
  };
  std::vector<SliceDevice> devices = {gpu("gpu-0", "H100", 0, "nvl-a", "80Gi"),
                                      gpu("gpu-1", "H100", 1, "nvl-a", "80Gi"),
                                      gpu("gpu-2", "A100", 2, "nvl-b", "40Gi")};
  std::string device_class = R"(device.driver == "gpu.example.com")";
  std::string claim =
      R"(device.attributes["gpu.example.com"].model == "H100" && device.capacity["gpu.example.com"].memory.compareTo(quantity("64Gi")) >= 0)";
  EXPECT_EQ(Matching({device_class}, devices),
            (std::vector<std::string>{"gpu-0", "gpu-1", "gpu-2"}));
  EXPECT_EQ(Matching({device_class, claim}, devices), (std::vector<std::string>{"gpu-0", "gpu-1"}));
  // The memory condition alone separates gpu-2 too.
  EXPECT_EQ(
      Matching({R"(device.capacity["gpu.example.com"].memory.compareTo(quantity("64Gi")) >= 0)"},
               devices),
      (std::vector<std::string>{"gpu-0", "gpu-1"}));
}

TEST(CelDra, DocumentationExamples) {
  Semver v1_2 = Semver::Parse("1.2.0").value();
  Semver v0_9 = Semver::Parse("0.9.1").value();
  std::vector<SliceDevice> devices(3);
  devices[0] = {"big",
                "dra.example.com",
                {{"model", std::string_view("A100")},
                 {"ext.example.com/family", std::string_view("ampere")},
                 {"driverVersion", &v1_2},
                 {"someBool", true},
                 {"anotherBool", true}},
                {{"modules", Quantity::MustParse("8")}, {"memory", Quantity::MustParse("40Gi")}},
                true};
  devices[1] = {"small",
                "dra.example.com",
                {{"model", std::string_view("T4")},
                 {"driverVersion", &v0_9},
                 {"someBool", true},
                 {"anotherBool", false}},
                {{"modules", Quantity::MustParse("1")}, {"memory", Quantity::MustParse("16Gi")}},
                false};
  devices[2] = {"other", "other.example.com", {{"model", std::string_view("A100")}}, {}, false};

  // The API reference's example of the input (CELDeviceSelector.expression).
  EXPECT_EQ(Matching({R"(device.driver == "dra.example.com")",
                      R"(device.attributes["dra.example.com"].model == "A100")",
                      R"(device.attributes["ext.example.com"].family == "ampere")",
                      R"(device.capacity["dra.example.com"].modules.compareTo(quantity("4")) > 0)"},
                     {devices[0]}),
            (std::vector<std::string>{"big"}));
  EXPECT_EQ(Matching({R"(device.attributes["dra.example.com"].model == "A100")"},
                     {devices[0], devices[1]}),
            (std::vector<std::string>{"big"}));
  // cel.bind, as the API reference suggests it.
  EXPECT_EQ(
      Matching(
          {R"(cel.bind(dra, device.attributes["dra.example.com"], dra.someBool && dra.anotherBool))"},
          {devices[0], devices[1]}),
      (std::vector<std::string>{"big"}));
  // Version attributes are semvers.
  EXPECT_EQ(
      Matching(
          {R"(device.attributes["dra.example.com"].driverVersion.isGreaterThan(semver("1.0.0")))"},
          {devices[0], devices[1]}),
      (std::vector<std::string>{"big"}));
  EXPECT_EQ(
      Matching(
          {R"(device.attributes["dra.example.com"].driverVersion.compareTo(semver("0.9.0")) >= 0)"},
          {devices[0], devices[1]}),
      (std::vector<std::string>{"big", "small"}));
  // Consumable capacity: only devices that allow several allocations.
  EXPECT_EQ(Matching({"device.allowMultipleAllocations == true"}, devices),
            (std::vector<std::string>{"big"}));
  // A robust selector guards attributes a device may not have; an
  // unguarded one is a runtime error on the device that lacks it.
  EXPECT_EQ(
      Matching(
          {R"(has(device.attributes["dra.example.com"].someBool) && device.attributes["dra.example.com"].someBool)"},
          devices),
      (std::vector<std::string>{"big", "small"}));
  Result<Program> unguarded = Compile(R"(device.attributes["dra.example.com"].someBool)");
  ASSERT_TRUE(unguarded.ok());
  std::vector<DeviceAttribute> attrs;
  std::vector<DeviceCapacity> caps;
  Result<bool> m = unguarded->Matches(devices[2].View(attrs, caps));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message, "no such key: someBool");
  // Memory at least 32Gi, by the upstream documentation's pattern.
  EXPECT_EQ(
      Matching({R"(device.capacity["dra.example.com"].memory.compareTo(quantity("32Gi")) >= 0)"},
               {devices[0], devices[1]}),
      (std::vector<std::string>{"big"}));
}

// A qualified name without a domain belongs to the driver's domain.
TEST(CelDra, SplitQualifiedName) {
  EXPECT_EQ(SplitQualifiedName("gpu.example.com/model", "x.example.com"),
            (std::pair<std::string_view, std::string_view>{"gpu.example.com", "model"}));
  EXPECT_EQ(SplitQualifiedName("model", "x.example.com"),
            (std::pair<std::string_view, std::string_view>{"x.example.com", "model"}));
}

}  // namespace dra_test
}  // namespace copse::cel
