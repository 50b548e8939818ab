#include "core/rfc3339.h"

#include <gtest/gtest.h>

#include "core/clock.h"

namespace copse {
namespace {

using std::chrono::system_clock;

TEST(ParseRfc3339, RoundTripsWhatFormatWrites) {
  // Independent of the parser: FormatRfc3339 goes through gmtime/strftime.
  for (int64_t seconds : {0LL, 951782400LL, 1700000000LL, 4102444799LL}) {
    const system_clock::time_point t{std::chrono::seconds(seconds)};
    auto parsed = ParseRfc3339(FormatRfc3339(t));
    ASSERT_TRUE(parsed.has_value()) << FormatRfc3339(t);
    EXPECT_EQ(*parsed, t) << FormatRfc3339(t);
    const auto micro = t + std::chrono::microseconds(123456);
    auto parsed_micro = ParseRfc3339(FormatRfc3339Micro(micro));
    ASSERT_TRUE(parsed_micro.has_value());
    EXPECT_EQ(*parsed_micro, micro);
  }
}

TEST(ParseRfc3339, OffsetsAndFractions) {
  const auto utc = ParseRfc3339("2024-03-01T12:00:00Z");
  ASSERT_TRUE(utc.has_value());
  EXPECT_EQ(ParseRfc3339("2024-03-01T14:30:00+02:30"), utc);
  EXPECT_EQ(ParseRfc3339("2024-03-01T07:00:00-05:00"), utc);
  EXPECT_EQ(ParseRfc3339("2024-03-01t12:00:00z"), utc);
  EXPECT_EQ(ParseRfc3339("2024-03-01T12:00:00.5Z"), *utc + std::chrono::milliseconds(500));
  // Digits past nanoseconds are ignored.
  EXPECT_EQ(ParseRfc3339("2024-03-01T12:00:00.0000000019Z"), *utc + std::chrono::nanoseconds(1));
}

TEST(ParseRfc3339, RejectsWhatIsNotATimestamp) {
  for (const char* bad :
       {"", "2024-03-01", "2024-03-01T12:00:00", "2024-3-01T12:00:00Z", "2024-03-01T12:00:00Zjunk",
        "2024-13-01T12:00:00Z", "2024-03-01T25:00:00Z", "2024-03-01T12:00:00.Z",
        "2024-03-01T12:00:00+0200", "tomorrow"}) {
    EXPECT_FALSE(ParseRfc3339(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace copse
