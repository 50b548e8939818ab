#pragma once
// client-go credential plugins (kubeconfig users[].user.exec), as EKS
// (`aws eks get-token`), GKE (`gke-gcloud-auth-plugin`) and AKS (`kubelogin`)
// kubeconfigs use them: the plugin is run with KUBERNETES_EXEC_INFO (an
// ExecCredential request, interactive false, plus the cluster when
// provideClusterInfo) and prints an ExecCredential of the same apiVersion
// whose status.token is the bearer token, valid until
// status.expirationTimestamp (forever when absent).
//
// ExecCredentials caches the token:
//   1. Token() returns the cached token while it is fresh.
//   2. Once less than a quarter of its lifetime (counted from when the
//      plugin was started) is left, at most 5 minutes,
//      the next Token() starts one background run of the plugin and still
//      returns the cached token; the new token replaces it when the run
//      succeeds. So the plugin runs off the I/O thread ahead of expiry.
//   3. A token that is missing, expired or within the last 10 seconds (at
//      most a tenth of its lifetime) of its life is not used: Token() runs
//      the plugin and waits for it. Concurrent callers share that one run.
//   4. After a 401 the client calls Invalidate(generation): the token the
//      request carried is dropped (unless a newer one replaced it already),
//      so the retry runs the plugin once (kube/client.h retries once).
// Plugin failures are not cached: the next Token() runs it again.
//
// Errors (kUnauthorized, so callers treat them like a rejected credential)
// name the kubeconfig user and the command: the exit status and the
// plugin's stderr, "not found" with the installHint, a timeout, or the
// output field at fault. Plugins that return a client certificate instead of
// a token (status.clientCertificateData) are rejected with a clear error:
// copse takes client certificates from the kubeconfig only.
//
// Thread-safety: all members may be called from any thread. The destructor
// waits for a background run.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/clock.h"
#include "core/result.h"
#include "kube/kubeconfig.h"

namespace copse::kube {

// What KUBERNETES_EXEC_INFO carries for provideClusterInfo.
struct ExecClusterInfo {
  std::string server;
  std::string tls_server_name;
  bool insecure_skip_tls_verify = false;
  std::string ca_pem;
};

struct ExecCredentialStatus {
  std::string token;
  std::optional<std::chrono::system_clock::time_point> expiration;
};

// Runs the plugin once and decodes its ExecCredential. `timeout` bounds the
// run (the process is killed after it).
Result<ExecCredentialStatus> RunExecPlugin(const ExecConfig& exec, const ExecClusterInfo& cluster,
                                           std::chrono::milliseconds timeout);

class ExecCredentials {
 public:
  struct Options {
    Options() = default;
    ExecConfig exec;
    ExecClusterInfo cluster;
    std::shared_ptr<const Clock> clock;  // default: RealClock (WallNow is compared with expiry)
    std::chrono::milliseconds timeout{60'000};  // of one plugin run
  };

  explicit ExecCredentials(Options options);
  ~ExecCredentials();
  ExecCredentials(const ExecCredentials&) = delete;
  ExecCredentials& operator=(const ExecCredentials&) = delete;

  struct Token {
    std::string token;
    uint64_t generation = 0;  // which plugin run produced it (1, 2, ...)
  };
  // A usable token (steps 1-3 above).
  Result<Token> Get();
  // The cached token for a request about to be sent (empty if none): never runs the plugin.
  std::string Current() const;
  // A request carrying the token of `generation` got 401 (step 4).
  void Invalidate(uint64_t generation);

  uint64_t runs() const;  // plugin runs started, successful or not

 private:
  using SystemTime = std::chrono::system_clock::time_point;
  Result<ExecCredentialStatus> RunCounted();
  bool UsableLocked(SystemTime now) const;
  void Store(ExecCredentialStatus status, SystemTime asked);
  // Records a finished run started at `asked` (mu_ held) and wakes the callers sharing it.
  void Finish(Result<ExecCredentialStatus> status, SystemTime asked);
  void BackgroundRefresh();

  const Options options_;
  std::shared_ptr<const Clock> clock_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::string token_;
  uint64_t generation_ = 0;
  std::optional<SystemTime> expiration_;
  SystemTime refresh_at_{};   // step 2 starts here
  SystemTime unusable_at_{};  // step 3 starts here
  bool running_ = false;      // a run (foreground or background) is in progress
  uint64_t completed_runs_ = 0;
  std::optional<Error> last_error_;  // of the last finished run, if it failed
  std::thread background_;
  uint64_t runs_ = 0;
};

}  // namespace copse::kube
