#include "scheduler/topology_placement.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "kube/topology.h"
#include "topology/fit.h"
#include "topology/rank.h"

namespace copse::scheduler {

using topology::DomainId;
using topology::DomainTree;
using topology::FitCounts;
using topology::kNoDomain;
using topology::RankedDomain;
using topology::RankOptions;
using topology::RankOrder;
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

namespace {

std::string TreeKey(const TopologyLevels& levels) {
  std::string key;
  for (size_t i = 0; i < levels.size(); ++i) {
    key += levels.node_label(i);
    key += '\n';
  }
  return key;
}

}  // namespace

DomainTree& TopologyWorkspace::Tree(const TopologyLevels& levels, Snapshot& snapshot) {
  const std::string key = TreeKey(levels);
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

namespace {

struct LevelRef {
  int tree = -1;  // index into Placer::trees_; -1: none
  uint32_t level = 0;
  bool valid() const noexcept { return tree >= 0; }
};

// Where a node's pods may go: every node, or a sorted node list (normally one
// topology domain's nodes, intersected with the enclosing scope).
struct Scope {
  bool all = true;
  std::shared_ptr<const std::vector<NodeIndex>> nodes;
  int tree = -1;  // the domain this scope is, when !all
  uint32_t level = 0;
  DomainId domain = kNoDomain;
  std::string label;  // "rack rack-1-2-7"
};

struct ClassInfo {
  PodPtr rep;
  std::vector<uint8_t> feasible;          // by NodeIndex
  std::vector<plugins::Status> statuses;  // Filter verdict by NodeIndex
  std::string prefilter_message;          // a PreFilter rejection's own text, if any
};

struct GroupNode {
  std::string name;  // "" for the root
  int parent = -1;
  std::vector<int> children;  // sub_groups order
  // The children in the order phase 1 tries them (Plan): when min_sub_group
  // leaves some optional, ready ones first, then those needing the fewest
  // pods; impossible ones last. Any required_children of them satisfy the node.
  std::vector<int> order;
  size_t required_children = 0;
  int64_t need = 0;    // the fewest pods that satisfy the node (GangSpec::RequiredPods)
  bool topup = false;  // the minimum needs pods beyond what Plan assigned below it
  int32_t min_member = 0;
  LevelRef required;
  LevelRef preferred;
  std::vector<PodPtr> direct;  // pending members naming this node, by name
  std::vector<uint32_t> direct_class;
  std::vector<uint8_t> placed;  // per direct pod
  std::vector<NodeIndex> bound_nodes;
  int32_t bound_below = 0;
  std::vector<NodeIndex> bound_nodes_below;
  size_t plan = 0;  // direct pods in the node's minimum
  bool impossible = false;
  std::vector<uint32_t> demand;  // per class: the minimum of the subtree
  // Placement state.
  bool satisfied = false;
  Scope scope;
  LevelRef pref;
  std::string domain;
};

struct Record {
  MemberPlacement member;
  int group = 0;
  size_t position = 0;
};

class Placer {
 public:
  Placer(const plugins::Framework& fw, Snapshot& snapshot, std::span<const PodPtr> members,
         const GangSpec& spec, const TopologyCatalog& catalog,
         const TopologyPlacementOptions& options, plugins::RandomSource& random,
         plugins::Workspace& workspace)
      : fw_(fw),
        snapshot_(snapshot),
        members_(members),
        spec_(spec),
        catalog_(catalog),
        options_(options),
        random_(random),
        workspace_(workspace),
        start_index_(options.placement.start_index) {}

  TopologyGangPlacement Run() {
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
    const bool optional_children =
        std::any_of(nodes_.begin(), nodes_.end(),
                    [](const GroupNode& n) { return n.children.size() > n.required_children; });
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

 private:
  // ---- setup ----

  void BuildTree() {
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

  int GroupOf(const PodInfo& pod) const {
    if (pod.sub_group.empty()) return 0;
    std::optional<size_t> index = spec_.FindSubGroup(pod.sub_group);
    return index.has_value() ? static_cast<int>(*index) + 1 : 0;
  }

  void AssignMembers() {
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

  void FindBound() {
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
                                        node.bound_nodes_below.begin(),
                                        node.bound_nodes_below.end());
      }
    }
  }

  int TreeFor(const TopologyLevels& levels) {
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

  std::string FieldOf(int x, int which) const {
    // which: 0 topology, 1 required, 2 preferred (v1alpha2 has only the key).
    if (x == 0 && spec_.source == GangSource::kWorkloadPodGroup) {
      return "spec.schedulingConstraints.topologyConstraints[0].topologyKey";
    }
    static constexpr const char* kFields[] = {".topology", ".requiredTopologyLevel",
                                              ".preferredTopologyLevel"};
    std::string path = x == 0 ? "spec" : "spec.subGroups[" + std::to_string(x - 1) + "]";
    return path + ".topologyConstraint" + kFields[which];
  }

  bool Resolve(int x, const std::string& ref, int which, LevelRef& out) {
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

  bool ResolveLevels() {
    for (int x : pre_order_) {
      const TopologyConstraint& c = spec_.ConstraintOf(nodes_[x].name);
      if (!Resolve(x, c.required_level, 1, nodes_[x].required)) return false;
      if (!Resolve(x, c.preferred_level, 2, nodes_[x].preferred)) return false;
      // A preferred level at or above the required one cannot help.
      const GroupNode& node = nodes_[x];
      if (node.required.valid() && node.preferred.valid() &&
          node.required.tree == node.preferred.tree &&
          node.preferred.level <= node.required.level) {
        nodes_[x].preferred = LevelRef{};
      }
    }
    return true;
  }

  void GroupClasses() {
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
  void MergeFitClasses() {
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
  bool FilterClasses() {
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
  void ResetPass() {
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

  bool FilterClass(ClassInfo& cls) {
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

  // Step 2: which pods make each node's minimum (see the header).
  void Plan() {
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
  void OrderChildren(GroupNode& node) {
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

  // ---- bookkeeping ----

  size_t Mark() const noexcept { return records_.size(); }

  void Rollback(size_t mark) {
    while (records_.size() > mark) {
      const Record& r = records_.back();
      snapshot_.RemovePod(r.member.node, r.member.pod->uid);
      dirty_.push_back(r.member.node);
      nodes_[r.group].placed[r.position] = 0;
      records_.pop_back();
    }
  }

  void ResetSubtree(int x) {
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

  void RecordPlacement(const MemberPlacement& m) {
    auto it = position_.find(m.pod.get());
    if (it == position_.end()) return;  // not ours (cannot happen)
    const auto [group, position] = it->second;
    nodes_[group].placed[position] = 1;
    records_.push_back({m, group, position});
    dirty_.push_back(m.node);
  }

  topology::PodClass ClassOf(uint32_t c) const {
    return topology::PodClass{classes_[c].rep->requests, classes_[c].feasible};
  }

  // Brings trees and fit counts up to date with the rows placements changed.
  void Flush() {
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

  const FitCounts& Fits(int t, uint32_t c) {
    std::unique_ptr<FitCounts>& slot = fits_[t][c];
    if (!slot) {
      slot = std::make_unique<FitCounts>();
      topology::CountFits(*trees_[t], ClassOf(c), *slot);
    }
    return *slot;
  }

  // ---- scopes and ranking ----

  static bool Implied(const Scope& scope, LevelRef r) {
    return r.valid() && !scope.all && scope.tree == r.tree && scope.level >= r.level;
  }
  // Domains of r inside `scope` are descendants of the scope's domain in the same tree.
  static bool SameTreeInside(const Scope& scope, LevelRef r) {
    return scope.all || (scope.tree == r.tree && scope.level <= r.level);
  }

  std::string DomainLabel(LevelRef r, DomainId d) const {
    return levels_[r.tree].name(r.level) + " " + std::string(trees_[r.tree]->name(r.level, d));
  }

  Scope Within(const Scope& outer, LevelRef r, DomainId d) const {
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
  const FitCounts* FitsFor(LevelRef r, uint32_t c, const Scope& scope) {
    if (SameTreeInside(scope, r)) return &Fits(r.tree, c);
    std::vector<uint8_t>& mask = masks_.emplace_back(snapshot_.num_nodes(), 0);
    const std::vector<uint8_t>& feasible = classes_[c].feasible;
    for (NodeIndex n : *scope.nodes) mask[n] = feasible.empty() ? 1 : feasible[n];
    FitCounts& fits = masked_fits_.emplace_back();
    topology::CountFits(*trees_[r.tree], topology::PodClass{classes_[c].rep->requests, mask}, fits);
    return &fits;
  }

  struct Ranking {
    std::vector<topology::ClassNeed> needs;
    std::vector<uint32_t> need_class;  // class of needs[i]
    topology::Demand demand;
  };

  // Per fit class (fit_class_): one need with the counts of its classes summed.
  Ranking MakeDemand(LevelRef r, std::span<const uint32_t> counts, const Scope& scope) {
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

  void Rank(LevelRef r, const Scope& scope, const Ranking& ranking, RankOptions ro,
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
  std::set<DomainId> Pinned(int x, LevelRef r) const {
    std::set<DomainId> pinned;
    for (NodeIndex n : nodes_[x].bound_nodes_below) {
      pinned.insert(trees_[r.tree]->domain_of(n, r.level));
    }
    return pinned;
  }

  // ---- placing ----

  GangPlacement Call(std::span<const PodPtr> pods, const Scope& scope, size_t required) {
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
  size_t PlacePods(std::vector<PodPtr> pods, const Scope& scope, size_t required, LevelRef pref) {
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

  uint32_t PodClassIndex(const PodPtr& pod) const {
    const auto [group, position] = position_.at(pod.get());
    return nodes_[group].direct_class[position];
  }

  std::string Prefix(int x) const {
    return x == 0 ? std::string() : "subgroup " + nodes_[x].name + ": ";
  }

  // Phase 1 for x inside `scope`: all-or-nothing, the caller undoes a failure.
  bool PlaceMin(int x, const Scope& scope, LevelRef pref) {
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

  bool PlaceContents(int x, const Scope& scope, LevelRef pref_in) {
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

  bool PlaceInside(int x, const Scope& scope, LevelRef pref) {
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
        failure_ = Prefix(x) + std::to_string(got) + "/" + std::to_string(want) +
                   " of its pods fit" + (scope.all ? "" : " in " + scope.label) +
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
  int64_t CountBelow(int x) const {
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
  bool TopUp(int x) {
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
  void FillOptional(int x) {
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
  void FillExtras(int x) {
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

  int64_t PodsBelow(int x) const {
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

  // ---- messages ----

  uint64_t Covered(const Ranking& ranking, LevelRef r, DomainId d) const {
    uint64_t covered = 0;
    for (const topology::ClassNeed& need : ranking.needs) {
      covered += std::min<uint64_t>(need.fits->domain(r.level, d), need.count);
    }
    return std::min(covered, SharedBound(ranking, r, d, nullptr));
  }

  // The demand's pods that the domain's summed free capacity holds (in the
  // demand's mix): min over resources of need * free / demanded. Classes
  // counted alone can each fit while all of them together do not.
  uint64_t SharedBound(const Ranking& ranking, LevelRef r, DomainId d,
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
  std::string Shortfall(int x, const Scope& scope, const std::set<DomainId>& pinned,
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
        reasons.push_back(Explain(ranking.need_class[i], r, best, scope,
                                  ranking.needs[i].count - fit, ranking.needs[i].count));
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
  std::string Explain(uint32_t c, LevelRef r, DomainId d, const Scope& scope, uint64_t short_by,
                      uint64_t need) {
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

  TopologyGangPlacement Finish(TopologyGangPlacement out, bool satisfied, std::string failure) {
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

  const plugins::Framework& fw_;
  Snapshot& snapshot_;
  std::span<const PodPtr> members_;
  const GangSpec& spec_;
  const TopologyCatalog& catalog_;
  const TopologyPlacementOptions& options_;
  plugins::RandomSource& random_;
  plugins::Workspace& workspace_;
  size_t start_index_ = 0;

  std::vector<GroupNode> nodes_;
  std::vector<int> pre_order_;
  std::unordered_set<std::string> member_uids_;
  std::unordered_map<const PodInfo*, std::pair<int, size_t>> position_;
  std::vector<ClassInfo> classes_;
  // fit_class_[c]: the first class with c's requests and Filter mask. Classes
  // that differ only in what their Filter verdicts did not depend on (e.g.
  // the subgroup label) count as one in fit counts and rankings: counted
  // apart, each would claim the same free slots (an upper bound per class),
  // and a domain could rank as holding replicas it cannot hold together.
  std::vector<uint32_t> fit_class_;

  std::vector<std::string> tree_keys_;
  std::vector<DomainTree*> trees_;
  std::vector<TopologyLevels> levels_;
  std::vector<std::unique_ptr<DomainTree>> own_trees_;
  std::vector<std::vector<std::unique_ptr<FitCounts>>> fits_;  // [tree][class]
  std::deque<std::vector<uint8_t>> masks_;
  std::deque<FitCounts> masked_fits_;
  bool masked_ = true;  // pass 2: Filter masks computed

  std::vector<Record> records_;
  std::vector<NodeIndex> dirty_;
  size_t substitutions_ = 0;  // children that did not fit and were replaced by another
  bool error_ = false;
  bool short_of_capacity_ = false;
  bool waiting_for_members_ = false;
  std::string failure_;
  std::string last_failure_;
  std::string optional_failure_;
  uint64_t unschedulable_plugins_ = 0;
  size_t evaluated_nodes_ = 0;
};

}  // namespace

TopologyGangPlacement PlaceGangWithTopology(const plugins::Framework& fw, Snapshot& snapshot,
                                            std::span<const PodPtr> members, const GangSpec& spec,
                                            const TopologyCatalog& catalog,
                                            const TopologyPlacementOptions& options,
                                            plugins::RandomSource& random,
                                            plugins::Workspace& workspace) {
  Placer placer(fw, snapshot, members, spec, catalog, options, random, workspace);
  return placer.Run();
}

}  // namespace copse::scheduler
