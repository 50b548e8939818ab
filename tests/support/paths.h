#pragma once
// Where the checkout and the built `copse` binary are, for tests that read
// the repository's files or run the binary.
//
// The absolute paths are compiled into one translation unit (paths.cc), not
// into every test's command line: a path there changes the compile command
// of each test file per checkout, and every clean clone then misses ccache.

namespace copse::test_support {

// The source tree's root (no trailing slash).
const char* SourceDir() noexcept;
// The `copse` binary of this build; empty when the build has none.
const char* CopseBinary() noexcept;

}  // namespace copse::test_support

#define COPSE_SOURCE_DIR (::copse::test_support::SourceDir())
#define COPSE_BINARY (::copse::test_support::CopseBinary())
