#include "core/labels.h"

#include <algorithm>
#include <limits>
#include <set>
#include <tuple>
#include <utility>

#include "core/names.h"

namespace copse {
namespace {

constexpr std::string_view kMetadataNameField = "metadata.name";

// strconv.ParseInt(s, 10, 64): optional sign, decimal digits, no blanks.
bool ParseInt64(std::string_view s, int64_t& out) noexcept {
  size_t i = 0;
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    i = 1;
  }
  if (i == s.size()) return false;
  uint64_t v = 0;
  constexpr uint64_t kLimit = uint64_t{1} << 63;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    const auto digit = static_cast<uint64_t>(s[i] - '0');
    if (v > (kLimit - digit) / 10) return false;
    v = v * 10 + digit;
  }
  if (negative) {
    out = v == kLimit ? std::numeric_limits<int64_t>::min() : -static_cast<int64_t>(v);
    return true;
  }
  if (v == kLimit) return false;
  out = static_cast<int64_t>(v);
  return true;
}

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

// Go's %q, enough for keys and values: quotes, backslashes, control bytes.
std::string GoQuote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

// field.Error renderings.
std::string FieldInvalid(std::string_view path, std::string_view value, std::string_view detail) {
  std::string out(path);
  out += ": Invalid value: ";
  out += GoQuote(value);
  out += ": ";
  out += detail;
  return out;
}
std::string FieldRequired(std::string_view path, std::string_view detail) {
  return std::string(path) + ": Required value: " + std::string(detail);
}
std::string FieldForbidden(std::string_view path, std::string_view detail) {
  return std::string(path) + ": Forbidden: " + std::string(detail);
}

std::string Indexed(std::string_view path, size_t i) {
  return std::string(path) + "[" + std::to_string(i) + "]";
}

Error InvalidError(std::string message) {
  return MakeError(ErrorCode::kInvalid, std::move(message));
}

// ---------------------------------------------------------------------------
// labels.NewRequirement: the checks a requirement must pass to be usable.

void CheckKey(std::string_view key, const std::string& path, std::vector<std::string>& errs) {
  if (auto key_errs = IsQualifiedName(key); !key_errs.empty()) {
    errs.push_back(FieldInvalid(path, key, Join(key_errs, "; ")));
  }
}

void CheckValues(const std::vector<std::string>& values, const std::string& path,
                 std::vector<std::string>& errs) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (auto value_errs = IsValidLabelValue(values[i]); !value_errs.empty()) {
      errs.push_back(FieldInvalid(Indexed(path, i), values[i], Join(value_errs, "; ")));
    }
  }
}

void CheckNewRequirement(const Requirement& r, const std::string& prefix,
                         std::vector<std::string>& errs) {
  CheckKey(r.key, prefix + "key", errs);
  const std::string values_path = prefix + "values";
  switch (r.op) {
    case SelectorOp::kIn:
    case SelectorOp::kNotIn:
      if (r.values.empty()) {
        errs.push_back(
            FieldRequired(values_path, "for 'in', 'notin' operators, values set can't be empty"));
      }
      break;
    case SelectorOp::kEquals:
    case SelectorOp::kNotEquals:
      if (r.values.size() != 1) {
        errs.push_back(
            FieldRequired(values_path, "exact-match compatibility requires one single value"));
      }
      break;
    case SelectorOp::kExists:
    case SelectorOp::kDoesNotExist:
      if (!r.values.empty()) {
        errs.push_back(
            FieldForbidden(values_path, "values set must be empty for exists and does not exist"));
      }
      break;
    case SelectorOp::kGt:
    case SelectorOp::kLt:
      if (r.values.size() != 1) {
        errs.push_back(
            FieldRequired(values_path, "for 'Gt', 'Lt' operators, exactly one value is required"));
      }
      for (size_t i = 0; i < r.values.size(); ++i) {
        int64_t ignored;
        if (!ParseInt64(r.values[i], ignored)) {
          errs.push_back(FieldInvalid(Indexed(values_path, i), r.values[i],
                                      "for 'Gt', 'Lt' operators, the value must be an integer"));
        }
      }
      break;
  }
  CheckValues(r.values, values_path, errs);
}

// The same checks without messages, for Matches().
bool IsUsableLabelRequirement(const Requirement& r) noexcept {
  if (!ValidQualifiedName(r.key)) return false;
  switch (r.op) {
    case SelectorOp::kIn:
    case SelectorOp::kNotIn:
      if (r.values.empty()) return false;
      break;
    case SelectorOp::kExists:
    case SelectorOp::kDoesNotExist:
      if (!r.values.empty()) return false;
      break;
    case SelectorOp::kGt:
    case SelectorOp::kLt: {
      int64_t ignored;
      if (r.values.size() != 1 || !ParseInt64(r.values[0], ignored)) return false;
      break;
    }
    case SelectorOp::kEquals:
    case SelectorOp::kNotEquals:
      return false;  // not node selector operators
  }
  return std::all_of(r.values.begin(), r.values.end(),
                     [](const std::string& v) { return ValidLabelValue(v); });
}

bool IsUsableFieldRequirement(const Requirement& r) noexcept {
  return (r.op == SelectorOp::kIn || r.op == SelectorOp::kNotIn) && r.values.size() == 1;
}

void SortAndDedupe(std::vector<std::string>& values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
}

void SortByKey(std::vector<Requirement>& requirements) {
  std::stable_sort(requirements.begin(), requirements.end(),
                   [](const Requirement& a, const Requirement& b) { return a.key < b.key; });
}

// ---------------------------------------------------------------------------
// The pkg/labels string-form lexer and parser.

enum class Tok : uint8_t {
  kEnd,
  kCloseParen,
  kComma,
  kNot,
  kDoubleEquals,
  kEquals,
  kGreater,
  kIdentifier,
  kIn,
  kLess,
  kNotEquals,
  kNotIn,
  kOpenParen,
};

struct Item {
  Tok tok;
  std::string_view lit;
};

bool IsBlank(char c) noexcept { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

bool IsSpecial(char c) noexcept {
  switch (c) {
    case '=':
    case '!':
    case '(':
    case ')':
    case ',':
    case '>':
    case '<':
      return true;
    default:
      return false;
  }
}

std::vector<Item> Lex(std::string_view s) {
  std::vector<Item> items;
  size_t pos = 0;
  while (true) {
    while (pos < s.size() && IsBlank(s[pos])) ++pos;
    if (pos == s.size()) {
      items.push_back({Tok::kEnd, {}});
      return items;
    }
    const char c = s[pos];
    if (IsSpecial(c)) {
      // Longest match: "!=" and "==" are the only two-character symbols.
      if ((c == '!' || c == '=') && pos + 1 < s.size() && s[pos + 1] == '=') {
        items.push_back({c == '!' ? Tok::kNotEquals : Tok::kDoubleEquals, s.substr(pos, 2)});
        pos += 2;
        continue;
      }
      Tok tok = Tok::kEquals;
      switch (c) {
        case '!':
          tok = Tok::kNot;
          break;
        case '(':
          tok = Tok::kOpenParen;
          break;
        case ')':
          tok = Tok::kCloseParen;
          break;
        case ',':
          tok = Tok::kComma;
          break;
        case '>':
          tok = Tok::kGreater;
          break;
        case '<':
          tok = Tok::kLess;
          break;
        default:
          break;
      }
      items.push_back({tok, s.substr(pos, 1)});
      ++pos;
      continue;
    }
    const size_t start = pos;
    while (pos < s.size() && !IsSpecial(s[pos]) && !IsBlank(s[pos])) ++pos;
    const std::string_view lit = s.substr(start, pos - start);
    items.push_back(
        {lit == "in" ? Tok::kIn : (lit == "notin" ? Tok::kNotIn : Tok::kIdentifier), lit});
  }
}

class SelectorParser {
 public:
  explicit SelectorParser(std::string_view text) : items_(Lex(text)) {}

  // On failure returns false with error_ set (without the outer context).
  bool Parse(std::vector<Requirement>& out) {
    while (true) {
      const Item item = Peek(true);
      switch (item.tok) {
        case Tok::kIdentifier:
        case Tok::kNot: {
          Requirement r;
          if (!ParseRequirement(r)) {
            error_ = "unable to parse requirement: " + error_;
            return false;
          }
          out.push_back(std::move(r));
          const Item next = Next(true);
          if (next.tok == Tok::kEnd) return true;
          if (next.tok != Tok::kComma) return Fail(next.lit, "',' or 'end of string'");
          const Item after = Peek(true);
          if (after.tok != Tok::kIdentifier && after.tok != Tok::kNot) {
            return Fail(after.lit, "identifier after ','");
          }
          break;
        }
        case Tok::kEnd:
          return true;
        default:
          return Fail(item.lit, "!, identifier, or 'end of string'");
      }
    }
  }

  const std::string& error() const { return error_; }

 private:
  // In a values context "in" and "notin" are plain identifiers.
  Item Adjust(Item item, bool values) const {
    if (values && (item.tok == Tok::kIn || item.tok == Tok::kNotIn)) item.tok = Tok::kIdentifier;
    return item;
  }
  Item Peek(bool values) const { return Adjust(items_[pos_], values); }
  Item Next(bool values) {
    const Item item = items_[pos_];
    if (item.tok != Tok::kEnd) ++pos_;
    return Adjust(item, values);
  }

  bool Fail(std::string_view found, std::string_view expected) {
    error_ = "found '" + std::string(found) + "', expected: " + std::string(expected);
    return false;
  }

  bool ParseRequirement(Requirement& r) {
    Item item = Next(true);
    bool does_not_exist = false;
    if (item.tok == Tok::kNot) {
      does_not_exist = true;
      item = Next(true);
    }
    if (item.tok != Tok::kIdentifier) return Fail(item.lit, "identifier");
    r.key = std::string(item.lit);
    if (auto errs = IsQualifiedName(r.key); !errs.empty()) {
      error_ = FieldInvalid("key", r.key, Join(errs, "; "));
      return false;
    }
    const Tok after_key = Peek(true).tok;
    if (does_not_exist || after_key == Tok::kEnd || after_key == Tok::kComma) {
      // "!key" is complete here; anything after it fails in Parse().
      r.op = does_not_exist ? SelectorOp::kDoesNotExist : SelectorOp::kExists;
      return true;
    }
    const Item op = Next(false);
    switch (op.tok) {
      case Tok::kIn:
        r.op = SelectorOp::kIn;
        break;
      case Tok::kNotIn:
        r.op = SelectorOp::kNotIn;
        break;
      case Tok::kEquals:
      case Tok::kDoubleEquals:
        r.op = SelectorOp::kEquals;
        break;
      case Tok::kNotEquals:
        r.op = SelectorOp::kNotEquals;
        break;
      case Tok::kGreater:
        r.op = SelectorOp::kGt;
        break;
      case Tok::kLess:
        r.op = SelectorOp::kLt;
        break;
      default:
        return Fail(op.lit, "in, notin, =, ==, !=, gt, lt");
    }
    const bool ok = (r.op == SelectorOp::kIn || r.op == SelectorOp::kNotIn)
                        ? ParseValueSet(r.values)
                        : ParseExactValue(r.values);
    if (!ok) return false;
    std::vector<std::string> errs;
    CheckNewRequirement(r, "", errs);
    if (!errs.empty()) {
      error_ = Join(errs, "; ");
      return false;
    }
    return true;
  }

  // "(" [values] ")"; "()" is the single empty value.
  bool ParseValueSet(std::vector<std::string>& values) {
    const Item open = Next(true);
    if (open.tok != Tok::kOpenParen) return Fail(open.lit, "'('");
    const Item first = Peek(true);
    switch (first.tok) {
      case Tok::kIdentifier:
      case Tok::kComma: {
        std::set<std::string> set;
        if (!ParseIdentifierList(set)) return false;
        const Item close = Next(true);
        if (close.tok != Tok::kCloseParen) return Fail(close.lit, "')'");
        values.assign(set.begin(), set.end());
        return true;
      }
      case Tok::kCloseParen:
        Next(true);
        values.assign(1, "");
        return true;
      default:
        return Fail(first.lit, "',', ')' or identifier");
    }
  }

  // A possibly empty list of possibly empty identifiers: "a,,b", ",a", "a,".
  bool ParseIdentifierList(std::set<std::string>& set) {
    while (true) {
      const Item item = Next(true);
      switch (item.tok) {
        case Tok::kIdentifier: {
          set.emplace(item.lit);
          const Item after = Peek(true);
          if (after.tok == Tok::kComma) continue;
          if (after.tok == Tok::kCloseParen) return true;
          return Fail(after.lit, "',' or ')'");
        }
        case Tok::kComma: {
          if (set.empty()) set.emplace("");  // "(,"
          const Item after = Peek(true);
          if (after.tok == Tok::kCloseParen) {
            set.emplace("");  // ",)"
            return true;
          }
          if (after.tok == Tok::kComma) {
            Next(true);
            set.emplace("");  // ",,"
          }
          break;
        }
        default:
          return Fail(item.lit, "',', or identifier");
      }
    }
  }

  bool ParseExactValue(std::vector<std::string>& values) {
    const Item item = Peek(true);
    if (item.tok == Tok::kEnd || item.tok == Tok::kComma) {
      values.assign(1, "");
      return true;
    }
    Next(true);
    if (item.tok != Tok::kIdentifier) return Fail(item.lit, "identifier");
    values.assign(1, std::string(item.lit));
    return true;
  }

  std::vector<Item> items_;
  size_t pos_ = 0;
  std::string error_;
};

// ---------------------------------------------------------------------------
// pkg/fields helpers.

std::string EscapeFieldValue(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == ',' || c == '=') out += '\\';
    out += c;
  }
  return out;
}

// Splits on commas not preceded by an escaping backslash.
std::vector<std::string_view> SplitFieldTerms(std::string_view s) {
  std::vector<std::string_view> terms;
  if (s.empty()) return terms;
  size_t start = 0;
  bool escaped = false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (escaped) {
      escaped = false;
    } else if (s[i] == '\\') {
      escaped = true;
    } else if (s[i] == ',') {
      terms.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  terms.push_back(s.substr(start));
  return terms;
}

}  // namespace

// ---------------------------------------------------------------------------

Result<SelectorOp> ParseSelectorOp(std::string_view op) {
  static constexpr std::pair<std::string_view, SelectorOp> kOps[] = {
      {"In", SelectorOp::kIn},         {"NotIn", SelectorOp::kNotIn},
      {"Exists", SelectorOp::kExists}, {"DoesNotExist", SelectorOp::kDoesNotExist},
      {"Gt", SelectorOp::kGt},         {"Lt", SelectorOp::kLt},
  };
  for (const auto& [name, value] : kOps) {
    if (name == op) return value;
  }
  return InvalidError(
      "operator: Unsupported value: " + GoQuote(op) +
      ": supported values: \"In\", \"NotIn\", \"Exists\", \"DoesNotExist\", \"Gt\", \"Lt\"");
}

std::string_view SelectorOpName(SelectorOp op) noexcept {
  switch (op) {
    case SelectorOp::kEquals:
      return "=";
    case SelectorOp::kNotEquals:
      return "!=";
    case SelectorOp::kIn:
      return "In";
    case SelectorOp::kNotIn:
      return "NotIn";
    case SelectorOp::kExists:
      return "Exists";
    case SelectorOp::kDoesNotExist:
      return "DoesNotExist";
    case SelectorOp::kGt:
      return "Gt";
    case SelectorOp::kLt:
      return "Lt";
  }
  return "?";
}

bool Requirement::Matches(const Labels& labels) const noexcept {
  const auto it = labels.find(key);
  const bool present = it != labels.end();
  const auto listed = [&] {
    return std::find(values.begin(), values.end(), it->second) != values.end();
  };
  switch (op) {
    case SelectorOp::kEquals:
    case SelectorOp::kIn:
      return present && listed();
    case SelectorOp::kNotEquals:
    case SelectorOp::kNotIn:
      return !present || !listed();
    case SelectorOp::kExists:
      return present;
    case SelectorOp::kDoesNotExist:
      return !present;
    case SelectorOp::kGt:
    case SelectorOp::kLt: {
      int64_t have;
      int64_t want;
      if (!present || values.size() != 1 || !ParseInt64(it->second, have) ||
          !ParseInt64(values[0], want)) {
        return false;
      }
      return op == SelectorOp::kGt ? have > want : have < want;
    }
  }
  return false;
}

std::string Requirement::ToString() const {
  std::string out;
  if (op == SelectorOp::kDoesNotExist) out += '!';
  out += key;
  switch (op) {
    case SelectorOp::kExists:
    case SelectorOp::kDoesNotExist:
      return out;
    case SelectorOp::kEquals:
      out += '=';
      break;
    case SelectorOp::kNotEquals:
      out += "!=";
      break;
    case SelectorOp::kIn:
      out += " in (";
      break;
    case SelectorOp::kNotIn:
      out += " notin (";
      break;
    case SelectorOp::kGt:
      out += '>';
      break;
    case SelectorOp::kLt:
      out += '<';
      break;
  }
  std::vector<std::string> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  out += Join(sorted, ",");
  if (op == SelectorOp::kIn || op == SelectorOp::kNotIn) out += ')';
  return out;
}

Status ValidateQualifiedName(std::string_view name) {
  if (auto errs = IsQualifiedName(name); !errs.empty()) {
    return InvalidError("invalid qualified name " + GoQuote(name) + ": " + Join(errs, "; "));
  }
  return Status::Ok();
}

Status ValidateLabelKey(std::string_view key) {
  if (auto errs = IsQualifiedName(key); !errs.empty()) {
    return InvalidError("invalid label key " + GoQuote(key) + ": " + Join(errs, "; "));
  }
  return Status::Ok();
}

Status ValidateLabelValue(std::string_view value) {
  if (auto errs = IsValidLabelValue(value); !errs.empty()) {
    return InvalidError("invalid label value " + GoQuote(value) + ": " + Join(errs, "; "));
  }
  return Status::Ok();
}

Status ValidateDns1123Subdomain(std::string_view name) {
  if (auto errs = IsDns1123Subdomain(name); !errs.empty()) {
    return InvalidError("invalid DNS subdomain " + GoQuote(name) + ": " + Join(errs, "; "));
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------

LabelSelector LabelSelector::Nothing() {
  LabelSelector s;
  s.nothing_ = true;
  return s;
}

Result<LabelSelector> LabelSelector::Parse(std::string_view text) {
  SelectorParser parser(text);
  LabelSelector selector;
  if (!parser.Parse(selector.requirements_)) {
    return InvalidError("invalid label selector " + GoQuote(text) + ": " + parser.error());
  }
  SortByKey(selector.requirements_);
  return selector;
}

Result<LabelSelector> LabelSelector::FromParts(const Labels& match_labels,
                                               std::vector<Requirement> match_expressions) {
  std::vector<std::string> errs;
  for (const auto& [key, value] : match_labels) {
    if (auto key_errs = IsQualifiedName(key); !key_errs.empty()) {
      errs.push_back(FieldInvalid("matchLabels", key, Join(key_errs, "; ")));
    }
    if (auto value_errs = IsValidLabelValue(value); !value_errs.empty()) {
      errs.push_back(FieldInvalid("matchLabels", value, Join(value_errs, "; ")));
    }
  }
  for (size_t i = 0; i < match_expressions.size(); ++i) {
    const Requirement& r = match_expressions[i];
    const std::string path = Indexed("matchExpressions", i);
    switch (r.op) {
      case SelectorOp::kIn:
      case SelectorOp::kNotIn:
        if (r.values.empty()) {
          errs.push_back(FieldRequired(path + ".values",
                                       "must be specified when `operator` is 'In' or 'NotIn'"));
        }
        break;
      case SelectorOp::kExists:
      case SelectorOp::kDoesNotExist:
        if (!r.values.empty()) {
          errs.push_back(
              FieldForbidden(path + ".values",
                             "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
        }
        break;
      default:
        errs.push_back(FieldInvalid(path + ".operator", SelectorOpName(r.op),
                                    "not a valid selector operator"));
        break;
    }
    CheckKey(r.key, path + ".key", errs);
    CheckValues(r.values, path + ".values", errs);
  }
  if (!errs.empty()) return InvalidError("invalid label selector: " + Join(errs, "; "));

  LabelSelector selector;
  selector.requirements_.reserve(match_labels.size() + match_expressions.size());
  for (const auto& [key, value] : match_labels) {
    selector.requirements_.push_back(Requirement{key, SelectorOp::kEquals, {value}});
  }
  for (Requirement& r : match_expressions) {
    if (r.op == SelectorOp::kIn || r.op == SelectorOp::kNotIn) SortAndDedupe(r.values);
    selector.requirements_.push_back(std::move(r));
  }
  SortByKey(selector.requirements_);
  return selector;
}

bool LabelSelector::Matches(const Labels& labels) const noexcept {
  if (nothing_) return false;
  return std::all_of(requirements_.begin(), requirements_.end(),
                     [&](const Requirement& r) { return r.Matches(labels); });
}

std::string LabelSelector::ToString() const {
  std::string out;
  for (size_t i = 0; i < requirements_.size(); ++i) {
    if (i > 0) out += ',';
    out += requirements_[i].ToString();
  }
  return out;
}

// ---------------------------------------------------------------------------

bool NodeSelectorTerm::Matches(const Labels& node_labels,
                               std::string_view node_name) const noexcept {
  if (match_expressions.empty() && match_fields.empty()) return false;
  // A term that kube-scheduler cannot turn into selectors matches nothing.
  if (!std::all_of(match_expressions.begin(), match_expressions.end(), IsUsableLabelRequirement) ||
      !std::all_of(match_fields.begin(), match_fields.end(), IsUsableFieldRequirement)) {
    return false;
  }
  for (const Requirement& r : match_expressions) {
    if (!r.Matches(node_labels)) return false;
  }
  if (node_name.empty()) return true;  // no fields to match against
  for (const Requirement& r : match_fields) {
    const std::string_view value = r.key == kMetadataNameField ? node_name : std::string_view();
    const bool equal = value == r.values[0];
    if (r.op == SelectorOp::kIn ? !equal : equal) return false;
  }
  return true;
}

Status NodeSelectorTerm::Validate() const {
  std::vector<std::string> errs;
  for (size_t i = 0; i < match_expressions.size(); ++i) {
    const Requirement& r = match_expressions[i];
    const std::string path = Indexed("matchExpressions", i);
    switch (r.op) {
      case SelectorOp::kIn:
      case SelectorOp::kNotIn:
        if (r.values.empty()) {
          errs.push_back(FieldRequired(path + ".values",
                                       "must be specified when `operator` is 'In' or 'NotIn'"));
        }
        break;
      case SelectorOp::kExists:
      case SelectorOp::kDoesNotExist:
        if (!r.values.empty()) {
          errs.push_back(
              FieldForbidden(path + ".values",
                             "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
        }
        break;
      case SelectorOp::kGt:
      case SelectorOp::kLt:
        if (r.values.size() != 1) {
          errs.push_back(FieldRequired(
              path + ".values", "must be specified single value when `operator` is 'Lt' or 'Gt'"));
        } else if (int64_t ignored; !ParseInt64(r.values[0], ignored)) {
          errs.push_back(FieldInvalid(path + ".values[0]", r.values[0],
                                      "for 'Gt', 'Lt' operators, the value must be an integer"));
        }
        break;
      case SelectorOp::kEquals:
      case SelectorOp::kNotEquals:
        errs.push_back(FieldInvalid(path + ".operator", SelectorOpName(r.op),
                                    "not a valid selector operator"));
        break;
    }
    CheckKey(r.key, path + ".key", errs);
    CheckValues(r.values, path + ".values", errs);
  }
  for (size_t i = 0; i < match_fields.size(); ++i) {
    const Requirement& r = match_fields[i];
    const std::string path = Indexed("matchFields", i);
    if (r.op == SelectorOp::kIn || r.op == SelectorOp::kNotIn) {
      if (r.values.size() != 1) {
        errs.push_back(FieldRequired(
            path + ".values",
            "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"));
      }
    } else {
      errs.push_back(
          FieldInvalid(path + ".operator", SelectorOpName(r.op), "not a valid selector operator"));
    }
    if (r.key != kMetadataNameField) {
      errs.push_back(FieldInvalid(path + ".key", r.key, "not a valid field selector key"));
    } else {
      for (size_t j = 0; j < r.values.size(); ++j) {
        for (const std::string& e : IsDns1123Subdomain(r.values[j])) {
          errs.push_back(FieldInvalid(Indexed(path + ".values", j), r.values[j], e));
        }
      }
    }
  }
  if (!errs.empty()) return InvalidError("invalid node selector term: " + Join(errs, "; "));
  return Status::Ok();
}

bool NodeSelector::Matches(const Labels& node_labels, std::string_view node_name) const noexcept {
  return std::any_of(terms.begin(), terms.end(),
                     [&](const NodeSelectorTerm& t) { return t.Matches(node_labels, node_name); });
}

// ---------------------------------------------------------------------------

Result<FieldSelector> FieldSelector::Parse(std::string_view text) {
  std::vector<std::string_view> parts = SplitFieldTerms(text);
  std::sort(parts.begin(), parts.end());
  const auto fail = [&](std::string why) {
    return InvalidError("invalid field selector " + GoQuote(text) + ": " + std::move(why));
  };
  FieldSelector selector;
  for (std::string_view part : parts) {
    if (part.empty()) continue;
    // The first operator from the left wins; "!=" and "==" before "=".
    size_t at = std::string_view::npos;
    size_t op_len = 0;
    bool negated = false;
    for (size_t i = 0; i < part.size() && at == std::string_view::npos; ++i) {
      const std::string_view rest = part.substr(i);
      if (rest.starts_with("!=") || rest.starts_with("==")) {
        at = i;
        op_len = 2;
        negated = rest[0] == '!';
      } else if (rest.starts_with("=")) {
        at = i;
        op_len = 1;
      }
    }
    if (at == std::string_view::npos) return fail("can't understand " + GoQuote(part));
    Term term;
    term.field = std::string(part.substr(0, at));
    term.negated = negated;
    const std::string_view raw = part.substr(at + op_len);
    bool escaped = false;
    for (char c : raw) {
      if (escaped) {
        if (c != '\\' && c != ',' && c != '=') {
          return fail(std::string("invalid escape sequence: \\") + c + " in " + GoQuote(part));
        }
        term.value += c;
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == ',' || c == '=') {
        return fail(std::string("unescaped character in value: ") + c + " in " + GoQuote(part));
      } else {
        term.value += c;
      }
    }
    if (escaped) return fail("invalid escape sequence: \\ at the end of " + GoQuote(part));
    selector.terms_.push_back(std::move(term));
  }
  // The parts were sorted as text (as kube does, so errors name the same
  // part), where "p==x" sorts before "p=a" and after "p=" + anything below
  // '='. Order the parsed terms too, so that ToString's output parses back
  // to the same selector (found by tests/fuzz/selector_fuzz.cc).
  std::stable_sort(
      selector.terms_.begin(), selector.terms_.end(), [](const Term& a, const Term& b) {
        return std::tie(a.field, a.negated, a.value) < std::tie(b.field, b.negated, b.value);
      });
  return selector;
}

bool FieldSelector::Matches(
    const std::function<std::optional<std::string>(std::string_view field)>& get) const {
  for (const Term& term : terms_) {
    const std::optional<std::string> value = get(term.field);
    const bool equal = value ? *value == term.value : term.value.empty();
    if (term.negated ? equal : !equal) return false;
  }
  return true;
}

std::string FieldSelector::ToString() const {
  std::string out;
  for (size_t i = 0; i < terms_.size(); ++i) {
    if (i > 0) out += ',';
    out += terms_[i].field;
    out += terms_[i].negated ? "!=" : "=";
    out += EscapeFieldValue(terms_[i].value);
  }
  return out;
}

}  // namespace copse
