#include "kube/certificates.h"

#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

namespace copse::kube {
namespace {

using std::chrono::hours;
using std::chrono::system_clock;

const system_clock::time_point kNow = system_clock::from_time_t(1'700'000'000);

CertificateAndKey MakeCa(const std::string& name = "test-ca") {
  CertificateRequest request;
  request.common_name = name;
  request.is_ca = true;
  request.not_before = kNow - hours(1);
  request.not_after = kNow + hours(24 * 365);
  auto ca = IssueCertificate(request);
  EXPECT_TRUE(ca.ok()) << ca.error().ToString();
  return ca.ok() ? *ca : CertificateAndKey{};
}

CertificateRequest Serving(std::vector<std::string> dns, hours validity = hours(100)) {
  CertificateRequest request;
  request.common_name = dns.empty() ? "x" : dns.front();
  request.dns_names = std::move(dns);
  request.not_before = kNow - hours(1);
  request.not_after = kNow + validity;
  return request;
}

// What OpenSSL itself reads from the PEM, apart from our InspectCertificate.
struct Parsed {
  std::string issuer_cn;
  bool ca = false;
  long path_len_or_flag = 0;
};
Parsed ParseWithOpenSsl(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  Parsed out;
  if (cert == nullptr) return out;
  char cn[256] = {0};
  X509_NAME_get_text_by_NID(X509_get_issuer_name(cert), NID_commonName, cn, sizeof(cn));
  out.issuer_cn = cn;
  out.ca = X509_check_ca(cert) != 0;
  X509_free(cert);
  return out;
}

TEST(Certificates, CaAndServingCertificate) {
  const CertificateAndKey ca = MakeCa();
  auto cert = IssueCertificate(Serving({"svc.ns.svc", "svc.ns"}), &ca);
  ASSERT_TRUE(cert.ok()) << cert.error().ToString();

  auto info = InspectCertificate(cert->cert_pem);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->common_name, "svc.ns.svc");
  EXPECT_EQ(info->dns_names, (std::vector<std::string>{"svc.ns.svc", "svc.ns"}));
  EXPECT_FALSE(info->is_ca);
  EXPECT_EQ(info->not_after, kNow + hours(100));
  EXPECT_EQ(info->not_before, kNow - hours(1));
  EXPECT_EQ(ParseWithOpenSsl(cert->cert_pem).issuer_cn, "test-ca");
  EXPECT_FALSE(ParseWithOpenSsl(cert->cert_pem).ca);
  EXPECT_TRUE(ParseWithOpenSsl(ca.cert_pem).ca);
  EXPECT_TRUE(InspectCertificate(ca.cert_pem)->is_ca);

  EXPECT_TRUE(
      VerifyCertificate(cert->cert_pem, cert->key_pem, ca.cert_pem, "svc.ns.svc", kNow).ok());
  EXPECT_TRUE(VerifyCertificate(cert->cert_pem, cert->key_pem, ca.cert_pem, "svc.ns", kNow).ok());
  EXPECT_TRUE(VerifyCertificate(cert->cert_pem, cert->key_pem, ca.cert_pem, "", kNow).ok());
}

TEST(Certificates, VerifyNamesWhatFails) {
  const CertificateAndKey ca = MakeCa();
  const CertificateAndKey other_ca = MakeCa("other-ca");
  auto cert = IssueCertificate(Serving({"svc.ns.svc"}), &ca);
  auto other = IssueCertificate(Serving({"svc.ns.svc"}), &ca);
  ASSERT_TRUE(cert.ok() && other.ok());

  Status wrong_ca = VerifyCertificate(cert->cert_pem, cert->key_pem, other_ca.cert_pem, "", kNow);
  ASSERT_FALSE(wrong_ca.ok());
  EXPECT_NE(wrong_ca.error().message.find("unable to get local issuer certificate"),
            std::string::npos)
      << wrong_ca.error().message;
  // A bundle holding the right CA among others verifies.
  EXPECT_TRUE(
      VerifyCertificate(cert->cert_pem, cert->key_pem, other_ca.cert_pem + ca.cert_pem, "", kNow)
          .ok());

  Status wrong_name =
      VerifyCertificate(cert->cert_pem, cert->key_pem, ca.cert_pem, "evil.ns.svc", kNow);
  ASSERT_FALSE(wrong_name.ok());
  EXPECT_NE(wrong_name.error().message.find("hostname mismatch"), std::string::npos)
      << wrong_name.error().message;

  Status expired =
      VerifyCertificate(cert->cert_pem, cert->key_pem, ca.cert_pem, "", kNow + hours(101));
  ASSERT_FALSE(expired.ok());
  EXPECT_NE(expired.error().message.find("certificate has expired"), std::string::npos)
      << expired.error().message;
  Status early = VerifyCertificate(cert->cert_pem, cert->key_pem, ca.cert_pem, "", kNow - hours(2));
  ASSERT_FALSE(early.ok());
  EXPECT_NE(early.error().message.find("not yet valid"), std::string::npos)
      << early.error().message;

  Status mismatch = VerifyCertificate(cert->cert_pem, other->key_pem, ca.cert_pem, "", kNow);
  ASSERT_FALSE(mismatch.ok());
  EXPECT_NE(mismatch.error().message.find("does not belong"), std::string::npos);

  EXPECT_EQ(VerifyCertificate("junk", cert->key_pem, ca.cert_pem, "", kNow).error().code,
            ErrorCode::kInvalid);
  EXPECT_EQ(VerifyCertificate(cert->cert_pem, cert->key_pem, "junk", "", kNow).error().code,
            ErrorCode::kInvalid);
}

TEST(Certificates, BadRequests) {
  CertificateRequest backwards = Serving({"a"});
  backwards.not_after = backwards.not_before;
  EXPECT_EQ(IssueCertificate(backwards).error().code, ErrorCode::kInvalid);
  CertificateAndKey bogus{"not pem", "not pem"};
  auto issued = IssueCertificate(Serving({"a"}), &bogus);
  ASSERT_FALSE(issued.ok());
  EXPECT_NE(issued.error().message.find("issuer"), std::string::npos);
  EXPECT_EQ(InspectCertificate("not pem").error().code, ErrorCode::kInvalid);
}

}  // namespace
}  // namespace copse::kube
