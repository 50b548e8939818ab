#pragma once
// A kubelet stand-in for the embedded API server, in the spirit of KWOK: it
// watches pods and nodes in the Store (in-process, no HTTP) and plays the
// part of every node's kubelet so that controllers see a realistic pod
// lifecycle:
//   1. A pod bound to an existing node (spec.nodeName set, not terminating,
//      not yet Running) becomes Running after `pod_start_delay`: phase
//      Running, hostIP (the node's InternalIP), podIP, startTime,
//      containerStatuses (running, ready), conditions
//      PodReadyToStartContainers/Initialized/ContainersReady/Ready=True.
//   2. A bound pod being deleted gracefully (deletionTimestamp set) is
//      removed (delete with gracePeriodSeconds=0) when its grace period
//      ends, or after `max_termination_delay` if that is shorter.
//   3. PodDisruptionBudgets get the status kube's disruption controller
//      writes (expectedPods, currentHealthy, desiredHealthy,
//      disruptionsAllowed, observedGeneration, condition DisruptionAllowed),
//      recomputed for namespaces whose pods or budgets changed, at most
//      every `disruption_resync` of real time.
//   2b. A Running pod annotated `copse.dev/simulate-run-for: <Go duration>`
//      ("30s", "1m30s", "500ms") ends that long after its startTime: phase
//      Succeeded, or Failed when `copse.dev/simulate-exit-code` is non-zero
//      (default 0); every container terminated with that exit code (reason
//      Completed or Error), Ready and ContainersReady False (PodCompleted).
//      The pod ends whatever its restartPolicy: the annotation models a pod
//      that finishes (Jobs complete, gangs end), not container restarts.
//      Pods without the annotation run until deleted.
//   4. Nodes get Ready=True (and the pressure conditions False) when they
//      have no Ready condition; with `node_heartbeat_interval` > 0 their
//      Ready condition's lastHeartbeatTime is refreshed that often.
// Time comes from the Store's clock (inject a FakeClock there); the thread
// re-checks the clock every `poll_interval` of real time and whenever the
// watches deliver events.
//
// Thread-safety: Start/Stop/CreateNodes may be called from any thread; the
// simulator runs its own thread between Start and Stop.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "apiserver/simulated_lifetime.h"
#include "apiserver/store.h"
#include "core/result.h"

namespace copse::apiserver {

struct NodeSimulatorOptions {
  std::chrono::milliseconds pod_start_delay{1000};
  std::chrono::milliseconds max_termination_delay = std::chrono::milliseconds::max();
  std::chrono::milliseconds node_heartbeat_interval{0};  // 0: no heartbeats
  std::chrono::milliseconds poll_interval{10};
  bool manage_disruption_budgets = true;
  std::chrono::milliseconds disruption_resync{100};
};

class NodeSimulator {
 public:
  explicit NodeSimulator(std::shared_ptr<Store> store, NodeSimulatorOptions options = {});
  ~NodeSimulator();  // Stop()
  NodeSimulator(const NodeSimulator&) = delete;
  NodeSimulator& operator=(const NodeSimulator&) = delete;

  void Start();
  void Stop();  // idempotent

  // Creates v1 Node objects (JSON texts, e.g. from MakeSyntheticNodes).
  // Stops at the first failure and returns it.
  Status CreateNodes(const std::vector<std::string>& node_jsons);

  // Bound pods whose start has been timed (their delay runs from then).
  uint64_t pods_awaiting_start() const { return pods_awaiting_start_.load(); }
  uint64_t pods_started() const { return pods_started_.load(); }
  uint64_t pods_removed() const { return pods_removed_.load(); }
  // Pods ended by their simulated lifetime (Succeeded or Failed).
  uint64_t pods_finished() const { return pods_finished_.load(); }

 private:
  struct State;
  void Run();

  std::shared_ptr<Store> store_;
  NodeSimulatorOptions options_;
  std::unique_ptr<State> state_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool wake_ = false;
  bool running_ = false;
  std::atomic<uint64_t> pods_awaiting_start_{0};
  std::atomic<uint64_t> pods_started_{0};
  std::atomic<uint64_t> pods_removed_{0};
  std::atomic<uint64_t> pods_finished_{0};
};

}  // namespace copse::apiserver
