// The Placer's messages (scheduler/topology_placement_internal.h): why a
// group's minimum does not fit in its required level, named by the best
// domain (the one whose fit counts cover most of the minimum) and what bounds
// it: the summed requests ("2 Insufficient nvidia.com/gpu"), pod slots, or
// the Filter verdicts of its nodes. Read-only: nothing here places a pod.

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "scheduler/topology_placement_internal.h"

namespace copse::scheduler::topology_placement {

using topology::DomainId;
using topology::DomainTree;
using topology::kNoDomain;

uint64_t Placer::Covered(const Ranking& ranking, LevelRef r, DomainId d) const {
  uint64_t covered = 0;
  for (const topology::ClassNeed& need : ranking.needs) {
    covered += std::min<uint64_t>(need.fits->domain(r.level, d), need.count);
  }
  return std::min(covered, SharedBound(ranking, r, d, nullptr));
}

// The demand's pods that the domain's summed free capacity holds (in the
// demand's mix): min over resources of need * free / demanded. Classes
// counted alone can each fit while all of them together do not.
uint64_t Placer::SharedBound(const Ranking& ranking, LevelRef r, DomainId d,
                             std::optional<ResourceId>* limiting) const {
  const topology::Demand& demand = ranking.demand;
  const uint64_t need =
      static_cast<uint64_t>(std::max<int64_t>(0, demand.total.Get(kResourceIdPods)));
  uint64_t bound = need;
  for (size_t id = 0; id < demand.total.size(); ++id) {
    const auto rid = static_cast<ResourceId>(id);
    const int64_t amount = demand.total.Get(rid);
    if (amount <= 0) continue;
    const int64_t free = std::max<int64_t>(0, trees_[r.tree]->free(r.level, d, rid));
    if (free >= amount) continue;
    const auto holds = static_cast<uint64_t>(static_cast<__int128>(free) * need / amount);
    if (holds < bound) {
      bound = holds;
      if (limiting != nullptr) *limiting = rid;
    }
  }
  return bound;
}

// "best rack rack-17 fits 6/8 pods: 2 Insufficient nvidia.com/gpu".
std::string Placer::Shortfall(int x, const Scope& scope, const std::set<DomainId>& pinned,
                              const std::map<DomainId, std::string>& failures) {
  const GroupNode& node = nodes_[x];
  const LevelRef r = node.required;
  const DomainTree& tree = *trees_[r.tree];
  const std::string& level_name = levels_[r.tree].name(r.level);
  Flush();
  masks_.clear();
  masked_fits_.clear();
  Ranking ranking = MakeDemand(r, node.demand, scope);
  uint64_t need = 0;
  for (const topology::ClassNeed& n : ranking.needs) need += n.count;
  // Every domain of the level inside the scope (pinned ones only, when pinned).
  std::vector<DomainId> domains;
  if (!scope.all && scope.tree == r.tree && scope.level <= r.level) {
    for (DomainId d : tree.Descendants(scope.level, scope.domain, r.level)) domains.push_back(d);
  } else if (scope.all) {
    for (DomainId d : tree.domains(r.level)) domains.push_back(d);
  } else {
    std::set<DomainId> touched;
    for (NodeIndex n : *scope.nodes) {
      const DomainId d = tree.domain_of(n, r.level);
      if (d != kNoDomain) touched.insert(d);
    }
    domains.assign(touched.begin(), touched.end());
  }
  if (!pinned.empty()) {
    std::erase_if(domains, [&](DomainId d) { return !pinned.contains(d); });
  }
  const std::string prefix = Prefix(x);
  if (domains.empty()) {
    return prefix + "no " + level_name + " domain" + (scope.all ? "" : " inside " + scope.label) +
           " (no node has the label " + levels_[r.tree].node_label(r.level) + ")";
  }
  DomainId best = domains.front();
  uint64_t best_covered = Covered(ranking, r, best);
  for (DomainId d : domains) {
    const uint64_t covered = Covered(ranking, r, d);
    if (covered > best_covered ||
        (covered == best_covered && tree.name(r.level, d) < tree.name(r.level, best))) {
      best = d;
      best_covered = covered;
    }
  }
  std::string message = prefix + "best " + level_name + " " +
                        std::string(tree.name(r.level, best)) + " fits " +
                        std::to_string(best_covered) + "/" + std::to_string(need) + " pods";
  std::optional<ResourceId> shared_limit;
  const uint64_t shared = SharedBound(ranking, r, best, &shared_limit);
  if (best_covered < need && shared == best_covered && shared_limit.has_value()) {
    // Each class alone would fit better: the summed requests are what is short.
    return message + ": " + std::to_string(need - best_covered) + " " +
           (*shared_limit == kResourceIdPods
                ? std::string("Too many pods")
                : "Insufficient " + std::string(snapshot_.resources().Name(*shared_limit)));
  }
  if (best_covered < need) {
    std::vector<std::string> reasons;
    for (size_t i = 0; i < ranking.needs.size(); ++i) {
      const uint64_t fit = ranking.needs[i].fits->domain(r.level, best);
      if (fit >= ranking.needs[i].count) continue;
      reasons.push_back(Explain(ranking.need_class[i], r, best, scope, ranking.needs[i].count - fit,
                                ranking.needs[i].count));
    }
    message += ": ";
    for (size_t i = 0; i < reasons.size(); ++i) message += (i > 0 ? ", " : "") + reasons[i];
    return message;
  }
  if (auto it = failures.find(best); it != failures.end() && !it->second.empty()) {
    return message + ": " + it->second;
  }
  return message + " by count, but was not tried (" +
         std::to_string(options_.percentage_of_placements_to_try) +
         "% of the candidates are tried)";
}

// Why only `need - short_by` pods of class c fit in domain d: the resource
// that bounds the count, or the Filter verdicts of the domain's nodes.
std::string Placer::Explain(uint32_t c, LevelRef r, DomainId d, const Scope& scope,
                            uint64_t short_by, uint64_t need) {
  const ClassInfo& cls = classes_[c];
  const DomainTree& tree = *trees_[r.tree];
  const ResourceVector& request = cls.rep->requests;
  const std::optional<plugins::PluginIndex> fit_plugin = fw_.FindPlugin("NodeResourcesFit");
  uint64_t by_pods = 0;
  size_t eligible = 0;  // nodes passing Filter, or rejected only for resources
  std::map<ResourceId, uint64_t> by_resource;
  std::map<std::string, size_t> rejected;
  for (NodeIndex n : tree.nodes(r.level, d)) {
    if (!scope.all && !std::binary_search(scope.nodes->begin(), scope.nodes->end(), n)) continue;
    const plugins::Status& verdict = cls.statuses[n];
    const bool resource_only =
        cls.feasible[n] != 0 || (fit_plugin.has_value() && verdict.plugin == *fit_plugin);
    if (!resource_only) {
      if (!cls.prefilter_message.empty()) {
        ++rejected[cls.prefilter_message];
        continue;
      }
      std::vector<std::string> reasons;
      fw_.AppendReasons(verdict, snapshot_, reasons);
      for (const std::string& reason : reasons) ++rejected[reason];
      continue;
    }
    ++eligible;
    by_pods += static_cast<uint64_t>(std::max<int64_t>(0, tree.node_free(n, kResourceIdPods)));
    for (size_t id = 0; id < request.size(); ++id) {
      const auto rid = static_cast<ResourceId>(id);
      const int64_t amount = request.Get(rid);
      if (rid == kResourceIdPods || amount <= 0) continue;
      by_resource[rid] +=
          static_cast<uint64_t>(std::max<int64_t>(0, tree.node_free(n, rid)) / amount);
    }
  }
  // The bound: free pod slots, or the requested resource with the fewest
  // pods' worth free (the first such resource on ties).
  std::optional<ResourceId> limiting;
  uint64_t limit = by_pods;
  for (const auto& [rid, count] : by_resource) {
    if (count < limit) {
      limit = count;
      limiting = rid;
    }
  }
  const std::string bound =
      limiting.has_value() ? "Insufficient " + std::string(snapshot_.resources().Name(*limiting))
                           : std::string("Too many pods");
  if (rejected.empty()) return std::to_string(short_by) + " " + bound;
  std::string histogram;
  for (const auto& [reason, count] : rejected) {
    histogram += (histogram.empty() ? "" : ", ") + std::to_string(count) + " " + reason;
  }
  if (eligible == 0 || limit >= need) {
    return std::to_string(short_by) + " blocked by Filter (" + histogram + ")";
  }
  return std::to_string(short_by) + " " + bound + " (and " + histogram + ")";
}

}  // namespace copse::scheduler::topology_placement
