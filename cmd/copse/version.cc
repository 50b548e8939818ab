// `copse version`: the version and the git commit the binary was built from.
#include "cmd/copse/version.h"

#include <cstdio>
#include <cstring>
#include <string>

#include "cmd/copse/commands.h"

namespace copse::cmd {

int RunVersion(int argc, char** argv) {
  bool short_form = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--short") == 0) {
      short_form = true;
    } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::printf(
          "copse version [--short]\n"
          "  prints the version and the git commit copse was built from\n"
          "  --short  the version only\n");
      return 0;
    } else {
      std::fprintf(stderr, "copse version: unknown flag \"%s\"\n", argv[i]);
      return 2;
    }
  }
  const std::string version(Version());
  if (short_form) {
    std::printf("%s\n", version.c_str());
    return 0;
  }
  std::printf("copse %s\ngit commit: %s\ngit describe: %s\n", version.c_str(),
              std::string(GitCommit()).c_str(), std::string(GitDescribe()).c_str());
  return 0;
}

}  // namespace copse::cmd
