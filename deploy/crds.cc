#include "deploy/crds.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "core/yaml_documents.h"

namespace copse::deploy {

namespace {

using Json = nlohmann::json;

constexpr size_t kMaxDepth = 512;

bool IsDigits(std::string_view s, bool hex = false) noexcept {
  if (s.empty()) return false;
  for (char c : s) {
    bool ok = (c >= '0' && c <= '9') || (hex && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')));
    if (!ok) return false;
  }
  return true;
}

// YAML 1.2 core schema float: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool IsFloat(std::string_view s) noexcept {
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
  if (int_digits == 0 && frac_digits == 0) return false;
  if (int_digits == 0 && !dot) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    size_t exp_digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  return i == s.size();
}

bool IsSpecialFloat(std::string_view s) noexcept {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  return s == ".inf" || s == ".Inf" || s == ".INF" || s == ".nan" || s == ".NaN" || s == ".NAN";
}

class Converter {
 public:
  bool Convert(const YAML::Node& node, Json& out, const std::string& path, size_t depth) {
    if (depth > kMaxDepth) return Fail(path, "nested too deeply");
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        out = nullptr;
        return true;
      case YAML::NodeType::Scalar:
        return Scalar(node, out, path);
      case YAML::NodeType::Sequence: {
        out = Json::array();
        size_t index = 0;
        for (const YAML::Node& item : node) {
          Json value;
          if (!Convert(item, value, path + "[" + std::to_string(index) + "]", depth + 1)) {
            return false;
          }
          out.push_back(std::move(value));
          ++index;
        }
        return true;
      }
      case YAML::NodeType::Map: {
        out = Json::object();
        for (const auto& entry : node) {
          const YAML::Node& key_node = entry.first;
          std::string key;
          if (key_node.IsScalar()) {
            key = key_node.Scalar();
          } else if (key_node.IsNull()) {
            key = "null";
          } else {
            return Fail(path, "mapping keys must be scalars");
          }
          if (out.contains(key)) return Fail(path, "duplicate key \"" + key + "\"");
          const std::string child = path.empty() ? key : path + "." + key;
          Json value;
          if (!Convert(entry.second, value, child, depth + 1)) return false;
          out[key] = std::move(value);
        }
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

  bool Scalar(const YAML::Node& node, Json& out, const std::string& path) {
    const std::string& tag = node.Tag();
    const std::string& text = node.Scalar();
    static constexpr std::string_view kCore = "tag:yaml.org,2002:";
    if (tag == "!" || tag == "tag:yaml.org,2002:str") {
      out = text;  // quoted, block or explicitly a string
      return true;
    }
    if (tag == "tag:yaml.org,2002:null") {
      out = nullptr;
      return true;
    }
    if (tag != "?" && !tag.empty() && tag.compare(0, kCore.size(), kCore) != 0) {
      return Fail(path, "unsupported tag \"" + tag + "\"");
    }
    return Resolve(text, out, path);
  }

  bool Resolve(const std::string& text, Json& out, const std::string& path) {
    std::string_view s = text;
    if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") {
      out = nullptr;
      return true;
    }
    if (s == "true" || s == "True" || s == "TRUE") {
      out = true;
      return true;
    }
    if (s == "false" || s == "False" || s == "FALSE") {
      out = false;
      return true;
    }
    std::string_view digits = s;
    bool negative = false;
    if (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) {
      negative = digits[0] == '-';
      digits.remove_prefix(1);
    }
    int base = 10;
    if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'o')) {
      base = digits[1] == 'x' ? 16 : 8;
      // YAML core: 0x/0o forms take no sign.
      if (s[0] == '-' || s[0] == '+') base = 0;
      digits.remove_prefix(2);
    }
    if (base != 0 && IsDigits(digits, base == 16) &&
        (base != 8 || digits.find_first_of("89") == std::string_view::npos)) {
      uint64_t magnitude = 0;
      auto [end, ec] =
          std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, base);
      const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
      if (ec != std::errc() || end != digits.data() + digits.size() || magnitude > limit) {
        return Fail(path, "integer " + text + " does not fit in 64 bits");
      }
      out = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
      return true;
    }
    if (IsSpecialFloat(s)) {
      return Fail(path, "the value " + text + " has no JSON representation");
    }
    if (IsFloat(s)) {
      double value = std::strtod(text.c_str(), nullptr);
      if (!std::isfinite(value)) return Fail(path, "the number " + text + " is out of range");
      out = value;
      return true;
    }
    out = text;
    return true;
  }

  std::string error_;
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
    docs = LoadYamlDocuments(yaml);
  } catch (const YAML::Exception& e) {
    return YamlError(e);
  }
  std::vector<std::string> out;
  size_t number = 0;
  for (const YAML::Node& doc : docs) {
    ++number;
    if (doc.IsNull() || !doc.IsDefined()) continue;
    Converter converter;
    Json json;
    try {
      if (!converter.Convert(doc, json, "", 0)) {
        std::string message = converter.error();
        if (docs.size() > 1) message = "document " + std::to_string(number) + ": " + message;
        return MakeError(ErrorCode::kInvalid, std::move(message));
      }
    } catch (const YAML::Exception& e) {
      return YamlError(e);
    }
    out.push_back(json.dump());
  }
  return out;
}

Result<std::string> YamlToJson(std::string_view yaml) {
  Result<std::vector<std::string>> docs = YamlDocumentsToJson(yaml);
  if (!docs.ok()) return std::move(docs).error();
  if (docs->empty()) return MakeError(ErrorCode::kInvalid, "yaml: no document");
  if (docs->size() == 1) return std::move(docs->front());
  Json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", Json::array()}};
  for (const std::string& doc : *docs) list["items"].push_back(Json::parse(doc));
  return list.dump();
}

}  // namespace copse::deploy
