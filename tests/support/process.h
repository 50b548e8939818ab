#pragma once
// Child processes for the tests that drive binaries (e2e tests, the deploy
// tests' `kubectl kustomize`): run to completion with a deadline, or keep
// running in the background and read line by line with a deadline.
//
// Thread-safety: a Process belongs to one thread.

#include <chrono>
#include <string>
#include <vector>

namespace copse::e2e {

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout and stderr, interleaved
};

// A child process whose stdout+stderr we read; killed on destruction. It runs
// in its own process group; Kill() signals the group.
class Process {
 public:
  Process(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env = {});
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  // Reads until a line containing `needle` arrives or the deadline passes.
  // Returns everything read so far in `seen`.
  bool WaitForLine(const std::string& needle, std::chrono::milliseconds timeout);
  // Reads what has arrived without waiting (for logs of a running process).
  void Drain();
  const std::string& seen() const { return seen_; }
  // SIGTERM to the process group.
  void Kill();
  // SIGKILL to the process group (a crash: no cleanup in the child).
  void KillHard();
  // Waits for exit (after Kill or on its own); returns the exit status, or
  // -1 when it ended by a signal.
  int Wait();
  int pid() const { return pid_; }

 private:
  int pid_ = -1;
  int fd_ = -1;
  std::string seen_;
};

// Runs argv to completion with a deadline, capturing output.
CommandResult RunCommand(const std::vector<std::string>& argv, const std::string& stdin_text = {},
                         std::chrono::milliseconds timeout = std::chrono::seconds(60));

bool HaveKubectl();

}  // namespace copse::e2e
