// The copse image without a container engine: `copse version` reports the
// project version and the git commit it was built from, the generator says
// "unknown" without git metadata, and deploy/image/assemble.sh assembles the
// Dockerfile's runtime stage (deploy/image/runtime.sh) into a directory from
// which copse runs with nothing of the host: the loader finds every library
// inside it, and `chroot` runs it as uid 65532.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "tests/support/paths.h"

namespace {

namespace fs = std::filesystem;

struct Output {
  int exit_code = -1;
  std::string text;  // stdout and stderr
};

// Runs a shell command line (arguments quoted by the caller).
Output Shell(const std::string& command) {
  Output out;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof(buffer), pipe)) out.text.append(buffer, n);
  const int status = pclose(pipe);
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

std::string Quote(const std::string& s) { return "'" + s + "'"; }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// The version in the top-level CMakeLists.txt's project() call.
std::string ProjectVersion() {
  std::smatch m;
  const std::string text = ReadFile(std::string(COPSE_SOURCE_DIR) + "/CMakeLists.txt");
  static const std::regex kProject(R"(project\(copse VERSION ([0-9.]+))");
  return std::regex_search(text, m, kProject) ? m[1].str() : "";
}

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/copse-image-XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(Version, PrintsTheProjectVersionAndTheCommit) {
  const std::string version = ProjectVersion();
  ASSERT_FALSE(version.empty());
  Output out = Shell(Quote(COPSE_BINARY) + " version");
  ASSERT_EQ(out.exit_code, 0) << out.text;
  EXPECT_EQ(out.text.substr(0, out.text.find('\n')), "copse " + version);

  Output head = Shell("git -C " + Quote(COPSE_SOURCE_DIR) + " rev-parse HEAD");
  ASSERT_EQ(head.exit_code, 0) << "git is required: " << head.text;
  EXPECT_NE(out.text.find("git commit: " + head.text), std::string::npos)
      << out.text << "HEAD: " << head.text;
  Output describe =
      Shell("git -C " + Quote(COPSE_SOURCE_DIR) + " describe --tags --always --dirty");
  ASSERT_EQ(describe.exit_code, 0);
  // Built from this checkout as it is (a dirty tree is reported dirty).
  EXPECT_NE(out.text.find("git describe: " + describe.text), std::string::npos) << out.text;

  Output short_form = Shell(Quote(COPSE_BINARY) + " version --short");
  EXPECT_EQ(short_form.text, version + "\n");
  EXPECT_EQ(Shell(Quote(COPSE_BINARY) + " version --bogus").exit_code, 2);
}

// The generator alone: a source tree without .git (a tarball) says unknown;
// explicit values (a container build) win over git.
TEST(Version, GeneratorWithoutGitSaysUnknown) {
  TempDir tarball;
  const std::string out_file = tarball.path() + "/version_info.cc";
  const std::string script = std::string(COPSE_SOURCE_DIR) + "/cmake/version_info.cmake";
  Output run = Shell("cmake -DSOURCE_DIR=" + Quote(tarball.path()) + " -DOUT=" + Quote(out_file) +
                     " -DVERSION=9.8.7 -P " + Quote(script));
  ASSERT_EQ(run.exit_code, 0) << "cmake is required: " << run.text;
  const std::string generated = ReadFile(out_file);
  EXPECT_NE(generated.find(R"(Version() { return "9.8.7"; })"), std::string::npos) << generated;
  EXPECT_NE(generated.find(R"(GitCommit() { return "unknown"; })"), std::string::npos) << generated;
  EXPECT_NE(generated.find(R"(GitDescribe() { return "unknown"; })"), std::string::npos)
      << generated;

  // Unchanged input: the file is not rewritten (nothing rebuilds).
  const auto written = fs::last_write_time(out_file);
  fs::last_write_time(out_file, written - std::chrono::hours(1));
  const auto backdated = fs::last_write_time(out_file);
  ASSERT_EQ(Shell("cmake -DSOURCE_DIR=" + Quote(tarball.path()) + " -DOUT=" + Quote(out_file) +
                  " -DVERSION=9.8.7 -P " + Quote(script))
                .exit_code,
            0);
  EXPECT_EQ(fs::last_write_time(out_file), backdated);

  ASSERT_EQ(
      Shell("cmake -DSOURCE_DIR=" + Quote(COPSE_SOURCE_DIR) + " -DOUT=" + Quote(out_file) +
            " -DVERSION=9.8.7 -DGIT_COMMIT=0123abc -DGIT_DESCRIBE=v9.8.7-rc1 -P " + Quote(script))
          .exit_code,
      0);
  const std::string given = ReadFile(out_file);
  EXPECT_NE(given.find(R"(GitCommit() { return "0123abc"; })"), std::string::npos) << given;
  EXPECT_NE(given.find(R"(GitDescribe() { return "v9.8.7-rc1"; })"), std::string::npos) << given;
}

// What the runtime stage must hold, from ldd directly (not through runtime.sh).
std::set<std::string> SharedLibraryNames(const std::string& binary) {
  std::set<std::string> names;
  Output ldd = Shell("ldd " + Quote(binary));
  std::istringstream lines(ldd.text);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    static const std::regex kLib(R"(=>\s+(\S+)\s+\()");
    static const std::regex kLoader(R"(^\s*(/\S+)\s+\()");
    if (std::regex_search(line, m, kLib) || std::regex_search(line, m, kLoader)) {
      names.insert(fs::path(m[1].str()).filename().string());
    }
  }
  return names;
}

TEST(Image, AssembledRuntimeStageRunsCopseAlone) {
  ASSERT_EQ(getuid(), 0u) << "the chroot check needs root";
  TempDir dir;
  const std::string stage = dir.path() + "/rootfs";
  const std::string assemble = std::string(COPSE_SOURCE_DIR) + "/deploy/image/assemble.sh";
  Output out = Shell(Quote(assemble) + " " + Quote(stage) + " " + Quote(COPSE_BINARY));
  ASSERT_EQ(out.exit_code, 0) << out.text;
  EXPECT_NE(out.text.find("assemble: ok"), std::string::npos) << out.text;
  const std::string version_line = "copse " + ProjectVersion();
  // Through DIR's loader, and in the chroot as uid 65532.
  EXPECT_NE(out.text.find("(loader in " + stage + "):\n  " + version_line), std::string::npos)
      << out.text;
  EXPECT_NE(out.text.find("(chroot " + stage + ", uid 65532):\n  " + version_line),
            std::string::npos)
      << out.text;

  // Exactly the binary, the libraries ldd names and the user entries: nothing else.
  std::set<std::string> files;
  std::set<std::string> libraries;
  for (const auto& entry : fs::recursive_directory_iterator(stage)) {
    std::error_code ec;
    if (!entry.is_regular_file(ec)) continue;
    if (entry.is_symlink()) continue;
    const std::string relative = fs::relative(entry.path(), stage).string();
    files.insert(relative);
    if (relative.rfind("usr/lib", 0) == 0) libraries.insert(entry.path().filename().string());
  }
  const std::set<std::string> wanted = SharedLibraryNames(COPSE_BINARY);
  ASSERT_FALSE(wanted.empty());
  EXPECT_EQ(libraries, wanted);
  EXPECT_EQ(files.size(), wanted.size() + 3) << "binary, libraries, etc/passwd, etc/group";
  EXPECT_TRUE(files.count("usr/local/bin/copse"));
  const std::string passwd = ReadFile(stage + "/etc/passwd");
  EXPECT_NE(passwd.find("copse:x:65532:65532:"), std::string::npos) << passwd;
  EXPECT_NE(ReadFile(stage + "/etc/group").find("copse:x:65532:"), std::string::npos);

  // The check that matters: without one of those libraries copse does not run there.
  std::string ssl;
  for (const auto& lib : wanted) {
    if (lib.rfind("libssl", 0) == 0) ssl = lib;
  }
  ASSERT_FALSE(ssl.empty());
  Output found = Shell("find " + Quote(stage) + " -name " + Quote(ssl) + " -delete");
  ASSERT_EQ(found.exit_code, 0);
  Output broken = Shell("env -i \"$(command -v chroot)\" --userspec=65532:65532 " + Quote(stage) +
                        " /usr/local/bin/copse version");
  EXPECT_NE(broken.exit_code, 0) << broken.text;
  EXPECT_NE(broken.text.find(ssl), std::string::npos) << broken.text;
}

}  // namespace
