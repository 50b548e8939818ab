#pragma once
// The Common Expression Language (CEL) as Kubernetes Dynamic Resource
// Allocation uses it for device selectors (resource.k8s.io/v1
// CELDeviceSelector): one variable `device`, declared as
// staging/src/k8s.io/dynamic-resource-allocation/cel/compile.go declares it,
// the CEL standard library, and the Kubernetes libraries of the API server's
// base environment that a selector can reach (quantity, semver, strings,
// regex find, lists, sets, optionals, cel.bind). cel/README.md lists what is
// supported and where copse differs from cel-go.
//
//   auto program = cel::Compile(R"(device.attributes["gpu.example.com"].model == "H100")");
//   if (!program.ok()) ...                      // message as kube-apiserver's, with the column
//   cel::Device device{.driver = "gpu.example.com", .attributes = attrs, .capacity = caps};
//   Result<bool> matches = program->Matches(device);   // runtime errors as kube-scheduler's
//
// Semantics follow cel-go as Kubernetes configures it: commutative `&&` and
// `||` (`false && error` is false, `true || error` is true), errors on a
// missing map key (`device.attributes["d"].x` when the device has no `x`; an
// unknown domain is an empty map, so `has(device.attributes["d"].x)` is the
// guard), checked integer arithmetic, no implicit numeric conversions except
// the cross-type ordering comparisons (`1 < 1.5`), a per-evaluation cost
// limit, and compile-time type checking.
//
// Thread-safety: Compile, Validate and FormatFieldError are pure. A Program is
// immutable: any number of threads may evaluate the same Program at once
// (each evaluation has its own scratch state), and copies share the compiled
// form. Semver is a value type.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/quantity.h"
#include "core/result.h"

namespace copse::cel {

// resource.k8s.io CELSelectorExpressionMaxLength: longer expressions are
// refused before they are parsed.
inline constexpr size_t kMaxExpressionLength = 10 * 1024;
// resource.k8s.io CELSelectorExpressionMaxCost: the runtime cost limit of one
// evaluation, in cel-go's cost units (about one per operation; string
// functions cost a tenth of their length), and the limit the estimated
// worst-case cost is held to by Validate.
inline constexpr uint64_t kSelectorCostLimit = 1'000'000;
// How deeply an expression may nest (parentheses, calls, literals, member
// chains, operators of one precedence in a row): cel-go's parser default.
// Parsing, checking and evaluation recurse at most this deep, so no
// expression can exhaust the stack.
inline constexpr int kMaxRecursionDepth = 250;

// A semantic version (https://semver.org, 2.0.0): the value of a DRA
// "version" attribute and of CEL's semver(). Parsing and precedence are those
// of github.com/blang/semver/v4, which Kubernetes uses.
class Semver {
 public:
  // MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD] with no leading zeros in numeric
  // parts; errors carry blang/semver's messages ("No Major.Minor.Patch
  // elements found", "Invalid character(s) found in major number \"x\"", ...).
  static Result<Semver> Parse(std::string_view text);
  // semver(text, true): a leading "v" is dropped, leading zeros are removed
  // and a missing minor or patch number is 0 ("v1.02" is 1.2.0).
  static Result<Semver> ParseNormalized(std::string_view text);

  uint64_t major() const noexcept { return major_; }
  uint64_t minor() const noexcept { return minor_; }
  uint64_t patch() const noexcept { return patch_; }
  std::string ToString() const;

  // Semantic-version precedence: -1, 0 or 1. Build metadata is ignored, so
  // 1.0.0+a and 1.0.0+b compare (and are ==) equal, as in Kubernetes.
  int Compare(const Semver& other) const noexcept;
  friend bool operator==(const Semver& a, const Semver& b) noexcept { return a.Compare(b) == 0; }

 private:
  struct PreRelease {
    bool numeric = false;
    uint64_t number = 0;
    std::string text;  // when not numeric
  };
  uint64_t major_ = 0;
  uint64_t minor_ = 0;
  uint64_t patch_ = 0;
  std::vector<PreRelease> pre_;
  std::vector<std::string> build_;
};

// The value of one device attribute (resource.k8s.io/v1 DeviceAttribute):
// exactly one of int, bool, string or version. Strings and versions are
// views: the caller keeps them alive while it evaluates.
using AttributeValue = std::variant<int64_t, bool, std::string_view, const Semver*>;

// One attribute of a device. `domain` is the qualified name's prefix, or the
// device's driver when the name has none ("model" of driver
// "gpu.example.com" is domain "gpu.example.com", name "model"); see
// SplitQualifiedName.
struct DeviceAttribute {
  std::string_view domain;
  std::string_view name;
  AttributeValue value;
};

// One capacity of a device (its `value` quantity), named like an attribute.
struct DeviceCapacity {
  std::string_view domain;
  std::string_view name;
  const Quantity* value = nullptr;  // never null
};

// The `device` variable of one evaluation: views over the caller's device
// model, so building one per device costs nothing (no map is made; lookups
// scan the spans, which hold at most 32 entries per device in the API).
// Expressions see:
//   device.driver                      string
//   device.attributes[domain][name]    int, bool, string or semver ("any")
//   device.capacity[domain][name]      kubernetes.Quantity
//   device.allowMultipleAllocations    bool (when declared, CompileOptions)
// A domain the device has nothing in is an empty map; a missing name is the
// runtime error "no such key: <name>". If two entries have the same domain
// and name, the first one counts.
struct Device {
  std::string_view driver;
  std::span<const DeviceAttribute> attributes;
  std::span<const DeviceCapacity> capacity;
  bool allow_multiple_allocations = false;
};

// Splits a qualified attribute or capacity name ("gpu.example.com/model") at
// its first '/' into domain and name; a name without '/' gets `driver` as its
// domain (Kubernetes' parseQualifiedName).
std::pair<std::string_view, std::string_view> SplitQualifiedName(std::string_view qualified_name,
                                                                 std::string_view driver) noexcept;

struct CompileOptions {
  // The runtime cost limit of one evaluation.
  uint64_t cost_limit = kSelectorCostLimit;
  // Expressions longer than this (in bytes) are refused.
  size_t max_length = kMaxExpressionLength;
  // Declares device.allowMultipleAllocations (Kubernetes declares it when
  // the DRAConsumableCapacity feature is on, the default since 1.36).
  bool declare_allow_multiple_allocations = true;
};

// The outcome of one successful evaluation.
struct Evaluation {
  bool matches = false;
  // The cost the evaluation used, in the units of kSelectorCostLimit.
  uint64_t actual_cost = 0;
};

namespace internal {
struct CompiledProgram;  // cel/program.h
}

// A compiled selector: immutable and shared by copies (see thread-safety at
// the top).
class Program {
 public:
  // Evaluates the selector for one device. Errors (ErrorCode::kInvalid) have
  // cel-go's messages, which kube-scheduler reports after "CEL runtime
  // error: ": "no such key: model", "no such overload", "integer overflow",
  // "division by zero", "operation cancelled: actual cost limit exceeded",
  // and, for a result that is not a bool, "CEL result of type int could not
  // be converted to bool".
  Result<bool> Matches(const Device& device) const;
  // Matches, and the cost the evaluation used.
  Result<Evaluation> Evaluate(const Device& device) const;

  // The estimated worst-case cost of one evaluation (cel-go's estimate with
  // DRA's size bounds: strings of at most 64 characters, maps of at most 32
  // entries), saturating at UINT64_MAX for unbounded loops.
  uint64_t estimated_max_cost() const noexcept;
  std::string_view expression() const noexcept;

 private:
  friend Result<Program> Compile(std::string_view expression, const CompileOptions& options);
  explicit Program(std::shared_ptr<const internal::CompiledProgram> impl);
  std::shared_ptr<const internal::CompiledProgram> impl_;
};

// Parses and type-checks a selector against the DRA environment. Errors are
// ErrorCode::kInvalid with Error::reason the kind of Kubernetes field error
// the API server would report:
//   "FieldValueTooLong"  longer than options.max_length; message "may not be
//                        more than 10240 bytes"
//   "FieldValueInvalid"  a syntax or type error; message as cel-go's, e.g.
//                        "compilation failed: ERROR: <input>:1:1: undeclared
//                        reference to 'devce' (in container '')\n | devce.driver\n | ^"
//                        (one such block per error, the column counted in
//                        characters from 1), or "must evaluate to bool or the
//                        unknown type, not int" for a non-boolean selector.
// A selector of type `any` (e.g. a bare attribute) compiles, as in
// Kubernetes, and fails at runtime unless it yields a bool.
Result<Program> Compile(std::string_view expression, const CompileOptions& options = {});

// What kube-apiserver checks when a selector is stored (validateCELSelector):
// Compile's errors, plus reason "FieldValueForbidden", message "too complex,
// exceeds cost limit", when the estimated worst-case cost is above
// options.cost_limit.
Status Validate(std::string_view expression, const CompileOptions& options = {});

// Formats an error of Compile or Validate as Kubernetes prints a field error,
// for events and conditions:
//   spec.devices.requests[0].exactly.selectors[0].cel.expression: Invalid value: "devce.driver":
//   compilation failed: ...
//   ...cel.expression: Too long: may not be more than 10240 bytes
//   ...cel.expression: Forbidden: too complex, exceeds cost limit
// An error of another kind is "<field_path>: <message>".
std::string FormatFieldError(std::string_view field_path, std::string_view expression,
                             const Error& error);

}  // namespace copse::cel
