#include "apiserver/tls.h"

#include <memory>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace copse::apiserver {

namespace {

struct Deleter {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
  void operator()(BIGNUM* p) const { BN_free(p); }
};
template <typename T>
using Ptr = std::unique_ptr<T, Deleter>;

Error TlsError(const std::string& what) {
  std::string message = what;
  const unsigned long code = ERR_get_error();
  if (code != 0) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof(buf));
    message += ": ";
    message += buf;
  }
  ERR_clear_error();
  return MakeError(ErrorCode::kTls, std::move(message));
}

bool AddExtension(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  Ptr<X509_EXTENSION> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
  return ext != nullptr && X509_add_ext(cert, ext.get(), -1) == 1;
}

std::string BioString(BIO* bio) {
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(len));
}

}  // namespace

Result<SelfSignedCert> GenerateSelfSignedCert(const std::string& common_name) {
  Ptr<EVP_PKEY> key(EVP_EC_gen("P-256"));
  if (!key) return TlsError("generating the P-256 key");
  Ptr<X509> cert(X509_new());
  if (!cert) return TlsError("allocating the certificate");
  X509_set_version(cert.get(), 2);
  unsigned char serial_bytes[16];
  if (RAND_bytes(serial_bytes, sizeof(serial_bytes)) != 1) return TlsError("random serial");
  serial_bytes[0] &= 0x7f;
  Ptr<BIGNUM> serial(BN_bin2bn(serial_bytes, sizeof(serial_bytes), nullptr));
  if (!serial || !BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get()))) {
    return TlsError("setting the serial number");
  }
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 10L * 365 * 24 * 3600);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("copse"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1,
                             0);
  X509_set_issuer_name(cert.get(), name);
  if (X509_set_pubkey(cert.get(), key.get()) != 1) return TlsError("setting the public key");
  if (!AddExtension(cert.get(), NID_basic_constraints, "critical,CA:TRUE") ||
      !AddExtension(cert.get(), NID_key_usage,
                    "critical,digitalSignature,keyEncipherment,keyCertSign") ||
      !AddExtension(cert.get(), NID_ext_key_usage, "serverAuth,clientAuth") ||
      !AddExtension(cert.get(), NID_subject_key_identifier, "hash") ||
      !AddExtension(cert.get(), NID_subject_alt_name,
                    "IP:127.0.0.1,IP:0:0:0:0:0:0:0:1,DNS:localhost")) {
    return TlsError("adding certificate extensions");
  }
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) return TlsError("signing");
  Ptr<BIO> cert_bio(BIO_new(BIO_s_mem()));
  Ptr<BIO> key_bio(BIO_new(BIO_s_mem()));
  if (!cert_bio || !key_bio || PEM_write_bio_X509(cert_bio.get(), cert.get()) != 1 ||
      PEM_write_bio_PrivateKey(key_bio.get(), key.get(), nullptr, nullptr, 0, nullptr,
                               nullptr) != 1) {
    return TlsError("writing PEM");
  }
  return SelfSignedCert{BioString(cert_bio.get()), BioString(key_bio.get())};
}

}  // namespace copse::apiserver
