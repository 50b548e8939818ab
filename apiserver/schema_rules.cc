#include "apiserver/schema_rules.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "apiserver/openapi_internal.h"
#include "core/clock.h"
#include "core/names.h"
#include "core/rfc3339.h"

namespace copse::apiserver {

using nlohmann::json;

namespace {

// ---------------------------------------------------------------------------
// The tables' types as rules.

struct ValueType {
  enum class Kind : uint8_t {
    kString,
    kInt32,
    kInt64,
    kBool,
    kNumber,
    kTime,
    kObject,    // free-form object
    kOpaque,    // ObjectMeta: passed through, checked elsewhere
    kAnything,  // quantity, int-or-string: passed through
    kStruct,
    kList,
    kMap
  };
  Kind kind = Kind::kString;
  std::string struct_name;          // kStruct: the table name
  std::shared_ptr<ValueType> elem;  // kList, kMap
  std::string list_key;             // kList of a list map ("name"), else ""
  std::string go_name;              // as encoding/json names the type
};

struct FieldRule {
  std::string name;
  ValueType type;
  bool ptr = false;
  bool emit = false;
  bool required = false;
  bool optional = false;
  bool immutable = false;
  bool noset = false;
  bool nounset = false;
  bool noadd = false;
  bool noremove = false;
  bool member = false;
  std::optional<int64_t> max_items;
  std::optional<int64_t> min;
  std::optional<int64_t> max;
  std::optional<int64_t> max_bytes;
  std::string format;
  std::vector<std::string> enum_values;
  json default_value;  // null: none
  std::string dependent_required;
};

struct TypeRule {
  std::string name;     // "scheduling.v1beta1.PodGroupSpec"
  std::string go_name;  // "PodGroupSpec"
  bool is_union = false;
  std::vector<FieldRule> fields;
};

[[noreturn]] void RuleDefect(const std::string& where, const std::string& what) {
  std::fprintf(stderr, "schema table: %s: %s\n", where.c_str(), what.c_str());
  std::abort();
}

int64_t ParseTagInt(const std::string& text, const std::string& where) {
  int64_t out = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec != std::errc() || p != text.data() + text.size()) RuleDefect(where, "bad number " + text);
  return out;
}

// "scheduling.v1beta1.PodGroupSpec" -> "v1beta1.PodGroupSpec".
std::string GoQualifiedName(std::string_view table_name) {
  const size_t dot = table_name.rfind('.');
  const size_t package_dot = dot == std::string_view::npos ? dot : table_name.rfind('.', dot - 1);
  if (package_dot == std::string_view::npos) return std::string(table_name);
  return std::string(table_name.substr(package_dot + 1));
}

ValueType ParseType(std::string_view token) {
  ValueType t;
  if (token.starts_with("[]")) {
    std::string_view item = token.substr(2);
    if (const size_t slash = item.find('/'); slash != std::string_view::npos) {
      if (item.substr(slash + 1) != "set") t.list_key = std::string(item.substr(slash + 1));
      item = item.substr(0, slash);
    }
    t.kind = ValueType::Kind::kList;
    t.elem = std::make_shared<ValueType>(ParseType(item));
    t.go_name = "[]" + t.elem->go_name;
    return t;
  }
  if (token.starts_with("{}")) {
    t.kind = ValueType::Kind::kMap;
    t.elem = std::make_shared<ValueType>(ParseType(token.substr(2)));
    t.go_name = "map[string]" + t.elem->go_name;
    return t;
  }
  static const std::map<std::string, std::pair<ValueType::Kind, std::string>, std::less<>>
      kScalars = {{"string", {ValueType::Kind::kString, "string"}},
                  {"int32", {ValueType::Kind::kInt32, "int32"}},
                  {"int64", {ValueType::Kind::kInt64, "int64"}},
                  {"bool", {ValueType::Kind::kBool, "bool"}},
                  {"number", {ValueType::Kind::kNumber, "float64"}},
                  {"time", {ValueType::Kind::kTime, "v1.Time"}},
                  {"object", {ValueType::Kind::kObject, "map[string]interface {}"}},
                  {"quantity", {ValueType::Kind::kAnything, "resource.Quantity"}},
                  {"int-or-string", {ValueType::Kind::kAnything, "intstr.IntOrString"}}};
  if (auto it = kScalars.find(token); it != kScalars.end()) {
    t.kind = it->second.first;
    t.go_name = it->second.second;
    return t;
  }
  t.kind = token == "meta.v1.ObjectMeta" ? ValueType::Kind::kOpaque : ValueType::Kind::kStruct;
  t.struct_name = std::string(token);
  t.go_name = GoQualifiedName(token);
  return t;
}

TypeRule MakeRule(const SchemaType& type) {
  TypeRule rule;
  rule.name = type.name;
  rule.go_name = type.name.substr(type.name.rfind('.') + 1);
  for (const std::string& tag : type.tags) {
    if (tag == "union") rule.is_union = true;
  }
  for (const SchemaField& f : type.fields) {
    FieldRule field;
    field.name = f.name;
    field.type = ParseType(f.type);
    const std::string where = type.name + "." + f.name;
    for (const std::string& tag : f.tags) {
      const size_t eq = tag.find('=');
      const std::string key = tag.substr(0, eq);
      const std::string value = eq == std::string::npos ? std::string() : tag.substr(eq + 1);
      if (key == "ptr") {
        field.ptr = true;
      } else if (key == "emit") {
        field.emit = true;
      } else if (key == "required") {
        field.required = true;
      } else if (key == "optional") {
        field.optional = true;
      } else if (key == "immutable") {
        field.immutable = true;
      } else if (key == "noset") {
        field.noset = true;
      } else if (key == "nounset") {
        field.nounset = true;
      } else if (key == "noadd") {
        field.noadd = true;
      } else if (key == "noremove") {
        field.noremove = true;
      } else if (key == "member") {
        field.member = true;
      } else if (key == "maxitems") {
        field.max_items = ParseTagInt(value, where);
      } else if (key == "min") {
        field.min = ParseTagInt(value, where);
      } else if (key == "max") {
        field.max = ParseTagInt(value, where);
      } else if (key == "maxbytes") {
        field.max_bytes = ParseTagInt(value, where);
      } else if (key == "format") {
        field.format = value;
      } else if (key == "enum") {
        std::stringstream in(value);
        for (std::string v; std::getline(in, v, ',');) field.enum_values.push_back(v);
      } else if (key == "default") {
        field.default_value = json::parse(value, nullptr, false);
        if (field.default_value.is_discarded()) RuleDefect(where, "bad default " + value);
      } else if (key == "dependent-required") {
        field.dependent_required = value;
      } else {
        RuleDefect(where, "unknown tag +" + tag);
      }
    }
    rule.fields.push_back(std::move(field));
  }
  return rule;
}

const TypeRule& RuleOf(std::string_view name) {
  static const std::map<std::string, TypeRule, std::less<>> kRules = [] {
    std::map<std::string, TypeRule, std::less<>> rules;
    for (const auto& [type_name, type] : BuiltinSchemaTypes()) {
      rules.emplace(type_name, MakeRule(type));
    }
    return rules;
  }();
  auto it = kRules.find(name);
  if (it == kRules.end()) RuleDefect(std::string(name), "no such table type");
  return it->second;
}

// ---------------------------------------------------------------------------
// NormalizeAsGo

std::string JsonTypeName(const json& v) {
  if (v.is_object()) return "object";
  if (v.is_array()) return "array";
  if (v.is_string()) return "string";
  if (v.is_boolean()) return "bool";
  return "number " + v.dump();
}

struct Decoder {
  // The first decoding error, as encoding/json reports it.
  std::string error;

  void Mismatch(const json& v, const std::string& owner, const std::string& path,
                const std::string& go_type) {
    if (!error.empty()) return;
    std::string value = JsonTypeName(v);
    if (!v.is_number()) value = value.substr(0, value.find(' '));
    error = "json: cannot unmarshal " + value + " into Go struct field " + owner + "." + path +
            " of type " + go_type;
  }

  // The normalized form of a set value `v` (not null) of type `t`.
  json Value(const ValueType& t, const json& v, const std::string& owner, const std::string& path) {
    using K = ValueType::Kind;
    switch (t.kind) {
      case K::kString:
        if (!v.is_string()) Mismatch(v, owner, path, t.go_name);
        return v.is_string() ? v : json("");
      case K::kBool:
        if (!v.is_boolean()) Mismatch(v, owner, path, t.go_name);
        return v.is_boolean() ? v : json(false);
      case K::kInt32:
      case K::kInt64: {
        const int64_t lo = t.kind == K::kInt32 ? std::numeric_limits<int32_t>::min()
                                               : std::numeric_limits<int64_t>::min();
        const int64_t hi = t.kind == K::kInt32 ? std::numeric_limits<int32_t>::max()
                                               : std::numeric_limits<int64_t>::max();
        bool fits = false;
        if (v.is_number_unsigned()) {
          fits = v.get<uint64_t>() <= static_cast<uint64_t>(hi);
        } else if (v.is_number_integer()) {
          fits = v.get<int64_t>() >= lo && v.get<int64_t>() <= hi;
        }
        if (!fits) {
          Mismatch(v, owner, path, t.go_name);
          return 0;
        }
        return v.is_number_unsigned() ? json(static_cast<int64_t>(v.get<uint64_t>())) : v;
      }
      case K::kNumber:
        if (!v.is_number()) Mismatch(v, owner, path, t.go_name);
        return v.is_number() ? v : json(0);
      case K::kTime: {
        std::optional<std::chrono::system_clock::time_point> at;
        if (v.is_string()) at = ParseRfc3339(v.get_ref<const std::string&>());
        if (!at) {
          if (error.empty()) {
            error = v.is_string() ? "parsing time " + GoQuote(v.get_ref<const std::string&>()) +
                                        " as \"2006-01-02T15:04:05Z07:00\": cannot parse " +
                                        GoQuote(v.get_ref<const std::string&>()) + " as \"2006\""
                                  : "json: cannot unmarshal " + JsonTypeName(v).substr(0, 6) +
                                        " into Go value of type string";
          }
          return nullptr;
        }
        return FormatRfc3339(*at);
      }
      case K::kObject:
        if (!v.is_object()) Mismatch(v, owner, path, t.go_name);
        return v.is_object() ? v : json::object();
      case K::kOpaque:
      case K::kAnything:
        return v;
      case K::kStruct:
        if (!v.is_object()) {
          Mismatch(v, owner, path, t.go_name);
          return Struct(RuleOf(t.struct_name), json::object(), path);
        }
        return Struct(RuleOf(t.struct_name), v, path);
      case K::kList: {
        if (!v.is_array()) {
          Mismatch(v, owner, path, t.go_name);
          return json::array();
        }
        json out = json::array();
        for (const json& item : v) {
          out.push_back(item.is_null() ? Zero(*t.elem, path) : Value(*t.elem, item, owner, path));
        }
        return out;
      }
      case K::kMap: {
        if (!v.is_object()) {
          Mismatch(v, owner, path, t.go_name);
          return json::object();
        }
        json out = json::object();
        for (const auto& [k, item] : v.items()) {
          out[k] = item.is_null() ? Zero(*t.elem, path) : Value(*t.elem, item, owner, path);
        }
        return out;
      }
    }
    return v;
  }

  // What an unset value of type `t` held by value encodes as.
  json Zero(const ValueType& t, const std::string& path) {
    using K = ValueType::Kind;
    switch (t.kind) {
      case K::kString:
        return "";
      case K::kBool:
        return false;
      case K::kInt32:
      case K::kInt64:
      case K::kNumber:
        return 0;
      case K::kStruct:
        return Struct(RuleOf(t.struct_name), json::object(), path);
      default:
        return nullptr;
    }
  }

  static bool IsZero(const ValueType& t, const json& v) {
    using K = ValueType::Kind;
    switch (t.kind) {
      case K::kString:
        return v == "";
      case K::kBool:
        return v == false;
      case K::kInt32:
      case K::kInt64:
      case K::kNumber:
        return v == 0;
      case K::kList:
      case K::kMap:
        return v.empty();
      default:
        return v.is_null();
    }
  }

  json Struct(const TypeRule& rule, const json& in, const std::string& path) {
    json out = json::object();
    for (const FieldRule& f : rule.fields) {
      const std::string child = path.empty() ? f.name : path + "." + f.name;
      auto it = in.find(f.name);
      const bool set = it != in.end() && !it->is_null();
      using K = ValueType::Kind;
      if (!set) {
        if (f.ptr || f.type.kind == K::kList || f.type.kind == K::kMap ||
            f.type.kind == K::kObject || f.type.kind == K::kAnything) {
          if (f.emit) out[f.name] = nullptr;
        } else if (f.type.kind == K::kStruct || f.type.kind == K::kTime) {
          out[f.name] = Zero(f.type, child);  // a struct held by value is always written
        } else if (f.type.kind != K::kOpaque && f.emit) {
          out[f.name] = Zero(f.type, child);
        }
        continue;
      }
      json value = Value(f.type, *it, rule.go_name, child);
      if (f.ptr || f.emit || f.type.kind == K::kStruct || f.type.kind == K::kTime ||
          f.type.kind == K::kOpaque || !IsZero(f.type, value)) {
        out[f.name] = std::move(value);
      }
    }
    return out;
  }
};

// ---------------------------------------------------------------------------
// ApplyDefaultsTo

void ApplyDefaultsTo(const TypeRule& rule, json& obj) {
  if (!obj.is_object()) return;
  for (const FieldRule& f : rule.fields) {
    auto it = obj.find(f.name);
    if ((it == obj.end() || it->is_null()) && !f.default_value.is_null()) {
      obj[f.name] = f.default_value;
      continue;
    }
    if (it == obj.end() || it->is_null()) continue;
    if (f.type.kind == ValueType::Kind::kStruct) {
      ApplyDefaultsTo(RuleOf(f.type.struct_name), *it);
    } else if (f.type.kind == ValueType::Kind::kList && it->is_array() &&
               f.type.elem->kind == ValueType::Kind::kStruct) {
      for (json& item : *it) ApplyDefaultsTo(RuleOf(f.type.elem->struct_name), item);
    }
  }
}

// ---------------------------------------------------------------------------
// Validation

const json& NullValue() {
  static const json kNull;
  return kNull;
}

std::string ItemPath(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

// Whether the field counts as set (a union member, required, optional).
bool IsSet(const FieldRule& f, const json& v) {
  if (v.is_null()) return false;
  using K = ValueType::Kind;
  if (f.ptr) return true;
  switch (f.type.kind) {
    case K::kList:
    case K::kMap:
      return !v.empty();
    case K::kString:
      return v != "";
    case K::kBool:
      return v != false;
    case K::kInt32:
    case K::kInt64:
    case K::kNumber:
      return v != 0;
    default:
      return true;
  }
}

std::vector<std::string> PathSegmentNameErrors(std::string_view name) {
  if (name == "." || name == "..") return {"may not be '" + std::string(name) + "'"};
  std::vector<std::string> out;
  for (std::string_view bad : {"/", "%"}) {
    if (name.find(bad) != std::string_view::npos) {
      out.push_back("may not contain '" + std::string(bad) + "'");
    }
  }
  return out;
}

std::vector<std::string> ConditionReasonErrors(std::string_view reason) {
  static const std::regex kReason("^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$");
  if (std::regex_match(reason.begin(), reason.end(), kReason)) return {};
  return {RegexError(
      "a condition reason must start with alphabetic character, optionally followed by a string "
      "of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'",
      "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?",
      {"my_name", "MY_NAME", "MyName", "ReasonA,ReasonB", "ReasonA:ReasonB"})};
}

std::vector<std::string> FormatErrors(const std::string& format, std::string_view value) {
  if (format == "k8s-short-name") return IsDns1123Label(value);
  if (format == "k8s-long-name") return IsDns1123Subdomain(value);
  if (format == "k8s-label-key") return IsQualifiedName(value);
  if (format == "k8s-path-segment-name") return PathSegmentNameErrors(value);
  if (format == "condition-reason") return ConditionReasonErrors(value);
  RuleDefect(format, "unknown format");
}

// The item of `list` whose `key` equals `item`'s, or null.
const json* MatchingItem(const json& list, const json& item, const std::string& key) {
  if (!list.is_array()) return nullptr;
  const json& want = item.is_object() && item.contains(key) ? item[key] : NullValue();
  for (const json& other : list) {
    const json& have = other.is_object() && other.contains(key) ? other[key] : NullValue();
    if (have == want) return &other;
  }
  return nullptr;
}

class RuleWalker {
 public:
  explicit RuleWalker(bool update) : update_(update) {}

  // `old` is the correlated old struct, or null when there is none (a
  // create, or a struct that did not exist before).
  void Struct(const TypeRule& rule, const std::string& path, const json& obj, const json* old) {
    const auto field_of = [&](const json& o, const FieldRule& f) -> const json& {
      if (!o.is_object()) return NullValue();
      auto it = o.find(f.name);
      return it == o.end() ? NullValue() : *it;
    };
    if (rule.is_union) Union(rule, path, obj, old, field_of);
    for (const FieldRule& f : rule.fields) {
      if (f.dependent_required.empty()) continue;
      const FieldRule* dep = nullptr;
      for (const FieldRule& g : rule.fields) {
        if (g.name == f.dependent_required) dep = &g;
      }
      if (dep == nullptr) RuleDefect(rule.name + "." + f.name, "unknown dependent field");
      const bool trigger = IsSet(f, field_of(obj, f));
      const bool present = IsSet(*dep, field_of(obj, *dep));
      if (update_ && old != nullptr && trigger == IsSet(f, field_of(*old, f)) &&
          present == IsSet(*dep, field_of(*old, *dep))) {
        continue;
      }
      if (trigger && !present) {
        errors_.push_back(
            FieldError::Required(Child(path, dep->name), "must be set when " + f.name + " is set"));
      }
    }
    for (const FieldRule& f : rule.fields) {
      if (f.type.kind == ValueType::Kind::kOpaque) continue;
      const json& v = field_of(obj, f);
      Field(f, Child(path, f.name), v, old == nullptr ? nullptr : &field_of(*old, f));
    }
  }

  FieldErrorList Take() { return std::move(errors_); }

 private:
  static std::string Child(const std::string& path, const std::string& name) {
    return path.empty() ? name : path + "." + name;
  }

  template <typename FieldOf>
  void Union(const TypeRule& rule, const std::string& path, const json& obj, const json* old,
             const FieldOf& field_of) {
    std::vector<std::string> all;
    std::vector<std::string> set;
    bool changed = false;
    for (const FieldRule& f : rule.fields) {
      if (!f.member) continue;
      all.push_back("`" + f.name + "`");
      const bool now = IsSet(f, field_of(obj, f));
      if (now) set.push_back(f.name);
      if (old != nullptr && now != IsSet(f, field_of(*old, f))) changed = true;
    }
    if (update_ && old != nullptr && !changed) return;
    std::string all_text;
    for (size_t i = 0; i < all.size(); ++i) all_text += (i ? ", " : "") + all[i];
    if (set.size() > 1) {
      std::string set_text;
      for (size_t i = 0; i < set.size(); ++i) set_text += (i ? ", " : "") + set[i];
      errors_.push_back(FieldError::Invalid(path, "{" + set_text + "}",
                                            "must specify exactly one of: " + all_text));
    } else if (set.empty()) {
      errors_.push_back(FieldError::Invalid(path, "", "must specify one of: " + all_text));
    }
  }

  // `old` is the correlated old value (possibly null), or nullptr when none.
  // As the generated validators: every gate (immutable, maxitems, required
  // or optional, the update constraints) is evaluated and reports its
  // error; any that fired (an unset optional field included) skips the
  // content checks.
  void Field(const FieldRule& f, const std::string& path, const json& v, const json* old) {
    if (update_ && old != nullptr && v == *old) return;  // ratcheting
    const bool set = IsSet(f, v);
    bool stop = false;
    const auto fail = [&](FieldError e) {
      errors_.push_back(std::move(e));
      stop = true;
    };
    if (f.immutable && update_ && (old != nullptr || set)) {
      fail(FieldError::Invalid(path, nullptr, "field is immutable"));
    }
    if (f.max_items && v.is_array() && static_cast<int64_t>(v.size()) > *f.max_items) {
      fail(FieldError::TooMany(path, static_cast<int64_t>(v.size()), *f.max_items));
    }
    if (f.required && !set) fail(FieldError::Required(path));
    if (f.optional && !set) stop = true;
    if (update_) {
      const bool was_set = old != nullptr && IsSet(f, *old);
      if (f.noset && !was_set && set) {
        fail(FieldError::Invalid(path, nullptr, "field cannot be set once created"));
      }
      if (f.nounset && was_set && !set) {
        fail(FieldError::Invalid(path, nullptr, "field cannot be cleared once set"));
      }
      if ((f.noadd || f.noremove) && f.type.kind == ValueType::Kind::kList) {
        const json& old_list = old == nullptr ? NullValue() : *old;
        const std::string& key = f.type.list_key;
        if (f.noadd && v.is_array()) {
          for (size_t i = 0; i < v.size(); ++i) {
            if (MatchingItem(old_list, v[i], key) == nullptr) {
              fail(FieldError::Forbidden(ItemPath(path, i), "item may not be added"));
            }
          }
        }
        if (f.noremove && old_list.is_array()) {
          for (const json& item : old_list) {
            if (MatchingItem(v, item, key) == nullptr) {
              fail(FieldError::Forbidden(path, "item may not be removed"));
            }
          }
        }
      }
    }
    if (stop || v.is_null()) return;
    Content(f, f.type, path, v, old);
  }

  void Content(const FieldRule& f, const ValueType& t, const std::string& path, const json& v,
               const json* old) {
    using K = ValueType::Kind;
    switch (t.kind) {
      case K::kString: {
        const std::string& s = v.get_ref<const std::string&>();
        if (!f.format.empty()) {
          for (const std::string& m : FormatErrors(f.format, s)) {
            errors_.push_back(FieldError::Invalid(path, v, m));
          }
        }
        if (f.max_bytes && static_cast<int64_t>(s.size()) > *f.max_bytes) {
          errors_.push_back(FieldError::TooLong(path, *f.max_bytes));
        }
        if (!f.enum_values.empty() &&
            std::find(f.enum_values.begin(), f.enum_values.end(), s) == f.enum_values.end()) {
          std::vector<std::string> sorted = f.enum_values;
          std::sort(sorted.begin(), sorted.end());
          errors_.push_back(FieldError::NotSupported(path, v, sorted));
        }
        return;
      }
      case K::kInt32:
      case K::kInt64: {
        const int64_t n = v.get<int64_t>();
        if (f.min && n < *f.min) {
          errors_.push_back(FieldError::Invalid(
              path, v, "must be greater than or equal to " + std::to_string(*f.min)));
        }
        if (f.max && n > *f.max) {
          errors_.push_back(FieldError::Invalid(
              path, v, "must be less than or equal to " + std::to_string(*f.max)));
        }
        return;
      }
      case K::kStruct:
        Struct(RuleOf(t.struct_name), path, v, old != nullptr && old->is_object() ? old : nullptr);
        return;
      case K::kList: {
        if (!t.list_key.empty()) {
          // ValSliceUnique: every later item with an earlier item's key.
          std::set<size_t> dups;
          for (size_t i = 0; i < v.size(); ++i) {
            for (size_t j = i + 1; j < v.size(); ++j) {
              const json& a =
                  v[i].is_object() && v[i].contains(t.list_key) ? v[i][t.list_key] : NullValue();
              const json& b =
                  v[j].is_object() && v[j].contains(t.list_key) ? v[j][t.list_key] : NullValue();
              if (a == b) dups.insert(j);
            }
          }
          for (size_t i : dups) errors_.push_back(FieldError::Duplicate(ItemPath(path, i), v[i]));
        }
        for (size_t i = 0; i < v.size(); ++i) {
          const json* old_item = nullptr;
          if (!t.list_key.empty() && old != nullptr)
            old_item = MatchingItem(*old, v[i], t.list_key);
          if (update_ && old_item != nullptr && *old_item == v[i]) continue;
          Content(f, *t.elem, ItemPath(path, i), v[i], old_item);
        }
        return;
      }
      default:
        return;
    }
  }

  bool update_;
  FieldErrorList errors_;
};

}  // namespace

Status NormalizeAsGo(std::string_view type_name, json& value) {
  Decoder decoder;
  const TypeRule& rule = RuleOf(type_name);
  if (!value.is_object()) {
    return MakeError(ErrorCode::kInvalid,
                     "json: cannot unmarshal " + JsonTypeName(value).substr(0, 6) +
                         " into Go value of type " + GoQualifiedName(type_name));
  }
  json out = decoder.Struct(rule, value, "");
  if (!decoder.error.empty()) return MakeError(ErrorCode::kInvalid, decoder.error);
  value = std::move(out);
  return Status::Ok();
}

void ApplySchemaDefaults(std::string_view type_name, json& value) {
  ApplyDefaultsTo(RuleOf(type_name), value);
}

FieldErrorList ValidateBySchema(std::string_view type_name, const json& obj, const json* old_obj) {
  RuleWalker walker(old_obj != nullptr);
  walker.Struct(RuleOf(type_name), "", obj, old_obj);
  return walker.Take();
}

}  // namespace copse::apiserver
