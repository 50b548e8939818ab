#pragma once
// The embedded API server's serving certificate: a self-signed X.509
// certificate for 127.0.0.1, ::1 and localhost (ECDSA P-256, SHA-256),
// generated at start-up with the OpenSSL 3 API. It is its own CA
// (basicConstraints CA:TRUE), so clients trust it with
// certificate-authority-data = the certificate itself.
//
// Thread-safety: a pure function.

#include <string>

#include "core/result.h"

namespace copse::apiserver {

struct SelfSignedCert {
  std::string cert_pem;
  std::string key_pem;
};

// Errors are kTls with OpenSSL's message.
Result<SelfSignedCert> GenerateSelfSignedCert(const std::string& common_name = "copse-local");

}  // namespace copse::apiserver
