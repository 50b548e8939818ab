#include "core/log.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>

namespace copse {

namespace {

std::atomic<int> g_verbosity{0};

void Write(char severity, std::string_view component, std::string_view message) {
  const auto now = std::chrono::system_clock::now();
  const std::time_t secs = std::chrono::system_clock::to_time_t(now);
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() %
      1000000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char head[40];
  const int n = std::snprintf(head, sizeof(head), "%c%02d%02d %02d:%02d:%02d.%06lld ", severity,
                              tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                              static_cast<long long>(micros));
  std::string line(head, n > 0 ? static_cast<size_t>(n) : 0);
  line += component;
  line += "] ";
  line += message;
  if (line.empty() || line.back() != '\n') line += '\n';
  // One write(2): lines of concurrent threads do not interleave.
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t w = ::write(STDERR_FILENO, line.data() + done, line.size() - done);
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
}

}  // namespace

void SetLogVerbosity(int level) { g_verbosity.store(level, std::memory_order_relaxed); }
int LogVerbosity() { return g_verbosity.load(std::memory_order_relaxed); }
bool LogEnabled(int level) { return level <= LogVerbosity(); }

void Log(int level, std::string_view component, std::string_view message) {
  if (LogEnabled(level)) Write('I', component, message);
}
void LogWarning(std::string_view component, std::string_view message) {
  Write('W', component, message);
}
void LogError(std::string_view component, std::string_view message) {
  Write('E', component, message);
}

}  // namespace copse
