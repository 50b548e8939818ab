#include "core/duration.h"

#include <cstdint>
#include <limits>

namespace copse {
namespace {

struct Unit {
  std::string_view name;
  uint64_t ns;
};

// Longest names first so "ms" is not read as "m" followed by garbage.
constexpr Unit kUnits[] = {
    {"ns", 1},
    {"us", 1'000},
    {"\xC2\xB5s", 1'000},  // U+00B5 micro sign
    {"\xCE\xBCs", 1'000},  // U+03BC Greek mu
    {"ms", 1'000'000},
    {"s", 1'000'000'000},
    {"m", 60'000'000'000},
    {"h", 3'600'000'000'000},
};

Error Bad(std::string_view text, std::string_view what) {
  return MakeError(ErrorCode::kInvalid,
                   std::string(what) + " in duration \"" + std::string(text) + "\"");
}

}  // namespace

Result<std::chrono::nanoseconds> ParseGoDuration(std::string_view text) {
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return std::chrono::nanoseconds(0);
  if (s.empty()) return Bad(text, "invalid syntax");
  // Accumulate in unsigned with an explicit bound (Go's limit: 1<<63 for "-", else 1<<63 - 1).
  const uint64_t limit =
      static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + (negative ? 1 : 0);
  uint64_t total = 0;
  while (!s.empty()) {
    // Number: digits [. digits]
    uint64_t whole = 0;
    bool whole_overflow = false;
    size_t i = 0;
    const size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      const uint64_t digit = static_cast<uint64_t>(s[i] - '0');
      if (whole > (std::numeric_limits<uint64_t>::max() - digit) / 10) whole_overflow = true;
      whole = whole * 10 + digit;
      ++i;
    }
    const bool had_whole = i > start;
    uint64_t frac = 0;
    uint64_t frac_scale = 1;
    bool had_frac = false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      const size_t frac_start = i;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
        // Digits beyond 18 cannot change the nanoseconds result meaningfully.
        if (frac_scale < 1'000'000'000'000'000'000ULL) {
          frac = frac * 10 + static_cast<uint64_t>(s[i] - '0');
          frac_scale *= 10;
        }
        ++i;
      }
      had_frac = i > frac_start;
    }
    if (!had_whole && !had_frac) return Bad(text, "invalid syntax");
    if (whole_overflow) return Bad(text, "overflow");
    s.remove_prefix(i);
    // Unit.
    const Unit* unit = nullptr;
    size_t unit_len = 0;
    for (const Unit& u : kUnits) {
      if (s.substr(0, u.name.size()) == u.name && u.name.size() > unit_len) {
        unit = &u;
        unit_len = u.name.size();
      }
    }
    if (unit == nullptr) {
      if (s.empty()) return Bad(text, "missing unit");
      return Bad(text, "unknown unit");
    }
    s.remove_prefix(unit_len);
    if (whole > limit / unit->ns) return Bad(text, "overflow");
    uint64_t v = whole * unit->ns;
    if (frac != 0) {
      // frac / frac_scale * unit, rounded down like Go.
      const long double f =
          static_cast<long double>(frac) * static_cast<long double>(unit->ns) / frac_scale;
      v += static_cast<uint64_t>(f);
      if (v > limit) return Bad(text, "overflow");
    }
    if (v > limit - total) return Bad(text, "overflow");
    total += v;
  }
  if (negative) {
    if (total == static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1) {
      return std::chrono::nanoseconds(std::numeric_limits<int64_t>::min());
    }
    return std::chrono::nanoseconds(-static_cast<int64_t>(total));
  }
  return std::chrono::nanoseconds(static_cast<int64_t>(total));
}

namespace {

// Appends v / 10^prec with trailing zeros of the fraction trimmed.
void AppendFraction(std::string& out, uint64_t v, int prec) {
  std::string digits;
  bool print = false;
  for (int i = 0; i < prec; ++i) {
    const uint64_t digit = v % 10;
    print = print || digit != 0;
    if (print) digits.insert(digits.begin(), static_cast<char>('0' + digit));
    v /= 10;
  }
  out += std::to_string(v);
  if (!digits.empty()) {
    out += '.';
    out += digits;
  }
}

}  // namespace

std::string FormatGoDuration(std::chrono::nanoseconds d) {
  const int64_t n = d.count();
  if (n == 0) return "0s";
  const bool negative = n < 0;
  uint64_t u = negative ? static_cast<uint64_t>(-(n + 1)) + 1 : static_cast<uint64_t>(n);
  std::string out;
  if (u < 1'000'000'000) {
    // Sub-second: one unit with a fraction.
    if (u < 1'000) {
      out = std::to_string(u) + "ns";
    } else if (u < 1'000'000) {
      AppendFraction(out, u, 3);
      out += "\xC2\xB5s";
    } else {
      AppendFraction(out, u, 6);
      out += "ms";
    }
  } else {
    const uint64_t hours = u / 3'600'000'000'000ULL;
    u -= hours * 3'600'000'000'000ULL;
    const uint64_t minutes = u / 60'000'000'000ULL;
    u -= minutes * 60'000'000'000ULL;
    if (hours > 0) out += std::to_string(hours) + "h";
    if (hours > 0 || minutes > 0) out += std::to_string(minutes) + "m";
    AppendFraction(out, u, 9);
    out += "s";
  }
  return negative ? "-" + out : out;
}

}  // namespace copse
