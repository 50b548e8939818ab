#include "tests/e2e/kubectl/harness.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include "tests/support/paths.h"

namespace copse::e2e {

LocalCluster::LocalCluster(std::vector<std::string> extra_flags) {
  char tmpl[] = "/tmp/copse-e2e-XXXXXX";
  dir_ = mkdtemp(tmpl);
  kubeconfig_ = dir_ + "/kubeconfig";
  std::vector<std::string> argv = {COPSE_BINARY,           "local", "--port",           "0",
                                   "--http-port",          "0",     "--kubeconfig-out", kubeconfig_,
                                   "--pod-ready-delay-ms", "200"};
  bool has_nodes = false;
  for (const auto& f : extra_flags) has_nodes |= f == "--nodes";
  if (!has_nodes) {
    argv.push_back("--nodes");
    argv.push_back("6");
  }
  argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
  process_ = std::make_unique<Process>(argv);
  ready_ = process_->WaitForLine("copse local: ready", std::chrono::seconds(30));
}

LocalCluster::~LocalCluster() {
  process_.reset();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::vector<std::string> LocalCluster::KubectlArgv(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {"kubectl",     "--kubeconfig",          kubeconfig_,
                                   "--cache-dir", dir_ + "/kubectl-cache", "--request-timeout",
                                   "20s"};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

CommandResult LocalCluster::Kubectl(const std::vector<std::string>& args,
                                    const std::string& stdin_text) {
  return RunCommand(KubectlArgv(args), stdin_text);
}

std::unique_ptr<Process> LocalCluster::KubectlBackground(const std::vector<std::string>& args) {
  auto argv = KubectlArgv(args);
  // --request-timeout would end a watch; drop it for background commands.
  argv.erase(argv.begin() + 5, argv.begin() + 7);
  return std::make_unique<Process>(argv);
}

std::string LocalCluster::WriteFile(const std::string& name, const std::string& content) {
  const std::string path = dir_ + "/" + name;
  std::ofstream(path) << content;
  return path;
}

}  // namespace copse::e2e
