#include "grove/runtime/log.h"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>

namespace copse::grove::runtime {

namespace {
std::atomic<int> g_level{0};
std::mutex g_mu;
}  // namespace

void SetLogLevel(int level) { g_level.store(level); }
int LogLevel() { return g_level.load(); }

void Log(int level, std::string_view component, std::string_view message) {
  if (level > g_level.load()) return;
  std::string line = "grove ";
  line += component;
  line += ": ";
  line += message;
  line += '\n';
  std::lock_guard<std::mutex> lock(g_mu);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace copse::grove::runtime
