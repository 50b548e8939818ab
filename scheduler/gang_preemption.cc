#include "scheduler/gang_preemption.h"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace copse::scheduler {
namespace {

struct Unit {
  std::vector<std::pair<NodeIndex, PodRef>> pods;
  bool violates_pdb = false;
  bool whole_group = false;  // every pod of a group that goes only whole
  int32_t max_priority = 0;
};

bool Fits(const plugins::Framework& fw, Snapshot& scratch, std::span<const PodPtr> members,
          const GangPlacementOptions& options, plugins::RandomSource& random,
          plugins::Workspace& workspace, std::vector<MemberPlacement>* placement,
          const GangPlaceFn& place) {
  GangPlacement p =
      place ? place(scratch, members) : PlaceGang(fw, scratch, members, options, random, workspace);
  // Undo the tentative placement so the scratch snapshot keeps only victim edits.
  for (const MemberPlacement& m : p.placed) scratch.RemovePod(m.node, m.pod->uid);
  if (p.satisfied && placement != nullptr) *placement = std::move(p.placed);
  return p.satisfied;
}

}  // namespace

GangPreemption SelectGangVictims(const plugins::Framework& fw, const Snapshot& snapshot,
                                 std::span<const PodPtr> members,
                                 const GangPlacementOptions& options, const VictimRules& rules,
                                 plugins::RandomSource& random, plugins::Workspace& workspace,
                                 const GangPlaceFn& place) {
  GangPreemption out;
  if (members.empty()) return out;
  // Views into the members, which outlive this call.
  std::unordered_set<std::string_view> member_uids;
  for (const PodPtr& m : members) member_uids.insert(m->uid);
  // The pods on `nodes` the rules let this group take together. Runs over
  // every pod of the cluster once per attempt: no key strings are built.
  auto removable = [&](const auto& nodes) {
    std::vector<PodRef> candidates;
    std::unordered_map<const PodInfo*, NodeIndex> node_of;
    for (NodeIndex n : nodes) {
      for (const PodRef& pod : snapshot.pods(n)) {
        if (pod->terminating || member_uids.contains(pod->uid)) continue;
        if (rules.UnitOf(*pod) == VictimRules::Unit::kNever) continue;
        candidates.push_back(pod);
        node_of.emplace(pod.get(), n);
      }
    }
    std::vector<std::pair<NodeIndex, PodRef>> out;
    for (const PodRef& pod : rules.Removable(candidates)) {
      out.emplace_back(node_of.at(pod.get()), pod);
    }
    return out;
  };

  // 1. Everything removable gone.
  Snapshot all_gone = snapshot;
  std::vector<NodeIndex> every_node(snapshot.num_nodes());
  for (NodeIndex n = 0; n < snapshot.num_nodes(); ++n) every_node[n] = n;
  for (const auto& [node, pod] : removable(every_node)) all_gone.RemovePod(node, pod->uid);
  std::vector<MemberPlacement> placement;
  if (!Fits(fw, all_gone, members, options, random, workspace, &placement, place)) {
    out.message = "preemption: the group does not fit even with every lower-priority pod evicted";
    return out;
  }

  // 2. Candidate units on the nodes used.
  std::set<NodeIndex> used;
  for (const MemberPlacement& m : placement) used.insert(m.node);
  std::vector<Unit> units;
  std::set<std::string> taken_groups;
  for (const auto& [n, pod] : removable(used)) {
    Unit unit;
    if (rules.UnitOf(*pod) == VictimRules::Unit::kWhole) {
      const std::string group = rules.GroupOf(*pod);
      if (!taken_groups.insert(group).second) continue;
      unit.pods = rules.GroupPods(group);
      unit.whole_group = true;
    } else {
      unit.pods.push_back({n, pod});
    }
    for (const auto& [node, p] : unit.pods) {
      unit.max_priority = std::max(unit.max_priority, p->priority);
      for (const PodDisruptionBudgetInfo& pdb : snapshot.pdbs()) {
        if (pdb.disruptions_allowed <= 0 && pdb.Covers(*p) && !pdb.AlreadyDisrupted(p->name)) {
          unit.violates_pdb = true;
        }
      }
    }
    units.push_back(std::move(unit));
  }

  // 3. All candidates gone.
  Snapshot scratch = snapshot;
  for (const Unit& unit : units) {
    for (const auto& [node, pod] : unit.pods) scratch.RemovePod(node, pod->uid);
  }
  if (!Fits(fw, scratch, members, options, random, workspace, &placement, place)) {
    out.message = "preemption: the group does not fit after evicting the pods on its nodes";
    return out;
  }

  // 4. Reprieve.
  std::stable_sort(units.begin(), units.end(), [](const Unit& a, const Unit& b) {
    if (a.violates_pdb != b.violates_pdb) return a.violates_pdb;
    if (a.whole_group != b.whole_group) return a.whole_group;
    return a.max_priority > b.max_priority;
  });
  std::vector<PodRef> victims;
  for (const Unit& unit : units) {
    for (const auto& [node, pod] : unit.pods) scratch.AddPod(node, pod);
    std::vector<MemberPlacement> trial;
    if (Fits(fw, scratch, members, options, random, workspace, &trial, place)) {
      placement = std::move(trial);
      continue;  // reprieved
    }
    for (const auto& [node, pod] : unit.pods) {
      scratch.RemovePod(node, pod->uid);
      victims.push_back(pod);
    }
  }

  // 5. No group left below its minimum.
  if (!rules.Complete(victims)) {
    out.message = "preemption: the victims would leave a pod group below its minimum";
    return out;
  }
  out.found = true;
  out.victims = std::move(victims);
  out.placement = std::move(placement);
  return out;
}

}  // namespace copse::scheduler
