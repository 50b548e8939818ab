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

namespace copse::e2e {

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout and stderr, interleaved
};

// A child process whose stdout+stderr we read; killed on destruction.
class Process {
 public:
  Process(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env = {});
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  // Reads until a line containing `needle` arrives or the deadline passes.
  // Returns everything read so far in `seen`.
  bool WaitForLine(const std::string& needle, std::chrono::milliseconds timeout);
  const std::string& seen() const { return seen_; }
  void Kill();
  // Waits for exit (after Kill or on its own); returns the exit status.
  int Wait();
  int pid() const { return pid_; }

 private:
  int pid_ = -1;
  int fd_ = -1;
  std::string seen_;
};

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

// Runs argv to completion with a deadline, capturing output.
CommandResult RunCommand(const std::vector<std::string>& argv, const std::string& stdin_text = {},
                         std::chrono::milliseconds timeout = std::chrono::seconds(60));

bool HaveKubectl();

}  // namespace copse::e2e
