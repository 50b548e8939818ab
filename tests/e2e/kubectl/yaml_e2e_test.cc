// kube/yaml.h against the real kubectl: a manifest full of plain scalars and
// keys whose type depends on the YAML rules is converted by kubectl (`kubectl
// label --local -o json` decodes it as `kubectl apply` would, without a
// server) and by copse; both must agree. Values kubectl would pass through a
// float64 (integers beyond int64) are left out: they are in the unit tests.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "kube/yaml.h"
#include "tests/e2e/kubectl/harness.h"

namespace copse::e2e {
namespace {

using nlohmann::json;

constexpr const char* kManifest = R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: scalars
unknown:
  yes_word: yes
  Yes_word: Yes
  y_word: y
  no_word: NO
  on_key_value: off
  true_word: True
  null_word: ~
  Null_word: Null
  empty:
  mixed_case: yES
  leading_zero: 012
  eight: 08
  octal: 0o17
  neg_octal: -0o17
  hex: 0x1F
  neg_hex: -0x1F
  binary: 0b101
  underscores: 1_000
  plus: +12
  max: 9223372036854775807
  min: -9223372036854775808
  one_point_zero: 1.0
  one_dot: 1.
  exp: 1e3
  dot: .5
  plus_dot: +.5
  small: 0.000001
  tiny: 1e-7
  large: 1.5e300
  too_large: 1e400
  version: 1.2.3
  quantity: 10m
  date: 2001-12-14
  timestamp: 2001-12-14T21:59:43Z
  spaced_timestamp: 2001-12-14 21:59:43.10
  hex_float: 0x1p3
  just_0x: 0x
  not_exp: 12e
  quoted_bool: "true"
  quoted_int: '42'
  str_tag: !!str 7
  nested: {a: [1, "2", 3.0, null, on]}
  1: one
  2.5: two and a half
  0x10: sixteen
  on: switch
  False: falsy
)";

TEST(KubectlYaml, ScalarsAndKeysConvertAsKubectlConvertsThem) {
  ASSERT_TRUE(HaveKubectl()) << "this test compares with kubectl, which is not installed";
  char dir_template[] = "/tmp/copse-yaml-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string path = std::string(dir_template) + "/scalars.yaml";
  {
    FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(kManifest, f);
    std::fclose(f);
  }
  CommandResult kubectl =
      RunCommand({"kubectl", "label", "--local", "-f", path, "copse=test", "-o", "json"});
  std::remove(path.c_str());
  ::rmdir(dir_template);
  ASSERT_EQ(kubectl.exit_code, 0) << kubectl.out;
  const json theirs = json::parse(kubectl.out, nullptr, false);
  ASSERT_TRUE(theirs.is_object()) << kubectl.out;

  Result<std::string> converted = kube::YamlToJson(kManifest);
  ASSERT_TRUE(converted.ok()) << converted.error().message;
  const json ours = json::parse(*converted);

  ASSERT_TRUE(theirs.contains("unknown"));
  ASSERT_TRUE(ours.contains("unknown"));
  // Key by key, so that a difference names the key.
  for (const auto& [key, value] : theirs["unknown"].items()) {
    ASSERT_TRUE(ours["unknown"].contains(key)) << "copse lacks key \"" << key << "\"";
    EXPECT_EQ(ours["unknown"][key], value) << "key \"" << key << "\"";
  }
  EXPECT_EQ(ours["unknown"].size(), theirs["unknown"].size());
}

}  // namespace
}  // namespace copse::e2e
