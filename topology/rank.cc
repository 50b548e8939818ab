#include "topology/rank.h"

#include <algorithm>
#include <limits>

#include "core/check.h"
#include "core/quantity.h"

namespace copse::topology {

void Demand::Add(const ResourceVector& request, uint32_t count) noexcept {
  for (size_t r = 0; r < request.size(); ++r) {
    const auto rid = static_cast<ResourceId>(r);
    if (rid == kResourceIdPods) continue;
    const int64_t q = request.Get(rid);
    if (q > 0) total.Add(rid, SaturatingMul(q, count));
  }
  total.Add(kResourceIdPods, count);
}

ResourceId DominantResource(const DomainTree& tree, const ResourceVector& demand) noexcept {
  ResourceId best = kResourceIdPods;
  double best_share = -1;
  for (size_t r = 0; r < demand.size(); ++r) {
    const auto rid = static_cast<ResourceId>(r);
    const int64_t amount = demand.Get(rid);
    if (amount <= 0) continue;
    const int64_t total = tree.total_allocatable(rid);
    const double share = total > 0 ? static_cast<double>(amount) / static_cast<double>(total)
                                   : std::numeric_limits<double>::infinity();
    if (share > best_share) {
      best = rid;
      best_share = share;
    }
  }
  return best;
}

BoundCheck CheckBounds(const DomainTree& tree, uint32_t level, DomainId d,
                       const Demand& demand) noexcept {
  BoundCheck check;
  for (size_t i = 0; i < demand.classes.size(); ++i) {
    const ClassNeed& need = demand.classes[i];
    if (need.fits == nullptr || need.count == 0) continue;
    const uint64_t fit = need.fits->domain(level, d);
    if (fit < need.count) {
      check.kind = BoundCheck::Kind::kClassCount;
      check.class_index = static_cast<uint32_t>(i);
      check.class_fit = fit;
      return check;
    }
  }
  for (size_t r = 0; r < demand.total.size(); ++r) {
    const auto rid = static_cast<ResourceId>(r);
    const int64_t amount = demand.total.Get(rid);
    if (amount > 0 && tree.free(level, d, rid) < amount) {
      check.kind = BoundCheck::Kind::kResource;
      check.resource = rid;
      return check;
    }
  }
  return check;
}

void RankDomains(const DomainTree& tree, uint32_t level, const Demand& demand,
                 const RankOptions& options, std::vector<RankedDomain>& out) {
  out.clear();
  COPSE_CHECK(level < tree.num_levels()) << "level " << level << " of " << tree.num_levels();
  for (const ClassNeed& need : demand.classes) {
    COPSE_CHECK(need.fits == nullptr || need.fits->structure_version() == tree.structure_version())
        << "fit counts from another tree structure";
  }
  const ResourceId measure = options.measure.value_or(DominantResource(tree, demand.total));
  const int64_t needed = demand.total.Get(measure);
  const bool tightest = options.order == RankOrder::kTightestFirst;

  DomainRange range = tree.domains(level);
  if (options.within != kNoDomain) {
    COPSE_CHECK(options.within_level <= level) << "within_level below level";
    range = tree.Descendants(options.within_level, options.within, level);
  }
  for (DomainId d : range) {
    if (options.require_fit && !MayHold(tree, level, d, demand)) continue;
    const int64_t free = tree.free(level, d, measure);
    const int64_t outer =
        tightest && level > 0 ? tree.free(level - 1, tree.parent(level, d), measure) : 0;
    out.push_back({d, tightest ? free - needed : free, outer});
  }

  OrderAndCap(tree, level, options, out);
}

void OrderAndCap(const DomainTree& tree, uint32_t level, const RankOptions& options,
                 std::vector<RankedDomain>& out) {
  const bool tightest = options.order == RankOrder::kTightestFirst;
  auto better = [&](const RankedDomain& a, const RankedDomain& b) {
    if (a.key != b.key) return tightest ? a.key < b.key : a.key > b.key;
    if (a.outer != b.outer) return a.outer < b.outer;
    const std::string_view na = tree.name(level, a.domain);
    const std::string_view nb = tree.name(level, b.domain);
    if (na != nb) return na < nb;
    return a.domain < b.domain;
  };
  const size_t n = out.size();
  const uint64_t percentage = std::clamp<uint32_t>(options.percentage, 1, 100);
  size_t keep = static_cast<size_t>((n * percentage + 99) / 100);
  keep = std::max(keep, std::min<size_t>(options.min_candidates, n));
  if (options.max_candidates > 0) keep = std::min<size_t>(keep, options.max_candidates);
  if (keep < n) {
    std::partial_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(keep), out.end(),
                      better);
    out.resize(keep);
  } else {
    std::sort(out.begin(), out.end(), better);
  }
}

}  // namespace copse::topology
