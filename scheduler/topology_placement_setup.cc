// The Placer's setup (scheduler/topology_placement_internal.h): the gang's
// spec as a tree of groups (the root and its subgroups, in pre-order), each
// pending member under the group its subgroup label names, members already
// bound (FindBound), every required and preferred level resolved to a domain
// tree (an unknown Topology or level fails with the field named), and the
// members grouped into pod classes, each with one PreFilter + Filter pass
// over every node (FilterClass; pass 2 only). Nothing here places a pod.

#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "scheduler/topology_placement_internal.h"

namespace copse::scheduler::topology_placement {

using topology::DomainTree;
using topology::TopologyLevels;

void Placer::BuildTree() {
  nodes_.resize(spec_.sub_groups.size() + 1);
  GroupNode& root = nodes_[0];
  root.min_member = spec_.IsGang() ? spec_.min_member : 0;
  for (size_t i = 0; i < spec_.sub_groups.size(); ++i) {
    GroupNode& node = nodes_[i + 1];
    node.name = spec_.sub_groups[i].name;
    node.min_member = spec_.sub_groups[i].min_member;
  }
  // Validated: parents exist and there are no cycles.
  for (size_t i = 0; i < spec_.sub_groups.size(); ++i) {
    const std::string& parent = spec_.sub_groups[i].parent;
    int p = 0;
    if (!parent.empty()) {
      if (std::optional<size_t> index = spec_.FindSubGroup(parent))
        p = static_cast<int>(*index) + 1;
    }
    nodes_[i + 1].parent = p;
    nodes_[p].children.push_back(static_cast<int>(i) + 1);
  }
  for (size_t x = 0; x < nodes_.size(); ++x) {
    GroupNode& node = nodes_[x];
    const int32_t min_sub_group = spec_.MinSubGroup(node.name);
    node.required_children =
        std::min<size_t>(node.children.size(), static_cast<size_t>(std::max(0, min_sub_group)));
  }
  // Post-order (children before parents) for the bottom-up passes.
  std::vector<int> stack{0};
  while (!stack.empty()) {
    int x = stack.back();
    stack.pop_back();
    pre_order_.push_back(x);
    for (auto it = nodes_[x].children.rbegin(); it != nodes_[x].children.rend(); ++it) {
      stack.push_back(*it);
    }
  }
}

int Placer::GroupOf(const PodInfo& pod) const {
  if (pod.sub_group.empty()) return 0;
  std::optional<size_t> index = spec_.FindSubGroup(pod.sub_group);
  return index.has_value() ? static_cast<int>(*index) + 1 : 0;
}

void Placer::AssignMembers() {
  for (const PodPtr& pod : members_) {
    nodes_[GroupOf(*pod)].direct.push_back(pod);
    member_uids_.insert(pod->uid);
  }
  for (size_t x = 0; x < nodes_.size(); ++x) {
    GroupNode& node = nodes_[x];
    std::sort(node.direct.begin(), node.direct.end(),
              [](const PodPtr& a, const PodPtr& b) { return a->name < b->name; });
    node.placed.assign(node.direct.size(), 0);
    for (size_t i = 0; i < node.direct.size(); ++i) {
      position_[node.direct[i].get()] = {static_cast<int>(x), i};
    }
  }
}

void Placer::FindBound() {
  const PodInfo::GroupKind kind = spec_.source == GangSource::kCopsePodGroup
                                      ? PodInfo::GroupKind::kCopsePodGroup
                                      : PodInfo::GroupKind::kWorkloadPodGroup;
  for (NodeIndex n = 0; n < snapshot_.num_nodes(); ++n) {
    for (const PodRef& pod : snapshot_.pods(n)) {
      if (pod->group_kind != kind || pod->pod_group != spec_.name ||
          pod->namespace_name != spec_.namespace_ || pod->terminating ||
          member_uids_.contains(pod->uid)) {
        continue;
      }
      nodes_[GroupOf(*pod)].bound_nodes.push_back(n);
    }
  }
  for (auto it = pre_order_.rbegin(); it != pre_order_.rend(); ++it) {
    GroupNode& node = nodes_[*it];
    node.bound_below += static_cast<int32_t>(node.bound_nodes.size());
    node.bound_nodes_below.insert(node.bound_nodes_below.end(), node.bound_nodes.begin(),
                                  node.bound_nodes.end());
    if (node.parent >= 0) {
      GroupNode& parent = nodes_[node.parent];
      parent.bound_below += node.bound_below;
      parent.bound_nodes_below.insert(parent.bound_nodes_below.end(),
                                      node.bound_nodes_below.begin(), node.bound_nodes_below.end());
    }
  }
}

int Placer::TreeFor(const TopologyLevels& levels) {
  const std::string key = TreeKey(levels);
  for (size_t i = 0; i < tree_keys_.size(); ++i) {
    if (tree_keys_[i] == key) return static_cast<int>(i);
  }
  DomainTree* tree = nullptr;
  if (options_.workspace != nullptr) {
    tree = &options_.workspace->Tree(levels, snapshot_);
  } else {
    own_trees_.push_back(std::make_unique<DomainTree>(levels));
    for (size_t i = 0; i < levels.size(); ++i) snapshot_.IndexLabelKey(levels.node_label(i));
    own_trees_.back()->Refresh(snapshot_);
    tree = own_trees_.back().get();
  }
  tree_keys_.push_back(key);
  trees_.push_back(tree);
  levels_.push_back(levels);
  fits_.emplace_back();
  return static_cast<int>(trees_.size()) - 1;
}

std::string Placer::FieldOf(int x, int which) const {
  // which: 0 topology, 1 required, 2 preferred (v1alpha2 has only the key).
  if (x == 0 && spec_.source == GangSource::kWorkloadPodGroup) {
    return "spec.schedulingConstraints.topologyConstraints[0].topologyKey";
  }
  static constexpr const char* kFields[] = {".topology", ".requiredTopologyLevel",
                                            ".preferredTopologyLevel"};
  std::string path = x == 0 ? "spec" : "spec.subGroups[" + std::to_string(x - 1) + "]";
  return path + ".topologyConstraint" + kFields[which];
}

bool Placer::Resolve(int x, const std::string& ref, int which, LevelRef& out) {
  out = LevelRef{};
  if (ref.empty()) return true;
  const std::string topology = spec_.EffectiveTopology(nodes_[x].name);
  if (topology.empty()) {
    Result<TopologyLevels> levels = TopologyLevels::FromTopologyKey(ref, FieldOf(x, which));
    if (!levels.ok()) {
      failure_ = levels.error().message;
      return false;
    }
    out = LevelRef{TreeFor(*levels), 0};
    return true;
  }
  std::optional<TopologyLevels> levels = catalog_.Find(topology);
  if (!levels.has_value()) {
    failure_ = FieldOf(x, 0) + ": Not found: \"" + topology + "\"";
    return false;
  }
  TopologyDefinition def;
  def.name = topology;
  for (size_t i = 0; i < levels->size(); ++i) def.levels.push_back(levels->node_label(i));
  std::optional<size_t> level = def.FindLevel(ref);
  if (!level.has_value()) {
    failure_ = FieldOf(x, which) + ": Not found: \"" + ref + "\" (Topology " + topology + ")";
    return false;
  }
  out = LevelRef{TreeFor(*levels), static_cast<uint32_t>(*level)};
  return true;
}

bool Placer::ResolveLevels() {
  for (int x : pre_order_) {
    const TopologyConstraint& c = spec_.ConstraintOf(nodes_[x].name);
    if (!Resolve(x, c.required_level, 1, nodes_[x].required)) return false;
    if (!Resolve(x, c.preferred_level, 2, nodes_[x].preferred)) return false;
    // A preferred level at or above the required one cannot help.
    const GroupNode& node = nodes_[x];
    if (node.required.valid() && node.preferred.valid() &&
        node.required.tree == node.preferred.tree && node.preferred.level <= node.required.level) {
      nodes_[x].preferred = LevelRef{};
    }
  }
  return true;
}

void Placer::GroupClasses() {
  std::unordered_map<uint64_t, uint32_t> by_signature;
  for (GroupNode& node : nodes_) {
    node.direct_class.resize(node.direct.size());
    for (size_t i = 0; i < node.direct.size(); ++i) {
      const PodPtr& pod = node.direct[i];
      auto [it, added] =
          by_signature.emplace(pod->signature, static_cast<uint32_t>(classes_.size()));
      if (added) classes_.push_back(ClassInfo{pod, {}, {}});
      node.direct_class[i] = it->second;
    }
  }
  for (size_t t = 0; t < trees_.size(); ++t) fits_[t].resize(classes_.size());
  MergeFitClasses();
}

// fit_class_ from the classes' requests and (once filtered) masks.
void Placer::MergeFitClasses() {
  fit_class_.resize(classes_.size());
  for (size_t c = 0; c < classes_.size(); ++c) {
    fit_class_[c] = static_cast<uint32_t>(c);
    for (size_t e = 0; e < c; ++e) {
      if (fit_class_[e] != e) continue;
      if (classes_[e].rep->requests == classes_[c].rep->requests &&
          classes_[e].feasible == classes_[c].feasible) {
        fit_class_[c] = static_cast<uint32_t>(e);
        break;
      }
    }
  }
}

// One PreFilter + Filter pass over every node per pod class (pass 2).
bool Placer::FilterClasses() {
  for (ClassInfo& cls : classes_) {
    if (!FilterClass(cls)) return false;
  }
  for (auto& per_tree : fits_) {
    for (auto& fits : per_tree) fits.reset();  // counted again with the masks
  }
  MergeFitClasses();
  return true;
}

// Forgets pass 1's choices (its placements are already rolled back).
void Placer::ResetPass() {
  ResetSubtree(0);
  Flush();
  for (auto& per_tree : fits_) {
    for (auto& fits : per_tree) fits.reset();
  }
  masks_.clear();
  masked_fits_.clear();
  failure_.clear();
  short_of_capacity_ = false;
  waiting_for_members_ = false;
}

bool Placer::FilterClass(ClassInfo& cls) {
  const size_t num_nodes = snapshot_.num_nodes();
  cls.feasible.assign(num_nodes, 0);
  cls.statuses.assign(num_nodes, plugins::Status::Success());
  cls.prefilter_message.clear();
  plugins::CycleState state;
  plugins::PreFilterOutcome pre = fw_.RunPreFilter(*cls.rep, snapshot_, state);
  if (pre.status.IsError()) {
    error_ = true;
    failure_ = "running PreFilter: " + fw_.PreFilterMessage(pre, snapshot_);
    return false;
  }
  if (!pre.status.IsSuccess()) {
    cls.prefilter_message = std::move(pre.message);
    std::fill(cls.statuses.begin(), cls.statuses.end(), pre.status);
    if (pre.status.plugin < 64) unschedulable_plugins_ |= uint64_t{1} << pre.status.plugin;
    unschedulable_plugins_ |= pre.plugins_with_nodes;
    return true;
  }
  std::vector<NodeIndex> candidates;
  if (pre.nodes.has_value()) {
    const plugins::Status excluded =
        plugins::Status::Unresolvable(plugins::kFrameworkReasonPreFilterExcluded, 0,
                                      pre.plugins_with_nodes)
            .WithPlugin(plugins::kFrameworkPlugin);
    std::fill(cls.statuses.begin(), cls.statuses.end(), excluded);
    for (NodeIndex n : *pre.nodes) {
      if (n < num_nodes) candidates.push_back(n);
    }
  } else {
    candidates.resize(num_nodes);
    for (NodeIndex n = 0; n < num_nodes; ++n) candidates[n] = n;
  }
  const size_t chunk = std::max<size_t>(1, options_.placement.chunk_size);
  const size_t num_chunks = (candidates.size() + chunk - 1) / chunk;
  std::vector<plugins::FilterScratch> scratch(num_chunks);
  std::vector<NodeIndex> feasible(candidates.size());
  std::vector<size_t> found(num_chunks, 0);
  std::vector<uint64_t> rejected(num_chunks, 0);
  std::vector<plugins::Status> verdicts(num_chunks);
  const plugins::CycleContext ctx{*cls.rep, snapshot_, state};
  auto body = [&](size_t c) {
    const size_t pos = c * chunk;
    const size_t len = std::min(chunk, candidates.size() - pos);
    scratch[c].Reserve(len);
    verdicts[c] = fw_.FilterChunk(
        ctx, std::span<const NodeIndex>(candidates.data() + pos, len), scratch[c], cls.statuses,
        std::span<NodeIndex>(feasible.data() + pos, len), found[c], rejected[c]);
  };
  if (options_.placement.parallel_for && num_chunks >= 2) {
    options_.placement.parallel_for(num_chunks, body);
  } else {
    for (size_t c = 0; c < num_chunks; ++c) body(c);
  }
  for (size_t c = 0; c < num_chunks; ++c) {
    if (verdicts[c].IsError()) {
      error_ = true;
      failure_ = "running Filter: " + fw_.StatusMessage(verdicts[c], snapshot_);
      return false;
    }
    unschedulable_plugins_ |= rejected[c];
    for (size_t i = 0; i < found[c]; ++i) cls.feasible[feasible[c * chunk + i]] = 1;
  }
  return true;
}

}  // namespace copse::scheduler::topology_placement
