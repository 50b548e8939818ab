#pragma once
// JSON text written by hand on hot paths (request bodies sent thousands of
// times a second: bindings, events), where building a DOM and dumping it
// costs more than the request itself; and the nesting-depth guard every
// reader of untrusted JSON applies before parsing.

#include <string>
#include <string_view>

namespace copse {

// Appends `s` as a JSON string literal, quotes included: `"`, `\` and
// control characters are escaped; other bytes (UTF-8 text) pass through.
void AppendJsonString(std::string& out, std::string_view s);
std::string JsonString(std::string_view s);

// Kubernetes' limit on JSON nesting (objects and arrays, as Go's
// encoding/json and sigs.k8s.io/json count it): deeper documents are refused.
inline constexpr size_t kMaxJsonDepth = 10000;

// True when `text` opens more than `limit` objects/arrays inside each other.
// An iterative scan (strings and escapes skipped; the text need not be
// valid JSON): safe to run on any input before a recursive parser does.
// Text no longer than `limit` bytes is never too deep and is not scanned.
bool JsonDepthExceeds(std::string_view text, size_t limit = kMaxJsonDepth) noexcept;

}  // namespace copse
