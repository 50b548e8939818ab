#pragma once
// Small helpers every controller shares (Grove's and the built-in workload
// controllers): keys, owner references, status conditions with kube's
// lastTransitionTime rule, pod predicates, selectors.
//
// Thread-safety: pure functions.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/labels.h"
#include "kube/codec.h"
#include "kube/object.h"
#include "kube/pod.h"

namespace copse::kube::controller {

// "namespace/name".
std::string Key(std::string_view ns, std::string_view name);
// Splits "namespace/name" (a key without '/' is a cluster-scoped name).
std::pair<std::string, std::string> SplitKey(std::string_view key);

kube::OwnerReference ControllerRef(std::string_view api_version, std::string_view kind,
                                   const kube::ObjectMeta& owner);
bool IsControlledBy(const kube::ObjectMeta& meta, std::string_view owner_uid);

// Sets `condition` in `conditions` (by type). lastTransitionTime is kept when
// the status did not change, else set to `now` (RFC 3339). Returns whether
// anything changed.
bool SetCondition(std::vector<kube::Condition>& conditions, kube::Condition condition,
                  std::string_view now);

bool IsTerminating(const kube::ObjectMeta& meta);
bool IsPodReady(const kube::Pod& pod);
bool IsPodScheduled(const kube::Pod& pod);
bool IsPodTerminal(const kube::Pod& pod);  // Succeeded or Failed
bool HasSchedulingGate(const kube::Pod& pod, std::string_view gate);

// "a=b,c=d" for equality requirements (sorted by key), as metav1 prints them.
std::string SelectorString(const Labels& labels);
// Every key/value of `subset` is present in `labels`.
bool LabelsContain(const Labels& labels, const Labels& subset);

// Parses RFC 3339 UTC ("2024-01-02T03:04:05Z", fractional seconds allowed);
// nullopt when malformed.
std::optional<std::chrono::system_clock::time_point> ParseRfc3339(std::string_view text);

// The body of a PUT to the status subresource of `object`: only its identity
// (name, namespace, resourceVersion for optimistic concurrency) and its status.
// The API server takes nothing but status from a /status write, so encoding
// the whole object (with its pod templates) would be wasted work.
template <typename T>
std::string StatusBody(const T& object) {
  T bare;
  bare.api_version = std::string(T::kApiVersion);
  bare.kind = std::string(T::kKind);
  bare.meta.name = object.meta.name;
  bare.meta.namespace_ = object.meta.namespace_;
  bare.meta.resource_version = object.meta.resource_version;
  bare.status = object.status;
  return bare.Encode();
}

// FNV-1a 64-bit, as 16 hex digits.
std::string Fnv1aHex(std::string_view data);

}  // namespace copse::kube::controller
