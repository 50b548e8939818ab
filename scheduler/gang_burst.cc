#include "scheduler/gang_burst.h"

#include <algorithm>
#include <numeric>
#include <tuple>
#include <utility>

#include "core/resource_vector.h"

namespace copse::scheduler {
namespace {

bool RequiresLevel(const GangSpec& spec) {
  if (!spec.topology_constraint.required_level.empty()) return true;
  return std::any_of(spec.sub_groups.begin(), spec.sub_groups.end(), [](const SubGroupSpec& g) {
    return !g.topology_constraint.required_level.empty();
  });
}

}  // namespace

BurstGang DescribeBurstGang(std::string key, const GangSpec* spec,
                            std::span<const std::shared_ptr<const PodInfo>> members) {
  BurstGang g;
  g.key = std::move(key);
  g.topology_required = spec != nullptr && RequiresLevel(*spec);
  for (const std::shared_ptr<const PodInfo>& pod : members) {
    const ResourceVector& r = pod->requests;
    g.cpu_milli += r.Get(kResourceIdCpu);
    g.memory += r.Get(kResourceIdMemory);
    for (size_t id = kNumBuiltinResources; id < r.size(); ++id) {
      g.extended += r.Get(static_cast<ResourceId>(id));
    }
  }
  return g;
}

std::optional<Clock::TimePoint> GangBurst::HoldUntil(const queue::QueuedUnit& head,
                                                     Clock::TimePoint now) const {
  if (!enabled() || head.key.kind != queue::UnitKind::kPodGroup || head.attempts > 0) {
    return std::nullopt;
  }
  const Clock::TimePoint arrived = head.initial_attempt_timestamp.value_or(head.timestamp);
  const Clock::TimePoint until = arrived + options_.window;
  if (until <= now) return std::nullopt;
  return until;
}

int32_t GangBurst::Skips(const std::string& key) const {
  auto it = skips_.find(key);
  return it == skips_.end() ? 0 : it->second;
}

bool GangBurst::AnyOverdue(std::span<const BurstGang> gangs) const {
  return std::any_of(gangs.begin(), gangs.end(),
                     [&](const BurstGang& g) { return Skips(g.key) > options_.max_skips; });
}

std::vector<size_t> GangBurst::Order(std::span<const BurstGang> gangs,
                                     std::span<const uint8_t> planned) {
  std::vector<size_t> order(gangs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  const bool with_plan = planned.size() == gangs.size();
  auto rank = [&](size_t i) {
    const BurstGang& g = gangs[i];
    const bool overdue = Skips(g.key) > options_.max_skips;
    // Overdue gangs keep queue order among themselves (the zeros tie).
    if (overdue) return std::make_tuple(0, 0, 0, int64_t{0}, int64_t{0}, int64_t{0});
    const int unplanned = with_plan && !planned[i] ? 1 : 0;
    return std::make_tuple(1, unplanned, g.topology_required ? 0 : 1, g.extended, g.cpu_milli,
                           g.memory);
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return rank(a) < rank(b); });
  // A gang is skipped when one behind it in queue order runs before it.
  size_t max_index_run = 0;
  bool any_run = false;
  for (size_t i : order) {
    if (any_run && max_index_run > i) ++skips_[gangs[i].key];
    max_index_run = any_run ? std::max(max_index_run, i) : i;
    any_run = true;
  }
  // Forgotten keys of gangs that left without being placed would pile up.
  if (skips_.size() > 4 * options_.max_batch + 1024) skips_.clear();
  return order;
}

}  // namespace copse::scheduler
