// The copse binary: one executable, one subcommand per mode (README, "Using it").
#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "cmd/copse/commands.h"

namespace {

void PrintUsage(std::FILE* out) {
  std::fprintf(out,
               "copse: a Kubernetes gang scheduler\n\n"
               "usage: copse <command> [flags]\n\n"
               "commands:\n");
  for (const auto& cmd : copse::cmd::Commands()) {
    std::fprintf(out, "  %-8s %s\n", std::string(cmd.name).c_str(),
                 std::string(cmd.summary).c_str());
  }
  std::fprintf(out, "\nRun 'copse <command> --help' for the flags of a command.\n");
}

}  // namespace

int main(int argc, char** argv) {
  // A long-running process with steady churn of short-lived objects (decoded
  // pods, HTTP buffers): keep freed memory at the top of the heap instead of
  // returning and re-requesting it from the kernel on every burst (measured
  // on `copse bench basic`: ~5% of the scheduler's CPU went to sysmalloc and
  // heap trimming). Env MALLOC_TRIM_THRESHOLD_/MALLOC_TOP_PAD_ still override.
  if (std::getenv("MALLOC_TRIM_THRESHOLD_") == nullptr) mallopt(M_TRIM_THRESHOLD, 256 << 20);
  if (std::getenv("MALLOC_TOP_PAD_") == nullptr) mallopt(M_TOP_PAD, 64 << 20);
  if (argc < 2) {
    PrintUsage(stderr);
    return 2;
  }
  const std::string_view name = argv[1];
  if (name == "help" || name == "--help" || name == "-h") {
    PrintUsage(stdout);
    return 0;
  }
  for (const auto& cmd : copse::cmd::Commands()) {
    if (cmd.name == name) return cmd.run(argc - 1, argv + 1);
  }
  std::fprintf(stderr, "copse: unknown command \"%s\"\n\n", argv[1]);
  PrintUsage(stderr);
  return 2;
}
