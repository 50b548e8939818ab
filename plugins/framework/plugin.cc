#include "plugins/framework/plugin.h"

#include <algorithm>

namespace copse::plugins {

void Plugin::AppendReasons(const Status& status, const Snapshot& /*snapshot*/,
                           std::vector<std::string>& out) const {
  if (status.reason == kReasonMissingState) {
    out.push_back(std::string(Name()) + ": cycle state not found (PreFilter/PreScore did not run)");
    return;
  }
  const std::string_view text = ReasonText(status.reason);
  if (!text.empty()) out.emplace_back(text);
}

std::string_view Plugin::ReasonText(ReasonId /*reason*/) const noexcept { return {}; }

Status PreFilterPlugin::AddPod(CycleState& /*state*/, const PodInfo& /*pod*/,
                               const PodInfo& /*added*/, NodeIndex /*node*/,
                               const Snapshot& /*snapshot*/) const {
  return Status::Success();
}

Status PreFilterPlugin::RemovePod(CycleState& /*state*/, const PodInfo& /*pod*/,
                                  const PodInfo& /*removed*/, NodeIndex /*node*/,
                                  const Snapshot& /*snapshot*/) const {
  return Status::Success();
}

Status ScorePlugin::NormalizeScore(const CycleContext& /*ctx*/,
                                   std::span<const NodeIndex> /*nodes*/,
                                   std::span<int64_t> /*scores*/) const noexcept {
  return Status::Success();
}

void DefaultNormalizeScore(int64_t max_priority, bool reverse, std::span<int64_t> scores) noexcept {
  int64_t max_count = 0;
  for (int64_t s : scores) max_count = std::max(max_count, s);
  if (max_count == 0) {
    if (reverse) {
      for (int64_t& s : scores) s = max_priority;
    }
    return;
  }
  // max_priority * s / max_count per node without an integer division: for
  // operands exact as doubles the correctly rounded quotient is within one of
  // the truncated one, and the correction makes it exact.
  constexpr int64_t kExact = int64_t{1} << 52;
  for (int64_t& s : scores) {
    const int64_t x = max_priority * s;
    int64_t scaled;
    if (x >= 0 && x < kExact && max_count < kExact) {
      scaled = static_cast<int64_t>(static_cast<double>(x) / static_cast<double>(max_count));
      if (scaled * max_count > x) {
        --scaled;
      } else if ((scaled + 1) * max_count <= x) {
        ++scaled;
      }
    } else {
      scaled = x / max_count;
    }
    s = reverse ? max_priority - scaled : scaled;
  }
}

}  // namespace copse::plugins
