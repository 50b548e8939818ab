#pragma once
// The function library (internal to cel/): every overload the DRA
// environment declares, one table row each, with its signature (for the
// checker), its implementation (for the evaluator) and its cost rule (for
// the runtime cost and the estimate), after cel-go's standard library and
// the Kubernetes base environment's libraries.
//
// Thread-safety: the table is built once (thread-safe static) and read-only.

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "cel/types.h"
#include "cel/value.h"

namespace re2 {
class RE2;
}

namespace copse::cel::internal {

class Node;

// args[0] is the receiver of a member overload. The evaluator has checked
// that the arguments match the overload's runtime kinds and are not errors.
using Impl = Value (*)(EvalContext& ctx, const Node& call, const Value* args);

// How an overload's call is charged (cel-go's CostTracker.costCall and
// Kubernetes' library CostEstimator). Sizes are CostSize; "0.1x" is
// rounded up.
enum class CostRule : uint8_t {
  kOne,              // 1
  kTraverseFirst,    // 0.1 x size(args[0])
  kTraverseFirst2x,  // 0.2 x size(args[0])
  kJoin,             // 0.2 x size(result)
  kInList,           // size(args[1])
  kCompareMin,       // 0.1 x min(size(args[0]), size(args[1])), at least 1 unless both empty
  kConcat,           // 0.1 x (size(args[0]) + size(args[1]))
  kContains,         // (0.1 x size(args[0])) x (0.1 x size(args[1]))
  kRegex,            // (0.1 x (1 + size(args[0]))) x (0.25 x size(args[1]))
  kListTraverse,     // size(args[0]) (k8s lists library)
  kListProduct,      // size(args[0]) x size(args[1]) (sets library), at least 1
};

struct Overload {
  std::string_view function;  // "_+_", "size", "optional.of"
  std::string_view id;        // cel-go's overload id
  bool member = false;
  std::vector<Type> args;  // declared argument types (receiver first), parameters A and B
  Type result = nullptr;
  Impl impl = nullptr;
  CostRule cost = CostRule::kOne;
  // A pure function of its arguments that may be evaluated at compile time
  // when they are constants.
  bool foldable = true;
};

// Type parameters of the declarations (ids 0 and 1); the checker replaces
// them with fresh parameters per call.
inline constexpr int kParamA = 0;
inline constexpr int kParamB = 1;

// All overloads of a function name, or null if the name is not a function.
const std::vector<const Overload*>* LookupFunction(std::string_view name);

// Whether a runtime value may be passed where `declared` is expected.
bool ValueMatchesType(const Value& v, Type declared);

// The cost of one call, from its arguments and result.
uint64_t CallCost(EvalContext& ctx, const Overload& o, const Value* args, size_t nargs,
                  const Value& result);

// Compiles a pattern with RE2 (Go's regexp syntax); check ok().
std::shared_ptr<const re2::RE2> CompileRegex(std::string_view pattern);

// Whether a function takes a regular expression as its argument `index`
// (matches, find, findAll), so that a constant pattern is compiled once.
bool TakesRegex(const Overload& o, size_t index);

}  // namespace copse::cel::internal
