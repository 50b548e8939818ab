#pragma once
// The CEL type checker (internal to cel/): resolves identifiers (the DRA
// `device` variable, comprehension and cel.bind variables, type names) and
// function overloads, and gives every node its type, with cel-go's rules and
// error messages ("undeclared reference to 'x' (in container '')", "found no
// matching overload for '_+_' applied to '(int, string)'", "undefined field
// 'x'", ...). Aggregate literals must be homogeneous, as in Kubernetes.

#include <vector>

#include "cel/ast.h"
#include "cel/types.h"

namespace copse::cel::internal {

struct CheckOptions {
  bool declare_allow_multiple_allocations = true;
};

struct CheckResult {
  std::vector<Issue> issues;
  int num_slots = 0;  // local variable slots the evaluation needs
};

// Annotates `root` in place; types are allocated in `store`.
CheckResult Check(Node& root, TypeStore& store, const CheckOptions& options);

}  // namespace copse::cel::internal
