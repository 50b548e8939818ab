#include "tests/support/paths.h"

namespace copse::test_support {

const char* SourceDir() noexcept { return COPSE_TEST_SOURCE_DIR; }
const char* CopseBinary() noexcept { return COPSE_TEST_BINARY; }

}  // namespace copse::test_support
