#pragma once
// Go time.Duration text, as metav1.Duration fields of scheduler configuration
// files and copse's duration annotations are written ("15s", "1m30s",
// "100ms", "1.5h").
//
// Thread-safety: pure functions.

#include <chrono>
#include <string>
#include <string_view>

#include "core/result.h"

namespace copse {

// time.ParseDuration: an optional sign, then one or more decimal numbers
// (fractions allowed) each with a unit ns, us (µs, μs), ms, s, m, h; "0" alone
// is zero. kInvalid (message says what is wrong, without a field path) on
// anything else, including overflow of int64 nanoseconds.
Result<std::chrono::nanoseconds> ParseGoDuration(std::string_view text);

// time.Duration.String: "1h2m3.5s", "1.5ms", "0s".
std::string FormatGoDuration(std::chrono::nanoseconds d);

}  // namespace copse
