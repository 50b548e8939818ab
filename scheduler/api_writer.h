#pragma once
// ApiWriter: every write the scheduler makes to the API server — binds, pod
// status patches (PodScheduled, nominatedNodeName, DisruptionTarget), victim
// deletions and Events — issued asynchronously on the client's executor so
// the scheduling loop never waits on the network.
//
// Contracts:
//   - Bind/Delete call `done` exactly once, on the client's executor.
//   - Status patches are strategic-merge patches of pods/status, so other
//     conditions are kept (kube's util.PatchPodStatus).
//   - Events are best effort, as in Kubernetes: at most `max_events_in_flight`
//     requests at once, at most `max_queued_events` waiting; beyond that they
//     are dropped and counted. They yield to binds: an event is sent only
//     once no bind has been queued, in flight or finished for `event_quiet`
//     (binds come in waves, one per cycle: a gap between two waves is not
//     the end of a burst), or once it has waited `max_event_defer` (so a
//     steady stream of binds delays events by at most that). During a burst
//     the API server's time goes to binding.
//   - At most `max_binds_in_flight` binds are sent at once; the others wait
//     in FIFO order inside the writer, and a bind's timeout starts when it is
//     sent (a burst of thousands of binds must not time out in the client's
//     connection queue, which only turns them into binds of unknown outcome).
//   - Patches of one object (a pod's status, a PodGroup's status or
//     metadata) are sent one at a time, in the order they were made: two in
//     flight at once could land in either order (on separate or pipelined
//     connections) and leave the older one in place.
//   - Drain waits until nothing is in flight or queued (or the deadline passes).
//
// Thread-safety: every method may be called from any thread.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/clock.h"
#include "core/result.h"

namespace copse::kube {
class Client;
struct ResourceRef;
}  // namespace copse::kube

namespace copse::scheduler {

struct ApiWriterOptions {
  std::string component = "copse-scheduler";  // Event source / reportingComponent
  size_t max_events_in_flight = 8;
  size_t max_queued_events = 10'000;
  std::chrono::milliseconds max_event_defer{1'000};
  std::chrono::milliseconds event_quiet{20};
  bool record_events = true;
  std::chrono::milliseconds bind_timeout{30'000};
  size_t max_binds_in_flight = 128;
  // The time written into conditions and events (WallNow); null: the real
  // clock. Pacing (event_quiet, max_event_defer) runs on real time: it
  // spaces out requests to a real server.
  const Clock* clock = nullptr;
};

struct PodId {
  std::string namespace_name;
  std::string name;
  std::string uid;
};

// A PodScheduled (or other) pod condition to write.
struct PodConditionUpdate {
  std::string type = "PodScheduled";
  std::string status = "False";
  std::string reason;
  std::string message;
};

struct ApiWriterStats {
  uint64_t binds_ok = 0;
  uint64_t binds_failed = 0;
  uint64_t status_patches = 0;
  uint64_t status_patch_errors = 0;
  uint64_t events_sent = 0;
  uint64_t events_dropped = 0;
  uint64_t deletes = 0;
  size_t in_flight = 0;     // requests sent or queued
  size_t binds_queued = 0;  // binds waiting for a free slot
};

class ApiWriter {
 public:
  ApiWriter(std::shared_ptr<kube::Client> client, ApiWriterOptions options);
  ~ApiWriter();
  ApiWriter(const ApiWriter&) = delete;
  ApiWriter& operator=(const ApiWriter&) = delete;

  // POST pods/NAME/binding (conditional on the uid).
  void Bind(PodId pod, std::string node, std::function<void(Status)> done);
  // GETs the pod and reports its spec.nodeName ("" while unbound); kNotFound
  // when it is gone or was recreated under another uid. Used to settle a bind
  // whose outcome is unknown (timed out, connection lost, 409).
  void GetPodNodeName(PodId pod, std::function<void(Result<std::string>)> done);
  // Patches status: `condition` (if any) and nominatedNodeName (nullopt: leave,
  // "": clear).
  void PatchPodStatus(PodId pod, std::optional<PodConditionUpdate> condition,
                      std::optional<std::string> nominated_node);
  // Preemption: marks the victim with DisruptionTarget (reason
  // PreemptionByScheduler, or `reason`: GangBelowMinimum for a broken
  // gang's members), then deletes it (uid precondition).
  void PreemptVictim(PodId victim, std::string preemptor_message, std::function<void(Status)> done,
                     std::string_view reason = "PreemptionByScheduler");
  // A core/v1 Event about a pod ("Normal"/"Warning").
  void RecordPodEvent(const PodId& pod, std::string_view type, std::string_view reason,
                      std::string message);
  // Generic event (PodGroups etc.): involvedObject fields given explicitly.
  void RecordEvent(std::string api_version, std::string kind, PodId object, std::string_view type,
                   std::string_view reason, std::string message);

  // A JSON merge patch of any object (subresource "" or e.g. "status");
  // failures are counted in status_patch_errors.
  void MergePatch(const kube::ResourceRef& resource, std::string ns, std::string name,
                  std::string body, std::string subresource);

  bool Drain(std::chrono::milliseconds timeout);
  ApiWriterStats stats() const;

  struct Impl;  // implementation detail (api_writer.cc)

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace copse::scheduler
