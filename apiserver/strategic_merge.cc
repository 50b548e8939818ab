#include "apiserver/strategic_merge.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "apiserver/selector.h"

namespace copse::apiserver {
namespace {

using json = nlohmann::json;

constexpr std::string_view kDirectiveMarker = "$patch";
constexpr std::string_view kRetainKeysDirective = "$retainKeys";
constexpr std::string_view kDeleteFromPrimitiveListPrefix = "$deleteFromPrimitiveList";
constexpr std::string_view kSetElementOrderPrefix = "$setElementOrder";

// ---------------------------------------------------------------------------
// Patch metadata: the patchStrategy / patchMergeKey struct tags of the Go
// types, as a small tree. A null TypeSchema means "nothing known": maps
// merge, lists are replaced.

struct TypeSchema;

struct FieldMeta {
  const TypeSchema* type = nullptr;  // struct type, or the element type of a list
  bool merge = false;                // patchStrategy "merge" (lists)
  bool replace = false;              // patchStrategy "replace" (structs, maps)
  std::string merge_key;             // patchMergeKey, lists of structs only
};

struct TypeSchema {
  std::map<std::string, FieldMeta, std::less<>> fields;
};

FieldMeta Lookup(const TypeSchema* type, std::string_view key) {
  if (type == nullptr) return {};
  auto it = type->fields.find(key);
  return it == type->fields.end() ? FieldMeta{} : it->second;
}

FieldMeta Struct(const TypeSchema& type) { return FieldMeta{&type, false, false, {}}; }
FieldMeta MergeByKey(const TypeSchema* elem, std::string merge_key) {
  return FieldMeta{elem, true, false, std::move(merge_key)};
}
FieldMeta MergePrimitives() { return FieldMeta{nullptr, true, false, {}}; }
FieldMeta ReplaceStruct() { return FieldMeta{nullptr, false, true, {}}; }

// All the schemas copse knows, built once.
class Schemas {
 public:
  static const Schemas& Get() {
    static const Schemas schemas;
    return schemas;
  }

  // The schema of a built-in kind; a metadata-only schema for other kinds
  // of the built-in groups.
  const TypeSchema* ForKind(std::string_view group, std::string_view kind) const {
    auto it = kinds_.find(std::string(group) + "/" + std::string(kind));
    return it == kinds_.end() ? &generic_ : it->second;
  }

 private:
  Schemas() {
    object_meta_.fields["ownerReferences"] = MergeByKey(nullptr, "uid");
    object_meta_.fields["finalizers"] = MergePrimitives();

    container_.fields["ports"] = MergeByKey(nullptr, "containerPort");
    container_.fields["env"] = MergeByKey(nullptr, "name");
    container_.fields["volumeMounts"] = MergeByKey(nullptr, "mountPath");
    container_.fields["volumeDevices"] = MergeByKey(nullptr, "devicePath");

    pod_spec_.fields["volumes"] = MergeByKey(nullptr, "name");  // merge,retainKeys
    pod_spec_.fields["initContainers"] = MergeByKey(&container_, "name");
    pod_spec_.fields["containers"] = MergeByKey(&container_, "name");
    pod_spec_.fields["ephemeralContainers"] = MergeByKey(&container_, "name");
    pod_spec_.fields["imagePullSecrets"] = MergeByKey(nullptr, "name");
    pod_spec_.fields["hostAliases"] = MergeByKey(nullptr, "ip");
    pod_spec_.fields["topologySpreadConstraints"] = MergeByKey(nullptr, "topologyKey");
    pod_spec_.fields["schedulingGates"] = MergeByKey(nullptr, "name");
    pod_spec_.fields["resourceClaims"] = MergeByKey(nullptr, "name");  // merge,retainKeys

    pod_status_.fields["conditions"] = MergeByKey(nullptr, "type");
    pod_status_.fields["podIPs"] = MergeByKey(nullptr, "ip");
    pod_status_.fields["hostIPs"] = MergeByKey(nullptr, "ip");
    pod_status_.fields["resourceClaimStatuses"] = MergeByKey(nullptr, "name");

    pod_template_spec_.fields["metadata"] = Struct(object_meta_);
    pod_template_spec_.fields["spec"] = Struct(pod_spec_);

    conditions_status_.fields["conditions"] = MergeByKey(nullptr, "type");

    generic_.fields["metadata"] = Struct(object_meta_);

    pod_.fields["metadata"] = Struct(object_meta_);
    pod_.fields["spec"] = Struct(pod_spec_);
    pod_.fields["status"] = Struct(pod_status_);

    node_spec_.fields["podCIDRs"] = MergePrimitives();
    node_status_.fields["conditions"] = MergeByKey(nullptr, "type");
    node_status_.fields["addresses"] = MergeByKey(nullptr, "type");
    node_.fields["metadata"] = Struct(object_meta_);
    node_.fields["spec"] = Struct(node_spec_);
    node_.fields["status"] = Struct(node_status_);

    service_spec_.fields["ports"] = MergeByKey(nullptr, "port");
    service_.fields["metadata"] = Struct(object_meta_);
    service_.fields["spec"] = Struct(service_spec_);
    service_.fields["status"] = Struct(conditions_status_);

    with_conditions_.fields["metadata"] = Struct(object_meta_);
    with_conditions_.fields["status"] = Struct(conditions_status_);

    pod_template_.fields["metadata"] = Struct(object_meta_);
    pod_template_.fields["template"] = Struct(pod_template_spec_);

    workload_spec_.fields["template"] = Struct(pod_template_spec_);
    workload_.fields["metadata"] = Struct(object_meta_);
    workload_.fields["spec"] = Struct(workload_spec_);
    workload_.fields["status"] = Struct(conditions_status_);

    job_template_spec_.fields["metadata"] = Struct(object_meta_);
    job_template_spec_.fields["spec"] = Struct(workload_spec_);
    cron_job_spec_.fields["jobTemplate"] = Struct(job_template_spec_);
    cron_job_.fields["metadata"] = Struct(object_meta_);
    cron_job_.fields["spec"] = Struct(cron_job_spec_);

    pdb_spec_.fields["selector"] = ReplaceStruct();
    pdb_.fields["metadata"] = Struct(object_meta_);
    pdb_.fields["spec"] = Struct(pdb_spec_);
    pdb_.fields["status"] = Struct(conditions_status_);

    kinds_["/Pod"] = &pod_;
    kinds_["/Node"] = &node_;
    kinds_["/Service"] = &service_;
    kinds_["/Namespace"] = &with_conditions_;
    kinds_["/PodTemplate"] = &pod_template_;
    kinds_["/ReplicationController"] = &workload_;
    kinds_["apps/Deployment"] = &workload_;
    kinds_["apps/ReplicaSet"] = &workload_;
    kinds_["apps/StatefulSet"] = &workload_;
    kinds_["apps/DaemonSet"] = &workload_;
    kinds_["batch/Job"] = &workload_;
    kinds_["batch/CronJob"] = &cron_job_;
    kinds_["policy/PodDisruptionBudget"] = &pdb_;
    kinds_["scheduling.k8s.io/Workload"] = &with_conditions_;
    kinds_["scheduling.k8s.io/PodGroup"] = &with_conditions_;
  }

  TypeSchema object_meta_, container_, pod_spec_, pod_status_, pod_template_spec_,
      conditions_status_, generic_, pod_, node_spec_, node_status_, node_, service_spec_, service_,
      with_conditions_, pod_template_, workload_spec_, workload_, job_template_spec_,
      cron_job_spec_, cron_job_, pdb_spec_, pdb_;
  std::map<std::string, const TypeSchema*, std::less<>> kinds_;
};

// ---------------------------------------------------------------------------
// Errors, as kube-apiserver reports them (patch.go interpretStrategicMergePatchError):
// malformed directives are 400 BadRequest (selector.h), a list of lists and patch content
// outside $retainKeys are 422 Invalid, anything else is the raw error (500).

Error Unprocessable(std::string message) {
  return Error{ErrorCode::kInvalid, std::move(message), 422, "Invalid"};
}
Error Internal(std::string message) {
  return Error{ErrorCode::kInternal, std::move(message), 500, ""};
}

// Go's %v of a decoded JSON value (map[k:v ...], [a b], raw strings).
std::string GoValue(const json& value) {
  switch (value.type()) {
    case json::value_t::object: {
      std::string out = "map[";
      bool first = true;
      for (const auto& [k, v] : value.items()) {
        if (!first) out += ' ';
        first = false;
        out += k;
        out += ':';
        out += GoValue(v);
      }
      return out + "]";
    }
    case json::value_t::array: {
      std::string out = "[";
      for (size_t i = 0; i < value.size(); ++i) {
        if (i > 0) out += ' ';
        out += GoValue(value[i]);
      }
      return out + "]";
    }
    case json::value_t::string:
      return value.get<std::string>();
    case json::value_t::null:
      return "<nil>";
    default:
      return value.dump();
  }
}

// reflect.TypeOf names of decoded JSON values, for ErrBadArgType messages.
std::string_view GoTypeName(const json& value) {
  switch (value.type()) {
    case json::value_t::object:
      return "map[string]interface {}";
    case json::value_t::array:
      return "[]interface {}";
    case json::value_t::string:
      return "string";
    case json::value_t::boolean:
      return "bool";
    case json::value_t::number_float:
      return "float64";
    case json::value_t::null:
      return "<nil>";
    default:
      return "int64";
  }
}

Error ErrNoMergeKey(const json& map, std::string_view key) {
  return Internal("map: " + GoValue(map) +
                  " does not contain declared merge key: " + std::string(key));
}
Error ErrBadPatchType(const json& directive, const json& map) {
  return Internal("unknown patch type: " + GoValue(directive) + " in map: " + GoValue(map));
}
Error ErrBadArgType(const json& actual) {
  return Internal("expected a []interface {}, but received a " + std::string(GoTypeName(actual)));
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// "$setElementOrder/containers" -> "containers" (strings.SplitN(s, "/", 2)).
Result<std::string> ExtractKey(std::string_view key, std::string_view prefix) {
  const size_t slash = key.find('/');
  if (slash == std::string_view::npos || key.substr(0, slash) != prefix) {
    if (prefix == kDeleteFromPrimitiveListPrefix) {
      return BadRequest("invalid patch format of primitive list");
    }
    return BadRequest("invalid patch format of setElementOrder list");
  }
  return std::string(key.substr(slash + 1));
}

enum class ElemKind { kEmpty, kMap, kPrimitive };

// sliceElementType: every element of both lists has the same JSON type; no
// lists of lists.
Result<ElemKind> SliceElementKind(const json& a, const json& b) {
  const json* first = nullptr;
  for (const json* list : {&a, &b}) {
    if (!list->is_array()) continue;
    for (const json& v : *list) {
      if (first == nullptr) {
        first = &v;
        if (v.is_array()) return Unprocessable("lists of lists are not supported");
        continue;
      }
      const bool same = (first->is_number() && v.is_number()) || first->type() == v.type();
      if (!same) {
        return Internal("list element types are not identical: [" + GoValue(a) + " " + GoValue(b) +
                        "]");
      }
    }
  }
  if (first == nullptr) return ElemKind::kEmpty;
  return first->is_object() ? ElemKind::kMap : ElemKind::kPrimitive;
}

// The value an element is identified by: its merge key for maps (null when
// absent), the element itself for primitives.
const json& IdentityOf(const json& item, std::string_view merge_key, ElemKind kind) {
  static const json kNull;
  if (kind != ElemKind::kMap || merge_key.empty()) return item;
  if (!item.is_object()) return kNull;
  auto it = item.find(merge_key);
  return it == item.end() ? kNull : *it;
}

// index(): position of the element with the same identity, or -1.
ptrdiff_t IndexOf(const json& list, const json& item, std::string_view merge_key, ElemKind kind) {
  const json& id = IdentityOf(item, merge_key, kind);
  for (size_t i = 0; i < list.size(); ++i) {
    if (IdentityOf(list[i], merge_key, kind) == id) return static_cast<ptrdiff_t>(i);
  }
  return -1;
}

// normalizeSliceOrder: stable sort by position in `order` (unknown items last).
void SortByOrder(std::vector<json>& items, const json& order, std::string_view merge_key,
                 ElemKind kind) {
  std::vector<std::pair<ptrdiff_t, size_t>> keys;
  keys.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    ptrdiff_t idx = IndexOf(order, items[i], merge_key, kind);
    keys.emplace_back(idx < 0 ? PTRDIFF_MAX : idx, i);
  }
  std::stable_sort(keys.begin(), keys.end(),
                   [](const auto& l, const auto& r) { return l.first < r.first; });
  std::vector<json> sorted;
  sorted.reserve(items.size());
  for (const auto& k : keys) sorted.push_back(std::move(items[k.second]));
  items = std::move(sorted);
}

// normalizeElementOrder + mergeSortedSlice: patch items in patch order,
// server-only items in live order, interleaved by their live positions; an
// item not in the live list (a new item) goes before the server-only item
// it is compared with, as upstream does.
json NormalizeElementOrder(std::vector<json> patch_items, std::vector<json> server_only,
                           const json& patch_order, const json& server_order,
                           std::string_view merge_key, ElemKind kind) {
  SortByOrder(patch_items, patch_order, merge_key, kind);
  SortByOrder(server_only, server_order, merge_key, kind);
  json out = json::array();
  size_t i = 0;
  size_t j = 0;
  while (i < server_only.size() || j < patch_items.size()) {
    if (i >= server_only.size()) {
      out.push_back(std::move(patch_items[j++]));
    } else if (j >= patch_items.size()) {
      out.push_back(std::move(server_only[i++]));
    } else {
      const ptrdiff_t li = IndexOf(server_order, server_only[i], merge_key, kind);
      const ptrdiff_t ri = IndexOf(server_order, patch_items[j], merge_key, kind);
      if (li >= 0 && ri >= 0 && li < ri) {
        out.push_back(std::move(server_only[i++]));
      } else {
        out.push_back(std::move(patch_items[j++]));
      }
    }
  }
  return out;
}

// Splits `merged` into items whose identity appears in `by` and the rest.
Status Partition(const json& merged, const json& by, std::string_view merge_key, ElemKind kind,
                 std::vector<json>& in, std::vector<json>& out) {
  for (const json& v : merged) {
    if (kind == ElemKind::kMap && !merge_key.empty()) {
      if (!v.is_object()) return ErrBadArgType(v);
      if (!v.contains(merge_key)) return ErrNoMergeKey(v, merge_key);
    }
    if (IndexOf(by, v, merge_key, kind) >= 0) {
      in.push_back(v);
    } else {
      out.push_back(v);
    }
  }
  return Status::Ok();
}

class Merger {
 public:
  Status MergeMap(json& original, json patch, const TypeSchema* type);

 private:
  Status MergeList(json& original, json patch, const FieldMeta& meta, bool is_delete_list);
  Result<json> Fresh(json value, const FieldMeta& meta);
  Status ApplySetElementOrder(json& original, json& patch, const std::string& key,
                              const TypeSchema* type);
  Status MergeField(json& original, const std::string& key, json value, const FieldMeta& meta,
                    bool is_delete_list);
};

// A patch value for a field the original lacks: directives applied, nulls
// dropped (what kube-apiserver stores after decoding into the Go type).
Result<json> Merger::Fresh(json value, const FieldMeta& meta) {
  if (value.is_object()) {
    json out = json::object();
    if (Status s = MergeMap(out, std::move(value), meta.type); !s.ok()) return s.error();
    return out;
  }
  if (value.is_array()) {
    json out = json::array();
    if (meta.merge) {
      if (Status s = MergeList(out, std::move(value), meta, false); !s.ok()) return s.error();
      return out;
    }
    for (json& elem : value) {
      if (elem.is_object()) {
        json clean = json::object();
        if (Status s = MergeMap(clean, std::move(elem), meta.type); !s.ok()) return s.error();
        out.push_back(std::move(clean));
      } else {
        out.push_back(std::move(elem));
      }
    }
    return out;
  }
  return value;
}

Status Merger::MergeMap(json& original, json patch, const TypeSchema* type) {
  if (!original.is_object()) original = json::object();
  if (patch.is_null()) return Status::Ok();

  // $patch in a map: replace the whole map, delete it, or merge (the default).
  if (auto it = patch.find(kDirectiveMarker); it != patch.end()) {
    const json directive = *it;
    if (directive == "replace") {
      patch.erase(it);
      original = json::object();
    } else if (directive == "delete") {
      original = json::object();
      return Status::Ok();
    } else if (directive == "merge") {
      patch.erase(it);
    } else {
      return ErrBadPatchType(directive, patch);
    }
  }

  // $retainKeys: fields of the original not listed are cleared; the patch
  // may only set listed fields.
  if (auto it = patch.find(kRetainKeysDirective); it != patch.end()) {
    const json retain = *it;
    patch.erase(it);
    if (!retain.is_array()) return BadRequest("invalid patch format of retainKeys");
    auto listed = [&retain](const std::string& key) {
      return std::find(retain.begin(), retain.end(), json(key)) != retain.end();
    };
    for (const auto& [k, v] : patch.items()) {
      if (v.is_null() || StartsWith(k, kDeleteFromPrimitiveListPrefix) ||
          StartsWith(k, kSetElementOrderPrefix)) {
        continue;
      }
      if (!listed(k)) return Unprocessable("patch content doesn't match retainKeys list");
    }
    for (auto o = original.begin(); o != original.end();) {
      if (listed(o.key())) {
        ++o;
      } else {
        o = original.erase(o);
      }
    }
  }

  // $setElementOrder/<list>: merge that list now and fix its order.
  std::vector<std::string> order_keys;
  for (const auto& [k, v] : patch.items()) {
    if (StartsWith(k, kSetElementOrderPrefix)) order_keys.push_back(k);
  }
  for (const std::string& k : order_keys) {
    if (Status s = ApplySetElementOrder(original, patch, k, type); !s.ok()) return s;
  }

  // The fields; $deleteFromPrimitiveList/<list> after the additions, as
  // kubectl's patches expect.
  std::vector<std::pair<std::string, json>> delete_lists;
  for (auto& [k, v] : patch.items()) {
    if (StartsWith(k, kDeleteFromPrimitiveListPrefix)) {
      delete_lists.emplace_back(k, std::move(v));
      continue;
    }
    if (!k.empty() && k[0] == '$') continue;  // unknown directive: no Go field, dropped
    if (Status s = MergeField(original, k, std::move(v), Lookup(type, k), false); !s.ok()) {
      return s;
    }
  }
  for (auto& [k, v] : delete_lists) {
    Result<std::string> base = ExtractKey(k, kDeleteFromPrimitiveListPrefix);
    if (!base.ok()) return base.error();
    if (Status s = MergeField(original, *base, std::move(v), Lookup(type, *base), true); !s.ok()) {
      return s;
    }
  }
  return Status::Ok();
}

Status Merger::MergeField(json& original, const std::string& key, json value, const FieldMeta& meta,
                          bool is_delete_list) {
  if (value.is_null()) {
    original.erase(key);
    return Status::Ok();
  }
  auto it = original.find(key);
  if (it == original.end()) {
    if (is_delete_list) return Status::Ok();
    Result<json> fresh = Fresh(std::move(value), meta);
    if (!fresh.ok()) return fresh.error();
    original[key] = std::move(*fresh);
    return Status::Ok();
  }
  json& current = *it;
  const bool same_kind =
      (current.is_object() && value.is_object()) || (current.is_array() && value.is_array());
  if (!same_kind) {
    if (is_delete_list) return BadRequest("invalid patch format of primitive list");
    Result<json> fresh = Fresh(std::move(value), meta);
    if (!fresh.ok()) return fresh.error();
    current = std::move(*fresh);
    return Status::Ok();
  }
  if (current.is_object()) {
    if (meta.replace) {
      Result<json> fresh = Fresh(std::move(value), FieldMeta{meta.type, false, false, {}});
      if (!fresh.ok()) return fresh.error();
      current = std::move(*fresh);
      return Status::Ok();
    }
    return MergeMap(current, std::move(value), meta.type);
  }
  if (is_delete_list || meta.merge) {
    return MergeList(current, std::move(value), meta, is_delete_list);
  }
  Result<json> fresh = Fresh(std::move(value), meta);
  if (!fresh.ok()) return fresh.error();
  current = std::move(*fresh);
  return Status::Ok();
}

// mergeSlice for a list with patchStrategy merge (or a $deleteFromPrimitiveList).
Status Merger::MergeList(json& original, json patch, const FieldMeta& meta, bool is_delete_list) {
  if (!original.is_array()) original = json::array();
  if (original.empty() && patch.empty()) return Status::Ok();
  Result<ElemKind> kind_or = SliceElementKind(original, patch);
  if (!kind_or.ok()) return kind_or.error();
  const ElemKind kind = *kind_or;
  const std::string& merge_key = meta.merge_key;

  if (kind != ElemKind::kMap) {
    if (is_delete_list) {
      json kept = json::array();
      for (json& v : original) {
        if (std::find(patch.begin(), patch.end(), v) == patch.end()) kept.push_back(std::move(v));
      }
      original = std::move(kept);
      return Status::Ok();
    }
    json merged = json::array();
    for (const json* list : {&original, &patch}) {
      for (const json& v : *list) {
        if (std::find(merged.begin(), merged.end(), v) == merged.end()) merged.push_back(v);
      }
    }
    std::vector<json> in;
    std::vector<json> out;
    if (Status s = Partition(merged, patch, {}, kind, in, out); !s.ok()) return s;
    original = NormalizeElementOrder(std::move(in), std::move(out), patch, original, {}, kind);
    return Status::Ok();
  }

  if (is_delete_list) return BadRequest("invalid patch format of primitive list");
  if (merge_key.empty()) return Internal("cannot merge lists without merge key for type map");

  // Elements with $patch: delete removes the element, replace replaces the
  // whole list with the other elements, merge is the default.
  json plain = json::array();
  bool replace = false;
  for (json& elem : patch) {
    auto d = elem.find(kDirectiveMarker);
    if (d == elem.end()) {
      plain.push_back(std::move(elem));
      continue;
    }
    const json directive = *d;
    if (directive == "delete") {
      auto key_it = elem.find(merge_key);
      if (key_it == elem.end()) return ErrNoMergeKey(elem, merge_key);
      const json key_value = *key_it;
      json kept = json::array();
      for (json& v : original) {
        if (!(v.is_object() && v.contains(merge_key) && v[merge_key] == key_value)) {
          kept.push_back(std::move(v));
        }
      }
      original = std::move(kept);
    } else if (directive == "replace") {
      replace = true;
    } else if (directive == "merge") {
      elem.erase(kDirectiveMarker);
      plain.push_back(std::move(elem));
    } else {
      return ErrBadPatchType(directive, elem);
    }
  }
  if (replace) {
    json replaced = json::array();
    for (json& elem : plain) {
      json clean = json::object();
      if (Status s = MergeMap(clean, std::move(elem), meta.type); !s.ok()) return s;
      replaced.push_back(std::move(clean));
    }
    original = std::move(replaced);
    plain = json::array();
  }

  const json server_order = original;
  json merged = original;
  for (json& elem : plain) {
    auto key_it = elem.find(merge_key);
    if (key_it == elem.end()) return ErrNoMergeKey(elem, merge_key);
    const json key_value = *key_it;
    json* target = nullptr;
    for (json& m : merged) {
      if (!m.is_object()) return Internal("value for key " + merge_key + " is not a map.");
      auto mk = m.find(merge_key);
      if (mk != m.end() && *mk == key_value) {
        target = &m;
        break;
      }
    }
    if (target != nullptr) {
      if (Status s = MergeMap(*target, elem, meta.type); !s.ok()) return s;
    } else {
      json clean = json::object();
      if (Status s = MergeMap(clean, elem, meta.type); !s.ok()) return s;
      merged.push_back(std::move(clean));
    }
  }
  std::vector<json> in;
  std::vector<json> out;
  if (Status s = Partition(merged, plain, merge_key, kind, in, out); !s.ok()) return s;
  original =
      NormalizeElementOrder(std::move(in), std::move(out), plain, server_order, merge_key, kind);
  return Status::Ok();
}

// mergePatchIntoOriginal for one $setElementOrder/<list> directive.
Status Merger::ApplySetElementOrder(json& original, json& patch, const std::string& key,
                                    const TypeSchema* type) {
  json order = std::move(patch[key]);
  patch.erase(key);
  if (!order.is_array()) return ErrBadArgType(order);
  Result<std::string> base_or = ExtractKey(key, kSetElementOrderPrefix);
  if (!base_or.ok()) return base_or.error();
  const std::string& base = *base_or;
  const FieldMeta meta = Lookup(type, base);
  const std::string& merge_key = meta.merge_key;

  const bool found_original = original.contains(base);
  const bool found_patch = patch.contains(base);
  json original_list = json::array();
  json patch_list = json::array();
  if (found_original) {
    if (!original[base].is_array()) return ErrBadArgType(original[base]);
    original_list = original[base];
  }
  if (found_patch) {
    if (patch[base].is_null()) {
      // The list is deleted; the order directive has nothing to order.
      return Status::Ok();
    }
    if (!patch[base].is_array()) return ErrBadArgType(patch[base]);
    patch_list = patch[base];
  }

  // validatePatchWithSetOrderList: patch items appear in the order list, in
  // the same relative order (deletions and other directives ignored).
  if (!order.empty() && !patch_list.empty()) {
    std::vector<const json*> non_delete;
    for (const json& item : patch_list) {
      if (!merge_key.empty()) {
        if (!item.is_object()) return ErrBadArgType(item);
        auto d = item.find(kDirectiveMarker);
        if (d != item.end() && *d == "delete") continue;
      }
      non_delete.push_back(&item);
    }
    size_t pi = 0;
    size_t si = 0;
    while (pi < non_delete.size() && si < order.size()) {
      const json& item = *non_delete[pi];
      if (item.is_object() && item.contains(kDirectiveMarker)) {
        ++pi;
        continue;
      }
      bool equal = false;
      if (merge_key.empty()) {
        equal = item == order[si];
      } else {
        if (!order[si].is_object()) return ErrBadArgType(order[si]);
        if (!item.contains(merge_key)) return ErrNoMergeKey(item, merge_key);
        if (!order[si].contains(merge_key)) return ErrNoMergeKey(order[si], merge_key);
        equal = item[merge_key] == order[si][merge_key];
      }
      if (equal) ++pi;
      ++si;
    }
    if (pi < non_delete.size() && si >= order.size()) {
      return Internal("The order in patch list:\n" + GoValue(patch_list) +
                      "\n doesn't match $setElementOrder list:\n" + GoValue(order) + "\n");
    }
  }

  json merged;
  if (found_original && !found_patch) {
    merged = original_list;
  } else if (!found_original && found_patch) {
    Result<json> fresh = Fresh(patch_list, meta);
    if (!fresh.ok()) return fresh.error();
    merged = std::move(*fresh);
  } else if (found_original && found_patch) {
    merged = original_list;
    if (meta.merge) {
      if (Status s = MergeList(merged, patch_list, meta, false); !s.ok()) return s;
    } else {
      Result<json> fresh = Fresh(patch_list, meta);
      if (!fresh.ok()) return fresh.error();
      merged = std::move(*fresh);
    }
  } else {
    return Status::Ok();
  }

  Result<ElemKind> kind_or = SliceElementKind(original_list, patch_list);
  if (!kind_or.ok()) return kind_or.error();
  const ElemKind kind = *kind_or == ElemKind::kEmpty ? ElemKind::kPrimitive : *kind_or;
  std::vector<json> in;
  std::vector<json> out;
  if (Status s = Partition(merged, order, merge_key, kind, in, out); !s.ok()) return s;
  original[base] =
      NormalizeElementOrder(std::move(in), std::move(out), order, original_list, merge_key, kind);
  patch.erase(base);
  return Status::Ok();
}

struct GroupVersion {
  std::string_view group;
  std::string_view version;
};

GroupVersion SplitApiVersion(std::string_view api_version) {
  const size_t slash = api_version.find('/');
  if (slash == std::string_view::npos) return {{}, api_version};
  return {api_version.substr(0, slash), api_version.substr(slash + 1)};
}

constexpr std::string_view kBuiltinGroups[] = {
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
    "internal.apiserver.k8s.io",
    "networking.k8s.io",
    "node.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "resource.k8s.io",
    "scheduling.k8s.io",
    "storage.k8s.io",
    "storagemigration.k8s.io",
};

}  // namespace

bool SupportsStrategicMerge(std::string_view api_version, std::string_view kind) {
  if (kind.empty()) return false;
  const GroupVersion gv = SplitApiVersion(api_version);
  if (gv.version.empty()) return false;
  return std::find(std::begin(kBuiltinGroups), std::end(kBuiltinGroups), gv.group) !=
         std::end(kBuiltinGroups);
}

Result<nlohmann::json> ApplyStrategicMergePatch(const nlohmann::json& original,
                                                const nlohmann::json& patch,
                                                std::string_view api_version,
                                                std::string_view kind) {
  if (!patch.is_object() && !patch.is_null()) {
    return BadRequest("json: cannot unmarshal " +
                      std::string(patch.is_array()     ? "array"
                                  : patch.is_string()  ? "string"
                                  : patch.is_boolean() ? "bool"
                                                       : "number") +
                      " into Go value of type map[string]interface {}");
  }
  if (!original.is_object()) {
    return Internal("the object to patch is not a JSON object");
  }
  const GroupVersion gv = SplitApiVersion(api_version);
  json result = original;
  Merger merger;
  if (Status s = merger.MergeMap(result, patch, Schemas::Get().ForKind(gv.group, kind)); !s.ok()) {
    return s.error();
  }
  return result;
}

Result<json> ApplyJsonPatch(const json& doc, const json& patch) {
  const auto invalid = Unprocessable;
  if (!patch.is_array()) return invalid("a JSON patch must be an array of operations");
  json result = doc;
  try {
    for (const json& op : patch) {
      const auto name = op.is_object() ? op.find("op") : op.end();
      const auto path = op.is_object() ? op.find("path") : op.end();
      if (name != op.end() && path != op.end() && name->is_string() && path->is_string() &&
          (*name == "add" || *name == "copy" || *name == "move")) {
        const json::json_pointer target(path->get<std::string>());
        if (!target.empty()) {
          const json::json_pointer parent = target.parent_pointer();
          if (result.contains(parent)) {
            const json& container = result.at(parent);
            if (!container.is_object() && !container.is_array() && !container.is_null()) {
              return invalid("the " + name->get<std::string>() + " operation's path \"" +
                             path->get<std::string>() + "\" is inside a " + container.type_name() +
                             ", not an object or an array");
            }
          }
        }
      }
      result.patch_inplace(json::array({op}));
    }
  } catch (const json::exception& e) {
    return invalid(e.what());
  }
  return result;
}

}  // namespace copse::apiserver
