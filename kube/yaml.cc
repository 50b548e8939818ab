#include "kube/yaml.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <utility>

#include "core/json_text.h"
#include "core/yaml_documents.h"

namespace copse::kube {

namespace {

constexpr size_t kMaxDepth = 512;
// Aliases make a small document expand without bound; real manifests are
// far below this.
constexpr size_t kMaxNodes = 1'000'000;

constexpr std::string_view kCoreTag = "tag:yaml.org,2002:";

using U128 = unsigned __int128;

// A plain scalar as go-yaml v2 resolves it.
struct Resolved {
  enum class Kind : uint8_t { kNull, kBool, kInt, kFloat, kString };
  Kind kind = Kind::kString;
  bool boolean = false;
  std::string number;  // kInt: decimal digits (with '-'); the exact value of any size
  double real = 0;     // kFloat
};

bool Lower(char c, char lower) noexcept { return c == lower || c == lower - 'a' + 'A'; }

int DigitValue(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'z') return c - 'a' + 10;
  if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
  return 99;
}

// The digits and base of an integer as strconv.ParseUint(s, 0, 64) and
// big.Int.SetString(s, 0) read it (after an optional sign): 0x/0o/0b
// prefixes, a leading 0 for octal. False on a syntax error.
bool SplitGoInteger(std::string_view s, int& base, std::string_view& digits) noexcept {
  if (s.empty()) return false;
  base = 10;
  if (s[0] == '0') {
    if (s.size() >= 3 && Lower(s[1], 'b')) {
      base = 2;
      s.remove_prefix(2);
    } else if (s.size() >= 3 && Lower(s[1], 'o')) {
      base = 8;
      s.remove_prefix(2);
    } else if (s.size() >= 3 && Lower(s[1], 'x')) {
      base = 16;
      s.remove_prefix(2);
    } else {
      base = 8;
      s.remove_prefix(1);  // "0" alone is 0
    }
  }
  for (char c : s) {
    if (DigitValue(c) >= base) return false;
  }
  digits = s;
  return true;
}

// Decimal text of `digits` in `base` (any length).
std::string ToDecimal(std::string_view digits, int base) {
  std::vector<uint8_t> decimal{0};  // little-endian decimal digits
  for (char c : digits) {
    uint32_t carry = static_cast<uint32_t>(DigitValue(c));
    for (uint8_t& d : decimal) {
      const uint32_t v = d * static_cast<uint32_t>(base) + carry;
      d = static_cast<uint8_t>(v % 10);
      carry = v / 10;
    }
    while (carry > 0) {
      decimal.push_back(static_cast<uint8_t>(carry % 10));
      carry /= 10;
    }
  }
  while (decimal.size() > 1 && decimal.back() == 0) decimal.pop_back();
  std::string out;
  for (auto it = decimal.rbegin(); it != decimal.rend(); ++it) out += static_cast<char>('0' + *it);
  return out;
}

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?  (go-yaml's yamlStyleFloat)
bool IsYamlStyleFloat(std::string_view s) noexcept {
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  size_t int_digits = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++int_digits;
  size_t frac_digits = 0;
  bool dot = false;
  if (i < s.size() && s[i] == '.') {
    dot = true;
    ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++frac_digits;
  }
  if (int_digits == 0 && (!dot || frac_digits == 0)) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    size_t exp_digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  return i == s.size();
}

// strconv.ParseFloat of text that is known to be well formed: false when it
// is out of range (an underflow is 0, as in Go).
bool ParseFloat(const std::string& text, double& out) {
  errno = 0;
  out = std::strtod(text.c_str(), nullptr);
  return !(errno == ERANGE && std::isinf(out));
}

// go-yaml v2's resolve() for a plain scalar. An error (a value JSON cannot
// hold) is returned as its message.
std::string ResolvePlain(const std::string& in, Resolved& out) {
  static const std::pair<std::string_view, int> kWords[] = {
      {"", 0},      {"~", 0},     {"null", 0},  {"Null", 0}, {"NULL", 0}, {"y", 1},    {"Y", 1},
      {"yes", 1},   {"Yes", 1},   {"YES", 1},   {"true", 1}, {"True", 1}, {"TRUE", 1}, {"on", 1},
      {"On", 1},    {"ON", 1},    {"n", 2},     {"N", 2},    {"no", 2},   {"No", 2},   {"NO", 2},
      {"false", 2}, {"False", 2}, {"FALSE", 2}, {"off", 2},  {"Off", 2},  {"OFF", 2}};
  for (const auto& [word, kind] : kWords) {
    if (in != word) continue;
    out.kind = kind == 0 ? Resolved::Kind::kNull : Resolved::Kind::kBool;
    out.boolean = kind == 1;
    return {};
  }
  for (std::string_view special : {".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf",
                                   "+.INF", "-.inf", "-.Inf", "-.INF"}) {
    if (in == special) return "the value " + in + " has no JSON representation";
  }
  out.kind = Resolved::Kind::kString;
  const char first = in.front();
  if (first == '.') {
    // Not in the table: maybe a float (strconv.ParseFloat: no underscores).
    if (IsYamlStyleFloat(in) && ParseFloat(in, out.real)) out.kind = Resolved::Kind::kFloat;
    return {};
  }
  const bool digit = first >= '0' && first <= '9';
  if (!digit && first != '-' && first != '+') return {};  // a string (or a word checked above)

  std::string plain;
  plain.reserve(in.size());
  for (char c : in) {
    if (c != '_') plain += c;
  }
  std::string_view body = plain;
  bool negative = false;
  const bool signed_text = !body.empty() && (body[0] == '-' || body[0] == '+');
  if (signed_text) {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  int base = 10;
  std::string_view digits;
  if (SplitGoInteger(body, base, digits)) {
    // strconv.ParseInt, then (no sign) ParseUint, within 64 bits.
    U128 magnitude = 0;
    bool big = false;
    for (char c : digits) {
      magnitude = magnitude * static_cast<unsigned>(base) + static_cast<unsigned>(DigitValue(c));
      if (magnitude > UINT64_MAX) {
        big = true;
        break;
      }
    }
    const U128 int64_limit = negative ? (U128{1} << 63) : (U128{1} << 63) - 1;
    if (!big && magnitude <= int64_limit) {
      out.kind = Resolved::Kind::kInt;
      out.number = std::string(negative && magnitude != 0 ? "-" : "") +
                   std::to_string(static_cast<uint64_t>(magnitude));
      return {};
    }
    if (!big && !signed_text) {
      out.kind = Resolved::Kind::kInt;  // a uint64
      out.number = std::to_string(static_cast<uint64_t>(magnitude));
      return {};
    }
    // Out of range: a float if it reads as one, else big.Int's exact value.
    if (IsYamlStyleFloat(plain)) {
      if (ParseFloat(plain, out.real)) out.kind = Resolved::Kind::kFloat;
      return {};
    }
    out.kind = Resolved::Kind::kInt;
    out.number = (negative ? "-" : "") + ToDecimal(digits, base);
    return {};
  }
  if (IsYamlStyleFloat(plain) && ParseFloat(plain, out.real)) out.kind = Resolved::Kind::kFloat;
  return {};
}

// Go's %f with the shortest digits that round-trip: `scientific` is the
// shortest %e form ("d.ddde+XX"), laid out without the exponent (Go pads
// with zeros where C++'s fixed form would print the exact binary value).
std::string FixedFromShortest(std::string_view scientific) {
  std::string out;
  if (!scientific.empty() && scientific.front() == '-') {
    out += '-';
    scientific.remove_prefix(1);
  }
  const size_t e = scientific.find('e');
  std::string digits;
  for (char c : scientific.substr(0, e)) {
    if (c != '.') digits += c;
  }
  const int exp = std::atoi(std::string(scientific.substr(e + 1)).c_str());
  const int point = exp + 1;  // digits before the decimal point
  if (point <= 0) {
    out += "0.";
    out.append(static_cast<size_t>(-point), '0');
    out += digits;
  } else if (static_cast<size_t>(point) >= digits.size()) {
    out += digits;
    out.append(static_cast<size_t>(point) - digits.size(), '0');
  } else {
    out += digits.substr(0, static_cast<size_t>(point));
    out += '.';
    out += digits.substr(static_cast<size_t>(point));
  }
  return out;
}

template <typename Float>
std::string ShortestScientific(Float value) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::scientific);
  (void)ec;
  return std::string(buf, end);
}

// How encoding/json writes a float64: shortest digits, %f between 1e-6 and
// 1e21, else %e with a one-digit negative exponent kept short ("1e-7").
void AppendGoFloat(std::string& out, double value) {
  const double abs = std::fabs(value);
  std::string text = ShortestScientific(value);
  if (abs == 0 || (abs >= 1e-6 && abs < 1e21)) {
    out += FixedFromShortest(text);
    return;
  }
  const size_t n = text.size();
  if (n >= 4 && text[n - 4] == 'e' && text[n - 3] == '-' && text[n - 2] == '0') {
    text.erase(n - 2, 1);
  }
  out += text;
}

// strconv.FormatFloat(f, 'g', -1, 32): how sigs.k8s.io/yaml writes a float key.
std::string GoFloatKey(double value) {
  const std::string sci = ShortestScientific(static_cast<float>(value));
  const int exp = std::atoi(sci.c_str() + sci.find('e') + 1);
  if (exp < -4 || exp >= 6) return sci;  // %e, as Go's 'g' with shortest digits
  return FixedFromShortest(sci);
}

class Converter {
 public:
  bool Convert(const YAML::Node& node, std::string& out, const std::string& path, size_t depth) {
    if (depth > kMaxDepth) return Fail(path, "nested too deeply");
    if (++nodes_ > kMaxNodes) {
      return Fail(path, "the document expands to more than " + std::to_string(kMaxNodes) +
                            " nodes (through aliases?)");
    }
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        out += "null";
        return true;
      case YAML::NodeType::Scalar:
        return Scalar(node, out, path);
      case YAML::NodeType::Sequence: {
        out += '[';
        size_t index = 0;
        for (const YAML::Node& item : node) {
          if (index > 0) out += ',';
          if (!Convert(item, out, path + "[" + std::to_string(index) + "]", depth + 1)) {
            return false;
          }
          ++index;
        }
        out += ']';
        return true;
      }
      case YAML::NodeType::Map: {
        // Sorted as (key, index into `values`): YAML::Node's assignment
        // writes through to the node it refers to, so sorting Nodes
        // themselves (swaps are assignments) would rewrite the document.
        // Error paths name a key as written ("n", not its JSON form "false").
        std::vector<YAML::Node> values;
        std::vector<std::string> written;
        std::vector<std::pair<std::string, size_t>> entries;
        for (const auto& entry : node) {
          std::string key;
          if (!Key(entry.first, path, key)) return false;
          entries.emplace_back(std::move(key), values.size());
          values.push_back(entry.second);
          written.push_back(entry.first.Scalar());
        }
        std::stable_sort(entries.begin(), entries.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        for (size_t i = 1; i < entries.size(); ++i) {
          if (entries[i].first == entries[i - 1].first) {
            return Fail(path, "duplicate key \"" + entries[i].first + "\"");
          }
        }
        out += '{';
        bool first = true;
        for (const auto& [key, index] : entries) {
          if (!first) out += ',';
          first = false;
          AppendJsonString(out, key);
          out += ':';
          const std::string child = path.empty() ? written[index] : path + "." + written[index];
          if (!Convert(values[index], out, child, depth + 1)) return false;
        }
        out += '}';
        return true;
      }
    }
    return Fail(path, "unknown node type");
  }

  const std::string& error() const { return error_; }

 private:
  bool Fail(const std::string& path, const std::string& message) {
    error_ = path.empty() ? message : path + ": " + message;
    return false;
  }

  // Whether the node's tag leaves the scalar to the resolver (plain and
  // untagged, or a core-schema tag other than !!str).
  bool Tag(const YAML::Node& node, const std::string& path, bool& literal) {
    const std::string& tag = node.Tag();
    literal = tag == "!" || tag == "tag:yaml.org,2002:str";  // quoted, block or !!str
    if (literal || tag == "?" || tag.empty() || tag.compare(0, kCoreTag.size(), kCoreTag) == 0) {
      return true;
    }
    return Fail(path, "unsupported tag \"" + tag + "\"");
  }

  bool Scalar(const YAML::Node& node, std::string& out, const std::string& path) {
    bool literal = false;
    if (!Tag(node, path, literal)) return false;
    const std::string& text = node.Scalar();
    if (literal) {
      AppendJsonString(out, text);
      return true;
    }
    if (node.Tag() == "tag:yaml.org,2002:null") {
      out += "null";
      return true;
    }
    Resolved r;
    if (std::string e = ResolvePlain(text, r); !e.empty()) return Fail(path, e);
    switch (r.kind) {
      case Resolved::Kind::kNull:
        out += "null";
        break;
      case Resolved::Kind::kBool:
        out += r.boolean ? "true" : "false";
        break;
      case Resolved::Kind::kInt:
        out += r.number;
        break;
      case Resolved::Kind::kFloat:
        AppendGoFloat(out, r.real);
        break;
      case Resolved::Kind::kString:
        AppendJsonString(out, text);
        break;
    }
    return true;
  }

  // A mapping key as sigs.k8s.io/yaml turns it into a JSON key.
  bool Key(const YAML::Node& key, const std::string& path, std::string& out) {
    if (key.IsNull()) return Fail(path, "a null mapping key has no JSON form");
    if (!key.IsScalar()) return Fail(path, "mapping keys must be scalars");
    bool literal = false;
    if (!Tag(key, path, literal)) return false;
    if (literal) {
      out = key.Scalar();
      return true;
    }
    Resolved r;
    if (std::string e = ResolvePlain(key.Scalar(), r); !e.empty()) return Fail(path, e);
    switch (r.kind) {
      case Resolved::Kind::kNull:
        return Fail(path, "a null mapping key has no JSON form");
      case Resolved::Kind::kBool:
        out = r.boolean ? "true" : "false";
        break;
      case Resolved::Kind::kInt:
        out = r.number;
        break;
      case Resolved::Kind::kFloat:
        out = GoFloatKey(r.real);
        break;
      case Resolved::Kind::kString:
        out = key.Scalar();
        break;
    }
    return true;
  }

  std::string error_;
  size_t nodes_ = 0;
};

Error YamlError(const YAML::Exception& e) {
  std::string message = "yaml: ";
  if (!e.mark.is_null()) {
    message += "line " + std::to_string(e.mark.line + 1) + ", column " +
               std::to_string(e.mark.column + 1) + ": ";
  }
  message += e.msg;
  return MakeError(ErrorCode::kInvalid, std::move(message));
}

}  // namespace

Result<std::vector<std::string>> YamlDocumentsToJson(std::string_view yaml) {
  std::vector<YAML::Node> docs;
  try {
    docs = LoadYamlDocuments(yaml);  // not YAML::LoadAll: it loops forever on ","
  } catch (const YAML::Exception& e) {
    return YamlError(e);
  }
  std::vector<std::string> out;
  size_t number = 0;
  for (const YAML::Node& doc : docs) {
    ++number;
    if (doc.IsNull() || !doc.IsDefined()) continue;
    Converter converter;
    std::string json;
    try {
      if (!converter.Convert(doc, json, "", 0)) {
        std::string message = converter.error();
        if (docs.size() > 1) message = "document " + std::to_string(number) + ": " + message;
        return MakeError(ErrorCode::kInvalid, std::move(message));
      }
    } catch (const YAML::Exception& e) {
      return YamlError(e);
    }
    out.push_back(std::move(json));
  }
  return out;
}

Result<std::string> YamlToJson(std::string_view yaml) {
  Result<std::vector<std::string>> docs = YamlDocumentsToJson(yaml);
  if (!docs.ok()) return std::move(docs).error();
  if (docs->empty()) return MakeError(ErrorCode::kInvalid, "yaml: no document");
  if (docs->size() == 1) return std::move(docs->front());
  std::string list = R"({"apiVersion":"v1","items":[)";
  for (size_t i = 0; i < docs->size(); ++i) {
    if (i > 0) list += ',';
    list += (*docs)[i];
  }
  list += R"(],"kind":"List"})";
  return list;
}

}  // namespace copse::kube
