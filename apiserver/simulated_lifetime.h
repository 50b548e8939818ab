#pragma once
// The node simulator's simulated pod lifetimes: a pod annotated
// `copse.dev/simulate-run-for: <Go duration>` ends that long after it
// started, Succeeded, or Failed when `copse.dev/simulate-exit-code: N` is
// non-zero (apiserver/node_simulator.h). The API server refuses pods whose
// annotations do not parse, so a typo is an error rather than a pod that
// silently runs forever.
//
// Thread-safety: pure functions.

#include <chrono>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string_view>

#include "core/result.h"

namespace copse::apiserver {

inline constexpr std::string_view kSimulateRunForAnnotation = "copse.dev/simulate-run-for";
inline constexpr std::string_view kSimulateExitCodeAnnotation = "copse.dev/simulate-exit-code";

struct SimulatedLifetime {
  std::chrono::milliseconds run_for{0};
  int32_t exit_code = 0;
};

// The simulated lifetime a pod's metadata.annotations ask for; nullopt when
// it has no copse.dev/simulate-run-for. kInvalid names the annotation: the
// duration must be a non-negative Go duration, the exit code an integer in
// [0, 255], and an exit code alone (without a run time) is refused.
Result<std::optional<SimulatedLifetime>> SimulatedLifetimeOf(const nlohmann::json& annotations);

}  // namespace copse::apiserver
