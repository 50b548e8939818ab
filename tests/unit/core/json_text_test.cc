#include "core/json_text.h"

#include <gtest/gtest.h>

namespace copse {
namespace {

TEST(JsonText, QuotesAndEscapes) {
  EXPECT_EQ(JsonString("plain"), "\"plain\"");
  EXPECT_EQ(JsonString(""), "\"\"");
  EXPECT_EQ(JsonString("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(JsonString("l1\nl2\r\t"), "\"l1\\nl2\\r\\t\"");
  EXPECT_EQ(JsonString(std::string_view("\x01\x1f", 2)), "\"\\u0001\\u001f\"");
  // UTF-8 passes through unchanged.
  EXPECT_EQ(JsonString("zone-\xc3\xa9"), "\"zone-\xc3\xa9\"");
}

TEST(JsonText, AppendsToWhatIsThere) {
  std::string out = "{\"k\":";
  AppendJsonString(out, "v");
  EXPECT_EQ(out, "{\"k\":\"v\"");
}

}  // namespace
}  // namespace copse
