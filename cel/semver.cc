// Semantic versions with github.com/blang/semver/v4's parsing rules, error
// messages and precedence, and the Kubernetes semver library's
// normalization (semver(text, true)).

#include <charconv>
#include <string>

#include "cel/cel.h"

namespace copse::cel {
namespace {

bool OnlyDigits(std::string_view s) {
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

bool OnlyAlphanumericOrHyphen(std::string_view s) {
  for (char c : s) {
    bool ok =
        (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
    if (!ok) return false;
  }
  return true;
}

bool HasLeadingZeroes(std::string_view s) { return s.size() > 1 && s[0] == '0'; }

// Go's %q for the ASCII text these messages quote.
std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

Error SemverError(std::string message) {
  return MakeError(ErrorCode::kInvalid, std::move(message));
}

// Go's strconv.ParseUint(s, 10, 64), with its error text.
Result<uint64_t> ParseNumber(std::string_view s) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || p != s.data() + s.size()) {
    return SemverError("strconv.ParseUint: parsing " + Quote(s) + ": invalid syntax");
  }
  if (ec == std::errc::result_out_of_range) {
    return SemverError("strconv.ParseUint: parsing " + Quote(s) + ": value out of range");
  }
  return v;
}

Result<uint64_t> ParsePart(std::string_view s, std::string_view what, std::string_view What) {
  if (!OnlyDigits(s)) {
    return SemverError("Invalid character(s) found in " + std::string(what) + " number " +
                       Quote(s));
  }
  if (HasLeadingZeroes(s)) {
    return SemverError(std::string(What) + " number must not contain leading zeroes " + Quote(s));
  }
  return ParseNumber(s);
}

std::vector<std::string_view> SplitOn(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (;;) {
    size_t at = s.find(sep, start);
    if (at == std::string_view::npos) {
      parts.push_back(s.substr(start));
      return parts;
    }
    parts.push_back(s.substr(start, at - start));
    start = at + 1;
  }
}

}  // namespace

Result<Semver> Semver::Parse(std::string_view text) {
  if (text.empty()) return SemverError("Version string empty");
  size_t first = text.find('.');
  size_t second = first == std::string_view::npos ? first : text.find('.', first + 1);
  if (second == std::string_view::npos) {
    return SemverError("No Major.Minor.Patch elements found");
  }
  Semver v;
  Result<uint64_t> major = ParsePart(text.substr(0, first), "major", "Major");
  if (!major.ok()) return major.error();
  Result<uint64_t> minor = ParsePart(text.substr(first + 1, second - first - 1), "minor", "Minor");
  if (!minor.ok()) return minor.error();
  v.major_ = *major;
  v.minor_ = *minor;
  std::string_view patch = text.substr(second + 1);
  std::string_view build, pre;
  bool has_build = false, has_pre = false;
  if (size_t plus = patch.find('+'); plus != std::string_view::npos) {
    build = patch.substr(plus + 1);
    has_build = true;
    patch = patch.substr(0, plus);
  }
  if (size_t dash = patch.find('-'); dash != std::string_view::npos) {
    pre = patch.substr(dash + 1);
    has_pre = true;
    patch = patch.substr(0, dash);
  }
  Result<uint64_t> p = ParsePart(patch, "patch", "Patch");
  if (!p.ok()) return p.error();
  v.patch_ = *p;
  if (has_pre) {
    for (std::string_view part : SplitOn(pre, '.')) {
      if (part.empty()) return SemverError("Prerelease is empty");
      PreRelease id;
      if (OnlyDigits(part)) {
        if (HasLeadingZeroes(part)) {
          return SemverError("Numeric PreRelease version must not contain leading zeroes " +
                             Quote(part));
        }
        Result<uint64_t> n = ParseNumber(part);
        if (!n.ok()) return n.error();
        id.numeric = true;
        id.number = *n;
      } else if (OnlyAlphanumericOrHyphen(part)) {
        id.text = std::string(part);
      } else {
        return SemverError("Invalid character(s) found in prerelease " + Quote(part));
      }
      v.pre_.push_back(std::move(id));
    }
  }
  if (has_build) {
    for (std::string_view part : SplitOn(build, '.')) {
      if (part.empty()) return SemverError("Build meta data is empty");
      if (!OnlyAlphanumericOrHyphen(part)) {
        return SemverError("Invalid character(s) found in build meta data " + Quote(part));
      }
      v.build_.emplace_back(part);
    }
  }
  return v;
}

Result<Semver> Semver::ParseNormalized(std::string_view text) {
  if (!text.empty() && text[0] == 'v') text.remove_prefix(1);
  std::vector<std::string> parts;
  size_t start = 0;
  for (int i = 0; i < 2; ++i) {
    size_t at = text.find('.', start);
    if (at == std::string_view::npos) break;
    parts.emplace_back(text.substr(start, at - start));
    start = at + 1;
  }
  parts.emplace_back(text.substr(start));
  for (std::string& p : parts) {
    if (p.size() > 1) {
      size_t zeros = p.find_first_not_of('0');
      p = zeros == std::string::npos ? "" : p.substr(zeros);
      if (p.empty() || !(p[0] >= '0' && p[0] <= '9')) p = "0" + p;
    }
  }
  if (parts.size() < 3) {
    if (parts.back().find_first_of("+-") != std::string::npos) {
      return SemverError("short version cannot contain PreRelease/Build meta data");
    }
    while (parts.size() < 3) parts.emplace_back("0");
  }
  return Parse(parts[0] + "." + parts[1] + "." + parts[2]);
}

std::string Semver::ToString() const {
  std::string out =
      std::to_string(major_) + "." + std::to_string(minor_) + "." + std::to_string(patch_);
  for (size_t i = 0; i < pre_.size(); ++i) {
    out += i == 0 ? "-" : ".";
    out += pre_[i].numeric ? std::to_string(pre_[i].number) : pre_[i].text;
  }
  for (size_t i = 0; i < build_.size(); ++i) {
    out += i == 0 ? "+" : ".";
    out += build_[i];
  }
  return out;
}

int Semver::Compare(const Semver& o) const noexcept {
  auto cmp = [](auto a, auto b) { return a < b ? -1 : (a > b ? 1 : 0); };
  if (int c = cmp(major_, o.major_)) return c;
  if (int c = cmp(minor_, o.minor_)) return c;
  if (int c = cmp(patch_, o.patch_)) return c;
  // A version without pre-release identifiers has the higher precedence.
  if (pre_.empty() || o.pre_.empty())
    return cmp(o.pre_.size(), pre_.size()) == 0 ? 0 : (pre_.empty() ? 1 : -1);
  size_t n = std::min(pre_.size(), o.pre_.size());
  for (size_t i = 0; i < n; ++i) {
    const PreRelease& a = pre_[i];
    const PreRelease& b = o.pre_[i];
    int c;
    if (a.numeric && b.numeric) {
      c = cmp(a.number, b.number);
    } else if (a.numeric != b.numeric) {
      c = a.numeric ? -1 : 1;  // numeric identifiers sort first
    } else {
      int s = a.text.compare(b.text);
      c = s < 0 ? -1 : (s > 0 ? 1 : 0);
    }
    if (c != 0) return c;
  }
  return cmp(pre_.size(), o.pre_.size());
}

std::pair<std::string_view, std::string_view> SplitQualifiedName(std::string_view qualified_name,
                                                                 std::string_view driver) noexcept {
  size_t slash = qualified_name.find('/');
  if (slash == std::string_view::npos) return {driver, qualified_name};
  return {qualified_name.substr(0, slash), qualified_name.substr(slash + 1)};
}

}  // namespace copse::cel
