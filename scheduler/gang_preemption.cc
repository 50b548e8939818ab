#include "scheduler/gang_preemption.h"

#include <algorithm>
#include <map>
#include <set>

namespace copse::scheduler {
namespace {

struct Unit {
  std::vector<std::pair<NodeIndex, PodRef>> pods;
  bool violates_pdb = false;
  bool piece_of_group = false;  // a pod of a running group that may lose single pods
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
                                 const GangPlacementOptions& options, const VictimGroupFn& unit_of,
                                 plugins::RandomSource& random, plugins::Workspace& workspace,
                                 const GangPlaceFn& place) {
  GangPreemption out;
  if (members.empty()) return out;
  int32_t priority = members.front()->priority;
  std::set<std::string> member_uids;
  for (const PodPtr& m : members) {
    priority = std::min(priority, m->priority);
    member_uids.insert(m->uid);
  }
  auto lower = [&](const PodInfo& pod) {
    return pod.priority < priority && !member_uids.contains(pod.uid) && !pod.terminating;
  };

  // 1. Everything lower-priority gone.
  Snapshot all_gone = snapshot;
  for (NodeIndex n = 0; n < all_gone.num_nodes(); ++n) {
    std::vector<std::string> remove;
    for (const PodRef& pod : snapshot.pods(n)) {
      if (lower(*pod)) remove.push_back(pod->uid);
    }
    for (const std::string& uid : remove) all_gone.RemovePod(n, uid);
  }
  std::vector<MemberPlacement> placement;
  if (!Fits(fw, all_gone, members, options, random, workspace, &placement, place)) {
    out.message = "preemption: the group does not fit even with every lower-priority pod evicted";
    return out;
  }

  // 2. Candidate units on the nodes used.
  std::set<NodeIndex> used;
  for (const MemberPlacement& m : placement) used.insert(m.node);
  std::map<std::string, std::vector<std::pair<NodeIndex, PodRef>>> group_pods;
  for (NodeIndex n = 0; n < snapshot.num_nodes(); ++n) {
    for (const PodRef& pod : snapshot.pods(n)) {
      if (!lower(*pod)) continue;
      if (std::optional<VictimGroup> g = unit_of(*pod); g.has_value() && g->all_or_nothing) {
        group_pods[g->key].push_back({n, pod});
      }
    }
  }
  std::vector<Unit> units;
  std::set<std::string> taken_groups;
  for (NodeIndex n : used) {
    for (const PodRef& pod : snapshot.pods(n)) {
      if (!lower(*pod)) continue;
      std::optional<VictimGroup> g = unit_of(*pod);
      Unit unit;
      if (g.has_value() && g->all_or_nothing) {
        if (!taken_groups.insert(g->key).second) continue;
        unit.pods = group_pods[g->key];
      } else {
        unit.pods.push_back({n, pod});
        unit.piece_of_group = g.has_value();
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
    if (a.piece_of_group != b.piece_of_group) return a.piece_of_group;
    return a.max_priority > b.max_priority;
  });
  for (const Unit& unit : units) {
    for (const auto& [node, pod] : unit.pods) scratch.AddPod(node, pod);
    std::vector<MemberPlacement> trial;
    if (Fits(fw, scratch, members, options, random, workspace, &trial, place)) {
      placement = std::move(trial);
      continue;  // reprieved
    }
    for (const auto& [node, pod] : unit.pods) {
      scratch.RemovePod(node, pod->uid);
      out.victims.push_back(pod);
    }
  }
  out.found = true;
  out.placement = std::move(placement);
  return out;
}

}  // namespace copse::scheduler
