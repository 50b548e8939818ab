#pragma once
// Parsing RFC 3339 timestamps as Kubernetes writes them (metav1.Time,
// MicroTime) and as credential plugins print them. Formatting is in
// core/clock.h (FormatRfc3339, FormatRfc3339Micro).
//
// Thread-safety: pure functions.

#include <chrono>
#include <optional>
#include <string_view>

namespace copse {

// "2024-01-02T03:04:05Z", with optional fractional seconds (up to
// nanoseconds) and a "Z" or "+hh:mm"/"-hh:mm" offset; nullopt for anything
// else (the whole text must match).
std::optional<std::chrono::system_clock::time_point> ParseRfc3339(std::string_view text);

}  // namespace copse
