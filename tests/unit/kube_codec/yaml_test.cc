// kube/yaml.h: the scalar rules of kubectl's YAML decoding (sigs.k8s.io/yaml
// over go-yaml v2), documents, keys and errors. tests/e2e/kubectl/
// yaml_e2e_test.cc checks the same rules against the real kubectl.

#include "kube/yaml.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace copse::kube {
namespace {

using nlohmann::json;

json Convert(std::string_view yaml) {
  Result<std::string> converted = YamlToJson(yaml);
  EXPECT_TRUE(converted.ok()) << converted.error().message;
  return converted.ok() ? json::parse(*converted) : json();
}

// The JSON text one plain scalar turns into.
std::string Scalar(const std::string& text) {
  Result<std::string> converted = YamlToJson("v: " + text + "\n");
  if (!converted.ok()) return "error: " + converted.error().message;
  const std::string& out = *converted;
  return out.substr(5, out.size() - 6);  // {"v":<here>}
}

std::string Error(std::string_view yaml) {
  Result<std::string> converted = YamlToJson(yaml);
  EXPECT_FALSE(converted.ok()) << *converted;
  if (converted.ok()) return {};
  EXPECT_EQ(converted.error().code, ErrorCode::kInvalid);
  return converted.error().message;
}

TEST(KubeYaml, NullsAndBooleansIncludeYaml11Words) {
  for (const char* null_word : {"~", "null", "Null", "NULL", ""}) {
    EXPECT_EQ(Scalar(null_word), "null") << null_word;
  }
  for (const char* yes :
       {"true", "True", "TRUE", "yes", "Yes", "YES", "y", "Y", "on", "On", "ON"}) {
    EXPECT_EQ(Scalar(yes), "true") << yes;
  }
  for (const char* no :
       {"false", "False", "FALSE", "no", "No", "NO", "n", "N", "off", "Off", "OFF"}) {
    EXPECT_EQ(Scalar(no), "false") << no;
  }
  // Only these spellings: anything else is a string.
  for (const char* word : {"yES", "tRUE", "nul", "Nope", "offf"}) {
    EXPECT_EQ(Scalar(word), "\"" + std::string(word) + "\"") << word;
  }
}

TEST(KubeYaml, IntegersFollowGoBasePrefixes) {
  EXPECT_EQ(Scalar("42"), "42");
  EXPECT_EQ(Scalar("-7"), "-7");
  EXPECT_EQ(Scalar("+12"), "12");
  EXPECT_EQ(Scalar("-0"), "0");
  EXPECT_EQ(Scalar("0x1F"), "31");
  EXPECT_EQ(Scalar("-0x1F"), "-31");
  EXPECT_EQ(Scalar("0o17"), "15");
  EXPECT_EQ(Scalar("-0o17"), "-15");
  EXPECT_EQ(Scalar("012"), "10");  // YAML 1.1 octal, as kubectl reads it
  EXPECT_EQ(Scalar("0777"), "511");
  EXPECT_EQ(Scalar("0b101"), "5");
  EXPECT_EQ(Scalar("-0b11"), "-3");
  EXPECT_EQ(Scalar("1_000"), "1000");
  EXPECT_EQ(Scalar("0b1_01"), "5");
  EXPECT_EQ(Scalar("9223372036854775807"), "9223372036854775807");
  EXPECT_EQ(Scalar("-9223372036854775808"), "-9223372036854775808");
  EXPECT_EQ(Scalar("9223372036854775808"), "9223372036854775808");  // a uint64
  EXPECT_EQ(Scalar("18446744073709551615"), "18446744073709551615");
  // A prefixed number beyond 64 bits keeps every digit (big.Int).
  EXPECT_EQ(Scalar("0x10000000000000000"), "18446744073709551616");
  // "08" is no octal number but reads as a float.
  EXPECT_EQ(Scalar("08"), "8");
}

TEST(KubeYaml, FloatsAreWrittenAsGoWritesThem) {
  EXPECT_EQ(Scalar("1.5"), "1.5");
  EXPECT_EQ(Scalar("1.0"), "1");
  EXPECT_EQ(Scalar("1."), "1");
  EXPECT_EQ(Scalar("1e3"), "1000");
  EXPECT_EQ(Scalar(".5"), "0.5");
  EXPECT_EQ(Scalar("+.5"), "0.5");
  EXPECT_EQ(Scalar(".5e1"), "5");
  EXPECT_EQ(Scalar("-2.25"), "-2.25");
  EXPECT_EQ(Scalar("1_0.5"), "10.5");
  EXPECT_EQ(Scalar("0.000001"), "0.000001");
  EXPECT_EQ(Scalar("1e-7"), "1e-7");
  EXPECT_EQ(Scalar("1.5e300"), "1.5e+300");
  EXPECT_EQ(Scalar("99999999999999999999999"), "1e+23");  // beyond uint64: a float
  EXPECT_EQ(Scalar("-9223372036854775809"), "-9223372036854776000");
  EXPECT_EQ(Scalar("1e400"), "\"1e400\"");  // out of range: a string
}

TEST(KubeYaml, EverythingElseIsAString) {
  for (const char* text : {"1.2.3", "10m", "12e", "0x", "-x", "_1", "v1", "2001-12-14",
                           "2001-12-14T21:59:43Z", "0x1p3", ".", "1Gi", "hello world"}) {
    EXPECT_EQ(Scalar(text), json(text).dump()) << text;
  }
  // Quoted, block and !!str scalars stay strings whatever they look like.
  json j = Convert("a: \"true\"\nb: '42'\nc: !!str 7\nd: |\n  yes\ne: >-\n  1\n  2\n");
  EXPECT_EQ(j, json::parse(R"({"a":"true","b":"42","c":"7","d":"yes\n","e":"1 2"})"));
}

TEST(KubeYaml, KeysAreTheirResolvedValuesAndComeOutSorted) {
  Result<std::string> out = YamlToJson("z: 1\n1: one\n2.5: x\n0x10: hex\non: switch\nFalse: f\n");
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(*out, R"({"1":"one","16":"hex","2.5":"x","false":"f","true":"switch","z":1})");
  EXPECT_EQ(Error("~: 1\n"), "a null mapping key has no JSON form");
  EXPECT_EQ(Error("a:\n  ~: 1\n"), "a: a null mapping key has no JSON form");
}

TEST(KubeYaml, NonJsonNumbersAndBadDocumentsAreErrorsThatSayWhere) {
  EXPECT_EQ(Error("a: [1, 2\nb: 3\n"), "yaml: line 2, column 2: end of sequence flow not found");
  EXPECT_EQ(Error("spec:\n  versions:\n  - name: v1\n    name: v2\n"),
            "spec.versions[0]: duplicate key \"name\"");
  // Keys that differ in text but not in value are duplicates too.
  EXPECT_EQ(Error("on: 1\nyes: 2\n"), "duplicate key \"true\"");
  EXPECT_EQ(Error("a: 1\n---\nx: {y: .inf}\n"),
            "document 2: x.y: the value .inf has no JSON representation");
  EXPECT_EQ(Error("n: -.Inf\n"), "n: the value -.Inf has no JSON representation");
  EXPECT_EQ(Error("n: .nan\n"), "n: the value .nan has no JSON representation");
  EXPECT_EQ(Error("n: !custom 3\n"), "n: unsupported tag \"!custom\"");
  EXPECT_EQ(Error("? [a, b]\n: c\n"), "mapping keys must be scalars");
}

TEST(KubeYaml, MultipleDocumentsBecomeAList) {
  const char* yaml = "---\na: 1\n---\n# only a comment\n---\nkind: B\n...\n";
  Result<std::vector<std::string>> docs = YamlDocumentsToJson(yaml);
  ASSERT_TRUE(docs.ok()) << docs.error().message;
  ASSERT_EQ(docs->size(), 2u);
  EXPECT_EQ((*docs)[0], R"({"a":1})");
  EXPECT_EQ((*docs)[1], R"({"kind":"B"})");
  EXPECT_EQ(Convert(yaml),
            json::parse(R"({"apiVersion":"v1","kind":"List","items":[{"a":1},{"kind":"B"}]})"));
  EXPECT_EQ(Convert("[1, 2]"), json::parse("[1, 2]"));
  Result<std::vector<std::string>> none = YamlDocumentsToJson("# nothing\n");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  EXPECT_EQ(Error("# nothing\n"), "yaml: no document");
}

TEST(KubeYaml, AliasesExpandWithinABudget) {
  json j = Convert("base: &b {cpu: 1}\nuse: *b\n");
  EXPECT_EQ(j["use"], json::parse(R"({"cpu":1})"));
  // Ten levels of ten aliases each expand to 10^10 nodes: refused, quickly.
  std::string laughs = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 10; ++i) {
    const std::string p = "*a" + std::to_string(i - 1);
    laughs += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + p + ", " + p + ", " +
              p + ", " + p + ", " + p + ", " + p + ", " + p + ", " + p + ", " + p + ", " + p +
              "]\n";
  }
  EXPECT_NE(Error(laughs).find("expands to more than"), std::string::npos);
}

// yaml-cpp 0.7's LoadAll loops forever, allocating, on a document that
// starts with a stray ',' (found by tests/fuzz/config_fuzz.cc).
TEST(KubeYaml, AStrayCommaIsAnErrorNotAnEndlessLoop) {
  for (const char* text : {",", "a: 1\n---\n,\n"}) {
    Result<std::vector<std::string>> docs = YamlDocumentsToJson(text);
    ASSERT_FALSE(docs.ok()) << text;
    EXPECT_EQ(docs.error().code, ErrorCode::kInvalid);
  }
}

}  // namespace
}  // namespace copse::kube
