#pragma once
// Drives the real `copse local` binary and the machine's kubectl.
//
// LocalCluster starts `copse local` on free ports with its kubeconfig in a
// temporary directory and waits (with a deadline, reading the process's
// stdout) for its "ready" line. Kubectl() runs kubectl against it with a
// private discovery cache and returns exit code and output. Background
// processes (kubectl get -w) are read line by line with a deadline.

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/process.h"

namespace copse::e2e {

class LocalCluster {
 public:
  explicit LocalCluster(std::vector<std::string> extra_flags = {});
  ~LocalCluster();

  bool ready() const { return ready_; }
  const std::string& kubeconfig() const { return kubeconfig_; }
  const std::string& dir() const { return dir_; }
  std::string startup_output() const { return process_ ? process_->seen() : std::string(); }

  // kubectl <args...> against this cluster (argv, no shell).
  CommandResult Kubectl(const std::vector<std::string>& args, const std::string& stdin_text = {});
  // kubectl in the background (e.g. get -w).
  std::unique_ptr<Process> KubectlBackground(const std::vector<std::string>& args);

  // Writes `content` to a file in the cluster's temp dir and returns its path.
  std::string WriteFile(const std::string& name, const std::string& content);

 private:
  std::vector<std::string> KubectlArgv(const std::vector<std::string>& args) const;
  std::string dir_;
  std::string kubeconfig_;
  std::unique_ptr<Process> process_;
  bool ready_ = false;
};

}  // namespace copse::e2e
