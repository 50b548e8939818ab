#include "kube/exec_credential.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "core/log.h"
#include "core/rfc3339.h"

extern char** environ;

namespace copse::kube {
namespace {

using Json = nlohmann::json;
using SystemTime = std::chrono::system_clock::time_point;

// What a plugin may print before we stop keeping it (tokens are a few KiB).
constexpr size_t kMaxOutput = 1 << 20;

std::string Quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

// "exec plugin of user "u" (command "aws")"
std::string Who(const ExecConfig& exec) {
  return "exec credential plugin of kubeconfig user " + Quoted(exec.user) + " (command " +
         Quoted(exec.command) + ")";
}

Error Failed(const ExecConfig& exec, const std::string& what) {
  return MakeError(ErrorCode::kUnauthorized, Who(exec) + ": " + what);
}

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

// The ExecCredential request in KUBERNETES_EXEC_INFO.
std::string ExecInfo(const ExecConfig& exec, const ExecClusterInfo& cluster) {
  Json spec = {{"interactive", false}};
  if (exec.provide_cluster_info) {
    Json c = {{"server", cluster.server}};
    if (!cluster.tls_server_name.empty()) c["tls-server-name"] = cluster.tls_server_name;
    if (cluster.insecure_skip_tls_verify) c["insecure-skip-tls-verify"] = true;
    if (!cluster.ca_pem.empty()) c["certificate-authority-data"] = EncodeBase64(cluster.ca_pem);
    spec["cluster"] = std::move(c);
  }
  Json info = {{"apiVersion", exec.api_version}, {"kind", "ExecCredential"}, {"spec", spec}};
  return info.dump();
}

// copse's environment with the plugin's variables replacing same-named ones.
std::vector<std::string> ChildEnvironment(const ExecConfig& exec, const std::string& exec_info) {
  std::vector<std::pair<std::string, std::string>> added = exec.env;
  added.emplace_back("KUBERNETES_EXEC_INFO", exec_info);
  std::vector<std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('='));
    const bool replaced =
        std::any_of(added.begin(), added.end(), [&](const auto& kv) { return kv.first == name; });
    if (!replaced) out.emplace_back(entry);
  }
  for (const auto& [name, value] : added) out.push_back(name + "=" + value);
  return out;
}

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { Close(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

struct Output {
  int status = 0;  // waitpid status
  bool timed_out = false;
  std::string out;
  std::string err;
};

// Spawns the plugin (stdin /dev/null, stdout and stderr captured) and waits
// for it within `timeout`.
Result<Output> Spawn(const ExecConfig& exec, const std::vector<std::string>& env,
                     std::chrono::milliseconds timeout) {
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0)
    return Failed(exec, std::string("pipe: ") + std::strerror(errno));
  Fd out_read(out_pipe[0]), out_write(out_pipe[1]);
  if (::pipe2(err_pipe, O_CLOEXEC) != 0)
    return Failed(exec, std::string("pipe: ") + std::strerror(errno));
  Fd err_read(err_pipe[0]), err_write(err_pipe[1]);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_write.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, err_write.get(), 2);
  // The child starts with default signal handling and an empty mask (copse
  // blocks SIGTERM/SIGINT for sigwait).
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(exec.command.c_str()));
  for (const auto& a : exec.args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  pid_t pid = 0;
  const int spawned =
      posix_spawnp(&pid, exec.command.c_str(), &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (spawned != 0) {
    std::string message = spawned == ENOENT
                              ? "executable not found"
                              : std::string("cannot run it: ") + std::strerror(spawned);
    if (spawned == ENOENT || spawned == EACCES) {
      message +=
          exec.install_hint.empty()
              ? std::string(" (it looks like a client-go credential plugin that is not installed)")
              : "\n\n" + Trimmed(exec.install_hint);
    }
    return Failed(exec, message);
  }
  out_write.Close();
  err_write.Close();

  Output output;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  pollfd fds[2] = {{out_read.get(), POLLIN, 0}, {err_read.get(), POLLIN, 0}};
  std::string* sinks[2] = {&output.out, &output.err};
  int open = 2;
  char buffer[16384];
  while (open > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      output.timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    const int ready = ::poll(fds, 2, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof(buffer));
      if (n > 0) {
        const size_t keep =
            std::min(static_cast<size_t>(n), kMaxOutput - std::min(kMaxOutput, sinks[i]->size()));
        sinks[i]->append(buffer, keep);
      } else if (n == 0 || errno != EINTR) {
        fds[i].fd = -1;  // poll ignores negative descriptors
        --open;
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  output.status = status;
  return output;
}

Result<ExecCredentialStatus> Decode(const ExecConfig& exec, const std::string& text) {
  const Json doc = Json::parse(text, nullptr, false);
  if (!doc.is_object()) return Failed(exec, "its output is not a JSON ExecCredential");
  const std::string api_version = doc.value("apiVersion", "");
  if (api_version != exec.api_version) {
    return Failed(exec, "its output has apiVersion " + Quoted(api_version) +
                            ", but the kubeconfig asks for " + Quoted(exec.api_version));
  }
  if (doc.value("kind", "") != "ExecCredential") {
    return Failed(exec, "its output has kind " + Quoted(doc.value("kind", "")) +
                            ", expected \"ExecCredential\"");
  }
  const auto status = doc.find("status");
  if (status == doc.end() || !status->is_object()) {
    return Failed(exec, "its output has no status (ExecCredential.status)");
  }
  ExecCredentialStatus out;
  if (auto token = status->find("token"); token != status->end() && token->is_string()) {
    out.token = token->get<std::string>();
  }
  if (out.token.empty()) {
    if (status->contains("clientCertificateData")) {
      return Failed(exec,
                    "status.clientCertificateData: client certificates from credential plugins "
                    "are not supported; set client-certificate-data in the kubeconfig or have "
                    "the plugin return status.token");
    }
    return Failed(exec, "status.token: missing or empty");
  }
  if (auto expiry = status->find("expirationTimestamp");
      expiry != status->end() && !expiry->is_null()) {
    std::optional<SystemTime> parsed;
    if (expiry->is_string()) parsed = ParseRfc3339(expiry->get<std::string>());
    if (!parsed) {
      return Failed(exec,
                    "status.expirationTimestamp: " + expiry->dump() + " is not an RFC 3339 time");
    }
    out.expiration = *parsed;
  }
  return out;
}

}  // namespace

Result<ExecCredentialStatus> RunExecPlugin(const ExecConfig& exec, const ExecClusterInfo& cluster,
                                           std::chrono::milliseconds timeout) {
  auto output = Spawn(exec, ChildEnvironment(exec, ExecInfo(exec, cluster)), timeout);
  if (!output.ok()) return output.error();
  const std::string stderr_text = Trimmed(output->err);
  const std::string said = stderr_text.empty() ? "" : ": " + stderr_text;
  if (output->timed_out) {
    return Failed(exec, "did not finish within " + std::to_string(timeout.count() / 1000) +
                            " s and was killed" + said);
  }
  if (WIFSIGNALED(output->status)) {
    return Failed(exec, "killed by signal " + std::to_string(WTERMSIG(output->status)) + said);
  }
  if (WEXITSTATUS(output->status) != 0) {
    return Failed(exec, "exited with status " + std::to_string(WEXITSTATUS(output->status)) + said);
  }
  return Decode(exec, output->out);
}

ExecCredentials::ExecCredentials(Options options)
    : options_(std::move(options)), clock_(options_.clock) {
  if (clock_ == nullptr)
    clock_ = std::shared_ptr<const Clock>(&RealClock::Get(), [](const Clock*) {});
}

ExecCredentials::~ExecCredentials() {
  if (background_.joinable()) background_.join();
}

Result<ExecCredentialStatus> ExecCredentials::RunCounted() {
  {
    std::lock_guard lock(mu_);
    ++runs_;
  }
  return RunExecPlugin(options_.exec, options_.cluster, options_.timeout);
}

void ExecCredentials::Store(ExecCredentialStatus status, SystemTime asked) {
  token_ = std::move(status.token);
  ++generation_;
  expiration_ = status.expiration;
  if (expiration_) {
    const auto lifetime = std::max(*expiration_ - asked, SystemTime::duration::zero());
    refresh_at_ =
        *expiration_ - std::min<SystemTime::duration>(lifetime / 4, std::chrono::minutes(5));
    unusable_at_ =
        *expiration_ - std::min<SystemTime::duration>(lifetime / 10, std::chrono::seconds(10));
  }
}

bool ExecCredentials::UsableLocked(SystemTime now) const {
  return !token_.empty() && (!expiration_ || now < unusable_at_);
}

Result<ExecCredentials::Token> ExecCredentials::Get() {
  std::unique_lock lock(mu_);
  for (;;) {
    const SystemTime now = clock_->WallNow();
    if (UsableLocked(now)) {
      if (expiration_ && now >= refresh_at_ && !running_) {
        running_ = true;
        // A finished background run's thread may still be exiting.
        if (background_.joinable()) background_.join();
        background_ = std::thread([this] { BackgroundRefresh(); });
      }
      return Token{token_, generation_};
    }
    if (running_) {
      // Share the run in progress: its token, or its error.
      const uint64_t seen = completed_runs_;
      cv_.wait(lock, [&] { return completed_runs_ != seen; });
      if (!UsableLocked(clock_->WallNow()) && last_error_) return *last_error_;
      continue;
    }
    running_ = true;
    lock.unlock();
    // A token's life is counted from when it was asked for.
    const SystemTime asked = clock_->WallNow();
    Result<ExecCredentialStatus> status = RunCounted();
    lock.lock();
    Finish(std::move(status), asked);
    if (last_error_) return *last_error_;
    return Token{token_, generation_};
  }
}

void ExecCredentials::Finish(Result<ExecCredentialStatus> status, SystemTime asked) {
  running_ = false;
  ++completed_runs_;
  if (status.ok()) {
    Store(std::move(status).value(), asked);
    last_error_.reset();
  } else {
    last_error_ = status.error();
  }
  cv_.notify_all();
}

void ExecCredentials::BackgroundRefresh() {
  const SystemTime asked = clock_->WallNow();
  Result<ExecCredentialStatus> status = RunCounted();
  std::lock_guard lock(mu_);
  if (!status.ok()) {
    // Keep the current token while it lasts; try again halfway to its end.
    LogWarning("kube", "refreshing a token ahead of its expiry: " + status.error().message);
    const SystemTime now = clock_->WallNow();
    refresh_at_ = now + (unusable_at_ - now) / 2;
  }
  Finish(std::move(status), asked);
}

std::string ExecCredentials::Current() const {
  std::lock_guard lock(mu_);
  return token_;
}

void ExecCredentials::Invalidate(uint64_t generation) {
  std::lock_guard lock(mu_);
  if (generation == generation_) token_.clear();
}

uint64_t ExecCredentials::runs() const {
  std::lock_guard lock(mu_);
  return runs_;
}

}  // namespace copse::kube
