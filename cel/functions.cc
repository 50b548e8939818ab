#include "cel/functions.h"

#include <re2/re2.h>

#include <charconv>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <string>
#include <utility>

#include "cel/ast.h"

namespace copse::cel::internal {
namespace {

// --- UTF-8 helpers (strings are valid UTF-8; stray bytes count as one) ----

size_t RuneLength(std::string_view s, size_t i) {
  auto c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
  if (i + n > s.size()) return 1;
  for (size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 1;
  }
  return n;
}

uint32_t DecodeRune(std::string_view s, size_t i, size_t n) {
  auto c = static_cast<unsigned char>(s[i]);
  if (n == 1) return c;
  uint32_t cp = c & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  return cp;
}

// Byte offsets of each code point, plus the end.
std::vector<size_t> RuneOffsets(std::string_view s) {
  std::vector<size_t> offsets;
  for (size_t i = 0; i < s.size(); i += RuneLength(s, i)) offsets.push_back(i);
  offsets.push_back(s.size());
  return offsets;
}

bool IsUnicodeSpace(uint32_t r) {
  switch (r) {
    case '\t':
    case '\n':
    case '\v':
    case '\f':
    case '\r':
    case ' ':
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return r >= 0x2000 && r <= 0x200A;
  }
}

bool ValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    uint32_t cp = DecodeRune(s, i, n);
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += n;
  }
  return true;
}

Value Err(std::string_view static_message) { return Value::StaticError(static_message); }

// --- Operators ------------------------------------------------------------

Value Equals(EvalContext& ctx, const Node&, const Value* a) {
  return Value::Bool(ValuesEqual(ctx, a[0], a[1]));
}
Value NotEquals(EvalContext& ctx, const Node&, const Value* a) {
  return Value::Bool(!ValuesEqual(ctx, a[0], a[1]));
}

template <int kOp>  // 0 <, 1 <=, 2 >, 3 >=
Value Compare(EvalContext&, const Node&, const Value* a) {
  int c = CompareValues(a[0], a[1]);
  if (c == -2) return NoSuchOverload();
  if (c == 2) return Value::Bool(false);
  switch (kOp) {
    case 0:
      return Value::Bool(c < 0);
    case 1:
      return Value::Bool(c <= 0);
    case 2:
      return Value::Bool(c > 0);
    default:
      return Value::Bool(c >= 0);
  }
}

const char kIntOverflow[] = "integer overflow";
const char kUintOverflow[] = "unsigned integer overflow";

Value AddInt(EvalContext&, const Node&, const Value* a) {
  int64_t r;
  if (__builtin_add_overflow(a[0].i, a[1].i, &r)) return Err(kIntOverflow);
  return Value::Int(r);
}
Value SubInt(EvalContext&, const Node&, const Value* a) {
  int64_t r;
  if (__builtin_sub_overflow(a[0].i, a[1].i, &r)) return Err(kIntOverflow);
  return Value::Int(r);
}
Value MulInt(EvalContext&, const Node&, const Value* a) {
  int64_t r;
  if (__builtin_mul_overflow(a[0].i, a[1].i, &r)) return Err(kIntOverflow);
  return Value::Int(r);
}
Value DivInt(EvalContext&, const Node&, const Value* a) {
  if (a[1].i == 0) return Err("division by zero");
  if (a[0].i == INT64_MIN && a[1].i == -1) return Err(kIntOverflow);
  return Value::Int(a[0].i / a[1].i);
}
Value ModInt(EvalContext&, const Node&, const Value* a) {
  if (a[1].i == 0) return Err("modulus by zero");
  if (a[0].i == INT64_MIN && a[1].i == -1) return Err(kIntOverflow);
  return Value::Int(a[0].i % a[1].i);
}
Value NegInt(EvalContext&, const Node&, const Value* a) {
  if (a[0].i == INT64_MIN) return Err(kIntOverflow);
  return Value::Int(-a[0].i);
}
Value AddUint(EvalContext&, const Node&, const Value* a) {
  uint64_t r;
  if (__builtin_add_overflow(a[0].u, a[1].u, &r)) return Err(kUintOverflow);
  return Value::Uint(r);
}
Value SubUint(EvalContext&, const Node&, const Value* a) {
  uint64_t r;
  if (__builtin_sub_overflow(a[0].u, a[1].u, &r)) return Err(kUintOverflow);
  return Value::Uint(r);
}
Value MulUint(EvalContext&, const Node&, const Value* a) {
  uint64_t r;
  if (__builtin_mul_overflow(a[0].u, a[1].u, &r)) return Err(kUintOverflow);
  return Value::Uint(r);
}
Value DivUint(EvalContext&, const Node&, const Value* a) {
  if (a[1].u == 0) return Err("division by zero");
  return Value::Uint(a[0].u / a[1].u);
}
Value ModUint(EvalContext&, const Node&, const Value* a) {
  if (a[1].u == 0) return Err("modulus by zero");
  return Value::Uint(a[0].u % a[1].u);
}
Value AddDouble(EvalContext&, const Node&, const Value* a) {
  return Value::Double(a[0].d + a[1].d);
}
Value SubDouble(EvalContext&, const Node&, const Value* a) {
  return Value::Double(a[0].d - a[1].d);
}
Value MulDouble(EvalContext&, const Node&, const Value* a) {
  return Value::Double(a[0].d * a[1].d);
}
Value DivDouble(EvalContext&, const Node&, const Value* a) {
  return Value::Double(a[0].d / a[1].d);
}
Value NegDouble(EvalContext&, const Node&, const Value* a) { return Value::Double(-a[0].d); }
Value Not(EvalContext&, const Node&, const Value* a) { return Value::Bool(!a[0].b); }

Value AddString(EvalContext& ctx, const Node&, const Value* a) {
  std::string s(a[0].sv());
  s += a[1].sv();
  return a[0].kind == ValueKind::kBytes ? ctx.NewBytes(s) : ctx.NewString(s);
}
Value AddList(EvalContext& ctx, const Node&, const Value* a) {
  if (a[0].list->size == 0) return a[1];
  if (a[1].list->size == 0) return a[0];
  std::vector<Value> items(a[0].list->items, a[0].list->items + a[0].list->size);
  items.insert(items.end(), a[1].list->items, a[1].list->items + a[1].list->size);
  return ctx.NewList(items);
}

Value Index(EvalContext& ctx, const Node&, const Value* a) {
  if (a[0].kind == ValueKind::kList) {
    int64_t i;
    if (a[1].kind == ValueKind::kInt) {
      i = a[1].i;
    } else if (a[1].kind == ValueKind::kUint && a[1].u <= INT64_MAX) {
      i = static_cast<int64_t>(a[1].u);
    } else {
      return NoSuchOverload();
    }
    if (i < 0 || static_cast<uint64_t>(i) >= a[0].list->size) {
      return ctx.Error("index out of bounds: " + std::to_string(i));
    }
    return a[0].list->items[i];
  }
  Value out;
  if (MapFind(ctx, a[0], a[1], &out)) return out;
  return NoSuchKey(ctx, a[1]);
}

Value OptIndex(EvalContext& ctx, const Node& n, const Value* a) {
  if (a[0].kind == ValueKind::kList) {
    if (a[1].kind != ValueKind::kInt) return NoSuchOverload();
    if (a[1].i < 0 || static_cast<uint64_t>(a[1].i) >= a[0].list->size) {
      return Value::Optional(nullptr);
    }
    return ctx.NewOptional(a[0].list->items[a[1].i]);
  }
  if (a[0].kind == ValueKind::kOptional) {
    if (a[0].optional == nullptr) return a[0];
    Value args[2] = {*a[0].optional, a[1]};
    return OptIndex(ctx, n, args);
  }
  Value out;
  if (MapFind(ctx, a[0], a[1], &out)) return ctx.NewOptional(out);
  return Value::Optional(nullptr);
}

// `optional(list)[i]` and `optional(map)[k]`: none stays none, a missing
// key or index is none.
Value IndexOptional(EvalContext& ctx, const Node& n, const Value* a) {
  if (a[0].optional == nullptr) return a[0];
  Value args[2] = {*a[0].optional, a[1]};
  return OptIndex(ctx, n, args);
}

Value In(EvalContext& ctx, const Node&, const Value* a) {
  if (a[1].kind == ValueKind::kList) {
    for (size_t i = 0; i < a[1].list->size; ++i) {
      if (ValuesEqual(ctx, a[0], a[1].list->items[i])) return Value::Bool(true);
    }
    return Value::Bool(false);
  }
  return Value::Bool(MapHas(ctx, a[1], a[0]));
}

Value Size(EvalContext& ctx, const Node&, const Value* a) {
  switch (a[0].kind) {
    case ValueKind::kString:
      return Value::Int(static_cast<int64_t>(CodePoints(a[0].sv())));
    case ValueKind::kBytes:
      return Value::Int(static_cast<int64_t>(a[0].str.size));
    case ValueKind::kList:
      return Value::Int(static_cast<int64_t>(a[0].list->size));
    default:
      return Value::Int(static_cast<int64_t>(MapSize(ctx, a[0])));
  }
}

// --- Conversions ------------------------------------------------------------

Value TypeOf(EvalContext&, const Node&, const Value* a) { return Value::Type(TypeName(a[0])); }
Value Identity(EvalContext&, const Node&, const Value* a) { return a[0]; }

Value ConversionError(EvalContext& ctx, const Value& v, std::string_view to) {
  return ctx.Error("type conversion error from '" + std::string(TypeName(v)) + "' to '" +
                   std::string(to) + "'");
}

bool ParseGoInt(std::string_view s, int64_t* out) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (s.empty() || s[0] == '+') return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

bool ParseGoUint(std::string_view s, uint64_t* out) {
  if (s.empty() || s[0] == '-' || s[0] == '+') return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

// Go's strconv.ParseFloat for the forms people write: decimal, exponent,
// inf/infinity/nan in any case, an optional sign.
bool ParseGoDouble(std::string_view s, double* out) {
  bool neg = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return false;
  std::string lower;
  for (char c : s) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "inf" || lower == "infinity") {
    *out = neg ? -INFINITY : INFINITY;
    return true;
  }
  if (lower == "nan") {
    *out = NAN;
    return true;
  }
  if (!(std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '.')) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  if (p != s.data() + s.size()) return false;
  if (ec == std::errc::result_out_of_range) return false;
  if (ec != std::errc()) return false;
  if (neg) *out = -*out;
  return true;
}

Value ToInt(EvalContext& ctx, const Node&, const Value* a) {
  const Value& v = a[0];
  switch (v.kind) {
    case ValueKind::kInt:
      return v;
    case ValueKind::kUint:
      if (v.u > INT64_MAX) return Err(kIntOverflow);
      return Value::Int(static_cast<int64_t>(v.u));
    case ValueKind::kDouble:
      if (std::isnan(v.d) || v.d <= -9223372036854775808.0 || v.d >= 9223372036854775807.0) {
        return Err(kIntOverflow);
      }
      return Value::Int(static_cast<int64_t>(v.d));
    default: {
      int64_t r;
      if (ParseGoInt(v.sv(), &r)) return Value::Int(r);
      return ConversionError(ctx, v, "int");
    }
  }
}

Value ToUint(EvalContext& ctx, const Node&, const Value* a) {
  const Value& v = a[0];
  switch (v.kind) {
    case ValueKind::kUint:
      return v;
    case ValueKind::kInt:
      if (v.i < 0) return Err(kUintOverflow);
      return Value::Uint(static_cast<uint64_t>(v.i));
    case ValueKind::kDouble:
      if (std::isnan(v.d) || v.d < 0 || v.d >= 18446744073709551616.0) return Err(kUintOverflow);
      return Value::Uint(static_cast<uint64_t>(v.d));
    default: {
      uint64_t r;
      if (ParseGoUint(v.sv(), &r)) return Value::Uint(r);
      return ConversionError(ctx, v, "uint");
    }
  }
}

Value ToDouble(EvalContext& ctx, const Node&, const Value* a) {
  const Value& v = a[0];
  switch (v.kind) {
    case ValueKind::kDouble:
      return v;
    case ValueKind::kInt:
      return Value::Double(static_cast<double>(v.i));
    case ValueKind::kUint:
      return Value::Double(static_cast<double>(v.u));
    default: {
      double r;
      if (ParseGoDouble(v.sv(), &r)) return Value::Double(r);
      return ConversionError(ctx, v, "double");
    }
  }
}

Value ToString(EvalContext& ctx, const Node&, const Value* a) {
  const Value& v = a[0];
  switch (v.kind) {
    case ValueKind::kString:
      return v;
    case ValueKind::kBool:
      return Value::String(v.b ? "true" : "false");
    case ValueKind::kInt:
      return ctx.NewString(std::to_string(v.i));
    case ValueKind::kUint:
      return ctx.NewString(std::to_string(v.u));
    case ValueKind::kDouble:
      return ctx.NewString(FormatDouble(v.d));
    default:  // bytes
      if (!ValidUtf8(v.sv())) return Err("invalid UTF-8 in bytes, cannot convert to string");
      return Value::String(v.sv());
  }
}

Value ToBool(EvalContext& ctx, const Node&, const Value* a) {
  const Value& v = a[0];
  if (v.kind == ValueKind::kBool) return v;
  std::string_view s = v.sv();
  if (s == "1" || s == "t" || s == "T" || s == "TRUE" || s == "true" || s == "True") {
    return Value::Bool(true);
  }
  if (s == "0" || s == "f" || s == "F" || s == "FALSE" || s == "false" || s == "False") {
    return Value::Bool(false);
  }
  return ConversionError(ctx, v, "bool");
}

Value ToBytes(EvalContext&, const Node&, const Value* a) { return Value::Bytes(a[0].sv()); }

// --- Strings ----------------------------------------------------------------

Value Contains(EvalContext&, const Node&, const Value* a) {
  return Value::Bool(a[0].sv().find(a[1].sv()) != std::string_view::npos);
}
Value StartsWith(EvalContext&, const Node&, const Value* a) {
  return Value::Bool(a[0].sv().substr(0, a[1].str.size) == a[1].sv());
}
Value EndsWith(EvalContext&, const Node&, const Value* a) {
  std::string_view s = a[0].sv(), suffix = a[1].sv();
  return Value::Bool(s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix);
}

// The compiled pattern: the call's constant one, or compiled now (errors as
// Go's regexp package words them).
std::shared_ptr<const re2::RE2> Regex(EvalContext& ctx, const Node& call, const Value& pattern,
                                      Value* error) {
  if (call.regex != nullptr) return call.regex;
  auto re = CompileRegex(pattern.sv());
  if (!re->ok()) {
    *error = ctx.Error("error parsing regexp: " + re->error());
    return nullptr;
  }
  return re;
}

Value Matches(EvalContext& ctx, const Node& call, const Value* a) {
  Value error;
  auto re = Regex(ctx, call, a[1], &error);
  if (re == nullptr) return error;
  return Value::Bool(re2::RE2::PartialMatch(re2::StringPiece(a[0].str.data, a[0].str.size), *re));
}

Value Find(EvalContext& ctx, const Node& call, const Value* a) {
  Value error;
  auto re = Regex(ctx, call, a[1], &error);
  if (re == nullptr) return error;
  re2::StringPiece text(a[0].str.data, a[0].str.size), match;
  if (!re->Match(text, 0, text.size(), re2::RE2::UNANCHORED, &match, 1)) return Value::String("");
  return Value::String(std::string_view(match.data(), match.size()));
}

// Go's Regexp.FindAllString: non-overlapping matches, no empty match right
// after a previous match; n < 0 means all.
Value FindAll(EvalContext& ctx, const Node& call, const Value* a) {
  Value error;
  auto re = Regex(ctx, call, a[1], &error);
  if (re == nullptr) return error;
  int64_t limit = a[2].kind == ValueKind::kInt ? a[2].i : -1;
  std::string_view s = a[0].sv();
  re2::StringPiece text(s.data(), s.size()), match;
  std::vector<Value> out;
  size_t pos = 0;
  int64_t prev_end = -1;
  while ((limit < 0 || static_cast<int64_t>(out.size()) < limit) && pos <= s.size()) {
    if (!re->Match(text, pos, s.size(), re2::RE2::UNANCHORED, &match, 1)) break;
    auto begin = static_cast<size_t>(match.data() - s.data());
    size_t end = begin + match.size();
    bool accept = true;
    if (end == pos) {
      if (static_cast<int64_t>(begin) == prev_end) accept = false;
      pos += pos < s.size() ? RuneLength(s, pos) : 1;
    } else {
      pos = end;
    }
    prev_end = static_cast<int64_t>(end);
    if (accept) out.push_back(Value::String(s.substr(begin, end - begin)));
  }
  return ctx.NewList(out);
}
Value FindAllUnlimited(EvalContext& ctx, const Node& call, const Value* a) {
  Value args[3] = {a[0], a[1], Value::Null()};
  return FindAll(ctx, call, args);
}

Value CharAt(EvalContext& ctx, const Node&, const Value* a) {
  std::string_view s = a[0].sv();
  std::vector<size_t> off = RuneOffsets(s);
  int64_t i = a[1].i;
  int64_t len = static_cast<int64_t>(off.size()) - 1;
  if (i < 0 || i > len) return ctx.Error("index out of range: " + std::to_string(i));
  if (i == len) return Value::String("");
  return Value::String(s.substr(off[i], off[i + 1] - off[i]));
}

// ext.Strings indexOf and lastIndexOf, in code points.
Value IndexOfImpl(EvalContext& ctx, std::string_view s, std::string_view sub, int64_t offset,
                  bool last) {
  if (offset < 0) return ctx.Error("index out of range: " + std::to_string(offset));
  std::vector<size_t> off = RuneOffsets(s);
  auto len = static_cast<int64_t>(off.size()) - 1;
  if (sub.empty()) return Value::Int(offset > len ? len : offset);
  if (offset >= len) return Value::Int(-1);
  auto sublen = static_cast<int64_t>(CodePoints(sub));
  auto matches_at = [&](int64_t i) {
    return i + sublen <= len && s.substr(off[i], off[i + sublen] - off[i]) == sub;
  };
  if (!last) {
    for (int64_t i = offset; i + sublen <= len; ++i) {
      if (matches_at(i)) return Value::Int(i);
    }
    return Value::Int(-1);
  }
  int64_t start = std::min(offset, len - sublen);
  for (int64_t i = start; i >= 0; --i) {
    if (matches_at(i)) return Value::Int(i);
  }
  return Value::Int(-1);
}

Value IndexOf(EvalContext& ctx, const Node&, const Value* a) {
  return IndexOfImpl(ctx, a[0].sv(), a[1].sv(), 0, false);
}
Value IndexOfOffset(EvalContext& ctx, const Node&, const Value* a) {
  return IndexOfImpl(ctx, a[0].sv(), a[1].sv(), a[2].i, false);
}
Value LastIndexOf(EvalContext& ctx, const Node&, const Value* a) {
  std::string_view s = a[0].sv(), sub = a[1].sv();
  auto len = static_cast<int64_t>(CodePoints(s));
  if (sub.empty()) return Value::Int(len);
  if (s.size() < sub.size()) return Value::Int(-1);
  return IndexOfImpl(ctx, s, sub, len - 1, true);
}
Value LastIndexOfOffset(EvalContext& ctx, const Node&, const Value* a) {
  return IndexOfImpl(ctx, a[0].sv(), a[1].sv(), a[2].i, true);
}

template <bool kUpper>
Value ChangeAsciiCase(EvalContext& ctx, const Node&, const Value* a) {
  std::string s(a[0].sv());
  for (char& c : s) {
    if (kUpper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (!kUpper && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return ctx.NewString(s);
}

// Go's strings.Replace: n < 0 replaces all; an empty `old` matches before
// every code point and at the end.
Value ReplaceImpl(EvalContext& ctx, std::string_view s, std::string_view old, std::string_view with,
                  int64_t n) {
  std::string out;
  int64_t done = 0;
  size_t i = 0;
  if (old.empty()) {
    while (n < 0 || done < n) {
      out += with;
      ++done;
      if (i >= s.size()) break;
      size_t len = RuneLength(s, i);
      out += s.substr(i, len);
      i += len;
    }
    out += s.substr(std::min(i, s.size()));
    return ctx.NewString(out);
  }
  while (n < 0 || done < n) {
    size_t at = s.find(old, i);
    if (at == std::string_view::npos) break;
    out += s.substr(i, at - i);
    out += with;
    i = at + old.size();
    ++done;
  }
  out += s.substr(i);
  return ctx.NewString(out);
}
Value Replace(EvalContext& ctx, const Node&, const Value* a) {
  return ReplaceImpl(ctx, a[0].sv(), a[1].sv(), a[2].sv(), -1);
}
Value ReplaceN(EvalContext& ctx, const Node&, const Value* a) {
  return ReplaceImpl(ctx, a[0].sv(), a[1].sv(), a[2].sv(), a[3].i);
}

// Go's strings.SplitN: n == 0 gives no parts, n < 0 all; an empty separator
// splits into code points.
Value SplitImpl(EvalContext& ctx, std::string_view s, std::string_view sep, int64_t n) {
  std::vector<Value> parts;
  if (n == 0) return ctx.NewList(parts);
  if (sep.empty()) {
    for (size_t i = 0; i < s.size();) {
      if (n > 0 && static_cast<int64_t>(parts.size()) == n - 1) {
        parts.push_back(Value::String(s.substr(i)));
        return ctx.NewList(parts);
      }
      size_t len = RuneLength(s, i);
      parts.push_back(Value::String(s.substr(i, len)));
      i += len;
    }
    return ctx.NewList(parts);
  }
  size_t i = 0;
  while (n < 0 || static_cast<int64_t>(parts.size()) < n - 1) {
    size_t at = s.find(sep, i);
    if (at == std::string_view::npos) break;
    parts.push_back(Value::String(s.substr(i, at - i)));
    i = at + sep.size();
  }
  parts.push_back(Value::String(s.substr(i)));
  return ctx.NewList(parts);
}
Value Split(EvalContext& ctx, const Node&, const Value* a) {
  return SplitImpl(ctx, a[0].sv(), a[1].sv(), -1);
}
Value SplitN(EvalContext& ctx, const Node&, const Value* a) {
  return SplitImpl(ctx, a[0].sv(), a[1].sv(), a[2].i);
}

Value Substring(EvalContext& ctx, const Node&, const Value* a) {
  std::string_view s = a[0].sv();
  std::vector<size_t> off = RuneOffsets(s);
  auto len = static_cast<int64_t>(off.size()) - 1;
  int64_t start = a[1].i;
  int64_t end = a[2].kind == ValueKind::kInt ? a[2].i : len;
  if (a[2].kind == ValueKind::kInt && start > end) {
    return ctx.Error("invalid substring range. start: " + std::to_string(start) +
                     ", end: " + std::to_string(end));
  }
  if (start < 0 || start > len) return ctx.Error("index out of range: " + std::to_string(start));
  if (end < 0 || end > len) return ctx.Error("index out of range: " + std::to_string(end));
  return Value::String(s.substr(off[start], off[end] - off[start]));
}
Value SubstringFrom(EvalContext& ctx, const Node& n, const Value* a) {
  Value args[3] = {a[0], a[1], Value::Null()};
  return Substring(ctx, n, args);
}

Value Trim(EvalContext&, const Node&, const Value* a) {
  std::string_view s = a[0].sv();
  size_t begin = 0;
  while (begin < s.size()) {
    size_t len = RuneLength(s, begin);
    if (!IsUnicodeSpace(DecodeRune(s, begin, len))) break;
    begin += len;
  }
  size_t end = s.size();
  while (end > begin) {
    size_t start = end - 1;
    while (start > begin && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
    size_t len = RuneLength(s, start);
    if (start + len != end || !IsUnicodeSpace(DecodeRune(s, start, len))) break;
    end = start;
  }
  return Value::String(s.substr(begin, end - begin));
}

Value JoinImpl(EvalContext& ctx, const Value& list, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < list.list->size; ++i) {
    const Value& v = list.list->items[i];
    if (v.kind != ValueKind::kString) return NoSuchOverload();
    if (i > 0) out += sep;
    out += v.sv();
  }
  return ctx.NewString(out);
}
Value Join(EvalContext& ctx, const Node&, const Value* a) { return JoinImpl(ctx, a[0], ""); }
Value JoinSep(EvalContext& ctx, const Node&, const Value* a) {
  return JoinImpl(ctx, a[0], a[1].sv());
}

Value Quote(EvalContext& ctx, const Node&, const Value* a) {
  std::string_view s = a[0].sv();
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    size_t len = RuneLength(s, i);
    char c = s[i];
    if (len == 1 && static_cast<unsigned char>(c) >= 0x80) {
      out += "\xEF\xBF\xBD";  // U+FFFD for a stray byte
    } else if (len > 1) {
      out += s.substr(i, len);
    } else {
      switch (c) {
        case '\a':
          out += "\\a";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\v':
          out += "\\v";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '"':
          out += "\\\"";
          break;
        default:
          out += c;
      }
    }
    i += len;
  }
  return ctx.NewString(out + "\"");
}

// --- Kubernetes lists and cel-go sets libraries -------------------------------

Value IsSorted(EvalContext&, const Node&, const Value* a) {
  const ListData& l = *a[0].list;
  for (size_t i = 1; i < l.size; ++i) {
    int c = CompareValues(l.items[i - 1], l.items[i]);
    if (c == -2) return NoSuchOverload();
    if (c == 1) return Value::Bool(false);
  }
  return Value::Bool(true);
}

// The sum of a list of one numeric kind; an empty list sums to the zero of
// the call's type.
Value Sum(EvalContext& ctx, const Node& call, const Value* a) {
  const ListData& l = *a[0].list;
  if (l.size == 0) {
    if (call.type->kind == TypeKind::kUint) return Value::Uint(0);
    if (call.type->kind == TypeKind::kDouble) return Value::Double(0);
    return Value::Int(0);
  }
  Value acc = l.items[0];
  for (size_t i = 1; i < l.size; ++i) {
    const Value& v = l.items[i];
    if (v.kind != acc.kind) return NoSuchOverload();
    Value args[2] = {acc, v};
    switch (v.kind) {
      case ValueKind::kInt:
        acc = AddInt(ctx, call, args);
        break;
      case ValueKind::kUint:
        acc = AddUint(ctx, call, args);
        break;
      case ValueKind::kDouble:
        acc = AddDouble(ctx, call, args);
        break;
      default:
        return NoSuchOverload();
    }
    if (acc.IsError()) return acc;
  }
  if (acc.kind != ValueKind::kInt && acc.kind != ValueKind::kUint &&
      acc.kind != ValueKind::kDouble) {
    return NoSuchOverload();
  }
  return acc;
}

template <bool kMax>
Value MinMax(EvalContext&, const Node&, const Value* a) {
  const ListData& l = *a[0].list;
  if (l.size == 0) return Err(kMax ? "max called on empty list" : "min called on empty list");
  Value best = l.items[0];
  for (size_t i = 1; i < l.size; ++i) {
    int c = CompareValues(l.items[i], best);
    if (c == -2) return NoSuchOverload();
    if (kMax ? c == 1 : c == -1) best = l.items[i];
  }
  return best;
}

template <bool kLast>
Value ListIndexOf(EvalContext& ctx, const Node&, const Value* a) {
  const ListData& l = *a[0].list;
  for (size_t k = 0; k < l.size; ++k) {
    size_t i = kLast ? l.size - 1 - k : k;
    if (ValuesEqual(ctx, l.items[i], a[1])) return Value::Int(static_cast<int64_t>(i));
  }
  return Value::Int(-1);
}

bool ListContains(EvalContext& ctx, const ListData& l, const Value& v) {
  for (size_t i = 0; i < l.size; ++i) {
    if (ValuesEqual(ctx, l.items[i], v)) return true;
  }
  return false;
}
bool ListContainsAll(EvalContext& ctx, const ListData& l, const ListData& sub) {
  for (size_t i = 0; i < sub.size; ++i) {
    if (!ListContains(ctx, l, sub.items[i])) return false;
  }
  return true;
}
Value SetsContains(EvalContext& ctx, const Node&, const Value* a) {
  return Value::Bool(ListContainsAll(ctx, *a[0].list, *a[1].list));
}
Value SetsEquivalent(EvalContext& ctx, const Node&, const Value* a) {
  return Value::Bool(ListContainsAll(ctx, *a[0].list, *a[1].list) &&
                     ListContainsAll(ctx, *a[1].list, *a[0].list));
}
Value SetsIntersects(EvalContext& ctx, const Node&, const Value* a) {
  for (size_t i = 0; i < a[1].list->size; ++i) {
    if (ListContains(ctx, *a[0].list, a[1].list->items[i])) return Value::Bool(true);
  }
  return Value::Bool(false);
}

// --- Kubernetes quantity library ----------------------------------------------

// Whether the text matches Go's quantity regular expression
// ^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$ (to tell its two errors apart).
bool MatchesQuantityFormat(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  size_t start = i;
  while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) ++i;
  if (i == start) return false;
  while (i < s.size() && std::string_view("eEinumkKMGTP").find(s[i]) != std::string_view::npos) {
    ++i;
  }
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  return i == s.size();
}

Value QuantityOf(EvalContext& ctx, const Node&, const Value* a) {
  Result<Quantity> q = Quantity::Parse(a[0].sv());
  if (!q.ok()) {
    return Err(MatchesQuantityFormat(a[0].sv()) ? "unable to parse quantity's suffix"
                                                : "quantities must match the regular expression "
                                                  "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
  }
  return ctx.NewQuantity(std::move(q).value());
}
Value IsQuantity(EvalContext&, const Node&, const Value* a) {
  return Value::Bool(Quantity::Parse(a[0].sv()).ok());
}
Value QuantitySign(EvalContext&, const Node&, const Value* a) {
  return Value::Int(a[0].quantity->Sign());
}

int QuantityCompare(const Quantity& a, const Quantity& b) {
  auto c = a <=> b;
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}
Value QuantityCompareTo(EvalContext&, const Node&, const Value* a) {
  return Value::Int(QuantityCompare(*a[0].quantity, *a[1].quantity));
}
Value QuantityGreater(EvalContext&, const Node&, const Value* a) {
  return Value::Bool(QuantityCompare(*a[0].quantity, *a[1].quantity) == 1);
}
Value QuantityLess(EvalContext&, const Node&, const Value* a) {
  return Value::Bool(QuantityCompare(*a[0].quantity, *a[1].quantity) == -1);
}

// An integer in int64's range, exactly.
bool QuantityAsInt(const Quantity& q, int64_t* out) {
  int64_t v = q.Value();
  if (Quantity::FromInt(v) != q) return false;
  *out = v;
  return true;
}
Value QuantityIsInteger(EvalContext&, const Node&, const Value* a) {
  int64_t v;
  return Value::Bool(QuantityAsInt(*a[0].quantity, &v));
}
Value QuantityAsInteger(EvalContext&, const Node&, const Value* a) {
  int64_t v;
  if (!QuantityAsInt(*a[0].quantity, &v)) return Err("cannot convert value to integer");
  return Value::Int(v);
}

// The canonical text ("1536Mi", "100m", "12e6") read back as a double.
Value QuantityAsFloat(EvalContext&, const Node&, const Value* a) {
  std::string s = a[0].quantity->CanonicalString();
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.' ||
                          s[i] == '-' || s[i] == '+')) {
    ++i;
  }
  double number = 0;
  std::from_chars(s.data(), s.data() + i, number);
  std::string_view suffix(s.data() + i, s.size() - i);
  double scale = 1;
  static const std::map<std::string_view, double> kSuffixes = {{"n", 1e-9},
                                                               {"u", 1e-6},
                                                               {"m", 1e-3},
                                                               {"", 1},
                                                               {"k", 1e3},
                                                               {"M", 1e6},
                                                               {"G", 1e9},
                                                               {"T", 1e12},
                                                               {"P", 1e15},
                                                               {"E", 1e18},
                                                               {"Ki", 1024.0},
                                                               {"Mi", 1048576.0},
                                                               {"Gi", 1073741824.0},
                                                               {"Ti", 1099511627776.0},
                                                               {"Pi", 1125899906842624.0},
                                                               {"Ei", 1152921504606846976.0}};
  if (auto it = kSuffixes.find(suffix); it != kSuffixes.end()) {
    scale = it->second;
  } else if (!suffix.empty() && (suffix[0] == 'e' || suffix[0] == 'E')) {
    int exp = 0;
    std::from_chars(suffix.data() + 1, suffix.data() + suffix.size(), exp);
    scale = std::pow(10.0, exp);
  }
  return Value::Double(number * scale);
}

Value QuantityAdd(EvalContext& ctx, const Node&, const Value* a) {
  return ctx.NewQuantity(*a[0].quantity + *a[1].quantity);
}
Value QuantitySub(EvalContext& ctx, const Node&, const Value* a) {
  return ctx.NewQuantity(*a[0].quantity - *a[1].quantity);
}
Value QuantityAddInt(EvalContext& ctx, const Node&, const Value* a) {
  return ctx.NewQuantity(*a[0].quantity +
                         Quantity::FromInt(a[1].i, Quantity::Format::kDecimalExponent));
}
Value QuantitySubInt(EvalContext& ctx, const Node&, const Value* a) {
  return ctx.NewQuantity(*a[0].quantity -
                         Quantity::FromInt(a[1].i, Quantity::Format::kDecimalExponent));
}

// --- Kubernetes semver library --------------------------------------------------

Value SemverOf(EvalContext& ctx, const Node&, const Value* a) {
  bool normalize = a[1].kind == ValueKind::kBool && a[1].b;
  Result<Semver> v = normalize ? Semver::ParseNormalized(a[0].sv()) : Semver::Parse(a[0].sv());
  if (!v.ok()) return ctx.Error(v.error().message);
  return ctx.NewSemver(std::move(v).value());
}
Value SemverOf1(EvalContext& ctx, const Node& n, const Value* a) {
  Value args[2] = {a[0], Value::Bool(false)};
  return SemverOf(ctx, n, args);
}
Value IsSemver(EvalContext&, const Node&, const Value* a) {
  bool normalize = a[1].kind == ValueKind::kBool && a[1].b;
  return Value::Bool(normalize ? Semver::ParseNormalized(a[0].sv()).ok()
                               : Semver::Parse(a[0].sv()).ok());
}
Value IsSemver1(EvalContext& ctx, const Node& n, const Value* a) {
  Value args[2] = {a[0], Value::Bool(false)};
  return IsSemver(ctx, n, args);
}
Value SemverCompareTo(EvalContext&, const Node&, const Value* a) {
  return Value::Int(a[0].semver->Compare(*a[1].semver));
}
Value SemverGreater(EvalContext&, const Node&, const Value* a) {
  return Value::Bool(a[0].semver->Compare(*a[1].semver) == 1);
}
Value SemverLess(EvalContext&, const Node&, const Value* a) {
  return Value::Bool(a[0].semver->Compare(*a[1].semver) == -1);
}
// Go's types.Int(v.Major) of a uint64: wraps beyond int64.
Value SemverMajor(EvalContext&, const Node&, const Value* a) {
  return Value::Int(static_cast<int64_t>(a[0].semver->major()));
}
Value SemverMinor(EvalContext&, const Node&, const Value* a) {
  return Value::Int(static_cast<int64_t>(a[0].semver->minor()));
}
Value SemverPatch(EvalContext&, const Node&, const Value* a) {
  return Value::Int(static_cast<int64_t>(a[0].semver->patch()));
}

// --- Optionals ------------------------------------------------------------------

Value OptionalOf(EvalContext& ctx, const Node&, const Value* a) { return ctx.NewOptional(a[0]); }
Value OptionalNone(EvalContext&, const Node&, const Value*) { return Value::Optional(nullptr); }

bool IsZeroValue(EvalContext& ctx, const Value& v) {
  switch (v.kind) {
    case ValueKind::kNull:
      return true;
    case ValueKind::kBool:
      return !v.b;
    case ValueKind::kInt:
      return v.i == 0;
    case ValueKind::kUint:
      return v.u == 0;
    case ValueKind::kDouble:
      return v.d == 0;
    case ValueKind::kString:
    case ValueKind::kBytes:
      return v.str.size == 0;
    case ValueKind::kList:
      return v.list->size == 0;
    default:
      return IsMapLike(v) && v.kind != ValueKind::kDevice && MapSize(ctx, v) == 0;
  }
}
Value OptionalOfNonZero(EvalContext& ctx, const Node&, const Value* a) {
  if (IsZeroValue(ctx, a[0])) return Value::Optional(nullptr);
  return ctx.NewOptional(a[0]);
}
Value OptionalHasValue(EvalContext&, const Node&, const Value* a) {
  return Value::Bool(a[0].optional != nullptr);
}
Value OptionalValue(EvalContext&, const Node&, const Value* a) {
  if (a[0].optional == nullptr) return Err("optional.none() dereference");
  return *a[0].optional;
}
// or and orValue evaluate their argument only when the receiver is none
// (see the evaluator); these run with both evaluated.
Value OptionalOr(EvalContext&, const Node&, const Value* a) {
  return a[0].optional != nullptr ? a[0] : a[1];
}
Value OptionalOrValue(EvalContext&, const Node&, const Value* a) {
  return a[0].optional != nullptr ? *a[0].optional : a[1];
}

// --- The table ----------------------------------------------------------------

struct Row {
  const char* function;
  const char* id;
  bool member;
  const char* args;  // comma-separated type specs
  const char* result;
  Impl impl;
  CostRule cost = CostRule::kOne;
  bool foldable = true;
};

constexpr bool kGlobal = false;
constexpr bool kMember = true;

// clang-format off
const Row kRows[] = {
    // Equality, ordering (with cel-go's cross-type numeric comparisons).
    {"_==_", "equals", kGlobal, "A,A", "bool", Equals, CostRule::kCompareMin},
    {"_!=_", "not_equals", kGlobal, "A,A", "bool", NotEquals, CostRule::kCompareMin},
#define COPSE_CEL_ORDER(op, name, impl)                                                       \
    {op, name "_bool", kGlobal, "bool,bool", "bool", impl},                                    \
    {op, name "_int64", kGlobal, "int,int", "bool", impl},                                    \
    {op, name "_int64_double", kGlobal, "int,double", "bool", impl},                          \
    {op, name "_int64_uint64", kGlobal, "int,uint", "bool", impl},                            \
    {op, name "_uint64", kGlobal, "uint,uint", "bool", impl},                                 \
    {op, name "_uint64_double", kGlobal, "uint,double", "bool", impl},                        \
    {op, name "_uint64_int64", kGlobal, "uint,int", "bool", impl},                            \
    {op, name "_double", kGlobal, "double,double", "bool", impl},                             \
    {op, name "_double_int64", kGlobal, "double,int", "bool", impl},                          \
    {op, name "_double_uint64", kGlobal, "double,uint", "bool", impl},                        \
    {op, name "_string", kGlobal, "string,string", "bool", impl, CostRule::kCompareMin},      \
    {op, name "_bytes", kGlobal, "bytes,bytes", "bool", impl, CostRule::kCompareMin}
    COPSE_CEL_ORDER("_<_", "less", Compare<0>),
    COPSE_CEL_ORDER("_<=_", "less_equals", Compare<1>),
    COPSE_CEL_ORDER("_>_", "greater", Compare<2>),
    COPSE_CEL_ORDER("_>=_", "greater_equals", Compare<3>),
#undef COPSE_CEL_ORDER
    // Arithmetic.
    {"_+_", "add_int64", kGlobal, "int,int", "int", AddInt},
    {"_+_", "add_uint64", kGlobal, "uint,uint", "uint", AddUint},
    {"_+_", "add_double", kGlobal, "double,double", "double", AddDouble},
    {"_+_", "add_string", kGlobal, "string,string", "string", AddString, CostRule::kConcat},
    {"_+_", "add_bytes", kGlobal, "bytes,bytes", "bytes", AddString, CostRule::kConcat},
    {"_+_", "add_list", kGlobal, "list(A),list(A)", "list(A)", AddList},
    {"_-_", "subtract_int64", kGlobal, "int,int", "int", SubInt},
    {"_-_", "subtract_uint64", kGlobal, "uint,uint", "uint", SubUint},
    {"_-_", "subtract_double", kGlobal, "double,double", "double", SubDouble},
    {"_*_", "multiply_int64", kGlobal, "int,int", "int", MulInt},
    {"_*_", "multiply_uint64", kGlobal, "uint,uint", "uint", MulUint},
    {"_*_", "multiply_double", kGlobal, "double,double", "double", MulDouble},
    {"_/_", "divide_int64", kGlobal, "int,int", "int", DivInt},
    {"_/_", "divide_uint64", kGlobal, "uint,uint", "uint", DivUint},
    {"_/_", "divide_double", kGlobal, "double,double", "double", DivDouble},
    {"_%_", "modulo_int64", kGlobal, "int,int", "int", ModInt},
    {"_%_", "modulo_uint64", kGlobal, "uint,uint", "uint", ModUint},
    {"-_", "negate_int64", kGlobal, "int", "int", NegInt},
    {"-_", "negate_double", kGlobal, "double", "double", NegDouble},
    {"!_", "logical_not", kGlobal, "bool", "bool", Not},
    {"_?_:_", "conditional", kGlobal, "bool,A,A", "A", nullptr},
    // Index, membership, size.
    {"_[_]", "index_list", kGlobal, "list(A),int", "A", Index},
    {"_[_]", "index_map", kGlobal, "map(A,B),A", "B", Index},
    {"_[_]", "optional_list_index_int", kGlobal, "optional(list(A)),int", "optional(A)", IndexOptional},
    {"_[_]", "optional_map_index_value", kGlobal, "optional(map(A,B)),A", "optional(B)", IndexOptional},
    {"_[?_]", "list_optindex_optional_int", kGlobal, "list(A),int", "optional(A)", OptIndex},
    {"_[?_]", "optional_list_optindex_optional_int", kGlobal, "optional(list(A)),int", "optional(A)", OptIndex},
    {"_[?_]", "map_optindex_optional_value", kGlobal, "map(A,B),A", "optional(B)", OptIndex},
    {"_[?_]", "optional_map_optindex_optional_value", kGlobal, "optional(map(A,B)),A", "optional(B)", OptIndex},
    {"@in", "in_list", kGlobal, "A,list(A)", "bool", In, CostRule::kInList},
    {"@in", "in_map", kGlobal, "A,map(A,B)", "bool", In},
    {"size", "size_string", kGlobal, "string", "int", Size},
    {"size", "string_size", kMember, "string", "int", Size},
    {"size", "size_bytes", kGlobal, "bytes", "int", Size},
    {"size", "bytes_size", kMember, "bytes", "int", Size},
    {"size", "size_list", kGlobal, "list(A)", "int", Size},
    {"size", "list_size", kMember, "list(A)", "int", Size},
    {"size", "size_map", kGlobal, "map(A,B)", "int", Size},
    {"size", "map_size", kMember, "map(A,B)", "int", Size},
    // Types and conversions.
    {"type", "type", kGlobal, "A", "type(A)", TypeOf},
    {"dyn", "to_dyn", kGlobal, "A", "dyn", Identity},
    {"int", "int64_to_int64", kGlobal, "int", "int", ToInt},
    {"int", "uint64_to_int64", kGlobal, "uint", "int", ToInt},
    {"int", "double_to_int64", kGlobal, "double", "int", ToInt},
    {"int", "string_to_int64", kGlobal, "string", "int", ToInt},
    {"uint", "uint64_to_uint64", kGlobal, "uint", "uint", ToUint},
    {"uint", "int64_to_uint64", kGlobal, "int", "uint", ToUint},
    {"uint", "double_to_uint64", kGlobal, "double", "uint", ToUint},
    {"uint", "string_to_uint64", kGlobal, "string", "uint", ToUint},
    {"double", "double_to_double", kGlobal, "double", "double", ToDouble},
    {"double", "int64_to_double", kGlobal, "int", "double", ToDouble},
    {"double", "uint64_to_double", kGlobal, "uint", "double", ToDouble},
    {"double", "string_to_double", kGlobal, "string", "double", ToDouble},
    {"string", "string_to_string", kGlobal, "string", "string", ToString},
    {"string", "bool_to_string", kGlobal, "bool", "string", ToString},
    {"string", "int64_to_string", kGlobal, "int", "string", ToString},
    {"string", "uint64_to_string", kGlobal, "uint", "string", ToString},
    {"string", "double_to_string", kGlobal, "double", "string", ToString},
    {"string", "bytes_to_string", kGlobal, "bytes", "string", ToString, CostRule::kTraverseFirst},
    {"bool", "bool_to_bool", kGlobal, "bool", "bool", ToBool},
    {"bool", "string_to_bool", kGlobal, "string", "bool", ToBool},
    {"bytes", "bytes_to_bytes", kGlobal, "bytes", "bytes", ToBytes},
    {"bytes", "string_to_bytes", kGlobal, "string", "bytes", ToBytes, CostRule::kTraverseFirst},
    // Strings: the standard library.
    {"contains", "contains_string", kMember, "string,string", "bool", Contains, CostRule::kContains},
    {"startsWith", "starts_with_string", kMember, "string,string", "bool", StartsWith, CostRule::kTraverseFirst},
    {"endsWith", "ends_with_string", kMember, "string,string", "bool", EndsWith, CostRule::kTraverseFirst},
    {"matches", "matches", kGlobal, "string,string", "bool", Matches, CostRule::kRegex},
    {"matches", "matches_string", kMember, "string,string", "bool", Matches, CostRule::kRegex},
    // Strings: cel-go's strings extension, version 2.
    {"charAt", "string_char_at_int", kMember, "string,int", "string", CharAt},
    {"indexOf", "string_index_of_string", kMember, "string,string", "int", IndexOf, CostRule::kTraverseFirst},
    {"indexOf", "string_index_of_string_int", kMember, "string,string,int", "int", IndexOfOffset, CostRule::kTraverseFirst},
    {"lastIndexOf", "string_last_index_of_string", kMember, "string,string", "int", LastIndexOf, CostRule::kTraverseFirst},
    {"lastIndexOf", "string_last_index_of_string_int", kMember, "string,string,int", "int", LastIndexOfOffset, CostRule::kTraverseFirst},
    {"lowerAscii", "string_lower_ascii", kMember, "string", "string", ChangeAsciiCase<false>, CostRule::kTraverseFirst},
    {"upperAscii", "string_upper_ascii", kMember, "string", "string", ChangeAsciiCase<true>, CostRule::kTraverseFirst},
    {"replace", "string_replace_string_string", kMember, "string,string,string", "string", Replace, CostRule::kTraverseFirst2x},
    {"replace", "string_replace_string_string_int", kMember, "string,string,string,int", "string", ReplaceN, CostRule::kTraverseFirst2x},
    {"split", "string_split_string", kMember, "string,string", "list(string)", Split, CostRule::kTraverseFirst2x},
    {"split", "string_split_string_int", kMember, "string,string,int", "list(string)", SplitN, CostRule::kTraverseFirst2x},
    {"substring", "string_substring_int", kMember, "string,int", "string", SubstringFrom, CostRule::kTraverseFirst},
    {"substring", "string_substring_int_int", kMember, "string,int,int", "string", Substring, CostRule::kTraverseFirst},
    {"trim", "string_trim", kMember, "string", "string", Trim, CostRule::kTraverseFirst},
    {"join", "list_join", kMember, "list(string)", "string", Join, CostRule::kJoin},
    {"join", "list_join_string", kMember, "list(string),string", "string", JoinSep, CostRule::kJoin},
    {"strings.quote", "strings_quote", kGlobal, "string", "string", Quote, CostRule::kTraverseFirst},
    // Kubernetes regex library.
    {"find", "string_find_string", kMember, "string,string", "string", Find, CostRule::kRegex},
    {"findAll", "string_find_all_string", kMember, "string,string", "list(string)", FindAllUnlimited, CostRule::kRegex},
    {"findAll", "string_find_all_string_int", kMember, "string,string,int", "list(string)", FindAll, CostRule::kRegex},
    // Kubernetes lists library.
#define COPSE_CEL_LIST_OF(fn, elem, id, result, impl) \
    {fn, id, kMember, "list(" elem ")", result, impl, CostRule::kListTraverse}
    COPSE_CEL_LIST_OF("isSorted", "int", "list_int_is_sorted_bool", "bool", IsSorted),
    COPSE_CEL_LIST_OF("isSorted", "uint", "list_uint_is_sorted_bool", "bool", IsSorted),
    COPSE_CEL_LIST_OF("isSorted", "double", "list_double_is_sorted_bool", "bool", IsSorted),
    COPSE_CEL_LIST_OF("isSorted", "bool", "list_bool_is_sorted_bool", "bool", IsSorted),
    COPSE_CEL_LIST_OF("isSorted", "string", "list_string_is_sorted_bool", "bool", IsSorted),
    COPSE_CEL_LIST_OF("isSorted", "bytes", "list_bytes_is_sorted_bool", "bool", IsSorted),
    COPSE_CEL_LIST_OF("max", "int", "list_int_max_int", "int", MinMax<true>),
    COPSE_CEL_LIST_OF("max", "uint", "list_uint_max_uint", "uint", MinMax<true>),
    COPSE_CEL_LIST_OF("max", "double", "list_double_max_double", "double", MinMax<true>),
    COPSE_CEL_LIST_OF("max", "bool", "list_bool_max_bool", "bool", MinMax<true>),
    COPSE_CEL_LIST_OF("max", "string", "list_string_max_string", "string", MinMax<true>),
    COPSE_CEL_LIST_OF("max", "bytes", "list_bytes_max_bytes", "bytes", MinMax<true>),
    COPSE_CEL_LIST_OF("min", "int", "list_int_min_int", "int", MinMax<false>),
    COPSE_CEL_LIST_OF("min", "uint", "list_uint_min_uint", "uint", MinMax<false>),
    COPSE_CEL_LIST_OF("min", "double", "list_double_min_double", "double", MinMax<false>),
    COPSE_CEL_LIST_OF("min", "bool", "list_bool_min_bool", "bool", MinMax<false>),
    COPSE_CEL_LIST_OF("min", "string", "list_string_min_string", "string", MinMax<false>),
    COPSE_CEL_LIST_OF("min", "bytes", "list_bytes_min_bytes", "bytes", MinMax<false>),
    COPSE_CEL_LIST_OF("sum", "int", "list_int_sum_int", "int", Sum),
    COPSE_CEL_LIST_OF("sum", "uint", "list_uint_sum_uint", "uint", Sum),
    COPSE_CEL_LIST_OF("sum", "double", "list_double_sum_double", "double", Sum),
#undef COPSE_CEL_LIST_OF
    {"indexOf", "list_a_index_of_int", kMember, "list(A),A", "int", ListIndexOf<false>, CostRule::kListTraverse},
    {"lastIndexOf", "list_a_last_index_of_int", kMember, "list(A),A", "int", ListIndexOf<true>, CostRule::kListTraverse},
    // cel-go's sets extension.
    {"sets.contains", "list_sets_contains_list", kGlobal, "list(A),list(A)", "bool", SetsContains, CostRule::kListProduct},
    {"sets.equivalent", "list_sets_equivalent_list", kGlobal, "list(A),list(A)", "bool", SetsEquivalent, CostRule::kListProduct},
    {"sets.intersects", "list_sets_intersects_list", kGlobal, "list(A),list(A)", "bool", SetsIntersects, CostRule::kListProduct},
    // Kubernetes quantity library.
    {"quantity", "string_to_quantity", kGlobal, "string", "quantity", QuantityOf, CostRule::kTraverseFirst},
    {"isQuantity", "is_quantity_string", kGlobal, "string", "bool", IsQuantity, CostRule::kTraverseFirst},
    {"sign", "quantity_sign", kGlobal, "quantity", "int", QuantitySign},
    {"isGreaterThan", "quantity_is_greater_than", kMember, "quantity,quantity", "bool", QuantityGreater},
    {"isLessThan", "quantity_is_less_than", kMember, "quantity,quantity", "bool", QuantityLess},
    {"compareTo", "quantity_compare_to", kMember, "quantity,quantity", "int", QuantityCompareTo},
    {"asApproximateFloat", "quantity_get_float", kMember, "quantity", "double", QuantityAsFloat},
    {"asInteger", "quantity_get_int", kMember, "quantity", "int", QuantityAsInteger},
    {"isInteger", "quantity_is_integer", kMember, "quantity", "bool", QuantityIsInteger},
    {"add", "quantity_add", kMember, "quantity,quantity", "quantity", QuantityAdd},
    {"add", "quantity_add_int", kMember, "quantity,int", "quantity", QuantityAddInt},
    {"sub", "quantity_sub", kMember, "quantity,quantity", "quantity", QuantitySub},
    {"sub", "quantity_sub_int", kMember, "quantity,int", "quantity", QuantitySubInt},
    // Kubernetes semver library, version 1.
    {"semver", "string_to_semver", kGlobal, "string", "semver", SemverOf1, CostRule::kTraverseFirst},
    {"semver", "string_bool_to_semver", kGlobal, "string,bool", "semver", SemverOf, CostRule::kTraverseFirst},
    {"isSemver", "is_semver_string", kGlobal, "string", "bool", IsSemver1, CostRule::kTraverseFirst},
    {"isSemver", "is_semver_string_bool", kGlobal, "string,bool", "bool", IsSemver, CostRule::kTraverseFirst},
    {"isGreaterThan", "semver_is_greater_than", kMember, "semver,semver", "bool", SemverGreater},
    {"isLessThan", "semver_is_less_than", kMember, "semver,semver", "bool", SemverLess},
    {"compareTo", "semver_compare_to", kMember, "semver,semver", "int", SemverCompareTo},
    {"major", "semver_major", kMember, "semver", "int", SemverMajor},
    {"minor", "semver_minor", kMember, "semver", "int", SemverMinor},
    {"patch", "semver_patch", kMember, "semver", "int", SemverPatch},
    // Optional types.
    {"optional.of", "optional_of", kGlobal, "A", "optional(A)", OptionalOf},
    {"optional.ofNonZeroValue", "optional_ofNonZeroValue", kGlobal, "A", "optional(A)", OptionalOfNonZero},
    {"optional.none", "optional_none", kGlobal, "", "optional(A)", OptionalNone},
    {"hasValue", "optional_hasValue", kMember, "optional(A)", "bool", OptionalHasValue},
    {"value", "optional_value", kMember, "optional(A)", "A", OptionalValue},
    {"or", "optional_or_optional", kMember, "optional(A),optional(A)", "optional(A)", OptionalOr},
    {"orValue", "optional_orValue_value", kMember, "optional(A),A", "A", OptionalOrValue},
};
// clang-format on

class SpecParser {
 public:
  SpecParser(TypeStore& store, std::string_view s) : store_(store), s_(s) {}

  std::vector<Type> List() {
    std::vector<Type> out;
    if (s_.empty()) return out;
    for (;;) {
      out.push_back(One());
      if (pos_ >= s_.size()) return out;
      ++pos_;  // ','
    }
  }
  Type One() {
    size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] != '(' && s_[pos_] != ',' && s_[pos_] != ')') ++pos_;
    std::string_view name = s_.substr(start, pos_ - start);
    if (name == "list") return store_.List(Inner());
    if (name == "optional") return store_.Optional(Inner());
    if (name == "type") return store_.TypeOf(Inner());
    if (name == "map") {
      ++pos_;
      Type k = One();
      ++pos_;
      Type v = One();
      ++pos_;
      return store_.Map(k, v);
    }
    if (name == "A") return param_a();
    if (name == "B") return param_b();
    static const std::map<std::string_view, Type> kNamed = {
        {"bool", BoolType()},     {"int", IntType()},           {"uint", UintType()},
        {"double", DoubleType()}, {"string", StringType()},     {"bytes", BytesType()},
        {"dyn", DynType()},       {"quantity", QuantityType()}, {"semver", SemverType()}};
    return kNamed.at(name);
  }

 private:
  Type Inner() {
    ++pos_;  // '('
    Type t = One();
    ++pos_;  // ')'
    return t;
  }
  Type param_a() {
    static Type a = store_.Param(kParamA);
    return a;
  }
  Type param_b() {
    static Type b = store_.Param(kParamB);
    return b;
  }

  TypeStore& store_;
  std::string_view s_;
  size_t pos_ = 0;
};

struct Library {
  TypeStore types;
  std::deque<Overload> overloads;
  std::map<std::string_view, std::vector<const Overload*>, std::less<>> by_name;

  Library() {
    for (const Row& row : kRows) {
      Overload& o = overloads.emplace_back();
      o.function = row.function;
      o.id = row.id;
      o.member = row.member;
      o.args = SpecParser(types, row.args).List();
      o.result = SpecParser(types, row.result).One();
      o.impl = row.impl;
      o.cost = row.cost;
      o.foldable = row.foldable;
      by_name[o.function].push_back(&o);
    }
  }
};

const Library& GetLibrary() {
  static const Library library;
  return library;
}

uint64_t Tenth(uint64_t size) { return size / 10 + (size % 10 != 0 ? 1 : 0); }
uint64_t Quarter(uint64_t size) { return size / 4 + (size % 4 != 0 ? 1 : 0); }
uint64_t SatMul(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

}  // namespace

std::shared_ptr<const re2::RE2> CompileRegex(std::string_view pattern) {
  re2::RE2::Options options;
  options.set_log_errors(false);
  return std::make_shared<const re2::RE2>(re2::StringPiece(pattern.data(), pattern.size()),
                                          options);
}

const std::vector<const Overload*>* LookupFunction(std::string_view name) {
  const Library& lib = GetLibrary();
  auto it = lib.by_name.find(name);
  return it == lib.by_name.end() ? nullptr : &it->second;
}

bool ValueMatchesType(const Value& v, Type declared) {
  switch (declared->kind) {
    case TypeKind::kParam:
    case TypeKind::kDyn:
    case TypeKind::kAny:
      return true;
    case TypeKind::kBool:
      return v.kind == ValueKind::kBool;
    case TypeKind::kInt:
      return v.kind == ValueKind::kInt;
    case TypeKind::kUint:
      return v.kind == ValueKind::kUint;
    case TypeKind::kDouble:
      return v.kind == ValueKind::kDouble;
    case TypeKind::kString:
      return v.kind == ValueKind::kString;
    case TypeKind::kBytes:
      return v.kind == ValueKind::kBytes;
    case TypeKind::kNull:
      return v.kind == ValueKind::kNull;
    case TypeKind::kList:
      return v.kind == ValueKind::kList;
    case TypeKind::kMap:
      return IsMapLike(v) && v.kind != ValueKind::kDevice;
    case TypeKind::kOptional:
      return v.kind == ValueKind::kOptional;
    case TypeKind::kType:
      return v.kind == ValueKind::kType;
    case TypeKind::kQuantity:
      return v.kind == ValueKind::kQuantity;
    case TypeKind::kSemver:
      return v.kind == ValueKind::kSemver;
    case TypeKind::kDevice:
      return v.kind == ValueKind::kDevice;
    case TypeKind::kError:
      return false;
  }
  return false;
}

uint64_t CallCost(EvalContext& ctx, const Overload& o, const Value* args, size_t nargs,
                  const Value& result) {
  auto size = [&](size_t i) { return i < nargs ? CostSize(ctx, args[i]) : 1; };
  switch (o.cost) {
    case CostRule::kOne:
      return 1;
    case CostRule::kTraverseFirst:
      return Tenth(size(0));
    case CostRule::kTraverseFirst2x:
      return Tenth(2 * size(0));
    case CostRule::kJoin:
      return Tenth(2 * CostSize(ctx, result));
    case CostRule::kInList:
      return size(1);
    case CostRule::kCompareMin:
      return Tenth(std::min(size(0), size(1)));
    case CostRule::kConcat:
      return Tenth(size(0) + size(1));
    case CostRule::kContains:
      return SatMul(Tenth(size(0)), Tenth(size(1)));
    case CostRule::kRegex:
      return SatMul(Tenth(1 + size(0)), Quarter(size(1)));
    case CostRule::kListTraverse:
      return size(0);
    case CostRule::kListProduct:
      return std::max<uint64_t>(1, SatMul(size(0), size(1)));
  }
  return 1;
}

bool TakesRegex(const Overload& o, size_t index) {
  return index == 1 && (o.function == "matches" || o.function == "find" || o.function == "findAll");
}

}  // namespace copse::cel::internal
