#pragma once
// The store's JSON text <-> DOM conversions on its write path (every create,
// update, patch and bind): the same results as nlohmann's
// `json::parse(text)` and `j.dump(-1, ' ', false, error_handler_t::replace)`,
// faster.
//
//   ParseJson  simdjson parses and validates the text, then the nlohmann DOM
//              is built from its tape (nlohmann's own lexer was most of a
//              create's parse time). Numbers keep nlohmann's types: a
//              non-negative integer is number_unsigned, a negative one
//              number_integer. Text that simdjson rejects or that holds a
//              float or an integer beyond 64 bits goes to json::parse, so the
//              errors (json::parse_error) and the rarer number forms are
//              exactly nlohmann's.
//   DumpJson   writes runs of plain bytes at once instead of nlohmann's
//              byte-at-a-time escaping; floats and strings that are not valid
//              UTF-8 are written by nlohmann itself (invalid bytes become
//              U+FFFD, as error_handler_t::replace does).
//
// Only included by the API server's .cc files (it brings nlohmann/json.hpp).

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace copse::apiserver {

nlohmann::json ParseJson(std::string_view text);  // throws nlohmann::json::parse_error
std::string DumpJson(const nlohmann::json& value);
void AppendJson(std::string& out, const nlohmann::json& value);

}  // namespace copse::apiserver
