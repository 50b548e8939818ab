#include "apiserver/apply.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

namespace copse::apiserver {

using nlohmann::json;

namespace {

constexpr std::string_view kRefPrefix = "#/components/schemas/";

// A schema node with its $ref / single allOf resolved (nullptr stays nullptr).
const json* Resolve(const ApplySchema& schema, const json* node) {
  for (int depth = 0; node != nullptr && node->is_object() && depth < 8; ++depth) {
    if (auto ref = node->find("$ref"); ref != node->end() && ref->is_string()) {
      const std::string target = ref->get<std::string>();
      if (schema.components == nullptr || !target.starts_with(kRefPrefix)) return nullptr;
      auto it = schema.components->find(target.substr(kRefPrefix.size()));
      node = it == schema.components->end() ? nullptr : &*it;
      continue;
    }
    if (auto all = node->find("allOf"); all != node->end() && all->is_array() && all->size() == 1) {
      node = &(*all)[0];
      continue;
    }
    return node;
  }
  return node;
}

const json* Child(const ApplySchema& schema, const json* node, const std::string& field) {
  node = Resolve(schema, node);
  if (node == nullptr) return nullptr;
  if (auto p = node->find("properties"); p != node->end() && p->is_object()) {
    if (auto f = p->find(field); f != p->end()) return Resolve(schema, &*f);
  }
  if (auto a = node->find("additionalProperties"); a != node->end() && a->is_object()) {
    return Resolve(schema, &*a);
  }
  return nullptr;
}

const json* Items(const ApplySchema& schema, const json* node) {
  node = Resolve(schema, node);
  if (node == nullptr) return nullptr;
  auto it = node->find("items");
  return it != node->end() && it->is_object() ? Resolve(schema, &*it) : nullptr;
}

enum class ListType { kAtomic, kSet, kMap };

ListType ListTypeOf(const ApplySchema& schema, const json* node, std::vector<std::string>* keys) {
  node = Resolve(schema, node);
  if (node == nullptr) return ListType::kAtomic;
  auto t = node->find("x-kubernetes-list-type");
  if (t == node->end() || !t->is_string()) return ListType::kAtomic;
  if (*t == "set") return ListType::kSet;
  if (*t != "map") return ListType::kAtomic;
  auto k = node->find("x-kubernetes-list-map-keys");
  if (k == node->end() || !k->is_array() || k->empty()) return ListType::kAtomic;
  for (const auto& key : *k) {
    if (key.is_string()) keys->push_back(key.get<std::string>());
  }
  return ListType::kMap;
}

// Fields a manager never owns: identity and what the server sets.
bool Unowned(const std::vector<std::string>& path) {
  if (path.size() == 1) return path[0] == "f:apiVersion" || path[0] == "f:kind";
  if (path.size() == 2 && path[0] == "f:metadata") {
    static const char* const kServer[] = {"f:name",
                                          "f:namespace",
                                          "f:uid",
                                          "f:resourceVersion",
                                          "f:generation",
                                          "f:creationTimestamp",
                                          "f:managedFields",
                                          "f:selfLink",
                                          "f:deletionTimestamp",
                                          "f:deletionGracePeriodSeconds"};
    for (const char* k : kServer) {
      if (path[1] == k) return true;
    }
  }
  return false;
}

// The key object of a list-map item ({"name":"main"}), with defaults kube
// applies to keys before merging (a port's protocol is TCP).
Result<json> ItemKey(const json& item, const std::vector<std::string>& keys,
                     const std::string& where) {
  json key = json::object();
  for (const std::string& k : keys) {
    auto it = item.is_object() ? item.find(k) : item.end();
    if (it != item.end() && !it->is_null()) {
      key[k] = *it;
    } else if (k == "protocol") {
      key[k] = "TCP";
    } else {
      Error e = MakeError(ErrorCode::kInvalid, where +
                                                   ": associative list with keys has an "
                                                   "element that omits key field \"" +
                                                   k + "\"");
      e.http_status = 422;
      e.reason = "Invalid";
      return e;
    }
  }
  return key;
}

bool KeyMatches(const json& item, const json& key) {
  if (!item.is_object()) return false;
  for (const auto& [k, v] : key.items()) {
    auto it = item.find(k);
    if (it == item.end() || it->is_null()) {
      if (!(k == "protocol" && v == "TCP")) return false;
    } else if (*it != v) {
      return false;
    }
  }
  return true;
}

// kube's field path notation: .spec.containers[name="main"].image
std::string PathString(const std::vector<std::string>& path) {
  std::string out;
  for (const std::string& e : path) {
    if (e.starts_with("f:")) {
      out += "." + e.substr(2);
    } else if (e.starts_with("k:")) {
      const json key = json::parse(e.substr(2));
      out += "[";
      bool first = true;
      for (const auto& [k, v] : key.items()) {
        if (!first) out += ",";
        first = false;
        out += k + "=" + v.dump();
      }
      out += "]";
    } else if (e.starts_with("v:")) {
      out += "[=" + e.substr(2) + "]";
    }
  }
  return out;
}

class Walker {
 public:
  explicit Walker(const ApplySchema& schema) : schema_(schema) {}

  // The FieldsV1 set of `value` under `node`; `leaves` collects leaf paths.
  Status Build(const json& value, const json* node, std::vector<std::string>& path, json* set,
               std::vector<std::vector<std::string>>* leaves) {
    if (value.is_object()) {
      if (value.empty()) {
        leaves->push_back(path);
        return Status::Ok();
      }
      for (const auto& [k, v] : value.items()) {
        path.push_back("f:" + k);
        if (!Unowned(path)) {
          json& child = (*set)["f:" + k];
          if (child.is_null()) child = json::object();
          Status s = Build(v, Child(schema_, node, k), path, &child, leaves);
          if (!s.ok()) return s;
          // An object whose every field is unowned (metadata with only a name).
          if (child.empty() && v.is_object() && !v.empty()) set->erase("f:" + k);
        }
        path.pop_back();
      }
      return Status::Ok();
    }
    if (value.is_array()) {
      std::vector<std::string> keys;
      const ListType type = ListTypeOf(schema_, node, &keys);
      const json* items = Items(schema_, node);
      if (type == ListType::kAtomic || value.empty()) {
        leaves->push_back(path);
        return Status::Ok();
      }
      for (const json& item : value) {
        std::string element;
        if (type == ListType::kSet) {
          element = "v:" + item.dump();
        } else {
          auto key = ItemKey(item, keys, PathString(path));
          if (!key.ok()) return key.error();
          element = "k:" + key->dump();
        }
        path.push_back(element);
        json& child = (*set)[element];
        if (child.is_null()) child = json::object();
        if (type == ListType::kMap) {
          child["."] = json::object();
          path.push_back(".");
          leaves->push_back(path);
          path.pop_back();
          if (item.is_object()) {
            for (const auto& [k, v] : item.items()) {
              path.push_back("f:" + k);
              json& grand = child["f:" + k];
              if (grand.is_null()) grand = json::object();
              Status s = Build(v, Child(schema_, items, k), path, &grand, leaves);
              if (!s.ok()) return s;
              path.pop_back();
            }
          }
        } else {
          leaves->push_back(path);
        }
        path.pop_back();
      }
      return Status::Ok();
    }
    leaves->push_back(path);
    return Status::Ok();
  }

  // Merges `applied` into `live` (both at `node`).
  Status Merge(json& live, const json& applied, const json* node, const std::string& where) {
    if (!live.is_object() || !applied.is_object()) {
      live = applied;
      return Status::Ok();
    }
    for (const auto& [k, v] : applied.items()) {
      const json* child = Child(schema_, node, k);
      auto it = live.find(k);
      if (it == live.end() || it->is_null() || v.is_null()) {
        live[k] = v;
      } else if (v.is_object() && it->is_object()) {
        Status s = Merge(*it, v, child, where + "." + k);
        if (!s.ok()) return s;
      } else if (v.is_array() && it->is_array()) {
        Status s = MergeList(*it, v, child, where + "." + k);
        if (!s.ok()) return s;
      } else {
        *it = v;
      }
    }
    return Status::Ok();
  }

 private:
  Status MergeList(json& live, const json& applied, const json* node, const std::string& where) {
    std::vector<std::string> keys;
    const ListType type = ListTypeOf(schema_, node, &keys);
    if (type == ListType::kAtomic) {
      live = applied;
      return Status::Ok();
    }
    if (type == ListType::kSet) {
      for (const json& item : applied) {
        if (std::find(live.begin(), live.end(), item) == live.end()) live.push_back(item);
      }
      return Status::Ok();
    }
    const json* items = Items(schema_, node);
    for (const json& item : applied) {
      auto key = ItemKey(item, keys, where);
      if (!key.ok()) return key.error();
      auto it = std::find_if(live.begin(), live.end(),
                             [&](const json& l) { return KeyMatches(l, *key); });
      if (it == live.end()) {
        live.push_back(item);
      } else {
        Status s = Merge(*it, item, items, where);
        if (!s.ok()) return s;
      }
    }
    return Status::Ok();
  }

  const ApplySchema& schema_;
};

// Whether `path` is a member of the set: a leaf, or a node marked "." (an
// intermediate node only holds its members' paths).
bool SetHas(const json& set, const std::vector<std::string>& path) {
  const json* node = &set;
  for (const std::string& e : path) {
    auto it = node->find(e);
    if (it == node->end()) return false;
    node = &*it;
  }
  return node->empty() || node->contains(".");
}

// Removes `path` from a FieldsV1 set, and the parents it leaves empty.
void SetErase(json& set, const std::vector<std::string>& path, size_t at = 0) {
  if (at >= path.size() || !set.is_object()) return;
  auto it = set.find(path[at]);
  if (it == set.end()) return;
  if (at + 1 == path.size()) {
    set.erase(it);
    return;
  }
  SetErase(*it, path, at + 1);
  if (it->empty()) set.erase(it);
}

void Leaves(const json& set, std::vector<std::string>& path,
            std::vector<std::vector<std::string>>* out) {
  if (set.empty()) {
    if (!path.empty()) out->push_back(path);
    return;
  }
  for (const auto& [k, v] : set.items()) {
    path.push_back(k);
    Leaves(v, path, out);
    path.pop_back();
  }
}

// The value at a FieldsV1 path (nullptr when absent). A "." step stays at
// the item.
json* ValueAt(json& object, const std::vector<std::string>& path, json** parent = nullptr,
              std::string* last = nullptr) {
  json* node = &object;
  for (const std::string& e : path) {
    if (e == ".") continue;
    if (parent != nullptr) *parent = node;
    if (last != nullptr) *last = e;
    if (e.starts_with("f:")) {
      if (!node->is_object()) return nullptr;
      auto it = node->find(e.substr(2));
      if (it == node->end()) return nullptr;
      node = &*it;
    } else if (e.starts_with("k:") || e.starts_with("v:")) {
      if (!node->is_array()) return nullptr;
      const json want = json::parse(e.substr(2), nullptr, false);
      auto it = std::find_if(node->begin(), node->end(), [&](const json& item) {
        return e[0] == 'k' ? KeyMatches(item, want) : item == want;
      });
      if (it == node->end()) return nullptr;
      node = &*it;
    } else {
      return nullptr;
    }
  }
  return node;
}

void EraseAt(json& object, const std::vector<std::string>& path) {
  json* parent = nullptr;
  std::string last;
  json* target = ValueAt(object, path, &parent, &last);
  if (target == nullptr || parent == nullptr) return;
  if (parent->is_object()) {
    parent->erase(last.substr(2));
  } else if (parent->is_array()) {
    for (auto it = parent->begin(); it != parent->end(); ++it) {
      if (&*it == target) {
        parent->erase(it);
        break;
      }
    }
  }
}

// Adds `path` to a FieldsV1 set.
void SetInsert(json& set, const std::vector<std::string>& path) {
  json* node = &set;
  for (const std::string& e : path) {
    json& child = (*node)[e];
    if (child.is_null()) child = json::object();
    node = &child;
  }
}

Error ApplyError(int status, std::string reason, std::string message) {
  Error e =
      MakeError(status == 409 ? ErrorCode::kConflict : ErrorCode::kInvalid, std::move(message));
  e.http_status = status;
  e.reason = std::move(reason);
  return e;
}

}  // namespace

Result<json> ApplyObject(const json* live, const json& applied_in, const ApplySchema& schema,
                         const ApplyOptions& options, std::string* causes_json) {
  if (!applied_in.is_object()) {
    return ApplyError(400, "BadRequest", "the applied configuration is not a JSON object");
  }
  if (const auto meta = applied_in.find("metadata");
      meta != applied_in.end() && meta->is_object() && meta->contains("managedFields") &&
      !(*meta)["managedFields"].is_null()) {
    return ApplyError(400, "BadRequest", "metadata.managedFields must be nil");
  }
  json applied = applied_in;
  if (options.ignore_status) applied.erase("status");
  Walker walker(schema);

  // 1. The applied field set.
  json applied_set = json::object();
  std::vector<std::vector<std::string>> applied_leaves;
  std::vector<std::string> path;
  Status built = walker.Build(applied, schema.root, path, &applied_set, &applied_leaves);
  if (!built.ok()) return built.error();

  json object = live != nullptr ? *live : json::object();
  json entries = json::array();
  if (auto meta = object.find("metadata"); meta != object.end() && meta->is_object()) {
    if (auto mf = meta->find("managedFields"); mf != meta->end() && mf->is_array()) entries = *mf;
  }
  auto is_mine = [&](const json& entry) {
    return entry.value("manager", "") == options.manager && entry.value("operation", "") == "Apply";
  };

  // 2. Conflicts: fields another manager owns whose value would change.
  json causes = json::array();
  std::vector<std::pair<std::string, std::string>> conflicts;  // manager, field
  for (const auto& leaf : applied_leaves) {
    if (leaf.back() == ".") continue;  // an item's presence: its fields carry the values
    json* before = ValueAt(object, leaf);
    const json* after = ValueAt(applied, leaf);
    if (before == nullptr || after == nullptr || *before == *after) continue;
    for (json& entry : entries) {
      if (is_mine(entry) || !entry.contains("fieldsV1")) continue;
      if (!SetHas(entry["fieldsV1"], leaf)) continue;
      if (options.force) {
        SetErase(entry["fieldsV1"], leaf);
      } else {
        const std::string manager = entry.value("manager", "");
        conflicts.emplace_back(manager, PathString(leaf));
        causes.push_back({{"reason", "FieldManagerConflict"},
                          {"message", "conflict with \"" + manager + "\"" +
                                          (entry.value("operation", "") == "Update"
                                               ? " using " + entry.value("apiVersion", "")
                                               : std::string())},
                          {"field", PathString(leaf)}});
      }
    }
  }
  if (!conflicts.empty()) {
    std::string message = "Apply failed with " + std::to_string(conflicts.size()) +
                          (conflicts.size() == 1 ? " conflict: " : " conflicts: ");
    for (size_t i = 0; i < conflicts.size(); ++i) {
      if (i > 0) message += "; ";
      message += "conflict with \"" + conflicts[i].first + "\": " + conflicts[i].second;
    }
    if (causes_json != nullptr) *causes_json = causes.dump();
    return ApplyError(409, "Conflict", message);
  }

  // 3. Fields this manager applied before and no longer applies.
  json previous = json::object();
  for (const json& entry : entries) {
    if (is_mine(entry) && entry.contains("fieldsV1")) previous = entry["fieldsV1"];
  }
  std::vector<std::vector<std::string>> previous_leaves;
  path.clear();
  Leaves(previous, path, &previous_leaves);
  // Deepest first, so a removed item's fields go before the item.
  std::sort(previous_leaves.begin(), previous_leaves.end(),
            [](const auto& a, const auto& b) { return a.size() > b.size(); });
  for (const auto& leaf : previous_leaves) {
    if (SetHas(applied_set, leaf)) continue;
    bool owned = false;
    for (const json& entry : entries) {
      if (!is_mine(entry) && entry.contains("fieldsV1") && SetHas(entry["fieldsV1"], leaf)) {
        owned = true;
      }
    }
    if (!owned) EraseAt(object, leaf);
  }

  // 4. Merge the applied values.
  Status merged = walker.Merge(object, applied, schema.root, "");
  if (!merged.ok()) return merged.error();

  // 5. The manager's entry; entries left owning nothing go.
  json out_entries = json::array();
  for (json& entry : entries) {
    if (is_mine(entry)) continue;
    if (entry.contains("fieldsV1") && entry["fieldsV1"].empty()) continue;
    out_entries.push_back(std::move(entry));
  }
  out_entries.push_back({{"manager", options.manager},
                         {"operation", "Apply"},
                         {"apiVersion", options.api_version},
                         {"time", options.now},
                         {"fieldsType", "FieldsV1"},
                         {"fieldsV1", applied_set}});
  object["metadata"]["managedFields"] = std::move(out_entries);
  return object;
}

ApplySchema ResourceApplySchema(const ResourceInfo& info, std::string_view version,
                                json* crd_schema) {
  if (!info.crd) return BuiltinApplySchema(info.ApiVersion(version), info.kind);
  std::shared_ptr<const json> schema = CrdVersionSchema(info, version);
  if (schema == nullptr) return ApplySchema{};
  *crd_schema = *schema;
  return ApplySchema{crd_schema, nullptr};
}

Status RecordUpdate(const json* before, json& after, const ApplySchema& schema,
                    const UpdateOptions& options) {
  if (!after.is_object()) return Status::Ok();
  Walker walker(schema);
  json after_set = json::object();
  std::vector<std::vector<std::string>> after_leaves;
  std::vector<std::string> path;
  json content = after;
  if (auto meta = content.find("metadata"); meta != content.end() && meta->is_object()) {
    meta->erase("managedFields");
  }
  // A list item without its key cannot be tracked; the write itself goes on.
  if (!walker.Build(content, schema.root, path, &after_set, &after_leaves).ok()) {
    return Status::Ok();
  }
  json entries = json::array();
  std::vector<std::vector<std::string>> changed;
  std::vector<std::vector<std::string>> removed;
  if (before != nullptr && before->is_object()) {
    if (auto meta = before->find("metadata"); meta != before->end() && meta->is_object()) {
      if (auto mf = meta->find("managedFields"); mf != meta->end() && mf->is_array()) entries = *mf;
    }
    json old_content = *before;
    for (const auto& leaf : after_leaves) {
      const json* was = ValueAt(old_content, leaf);
      const json* now = ValueAt(content, leaf);
      if (was == nullptr || (leaf.back() != "." && now != nullptr && *was != *now)) {
        changed.push_back(leaf);
      }
    }
    if (auto meta = old_content.find("metadata"); meta != old_content.end() && meta->is_object()) {
      meta->erase("managedFields");
    }
    json before_set = json::object();
    std::vector<std::vector<std::string>> before_leaves;
    path.clear();
    if (walker.Build(old_content, schema.root, path, &before_set, &before_leaves).ok()) {
      for (const auto& leaf : before_leaves) {
        if (!SetHas(after_set, leaf)) removed.push_back(leaf);
      }
    }
  } else {
    changed = after_leaves;
  }
  if (before != nullptr && changed.empty() && removed.empty()) {
    // Nothing changed: ownership (and its timestamps) stays as it was.
    if (entries.empty()) {
      if (auto meta = after.find("metadata"); meta != after.end() && meta->is_object()) {
        meta->erase("managedFields");
      }
    } else {
      after["metadata"]["managedFields"] = std::move(entries);
    }
    return Status::Ok();
  }
  auto is_mine = [&](const json& entry) {
    return entry.value("manager", "") == options.manager &&
           entry.value("operation", "") == "Update" &&
           entry.value("subresource", "") == options.subresource;
  };
  json mine = json::object();
  json out_entries = json::array();
  for (json& entry : entries) {
    if (!entry.is_object()) continue;
    json& fields = entry["fieldsV1"];
    if (!fields.is_object()) fields = json::object();
    if (is_mine(entry)) {
      mine = fields;
      continue;
    }
    for (const auto& leaf : changed) SetErase(fields, leaf);
    for (const auto& leaf : removed) SetErase(fields, leaf);
    if (!fields.empty()) out_entries.push_back(std::move(entry));
  }
  for (const auto& leaf : changed) SetInsert(mine, leaf);
  for (const auto& leaf : removed) SetErase(mine, leaf);
  if (!mine.empty()) {
    json entry = {{"manager", options.manager},        {"operation", "Update"},
                  {"apiVersion", options.api_version}, {"time", options.now},
                  {"fieldsType", "FieldsV1"},          {"fieldsV1", std::move(mine)}};
    if (!options.subresource.empty()) entry["subresource"] = options.subresource;
    out_entries.push_back(std::move(entry));
  }
  if (out_entries.empty()) {
    if (auto meta = after.find("metadata"); meta != after.end() && meta->is_object()) {
      meta->erase("managedFields");
    }
  } else {
    after["metadata"]["managedFields"] = std::move(out_entries);
  }
  return Status::Ok();
}

}  // namespace copse::apiserver
