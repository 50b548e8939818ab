#include "apiserver/openapi.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "apiserver/apply.h"
#include "apiserver/openapi_internal.h"

namespace copse::apiserver {

using nlohmann::json;

namespace {

constexpr std::string_view kObjectMeta = "meta.v1.ObjectMeta";
constexpr std::string_view kSchemaRef = "#/components/schemas/";

[[noreturn]] void TableDefect(const std::string& line, const char* what) {
  std::fprintf(stderr, "openapi_builtin.cc: %s: %s\n", what, line.c_str());
  std::abort();
}

bool IsScalar(std::string_view type) {
  return type == "string" || type == "int32" || type == "int64" || type == "bool" ||
         type == "number" || type == "quantity" || type == "int-or-string" || type == "time" ||
         type == "object";
}

json Ref(const std::string& openapi_name) {
  return {{"$ref", std::string(kSchemaRef) + openapi_name}};
}

// The schema of a table type token; `refs` collects the table types it names.
json TypeSchema(std::string_view type, std::set<std::string>* refs) {
  if (type.starts_with("[]")) {
    std::string_view item = type.substr(2);
    std::string list_type = "atomic";
    json keys;
    if (const size_t slash = item.find('/'); slash != std::string_view::npos) {
      const std::string_view spec = item.substr(slash + 1);
      item = item.substr(0, slash);
      if (spec == "set") {
        list_type = "set";
      } else {
        list_type = "map";
        keys = json::array();
        size_t pos = 0;
        while (pos <= spec.size()) {
          size_t end = spec.find(',', pos);
          if (end == std::string_view::npos) end = spec.size();
          keys.push_back(std::string(spec.substr(pos, end - pos)));
          pos = end + 1;
        }
      }
    }
    json out = {{"type", "array"}, {"items", TypeSchema(item, refs)}};
    out["x-kubernetes-list-type"] = list_type;
    if (!keys.is_null()) out["x-kubernetes-list-map-keys"] = keys;
    return out;
  }
  if (type.starts_with("{}")) {
    return {{"type", "object"}, {"additionalProperties", TypeSchema(type.substr(2), refs)}};
  }
  if (type == "string") return {{"type", "string"}};
  if (type == "int32") return {{"type", "integer"}, {"format", "int32"}};
  if (type == "int64") return {{"type", "integer"}, {"format", "int64"}};
  if (type == "bool") return {{"type", "boolean"}};
  if (type == "number") return {{"type", "number"}, {"format", "double"}};
  if (type == "object") return {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}};
  if (type == "quantity") return Ref("io.k8s.apimachinery.pkg.api.resource.Quantity");
  if (type == "int-or-string") return Ref("io.k8s.apimachinery.pkg.util.intstr.IntOrString");
  if (type == "time") return Ref("io.k8s.apimachinery.pkg.apis.meta.v1.Time");
  refs->insert(std::string(type));
  return Ref(OpenApiName(std::string(type)));
}

// A field's schema as kube-apiserver writes it: a reference wrapped in allOf
// so that the field's own description can sit beside it.
json FieldSchema(const SchemaField& field, std::set<std::string>* refs) {
  json schema = TypeSchema(field.type, refs);
  if (schema.contains("$ref")) schema = {{"allOf", json::array({schema})}};
  schema["description"] = field.description;
  // The tagged tables' enums and defaults, as kube-apiserver publishes them.
  for (const std::string& tag : field.tags) {
    if (tag.starts_with("enum=")) {
      json values = json::array();
      std::stringstream in(tag.substr(5));
      for (std::string v; std::getline(in, v, ',');) values.push_back(v);
      schema["enum"] = std::move(values);
    } else if (tag.starts_with("default=")) {
      json value = json::parse(tag.substr(8), nullptr, false);
      if (!value.is_discarded()) schema["default"] = std::move(value);
    }
  }
  return schema;
}

json TableSchema(const SchemaType& type, std::set<std::string>* refs) {
  json properties = json::object();
  json required = json::array();
  for (const SchemaField& f : type.fields) {
    properties[f.name] = FieldSchema(f, refs);
    if (f.required) required.push_back(f.name);
  }
  json out = {{"type", "object"}, {"description", type.description}, {"properties", properties}};
  if (!required.empty()) out["required"] = required;
  return out;
}

json Gvk(const std::string& group, const std::string& version, const std::string& kind) {
  return json::array({{{"group", group}, {"version", version}, {"kind", kind}}});
}

json SpecialSchemas() {
  return {
      {"io.k8s.apimachinery.pkg.api.resource.Quantity",
       {{"description",
         "A fixed-point number with a suffix (\"100m\", \"2Gi\", \"1e3\"); written as a string."},
        {"oneOf", json::array({{{"type", "string"}}, {{"type", "number"}}})}}},
      {"io.k8s.apimachinery.pkg.util.intstr.IntOrString",
       {{"description", "An int32 or a string (such as a percentage \"25%\")."},
        {"format", "int-or-string"},
        {"oneOf", json::array({{{"type", "integer"}}, {{"type", "string"}}})}}},
      {"io.k8s.apimachinery.pkg.apis.meta.v1.Time",
       {{"description", "A time in RFC 3339 form, in seconds, UTC."},
        {"type", "string"},
        {"format", "date-time"}}}};
}

std::string CrdSchemaName(const std::string& group, const std::string& version,
                          const std::string& kind) {
  // kube-apiserver's name for a CRD's schema: the group reversed, then version and kind.
  std::vector<std::string> parts;
  std::stringstream in(group);
  for (std::string part; std::getline(in, part, '.');) parts.push_back(part);
  std::string out;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) out += *it + ".";
  return out + version + "." + kind;
}

json CrdSchema(const ResourceInfo& info, const std::string& version) {
  json schema = {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}};
  if (std::shared_ptr<const json> s = CrdVersionSchema(info, version)) schema = *s;
  json& properties = schema["properties"];
  if (!properties.is_object()) properties = json::object();
  properties["apiVersion"] = {
      {"type", "string"},
      {"description", "The versioned schema of this representation of an object."}};
  properties["kind"] = {{"type", "string"},
                        {"description", "The REST resource this object represents."}};
  properties["metadata"] = {{"allOf", json::array({Ref(OpenApiName(std::string(kObjectMeta)))})},
                            {"description", "Standard object's metadata."}};
  schema["type"] = "object";
  schema["x-kubernetes-group-version-kind"] = Gvk(info.group, version, info.kind);
  return schema;
}

json Parameter(const char* name) {
  return {{"name", name},
          {"in", "query"},
          {"description", std::string(name)},
          {"schema", {{"type", "string"}, {"uniqueItems", true}}}};
}

json Operation(const ResourceInfo& info, const std::string& version, const char* action,
               bool with_write_params, const std::string& schema_name) {
  json params = json::array();
  if (with_write_params) {
    params.push_back(Parameter("dryRun"));
    params.push_back(Parameter("fieldManager"));
    params.push_back(Parameter("fieldValidation"));
  }
  json ok = {{"description", "OK"}};
  if (!schema_name.empty()) {
    ok["content"] = {{"application/json", {{"schema", Ref(schema_name)}}}};
  }
  return {{"operationId", std::string(action) + info.kind},
          {"parameters", params},
          {"responses", {{"200", ok}}},
          {"x-kubernetes-action", action},
          {"x-kubernetes-group-version-kind",
           {{"group", info.group}, {"version", version}, {"kind", info.kind}}}};
}

}  // namespace

std::string OpenApiName(const std::string& table_name) {
  if (table_name.starts_with("meta.")) return "io.k8s.apimachinery.pkg.apis." + table_name;
  return "io.k8s.api." + table_name;
}

namespace {

// Leading "+tag" words of `rest` moved to `tags`.
void TakeTags(std::string& rest, std::vector<std::string>& tags) {
  while (rest.starts_with("+")) {
    const size_t end = rest.find(' ');
    tags.push_back(rest.substr(1, end == std::string::npos ? std::string::npos : end - 1));
    rest = end == std::string::npos ? std::string() : rest.substr(end + 1);
  }
}

}  // namespace

const std::map<std::string, SchemaType>& BuiltinSchemaTypes() {
  static const std::map<std::string, SchemaType> kTypes = [] {
    std::map<std::string, SchemaType> types;
    std::istringstream in(std::string(kBuiltinSchemaText) + "\n" + SchedulingSchemaText());
    SchemaType* current = nullptr;
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      std::istringstream words(line);
      std::string first;
      std::string second;
      words >> first;
      std::string rest;
      std::getline(words >> std::ws, rest);
      if (first.starts_with("@")) {
        SchemaType type;
        type.name = first.substr(1);
        if (!rest.starts_with("+")) {
          std::istringstream more(rest);
          more >> second;
          std::getline(more >> std::ws, rest);
        }
        const size_t slash = second.rfind('/');
        if (slash != std::string::npos && !second.empty() &&
            std::isupper(static_cast<unsigned char>(second[slash + 1]))) {
          type.api_version = second.substr(0, slash);
          type.kind = second.substr(slash + 1);
        } else if (!second.empty()) {
          rest = rest.empty() ? second : second + " " + rest;
        }
        TakeTags(rest, type.tags);
        type.description = rest;
        auto [it, inserted] = types.emplace(type.name, std::move(type));
        if (!inserted) TableDefect(line, "type listed twice");
        current = &it->second;
        continue;
      }
      {
        std::istringstream more(rest);
        more >> second;
        std::getline(more >> std::ws, rest);
      }
      if (current == nullptr || second.empty()) TableDefect(line, "field outside a type");
      SchemaField field;
      field.required = first.ends_with("!");
      field.name = field.required ? first.substr(0, first.size() - 1) : first;
      field.type = second;
      TakeTags(rest, field.tags);
      field.description = rest;
      current->fields.push_back(std::move(field));
    }
    // Every named type must be in the table.
    for (const auto& [name, type] : types) {
      for (const SchemaField& f : type.fields) {
        std::string t = f.type;
        while (t.starts_with("[]") || t.starts_with("{}")) t = t.substr(2);
        t = t.substr(0, t.find('/'));
        if (!IsScalar(t) && !types.count(t)) TableDefect(name + "." + f.name, "unknown type");
      }
    }
    return types;
  }();
  return kTypes;
}

std::string OpenApiV3Document(const std::vector<std::shared_ptr<const ResourceInfo>>& resources,
                              const std::string& group, const std::string& version) {
  const auto& table = BuiltinSchemaTypes();
  const std::string api_version = group.empty() ? version : group + "/" + version;
  json schemas = json::object();
  std::set<std::string> refs;  // table types the document's schemas name
  json paths = json::object();
  const std::string base = group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
  for (const auto& info : resources) {
    if (info->group != group || !info->ServesVersion(version)) continue;
    std::string schema_name;
    if (info->crd) {
      schema_name = CrdSchemaName(group, version, info->kind);
      schemas[schema_name] = CrdSchema(*info, version);
      refs.insert(std::string(kObjectMeta));
    } else {
      const auto it = std::find_if(table.begin(), table.end(), [&](const auto& entry) {
        return entry.second.api_version == api_version && entry.second.kind == info->kind;
      });
      if (it != table.end()) {
        schema_name = OpenApiName(it->first);
        refs.insert(it->first);
      } else {
        // A kind outside the table: its envelope, the rest kept as given.
        const std::string prefix = group.empty() ? "core" : group.substr(0, group.find('.'));
        schema_name = "io.k8s.api." + prefix + "." + version + "." + info->kind;
        schemas[schema_name] = {
            {"type", "object"},
            {"description", info->kind + " (its fields are not described by this server)."},
            {"x-kubernetes-preserve-unknown-fields", true},
            {"properties",
             {{"apiVersion", {{"type", "string"}, {"description", "The versioned schema."}}},
              {"kind", {{"type", "string"}, {"description", "The REST resource."}}},
              {"metadata",
               {{"allOf", json::array({Ref(OpenApiName(std::string(kObjectMeta)))})},
                {"description", "Standard object's metadata."}}}}},
            {"x-kubernetes-group-version-kind", Gvk(group, version, info->kind)}};
        refs.insert(std::string(kObjectMeta));
      }
    }
    const std::string collection = info->namespaced
                                       ? base + "/namespaces/{namespace}/" + info->resource
                                       : base + "/" + info->resource;
    paths[collection] = {{"get", Operation(*info, version, "list", false, "")},
                         {"post", Operation(*info, version, "post", true, schema_name)},
                         {"delete", Operation(*info, version, "deletecollection", false, "")}};
    paths[collection + "/{name}"] = {
        {"get", Operation(*info, version, "get", false, schema_name)},
        {"put", Operation(*info, version, "put", true, schema_name)},
        {"patch", Operation(*info, version, "patch", true, schema_name)},
        {"delete", Operation(*info, version, "delete", false, "")}};
    if (info->has_status) {
      paths[collection + "/{name}/status"] = {
          {"get", Operation(*info, version, "get", false, schema_name)},
          {"put", Operation(*info, version, "put", true, schema_name)},
          {"patch", Operation(*info, version, "patch", true, schema_name)}};
    }
  }
  // The table types the schemas name, transitively.
  std::vector<std::string> pending(refs.begin(), refs.end());
  std::set<std::string> done;
  while (!pending.empty()) {
    const std::string name = pending.back();
    pending.pop_back();
    if (!done.insert(name).second) continue;
    std::set<std::string> more;
    const SchemaType& type = table.at(name);
    json schema = TableSchema(type, &more);
    if (!type.kind.empty()) {
      const size_t slash = type.api_version.find('/');
      schema["x-kubernetes-group-version-kind"] =
          slash == std::string::npos ? Gvk("", type.api_version, type.kind)
                                     : Gvk(type.api_version.substr(0, slash),
                                           type.api_version.substr(slash + 1), type.kind);
    }
    schemas[OpenApiName(name)] = std::move(schema);
    for (const std::string& m : more) pending.push_back(m);
  }
  const json special = SpecialSchemas();
  for (const auto& [name, schema] : special.items()) schemas[name] = schema;
  return json({{"openapi", "3.0.0"},
               {"info", {{"title", "Kubernetes"}, {"version", "v1.32.0"}}},
               {"paths", paths},
               {"components", {{"schemas", schemas}}}})
      .dump();
}

ApplySchema BuiltinApplySchema(std::string_view api_version, std::string_view kind) {
  // Every table type as an OpenAPI schema, once.
  static const json kComponents = [] {
    json out = SpecialSchemas();
    std::set<std::string> refs;
    for (const auto& [name, type] : BuiltinSchemaTypes())
      out[OpenApiName(name)] = TableSchema(type, &refs);
    return out;
  }();
  for (const auto& [name, type] : BuiltinSchemaTypes()) {
    if (type.api_version == api_version && type.kind == kind) {
      return ApplySchema{&kComponents[OpenApiName(name)], &kComponents};
    }
  }
  return ApplySchema{};
}

}  // namespace copse::apiserver
