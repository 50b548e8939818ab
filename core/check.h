#pragma once
// CHECK(cond) << ... : aborts with file:line and the message when an invariant breaks.
// Use only for programming errors, never for bad input (that is a Result).

#include <cstdlib>
#include <iostream>
#include <sstream>

namespace copse::internal {
class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* expr) {
    stream_ << file << ":" << line << ": CHECK failed: " << expr << " ";
  }
  [[noreturn]] ~CheckFailure() {
    std::cerr << stream_.str() << std::endl;
    std::abort();
  }
  std::ostream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
};
}  // namespace copse::internal

#define COPSE_CHECK(cond) \
  if (cond) {             \
  } else                  \
    ::copse::internal::CheckFailure(__FILE__, __LINE__, #cond).stream()
