#pragma once
// Leader election on a coordination.k8s.io/v1 Lease, as client-go's
// leaderelection package (resourcelock LeaseLock):
//   1. Every retry_period, try to acquire or renew: read the Lease; create it
//      when absent; take it when we hold it or the holder's renewTime +
//      leaseDurationSeconds has passed (incrementing leaseTransitions);
//      otherwise wait. Writes are conditional on the resourceVersion, so two
//      candidates never both win.
//   2. On the first success: on_started_leading.
//   3. While leading, a renewal that has not succeeded for renew_deadline
//      means the lease may be lost: on_stopped_leading, and Run returns
//      (kube-scheduler exits then; the caller decides).
//   4. Stop() releases the lease (holderIdentity cleared) when held, as
//      client-go's ReleaseOnCancel.
//
// Thread-safety: Run blocks its calling thread; Stop may be called from any
// thread. Callbacks run on the Run thread.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "core/clock.h"
#include "core/result.h"

namespace copse::kube {

class Client;
class IoThread;

struct LeaderElectionOptions {
  std::string lease_namespace = "kube-system";
  std::string lease_name = "copse-scheduler";
  std::string identity;  // unique per candidate (hostname_uuid)
  std::chrono::milliseconds lease_duration{15'000};
  std::chrono::milliseconds renew_deadline{10'000};
  std::chrono::milliseconds retry_period{2'000};
  std::function<void()> on_started_leading;
  std::function<void()> on_stopped_leading;
};

class LeaderElector {
 public:
  // `io` runs the client's executor; both must outlive the elector.
  LeaderElector(std::shared_ptr<Client> client, IoThread& io, LeaderElectionOptions options);

  // Blocks until Stop() or the lease is lost (see above).
  void Run();
  void Stop();
  bool IsLeader() const { return leading_.load(); }

  // One acquire-or-renew attempt (step 1); true when we hold the lease after it.
  Result<bool> TryAcquireOrRenew();

 private:
  void Release();

  std::shared_ptr<Client> client_;
  IoThread& io_;
  LeaderElectionOptions options_;
  std::atomic<bool> leading_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
};

}  // namespace copse::kube
