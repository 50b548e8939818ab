#include "apiserver/validation.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <utility>

#include "apiserver/field_error.h"
#include "apiserver/jsonpath.h"
#include "apiserver/openapi_internal.h"
#include "apiserver/scheduling_api.h"
#include "apiserver/selector.h"
#include "apiserver/simulated_lifetime.h"
#include "apiserver/workloads.h"
#include "core/gang.h"
#include "core/quantity.h"
#include "kube/pod_group.h"

namespace copse::apiserver {
namespace {

using json = nlohmann::json;

// ---------------------------------------------------------------------------
// field.ErrorList.

class FieldErrors {
 public:
  void Required(const std::string& field, std::string_view detail = {}) {
    Add(field + ": Required value", detail);
  }
  void Forbidden(const std::string& field, std::string_view detail) {
    Add(field + ": Forbidden", detail);
  }
  void TooLong(const std::string& field, int64_t max_bytes) {
    Add(field + ": Too long", "may not be more than " + std::to_string(max_bytes) +
                                  (max_bytes == 1 ? " byte" : " bytes"));
  }
  void Invalid(const std::string& field, const std::string& value_repr, std::string_view detail) {
    Add(field + ": Invalid value: " + value_repr, detail);
  }
  void InvalidString(const std::string& field, std::string_view value, std::string_view detail) {
    Invalid(field, GoQuote(value), detail);
  }
  void InvalidInt(const std::string& field, int64_t value, std::string_view detail) {
    Invalid(field, std::to_string(value), detail);
  }
  void Duplicate(const std::string& field, const std::string& value_repr,
                 std::string_view detail = {}) {
    Add(field + ": Duplicate value: " + value_repr, detail);
  }
  void NotSupported(const std::string& field, const std::string& value_repr,
                    std::initializer_list<std::string_view> valid) {
    std::string detail;
    if (valid.size() > 0) {
      detail = "supported values: ";
      bool first = true;
      for (std::string_view v : valid) {
        if (!first) detail += ", ";
        first = false;
        detail += GoQuote(v);
      }
    }
    Add(field + ": Unsupported value: " + value_repr, detail);
  }
  // A complete "<field>: <message>" error.
  void Add(std::string message) { AddMessage(std::move(message)); }
  void AddAll(const FieldErrors& other) {
    for (const std::string& m : other.messages_) AddMessage(m);
  }

  bool empty() const { return messages_.empty(); }
  size_t size() const { return messages_.size(); }

  // utilerrors.NewAggregate(errs.ToAggregate()): one message, or "[a, b]".
  std::string Aggregate() const {
    if (messages_.size() == 1) return messages_.front();
    std::string out = "[";
    for (size_t i = 0; i < messages_.size(); ++i) {
      if (i > 0) out += ", ";
      out += messages_[i];
    }
    return out + "]";
  }

 private:
  void Add(std::string body, std::string_view detail) {
    if (!detail.empty()) {
      body += ": ";
      body += detail;
    }
    AddMessage(std::move(body));
  }
  void AddMessage(std::string message) {
    if (seen_.insert(message).second) messages_.push_back(std::move(message));
  }

  std::vector<std::string> messages_;
  std::set<std::string> seen_;
};

// ---------------------------------------------------------------------------
// k8s.io/apimachinery/pkg/util/validation.

constexpr std::string_view kFieldImmutable = "field is immutable";
constexpr int64_t kTotalAnnotationSizeLimit = 256 * 1024;
constexpr std::string_view kQuantityRegexError =
    "quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

// apimachinery's maskTrailingDash: generateName "foo-" validates as "foa".
std::string MaskTrailingDash(std::string_view name) {
  if (name.size() > 1 && name.back() == '-') {
    return std::string(name.substr(0, name.size() - 2)) + "a";
  }
  return std::string(name);
}

using NameValidator = std::function<std::vector<std::string>(std::string_view name, bool prefix)>;

std::vector<std::string> NameIsDnsSubdomain(std::string_view name, bool prefix) {
  return IsDns1123Subdomain(prefix ? MaskTrailingDash(name) : std::string(name));
}
std::vector<std::string> NameIsDnsLabel(std::string_view name, bool prefix) {
  return IsDns1123Label(prefix ? MaskTrailingDash(name) : std::string(name));
}
std::vector<std::string> NameIsDns1035Label(std::string_view name, bool prefix) {
  return IsDns1035Label(prefix ? MaskTrailingDash(name) : std::string(name));
}

// ---------------------------------------------------------------------------
// JSON access: missing fields read as Go's zero values.

using json_fields::Arr;
using json_fields::Get;
using json_fields::Str;
const json& Obj(const json& v) {
  static const json kEmpty = json::object();
  return v.is_object() ? v : kEmpty;
}

std::string Index(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}
std::string Key(const std::string& path, std::string_view key) {
  return path + "[" + std::string(key) + "]";
}

// ---------------------------------------------------------------------------
// What is being validated.

struct Target {
  std::string_view group;
  std::string_view version;
  std::string_view kind;
  std::string_view resource;
  bool namespaced = true;
  bool builtin = true;  // false for custom resources

  std::string ApiVersion() const {
    return group.empty() ? std::string(version) : std::string(group) + "/" + std::string(version);
  }
  // schema.GroupKind.String(): "Pod", "PriorityClass.scheduling.k8s.io".
  std::string QualifiedKind(std::string_view kind_name) const {
    return group.empty() ? std::string(kind_name)
                         : std::string(kind_name) + "." + std::string(group);
  }
  bool Is(std::string_view g, std::string_view k) const { return group == g && kind == k; }
};

Error InvalidFromErrors(const std::string& qualified_kind, std::string_view name,
                        const FieldErrors& errors) {
  return Error{ErrorCode::kInvalid,
               qualified_kind + " " + GoQuote(name) + " is invalid: " + errors.Aggregate(), 422,
               "Invalid"};
}

// ---------------------------------------------------------------------------
// Go types of the fields of ConfigMap, Secret, Node and Pod: a value of
// another JSON type fails decoding in kube-apiserver (encoding/json's
// UnmarshalTypeError), and so it does here, with the same message. Node's and
// Pod's spec and status come from the built-in schema table that the OpenAPI
// documents are made of (apiserver/openapi_builtin.cc), so every field it
// describes is checked; ConfigMap and Secret are written out below.

struct GoType {
  enum Kind : uint8_t {
    kString,
    kBool,
    kInt32,
    kInt64,
    kNumber,       // float64
    kBytes,        // []byte: base64 text
    kQuantity,     // resource.Quantity: a string or a number in its syntax
    kIntOrString,  // intstr.IntOrString: a string or an int32
    kObject,       // a struct the table does not describe: any JSON object
    kMap,
    kList,
    kStruct
  };
  Kind kind = kString;
  std::string name;  // as %v prints the Go type: "string", "v1.TaintEffect", "[]v1.Container"
  std::string struct_name;  // kStruct: the struct's own name ("PodSpec")
  std::vector<std::pair<std::string, std::shared_ptr<const GoType>>> fields;  // kStruct
  std::shared_ptr<const GoType> elem;                                         // kMap, kList
};
using GoTypePtr = std::shared_ptr<const GoType>;

GoTypePtr Scalar(GoType::Kind kind, std::string name) {
  auto t = std::make_shared<GoType>();
  t->kind = kind;
  t->name = std::move(name);
  return t;
}
GoTypePtr GoString(std::string name = "string") { return Scalar(GoType::kString, std::move(name)); }
GoTypePtr Bool() { return Scalar(GoType::kBool, "bool"); }
GoTypePtr Int32() { return Scalar(GoType::kInt32, "int32"); }
GoTypePtr Int64() { return Scalar(GoType::kInt64, "int64"); }
GoTypePtr Bytes() { return Scalar(GoType::kBytes, "[]uint8"); }
GoTypePtr MapOf(GoTypePtr elem, std::string name) {
  auto t = std::make_shared<GoType>();
  t->kind = GoType::kMap;
  t->name = std::move(name);
  t->elem = std::move(elem);
  return t;
}
GoTypePtr ListOf(GoTypePtr elem) {
  auto t = std::make_shared<GoType>();
  t->kind = GoType::kList;
  t->name = "[]" + elem->name;
  t->elem = std::move(elem);
  return t;
}
GoTypePtr Struct(std::string package_name, std::string struct_name,
                 std::vector<std::pair<std::string, GoTypePtr>> fields) {
  auto t = std::make_shared<GoType>();
  t->kind = GoType::kStruct;
  t->name = package_name + "." + struct_name;
  t->struct_name = std::move(struct_name);
  for (auto& [field, type] : fields) t->fields.emplace_back(std::move(field), std::move(type));
  return t;
}

GoTypePtr ConfigMapType() {
  static const GoTypePtr t = Struct("v1", "ConfigMap",
                                    {{"data", MapOf(GoString(), "map[string]string")},
                                     {"binaryData", MapOf(Bytes(), "map[string][]uint8")},
                                     {"immutable", Bool()}});
  return t;
}

GoTypePtr SecretType() {
  static const GoTypePtr t = Struct("v1", "Secret",
                                    {{"data", MapOf(Bytes(), "map[string][]uint8")},
                                     {"stringData", MapOf(GoString(), "map[string]string")},
                                     {"type", GoString("v1.SecretType")},
                                     {"immutable", Bool()}});
  return t;
}

// Go type names of the table's free-form "object" fields, for messages.
std::string ObjectGoName(std::string_view field) {
  static const std::map<std::string, std::string, std::less<>> kNames = {
      {"fieldRef", "v1.ObjectFieldSelector"},
      {"resourceFieldRef", "v1.ResourceFieldSelector"},
      {"configMapKeyRef", "v1.ConfigMapKeySelector"},
      {"secretKeyRef", "v1.SecretKeySelector"},
      {"emptyDir", "v1.EmptyDirVolumeSource"},
      {"configMap", "v1.ConfigMapVolumeSource"},
      {"secret", "v1.SecretVolumeSource"},
      {"persistentVolumeClaim", "v1.PersistentVolumeClaimVolumeSource"},
      {"projected", "v1.ProjectedVolumeSource"},
      {"hostPath", "v1.HostPathVolumeSource"},
      {"fieldsV1", "v1.FieldsV1"}};
  auto it = kNames.find(field);
  return it == kNames.end() ? "map[string]interface {}" : it->second;
}

// The Go type of a table type token ("[]core.v1.Container/name", "{}quantity",
// "core.v1.PodSpec", ...) of field `field`. Struct types are built once each
// (`built`); the table has no recursive types.
GoTypePtr TableGoType(std::string_view token, std::string_view field,
                      std::map<std::string, GoTypePtr>& built) {
  if (token.starts_with("[]")) {
    std::string_view item = token.substr(2);
    item = item.substr(0, item.find('/'));
    return ListOf(TableGoType(item, field, built));
  }
  if (token.starts_with("{}")) {
    GoTypePtr elem = TableGoType(token.substr(2), field, built);
    return MapOf(elem, "map[string]" + elem->name);
  }
  if (token == "string") return GoString();
  if (token == "time") return GoString("v1.Time");
  if (token == "bool") return Bool();
  if (token == "int32") return Int32();
  if (token == "int64") return Int64();
  if (token == "number") return Scalar(GoType::kNumber, "float64");
  if (token == "quantity") return Scalar(GoType::kQuantity, "resource.Quantity");
  if (token == "int-or-string") return Scalar(GoType::kIntOrString, "intstr.IntOrString");
  if (token == "object") return Scalar(GoType::kObject, ObjectGoName(field));
  const std::string name(token);
  if (auto it = built.find(name); it != built.end()) return it->second;
  const auto& types = BuiltinSchemaTypes();
  auto type = types.find(name);
  if (type == types.end()) return Scalar(GoType::kObject, "map[string]interface {}");
  // "core.v1.PodSpec" -> package "v1", struct "PodSpec".
  const size_t dot = name.rfind('.');
  const size_t package_dot = name.rfind('.', dot - 1);
  std::vector<std::pair<std::string, GoTypePtr>> fields;
  for (const SchemaField& f : type->second.fields) {
    fields.emplace_back(f.name, TableGoType(f.type, f.name, built));
  }
  GoTypePtr out = Struct(name.substr(package_dot + 1, dot - package_dot - 1), name.substr(dot + 1),
                         std::move(fields));
  built.emplace(name, out);
  return out;
}

// A kind's spec and status as the table describes them (metadata is checked
// by DecodeCheck itself).
GoTypePtr TableKindType(const std::string& table_name) {
  std::map<std::string, GoTypePtr> built;
  const SchemaType& type = BuiltinSchemaTypes().at(table_name);
  std::vector<std::pair<std::string, GoTypePtr>> fields;
  for (const SchemaField& f : type.fields) {
    if (f.name == "spec" || f.name == "status") {
      fields.emplace_back(f.name, TableGoType(f.type, f.name, built));
    }
  }
  return Struct("v1", type.kind, std::move(fields));
}

GoTypePtr NodeType() {
  static const GoTypePtr t = TableKindType("core.v1.Node");
  return t;
}

GoTypePtr PodType() {
  static const GoTypePtr t = TableKindType("core.v1.Pod");
  return t;
}

GoTypePtr GoTypeOf(std::string_view group, std::string_view kind) {
  if (!group.empty()) return nullptr;
  if (kind == "ConfigMap") return ConfigMapType();
  if (kind == "Secret") return SecretType();
  if (kind == "Node") return NodeType();
  if (kind == "Pod") return PodType();
  return nullptr;
}

// Go's base64.StdEncoding.Decode, as encoding/json runs it on a []byte
// field: "" when `s` decodes, else CorruptInputError's message.
std::string Base64Error(std::string_view s) {
  const auto value = [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
           c == '/';
  };
  const auto corrupt = [](size_t at) {
    return "illegal base64 data at input byte " + std::to_string(at);
  };
  const auto skip_newlines = [&](size_t& i) {
    while (i < s.size() && (s[i] == '\n' || s[i] == '\r')) ++i;
  };
  size_t si = 0;
  while (true) {
    for (int j = 0; j < 4; ++j) {
      skip_newlines(si);
      if (si == s.size()) {
        if (j == 0) return {};
        return corrupt(si - static_cast<size_t>(j));
      }
      const char c = s[si++];
      if (value(c)) continue;
      if (c != '=') return corrupt(si - 1);
      // Padding: only in the last two places of a quantum, then the end.
      if (j < 2) return corrupt(si - 1);
      if (j == 2) {
        skip_newlines(si);
        if (si == s.size()) return corrupt(s.size());
        if (s[si] != '=') return corrupt(si - 1);
        ++si;
      }
      skip_newlines(si);
      if (si < s.size()) return corrupt(si);
      return {};
    }
  }
}

// The JSON value as encoding/json names it in UnmarshalTypeError.Value.
std::string GoValueName(const json& v) {
  if (v.is_object()) return "object";
  if (v.is_array()) return "array";
  if (v.is_string()) return "string";
  if (v.is_boolean()) return "bool";
  return "number";
}

// First decoding error of `v` as `type`, or "". `owner` is the innermost Go
// struct holding the field, `path` the JSON path from the object's root
// (without indexes or map keys, as encoding/json reports it).
std::string CheckGoType(const json& v, const GoType& type, const std::string& owner,
                        const std::string& path) {
  if (v.is_null()) return {};  // the zero value
  const auto mismatch = [&](const std::string& value) {
    return "json: cannot unmarshal " + value + " into Go struct field " + owner + "." + path +
           " of type " + type.name;
  };
  switch (type.kind) {
    case GoType::kString:
      return v.is_string() ? std::string() : mismatch(GoValueName(v));
    case GoType::kBool:
      return v.is_boolean() ? std::string() : mismatch(GoValueName(v));
    case GoType::kInt32:
    case GoType::kInt64: {
      if (!v.is_number()) return mismatch(GoValueName(v));
      const int64_t lo = type.kind == GoType::kInt32 ? std::numeric_limits<int32_t>::min()
                                                     : std::numeric_limits<int64_t>::min();
      const int64_t hi = type.kind == GoType::kInt32 ? std::numeric_limits<int32_t>::max()
                                                     : std::numeric_limits<int64_t>::max();
      bool fits = false;
      if (v.is_number_unsigned()) {
        fits = v.get<uint64_t>() <= static_cast<uint64_t>(hi);
      } else if (v.is_number_integer()) {
        const int64_t n = v.get<int64_t>();
        fits = n >= lo && n <= hi;
      }
      return fits ? std::string() : mismatch("number " + v.dump());
    }
    case GoType::kNumber:
      return v.is_number() ? std::string() : mismatch(GoValueName(v));
    case GoType::kBytes:
      if (!v.is_string()) return mismatch(GoValueName(v));
      return Base64Error(v.get_ref<const std::string&>());
    case GoType::kQuantity: {
      // Quantity.UnmarshalJSON parses a string's contents, or the bare text
      // of anything else.
      std::string text;
      if (v.is_string()) {
        text = v.get<std::string>();
      } else if (v.is_number()) {
        text = v.dump();
      }
      if (!text.empty() && Quantity::Parse(text).ok()) return {};
      return path + ": " + std::string(kQuantityRegexError);
    }
    case GoType::kIntOrString: {
      if (v.is_string()) return {};
      if (v.is_number_integer()) {
        const bool fits =
            v.is_number_unsigned()
                ? v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int32_t>::max())
                : v.get<int64_t>() >= std::numeric_limits<int32_t>::min() &&
                      v.get<int64_t>() <= std::numeric_limits<int32_t>::max();
        if (fits) return {};
        return mismatch("number " + v.dump());
      }
      return mismatch(v.is_number() ? "number " + v.dump() : GoValueName(v));
    }
    case GoType::kObject:
      return v.is_object() ? std::string() : mismatch(GoValueName(v));
    case GoType::kMap:
      if (!v.is_object()) return mismatch(GoValueName(v));
      for (const auto& [key, item] : v.items()) {
        if (std::string e = CheckGoType(item, *type.elem, owner, path); !e.empty()) return e;
      }
      return {};
    case GoType::kList:
      if (!v.is_array()) return mismatch(GoValueName(v));
      for (const json& item : v) {
        if (std::string e = CheckGoType(item, *type.elem, owner, path); !e.empty()) return e;
      }
      return {};
    case GoType::kStruct:
      if (!v.is_object()) return mismatch(GoValueName(v));
      for (const auto& [field, field_type] : type.fields) {
        auto it = v.find(field);
        if (it == v.end()) continue;
        const std::string child = path.empty() ? field : path + "." + field;
        if (std::string e = CheckGoType(*it, *field_type, type.struct_name, child); !e.empty()) {
          return e;
        }
      }
      return {};
  }
  return {};
}

// ---------------------------------------------------------------------------
// Decoding (400): what kube-apiserver rejects before validation runs, with
// transformDecodeError's "<Kind> in version "<v>" cannot be handled as a
// <Kind>: ..." message.

class DecodeCheck {
 public:
  DecodeCheck(const Target& target, std::string data_kind, std::string data_version)
      : target_(target), data_kind_(std::move(data_kind)), data_version_(std::move(data_version)) {}

  std::optional<Error> Run(const json& obj) {
    const json& metadata = Get(obj, {"metadata"});
    if (!metadata.is_null() && !metadata.is_object()) {
      return Fail("json: cannot unmarshal " + JsonType(metadata) + " into Go struct field " +
                  std::string(target_.kind) + ".metadata of type v1.ObjectMeta");
    }
    for (std::string_view f : {"name", "generateName", "namespace", "uid", "resourceVersion",
                               "creationTimestamp", "deletionTimestamp"}) {
      const json& v = Get(metadata, {f});
      if (!v.is_null() && !v.is_string())
        return TypeError("ObjectMeta.metadata." + std::string(f), v, "string");
    }
    for (std::string_view f : {"labels", "annotations"}) {
      const json& m = Get(metadata, {f});
      if (m.is_null()) continue;
      if (!m.is_object())
        return TypeError("ObjectMeta.metadata." + std::string(f), m, "map[string]string");
      for (const auto& [k, v] : m.items()) {
        if (!v.is_string() && !v.is_null()) {
          return TypeError("ObjectMeta.metadata." + std::string(f), v, "string");
        }
      }
    }
    const json& finalizers = Get(metadata, {"finalizers"});
    if (!finalizers.is_null()) {
      if (!finalizers.is_array())
        return TypeError("ObjectMeta.metadata.finalizers", finalizers, "[]string");
      for (const json& f : finalizers) {
        if (!f.is_string()) return TypeError("ObjectMeta.metadata.finalizers", f, "string");
      }
    }
    if (target_.Is("", "Pod")) {
      for (std::string_view list : {"containers", "initContainers", "ephemeralContainers"}) {
        const json& containers = Get(obj, {"spec", list});
        if (containers.is_null()) continue;
        if (!containers.is_array()) {
          return TypeError("PodSpec.spec." + std::string(list), containers, "[]v1.Container");
        }
        for (const json& c : containers) {
          for (std::string_view kind : {"limits", "requests"}) {
            if (auto e = Quantities(Get(c, {"resources", kind})); e) return e;
          }
        }
      }
      if (auto e = Quantities(Get(obj, {"spec", "overhead"})); e) return e;
    }
    if (target_.Is("", "Node")) {
      if (auto e = Quantities(Get(obj, {"status", "capacity"})); e) return e;
      if (auto e = Quantities(Get(obj, {"status", "allocatable"})); e) return e;
    }
    if (GoTypePtr type = GoTypeOf(target_.group, target_.kind)) {
      if (std::string e = CheckGoType(obj, *type, std::string(), std::string()); !e.empty()) {
        return Fail(e);
      }
    }
    return std::nullopt;
  }

 private:
  static std::string JsonType(const json& v) {
    if (v.is_object()) return "object";
    if (v.is_array()) return "array";
    if (v.is_string()) return "string";
    if (v.is_boolean()) return "bool";
    return "number";
  }
  Error Fail(const std::string& cause) const {
    return BadRequest(data_kind_ + " in version " + GoQuote(data_version_) +
                      " cannot be handled as a " + std::string(target_.kind) + ": " + cause);
  }
  Error TypeError(const std::string& field, const json& v, std::string_view go_type) const {
    return Fail("json: cannot unmarshal " + JsonType(v) + " into Go struct field " + field +
                " of type " + std::string(go_type));
  }
  std::optional<Error> Quantities(const json& list) const {
    if (!list.is_object()) return std::nullopt;
    for (const auto& [name, v] : list.items()) {
      if (v.is_null()) continue;
      std::string text;
      if (v.is_string()) {
        text = v.get<std::string>();
      } else if (v.is_number()) {
        text = v.dump();
      } else {
        return Fail(std::string(kQuantityRegexError));
      }
      if (!Quantity::Parse(text).ok()) return Fail(std::string(kQuantityRegexError));
    }
    return std::nullopt;
  }

  const Target& target_;
  std::string data_kind_;
  std::string data_version_;
};

// ---------------------------------------------------------------------------
// ObjectMeta (apimachinery ValidateObjectMetaAccessor and friends).

std::vector<std::string> IsQualifiedNameImpl(std::string_view value) {
  return IsQualifiedName(value);
}

void ValidateLabels(const json& labels, const std::string& path, FieldErrors& errs) {
  for (const auto& [k, v] : Obj(labels).items()) {
    for (const std::string& msg : IsQualifiedNameImpl(k)) errs.InvalidString(path, k, msg);
    const std::string value = Str(v);
    for (const std::string& msg : IsValidLabelValue(value)) errs.InvalidString(path, value, msg);
  }
}

void ValidateAnnotations(const json& annotations, const std::string& path, FieldErrors& errs) {
  int64_t total = 0;
  for (const auto& [k, v] : Obj(annotations).items()) {
    std::string lower = k;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    for (const std::string& msg : IsQualifiedNameImpl(lower)) errs.InvalidString(path, k, msg);
    total += static_cast<int64_t>(k.size() + Str(v).size());
  }
  if (total > kTotalAnnotationSizeLimit) errs.TooLong(path, kTotalAnnotationSizeLimit);
}

void ValidateOwnerReferences(const json& refs, const std::string& path, FieldErrors& errs) {
  std::string first_controller;
  for (const json& ref : Arr(refs)) {
    const std::string api_version = Str(Get(ref, {"apiVersion"}));
    const std::string kind = Str(Get(ref, {"kind"}));
    const std::string name = Str(Get(ref, {"name"}));
    const std::string uid = Str(Get(ref, {"uid"}));
    const std::string version = api_version.substr(
        api_version.find('/') == std::string::npos ? 0 : api_version.find('/') + 1);
    if (version.empty())
      errs.InvalidString(path + ".apiVersion", api_version, "version must not be empty");
    if (kind.empty()) errs.InvalidString(path + ".kind", kind, "kind must not be empty");
    if (name.empty()) errs.InvalidString(path + ".name", name, "name must not be empty");
    if (uid.empty()) errs.InvalidString(path + ".uid", uid, "uid must not be empty");
    if (api_version == "v1" && kind == "Binding") {
      errs.Invalid(path, GoRepr(ref), "/v1, Kind=Binding is disallowed from being an owner");
    }
    if (Get(ref, {"controller"}).is_boolean() && Get(ref, {"controller"}).get<bool>()) {
      const std::string current = kind + "/" + name;
      if (!first_controller.empty()) {
        errs.InvalidString(path, first_controller,
                           "Only one reference can have Controller set to true. Found \"true\" in "
                           "references for " +
                               first_controller + " and " + current);
      } else {
        first_controller = current;
      }
    }
  }
}

bool IsStandardFinalizerName(std::string_view name) {
  return name == "kubernetes" || name == "orphan" || name == "foregroundDeletion";
}

void ValidateFinalizers(const json& finalizers, const std::string& path, bool core_group,
                        FieldErrors& errs) {
  const json& list = Arr(finalizers);
  for (const json& f : list) {
    const std::string name = Str(f);
    for (const std::string& msg : IsQualifiedNameImpl(name)) errs.InvalidString(path, name, msg);
  }
  if (!core_group) return;
  // Core types also require unqualified finalizers to be standard ones.
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string name = Str(list[i]);
    if (name.find('/') == std::string::npos && !IsStandardFinalizerName(name)) {
      errs.InvalidString(Index(path, i), name,
                         "name is neither a standard finalizer name nor is it fully qualified");
    }
  }
}

void ValidateObjectMeta(const json& obj, const Target& target, const NameValidator& name_fn,
                        FieldErrors& errs) {
  const json& meta = Get(obj, {"metadata"});
  const std::string name = Str(Get(meta, {"name"}));
  const std::string generate_name = Str(Get(meta, {"generateName"}));
  const std::string ns = Str(Get(meta, {"namespace"}));
  if (!generate_name.empty()) {
    for (const std::string& msg : name_fn(generate_name, true)) {
      errs.InvalidString("metadata.generateName", generate_name, msg);
    }
  }
  if (name.empty()) {
    // With generateName the server picks the name (before or after this call).
    if (generate_name.empty()) errs.Required("metadata.name", "name or generateName is required");
  } else {
    for (const std::string& msg : name_fn(name, false))
      errs.InvalidString("metadata.name", name, msg);
  }
  if (target.namespaced) {
    if (ns.empty()) {
      errs.Required("metadata.namespace");
    } else {
      for (const std::string& msg : IsDns1123Label(ns))
        errs.InvalidString("metadata.namespace", ns, msg);
    }
  } else if (!ns.empty()) {
    errs.Forbidden("metadata.namespace", "not allowed on this type");
  }
  const json& generation = Get(meta, {"generation"});
  if (generation.is_number() && generation.get<double>() < 0) {
    errs.InvalidInt("metadata.generation", generation.get<int64_t>(),
                    "must be greater than or equal to 0");
  }
  ValidateLabels(Get(meta, {"labels"}), "metadata.labels", errs);
  ValidateAnnotations(Get(meta, {"annotations"}), "metadata.annotations", errs);
  ValidateOwnerReferences(Get(meta, {"ownerReferences"}), "metadata.ownerReferences", errs);
  ValidateFinalizers(Get(meta, {"finalizers"}), "metadata.finalizers", target.group.empty(), errs);
}

void ValidateImmutable(const json& new_value, const json& old_value, const std::string& path,
                       FieldErrors& errs) {
  if (new_value != old_value)
    errs.Invalid(path, GoRepr(new_value.is_null() ? json("") : new_value), kFieldImmutable);
}

void ValidateObjectMetaUpdate(const json& new_obj, const json& old_obj, FieldErrors& errs) {
  const json& nm = Get(new_obj, {"metadata"});
  const json& om = Get(old_obj, {"metadata"});
  auto str_or_empty = [](const json& v) { return v.is_null() ? json("") : v; };
  if (!Get(om, {"deletionTimestamp"}).is_null()) {
    std::set<std::string> old_finalizers;
    for (const json& f : Arr(Get(om, {"finalizers"}))) old_finalizers.insert(Str(f));
    std::set<std::string> extra;
    for (const json& f : Arr(Get(nm, {"finalizers"}))) {
      if (old_finalizers.count(Str(f)) == 0) extra.insert(Str(f));
    }
    if (!extra.empty()) {
      std::string list = "[]string{";
      bool first = true;
      for (const std::string& f : extra) {
        if (!first) list += ", ";
        first = false;
        list += GoQuote(f);
      }
      list += "}";
      errs.Forbidden("metadata.finalizers",
                     "no new finalizers can be added if the object is being deleted, found new "
                     "finalizers " +
                         list);
    }
  }
  const json& new_generation = Get(nm, {"generation"});
  const json& old_generation = Get(om, {"generation"});
  if (new_generation.is_number_integer() && old_generation.is_number_integer() &&
      new_generation.get<int64_t>() < old_generation.get<int64_t>()) {
    errs.InvalidInt("metadata.generation", new_generation.get<int64_t>(),
                    "must not be decremented");
  }
  ValidateImmutable(str_or_empty(Get(nm, {"name"})), str_or_empty(Get(om, {"name"})),
                    "metadata.name", errs);
  ValidateImmutable(str_or_empty(Get(nm, {"namespace"})), str_or_empty(Get(om, {"namespace"})),
                    "metadata.namespace", errs);
  // An update without uid keeps the stored one (rest.BeforeUpdate).
  if (!Str(Get(nm, {"uid"})).empty()) {
    ValidateImmutable(str_or_empty(Get(nm, {"uid"})), str_or_empty(Get(om, {"uid"})),
                      "metadata.uid", errs);
  }
}

// ---------------------------------------------------------------------------
// Resources (pkg/apis/core/validation + helper).

bool IsNativeResource(std::string_view name) {
  return name.find('/') == std::string_view::npos ||
         name.find("kubernetes.io/") != std::string_view::npos;
}
bool IsHugePageResourceName(std::string_view name) { return name.rfind("hugepages-", 0) == 0; }
bool IsExtendedResourceName(std::string_view name) {
  if (IsNativeResource(name) || name.rfind("requests.", 0) == 0) return false;
  return IsQualifiedName("requests." + std::string(name)).empty();
}
bool IsIntegerResourceName(std::string_view name) {
  static const std::set<std::string, std::less<>> kInteger = {"pods",
                                                              "services",
                                                              "replicationcontrollers",
                                                              "resourcequotas",
                                                              "secrets",
                                                              "configmaps",
                                                              "persistentvolumeclaims",
                                                              "services.nodeports",
                                                              "services.loadbalancers"};
  return kInteger.count(name) > 0 || IsExtendedResourceName(name);
}
bool IsOvercommitAllowed(std::string_view name) {
  return IsNativeResource(name) && !IsHugePageResourceName(name);
}
bool IsStandardResourceName(std::string_view name) {
  static const std::set<std::string, std::less<>> kStandard = {"cpu",
                                                               "memory",
                                                               "ephemeral-storage",
                                                               "requests.cpu",
                                                               "requests.memory",
                                                               "requests.ephemeral-storage",
                                                               "limits.cpu",
                                                               "limits.memory",
                                                               "limits.ephemeral-storage",
                                                               "pods",
                                                               "services",
                                                               "replicationcontrollers",
                                                               "resourcequotas",
                                                               "secrets",
                                                               "configmaps",
                                                               "persistentvolumeclaims",
                                                               "storage",
                                                               "requests.storage",
                                                               "services.nodeports",
                                                               "services.loadbalancers"};
  return kStandard.count(name) > 0 || IsHugePageResourceName(name) ||
         name.rfind("requests.hugepages-", 0) == 0 || name.rfind("limits.hugepages-", 0) == 0;
}
bool IsStandardContainerResourceName(std::string_view name) {
  return name == "cpu" || name == "memory" || name == "ephemeral-storage" ||
         IsHugePageResourceName(name);
}

std::optional<Quantity> ParseQuantity(const json& v) {
  if (v.is_string()) {
    Result<Quantity> q = Quantity::Parse(v.get_ref<const std::string&>());
    if (q.ok()) return *q;
  } else if (v.is_number()) {
    Result<Quantity> q = Quantity::Parse(v.dump());
    if (q.ok()) return *q;
  }
  return std::nullopt;
}

void ValidateResourceQuantityValue(std::string_view resource, const Quantity& q,
                                   const std::string& path, FieldErrors& errs) {
  if (q.Sign() < 0) errs.InvalidString(path, q.ToString(), "must be greater than or equal to 0");
  if (IsIntegerResourceName(resource) && q.MilliValue() % 1000 != 0) {
    errs.InvalidString(path, q.ToString(), "must be an integer");
  }
}

void ValidateContainerResourceName(std::string_view name, const std::string& path,
                                   FieldErrors& errs) {
  const std::vector<std::string> qualified = IsQualifiedName(name);
  for (const std::string& msg : qualified) errs.InvalidString(path, name, msg);
  const bool unprefixed = name.find('/') == std::string_view::npos;
  if (qualified.empty() && unprefixed && !IsStandardResourceName(name)) {
    errs.InvalidString(path, name, "must be a standard resource type or fully qualified");
  }
  if (unprefixed) {
    if (!IsStandardContainerResourceName(name)) {
      errs.InvalidString(path, name, "must be a standard resource for containers");
    }
  } else if (!IsNativeResource(name) && !IsExtendedResourceName(name)) {
    errs.InvalidString(path, name, "doesn't follow extended resource name standard");
  }
}

void ValidateResourceRequirements(const json& resources, const std::string& path,
                                  FieldErrors& errs) {
  const std::string lim_path = path + ".limits";
  const std::string req_path = path + ".requests";
  const json& limits = Obj(Get(resources, {"limits"}));
  const json& requests = Obj(Get(resources, {"requests"}));
  for (const auto& [name, v] : limits.items()) {
    const std::string fld = Key(lim_path, name);
    ValidateContainerResourceName(name, fld, errs);
    if (std::optional<Quantity> q = ParseQuantity(v))
      ValidateResourceQuantityValue(name, *q, fld, errs);
  }
  for (const auto& [name, v] : requests.items()) {
    const std::string fld = Key(req_path, name);
    ValidateContainerResourceName(name, fld, errs);
    std::optional<Quantity> q = ParseQuantity(v);
    if (!q) continue;
    ValidateResourceQuantityValue(name, *q, fld, errs);
    auto lim = limits.find(name);
    std::optional<Quantity> limit = lim == limits.end() ? std::nullopt : ParseQuantity(*lim);
    if (limit) {
      if (*q != *limit && !IsOvercommitAllowed(name)) {
        errs.InvalidString(req_path, q->ToString(),
                           "must be equal to " + name + " limit of " + limit->ToString());
      } else if (*q > *limit) {
        errs.InvalidString(
            req_path, q->ToString(),
            "must be less than or equal to " + name + " limit of " + limit->ToString());
      }
    } else if (!IsOvercommitAllowed(name)) {
      errs.Required(lim_path, "Limit must be set for non overcommitable resources");
    }
  }
}

// ---------------------------------------------------------------------------
// Pods.

std::vector<std::string> IsValidPortNum(int64_t port) {
  if (port >= 1 && port <= 65535) return {};
  return {"must be between 1 and 65535, inclusive"};
}

std::vector<std::string> IsValidPortName(std::string_view port) {
  std::vector<std::string> errs;
  if (port.size() > 15) errs.push_back(MaxLenError(15));
  if (port.empty() ||
      !std::all_of(port.begin(), port.end(), [](char c) { return IsLowerAlnum(c) || c == '-'; })) {
    errs.push_back("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
  }
  if (std::none_of(port.begin(), port.end(), [](char c) { return c >= 'a' && c <= 'z'; })) {
    errs.push_back("must contain at least one letter (a-z)");
  }
  if (port.find("--") != std::string_view::npos)
    errs.push_back("must not contain consecutive hyphens");
  if (!port.empty() && (port.front() == '-' || port.back() == '-')) {
    errs.push_back("must not begin or end with a hyphen");
  }
  return errs;
}

int64_t IntOf(const json& v) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float()) return static_cast<int64_t>(v.get<double>());
  return 0;
}

void ValidateContainerPorts(const json& ports, const std::string& path, FieldErrors& errs) {
  std::set<std::string> names;
  const json& list = Arr(ports);
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string idx = Index(path, i);
    const std::string name = Str(Get(list[i], {"name"}));
    if (!name.empty()) {
      const std::vector<std::string> msgs = IsValidPortName(name);
      for (const std::string& m : msgs) errs.InvalidString(idx + ".name", name, m);
      if (msgs.empty() && !names.insert(name).second) errs.Duplicate(idx + ".name", GoQuote(name));
    }
    const int64_t container_port = IntOf(Get(list[i], {"containerPort"}));
    if (container_port == 0) {
      errs.Required(idx + ".containerPort");
    } else {
      for (const std::string& m : IsValidPortNum(container_port)) {
        errs.InvalidInt(idx + ".containerPort", container_port, m);
      }
    }
    const int64_t host_port = IntOf(Get(list[i], {"hostPort"}));
    if (host_port != 0) {
      for (const std::string& m : IsValidPortNum(host_port))
        errs.InvalidInt(idx + ".hostPort", host_port, m);
    }
    const std::string protocol = Str(Get(list[i], {"protocol"}));
    if (!protocol.empty() && protocol != "TCP" && protocol != "UDP" && protocol != "SCTP") {
      errs.NotSupported(idx + ".protocol", GoQuote(protocol), {"SCTP", "TCP", "UDP"});
    }
  }
}

void ValidateContainer(const json& c, const std::string& path, FieldErrors& errs) {
  const std::string name = Str(Get(c, {"name"}));
  if (name.empty()) {
    errs.Required(path + ".name");
  } else {
    for (const std::string& m : IsDns1123Label(name)) errs.InvalidString(path + ".name", name, m);
  }
  if (Str(Get(c, {"image"})).empty()) errs.Required(path + ".image");
  ValidateContainerPorts(Get(c, {"ports"}), path + ".ports", errs);
  const json& env = Arr(Get(c, {"env"}));
  for (size_t i = 0; i < env.size(); ++i) {
    if (Str(Get(env[i], {"name"})).empty()) errs.Required(Index(path + ".env", i) + ".name");
  }
  const std::string pull = Str(Get(c, {"imagePullPolicy"}));
  if (!pull.empty() && pull != "Always" && pull != "IfNotPresent" && pull != "Never") {
    errs.NotSupported(path + ".imagePullPolicy", GoQuote(pull),
                      {"Always", "IfNotPresent", "Never"});
  }
  ValidateResourceRequirements(Get(c, {"resources"}), path + ".resources", errs);
}

void ValidateTaintEffect(const json& effect_json, bool allow_empty, const std::string& path,
                         FieldErrors& errs) {
  const std::string effect = Str(effect_json);
  if (!allow_empty && effect.empty()) {
    errs.Required(path);
    return;
  }
  if (effect != "NoSchedule" && effect != "PreferNoSchedule" && effect != "NoExecute") {
    errs.NotSupported(path, GoQuote(effect), {"NoSchedule", "PreferNoSchedule", "NoExecute"});
  }
}

void ValidateLabelName(std::string_view key, const std::string& path, FieldErrors& errs) {
  for (const std::string& m : IsQualifiedName(key)) errs.InvalidString(path, key, m);
}

void ValidateTolerations(const json& tolerations, const std::string& path, FieldErrors& errs) {
  const json& list = Arr(tolerations);
  for (size_t i = 0; i < list.size(); ++i) {
    const json& t = list[i];
    const std::string idx = Index(path, i);
    const std::string key = Str(Get(t, {"key"}));
    const std::string op = Str(Get(t, {"operator"}));
    const std::string value = Str(Get(t, {"value"}));
    const std::string effect = Str(Get(t, {"effect"}));
    if (!key.empty()) ValidateLabelName(key, idx + ".key", errs);
    if (key.empty() && op != "Exists") {
      errs.InvalidString(idx + ".operator", op,
                         "operator must be Exists when `key` is empty, which means \"match all "
                         "values and all keys\"");
    }
    if (!Get(t, {"tolerationSeconds"}).is_null() && effect != "NoExecute") {
      errs.InvalidString(idx + ".effect", effect,
                         "effect must be 'NoExecute' when `tolerationSeconds` is set");
    }
    if (op == "Equal" || op.empty()) {
      const std::vector<std::string> msgs = IsValidLabelValue(value);
      if (!msgs.empty()) errs.InvalidString(idx + ".operator", value, Join(msgs, ";"));
    } else if (op == "Exists") {
      if (!value.empty()) {
        const json& seconds = Get(t, {"tolerationSeconds"});
        const std::string repr =
            "core.Toleration{Key:" + GoQuote(key) + ", Operator:" + GoQuote(op) +
            ", Value:" + GoQuote(value) + ", Effect:" + GoQuote(effect) + ", TolerationSeconds:" +
            (seconds.is_number() ? "(*int64)(" + std::to_string(IntOf(seconds)) + ")"
                                 : std::string("(*int64)(nil)")) +
            "}";
        errs.Invalid(idx + ".operator", repr, "value must be empty when `operator` is 'Exists'");
      }
    } else {
      errs.NotSupported(idx + ".operator", GoQuote(op), {"Equal", "Exists"});
    }
    if (!effect.empty()) ValidateTaintEffect(Get(t, {"effect"}), true, idx + ".effect", errs);
  }
}

void ValidatePodSpec(const json& spec, FieldErrors& errs) {
  const json& containers = Get(spec, {"containers"});
  std::set<std::string> names;
  if (Arr(containers).empty()) {
    errs.Required("spec.containers");
  } else {
    const json& list = Arr(containers);
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string path = Index("spec.containers", i);
      ValidateContainer(list[i], path, errs);
      const std::string name = Str(Get(list[i], {"name"}));
      if (!names.insert(name).second) errs.Duplicate(path + ".name", GoQuote(name));
    }
  }
  const json& init = Arr(Get(spec, {"initContainers"}));
  for (size_t i = 0; i < init.size(); ++i) {
    const std::string path = Index("spec.initContainers", i);
    ValidateContainer(init[i], path, errs);
    const std::string name = Str(Get(init[i], {"name"}));
    if (!names.insert(name).second) errs.Duplicate(path + ".name", GoQuote(name));
  }
  const std::string restart = Str(Get(spec, {"restartPolicy"}));
  if (!restart.empty() && restart != "Always" && restart != "OnFailure" && restart != "Never") {
    errs.NotSupported("spec.restartPolicy", GoQuote(restart), {"Always", "OnFailure", "Never"});
  }
  const std::string dns = Str(Get(spec, {"dnsPolicy"}));
  if (!dns.empty() && dns != "ClusterFirstWithHostNet" && dns != "ClusterFirst" &&
      dns != "Default" && dns != "None") {
    errs.NotSupported("spec.dnsPolicy", GoQuote(dns),
                      {"ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"});
  }
  ValidateLabels(Get(spec, {"nodeSelector"}), "spec.nodeSelector", errs);
  const json& gates = Arr(Get(spec, {"schedulingGates"}));
  std::set<std::string> gate_names;
  for (size_t i = 0; i < gates.size(); ++i) {
    const std::string name = Str(Get(gates[i], {"name"}));
    for (const std::string& m : IsQualifiedName(name))
      errs.InvalidString(Index("spec.schedulingGates", i), name, m);
    if (!gate_names.insert(name).second)
      errs.Duplicate(Index("spec.schedulingGates", i), GoQuote(name));
  }
  const std::string sa = Str(Get(spec, {"serviceAccountName"}));
  if (!sa.empty()) {
    for (const std::string& m : IsDns1123Subdomain(sa))
      errs.InvalidString("spec.serviceAccountName", sa, m);
  }
  const std::string node_name = Str(Get(spec, {"nodeName"}));
  if (!node_name.empty()) {
    for (const std::string& m : IsDns1123Subdomain(node_name))
      errs.InvalidString("spec.nodeName", node_name, m);
  }
  const json& deadline = Get(spec, {"activeDeadlineSeconds"});
  if (deadline.is_number()) {
    const int64_t v = IntOf(deadline);
    if (v < 1 || v > std::numeric_limits<int32_t>::max()) {
      errs.InvalidInt("spec.activeDeadlineSeconds", v,
                      "must be between 1 and 2147483647, inclusive");
    }
  }
  for (std::string_view f : {"hostname", "subdomain"}) {
    const std::string v = Str(Get(spec, {f}));
    if (!v.empty()) {
      for (const std::string& m : IsDns1123Label(v))
        errs.InvalidString("spec." + std::string(f), v, m);
    }
  }
  ValidateTolerations(Get(spec, {"tolerations"}), "spec.tolerations", errs);
  const std::string priority_class = Str(Get(spec, {"priorityClassName"}));
  if (!priority_class.empty()) {
    for (const std::string& m : IsDns1123Subdomain(priority_class)) {
      errs.InvalidString("spec.priorityClassName", priority_class, m);
    }
  }
  const std::string preemption = Str(Get(spec, {"preemptionPolicy"}));
  if (!Get(spec, {"preemptionPolicy"}).is_null() && preemption != "PreemptLowerPriority" &&
      preemption != "Never") {
    errs.NotSupported("spec.preemptionPolicy", GoQuote(preemption),
                      {"Never", "PreemptLowerPriority"});
  }
}

void ValidatePod(const json& obj, bool create, FieldErrors& errs) {
  const json& spec = Get(obj, {"spec"});
  ValidatePodSpec(spec, errs);
  for (std::string& m : ValidatePodSchedulingGroup(spec)) errs.Add(std::move(m));
  if (create && !Arr(Get(spec, {"schedulingGates"})).empty() &&
      !Str(Get(spec, {"nodeName"})).empty()) {
    errs.Forbidden("spec.nodeName", "cannot be set until all schedulingGates have been cleared");
  }
}

// A readable stand-in for upstream's cmp.Diff: the changed top-level spec fields.
std::string SpecDiff(const json& old_spec, const json& new_spec) {
  std::set<std::string> keys;
  for (const auto& [k, v] : Obj(old_spec).items()) keys.insert(k);
  for (const auto& [k, v] : Obj(new_spec).items()) keys.insert(k);
  std::string out;
  for (const std::string& k : keys) {
    const json& o = Get(old_spec, {k});
    const json& n = Get(new_spec, {k});
    if (o == n) continue;
    out += "  spec." + k + ": " + (o.is_null() ? std::string("<unset>") : o.dump()) + " -> " +
           (n.is_null() ? std::string("<unset>") : n.dump()) + "\n";
  }
  return out;
}

void ValidatePodUpdate(const json& new_obj, const json& old_obj, FieldErrors& errs) {
  const json& new_spec = Obj(Get(new_obj, {"spec"}));
  const json& old_spec = Obj(Get(old_obj, {"spec"}));
  const json& new_containers = Arr(Get(new_spec, {"containers"}));
  const json& old_containers = Arr(Get(old_spec, {"containers"}));
  if (new_containers.size() != old_containers.size()) {
    errs.Forbidden("spec.containers", "pod updates may not add or remove containers");
    return;
  }
  for (size_t i = 0; i < new_containers.size(); ++i) {
    const std::string image = Str(Get(new_containers[i], {"image"}));
    if (image.empty()) errs.Required(Index("spec.containers", i) + ".image");
    if (!image.empty() && (image.front() == ' ' || image.back() == ' ' || image.front() == '\t' ||
                           image.back() == '\t' || image.back() == '\n')) {
      errs.InvalidString(Index("spec.containers", i) + ".image", image,
                         "must not have leading or trailing whitespace");
    }
  }
  const json& new_init = Arr(Get(new_spec, {"initContainers"}));
  const json& old_init = Arr(Get(old_spec, {"initContainers"}));
  if (new_init.size() != old_init.size()) {
    errs.Forbidden("spec.initContainers", "pod updates may not add or remove containers");
    return;
  }

  // Tolerations: existing ones stay (tolerationSeconds may change), new ones may be added.
  const json& new_tolerations = Arr(Get(new_spec, {"tolerations"}));
  for (const json& old_t : Arr(Get(old_spec, {"tolerations"}))) {
    bool found = false;
    for (const json& new_t : new_tolerations) {
      json a = old_t;
      json b = new_t;
      a.erase("tolerationSeconds");
      b.erase("tolerationSeconds");
      if (a == b) {
        found = true;
        break;
      }
    }
    if (!found) {
      errs.Forbidden("spec.tolerations",
                     "existing toleration can not be modified except its tolerationSeconds");
      break;
    }
  }

  // Scheduling gates: removals only.
  std::set<std::string> old_gates;
  for (const json& g : Arr(Get(old_spec, {"schedulingGates"})))
    old_gates.insert(Str(Get(g, {"name"})));
  const json& new_gates = Arr(Get(new_spec, {"schedulingGates"}));
  for (size_t i = 0; i < new_gates.size(); ++i) {
    const std::string name = Str(Get(new_gates[i], {"name"}));
    if (old_gates.count(name) == 0) {
      errs.Forbidden(Index("spec.schedulingGates", i) + ".name",
                     "only deletion is allowed, but found new scheduling gate '" + name + "'");
    }
  }

  if (new_spec == old_spec) return;

  // activeDeadlineSeconds: may be set, or lowered.
  const json& new_deadline = Get(new_spec, {"activeDeadlineSeconds"});
  const json& old_deadline = Get(old_spec, {"activeDeadlineSeconds"});
  if (new_deadline.is_number()) {
    const int64_t v = IntOf(new_deadline);
    if (v < 0 || v > std::numeric_limits<int32_t>::max()) {
      errs.InvalidInt("spec.activeDeadlineSeconds", v,
                      "must be between 0 and 2147483647, inclusive");
      return;
    }
    if (old_deadline.is_number() && IntOf(old_deadline) < v) {
      errs.InvalidInt("spec.activeDeadlineSeconds", v,
                      "must be less than or equal to previous value");
      return;
    }
  } else if (old_deadline.is_number()) {
    errs.Invalid("spec.activeDeadlineSeconds", "null",
                 "must not update from a positive integer to nil value");
  }

  // Munge the fields that may change, then require equality.
  json munged = new_spec;
  if (munged.contains("containers")) {
    for (size_t i = 0; i < munged["containers"].size(); ++i) {
      munged["containers"][i]["image"] = Get(old_containers[i], {"image"});
      if (munged["containers"][i]["image"].is_null()) munged["containers"][i].erase("image");
    }
  }
  if (munged.contains("initContainers")) {
    for (size_t i = 0; i < munged["initContainers"].size(); ++i) {
      munged["initContainers"][i]["image"] = Get(old_init[i], {"image"});
      if (munged["initContainers"][i]["image"].is_null())
        munged["initContainers"][i].erase("image");
    }
  }
  for (std::string_view f : {"activeDeadlineSeconds", "schedulingGates", "tolerations"}) {
    munged.erase(std::string(f));
    if (old_spec.contains(f)) munged[std::string(f)] = old_spec[std::string(f)];
  }
  // terminationGracePeriodSeconds may go from negative to 1.
  const json& old_grace = Get(old_spec, {"terminationGracePeriodSeconds"});
  if (old_grace.is_number() && IntOf(old_grace) < 0 &&
      IntOf(Get(munged, {"terminationGracePeriodSeconds"})) == 1) {
    munged["terminationGracePeriodSeconds"] = old_grace;
  }
  // Gated pods may gain nodeSelector entries.
  if (!old_gates.empty()) {
    const json& old_selector = Obj(Get(old_spec, {"nodeSelector"}));
    const json& new_selector = Obj(Get(munged, {"nodeSelector"}));
    bool additions_only = true;
    for (const auto& [k, v] : old_selector.items()) {
      if (!new_selector.contains(k) || new_selector[k] != v) additions_only = false;
    }
    if (additions_only) {
      munged.erase("nodeSelector");
      if (old_spec.contains("nodeSelector")) munged["nodeSelector"] = old_spec["nodeSelector"];
    } else {
      errs.Forbidden("spec.nodeSelector",
                     "only additions to spec.nodeSelector are allowed (no mutations or deletions)");
    }
  }
  if (munged != old_spec) {
    errs.Forbidden("spec",
                   "pod updates may not change fields other than `spec.containers[*].image`,"
                   "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
                   "`spec.tolerations` (only additions to existing tolerations),"
                   "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was "
                   "previously negative)\n" +
                       SpecDiff(old_spec, munged));
  }
}

// ---------------------------------------------------------------------------
// Nodes.

void ValidateNodeTaints(const json& taints, FieldErrors& errs) {
  // Upstream reports node taints under "metadata.taints".
  const std::string path = "metadata.taints";
  std::map<std::string, std::set<std::string>> unique;  // effect -> keys
  const json& list = Arr(taints);
  for (size_t i = 0; i < list.size(); ++i) {
    const json& t = list[i];
    const std::string idx = Index(path, i);
    const std::string key = Str(Get(t, {"key"}));
    const std::string value = Str(Get(t, {"value"}));
    const std::string effect = Str(Get(t, {"effect"}));
    ValidateLabelName(key, idx + ".key", errs);
    const std::vector<std::string> msgs = IsValidLabelValue(value);
    if (!msgs.empty()) errs.InvalidString(idx + ".value", value, Join(msgs, ";"));
    ValidateTaintEffect(Get(t, {"effect"}), false, idx + ".effect", errs);
    if (!unique[effect].insert(key).second) {
      const std::string added = Get(t, {"timeAdded"}).is_string()
                                    ? "time.Date(" + Str(Get(t, {"timeAdded"})) + ")"
                                    : "(*v1.Time)(nil)";
      errs.Duplicate(idx,
                     "core.Taint{Key:" + GoQuote(key) + ", Value:" + GoQuote(value) +
                         ", Effect:" + GoQuote(effect) + ", TimeAdded:" + added + "}",
                     "taints must be unique by key and effect pair");
    }
  }
}

void ValidateNodeResources(const json& node, FieldErrors& errs) {
  for (std::string_view list : {"capacity", "allocatable"}) {
    for (const auto& [name, v] : Obj(Get(node, {"status", list})).items()) {
      if (std::optional<Quantity> q = ParseQuantity(v)) {
        ValidateResourceQuantityValue(name, *q, "status." + std::string(list) + "." + name, errs);
      }
    }
  }
}

void ValidateNode(const json& node, FieldErrors& errs) {
  if (!Arr(Get(node, {"spec", "taints"})).empty())
    ValidateNodeTaints(Get(node, {"spec", "taints"}), errs);
  ValidateNodeResources(node, errs);
  const json& cidrs = Arr(Get(node, {"spec", "podCIDRs"}));
  if (cidrs.size() > 2) {
    errs.Invalid("spec.podCIDRs", cidrs.dump(),
                 "may specify no more than one CIDR for each IP family");
  }
}

void ValidateNodeUpdate(const json& new_obj, const json& old_obj, FieldErrors& errs) {
  std::set<std::string> addresses;
  const json& list = Arr(Get(new_obj, {"status", "addresses"}));
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string key = Str(Get(list[i], {"type"})) + "\n" + Str(Get(list[i], {"address"}));
    if (!addresses.insert(key).second) {
      errs.Duplicate(Index("status.addresses", i),
                     "core.NodeAddress{Type:" + GoQuote(Str(Get(list[i], {"type"}))) +
                         ", Address:" + GoQuote(Str(Get(list[i], {"address"}))) + "}");
    }
  }
  const json& old_cidrs = Arr(Get(old_obj, {"spec", "podCIDRs"}));
  const json& new_cidrs = Arr(Get(new_obj, {"spec", "podCIDRs"}));
  if (!old_cidrs.empty()) {
    constexpr std::string_view kMsg =
        "node updates may not change podCIDR except from \"\" to valid";
    if (old_cidrs.size() != new_cidrs.size()) {
      errs.Forbidden("spec.podCIDRs", kMsg);
    } else {
      for (size_t i = 0; i < old_cidrs.size(); ++i) {
        if (old_cidrs[i] != new_cidrs[i]) errs.Forbidden(Index("spec.podCIDRs", i), kMsg);
      }
    }
  }
  const std::string old_provider = Str(Get(old_obj, {"spec", "providerID"}));
  if (!old_provider.empty() && old_provider != Str(Get(new_obj, {"spec", "providerID"}))) {
    errs.Forbidden("spec.providerID",
                   "node updates may not change providerID except from \"\" to valid");
  }
}

// ---------------------------------------------------------------------------
// Services, namespaces, leases, priority classes, PDBs.

void ValidateService(const json& svc, FieldErrors& errs) {
  const std::string type = Str(Get(svc, {"spec", "type"}));
  if (!type.empty() && type != "ClusterIP" && type != "NodePort" && type != "LoadBalancer" &&
      type != "ExternalName") {
    errs.NotSupported("spec.type", GoQuote(type),
                      {"ClusterIP", "ExternalName", "LoadBalancer", "NodePort"});
  }
  const json& ports = Arr(Get(svc, {"spec", "ports"}));
  if (ports.empty() && type != "ExternalName" && Str(Get(svc, {"spec", "clusterIP"})) != "None") {
    errs.Required("spec.ports");
  }
  std::set<std::string> names;
  for (size_t i = 0; i < ports.size(); ++i) {
    const std::string idx = Index("spec.ports", i);
    const std::string name = Str(Get(ports[i], {"name"}));
    if (ports.size() > 1 && name.empty()) {
      errs.Required(idx + ".name");
    } else if (!name.empty()) {
      for (const std::string& m : IsDns1123Label(name)) errs.InvalidString(idx + ".name", name, m);
      if (!names.insert(name).second) errs.Duplicate(idx + ".name", GoQuote(name));
    }
    const int64_t port = IntOf(Get(ports[i], {"port"}));
    for (const std::string& m : IsValidPortNum(port)) errs.InvalidInt(idx + ".port", port, m);
    const std::string protocol = Str(Get(ports[i], {"protocol"}));
    if (!protocol.empty() && protocol != "TCP" && protocol != "UDP" && protocol != "SCTP") {
      errs.NotSupported(idx + ".protocol", GoQuote(protocol), {"SCTP", "TCP", "UDP"});
    }
    const json& target = Get(ports[i], {"targetPort"});
    if (target.is_number()) {
      for (const std::string& m : IsValidPortNum(IntOf(target)))
        errs.InvalidInt(idx + ".targetPort", IntOf(target), m);
    } else if (target.is_string()) {
      for (const std::string& m : IsValidPortName(target.get<std::string>())) {
        errs.InvalidString(idx + ".targetPort", target.get<std::string>(), m);
      }
    }
  }
  ValidateLabels(Get(svc, {"spec", "selector"}), "spec.selector", errs);
}

void ValidateServiceUpdate(const json& new_obj, const json& old_obj, FieldErrors& errs) {
  const std::string old_ip = Str(Get(old_obj, {"spec", "clusterIP"}));
  const std::string new_ip = Str(Get(new_obj, {"spec", "clusterIP"}));
  if (!old_ip.empty() && !new_ip.empty() && old_ip != new_ip) {
    errs.InvalidString("spec.clusterIPs[0]", new_ip, "may not change once set");
  }
}

void ValidateNamespace(const json& ns, FieldErrors& errs) {
  const json& finalizers = Arr(Get(ns, {"spec", "finalizers"}));
  for (size_t i = 0; i < finalizers.size(); ++i) {
    const std::string name = Str(finalizers[i]);
    const std::string path = Index("spec.finalizers", i);
    for (const std::string& m : IsQualifiedName(name)) errs.InvalidString(path, name, m);
    if (name.find('/') == std::string::npos && !IsStandardFinalizerName(name)) {
      errs.InvalidString(path, name,
                         "name is neither a standard finalizer name nor is it fully qualified");
    }
  }
}

void ValidateLease(const json& lease, FieldErrors& errs) {
  const json& duration = Get(lease, {"spec", "leaseDurationSeconds"});
  if (duration.is_number() && IntOf(duration) <= 0) {
    errs.InvalidInt("spec.leaseDurationSeconds", IntOf(duration), "must be greater than 0");
  }
  const json& transitions = Get(lease, {"spec", "leaseTransitions"});
  if (transitions.is_number() && IntOf(transitions) < 0) {
    errs.InvalidInt("spec.leaseTransitions", IntOf(transitions),
                    "must be greater than or equal to 0");
  }
}

void ValidatePriorityClass(const json& pc, FieldErrors& errs) {
  constexpr int64_t kHighestUserDefinablePriority = 1000000000;
  const std::string name = Str(Get(pc, {"metadata", "name"}));
  const int64_t value = IntOf(Get(pc, {"value"}));
  const bool global_default =
      Get(pc, {"globalDefault"}).is_boolean() && Get(pc, {"globalDefault"}).get<bool>();
  if (name.rfind("system-", 0) == 0) {
    std::string err;
    if (name == "system-node-critical" || name == "system-cluster-critical") {
      const int64_t want = name == "system-node-critical" ? 2000001000 : 2000000000;
      if (value != want) {
        err = "value of " + name + " PriorityClass must be " + std::to_string(want);
      } else if (global_default) {
        err = "globalDefault of " + name + " PriorityClass must be false";
      }
    } else {
      err = name + " is not a known system priority class";
    }
    if (!err.empty()) {
      errs.Forbidden("metadata.name",
                     "priority class names with 'system-' prefix are reserved for system use "
                     "only. error: " +
                         err);
    }
  } else if (value > kHighestUserDefinablePriority) {
    errs.Forbidden("value", "maximum allowed value of a user defined priority is " +
                                std::to_string(kHighestUserDefinablePriority));
  }
  const json& policy = Get(pc, {"preemptionPolicy"});
  if (!policy.is_null() && Str(policy) != "PreemptLowerPriority" && Str(policy) != "Never") {
    errs.NotSupported("preemptionPolicy", GoQuote(Str(policy)), {"Never", "PreemptLowerPriority"});
  }
}

// intstr.IntOrString as %#v prints it.
std::string IntOrStringRepr(const json& v) {
  if (v.is_string()) {
    return "intstr.IntOrString{Type:1, IntVal:0, StrVal:" + GoQuote(v.get<std::string>()) + "}";
  }
  return "intstr.IntOrString{Type:0, IntVal:" + std::to_string(IntOf(v)) + ", StrVal:\"\"}";
}

void ValidateIntOrPercent(const json& v, const std::string& path, FieldErrors& errs) {
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    const bool ok =
        s.size() >= 2 && s.back() == '%' &&
        std::all_of(s.begin(), s.end() - 1, [](char c) { return c >= '0' && c <= '9'; });
    if (!ok) {
      errs.Invalid(path, IntOrStringRepr(v),
                   RegexError("a valid percent string must be a numeric string followed by an "
                              "ending '%'",
                              "[0-9]+%", {"1%", "93%"}));
    } else if (std::stoll(s.substr(0, s.size() - 1)) > 100) {
      errs.Invalid(path, IntOrStringRepr(v), "must not be greater than 100%");
    }
  } else if (v.is_number()) {
    if (IntOf(v) < 0) errs.InvalidInt(path, IntOf(v), "must be greater than or equal to 0");
  } else {
    errs.Invalid(path, GoRepr(v), "must be an integer or percentage (e.g '5%')");
  }
}

void ValidatePdb(const json& pdb, FieldErrors& errs) {
  const json& spec = Get(pdb, {"spec"});
  const json& min_available = Get(spec, {"minAvailable"});
  const json& max_unavailable = Get(spec, {"maxUnavailable"});
  if (!min_available.is_null() && !max_unavailable.is_null()) {
    errs.Invalid("spec", GoRepr(spec), "minAvailable and maxUnavailable cannot be both set");
  }
  if (!min_available.is_null()) ValidateIntOrPercent(min_available, "spec.minAvailable", errs);
  if (!max_unavailable.is_null())
    ValidateIntOrPercent(max_unavailable, "spec.maxUnavailable", errs);
}

// ---------------------------------------------------------------------------
// CustomResourceDefinitions (apiextensions validation).

void ValidateDns1035Field(const std::string& value, const std::string& path,
                          std::string_view prefix, FieldErrors& errs) {
  std::string lower = value;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const std::vector<std::string> msgs = IsDns1035Label(prefix.empty() ? value : lower);
  if (!value.empty() && !msgs.empty())
    errs.InvalidString(path, value, std::string(prefix) + Join(msgs, ","));
}

void ValidateCrd(const json& crd, FieldErrors& errs) {
  const json& spec = Get(crd, {"spec"});
  const std::string group = Str(Get(spec, {"group"}));
  if (group.empty()) {
    errs.Required("spec.group");
  } else if (std::vector<std::string> msgs = IsDns1123Subdomain(group); !msgs.empty()) {
    errs.InvalidString("spec.group", group, Join(msgs, ","));
  } else if (group.find('.') == std::string::npos) {
    errs.InvalidString("spec.group", group, "should be a domain with at least one dot");
  }
  const std::string scope = Str(Get(spec, {"scope"}));
  if (scope.empty()) {
    errs.Required("spec.scope");
  } else if (scope != "Cluster" && scope != "Namespaced") {
    errs.NotSupported("spec.scope", GoQuote(scope), {"Cluster", "Namespaced"});
  }
  const json& versions = Arr(Get(spec, {"versions"}));
  int storage = 0;
  std::set<std::string> version_names;
  bool unique = true;
  for (size_t i = 0; i < versions.size(); ++i) {
    const json& v = versions[i];
    const std::string path = Index("spec.versions", i);
    const std::string name = Str(Get(v, {"name"}));
    if (Get(v, {"storage"}).is_boolean() && Get(v, {"storage"}).get<bool>()) ++storage;
    if (!version_names.insert(name).second) unique = false;
    if (std::vector<std::string> msgs = IsDns1035Label(name); !msgs.empty()) {
      errs.InvalidString(path + ".name", name, Join(msgs, ","));
    }
    const json& columns = Arr(Get(v, {"additionalPrinterColumns"}));
    for (size_t c = 0; c < columns.size(); ++c) {
      const std::string cpath = Index(path + ".additionalPrinterColumns", c);
      if (Str(Get(columns[c], {"name"})).empty()) errs.Required(cpath + ".name");
      const std::string type = Str(Get(columns[c], {"type"}));
      if (type.empty()) {
        errs.Required(cpath + ".type");
      } else if (type != "boolean" && type != "date" && type != "integer" && type != "number" &&
                 type != "string") {
        errs.NotSupported(cpath + ".type", GoQuote(type),
                          {"boolean", "date", "integer", "number", "string"});
      }
      const std::string format = Str(Get(columns[c], {"format"}));
      static constexpr std::string_view kFormats[] = {"int32", "int64", "float",     "double",
                                                      "byte",  "date",  "date-time", "password"};
      if (!format.empty() &&
          std::find(std::begin(kFormats), std::end(kFormats), format) == std::end(kFormats)) {
        errs.NotSupported(
            cpath + ".format", GoQuote(format),
            {"byte", "date", "date-time", "double", "float", "int32", "int64", "password"});
      }
      const std::string path_text = Str(Get(columns[c], {"jsonPath"}));
      if (path_text.empty()) {
        errs.Required(cpath + ".jsonPath");
      } else if (Result<JsonPath> p = JsonPath::Parse(path_text); !p.ok()) {
        errs.InvalidString(cpath + ".jsonPath", path_text,
                           "must be a simple json path starting with .");
      }
    }
  }
  if (!unique) errs.Invalid("spec.versions", versions.dump(), "must contain unique version names");
  if (storage != 1) {
    errs.Invalid("spec.versions", versions.dump(),
                 "must have exactly one version marked as storage version");
  }
  const json& names = Get(spec, {"names"});
  const std::string plural = Str(Get(names, {"plural"}));
  const std::string singular = Str(Get(names, {"singular"}));
  const std::string kind = Str(Get(names, {"kind"}));
  const std::string list_kind = Str(Get(names, {"listKind"}));
  if (plural.empty()) errs.Required("spec.names.plural");
  if (kind.empty()) errs.Required("spec.names.kind");
  ValidateDns1035Field(plural, "spec.names.plural", "", errs);
  ValidateDns1035Field(singular, "spec.names.singular", "", errs);
  ValidateDns1035Field(kind, "spec.names.kind",
                       "may have mixed case, but should otherwise match: ", errs);
  ValidateDns1035Field(list_kind, "spec.names.listKind",
                       "may have mixed case, but should otherwise match: ", errs);
  const json& short_names = Arr(Get(names, {"shortNames"}));
  for (size_t i = 0; i < short_names.size(); ++i) {
    ValidateDns1035Field(Str(short_names[i]), Index("spec.names.shortNames", i), "", errs);
  }
  if (!kind.empty() && kind == list_kind) {
    errs.InvalidString("spec.names.listKind", list_kind, "kind and listKind may not be the same");
  }
  const json& categories = Arr(Get(names, {"categories"}));
  for (size_t i = 0; i < categories.size(); ++i) {
    ValidateDns1035Field(Str(categories[i]), Index("spec.names.categories", i), "", errs);
  }
}

std::vector<std::string> CrdNameErrors(const json& crd, std::string_view name, bool prefix) {
  std::vector<std::string> out = NameIsDnsSubdomain(name, prefix);
  const std::string required =
      Str(Get(crd, {"spec", "names", "plural"})) + "." + Str(Get(crd, {"spec", "group"}));
  if (name != required) out.push_back("must be spec.names.plural+\".\"+spec.group");
  return out;
}

bool CrdEstablished(const json& crd) {
  for (const json& c : Arr(Get(crd, {"status", "conditions"}))) {
    if (Str(Get(c, {"type"})) == "Established") return Str(Get(c, {"status"})) == "True";
  }
  return false;
}

void ValidateCrdUpdate(const json& new_obj, const json& old_obj, FieldErrors& errs) {
  auto immutable = [&](std::initializer_list<std::string_view> path, const std::string& field) {
    const json& n = Get(new_obj, path);
    const json& o = Get(old_obj, path);
    if (n != o) errs.InvalidString(field, Str(n), kFieldImmutable);
  };
  if (CrdEstablished(old_obj)) {
    immutable({"spec", "scope"}, "spec.scope");
    immutable({"spec", "names", "kind"}, "spec.names.kind");
  }
  immutable({"spec", "group"}, "spec.group");
  immutable({"spec", "names", "plural"}, "spec.names.plural");
}

// ---------------------------------------------------------------------------
// Dispatch.

Target MakeTarget(std::string_view group, std::string_view version, std::string_view kind,
                  std::string_view resource, bool namespaced) {
  static constexpr std::string_view kBuiltinGroups[] = {
      "",
      "admissionregistration.k8s.io",
      "apiextensions.k8s.io",
      "apiregistration.k8s.io",
      "apps",
      "authentication.k8s.io",
      "authorization.k8s.io",
      "autoscaling",
      "batch",
      "certificates.k8s.io",
      "coordination.k8s.io",
      "discovery.k8s.io",
      "events.k8s.io",
      "flowcontrol.apiserver.k8s.io",
      "networking.k8s.io",
      "node.k8s.io",
      "policy",
      "rbac.authorization.k8s.io",
      "resource.k8s.io",
      "scheduling.k8s.io",
      "storage.k8s.io",
  };
  Target t{group, version, kind, resource, namespaced, true};
  t.builtin = std::find(std::begin(kBuiltinGroups), std::end(kBuiltinGroups), group) !=
              std::end(kBuiltinGroups);
  return t;
}

// Kinds compiled into kube-apiserver per group, for the decode error of a
// body whose kind differs from the URL's.
bool KnownBuiltinKind(std::string_view group, std::string_view kind) {
  static const std::set<std::string, std::less<>> kKinds = {
      "/Pod",
      "/Node",
      "/Namespace",
      "/Service",
      "/Event",
      "/ConfigMap",
      "/Secret",
      "/ServiceAccount",
      "/Endpoints",
      "/PersistentVolume",
      "/PersistentVolumeClaim",
      "/PodTemplate",
      "/ReplicationController",
      "/ResourceQuota",
      "/LimitRange",
      "/Binding",
      "apps/Deployment",
      "apps/ReplicaSet",
      "apps/StatefulSet",
      "apps/DaemonSet",
      "batch/Job",
      "batch/CronJob",
      "policy/PodDisruptionBudget",
      "policy/Eviction",
      "coordination.k8s.io/Lease",
      "events.k8s.io/Event",
      "scheduling.k8s.io/PriorityClass",
      "apiextensions.k8s.io/CustomResourceDefinition"};
  return kKinds.count(std::string(group) + "/" + std::string(kind)) > 0;
}

std::string_view InternalPackage(std::string_view group) {
  if (group.empty() || group == "events.k8s.io") return "core";
  const size_t dot = group.find('.');
  return dot == std::string_view::npos ? group : group.substr(0, dot);
}

// apiVersion/kind of the body against the URL. Returns the kind and version
// the body claims (defaulted from the URL when absent).
std::optional<Error> CheckTypeMeta(const json& obj, const Target& target, std::string& data_kind,
                                   std::string& data_version) {
  if (!obj.is_object()) {
    return BadRequest("the object provided is unrecognized (must be of type " +
                      std::string(target.kind) + "): couldn't get version/kind; json parse error");
  }
  const json& api_version_json = Get(obj, {"apiVersion"});
  const json& kind_json = Get(obj, {"kind"});
  if ((!api_version_json.is_null() && !api_version_json.is_string()) ||
      (!kind_json.is_null() && !kind_json.is_string())) {
    return BadRequest("couldn't get version/kind; json parse error: json: cannot unmarshal " +
                      std::string(!api_version_json.is_string() && !api_version_json.is_null()
                                      ? "apiVersion"
                                      : "kind") +
                      " into Go struct field .apiVersion of type string");
  }
  std::string api_version = Str(api_version_json);
  std::string kind = Str(kind_json);
  std::string data_group(target.group);
  data_version = std::string(target.version);
  if (!api_version.empty()) {
    const size_t slash = api_version.find('/');
    data_group = slash == std::string::npos ? std::string() : api_version.substr(0, slash);
    data_version = slash == std::string::npos ? api_version : api_version.substr(slash + 1);
  }
  data_kind = kind.empty() ? std::string(target.kind) : kind;
  const std::string data_gv = data_group.empty() ? data_version : data_group + "/" + data_version;
  if (data_gv != target.ApiVersion()) {
    return BadRequest("the API version in the data (" + data_gv +
                      ") does not match the expected API version (" + target.ApiVersion() + ")");
  }
  if (data_kind != target.kind && target.builtin) {
    if (KnownBuiltinKind(target.group, data_kind)) {
      return BadRequest(data_kind + " in version " + GoQuote(data_version) +
                        " cannot be handled as a " + std::string(target.kind) + ": converting (" +
                        data_version + "." + data_kind + ") to (" +
                        std::string(InternalPackage(target.group)) + "." +
                        std::string(target.kind) + "): unknown conversion");
    }
    return BadRequest(data_kind + " in version " + GoQuote(data_version) +
                      " cannot be handled as a " + std::string(target.kind) + ": no kind " +
                      GoQuote(data_kind) + " is registered for version " + GoQuote(data_gv) +
                      " in scheme \"pkg/api/legacyscheme/scheme.go:30\"");
  }
  return std::nullopt;
}

// corev1.MaxSecretSize: the data of a ConfigMap or a Secret together.
constexpr int64_t kMaxConfigDataBytes = 1024 * 1024;

// Bytes a base64 value decodes to (it decoded already: DecodeCheck).
int64_t DecodedLength(const json& v) {
  if (!v.is_string()) return 0;
  int64_t symbols = 0;
  for (char c : v.get_ref<const std::string&>()) {
    if (c != '=' && c != '\n' && c != '\r') ++symbols;
  }
  return symbols * 3 / 4;
}

// ValidateConfigMap: keys, no key in both bags, at most 1 MiB of values.
void ValidateConfigMap(const json& obj, FieldErrors& errs) {
  const json& data = Obj(Get(obj, {"data"}));
  const json& binary = Obj(Get(obj, {"binaryData"}));
  int64_t total = 0;
  for (const auto& [k, v] : data.items()) {
    for (const std::string& m : IsConfigMapKey(k)) errs.InvalidString(Key("data", k), k, m);
    if (binary.contains(k)) {
      errs.InvalidString(Key("data", k), k, "duplicate of key present in binaryData");
    }
    total += static_cast<int64_t>(Str(v).size());
  }
  for (const auto& [k, v] : binary.items()) {
    for (const std::string& m : IsConfigMapKey(k)) errs.InvalidString(Key("binaryData", k), k, m);
    total += DecodedLength(v);
  }
  // field.NewPath("") prints as "[]": the error is about the whole object.
  if (total > kMaxConfigDataBytes) errs.TooLong("[]", kMaxConfigDataBytes);
}

// ValidateSecret's data checks (stringData is merged into data first, as
// kube's conversion does).
void ValidateSecret(const json& obj, FieldErrors& errs) {
  int64_t total = 0;
  for (const auto& [k, v] : Obj(Get(obj, {"data"})).items()) {
    for (const std::string& m : IsConfigMapKey(k)) errs.InvalidString(Key("data", k), k, m);
    total += DecodedLength(v);
  }
  for (const auto& [k, v] : Obj(Get(obj, {"stringData"})).items()) {
    for (const std::string& m : IsConfigMapKey(k)) errs.InvalidString(Key("data", k), k, m);
    total += static_cast<int64_t>(Str(v).size());
  }
  if (total > kMaxConfigDataBytes) errs.TooLong("data", kMaxConfigDataBytes);
}

NameValidator NameValidatorFor(const Target& target) {
  if (target.group.empty() && target.resource == "namespaces") return NameIsDnsLabel;
  if (target.group.empty() && target.resource == "services") return NameIsDns1035Label;
  return NameIsDnsSubdomain;
}

// copse's own PodGroup (scheduling.copse.dev): its gang model's rules (what
// the scheduler would otherwise refuse to schedule, leaving the group
// waiting forever). The codec reports errors joined by "; ", each naming its
// field.
void ValidateCopsePodGroup(const json& obj, FieldErrors& errs) {
  auto add_all = [&errs](std::string_view joined) {
    while (!joined.empty()) {
      const size_t end = joined.find("; ");
      errs.Add(std::string(joined.substr(0, end)));
      if (end == std::string_view::npos) break;
      joined.remove_prefix(end + 2);
    }
  };
  Result<kube::CopsePodGroup> group = kube::CopsePodGroup::Decode(obj.dump());
  if (!group.ok()) return add_all(group.error().message);
  if (Result<GangSpec> spec = group->ToGangSpec(); !spec.ok()) add_all(spec.error().message);
}

// `old_obj`: the object an update replaces; null on create.
void ValidateObject(const json& obj, const Target& target, const json* old_obj, bool gang_rules,
                    FieldErrors& errs) {
  const bool create = old_obj == nullptr;
  if (target.Is("apiextensions.k8s.io", "CustomResourceDefinition")) {
    ValidateObjectMeta(
        obj, target,
        [&obj](std::string_view name, bool prefix) { return CrdNameErrors(obj, name, prefix); },
        errs);
    ValidateCrd(obj, errs);
    return;
  }
  ValidateObjectMeta(obj, target, NameValidatorFor(target), errs);
  if (IsSchedulingApiKind(target.group, target.kind)) {
    for (std::string& m : ValidateSchedulingApi(target.kind, target.version, obj, old_obj)) {
      errs.Add(std::move(m));
    }
    return;
  }
  if (target.Is("scheduling.copse.dev", "PodGroup")) {
    if (gang_rules) ValidateCopsePodGroup(obj, errs);
    return;
  }
  if (!target.builtin) return;
  if (target.Is("", "Pod")) {
    ValidatePod(obj, create, errs);
    // The node simulator's annotations (copse local): refused here rather than ignored there.
    auto lifetime = SimulatedLifetimeOf(Get(obj, {"metadata", "annotations"}));
    if (!lifetime.ok()) errs.Add(lifetime.error().message);
  } else if (target.Is("", "Node")) {
    ValidateNode(obj, errs);
  } else if (target.Is("", "Service")) {
    ValidateService(obj, errs);
  } else if (target.Is("", "Namespace")) {
    ValidateNamespace(obj, errs);
  } else if (target.Is("coordination.k8s.io", "Lease")) {
    ValidateLease(obj, errs);
  } else if (target.Is("scheduling.k8s.io", "PriorityClass")) {
    ValidatePriorityClass(obj, errs);
  } else if (target.Is("policy", "PodDisruptionBudget")) {
    ValidatePdb(obj, errs);
  } else if (target.Is("", "ConfigMap")) {
    ValidateConfigMap(obj, errs);
  } else if (target.Is("", "Secret")) {
    ValidateSecret(obj, errs);
  } else if (IsWorkloadKind(target.group, target.kind)) {
    for (std::string& m : ValidateWorkload(target.group, target.kind, obj)) errs.Add(std::move(m));
  }
}

// Common front: type meta (400), decoding (400).
std::optional<Error> Precheck(const json& obj, const Target& target, std::string& data_kind) {
  std::string data_version;
  if (std::optional<Error> e = CheckTypeMeta(obj, target, data_kind, data_version)) return e;
  DecodeCheck decode(target, data_kind, data_version);
  return decode.Run(obj);
}

// For custom resources a kind that differs from the URL's is a field error.
void CheckCustomKind(const Target& target, const std::string& data_kind, FieldErrors& errs) {
  if (!target.builtin && data_kind != target.kind) {
    errs.InvalidString("kind", data_kind, "must be " + std::string(target.kind));
  }
}

}  // namespace

Error InvalidError(std::string_view kind, std::string_view name, std::string_view cause) {
  return Error{ErrorCode::kInvalid,
               std::string(kind) + " " + GoQuote(name) + " is invalid: " + std::string(cause), 422,
               "Invalid"};
}

Status ValidateForCreate(const nlohmann::json& obj, std::string_view group,
                         std::string_view version, std::string_view kind, std::string_view resource,
                         bool namespaced, bool gang_rules) {
  const Target target = MakeTarget(group, version, kind, resource, namespaced);
  std::string data_kind;
  if (std::optional<Error> e = Precheck(obj, target, data_kind)) return *e;
  FieldErrors errs;
  CheckCustomKind(target, data_kind, errs);
  ValidateObject(obj, target, nullptr, gang_rules, errs);
  if (errs.empty()) return Status::Ok();
  return InvalidFromErrors(target.QualifiedKind(data_kind), Str(Get(obj, {"metadata", "name"})),
                           errs);
}

Status ValidateForUpdate(const nlohmann::json& old_obj, const nlohmann::json& new_obj,
                         std::string_view group, std::string_view version, std::string_view kind,
                         std::string_view resource, bool namespaced, std::string_view subresource,
                         bool gang_rules) {
  const Target target = MakeTarget(group, version, kind, resource, namespaced);
  std::string data_kind;
  if (std::optional<Error> e = Precheck(new_obj, target, data_kind)) return *e;
  FieldErrors errs;
  CheckCustomKind(target, data_kind, errs);
  ValidateObjectMetaUpdate(new_obj, old_obj, errs);
  if (subresource == "status") {
    // Status strategies keep the stored spec; only metadata and status are checked.
    FieldErrors meta_errs;
    ValidateObjectMeta(new_obj, target, NameValidatorFor(target), meta_errs);
    errs.AddAll(meta_errs);
    if (target.Is("", "Pod")) {
      const std::string nominated = Str(Get(new_obj, {"status", "nominatedNodeName"}));
      if (!nominated.empty() && nominated != Str(Get(old_obj, {"status", "nominatedNodeName"}))) {
        for (const std::string& m : IsDns1123Subdomain(nominated)) {
          errs.InvalidString("status.nominatedNodeName", nominated, m);
        }
      }
    } else if (target.Is("", "Node")) {
      ValidateNodeResources(new_obj, errs);
    } else if (IsSchedulingApiKind(target.group, target.kind)) {
      for (std::string& m : ValidateSchedulingApi(target.kind, target.version, new_obj, &old_obj)) {
        errs.Add(std::move(m));
      }
    }
  } else {
    ValidateObject(new_obj, target, &old_obj, gang_rules, errs);
    if (target.builtin) {
      if (target.Is("", "Pod")) {
        ValidatePodUpdate(new_obj, old_obj, errs);
      } else if (target.Is("", "Node")) {
        ValidateNodeUpdate(new_obj, old_obj, errs);
      } else if (target.Is("", "Service")) {
        ValidateServiceUpdate(new_obj, old_obj, errs);
      } else if (target.Is("scheduling.k8s.io", "PriorityClass")) {
        if (IntOf(Get(new_obj, {"value"})) != IntOf(Get(old_obj, {"value"}))) {
          errs.Forbidden("value", "may not be changed in an update.");
        }
        const json& np = Get(new_obj, {"preemptionPolicy"});
        const json& op = Get(old_obj, {"preemptionPolicy"});
        if (np != op)
          errs.Invalid("preemptionPolicy", np.is_null() ? "null" : GoRepr(np), kFieldImmutable);
      } else if (target.Is("apiextensions.k8s.io", "CustomResourceDefinition")) {
        ValidateCrdUpdate(new_obj, old_obj, errs);
      } else if (IsWorkloadKind(target.group, target.kind)) {
        for (std::string& m : ValidateWorkloadUpdate(target.group, target.kind, new_obj, old_obj)) {
          errs.Add(std::move(m));
        }
      }
    }
  }
  if (errs.empty()) return Status::Ok();
  return InvalidFromErrors(target.QualifiedKind(data_kind), Str(Get(new_obj, {"metadata", "name"})),
                           errs);
}

Status EnsureNamespaceMatchesRequest(nlohmann::json& obj, std::string_view request_namespace,
                                     bool namespaced) {
  if (!obj.is_object()) return Status::Ok();
  if (!obj.contains("metadata") || !obj["metadata"].is_object()) obj["metadata"] = json::object();
  json& meta = obj["metadata"];
  const std::string expected = namespaced ? std::string(request_namespace) : std::string();
  const std::string actual = Str(Get(meta, {"namespace"}));
  if (actual == expected) return Status::Ok();
  if (actual.empty()) {
    meta["namespace"] = expected;
    return Status::Ok();
  }
  if (expected.empty()) {
    meta.erase("namespace");
    return Status::Ok();
  }
  return BadRequest(
      "the namespace of the provided object does not match the namespace sent on the request");
}

Status CheckRequestName(const nlohmann::json& obj, std::string_view url_name,
                        std::string_view url_namespace) {
  const std::string name = Str(Get(obj, {"metadata", "name"}));
  if (name != url_name) {
    return BadRequest("the name of the object (" + name + ") does not match the name on the URL (" +
                      std::string(url_name) + ")");
  }
  const std::string ns = Str(Get(obj, {"metadata", "namespace"}));
  if (!url_namespace.empty() && !ns.empty() && ns != url_namespace) {
    return BadRequest("the namespace of the object (" + ns +
                      ") does not match the namespace on the request (" +
                      std::string(url_namespace) + ")");
  }
  return Status::Ok();
}

}  // namespace copse::apiserver
