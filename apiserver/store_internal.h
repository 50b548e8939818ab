#pragma once
// Private to the Store's implementation (store.cc, store_lifecycle.cc):
// the per-resource data, the shared state behind Store::Impl and the helpers
// both translation units use. Everything here requires Impl::mu held unless
// a function says otherwise.

#include <deque>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "apiserver/scheduling_api.h"
#include "apiserver/store.h"

namespace copse::apiserver {

struct WatchStream::Filter {
  std::string ns;
  LabelSelectorExpr labels;
  FieldSelectorExpr fields;
  bool Matches(const ObjectVersion& v) const noexcept {
    if (!ns.empty() && v.ns != ns) return false;
    return labels.Matches(v.labels) && fields.Matches(v.ns, v.name, v.fields);
  }
};

namespace internal {

using json = nlohmann::json;

struct HistoryEntry {
  WatchEventType type;
  ObjectPtr object;  // for DELETED: the final version (rv = event rv)
  ObjectPtr prev;    // MODIFIED: the version before
  uint64_t rv;
};

struct ResourceData {
  std::shared_ptr<const ResourceInfo> info;
  std::map<std::string, ObjectPtr, std::less<>> objects;  // "ns/name" or "name"
  std::deque<HistoryEntry> history;
  uint64_t trimmed_rv = 0;  // newest rv dropped from history
  std::vector<std::shared_ptr<WatchStream>> watchers;
};

// Work the garbage collector and the namespace/CRD lifecycles queue while a
// write runs; drained before the write returns (same lock hold).
struct GcItem {
  enum class Kind : uint8_t { kOwnerRemoved, kFinalizeForeground, kNamespaceCheck };
  Kind kind;
  std::string id;  // owner uid, or namespace name
};

struct ObjectLocation {
  ResourceData* rd;
  std::string key;
};

}  // namespace internal

struct Store::Impl {
  explicit Impl(StoreOptions opts) : options(std::move(opts)) {}

  StoreOptions options;
  mutable std::mutex mu;
  std::mutex uid_mu;  // guards uid_rng (StoreOptions::uid_seed)
  std::mt19937_64 uid_rng{options.uid_seed};
  uint64_t rv = 0;
  uint64_t registry_generation = 1;
  // "group/resource" -> data
  std::map<std::string, std::unique_ptr<internal::ResourceData>, std::less<>> resources;
  std::unordered_map<std::string, internal::ObjectLocation> uids;
  // owner uid -> uids of objects that list it in ownerReferences
  std::unordered_map<std::string, std::unordered_set<std::string>> dependents;
  std::unordered_map<std::string, size_t> namespace_objects;  // namespaced objects per namespace
  std::unordered_map<std::string, int64_t> priority_values;   // PriorityClass name -> value
  std::string default_priority_class;                         // globalDefault: true
  // PriorityClass name -> preemptionPolicy ("" when unset).
  std::unordered_map<std::string, std::string> priority_preemption;
  uint32_t next_service_ip = 10;
  std::deque<internal::GcItem> gc_queue;
  // Set once before the Store is shared (SetCommitSink); read without the lock.
  std::shared_ptr<CommitSink> sink;

  // The PriorityClasses as the Priority admission plugin sees them (lock held).
  PriorityClasses PriorityClassSnapshot() const;

  // --- lookup ---
  internal::ResourceData* FindData(std::string_view group, std::string_view resource) const;
  Result<internal::ResourceData*> ResolveRef(const ResourceRef& ref) const;
  static std::string Key(const ResourceInfo& info, std::string_view ns, std::string_view name);
  ObjectPtr Lookup(internal::ResourceData* rd, std::string_view key) const;

  // --- writes (lock held) ---
  uint64_t NextRv() { return ++rv; }
  // Serializes `obj` with a new resourceVersion into a version.
  ObjectPtr Seal(const ResourceInfo& info, internal::json& obj, uint64_t new_rv) const;
  // Installs `cur` (ADDED/MODIFIED) and notifies watchers; keeps the indexes.
  void CommitPut(internal::ResourceData* rd, const std::string& key, ObjectPtr cur, ObjectPtr prev);
  // Removes the object at `key` (its final content `final_obj`), emits
  // DELETED, queues GC work; returns the final version.
  ObjectPtr CommitRemove(internal::ResourceData* rd, const std::string& key,
                         internal::json& final_obj);
  void Dispatch(internal::ResourceData* rd, const internal::HistoryEntry& entry);
  void RegisterResource(std::shared_ptr<const ResourceInfo> info);
  void UnregisterResource(const ResourceInfo& info);
  void AfterPut(internal::ResourceData* rd, const ObjectVersion& v, const internal::json& obj);

  // Deletion entry point shared by Delete, GC, evictions and namespaces.
  Result<DeleteResult> DeleteLocked(internal::ResourceData* rd, const std::string& key,
                                    const DeleteOptions& options);
  void DrainGc();
  void HandleOwnerRemoved(const std::string& owner_uid);
  void FinalizeForeground(const std::string& owner_uid);
  void CheckNamespace(const std::string& ns);

  std::string NowRfc3339() const;
  const Clock& clock() const { return *options.clock; }
};

// The writes a thread committed since its outermost DurableAck began: the
// newest resourceVersion (0: none) and how many acks are open on the stack.
struct ThreadCommits {
  uint64_t rv = 0;
  int depth = 0;
};
inline thread_local ThreadCommits tl_commits;

class Store::DurableAck {
 public:
  explicit DurableAck(const Store& store) : sink_(store.impl_->sink.get()) {
    if (sink_ != nullptr) ++tl_commits.depth;
  }
  ~DurableAck() {
    if (sink_ == nullptr || --tl_commits.depth > 0) return;
    const uint64_t rv = tl_commits.rv;
    tl_commits.rv = 0;
    if (rv != 0) sink_->AwaitDurable(rv);
  }
  DurableAck(const DurableAck&) = delete;
  DurableAck& operator=(const DurableAck&) = delete;

 private:
  CommitSink* sink_;
};

namespace internal {

// The namespaces and system PriorityClasses every new Store starts with.
void CreateDefaultObjects(Store& store);

std::shared_ptr<ObjectVersion> BuildVersion(const ResourceInfo& info, const json& obj);
// A copy of `v` without its JSON text (for writes that splice new text).
std::shared_ptr<ObjectVersion> CopyMetadata(const ObjectVersion& v);
// `v` as served in `version`: a Workload API object converted from its
// stored version when they differ; anything else as it is.
ObjectPtr ForVersion(const ResourceInfo& info, ObjectPtr v, std::string_view version);
// Makes the object `target` hold `source`'s members, assigning each in place
// so that references to `target`'s members (its metadata) stay valid.
void ReplaceContents(json& target, json source);

Error NotFound(const ResourceInfo& info, std::string_view name);
Error NotFoundResource();
Error AlreadyExists(const ResourceInfo& info, std::string_view name);
Error Conflict(const ResourceInfo& info, std::string_view name, std::string_view detail);
Error Invalid(const ResourceInfo& info, std::string_view name, std::string_view cause);
Error Forbidden(std::string message);
Error Internal(std::string message);
Error WithStatus(ErrorCode code, int http_status, std::string reason, std::string message);

// "ns/name" split of a key.
std::string_view KeyName(std::string_view key);

std::string RandomUid();
// A uid from `rng` (StoreOptions::uid_seed).
std::string UidFrom(std::mt19937_64& rng);
std::string RandomSuffix();

}  // namespace internal

}  // namespace copse::apiserver
