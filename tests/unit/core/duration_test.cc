// Go duration strings, as metav1.Duration fields are written.

#include "core/duration.h"

#include <gtest/gtest.h>

#include <chrono>

namespace copse {
namespace {

using std::chrono::nanoseconds;

nanoseconds P(std::string_view s) {
  Result<nanoseconds> d = ParseGoDuration(s);
  EXPECT_TRUE(d.ok()) << s << ": " << (d.ok() ? "" : d.error().message);
  return d.ok() ? *d : nanoseconds(-12345);
}

TEST(GoDurationTest, ParsesEveryUnitAndCombination) {
  EXPECT_EQ(P("0"), nanoseconds(0));
  EXPECT_EQ(P("15s"), std::chrono::seconds(15));
  EXPECT_EQ(P("1m30s"), std::chrono::seconds(90));
  EXPECT_EQ(P("100ms"), std::chrono::milliseconds(100));
  EXPECT_EQ(P("1.5h"), std::chrono::minutes(90));
  EXPECT_EQ(P("2h45m"), std::chrono::minutes(165));
  EXPECT_EQ(P("10us"), std::chrono::microseconds(10));
  EXPECT_EQ(P("10\xC2\xB5s"), std::chrono::microseconds(10));
  EXPECT_EQ(P("7ns"), nanoseconds(7));
  EXPECT_EQ(P(".5s"), std::chrono::milliseconds(500));
  EXPECT_EQ(P("-1.5s"), std::chrono::milliseconds(-1500));
  EXPECT_EQ(P("+3m"), std::chrono::minutes(3));
}

TEST(GoDurationTest, RejectsWhatGoRejects) {
  for (std::string_view bad :
       {"", "15", "s", "1x", "1.s.", "--1s", "1s 2s", ".s", "9999999999999999999h", "3000000h"}) {
    Result<nanoseconds> d = ParseGoDuration(bad);
    EXPECT_FALSE(d.ok()) << bad;
    if (!d.ok()) {
      EXPECT_NE(d.error().message.find("duration"), std::string::npos);
    }
  }
  EXPECT_NE(ParseGoDuration("15").error().message.find("missing unit"), std::string::npos);
}

TEST(GoDurationTest, FormatsLikeGo) {
  EXPECT_EQ(FormatGoDuration(nanoseconds(0)), "0s");
  EXPECT_EQ(FormatGoDuration(std::chrono::seconds(15)), "15s");
  EXPECT_EQ(FormatGoDuration(std::chrono::seconds(90)), "1m30s");
  EXPECT_EQ(FormatGoDuration(std::chrono::hours(1)), "1h0m0s");
  EXPECT_EQ(FormatGoDuration(std::chrono::milliseconds(1500)), "1.5s");
  EXPECT_EQ(FormatGoDuration(std::chrono::milliseconds(100)), "100ms");
  EXPECT_EQ(FormatGoDuration(std::chrono::microseconds(1500)), "1.5ms");
  EXPECT_EQ(FormatGoDuration(nanoseconds(42)), "42ns");
  EXPECT_EQ(FormatGoDuration(std::chrono::seconds(-2)), "-2s");
  for (std::string_view s : {"1h2m3.5s", "250ms", "5m0s", "1.5\xC2\xB5s"}) {
    EXPECT_EQ(FormatGoDuration(P(s)), s);
  }
}

}  // namespace
}  // namespace copse
