// The Placer's members (scheduler/topology_placement_internal.h): pods
// placed through PlaceGang (class by class, every pod through the profile's
// PreFilter, Filter and Score) restricted to a scope's nodes, each placement
// recorded in the undo log; with a preferred level, the pods fill its domains
// most-free first (fewest domains) before the rest of the scope.

#include <string>
#include <unordered_set>
#include <vector>

#include "scheduler/topology_placement_internal.h"

namespace copse::scheduler::topology_placement {

using topology::RankedDomain;
using topology::RankOptions;
using topology::RankOrder;

GangPlacement Placer::Call(std::span<const PodPtr> pods, const Scope& scope, size_t required) {
  GangPlacementOptions po = options_.placement;
  po.required = required;
  po.place_all = true;
  po.start_index = start_index_;
  po.allowed_nodes = scope.all ? nullptr : scope.nodes.get();
  GangPlacement p = PlaceGang(fw_, snapshot_, pods, po, random_, workspace_);
  evaluated_nodes_ += p.evaluated_nodes;
  if (snapshot_.num_nodes() > 0) {
    start_index_ = (start_index_ + p.evaluated_nodes) % snapshot_.num_nodes();
  }
  unschedulable_plugins_ |= p.unschedulable_plugins;
  for (const MemberPlacement& m : p.placed) RecordPlacement(m);
  if (p.error) {
    error_ = true;
    failure_ = p.failure;
  }
  return p;
}

// Places `pods` in `scope`; with a preferred level they fill its domains
// most-free first. Returns how many were placed; `last_failure_` says why
// the others were not.
size_t Placer::PlacePods(std::vector<PodPtr> pods, const Scope& scope, size_t required,
                         LevelRef pref) {
  size_t placed = 0;
  if (pref.valid() && !Implied(scope, pref) && pods.size() > 1) {
    Flush();
    std::vector<uint32_t> counts(classes_.size(), 0);
    for (const PodPtr& pod : pods) ++counts[PodClassIndex(pod)];
    Ranking ranking = MakeDemand(pref, counts, scope);
    RankOptions ro;
    ro.order = RankOrder::kMostFreeFirst;
    ro.require_fit = false;
    std::vector<RankedDomain> ranked;
    Rank(pref, scope, ranking, ro, ranked);
    for (const RankedDomain& rd : ranked) {
      if (pods.empty() || error_) break;
      bool any = false;
      for (const topology::ClassNeed& need : ranking.needs) {
        any = any || need.fits->domain(pref.level, rd.domain) > 0;
      }
      if (!any) continue;
      GangPlacement p = Call(pods, Within(scope, pref, rd.domain), 0);
      if (p.placed.empty()) continue;
      placed += p.placed.size();
      std::unordered_set<const PodInfo*> done;
      for (const MemberPlacement& m : p.placed) done.insert(m.pod.get());
      std::erase_if(pods, [&](const PodPtr& pod) { return done.contains(pod.get()); });
    }
  }
  if (!pods.empty() && !error_) {
    GangPlacement p = Call(pods, scope, required > placed ? required - placed : 0);
    placed += p.placed.size();
    if (!p.unplaced.empty()) last_failure_ = p.failure;
  }
  return placed;
}

uint32_t Placer::PodClassIndex(const PodPtr& pod) const {
  const auto [group, position] = position_.at(pod.get());
  return nodes_[group].direct_class[position];
}

std::string Placer::Prefix(int x) const {
  return x == 0 ? std::string() : "subgroup " + nodes_[x].name + ": ";
}

}  // namespace copse::scheduler::topology_placement
