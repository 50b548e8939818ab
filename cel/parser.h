#pragma once
// The CEL parser (internal to cel/): cel-spec's grammar (langdef.md), with
// the macros has(), all(), exists(), exists_one(), map(), filter() and
// cel.bind() expanded, optional syntax (`.?`, `[?`, `?` in literals), and
// nesting limited to kMaxRecursionDepth. It stops at the first syntax error.

#include <memory>
#include <string_view>
#include <vector>

#include "cel/ast.h"

namespace copse::cel::internal {

struct ParseResult {
  std::unique_ptr<Node> root;  // null when there are issues
  std::vector<Issue> issues;
};

ParseResult Parse(std::string_view source);

}  // namespace copse::cel::internal
