#pragma once
// copse's version and the git commit it was built from, fixed at build time
// (cmake/version_info.cmake generates the definitions; CMake's project
// version, `git rev-parse HEAD` and `git describe --tags --always --dirty`).
// A build without git metadata (a tarball) says "unknown" for both git values.
//
// Thread-safety: constants.

#include <string_view>

namespace copse::cmd {

std::string_view Version();    // "0.1.0"
std::string_view GitCommit();  // full SHA-1, or "unknown"
std::string_view
GitDescribe();  // e.g. "v0.1.0-3-g1a2b3c4-dirty"; the commit when there are no tags

}  // namespace copse::cmd
