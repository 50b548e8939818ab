#pragma once
// OpsEndpoint: `copse run`'s ops port as its configuration (OpsServerConfig,
// config.h) asks, served as kube-scheduler serves its own:
//
//   - HTTPS on bindAddress:securePort (10259), with the certificate of
//     tlsCertFile/tlsPrivateKeyFile (re-read every minute; a changed pair is
//     served from the next handshake on) or, without them, a self-signed one
//     made in memory at start (CN copse-scheduler, localhost, the host name,
//     127.0.0.1, ::1; valid a year);
//   - every request there authenticated and authorized by the API server
//     (DelegatedAuth, delegated_auth.h): TokenReviews and client
//     certificates against the cluster's client CA (the ConfigMap
//     kube-system/extension-apiserver-authentication, watched; or
//     clientCAFile), SubjectAccessReviews for all but the always-allowed
//     paths (/healthz, /readyz, /livez);
//   - the API calls through authentication.kubeconfig and
//     authorization.kubeconfig, or the scheduler's own connection when they
//     are empty (kube-scheduler would use the in-cluster one: the same
//     service account in a Deployment), at 200 requests/s, burst 400, 10 s
//     per call (kube's settings), each listed in kube::SchedulerApiAccess;
//   - plain HTTP, without authentication, on address:port only when port is
//     set (address defaults to 127.0.0.1).
// Checks and the metrics handler go to every server.
//
// Start() reads the certificate files and kubeconfigs and looks the client
// CA up once (a lookup that fails is an error unless
// authentication.tolerateLookupFailure, kube-scheduler's default, when it is
// a warning: client certificates are then not accepted until the ConfigMap
// can be read). Errors name the field, spelled by OpsEndpointOptions::name.
//
// Thread-safety: as OpsServer's; Stop() (and the destructor) from one thread.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/result.h"
#include "kube/kubeconfig.h"
#include "scheduler/config/config.h"
#include "scheduler/config/delegated_auth.h"
#include "scheduler/config/ops_server.h"

namespace copse::kube {
class IoThread;
}

namespace copse::scheduler::config {

struct OpsEndpointOptions {
  OpsEndpointOptions() = default;
  // How a field of opsServer is spelled in errors ("securePort" ->
  // "opsServer.securePort", or the flag that set it); null: opsServer.<field>.
  std::function<std::string(std::string_view field)> name;
  // How often the certificate files are looked at again.
  std::chrono::milliseconds certificate_reload_interval{60'000};
  // Requests waiting on the API server at once (DelegatedAuthOptions).
  size_t max_in_flight = 3;
  std::shared_ptr<const Clock> clock;  // default: RealClock
};

class OpsEndpoint {
 public:
  // `connection`: the scheduler's own, for the API calls when the config
  // names no kubeconfig of their own. `io` runs those calls and the client
  // CA's watch; it must outlive the endpoint.
  static Result<std::unique_ptr<OpsEndpoint>> Start(const OpsServerConfig& config,
                                                    const kube::ClientConfig& connection,
                                                    kube::IoThread& io,
                                                    OpsEndpointOptions options = {});
  ~OpsEndpoint();  // Stop()
  OpsEndpoint(const OpsEndpoint&) = delete;
  OpsEndpoint& operator=(const OpsEndpoint&) = delete;

  // On every server (see OpsServer).
  copse::Status AddHealthzCheck(std::string name, OpsServer::Check check);
  copse::Status AddLivezCheck(std::string name, OpsServer::Check check);
  copse::Status AddReadyzCheck(std::string name, OpsServer::Check check);
  void SetMetricsHandler(OpsServer::MetricsHandler handler);

  std::string secure_url() const;  // "https://<bindAddress>:<port>"
  std::string plain_url() const;   // "http://<address>:<port>"; "" when off
  // The certificate served (PEM): a client that trusts it can verify the
  // self-signed one.
  std::string certificate_pem() const;
  DelegatedAuth& auth();
  // How many times the certificate files were looked at again since start.
  uint64_t certificate_checks() const;

  // Idempotent.
  void Stop();

 private:
  struct Impl;
  explicit OpsEndpoint(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace copse::scheduler::config
