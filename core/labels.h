#pragma once
// Label and field selectors with the semantics of k8s.io/apimachinery/pkg/labels
// and pkg/fields, and node selector terms of core/v1 NodeSelector.
//
//   LabelSelector::Parse("a=b,c!=d,e in (x,y),!f,g,h>1")  string form
//   LabelSelector::FromParts(matchLabels, matchExpressions) metav1.LabelSelector
//   NodeSelector / NodeSelectorTerm                        In/NotIn/Exists/DoesNotExist/Gt/Lt
//   FieldSelector::Parse("metadata.name=x,spec.nodeName!=") =, ==, !=
//
// Errors are kInvalid and name the offending part of the input.
// Thread-safety: value types; Matches() is const and allocation-free (except
// FieldSelector::Matches, whose callback returns strings).

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace copse {

using Labels = std::map<std::string, std::string, std::less<>>;

enum class SelectorOp : uint8_t {
  kEquals,     // "=" / "==" (string form), single value. Kubernetes keeps "=="
               // apart and prints it back; copse prints "=" for both.
  kNotEquals,  // "!=" (string form): matches when the key is absent too
  kIn,
  kNotIn,  // matches when the key is absent too
  kExists,
  kDoesNotExist,
  kGt,  // node selectors and the string form ("x>1"): both the label
  kLt,  // value and the single value parse as int64; else no match
};

// "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt" (case-sensitive, as in the API).
Result<SelectorOp> ParseSelectorOp(std::string_view op);
// The API name above; "=" and "!=" for kEquals and kNotEquals.
std::string_view SelectorOpName(SelectorOp op) noexcept;

struct Requirement {
  std::string key;
  SelectorOp op = SelectorOp::kExists;
  std::vector<std::string> values;  // sorted for In/NotIn after validation

  // labels.Requirement.Matches: In/= need the key with a listed value;
  // NotIn/!= match an absent key; Gt/Lt need exactly one value.
  bool Matches(const Labels& labels) const noexcept;
  // String form: "k=v", "k!=v", "k in (a,b)", "k notin (a)", "k", "!k", "k>1".
  // Values are printed sorted.
  std::string ToString() const;
  bool operator==(const Requirement&) const = default;
};

// Validates a label key (optional DNS-subdomain prefix + "/" + name of at most
// 63 chars) and value (at most 63 chars, alphanumerics and -_. inside).
Status ValidateLabelKey(std::string_view key);
Status ValidateLabelValue(std::string_view value);
// The "qualified name" rule behind label keys, also used for resource names
// (the rules and messages are core/names.h's).
Status ValidateQualifiedName(std::string_view name);
// RFC 1123 subdomain (lower case, at most 253 chars), e.g. a node name.
Status ValidateDns1123Subdomain(std::string_view name);

class LabelSelector {
 public:
  // The empty selector: matches everything.
  LabelSelector() = default;
  // A selector that matches nothing (a nil metav1.LabelSelector in some contexts).
  static LabelSelector Nothing();

  // The pkg/labels string form. "" (or blanks) is the empty selector. Values
  // of "in"/"notin" are deduplicated and sorted; requirements are sorted by
  // key (stable). Keys and values are validated like label keys and values.
  static Result<LabelSelector> Parse(std::string_view text);
  // matchLabels + matchExpressions; validates ops/values like the API server
  // (In/NotIn need values, Exists/DoesNotExist must have none, Gt/Lt and the
  // string-form ops =/!= rejected). No parts at all gives the empty selector.
  static Result<LabelSelector> FromParts(const Labels& match_labels,
                                         std::vector<Requirement> match_expressions);

  bool Matches(const Labels& labels) const noexcept;
  bool Empty() const noexcept { return !nothing_ && requirements_.empty(); }
  bool MatchesNothing() const noexcept { return nothing_; }
  const std::vector<Requirement>& requirements() const noexcept { return requirements_; }
  // Canonical string form, requirements sorted by key ("a=b,c!=d,e in (x,y),!f");
  // "" for the empty selector and for Nothing().
  std::string ToString() const;

  bool operator==(const LabelSelector&) const = default;

 private:
  std::vector<Requirement> requirements_;  // sorted by key
  bool nothing_ = false;
};

// core/v1 NodeSelectorTerm: matchExpressions over node labels AND matchFields
// (only "metadata.name" is a valid field). An empty term matches nothing.
// Matching follows kube-scheduler (component-helpers nodeaffinity): a term
// that does not convert into a selector (bad key or value, wrong number of
// values, non-integer Gt/Lt value, an op other than In/NotIn in matchFields,
// =/!= anywhere) matches nothing; matchFields are skipped when node_name is
// empty; a field other than metadata.name reads as "". Matches() re-checks
// that validity on each call (linear in the term's text, no allocation).
struct NodeSelectorTerm {
  std::vector<Requirement> match_expressions;
  std::vector<Requirement> match_fields;

  bool Matches(const Labels& node_labels, std::string_view node_name) const noexcept;
  // API-server validation plus what kube-scheduler needs to use the term (Gt/Lt
  // need exactly one integer value, ...); all problems are reported, each
  // naming its path, e.g. "matchExpressions[1].values". An empty term is valid.
  Status Validate() const;
  bool operator==(const NodeSelectorTerm&) const = default;
};

// core/v1 NodeSelector: terms are ORed. No terms matches nothing.
struct NodeSelector {
  std::vector<NodeSelectorTerm> terms;
  bool Matches(const Labels& node_labels, std::string_view node_name) const noexcept;
  bool operator==(const NodeSelector&) const = default;
};

// Field selectors: "metadata.name=x,spec.nodeName!=,status.phase==Running".
class FieldSelector {
 public:
  struct Term {
    std::string field;
    bool negated = false;  // "!="
    std::string value;
    bool operator==(const Term&) const = default;
  };
  FieldSelector() = default;  // matches everything
  // pkg/fields ParseSelector: terms split on unescaped ',', sorted, empty terms
  // skipped; values unescape \\ \, \= (backslash escapes); nothing is trimmed.
  static Result<FieldSelector> Parse(std::string_view text);
  // `get` returns the field's value for an object, or nullopt if the field is
  // unknown; like fields.Set, an unknown field reads as "" ("f=" matches it).
  bool Matches(const std::function<std::optional<std::string>(std::string_view field)>& get) const;
  const std::vector<Term>& terms() const noexcept { return terms_; }
  bool Empty() const noexcept { return terms_.empty(); }
  // "f=v,g!=w" with values escaped again.
  std::string ToString() const;
  bool operator==(const FieldSelector&) const = default;

 private:
  std::vector<Term> terms_;
};

}  // namespace copse
