#pragma once
// Label and field selectors as the API server parses them from the
// `labelSelector` / `fieldSelector` query parameters (string form of
// k8s.io/apimachinery/pkg/labels and pkg/fields), matched against the
// metadata a stored object version carries (no JSON parsing on the read path).
//
//   ParseLabelSelector("a=b,c!=d,e in (x,y),f notin (z),!g,h,i>3")
//   ParseFieldSelector("metadata.name=x,spec.nodeName!=")
//
// Errors are kInvalid with http_status 400 / reason BadRequest and messages
// in upstream's words ("unable to parse requirement: ...", "invalid selector: ...").
//
// Thread-safety: immutable values after parsing; Matches() is const.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/labels.h"
#include "core/result.h"

namespace copse::apiserver {

struct LabelRequirement {
  enum class Op : uint8_t { kEquals, kNotEquals, kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt };
  std::string key;
  Op op = Op::kExists;
  std::vector<std::string> values;

  bool Matches(const Labels& labels) const noexcept;
};

class LabelSelectorExpr {
 public:
  LabelSelectorExpr() = default;  // matches everything
  explicit LabelSelectorExpr(std::vector<LabelRequirement> requirements)
      : requirements_(std::move(requirements)) {}
  bool Matches(const Labels& labels) const noexcept;
  bool Empty() const noexcept { return requirements_.empty(); }
  const std::vector<LabelRequirement>& requirements() const noexcept { return requirements_; }

 private:
  std::vector<LabelRequirement> requirements_;
};

Result<LabelSelectorExpr> ParseLabelSelector(std::string_view text);

struct FieldTerm {
  std::string field;
  bool negated = false;
  std::string value;
  int index = -1;  // position in the resource's selectable fields, -1: metadata.name/namespace
};

class FieldSelectorExpr {
 public:
  FieldSelectorExpr() = default;  // matches everything
  bool Empty() const noexcept { return terms_.empty(); }
  const std::vector<FieldTerm>& terms() const noexcept { return terms_; }
  std::vector<FieldTerm>& mutable_terms() noexcept { return terms_; }

  // `fields` are the object's values for the resource's selectable fields
  // (same order as ResourceInfo::field_selectors).
  bool Matches(std::string_view ns, std::string_view name,
               const std::vector<std::string>& fields) const noexcept;

 private:
  friend Result<FieldSelectorExpr> ParseFieldSelector(std::string_view text);
  std::vector<FieldTerm> terms_;
};

Result<FieldSelectorExpr> ParseFieldSelector(std::string_view text);

// A 400 BadRequest error with `message`.
Error BadRequest(std::string message);

}  // namespace copse::apiserver
