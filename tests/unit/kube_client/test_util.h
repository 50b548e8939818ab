#pragma once
// Helpers shared by the kube client tests: temporary directories and a
// self-signed certificate.

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "net/cert.h"

namespace copse::kube::testing {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "copse-client-XXXXXX").string();
    char* made = ::mkdtemp(pattern.data());
    if (made == nullptr) std::abort();
    path_ = made;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string Write(const std::string& name, const std::string& contents) const {
    const std::string file = path_ + "/" + name;
    std::filesystem::create_directories(std::filesystem::path(file).parent_path());
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << contents;
    return file;
  }

 private:
  std::string path_;
};

// A self-signed certificate (its own CA) for `common_name` with an IP SAN
// 127.0.0.1, from net/'s certificate helper.
inline net::Certificate MakeSelfSignedCertificate(const std::string& common_name) {
  net::CertificateOptions options;
  options.common_name = common_name;
  options.dns_names.clear();
  options.ip_addresses = {"127.0.0.1"};
  auto cert = net::SelfSignedCertificate(options);
  if (!cert.ok()) std::abort();
  return std::move(cert).value();
}

}  // namespace copse::kube::testing
