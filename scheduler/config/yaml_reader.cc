#include "scheduler/config/yaml_reader.h"

#include <charconv>
#include <cmath>

#include "core/duration.h"

namespace copse::scheduler::config {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// A quoted scalar ("50") is a string, as in JSON: never a number or a boolean.
bool Quoted(const YAML::Node& node) { return node.Tag() == "!"; }

void TypeError(const YAML::Node& node, std::string_view path, std::string_view detail,
               FieldErrors& errors) {
  errors.Invalid(path, NodeRepr(node), std::string(detail) + PositionSuffix(node));
}

}  // namespace

std::string PositionSuffix(const YAML::Node& node) {
  if (!node.IsDefined()) return "";
  const YAML::Mark mark = node.Mark();
  if (mark.is_null() || mark.line < 0) return "";
  return " (line " + std::to_string(mark.line + 1) + ", column " + std::to_string(mark.column + 1) +
         ")";
}

std::string NodeRepr(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      return Quote(node.Scalar());
    case YAML::NodeType::Map:
      return "object";
    case YAML::NodeType::Sequence:
      return "list";
    case YAML::NodeType::Null:
      return "null";
    case YAML::NodeType::Undefined:
      break;
  }
  return "undefined";
}

std::string ChildPath(std::string_view path, std::string_view key) {
  if (path.empty()) return std::string(key);
  std::string out(path);
  out += '.';
  out += key;
  return out;
}

std::string IndexPath(std::string_view path, size_t index) {
  std::string out(path);
  out += '[';
  out += std::to_string(index);
  out += ']';
  return out;
}

std::optional<int64_t> ReadInt(const YAML::Node& node, std::string_view path, FieldErrors& errors,
                               int64_t min, int64_t max) {
  if (!node.IsScalar() || Quoted(node)) {
    TypeError(node, path, "must be an integer", errors);
    return std::nullopt;
  }
  std::string_view s = Trim(node.Scalar());
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || end != s.data() + s.size() || ec == std::errc::invalid_argument) {
    TypeError(node, path, "must be an integer", errors);
    return std::nullopt;
  }
  if (ec == std::errc::result_out_of_range || v < min || v > max) {
    TypeError(node, path,
              "must be an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]",
              errors);
    return std::nullopt;
  }
  return v;
}

std::optional<int32_t> ReadInt32(const YAML::Node& node, std::string_view path,
                                 FieldErrors& errors) {
  std::optional<int64_t> v = ReadInt(node, path, errors, INT32_MIN, INT32_MAX);
  if (!v) return std::nullopt;
  return static_cast<int32_t>(*v);
}

std::optional<double> ReadDouble(const YAML::Node& node, std::string_view path,
                                 FieldErrors& errors) {
  if (!node.IsScalar() || Quoted(node)) {
    TypeError(node, path, "must be a number", errors);
    return std::nullopt;
  }
  std::string_view s = Trim(node.Scalar());
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || end != s.data() + s.size() || ec != std::errc() || !std::isfinite(v)) {
    TypeError(node, path, "must be a number", errors);
    return std::nullopt;
  }
  return v;
}

std::optional<bool> ReadBool(const YAML::Node& node, std::string_view path, FieldErrors& errors) {
  if (node.IsScalar() && !Quoted(node)) {
    const std::string_view s = Trim(node.Scalar());
    // YAML 1.2 core schema spellings.
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
  }
  TypeError(node, path, "must be a boolean (true or false)", errors);
  return std::nullopt;
}

std::optional<std::string> ReadString(const YAML::Node& node, std::string_view path,
                                      FieldErrors& errors) {
  if (!node.IsScalar()) {
    TypeError(node, path, "must be a string", errors);
    return std::nullopt;
  }
  return node.Scalar();
}

std::optional<std::chrono::nanoseconds> ReadDuration(const YAML::Node& node, std::string_view path,
                                                     FieldErrors& errors) {
  if (!node.IsScalar()) {
    TypeError(node, path, "must be a duration such as \"15s\" or \"1m30s\"", errors);
    return std::nullopt;
  }
  Result<std::chrono::nanoseconds> d = ParseGoDuration(Trim(node.Scalar()));
  if (!d.ok()) {
    TypeError(node, path,
              "must be a duration such as \"15s\" or \"1m30s\" (" + d.error().message + ")",
              errors);
    return std::nullopt;
  }
  return *d;
}

std::vector<YAML::Node> ReadList(const YAML::Node& node, std::string_view path,
                                 FieldErrors& errors) {
  std::vector<YAML::Node> out;
  if (!node.IsDefined() || node.IsNull()) return out;
  if (!node.IsSequence()) {
    TypeError(node, path, "must be a list", errors);
    return out;
  }
  out.reserve(node.size());
  for (const YAML::Node& item : node) out.push_back(item);
  return out;
}

MapReader::MapReader(const YAML::Node& node, std::string path, FieldErrors& errors)
    : path_(std::move(path)), errors_(errors) {
  if (!node.IsDefined() || node.IsNull()) return;
  if (!node.IsMap()) {
    TypeError(node, path_.empty() ? std::string_view("<document>") : std::string_view(path_),
              "must be an object", errors_);
    return;
  }
  for (auto it = node.begin(); it != node.end(); ++it) {
    const YAML::Node key = it->first;
    if (!key.IsScalar()) {
      errors_.Add("field name of " + (path_.empty() ? std::string("<document>") : path_) +
                  " must be a string" + PositionSuffix(key));
      continue;
    }
    const std::string& name = key.Scalar();
    if (Find(name) != nullptr) {
      errors_.Add("duplicate field " + Quote(ChildPath(path_, name)) + PositionSuffix(key));
      continue;
    }
    entries_.push_back(Entry{name, it->second, key, false});
  }
}

MapReader::Entry* MapReader::Find(std::string_view key) {
  for (Entry& e : entries_) {
    if (e.key == key) return &e;
  }
  return nullptr;
}

std::optional<YAML::Node> MapReader::Get(std::string_view key) {
  Entry* e = Find(key);
  if (e == nullptr) return std::nullopt;
  e->used = true;
  if (!e->value.IsDefined() || e->value.IsNull()) return std::nullopt;
  return e->value;
}

bool MapReader::Int32(std::string_view key, int32_t& out) {
  std::optional<YAML::Node> n = Get(key);
  if (!n) return false;
  std::optional<int32_t> v = ReadInt32(*n, Path(key), errors_);
  if (!v) return false;
  out = *v;
  return true;
}

bool MapReader::Int64(std::string_view key, int64_t& out) {
  std::optional<YAML::Node> n = Get(key);
  if (!n) return false;
  std::optional<int64_t> v = ReadInt(*n, Path(key), errors_);
  if (!v) return false;
  out = *v;
  return true;
}

bool MapReader::Double(std::string_view key, double& out) {
  std::optional<YAML::Node> n = Get(key);
  if (!n) return false;
  std::optional<double> v = ReadDouble(*n, Path(key), errors_);
  if (!v) return false;
  out = *v;
  return true;
}

bool MapReader::Bool(std::string_view key, bool& out) {
  std::optional<YAML::Node> n = Get(key);
  if (!n) return false;
  std::optional<bool> v = ReadBool(*n, Path(key), errors_);
  if (!v) return false;
  out = *v;
  return true;
}

bool MapReader::String(std::string_view key, std::string& out) {
  std::optional<YAML::Node> n = Get(key);
  if (!n) return false;
  std::optional<std::string> v = ReadString(*n, Path(key), errors_);
  if (!v) return false;
  out = std::move(*v);
  return true;
}

bool MapReader::Duration(std::string_view key, std::chrono::nanoseconds& out) {
  std::optional<YAML::Node> n = Get(key);
  if (!n) return false;
  std::optional<std::chrono::nanoseconds> v = ReadDuration(*n, Path(key), errors_);
  if (!v) return false;
  out = *v;
  return true;
}

bool MapReader::StringList(std::string_view key, std::vector<std::string>& out) {
  std::optional<YAML::Node> n = Get(key);
  if (!n) return false;
  const std::string path = Path(key);
  const size_t before = errors_.size();
  std::vector<std::string> values;
  const std::vector<YAML::Node> items = ReadList(*n, path, errors_);
  for (size_t i = 0; i < items.size(); ++i) {
    std::optional<std::string> v = ReadString(items[i], IndexPath(path, i), errors_);
    if (v) values.push_back(std::move(*v));
  }
  if (errors_.size() != before) return false;
  out = std::move(values);
  return true;
}

void MapReader::Reject(std::string_view key, std::string_view hint) {
  Entry* e = Find(key);
  if (e == nullptr) return;
  e->used = true;
  std::string m = "unknown field " + Quote(Path(key)) + PositionSuffix(e->key_node);
  if (!hint.empty()) {
    m += ": ";
    m += hint;
  }
  errors_.Add(std::move(m));
}

void MapReader::Finish() {
  for (Entry& e : entries_) {
    if (e.used) continue;
    e.used = true;
    errors_.Add("unknown field " + Quote(Path(e.key)) + PositionSuffix(e.key_node));
  }
}

}  // namespace copse::scheduler::config
