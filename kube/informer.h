#pragma once
// Informers: a local, indexed, eventually consistent copy of one resource
// (optionally one namespace and selectors), kept current with list + watch,
// with add/update/delete notifications, as client-go's SharedIndexInformer.
//
// Algorithm (Informer::Start spawns it on a strand of the client's executor):
//   1. List, paginated (page_size); every page is decoded with the decoder
//      (default: DecodeUnstructured; TypedInformer<T> uses T::Decode).
//   2. Replace the store with the listed objects: objects that disappeared
//      get on_delete, new ones on_add, ones whose resourceVersion changed
//      on_update (client-go's Replace). HasSynced() turns true after the
//      first Replace.
//   3. Watch from the list's resourceVersion with bookmarks; apply each event
//      to the store, then call the handlers; remember the resourceVersion of
//      every event and bookmark.
//   4. When the stream ends cleanly (server timeout, CloseWatches) or times
//      out: watch again from the remembered resourceVersion.
//   5. On 410 Gone (the resourceVersion left the server's watch window, on
//      opening the watch or as an ERROR event): go to 1 at once.
//   6. On other errors (connection refused, server restart, 5xx, a stream
//      that ends without delivering anything): wait an exponential backoff
//      with jitter, then watch again from the remembered resourceVersion (or
//      list again if no list succeeded yet).
//
// Thread-safety: handlers and on_error run on the informer's strand, one at a
// time, after the store already reflects the event. The store (store(),
// Get/List/ByIndex) may be read from any thread under a shared lock; objects
// are immutable and shared (std::shared_ptr<const T>), so a pointer obtained
// stays valid after the store moves on. Start/Stop/HasSynced/WaitForSync are
// thread-safe. After Stop() returns no handler is running or will run, unless
// Stop() is called from a handler (then the current handler is the last).
// The client's io_context must outlive the informer.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/clock.h"
#include "core/result.h"
#include "kube/client.h"
#include "kube/object.h"

namespace copse::kube {

using ObjectPtr = std::shared_ptr<const KubeObject>;
// Turns an object's JSON into a KubeObject (or a subclass). Must be reentrant.
using Decoder = std::function<Result<std::shared_ptr<KubeObject>>(std::string_view json)>;
// Values an object is indexed under (none: not indexed).
using IndexFunction = std::function<std::vector<std::string>(const KubeObject&)>;
using Indexers = std::map<std::string, IndexFunction, std::less<>>;

// DecodeUnstructured (kube/codec.h) as a Decoder.
Decoder UnstructuredDecoder();

// The decoder of a typed object with `static Result<T> T::Decode(std::string_view)`.
// kKeepRaw false drops `raw`: for a cache that only reads the typed fields and
// never re-encodes an object (the scheduler's pods and nodes), so it does not
// hold a second copy of every object's JSON.
template <typename T, bool kKeepRaw = true>
Decoder TypedDecoder() {
  return [](std::string_view json) -> Result<std::shared_ptr<KubeObject>> {
    Result<T> decoded = T::Decode(json);
    if (!decoded.ok()) return std::move(decoded).error();
    auto object = std::make_shared<T>(std::move(decoded).value());
    if constexpr (!kKeepRaw) object->raw = std::string();
    return std::shared_ptr<KubeObject>(std::move(object));
  };
}

template <typename T>
Decoder TypedDecoderWithoutRaw() {
  return TypedDecoder<T, false>();
}

// An indexed object cache keyed "namespace/name" (or "name" when
// cluster-scoped), as client-go's cache.Indexer. The index "namespace" (by
// metadata.namespace) always exists; more come from the constructor.
//
// Thread-safety: readers take a shared lock and may run on any thread;
// writers (the informer) take it exclusively.
class Indexer {
 public:
  static constexpr std::string_view kNamespaceIndex = "namespace";

  explicit Indexer(Indexers indexers = {});

  ObjectPtr Get(std::string_view key) const;
  ObjectPtr Get(std::string_view ns, std::string_view name) const;
  std::vector<ObjectPtr> List() const;
  std::vector<std::string> ListKeys() const;
  // Objects indexed under `value` by the index named `index`; empty for an unknown index.
  std::vector<ObjectPtr> ByIndex(std::string_view index, std::string_view value) const;
  // The values an index currently holds.
  std::vector<std::string> IndexValues(std::string_view index) const;
  size_t size() const;
  // Calls fn(const ObjectPtr&) for every object under the shared lock; fn
  // must not call back into the store's writers.
  void ForEach(const std::function<void(const ObjectPtr&)>& fn) const;

  // Writers (used by Informer; public so caches can be built in tests).
  // Inserts or replaces by meta.Key(); returns the previous object or null.
  ObjectPtr Upsert(ObjectPtr object);
  // Removes by key; returns the removed object or null.
  ObjectPtr Remove(std::string_view key);

 private:
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept {
      return std::hash<std::string_view>{}(s);
    }
  };
  using KeySet = std::unordered_set<std::string, StringHash, std::equal_to<>>;
  struct Index {
    IndexFunction function;  // null for the built-in namespace index
    std::unordered_map<std::string, KeySet, StringHash, std::equal_to<>> values;
  };
  // Moves `key` from the index values of `before` to those of `after` (either may be null).
  void ReindexLocked(const std::string& key, const KubeObject* before, const KubeObject* after);

  mutable std::shared_mutex mu_;
  std::unordered_map<std::string, ObjectPtr, StringHash, std::equal_to<>> items_;
  std::map<std::string, Index, std::less<>> indexes_;
};

// Exponential backoff with jitter, as client-go's
// wait.NewExponentialBackoffManager: delays grow initial, initial*factor, ...
// up to `max`; each delay gets up to jitter*delay added at random; after
// `reset_after` without a Next() call the delay starts at `initial` again.
struct BackoffOptions {
  std::chrono::milliseconds initial{800};
  std::chrono::milliseconds max{30'000};
  double factor = 2.0;
  double jitter = 1.0;  // 0: none; 1: up to +100%
  std::chrono::milliseconds reset_after{120'000};
};

// Thread-safety: not thread-safe (one owner).
class Backoff {
 public:
  // `random` returns uniform values in [0, 1); `clock` must outlive the Backoff.
  Backoff(BackoffOptions options, const Clock& clock, std::function<double()> random);
  // The delay to wait before the next attempt.
  Clock::Duration Next();
  void Reset();

 private:
  BackoffOptions options_;
  const Clock& clock_;
  std::function<double()> random_;
  Clock::Duration current_;
  Clock::TimePoint last_{};
  bool has_last_ = false;
};

struct EventHandler {
  std::function<void(const ObjectPtr& object)> on_add;
  std::function<void(const ObjectPtr& old_object, const ObjectPtr& new_object)> on_update;
  // `object` is the final state from a DELETED event, or the last known state
  // when a relist found the object gone (client-go's DeletedFinalStateUnknown).
  std::function<void(const ObjectPtr& object)> on_delete;
};

struct InformerOptions {
  ResourceRef resource;
  std::string namespace_;  // "": all namespaces (ignored for cluster-scoped resources)
  std::string label_selector;
  std::string field_selector;
  int64_t page_size = 500;  // list page size; 0: unpaginated
  Decoder decoder;          // default: UnstructuredDecoder()
  Indexers indexers;        // extra indexes next to "namespace"
  BackoffOptions backoff;
  std::shared_ptr<const Clock> clock;  // backoff timing; default RealClock
  std::function<double()> random;      // uniform [0, 1); default: seeded std::mt19937_64
  // Each watch asks the server to end the stream after a random time in
  // [watch_timeout, 2*watch_timeout), as client-go's reflector does.
  std::chrono::seconds watch_timeout{300};
  std::chrono::milliseconds list_timeout{0};  // per page; 0: the client's default
  // Called on the informer's strand for every list/watch/decode error.
  std::function<void(const Error&)> on_error;
};

struct InformerStats {
  uint64_t lists = 0;    // complete (re)lists
  uint64_t watches = 0;  // watch streams opened
  uint64_t events = 0;   // watch events applied (bookmarks excluded)
  uint64_t bookmarks = 0;
  uint64_t gone = 0;    // 410 Gone seen (each forces a relist)
  uint64_t errors = 0;  // errors reported to on_error
};

class Informer {
 public:
  Informer(std::shared_ptr<Client> client, InformerOptions options);
  ~Informer();  // Stop()
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  // Handlers must be added before Start().
  void AddEventHandler(EventHandler handler);
  // Starts list+watch on a strand of the client's executor. Once only.
  void Start();
  // Stops watching; see the thread-safety note above. Idempotent.
  void Stop();

  bool HasSynced() const;
  // Blocks until synced, stopped or the timeout; true when synced. Must not be
  // called on the informer's strand.
  bool WaitForSync(std::chrono::milliseconds timeout) const;

  const Indexer& store() const;
  // The resourceVersion the next watch would start from; a watch event's is
  // set after its handlers ran.
  std::string LastResourceVersion() const;
  InformerStats stats() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// An Informer of one typed kind T (a KubeObject with static Result<T>
// T::Decode(std::string_view)), handing out std::shared_ptr<const T>.
template <typename T>
class TypedInformer {
 public:
  using Ptr = std::shared_ptr<const T>;

  // options.decoder defaults to TypedDecoder<T>(); a custom one must produce T.
  TypedInformer(std::shared_ptr<Client> client, InformerOptions options)
      : informer_(std::move(client), WithDecoder(std::move(options))) {}

  void AddEventHandler(std::function<void(const Ptr&)> on_add,
                       std::function<void(const Ptr&, const Ptr&)> on_update,
                       std::function<void(const Ptr&)> on_delete) {
    EventHandler handler;
    if (on_add) handler.on_add = [f = std::move(on_add)](const ObjectPtr& o) { f(Cast(o)); };
    if (on_update) {
      handler.on_update = [f = std::move(on_update)](const ObjectPtr& a, const ObjectPtr& b) {
        f(Cast(a), Cast(b));
      };
    }
    if (on_delete)
      handler.on_delete = [f = std::move(on_delete)](const ObjectPtr& o) { f(Cast(o)); };
    informer_.AddEventHandler(std::move(handler));
  }

  void Start() { informer_.Start(); }
  void Stop() { informer_.Stop(); }
  bool HasSynced() const { return informer_.HasSynced(); }
  bool WaitForSync(std::chrono::milliseconds timeout) const {
    return informer_.WaitForSync(timeout);
  }

  Ptr Get(std::string_view key) const { return Cast(informer_.store().Get(key)); }
  Ptr Get(std::string_view ns, std::string_view name) const {
    return Cast(informer_.store().Get(ns, name));
  }
  std::vector<Ptr> List() const { return CastAll(informer_.store().List()); }
  std::vector<Ptr> ByIndex(std::string_view index, std::string_view value) const {
    return CastAll(informer_.store().ByIndex(index, value));
  }

  Informer& informer() { return informer_; }
  const Informer& informer() const { return informer_; }

 private:
  static InformerOptions WithDecoder(InformerOptions options) {
    if (!options.decoder) options.decoder = TypedDecoder<T>();
    return options;
  }
  static Ptr Cast(const ObjectPtr& object) { return std::static_pointer_cast<const T>(object); }
  static std::vector<Ptr> CastAll(const std::vector<ObjectPtr>& objects) {
    std::vector<Ptr> out;
    out.reserve(objects.size());
    for (const auto& object : objects) out.push_back(Cast(object));
    return out;
  }

  Informer informer_;
};

}  // namespace copse::kube
