#pragma once
// X.509 certificates for copse's servers and tests (OpenSSL 3): ECDSA P-256
// keys, SHA-256 signatures, PEM in and out.
//
//   SelfSignedCertificate   a serving certificate that is its own CA
//                           (basicConstraints CA:TRUE): what the embedded API
//                           server and the Grove webhook generate at start-up,
//                           so clients trust it with the certificate itself as
//                           CA data (kubeconfig certificate-authority-data,
//                           a webhook's caBundle).
//   NewCertificateAuthority a CA that signs nothing but certificates.
//   IssueCertificate        a leaf certificate (serverAuth and/or
//                           clientAuth) signed by a CA given as PEM: client
//                           certificates for mutual TLS, serving certificates
//                           under a CA (the Grove webhook's rotated ones).
//   VerifyCertificate       the checks a rotator needs before serving or
//                           keeping a certificate: key match, chain to a CA,
//                           validity at a time, DNS name.
//   VerifyClientCertificate what a server that authenticates clients by
//                           certificate checks (kube's x509 authenticator):
//                           the presented chain leads to a client CA, is valid
//                           now and allows clientAuth; the identity is the
//                           subject's CN (user) and O values (groups).
//
// Names: the subject is O=<organization>, CN=<common_name>; leaf and
// self-signed certificates carry subjectAltName DNS:<dns_names> and
// IP:<ip_addresses>.
//
// Errors are kTls (OpenSSL's reason appended) or kInvalid (a bad IP address,
// PEM that does not parse, a key that does not match its certificate).
//
// Thread-safety: pure functions.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace copse::net {

struct CertificateOptions {
  CertificateOptions() = default;
  std::string common_name = "copse";
  std::string organization = "copse";
  std::vector<std::string> dns_names = {"localhost"};
  std::vector<std::string> ip_addresses = {"127.0.0.1", "::1"};
  // From an hour ago (clock skew) until this long from now...
  std::chrono::hours validity{24 * 365 * 10};
  // ...unless given (a rotator on an injected clock); not_after must be
  // after not_before (kInvalid).
  std::optional<std::chrono::system_clock::time_point> not_before;
  std::optional<std::chrono::system_clock::time_point> not_after;
  // extendedKeyUsage of IssueCertificate's leaf certificates (none when both
  // are false). Self-signed certificates carry both.
  bool server_auth = true;
  bool client_auth = true;
};

struct Certificate {
  std::string cert_pem;
  std::string key_pem;
};

Result<Certificate> SelfSignedCertificate(const CertificateOptions& options = {});
Result<Certificate> NewCertificateAuthority(const CertificateOptions& options = {});
Result<Certificate> IssueCertificate(const Certificate& ca, const CertificateOptions& options);

// What a certificate says about itself (tests, logs).
struct CertificateInfo {
  std::string common_name;
  std::string issuer_common_name;
  std::vector<std::string> dns_names;
  std::vector<std::string> ip_addresses;  // text form, e.g. "127.0.0.1", "::1"
  bool is_ca = false;
  std::chrono::system_clock::time_point not_before;
  std::chrono::system_clock::time_point not_after;
};
// The first certificate of a PEM text.
Result<CertificateInfo> InspectCertificate(std::string_view cert_pem);

// Ok when `cert_pem` (with `key_pem` its key) chains to one of the
// certificates in `ca_pem`, is valid at `at`, and names `dns_name` (skipped
// when empty). kInvalid for PEM that does not parse or a CA bundle without
// a certificate; kTls naming the check that failed otherwise.
Status VerifyCertificate(std::string_view cert_pem, std::string_view key_pem,
                         std::string_view ca_pem, std::string_view dns_name,
                         std::chrono::system_clock::time_point at);

// kInvalid unless `key_pem` is the private key of `cert_pem`.
Status CheckKeyPair(std::string_view cert_pem, std::string_view key_pem);

// Who a verified client certificate names: kube's x509 authenticator makes
// the subject's CommonName the user and its Organization values the groups.
struct ClientCertificateIdentity {
  std::string common_name;
  std::vector<std::string> organizations;  // in the order of the subject
};

// Verifies a client's certificate chain as presented in the TLS handshake
// (`chain_pem`: the leaf first, then any intermediates) against the CA
// bundle `ca_pem` at `at`: the leaf must chain to one of the CAs, be valid at
// `at`, and carry no extendedKeyUsage that excludes clientAuth. kInvalid for
// PEM that does not parse or a bundle without a certificate; kTls naming the
// failed check otherwise ("client certificate: unable to get local issuer
// certificate").
Result<ClientCertificateIdentity> VerifyClientCertificate(std::string_view chain_pem,
                                                          std::string_view ca_pem,
                                                          std::chrono::system_clock::time_point at);

// The SHA-256 digest (32 bytes) of `data`: cache keys that must not hold a
// secret (bearer tokens) in memory.
std::string Sha256(std::string_view data);

}  // namespace copse::net
