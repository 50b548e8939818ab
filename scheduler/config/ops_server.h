#pragma once
// OpsServer: the scheduler's operations endpoint, HTTP/1.1 over TLS (with a
// certificate given in the options) or plain, on its own io_context
// thread(s) (Boost.Beast, kept out of this header).
//
// With an `authorize` function (DelegatedAuth::Decide, delegated_auth.h)
// every request is first authenticated and authorized, whatever its path and
// method, as kube's filters do: a refusal is answered with the function's
// status and body and goes no further. Over TLS, clients are asked for a
// certificate (any is accepted in the handshake; `authorize` verifies it).
//
//   GET /healthz, /livez, /readyz   run the registered checks of that endpoint
//                                   (plus a built-in "ping"), in registration
//                                   order, as kube-apiserver/kube-scheduler do:
//                                     all pass  -> 200 "ok"
//                                     any fails -> 500 with one line per check,
//                                       "[+]ping ok"
//                                       "[-]informers-synced failed: <message>"
//                                     and a last line "<endpoint> check failed".
//                                   ?verbose lists every check on success too
//                                   (last line "<endpoint> check passed");
//                                   ?exclude=<name> (repeatable) skips a check.
//                                   Unlike kube, the failure reason is shown
//                                   (this endpoint is for operators, not tenants).
//   GET /healthz/<name> (and /livez/<name>, /readyz/<name>)
//                                   one check: 200 "ok" or 500 "internal server
//                                   error: <message>"; 404 for an unknown name.
//   GET /metrics                    the metrics callback's text,
//                                   Content-Type text/plain; version=0.0.4
//                                   (404 when no callback is set).
// HEAD is answered like GET without a body; other methods get 405.
//
// Lifecycle: Start() binds and starts serving (port 0 picks an ephemeral
// port, readable with port()); Stop() (also run by the destructor) closes
// the listener and every connection and joins the threads. Checks and the
// metrics callback run on the server's threads: they must be thread-safe and
// quick, and must not call Stop().
//
// Thread-safety: Add*Check / SetMetricsHandler may be called at any time from
// any thread (a check added later takes part in later requests).

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/result.h"
#include "scheduler/config/delegated_auth.h"

namespace copse::scheduler::config {

struct OpsServerOptions {
  OpsServerOptions() = default;
  std::string address = "127.0.0.1";
  uint16_t port = 0;  // 0: an ephemeral port
  int threads = 1;
  // HTTPS with this certificate chain and key (PEM); both empty: plain HTTP.
  std::string tls_cert_pem;
  std::string tls_key_pem;
  // Who may do what; null: every request is served.
  std::function<AccessDecision(const AccessRequest&)> authorize;
};

class OpsServer {
 public:
  // Ok, or an error whose message is shown after "failed: ".
  using Check = std::function<copse::Status()>;
  using MetricsHandler = std::function<std::string()>;

  // kUnavailable when the address cannot be bound; kInvalid for a bad address.
  static Result<std::unique_ptr<OpsServer>> Start(OpsServerOptions options);
  ~OpsServer();
  OpsServer(const OpsServer&) = delete;
  OpsServer& operator=(const OpsServer&) = delete;

  // Checks of one endpoint. A name may be registered once per endpoint
  // (kAlreadyExists otherwise); names are short words like "informers-synced".
  copse::Status AddHealthzCheck(std::string name, Check check);
  copse::Status AddLivezCheck(std::string name, Check check);
  copse::Status AddReadyzCheck(std::string name, Check check);
  void SetMetricsHandler(MetricsHandler handler);

  uint16_t port() const noexcept;
  const std::string& address() const noexcept;
  // "https://<address>:<port>" (or http:// without TLS)
  std::string url() const;

  // Serves another certificate from the next TLS handshake on (a rotated
  // --tls-cert-file); kInvalid for bad PEM or a server without TLS.
  copse::Status SetCertificate(const std::string& cert_pem, const std::string& key_pem);

  // Idempotent.
  void Stop();

 private:
  struct Impl;
  explicit OpsServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace copse::scheduler::config
