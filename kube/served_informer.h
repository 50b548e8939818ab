#pragma once
// ServedInformer: an informer of a resource that a server may serve in one
// of several versions, or not at all: PodDisruptionBudgets in policy/v1 or
// policy/v1beta1 (v1.20 has only the latter), KEP-4671 PodGroups only where
// scheduling.k8s.io/v1alpha2 is enabled, copse's CRDs only once installed.
//
//   1. Start(discovery) picks the first candidate the server serves and runs
//      an Informer on it.
//   2. None served: one log line names the group/version/resource and what
//      copse does without it (`without`). Then, unless wait_until_served, it
//      counts as synced with an empty store; with wait_until_served (CRDs
//      that may be installed later) it watches the first candidate anyway,
//      whose retries pick the resource up once it exists, and it counts as
//      synced meanwhile: nobody waits for a resource discovery says is not
//      there (its objects arrive through on_add once it is).
//   3. A 404 from the running informer reads discovery again (at most once
//      per rediscovery_interval). Another candidate served now: the informer
//      moves there (old objects get on_delete, the new list on_add). None
//      served and not wait_until_served: it stops, every object gets
//      on_delete, and it counts as synced (with the log line of step 2).
//   4. last_error() is the informer's last list/watch error; Describe() says
//      what it watches and whether it has synced (for logs and /readyz).
//
// Thread-safety: as Informer. Handlers run on the strand of the current
// informer; during a move the old one is stopped before the new one starts,
// so they never run two at once. Start/Stop/HasSynced/WaitForSync/Get/List/
// Describe are thread-safe.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "kube/informer.h"
#include "kube/object.h"

namespace copse::kube {

class Discovery;

struct ServedInformerOptions {
  // Preference order, e.g. {policy/v1 poddisruptionbudgets, policy/v1beta1 ...}.
  std::vector<ResourceRef> candidates;
  // What copse does without the resource, for the log line ("preemption
  // ignores PodDisruptionBudgets").
  std::string without;
  bool wait_until_served = false;
  std::chrono::milliseconds rediscovery_interval{10'000};
  // Template of every informer it runs (resource is set per candidate;
  // on_error is wrapped to keep the last error).
  InformerOptions informer;
  // Log lines; default: "copse: <line>" on stderr.
  std::function<void(const std::string&)> log;
};

class ServedInformer {
 public:
  ServedInformer(std::shared_ptr<Client> client, ServedInformerOptions options);
  ~ServedInformer();  // Stop()
  ServedInformer(const ServedInformer&) = delete;
  ServedInformer& operator=(const ServedInformer&) = delete;

  // Before Start().
  void AddEventHandler(EventHandler handler);
  // Steps 1-2. `discovery` null: discovery could not be read; the first
  // candidate is used and a 404 reads discovery again (step 3).
  void Start(const Discovery* discovery);
  void Stop();

  // Synced, or nothing to sync (no candidate served).
  bool HasSynced() const;
  bool WaitForSync(std::chrono::milliseconds timeout) const;
  // The resource watched now; nullopt when none is served.
  std::optional<ResourceRef> resource() const;
  std::optional<Error> last_error() const;
  // "policy/v1beta1 poddisruptionbudgets: not synced (last error: ...)".
  std::string Describe() const;
  // The current informer's LastResourceVersion ("" before Start or when absent).
  std::string LastResourceVersion() const;

  ObjectPtr Get(std::string_view ns, std::string_view name) const;
  std::vector<ObjectPtr> List() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// ServedInformer handing out std::shared_ptr<const T> (T as for TypedInformer).
template <typename T>
class TypedServedInformer {
 public:
  using Ptr = std::shared_ptr<const T>;

  TypedServedInformer(std::shared_ptr<Client> client, ServedInformerOptions options)
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

  void Start(const Discovery* discovery) { informer_.Start(discovery); }
  void Stop() { informer_.Stop(); }
  bool HasSynced() const { return informer_.HasSynced(); }
  bool WaitForSync(std::chrono::milliseconds timeout) const {
    return informer_.WaitForSync(timeout);
  }
  std::optional<ResourceRef> resource() const { return informer_.resource(); }
  std::optional<Error> last_error() const { return informer_.last_error(); }
  std::string Describe() const { return informer_.Describe(); }
  std::string LastResourceVersion() const { return informer_.LastResourceVersion(); }

  Ptr Get(std::string_view ns, std::string_view name) const {
    return Cast(informer_.Get(ns, name));
  }
  std::vector<Ptr> List() const {
    std::vector<Ptr> out;
    for (const auto& object : informer_.List()) out.push_back(Cast(object));
    return out;
  }

 private:
  static ServedInformerOptions WithDecoder(ServedInformerOptions options) {
    if (!options.informer.decoder) options.informer.decoder = TypedDecoder<T>();
    return options;
  }
  static Ptr Cast(const ObjectPtr& object) { return std::static_pointer_cast<const T>(object); }

  ServedInformer informer_;
};

}  // namespace copse::kube
