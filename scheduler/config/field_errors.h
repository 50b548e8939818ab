#pragma once
// FieldErrors: a list of configuration errors, each naming the field path, in
// the formats of k8s.io/apimachinery/pkg/util/validation/field:
//
//   profiles[0].plugins.score.enabled[2].weight: Invalid value: 0: must be in the range [1, 100]
//   profiles[1].schedulerName: Duplicate value: "copse-scheduler"
//   profiles[0].schedulerName: Required value
//   apiVersion: Unsupported value: "v2": supported values: "a", "b"
//   profiles[0].plugins.filter.enabled[0].name: Not found: "Foo"
//   extenders: Forbidden: scheduler extenders are not supported
//
// ToError() aggregates like kube's utilerrors.NewAggregate: one error reads
// as itself, several as "[first, second, ...]".
//
// Thread-safety: a value type.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace copse::scheduler::config {

// Go's %q for the common cases: "text" with \" \\ \n \t escaped.
std::string Quote(std::string_view text);

class FieldErrors {
 public:
  // `value` is printed as given: pass Quote(s) for strings, std::to_string(n) for numbers.
  void Invalid(std::string_view path, std::string_view value, std::string_view detail);
  void Invalid(std::string_view path, int64_t value, std::string_view detail);
  void Required(std::string_view path, std::string_view detail = {});
  void Duplicate(std::string_view path, std::string_view value);
  void NotSupported(std::string_view path, std::string_view value,
                    std::initializer_list<std::string_view> supported);
  void NotFound(std::string_view path, std::string_view value);
  void Forbidden(std::string_view path, std::string_view detail);
  // A preformatted message (decoding errors: unknown or duplicate fields).
  void Add(std::string message);

  bool empty() const noexcept { return messages_.empty(); }
  size_t size() const noexcept { return messages_.size(); }
  const std::vector<std::string>& messages() const noexcept { return messages_; }
  // kInvalid with the aggregated messages. Requires !empty().
  Error ToError() const;

 private:
  std::vector<std::string> messages_;
};

}  // namespace copse::scheduler::config
