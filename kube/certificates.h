#pragma once
// X.509 certificates for copse's own TLS endpoints and tests (OpenSSL 3,
// ECDSA P-256 keys, SHA-256 signatures, random 127-bit serials): a
// self-signed CA, certificates it issues (webhook serving certificates for
// `<service>.<namespace>.svc`, client certificates), and the checks a
// rotator needs (validity at a time, chain to a CA, key match, DNS name).
// This belongs with the transport (a net/ layer); it sits in kube/ until
// that library exists.
//
// Errors are kTls with what failed (and OpenSSL's reason), or kInvalid for
// PEM text that does not parse.
//
// Thread-safety: pure functions of their inputs.

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace copse::kube {

struct CertificateAndKey {
  std::string cert_pem;
  std::string key_pem;  // PKCS#8 PEM
};

struct CertificateRequest {
  CertificateRequest() = default;
  std::string common_name;
  std::vector<std::string> dns_names;     // subjectAltName DNS entries
  std::vector<std::string> ip_addresses;  // subjectAltName IP entries ("127.0.0.1", "::1")
  bool is_ca = false;        // basicConstraints CA:TRUE, keyCertSign; no extendedKeyUsage
  bool server_auth = true;   // extendedKeyUsage serverAuth (leaf certificates)
  bool client_auth = false;  // extendedKeyUsage clientAuth (leaf certificates)
  std::chrono::system_clock::time_point not_before;
  std::chrono::system_clock::time_point not_after;
};

// A new key and a certificate for it, signed by `issuer`, or self-signed
// when `issuer` is null (then the request is usually is_ca).
Result<CertificateAndKey> IssueCertificate(const CertificateRequest& request,
                                           const CertificateAndKey* issuer = nullptr);

struct CertificateInfo {
  std::string common_name;
  std::vector<std::string> dns_names;
  std::chrono::system_clock::time_point not_before;
  std::chrono::system_clock::time_point not_after;
  bool is_ca = false;
};
// The first certificate of a PEM text.
Result<CertificateInfo> InspectCertificate(std::string_view cert_pem);

// Ok when `cert_pem` (with `key_pem` its key) chains to one of the
// certificates in `ca_pem`, is valid at `at`, and names `dns_name` (skipped
// when empty). The error says which check failed.
Status VerifyCertificate(std::string_view cert_pem, std::string_view key_pem,
                         std::string_view ca_pem, std::string_view dns_name,
                         std::chrono::system_clock::time_point at);

}  // namespace copse::kube
