#pragma once
// The scheduler's normalized gang model: one GangSpec for both kinds of gang
// object copse understands, with no JSON in sight.
//
//   scheduling.k8s.io/v1alpha2 PodGroup (KEP-4671)  -> GangSource::kWorkloadPodGroup
//   scheduling.copse.dev/v1alpha1 PodGroup          -> GangSource::kCopsePodGroup
//
// kube/pod_group.h converts either object into a GangSpec (ToGangSpec); the
// queue, the Workload Scheduling Cycle, topology packing and preemption read
// only this model.
//
// The tree. A gang is a tree of groups: the gang itself is the root (node
// name "" = kRootGroup) and `sub_groups` are the other nodes, each naming its
// parent ("" = the root). Following spec 002 Option 2:
//   - min_member always counts *descendant pods* (pods of the node and of
//     every subgroup below it);
//   - min_sub_group counts *direct children* that must themselves be
//     satisfied; unset means all children.
//   - A node is satisfied when at least min_member pods below it are placed
//     and at least min_sub_group of its children are satisfied.
//
// Which children are required. When min_sub_group is N, *any* N satisfied
// children satisfy their parent (spec 002's IsSubGroupReady); no child is
// required by its position. The scheduler chooses the N it places first per
// cycle (ready ones, i.e. those its bound members already satisfy, then those
// needing the fewest pods, then those that fit; scheduler/topology_placement.h)
// and places the others when they fit (elastic extras). The helpers below
// count the cheapest choice: RequiredChildren are the N children needing the
// fewest pods (ties in `sub_groups` order), RequiredPods what they need.
// Readiness (gang tracker), victim selection and gang recovery all count
// "any N" through IsSatisfied and RequiredPods.
//
// Topology levels. A TopologyConstraint names a copse Topology
// (scheduling.copse.dev/v1alpha1, cluster-scoped, levels outermost first) and
// levels of it. A level is named by its *node label key* (e.g.
// "copse.dev/rack"); as a shorthand, the name part of the key (after the last
// '/', e.g. "rack") is accepted when exactly one level of that Topology has
// it. A subgroup whose constraint leaves `topology` empty inherits the
// nearest ancestor's topology. When no node up to the root names a topology
// (always the case for v1alpha2 PodGroups, whose topologyKey is a node label
// key), a level is a node label key taken on its own.
//
// Thread-safety: value types; all functions are reentrant.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace copse {

// Which API object a GangSpec came from.
enum class GangSource : uint8_t {
  kWorkloadPodGroup,  // scheduling.k8s.io/v1alpha2 PodGroup (KEP-4671)
  kCopsePodGroup,     // scheduling.copse.dev/v1alpha1 PodGroup
};

// KEP-4671 schedulingPolicy: basic (no all-or-nothing rule; min_member is 0)
// or gang (min_member = minCount / minMember).
enum class GangPolicy : uint8_t { kBasic, kGang };

// copse PodGroup `preemptibility`. Semi-preemptible: the group's minimum
// (min_member pods, spread over the required subgroups) is not preemptible,
// pods beyond it are.
enum class Preemptibility : uint8_t { kPreemptible, kNonPreemptible, kSemiPreemptible };

// v1alpha2 `disruptionMode`: Pod (members may be preempted one by one) or
// PodGroup (the whole group goes together).
enum class DisruptionMode : uint8_t { kPod, kPodGroup };

// "scheduling.k8s.io/v1alpha2 PodGroup" | "scheduling.copse.dev/v1alpha1 PodGroup".
std::string_view GangSourceName(GangSource source) noexcept;
std::string_view GangPolicyName(GangPolicy policy) noexcept;  // "basic" | "gang"
// "preemptible" | "non-preemptible" | "semi-preemptible" (the API spelling).
std::string_view PreemptibilityName(Preemptibility value) noexcept;
// "" reads as kPreemptible; anything else unknown is kInvalid.
Result<Preemptibility> ParsePreemptibility(std::string_view text);
std::string_view DisruptionModeName(DisruptionMode mode) noexcept;  // "Pod" | "PodGroup"
// "" reads as kPod (the API default); anything else unknown is kInvalid.
Result<DisruptionMode> ParseDisruptionMode(std::string_view text);

// The node name of the gang itself in the subgroup tree.
inline constexpr std::string_view kRootGroup = "";

struct TopologyConstraint {
  // A copse Topology name; empty: inherit the parent's (see the file comment).
  std::string topology;
  // Node label key (or its name part, see the file comment) of the level all
  // pods of this node must share one domain of; empty: none.
  std::string required_level;
  // Level whose domains the pods should gather in (a score); empty: none.
  std::string preferred_level;

  bool empty() const noexcept {
    return topology.empty() && required_level.empty() && preferred_level.empty();
  }
  bool operator==(const TopologyConstraint&) const = default;
};

struct SubGroupSpec {
  std::string name;    // unique in the gang; pods name their leaf with it
  std::string parent;  // "" = the root
  // Descendant pods required. Leaves need >= 1; an inner subgroup may say 0
  // (no pod count of its own beyond what its required children need).
  int32_t min_member = 0;
  std::optional<int32_t> min_sub_group;  // unset: all children
  TopologyConstraint topology_constraint;
  bool operator==(const SubGroupSpec&) const = default;
};

struct GangSpec {
  std::string namespace_;
  std::string name;
  std::string uid;
  int64_t generation = 0;  // metadata.generation (for conditions' observedGeneration)
  GangSource source = GangSource::kCopsePodGroup;
  GangPolicy policy = GangPolicy::kGang;
  // Pods that must be placed together (minCount / minMember); 0 for basic.
  int32_t min_member = 0;
  std::optional<int32_t> min_sub_group;  // direct children of the root; unset: all
  std::string priority_class_name;
  std::optional<int32_t> priority;  // v1alpha2 spec.priority when set by admission
  Preemptibility preemptibility = Preemptibility::kPreemptible;
  DisruptionMode disruption_mode = DisruptionMode::kPod;
  TopologyConstraint topology_constraint;
  std::vector<SubGroupSpec> sub_groups;
  // Neither gang object carries a scheduler name today; empty means the
  // member pods' spec.schedulerName decides (and must agree, KEP-4671).
  std::string scheduler_name;

  bool operator==(const GangSpec&) const = default;

  bool IsGang() const noexcept { return policy == GangPolicy::kGang; }
  // "namespace/name" (cache key, as ObjectMeta::Key()).
  std::string Key() const;

  // --- the tree. Nodes are kRootGroup ("") or a subgroup name; results are
  // indices into `sub_groups`. O(number of subgroups) per call. On a spec
  // that fails ValidateGangSpec the helpers still terminate (cycles and
  // unknown parents are cut off) but their answers are unspecified.

  // Index of the subgroup called `name`, or nullopt (also for kRootGroup).
  std::optional<size_t> FindSubGroup(std::string_view name) const noexcept;
  // Direct children of `node`, in `sub_groups` order.
  std::vector<size_t> Children(std::string_view node) const;
  // The MinSubGroup(node) children of `node` that need the fewest pods
  // (RequiredPods; ties in `sub_groups` order), in `sub_groups` order: the
  // cheapest set that satisfies `node` (any N do).
  std::vector<size_t> RequiredChildren(std::string_view node) const;
  // Subgroups without children, in DepthFirstOrder.
  std::vector<size_t> Leaves() const;
  // Every subgroup reachable from the root, pre-order, children in
  // `sub_groups` order: deterministic for a given spec.
  std::vector<size_t> DepthFirstOrder() const;
  // `node` and everything below it that is a subgroup (pre-order; the root
  // yields DepthFirstOrder()).
  std::vector<size_t> Subtree(std::string_view node) const;
  // min_member of `node` (the root's for kRootGroup); 0 for unknown nodes.
  int32_t MinMember(std::string_view node) const noexcept;
  // Effective minSubGroup of `node`: the value if set, else its number of children.
  int32_t MinSubGroup(std::string_view node) const;
  // The fewest pods that can satisfy `node`: max(min_member, sum of
  // RequiredPods over RequiredChildren(node)). For the root of a basic gang: 0.
  int32_t RequiredPods(std::string_view node) const;
  // The topology `node` works in: its own constraint's topology, else the
  // nearest ancestor's, else "" (levels are bare node label keys).
  std::string EffectiveTopology(std::string_view node) const;
  // The constraint written on `node` (the root's for kRootGroup).
  const TopologyConstraint& ConstraintOf(std::string_view node) const;

  // Whether `node` is satisfied by `pods_by_sub_group` (placed pods per
  // subgroup label value; "" for pods naming none, which count for the
  // root only): at least MinMember(node) pods below it and at least
  // MinSubGroup(node) of its children satisfied (any of them, spec 002's
  // IsSubGroupReady). For the root of a basic gang: always true.
  bool IsSatisfied(std::string_view node,
                   const std::map<std::string, int32_t, std::less<>>& pods_by_sub_group) const;
};

// What validation needs to know about a copse Topology (kube/topology.h
// converts the API object): its name and level node label keys, outermost first.
struct TopologyDefinition {
  std::string name;
  std::vector<std::string> levels;

  // Index of `level` in `levels`: an exact node label key, else a unique
  // name part (after the last '/'); nullopt when absent or ambiguous.
  std::optional<size_t> FindLevel(std::string_view level) const noexcept;
  bool operator==(const TopologyDefinition&) const = default;
};

// Member pods of a gang, when known (e.g. observed by the scheduler or
// declared by the controller that creates them).
struct GangPodCounts {
  // All member pods; unset: the sum of `by_sub_group`.
  std::optional<int32_t> total;
  // Pods per subgroup they name (normally leaves); absent names count 0.
  std::map<std::string, int32_t, std::less<>> by_sub_group;
};

struct GangValidationOptions {
  // The copse Topologies that exist. nullptr: topology names and levels
  // are not checked against anything (only their syntax).
  const std::vector<TopologyDefinition>* topologies = nullptr;
  // nullptr: "min_member greater than the pods that can exist" is not checked.
  const GangPodCounts* pod_counts = nullptr;
};

// Every problem with `spec`, one string each, each starting with the path of
// the field in the source object (paths follow spec.source):
//   spec.minMember: Invalid value: 0: must be >= 1
//   spec.schedulingPolicy.gang.minCount: Invalid value: 0: must be >= 1
//   spec.minSubGroup: Invalid value: 5: must be <= 4 (the number of direct child subgroups)
//   spec.subGroups[2].parent: Not found: "decode-x"
//   spec.subGroups[3].name: Duplicate value: "prefill-0"
//   spec.subGroups[1].parent: Invalid value: "b": parent cycle: a -> b -> a
//   spec.minMember: Invalid value: 30: must be <= 24 (the pods its 3 subgroups hold: the sum of
//   their minMember) spec.subGroups[0].minMember: Invalid value: 9: must be <= 8 (the pods that
//   exist below it) spec.topologyConstraint.topology: Not found: "dc"
//   spec.subGroups[1].topologyConstraint.requiredTopologyLevel: Not found: "row": ...
// Rules (spec 002 Option 2, issue 5, KEP-4671):
//   - gang policy: min_member >= 1; basic policy: min_member == 0 and
//     disruption mode Pod (a basic group cannot be disrupted as a whole);
//   - subgroups: name required, a valid label value (pods carry it in the
//     scheduling.copse.dev/subgroup label), unique; parent "" or an existing
//     subgroup, no cycles (a subgroup that is its own parent included);
//     min_member >= 1 on leaves, >= 0 on inner subgroups;
//   - min_sub_group (root and subgroups): >= 0 and <= number of direct children;
//   - a node with subgroups: min_member <= the descendant pods its
//     subgroups hold, spec 002 Option 2's rule (a subgroup holds its
//     min_member pods, or, with subgroups of its own, what they hold; e.g.
//     minMember 30 over three replicas of minMember 8 is refused: 30 > 24).
//     Pods beyond a subgroup's minimum stay elastic extras, not a minimum;
//   - with pod counts: min_member of every node <= the pods below it;
//   - topology: a named topology exists (when topologies are given); levels
//     resolve in the effective topology (FindLevel), or are valid label keys
//     when there is no topology.
std::vector<std::string> GangSpecErrors(const GangSpec& spec,
                                        const GangValidationOptions& options = {});

// kInvalid with all GangSpecErrors joined by "; ", or Ok.
Status ValidateGangSpec(const GangSpec& spec, const GangValidationOptions& options = {});

// Spec 002's consistency check and other legal-but-suspicious settings, as
// messages for a Warning event (never a reason to reject). For each node with
// children, when min_member is more than the pods its required children need
// (min_sub_group × the children's minimums, i.e. the sum of RequiredPods of
// RequiredChildren) but not more than all its children hold:
//   spec.minMember: 30 is more than the 24 pods its 3 required subgroups need
//   (minSubGroup 3 × their minMember): it needs pods beyond its subgroups' minimums
// With topologies: a preferred level outside (above) the required level, which
// then cannot help.
std::vector<std::string> GangSpecWarnings(
    const GangSpec& spec, const std::vector<TopologyDefinition>* topologies = nullptr);

}  // namespace copse
