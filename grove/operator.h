#pragma once
// The Grove backend of copse as one object: informers for every kind grove
// manages, the scheduler backend manager, and five controllers -
// PodCliqueSet, PodCliqueScalingGroup, PodClique, the backend (PodGang)
// controller - wired by informer events. It talks to the API server only
// through the kube::Client it is given, exactly as a separate process would.
//
//   kube::IoThread io(2);
//   auto client = kube::Client::Create(config, io.executor()).value();
//   grove::OperatorOptions options;            // copse-scheduler is the default backend
//   auto op = grove::Operator::Start(client, options);   // waits for the caches
//   ...
//   op.value()->Stop();                        // before `client` and `io` go away
//
// Start():
//   1. optionally installs the CRDs of deploy/crds/grove (install_crds);
//   2. initialises the scheduler backends from options.scheduler
//      (OperatorConfiguration rules of spec 000; invalid config is kInvalid);
//   3. starts the informers and waits (sync_timeout) until they have listed
//      everything - kUnavailable names the kind that did not sync (typically
//      a CRD that is not installed);
//   4. starts the controllers' workers.
// Admission (Validate*) is the same check the validating webhook serves
// (grove/webhook) and the embedded API server calls.
//
// Thread-safety: Start/Stop from one owner thread; everything else may be
// called from any thread. The client's io_context must keep running until
// Stop() returns.

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/result.h"
#include "grove/api/types.h"
#include "grove/backend/manager.h"
#include "kube/client.h"

namespace copse::grove {

struct OperatorOptions {
  OperatorOptions() = default;  // not an aggregate (kube/client.h's GCC 12 note)
  // Namespace to watch; "" watches all namespaces.
  std::string namespace_;
  // OperatorConfiguration.scheduler; copse ships copse-scheduler as the default.
  backend::SchedulerConfiguration scheduler = backend::CopseConfiguration();
  // Image of the startup-order init container (runs `copse initc`).
  std::string initc_image = "ghcr.io/copse-dev/copse:latest";
  int workers = 4;  // per controller
  // Condition timestamps, terminationDelay and requeue timers (informers back
  // off on real time). Default: RealClock.
  std::shared_ptr<const Clock> clock;
  bool install_crds = false;
  std::chrono::milliseconds sync_timeout{30'000};
  int log_level = 0;  // core/log.h verbosity
  // Registers extra (or replacement) backend factories after the built-in
  // ones: third-party backends, or wrappers in tests.
  std::function<void(backend::Registry&)> register_backends;
};

struct OperatorStats {
  uint64_t reconciles = 0;
  uint64_t errors = 0;
};

class Operator {
 public:
  static Result<std::unique_ptr<Operator>> Start(std::shared_ptr<kube::Client> client,
                                                 OperatorOptions options);
  ~Operator();  // Stop()
  Operator(const Operator&) = delete;
  Operator& operator=(const Operator&) = delete;

  // Stops controllers, then informers. Idempotent.
  void Stop();
  bool HasSynced() const;
  // True when no controller has work queued, delayed or in progress.
  bool Idle() const;
  OperatorStats stats() const;
  const backend::BackendManager& backends() const;

  // Admission of a PodCliqueSet create (old_json empty) or update, as the
  // validating webhook does it: defaulting, validation, the backend's
  // ValidatePodCliqueSet. The error names the fields at fault.
  Result<backend::Admission> ValidatePodCliqueSet(std::string_view json,
                                                  std::string_view old_json = {}) const;

 private:
  struct Impl;
  explicit Operator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace copse::grove
