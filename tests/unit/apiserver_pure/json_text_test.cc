// The store's ParseJson/DumpJson must give exactly what nlohmann's
// json::parse and dump(-1, ' ', false, replace) give: same DOM (number types
// included), same text, same errors.
#include "apiserver/json_text.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace copse::apiserver {
namespace {

using json = nlohmann::json;

std::string NlohmannDump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Same value and the same number types all the way down (json's operator==
// treats 5 and 5u as equal).
void ExpectSameDom(const json& a, const json& b, const std::string& where) {
  ASSERT_EQ(a.type(), b.type()) << where;
  if (a.is_object()) {
    ASSERT_EQ(a.size(), b.size()) << where;
    for (auto it = a.begin(); it != a.end(); ++it) {
      ASSERT_TRUE(b.contains(it.key())) << where << "." << it.key();
      ExpectSameDom(it.value(), b.at(it.key()), where + "." + it.key());
    }
  } else if (a.is_array()) {
    ASSERT_EQ(a.size(), b.size()) << where;
    for (size_t i = 0; i < a.size(); ++i) {
      ExpectSameDom(a[i], b[i], where + "[" + std::to_string(i) + "]");
    }
  } else {
    EXPECT_EQ(a, b) << where;
  }
}

void ExpectSameParse(const std::string& text) {
  json expected;
  std::string expected_error;
  try {
    expected = json::parse(text);
  } catch (const json::parse_error& e) {
    expected_error = e.what();
  }
  json got;
  std::string got_error;
  try {
    got = ParseJson(text);
  } catch (const json::parse_error& e) {
    got_error = e.what();
  }
  EXPECT_EQ(got_error, expected_error) << text;
  if (expected_error.empty()) ExpectSameDom(expected, got, "$ of " + text);
}

TEST(StoreJsonText, ParsesAsNlohmannDoes) {
  for (
      const std::string text : {
          R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","labels":{"x":"y"}}})",
          R"({"n":5,"neg":-5,"zero":0,"big":18446744073709551615,"min":-9223372036854775808})",
          R"({"top":9223372036854775808,"over":18446744073709551616,"under":-9223372036854775809})",
          R"({"f":1.5,"e":1e3,"negzero":-0,"fz":-0.0})",
          R"([1,"two",null,true,false,{},[],{"a":[{}]}])",
          R"({"dup":1,"dup":"last"})",
          R"({"esc":"a\"b\\c\/d\b\f\n\r\t\u0001\u00e9\ud83d\ude00"})",
          "\xEF\xBB\xBF{\"bom\":1}",
          "  {\"ws\" :\t[ 1 , 2 ]\n}  ",
          R"("just a string")",
          "42",
          "-7",
          "null",
          // errors: nlohmann's messages
          "",
          "{",
          R"({"a":})",
          R"({"a":1,})",
          "[1 2]",
          "{\"a\":1} x",
          "nul",
          "\"\xC3\x28\"",
          "{\"bad\":\"\xED\xA0\x80\"}",
          R"({"a":"\u12"})",
          "01",
          "1.",
          "-",
          "[1,]",
      }) {
    ExpectSameParse(text);
  }
}

TEST(StoreJsonText, DumpsAsNlohmannDoes) {
  json j = json::parse(
      R"({"b":1,"a":{"z":[1,-2,3.25,1e300,0.1,100.0,true,false,null,"s"],"y":{}},"c":[],"d":"x\"y\\z\n\t\b\f\r\u0001\u001f\u007f é 😀"})");
  j["u"] = static_cast<uint64_t>(18446744073709551615ULL);
  j["i"] = static_cast<int64_t>(-9223372036854775807LL - 1);
  j["nan"] = std::numeric_limits<double>::quiet_NaN();
  j["bad utf8"] = std::string(
      "a\xC3\x28"
      "b\xFF"
      "c\xE2\x82");
  j[std::string("key\xFF")] = "v";
  j["surrogate"] = std::string("\xED\xA0\x80");
  j["overlong"] = std::string("\xC0\xAF");
  j["max"] = std::string("\xF4\x8F\xBF\xBF");
  j["beyond"] = std::string("\xF4\x90\x80\x80");
  EXPECT_EQ(DumpJson(j), NlohmannDump(j));
  for (const json& scalar : {json(nullptr), json(true), json(0), json(-1), json(0u), json("")}) {
    EXPECT_EQ(DumpJson(scalar), NlohmannDump(scalar));
  }
}

// Random documents (random bytes in strings, random nesting, every number
// type) dump to the same text, and that text parses to the same DOM.
TEST(StoreJsonText, RandomDocumentsRoundTripAsNlohmann) {
  std::mt19937_64 rng(20261125);
  auto random_string = [&] {
    std::string s;
    const int n = static_cast<int>(rng() % 12);
    for (int i = 0; i < n; ++i) {
      switch (rng() % 4) {
        case 0:
          s.push_back(static_cast<char>(rng() % 256));
          break;  // any byte
        case 1:
          s.push_back(static_cast<char>(rng() % 32));
          break;  // control
        case 2:
          s += "\xC3\xA9";
          break;  // é
        default:
          s.push_back(static_cast<char>('a' + rng() % 26));
      }
    }
    return s;
  };
  std::function<json(int)> random_value = [&](int depth) -> json {
    switch (rng() % (depth > 4 ? 6 : 8)) {
      case 0:
        return nullptr;
      case 1:
        return rng() % 2 == 0;
      case 2:
        return static_cast<int64_t>(rng());
      case 3:
        return static_cast<uint64_t>(rng());
      case 4:
        return random_string();
      case 5:
        return static_cast<double>(rng() % 1000) / 8.0;
      case 6: {
        json o = json::object();
        for (int i = static_cast<int>(rng() % 5); i > 0; --i)
          o[random_string()] = random_value(depth + 1);
        return o;
      }
      default: {
        json a = json::array();
        for (int i = static_cast<int>(rng() % 5); i > 0; --i) a.push_back(random_value(depth + 1));
        return a;
      }
    }
  };
  for (int round = 0; round < 2000; ++round) {
    const json doc = random_value(0);
    const std::string text = DumpJson(doc);
    ASSERT_EQ(text, NlohmannDump(doc)) << "round " << round;
    ExpectSameParse(text);
  }
}

}  // namespace
}  // namespace copse::apiserver
