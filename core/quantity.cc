#include "core/quantity.h"

#include <algorithm>
#include <array>
#include <boost/multiprecision/cpp_int.hpp>
#include <limits>
#include <optional>
#include <utility>

#include "core/check.h"
#include "core/labels.h"

namespace copse {
namespace {

using U128 = unsigned __int128;
using I128 = __int128;
using BigInt = boost::multiprecision::cpp_int;

constexpr U128 kMaxMagnitude = (U128(1) << 127) - 1;
constexpr int kMaxSignificantDigits = 38;
constexpr int64_t kNanoScale = -9;
// Largest |exponent| accepted in a DecimalExponent suffix.
constexpr int64_t kMaxWrittenExponent = 1'000'000'000;
// Beyond this a BinarySI value is printed as DecimalSI instead of expanding
// 10^scale into a giant integer.
constexpr int64_t kMaxBinaryFormatScale = 4096;

constexpr std::string_view kFormatMessage =
    "quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
constexpr std::string_view kSuffixMessage = "unable to parse quantity's suffix";

constexpr std::array<U128, 39> MakePow10() {
  std::array<U128, 39> table{};
  U128 v = 1;
  for (auto& entry : table) {
    entry = v;
    v *= 10;
  }
  return table;
}
constexpr std::array<U128, 39> kPow10 = MakePow10();  // 10^0 .. 10^38

U128 Magnitude(I128 v) noexcept {
  return v < 0 ? U128(0) - static_cast<U128>(v) : static_cast<U128>(v);
}

// Number of decimal digits of v > 0 (1..39).
int64_t DigitCount(U128 v) noexcept {
  int64_t n = 1;
  while (n < 39 && v >= kPow10[static_cast<size_t>(n)]) ++n;
  return n;
}

std::string U128ToString(U128 v) {
  if (v == 0) return "0";
  char buf[40];
  size_t pos = sizeof(buf);
  while (v > 0) {
    buf[--pos] = static_cast<char>('0' + static_cast<int>(v % 10));
    v /= 10;
  }
  return std::string(buf + pos, sizeof(buf) - pos);
}

BigInt ToBig(U128 v) {
  BigInt b = static_cast<uint64_t>(v >> 64);
  b <<= 64;
  b += static_cast<uint64_t>(v);
  return b;
}

// b must be in [0, 2^128).
U128 FromBig(const BigInt& b) {
  const BigInt low_mask = (BigInt(1) << 64) - 1;
  const auto lo = static_cast<uint64_t>(b & low_mask);
  const auto hi = static_cast<uint64_t>(b >> 64);
  return (U128(hi) << 64) | U128(lo);
}

BigInt Pow10Big(int64_t k) {
  return boost::multiprecision::pow(BigInt(10), static_cast<unsigned>(k));
}

// Compares |a| = ma * 10^sa with |b| = mb * 10^sb for ma, mb > 0.
int CompareMagnitude(U128 ma, int64_t sa, U128 mb, int64_t sb) noexcept {
  const int64_t da = DigitCount(ma);
  const int64_t db = DigitCount(mb);
  // The leading digit sits at 10^(d+s-1); a larger position wins outright.
  if (da + sa != db + sb) return da + sa < db + sb ? -1 : 1;
  if (sa > sb) {
    // Same order of magnitude: sa - sb = db - da <= 38, and an overflowing
    // shift exceeds any 128-bit mb.
    U128 shifted;
    if (__builtin_mul_overflow(ma, kPow10[static_cast<size_t>(sa - sb)], &shifted)) return 1;
    return shifted < mb ? -1 : (shifted > mb ? 1 : 0);
  }
  if (sb > sa) {
    U128 shifted;
    if (__builtin_mul_overflow(mb, kPow10[static_cast<size_t>(sb - sa)], &shifted)) return -1;
    return ma < shifted ? -1 : (ma > shifted ? 1 : 0);
  }
  return ma < mb ? -1 : (ma > mb ? 1 : 0);
}

// strconv.ParseInt(s, 10, 64).
std::optional<int64_t> ParseGoInt64(std::string_view s) noexcept {
  size_t i = 0;
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    i = 1;
  }
  if (i == s.size()) return std::nullopt;
  U128 v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    v = v * 10 + static_cast<U128>(s[i] - '0');
    if (v > U128(1) << 63) return std::nullopt;
  }
  if (!negative && v > static_cast<U128>(std::numeric_limits<int64_t>::max())) return std::nullopt;
  return negative ? static_cast<int64_t>(-static_cast<I128>(v)) : static_cast<int64_t>(v);
}

bool IsDigit(char c) noexcept { return c >= '0' && c <= '9'; }

bool IsSuffixLetter(char c) noexcept {
  switch (c) {
    case 'e':
    case 'E':
    case 'i':
    case 'n':
    case 'u':
    case 'm':
    case 'k':
    case 'K':
    case 'M':
    case 'G':
    case 'T':
    case 'P':
      return true;
    default:
      return false;
  }
}

struct Suffix {
  int base;          // 10 or 2
  int64_t exponent;  // power of the base
  Quantity::Format format;
};

std::optional<Suffix> InterpretSuffix(std::string_view s) noexcept {
  using F = Quantity::Format;
  static constexpr std::pair<std::string_view, Suffix> kTable[] = {
      {"", {10, 0, F::kDecimalSI}},   {"n", {10, -9, F::kDecimalSI}},
      {"u", {10, -6, F::kDecimalSI}}, {"m", {10, -3, F::kDecimalSI}},
      {"k", {10, 3, F::kDecimalSI}},  {"M", {10, 6, F::kDecimalSI}},
      {"G", {10, 9, F::kDecimalSI}},  {"T", {10, 12, F::kDecimalSI}},
      {"P", {10, 15, F::kDecimalSI}}, {"E", {10, 18, F::kDecimalSI}},
      {"Ki", {2, 10, F::kBinarySI}},  {"Mi", {2, 20, F::kBinarySI}},
      {"Gi", {2, 30, F::kBinarySI}},  {"Ti", {2, 40, F::kBinarySI}},
      {"Pi", {2, 50, F::kBinarySI}},  {"Ei", {2, 60, F::kBinarySI}},
  };
  for (const auto& [text, suffix] : kTable) {
    if (text == s) return suffix;
  }
  if (s.size() > 1 && (s[0] == 'e' || s[0] == 'E')) {
    if (auto exponent = ParseGoInt64(s.substr(1)))
      return Suffix{10, *exponent, F::kDecimalExponent};
  }
  return std::nullopt;
}

// Go's parser keeps the input as the String() form when its int64 fast path
// sees a number it considers canonical. Mirrors that decision exactly.
bool GoReusesText(std::string_view text, std::string_view num, std::string_view denom,
                  const Suffix& suffix) {
  if (text == "0") return true;
  if (num.empty()) num = "0";
  if (suffix.format == Quantity::Format::kBinarySI) {
    if (!denom.empty()) return false;
    const int64_t precision = 15 - static_cast<int64_t>(num.size()) - suffix.exponent * 3 / 10 - 1;
    if (precision < 0) return false;
    const auto value = ParseGoInt64(num);
    if (!value || *value > (std::numeric_limits<int64_t>::max() >> suffix.exponent)) return false;
    return (*value & 0x07) != 0;
  }
  const int64_t precision = 19 - static_cast<int64_t>(num.size() + denom.size());
  if (precision < 0) return false;
  const int64_t scale = suffix.exponent - static_cast<int64_t>(denom.size());
  if (scale < kNanoScale) return false;
  std::string shifted(num);
  shifted += denom;
  if (!ParseGoInt64(shifted)) return false;
  return scale % 3 == 0 && !shifted.ends_with("000") && shifted[0] != '0';
}

Error ParseError(std::string_view text, std::string_view why) {
  std::string message = "invalid quantity \"";
  message += text;
  message += "\": ";
  message += why;
  return MakeError(ErrorCode::kInvalid, std::move(message));
}

// Adds one to a string of decimal digits.
void IncrementDigits(std::string& digits) {
  for (size_t i = digits.size(); i-- > 0;) {
    if (digits[i] != '9') {
      ++digits[i];
      return;
    }
    digits[i] = '0';
  }
  digits.insert(digits.begin(), '1');
}

void StripTrailingZeros(std::string& digits, int64_t& scale) {
  const size_t last = digits.find_last_not_of('0');
  scale += static_cast<int64_t>(digits.size() - 1 - last);
  digits.resize(last + 1);
}

std::string_view DecimalSISuffix(int64_t exponent) noexcept {
  switch (exponent) {
    case -9:
      return "n";
    case -6:
      return "u";
    case -3:
      return "m";
    case 0:
      return "";
    case 3:
      return "k";
    case 6:
      return "M";
    case 9:
      return "G";
    case 12:
      return "T";
    case 15:
      return "P";
    case 18:
      return "E";
    default:
      return "?";
  }
}

// Multiplies v by 10^k in place; false on overflow.
bool ScaleUp(I128& v, int64_t k) noexcept {
  if (k == 0) return true;
  if (k > 38) return false;
  return !__builtin_mul_overflow(v, static_cast<I128>(kPow10[static_cast<size_t>(k)]), &v);
}

}  // namespace

struct QuantityInternals {
  // Stores sign * magnitude * 10^scale, normalised. magnitude <= 2^127-1.
  static void Set(Quantity& q, bool negative, U128 magnitude, int64_t scale) {
    if (magnitude == 0) {
      q.mantissa_ = 0;
      q.scale_ = 0;
      return;
    }
    while (magnitude % 10 == 0) {
      magnitude /= 10;
      ++scale;
    }
    q.mantissa_ = negative ? -static_cast<I128>(magnitude) : static_cast<I128>(magnitude);
    q.scale_ = static_cast<int32_t>(scale);
  }

  static Result<Quantity> Parse(std::string_view text) {
    if (text.empty()) return ParseError(text, kFormatMessage);

    // Scan [+-] zeros digits [. digits] suffix-letters [+-] digits, as Go does.
    size_t pos = 0;
    const size_t end = text.size();
    bool negative = false;
    if (text[0] == '-' || text[0] == '+') {
      negative = text[0] == '-';
      pos = 1;
    }
    const size_t zeros_start = pos;
    while (pos < end && text[pos] == '0') ++pos;
    const bool had_zero = pos > zeros_start;
    const size_t num_start = pos;
    while (pos < end && IsDigit(text[pos])) ++pos;
    const std::string_view num = text.substr(num_start, pos - num_start);
    std::string_view denom;
    if (pos < end && text[pos] == '.') {
      const size_t denom_start = ++pos;
      while (pos < end && IsDigit(text[pos])) ++pos;
      denom = text.substr(denom_start, pos - denom_start);
    }
    const size_t suffix_start = pos;
    while (pos < end && IsSuffixLetter(text[pos])) ++pos;
    if (pos < end && (text[pos] == '+' || text[pos] == '-')) ++pos;
    while (pos < end && IsDigit(text[pos])) ++pos;
    if (pos != end) return ParseError(text, kFormatMessage);
    if (!had_zero && num.empty() && denom.empty()) {
      return ParseError(text, "the number has no digits");
    }

    const std::string_view suffix_text = text.substr(suffix_start);
    const std::optional<Suffix> suffix = InterpretSuffix(suffix_text);
    if (!suffix) return ParseError(text, kSuffixMessage);
    if (suffix->exponent > kMaxWrittenExponent || suffix->exponent < -kMaxWrittenExponent) {
      return ParseError(text, "exponent out of range");
    }

    Quantity q;
    q.format_ = suffix->format;
    if (GoReusesText(text, num, denom, *suffix)) q.text_ = std::string(text);

    std::string digits(num);
    digits += denom;
    const size_t first = digits.find_first_not_of('0');
    if (first == std::string::npos) return q;  // zero, in the parsed format
    digits.erase(0, first);

    int64_t scale = -static_cast<int64_t>(denom.size());
    U128 magnitude = 0;
    if (suffix->base == 10) {
      scale += suffix->exponent;
      StripTrailingZeros(digits, scale);
      if (scale < kNanoScale) {
        // Round up to the next nano: the last digit is non-zero, so anything
        // dropped is a non-zero remainder.
        const int64_t drop = kNanoScale - scale;
        if (drop >= static_cast<int64_t>(digits.size())) {
          digits = "1";
        } else {
          digits.resize(digits.size() - static_cast<size_t>(drop));
          IncrementDigits(digits);
        }
        scale = kNanoScale;
        StripTrailingZeros(digits, scale);
      }
      if (digits.size() > static_cast<size_t>(kMaxSignificantDigits)) {
        return ParseError(text, "more than 38 significant digits");
      }
      for (char c : digits) magnitude = magnitude * 10 + static_cast<U128>(c - '0');
    } else if (denom.empty() && digits.size() <= 18 && suffix->exponent <= 64) {
      // A whole number of binary units ("500Mi", "64Gi"): below 10^18 * 2^64
      // it fits in 128 bits, so the arbitrary-precision path below (same
      // result: no fraction to round, a value >= 1 kept binary) is not needed.
      U128 value = 0;
      for (char c : digits) value = value * 10 + static_cast<U128>(c - '0');
      value <<= static_cast<unsigned>(suffix->exponent);
      const U128 cap = static_cast<U128>(std::numeric_limits<int64_t>::max());
      magnitude = value > cap ? cap : value;
      scale = 0;
    } else {
      BigInt value(digits);
      value <<= static_cast<unsigned>(suffix->exponent);
      int64_t fraction_digits = static_cast<int64_t>(denom.size());
      if (fraction_digits > -kNanoScale) {
        const BigInt divisor = Pow10Big(fraction_digits + kNanoScale);
        BigInt quotient;
        BigInt remainder;
        boost::multiprecision::divide_qr(value, divisor, quotient, remainder);
        if (remainder != 0) ++quotient;
        value = std::move(quotient);
        fraction_digits = -kNanoScale;
      }
      const BigInt unit = Pow10Big(fraction_digits);
      const BigInt cap = BigInt(std::numeric_limits<int64_t>::max()) * unit;
      if (value > cap) value = cap;
      // A binary quantity below 1 is shown in decimal to avoid rounding.
      if (value < unit) q.format_ = Quantity::Format::kDecimalSI;
      magnitude = FromBig(value);
      scale = -fraction_digits;
    }
    if (scale > std::numeric_limits<int32_t>::max() / 2)
      return ParseError(text, "exponent out of range");
    Set(q, negative, magnitude, scale);
    return q;
  }

  // q += sign * mb * 10^sb, where mb is an already normalised mantissa.
  static void Add(Quantity& q, I128 mb, int64_t sb, Quantity::Format other_format) {
    q.text_.clear();
    if (q.mantissa_ == 0) q.format_ = other_format;
    if (mb == 0) return;
    if (q.mantissa_ == 0) {
      q.mantissa_ = mb;
      q.scale_ = static_cast<int32_t>(sb);
      return;
    }
    const int64_t sa = q.scale_;
    const int64_t s = std::min(sa, sb);
    I128 a = q.mantissa_;
    I128 b = mb;
    I128 sum;
    if (ScaleUp(a, sa - s) && ScaleUp(b, sb - s) && !__builtin_add_overflow(a, b, &sum) &&
        sum != std::numeric_limits<I128>::min()) {
      Set(q, sum < 0, Magnitude(sum), s);
      return;
    }
    AddSlow(q, q.mantissa_, sa, mb, sb);
  }

  // The exact sum does not fit 128 bits: compute it in big integers and round
  // it away from zero to 38-39 significant digits.
  static void AddSlow(Quantity& q, I128 ma, int64_t sa, I128 mb, int64_t sb) {
    if (sa < sb) {
      std::swap(ma, mb);
      std::swap(sa, sb);
    }
    BigInt a = ToBig(Magnitude(ma));
    if (ma < 0) a = -a;
    BigInt b = ToBig(Magnitude(mb));
    if (mb < 0) b = -b;
    if (sa - sb > 100) {
      // |b| < 10^(sa-61), far below the last digit that can be kept; a unit
      // of the same sign at 10^(sa-100) rounds exactly the same way.
      b = mb < 0 ? -1 : 1;
      sb = sa - 100;
    }
    BigInt sum = a * Pow10Big(sa - sb) + b;
    int64_t scale = sb;
    const bool negative = sum < 0;
    BigInt magnitude = boost::multiprecision::abs(sum);
    const BigInt limit = ToBig(kMaxMagnitude);
    while (magnitude > limit) {
      BigInt quotient;
      BigInt remainder;
      boost::multiprecision::divide_qr(magnitude, BigInt(10), quotient, remainder);
      if (remainder != 0) ++quotient;
      magnitude = std::move(quotient);
      ++scale;
    }
    Set(q, negative, FromBig(magnitude), scale);
  }

  // ceil-away-from-zero(value / 10^target), saturated to int64.
  static int64_t ScaledValue(const Quantity& q, int64_t target) noexcept {
    if (q.mantissa_ == 0) return 0;
    const bool negative = q.mantissa_ < 0;
    const U128 magnitude = Magnitude(q.mantissa_);
    const int64_t shift = static_cast<int64_t>(q.scale_) - target;
    U128 result;
    if (shift >= 0) {
      if (shift > 38 ||
          __builtin_mul_overflow(magnitude, kPow10[static_cast<size_t>(shift)], &result)) {
        return negative ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
      }
    } else if (-shift > 38) {
      result = 1;  // |mantissa| < 10^39: a non-zero fraction of one unit
    } else {
      const U128 divisor = kPow10[static_cast<size_t>(-shift)];
      result = magnitude / divisor;
      if (magnitude % divisor != 0) ++result;
    }
    if (negative) {
      if (result > U128(1) << 63) return std::numeric_limits<int64_t>::min();
      return static_cast<int64_t>(-static_cast<I128>(result));
    }
    if (result > static_cast<U128>(std::numeric_limits<int64_t>::max())) {
      return std::numeric_limits<int64_t>::max();
    }
    return static_cast<int64_t>(result);
  }

  static std::string Canonical(const Quantity& q) {
    if (q.mantissa_ == 0) return "0";
    const bool negative = q.mantissa_ < 0;
    const U128 magnitude = Magnitude(q.mantissa_);
    Quantity::Format format = q.format_;
    if (format == Quantity::Format::kBinarySI) {
      // Below 1024 or fractional: decimal avoids rounding (Go does the same).
      if (CompareMagnitude(magnitude, q.scale_, 1024, 0) < 0 || q.scale_ < 0 ||
          q.scale_ > kMaxBinaryFormatScale) {
        format = Quantity::Format::kDecimalSI;
      }
    }
    std::string out = negative ? "-" : "";
    if (format == Quantity::Format::kBinarySI) {
      static constexpr std::string_view kBinarySuffixes[] = {"",   "Ki", "Mi", "Gi",
                                                             "Ti", "Pi", "Ei"};
      BigInt value = ToBig(magnitude) * Pow10Big(q.scale_);
      size_t power = 0;
      while (power < 6 && (value & 1023) == 0) {
        value >>= 10;
        ++power;
      }
      out += value.str();
      out += kBinarySuffixes[power];
      return out;
    }
    // The mantissa has no trailing zeros; move the exponent down to a
    // multiple of three.
    std::string digits = U128ToString(magnitude);
    int64_t exponent = q.scale_;
    switch (exponent % 3) {
      case 1:
      case -2:
        digits += '0';
        exponent -= 1;
        break;
      case 2:
      case -1:
        digits += "00";
        exponent -= 2;
        break;
      default:
        break;
    }
    out += digits;
    if (format == Quantity::Format::kDecimalSI) {
      const std::string_view suffix = DecimalSISuffix(exponent);
      if (suffix != "?") {
        out += suffix;
        return out;
      }
      // No SI suffix beyond E (or below n): fall back to an exponent.
    }
    if (exponent != 0) {
      out += 'e';
      out += std::to_string(exponent);
    }
    return out;
  }

  static int Compare(const Quantity& a, const Quantity& b) noexcept {
    const int sign_a = a.Sign();
    const int sign_b = b.Sign();
    if (sign_a != sign_b) return sign_a < sign_b ? -1 : 1;
    if (sign_a == 0) return 0;
    const int c =
        CompareMagnitude(Magnitude(a.mantissa_), a.scale_, Magnitude(b.mantissa_), b.scale_);
    return sign_a < 0 ? -c : c;
  }
};

Result<Quantity> Quantity::Parse(std::string_view text) { return QuantityInternals::Parse(text); }

Quantity Quantity::MustParse(std::string_view text) {
  Result<Quantity> parsed = Parse(text);
  COPSE_CHECK(parsed.ok()) << parsed.error().message;
  return std::move(parsed).value();
}

Quantity Quantity::FromInt(int64_t value, Format format) {
  Quantity q;
  q.format_ = format;
  QuantityInternals::Set(q, value < 0, Magnitude(value), 0);
  return q;
}

Quantity Quantity::FromMilli(int64_t milli, Format format) {
  Quantity q;
  q.format_ = format;
  QuantityInternals::Set(q, milli < 0, Magnitude(milli), -3);
  return q;
}

int64_t Quantity::Value() const noexcept { return QuantityInternals::ScaledValue(*this, 0); }

int64_t Quantity::MilliValue() const noexcept { return QuantityInternals::ScaledValue(*this, -3); }

std::string Quantity::ToString() const { return text_.empty() ? CanonicalString() : text_; }

std::string Quantity::CanonicalString() const { return QuantityInternals::Canonical(*this); }

Quantity& Quantity::operator+=(const Quantity& other) {
  QuantityInternals::Add(*this, other.mantissa_, other.scale_, other.format_);
  return *this;
}

Quantity& Quantity::operator-=(const Quantity& other) {
  // |mantissa_| <= 2^127-1, so the negation cannot overflow.
  QuantityInternals::Add(*this, -other.mantissa_, other.scale_, other.format_);
  return *this;
}

std::strong_ordering operator<=>(const Quantity& a, const Quantity& b) noexcept {
  const int c = QuantityInternals::Compare(a, b);
  return c < 0 ? std::strong_ordering::less
               : (c > 0 ? std::strong_ordering::greater : std::strong_ordering::equal);
}

int64_t SaturatingAdd(int64_t a, int64_t b) noexcept {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) {
    return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  }
  return r;
}

int64_t SaturatingSub(int64_t a, int64_t b) noexcept {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) {
    return b < 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  }
  return r;
}

int64_t SaturatingMul(int64_t a, int64_t b) noexcept {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) {
    return (a < 0) != (b < 0) ? std::numeric_limits<int64_t>::min()
                              : std::numeric_limits<int64_t>::max();
  }
  return r;
}

int64_t SchedulingUnits(std::string_view resource_name, const Quantity& q) noexcept {
  return resource_name == kResourceCPU ? q.MilliValue() : q.Value();
}

namespace {

std::string_view TrimBlanks(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

Error EntryError(std::string_view entry, size_t index, std::string_view why) {
  std::string message = "resource list entry ";
  message += std::to_string(index + 1);
  message += " \"";
  message += entry;
  message += "\": ";
  message += why;
  return MakeError(ErrorCode::kInvalid, std::move(message));
}

}  // namespace

Result<ResourceList> ParseResourceList(std::string_view text) {
  ResourceList list;
  if (TrimBlanks(text).empty()) return list;
  size_t index = 0;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string_view raw = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    const std::string_view entry = TrimBlanks(raw);
    if (entry.empty()) return EntryError(entry, index, "is empty; expected <name>=<quantity>");
    const size_t eq = entry.find('=');
    if (eq == std::string_view::npos) {
      return EntryError(entry, index, "expected <name>=<quantity>");
    }
    const std::string_view name = TrimBlanks(entry.substr(0, eq));
    const std::string_view value = TrimBlanks(entry.substr(eq + 1));
    if (Status valid = ValidateQualifiedName(name); !valid.ok()) {
      return EntryError(entry, index, "bad resource name: " + valid.error().message);
    }
    Result<Quantity> quantity = Quantity::Parse(value);
    if (!quantity.ok()) return EntryError(entry, index, quantity.error().message);
    if (quantity->Sign() < 0) {
      return EntryError(entry, index, "quantity must be greater than or equal to 0");
    }
    if (list.contains(name)) {
      return EntryError(entry, index, "duplicate resource \"" + std::string(name) + "\"");
    }
    list.emplace(std::string(name), std::move(quantity).value());
    if (comma == std::string_view::npos) break;
    start = comma + 1;
    ++index;
  }
  return list;
}

}  // namespace copse
