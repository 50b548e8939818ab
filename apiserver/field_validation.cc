#include "apiserver/field_validation.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "apiserver/apply.h"
#include "apiserver/selector.h"
#include "kube/codec_json.h"
#include "kube/protobuf/unknown_fields.h"

namespace copse::apiserver {

namespace {

namespace dom = simdjson::dom;
using json = nlohmann::json;
using kube::codec::Element;
using kube::protobuf::FieldProblems;

bool Flag(const json& node, const char* name) {
  auto it = node.find(name);
  return it != node.end() && it->is_boolean() && it->get<bool>();
}

// Walks a custom resource beside its structural schema, or a built-in kind
// beside its schema-table document (whose fields reference component
// schemas, `components`: "$ref" alone or in "allOf").
class CrdChecker {
 public:
  CrdChecker(FieldProblems& out, bool patch, const json* components = nullptr)
      : out_(out), patch_(patch), components_(components) {}

  void Root(const json& schema, Element value) { Object(schema, value, /*resource=*/true); }

 private:
  // The schema a "$ref" (or an allOf of one) names; `schema` otherwise.
  const json& Resolve(const json& schema) const {
    if (components_ == nullptr || !schema.is_object()) return schema;
    const json* ref = nullptr;
    if (auto r = schema.find("$ref"); r != schema.end()) ref = &*r;
    if (auto all = schema.find("allOf");
        ref == nullptr && all != schema.end() && all->is_array() && all->size() == 1) {
      if (auto r = (*all)[0].find("$ref"); r != (*all)[0].end()) ref = &*r;
    }
    if (ref == nullptr || !ref->is_string()) return schema;
    const std::string name = ref->get<std::string>().substr(ref->get<std::string>().rfind('/') + 1);
    auto it = components_->find(name);
    return it == components_->end() ? schema : *it;
  }

  void Value(const json& unresolved, Element value) {
    const json& schema = Resolve(unresolved);
    if (!schema.is_object() || Flag(schema, "x-kubernetes-int-or-string")) return;
    if (value.is_object()) {
      Object(schema, value, Flag(schema, "x-kubernetes-embedded-resource"));
    } else if (dom::array arr; value.get(arr) == simdjson::SUCCESS) {
      auto items = schema.find("items");
      if (items == schema.end() || !items->is_object()) return;
      size_t index = 0;
      for (Element item : arr) {
        const size_t mark = path_.size();
        path_ += '[' + std::to_string(index++) + ']';
        Value(*items, item);
        path_.resize(mark);
      }
    }
  }

  // `resource`: the root or an embedded resource, whose apiVersion and kind
  // are always allowed and whose metadata is ObjectMeta.
  void Object(const json& schema, Element value, bool resource) {
    dom::object obj;
    if (value.get(obj) != simdjson::SUCCESS) return;
    const bool preserve = Flag(schema, "x-kubernetes-preserve-unknown-fields");
    const json* properties = nullptr;
    if (auto p = schema.find("properties"); p != schema.end() && p->is_object()) properties = &*p;
    const json* additional = nullptr;
    bool any_additional = false;
    if (auto a = schema.find("additionalProperties"); a != schema.end()) {
      if (a->is_object()) additional = &*a;
      if (a->is_boolean()) any_additional = a->get<bool>();
    }
    std::vector<std::string_view> seen;
    for (dom::key_value_pair member : obj) {
      const std::string_view key = member.key;
      if (patch_ && key.starts_with('$')) continue;
      const size_t mark = path_.size();
      if (!path_.empty()) path_ += '.';
      path_ += key;
      if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
        out_.duplicate.push_back(path_);
        path_.resize(mark);
        continue;
      }
      seen.push_back(key);
      const json* property = nullptr;
      if (properties != nullptr) {
        if (auto p = properties->find(std::string(key)); p != properties->end()) property = &*p;
      }
      if (resource && key == "metadata" && member.value.is_object()) {
        Metadata(member.value);
      } else if (property != nullptr) {
        Value(*property, member.value);
      } else if (additional != nullptr) {
        Value(*additional, member.value);
      } else if (!(any_additional || preserve ||
                   (resource && (key == "apiVersion" || key == "kind")))) {
        out_.unknown.push_back(path_);
      }
      path_.resize(mark);
    }
  }

  void Metadata(Element value) {
    const std::string text = simdjson::minify(value);
    auto checked = kube::protobuf::CheckMessageFields("meta.v1.ObjectMeta", text, path_);
    if (!checked.ok() || !checked->has_value()) return;
    for (std::string& p : (*checked)->unknown) out_.unknown.push_back(std::move(p));
    for (std::string& p : (*checked)->duplicate) out_.duplicate.push_back(std::move(p));
  }

  FieldProblems& out_;
  bool patch_;
  const json* components_;
  std::string path_;
};

std::string Quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + '"';
}

}  // namespace

Result<FieldValidation> ParseFieldValidation(std::string_view value) {
  if (value.empty() || value == "Warn") return FieldValidation::kWarn;
  if (value == "Strict") return FieldValidation::kStrict;
  if (value == "Ignore") return FieldValidation::kIgnore;
  return BadRequest("fieldValidation: Unsupported value: " + Quoted(value) +
                    ": supported values: \"Ignore\", \"Strict\", \"Warn\"");
}

Result<std::vector<std::string>> ValidateFields(FieldValidation directive, const ResourceInfo& info,
                                                std::string_view version, std::string_view body,
                                                bool patch) {
  if (directive == FieldValidation::kIgnore) return std::vector<std::string>();
  FieldProblems problems;
  if (info.crd) {
    std::shared_ptr<const json> schema = CrdVersionSchema(info, version);
    if (schema == nullptr) return std::vector<std::string>();
    kube::codec::ParserLease lease;
    Element root;
    if (!kube::codec::ParseDocument(lease, body, root).ok()) return std::vector<std::string>();
    CrdChecker(problems, patch).Root(*schema, root);
  } else {
    auto checked =
        kube::protobuf::CheckObjectFields(info.ApiVersion(version), info.kind, body, patch);
    if (!checked.ok()) return std::vector<std::string>();
    if (checked->has_value()) {
      problems = std::move(**checked);
    } else {
      // No protobuf type: the schema table's, when it describes the kind
      // (the Workload API).
      const ApplySchema table = BuiltinApplySchema(info.ApiVersion(version), info.kind);
      if (table.root == nullptr) return std::vector<std::string>();
      kube::codec::ParserLease lease;
      Element root;
      if (!kube::codec::ParseDocument(lease, body, root).ok()) return std::vector<std::string>();
      CrdChecker(problems, patch, table.components).Root(*table.root, root);
    }
  }
  std::vector<std::string> messages;
  messages.reserve(problems.unknown.size() + problems.duplicate.size());
  for (const std::string& p : problems.unknown) messages.push_back("unknown field " + Quoted(p));
  for (const std::string& p : problems.duplicate)
    messages.push_back("duplicate field " + Quoted(p));
  if (directive == FieldValidation::kWarn || messages.empty()) return messages;
  std::string message = info.kind + " in version " + Quoted(version) + " cannot be handled as a " +
                        info.kind + ": strict decoding error: ";
  for (size_t i = 0; i < messages.size(); ++i) {
    if (i) message += ", ";
    message += messages[i];
  }
  return BadRequest(std::move(message));
}

}  // namespace copse::apiserver
