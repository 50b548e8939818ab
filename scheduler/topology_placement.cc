// The public side of topology placement (scheduler/topology_placement.h):
// the Topology catalog, the workspace of domain trees, and
// PlaceGangWithTopology, which runs one Placer
// (scheduler/topology_placement_internal.h): this file holds its outline
// (Run's optimistic and masked passes, then phase 2), the undo log and the
// result (Finish); the other topology_placement_*.cc files its steps.
#include "scheduler/topology_placement.h"

#include <algorithm>
#include <memory>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "kube/topology.h"
#include "scheduler/topology_placement_internal.h"

namespace copse::scheduler {

using topology::DomainTree;
using topology::TopologyLevels;

// ------------------------------------------------------------------ catalog

Status TopologyCatalog::Upsert(const kube::Topology& object) {
  const std::string& name = object.meta.name;
  auto drop = [&] {
    if (levels_.erase(name) > 0) ++version_;
  };
  if (Status valid = object.Validate(); !valid.ok()) {
    drop();
    return valid;
  }
  std::vector<topology::TopologyLevel> levels;
  levels.reserve(object.spec.levels.size());
  for (const kube::TopologyLevel& level : object.spec.levels)
    levels.push_back({"", level.node_label});
  topology::LevelFieldNames fields;
  fields.levels = "spec.levels";
  Result<TopologyLevels> created = TopologyLevels::Create(std::move(levels), fields);
  if (!created.ok()) {
    drop();
    return created.error();
  }
  Set(name, std::move(created).value());
  return Status::Ok();
}

void TopologyCatalog::Set(std::string name, TopologyLevels levels) {
  levels_.insert_or_assign(std::move(name), std::move(levels));
  ++version_;
}

bool TopologyCatalog::Remove(std::string_view name) {
  auto it = levels_.find(name);
  if (it == levels_.end()) return false;
  levels_.erase(it);
  ++version_;
  return true;
}

std::optional<TopologyLevels> TopologyCatalog::Find(std::string_view name) const {
  auto it = levels_.find(name);
  if (it == levels_.end()) return std::nullopt;
  return it->second;
}

std::vector<TopologyDefinition> TopologyCatalog::Definitions() const {
  std::vector<TopologyDefinition> out;
  out.reserve(levels_.size());
  for (const auto& [name, levels] : levels_) {
    TopologyDefinition def;
    def.name = name;
    for (size_t i = 0; i < levels.size(); ++i) def.levels.push_back(levels.node_label(i));
    out.push_back(std::move(def));
  }
  return out;
}

uint64_t TopologyCatalog::version() const { return version_; }

size_t TopologyCatalog::size() const { return levels_.size(); }

// ---------------------------------------------------------------- workspace

namespace topology_placement {

std::string TreeKey(const TopologyLevels& levels) {
  std::string key;
  for (size_t i = 0; i < levels.size(); ++i) {
    key += levels.node_label(i);
    key += '\n';
  }
  return key;
}

}  // namespace topology_placement

DomainTree& TopologyWorkspace::Tree(const TopologyLevels& levels, Snapshot& snapshot) {
  const std::string key = topology_placement::TreeKey(levels);
  auto it = trees_.find(key);
  if (it == trees_.end()) {
    it = trees_.emplace(key, std::make_unique<DomainTree>(levels)).first;
  }
  for (size_t i = 0; i < levels.size(); ++i) snapshot.IndexLabelKey(levels.node_label(i));
  it->second->Refresh(snapshot);
  return *it->second;
}

bool NeedsTopologyPlacement(const GangSpec& spec) noexcept {
  auto has_level = [](const TopologyConstraint& c) {
    return !c.required_level.empty() || !c.preferred_level.empty();
  };
  if (!spec.sub_groups.empty() || has_level(spec.topology_constraint)) return true;
  return false;
}

// ---------------------------------------------------------------- placement

namespace topology_placement {

TopologyGangPlacement Placer::Run() {
  TopologyGangPlacement out;
  for (const SubGroupSpec& group : spec_.sub_groups) out.sub_groups.push_back({group.name});
  const std::vector<TopologyDefinition> definitions = catalog_.Definitions();
  GangValidationOptions validation;
  validation.topologies = &definitions;
  if (Status valid = ValidateGangSpec(spec_, validation); !valid.ok()) {
    return Finish(std::move(out), false, valid.error().message);
  }
  BuildTree();
  AssignMembers();
  if (options_.find_bound_members) FindBound();
  if (!ResolveLevels()) return Finish(std::move(out), false, failure_);
  GroupClasses();
  // Pass 1 (optimistic): fit counts from free capacity alone, one candidate
  // per required level; usually enough, and it skips a Filter pass over
  // every node. Pass 2: per-class Filter masks, the full candidate lists
  // and the shortfall messages.
  for (const bool masked : {!options_.optimistic, true}) {
    masked_ = masked;
    if (masked && !FilterClasses()) return Finish(std::move(out), false, failure_);
    Plan();
    Scope everything;
    const bool ok = PlaceMin(0, everything, LevelRef{});
    if (ok && !error_) break;
    const std::string why = failure_;
    Rollback(0);
    if (error_ || masked) return Finish(std::move(out), false, why);
    ResetPass();
  }
  failure_.clear();
  // Optional children get the full search (they are tried only now).
  const bool optional_children = std::any_of(nodes_.begin(), nodes_.end(), [](const GroupNode& n) {
    return n.children.size() > n.required_children;
  });
  if (!masked_ && optional_children) {
    Flush();
    masked_ = true;
    if (!FilterClasses()) {
      const std::string why = failure_;
      Rollback(0);
      return Finish(std::move(out), false, why);
    }
  }
  FillOptional(0);
  if (!error_) FillExtras(0);
  if (error_) {
    const std::string why = failure_;
    Rollback(0);
    return Finish(std::move(out), false, why);
  }
  return Finish(std::move(out), true, failure_);
}

void Placer::Rollback(size_t mark) {
  while (records_.size() > mark) {
    const Record& r = records_.back();
    snapshot_.RemovePod(r.member.node, r.member.pod->uid);
    dirty_.push_back(r.member.node);
    nodes_[r.group].placed[r.position] = 0;
    records_.pop_back();
  }
}

void Placer::ResetSubtree(int x) {
  std::vector<int> stack{x};
  while (!stack.empty()) {
    int y = stack.back();
    stack.pop_back();
    GroupNode& node = nodes_[y];
    node.satisfied = false;
    node.scope = Scope{};
    node.pref = LevelRef{};
    node.domain.clear();
    for (int c : node.children) stack.push_back(c);
  }
}

void Placer::RecordPlacement(const MemberPlacement& m) {
  auto it = position_.find(m.pod.get());
  if (it == position_.end()) return;  // not ours (cannot happen)
  const auto [group, position] = it->second;
  nodes_[group].placed[position] = 1;
  records_.push_back({m, group, position});
  dirty_.push_back(m.node);
}

TopologyGangPlacement Placer::Finish(TopologyGangPlacement out, bool satisfied,
                                     std::string failure) {
  GangPlacement& p = out.placement;
  std::unordered_set<const PodInfo*> placed;
  for (const Record& r : records_) {
    p.placed.push_back(r.member);
    placed.insert(r.member.pod.get());
  }
  for (const PodPtr& pod : members_) {
    if (!placed.contains(pod.get())) p.unplaced.push_back(pod);
  }
  p.error = error_;
  p.satisfied = satisfied && !error_;
  if (p.satisfied && !p.unplaced.empty() && failure.empty()) failure = optional_failure_;
  p.failure = std::move(failure);
  if (!p.satisfied && short_of_capacity_) {
    // Capacity freed anywhere may help: requeue on what NodeResourcesFit watches.
    if (std::optional<plugins::PluginIndex> fit = fw_.FindPlugin("NodeResourcesFit")) {
      unschedulable_plugins_ |= uint64_t{1} << *fit;
    }
  }
  // A subgroup lacking pods waits for members, not for cluster events: no
  // plugin rejected it, so the queue retries the group after backoff.
  p.unschedulable_plugins = waiting_for_members_ ? 0 : unschedulable_plugins_;
  p.evaluated_nodes = evaluated_nodes_;
  if (!nodes_.empty()) {
    out.domain = p.satisfied ? nodes_[0].domain : std::string();
    for (size_t i = 0; i < out.sub_groups.size() && i + 1 < nodes_.size(); ++i) {
      const GroupNode& node = nodes_[i + 1];
      SubGroupPlacement& sg = out.sub_groups[i];
      sg.bound = static_cast<int32_t>(node.bound_nodes.size());
      sg.placed = 0;
      for (uint8_t f : node.placed) sg.placed += f;
      sg.satisfied = p.satisfied && node.satisfied;
      sg.domain = sg.satisfied ? node.domain : std::string();
    }
  }
  return out;
}

}  // namespace topology_placement

TopologyGangPlacement PlaceGangWithTopology(const plugins::Framework& fw, Snapshot& snapshot,
                                            std::span<const PodPtr> members, const GangSpec& spec,
                                            const TopologyCatalog& catalog,
                                            const TopologyPlacementOptions& options,
                                            plugins::RandomSource& random,
                                            plugins::Workspace& workspace) {
  topology_placement::Placer placer(fw, snapshot, members, spec, catalog, options, random,
                                    workspace);
  return placer.Run();
}

}  // namespace copse::scheduler
