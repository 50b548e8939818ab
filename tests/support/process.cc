#include "tests/support/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace copse::e2e {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<char*> CArgv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const auto& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

// fork+exec with stdout/stderr on a pipe and stdin on another pipe (or /dev/null).
int Spawn(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
          int* out_fd, int* in_fd) {
  int out_pipe[2];
  int in_pipe[2];
  if (pipe(out_pipe) != 0 || pipe(in_pipe) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    dup2(out_pipe[1], 2);
    close(out_pipe[0]);
    close(out_pipe[1]);
    close(in_pipe[0]);
    close(in_pipe[1]);
    for (const auto& kv : extra_env) putenv(const_cast<char*>(kv.c_str()));
    auto cargv = CArgv(argv);
    execvp(cargv[0], cargv.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(in_pipe[0]);
  *out_fd = out_pipe[0];
  if (in_fd != nullptr) {
    *in_fd = in_pipe[1];
  } else {
    close(in_pipe[1]);
  }
  return pid;
}

// Reads what is available within `remaining`; returns false on EOF/timeout.
bool ReadSome(int fd, std::string* into, std::chrono::milliseconds remaining) {
  pollfd p{fd, POLLIN, 0};
  const int r = poll(&p, 1, static_cast<int>(std::max<int64_t>(remaining.count(), 0)));
  if (r <= 0) return false;
  char buf[8192];
  const ssize_t n = read(fd, buf, sizeof(buf));
  if (n <= 0) return false;
  into->append(buf, static_cast<size_t>(n));
  return true;
}

}  // namespace

Process::Process(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env) {
  pid_ = Spawn(argv, extra_env, &fd_, nullptr);
}

Process::~Process() {
  Kill();
  Wait();
  if (fd_ >= 0) close(fd_);
}

bool Process::WaitForLine(const std::string& needle, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  size_t scanned = 0;
  for (;;) {
    // Only complete lines count.
    size_t nl;
    while ((nl = seen_.find('\n', scanned)) != std::string::npos) {
      if (seen_.substr(scanned, nl - scanned).find(needle) != std::string::npos) return true;
      scanned = nl + 1;
    }
    const auto remaining =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (remaining.count() <= 0) return false;
    if (!ReadSome(fd_, &seen_, remaining)) {
      if (Clock::now() >= deadline) return false;
      // EOF: the process exited; nothing more will come.
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 0) > 0 && (p.revents & POLLHUP) && !(p.revents & POLLIN)) return false;
    }
  }
}

void Process::Kill() {
  if (pid_ > 0) kill(-pid_, SIGTERM);
}

void Process::KillHard() {
  if (pid_ > 0) kill(-pid_, SIGKILL);
}

void Process::Drain() {
  if (fd_ < 0) return;
  while (ReadSome(fd_, &seen_, std::chrono::milliseconds(0))) {
  }
}

int Process::Wait() {
  if (pid_ <= 0) return -1;
  int status = 0;
  // Give the process a bounded time to exit after SIGTERM, then SIGKILL.
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  for (;;) {
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) break;
    if (r < 0) {
      status = -1;
      break;
    }
    if (Clock::now() > deadline) {
      kill(-pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      break;
    }
    ReadSome(fd_, &seen_, std::chrono::milliseconds(50));  // drain while waiting
  }
  // What it wrote just before it exited is still in the pipe.
  Drain();
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

CommandResult RunCommand(const std::vector<std::string>& argv, const std::string& stdin_text,
                         std::chrono::milliseconds timeout) {
  CommandResult result;
  int out_fd = -1;
  int in_fd = -1;
  const pid_t pid = Spawn(argv, {}, &out_fd, &in_fd);
  if (pid < 0) return result;
  if (!stdin_text.empty()) {
    (void)!write(in_fd, stdin_text.data(), stdin_text.size());
  }
  close(in_fd);
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    const auto remaining =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (remaining.count() <= 0) {
      kill(-pid, SIGKILL);
      result.out += "\n[timed out]";
      break;
    }
    if (!ReadSome(out_fd, &result.out, remaining)) {
      pollfd p{out_fd, POLLIN, 0};
      if (poll(&p, 1, 0) >= 0 && !(p.revents & POLLIN)) break;  // EOF
    }
  }
  close(out_fd);
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

bool HaveKubectl() { return RunCommand({"kubectl", "version", "--client"}).exit_code == 0; }

}  // namespace copse::e2e
