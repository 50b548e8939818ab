#pragma once
// The built-in schema table (apiserver/openapi_builtin.cc) as parsed types,
// shared by the OpenAPI documents and server-side apply's list semantics.
//
// Thread-safety: BuiltinSchemaTypes() parses once (thread-safe static) and
// hands out an immutable map.

#include <map>
#include <string>
#include <vector>

namespace copse::apiserver {

extern const char* const kBuiltinSchemaText;
// scheduling.k8s.io's Workload API in every served version, with the
// validation tags the schema walker reads (apiserver/scheduling_schema.cc):
// the same table format, built once.
const std::string& SchedulingSchemaText();

struct SchemaField {
  std::string name;
  std::string type;  // the table's type token ("[]core.v1.Container/name", "{}string", ...)
  bool required = false;
  std::string description;
  // "+tag" or "+tag=value" words after the type (without the '+'): Go and
  // validation facts the schema walker uses (apiserver/schema_rules.h).
  std::vector<std::string> tags;
};

struct SchemaType {
  std::string name;         // "core.v1.Pod"
  std::string api_version;  // "v1", "apps/v1"; empty for types that are no kind
  std::string kind;
  std::string description;
  std::vector<SchemaField> fields;
  std::vector<std::string> tags;  // as SchemaField::tags ("union")
};

// Every table text's types. Aborts on a malformed table (a build defect).
const std::map<std::string, SchemaType>& BuiltinSchemaTypes();

// "core.v1.Pod" -> "io.k8s.api.core.v1.Pod"; "meta.v1.X" ->
// "io.k8s.apimachinery.pkg.apis.meta.v1.X".
std::string OpenApiName(const std::string& table_name);

}  // namespace copse::apiserver
