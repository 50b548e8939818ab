#pragma once
// JSON text written by hand on hot paths (request bodies sent thousands of
// times a second: bindings, events), where building a DOM and dumping it
// costs more than the request itself.

#include <string>
#include <string_view>

namespace copse {

// Appends `s` as a JSON string literal, quotes included: `"`, `\` and
// control characters are escaped; other bytes (UTF-8 text) pass through.
void AppendJsonString(std::string& out, std::string_view s);
std::string JsonString(std::string_view s);

}  // namespace copse
