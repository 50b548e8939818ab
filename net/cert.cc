#include "net/cert.h"

#include <arpa/inet.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <ctime>
#include <memory>

namespace copse::net {

namespace {

struct Deleter {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
  void operator()(BIGNUM* p) const { BN_free(p); }
  void operator()(GENERAL_NAMES* p) const { GENERAL_NAMES_free(p); }
  void operator()(ASN1_OCTET_STRING* p) const { ASN1_OCTET_STRING_free(p); }
  void operator()(X509_STORE* p) const { X509_STORE_free(p); }
  void operator()(X509_STORE_CTX* p) const { X509_STORE_CTX_free(p); }
  void operator()(STACK_OF(X509) * p) const { sk_X509_pop_free(p, X509_free); }
};
template <typename T>
using Ptr = std::unique_ptr<T, Deleter>;

Error TlsError(const std::string& what) {
  std::string message = what;
  if (const unsigned long code = ERR_get_error(); code != 0) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof(buf));
    message += ": ";
    message += buf;
  }
  ERR_clear_error();
  return MakeError(ErrorCode::kTls, std::move(message));
}

bool AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  Ptr<X509_EXTENSION> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
  return ext != nullptr && X509_add_ext(cert, ext.get(), -1) == 1;
}

// subjectAltName built from values, not from a config string (a name with a
// comma must not turn into a second entry).
Status AddSubjectAltNames(X509* cert, const CertificateOptions& options) {
  if (options.dns_names.empty() && options.ip_addresses.empty()) return Status::Ok();
  Ptr<GENERAL_NAMES> names(sk_GENERAL_NAME_new_null());
  if (!names) return TlsError("allocating subjectAltName");
  for (const std::string& dns : options.dns_names) {
    GENERAL_NAME* name = GENERAL_NAME_new();
    ASN1_IA5STRING* text = ASN1_IA5STRING_new();
    if (name == nullptr || text == nullptr ||
        ASN1_STRING_set(text, dns.data(), static_cast<int>(dns.size())) != 1) {
      GENERAL_NAME_free(name);
      ASN1_IA5STRING_free(text);
      return TlsError("subjectAltName DNS:" + dns);
    }
    GENERAL_NAME_set0_value(name, GEN_DNS, text);
    sk_GENERAL_NAME_push(names.get(), name);
  }
  for (const std::string& ip : options.ip_addresses) {
    Ptr<ASN1_OCTET_STRING> bytes(a2i_IPADDRESS(ip.c_str()));
    if (!bytes) {
      ERR_clear_error();
      return MakeError(ErrorCode::kInvalid, "subjectAltName: \"" + ip + "\" is not an IP address");
    }
    GENERAL_NAME* name = GENERAL_NAME_new();
    if (name == nullptr) return TlsError("subjectAltName IP:" + ip);
    GENERAL_NAME_set0_value(name, GEN_IPADD, bytes.release());
    sk_GENERAL_NAME_push(names.get(), name);
  }
  if (X509_add1_ext_i2d(cert, NID_subject_alt_name, names.get(), 0, X509V3_ADD_DEFAULT) != 1) {
    return TlsError("adding subjectAltName");
  }
  return Status::Ok();
}

std::string BioString(BIO* bio) {
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(len));
}

Result<Ptr<X509>> ParseCertificate(std::string_view pem) {
  Ptr<BIO> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  Ptr<X509> cert(bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr);
  if (!cert) {
    ERR_clear_error();
    return MakeError(ErrorCode::kInvalid, "certificate: not a valid PEM certificate");
  }
  return cert;
}

Result<Ptr<EVP_PKEY>> ParseKey(std::string_view pem) {
  Ptr<BIO> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  Ptr<EVP_PKEY> key(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr);
  if (!key) {
    ERR_clear_error();
    return MakeError(ErrorCode::kInvalid, "key: not a valid PEM private key");
  }
  return key;
}

enum class Kind { kSelfSigned, kAuthority, kLeaf };

// Builds and signs a certificate for `key`. The issuer is the certificate
// itself unless `issuer`/`issuer_key` are given.
Result<Certificate> Build(Kind kind, const CertificateOptions& options, X509* issuer,
                          EVP_PKEY* issuer_key) {
  const auto now = std::chrono::system_clock::now();
  const auto not_before = options.not_before.value_or(now - std::chrono::hours(1));
  const auto not_after = options.not_after.value_or(now + options.validity);
  if (not_after <= not_before) {
    return MakeError(ErrorCode::kInvalid, "certificate: not_after must be after not_before");
  }
  Ptr<EVP_PKEY> key(EVP_EC_gen("P-256"));
  if (!key) return TlsError("generating the P-256 key");
  Ptr<X509> cert(X509_new());
  if (!cert) return TlsError("allocating the certificate");
  X509_set_version(cert.get(), 2);
  unsigned char serial_bytes[16];
  if (RAND_bytes(serial_bytes, sizeof(serial_bytes)) != 1) return TlsError("random serial");
  serial_bytes[0] &= 0x7f;  // a positive serial
  Ptr<BIGNUM> serial(BN_bin2bn(serial_bytes, sizeof(serial_bytes), nullptr));
  if (!serial || !BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get()))) {
    return TlsError("setting the serial number");
  }
  if (ASN1_TIME_set(X509_getm_notBefore(cert.get()),
                    std::chrono::system_clock::to_time_t(not_before)) == nullptr ||
      ASN1_TIME_set(X509_getm_notAfter(cert.get()),
                    std::chrono::system_clock::to_time_t(not_after)) == nullptr) {
    return TlsError("setting the validity");
  }
  X509_NAME* name = X509_get_subject_name(cert.get());
  if (!options.organization.empty()) {
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8,
                               reinterpret_cast<const unsigned char*>(options.organization.c_str()),
                               -1, -1, 0);
  }
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(options.common_name.c_str()),
                             -1, -1, 0);
  X509* signer = issuer != nullptr ? issuer : cert.get();
  EVP_PKEY* signer_key = issuer_key != nullptr ? issuer_key : key.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(signer));
  if (X509_set_pubkey(cert.get(), key.get()) != 1) return TlsError("setting the public key");
  bool ok = AddExtension(cert.get(), signer, NID_subject_key_identifier, "hash");
  if (issuer != nullptr) {
    ok = ok && AddExtension(cert.get(), signer, NID_authority_key_identifier, "keyid:always");
  }
  switch (kind) {
    case Kind::kSelfSigned:
      ok = ok && AddExtension(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE") &&
           AddExtension(cert.get(), signer, NID_key_usage,
                        "critical,digitalSignature,keyEncipherment,keyCertSign") &&
           AddExtension(cert.get(), signer, NID_ext_key_usage, "serverAuth,clientAuth");
      break;
    case Kind::kAuthority:
      ok = ok && AddExtension(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE") &&
           AddExtension(cert.get(), signer, NID_key_usage,
                        "critical,digitalSignature,keyCertSign,cRLSign");
      break;
    case Kind::kLeaf: {
      std::string usages;
      if (options.server_auth) usages = "serverAuth";
      if (options.client_auth) usages += usages.empty() ? "clientAuth" : ",clientAuth";
      ok = ok && AddExtension(cert.get(), signer, NID_basic_constraints, "critical,CA:FALSE") &&
           AddExtension(cert.get(), signer, NID_key_usage,
                        "critical,digitalSignature,keyEncipherment") &&
           (usages.empty() || AddExtension(cert.get(), signer, NID_ext_key_usage, usages.c_str()));
      break;
    }
  }
  if (!ok) return TlsError("adding certificate extensions");
  if (kind != Kind::kAuthority) {
    if (Status s = AddSubjectAltNames(cert.get(), options); !s.ok()) return s.error();
  }
  if (X509_sign(cert.get(), signer_key, EVP_sha256()) == 0) return TlsError("signing");
  Ptr<BIO> cert_bio(BIO_new(BIO_s_mem()));
  Ptr<BIO> key_bio(BIO_new(BIO_s_mem()));
  if (!cert_bio || !key_bio || PEM_write_bio_X509(cert_bio.get(), cert.get()) != 1 ||
      PEM_write_bio_PrivateKey(key_bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) !=
          1) {
    return TlsError("writing PEM");
  }
  return Certificate{BioString(cert_bio.get()), BioString(key_bio.get())};
}

std::string NameEntry(X509_NAME* name, int nid) {
  const int index = X509_NAME_get_index_by_NID(name, nid, -1);
  if (index < 0) return {};
  ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, index));
  unsigned char* utf8 = nullptr;
  const int len = ASN1_STRING_to_UTF8(&utf8, data);
  if (len < 0) return {};
  std::string out(reinterpret_cast<char*>(utf8), static_cast<size_t>(len));
  OPENSSL_free(utf8);
  return out;
}

std::chrono::system_clock::time_point FromAsn1(const ASN1_TIME* t) {
  std::tm tm{};
  if (t == nullptr || ASN1_TIME_to_tm(t, &tm) != 1) return {};
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

// The certificates of a PEM bundle as a verification store; kInvalid when it
// holds none.
Result<Ptr<X509_STORE>> CaStore(std::string_view ca_pem) {
  Ptr<X509_STORE> store(X509_STORE_new());
  Ptr<BIO> ca_bio(BIO_new_mem_buf(ca_pem.data(), static_cast<int>(ca_pem.size())));
  int cas = 0;
  while (X509* ca = store && ca_bio ? PEM_read_bio_X509(ca_bio.get(), nullptr, nullptr, nullptr)
                                    : nullptr) {
    X509_STORE_add_cert(store.get(), ca);
    X509_free(ca);
    ++cas;
  }
  ERR_clear_error();  // the end of the PEM text reads as an error
  if (cas == 0) {
    return MakeError(ErrorCode::kInvalid, "certificate: the CA bundle holds no certificate");
  }
  return store;
}

}  // namespace

Result<Certificate> SelfSignedCertificate(const CertificateOptions& options) {
  return Build(Kind::kSelfSigned, options, nullptr, nullptr);
}

Result<Certificate> NewCertificateAuthority(const CertificateOptions& options) {
  return Build(Kind::kAuthority, options, nullptr, nullptr);
}

Result<Certificate> IssueCertificate(const Certificate& ca, const CertificateOptions& options) {
  auto ca_cert = ParseCertificate(ca.cert_pem);
  if (!ca_cert.ok()) return std::move(ca_cert).error();
  auto ca_key = ParseKey(ca.key_pem);
  if (!ca_key.ok()) return std::move(ca_key).error();
  if (X509_check_private_key(ca_cert->get(), ca_key->get()) != 1) {
    ERR_clear_error();
    return MakeError(ErrorCode::kInvalid, "CA key: does not match the CA certificate");
  }
  return Build(Kind::kLeaf, options, ca_cert->get(), ca_key->get());
}

Result<CertificateInfo> InspectCertificate(std::string_view cert_pem) {
  auto cert = ParseCertificate(cert_pem);
  if (!cert.ok()) return std::move(cert).error();
  CertificateInfo info;
  info.common_name = NameEntry(X509_get_subject_name(cert->get()), NID_commonName);
  info.issuer_common_name = NameEntry(X509_get_issuer_name(cert->get()), NID_commonName);
  info.is_ca = X509_check_ca(cert->get()) != 0;
  info.not_before = FromAsn1(X509_get0_notBefore(cert->get()));
  info.not_after = FromAsn1(X509_get0_notAfter(cert->get()));
  Ptr<GENERAL_NAMES> names(static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(cert->get(), NID_subject_alt_name, nullptr, nullptr)));
  for (int i = 0; names && i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names.get(), i);
    if (name->type == GEN_DNS) {
      const ASN1_IA5STRING* dns = name->d.dNSName;
      info.dns_names.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(dns)),
                                  static_cast<size_t>(ASN1_STRING_length(dns)));
    } else if (name->type == GEN_IPADD) {
      const ASN1_OCTET_STRING* ip = name->d.iPAddress;
      char text[INET6_ADDRSTRLEN] = {};
      const int len = ASN1_STRING_length(ip);
      const int family = len == 4 ? AF_INET : len == 16 ? AF_INET6 : -1;
      if (family != -1 && inet_ntop(family, ASN1_STRING_get0_data(ip), text, sizeof(text))) {
        info.ip_addresses.emplace_back(text);
      }
    }
  }
  ERR_clear_error();
  return info;
}

Status CheckKeyPair(std::string_view cert_pem, std::string_view key_pem) {
  auto cert = ParseCertificate(cert_pem);
  if (!cert.ok()) return std::move(cert).error();
  auto key = ParseKey(key_pem);
  if (!key.ok()) return std::move(key).error();
  if (X509_check_private_key(cert->get(), key->get()) != 1) {
    ERR_clear_error();
    return MakeError(ErrorCode::kInvalid, "key: does not match the certificate");
  }
  return Status::Ok();
}

Status VerifyCertificate(std::string_view cert_pem, std::string_view key_pem,
                         std::string_view ca_pem, std::string_view dns_name,
                         std::chrono::system_clock::time_point at) {
  auto cert = ParseCertificate(cert_pem);
  if (!cert.ok()) return std::move(cert).error();
  auto key = ParseKey(key_pem);
  if (!key.ok()) return std::move(key).error();
  if (X509_check_private_key(cert->get(), key->get()) != 1) {
    ERR_clear_error();
    return MakeError(ErrorCode::kTls, "certificate: the key does not belong to the certificate");
  }
  auto store = CaStore(ca_pem);
  if (!store.ok()) return std::move(store).error();
  Ptr<X509_STORE_CTX> ctx(X509_STORE_CTX_new());
  if (!ctx || X509_STORE_CTX_init(ctx.get(), store->get(), cert->get(), nullptr) != 1) {
    return TlsError("certificate: setting up verification");
  }
  X509_VERIFY_PARAM* param = X509_STORE_CTX_get0_param(ctx.get());
  X509_VERIFY_PARAM_set_time(param, std::chrono::system_clock::to_time_t(at));
  if (!dns_name.empty()) X509_VERIFY_PARAM_set1_host(param, dns_name.data(), dns_name.size());
  if (X509_verify_cert(ctx.get()) != 1) {
    const int err = X509_STORE_CTX_get_error(ctx.get());
    ERR_clear_error();
    return MakeError(ErrorCode::kTls,
                     std::string("certificate: ") + X509_verify_cert_error_string(err));
  }
  return Status::Ok();
}

Result<ClientCertificateIdentity> VerifyClientCertificate(
    std::string_view chain_pem, std::string_view ca_pem, std::chrono::system_clock::time_point at) {
  Ptr<BIO> bio(BIO_new_mem_buf(chain_pem.data(), static_cast<int>(chain_pem.size())));
  Ptr<X509> leaf(bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr);
  if (!leaf) {
    ERR_clear_error();
    return MakeError(ErrorCode::kInvalid, "client certificate: not a valid PEM certificate");
  }
  Ptr<STACK_OF(X509)> intermediates(sk_X509_new_null());
  if (!intermediates) return TlsError("client certificate: allocating the chain");
  while (X509* next = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    sk_X509_push(intermediates.get(), next);
  }
  ERR_clear_error();  // the end of the PEM text reads as an error
  auto store = CaStore(ca_pem);
  if (!store.ok()) return std::move(store).error();
  Ptr<X509_STORE_CTX> ctx(X509_STORE_CTX_new());
  if (!ctx || X509_STORE_CTX_init(ctx.get(), store->get(), leaf.get(), intermediates.get()) != 1) {
    return TlsError("client certificate: setting up verification");
  }
  // As Go's x509 with ExtKeyUsageClientAuth: an extendedKeyUsage, when
  // present, must allow clientAuth.
  X509_STORE_CTX_set_purpose(ctx.get(), X509_PURPOSE_SSL_CLIENT);
  X509_VERIFY_PARAM_set_time(X509_STORE_CTX_get0_param(ctx.get()),
                             std::chrono::system_clock::to_time_t(at));
  if (X509_verify_cert(ctx.get()) != 1) {
    const int err = X509_STORE_CTX_get_error(ctx.get());
    ERR_clear_error();
    return MakeError(ErrorCode::kTls,
                     std::string("client certificate: ") + X509_verify_cert_error_string(err));
  }
  ClientCertificateIdentity identity;
  X509_NAME* subject = X509_get_subject_name(leaf.get());
  identity.common_name = NameEntry(subject, NID_commonName);
  for (int i = X509_NAME_get_index_by_NID(subject, NID_organizationName, -1); i >= 0;
       i = X509_NAME_get_index_by_NID(subject, NID_organizationName, i)) {
    ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, i));
    unsigned char* utf8 = nullptr;
    const int len = ASN1_STRING_to_UTF8(&utf8, data);
    if (len < 0) continue;
    identity.organizations.emplace_back(reinterpret_cast<char*>(utf8), static_cast<size_t>(len));
    OPENSSL_free(utf8);
  }
  ERR_clear_error();
  return identity;
}

std::string Sha256(std::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  return std::string(reinterpret_cast<const char*>(digest), sizeof(digest));
}

}  // namespace copse::net
