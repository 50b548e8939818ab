#pragma once
// The subset of kubectl/kube-apiserver JSONPath used by CRD
// additionalPrinterColumns (k8s.io/client-go/util/jsonpath), evaluated on
// nlohmann::json:
//   .spec.replicas                      fields (also ['a.b'] / ["a"] quoting)
//   .status.conditions[0], [-1]         array index (negative from the end)
//   .items[*], .spec.*                  wildcard over array elements / map values
//   .status.conditions[?(@.type=="Ready")].status
//                                       filter: @.path == / != / < / <= / > / >=
//                                       a string/number/bool literal, or @.path
//                                       alone (exists and not false/null)
//   {.spec.replicas}                    optional surrounding braces
// The path may start with "." or "$." or "$". Anything else (ranges, recursive
// descent "..", unions, functions) is rejected by Parse with kInvalid.
//
// Thread-safety: a JsonPath is immutable after Parse; Find is const.

#include <initializer_list>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace copse::apiserver {

class JsonPath {
 public:
  // kInvalid naming the path and the position of the problem.
  static Result<JsonPath> Parse(std::string_view path);

  JsonPath(JsonPath&&) noexcept;
  JsonPath& operator=(JsonPath&&) noexcept;
  JsonPath(const JsonPath&);
  JsonPath& operator=(const JsonPath&);
  ~JsonPath();

  // All values the path selects in `root`, in document order; empty when
  // nothing matches (a missing field is not an error, as upstream with
  // allowMissingKeys). Pointers point into `root`.
  std::vector<const nlohmann::json*> Find(const nlohmann::json& root) const;

  const std::string& text() const noexcept { return text_; }

  struct Step;  // one parsed step; defined in jsonpath.cc

 private:
  JsonPath();
  std::string text_;
  std::vector<Step> steps_;
};

// Text of a value as `kubectl get -o jsonpath` / a string printer column
// prints it (client-go jsonpath PrintResults): strings raw, integers in
// decimal, floats as Go's fmt.Fprint ("0.5", "1e+06"), bools "true"/"false",
// null "null", objects and arrays as compact JSON.
std::string JsonPathText(const nlohmann::json& value);

// Plain field access of the table printers (table.cc) and the validation
// (validation.cc): a missing field, or one of another type, reads as Go's
// zero value.
namespace json_fields {
// The value at the object keys `path` under `obj`, or null.
const nlohmann::json& Get(const nlohmann::json& obj, std::initializer_list<std::string_view> path);
// `v` if it is a string, else "".
std::string Str(const nlohmann::json& v);
// `v` if it is an array, else an empty array.
const nlohmann::json& Arr(const nlohmann::json& v);
}  // namespace json_fields

}  // namespace copse::apiserver
