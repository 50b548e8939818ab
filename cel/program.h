#pragma once
// The compiled form behind cel::Program, the evaluator and the cost
// estimator (internal to cel/).
//
// Thread-safety: a CompiledProgram is immutable once built; Evaluate keeps
// all per-evaluation state in its own EvalContext, so any number of threads
// may evaluate one program at once.

#include <cstdint>
#include <memory>
#include <string>

#include "cel/ast.h"
#include "cel/types.h"
#include "cel/value.h"

namespace copse::cel::internal {

struct CompiledProgram {
  std::string expression;
  std::unique_ptr<Node> root;
  TypeStore types;
  // Constants (literals and folded calls) live here.
  Arena constants{kMaxEvaluationMemory};
  ValueStore constant_values;
  int num_slots = 0;
  uint64_t cost_limit = kSelectorCostLimit;
  uint64_t estimated_max_cost = 0;
};

// Evaluates a checked node. Throws Cancelled at the cost or memory limit.
Value Eval(EvalContext& ctx, const Node& n);

// The worst-case cost of evaluating a checked tree (cel-go's EstimateCost
// with the size bounds of the DRA device), saturating at UINT64_MAX.
uint64_t EstimateMaxCost(const Node& root, int num_slots);

}  // namespace copse::cel::internal
