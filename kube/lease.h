#pragma once
// coordination.k8s.io/v1 Lease, as leader election uses it. Times are
// metav1.MicroTime strings ("2024-01-02T03:04:05.123456Z"; see
// core/clock.h FormatRfc3339Micro).
//
// Thread-safety: value types.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"
#include "kube/object.h"

namespace copse::kube {

struct LeaseSpec {
  std::optional<std::string> holder_identity;
  std::optional<int32_t> lease_duration_seconds;
  std::optional<std::string> acquire_time;
  std::optional<std::string> renew_time;
  std::optional<int32_t> lease_transitions;
  bool operator==(const LeaseSpec&) const = default;
};

class Lease : public KubeObject {
 public:
  static constexpr std::string_view kApiVersion = "coordination.k8s.io/v1";
  static constexpr std::string_view kKind = "Lease";

  LeaseSpec spec;

  static Result<Lease> Decode(std::string_view json);
  std::string Encode() const;
};

}  // namespace copse::kube
