// Elastic Grove gangs (issue 15, item 7), from a PodCliqueSet to the copse
// PodGroups the scheduler reads. Grove's semantics for a PodCliqueScalingGroup
// with minAvailable < replicas: the replicas below minAvailable join the
// base PodGang, which is placed whole; each replica above is a scaled
// PodGang of its own. So the base gang's copse PodGroup requires exactly
// minAvailable replicas (all of the ones it holds), and is satisfied by
// them alone, whatever the other replicas do.

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "grove/api/defaults.h"
#include "grove/api/types.h"
#include "grove/backend/copse/backend.h"
#include "grove/components/builders.h"
#include "kube/pod_group.h"

namespace copse::grove {
namespace {

using nlohmann::json;

// A scaling group `sg` of `replicas` replicas (minAvailable `min_available`),
// each one clique of two workers, beside a standalone router.
api::PodCliqueSet Elastic(int replicas, int min_available) {
  json pod_spec = {{"containers", json::array({{{"name", "main"}, {"image", "pause"}}})}};
  json pcs = {
      {"apiVersion", "grove.io/v1alpha1"},
      {"kind", "PodCliqueSet"},
      {"metadata", {{"name", "elastic"}, {"namespace", "default"}, {"uid", "pcs-uid"}}},
      {"spec",
       {{"replicas", 1},
        {"template",
         {{"cliques",
           json::array(
               {{{"name", "router"},
                 {"spec", {{"roleName", "router"}, {"replicas", 1}, {"podSpec", pod_spec}}}},
                {{"name", "worker"},
                 {"spec", {{"roleName", "worker"}, {"replicas", 2}, {"podSpec", pod_spec}}}}})},
          {"podCliqueScalingGroups", json::array({{{"name", "sg"},
                                                   {"cliqueNames", json::array({"worker"})},
                                                   {"replicas", replicas},
                                                   {"minAvailable", min_available}}})}}}}}};
  auto decoded = api::PodCliqueSet::Decode(pcs.dump());
  EXPECT_TRUE(decoded.ok()) << decoded.error().ToString();
  return api::Defaulted(*decoded);
}

// The gangs of replica 0 as the operator creates them (template replicas).
std::vector<components::ExpectedGang> Gangs(const api::PodCliqueSet& pcs) {
  return components::ExpectedPodGangs(
      pcs, 0,
      [](const std::string&, const api::PodCliqueScalingGroupConfig& config) {
        return config.replicas.value_or(1);
      },
      [](const std::string&, const api::PodCliqueTemplateSpec& clique) {
        return clique.spec.replicas;
      },
      nullptr, "copse-scheduler");
}

// The scheduler's model of the copse PodGroup the backend writes for `gang`.
GangSpec CopseGang(const api::PodGang& gang) {
  auto group = kube::CopsePodGroup::Decode(backend::CopsePodGroupFor(gang, ""));
  EXPECT_TRUE(group.ok()) << group.error().ToString();
  auto spec = group->ToGangSpec();
  EXPECT_TRUE(spec.ok()) << spec.error().ToString();
  return spec.ok() ? *spec : GangSpec{};
}

TEST(ElasticGroveGang, BaseGangRequiresExactlyMinAvailableReplicas) {
  const auto gangs = Gangs(Elastic(/*replicas=*/3, /*min_available=*/1));
  std::vector<std::string> names;
  for (const auto& gang : gangs) names.push_back(gang.name);
  // The base gang and one scaled gang per replica above minAvailable.
  EXPECT_EQ(names, (std::vector<std::string>{"elastic-0", "elastic-0-sg-0", "elastic-0-sg-1"}));
  ASSERT_EQ(gangs.size(), 3u);

  const GangSpec base = CopseGang(gangs[0].object);
  // Children of the root: the router and the one scaling-group replica it holds.
  EXPECT_EQ(base.MinSubGroup(kRootGroup), 2);
  EXPECT_EQ(base.Children(kRootGroup).size(), 2u);
  ASSERT_TRUE(base.FindSubGroup("elastic-0-sg-0").has_value());
  EXPECT_FALSE(base.FindSubGroup("elastic-0-sg-1").has_value()) << "replica 1 is a scaled gang";
  EXPECT_EQ(base.RequiredPods(kRootGroup), 3);  // the router + minAvailable x 2 workers
  // Placed: the router and replica 0's workers. That is the gang.
  const std::map<std::string, int32_t, std::less<>> one_replica = {{"elastic-0-router", 1},
                                                                   {"elastic-0-sg-0-worker", 2}};
  EXPECT_TRUE(base.IsSatisfied(kRootGroup, one_replica));
  // Without its one required replica it is not.
  EXPECT_FALSE(base.IsSatisfied(kRootGroup, {{"elastic-0-router", 1}}));

  // Each further replica is a gang of its own, whole or nothing.
  for (size_t i = 1; i < gangs.size(); ++i) {
    const GangSpec scaled = CopseGang(gangs[i].object);
    EXPECT_EQ(scaled.RequiredPods(kRootGroup), 2) << gangs[i].name;
    EXPECT_FALSE(scaled.IsSatisfied(kRootGroup, {})) << gangs[i].name;
    EXPECT_EQ(gangs[i].object.meta.labels.at("grove.io/base-podgang"), "elastic-0");
  }
}

TEST(ElasticGroveGang, MinAvailableEqualToReplicasIsOneGang) {
  const auto gangs = Gangs(Elastic(/*replicas=*/3, /*min_available=*/3));
  ASSERT_EQ(gangs.size(), 1u);
  const GangSpec base = CopseGang(gangs[0].object);
  EXPECT_EQ(base.MinSubGroup(kRootGroup), 4);  // router + three replicas
  EXPECT_EQ(base.RequiredPods(kRootGroup), 7);
  EXPECT_FALSE(base.IsSatisfied(
      kRootGroup,
      {{"elastic-0-router", 1}, {"elastic-0-sg-0-worker", 2}, {"elastic-0-sg-1-worker", 2}}));
}

}  // namespace
}  // namespace copse::grove
