#pragma once
// scheduling.k8s.io/v1 PriorityClass (cluster-scoped; fields at the top level).
//
// Thread-safety: value type.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"
#include "kube/object.h"

namespace copse::kube {

inline constexpr std::string_view kPreemptLowerPriority = "PreemptLowerPriority";
inline constexpr std::string_view kPreemptNever = "Never";

class PriorityClass : public KubeObject {
 public:
  static constexpr std::string_view kApiVersion = "scheduling.k8s.io/v1";
  static constexpr std::string_view kKind = "PriorityClass";

  int32_t value = 0;
  bool global_default = false;
  std::string description;
  std::optional<std::string> preemption_policy;  // "PreemptLowerPriority" | "Never"

  static Result<PriorityClass> Decode(std::string_view json);
  std::string Encode() const;
};

}  // namespace copse::kube
