#pragma once
// The validating admission webhook of the Grove backend, as upstream Grove
// serves it for real clusters: AdmissionReview v1 over HTTPS (Boost.Beast),
// POST /webhooks/validate-podcliqueset. CREATE and UPDATE of a PodCliqueSet
// run the operator's admission (defaulting, validation, the backend's
// ValidatePodCliqueSet); a denial carries the field-named errors
// (status.code 422, reason Invalid) and a pass-through backend's ignored
// features come back as warnings. Other operations and kinds are allowed.
//
// A ValidatingWebhookConfiguration for a real cluster:
//   webhooks:
//   - name: validate.podcliqueset.grove.io
//     clientConfig: {service: {namespace: copse-system, name: copse-grove-webhook,
//                    path: /webhooks/validate-podcliqueset}, caBundle: <ca_pem base64>}
//     rules: [{apiGroups: [grove.io], apiVersions: [v1alpha1],
//              operations: [CREATE, UPDATE], resources: [podcliquesets]}]
//     admissionReviewVersions: [v1]
//     sideEffects: None
//     failurePolicy: Fail
//
// The serving certificate can be replaced while serving (SetCertificate):
// connections accepted afterwards use the new one; `copse grove` feeds it
// from the Secret grove/webhook/cert_rotator.h maintains.
//
// Thread-safety: Server is thread-safe; the validator must be (Operator's is).

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "grove/backend/backend.h"

namespace copse::grove::webhook {

inline constexpr std::string_view kValidatePath = "/webhooks/validate-podcliqueset";

// (object JSON, old object JSON or "" for a create) -> admission.
using Validator =
    std::function<Result<backend::Admission>(std::string_view object, std::string_view old_object)>;

// Answers one AdmissionReview v1 request body with the AdmissionReview response body.
// A body that is not an AdmissionReview gets kInvalid.
Result<std::string> HandleAdmissionReview(std::string_view body, const Validator& validate);

// The webhook's ValidatingWebhookConfiguration (JSON) for a webhook served at `url`
// with `ca_pem` as its trust root.
std::string ValidatingWebhookConfiguration(std::string_view name, std::string_view url,
                                           std::string_view ca_pem);

struct ServerOptions {
  ServerOptions() = default;
  std::string address = "127.0.0.1";
  uint16_t port = 0;  // 0: pick a free port
  // PEM of the serving certificate and key; empty: a self-signed certificate
  // for 127.0.0.1, localhost and `dns_names` is generated (it is its own CA).
  std::string cert_pem;
  std::string key_pem;
  std::vector<std::string> dns_names;
  int threads = 1;
};

class Server {
 public:
  static Result<std::unique_ptr<Server>> Start(Validator validate, ServerOptions options);
  ~Server();  // Stop()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  void Stop();  // idempotent
  uint16_t port() const;
  // "https://127.0.0.1:<port>/webhooks/validate-podcliqueset"
  std::string url() const;
  // The serving certificate (the CA bundle clients need when self-signed).
  std::string ca_pem() const;
  // Serves `cert_pem` (a chain) with `key_pem` from the next connection on;
  // kTls (and the old certificate stays) when they do not load or match.
  Status SetCertificate(const std::string& cert_pem, const std::string& key_pem);

  struct Impl;  // opaque

 private:
  explicit Server(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace copse::grove::webhook
