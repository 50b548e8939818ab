// The Placer's minimums (scheduler/topology_placement_internal.h): Plan
// decides which pods make each group's minimum (minMember, minSubGroup: spec
// 002), PlaceInside places a group's required children and its planned pods
// inside a scope, trying another child when one does not fit, TopUp brings a
// group to its minMember when children stood in for one another, and phase 2
// (FillOptional, FillExtras) adds optional children and extra pods of
// satisfied groups, best effort. Each step either succeeds or leaves its
// undo to the caller (Rollback to a Mark).

#include <algorithm>
#include <string>
#include <vector>

#include "scheduler/topology_placement_internal.h"

namespace copse::scheduler::topology_placement {

// Step 2: which pods make each node's minimum (see the header).
void Placer::Plan() {
  for (GroupNode& node : nodes_) {
    node.plan = 0;
    node.impossible = false;
    node.topup = false;
  }
  std::vector<int64_t> planned_below(nodes_.size(), 0);
  std::vector<int64_t> pods_below(nodes_.size(), 0);  // pending members in the subtree
  auto required_chain = [&](int x) {
    std::vector<int> out;
    std::vector<int> stack{x};
    while (!stack.empty()) {
      int y = stack.back();
      stack.pop_back();
      out.push_back(y);
      const GroupNode& node = nodes_[y];
      for (size_t i = node.required_children; i-- > 0;) stack.push_back(node.order[i]);
    }
    return out;
  };
  for (auto it = pre_order_.rbegin(); it != pre_order_.rend(); ++it) {
    const int x = *it;
    GroupNode& node = nodes_[x];
    OrderChildren(node);
    const bool best_effort_root = x == 0 && !spec_.IsGang();
    int64_t have = node.bound_below;
    int64_t need_children = 0;
    pods_below[x] = static_cast<int64_t>(node.direct.size());
    for (int c : node.children) pods_below[x] += pods_below[c];
    for (size_t i = 0; i < node.required_children; ++i) {
      const int c = node.order[i];
      have += planned_below[c];
      need_children += nodes_[c].need;
      if (nodes_[c].impossible) node.impossible = true;
    }
    node.need = std::max<int64_t>(best_effort_root ? 0 : node.min_member, need_children);
    int64_t missing = best_effort_root ? static_cast<int64_t>(node.direct.size())
                                       : static_cast<int64_t>(node.min_member) - have;
    if (missing > 0) {
      node.plan = static_cast<size_t>(std::min<int64_t>(missing, node.direct.size()));
      missing -= static_cast<int64_t>(node.plan);
    }
    if (missing > 0) {
      // Spare pods of the required descendants.
      for (int y : required_chain(x)) {
        if (y == x || missing <= 0) continue;
        GroupNode& below = nodes_[y];
        const int64_t spare = static_cast<int64_t>(below.direct.size() - below.plan);
        const int64_t take = std::min(spare, missing);
        below.plan += static_cast<size_t>(take);
        missing -= take;
      }
    }
    if (missing > 0 && !best_effort_root) {
      // Pods of the optional children (any N children may be the required
      // ones): PlaceInside tops the minimum up from them.
      int64_t optional = 0;
      for (size_t i = node.required_children; i < node.order.size(); ++i) {
        if (!nodes_[node.order[i]].impossible) optional += pods_below[node.order[i]];
      }
      node.topup = true;
      missing -= optional;
    }
    if (missing > 0) node.impossible = true;
    int64_t total = 0;
    for (int y : required_chain(x)) total += static_cast<int64_t>(nodes_[y].plan);
    planned_below[x] = total;
  }
  // Per-class demand of every node's minimum (after all top-ups).
  for (auto it = pre_order_.rbegin(); it != pre_order_.rend(); ++it) {
    GroupNode& node = nodes_[*it];
    node.demand.assign(classes_.size(), 0);
    for (size_t i = 0; i < node.plan && i < node.direct.size(); ++i) {
      ++node.demand[node.direct_class[i]];
    }
    for (size_t i = 0; i < node.required_children; ++i) {
      const GroupNode& child = nodes_[node.order[i]];
      for (size_t c = 0; c < classes_.size(); ++c) node.demand[c] += child.demand[c];
    }
  }
}

// Spec 002: any min_sub_group children satisfy a node. The ones tried
// first (and counted in its demand) are the children its bound members
// already satisfy (re-placing a running gang keeps its replicas), then
// those with more members bound, then those needing the fewest pods; a
// child lacking members goes last. List order breaks ties. When every
// child is required the list order stays.
void Placer::OrderChildren(GroupNode& node) {
  node.order = node.children;
  if (node.required_children >= node.children.size()) return;
  auto ready = [&](int c) { return nodes_[c].bound_below >= nodes_[c].need; };
  std::stable_sort(node.order.begin(), node.order.end(), [&](int a, int b) {
    const GroupNode& x = nodes_[a];
    const GroupNode& y = nodes_[b];
    if (x.impossible != y.impossible) return !x.impossible;
    if (ready(a) != ready(b)) return ready(a);
    if (x.bound_below != y.bound_below) return x.bound_below > y.bound_below;
    return x.need - x.bound_below < y.need - y.bound_below;
  });
}

bool Placer::PlaceInside(int x, const Scope& scope, LevelRef pref) {
  GroupNode& node = nodes_[x];
  node.scope = scope;
  node.pref = pref;
  // Any required_children of the children satisfy x (spec 002): they are
  // tried in Plan's order, and one that does not fit here is undone and
  // the next tried instead, while enough remain.
  size_t satisfied = 0;
  const size_t substitutions_before = substitutions_;
  std::string first_failure;
  for (size_t k = 0; k < node.order.size() && satisfied < node.required_children; ++k) {
    if (node.order.size() - k < node.required_children - satisfied) break;
    const int c = node.order[k];
    if (nodes_[c].impossible) break;  // ordered last: none after it is possible either
    const size_t mark = Mark();
    if (PlaceMin(c, scope, pref)) {
      ++satisfied;
      continue;
    }
    if (error_) return false;
    if (first_failure.empty()) first_failure = failure_;
    ++substitutions_;
    Rollback(mark);
    ResetSubtree(c);
  }
  if (satisfied < node.required_children) {
    failure_ = !first_failure.empty() ? first_failure
                                      : Prefix(x) + std::to_string(satisfied) + " of the " +
                                            std::to_string(node.required_children) +
                                            " subgroups it needs can be placed";
    return false;
  }
  std::vector<PodPtr> pods;
  for (size_t i = 0; i < node.direct.size() && pods.size() < node.plan; ++i) {
    if (!node.placed[i]) pods.push_back(node.direct[i]);
  }
  const bool best_effort = x == 0 && !spec_.IsGang();
  if (!pods.empty()) {
    const size_t want = best_effort ? 0 : pods.size();
    last_failure_.clear();
    const size_t got = PlacePods(pods, scope, want, pref);
    if (error_) return false;
    if (got < want) {
      failure_ = Prefix(x) + std::to_string(got) + "/" + std::to_string(want) + " of its pods fit" +
                 (scope.all ? "" : " in " + scope.label) +
                 (last_failure_.empty() ? "" : ": " + last_failure_);
      return false;
    }
  }
  // Plan's pods make the minimum unless another child stood in for a
  // planned one (here or below), or the minimum needs optional children's pods.
  const bool substituted = substitutions_ != substitutions_before;
  if (!best_effort && (substituted || node.topup) && !TopUp(x)) return false;
  node.satisfied = true;
  return true;
}

// Members placed by this call or already bound in x's subtree.
int64_t Placer::CountBelow(int x) const {
  int64_t total = nodes_[x].bound_below;
  std::vector<int> stack{x};
  while (!stack.empty()) {
    const int y = stack.back();
    stack.pop_back();
    for (uint8_t f : nodes_[y].placed) total += f;
    for (int c : nodes_[y].children) stack.push_back(c);
  }
  return total;
}

// Brings x's subtree up to x's min_member: first the unplaced pods of x
// and of its satisfied descendants (each in its own scope, so subgroup
// constraints hold), then optional children placed whole (PlaceMin) with
// their spare pods. The caller undoes a failure.
bool Placer::TopUp(int x) {
  GroupNode& node = nodes_[x];
  int64_t missing = node.min_member - CountBelow(x);
  auto spare = [&](int top) {
    std::vector<int> stack{top};
    while (!stack.empty() && missing > 0 && !error_) {
      const int y = stack.back();
      stack.pop_back();
      GroupNode& below = nodes_[y];
      if (y != x && !below.satisfied) continue;
      std::vector<PodPtr> pods;
      for (size_t i = 0; i < below.direct.size() && static_cast<int64_t>(pods.size()) < missing;
           ++i) {
        if (!below.placed[i]) pods.push_back(below.direct[i]);
      }
      if (!pods.empty()) {
        missing -= static_cast<int64_t>(PlacePods(pods, below.scope, 0, below.pref));
      }
      for (auto it = below.order.rbegin(); it != below.order.rend(); ++it) stack.push_back(*it);
    }
  };
  if (missing > 0) spare(x);
  for (size_t k = 0; k < node.order.size() && missing > 0 && !error_; ++k) {
    const int c = node.order[k];
    if (nodes_[c].satisfied || nodes_[c].impossible) continue;
    const size_t mark = Mark();
    if (PlaceMin(c, node.scope, node.pref)) {
      missing = node.min_member - CountBelow(x);
      if (missing > 0) spare(c);
    } else if (!error_) {
      Rollback(mark);
      ResetSubtree(c);
    }
  }
  if (error_) return false;
  if (missing > 0) {
    failure_ = Prefix(x) + std::to_string(node.min_member - missing) + "/" +
               std::to_string(node.min_member) + " of its minMember pods fit" +
               (node.scope.all ? "" : " in " + node.scope.label);
    return false;
  }
  return true;
}

// Phase 2a: optional children of satisfied nodes, each all-or-nothing.
void Placer::FillOptional(int x) {
  GroupNode& node = nodes_[x];
  for (size_t i = 0; i < node.order.size() && !error_; ++i) {
    const int c = node.order[i];
    if (nodes_[c].satisfied) {
      FillOptional(c);
      continue;
    }
    const size_t mark = Mark();
    if (PlaceMin(c, node.scope, node.pref)) {
      FillOptional(c);
    } else if (!error_) {
      optional_failure_ = failure_;
      Rollback(mark);
      ResetSubtree(c);
    }
  }
}

// Phase 2b: the remaining pods of satisfied nodes, best effort.
void Placer::FillExtras(int x) {
  GroupNode& node = nodes_[x];
  if (!node.satisfied || error_) return;
  std::vector<PodPtr> pods;
  for (size_t i = 0; i < node.direct.size(); ++i) {
    if (!node.placed[i]) pods.push_back(node.direct[i]);
  }
  if (!pods.empty()) {
    last_failure_.clear();
    const size_t got = PlacePods(pods, node.scope, 0, node.pref);
    if (got < pods.size() && !last_failure_.empty()) {
      optional_failure_ = Prefix(x) + last_failure_;
    }
  }
  for (int c : node.children) FillExtras(c);
}

int64_t Placer::PodsBelow(int x) const {
  int64_t total = nodes_[x].bound_below;
  std::vector<int> stack{x};
  while (!stack.empty()) {
    int y = stack.back();
    stack.pop_back();
    total += static_cast<int64_t>(nodes_[y].direct.size());
    for (int c : nodes_[y].children) stack.push_back(c);
  }
  return total;
}

}  // namespace copse::scheduler::topology_placement
