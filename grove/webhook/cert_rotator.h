#pragma once
// The Grove webhook's serving certificate in a cluster, made and rotated as
// Grove's own operator does it with cert-controller: a self-signed CA and a
// serving certificate for `<service>.<namespace>.svc` kept in one Secret
// (keys ca.crt, ca.key, tls.crt, tls.key), and the CA injected as caBundle
// into every webhook of the named ValidatingWebhookConfiguration.
//
// Every replica (Start):
//   1. watches the Secret; whenever its tls.crt/tls.key change, hands them
//      to `on_certificate` (the webhook server swaps its certificate for new
//      connections) and, when that succeeds, Serving() turns true.
// The leader only (StartWriting, after it took the Lease), in one thread:
//   2. reads the Secret; when it is missing, or its CA or certificate is not
//      valid `lookahead` from now (expired, expiring, for another DNS name,
//      not signed by the CA, key mismatch), writes a new one: a new CA only
//      when the CA itself is unusable (the old CA, while still valid, stays in
//      ca.crt after the new one, so the caBundle trusts both while replicas
//      switch), a new serving certificate otherwise. Writes are conditional on
//      the resourceVersion (a conflict retries);
//   3. sets caBundle = ca.crt on each webhook of the configuration that lacks
//      it (e.g. after `kubectl apply` reset it); a configuration that does not
//      exist yet is logged once and handled when it appears;
//   4. repeats on every change of the Secret or the configuration, after a
//      failure (with backoff), and every `check_interval` (expiry is a matter
//      of time, not of events).
// StopWriting() (lost Lease) and Stop() end 2-4; Stop() also ends 1.
//
// Thread-safety: all members may be called from any thread; Start/Stop from
// one owner. `on_certificate` runs on an informer strand, one call at a time.
// The client's io_context must outlive the rotator.

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/result.h"
#include "kube/client.h"

namespace copse::grove::webhook {

// The API resources the rotator reads and writes (for RBAC):
//   secrets (namespaced): get, list, watch, create, update
//   validatingwebhookconfigurations: get, list, watch, update
inline const kube::ResourceRef kSecrets{"", "v1", "secrets", true};
inline const kube::ResourceRef kValidatingWebhookConfigurations{
    "admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", false};

struct CertRotatorOptions {
  CertRotatorOptions() = default;
  std::string secret_namespace = "copse-system";
  std::string secret_name = "copse-grove-webhook-cert";
  // The certificate names <service>.<namespace>.svc (the name the API server
  // calls), <service>.<namespace>.svc.cluster.local, <service>.<namespace>
  // and <service>; service_namespace "" means secret_namespace.
  std::string service_name = "copse-grove-webhook";
  std::string service_namespace;
  std::vector<std::string> extra_dns_names;
  std::vector<std::string>
      ip_addresses;  // e.g. 127.0.0.1 where the API server calls a URL on loopback
  // The ValidatingWebhookConfiguration whose webhooks get the caBundle ("": none).
  std::string webhook_configuration = "copse-grove";
  std::chrono::hours ca_validity{24 * 365 * 10};
  std::chrono::hours cert_validity{24 * 365};
  std::chrono::hours lookahead{24 * 90};  // renew when not valid this far ahead
  std::chrono::milliseconds check_interval{12 * 3600 * 1000};
  std::chrono::milliseconds retry_initial{500};  // after a failed round, doubling
  std::chrono::milliseconds retry_max{30'000};
  std::shared_ptr<const Clock> clock;  // certificate times and expiry; default RealClock
};

struct CertRotatorStats {
  uint64_t checks = 0;               // rounds of steps 2-3 finished (successful or not)
  uint64_t secret_writes = 0;        // creates and updates of the Secret
  uint64_t ca_generations = 0;       // CAs made
  uint64_t cert_generations = 0;     // serving certificates made
  uint64_t bundle_writes = 0;        // updates of the webhook configuration
  uint64_t certificates_served = 0;  // on_certificate calls
};

class CertRotator {
 public:
  // Serves a certificate (webhook::Server::SetCertificate); an error leaves Serving() as it was.
  using OnCertificate =
      std::function<Status(const std::string& cert_pem, const std::string& key_pem)>;

  // Starts watching the Secret (step 1). kInvalid for empty names.
  static Result<std::unique_ptr<CertRotator>> Start(std::shared_ptr<kube::Client> client,
                                                    CertRotatorOptions options,
                                                    OnCertificate on_certificate);
  ~CertRotator();  // Stop()
  CertRotator(const CertRotator&) = delete;
  CertRotator& operator=(const CertRotator&) = delete;

  void StartWriting();  // steps 2-4; idempotent
  void StopWriting();   // idempotent; waits for a round in progress
  void Stop();          // idempotent

  // A certificate from the Secret has been handed to on_certificate.
  bool Serving() const;
  // The DNS name the serving certificate must carry (<service>.<namespace>.svc).
  std::string DnsName() const;
  CertRotatorStats stats() const;

  struct Impl;  // opaque

 private:
  explicit CertRotator(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace copse::grove::webhook
