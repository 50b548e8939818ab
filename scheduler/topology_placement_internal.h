#pragma once
// The Placer behind PlaceGangWithTopology (scheduler/topology_placement.h),
// shared by the files that implement it; nothing else includes this header.
// One Placer places one gang once: construct, Run(), discard.
//
// Its concerns, one file each:
//   topology_placement.cc           the public entry points (catalog,
//                                   workspace), Run's two passes, the undo
//                                   log and the result (Finish);
//   topology_placement_setup.cc     the gang as a tree of groups, its
//                                   members, members already bound, levels
//                                   resolved to domain trees, pod classes
//                                   and their Filter masks;
//   topology_placement_minimums.cc  which pods make each group's minimum
//                                   (Plan), placing a group's children and
//                                   pods inside a scope (PlaceInside),
//                                   top-ups and phase 2's extras;
//   topology_placement_domains.cc   fit counts and domain ranking, the
//                                   choice of a required domain (PlaceMin)
//                                   and of a preferred one (PlaceContents);
//   topology_placement_members.cc   pods placed class by class through
//                                   PlaceGang inside a scope, spilling over a
//                                   preferred level's domains;
//   topology_placement_messages.cc  why a gang does not fit ("best rack
//                                   rack-17 fits 6/8 pods: ...").
//
// Thread-safety: none; a Placer lives inside one call.

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "scheduler/topology_placement.h"
#include "topology/fit.h"
#include "topology/rank.h"

namespace copse::scheduler::topology_placement {

// The DomainTree key of a level list (its label keys, one a line).
std::string TreeKey(const topology::TopologyLevels& levels);

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
  topology::DomainId domain = topology::kNoDomain;
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

  TopologyGangPlacement Run();

 private:
  struct Ranking {
    std::vector<topology::ClassNeed> needs;
    std::vector<uint32_t> need_class;  // class of needs[i]
    topology::Demand demand;
  };

  // ---- setup (topology_placement_setup.cc) ----
  void BuildTree();
  int GroupOf(const PodInfo& pod) const;
  void AssignMembers();
  void FindBound();
  int TreeFor(const topology::TopologyLevels& levels);
  std::string FieldOf(int x, int which) const;
  bool Resolve(int x, const std::string& ref, int which, LevelRef& out);
  bool ResolveLevels();
  void GroupClasses();
  void MergeFitClasses();
  bool FilterClasses();
  void ResetPass();
  bool FilterClass(ClassInfo& cls);

  // ---- minimums (topology_placement_minimums.cc) ----
  void Plan();
  void OrderChildren(GroupNode& node);
  bool PlaceInside(int x, const Scope& scope, LevelRef pref);
  int64_t CountBelow(int x) const;
  bool TopUp(int x);
  void FillOptional(int x);
  void FillExtras(int x);
  int64_t PodsBelow(int x) const;

  // ---- bookkeeping (topology_placement.cc) ----
  size_t Mark() const noexcept { return records_.size(); }
  void Rollback(size_t mark);
  void ResetSubtree(int x);
  void RecordPlacement(const MemberPlacement& m);
  TopologyGangPlacement Finish(TopologyGangPlacement out, bool satisfied, std::string failure);

  // ---- fit counts, scopes, ranking, domains (topology_placement_domains.cc) ----
  topology::PodClass ClassOf(uint32_t c) const;
  void Flush();
  const topology::FitCounts& Fits(int t, uint32_t c);
  static bool Implied(const Scope& scope, LevelRef r) {
    return r.valid() && !scope.all && scope.tree == r.tree && scope.level >= r.level;
  }
  // Domains of r inside `scope` are descendants of the scope's domain in the same tree.
  static bool SameTreeInside(const Scope& scope, LevelRef r) {
    return scope.all || (scope.tree == r.tree && scope.level <= r.level);
  }
  std::string DomainLabel(LevelRef r, topology::DomainId d) const;
  Scope Within(const Scope& outer, LevelRef r, topology::DomainId d) const;
  const topology::FitCounts* FitsFor(LevelRef r, uint32_t c, const Scope& scope);
  Ranking MakeDemand(LevelRef r, std::span<const uint32_t> counts, const Scope& scope);
  void Rank(LevelRef r, const Scope& scope, const Ranking& ranking, topology::RankOptions ro,
            std::vector<topology::RankedDomain>& out);
  std::set<topology::DomainId> Pinned(int x, LevelRef r) const;
  bool PlaceMin(int x, const Scope& scope, LevelRef pref);
  bool PlaceContents(int x, const Scope& scope, LevelRef pref_in);

  // ---- members (topology_placement_members.cc) ----
  GangPlacement Call(std::span<const PodPtr> pods, const Scope& scope, size_t required);
  size_t PlacePods(std::vector<PodPtr> pods, const Scope& scope, size_t required, LevelRef pref);
  uint32_t PodClassIndex(const PodPtr& pod) const;
  std::string Prefix(int x) const;

  // ---- messages (topology_placement_messages.cc) ----
  uint64_t Covered(const Ranking& ranking, LevelRef r, topology::DomainId d) const;
  uint64_t SharedBound(const Ranking& ranking, LevelRef r, topology::DomainId d,
                       std::optional<ResourceId>* limiting) const;
  std::string Shortfall(int x, const Scope& scope, const std::set<topology::DomainId>& pinned,
                        const std::map<topology::DomainId, std::string>& failures);
  std::string Explain(uint32_t c, LevelRef r, topology::DomainId d, const Scope& scope,
                      uint64_t short_by, uint64_t need);

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
  std::vector<topology::DomainTree*> trees_;
  std::vector<topology::TopologyLevels> levels_;
  std::vector<std::unique_ptr<topology::DomainTree>> own_trees_;
  std::vector<std::vector<std::unique_ptr<topology::FitCounts>>> fits_;  // [tree][class]
  std::deque<std::vector<uint8_t>> masks_;
  std::deque<topology::FitCounts> masked_fits_;
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

}  // namespace copse::scheduler::topology_placement
