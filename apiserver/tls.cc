#include "apiserver/tls.h"

#include "kube/certificates.h"

namespace copse::apiserver {

Result<SelfSignedCert> GenerateSelfSignedCert(const std::string& common_name) {
  kube::CertificateRequest request;
  request.common_name = common_name;
  request.is_ca = true;  // its own trust root: clients use it as certificate-authority-data
  request.ip_addresses = {"127.0.0.1", "::1"};
  request.dns_names = {"localhost"};
  const auto now = std::chrono::system_clock::now();
  request.not_before = now - std::chrono::hours(1);
  request.not_after = now + std::chrono::hours(24 * 365 * 10);
  auto issued = kube::IssueCertificate(request);
  if (!issued.ok()) return issued.error();
  return SelfSignedCert{std::move(issued->cert_pem), std::move(issued->key_pem)};
}

}  // namespace copse::apiserver
