#pragma once
// Candidate domains for a demand (a gang's required minimum, or a subgroup's
// pods) at one topology level, and the cheap bounds used to prune them.
//
// MayHold(level, d, demand) — necessary conditions, O(resources + classes):
//   every class's fit count in d (topology/fit.h) >= its count, and the
//   demand's summed requests (pods entry = number of pods) <= d's free
//   capacity. False: d certainly cannot hold the demand. True: it may; with
//   one class it certainly can (fit counts are exact for one class), with
//   several confirm with DomainPacker (topology/pack.h).
//
// RankDomains(level, demand, options, out):
//   1. Candidates: the domains at `level` (or only the descendants of
//      options.within) for which MayHold is true (unless require_fit is off).
//   2. Key, on one resource (options.measure, default the demand's dominant
//      resource: the largest demand / cluster allocatable share):
//        kTightestFirst: free - demand ascending: the least capacity left
//          after placement first, which keeps big domains whole; equally
//          tight domains by their parent's free capacity ascending (the
//          least free block first, so whole blocks stay free too);
//        kMostFreeFirst: free descending: where a preferred-level subgroup
//          should gather first.
//      Ties by domain name (label value), then by id (path order).
//   3. Cap, like KEP-5732's percentageOfPlacementsToScore: keep the best
//      max(min_candidates, ceil(percentage% of the candidates)), at most
//      max_candidates (0: no limit).
//   O(domains at the level x (resources + classes) + k log k) for k kept.
//
// Thread-safety: free functions over const inputs; safe concurrently. They
// allocate only when `out` must grow.

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/resource_vector.h"
#include "topology/domain_tree.h"
#include "topology/fit.h"

namespace copse::topology {

// One pod class's part of a demand, for the exact per-class bound.
struct ClassNeed {
  const FitCounts* fits = nullptr;  // CountFits of the class on the same tree
  uint32_t count = 0;
};

struct Demand {
  // Summed requests of every pod; the pods entry is the number of pods.
  ResourceVector total;
  // Optional per-class bounds (the FitCounts must match the tree's structure).
  std::span<const ClassNeed> classes;

  // Adds `count` pods requesting `request` to `total` (saturating).
  void Add(const ResourceVector& request, uint32_t count) noexcept;
};

// The resource with the largest share demand / tree.total_allocatable()
// (dominant resource fairness); kResourceIdPods when nothing else is
// requested. A requested resource with no allocatable anywhere wins.
ResourceId DominantResource(const DomainTree& tree, const ResourceVector& demand) noexcept;

// Why a domain cannot hold a demand, for messages ("2 Insufficient nvidia.com/gpu").
struct BoundCheck {
  enum class Kind : uint8_t { kMayFit, kClassCount, kResource };
  Kind kind = Kind::kMayFit;
  uint32_t class_index = 0;  // kClassCount: the class whose fit count is short
  uint64_t class_fit = 0;    // kClassCount: its fit count in the domain
  ResourceId resource = 0;   // kResource: the first resource (by id) that is short
  bool may_fit() const noexcept { return kind == Kind::kMayFit; }
};

BoundCheck CheckBounds(const DomainTree& tree, uint32_t level, DomainId d,
                       const Demand& demand) noexcept;
inline bool MayHold(const DomainTree& tree, uint32_t level, DomainId d,
                    const Demand& demand) noexcept {
  return CheckBounds(tree, level, d, demand).may_fit();
}

enum class RankOrder : uint8_t { kTightestFirst, kMostFreeFirst };

struct RankOptions {
  RankOrder order = RankOrder::kTightestFirst;
  // Only domains where MayHold is true. kMostFreeFirst callers that spill a
  // preferred-level subgroup over several domains turn it off.
  bool require_fit = true;
  // Share of the candidates kept, 1..100 (values outside are clamped).
  uint32_t percentage = 100;
  // Kept even when the percentage gives fewer (when that many are candidates).
  uint32_t min_candidates = 1;
  // 0: no limit.
  uint32_t max_candidates = 0;
  // The resource the key is measured on; default DominantResource(demand.total).
  std::optional<ResourceId> measure;
  // Restrict to descendants of (within_level, within) (within_level <= level);
  // kNoDomain: every domain at the level.
  uint32_t within_level = 0;
  DomainId within = kNoDomain;
};

struct RankedDomain {
  DomainId domain = kNoDomain;
  // kTightestFirst: free - demand on the measured resource; kMostFreeFirst: free.
  int64_t key = 0;
  // kTightestFirst below level 0: the parent domain's free capacity on the
  // measured resource (the tie-break); otherwise 0.
  int64_t outer = 0;
  bool operator==(const RankedDomain&) const = default;
};

// Fills `out` (cleared first) with the candidates, best first.
void RankDomains(const DomainTree& tree, uint32_t level, const Demand& demand,
                 const RankOptions& options, std::vector<RankedDomain>& out);

// Steps 2 (order, with `out`'s keys already filled) and 3 (cap) of
// RankDomains, for rankings computed from other capacities
// (DomainPacker::RankRemaining).
void OrderAndCap(const DomainTree& tree, uint32_t level, const RankOptions& options,
                 std::vector<RankedDomain>& out);

}  // namespace copse::topology
