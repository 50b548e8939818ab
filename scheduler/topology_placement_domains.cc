// The Placer's domains (scheduler/topology_placement_internal.h): fit counts
// per pod class and domain, kept current as pods are placed (Flush), scopes
// (a domain's nodes inside the enclosing scope), the ranking of a level's
// domains for a demand (topology/rank.h), and the two choices made with
// them: PlaceMin tries a group's required-level domains tightest fit first
// (pinned to the domains of members already bound), PlaceContents gathers a
// group's minimum in one preferred-level domain when one holds it. A failed
// try is undone before the next.

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "scheduler/topology_placement_internal.h"

namespace copse::scheduler::topology_placement {

using topology::DomainId;
using topology::FitCounts;
using topology::RankedDomain;
using topology::RankOptions;
using topology::RankOrder;

topology::PodClass Placer::ClassOf(uint32_t c) const {
  return topology::PodClass{classes_[c].rep->requests, classes_[c].feasible};
}

// Brings trees and fit counts up to date with the rows placements changed.
void Placer::Flush() {
  if (dirty_.empty()) return;
  std::sort(dirty_.begin(), dirty_.end());
  dirty_.erase(std::unique(dirty_.begin(), dirty_.end()), dirty_.end());
  for (size_t t = 0; t < trees_.size(); ++t) {
    const uint64_t before = trees_[t]->structure_version();
    trees_[t]->Refresh(snapshot_, dirty_);
    const bool restructured = trees_[t]->structure_version() != before;
    for (size_t c = 0; c < fits_[t].size(); ++c) {
      if (!fits_[t][c]) continue;
      if (restructured) {
        topology::CountFits(*trees_[t], ClassOf(static_cast<uint32_t>(c)), *fits_[t][c]);
      } else {
        topology::UpdateFits(*trees_[t], ClassOf(static_cast<uint32_t>(c)), dirty_, *fits_[t][c]);
      }
    }
  }
  dirty_.clear();
}

const FitCounts& Placer::Fits(int t, uint32_t c) {
  std::unique_ptr<FitCounts>& slot = fits_[t][c];
  if (!slot) {
    slot = std::make_unique<FitCounts>();
    topology::CountFits(*trees_[t], ClassOf(c), *slot);
  }
  return *slot;
}

std::string Placer::DomainLabel(LevelRef r, DomainId d) const {
  return levels_[r.tree].name(r.level) + " " + std::string(trees_[r.tree]->name(r.level, d));
}

Scope Placer::Within(const Scope& outer, LevelRef r, DomainId d) const {
  std::span<const NodeIndex> span = trees_[r.tree]->nodes(r.level, d);
  auto nodes = std::make_shared<std::vector<NodeIndex>>(span.begin(), span.end());
  std::sort(nodes->begin(), nodes->end());
  if (!SameTreeInside(outer, r)) {
    std::vector<NodeIndex> both;
    std::set_intersection(nodes->begin(), nodes->end(), outer.nodes->begin(), outer.nodes->end(),
                          std::back_inserter(both));
    *nodes = std::move(both);
  }
  Scope s;
  s.all = false;
  s.nodes = std::move(nodes);
  s.tree = r.tree;
  s.level = r.level;
  s.domain = d;
  s.label = DomainLabel(r, d);
  return s;
}

// The fit counts of class c to rank r's domains inside `scope` with: the
// maintained ones, or (scope from another tree) counts over the scope's nodes.
const FitCounts* Placer::FitsFor(LevelRef r, uint32_t c, const Scope& scope) {
  if (SameTreeInside(scope, r)) return &Fits(r.tree, c);
  std::vector<uint8_t>& mask = masks_.emplace_back(snapshot_.num_nodes(), 0);
  const std::vector<uint8_t>& feasible = classes_[c].feasible;
  for (NodeIndex n : *scope.nodes) mask[n] = feasible.empty() ? 1 : feasible[n];
  FitCounts& fits = masked_fits_.emplace_back();
  topology::CountFits(*trees_[r.tree], topology::PodClass{classes_[c].rep->requests, mask}, fits);
  return &fits;
}

// Per fit class (fit_class_): one need with the counts of its classes summed.
Placer::Ranking Placer::MakeDemand(LevelRef r, std::span<const uint32_t> counts,
                                   const Scope& scope) {
  Ranking ranking;
  std::vector<uint32_t> merged(classes_.size(), 0);
  for (size_t c = 0; c < counts.size() && c < classes_.size(); ++c) {
    merged[fit_class_[c]] += counts[c];
  }
  for (size_t c = 0; c < merged.size(); ++c) {
    if (merged[c] == 0) continue;
    ranking.needs.push_back({FitsFor(r, static_cast<uint32_t>(c), scope), merged[c]});
    ranking.need_class.push_back(static_cast<uint32_t>(c));
    ranking.demand.Add(classes_[c].rep->requests, merged[c]);
  }
  ranking.demand.classes = ranking.needs;
  return ranking;
}

void Placer::Rank(LevelRef r, const Scope& scope, const Ranking& ranking, RankOptions ro,
                  std::vector<RankedDomain>& out) {
  if (!scope.all && scope.tree == r.tree && scope.level <= r.level) {
    ro.within_level = scope.level;
    ro.within = scope.domain;
  }
  topology::RankDomains(*trees_[r.tree], r.level, ranking.demand, ro, out);
  if (!scope.all && !SameTreeInside(scope, r)) {
    // Another tree's scope: keep the domains that share nodes with it.
    std::set<DomainId> touched;
    for (NodeIndex n : *scope.nodes) touched.insert(trees_[r.tree]->domain_of(n, r.level));
    std::erase_if(out, [&](const RankedDomain& d) { return !touched.contains(d.domain); });
  }
}

// Domains the members already bound under x pin x's level-r domain to.
std::set<DomainId> Placer::Pinned(int x, LevelRef r) const {
  std::set<DomainId> pinned;
  for (NodeIndex n : nodes_[x].bound_nodes_below) {
    pinned.insert(trees_[r.tree]->domain_of(n, r.level));
  }
  return pinned;
}

// Phase 1 for x inside `scope`: all-or-nothing, the caller undoes a failure.
bool Placer::PlaceMin(int x, const Scope& scope, LevelRef pref) {
  GroupNode& node = nodes_[x];
  if (node.impossible) {
    waiting_for_members_ = true;
    failure_ = Prefix(x) + "needs " + std::to_string(spec_.RequiredPods(node.name)) +
               " pods but only " + std::to_string(PodsBelow(x)) + " exist";
    return false;
  }
  if (!node.required.valid() || Implied(scope, node.required)) {
    return PlaceContents(x, scope, pref);
  }
  const LevelRef r = node.required;
  Flush();
  masks_.clear();
  masked_fits_.clear();
  Ranking ranking = MakeDemand(r, node.demand, scope);
  const std::set<DomainId> pinned = Pinned(x, r);
  const bool best_effort_root = x == 0 && !spec_.IsGang();
  RankOptions ro;
  ro.order = RankOrder::kTightestFirst;
  ro.require_fit = !best_effort_root;
  ro.percentage = options_.percentage_of_placements_to_try;
  ro.min_candidates = options_.min_placements_to_try;
  ro.max_candidates = options_.max_placements_to_try;
  if (!pinned.empty() || best_effort_root) {
    ro.percentage = 100;
    ro.max_candidates = 0;
  } else if (!masked_) {
    ro.max_candidates = 1;
  }
  std::vector<RankedDomain> ranked;
  Rank(r, scope, ranking, ro, ranked);
  if (!pinned.empty()) {
    std::erase_if(ranked, [&](const RankedDomain& d) { return !pinned.contains(d.domain); });
  }
  if (best_effort_root && !ranked.empty()) {
    // Not all-or-nothing: the domain that holds the most of the pods.
    std::stable_sort(ranked.begin(), ranked.end(),
                     [&](const RankedDomain& a, const RankedDomain& b) {
                       return Covered(ranking, r, a.domain) > Covered(ranking, r, b.domain);
                     });
    ranked.resize(1);
  }
  std::map<DomainId, std::string> failures;
  for (const RankedDomain& rd : ranked) {
    const Scope inner = Within(scope, r, rd.domain);
    const size_t mark = Mark();
    failure_.clear();
    if (PlaceContents(x, inner, pref)) {
      node.domain = inner.label;
      return true;
    }
    if (error_) return false;
    failures[rd.domain] = failure_;
    Rollback(mark);
    ResetSubtree(x);
  }
  // Pass 1 fails without explaining: pass 2 computes the message.
  failure_ = masked_ ? Shortfall(x, scope, pinned, failures) : Prefix(x) + "no domain";
  short_of_capacity_ = true;
  return false;
}

bool Placer::PlaceContents(int x, const Scope& scope, LevelRef pref_in) {
  GroupNode& node = nodes_[x];
  LevelRef pref = node.preferred.valid() ? node.preferred : pref_in;
  if (Implied(scope, pref)) pref = LevelRef{};
  if (pref.valid() && options_.preferred_domains_to_try > 0 && !node.demand.empty()) {
    // Gather the whole minimum in one preferred-level domain: the tightest
    // that may hold it first (least free domain), so roomy domains stay
    // whole for the subgroups and gangs that need them.
    Flush();
    masks_.clear();
    masked_fits_.clear();
    Ranking ranking = MakeDemand(pref, node.demand, scope);
    if (!ranking.needs.empty()) {
      RankOptions ro;
      ro.order = options_.preferred_order;
      ro.require_fit = true;
      ro.percentage = 100;
      ro.min_candidates = 0;
      ro.max_candidates = masked_ ? options_.preferred_domains_to_try : 1;
      std::vector<RankedDomain> ranked;
      Rank(pref, scope, ranking, ro, ranked);
      for (const RankedDomain& rd : ranked) {
        const size_t mark = Mark();
        if (PlaceInside(x, Within(scope, pref, rd.domain), LevelRef{})) return true;
        if (error_) return false;
        Rollback(mark);
        ResetSubtree(x);
      }
    }
  }
  return PlaceInside(x, scope, pref);
}

}  // namespace copse::scheduler::topology_placement
