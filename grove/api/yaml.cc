#include "grove/api/yaml.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <nlohmann/json.hpp>

#include "core/yaml_documents.h"

namespace copse::grove::api {

namespace {

using Json = nlohmann::json;

Json ScalarToJson(const YAML::Node& node) {
  const std::string& text = node.Scalar();
  if (node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str") return Json(text);
  if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL") {
    return Json(nullptr);
  }
  if (text == "true" || text == "True" || text == "TRUE") return Json(true);
  if (text == "false" || text == "False" || text == "FALSE") return Json(false);
  int64_t integer = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), integer);
  if (ec == std::errc() && p == text.data() + text.size()) return Json(integer);
  bool numeric = !text.empty();
  bool has_digit = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c >= '0' && c <= '9') {
      has_digit = true;
    } else if (!(c == '.' || c == 'e' || c == 'E' ||
                 ((c == '-' || c == '+') &&
                  (i == 0 || text[i - 1] == 'e' || text[i - 1] == 'E')))) {
      numeric = false;
      break;
    }
  }
  if (numeric && has_digit && text.find('.') != std::string::npos) {
    double value = 0;
    auto [q, ec2] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec2 == std::errc() && q == text.data() + text.size()) return Json(value);
  }
  return Json(text);
}

Json ToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return Json(nullptr);
    case YAML::NodeType::Scalar:
      return ScalarToJson(node);
    case YAML::NodeType::Sequence: {
      Json out = Json::array();
      for (const auto& item : node) out.push_back(ToJson(item));
      return out;
    }
    case YAML::NodeType::Map: {
      Json out = Json::object();
      for (const auto& kv : node) out[kv.first.as<std::string>()] = ToJson(kv.second);
      return out;
    }
  }
  return Json(nullptr);
}

}  // namespace

Result<std::vector<std::string>> YamlToJsonDocuments(std::string_view yaml) {
  std::vector<std::string> out;
  try {
    std::vector<YAML::Node> docs = LoadYamlDocuments(yaml);
    for (const auto& doc : docs) {
      if (!doc.IsDefined() || doc.IsNull()) continue;
      out.push_back(ToJson(doc).dump());
    }
  } catch (const YAML::Exception& e) {
    return MakeError(ErrorCode::kInvalid, std::string("malformed YAML: ") + e.what());
  }
  return out;
}

}  // namespace copse::grove::api
