// Store: registry, versions, reads, watches, create and the update loop.
// Deletion, garbage collection, binding, eviction and scale are in
// store_lifecycle.cc.

#include "apiserver/store.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "apiserver/apply.h"
#include "apiserver/json_text.h"
#include "apiserver/limits.h"
#include "apiserver/store_internal.h"
#include "apiserver/strategic_merge.h"
#include "apiserver/validation.h"
#include "apiserver/workloads.h"
#include "core/check.h"

namespace copse::apiserver {

using internal::GcItem;
using internal::HistoryEntry;
using internal::json;
using internal::ResourceData;

// ---------------------------------------------------------------------------
// errors and small helpers

namespace internal {

Error WithStatus(ErrorCode code, int http_status, std::string reason, std::string message) {
  Error error = MakeError(code, std::move(message));
  error.http_status = http_status;
  error.reason = std::move(reason);
  return error;
}

Error NotFound(const ResourceInfo& info, std::string_view name) {
  return WithStatus(ErrorCode::kNotFound, 404, "NotFound",
                    info.GroupResource() + " \"" + std::string(name) + "\" not found");
}

Error NotFoundResource() {
  return WithStatus(ErrorCode::kNotFound, 404, "NotFound",
                    "the server could not find the requested resource");
}

Error AlreadyExists(const ResourceInfo& info, std::string_view name) {
  return WithStatus(ErrorCode::kAlreadyExists, 409, "AlreadyExists",
                    info.GroupResource() + " \"" + std::string(name) + "\" already exists");
}

Error Conflict(const ResourceInfo& info, std::string_view name, std::string_view detail) {
  return WithStatus(ErrorCode::kConflict, 409, "Conflict",
                    "Operation cannot be fulfilled on " + info.GroupResource() + " \"" +
                        std::string(name) + "\": " + std::string(detail));
}

Error Invalid(const ResourceInfo& info, std::string_view name, std::string_view cause) {
  std::string qualified = info.kind;
  if (!info.group.empty()) qualified += "." + info.group;
  return WithStatus(ErrorCode::kInvalid, 422, "Invalid",
                    qualified + " \"" + std::string(name) + "\" is invalid: " + std::string(cause));
}

Error Forbidden(std::string message) {
  return WithStatus(ErrorCode::kForbidden, 403, "Forbidden", std::move(message));
}

Error Internal(std::string message) {
  return WithStatus(ErrorCode::kInternal, 500, "InternalError", std::move(message));
}

std::string_view KeyName(std::string_view key) {
  const size_t slash = key.find('/');
  return slash == std::string_view::npos ? key : key.substr(slash + 1);
}

namespace {
std::mt19937_64& Rng() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng;
}
}  // namespace

std::string RandomUid() { return UidFrom(Rng()); }

std::string UidFrom(std::mt19937_64& rng) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(36, '-');
  uint64_t a = rng();
  uint64_t b = rng();
  int bit = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (i == 8 || i == 13 || i == 18 || i == 23) continue;
    uint64_t& src = bit < 64 ? a : b;
    out[i] = kHex[(src >> (bit % 64)) & 0xf];
    bit += 4;
  }
  out[14] = '4';
  out[19] = kHex[8 + ((b >> 60) & 0x3)];
  return out;
}

std::string RandomSuffix() {
  static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  std::string out(5, 'x');
  for (auto& c : out) c = kAlphabet[Rng()() % (sizeof(kAlphabet) - 1)];
  return out;
}

std::shared_ptr<ObjectVersion> BuildVersion(const ResourceInfo& info, const json& obj) {
  auto v = std::make_shared<ObjectVersion>();
  if (auto it = obj.find("apiVersion"); it != obj.end() && it->is_string()) {
    v->api_version = it->get<std::string>();
  }
  auto meta_it = obj.find("metadata");
  if (meta_it != obj.end() && meta_it->is_object()) {
    const json& meta = *meta_it;
    if (auto it = meta.find("namespace"); it != meta.end() && it->is_string()) {
      v->ns = it->get<std::string>();
    }
    if (auto it = meta.find("name"); it != meta.end() && it->is_string()) {
      v->name = it->get<std::string>();
    }
    if (auto it = meta.find("uid"); it != meta.end() && it->is_string()) {
      v->uid = it->get<std::string>();
    }
    if (auto it = meta.find("labels"); it != meta.end() && it->is_object()) {
      for (const auto& [k, val] : it->items()) {
        if (val.is_string()) v->labels.emplace(k, val.get<std::string>());
      }
    }
    if (auto it = meta.find("ownerReferences"); it != meta.end() && it->is_array()) {
      for (const auto& ref : *it) {
        if (!ref.is_object()) continue;
        if (auto u = ref.find("uid"); u != ref.end() && u->is_string()) {
          v->owner_uids.push_back(u->get<std::string>());
        }
      }
    }
    if (auto it = meta.find("deletionTimestamp"); it != meta.end() && !it->is_null()) {
      v->deleting = true;
    }
    if (auto it = meta.find("finalizers"); it != meta.end() && it->is_array() && !it->empty()) {
      v->has_finalizers = true;
    }
  }
  v->fields.reserve(info.field_selectors.size());
  for (const std::string& field : info.field_selectors) {
    std::string_view path = field;
    if (const size_t colon = path.find(':'); colon != std::string_view::npos) {
      path = path.substr(colon + 1);
    }
    const json* value = FindPath(obj, path);
    if (value == nullptr || value->is_null()) {
      v->fields.emplace_back(value == nullptr && field == "spec.unschedulable" ? "false" : "");
    } else if (value->is_string()) {
      v->fields.push_back(value->get<std::string>());
    } else if (value->is_boolean()) {
      v->fields.emplace_back(value->get<bool>() ? "true" : "false");
    } else {
      v->fields.push_back(value->dump());
    }
  }
  if (info.resource == "pods" && info.group.empty()) {
    if (const json* node = FindPath(obj, "spec.nodeName"); node && node->is_string()) {
      v->node_name = node->get<std::string>();
    }
    if (const json* phase = FindPath(obj, "status.phase"); phase && phase->is_string()) {
      const auto& p = phase->get_ref<const std::string&>();
      v->pod_terminal = p == "Succeeded" || p == "Failed";
    }
    if (const json* conds = FindPath(obj, "status.conditions"); conds && conds->is_array()) {
      for (const auto& c : *conds) {
        if (c.is_object() && c.value("type", "") == "Ready" && c.value("status", "") == "True") {
          v->pod_ready = true;
        }
      }
    }
  }
  return v;
}

ObjectPtr ForVersion(const ResourceInfo& info, ObjectPtr v, std::string_view version) {
  if (v == nullptr || !IsSchedulingApiKind(info.group, info.kind)) return v;
  std::string api_version = info.ApiVersion(version);
  if (v->api_version == api_version) return v;
  auto out = CopyMetadata(*v);
  out->json = DumpJson(StoredObjectInVersion(ParseJson(v->json), api_version));
  out->api_version = std::move(api_version);
  return out;
}

void ReplaceContents(json& target, json source) {
  for (auto it = target.begin(); it != target.end();) {
    it = source.contains(it.key()) ? std::next(it) : target.erase(it);
  }
  for (auto& [key, value] : source.items()) target[key] = std::move(value);
}

std::shared_ptr<ObjectVersion> CopyMetadata(const ObjectVersion& v) {
  auto out = std::make_shared<ObjectVersion>();
  // Every field but `json` (store.h asks new fields to be added here).
  out->api_version = v.api_version;
  out->ns = v.ns;
  out->name = v.name;
  out->uid = v.uid;
  out->rv = v.rv;
  out->labels = v.labels;
  out->fields = v.fields;
  out->owner_uids = v.owner_uids;
  out->deleting = v.deleting;
  out->has_finalizers = v.has_finalizers;
  out->pod_ready = v.pod_ready;
  out->pod_terminal = v.pod_terminal;
  out->node_name = v.node_name;
  return out;
}

}  // namespace internal

using internal::AlreadyExists;
using internal::Conflict;
using internal::Forbidden;
using internal::Internal;
using internal::Invalid;
using internal::NotFound;
using internal::NotFoundResource;
using internal::WithStatus;

std::string_view WatchEventTypeName(WatchEventType type) noexcept {
  switch (type) {
    case WatchEventType::kAdded:
      return "ADDED";
    case WatchEventType::kModified:
      return "MODIFIED";
    case WatchEventType::kDeleted:
      return "DELETED";
    case WatchEventType::kBookmark:
      return "BOOKMARK";
    case WatchEventType::kError:
      return "ERROR";
  }
  return "ERROR";
}

namespace {

Error ParseError(const std::exception& e) {
  return BadRequest(std::string("couldn't get version/kind; json parse error: ") + e.what());
}

Result<json> ParseBody(std::string_view body) {
  try {
    return ParseJson(body);
  } catch (const json::exception& e) {
    return ParseError(e);
  }
}

std::string Base64Encode(std::string_view in) {
  static constexpr char kTable[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const uint32_t n = (static_cast<uint8_t>(in[i]) << 16) |
                       (static_cast<uint8_t>(in[i + 1]) << 8) | static_cast<uint8_t>(in[i + 2]);
    out += kTable[(n >> 18) & 63];
    out += kTable[(n >> 12) & 63];
    out += kTable[(n >> 6) & 63];
    out += kTable[n & 63];
  }
  if (i < in.size()) {
    uint32_t n = static_cast<uint8_t>(in[i]) << 16;
    if (i + 1 < in.size()) n |= static_cast<uint8_t>(in[i + 1]) << 8;
    out += kTable[(n >> 18) & 63];
    out += kTable[(n >> 12) & 63];
    out += i + 1 < in.size() ? kTable[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

bool Base64Decode(std::string_view in, std::string* out) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
  };
  uint32_t buf = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=') break;
    const int v = value(c);
    if (v < 0) return false;
    buf = (buf << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((buf >> bits) & 0xff));
    }
  }
  return true;
}

// True when anything but metadata (and status, for resources with a status
// subresource) differs: the condition for bumping metadata.generation.
bool SpecChanged(const ResourceInfo& info, const json& old_obj, const json& new_obj) {
  auto skip = [&](const std::string& key) {
    return key == "metadata" || key == "apiVersion" || key == "kind" ||
           (info.has_status && key == "status");
  };
  for (const auto& [key, value] : new_obj.items()) {
    if (skip(key)) continue;
    auto it = old_obj.find(key);
    if (it == old_obj.end() || *it != value) return true;
  }
  for (const auto& [key, value] : old_obj.items()) {
    if (skip(key)) continue;
    if (!new_obj.contains(key)) return true;
  }
  return false;
}

}  // namespace

// ---------------------------------------------------------------------------
// WatchStream

WatchStream::~WatchStream() = default;

bool WatchStream::Take(std::vector<WatchEvent>* out) {
  const size_t first = out->size();
  bool open;
  {
    std::lock_guard<std::mutex> lock(mu_);
    notified_ = false;
    if (!pending_.empty()) {
      if (out->empty()) {
        out->swap(pending_);
      } else {
        out->insert(out->end(), pending_.begin(), pending_.end());
        pending_.clear();
      }
    }
    open = !closed_;
  }
  // Converted here, by the consumer, not under the Store's lock.
  if (resource_ != nullptr) {
    for (size_t i = first; i < out->size(); ++i) {
      (*out)[i].object = internal::ForVersion(*resource_, std::move((*out)[i].object), version_);
    }
  }
  return open;
}

void WatchStream::SetNotify(std::function<void()> notify) {
  std::lock_guard<std::mutex> lock(mu_);
  notify_ = std::move(notify);
  notified_ = false;
  if (notify_ && (!pending_.empty() || closed_)) {
    notified_ = true;
    notify_();
  }
}

void WatchStream::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return;
  closed_ = true;
  pending_.clear();
  pending_.shrink_to_fit();
  if (notify_ && !notified_) {
    notified_ = true;
    notify_();
  }
}

bool WatchStream::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_;
}

void WatchStream::Push(const WatchEvent& event) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return;
  if (max_pending_ != 0 && pending_.size() >= max_pending_) {
    // A consumer this far behind is cut off, as kube-apiserver drops slow
    // watchers; it sees the stream end and re-lists.
    closed_ = true;
    pending_.clear();
    if (notify_ && !notified_) {
      notified_ = true;
      notify_();
    }
    return;
  }
  pending_.push_back(event);
  if (notify_ && !notified_) {
    notified_ = true;
    notify_();
  }
}

void WatchStream::CloseLocked() {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return;
  closed_ = true;
  if (notify_ && !notified_) {
    notified_ = true;
    notify_();
  }
}

// ---------------------------------------------------------------------------
// Impl: lookup and commit

ResourceData* Store::Impl::FindData(std::string_view group, std::string_view resource) const {
  std::string key;
  key.reserve(group.size() + resource.size() + 1);
  key += group;
  key += '/';
  key += resource;
  auto it = resources.find(key);
  return it == resources.end() ? nullptr : it->second.get();
}

Result<ResourceData*> Store::Impl::ResolveRef(const ResourceRef& ref) const {
  ResourceData* rd = FindData(ref.group, ref.resource);
  if (rd == nullptr || !rd->info->ServesVersion(ref.version)) return NotFoundResource();
  return rd;
}

std::string Store::Impl::Key(const ResourceInfo& info, std::string_view ns, std::string_view name) {
  if (!info.namespaced) return std::string(name);
  std::string key;
  key.reserve(ns.size() + name.size() + 1);
  key += ns;
  key += '/';
  key += name;
  return key;
}

ObjectPtr Store::Impl::Lookup(ResourceData* rd, std::string_view key) const {
  auto it = rd->objects.find(key);
  return it == rd->objects.end() ? nullptr : it->second;
}

std::string Store::Impl::NowRfc3339() const { return FormatRfc3339(clock().WallNow()); }

ObjectPtr Store::Impl::Seal(const ResourceInfo& info, json& obj, uint64_t new_rv) const {
  obj["metadata"]["resourceVersion"] = std::to_string(new_rv);
  auto v = internal::BuildVersion(info, obj);
  v->json = DumpJson(obj);
  v->rv = new_rv;
  return v;
}

void Store::Impl::Dispatch(ResourceData* rd, const HistoryEntry& entry) {
  if (sink != nullptr) {
    sink->Committed(*rd->info, entry.type, entry.object);
    tl_commits.rv = entry.rv;
  }
  rd->history.push_back(entry);
  while (rd->history.size() > options.watch_history) {
    rd->trimmed_rv = rd->history.front().rv;
    rd->history.pop_front();
  }
  auto& watchers = rd->watchers;
  size_t live = 0;
  for (size_t i = 0; i < watchers.size(); ++i) {
    WatchStream& w = *watchers[i];
    if (w.closed()) continue;
    if (live != i) watchers[live] = std::move(watchers[i]);
    ++live;
    const WatchStream::Filter& f = *w.filter_;
    const bool cur_match = f.Matches(*entry.object);
    switch (entry.type) {
      case WatchEventType::kAdded:
        if (cur_match) w.Push(WatchEvent{WatchEventType::kAdded, entry.object, entry.rv});
        break;
      case WatchEventType::kModified: {
        const bool prev_match = entry.prev != nullptr && f.Matches(*entry.prev);
        if (cur_match) {
          w.Push(WatchEvent{prev_match ? WatchEventType::kModified : WatchEventType::kAdded,
                            entry.object, entry.rv});
        } else if (prev_match) {
          w.Push(WatchEvent{WatchEventType::kDeleted, entry.prev, entry.rv});
        }
        break;
      }
      case WatchEventType::kDeleted:
        if (cur_match) w.Push(WatchEvent{WatchEventType::kDeleted, entry.object, entry.rv});
        break;
      default:
        break;
    }
  }
  watchers.resize(live);
}

void Store::Impl::CommitPut(ResourceData* rd, const std::string& key, ObjectPtr cur,
                            ObjectPtr prev) {
  rd->objects[key] = cur;
  if (prev == nullptr) {
    uids[cur->uid] = internal::ObjectLocation{rd, key};
    if (rd->info->namespaced) ++namespace_objects[cur->ns];
    for (const auto& owner : cur->owner_uids) dependents[owner].insert(cur->uid);
  } else if (prev->owner_uids != cur->owner_uids) {
    for (const auto& owner : prev->owner_uids) {
      if (std::find(cur->owner_uids.begin(), cur->owner_uids.end(), owner) !=
          cur->owner_uids.end()) {
        continue;
      }
      auto it = dependents.find(owner);
      if (it != dependents.end()) {
        it->second.erase(cur->uid);
        if (it->second.empty()) dependents.erase(it);
      }
      gc_queue.push_back(GcItem{GcItem::Kind::kFinalizeForeground, owner});
    }
    for (const auto& owner : cur->owner_uids) dependents[owner].insert(cur->uid);
  }
  Dispatch(rd, HistoryEntry{prev ? WatchEventType::kModified : WatchEventType::kAdded, cur,
                            std::move(prev), cur->rv});
}

void Store::Impl::RegisterResource(std::shared_ptr<const ResourceInfo> info) {
  std::string key = info->group + "/" + info->resource;
  auto it = resources.find(key);
  if (it == resources.end()) {
    auto rd = std::make_unique<ResourceData>();
    rd->info = std::move(info);
    resources.emplace(std::move(key), std::move(rd));
  } else {
    ResourceData& rd = *it->second;
    // A CRD update that changes the versions served ends the resource's
    // watches, as kube-apiserver's CRD handler does when it replaces the
    // resource's storage (it does so on any spec change): a client watching
    // a version no longer served sees its stream end, and its re-list or
    // re-watch gets 404 and moves to another version.
    if (rd.info->versions != info->versions) {
      for (auto& w : rd.watchers) w->CloseLocked();
      rd.watchers.clear();
    }
    rd.info = std::move(info);
  }
  ++registry_generation;
}

void Store::Impl::AfterPut(ResourceData* rd, const ObjectVersion& v, const json& obj) {
  const ResourceInfo& info = *rd->info;
  if (info.group == "apiextensions.k8s.io" && info.resource == "customresourcedefinitions") {
    auto cr = ResourceFromCrd(obj);
    if (cr.ok()) RegisterResource(std::move(cr).value());
  } else if (info.group == "scheduling.k8s.io" && info.resource == "priorityclasses") {
    int64_t value = 0;
    if (auto it = obj.find("value"); it != obj.end() && it->is_number_integer()) {
      value = it->get<int64_t>();
    }
    priority_values[v.name] = value;
    priority_preemption[v.name] = obj.value("preemptionPolicy", "");
    if (obj.value("globalDefault", false)) {
      default_priority_class = v.name;
    } else if (default_priority_class == v.name) {
      default_priority_class.clear();
    }
  }
}

PriorityClasses Store::Impl::PriorityClassSnapshot() const {
  PriorityClasses out;
  for (const auto& [name, value] : priority_values) {
    auto policy = priority_preemption.find(name);
    out.by_name[name] = PriorityClassInfo{
        value, policy == priority_preemption.end() ? std::string() : policy->second};
  }
  out.global_default = default_priority_class;
  return out;
}

// ---------------------------------------------------------------------------
// Store: registry and reads

Store::Store(StoreOptions options) {
  if (!options.clock) {
    options.clock = std::shared_ptr<const Clock>(std::shared_ptr<const Clock>(), &RealClock::Get());
  }
  clock_ = options.clock;
  const auto served_versions = options.served_versions;
  impl_ = std::make_unique<Impl>(std::move(options));
  std::lock_guard<std::mutex> lock(impl_->mu);
  for (auto& info : BuiltinResources()) {
    auto it = served_versions.find(info->GroupResource());
    if (it != served_versions.end()) {
      if (it->second.empty()) continue;  // not served at all
      auto changed = std::make_shared<ResourceInfo>(*info);
      changed->versions = it->second;
      info = std::move(changed);
    }
    impl_->RegisterResource(std::move(info));
  }
}

Store::~Store() { CloseWatches(); }

std::shared_ptr<Store> NewStore(StoreOptions options) {
  auto store = std::make_shared<Store>(std::move(options));
  internal::CreateDefaultObjects(*store);
  return store;
}

void internal::CreateDefaultObjects(Store& store) {
  for (const char* ns : {"default", "kube-system", "kube-public", "kube-node-lease"}) {
    json obj = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}};
    auto created = store.CreateFromJson(resources::kNamespaces, "", std::move(obj));
    COPSE_CHECK(created.ok()) << created.error().ToString();
  }
  struct SystemClass {
    const char* name;
    int64_t value;
    const char* description;
  };
  for (const SystemClass& pc :
       {SystemClass{"system-node-critical", 2000001000,
                    "Used for system critical pods that must not be moved from their current "
                    "node."},
        SystemClass{"system-cluster-critical", 2000000000,
                    "Used for system critical pods that must run in the cluster, but can be "
                    "moved to another node if necessary."}}) {
    json obj = {
        {"apiVersion", "scheduling.k8s.io/v1"}, {"kind", "PriorityClass"},
        {"metadata", {{"name", pc.name}}},      {"value", pc.value},
        {"description", pc.description},        {"preemptionPolicy", "PreemptLowerPriority"}};
    auto created = store.CreateFromJson(resources::kPriorityClasses, "", std::move(obj));
    COPSE_CHECK(created.ok()) << created.error().ToString();
  }
}

void Store::SetCommitSink(std::shared_ptr<CommitSink> sink) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->sink = std::move(sink);
}

Status Store::Restore(std::vector<RestoredObject> objects, uint64_t rv) {
  // CRDs first: the objects of a custom resource need it registered.
  std::stable_partition(objects.begin(), objects.end(), [](const RestoredObject& o) {
    return o.group_resource == "apiextensions.k8s.io/customresourcedefinitions";
  });
  std::lock_guard<std::mutex> lock(impl_->mu);
  for (const RestoredObject& o : objects) {
    auto it = impl_->resources.find(o.group_resource);
    if (it == impl_->resources.end()) {
      return MakeError(ErrorCode::kInvalid,
                       "restore: an object of " + o.group_resource + ", which is not served");
    }
    ResourceData* rd = it->second.get();
    json obj = json::parse(o.json, nullptr, false);
    if (obj.is_discarded() || !obj.is_object()) {
      return MakeError(ErrorCode::kInvalid,
                       "restore: an object of " + o.group_resource + " is not a JSON object");
    }
    std::string text = o.json;
    if (const ResourceInfo& info = *rd->info; IsSchedulingApiKind(info.group, info.kind)) {
      // Written by an older copse in the version it was sent in (v1alpha2):
      // into the stored version.
      const std::string hub = info.ApiVersion(SchedulingHubVersion(info.kind));
      const std::string written = obj.value("apiVersion", "");
      if (written != hub && written.starts_with(info.group + "/")) {
        obj = SchedulingToHub(info.kind, written.substr(info.group.size() + 1), obj, nullptr);
        text = DumpJson(obj);
      }
    }
    auto v = internal::BuildVersion(*rd->info, obj);
    v->json = std::move(text);
    const std::string rv_text = obj["metadata"].value("resourceVersion", "");
    v->rv = std::strtoull(rv_text.c_str(), nullptr, 10);
    if (v->rv == 0 || v->rv > rv) {
      return MakeError(ErrorCode::kInvalid, "restore: " + o.group_resource + " " + v->name +
                                                ": bad metadata.resourceVersion \"" + rv_text +
                                                "\"");
    }
    std::string key = Impl::Key(*rd->info, v->ns, v->name);
    if (rd->objects.count(key) != 0) {
      return MakeError(ErrorCode::kInvalid, "restore: " + o.group_resource + " " + key + " twice");
    }
    impl_->uids[v->uid] = internal::ObjectLocation{rd, key};
    if (rd->info->namespaced) ++impl_->namespace_objects[v->ns];
    for (const auto& owner : v->owner_uids) impl_->dependents[owner].insert(v->uid);
    if (rd->info->resource == "services" && rd->info->group.empty()) {
      // Service IPs are 10.96.x.y from a counter; continue after the highest.
      const std::string ip = obj.contains("spec") ? obj["spec"].value("clusterIP", "") : "";
      unsigned a = 0, b = 0;
      if (std::sscanf(ip.c_str(), "10.96.%u.%u", &a, &b) == 2) {
        impl_->next_service_ip = std::max(impl_->next_service_ip, (a << 8 | b) + 1);
      }
    }
    ObjectPtr sealed = std::move(v);
    rd->objects.emplace(std::move(key), sealed);
    impl_->AfterPut(rd, *sealed, obj);
  }
  impl_->rv = std::max(impl_->rv, rv);
  for (auto& [name, rd] : impl_->resources) rd->trimmed_rv = impl_->rv;
  return Status::Ok();
}

Result<std::shared_ptr<const ResourceInfo>> Store::Resolve(std::string_view group,
                                                           std::string_view version,
                                                           std::string_view resource) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  ResourceData* rd = impl_->FindData(group, resource);
  if (rd == nullptr || !rd->info->ServesVersion(version)) return NotFoundResource();
  return rd->info;
}

std::vector<std::shared_ptr<const ResourceInfo>> Store::Resources() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::vector<std::shared_ptr<const ResourceInfo>> out;
  out.reserve(impl_->resources.size());
  for (const auto& [key, rd] : impl_->resources) out.push_back(rd->info);
  return out;
}

uint64_t Store::registry_generation() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->registry_generation;
}

uint64_t Store::CurrentResourceVersion() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->rv;
}

size_t Store::Count(const ResourceRef& ref) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  ResourceData* rd = impl_->FindData(ref.group, ref.resource);
  return rd == nullptr ? 0 : rd->objects.size();
}

Result<ObjectPtr> Store::Get(const ResourceRef& ref, std::string_view ns,
                             std::string_view name) const {
  std::unique_lock<std::mutex> lock(impl_->mu);
  auto rd = impl_->ResolveRef(ref);
  if (!rd.ok()) return std::move(rd).error();
  std::shared_ptr<const ResourceInfo> info = (*rd)->info;
  ObjectPtr v = impl_->Lookup(*rd, Impl::Key(*info, ns, name));
  if (v == nullptr) return NotFound(*info, name);
  lock.unlock();
  return internal::ForVersion(*info, std::move(v), ref.version);
}

namespace {

Result<FieldSelectorExpr> ParseFieldsFor(const ResourceInfo& info, std::string_view text) {
  auto fields = ParseFieldSelector(text);
  if (!fields.ok()) return std::move(fields).error();
  for (auto& term : fields->mutable_terms()) {
    if (!info.HasField(term.field)) {
      return BadRequest("field label not supported: " + term.field);
    }
    term.index = info.FieldIndex(term.field);
  }
  return fields;
}

}  // namespace

Result<ListResult> Store::List(const ResourceRef& ref, const ListOptions& options) const {
  std::shared_ptr<const ResourceInfo> info;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    auto rd = impl_->ResolveRef(ref);
    if (!rd.ok()) return std::move(rd).error();
    info = (*rd)->info;
  }
  WatchStream::Filter filter;
  auto labels = ParseLabelSelector(options.label_selector);
  if (!labels.ok()) return std::move(labels).error();
  filter.labels = std::move(labels).value();
  auto fields = ParseFieldsFor(*info, options.field_selector);
  if (!fields.ok()) return std::move(fields).error();
  filter.fields = std::move(fields).value();
  if (info->namespaced) filter.ns = options.ns;
  if (options.limit < 0) return BadRequest("limit: Invalid value: must be non-negative");

  std::string start;
  if (!options.continue_token.empty()) {
    std::string decoded;
    json token;
    if (Base64Decode(options.continue_token, &decoded)) {
      token = json::parse(decoded, nullptr, false);
    }
    if (!token.is_object() || !token.contains("start") || !token["start"].is_string()) {
      return BadRequest(
          "continue key is not valid: incorrect encoded start resourceVersion "
          "(version meta.k8s.io/v1)");
    }
    start = token["start"].get<std::string>();
  }

  ListResult result;
  std::unique_lock<std::mutex> lock(impl_->mu);
  auto rd_or = impl_->ResolveRef(ref);
  if (!rd_or.ok()) return std::move(rd_or).error();
  ResourceData* rd = *rd_or;
  result.resource_version = impl_->rv;
  std::string prefix;
  if (info->namespaced && !options.ns.empty()) prefix = options.ns + "/";
  auto it = rd->objects.lower_bound(std::max(start, prefix));
  const bool unfiltered = filter.labels.Empty() && filter.fields.Empty();
  if (options.limit == 0) {
    result.items.reserve(prefix.empty() ? rd->objects.size() : 16);
  } else {
    result.items.reserve(static_cast<size_t>(options.limit));
  }
  for (; it != rd->objects.end(); ++it) {
    if (!prefix.empty() && it->first.compare(0, prefix.size(), prefix) != 0) break;
    if (!unfiltered && !filter.Matches(*it->second)) continue;
    if (options.limit > 0 && static_cast<int64_t>(result.items.size()) == options.limit) {
      const ObjectVersion& last = *result.items.back();
      json token = {{"v", "meta.k8s.io/v1"},
                    {"rv", static_cast<int64_t>(result.resource_version)},
                    {"start", Impl::Key(*info, last.ns, last.name) + '\0'}};
      result.continue_token = Base64Encode(token.dump());
      if (unfiltered) {
        // As upstream, only without selectors: the objects left in range.
        int64_t remaining = 0;
        for (auto rest = it; rest != rd->objects.end(); ++rest) {
          if (!prefix.empty() && rest->first.compare(0, prefix.size(), prefix) != 0) break;
          ++remaining;
        }
        result.remaining_items = remaining;
      }
      break;
    }
    result.items.push_back(it->second);
  }
  lock.unlock();
  if (IsSchedulingApiKind(info->group, info->kind)) {
    for (ObjectPtr& item : result.items) {
      item = internal::ForVersion(*info, std::move(item), ref.version);
    }
  }
  return result;
}

Result<std::shared_ptr<WatchStream>> Store::Watch(const ResourceRef& ref,
                                                  const WatchOptions& options) {
  std::shared_ptr<const ResourceInfo> info;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    auto rd = impl_->ResolveRef(ref);
    if (!rd.ok()) return std::move(rd).error();
    info = (*rd)->info;
  }
  auto filter = std::make_unique<WatchStream::Filter>();
  auto labels = ParseLabelSelector(options.label_selector);
  if (!labels.ok()) return std::move(labels).error();
  filter->labels = std::move(labels).value();
  auto fields = ParseFieldsFor(*info, options.field_selector);
  if (!fields.ok()) return std::move(fields).error();
  filter->fields = std::move(fields).value();
  if (info->namespaced) filter->ns = options.ns;

  std::shared_ptr<WatchStream> stream(new WatchStream());
  stream->filter_ = std::move(filter);
  const WatchStream::Filter& f = *stream->filter_;

  std::lock_guard<std::mutex> lock(impl_->mu);
  auto rd_or = impl_->ResolveRef(ref);
  if (!rd_or.ok()) return std::move(rd_or).error();
  ResourceData* rd = *rd_or;
  stream->resource_ = rd->info;
  stream->version_ = ref.version;
  const uint64_t from = options.resource_version.value_or(0);
  if (from == 0) {
    std::string prefix = f.ns.empty() ? std::string() : f.ns + "/";
    auto it = prefix.empty() ? rd->objects.begin() : rd->objects.lower_bound(prefix);
    for (; it != rd->objects.end(); ++it) {
      if (!prefix.empty() && it->first.compare(0, prefix.size(), prefix) != 0) break;
      if (f.Matches(*it->second)) {
        stream->pending_.push_back(WatchEvent{WatchEventType::kAdded, it->second, it->second->rv});
      }
    }
  } else {
    if (from < rd->trimmed_rv) {
      return WithStatus(ErrorCode::kGone, 410, "Expired",
                        "too old resource version: " + std::to_string(from) + " (" +
                            std::to_string(rd->trimmed_rv) + ")");
    }
    auto it = std::upper_bound(rd->history.begin(), rd->history.end(), from,
                               [](uint64_t v, const HistoryEntry& e) { return v < e.rv; });
    for (; it != rd->history.end(); ++it) {
      const HistoryEntry& e = *it;
      const bool cur_match = f.Matches(*e.object);
      const bool prev_match = e.prev != nullptr && f.Matches(*e.prev);
      if (e.type == WatchEventType::kModified) {
        if (cur_match) {
          stream->pending_.push_back(WatchEvent{
              prev_match ? WatchEventType::kModified : WatchEventType::kAdded, e.object, e.rv});
        } else if (prev_match) {
          stream->pending_.push_back(WatchEvent{WatchEventType::kDeleted, e.prev, e.rv});
        }
      } else if (cur_match) {
        stream->pending_.push_back(WatchEvent{e.type, e.object, e.rv});
      }
    }
  }
  stream->max_pending_ =
      stream->pending_.size() + 2 * std::max<size_t>(impl_->options.watch_history, 100000);
  rd->watchers.push_back(stream);
  return stream;
}

void Store::CloseWatches() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  for (auto& [key, rd] : impl_->resources) {
    for (auto& w : rd->watchers) w->CloseLocked();
    rd->watchers.clear();
  }
}

// ---------------------------------------------------------------------------
// create

namespace {

// Upstream defaults and PrepareForCreate that matter to copse and kubectl.
void PrepareForCreate(const ResourceInfo& info, json& obj, const std::string& now) {
  json& meta = obj["metadata"];
  // (The Workload API's status is cleared by its admission, to what its
  // encoding writes: apiserver/scheduling_api.h.)
  if (info.has_status && info.resource != "nodes" && info.resource != "customresourcedefinitions" &&
      !IsSchedulingApiKind(info.group, info.kind)) {
    obj.erase("status");
  }
  if (!info.group.empty() || info.crd) {
    if (info.group == "apiextensions.k8s.io" && info.resource == "customresourcedefinitions") {
      json& spec = obj["spec"];
      json names = spec.value("names", json::object());
      if (!names.contains("singular") && names.contains("kind") && names["kind"].is_string()) {
        std::string singular = names["kind"].get<std::string>();
        std::transform(singular.begin(), singular.end(), singular.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        names["singular"] = singular;
      }
      if (!names.contains("listKind") && names.contains("kind") && names["kind"].is_string()) {
        names["listKind"] = names["kind"].get<std::string>() + "List";
      }
      spec["names"] = names;
      json stored = json::array();
      if (spec.contains("versions") && spec["versions"].is_array()) {
        for (const auto& v : spec["versions"]) {
          if (v.is_object() && v.value("storage", false)) stored.push_back(v.value("name", ""));
        }
      }
      obj["status"] = {
          {"acceptedNames", names},
          {"conditions", json::array({{{"type", "NamesAccepted"},
                                       {"status", "True"},
                                       {"reason", "NoConflicts"},
                                       {"message", "no conflicts found"},
                                       {"lastTransitionTime", now}},
                                      {{"type", "Established"},
                                       {"status", "True"},
                                       {"reason", "InitialNamesAccepted"},
                                       {"message", "the initial names have been accepted"},
                                       {"lastTransitionTime", now}}})},
          {"storedVersions", stored}};
    }
    return;
  }
  if (info.resource == "pods") {
    json& spec = obj["spec"];
    if (!spec.is_object()) return;  // validation rejects it
    if (!spec.contains("schedulerName")) spec["schedulerName"] = "default-scheduler";
    if (!spec.contains("restartPolicy")) spec["restartPolicy"] = "Always";
    if (!spec.contains("terminationGracePeriodSeconds")) {
      spec["terminationGracePeriodSeconds"] = 30;
    }
    if (!spec.contains("dnsPolicy")) spec["dnsPolicy"] = "ClusterFirst";
    if (!spec.contains("securityContext")) spec["securityContext"] = json::object();
    if (!spec.contains("enableServiceLinks")) spec["enableServiceLinks"] = true;
    for (const char* list : {"containers", "initContainers"}) {
      auto it = spec.find(list);
      if (it == spec.end() || !it->is_array()) continue;
      for (auto& c : *it) {
        if (!c.is_object()) continue;
        if (!c.contains("terminationMessagePath")) {
          c["terminationMessagePath"] = "/dev/termination-log";
        }
        if (!c.contains("terminationMessagePolicy")) c["terminationMessagePolicy"] = "File";
        if (!c.contains("imagePullPolicy")) {
          const std::string image = c.value("image", "");
          const size_t slash = image.rfind('/');
          const std::string last = slash == std::string::npos ? image : image.substr(slash + 1);
          const bool latest = last.find(':') == std::string::npos || image.ends_with(":latest");
          c["imagePullPolicy"] = latest ? "Always" : "IfNotPresent";
        }
        if (!c.contains("resources")) c["resources"] = json::object();
      }
    }
    // DefaultTolerationSeconds admission.
    static const json kDefaultTolerations[] = {{{"key", "node.kubernetes.io/not-ready"},
                                                {"operator", "Exists"},
                                                {"effect", "NoExecute"},
                                                {"tolerationSeconds", 300}},
                                               {{"key", "node.kubernetes.io/unreachable"},
                                                {"operator", "Exists"},
                                                {"effect", "NoExecute"},
                                                {"tolerationSeconds", 300}}};
    json& tolerations = spec["tolerations"];
    if (!tolerations.is_array()) tolerations = json::array();
    for (const json& toleration : kDefaultTolerations) {
      const std::string& key = toleration["key"].get_ref<const std::string&>();
      bool found = false;
      for (const auto& t : tolerations) {
        if (t.is_object() && t.value("key", "") == key &&
            (t.value("effect", "") == "NoExecute" || t.value("effect", "").empty())) {
          found = true;
        }
      }
      if (!found) tolerations.push_back(toleration);
    }
    static const json kPendingStatus = {{"phase", "Pending"}};
    obj["status"] = kPendingStatus;
    // applySchedulingGatedCondition: a gated pod says so from the start (the
    // scheduler writes nothing for it).
    if (auto gates = obj["spec"].find("schedulingGates");
        gates != obj["spec"].end() && gates->is_array() && !gates->empty()) {
      obj["status"]["conditions"] =
          json::array({{{"type", "PodScheduled"},
                        {"status", "False"},
                        {"lastProbeTime", nullptr},
                        {"lastTransitionTime", now},
                        {"reason", "SchedulingGated"},
                        {"message", "Scheduling is blocked due to non-empty scheduling gates"}}});
    }
  } else if (info.resource == "namespaces") {
    obj["spec"] = {{"finalizers", json::array({"kubernetes"})}};
    obj["status"] = {{"phase", "Active"}};
    json& labels = meta["labels"];
    if (!labels.is_object()) labels = json::object();
    labels["kubernetes.io/metadata.name"] = meta.value("name", "");
  } else if (info.resource == "secrets") {
    // SetDefaults_Secret. kubectl create secret generic leaves the type empty.
    if (auto type = obj.find("type"); type == obj.end() || *type == "") obj["type"] = "Opaque";
  } else if (info.resource == "services") {
    json& spec = obj["spec"];
    if (!spec.is_object()) return;
    if (!spec.contains("type")) spec["type"] = "ClusterIP";
    if (!spec.contains("sessionAffinity")) spec["sessionAffinity"] = "None";
    if (auto ports = spec.find("ports"); ports != spec.end() && ports->is_array()) {
      for (auto& p : *ports) {
        if (!p.is_object()) continue;
        if (!p.contains("protocol")) p["protocol"] = "TCP";
        if (!p.contains("targetPort") && p.contains("port")) p["targetPort"] = p["port"];
      }
    }
    obj["status"] = {{"loadBalancer", json::object()}};
  } else if (info.resource == "persistentvolumeclaims" || info.resource == "persistentvolumes") {
    obj["status"] = {{"phase", "Pending"}};
  }
}

}  // namespace

Result<ObjectPtr> Store::Create(const ResourceRef& ref, std::string_view ns, std::string_view body,
                                bool dry_run, std::string_view field_manager) {
  auto obj = ParseBody(body);
  if (!obj.ok()) return std::move(obj).error();
  return CreateFromJson(ref, ns, std::move(obj).value(), dry_run, field_manager);
}

Result<ObjectPtr> Store::CreateFromJson(const ResourceRef& ref, std::string_view ns, json obj,
                                        bool dry_run, std::string_view field_manager) {
  DurableAck ack(*this);
  std::shared_ptr<const ResourceInfo> info;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    auto rd = impl_->ResolveRef(ref);
    if (!rd.ok()) return std::move(rd).error();
    info = (*rd)->info;
  }
  try {
    if (!obj.is_object()) {
      return BadRequest("Object '" + std::string("Kind") + "' is missing in '" +
                        obj.dump().substr(0, 200) + "'");
    }
    if (auto it = obj.find("metadata"); it == obj.end() || it->is_null()) {
      obj["metadata"] = json::object();
    } else if (!it->is_object()) {
      return BadRequest("metadata: expected an object, got " + std::string(it->type_name()));
    }
    if (!field_manager.empty()) {
      json crd_schema;
      (void)RecordUpdate(
          nullptr, obj, ResourceApplySchema(*info, ref.version, &crd_schema),
          UpdateOptions{std::string(field_manager), "", info->ApiVersion(ref.version),
                        FormatRfc3339(clock_->WallNow())});
    }
    json& meta = obj["metadata"];
    if (info->namespaced) {
      std::string body_ns;
      if (auto it = meta.find("namespace"); it != meta.end() && it->is_string()) {
        body_ns = it->get<std::string>();
      }
      if (!ns.empty()) {
        if (!body_ns.empty() && body_ns != ns) {
          return BadRequest(
              "the namespace of the provided object does not match the namespace sent on the "
              "request");
        }
        meta["namespace"] = std::string(ns);
      } else if (body_ns.empty()) {
        meta["namespace"] = "default";
      }
    } else {
      meta.erase("namespace");
    }
    bool generated = false;
    std::string generate_name;
    if (auto it = meta.find("generateName"); it != meta.end() && it->is_string()) {
      generate_name = it->get<std::string>();
    }
    const bool has_name = meta.contains("name") && meta["name"].is_string() &&
                          !meta["name"].get_ref<const std::string&>().empty();
    if (!has_name && !generate_name.empty()) {
      meta["name"] = generate_name + internal::RandomSuffix();
      generated = true;
    }
    DefaultWorkload(info->group, info->kind, obj);
    // The Workload API: decoded, admitted and validated in the request's
    // version, stored in its hub version (apiserver/scheduling_api.h).
    const bool scheduling_api = IsSchedulingApiKind(info->group, info->kind);
    PriorityClasses classes;
    if (scheduling_api) {
      auto decoded = DecodeSchedulingApi(info->kind, ref.version, obj);
      if (!decoded.ok()) return std::move(decoded).error();
      {
        std::lock_guard<std::mutex> lock(impl_->mu);
        classes = impl_->PriorityClassSnapshot();
      }
      if (Status admitted = AdmitSchedulingApiCreate(info->kind, ref.version, *decoded, classes);
          !admitted.ok()) {
        return admitted.error();
      }
      internal::ReplaceContents(obj, std::move(decoded).value());
    }
    Status valid = ValidateForCreate(obj, info->group, ref.version, info->kind, info->resource,
                                     info->namespaced, impl_->options.gang_rules);
    if (!valid.ok()) return valid.error();
    if (scheduling_api) {
      json hub = SchedulingToHub(info->kind, ref.version, obj, nullptr);
      AdmitSchedulingApiHub(info->kind, hub, classes);
      internal::ReplaceContents(obj, std::move(hub));
    }
    if (info->group == "apiextensions.k8s.io" && info->resource == "customresourcedefinitions") {
      auto cr = ResourceFromCrd(obj);
      if (!cr.ok()) return std::move(cr).error();
    }
    obj["apiVersion"] =
        info->ApiVersion(scheduling_api ? SchedulingHubVersion(info->kind) : ref.version);
    obj["kind"] = info->kind;
    for (const char* key :
         {"resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"}) {
      meta.erase(key);
    }
    // Field managers sent with the object are kept, as kube keeps valid ones
    // (server-side apply creates with its manager's entry).
    if (auto mf = meta.find("managedFields"); mf != meta.end() && !mf->is_array()) meta.erase(mf);
    const std::string now = impl_->NowRfc3339();
    if (impl_->options.uid_seed != 0) {
      std::lock_guard lock(impl_->uid_mu);
      meta["uid"] = internal::UidFrom(impl_->uid_rng);
    } else {
      meta["uid"] = internal::RandomUid();
    }
    meta["creationTimestamp"] = now;
    meta["generation"] = 1;
    PrepareForCreate(*info, obj, now);
    PrepareWorkloadForCreate(info->group, info->kind, obj);

    std::lock_guard<std::mutex> lock(impl_->mu);
    auto rd_or = impl_->ResolveRef(ref);
    if (!rd_or.ok()) return std::move(rd_or).error();
    ResourceData* rd = *rd_or;
    std::string name = meta["name"].get<std::string>();
    if (info->namespaced) {
      const std::string obj_ns = meta["namespace"].get<std::string>();
      ResourceData* nsd = impl_->FindData("", "namespaces");
      ObjectPtr nsobj = nsd ? impl_->Lookup(nsd, obj_ns) : nullptr;
      if (nsobj == nullptr) return NotFound(*nsd->info, obj_ns);
      if (nsobj->deleting) {
        return Forbidden(info->GroupResource() + " \"" + name +
                         "\" is forbidden: unable to create new content in namespace " + obj_ns +
                         " because it is being terminated");
      }
    }
    if (info->resource == "pods" && info->group.empty()) {
      json& spec = obj["spec"];
      std::string pc;
      if (auto it = spec.find("priorityClassName"); it != spec.end() && it->is_string()) {
        pc = it->get<std::string>();
      }
      int64_t priority = 0;
      if (pc.empty() && !impl_->default_priority_class.empty()) {
        pc = impl_->default_priority_class;
        spec["priorityClassName"] = pc;
      }
      if (!pc.empty()) {
        auto it = impl_->priority_values.find(pc);
        if (it == impl_->priority_values.end()) {
          return Forbidden("pods \"" + name + "\" is forbidden: no PriorityClass with name " + pc +
                           " was found");
        }
        priority = it->second;
      }
      if (auto it = spec.find("priority"); it != spec.end() && !it->is_null()) {
        if (!it->is_number_integer() || it->get<int64_t>() != priority) {
          return Forbidden("pods \"" + name + "\" is forbidden: the integer value of priority (" +
                           it->dump() +
                           ") must not be provided in pod spec; priority admission controller "
                           "computed " +
                           std::to_string(priority) + " from the given PriorityClass name");
        }
      }
      spec["priority"] = priority;
      if (!spec.contains("preemptionPolicy")) spec["preemptionPolicy"] = "PreemptLowerPriority";
    }
    if (info->resource == "services" && info->group.empty()) {
      json& spec = obj["spec"];
      const std::string type = spec.value("type", "ClusterIP");
      if (type != "ExternalName" && (!spec.contains("clusterIP") || spec["clusterIP"] == "")) {
        const uint32_t n = impl_->next_service_ip++;
        const std::string ip =
            "10.96." + std::to_string((n >> 8) & 0xff) + "." + std::to_string(n & 0xff);
        spec["clusterIP"] = ip;
        spec["clusterIPs"] = json::array({ip});
      }
    }
    std::string key = Impl::Key(*info, meta.value("namespace", ""), name);
    for (int attempt = 0; rd->objects.count(key) != 0; ++attempt) {
      if (!generated || attempt >= 8) return AlreadyExists(*info, name);
      name = generate_name + internal::RandomSuffix();
      meta["name"] = name;
      key = Impl::Key(*info, meta.value("namespace", ""), name);
    }
    if (dry_run) {
      auto v = internal::BuildVersion(*info, obj);
      meta.erase("resourceVersion");
      v->json = DumpJson(obj);
      return internal::ForVersion(*info, std::move(v), ref.version);
    }
    ObjectPtr v = impl_->Seal(*info, obj, impl_->rv + 1);
    if (v->json.size() > impl_->options.max_object_bytes) {
      return ObjectTooLarge(v->json.size(), impl_->options.max_object_bytes);
    }
    impl_->NextRv();
    impl_->CommitPut(rd, key, v, nullptr);
    impl_->AfterPut(rd, *v, obj);
    // Owners that do not exist: the garbage collector deletes the object.
    bool any_owner = v->owner_uids.empty();
    for (const auto& owner : v->owner_uids) any_owner = any_owner || impl_->uids.count(owner);
    if (!any_owner) {
      impl_->gc_queue.push_back(GcItem{GcItem::Kind::kOwnerRemoved, v->owner_uids.front()});
    }
    impl_->DrainGc();
    return internal::ForVersion(*info, std::move(v), ref.version);
  } catch (const json::exception& e) {
    return BadRequest(std::string("invalid object: ") + e.what());
  }
}

// ---------------------------------------------------------------------------
// the update loop

Result<ObjectPtr> Store::UpdateLoop(const ResourceRef& ref, std::string_view ns,
                                    std::string_view name, UpdateMode mode, const EditFn& edit,
                                    bool dry_run) {
  DurableAck ack(*this);
  for (int attempt = 0;; ++attempt) {
    std::shared_ptr<const ResourceInfo> info;
    ObjectPtr cur;
    std::string key;
    {
      std::lock_guard<std::mutex> lock(impl_->mu);
      auto rd = impl_->ResolveRef(ref);
      if (!rd.ok()) return std::move(rd).error();
      info = (*rd)->info;
      key = Impl::Key(*info, ns, name);
      cur = impl_->Lookup(*rd, key);
      if (cur == nullptr) return NotFound(*info, name);
    }
    try {
      // The Workload API is edited and validated in the request's version
      // and stored in its hub version (apiserver/scheduling_api.h).
      const bool scheduling_api = IsSchedulingApiKind(info->group, info->kind);
      json stored = ParseJson(cur->json);
      const json old_obj =
          scheduling_api ? SchedulingFromHub(info->kind, ref.version, stored) : std::move(stored);
      json new_obj = old_obj;
      Status edited = edit(*cur, old_obj, new_obj);
      if (!edited.ok()) return edited.error();
      if (!new_obj.is_object() || !new_obj.contains("metadata") ||
          !new_obj["metadata"].is_object()) {
        return Invalid(*info, name, "metadata: Required value");
      }
      json& nm = new_obj["metadata"];
      const json& om = old_obj["metadata"];
      const std::string cur_rv = std::to_string(cur->rv);
      if (auto it = nm.find("resourceVersion"); it != nm.end() && it->is_string() &&
                                                !it->get_ref<const std::string&>().empty() &&
                                                it->get_ref<const std::string&>() != cur_rv) {
        return Conflict(*info, name,
                        "the object has been modified; please apply your changes to the latest "
                        "version and try again");
      }
      nm["resourceVersion"] = cur_rv;
      new_obj["apiVersion"] = old_obj["apiVersion"];
      new_obj["kind"] = old_obj["kind"];
      if (!nm.contains("uid") || nm["uid"] == "") nm["uid"] = om["uid"];
      for (const char* key_name :
           {"creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation"}) {
        if (auto it = om.find(key_name); it != om.end()) {
          nm[key_name] = *it;
        } else {
          nm.erase(key_name);
        }
      }
      if (mode.status_only) {
        json status = new_obj.contains("status") ? new_obj["status"] : json();
        new_obj = old_obj;
        new_obj["metadata"]["resourceVersion"] = cur_rv;
        if (status.is_null()) {
          new_obj.erase("status");
        } else {
          new_obj["status"] = std::move(status);
        }
      } else if (mode.protect_status && info->has_status) {
        if (auto it = old_obj.find("status"); it != old_obj.end()) {
          new_obj["status"] = *it;
        } else {
          new_obj.erase("status");
        }
      }
      if (scheduling_api) {
        auto decoded = DecodeSchedulingApi(info->kind, ref.version, std::move(new_obj));
        if (!decoded.ok()) return std::move(decoded).error();
        new_obj = std::move(decoded).value();
      }
      if (!mode.status_only) DefaultWorkload(info->group, info->kind, new_obj);
      if (mode.bump_generation && SpecChanged(*info, old_obj, new_obj)) {
        json& nm2 = new_obj["metadata"];
        if (auto it = om.find("generation"); it != om.end() && it->is_number_integer()) {
          nm2["generation"] = it->get<int64_t>() + 1;
        }
      }
      if (!mode.field_manager.empty()) {
        json crd_schema;
        (void)RecordUpdate(
            &old_obj, new_obj, ResourceApplySchema(*info, ref.version, &crd_schema),
            UpdateOptions{std::string(mode.field_manager), mode.status_only ? "status" : "",
                          info->ApiVersion(ref.version), FormatRfc3339(clock_->WallNow())});
      }
      if (mode.validate) {
        Status valid = ValidateForUpdate(
            old_obj, new_obj, info->group, ref.version, info->kind, info->resource,
            info->namespaced, mode.status_only ? "status" : "", impl_->options.gang_rules);
        if (!valid.ok()) return valid.error();
      }
      if (scheduling_api) new_obj = SchedulingToHub(info->kind, ref.version, new_obj, &stored);
      if (new_obj == (scheduling_api ? stored : old_obj))
        return internal::ForVersion(*info, cur, ref.version);
      const json& fm = new_obj["metadata"];
      const bool remove =
          fm.contains("deletionTimestamp") && !fm["deletionTimestamp"].is_null() &&
          (!fm.contains("finalizers") || !fm["finalizers"].is_array() || fm["finalizers"].empty());
      std::lock_guard<std::mutex> lock(impl_->mu);
      auto rd_or = impl_->ResolveRef(ref);
      if (!rd_or.ok()) return std::move(rd_or).error();
      ResourceData* rd = *rd_or;
      if (impl_->Lookup(rd, key) != cur) {
        if (attempt > 1000) return Internal("too many update conflicts");
        continue;
      }
      if (dry_run) {
        auto v = internal::BuildVersion(*info, new_obj);
        v->json = DumpJson(new_obj);
        v->rv = cur->rv;
        return internal::ForVersion(*info, std::move(v), ref.version);
      }
      if (remove) {
        ObjectPtr v = impl_->CommitRemove(rd, key, new_obj);
        impl_->DrainGc();
        return internal::ForVersion(*info, std::move(v), ref.version);
      }
      ObjectPtr v = impl_->Seal(*info, new_obj, impl_->rv + 1);
      if (v->json.size() > impl_->options.max_object_bytes) {
        return ObjectTooLarge(v->json.size(), impl_->options.max_object_bytes);
      }
      impl_->NextRv();
      impl_->CommitPut(rd, key, v, cur);
      impl_->AfterPut(rd, *v, new_obj);
      impl_->DrainGc();
      return internal::ForVersion(*info, std::move(v), ref.version);
    } catch (const json::exception& e) {
      return Invalid(*info, name, e.what());
    }
  }
}

Result<ObjectPtr> Store::Update(const ResourceRef& ref, std::string_view ns, std::string_view name,
                                std::string_view body, std::string_view subresource, bool dry_run,
                                std::string_view field_manager) {
  auto parsed = ParseBody(body);
  if (!parsed.ok()) return std::move(parsed).error();
  json obj = std::move(parsed).value();
  if (!obj.is_object()) return BadRequest("the body of the request must be a JSON object");
  if (subresource != "" && subresource != "status") return NotFoundResource();
  const std::string want_name(name);
  const std::string want_ns(ns);
  auto edit = [&](const ObjectVersion&, const json& old_obj, json& new_obj) -> Status {
    const std::string api_version = old_obj.value("apiVersion", "");
    const std::string kind = old_obj.value("kind", "");
    if (auto it = obj.find("apiVersion"); it != obj.end() && *it != api_version) {
      return BadRequest("the API version in the data (" +
                        (it->is_string() ? it->get<std::string>() : it->dump()) +
                        ") does not match the expected API version (" + api_version + ")");
    }
    if (auto it = obj.find("kind"); it != obj.end() && *it != kind) {
      return BadRequest("the kind in the data (" +
                        (it->is_string() ? it->get<std::string>() : it->dump()) +
                        ") does not match the expected kind (" + kind + ")");
    }
    new_obj = obj;
    if (!new_obj.contains("metadata") || !new_obj["metadata"].is_object()) {
      new_obj["metadata"] = json::object();
    }
    json& meta = new_obj["metadata"];
    if (auto it = meta.find("name"); it != meta.end() && *it != want_name) {
      return BadRequest("the name of the object (" +
                        (it->is_string() ? it->get<std::string>() : it->dump()) +
                        ") does not match the name on the URL (" + want_name + ")");
    }
    meta["name"] = want_name;
    if (old_obj["metadata"].contains("namespace")) {
      if (auto it = meta.find("namespace");
          it != meta.end() && !it->is_null() && *it != "" && *it != want_ns) {
        return BadRequest(
            "the namespace of the provided object does not match the namespace sent on the "
            "request");
      }
      meta["namespace"] = old_obj["metadata"]["namespace"];
    }
    return Status::Ok();
  };
  UpdateMode mode;
  mode.status_only = subresource == "status";
  mode.protect_status = !mode.status_only;
  mode.bump_generation = !mode.status_only;
  mode.field_manager = field_manager;
  return UpdateLoop(ref, ns, name, mode, edit, dry_run);
}

Result<ObjectPtr> Store::Patch(const ResourceRef& ref, std::string_view ns, std::string_view name,
                               PatchType type, std::string_view patch_text,
                               std::string_view subresource, bool dry_run,
                               std::string_view field_manager) {
  auto parsed = ParseBody(patch_text);
  if (!parsed.ok()) return std::move(parsed).error();
  json patch = std::move(parsed).value();
  if (subresource != "" && subresource != "status") return NotFoundResource();
  if (type == PatchType::kJson && !patch.is_array()) {
    return BadRequest("json: cannot unmarshal " + std::string(patch.type_name()) +
                      " into Go value of type jsonpatch.Patch");
  }
  if ((type == PatchType::kMerge || type == PatchType::kStrategicMerge) && !patch.is_object()) {
    return BadRequest("json: cannot unmarshal " + std::string(patch.type_name()) +
                      " into Go value of type map[string]interface {}");
  }
  if (type == PatchType::kStrategicMerge) {
    auto info = Resolve(ref.group, ref.version, ref.resource);
    if (!info.ok()) return std::move(info).error();
    if ((*info)->crd || !SupportsStrategicMerge((*info)->ApiVersion(ref.version), (*info)->kind)) {
      return WithStatus(ErrorCode::kInvalid, 415, "UnsupportedMediaType",
                        "the body of the request was in an unknown format - accepted media types "
                        "include: application/json-patch+json, application/merge-patch+json, "
                        "application/apply-patch+yaml");
    }
  }
  auto edit = [&](const ObjectVersion&, const json& old_obj, json& new_obj) -> Status {
    switch (type) {
      case PatchType::kJson: {
        auto patched = ApplyJsonPatch(old_obj, patch);
        if (!patched.ok()) return std::move(patched).error();
        new_obj = std::move(patched).value();
        return Status::Ok();
      }
      case PatchType::kMerge:
        new_obj.merge_patch(patch);
        return Status::Ok();
      case PatchType::kStrategicMerge: {
        auto merged = ApplyStrategicMergePatch(old_obj, patch, old_obj.value("apiVersion", ""),
                                               old_obj.value("kind", ""));
        if (!merged.ok()) return std::move(merged).error();
        new_obj = std::move(merged).value();
        return Status::Ok();
      }
    }
    return Status::Ok();
  };
  UpdateMode mode;
  mode.status_only = subresource == "status";
  mode.protect_status = !mode.status_only;
  mode.bump_generation = !mode.status_only;
  mode.field_manager = field_manager;
  return UpdateLoop(ref, ns, name, mode, edit, dry_run);
}

Result<ObjectPtr> Store::Mutate(const ResourceRef& ref, std::string_view ns, std::string_view name,
                                std::string_view subresource,
                                const std::function<Status(json&)>& edit_fn) {
  UpdateMode mode;
  mode.status_only = subresource == "status";
  mode.protect_status = subresource.empty();
  mode.bump_generation = !mode.status_only;
  auto edit = [&](const ObjectVersion&, const json&, json& new_obj) -> Status {
    return edit_fn(new_obj);
  };
  return UpdateLoop(ref, ns, name, mode, edit, false);
}

}  // namespace copse::apiserver
