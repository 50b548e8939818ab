// net/cert.h: what the generated certificates say about themselves, and that
// OpenSSL (through the client transport's TLS settings) accepts them as
// servers and CAs; the TLS tests in server_test.cc use them on the wire.

#include "net/cert.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace copse::net
