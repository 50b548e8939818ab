#include "kube/certificates.h"

#include <openssl/asn1.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <ctime>
#include <memory>

namespace copse::kube {
namespace {

struct Deleter {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
  void operator()(BIGNUM* p) const { BN_free(p); }
  void operator()(X509_STORE* p) const { X509_STORE_free(p); }
  void operator()(X509_STORE_CTX* p) const { X509_STORE_CTX_free(p); }
  void operator()(GENERAL_NAMES* p) const { GENERAL_NAMES_free(p); }
  void operator()(BASIC_CONSTRAINTS* p) const { BASIC_CONSTRAINTS_free(p); }
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

bool AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  Ptr<X509_EXTENSION> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
  return ext != nullptr && X509_add_ext(cert, ext.get(), -1) == 1;
}

std::string BioString(BIO* bio) {
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(len));
}

Ptr<BIO> MemBio(std::string_view text) {
  return Ptr<BIO>(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

Ptr<X509> ReadCert(std::string_view pem) {
  Ptr<BIO> bio = MemBio(pem);
  return Ptr<X509>(bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr);
}

Ptr<EVP_PKEY> ReadKey(std::string_view pem) {
  Ptr<BIO> bio = MemBio(pem);
  return Ptr<EVP_PKEY>(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr)
                           : nullptr);
}

std::chrono::system_clock::time_point FromAsn1(const ASN1_TIME* t) {
  std::tm tm{};
  if (t == nullptr || ASN1_TIME_to_tm(t, &tm) != 1) return {};
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

bool SetTime(ASN1_TIME* field, std::chrono::system_clock::time_point t) {
  return ASN1_TIME_set(field, std::chrono::system_clock::to_time_t(t)) != nullptr;
}

}  // namespace

Result<CertificateAndKey> IssueCertificate(const CertificateRequest& request,
                                           const CertificateAndKey* issuer) {
  if (request.not_after <= request.not_before) {
    return MakeError(ErrorCode::kInvalid, "certificate: not_after must be after not_before");
  }
  Ptr<X509> issuer_cert;
  Ptr<EVP_PKEY> issuer_key;
  if (issuer != nullptr) {
    issuer_cert = ReadCert(issuer->cert_pem);
    issuer_key = ReadKey(issuer->key_pem);
    if (!issuer_cert || !issuer_key) {
      ERR_clear_error();
      return MakeError(ErrorCode::kInvalid,
                       "certificate: the issuer's certificate or key is not valid PEM");
    }
  }
  Ptr<EVP_PKEY> key(EVP_EC_gen("P-256"));
  if (!key) return TlsError("generating the P-256 key");
  Ptr<X509> cert(X509_new());
  if (!cert) return TlsError("allocating the certificate");
  X509_set_version(cert.get(), 2);
  unsigned char serial_bytes[16];
  if (RAND_bytes(serial_bytes, sizeof(serial_bytes)) != 1) return TlsError("random serial");
  serial_bytes[0] &= 0x7f;  // positive
  Ptr<BIGNUM> serial(BN_bin2bn(serial_bytes, sizeof(serial_bytes), nullptr));
  if (!serial || !BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get()))) {
    return TlsError("setting the serial number");
  }
  if (!SetTime(X509_getm_notBefore(cert.get()), request.not_before) ||
      !SetTime(X509_getm_notAfter(cert.get()), request.not_after)) {
    return TlsError("setting the validity");
  }
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("copse"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(request.common_name.c_str()),
                             -1, -1, 0);
  X509_set_issuer_name(cert.get(), issuer_cert ? X509_get_subject_name(issuer_cert.get()) : name);
  if (X509_set_pubkey(cert.get(), key.get()) != 1) return TlsError("setting the public key");

  X509* signer_cert = issuer_cert ? issuer_cert.get() : cert.get();
  std::string san;
  for (const auto& d : request.dns_names) san += (san.empty() ? "DNS:" : ",DNS:") + d;
  for (const auto& ip : request.ip_addresses) san += (san.empty() ? "IP:" : ",IP:") + ip;
  bool ok = AddExtension(cert.get(), signer_cert, NID_subject_key_identifier, "hash");
  if (ok && issuer_cert) {
    ok = AddExtension(cert.get(), signer_cert, NID_authority_key_identifier, "keyid:always");
  }
  if (request.is_ca) {
    ok = ok && AddExtension(cert.get(), signer_cert, NID_basic_constraints, "critical,CA:TRUE") &&
         AddExtension(cert.get(), signer_cert, NID_key_usage,
                      "critical,digitalSignature,keyCertSign,cRLSign");
  } else {
    std::string usages;
    if (request.server_auth) usages = "serverAuth";
    if (request.client_auth) usages += usages.empty() ? "clientAuth" : ",clientAuth";
    ok = ok && AddExtension(cert.get(), signer_cert, NID_basic_constraints, "critical,CA:FALSE") &&
         AddExtension(cert.get(), signer_cert, NID_key_usage, "critical,digitalSignature") &&
         (usages.empty() || AddExtension(cert.get(), signer_cert, NID_ext_key_usage, usages));
  }
  if (ok && !san.empty()) ok = AddExtension(cert.get(), signer_cert, NID_subject_alt_name, san);
  if (!ok) return TlsError("adding certificate extensions");
  if (X509_sign(cert.get(), issuer_key ? issuer_key.get() : key.get(), EVP_sha256()) == 0) {
    return TlsError("signing");
  }
  Ptr<BIO> cert_bio(BIO_new(BIO_s_mem()));
  Ptr<BIO> key_bio(BIO_new(BIO_s_mem()));
  if (!cert_bio || !key_bio || PEM_write_bio_X509(cert_bio.get(), cert.get()) != 1 ||
      PEM_write_bio_PrivateKey(key_bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) !=
          1) {
    return TlsError("writing PEM");
  }
  return CertificateAndKey{BioString(cert_bio.get()), BioString(key_bio.get())};
}

Result<CertificateInfo> InspectCertificate(std::string_view cert_pem) {
  Ptr<X509> cert = ReadCert(cert_pem);
  if (!cert) {
    ERR_clear_error();
    return MakeError(ErrorCode::kInvalid, "certificate: not a PEM certificate");
  }
  CertificateInfo info;
  info.not_before = FromAsn1(X509_get0_notBefore(cert.get()));
  info.not_after = FromAsn1(X509_get0_notAfter(cert.get()));
  X509_NAME* subject = X509_get_subject_name(cert.get());
  char cn[256] = {0};
  if (X509_NAME_get_text_by_NID(subject, NID_commonName, cn, sizeof(cn)) > 0) info.common_name = cn;
  Ptr<GENERAL_NAMES> names(static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(cert.get(), NID_subject_alt_name, nullptr, nullptr)));
  if (names) {
    for (int i = 0; i < sk_GENERAL_NAME_num(names.get()); ++i) {
      const GENERAL_NAME* n = sk_GENERAL_NAME_value(names.get(), i);
      if (n->type != GEN_DNS) continue;
      const ASN1_IA5STRING* dns = n->d.dNSName;
      info.dns_names.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(dns)),
                                  static_cast<size_t>(ASN1_STRING_length(dns)));
    }
  }
  Ptr<BASIC_CONSTRAINTS> constraints(static_cast<BASIC_CONSTRAINTS*>(
      X509_get_ext_d2i(cert.get(), NID_basic_constraints, nullptr, nullptr)));
  info.is_ca = constraints && constraints->ca != 0;
  ERR_clear_error();
  return info;
}

Status VerifyCertificate(std::string_view cert_pem, std::string_view key_pem,
                         std::string_view ca_pem, std::string_view dns_name,
                         std::chrono::system_clock::time_point at) {
  Ptr<X509> cert = ReadCert(cert_pem);
  if (!cert) {
    ERR_clear_error();
    return MakeError(ErrorCode::kInvalid, "certificate: not a PEM certificate");
  }
  Ptr<EVP_PKEY> key = ReadKey(key_pem);
  if (!key) {
    ERR_clear_error();
    return MakeError(ErrorCode::kInvalid, "certificate: the key is not a PEM private key");
  }
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    ERR_clear_error();
    return MakeError(ErrorCode::kTls, "certificate: the key does not belong to the certificate");
  }
  Ptr<X509_STORE> store(X509_STORE_new());
  Ptr<BIO> ca_bio = MemBio(ca_pem);
  int cas = 0;
  while (X509* ca = ca_bio ? PEM_read_bio_X509(ca_bio.get(), nullptr, nullptr, nullptr) : nullptr) {
    X509_STORE_add_cert(store.get(), ca);
    X509_free(ca);
    ++cas;
  }
  ERR_clear_error();  // the end of the PEM text reads as an error
  if (cas == 0)
    return MakeError(ErrorCode::kInvalid, "certificate: the CA bundle holds no certificate");
  Ptr<X509_STORE_CTX> ctx(X509_STORE_CTX_new());
  if (!store || !ctx || X509_STORE_CTX_init(ctx.get(), store.get(), cert.get(), nullptr) != 1) {
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

}  // namespace copse::kube
