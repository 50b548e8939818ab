// scripts/bench-side-by-side.sh refuses, saying why, before it starts
// anything: a binary directory without kube-scheduler or kube-apiserver, and
// a kube-apiserver too old to serve the Workload API's PodGroups. (Its runs
// themselves need a real v1.36 kube-apiserver: bench/README.md.) kubectl is
// required, as the script requires it.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/paths.h"
#include "tests/support/process.h"

namespace copse::bench {
namespace side_by_side_script_test {

// A directory of stand-in binaries that only answer --version.
class FakeBinDir {
 public:
  FakeBinDir() {
    char tmpl[] = "/tmp/copse-side-by-side-bin-XXXXXX";
    const char* made = mkdtemp(tmpl);
    EXPECT_NE(made, nullptr);
    if (made != nullptr) dir_ = made;
  }
  ~FakeBinDir() {
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }
  void Add(const std::string& name, const std::string& version) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << "#!/bin/sh\necho \"Kubernetes " << version << "\"\n";
    chmod(path.c_str(), 0755);
  }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

e2e::CommandResult RunScript(const FakeBinDir& bins) {
  // Any executable stands in for copse: the script stops before running it.
  return e2e::RunCommand({"bash", std::string(COPSE_SOURCE_DIR) + "/scripts/bench-side-by-side.sh",
                          "--copse", "/bin/true", "--etcd", "/bin/true", "--kube-bin-dir",
                          bins.dir()});
}

TEST(SideBySideScript, NamesTheMissingBinary) {
  ASSERT_TRUE(e2e::HaveKubectl()) << "kubectl is required";
  FakeBinDir bins;
  e2e::CommandResult r = RunScript(bins);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("kube-scheduler not found (in " + bins.dir() + ")"), std::string::npos)
      << r.out;
  bins.Add("kube-scheduler", "v1.36.2");
  r = RunScript(bins);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("kube-apiserver not found in " + bins.dir()), std::string::npos) << r.out;
}

TEST(SideBySideScript, RefusesAServerWithoutTheWorkloadApi) {
  ASSERT_TRUE(e2e::HaveKubectl()) << "kubectl is required";
  FakeBinDir bins;
  bins.Add("kube-scheduler", "v1.20.2");
  bins.Add("kube-apiserver", "v1.20.2");
  e2e::CommandResult r = RunScript(bins);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("kube-apiserver v1.20.2 does not serve the Workload API's PodGroups"),
            std::string::npos)
      << r.out;
}

}  // namespace side_by_side_script_test
}  // namespace copse::bench
