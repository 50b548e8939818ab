#pragma once
// PodDisruptionBudget arithmetic shared by pods/eviction (Store) and the
// disruption-controller part of the NodeSimulator, as kube's disruption
// controller computes it: expected pods = pods the selector matches (not
// terminal), healthy = those Ready and not terminating, desired healthy from
// minAvailable (int or percentage, rounded up) or expected - maxUnavailable.
//
// Thread-safety: pure functions.

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <vector>

#include "apiserver/selector.h"
#include "apiserver/store.h"
#include "core/result.h"

namespace copse::apiserver {

// metav1.LabelSelector JSON (matchLabels, matchExpressions). A missing or
// null selector selects nothing: nullopt.
Result<std::optional<LabelSelectorExpr>> LabelSelectorFromJson(const nlohmann::json* selector);

struct DisruptionStatus {
  int64_t expected_pods = 0;
  int64_t current_healthy = 0;
  int64_t desired_healthy = 0;
  int64_t disruptions_allowed = 0;
  bool operator==(const DisruptionStatus&) const = default;
};

// `pods`: the pods of the PDB's namespace. nullopt when the PDB selects
// nothing (missing or invalid selector).
std::optional<DisruptionStatus> ComputeDisruption(const nlohmann::json& pdb,
                                                  const std::vector<ObjectPtr>& pods);

}  // namespace copse::apiserver
