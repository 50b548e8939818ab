// net/cert.h: what the generated certificates say about themselves, and that
// OpenSSL (through the client transport's TLS settings) accepts them as
// servers and CAs; the TLS tests in server_test.cc use them on the wire.

#include "net/cert.h"

#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <algorithm>

namespace copse::net {
namespace {

bool Contains(const std::vector<std::string>& values, const std::string& value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

TEST(Certificates, SelfSignedNamesTheSubjectAltNamesAndIsItsOwnCa) {
  CertificateOptions options;
  options.common_name = "copse-local";
  options.dns_names = {"localhost", "copse.example.com"};
  options.ip_addresses = {"127.0.0.1", "::1"};
  auto cert = SelfSignedCertificate(options);
  ASSERT_TRUE(cert.ok()) << cert.error().ToString();
  EXPECT_NE(cert->cert_pem.find("-----BEGIN CERTIFICATE-----"), std::string::npos);
  EXPECT_NE(cert->key_pem.find("PRIVATE KEY-----"), std::string::npos);
  auto info = InspectCertificate(cert->cert_pem);
  ASSERT_TRUE(info.ok()) << info.error().ToString();
  EXPECT_EQ(info->common_name, "copse-local");
  EXPECT_EQ(info->issuer_common_name, "copse-local");
  EXPECT_TRUE(info->is_ca);
  EXPECT_TRUE(Contains(info->dns_names, "localhost"));
  EXPECT_TRUE(Contains(info->dns_names, "copse.example.com"));
  EXPECT_TRUE(Contains(info->ip_addresses, "127.0.0.1"));
  EXPECT_TRUE(Contains(info->ip_addresses, "::1"));
  EXPECT_TRUE(CheckKeyPair(cert->cert_pem, cert->key_pem).ok());
}

TEST(Certificates, IssuedCertificatesNameTheirCaAndAreNoCa) {
  CertificateOptions ca_options;
  ca_options.common_name = "copse-test-ca";
  auto ca = NewCertificateAuthority(ca_options);
  ASSERT_TRUE(ca.ok()) << ca.error().ToString();
  auto ca_info = InspectCertificate(ca->cert_pem);
  ASSERT_TRUE(ca_info.ok());
  EXPECT_TRUE(ca_info->is_ca);
  EXPECT_TRUE(ca_info->dns_names.empty());

  CertificateOptions leaf_options;
  leaf_options.common_name = "system:scheduler";
  leaf_options.dns_names = {"scheduler.local"};
  leaf_options.ip_addresses = {};
  auto leaf = IssueCertificate(*ca, leaf_options);
  ASSERT_TRUE(leaf.ok()) << leaf.error().ToString();
  auto info = InspectCertificate(leaf->cert_pem);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->common_name, "system:scheduler");
  EXPECT_EQ(info->issuer_common_name, "copse-test-ca");
  EXPECT_FALSE(info->is_ca);
  EXPECT_EQ(info->dns_names, std::vector<std::string>{"scheduler.local"});
  EXPECT_TRUE(info->ip_addresses.empty());
  EXPECT_TRUE(CheckKeyPair(leaf->cert_pem, leaf->key_pem).ok());
}

TEST(Certificates, BadInputIsRefusedWithTheReason) {
  auto ca = NewCertificateAuthority();
  ASSERT_TRUE(ca.ok());
  auto other = NewCertificateAuthority();
  ASSERT_TRUE(other.ok());

  CertificateOptions bad_ip;
  bad_ip.ip_addresses = {"not-an-ip"};
  auto refused = SelfSignedCertificate(bad_ip);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalid);
  EXPECT_NE(refused.error().message.find("\"not-an-ip\" is not an IP address"), std::string::npos)
      << refused.error().message;

  Certificate mismatched{ca->cert_pem, other->key_pem};
  auto wrong_key = IssueCertificate(mismatched, CertificateOptions());
  ASSERT_FALSE(wrong_key.ok());
  EXPECT_NE(wrong_key.error().message.find("does not match"), std::string::npos);
  EXPECT_FALSE(CheckKeyPair(ca->cert_pem, other->key_pem).ok());

  auto garbage = InspectCertificate("not a certificate");
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.error().code, ErrorCode::kInvalid);
}

TEST(Certificates, EveryCertificateIsNew) {
  auto a = SelfSignedCertificate();
  auto b = SelfSignedCertificate();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->cert_pem, b->cert_pem);
  EXPECT_NE(a->key_pem, b->key_pem);
  EXPECT_FALSE(CheckKeyPair(a->cert_pem, b->key_pem).ok());
}

// ---------------------------------------------------------------- a CA on a fixed clock
// (what the Grove webhook's certificate rotator makes, keeps and renews)

using std::chrono::hours;
using std::chrono::system_clock;

const system_clock::time_point kNow = system_clock::from_time_t(1'700'000'000);

Certificate MakeCa(const std::string& name = "test-ca") {
  CertificateOptions options;
  options.common_name = name;
  options.not_before = kNow - hours(1);
  options.not_after = kNow + hours(24 * 365);
  auto ca = NewCertificateAuthority(options);
  EXPECT_TRUE(ca.ok()) << ca.error().ToString();
  return ca.ok() ? *ca : Certificate{};
}

CertificateOptions Serving(std::vector<std::string> dns, hours validity = hours(100)) {
  CertificateOptions options;
  options.common_name = dns.empty() ? "x" : dns.front();
  options.dns_names = std::move(dns);
  options.ip_addresses.clear();
  options.client_auth = false;
  options.not_before = kNow - hours(1);
  options.not_after = kNow + validity;
  return options;
}

// What OpenSSL itself reads from the PEM, apart from InspectCertificate.
struct Parsed {
  std::string issuer_cn;
  bool ca = false;
  uint32_t extended_key_usage = 0;  // XKU_* bits
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
  out.extended_key_usage = X509_get_extended_key_usage(cert);
  X509_free(cert);
  return out;
}

TEST(Certificates, CaAndServingCertificateOnExplicitTimes) {
  const Certificate ca = MakeCa();
  auto cert = IssueCertificate(ca, Serving({"svc.ns.svc", "svc.ns"}));
  ASSERT_TRUE(cert.ok()) << cert.error().ToString();

  auto info = InspectCertificate(cert->cert_pem);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->common_name, "svc.ns.svc");
  EXPECT_EQ(info->dns_names, (std::vector<std::string>{"svc.ns.svc", "svc.ns"}));
  EXPECT_TRUE(info->ip_addresses.empty());
  EXPECT_FALSE(info->is_ca);
  EXPECT_EQ(info->not_after, kNow + hours(100));
  EXPECT_EQ(info->not_before, kNow - hours(1));
  const Parsed parsed = ParseWithOpenSsl(cert->cert_pem);
  EXPECT_EQ(parsed.issuer_cn, "test-ca");
  EXPECT_FALSE(parsed.ca);
  EXPECT_EQ(parsed.extended_key_usage, uint32_t{XKU_SSL_SERVER});
  EXPECT_TRUE(ParseWithOpenSsl(ca.cert_pem).ca);
  EXPECT_TRUE(InspectCertificate(ca.cert_pem)->is_ca);

  EXPECT_TRUE(
      VerifyCertificate(cert->cert_pem, cert->key_pem, ca.cert_pem, "svc.ns.svc", kNow).ok());
  EXPECT_TRUE(VerifyCertificate(cert->cert_pem, cert->key_pem, ca.cert_pem, "svc.ns", kNow).ok());
  EXPECT_TRUE(VerifyCertificate(cert->cert_pem, cert->key_pem, ca.cert_pem, "", kNow).ok());
}

TEST(Certificates, KeyUsagesFollowTheFlags) {
  const Certificate ca = MakeCa();
  CertificateOptions client = Serving({"c"});
  client.server_auth = false;
  client.client_auth = true;
  auto client_cert = IssueCertificate(ca, client);
  ASSERT_TRUE(client_cert.ok());
  EXPECT_EQ(ParseWithOpenSsl(client_cert->cert_pem).extended_key_usage, uint32_t{XKU_SSL_CLIENT});
  CertificateOptions both = Serving({"b"});
  both.client_auth = true;
  auto both_cert = IssueCertificate(ca, both);
  ASSERT_TRUE(both_cert.ok());
  EXPECT_EQ(ParseWithOpenSsl(both_cert->cert_pem).extended_key_usage,
            uint32_t{XKU_SSL_SERVER | XKU_SSL_CLIENT});
}

TEST(Certificates, VerifyNamesWhatFails) {
  const Certificate ca = MakeCa();
  const Certificate other_ca = MakeCa("other-ca");
  auto cert = IssueCertificate(ca, Serving({"svc.ns.svc"}));
  auto other = IssueCertificate(ca, Serving({"svc.ns.svc"}));
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

// A client's chain checked as kube's x509 authenticator checks it: the CA,
// the time, clientAuth; the identity from CN and O.
TEST(Certificates, ClientCertificatesAreVerifiedForClientAuth) {
  CertificateOptions ca_options;
  ca_options.common_name = "client-ca";
  const Certificate ca = NewCertificateAuthority(ca_options).value();
  const Certificate other = NewCertificateAuthority(ca_options).value();
  CertificateOptions client;
  client.common_name = "reader";
  client.organization = "metrics";
  client.server_auth = false;
  const Certificate good = IssueCertificate(ca, client).value();
  const auto now = std::chrono::system_clock::now();
  auto identity = VerifyClientCertificate(good.cert_pem, ca.cert_pem, now);
  ASSERT_TRUE(identity.ok()) << identity.error().ToString();
  EXPECT_EQ(identity->common_name, "reader");
  EXPECT_EQ(identity->organizations, std::vector<std::string>{"metrics"});
  // A bundle with several CAs: any of them.
  EXPECT_TRUE(VerifyClientCertificate(good.cert_pem, other.cert_pem + ca.cert_pem, now).ok());

  auto stranger = VerifyClientCertificate(good.cert_pem, other.cert_pem, now);
  ASSERT_FALSE(stranger.ok());
  EXPECT_EQ(stranger.error().code, ErrorCode::kTls);
  EXPECT_EQ(stranger.error().message, "client certificate: unable to get local issuer certificate");
  auto later =
      VerifyClientCertificate(good.cert_pem, ca.cert_pem, now + std::chrono::hours(24 * 366 * 11));
  ASSERT_FALSE(later.ok());
  EXPECT_EQ(later.error().message, "client certificate: certificate has expired");
  client.server_auth = true;
  client.client_auth = false;
  const Certificate serving = IssueCertificate(ca, client).value();
  auto not_for_clients = VerifyClientCertificate(serving.cert_pem, ca.cert_pem, now);
  ASSERT_FALSE(not_for_clients.ok());
  EXPECT_EQ(not_for_clients.error().message, "client certificate: unsuitable certificate purpose");
  EXPECT_EQ(VerifyClientCertificate("junk", ca.cert_pem, now).error().code, ErrorCode::kInvalid);
  EXPECT_EQ(VerifyClientCertificate(good.cert_pem, "", now).error().code, ErrorCode::kInvalid);
}

TEST(Certificates, Sha256) {
  const std::string digest = Sha256("abc");
  ASSERT_EQ(digest.size(), 32u);
  // FIPS 180-2's first example: ba7816bf...
  EXPECT_EQ(static_cast<unsigned char>(digest[0]), 0xba);
  EXPECT_EQ(static_cast<unsigned char>(digest[1]), 0x78);
  EXPECT_EQ(static_cast<unsigned char>(digest[31]), 0xad);
}

TEST(Certificates, ValidityBackwardsIsRefused) {
  CertificateOptions backwards = Serving({"a"});
  backwards.not_after = backwards.not_before;
  auto refused = NewCertificateAuthority(backwards);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalid);
  EXPECT_NE(refused.error().message.find("not_after"), std::string::npos);
  EXPECT_EQ(IssueCertificate(MakeCa(), backwards).error().code, ErrorCode::kInvalid);
}

}  // namespace
}  // namespace copse::net
