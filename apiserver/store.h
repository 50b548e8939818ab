#pragma once
// Store: the data of the embedded API server (what etcd plus kube-apiserver's
// registry and watch cache are upstream), usable in-process without HTTP.
//
//   - Objects are kept as serialized JSON text, one immutable ObjectVersion
//     per version (shared_ptr), so get/list/watch only copy pointers and
//     strings; JSON is parsed only to mutate an object.
//   - One resourceVersion counter for the whole store; every write gets the
//     next value. Per resource: a sorted map key -> current version ("ns/name"
//     or "name", the order of etcd keys, used for lists and pagination) and a
//     bounded history of events (StoreOptions::watch_history) for resuming
//     watches; older resourceVersions get 410 Gone.
//   - Objects come out in the version asked for (ResourceRef::version):
//     the Workload API's kinds are stored in one version and converted
//     (apiserver/scheduling_api.h); other kinds are stored as written.
//   - Writes follow kube-apiserver: create (generateName, uid,
//     creationTimestamp, generation, namespace lifecycle, pod priority),
//     optimistic concurrency on update, status/scale subresources, graceful
//     pod deletion, finalizers, preconditions, propagation policies and the
//     garbage collector (run synchronously at the write that removes an
//     owner), pods/binding, pods/eviction with PodDisruptionBudgets,
//     CustomResourceDefinitions that register and unregister resources.
//   - Updates run kube's GuaranteedUpdate loop: read the current version,
//     parse and edit outside the lock, commit only if the object did not
//     change meanwhile, else retry. No-op updates do not bump the version.
//
// Errors are copse::Error with http_status and reason set as kube-apiserver
// answers (404 NotFound `pods "x" not found`, 409 Conflict/AlreadyExists,
// 410 Expired, 422 Invalid, 429 TooManyRequests, 400 BadRequest, ...).
//
// Thread-safety: every method is safe to call from any thread. One internal
// mutex guards the maps; JSON parsing and patching happen outside it.
// WatchStream's notify callback runs with that mutex held: it must only
// signal (post to an executor, notify a condition variable) and return.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "apiserver/apiserver.h"
#include "apiserver/resource_info.h"
#include "apiserver/selector.h"
#include "core/clock.h"
#include "core/labels.h"
#include "core/result.h"
#include "kube/object.h"

namespace copse::apiserver {

// The API server speaks kube/'s resource names.
using kube::ResourceRef;
namespace resources = kube::resources;

// One immutable version of an object, with the metadata selectors and the
// lifecycle logic need, extracted when the version was written. (A field
// added here must also be copied by internal::CopyMetadata in store.cc.)
struct ObjectVersion {
  std::string json;         // the object as served (compact JSON)
  std::string api_version;  // as stored
  std::string ns;
  std::string name;
  std::string uid;
  uint64_t rv = 0;
  Labels labels;
  std::vector<std::string> fields;      // ResourceInfo::field_selectors values
  std::vector<std::string> owner_uids;  // metadata.ownerReferences[].uid
  bool deleting = false;                // metadata.deletionTimestamp set
  bool has_finalizers = false;
  bool pod_ready = false;     // pods: condition Ready=True
  bool pod_terminal = false;  // pods: phase Succeeded or Failed
  std::string node_name;      // pods: spec.nodeName
};
using ObjectPtr = std::shared_ptr<const ObjectVersion>;

enum class WatchEventType : uint8_t { kAdded, kModified, kDeleted, kBookmark, kError };
std::string_view WatchEventTypeName(WatchEventType type) noexcept;

struct WatchEvent {
  WatchEventType type = WatchEventType::kAdded;
  // The object; for a DELETED sent because the object left the watcher's
  // selection it is the previous version (whose rv is older than `rv`).
  ObjectPtr object;
  uint64_t rv = 0;  // the event's resourceVersion
};

struct ListOptions {
  std::string ns;              // empty: all namespaces (or cluster-scoped)
  std::string label_selector;  // string form
  std::string field_selector;  // string form
  int64_t limit = 0;           // 0: no limit
  std::string continue_token;  // from a previous ListResult
};

struct ListResult {
  std::vector<ObjectPtr> items;
  uint64_t resource_version = 0;
  std::string continue_token;    // empty on the last page
  int64_t remaining_items = -1;  // -1 unknown (with selectors)
};

struct WatchOptions {
  std::string ns;
  std::string label_selector;
  std::string field_selector;
  // Unset or 0: synthetic ADDED events for the current state first, then
  // changes. N: every change after N (410 Gone if N left the history).
  std::optional<uint64_t> resource_version;
};

struct DeleteOptions {
  std::optional<int64_t> grace_period_seconds;
  std::string propagation_policy;  // "", "Background", "Foreground", "Orphan"
  std::string precondition_uid;
  std::string precondition_resource_version;
  bool dry_run = false;
};

struct DeleteResult {
  ObjectPtr object;      // the object as deleted, or as it is while terminating
  bool removed = false;  // false: deletion started (grace period, finalizers)
};

enum class PatchType : uint8_t { kJson, kMerge, kStrategicMerge };

// Where a persistent Store sends its committed writes (apiserver/commit_log.h
// is the one implementation). The Store's one hook into persistence.
class CommitSink {
 public:
  virtual ~CommitSink() = default;
  // Every committed write, in resourceVersion order, with the Store lock held:
  // must only queue (no I/O except a rare bounded flush). `object` is the new
  // version (kAdded/kModified) or the final one (kDeleted).
  virtual void Committed(const ResourceInfo& info, WatchEventType type,
                         const ObjectPtr& object) = 0;
  // Blocks until every write up to `rv` is on disk. Called without the lock,
  // by the thread that made the write, before the write returns.
  virtual void AwaitDurable(uint64_t rv) = 0;
};

// An object read back from a data directory, for Store::Restore.
struct RestoredObject {
  std::string group_resource;  // "group/resource" ("/pods" for core)
  std::string json;            // as served, with its resourceVersion
};

// A watch on one resource. Events are queued by the Store as writes commit
// (already filtered by namespace and selectors) and taken by the consumer.
class WatchStream {
 public:
  ~WatchStream();
  WatchStream(const WatchStream&) = delete;
  WatchStream& operator=(const WatchStream&) = delete;

  // Moves the pending events to `out` (appending, in resourceVersion order),
  // their objects in the version the watch asked for. Returns false once the
  // stream is closed: the events moved out by that call are the last ones.
  bool Take(std::vector<WatchEvent>* out);
  // Called (with the Store lock held; must only signal) when events arrive
  // while none were pending, and when the stream closes. Replaces any
  // previous callback; called once immediately if events are pending.
  void SetNotify(std::function<void()> notify);
  // Stops delivery (the Store drops the stream at its next write) and
  // signals the consumer; idempotent.
  void Close();
  bool closed() const;
  std::shared_ptr<const ResourceInfo> resource() const { return resource_; }
  // For a stream that failed to start (410 Gone), the error; else ok.
  const Status& error() const { return error_; }

 private:
  friend class Store;
  struct Filter;
  WatchStream() = default;
  void Push(const WatchEvent& event);  // Store lock held
  void CloseLocked();                  // Store lock held

  std::shared_ptr<const ResourceInfo> resource_;
  std::string version_;  // the version the watcher asked for
  std::weak_ptr<Store> store_;
  std::unique_ptr<Filter> filter_;
  mutable std::mutex mu_;
  std::vector<WatchEvent> pending_;
  std::function<void()> notify_;
  bool closed_ = false;
  bool notified_ = false;
  size_t max_pending_ = 0;
  Status error_;
};

class Store : public std::enable_shared_from_this<Store> {
 public:
  explicit Store(StoreOptions options);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // --- registry ---
  // The served resource for group/version/resource (plural, or a short name
  // is NOT accepted here: URLs use plurals). 404 NotFound when not served.
  Result<std::shared_ptr<const ResourceInfo>> Resolve(std::string_view group,
                                                      std::string_view version,
                                                      std::string_view resource) const;
  std::vector<std::shared_ptr<const ResourceInfo>> Resources() const;
  // Bumped whenever the set of served resources changes (CRDs).
  uint64_t registry_generation() const;
  const Clock& clock() const { return *clock_; }

  // --- reads ---
  Result<ObjectPtr> Get(const ResourceRef& ref, std::string_view ns, std::string_view name) const;
  Result<ListResult> List(const ResourceRef& ref, const ListOptions& options) const;
  Result<std::shared_ptr<WatchStream>> Watch(const ResourceRef& ref, const WatchOptions& options);
  uint64_t CurrentResourceVersion() const;
  // Objects of a resource (all namespaces), without building a list.
  size_t Count(const ResourceRef& ref) const;

  // --- writes --- (`ns` is the URL's namespace; ignored for cluster-scoped)
  // `field_manager` (?fieldManager=): the write is recorded in
  // metadata.managedFields as that manager's Update (apiserver/apply.h
  // RecordUpdate); empty: ownership is left as it is (writes without a named
  // manager, such as copse's own controllers', are not tracked).
  Result<ObjectPtr> Create(const ResourceRef& ref, std::string_view ns, std::string_view body,
                           bool dry_run = false, std::string_view field_manager = {});
  Result<ObjectPtr> CreateFromJson(const ResourceRef& ref, std::string_view ns, nlohmann::json obj,
                                   bool dry_run = false, std::string_view field_manager = {});
  // PUT. `subresource` is "" or "status".
  Result<ObjectPtr> Update(const ResourceRef& ref, std::string_view ns, std::string_view name,
                           std::string_view body, std::string_view subresource = {},
                           bool dry_run = false, std::string_view field_manager = {});
  Result<ObjectPtr> Patch(const ResourceRef& ref, std::string_view ns, std::string_view name,
                          PatchType type, std::string_view patch, std::string_view subresource = {},
                          bool dry_run = false, std::string_view field_manager = {});
  // In-process read-modify-write: `edit` changes the parsed current object;
  // returning an error aborts. Subresource rules apply as for Update.
  Result<ObjectPtr> Mutate(const ResourceRef& ref, std::string_view ns, std::string_view name,
                           std::string_view subresource,
                           const std::function<Status(nlohmann::json&)>& edit);
  Result<DeleteResult> Delete(const ResourceRef& ref, std::string_view ns, std::string_view name,
                              const DeleteOptions& options = {});
  // DELETE on a collection: deletes every matching object; returns them.
  Result<ListResult> DeleteCollection(const ResourceRef& ref, const ListOptions& list,
                                      const DeleteOptions& options = {});

  // POST pods/binding (a v1 Binding): sets spec.nodeName and PodScheduled=True.
  Status Bind(std::string_view ns, std::string_view name, std::string_view binding_json);
  // POST pods/eviction (a policy/v1 Eviction), honouring PodDisruptionBudgets.
  Status Evict(std::string_view ns, std::string_view name, std::string_view eviction_json);
  // The scale subresource as an autoscaling/v1 Scale (JSON text).
  Result<std::string> GetScale(const ResourceRef& ref, std::string_view ns,
                               std::string_view name) const;
  Result<std::string> UpdateScale(const ResourceRef& ref, std::string_view ns,
                                  std::string_view name, std::string_view scale_json);

  // Ends every open watch stream (consumers see a closed stream).
  void CloseWatches();

  // --- persistence (apiserver/commit_log.h) ---
  // Installs objects read back from disk into an empty Store (no watch events,
  // no admission), CRDs first so their resources are served, and continues
  // resourceVersions after `rv`. Watches from an older resourceVersion get
  // 410 Gone (the history did not survive). Errors name the object.
  Status Restore(std::vector<RestoredObject> objects, uint64_t rv);
  // From now on every committed write goes to `sink`, and a write returns
  // only once the sink has it on disk. Set once, before the Store is shared.
  void SetCommitSink(std::shared_ptr<CommitSink> sink);

 private:
  struct Impl;
  struct UpdateMode {
    bool status_only = false;     // /status: only status changes are kept
    bool protect_status = false;  // main resource: status changes are dropped
    bool bump_generation = false;
    bool validate = true;
    std::string_view field_manager;  // record the write as this manager's Update
  };
  using EditFn = std::function<Status(const ObjectVersion& cur, const nlohmann::json& old_obj,
                                      nlohmann::json& new_obj)>;
  // kube's GuaranteedUpdate: see the class comment.
  Result<ObjectPtr> UpdateLoop(const ResourceRef& ref, std::string_view ns, std::string_view name,
                               UpdateMode mode, const EditFn& edit, bool dry_run);

  // Declared before a write's lock: on destruction (lock released) waits
  // until the writes this thread committed meanwhile are durable.
  class DurableAck;

  std::unique_ptr<Impl> impl_;
  std::shared_ptr<const Clock> clock_;
  friend class WatchStream;
};

}  // namespace copse::apiserver
