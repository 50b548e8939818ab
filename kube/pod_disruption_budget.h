#pragma once
// policy/v1 PodDisruptionBudget (decodes policy/v1beta1 too).
//
// The selector follows policy/v1: an empty selector ({}) selects every pod in
// the namespace; an absent one (nullopt) selects none. A policy/v1beta1
// object's empty selector selects none, so Decode makes it absent.
//
// Thread-safety: value types.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/labels.h"
#include "core/result.h"
#include "kube/codec.h"
#include "kube/object.h"

namespace copse::kube {

struct PodDisruptionBudgetSpec {
  std::optional<IntOrString> min_available;    // 3 or "50%"
  std::optional<IntOrString> max_unavailable;  // 1 or "10%"
  std::optional<LabelSelector> selector;
  std::optional<std::string> unhealthy_pod_eviction_policy;  // "IfHealthyBudget" | "AlwaysAllow"
  bool operator==(const PodDisruptionBudgetSpec&) const = default;
};

struct PodDisruptionBudgetStatus {
  int64_t observed_generation = 0;
  Labels disrupted_pods;  // pod name -> RFC 3339 time of the eviction
  int32_t disruptions_allowed = 0;
  int32_t current_healthy = 0;
  int32_t desired_healthy = 0;
  int32_t expected_pods = 0;
  std::vector<Condition> conditions;
  bool operator==(const PodDisruptionBudgetStatus&) const = default;
};

class PodDisruptionBudget : public KubeObject {
 public:
  static constexpr std::string_view kApiVersion = "policy/v1";
  static constexpr std::string_view kApiVersionV1beta1 = "policy/v1beta1";
  static constexpr std::string_view kKind = "PodDisruptionBudget";

  PodDisruptionBudgetSpec spec;
  PodDisruptionBudgetStatus status;

  // The number of healthy pods the budget requires out of `expected_pods`,
  // as the disruption controller computes it: maxUnavailable gives
  // expected - ceil(pct * expected) (or expected - n), minAvailable gives n or
  // ceil(pct * expected); neither set gives 0. Bad percentages are kInvalid.
  Result<int32_t> DesiredHealthy(int32_t expected_pods) const;
  // max(current_healthy - desired_healthy, 0), i.e. what the controller
  // writes to status.disruptionsAllowed.
  static int32_t DisruptionsAllowed(int32_t current_healthy, int32_t desired_healthy) noexcept {
    return current_healthy > desired_healthy ? current_healthy - desired_healthy : 0;
  }

  static Result<PodDisruptionBudget> Decode(std::string_view json);
  std::string Encode() const;
};

}  // namespace copse::kube
