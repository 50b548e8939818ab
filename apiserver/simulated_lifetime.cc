#include "apiserver/simulated_lifetime.h"

#include <nlohmann/json.hpp>
#include <string>

#include "core/duration.h"

namespace copse::apiserver {

using nlohmann::json;

Result<std::optional<SimulatedLifetime>> SimulatedLifetimeOf(const json& annotations) {
  if (!annotations.is_object()) return std::optional<SimulatedLifetime>();
  const std::string run_key(kSimulateRunForAnnotation);
  const std::string exit_key(kSimulateExitCodeAnnotation);
  auto field = [](const std::string& key) { return "metadata.annotations[" + key + "]"; };
  auto run_it = annotations.find(run_key);
  auto exit_it = annotations.find(exit_key);
  if (run_it == annotations.end()) {
    if (exit_it != annotations.end()) {
      return MakeError(ErrorCode::kInvalid, field(exit_key) + ": Forbidden: only with " + run_key);
    }
    return std::optional<SimulatedLifetime>();
  }
  SimulatedLifetime out;
  const std::string run_text = run_it->is_string() ? run_it->get<std::string>() : run_it->dump();
  Result<std::chrono::nanoseconds> run_for = ParseGoDuration(run_text);
  if (!run_for.ok() || run_for->count() < 0) {
    return MakeError(ErrorCode::kInvalid,
                     field(run_key) + ": Invalid value: " + json(run_text).dump() +
                         ": must be a non-negative duration such as \"30s\" or \"1m30s\"" +
                         (run_for.ok() ? std::string() : " (" + run_for.error().message + ")"));
  }
  out.run_for = std::chrono::duration_cast<std::chrono::milliseconds>(*run_for);
  if (exit_it != annotations.end()) {
    const std::string text = exit_it->is_string() ? exit_it->get<std::string>() : exit_it->dump();
    int64_t code = -1;
    if (!text.empty() && text.size() <= 3 &&
        text.find_first_not_of("0123456789") == std::string::npos) {
      code = std::stoll(text);
    }
    if (code < 0 || code > 255) {
      return MakeError(ErrorCode::kInvalid, field(exit_key) +
                                                ": Invalid value: " + json(text).dump() +
                                                ": must be an integer between 0 and 255");
    }
    out.exit_code = static_cast<int32_t>(code);
  }
  return std::optional<SimulatedLifetime>(out);
}

}  // namespace copse::apiserver
