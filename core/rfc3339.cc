#include "core/rfc3339.h"

#include <ctime>

namespace copse {

std::optional<std::chrono::system_clock::time_point> ParseRfc3339(std::string_view text) {
  size_t pos = 0;
  // Exactly `width` digits at pos.
  const auto digits = [&](size_t width, int& out) {
    if (pos + width > text.size()) return false;
    out = 0;
    for (size_t i = 0; i < width; ++i) {
      const char c = text[pos + i];
      if (c < '0' || c > '9') return false;
      out = out * 10 + (c - '0');
    }
    pos += width;
    return true;
  };
  const auto expect = [&](std::string_view chars) {
    if (pos >= text.size() || chars.find(text[pos]) == std::string_view::npos) return false;
    ++pos;
    return true;
  };
  int year, month, day, hour, minute, second;
  if (!digits(4, year) || !expect("-") || !digits(2, month) || !expect("-") || !digits(2, day) ||
      !expect("Tt ") || !digits(2, hour) || !expect(":") || !digits(2, minute) || !expect(":") ||
      !digits(2, second)) {
    return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    return std::nullopt;
  }
  int64_t nanos = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    int count = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      if (count < 9) nanos = nanos * 10 + (text[pos] - '0');
      ++count;
      ++pos;
    }
    if (count == 0) return std::nullopt;
    for (; count < 9; ++count) nanos *= 10;
  }
  int offset_minutes = 0;
  if (expect("Zz")) {
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    const int sign = text[pos] == '-' ? -1 : 1;
    ++pos;
    int oh, om;
    if (!digits(2, oh) || !expect(":") || !digits(2, om) || oh > 23 || om > 59) return std::nullopt;
    offset_minutes = sign * (oh * 60 + om);
  } else {
    return std::nullopt;
  }
  if (pos != text.size()) return std::nullopt;
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  const std::time_t t = timegm(&tm);
  return std::chrono::system_clock::from_time_t(t) - std::chrono::minutes(offset_minutes) +
         std::chrono::duration_cast<std::chrono::system_clock::duration>(
             std::chrono::nanoseconds(nanos));
}

}  // namespace copse
