// core/gang.h: the subgroup tree helpers, every validation rule (spec 002
// Option 2, issue 5, KEP-4671) and the consistency warning.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/gang.h"

namespace copse {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

SubGroupSpec Sub(std::string name, std::string parent, int32_t min_member,
                 std::optional<int32_t> min_sub_group = std::nullopt) {
  SubGroupSpec s;
  s.name = std::move(name);
  s.parent = std::move(parent);
  s.min_member = min_member;
  s.min_sub_group = min_sub_group;
  return s;
}

GangSpec Gang(int32_t min_member, std::optional<int32_t> min_sub_group = std::nullopt) {
  GangSpec g;
  g.namespace_ = "default";
  g.name = "g";
  g.min_member = min_member;
  g.min_sub_group = min_sub_group;
  return g;
}

std::vector<std::string> Names(const GangSpec& g, const std::vector<size_t>& indices) {
  std::vector<std::string> out;
  for (size_t i : indices) out.push_back(g.sub_groups[i].name);
  return out;
}

// Spec 002's "Grove with Dynamo" example (Option 2), with the list order
// scrambled so that order-of-appearance is what decides.
GangSpec Dynamo() {
  GangSpec g = Gang(28, 2);
  g.sub_groups = {Sub("prefill", "", 24, 3),      Sub("decode", "", 4, 1),
                  Sub("prefill-0", "prefill", 8), Sub("decode-0", "decode", 4),
                  Sub("prefill-1", "prefill", 8), Sub("prefill-2", "prefill", 8),
                  Sub("decode-1", "decode", 4),   Sub("prefill-3", "prefill", 8)};
  return g;
}

std::vector<TopologyDefinition> Topologies() {
  return {TopologyDefinition{"dc",
                             {"topology.kubernetes.io/zone", "copse.dev/block", "copse.dev/rack",
                              "kubernetes.io/hostname"}},
          TopologyDefinition{"twin", {"a.example/rack", "b.example/rack"}}};
}

TEST(GangTree, ChildrenLeavesAndOrderFollowTheSubGroupsList) {
  GangSpec g = Dynamo();
  EXPECT_THAT(Names(g, g.Children(kRootGroup)), ElementsAre("prefill", "decode"));
  EXPECT_THAT(Names(g, g.Children("prefill")),
              ElementsAre("prefill-0", "prefill-1", "prefill-2", "prefill-3"));
  EXPECT_THAT(Names(g, g.RequiredChildren("prefill")),
              ElementsAre("prefill-0", "prefill-1", "prefill-2"));
  EXPECT_THAT(Names(g, g.RequiredChildren("decode")), ElementsAre("decode-0"));
  EXPECT_THAT(Names(g, g.RequiredChildren(kRootGroup)), ElementsAre("prefill", "decode"));
  EXPECT_THAT(Names(g, g.DepthFirstOrder()),
              ElementsAre("prefill", "prefill-0", "prefill-1", "prefill-2", "prefill-3", "decode",
                          "decode-0", "decode-1"));
  EXPECT_THAT(Names(g, g.Leaves()), ElementsAre("prefill-0", "prefill-1", "prefill-2", "prefill-3",
                                                "decode-0", "decode-1"));
  EXPECT_THAT(Names(g, g.Subtree("decode")), ElementsAre("decode", "decode-0", "decode-1"));
  EXPECT_EQ(g.MinSubGroup("prefill"), 3);
  EXPECT_EQ(g.MinSubGroup("prefill-0"), 0);  // no children
  EXPECT_EQ(g.MinSubGroup(kRootGroup), 2);
  EXPECT_EQ(g.FindSubGroup("decode-1"), 6u);
  EXPECT_FALSE(g.FindSubGroup("nope").has_value());
  EXPECT_FALSE(g.FindSubGroup(kRootGroup).has_value());
  EXPECT_EQ(g.Key(), "default/g");
}

TEST(GangTree, RequiredPodsFollowsMinSubGroupAndMinMember) {
  GangSpec g = Dynamo();
  EXPECT_EQ(g.RequiredPods("prefill"), 24);
  EXPECT_EQ(g.RequiredPods("decode"), 4);
  EXPECT_EQ(g.RequiredPods(kRootGroup), 28);
  EXPECT_EQ(g.RequiredPods("prefill-3"), 8);
  // An inner subgroup without its own pod count needs what its required children need.
  g.sub_groups[0].min_member = 0;
  EXPECT_EQ(g.RequiredPods("prefill"), 24);
  // A larger own minMember wins.
  g.sub_groups[0].min_member = 30;
  EXPECT_EQ(g.RequiredPods("prefill"), 30);
  EXPECT_EQ(g.RequiredPods(kRootGroup), 34);
  // Basic gangs require nothing.
  GangSpec basic = Gang(0);
  basic.policy = GangPolicy::kBasic;
  EXPECT_EQ(basic.RequiredPods(kRootGroup), 0);
}

TEST(GangTree, UnsetMinSubGroupRequiresEveryChild) {
  GangSpec g = Dynamo();
  g.sub_groups[0].min_sub_group.reset();
  EXPECT_EQ(g.MinSubGroup("prefill"), 4);
  EXPECT_EQ(g.RequiredChildren("prefill").size(), 4u);
  EXPECT_EQ(g.RequiredPods("prefill"), 32);
}

// Any minSubGroup children satisfy a node (spec 002's IsSubGroupReady): the
// position in the list does not make a child required. RequiredChildren is
// the cheapest choice (fewest pods, ties in list order), RequiredPods what it needs.
TEST(GangTree, AnyNChildrenSatisfyTheCheapestAreCounted) {
  GangSpec g = Gang(9, 3);
  g.sub_groups = {Sub("workers-2", "", 4), Sub("big", "", 6), Sub("leader", "", 1),
                  Sub("workers-0", "", 4), Sub("workers-1", "", 4)};
  EXPECT_THAT(Names(g, g.RequiredChildren(kRootGroup)),
              ElementsAre("workers-2", "leader", "workers-0"));
  EXPECT_EQ(g.RequiredPods(kRootGroup), 9);
  std::swap(g.sub_groups[0], g.sub_groups[4]);  // workers-1 first now
  EXPECT_THAT(Names(g, g.RequiredChildren(kRootGroup)),
              ElementsAre("workers-1", "leader", "workers-0"));
  // The leader listed last is still among the cheapest.
  std::rotate(g.sub_groups.begin(), g.sub_groups.begin() + 3, g.sub_groups.end());
  EXPECT_EQ(g.sub_groups.back().name, "leader");
  EXPECT_THAT(Names(g, g.RequiredChildren(kRootGroup)),
              ElementsAre("workers-0", "workers-2", "leader"));
  // minSubGroup 2: the leader and one worker group, 1 + 4 = 5 pods (above minMember 2).
  g.min_sub_group = 2;
  g.min_member = 2;
  EXPECT_EQ(g.RequiredPods(kRootGroup), 5);

  // IsSatisfied takes any N: the big child and one worker group satisfy the
  // root as well as the cheapest two.
  std::map<std::string, int32_t, std::less<>> placed = {{"big", 6}, {"workers-2", 4}};
  EXPECT_TRUE(g.IsSatisfied(kRootGroup, placed));
  placed = {{"big", 6}, {"workers-2", 3}};
  EXPECT_FALSE(g.IsSatisfied(kRootGroup, placed));  // workers-2 below its 4
  placed = {{"leader", 1}, {"workers-1", 4}};
  EXPECT_TRUE(g.IsSatisfied(kRootGroup, placed));
}

TEST(GangTree, EffectiveTopologyIsInheritedFromTheNearestAncestor) {
  GangSpec g = Dynamo();
  g.topology_constraint.topology = "dc";
  g.sub_groups[0].topology_constraint.topology = "twin";
  EXPECT_EQ(g.EffectiveTopology(kRootGroup), "dc");
  EXPECT_EQ(g.EffectiveTopology("prefill-2"), "twin");
  EXPECT_EQ(g.EffectiveTopology("decode-0"), "dc");
  EXPECT_EQ(g.EffectiveTopology("missing"), "");
  g.sub_groups[3].topology_constraint.required_level = "rack";
  EXPECT_EQ(g.ConstraintOf("decode-0").required_level, "rack");
  EXPECT_TRUE(g.ConstraintOf("missing").empty());
}

TEST(GangTree, HelpersTerminateOnCycles) {
  GangSpec g = Gang(2);
  g.sub_groups = {Sub("a", "b", 1), Sub("b", "a", 1), Sub("c", "", 1), Sub("d", "d", 1)};
  EXPECT_THAT(Names(g, g.DepthFirstOrder()), ElementsAre("c"));
  EXPECT_THAT(Names(g, g.Subtree("a")), ElementsAre("a", "b"));
  EXPECT_GE(g.RequiredPods("a"), 1);
  EXPECT_EQ(g.EffectiveTopology("a"), "");
  EXPECT_TRUE(g.Children("d").empty());
}

TEST(GangSpecExamples, Spec002WorkedExamplesAreValidWithoutWarnings) {
  std::vector<TopologyDefinition> topologies = Topologies();
  // Disaggregated inference (Dynamo), with zone/rack constraints by short name.
  GangSpec dynamo = Dynamo();
  dynamo.topology_constraint.topology = "dc";
  for (SubGroupSpec& s : dynamo.sub_groups) {
    s.topology_constraint.required_level = s.parent.empty() ? "zone" : "rack";
  }
  GangValidationOptions options;
  options.topologies = &topologies;
  EXPECT_TRUE(ValidateGangSpec(dynamo, options).ok())
      << ValidateGangSpec(dynamo, options).error().message;
  EXPECT_THAT(GangSpecWarnings(dynamo, &topologies), IsEmpty());

  // LeaderWorkerSet: 4 groups of leader + 5 workers, 3 groups needed.
  GangSpec lws = Gang(18, 3);
  for (int i = 0; i < 4; ++i) {
    std::string group = "group-" + std::to_string(i);
    lws.sub_groups.push_back(Sub(group, "", 6, 2));
    lws.sub_groups.push_back(Sub(group + "-leader", group, 1));
    lws.sub_groups.push_back(Sub(group + "-workers", group, 5));
  }
  EXPECT_TRUE(ValidateGangSpec(lws).ok()) << ValidateGangSpec(lws).error().message;
  EXPECT_THAT(GangSpecWarnings(lws), IsEmpty());
  EXPECT_EQ(lws.RequiredPods(kRootGroup), 18);

  // Disaggregated inference (generic): prefill 2x3 + decode 1x4.
  GangSpec generic = Gang(10, 2);
  generic.sub_groups = {Sub("prefill", "", 6, 2), Sub("prefill-0", "prefill", 3),
                        Sub("prefill-1", "prefill", 3), Sub("decode", "", 4, 1),
                        Sub("decode-0", "decode", 4)};
  EXPECT_TRUE(ValidateGangSpec(generic).ok());
  EXPECT_THAT(GangSpecWarnings(generic), IsEmpty());

  // Leader + workers: leader and 2 of 3 worker groups.
  GangSpec leader = Gang(9, 3);
  leader.sub_groups = {Sub("leader", "", 1), Sub("workers-0", "", 4), Sub("workers-1", "", 4),
                       Sub("workers-2", "", 4)};
  EXPECT_TRUE(ValidateGangSpec(leader).ok());
  EXPECT_THAT(GangSpecWarnings(leader), IsEmpty());
  EXPECT_EQ(leader.RequiredPods(kRootGroup), 9);
}

TEST(GangSpecWarnings, MinMemberAboveWhatTheRequiredChildrenNeed) {
  // Spec 002: minMember 10 with 3 x 8 is valid and silent; with 2 of 4
  // replicas required, 20 warns (it needs a third replica, or spare pods).
  GangSpec g = Gang(10, 3);
  g.sub_groups = {Sub("replica-0", "", 8), Sub("replica-1", "", 8), Sub("replica-2", "", 8)};
  EXPECT_THAT(GangSpecWarnings(g), IsEmpty());
  g.min_sub_group = 2;
  g.min_member = 20;
  EXPECT_TRUE(ValidateGangSpec(g).ok());  // a warning, not an error
  EXPECT_THAT(GangSpecWarnings(g),
              ElementsAre("spec.minMember: 20 is more than the 16 pods its 2 required subgroups "
                          "need (minSubGroup 2 × their minMember): it needs pods beyond its "
                          "subgroups' minimums"));
  // Above what all three hold, it is an error and no longer a warning.
  g.min_member = 30;
  EXPECT_FALSE(ValidateGangSpec(g).ok());
  EXPECT_THAT(GangSpecWarnings(g), IsEmpty());

  // On a nested subgroup the path names it; only required children count.
  GangSpec nested = Gang(20, 1);
  nested.sub_groups = {Sub("prefill", "", 20, 2), Sub("p0", "prefill", 8), Sub("p1", "prefill", 8),
                       Sub("p2", "prefill", 8)};
  std::vector<std::string> warnings = GangSpecWarnings(nested);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("spec.subGroups[0].minMember: 20 is more than the 16 pods"));
}

TEST(GangSpecWarnings, PreferredLevelAboveTheRequiredOne) {
  std::vector<TopologyDefinition> topologies = Topologies();
  GangSpec g = Gang(4);
  g.topology_constraint = {"dc", "rack", "zone"};
  std::vector<std::string> warnings = GangSpecWarnings(g, &topologies);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "spec.topologyConstraint.preferredTopologyLevel: \"zone\" is above the required level "
            "\"rack\", so it has no effect");
  g.topology_constraint = {"dc", "zone", "rack"};
  EXPECT_THAT(GangSpecWarnings(g, &topologies), IsEmpty());
}

TEST(GangSpecValidation, RootMinMember) {
  GangSpec g = Gang(0);
  EXPECT_THAT(GangSpecErrors(g), ElementsAre("spec.minMember: Invalid value: 0: must be >= 1"));
  g.source = GangSource::kWorkloadPodGroup;
  EXPECT_THAT(GangSpecErrors(g),
              ElementsAre("spec.schedulingPolicy.gang.minCount: Invalid value: 0: must be >= 1"));
  g.min_member = 1;
  EXPECT_THAT(GangSpecErrors(g), IsEmpty());

  Status status = ValidateGangSpec(Gang(-2));
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, ErrorCode::kInvalid);
  EXPECT_EQ(status.error().message, "spec.minMember: Invalid value: -2: must be >= 1");
}

TEST(GangSpecValidation, BasicPolicy) {
  GangSpec g = Gang(0);
  g.source = GangSource::kWorkloadPodGroup;
  g.policy = GangPolicy::kBasic;
  EXPECT_THAT(GangSpecErrors(g), IsEmpty());
  g.disruption_mode = DisruptionMode::kPodGroup;
  EXPECT_THAT(GangSpecErrors(g),
              ElementsAre("spec.disruptionMode: Invalid value: \"PodGroup\": a basic (non-gang) "
                          "group can only be disrupted per Pod"));
  g.disruption_mode = DisruptionMode::kPod;
  g.min_member = 3;
  EXPECT_THAT(GangSpecErrors(g),
              ElementsAre("spec.schedulingPolicy.gang.minCount: Invalid value: 3: must be 0 with "
                          "the basic scheduling policy"));
}

TEST(GangSpecValidation, MinSubGroupAgainstTheNumberOfChildren) {
  GangSpec g = Gang(8, 5);
  g.sub_groups = {Sub("a", "", 2), Sub("b", "", 2), Sub("c", "", 2), Sub("d", "", 2)};
  EXPECT_THAT(GangSpecErrors(g),
              ElementsAre("spec.minSubGroup: Invalid value: 5: must be <= 4 (the number of direct "
                          "child subgroups)"));
  g.min_sub_group = 4;
  EXPECT_THAT(GangSpecErrors(g), IsEmpty());
  g.min_sub_group = 0;  // elastic down to none: legal
  EXPECT_THAT(GangSpecErrors(g), IsEmpty());
  g.min_sub_group = -1;
  EXPECT_THAT(GangSpecErrors(g), ElementsAre("spec.minSubGroup: Invalid value: -1: must be >= 0"));

  // On a subgroup, and on a leaf (no children at all).
  GangSpec s = Gang(4);
  s.sub_groups = {Sub("p", "", 4, 3), Sub("p0", "p", 2), Sub("p1", "p", 2), Sub("leaf", "", 1, 1)};
  EXPECT_THAT(GangSpecErrors(s),
              ElementsAre("spec.subGroups[0].minSubGroup: Invalid value: 3: must be <= 2 (the "
                          "number of direct child subgroups)",
                          "spec.subGroups[3].minSubGroup: Invalid value: 1: must be <= 0 (the "
                          "number of direct child subgroups)"));
  // With no subgroups at all, minSubGroup above 0 is wrong too.
  EXPECT_THAT(GangSpecErrors(Gang(1, 1)),
              ElementsAre("spec.minSubGroup: Invalid value: 1: must be <= 0 (the number of direct "
                          "child subgroups)"));
}

TEST(GangSpecValidation, SubGroupMinMember) {
  GangSpec g = Gang(4);
  g.sub_groups = {Sub("inner", "", 0), Sub("leaf", "inner", 0), Sub("neg", "", -1, 0)};
  g.sub_groups.push_back(Sub("neg-child", "neg", 1));
  EXPECT_THAT(GangSpecErrors(g),
              ElementsAre("spec.subGroups[1].minMember: Invalid value: 0: must be >= 1 (a "
                          "subgroup without subgroups needs pods)",
                          "spec.subGroups[2].minMember: Invalid value: -1: must be >= 0"));
}

TEST(GangSpecValidation, UnknownParent) {
  GangSpec g = Gang(4);
  g.sub_groups = {Sub("decode", "", 2), Sub("decode-0", "decode", 2),
                  Sub("decode-1", "decode-x", 2)};
  EXPECT_THAT(GangSpecErrors(g), ElementsAre("spec.subGroups[2].parent: Not found: \"decode-x\""));
  // A subgroup hanging off an unknown parent is not reachable from the root.
  EXPECT_THAT(Names(g, g.DepthFirstOrder()), ElementsAre("decode", "decode-0"));
}

TEST(GangSpecValidation, ParentCyclesAreReportedOnce) {
  GangSpec g = Gang(4);
  g.sub_groups = {Sub("a", "b", 1), Sub("b", "a", 1), Sub("self", "self", 1), Sub("ok", "", 1),
                  Sub("x", "z", 1), Sub("y", "x", 1), Sub("z", "y", 1),       Sub("tail", "a", 1)};
  EXPECT_THAT(
      GangSpecErrors(g),
      ElementsAre(
          "spec.subGroups[2].parent: Invalid value: \"self\": parent cycle: self -> self",
          "spec.subGroups[0].parent: Invalid value: \"b\": parent cycle: a -> b -> a",
          "spec.subGroups[4].parent: Invalid value: \"z\": parent cycle: x -> z -> y -> x"));
}

TEST(GangSpecValidation, SubGroupNames) {
  GangSpec g = Gang(4);
  g.sub_groups = {Sub("a", "", 1), Sub("", "", 1), Sub("bad name!", "", 1), Sub("a", "", 1)};
  std::vector<std::string> errors = GangSpecErrors(g);
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0], "spec.subGroups[1].name: Required value");
  EXPECT_THAT(errors[1], HasSubstr("spec.subGroups[2].name: Invalid value: \"bad name!\": must be "
                                   "a valid label value"));
  EXPECT_EQ(errors[2], "spec.subGroups[3].name: Duplicate value: \"a\"");
}

TEST(GangSpecValidation, MinMemberAgainstThePodsThatExist) {
  GangSpec g = Dynamo();
  GangPodCounts counts;
  for (const SubGroupSpec& s : g.sub_groups) {
    if (g.Children(s.name).empty()) counts.by_sub_group[s.name] = 8;
  }
  counts.by_sub_group["decode-0"] = 4;
  counts.by_sub_group["decode-1"] = 4;
  GangValidationOptions options;
  options.pod_counts = &counts;
  EXPECT_THAT(GangSpecErrors(g, options), IsEmpty());  // 40 pods, 32 prefill, 8 decode

  counts.by_sub_group["prefill-3"] = 0;
  counts.by_sub_group["prefill-2"] = 0;
  counts.by_sub_group["prefill-1"] = 6;
  counts.by_sub_group["decode-1"] = 0;
  // prefill: 14 < 24; prefill-1: 6 < 8; prefill-2/3: 0 < 8; root: 14 + 4 = 18 < 28.
  EXPECT_THAT(
      GangSpecErrors(g, options),
      ElementsAre("spec.minMember: Invalid value: 28: must be <= 18 (the member pods that exist)",
                  "spec.subGroups[0].minMember: Invalid value: 24: must be <= 14 (the pods that "
                  "exist below it)",
                  "spec.subGroups[4].minMember: Invalid value: 8: must be <= 6 (the pods that "
                  "exist below it)",
                  "spec.subGroups[5].minMember: Invalid value: 8: must be <= 0 (the pods that "
                  "exist below it)",
                  "spec.subGroups[6].minMember: Invalid value: 4: must be <= 0 (the pods that "
                  "exist below it)",
                  "spec.subGroups[7].minMember: Invalid value: 8: must be <= 0 (the pods that "
                  "exist below it)"));

  // An explicit total wins over the per-subgroup sum (pods without a subgroup).
  GangSpec flat = Gang(10);
  GangPodCounts total;
  total.total = 8;
  options.pod_counts = &total;
  EXPECT_THAT(GangSpecErrors(flat, options),
              ElementsAre("spec.minMember: Invalid value: 10: must be <= 8 (the member pods that "
                          "exist)"));
  total.total = 10;
  EXPECT_THAT(GangSpecErrors(flat, options), IsEmpty());
}

// Spec 002 Option 2: minMember counts descendant pods, which below a node
// with subgroups are the pods its subgroups hold (their minMember, or what
// their own subgroups hold). More can never be met: refused, naming the field.
TEST(GangSpecValidation, MinMemberAboveWhatTheSubGroupsHold) {
  // Spec 002's example: 30 over three replicas of 8.
  GangSpec g = Gang(30, 3);
  g.sub_groups = {Sub("replica-0", "", 8), Sub("replica-1", "", 8), Sub("replica-2", "", 8)};
  EXPECT_THAT(GangSpecErrors(g), ElementsAre("spec.minMember: Invalid value: 30: must be <= 24 "
                                             "(the pods its 3 subgroups hold: the sum of their "
                                             "minMember)"));
  g.min_member = 24;
  EXPECT_THAT(GangSpecErrors(g), IsEmpty());
  // Optional replicas hold pods too: 2 of 4 required, 32 held.
  g.min_sub_group = 2;
  g.sub_groups.push_back(Sub("replica-3", "", 8));
  g.min_member = 32;
  EXPECT_THAT(GangSpecErrors(g), IsEmpty());
  g.min_member = 33;
  EXPECT_THAT(GangSpecErrors(g), ElementsAre("spec.minMember: Invalid value: 33: must be <= 32 "
                                             "(the pods its 4 subgroups hold: the sum of their "
                                             "minMember)"));

  // Nested: an inner subgroup holds max(its minMember, what its children
  // hold); each level is checked and named.
  GangSpec nested = Gang(30, 2);
  nested.sub_groups = {Sub("prefill", "", 20, 1), Sub("p0", "prefill", 8), Sub("p1", "prefill", 8),
                       Sub("decode", "", 4), Sub("d0", "decode", 4)};
  EXPECT_THAT(GangSpecErrors(nested),
              ElementsAre("spec.minMember: Invalid value: 30: must be <= 24 (the pods its 2 "
                          "subgroups hold: the sum of their minMember)",
                          "spec.subGroups[0].minMember: Invalid value: 20: must be <= 16 (the pods "
                          "its 2 subgroups hold: the sum of their minMember)"));
  nested.sub_groups[0].min_member = 16;
  nested.min_member = 20;
  EXPECT_THAT(GangSpecErrors(nested), IsEmpty());
  // One subgroup: the singular.
  GangSpec one = Gang(5);
  one.sub_groups = {Sub("only", "", 4)};
  EXPECT_THAT(GangSpecErrors(one), ElementsAre("spec.minMember: Invalid value: 5: must be <= 4 "
                                               "(the pods its 1 subgroup hold: the sum of their "
                                               "minMember)"));

  // Without subgroups the pods are not declared: any minMember >= 1 is fine.
  EXPECT_THAT(GangSpecErrors(Gang(1000)), IsEmpty());
  // A broken tree (unknown parent) is reported as such, without a sum.
  GangSpec broken = Gang(30);
  broken.sub_groups = {Sub("a", "", 1), Sub("b", "nope", 1)};
  EXPECT_THAT(GangSpecErrors(broken), ElementsAre("spec.subGroups[1].parent: Not found: \"nope\""));
}

TEST(GangSpecValidation, TopologyNamesAndLevels) {
  std::vector<TopologyDefinition> topologies = Topologies();
  GangValidationOptions options;
  options.topologies = &topologies;

  GangSpec g = Dynamo();
  g.topology_constraint = {"dc", "topology.kubernetes.io/zone", ""};
  g.sub_groups[0].topology_constraint.required_level = "block";  // short name, inherits "dc"
  g.sub_groups[2].topology_constraint.preferred_level = "copse.dev/rack";
  EXPECT_THAT(GangSpecErrors(g, options), IsEmpty());

  g.sub_groups[1].topology_constraint.required_level = "row";
  g.sub_groups[3].topology_constraint = {"nowhere", "rack", ""};
  EXPECT_THAT(GangSpecErrors(g, options),
              ElementsAre("spec.subGroups[1].topologyConstraint.requiredTopologyLevel: Not found: "
                          "\"row\": topology \"dc\" has levels \"topology.kubernetes.io/zone\", "
                          "\"copse.dev/block\", \"copse.dev/rack\", \"kubernetes.io/hostname\"",
                          "spec.subGroups[3].topologyConstraint.topology: Not found: \"nowhere\""));

  // The root naming an unknown topology is reported once, not again by
  // every subgroup that inherits it.
  GangSpec unknown = Dynamo();
  unknown.topology_constraint = {"dc2", "zone", ""};
  unknown.sub_groups[2].topology_constraint.required_level = "rack";
  EXPECT_THAT(GangSpecErrors(unknown, options),
              ElementsAre("spec.topologyConstraint.topology: Not found: \"dc2\""));

  // An ambiguous short name.
  GangSpec twin = Gang(2);
  twin.topology_constraint = {"twin", "rack", ""};
  EXPECT_THAT(GangSpecErrors(twin, options),
              ElementsAre("spec.topologyConstraint.requiredTopologyLevel: Invalid value: \"rack\": "
                          "matches more than one level of topology \"twin\": \"a.example/rack\", "
                          "\"b.example/rack\""));
  twin.topology_constraint.required_level = "b.example/rack";
  EXPECT_THAT(GangSpecErrors(twin, options), IsEmpty());

  // Without topologies nothing named is checked.
  EXPECT_THAT(GangSpecErrors(unknown), IsEmpty());
}

TEST(GangSpecValidation, LevelsWithoutATopologyAreNodeLabelKeys) {
  GangSpec g = Gang(2);
  g.source = GangSource::kWorkloadPodGroup;
  g.topology_constraint.required_level = "topology.kubernetes.io/zone";
  EXPECT_THAT(GangSpecErrors(g), IsEmpty());
  g.topology_constraint.required_level = "not a key";
  std::vector<std::string> errors = GangSpecErrors(g);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0],
              HasSubstr("spec.schedulingConstraints.topologyConstraints[0].topologyKey: Invalid "
                        "value: \"not a key\": must be a node label key"));
}

TEST(GangSpecValidation, AllErrorsAreJoined) {
  GangSpec g = Gang(0, 3);
  g.sub_groups = {Sub("a", "x", 1)};
  Status status = ValidateGangSpec(g);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message,
            "spec.minMember: Invalid value: 0: must be >= 1; spec.minSubGroup: Invalid value: 3: "
            "must be <= 0 (the number of direct child subgroups); spec.subGroups[0].parent: Not "
            "found: \"x\"");
}

TEST(GangEnums, ParseAndName) {
  EXPECT_EQ(*ParsePreemptibility(""), Preemptibility::kPreemptible);
  EXPECT_EQ(*ParsePreemptibility("semi-preemptible"), Preemptibility::kSemiPreemptible);
  EXPECT_EQ(*ParsePreemptibility("non-preemptible"), Preemptibility::kNonPreemptible);
  Result<Preemptibility> bad = ParsePreemptibility("Preemptible");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "Unsupported value: \"Preemptible\": supported values: \"preemptible\", "
            "\"non-preemptible\", \"semi-preemptible\"");
  EXPECT_EQ(PreemptibilityName(Preemptibility::kSemiPreemptible), "semi-preemptible");
  EXPECT_EQ(*ParseDisruptionMode(""), DisruptionMode::kPod);
  EXPECT_EQ(*ParseDisruptionMode("PodGroup"), DisruptionMode::kPodGroup);
  EXPECT_FALSE(ParseDisruptionMode("pod").ok());
  EXPECT_EQ(DisruptionModeName(DisruptionMode::kPodGroup), "PodGroup");
  EXPECT_EQ(GangPolicyName(GangPolicy::kBasic), "basic");
  EXPECT_EQ(GangSourceName(GangSource::kCopsePodGroup), "scheduling.copse.dev/v1alpha1 PodGroup");
}

TEST(TopologyDefinition, FindLevelByKeyOrUniqueNamePart) {
  std::vector<TopologyDefinition> topologies = Topologies();
  const TopologyDefinition& dc = topologies[0];
  EXPECT_EQ(dc.FindLevel("copse.dev/rack"), 2u);
  EXPECT_EQ(dc.FindLevel("rack"), 2u);
  EXPECT_EQ(dc.FindLevel("zone"), 0u);
  EXPECT_EQ(dc.FindLevel("hostname"), 3u);
  EXPECT_FALSE(dc.FindLevel("row").has_value());
  EXPECT_FALSE(dc.FindLevel("").has_value());
  EXPECT_FALSE(topologies[1].FindLevel("rack").has_value());  // ambiguous
  EXPECT_EQ(topologies[1].FindLevel("a.example/rack"), 0u);
}

}  // namespace
}  // namespace copse
