#include "apiserver/selector.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace copse::apiserver {

Error BadRequest(std::string message) {
  Error error = MakeError(ErrorCode::kInvalid, std::move(message));
  error.http_status = 400;
  error.reason = "BadRequest";
  return error;
}

namespace {

bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// Label names/values: at most 63 characters, alphanumerics at both ends,
// '-', '_', '.' inside. Values may be empty.
bool IsLabelName(std::string_view s, bool allow_empty) {
  if (s.empty()) return allow_empty;
  if (s.size() > 63) return false;
  if (!IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return IsAlnum(c) || c == '-' || c == '_' || c == '.'; });
}

bool IsDnsSubdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  if (!IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (std::islower(static_cast<unsigned char>(c)) != 0) ||
           (std::isdigit(static_cast<unsigned char>(c)) != 0) || c == '-' || c == '.';
  });
}

std::string CheckKey(std::string_view key) {
  std::string_view name = key;
  const size_t slash = key.find('/');
  if (slash != std::string_view::npos) {
    if (!IsDnsSubdomain(key.substr(0, slash))) {
      return "prefix part must be a lowercase RFC 1123 subdomain";
    }
    name = key.substr(slash + 1);
  }
  if (!IsLabelName(name, false)) {
    return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start "
           "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
           "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
  }
  return {};
}

bool IsIdentChar(char c) {
  return !(c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == '=' || c == '!' ||
           c == '(' || c == ')' || c == '<' || c == '>');
}

class LabelParser {
 public:
  explicit LabelParser(std::string_view text) : text_(text) {}

  Result<std::vector<LabelRequirement>> Parse() {
    std::vector<LabelRequirement> out;
    SkipSpace();
    if (pos_ == text_.size()) return out;
    while (true) {
      auto req = ParseRequirement();
      if (!req.ok()) return std::move(req).error();
      out.push_back(std::move(req).value());
      SkipSpace();
      if (pos_ == text_.size()) break;
      if (text_[pos_] != ',')
        return Fail("found '" + Token() + "', expected: ',' or 'end of string'");
      ++pos_;
      SkipSpace();
      if (pos_ == text_.size()) return Fail("found '', expected: identifier");
    }
    return out;
  }

 private:
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }
  std::string_view Ident() {
    const size_t start = pos_;
    while (pos_ < text_.size() && IsIdentChar(text_[pos_])) ++pos_;
    return text_.substr(start, pos_ - start);
  }
  std::string Token() const {
    if (pos_ >= text_.size()) return "";
    size_t end = pos_;
    while (end < text_.size() && IsIdentChar(text_[end])) ++end;
    if (end == pos_) end = pos_ + 1;
    return std::string(text_.substr(pos_, end - pos_));
  }
  static Error Fail(std::string what) { return BadRequest("unable to parse requirement: " + what); }

  Result<LabelRequirement> ParseRequirement() {
    LabelRequirement req;
    SkipSpace();
    bool negated_exists = false;
    if (pos_ < text_.size() && text_[pos_] == '!') {
      negated_exists = true;
      ++pos_;
      SkipSpace();
    }
    std::string_view key = Ident();
    if (key.empty()) return Fail("found '" + Token() + "', expected: identifier");
    if (std::string problem = CheckKey(key); !problem.empty()) {
      return Fail("key: Invalid value: \"" + std::string(key) + "\": " + problem);
    }
    req.key = std::string(key);
    SkipSpace();
    if (negated_exists) {
      req.op = LabelRequirement::Op::kDoesNotExist;
      return req;
    }
    if (pos_ == text_.size() || text_[pos_] == ',') {
      req.op = LabelRequirement::Op::kExists;
      return req;
    }
    const char c = text_[pos_];
    if (c == '=' || c == '!' || c == '<' || c == '>') {
      if (c == '=') {
        pos_ += (pos_ + 1 < text_.size() && text_[pos_ + 1] == '=') ? 2 : 1;
        req.op = LabelRequirement::Op::kEquals;
      } else if (c == '!') {
        if (pos_ + 1 >= text_.size() || text_[pos_ + 1] != '=') {
          return Fail("found '!', expected: '=', '!=', '==', 'in', notin'");
        }
        pos_ += 2;
        req.op = LabelRequirement::Op::kNotEquals;
      } else {
        ++pos_;
        req.op = c == '<' ? LabelRequirement::Op::kLt : LabelRequirement::Op::kGt;
      }
      SkipSpace();
      std::string_view value = Ident();
      if (req.op == LabelRequirement::Op::kLt || req.op == LabelRequirement::Op::kGt) {
        int64_t parsed = 0;
        auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
        if (value.empty() || ec != std::errc() || p != value.data() + value.size()) {
          return Fail("for 'Gt', 'Lt' operators, the value must be an integer");
        }
      } else if (!IsLabelName(value, true)) {
        return Fail("values[0][" + req.key + "]: Invalid value: \"" + std::string(value) +
                    "\": a valid label must be an empty string or consist of alphanumeric "
                    "characters, '-', '_' or '.', and must start and end with an alphanumeric "
                    "character");
      }
      req.values.emplace_back(value);
      return req;
    }
    std::string_view word = Ident();
    if (word == "in") {
      req.op = LabelRequirement::Op::kIn;
    } else if (word == "notin") {
      req.op = LabelRequirement::Op::kNotIn;
    } else {
      return Fail("found '" + std::string(word) + "', expected: '=', '!=', '==', 'in', notin'");
    }
    SkipSpace();
    if (pos_ >= text_.size() || text_[pos_] != '(') {
      return Fail("found '" + Token() + "', expected: '('");
    }
    ++pos_;
    while (true) {
      SkipSpace();
      std::string_view value = Ident();
      if (!IsLabelName(value, true)) {
        return Fail("values[" + std::to_string(req.values.size()) + "][" + req.key +
                    "]: Invalid value: \"" + std::string(value) + "\": a valid label must be " +
                    "an empty string or consist of alphanumeric characters, '-', '_' or '.'");
      }
      req.values.emplace_back(value);
      SkipSpace();
      if (pos_ >= text_.size()) return Fail("found '', expected: ',' or ')'");
      if (text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (text_[pos_] == ')') {
        ++pos_;
        break;
      }
      return Fail("found '" + Token() + "', expected: ',' or ')'");
    }
    std::sort(req.values.begin(), req.values.end());
    return req;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

bool ParseInt(std::string_view s, int64_t* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return !s.empty() && ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

bool LabelRequirement::Matches(const Labels& labels) const noexcept {
  auto it = labels.find(key);
  const bool present = it != labels.end();
  switch (op) {
    case Op::kEquals:
      return present && it->second == values.front();
    case Op::kNotEquals:
      return !present || it->second != values.front();
    case Op::kIn:
      return present && std::find(values.begin(), values.end(), it->second) != values.end();
    case Op::kNotIn:
      return !present || std::find(values.begin(), values.end(), it->second) == values.end();
    case Op::kExists:
      return present;
    case Op::kDoesNotExist:
      return !present;
    case Op::kGt:
    case Op::kLt: {
      if (!present) return false;
      int64_t have = 0;
      int64_t want = 0;
      if (!ParseInt(it->second, &have) || !ParseInt(values.front(), &want)) return false;
      return op == Op::kGt ? have > want : have < want;
    }
  }
  return false;
}

bool LabelSelectorExpr::Matches(const Labels& labels) const noexcept {
  for (const auto& req : requirements_) {
    if (!req.Matches(labels)) return false;
  }
  return true;
}

Result<LabelSelectorExpr> ParseLabelSelector(std::string_view text) {
  auto reqs = LabelParser(text).Parse();
  if (!reqs.ok()) return std::move(reqs).error();
  return LabelSelectorExpr(std::move(reqs).value());
}

bool FieldSelectorExpr::Matches(std::string_view ns, std::string_view name,
                                const std::vector<std::string>& fields) const noexcept {
  for (const auto& term : terms_) {
    std::string_view have;
    if (term.index >= 0) {
      if (static_cast<size_t>(term.index) < fields.size()) have = fields[term.index];
    } else if (term.field == "metadata.name") {
      have = name;
    } else {
      have = ns;
    }
    if ((have == term.value) == term.negated) return false;
  }
  return true;
}

Result<FieldSelectorExpr> ParseFieldSelector(std::string_view text) {
  FieldSelectorExpr out;
  // Split on unescaped ','; values may escape '\', ',' and '='.
  size_t start = 0;
  auto parse_term = [&](std::string_view part) -> Status {
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
    if (part.empty()) return Status::Ok();
    FieldTerm term;
    size_t op = std::string_view::npos;
    size_t op_len = 0;
    for (size_t i = 0; i < part.size(); ++i) {
      if (part[i] == '\\') {
        ++i;
        continue;
      }
      if (part[i] == '!' && i + 1 < part.size() && part[i + 1] == '=') {
        op = i;
        op_len = 2;
        term.negated = true;
        break;
      }
      if (part[i] == '=') {
        op = i;
        op_len = (i + 1 < part.size() && part[i + 1] == '=') ? 2 : 1;
        break;
      }
    }
    if (op == std::string_view::npos || op == 0) {
      return BadRequest("invalid selector: '" + std::string(text) + "'; can't understand '" +
                        std::string(part) + "'");
    }
    term.field = std::string(part.substr(0, op));
    while (!term.field.empty() && term.field.back() == ' ') term.field.pop_back();
    std::string_view raw = part.substr(op + op_len);
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '\\' && i + 1 < raw.size()) ++i;
      term.value += raw[i];
    }
    out.terms_.push_back(std::move(term));
    return Status::Ok();
  };
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] == '\\') {
      ++i;
      continue;
    }
    if (i == text.size() || text[i] == ',') {
      if (Status s = parse_term(text.substr(start, i - start)); !s.ok()) return s.error();
      start = i + 1;
    }
  }
  return out;
}

}  // namespace copse::apiserver
