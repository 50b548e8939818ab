#include "apiserver/jsonpath.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <utility>

namespace copse::apiserver {

using json = nlohmann::json;

struct JsonPath::Step {
  enum class Kind { kField, kIndex, kWildcard, kFilter };
  Kind kind = Kind::kField;
  std::string field;                     // kField
  int64_t index = 0;                     // kIndex
  std::vector<std::string> filter_path;  // kFilter: fields after "@"
  std::string op;                        // kFilter: "" (exists), ==, !=, <, <=, >, >=
  json literal;                          // kFilter: right-hand side
};

namespace {

Error PathError(std::string_view path, size_t pos, std::string_view what) {
  return Error{ErrorCode::kInvalid,
               "invalid JSONPath " + json(std::string(path)).dump() + " at position " +
                   std::to_string(pos) + ": " + std::string(what),
               400, "BadRequest"};
}

bool IsFieldChar(char c) {
  return c != '.' && c != '[' && c != ']' && c != '{' && c != '}' && c != ' ' && c != '(' &&
         c != ')' && c != '=' && c != '!' && c != '<' && c != '>' && c != '\'' && c != '"';
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Status Parse(std::vector<JsonPath::Step>& steps);

 private:
  Status ParseSteps(std::vector<JsonPath::Step>& steps, bool in_filter);
  Status ParseBracket(std::vector<JsonPath::Step>& steps);
  Status ParseFilter(JsonPath::Step& step);
  Result<json> ParseLiteral();
  Result<std::string> ParseQuoted();
  void SkipSpaces() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }

  std::string_view text_;
  size_t pos_ = 0;
};

Status Parser::Parse(std::vector<JsonPath::Step>& steps) {
  // Optional template braces: "{.spec.replicas}".
  std::string_view inner = text_;
  while (!inner.empty() && inner.front() == ' ') inner.remove_prefix(1);
  while (!inner.empty() && inner.back() == ' ') inner.remove_suffix(1);
  if (!inner.empty() && inner.front() == '{') {
    if (inner.back() != '}') return PathError(text_, text_.size(), "missing closing '}'");
    inner = inner.substr(1, inner.size() - 2);
  }
  text_ = inner;
  pos_ = 0;
  if (text_.empty()) return PathError(text_, 0, "empty path");
  if (Peek() == '$') ++pos_;
  if (Status s = ParseSteps(steps, false); !s.ok()) return s;
  if (!AtEnd()) return PathError(text_, pos_, "unexpected character");
  return Status::Ok();
}

Status Parser::ParseSteps(std::vector<JsonPath::Step>& steps, bool in_filter) {
  while (!AtEnd()) {
    const char c = Peek();
    if (c == '.') {
      ++pos_;
      if (Peek() == '.') return PathError(text_, pos_, "recursive descent is not supported");
      if (Peek() == '*') {
        ++pos_;
        steps.push_back(JsonPath::Step{JsonPath::Step::Kind::kWildcard});
        continue;
      }
      const size_t start = pos_;
      while (!AtEnd() && IsFieldChar(Peek())) ++pos_;
      if (pos_ == start) {
        // A trailing "." selects the current value (".").
        if (AtEnd() || Peek() == ']' || Peek() == ')' || Peek() == ' ') continue;
        return PathError(text_, pos_, "expected a field name");
      }
      JsonPath::Step step;
      step.kind = JsonPath::Step::Kind::kField;
      step.field = std::string(text_.substr(start, pos_ - start));
      steps.push_back(std::move(step));
    } else if (c == '[') {
      if (Status s = ParseBracket(steps); !s.ok()) return s;
    } else if (in_filter) {
      return Status::Ok();  // the operator follows
    } else {
      return PathError(text_, pos_, "expected '.' or '['");
    }
  }
  return Status::Ok();
}

Result<std::string> Parser::ParseQuoted() {
  const char quote = Peek();
  ++pos_;
  std::string out;
  while (!AtEnd() && Peek() != quote) {
    if (Peek() == '\\' && pos_ + 1 < text_.size()) ++pos_;
    out += text_[pos_++];
  }
  if (AtEnd()) return PathError(text_, pos_, "unterminated string");
  ++pos_;
  return out;
}

Status Parser::ParseBracket(std::vector<JsonPath::Step>& steps) {
  ++pos_;  // '['
  SkipSpaces();
  JsonPath::Step step;
  const char c = Peek();
  if (c == '*') {
    ++pos_;
    step.kind = JsonPath::Step::Kind::kWildcard;
  } else if (c == '\'' || c == '"') {
    Result<std::string> name = ParseQuoted();
    if (!name.ok()) return name.error();
    step.kind = JsonPath::Step::Kind::kField;
    step.field = std::move(*name);
  } else if (c == '?') {
    ++pos_;
    if (Status s = ParseFilter(step); !s.ok()) return s;
  } else if (c == '-' || (c >= '0' && c <= '9')) {
    const size_t start = pos_;
    if (c == '-') ++pos_;
    while (!AtEnd() && Peek() >= '0' && Peek() <= '9') ++pos_;
    const std::string_view digits = text_.substr(start, pos_ - start);
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec != std::errc() || ptr != digits.data() + digits.size()) {
      return PathError(text_, start, "bad array index");
    }
    SkipSpaces();
    if (Peek() == ':' || Peek() == ',') {
      return PathError(text_, pos_, "array slices and unions are not supported");
    }
    step.kind = JsonPath::Step::Kind::kIndex;
    step.index = value;
  } else {
    return PathError(text_, pos_, "unsupported bracket expression");
  }
  SkipSpaces();
  if (Peek() != ']') return PathError(text_, pos_, "expected ']'");
  ++pos_;
  steps.push_back(std::move(step));
  return Status::Ok();
}

Result<json> Parser::ParseLiteral() {
  SkipSpaces();
  const char c = Peek();
  if (c == '\'' || c == '"') {
    Result<std::string> s = ParseQuoted();
    if (!s.ok()) return s.error();
    return json(std::move(*s));
  }
  const size_t start = pos_;
  while (!AtEnd() && Peek() != ')' && Peek() != ' ') ++pos_;
  const std::string_view word = text_.substr(start, pos_ - start);
  if (word == "true") return json(true);
  if (word == "false") return json(false);
  if (word == "nil" || word == "null") return json(nullptr);
  json number = json::parse(word.begin(), word.end(), nullptr, false);
  if (!number.is_number()) return PathError(text_, start, "expected a literal");
  return number;
}

Status Parser::ParseFilter(JsonPath::Step& step) {
  step.kind = JsonPath::Step::Kind::kFilter;
  if (Peek() != '(') return PathError(text_, pos_, "expected '(' after '?'");
  ++pos_;
  SkipSpaces();
  if (Peek() != '@') return PathError(text_, pos_, "filter must start with '@'");
  ++pos_;
  std::vector<JsonPath::Step> path;
  if (Status s = ParseSteps(path, true); !s.ok()) return s;
  for (const auto& p : path) {
    if (p.kind != JsonPath::Step::Kind::kField) {
      return PathError(text_, pos_, "filter paths may only name fields");
    }
    step.filter_path.push_back(p.field);
  }
  SkipSpaces();
  if (Peek() == ')') {
    ++pos_;
    return Status::Ok();
  }
  static constexpr std::string_view kOps[] = {"==", "!=", "<=", ">=", "<", ">"};
  for (std::string_view op : kOps) {
    if (text_.substr(pos_, op.size()) == op) {
      step.op = std::string(op);
      pos_ += op.size();
      break;
    }
  }
  if (step.op.empty()) return PathError(text_, pos_, "expected a comparison operator");
  Result<json> literal = ParseLiteral();
  if (!literal.ok()) return literal.error();
  step.literal = std::move(*literal);
  SkipSpaces();
  if (Peek() != ')') return PathError(text_, pos_, "expected ')'");
  ++pos_;
  return Status::Ok();
}

bool Truthy(const json& v) {
  if (v.is_null()) return false;
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_string()) return !v.get_ref<const std::string&>().empty();
  if (v.is_number()) return v.get<double>() != 0;
  return !v.empty();
}

bool Compare(const json& left, const std::string& op, const json& right) {
  int cmp = 0;
  if (left.is_number() && right.is_number()) {
    const double l = left.get<double>();
    const double r = right.get<double>();
    cmp = l < r ? -1 : (l > r ? 1 : 0);
  } else if (left.is_string() && right.is_string()) {
    const auto& l = left.get_ref<const std::string&>();
    const auto& r = right.get_ref<const std::string&>();
    cmp = l.compare(r) < 0 ? -1 : (l.compare(r) > 0 ? 1 : 0);
  } else if (op == "==" || op == "!=") {
    const bool eq = left == right;
    return op == "==" ? eq : !eq;
  } else {
    return false;
  }
  if (op == "==") return cmp == 0;
  if (op == "!=") return cmp != 0;
  if (op == "<") return cmp < 0;
  if (op == "<=") return cmp <= 0;
  if (op == ">") return cmp > 0;
  return cmp >= 0;
}

bool FilterMatches(const JsonPath::Step& step, const json& item) {
  const json* v = &item;
  for (const std::string& f : step.filter_path) {
    if (!v->is_object()) return false;
    auto it = v->find(f);
    if (it == v->end()) return false;
    v = &*it;
  }
  if (step.op.empty()) return Truthy(*v);
  return Compare(*v, step.op, step.literal);
}

// fmt.Fprint of a float64: strconv.FormatFloat(f, 'g', -1, 64), which
// switches to an exponent for exponents < -4 or >= 6 ("1e+06", "0.5").
std::string GoFloat(double f) {
  if (std::isnan(f)) return "NaN";
  if (std::isinf(f)) return f > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), f, std::chars_format::scientific);
  if (ec != std::errc()) return std::to_string(f);
  std::string sci(buf, end);  // "d.ddde±XX"
  const size_t e = sci.find('e');
  std::string mantissa = sci.substr(0, e);
  const int exp = std::stoi(sci.substr(e + 1));
  bool negative = false;
  if (!mantissa.empty() && mantissa[0] == '-') {
    negative = true;
    mantissa.erase(0, 1);
  }
  std::string digits;
  for (char c : mantissa) {
    if (c != '.') digits += c;
  }
  std::string out = negative ? "-" : "";
  if (exp < -4 || exp >= 6) {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char exp_buf[16];
    std::snprintf(exp_buf, sizeof(exp_buf), "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    return out + exp_buf;
  }
  if (exp < 0) {
    return out + "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
  }
  const size_t int_digits = static_cast<size_t>(exp) + 1;
  if (digits.size() <= int_digits) {
    return out + digits + std::string(int_digits - digits.size(), '0');
  }
  return out + digits.substr(0, int_digits) + "." + digits.substr(int_digits);
}

}  // namespace

JsonPath::JsonPath() = default;
JsonPath::JsonPath(JsonPath&&) noexcept = default;
JsonPath& JsonPath::operator=(JsonPath&&) noexcept = default;
JsonPath::JsonPath(const JsonPath&) = default;
JsonPath& JsonPath::operator=(const JsonPath&) = default;
JsonPath::~JsonPath() = default;

Result<JsonPath> JsonPath::Parse(std::string_view path) {
  JsonPath out;
  out.text_ = std::string(path);
  Parser parser(path);
  if (Status s = parser.Parse(out.steps_); !s.ok()) return s.error();
  return out;
}

std::vector<const nlohmann::json*> JsonPath::Find(const nlohmann::json& root) const {
  std::vector<const json*> current{&root};
  std::vector<const json*> next;
  for (const Step& step : steps_) {
    next.clear();
    for (const json* node : current) {
      switch (step.kind) {
        case Step::Kind::kField:
          if (node->is_object()) {
            auto it = node->find(step.field);
            if (it != node->end()) next.push_back(&*it);
          }
          break;
        case Step::Kind::kIndex:
          if (node->is_array()) {
            const auto size = static_cast<int64_t>(node->size());
            const int64_t i = step.index < 0 ? size + step.index : step.index;
            if (i >= 0 && i < size) next.push_back(&(*node)[static_cast<size_t>(i)]);
          }
          break;
        case Step::Kind::kWildcard:
          if (node->is_array() || node->is_object()) {
            for (const json& child : *node) next.push_back(&child);
          }
          break;
        case Step::Kind::kFilter:
          if (node->is_array()) {
            for (const json& child : *node) {
              if (FilterMatches(step, child)) next.push_back(&child);
            }
          }
          break;
      }
    }
    current.swap(next);
    if (current.empty()) break;
  }
  return current;
}

std::string JsonPathText(const nlohmann::json& value) {
  switch (value.type()) {
    case json::value_t::string:
      return value.get<std::string>();
    case json::value_t::number_float:
      return GoFloat(value.get<double>());
    case json::value_t::null:
      return "null";
    default:
      return value.dump();  // integers, bools, compact JSON for objects and arrays
  }
}

namespace json_fields {

const nlohmann::json& Get(const nlohmann::json& obj, std::initializer_list<std::string_view> path) {
  static const nlohmann::json kNull;
  const nlohmann::json* v = &obj;
  for (std::string_view key : path) {
    if (!v->is_object()) return kNull;
    auto it = v->find(key);
    if (it == v->end()) return kNull;
    v = &*it;
  }
  return *v;
}

std::string Str(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : std::string();
}

const nlohmann::json& Arr(const nlohmann::json& v) {
  static const nlohmann::json kEmpty = nlohmann::json::array();
  return v.is_array() ? v : kEmpty;
}

}  // namespace json_fields

}  // namespace copse::apiserver
