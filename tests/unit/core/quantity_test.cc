// Quantity tests. Expected values come from the Kubernetes documentation of
// resource.Quantity and from k8s.io/apimachinery/pkg/api/resource/quantity_test.go
// (TestQuantityParse, TestQuantityString, TestQuantityParseEmit, TestNewSet,
// TestMilliNewSet, TestScaledValue, TestAdd, TestSub, TestQuantityCmp).
#include "core/quantity.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace copse {
namespace {

using F = Quantity::Format;
constexpr F kDec = F::kDecimalSI;
constexpr F kBin = F::kBinarySI;
constexpr F kExp = F::kDecimalExponent;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

Quantity Q(std::string_view text) {
  Result<Quantity> q = Quantity::Parse(text);
  EXPECT_TRUE(q.ok()) << text << ": " << (q.ok() ? "" : q.error().message);
  return q.ok() ? q.value() : Quantity();
}

// Go's decQuantity(m, exp, format): m * 10^exp, built through a plain
// exponent literal so that it does not depend on the suffix being tested.
Quantity Dec(int64_t mantissa, int exponent) {
  return Q(std::to_string(mantissa) + "e" + std::to_string(exponent));
}

// ---------------------------------------------------------------------------
// Parse + format: input -> String() (Go caches "canonical-looking" input),
// CanonicalizeBytes() form, and remembered format.

struct FormatCase {
  const char* input;
  const char* to_string;  // Go String()
  const char* canonical;  // Go CanonicalizeBytes
  F format;
};

const FormatCase kFormatCases[] = {
    // Zeros keep their format but always print "0".
    {"0", "0", "0", kDec},
    {"0n", "0", "0", kDec},
    {"0Ki", "0", "0", kBin},
    {"0M", "0", "0", kDec},
    {"00", "0", "0", kDec},
    // Binary suffixes.
    {"1Ki", "1Ki", "1Ki", kBin},
    {"8Ki", "8Ki", "8Ki", kBin},
    {"7Mi", "7Mi", "7Mi", kBin},
    {"6Gi", "6Gi", "6Gi", kBin},
    {"5Ti", "5Ti", "5Ti", kBin},
    {"4Pi", "4Pi", "4Pi", kBin},
    {"3Ei", "3Ei", "3Ei", kBin},
    {"100Ti", "100Ti", "100Ti", kBin},
    {"2Gi", "2Gi", "2Gi", kBin},
    {"100Mi", "100Mi", "100Mi", kBin},
    {"1024Mi", "1Gi", "1Gi", kBin},
    {"1024Gi", "1Ti", "1Ti", kBin},
    {"307200Ki", "300Mi", "300Mi", kBin},
    {"1025024Mi", "1001Gi", "1001Gi", kBin},
    {"1.5Gi", "1536Mi", "1536Mi", kBin},
    {"0.5Gi", "512Mi", "512Mi", kBin},
    {"0.5Mi", "512Ki", "512Ki", kBin},
    // Binary below 1024 or fractional prints as DecimalSI.
    {"0.5Ki", "512", "512", kBin},
    {".001Ki", "1024m", "1024m", kBin},
    {".000001Ki", "1024u", "1024u", kDec},  // below 1: DecimalSI
    {".000000001Ki", "1024n", "1024n", kDec},
    {".000000000001Ki", "2n", "2n", kDec},  // rounds up to 2n, becomes DecimalSI
    {"100.035Ki", "102435840m", "102435840m", kBin},
    {"0.05Gi", "53687091200m", "53687091200m", kBin},
    // BinarySI is capped at 2^63-1.
    {"9Ei", "9223372036854775807", "9223372036854775807", kBin},
    {"9223372036854775807Ki", "9223372036854775807", "9223372036854775807", kBin},
    // Decimal SI suffixes.
    {"1", "1", "1", kDec},
    {"5n", "5n", "5n", kDec},
    {"4u", "4u", "4u", kDec},
    {"3m", "3m", "3m", kDec},
    {"8k", "8k", "8k", kDec},
    {"50k", "50k", "50k", kDec},
    {"300T", "300T", "300T", kDec},
    {"2P", "2P", "2P", kDec},
    {"1E", "1E", "1E", kDec},
    {"12E", "12E", "12E", kDec},
    {"1000", "1k", "1k", kDec},
    {"1000M", "1G", "1G", kDec},
    {"0.001T", "1G", "1G", kDec},
    {"1000u", "1m", "1m", kDec},
    {"5000m", "5", "5", kDec},
    {"1024", "1024", "1024", kDec},
    {"1500m", "1500m", "1500m", kDec},
    // Fractions become the largest suffix that keeps an integer.
    {"0.1", "100m", "100m", kDec},
    {"1.5", "1500m", "1500m", kDec},
    {"0.001", "1m", "1m", kDec},
    {"0.5", "500m", "500m", kDec},
    {"0.0005k", "500m", "500m", kDec},
    {"1.08", "1080m", "1080m", kDec},
    {"1080000000n", "1080m", "1080m", kDec},
    {"9.01", "9010m", "9010m", kDec},
    {"8.1k", "8100", "8100", kDec},
    {"7.123456M", "7.123456M", "7123456", kDec},
    {"2.5P", "2500T", "2500T", kDec},
    {"1.01E", "1010P", "1010P", kDec},
    {"1.2345", "1234500u", "1234500u", kDec},
    {".001", "1m", "1m", kDec},
    {".0001k", "100m", "100m", kDec},
    // DecimalSI has no suffix beyond E: falls back to an exponent.
    {"1000E", "1e21", "1e21", kDec},
    {"5000E", "5e21", "5e21", kDec},
    {"1000000E", "1e24", "1e24", kDec},
    // Values finer than 1n round up, away from zero.
    {"3.001n", "4n", "4n", kDec},
    {"0.0000000001", "1n", "1n", kDec},
    {"0.0000000005", "1n", "1n", kDec},
    {"0.9n", "1n", "1n", kDec},
    {"0.00000012345", "124n", "124n", kDec},
    {"-0.9n", "-1n", "-1n", kDec},
    // Decimal exponents.
    {"1e3", "1e3", "1e3", kExp},
    {"12e6", "12e6", "12e6", kExp},
    {"1e9", "1e9", "1e9", kExp},
    {"5e-3", "5e-3", "5e-3", kExp},
    {"1e14", "100e12", "100e12", kExp},
    {"1e13", "10e12", "10e12", kExp},
    {"0.5e0", "500e-3", "500e-3", kExp},
    {"0.5e-1", "50e-3", "50e-3", kExp},
    {"1.2e3", "1200", "1200", kExp},
    {"1.3E+6", "1300e3", "1300e3", kExp},
    {"1.1E-9", "2e-9", "2e-9", kExp},
    {".001e12", "1e9", "1e9", kExp},
    {"0.001e0", "1e-3", "1e-3", kExp},
    {"1000e-12", "1e-9", "1e-9", kExp},
    // Go's String() keeps input its fast path considers canonical.
    {"+1", "+1", "1", kDec},
    {"1E-3", "1E-3", "1e-3", kExp},
    {"1E6", "1E6", "1e6", kExp},
    {"1.", "1.", "1", kDec},
    {"1.G", "1.G", "1G", kDec},
    {"100.035k", "100.035k", "100035", kDec},
    {"10.035M", "10.035M", "10035k", kDec},
    {"+1Ki", "+1Ki", "1Ki", kBin},
    {"007", "007", "7", kDec},
    {"1.500k", "1.500k", "1500", kDec},
    // Negative quantities.
    {"-1", "-1", "-1", kDec},
    {"-1.5Gi", "-1536Mi", "-1536Mi", kBin},
    {"-0.1", "-100m", "-100m", kDec},
    {"-5n", "-5n", "-5n", kDec},
    {"-1000", "-1k", "-1k", kDec},
    {"-1e3", "-1e3", "-1e3", kExp},
    // Larger than int64: decimal values are not capped.
    {"18446744073709551616", "18446744073709551616", "18446744073709551616", kDec},
    {"9223372036854775808", "9223372036854775808", "9223372036854775808", kDec},
};

TEST(QuantityFormat, ParseAndFormatTable) {
  size_t checked = 0;
  for (const FormatCase& c : kFormatCases) {
    SCOPED_TRACE(c.input);
    Result<Quantity> q = Quantity::Parse(c.input);
    ASSERT_TRUE(q.ok()) << q.error().message;
    EXPECT_EQ(q->ToString(), c.to_string);
    EXPECT_EQ(q->CanonicalString(), c.canonical);
    EXPECT_EQ(q->format(), c.format);
    // Canonical output parses back to the same value.
    Result<Quantity> again = Quantity::Parse(q->CanonicalString());
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(*again, *q);
    EXPECT_EQ(again->CanonicalString(), c.canonical);
    ++checked;
  }
  EXPECT_GE(checked, 60u);
}

// ---------------------------------------------------------------------------
// Parsed values (TestQuantityParse), also with explicit "-" and "+".

struct ValueCase {
  const char* input;
  int64_t mantissa;
  int exponent;
  F format;
};

const ValueCase kValueCases[] = {
    {"1Ki", 1024, 0, kBin},
    {"8Ki", 8 * 1024, 0, kBin},
    {"7Mi", 7 * 1024 * 1024, 0, kBin},
    {"6Gi", 6LL * 1024 * 1024 * 1024, 0, kBin},
    {"5Ti", 5LL * 1024 * 1024 * 1024 * 1024, 0, kBin},
    {"4Pi", 4LL * 1024 * 1024 * 1024 * 1024 * 1024, 0, kBin},
    {"3Ei", 3LL * 1024 * 1024 * 1024 * 1024 * 1024 * 1024, 0, kBin},
    {"5n", 5, -9, kDec},
    {"4u", 4, -6, kDec},
    {"3m", 3, -3, kDec},
    {"9", 9, 0, kDec},
    {"8k", 8, 3, kDec},
    {"50k", 5, 4, kDec},
    {"7M", 7, 6, kDec},
    {"6G", 6, 9, kDec},
    {"5T", 5, 12, kDec},
    {"40T", 4, 13, kDec},
    {"300T", 3, 14, kDec},
    {"2P", 2, 15, kDec},
    {"1E", 1, 18, kDec},
    {"1E-3", 1, -3, kExp},
    {"1e3", 1, 3, kExp},
    {"1E6", 1, 6, kExp},
    {"1e9", 1, 9, kExp},
    {"1E12", 1, 12, kExp},
    {"1e15", 1, 15, kExp},
    {"1E18", 1, 18, kExp},
    {"100.035k", 100035, 0, kDec},
    {"0.001", 1, -3, kDec},
    {"0.0005k", 5, -1, kDec},
    {"0.005", 5, -3, kDec},
    {"0.05", 5, -2, kDec},
    {"0.00050k", 5, -1, kDec},
    {"0.00500", 5, -3, kDec},
    {"0.5e-2", 5, -3, kExp},
    {"10.035M", 10035, 3, kDec},
    {"1.40e9", 14, 8, kExp},
    {"1.53E12", 153, 10, kExp},
    {"1.6e15", 16, 14, kExp},
    {"1.7E18", 17, 17, kExp},
    {"6.987654321G", 6987654321, 0, kDec},
    {"5.444T", 5444, 9, kDec},
    {"40.1T", 401, 11, kDec},
    {"300.2T", 3002, 11, kDec},
    {"3.001n", 4, -9, kDec},
    {"0.00000000050", 1, -9, kDec},
    {"0.5e-9", 1, -9, kExp},
    {"0.00000012354", 124, -9, kDec},
    {"12E", 12, 18, kDec},
    {"100.035Ki", 10243584, -2, kBin},
    {"0.5Mi", 512 * 1024, 0, kBin},
    {"0.025Ti", 274877906944, -1, kBin},
    {"0.000000000001Ki", 2, -9, kDec},
    {".001", 1, -3, kDec},
    {".0001k", 100, -3, kDec},
    {"1.", 1, 0, kDec},
    {"1.G", 1, 9, kDec},
};

TEST(QuantityParse, ValuesAndFormatsWithSigns) {
  for (const ValueCase& c : kValueCases) {
    SCOPED_TRACE(c.input);
    const Quantity expected = Dec(c.mantissa, c.exponent);
    const Quantity neg_expected = Dec(-c.mantissa, c.exponent);
    for (const std::string& prefix : {std::string(), std::string("+"), std::string("-")}) {
      Result<Quantity> q = Quantity::Parse(prefix + c.input);
      ASSERT_TRUE(q.ok()) << prefix << c.input << ": " << q.error().message;
      EXPECT_EQ(*q, prefix == "-" ? neg_expected : expected)
          << prefix << c.input << " -> " << q->ToString();
      EXPECT_EQ(q->format(), c.format) << prefix << c.input;
      EXPECT_EQ(q->Sign(), prefix == "-" ? -1 : 1);
    }
  }
}

TEST(QuantityParse, BinarySICapAppliesToMagnitude) {
  EXPECT_EQ(Q("9Ei").Value(), kMax);
  EXPECT_EQ(Q("-9Ei").Value(), -kMax);
  EXPECT_EQ(Q("8Ei").Value(), kMax);  // 2^63 does not fit either
  EXPECT_EQ(Q("7Ei").Value(), 7LL << 60);
}

TEST(QuantityParse, RejectsWhatGoRejects) {
  const char* const kBad[] = {
      "",       // empty
      "1.5.5",  // two points
      "1e",     // exponent without digits
      "-3.01e-",
      "1e+",
      " 1",
      "1 ",
      "1 Gi",  // blanks are never trimmed
      "1GiB",
      "1.1.M",
      "1+1.0M",
      "0.1mi",
      "0.1am",
      "aoeu",
      ".5i",
      "1i",
      "-3.01i",
      "1k3",
      "1KI",
      "1K",
      "1E--3",
      "1e1.5",
      "--1",
      "1,000",
      // No digit at all (Go reads these as 0; copse rejects them).
      "Gi",
      "-",
      "+",
      ".",
      "-.",
      "Mi",
      "k",
  };
  for (const char* text : kBad) {
    Result<Quantity> q = Quantity::Parse(text);
    EXPECT_FALSE(q.ok()) << "\"" << text << "\" parsed as " << (q.ok() ? q->ToString() : "");
    if (!q.ok()) {
      EXPECT_EQ(q.error().code, ErrorCode::kInvalid);
      EXPECT_NE(q.error().message.find("\"" + std::string(text) + "\""), std::string::npos)
          << q.error().message;
    }
  }
}

TEST(QuantityParse, ErrorMessagesSayWhatIsWrong) {
  EXPECT_NE(Quantity::Parse("1.5.5").error().message.find("regular expression"), std::string::npos);
  EXPECT_NE(Quantity::Parse("1e").error().message.find("suffix"), std::string::npos);
  EXPECT_NE(Quantity::Parse("Gi").error().message.find("no digits"), std::string::npos);
}

TEST(QuantityParse, AcceptsGoOddities) {
  EXPECT_EQ(Q("1."), Q("1"));
  EXPECT_EQ(Q(".5"), Q("500m"));
  EXPECT_EQ(Q("+1"), Q("1"));
  EXPECT_EQ(Q("1e+3"), Q("1k"));
  EXPECT_EQ(Q("1e03"), Q("1k"));
  EXPECT_EQ(Q("007"), Q("7"));
  EXPECT_EQ(Q("-0"), Quantity());
  EXPECT_EQ(Q("-0").ToString(), "0");
}

TEST(QuantityParse, RejectsOutOfRangeInput) {
  EXPECT_FALSE(Quantity::Parse("1e1000000001").ok());
  EXPECT_FALSE(Quantity::Parse("1e99999999999999999999").ok());
  EXPECT_FALSE(Quantity::Parse(std::string(39, '9')).ok());  // 39 significant digits
  EXPECT_TRUE(Quantity::Parse(std::string(38, '9')).ok());
  EXPECT_TRUE(Quantity::Parse("1" + std::string(60, '0')).ok());  // one significant digit
  EXPECT_EQ(Q("1e1000").CanonicalString(), "10e999");             // exponent a multiple of 3
}

TEST(QuantityParse, MustParseAbortsOnBadLiteral) {
  EXPECT_EQ(Quantity::MustParse("250m").MilliValue(), 250);
  EXPECT_DEATH(Quantity::MustParse("1.5.5"), "1\\.5\\.5");
}

// ---------------------------------------------------------------------------

TEST(QuantityConstruct, FromIntAndFromMilliPrintCanonically) {
  // TestNewSet / TestMilliNewSet.
  EXPECT_EQ(Quantity::FromInt(1).ToString(), "1");
  EXPECT_EQ(Quantity::FromInt(1000).ToString(), "1k");
  EXPECT_EQ(Quantity::FromInt(1234000).ToString(), "1234k");
  EXPECT_EQ(Quantity::FromInt(1024, kBin).ToString(), "1Ki");
  EXPECT_EQ(Quantity::FromInt(1024 * 1024, kBin).ToString(), "1Mi");
  EXPECT_EQ(Quantity::FromInt(1000000, kExp).ToString(), "1e6");
  EXPECT_EQ(Quantity::FromMilli(1).ToString(), "1m");
  EXPECT_EQ(Quantity::FromMilli(1000).ToString(), "1");
  EXPECT_EQ(Quantity::FromMilli(1234000).ToString(), "1234");
  EXPECT_EQ(Quantity::FromMilli(1024, kBin).ToString(), "1024m");
  EXPECT_EQ(Quantity::FromMilli(1024 * 1024, kBin).ToString(), "1048576m");
  EXPECT_EQ(Quantity::FromMilli(1000000, kExp).ToString(), "1e3");
  EXPECT_EQ(Quantity::FromInt(-5).ToString(), "-5");
  EXPECT_EQ(Quantity::FromInt(kMin).Value(), kMin);
  EXPECT_EQ(Quantity::FromInt(kMin).ToString(), "-9223372036854775808");
  EXPECT_EQ(Quantity::FromMilli(1500).Value(), 2);
  EXPECT_EQ(Quantity::FromInt(0, kBin).format(), kBin);
  EXPECT_TRUE(Quantity().IsZero());
  EXPECT_EQ(Quantity().format(), kDec);
  EXPECT_EQ(Quantity().ToString(), "0");
}

TEST(QuantityValue, ValueAndMilliValueRoundAwayFromZero) {
  struct Case {
    const char* input;
    int64_t value;
    int64_t milli;
  };
  const Case kCases[] = {
      {"0", 0, 0},
      {"1", 1, 1000},
      {"1.1", 2, 1100},
      {"-1.1", -2, -1100},
      {"100m", 1, 100},
      {"-100m", -1, -100},
      {"1n", 1, 1},  // TestScaledValue: 1n at Milli and at 0 is 1
      {"-1n", -1, -1},
      {"1u", 1, 1},
      {"1500m", 2, 1500},
      {"1.0001", 2, 1001},
      {"1Gi", 1073741824, 1073741824000},
      {"1.5Gi", 1610612736, 1610612736000},
      {"9Ei", kMax, kMax},    // MilliValue saturates
      {"-9Ei", -kMax, kMin},  // and so does a large negative one
      {"1e30", kMax, kMax},
      {"-1e30", kMin, kMin},
      {"9223372036854775807", kMax, kMax},
      {"9223372036854775808", kMax, kMax},
      {"-9223372036854775808", kMin, kMin},
      {"9223372036854775807m", 9223372036854776, kMax},
      {"1e-1000", 1, 1},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.input);
    const Quantity q = Q(c.input);
    EXPECT_EQ(q.Value(), c.value);
    EXPECT_EQ(q.MilliValue(), c.milli);
  }
}

TEST(QuantityValue, SchedulingUnitsUseMilliCpuAndCeilElsewhere) {
  EXPECT_EQ(SchedulingUnits(kResourceCPU, Q("100m")), 100);
  EXPECT_EQ(SchedulingUnits(kResourceCPU, Q("1.5")), 1500);
  EXPECT_EQ(SchedulingUnits(kResourceCPU, Q("1n")), 1);
  EXPECT_EQ(SchedulingUnits(kResourceCPU, Q("64")), 64000);
  EXPECT_EQ(SchedulingUnits(kResourceMemory, Q("1.5Gi")), 1610612736);
  EXPECT_EQ(SchedulingUnits(kResourceMemory, Q("100m")), 1);
  EXPECT_EQ(SchedulingUnits(kResourceEphemeralStorage, Q("10G")), 10000000000);
  EXPECT_EQ(SchedulingUnits(kResourcePods, Q("110")), 110);
  EXPECT_EQ(SchedulingUnits("nvidia.com/gpu", Q("2")), 2);
  EXPECT_EQ(SchedulingUnits("nvidia.com/gpu", Q("500m")), 1);
  EXPECT_EQ(SchedulingUnits("cpus", Q("1")), 1);  // only "cpu" is milli
}

// ---------------------------------------------------------------------------

TEST(QuantityCompare, OrdersByValueIgnoringFormat) {
  // TestQuantityCmp.
  EXPECT_EQ(Q("0") <=> Q("0"), std::strong_ordering::equal);
  EXPECT_GT(Q("100m"), Q("50m"));
  EXPECT_LT(Q("50m"), Q("100m"));
  EXPECT_GT(Q("10000T"), Q("100Gi"));
  EXPECT_EQ(Q("1Ki"), Q("1024"));
  EXPECT_EQ(Q("1e3"), Q("1k"));
  EXPECT_EQ(Q("1e-9"), Q("1n"));
  EXPECT_EQ(Q("0.5"), Q("500m"));
  EXPECT_EQ(Q("9Ei"), Q("9223372036854775807"));
  EXPECT_LT(Q("-1"), Q("0"));
  EXPECT_LT(Q("-2"), Q("-1"));
  EXPECT_GT(Q("-1m"), Q("-1"));
  EXPECT_GT(Q("1n"), Q("0"));
  EXPECT_LT(Q("-1n"), Q("0"));
  EXPECT_GT(Q("1e40"), Q("1e39"));
  EXPECT_LT(Q("-1e40"), Q("-1e39"));
  EXPECT_GT(Q("1e100"), Q(std::string(38, '9')));
  EXPECT_LT(Q("99999999999999999999999999999999999999n"), Q("1e29"));
  EXPECT_GT(Q("100000000000000000000000000001n"), Q("1e20"));
  EXPECT_NE(Q("1.000000001"), Q("1"));
  EXPECT_EQ(Q("1.000000000"), Q("1"));
  // (TestQuantityCmpInt64AndDec) 800m vs 1 and 0.79.
  EXPECT_LT(Q("800m"), Q("1"));
  EXPECT_GT(Q("800m"), Q("790m"));
}

TEST(QuantityArithmetic, AddAndSubAreExactAndFollowGoFormats) {
  // TestAdd.
  Quantity a = Dec(10, 0);
  a += Dec(1, 1);
  EXPECT_EQ(a, Dec(20, 0));
  EXPECT_EQ(Q("10") + Q("1Ki"), Q("1034"));
  EXPECT_EQ((Q("10") + Quantity::FromInt(1, kBin)).format(), kDec);
  EXPECT_EQ((Quantity::FromInt(10, kBin) + Q("1")).format(), kBin);
  EXPECT_EQ(Quantity() + Q("50"), Q("50"));
  EXPECT_EQ(Q("50") + Quantity(), Q("50"));
  // TestSub.
  EXPECT_TRUE((Dec(10, 0) - Dec(1, 1)).IsZero());
  EXPECT_EQ(Q("10") - Quantity::FromInt(1, kBin), Q("9"));
  EXPECT_EQ(Quantity() - Q("50"), Q("-50"));
  // TestQuantityAddZeroPreservesSuffix / SubZero.
  for (const char* text : {"100m", "1Gi"}) {
    EXPECT_EQ((Q(text) + Q("0")).ToString(), text);
    EXPECT_EQ((Q("0") + Q(text)).ToString(), text);
    EXPECT_EQ((Q(text) - Q("0")).ToString(), text);
    EXPECT_EQ((Q("0") - Q(text)).ToString(), std::string("-") + text);
  }
  // Exact decimal arithmetic.
  EXPECT_EQ(Q("0.1") + Q("0.2"), Q("300m"));
  EXPECT_EQ((Q("0.1") + Q("0.2")).ToString(), "300m");
  EXPECT_EQ((Q("1Gi") - Q("1Mi")).ToString(), "1023Mi");
  EXPECT_EQ((Q("1") - Q("1n")).ToString(), "999999999n");
  EXPECT_EQ((Q("1E") + Q("1n")).ToString(), "1000000000000000000000000001n");
  // The cached text of an operand does not survive arithmetic.
  EXPECT_EQ((Q("+1") + Q("0")).ToString(), "1");
  Quantity sum;
  for (int i = 0; i < 1000; ++i) sum += Q("1m");
  EXPECT_EQ(sum, Q("1"));
  EXPECT_EQ(sum.ToString(), "1");
  for (int i = 0; i < 1000; ++i) sum -= Q("1m");
  EXPECT_TRUE(sum.IsZero());
}

TEST(QuantityArithmetic, AddSubRoundTripAcrossScales) {
  // Like TestAddSubRoundTripAcrossScales, with deterministic values.
  Quantity q;
  std::vector<Quantity> parts;
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < 100; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const int64_t v = static_cast<int64_t>(x >> 1);
    // Scales -9..5 keep every partial sum within 38 digits, so all is exact.
    parts.push_back(Dec(v, static_cast<int>(v % 15) - 9));
    q += parts.back();
  }
  EXPECT_GT(q, Quantity());
  for (const Quantity& p : parts) q -= p;
  EXPECT_TRUE(q.IsZero()) << q.ToString();
}

TEST(QuantityArithmetic, BeyondThirtyEightDigitsRoundsAwayFromZero) {
  const Quantity big = Q("1e100");
  const Quantity bumped = big + Q("1");
  EXPECT_GT(bumped, big);
  EXPECT_EQ(bumped - big, Q("1e62"));  // kept 38 digits: 1 followed by 37 zeros and a 1
  const Quantity lowered = big - Q("1");
  EXPECT_EQ(lowered, big);  // 99..9.9 rounds away from zero back to 1e100
  EXPECT_EQ(big - big, Quantity());
}

TEST(Saturating, AddSubMulClampAtInt64Limits) {
  EXPECT_EQ(SaturatingAdd(1, 2), 3);
  EXPECT_EQ(SaturatingAdd(kMax, 1), kMax);
  EXPECT_EQ(SaturatingAdd(kMin, -1), kMin);
  EXPECT_EQ(SaturatingAdd(kMax, kMin), -1);
  EXPECT_EQ(SaturatingSub(5, 7), -2);
  EXPECT_EQ(SaturatingSub(kMin, 1), kMin);
  EXPECT_EQ(SaturatingSub(kMax, -1), kMax);
  EXPECT_EQ(SaturatingSub(0, kMin), kMax);
  EXPECT_EQ(SaturatingSub(-1, kMin), kMax);
  EXPECT_EQ(SaturatingMul(-3, 4), -12);
  EXPECT_EQ(SaturatingMul(kMax, 2), kMax);
  EXPECT_EQ(SaturatingMul(kMin, 2), kMin);
  EXPECT_EQ(SaturatingMul(kMin, -1), kMax);
  EXPECT_EQ(SaturatingMul(kMax, -2), kMin);
  EXPECT_EQ(SaturatingMul(int64_t{1} << 32, int64_t{1} << 32), kMax);
  EXPECT_EQ(SaturatingMul(0, kMin), 0);
}

// ---------------------------------------------------------------------------

TEST(ResourceList, ParsesNodeShape) {
  Result<ResourceList> list = ParseResourceList("cpu=64,memory=512Gi,nvidia.com/gpu=8");
  ASSERT_TRUE(list.ok()) << list.error().message;
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ(SchedulingUnits(kResourceCPU, list->at("cpu")), 64000);
  EXPECT_EQ(SchedulingUnits(kResourceMemory, list->at("memory")), 512LL << 30);
  EXPECT_EQ(list->at("nvidia.com/gpu").Value(), 8);
  EXPECT_EQ(list->at("memory").ToString(), "512Gi");
}

TEST(ResourceList, TrimsBlanksAndAcceptsEmpty) {
  Result<ResourceList> list = ParseResourceList(" cpu = 500m ,\tmemory=1Gi ");
  ASSERT_TRUE(list.ok()) << list.error().message;
  EXPECT_EQ(list->at("cpu").MilliValue(), 500);
  EXPECT_EQ(list->at("memory").Value(), 1LL << 30);
  Result<ResourceList> empty = ParseResourceList("");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(ResourceList, ErrorsNameTheBadEntry) {
  struct Case {
    const char* text;
    const char* entry;  // quoted in the message
    const char* why;
  };
  const Case kCases[] = {
      {"cpu=64,memory=lots", "\"memory=lots\"", "invalid quantity \"lots\""},
      {"cpu=64,memory=1GiB", "\"memory=1GiB\"", "regular expression"},
      {"cpu", "\"cpu\"", "expected <name>=<quantity>"},
      {"cpu=1,,memory=1Gi", "entry 2", "empty"},
      {"cpu=1,", "entry 2", "empty"},
      {"cpu=1,cpu=2", "\"cpu=2\"", "duplicate resource \"cpu\""},
      {"cpu=-1", "\"cpu=-1\"", "greater than or equal to 0"},
      {"=1", "\"=1\"", "bad resource name"},
      {"a/b/c=1", "\"a/b/c=1\"", "bad resource name"},
      {"cpu=", "\"cpu=\"", "invalid quantity"},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.text);
    Result<ResourceList> list = ParseResourceList(c.text);
    ASSERT_FALSE(list.ok());
    EXPECT_EQ(list.error().code, ErrorCode::kInvalid);
    EXPECT_NE(list.error().message.find(c.entry), std::string::npos) << list.error().message;
    EXPECT_NE(list.error().message.find(c.why), std::string::npos) << list.error().message;
  }
}

}  // namespace
}  // namespace copse
