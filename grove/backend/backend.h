#pragma once
// GREP-375's scheduler backend framework: the SchedulerBackend interface
// every backend implements (kube-scheduler, kai-scheduler, copse-scheduler).
//
// Lifecycle hooks, in the order a workload meets them:
//   1. ValidatePodCliqueSet  at admission (webhook / embedded admission)
//   2. SyncPodGang           when a PodGang is created or its spec changes
//                            (the backend controller; status-only updates
//                            are ignored): create/update scheduler CRs
//   3. PreparePod            right before the PodClique controller creates a
//                            pod: schedulerName, labels, annotations
//   4. OnPodGangDelete       when a PodGang is deleted
//
// Thread-safety: every method may be called concurrently from several
// controller workers; implementations keep no unsynchronised mutable state.
// SyncPodGang/OnPodGangDelete/Init may block on API calls (they run on
// controller worker threads, never on the client's I/O threads).

#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/result.h"
#include "grove/api/types.h"

namespace copse::kube {
class Client;
}

namespace copse::grove::backend {

// Backend names (SchedulerProfile.name) and the pod-facing schedulerName each answers to.
inline constexpr std::string_view kKubeScheduler = "kube-scheduler";
inline constexpr std::string_view kKaiScheduler = "kai-scheduler";
inline constexpr std::string_view kCopseScheduler = "copse-scheduler";
inline constexpr std::string_view kDefaultSchedulerName = "default-scheduler";

// What a backend may use: the API (writes of its own CRs) and ClusterTopologyBindings.
struct BackendContext {
  std::shared_ptr<kube::Client> client;
  std::shared_ptr<const Clock> clock;
  // The ClusterTopologyBinding named `name` (nullopt when absent); may be unset.
  std::function<std::optional<api::ClusterTopologyBinding>(std::string_view name)> topology;
};

// The outcome of ValidatePodCliqueSet: an error rejects the PodCliqueSet
// ("fail submit"); otherwise `ignored` lists requested features the backend
// does not honour ("pass through"): the PodCliqueSet is admitted and its
// status carries a SchedulingFeaturesIgnored condition with these messages.
struct Admission {
  std::vector<std::string> ignored;
};

class SchedulerBackend {
 public:
  virtual ~SchedulerBackend() = default;

  // The backend's name ("kube-scheduler"), unique among backends.
  virtual std::string_view Name() const = 0;
  // The schedulerName of pods this backend schedules ("default-scheduler").
  virtual std::string_view SchedulerName() const = 0;
  // One-time setup at operator start-up (e.g. check the scheduler's CRDs are served).
  virtual Status Init() = 0;
  // Creates or updates the scheduler's own objects for `gang`. Idempotent.
  virtual Status SyncPodGang(const api::PodGang& gang) = 0;
  // Cleans up for a deleted PodGang (a no-op when owner references do it).
  virtual Status OnPodGangDelete(const api::PodGang& gang) = 0;
  // Adds scheduler-specific settings to a pod about to be created. The pod
  // already carries grove's labels (grove.io/podgang, grove.io/podclique, ...).
  virtual Status PreparePod(nlohmann::json& pod) const = 0;
  // Admission check of a (defaulted) PodCliqueSet.
  virtual Result<Admission> ValidatePodCliqueSet(const api::PodCliqueSet& pcs) const = 0;
};

}  // namespace copse::grove::backend
