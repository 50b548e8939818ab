// Store: deletion (grace periods, finalizers, preconditions, propagation),
// the garbage collector, namespace and CRD lifecycles, pods/binding,
// pods/eviction with PodDisruptionBudgets, and the scale subresource.

#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "apiserver/disruption.h"
#include "apiserver/json_splice.h"
#include "apiserver/json_text.h"
#include "apiserver/store.h"
#include "apiserver/store_internal.h"

namespace copse::apiserver {

using internal::Conflict;
using internal::Forbidden;
using internal::GcItem;
using internal::HistoryEntry;
using internal::Internal;
using internal::Invalid;
using internal::json;
using internal::NotFound;
using internal::NotFoundResource;
using internal::ResourceData;
using internal::WithStatus;

namespace {

bool IsCrdResource(const ResourceInfo& info) {
  return info.group == "apiextensions.k8s.io" && info.resource == "customresourcedefinitions";
}

bool IsPods(const ResourceInfo& info) { return info.group.empty() && info.resource == "pods"; }

void RemoveFinalizer(json& meta, std::string_view finalizer) {
  auto it = meta.find("finalizers");
  if (it == meta.end() || !it->is_array()) return;
  json kept = json::array();
  for (const auto& f : *it) {
    if (!(f.is_string() && f.get_ref<const std::string&>() == finalizer)) kept.push_back(f);
  }
  if (kept.empty()) {
    meta.erase("finalizers");
  } else {
    *it = std::move(kept);
  }
}

bool HasFinalizer(const json& meta, std::string_view finalizer) {
  auto it = meta.find("finalizers");
  if (it == meta.end() || !it->is_array()) return false;
  return std::any_of(it->begin(), it->end(), [&](const json& f) {
    return f.is_string() && f.get_ref<const std::string&>() == finalizer;
  });
}

std::string SelectorString(const json& selector) {
  // A label selector (metav1.LabelSelector or a plain map) in string form.
  std::string out;
  auto add = [&](const std::string& term) {
    if (!out.empty()) out += ',';
    out += term;
  };
  const json* labels = &selector;
  if (selector.contains("matchLabels") || selector.contains("matchExpressions")) {
    labels = selector.contains("matchLabels") ? &selector["matchLabels"] : nullptr;
  }
  if (labels != nullptr && labels->is_object()) {
    for (const auto& [k, v] : labels->items()) {
      if (v.is_string()) add(k + "=" + v.get<std::string>());
    }
  }
  if (auto it = selector.find("matchExpressions"); it != selector.end() && it->is_array()) {
    for (const auto& e : *it) {
      if (!e.is_object()) continue;
      const std::string key = e.value("key", "");
      const std::string op = e.value("operator", "");
      std::string values;
      if (auto vals = e.find("values"); vals != e.end() && vals->is_array()) {
        for (const auto& v : *vals) {
          if (!values.empty()) values += ',';
          if (v.is_string()) values += v.get<std::string>();
        }
      }
      if (op == "In") add(key + " in (" + values + ")");
      if (op == "NotIn") add(key + " notin (" + values + ")");
      if (op == "Exists") add(key);
      if (op == "DoesNotExist") add("!" + key);
    }
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------
// removal and the garbage collector

ObjectPtr Store::Impl::CommitRemove(ResourceData* rd, const std::string& key, json& final_obj) {
  if (IsCrdResource(*rd->info)) {
    // The CRD's objects go first (upstream's customresourcecleanup finalizer).
    auto cr = ResourceFromCrd(final_obj);
    if (cr.ok()) UnregisterResource(**cr);
  }
  ObjectPtr v = Seal(*rd->info, final_obj, NextRv());
  ObjectPtr prev = Lookup(rd, key);
  rd->objects.erase(key);
  uids.erase(v->uid);
  const std::vector<std::string>& owners = prev != nullptr ? prev->owner_uids : v->owner_uids;
  for (const auto& owner : owners) {
    auto it = dependents.find(owner);
    if (it != dependents.end()) {
      it->second.erase(v->uid);
      if (it->second.empty()) dependents.erase(it);
    }
    gc_queue.push_back(GcItem{GcItem::Kind::kFinalizeForeground, owner});
  }
  if (rd->info->namespaced) {
    auto it = namespace_objects.find(v->ns);
    if (it != namespace_objects.end() && --it->second == 0) {
      namespace_objects.erase(it);
      gc_queue.push_back(GcItem{GcItem::Kind::kNamespaceCheck, v->ns});
    }
  }
  if (dependents.count(v->uid) != 0) {
    gc_queue.push_back(GcItem{GcItem::Kind::kOwnerRemoved, v->uid});
  }
  if (rd->info->group == "scheduling.k8s.io" && rd->info->resource == "priorityclasses") {
    priority_values.erase(v->name);
    priority_preemption.erase(v->name);
    if (default_priority_class == v->name) default_priority_class.clear();
  }
  Dispatch(rd, HistoryEntry{WatchEventType::kDeleted, v, nullptr, v->rv});
  return v;
}

void Store::Impl::UnregisterResource(const ResourceInfo& info) {
  ResourceData* rd = FindData(info.group, info.resource);
  if (rd == nullptr || !rd->info->crd) return;
  while (!rd->objects.empty()) {
    auto it = rd->objects.begin();
    const std::string key = it->first;
    json obj = ParseJson(it->second->json);
    CommitRemove(rd, key, obj);
  }
  for (auto& w : rd->watchers) w->CloseLocked();
  rd->watchers.clear();
  resources.erase(info.group + "/" + info.resource);
  ++registry_generation;
}

void Store::Impl::DrainGc() {
  while (!gc_queue.empty()) {
    GcItem item = std::move(gc_queue.front());
    gc_queue.pop_front();
    switch (item.kind) {
      case GcItem::Kind::kOwnerRemoved:
        HandleOwnerRemoved(item.id);
        break;
      case GcItem::Kind::kFinalizeForeground:
        FinalizeForeground(item.id);
        break;
      case GcItem::Kind::kNamespaceCheck:
        CheckNamespace(item.id);
        break;
    }
  }
}

void Store::Impl::HandleOwnerRemoved(const std::string& owner_uid) {
  auto it = dependents.find(owner_uid);
  if (it == dependents.end()) return;
  const std::vector<std::string> deps(it->second.begin(), it->second.end());
  for (const auto& dep : deps) {
    auto loc_it = uids.find(dep);
    if (loc_it == uids.end()) continue;
    const internal::ObjectLocation loc = loc_it->second;
    ObjectPtr cur = Lookup(loc.rd, loc.key);
    if (cur == nullptr) continue;
    std::vector<std::string> dangling;
    bool solid = false;
    for (const auto& owner : cur->owner_uids) {
      if (uids.count(owner) != 0) {
        solid = true;
      } else {
        dangling.push_back(owner);
      }
    }
    if (!solid) {
      (void)DeleteLocked(loc.rd, loc.key, DeleteOptions{});
      continue;
    }
    if (dangling.empty()) continue;
    json obj = ParseJson(cur->json);
    json& refs = obj["metadata"]["ownerReferences"];
    json kept = json::array();
    for (const auto& ref : refs) {
      const std::string uid = ref.is_object() ? ref.value("uid", "") : "";
      if (std::find(dangling.begin(), dangling.end(), uid) == dangling.end()) kept.push_back(ref);
    }
    refs = std::move(kept);
    ObjectPtr v = Seal(*loc.rd->info, obj, NextRv());
    CommitPut(loc.rd, loc.key, v, cur);
  }
}

void Store::Impl::FinalizeForeground(const std::string& owner_uid) {
  auto loc_it = uids.find(owner_uid);
  if (loc_it == uids.end()) return;
  const internal::ObjectLocation loc = loc_it->second;
  ObjectPtr cur = Lookup(loc.rd, loc.key);
  if (cur == nullptr || !cur->deleting || !cur->has_finalizers) return;
  if (dependents.count(owner_uid) != 0) return;
  json obj = ParseJson(cur->json);
  json& meta = obj["metadata"];
  if (!HasFinalizer(meta, "foregroundDeletion")) return;
  RemoveFinalizer(meta, "foregroundDeletion");
  if (!meta.contains("finalizers")) {
    CommitRemove(loc.rd, loc.key, obj);
  } else {
    ObjectPtr v = Seal(*loc.rd->info, obj, NextRv());
    CommitPut(loc.rd, loc.key, v, cur);
  }
}

void Store::Impl::CheckNamespace(const std::string& ns) {
  ResourceData* nsd = FindData("", "namespaces");
  ObjectPtr cur = nsd ? Lookup(nsd, ns) : nullptr;
  if (cur == nullptr || !cur->deleting) return;
  if (auto it = namespace_objects.find(ns); it != namespace_objects.end() && it->second > 0) {
    return;
  }
  json obj = ParseJson(cur->json);
  if (cur->has_finalizers) return;  // metadata.finalizers still block removal
  CommitRemove(nsd, ns, obj);
}

Result<DeleteResult> Store::Impl::DeleteLocked(ResourceData* rd, const std::string& key,
                                               const DeleteOptions& options) {
  const ResourceInfo& info = *rd->info;
  const std::string name(internal::KeyName(key));
  ObjectPtr cur = Lookup(rd, key);
  if (cur == nullptr) return NotFound(info, name);
  if (!options.precondition_uid.empty() && options.precondition_uid != cur->uid) {
    return Conflict(info, name,
                    "Precondition failed: UID in precondition: " + options.precondition_uid +
                        ", UID in object meta: " + cur->uid);
  }
  if (!options.precondition_resource_version.empty() &&
      options.precondition_resource_version != std::to_string(cur->rv)) {
    return Conflict(info, name,
                    "Precondition failed: ResourceVersion in precondition: " +
                        options.precondition_resource_version +
                        ", ResourceVersion in object meta: " + std::to_string(cur->rv));
  }
  const std::string& policy = options.propagation_policy;
  if (!policy.empty() && policy != "Background" && policy != "Foreground" && policy != "Orphan") {
    return Invalid(info, name,
                   "propagationPolicy: Unsupported value: \"" + policy +
                       "\": supported values: \"Foreground\", \"Background\", \"Orphan\", "
                       "\"nil\"");
  }
  if (options.dry_run) return DeleteResult{cur, false};
  const auto wall_now = clock().WallNow();

  if (info.group.empty() && info.resource == "namespaces") {
    if (name == "default" || name == "kube-system" || name == "kube-public") {
      return Forbidden("namespaces \"" + name +
                       "\" is forbidden: this namespace may not be deleted");
    }
    ObjectPtr marked = cur;
    if (!cur->deleting) {
      json obj = ParseJson(cur->json);
      obj["metadata"]["deletionTimestamp"] = FormatRfc3339(wall_now);
      obj["metadata"]["deletionGracePeriodSeconds"] = 0;
      obj["status"]["phase"] = "Terminating";
      marked = Seal(info, obj, NextRv());
      CommitPut(rd, key, marked, cur);
      for (auto& [rkey, data] : resources) {
        if (!data->info->namespaced) continue;
        std::vector<std::string> keys;
        const std::string prefix = name + "/";
        for (auto it = data->objects.lower_bound(prefix);
             it != data->objects.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
          keys.push_back(it->first);
        }
        for (const auto& k : keys) (void)DeleteLocked(data.get(), k, DeleteOptions{});
      }
    }
    gc_queue.push_back(GcItem{GcItem::Kind::kNamespaceCheck, name});
    DrainGc();
    const bool removed = Lookup(rd, key) == nullptr;
    return DeleteResult{marked, removed};
  }

  if (IsPods(info) && !cur->node_name.empty() && !cur->pod_terminal &&
      (!options.grace_period_seconds || *options.grace_period_seconds != 0)) {
    json obj = ParseJson(cur->json);
    int64_t grace = 30;
    if (options.grace_period_seconds) {
      grace = std::max<int64_t>(*options.grace_period_seconds, 1);
    } else if (const json* g = FindPath(obj, "spec.terminationGracePeriodSeconds");
               g != nullptr && g->is_number_integer()) {
      grace = g->get<int64_t>();
    }
    if (grace > 0) {
      json& meta = obj["metadata"];
      if (cur->deleting) {
        const json* existing = FindPath(obj, "metadata.deletionGracePeriodSeconds");
        if (existing != nullptr && existing->is_number_integer() &&
            existing->get<int64_t>() <= grace) {
          return DeleteResult{cur, false};
        }
      }
      meta["deletionTimestamp"] = FormatRfc3339(wall_now + std::chrono::seconds(grace));
      meta["deletionGracePeriodSeconds"] = grace;
      ObjectPtr v = Seal(info, obj, NextRv());
      CommitPut(rd, key, v, cur);
      return DeleteResult{v, false};
    }
  }

  auto deps_it = dependents.find(cur->uid);
  const bool has_dependents = deps_it != dependents.end() && !deps_it->second.empty();
  if (policy == "Orphan" && has_dependents) {
    const std::vector<std::string> deps(deps_it->second.begin(), deps_it->second.end());
    for (const auto& dep : deps) {
      auto loc_it = uids.find(dep);
      if (loc_it == uids.end()) continue;
      const internal::ObjectLocation loc = loc_it->second;
      ObjectPtr dcur = Lookup(loc.rd, loc.key);
      if (dcur == nullptr) continue;
      json dobj = ParseJson(dcur->json);
      json& refs = dobj["metadata"]["ownerReferences"];
      json kept = json::array();
      for (const auto& ref : refs) {
        if (!(ref.is_object() && ref.value("uid", "") == cur->uid)) kept.push_back(ref);
      }
      if (kept.empty()) {
        dobj["metadata"].erase("ownerReferences");
      } else {
        refs = std::move(kept);
      }
      ObjectPtr v = Seal(*loc.rd->info, dobj, NextRv());
      CommitPut(loc.rd, loc.key, v, dcur);
    }
  } else if (policy == "Foreground" && has_dependents) {
    json obj = ParseJson(cur->json);
    json& meta = obj["metadata"];
    if (!HasFinalizer(meta, "foregroundDeletion")) {
      if (!meta.contains("finalizers") || !meta["finalizers"].is_array()) {
        meta["finalizers"] = json::array();
      }
      meta["finalizers"].push_back("foregroundDeletion");
    }
    if (!cur->deleting) {
      meta["deletionTimestamp"] = FormatRfc3339(wall_now);
      meta["deletionGracePeriodSeconds"] = 0;
    }
    ObjectPtr v = Seal(info, obj, NextRv());
    CommitPut(rd, key, v, cur);
    const std::vector<std::string> deps(deps_it->second.begin(), deps_it->second.end());
    for (const auto& dep : deps) {
      auto loc_it = uids.find(dep);
      if (loc_it == uids.end()) continue;
      const internal::ObjectLocation loc = loc_it->second;
      (void)DeleteLocked(loc.rd, loc.key, DeleteOptions{});
    }
    gc_queue.push_back(GcItem{GcItem::Kind::kFinalizeForeground, cur->uid});
    DrainGc();
    ObjectPtr now = Lookup(rd, key);
    return DeleteResult{now ? now : v, now == nullptr};
  }

  // Re-read: orphaning rewrote dependents but not this object.
  cur = Lookup(rd, key);
  if (cur->has_finalizers) {
    if (cur->deleting) return DeleteResult{cur, false};
    json obj = ParseJson(cur->json);
    obj["metadata"]["deletionTimestamp"] = FormatRfc3339(wall_now);
    obj["metadata"]["deletionGracePeriodSeconds"] = 0;
    ObjectPtr v = Seal(info, obj, NextRv());
    CommitPut(rd, key, v, cur);
    return DeleteResult{v, false};
  }
  json obj = ParseJson(cur->json);
  ObjectPtr v = CommitRemove(rd, key, obj);
  return DeleteResult{v, true};
}

Result<DeleteResult> Store::Delete(const ResourceRef& ref, std::string_view ns,
                                   std::string_view name, const DeleteOptions& options) {
  DurableAck ack(*this);
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto rd = impl_->ResolveRef(ref);
  if (!rd.ok()) return std::move(rd).error();
  try {
    const std::shared_ptr<const ResourceInfo> info = (*rd)->info;
    auto result = impl_->DeleteLocked(*rd, Impl::Key(*info, ns, name), options);
    impl_->DrainGc();
    if (result.ok()) {
      result->object = internal::ForVersion(*info, std::move(result->object), ref.version);
    }
    return result;
  } catch (const json::exception& e) {
    impl_->gc_queue.clear();
    return Internal(e.what());
  }
}

Result<ListResult> Store::DeleteCollection(const ResourceRef& ref, const ListOptions& list,
                                           const DeleteOptions& options) {
  DurableAck ack(*this);  // one wait for the whole collection
  ListOptions all = list;
  all.limit = 0;
  all.continue_token.clear();
  auto listed = List(ref, all);
  if (!listed.ok()) return std::move(listed).error();
  ListResult out;
  for (const auto& item : listed->items) {
    auto deleted = Delete(ref, item->ns, item->name, options);
    if (deleted.ok()) out.items.push_back(deleted->object);
  }
  out.resource_version = CurrentResourceVersion();
  return out;
}

// ---------------------------------------------------------------------------
// pods/binding

namespace {

// The fields of a v1 Binding that Store::Bind reads, taken with simdjson
// (the binding is on the hot path; nlohmann's tree cost more than the bind).
// Duplicate keys resolve to the last one, as nlohmann's parse does. nullopt:
// not parsed here (malformed, not an object, annotations to merge): the
// caller parses with nlohmann and decides.
struct BindingFields {
  std::string target;               // target.name when a string
  std::optional<std::string> name;  // metadata.name when a string
  std::string uid;                  // metadata.uid when a string
};

std::optional<simdjson::dom::element> LastMember(simdjson::dom::object object,
                                                 std::string_view key) {
  std::optional<simdjson::dom::element> found;
  for (const auto field : object) {
    if (field.key == key) found = field.value;
  }
  return found;
}

std::optional<std::string> StringMember(simdjson::dom::object object, std::string_view key) {
  const auto value = LastMember(object, key);
  std::string_view text;
  if (!value || value->get_string().get(text) != simdjson::SUCCESS) return std::nullopt;
  return std::string(text);
}

std::optional<BindingFields> ParseBindingFast(std::string_view body) {
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(body.data(), body.size(), true).get(root) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  simdjson::dom::object object;
  if (root.get_object().get(object) != simdjson::SUCCESS) return std::nullopt;
  BindingFields out;
  if (const auto target = LastMember(object, "target")) {
    simdjson::dom::object t;
    if (target->get_object().get(t) == simdjson::SUCCESS) {
      out.target = StringMember(t, "name").value_or("");
    }
  }
  if (const auto meta = LastMember(object, "metadata")) {
    simdjson::dom::object m;
    if (meta->get_object().get(m) == simdjson::SUCCESS) {
      out.name = StringMember(m, "name");
      out.uid = StringMember(m, "uid").value_or("");
      if (const auto annotations = LastMember(m, "annotations");
          annotations && annotations->is_object()) {
        return std::nullopt;  // merged into the pod: the JSON edit
      }
    }
  }
  return out;
}

}  // namespace

Status Store::Bind(std::string_view ns, std::string_view name, std::string_view binding_json) {
  DurableAck ack(*this);
  std::string target;
  std::string uid;
  json binding;
  const json* annotations = nullptr;
  if (std::optional<BindingFields> fast = ParseBindingFast(binding_json)) {
    if (fast->name && *fast->name != name) {
      return BadRequest("name in URL does not match name in Binding object");
    }
    target = std::move(fast->target);
    uid = std::move(fast->uid);
  } else {
    binding = json::parse(binding_json, nullptr, false);
    if (binding.is_discarded() || !binding.is_object()) {
      return BadRequest("couldn't get version/kind; json parse error: invalid Binding");
    }
    if (const json* t = FindPath(binding, "target.name"); t != nullptr && t->is_string()) {
      target = t->get<std::string>();
    }
    if (const json* n = FindPath(binding, "metadata.name");
        n != nullptr && n->is_string() && n->get_ref<const std::string&>() != name) {
      return BadRequest("name in URL does not match name in Binding object");
    }
    if (const json* u = FindPath(binding, "metadata.uid"); u != nullptr && u->is_string()) {
      uid = u->get<std::string>();
    }
    annotations = FindPath(binding, "metadata.annotations");
  }
  const std::string pod_name(name);
  if (target.empty()) {
    return WithStatus(ErrorCode::kInvalid, 422, "Invalid",
                      "Binding.meta.k8s.io \"" + pod_name +
                          "\" is invalid: target.name: "
                          "Required value");
  }
  const std::string now = impl_->NowRfc3339();
  auto conflict = [&](const std::string& detail) -> Status {
    ResourceInfo binding_info;
    binding_info.resource = "pods/binding";
    return Conflict(binding_info, pod_name, detail);
  };
  auto check = [&](const ObjectVersion& cur) -> Status {
    if (cur.deleting) {
      return conflict("pod " + pod_name + " is being deleted, cannot be assigned to a host");
    }
    if (!cur.node_name.empty()) {
      return conflict("pod " + pod_name + " is already assigned to node \"" + cur.node_name + "\"");
    }
    if (!uid.empty() && uid != cur.uid) {
      return conflict("Precondition failed: UID in precondition: " + uid +
                      ", UID in object meta: " + cur.uid);
    }
    return Status::Ok();
  };

  // Fast path: splice nodeName, the condition and the new resourceVersion
  // into the stored text instead of parse + edit + dump (same bytes; see
  // splice::PlanPodBinding). Annotations in the Binding take the JSON edit below.
  const bool spliceable = (annotations == nullptr || !annotations->is_object()) &&
                          splice::IsPlainString(target) && splice::IsPlainString(now);
  for (int attempt = 0; spliceable; ++attempt) {
    std::shared_ptr<const ResourceInfo> info;
    ObjectPtr cur;
    std::string key;
    {
      std::lock_guard<std::mutex> lock(impl_->mu);
      auto rd = impl_->ResolveRef(resources::kPods);
      if (!rd.ok()) return std::move(rd).error();
      info = (*rd)->info;
      key = Impl::Key(*info, ns, name);
      cur = impl_->Lookup(*rd, key);
      if (cur == nullptr) return NotFound(*info, name);
    }
    if (Status ok = check(*cur); !ok.ok()) return ok;
    std::optional<std::vector<splice::Edit>> edits = splice::PlanPodBinding(cur->json, target, now);
    if (!edits) break;
    // The new version: the old one's metadata with the node set.
    std::shared_ptr<ObjectVersion> v = internal::CopyMetadata(*cur);
    v->node_name = target;
    for (size_t i = 0; i < info->field_selectors.size() && i < v->fields.size(); ++i) {
      std::string_view path = info->field_selectors[i];
      if (const size_t colon = path.find(':'); colon != std::string_view::npos) {
        path = path.substr(colon + 1);
      }
      if (path == "spec.nodeName") v->fields[i] = target;
    }

    std::lock_guard<std::mutex> lock(impl_->mu);
    auto rd_or = impl_->ResolveRef(resources::kPods);
    if (!rd_or.ok()) return std::move(rd_or).error();
    ResourceData* rd = *rd_or;
    if (impl_->Lookup(rd, key) != cur) {
      if (attempt > 1000) return Internal("too many update conflicts");
      continue;
    }
    v->rv = impl_->NextRv();
    std::string quoted_rv = "\"";
    quoted_rv += std::to_string(v->rv);
    quoted_rv += '"';
    v->json = splice::Apply(cur->json, std::move(*edits), quoted_rv);
    // AfterPut has nothing to do for pods (CRDs and PriorityClasses only).
    impl_->CommitPut(rd, key, std::move(v), cur);
    impl_->DrainGc();
    return Status::Ok();
  }

  auto edit = [&](const ObjectVersion& cur, const json&, json& pod) -> Status {
    if (Status ok = check(cur); !ok.ok()) return ok;
    pod["spec"]["nodeName"] = target;
    if (annotations != nullptr && annotations->is_object()) {
      json& pa = pod["metadata"]["annotations"];
      if (!pa.is_object()) pa = json::object();
      for (const auto& [k, v] : annotations->items()) pa[k] = v;
    }
    json& status = pod["status"];
    if (!status.is_object()) status = json::object();
    json& conds = status["conditions"];
    if (!conds.is_array()) conds = json::array();
    bool found = false;
    for (auto& c : conds) {
      if (c.is_object() && c.value("type", "") == "PodScheduled") {
        found = true;
        if (c.value("status", "") != "True") c["lastTransitionTime"] = now;
        c["status"] = "True";
        c.erase("reason");
        c.erase("message");
      }
    }
    if (!found) {
      conds.push_back({{"type", "PodScheduled"},
                       {"status", "True"},
                       {"lastProbeTime", nullptr},
                       {"lastTransitionTime", now}});
    }
    return Status::Ok();
  };
  UpdateMode mode;
  mode.validate = false;
  auto result = UpdateLoop(resources::kPods, ns, name, mode, edit, false);
  if (!result.ok()) return std::move(result).error();
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// pods/eviction

Status Store::Evict(std::string_view ns, std::string_view name, std::string_view eviction_json) {
  DurableAck ack(*this);
  json eviction = json::parse(eviction_json, nullptr, false);
  if (eviction.is_discarded() || !eviction.is_object()) {
    return BadRequest("couldn't get version/kind; json parse error: invalid Eviction");
  }
  if (const json* n = FindPath(eviction, "metadata.name");
      n != nullptr && n->is_string() && n->get_ref<const std::string&>() != name) {
    return BadRequest("name in URL does not match name in Eviction object");
  }
  DeleteOptions options;
  if (const json* d = FindPath(eviction, "deleteOptions"); d != nullptr && d->is_object()) {
    if (auto g = d->find("gracePeriodSeconds"); g != d->end() && g->is_number_integer()) {
      options.grace_period_seconds = g->get<int64_t>();
    }
    if (auto p = d->find("propagationPolicy"); p != d->end() && p->is_string()) {
      options.propagation_policy = p->get<std::string>();
    }
    if (const json* u = FindPath(*d, "preconditions.uid"); u != nullptr && u->is_string()) {
      options.precondition_uid = u->get<std::string>();
    }
    if (const json* r = FindPath(*d, "preconditions.resourceVersion");
        r != nullptr && r->is_string()) {
      options.precondition_resource_version = r->get<std::string>();
    }
    if (auto dr = d->find("dryRun"); dr != d->end() && dr->is_array() && !dr->empty()) {
      options.dry_run = true;
    }
  }
  std::lock_guard<std::mutex> lock(impl_->mu);
  ResourceData* pods = impl_->FindData("", "pods");
  ResourceData* pdbs = impl_->FindData("policy", "poddisruptionbudgets");
  // The Eviction's version must be one the policy group serves (v1.20 knows
  // only policy/v1beta1), as kube-apiserver's scheme decides.
  if (auto v = eviction.find("apiVersion"); v != eviction.end()) {
    const std::string api_version = v->is_string() ? v->get<std::string>() : std::string();
    const bool known =
        api_version.starts_with("policy/") &&
        (pdbs != nullptr ? pdbs->info->ServesVersion(api_version.substr(7))
                         : api_version == "policy/v1" || api_version == "policy/v1beta1");
    if (!known) {
      return BadRequest(
          "Eviction in version \"v1\" cannot be handled as a Eviction: no kind "
          "\"Eviction\" is registered for version \"" +
          api_version + "\"");
    }
  }
  const std::string key = Impl::Key(*pods->info, ns, name);
  ObjectPtr pod = impl_->Lookup(pods, key);
  if (pod == nullptr) return NotFound(*pods->info, name);
  const int phase_index = pods->info->FieldIndex("status.phase");
  const std::string& phase = pod->fields[static_cast<size_t>(phase_index)];
  const bool ignore_pdb = pod->deleting || pod->pod_terminal || phase == "Pending" || phase.empty();
  if (!ignore_pdb && pdbs != nullptr) {
    std::vector<json> matching;
    const std::string prefix = std::string(ns) + "/";
    for (auto it = pdbs->objects.lower_bound(prefix);
         it != pdbs->objects.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
      json pdb = ParseJson(it->second->json);
      auto sel = LabelSelectorFromJson(FindPath(pdb, "spec.selector"));
      if (!sel.ok() || !sel->has_value()) continue;
      if ((*sel)->Matches(pod->labels)) matching.push_back(std::move(pdb));
    }
    if (matching.size() > 1) {
      return Internal(
          "This pod has more than one PodDisruptionBudget, which the eviction "
          "subresource does not support.");
    }
    if (matching.size() == 1) {
      std::vector<ObjectPtr> ns_pods;
      for (auto it = pods->objects.lower_bound(prefix);
           it != pods->objects.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
        ns_pods.push_back(it->second);
      }
      const auto status = ComputeDisruption(matching.front(), ns_pods);
      // A ready pod needs a disruption to spare; an unready one may go while
      // the budget is met (unhealthyPodEvictionPolicy IfHealthyBudget).
      const bool allowed =
          status && (pod->pod_ready ? status->disruptions_allowed > 0
                                    : status->current_healthy >= status->desired_healthy);
      if (!allowed) {
        return WithStatus(ErrorCode::kTooManyRequests, 429, "TooManyRequests",
                          "Cannot evict pod as it would violate the pod's disruption budget.");
      }
    }
  }
  try {
    auto deleted = impl_->DeleteLocked(pods, key, options);
    impl_->DrainGc();
    if (!deleted.ok()) return std::move(deleted).error();
  } catch (const json::exception& e) {
    impl_->gc_queue.clear();
    return Internal(e.what());
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// scale

namespace {

json BuildScale(const ResourceInfo& info, const json& obj) {
  const json& meta = obj["metadata"];
  json scale_meta = json::object();
  for (const char* k : {"name", "namespace", "uid", "resourceVersion", "creationTimestamp"}) {
    if (auto it = meta.find(k); it != meta.end()) scale_meta[k] = *it;
  }
  int64_t spec_replicas = 0;
  if (const json* r = FindPath(obj, info.spec_replicas_path); r && r->is_number_integer()) {
    spec_replicas = r->get<int64_t>();
  }
  int64_t status_replicas = 0;
  if (!info.status_replicas_path.empty()) {
    if (const json* r = FindPath(obj, info.status_replicas_path); r && r->is_number_integer()) {
      status_replicas = r->get<int64_t>();
    }
  }
  json status = {{"replicas", status_replicas}};
  if (!info.label_selector_path.empty()) {
    if (const json* s = FindPath(obj, info.label_selector_path); s && s->is_string()) {
      status["selector"] = *s;
    }
  } else if (!info.crd) {
    if (const json* s = FindPath(obj, "spec.selector"); s && s->is_object()) {
      status["selector"] = SelectorString(*s);
    }
  }
  return {{"kind", "Scale"},
          {"apiVersion", "autoscaling/v1"},
          {"metadata", scale_meta},
          {"spec", {{"replicas", spec_replicas}}},
          {"status", status}};
}

}  // namespace

Result<std::string> Store::GetScale(const ResourceRef& ref, std::string_view ns,
                                    std::string_view name) const {
  auto got = Get(ref, ns, name);
  if (!got.ok()) return std::move(got).error();
  auto info = Resolve(ref.group, ref.version, ref.resource);
  if (!info.ok()) return std::move(info).error();
  if (!(*info)->has_scale) return NotFoundResource();
  return BuildScale(**info, ParseJson((*got)->json)).dump();
}

Result<std::string> Store::UpdateScale(const ResourceRef& ref, std::string_view ns,
                                       std::string_view name, std::string_view scale_json) {
  auto info = Resolve(ref.group, ref.version, ref.resource);
  if (!info.ok()) return std::move(info).error();
  if (!(*info)->has_scale) return NotFoundResource();
  json scale = json::parse(scale_json, nullptr, false);
  if (scale.is_discarded() || !scale.is_object()) {
    return BadRequest("couldn't get version/kind; json parse error: invalid Scale");
  }
  const json* replicas = FindPath(scale, "spec.replicas");
  if (replicas == nullptr || !replicas->is_number_integer() || replicas->get<int64_t>() < 0) {
    return WithStatus(ErrorCode::kInvalid, 422, "Invalid",
                      "Scale.autoscaling \"" + std::string(name) +
                          "\" is invalid: spec.replicas: Invalid value: must be greater than or "
                          "equal to 0");
  }
  std::string want_rv;
  if (const json* r = FindPath(scale, "metadata.resourceVersion"); r && r->is_string()) {
    want_rv = r->get<std::string>();
  }
  const std::shared_ptr<const ResourceInfo> resource = *info;
  const int64_t value = replicas->get<int64_t>();
  auto edit = [&](const ObjectVersion& cur, const json&, json& obj) -> Status {
    if (!want_rv.empty() && want_rv != std::to_string(cur.rv)) {
      return Conflict(*resource, name,
                      "the object has been modified; please apply your changes to the latest "
                      "version and try again");
    }
    SetPath(obj, resource->spec_replicas_path, value);
    return Status::Ok();
  };
  UpdateMode mode;
  mode.bump_generation = true;
  mode.validate = false;
  auto updated = UpdateLoop(ref, ns, name, mode, edit, false);
  if (!updated.ok()) return std::move(updated).error();
  return BuildScale(*resource, ParseJson((*updated)->json)).dump();
}

}  // namespace copse::apiserver
