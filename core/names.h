#pragma once
// Kubernetes' rules for names, label keys and values, with the messages of
// k8s.io/apimachinery/pkg/util/validation: the one place copse checks them
// (core/labels.h's Validate* functions, the API server's object validation,
// label selectors and typed codecs all call these).
//
//   IsDns1123Label      [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 (namespace names)
//   IsDns1123Subdomain  labels joined by '.', at most 253 (most object names)
//   IsDns1035Label      [a-z]([-a-z0-9]*[a-z0-9])?, at most 63 (service names)
//   IsQualifiedName     [prefix/]name: a DNS-1123 subdomain prefix and a name of
//                       at most 63 alphanumerics, '-', '_', '.' (label keys)
//   IsValidLabelValue   empty, or at most 63 like a qualified name's name part
//   IsConfigMapKey      [-._a-zA-Z0-9]+, at most 253, not "." or ".."
//
// The Is* functions return upstream's list of messages (empty when valid);
// the Valid* predicates answer the same question without allocating (hot
// paths: selectors matching labels).
//
// Thread-safety: pure functions.

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace copse {

inline constexpr size_t kDns1123LabelMaxLength = 63;
inline constexpr size_t kDns1123SubdomainMaxLength = 253;
inline constexpr size_t kQualifiedNameMaxLength = 63;
inline constexpr size_t kLabelValueMaxLength = 63;

std::vector<std::string> IsDns1123Label(std::string_view value);
std::vector<std::string> IsDns1123Subdomain(std::string_view value);
std::vector<std::string> IsDns1035Label(std::string_view value);
std::vector<std::string> IsQualifiedName(std::string_view value);
std::vector<std::string> IsValidLabelValue(std::string_view value);
std::vector<std::string> IsConfigMapKey(std::string_view value);

bool ValidDns1123Label(std::string_view value) noexcept;
bool ValidDns1123Subdomain(std::string_view value) noexcept;
bool ValidQualifiedName(std::string_view value) noexcept;
bool ValidLabelValue(std::string_view value) noexcept;

// upstream's RegexError and MaxLenError message forms, for validators of
// other formats.
std::string RegexError(std::string_view message, std::string_view regex,
                       std::initializer_list<std::string_view> examples);
std::string MaxLenError(size_t length);

}  // namespace copse
