#include "topology/levels.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace copse::topology {
namespace {

TEST(TopologyLevels, DerivesNamesFromLabelKeys) {
  Result<TopologyLevels> t = TopologyLevels::Create({{"", "topology.kubernetes.io/zone"},
                                                     {"", "copse.dev/block"},
                                                     {"", "copse.dev/rack"},
                                                     {"", "kubernetes.io/hostname"}},
                                                    {"spec.levels"});
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->size(), 4u);
  EXPECT_EQ(t->name(0), "zone");
  EXPECT_EQ(t->name(1), "block");
  EXPECT_EQ(t->name(2), "rack");
  EXPECT_EQ(t->name(3), "hostname");
  EXPECT_EQ(t->node_label(2), "copse.dev/rack");
  EXPECT_EQ(t->FindByName("rack"), 2u);
  EXPECT_EQ(t->FindByLabel("copse.dev/rack"), 2u);
  EXPECT_EQ(t->Find("rack"), 2u);
  EXPECT_EQ(t->Find("copse.dev/rack"), 2u);
  EXPECT_EQ(t->Find("topology.kubernetes.io/zone"), 0u);
  EXPECT_FALSE(t->Find("row").has_value());
  EXPECT_FALSE(t->FindByName("copse.dev/rack").has_value());
  EXPECT_FALSE(t->FindByLabel("rack").has_value());
}

TEST(TopologyLevels, ExplicitNamesLikeGroveDomains) {
  Result<TopologyLevels> t = TopologyLevels::Create({{"zone", "topology.kubernetes.io/zone"},
                                                     {"rack", "example.com/topology-rack"},
                                                     {"host", "kubernetes.io/hostname"}},
                                                    {"spec.levels", "key", "domain"});
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->Find("host"), 2u);
  EXPECT_EQ(t->Find("kubernetes.io/hostname"), 2u);
  EXPECT_EQ(t->Find("rack"), 1u);
  EXPECT_FALSE(t->Find("topology-rack").has_value());
}

TEST(TopologyLevels, CollidingDerivedNamesFallBackToTheKey) {
  Result<TopologyLevels> t = TopologyLevels::Create(
      {{"", "a.example.com/rack"}, {"", "b.example.com/rack"}, {"", "node"}});
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->name(0), "a.example.com/rack");
  EXPECT_EQ(t->name(1), "b.example.com/rack");
  EXPECT_EQ(t->name(2), "node");
  EXPECT_FALSE(t->Find("rack").has_value());

  // A derived name that is another level's explicit name or label key.
  Result<TopologyLevels> u =
      TopologyLevels::Create({{"rack", "x.example.com/r"}, {"", "y.example.com/rack"}});
  ASSERT_TRUE(u.ok()) << u.error().message;
  EXPECT_EQ(u->name(1), "y.example.com/rack");
  EXPECT_EQ(u->Find("rack"), 0u);
  Result<TopologyLevels> v = TopologyLevels::Create({{"", "rack"}, {"", "y.example.com/rack"}});
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->name(0), "rack");
  EXPECT_EQ(v->name(1), "y.example.com/rack");
}

TEST(TopologyLevels, ValidationErrorsNameTheField) {
  struct Case {
    std::vector<TopologyLevel> levels;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{}, "spec.levels: must have at least one level"},
      {{{"", ""}}, "spec.levels[0].nodeLabel: must not be empty"},
      {{{"", "copse.dev/rack"}, {"", "copse.dev/rack"}},
       "spec.levels[1].nodeLabel: duplicate label key \"copse.dev/rack\" (also "
       "spec.levels[0].nodeLabel)"},
      {{{"rack", "a/b"}, {"rack", "a/c"}},
       "spec.levels[1].name: duplicate name \"rack\" (also spec.levels[0].name)"},
      {{{"rack", "a/b"}, {"", "rack"}},
       "spec.levels[0].name: \"rack\" is the label key of spec.levels[1].nodeLabel"},
  };
  for (const Case& c : cases) {
    Result<TopologyLevels> t = TopologyLevels::Create(c.levels, {"spec.levels"});
    ASSERT_FALSE(t.ok()) << c.message;
    EXPECT_EQ(t.error().code, ErrorCode::kInvalid);
    EXPECT_EQ(t.error().message, c.message);
  }
  Result<TopologyLevels> bad_key = TopologyLevels::Create({{"", "bad key!"}}, {"spec.levels"});
  ASSERT_FALSE(bad_key.ok());
  EXPECT_EQ(bad_key.error().message.rfind("spec.levels[0].nodeLabel: ", 0), 0u)
      << bad_key.error().message;
  Result<TopologyLevels> bad_name =
      TopologyLevels::Create({{"not a name", "a/b"}}, {"spec.levels", "key", "domain"});
  ASSERT_FALSE(bad_name.ok());
  EXPECT_EQ(bad_name.error().message.rfind("spec.levels[0].domain: ", 0), 0u)
      << bad_name.error().message;
  std::vector<TopologyLevel> many;
  for (int i = 0; i <= static_cast<int>(kMaxLevels); ++i)
    many.push_back({"", "example.com/l" + std::to_string(i)});
  Result<TopologyLevels> too_many = TopologyLevels::Create(many);
  ASSERT_FALSE(too_many.ok());
  EXPECT_EQ(too_many.error().message, "levels: must have at most 8 levels, got 9");
}

TEST(TopologyLevels, ResolveExplainsUnknownLevels) {
  TopologyLevels t = TopologyLevels::Default();
  Result<uint32_t> rack = t.Resolve("rack", "spec.topologyConstraint.requiredTopologyLevel");
  ASSERT_TRUE(rack.ok());
  EXPECT_EQ(*rack, 2u);
  Result<uint32_t> row = t.Resolve("row", "spec.topologyConstraint.requiredTopologyLevel");
  ASSERT_FALSE(row.ok());
  EXPECT_EQ(row.error().code, ErrorCode::kInvalid);
  EXPECT_EQ(row.error().message,
            "spec.topologyConstraint.requiredTopologyLevel: unknown topology level \"row\" "
            "(levels: zone, block, rack, host)");
  Result<uint32_t> empty =
      t.Resolve("", "spec.subGroups[1].topologyConstraint.preferredTopologyLevel");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().message,
            "spec.subGroups[1].topologyConstraint.preferredTopologyLevel: must not be empty");
}

TEST(TopologyLevels, DefaultAndTopologyKey) {
  TopologyLevels t = TopologyLevels::Default();
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t.Find("topology.kubernetes.io/zone"), 0u);
  EXPECT_EQ(t.Find(kLabelBlock), 1u);
  EXPECT_EQ(t.Find(kLabelRack), 2u);
  EXPECT_EQ(t.Find("host"), 3u);
  EXPECT_EQ(t.Find("kubernetes.io/hostname"), 3u);

  Result<TopologyLevels> k = TopologyLevels::FromTopologyKey("topology.kubernetes.io/zone");
  ASSERT_TRUE(k.ok());
  ASSERT_EQ(k->size(), 1u);
  EXPECT_EQ(k->name(0), "zone");
  Result<TopologyLevels> bad = TopologyLevels::FromTopologyKey(
      "", "spec.schedulingConstraints.topologyConstraints[0].topologyKey");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "spec.schedulingConstraints.topologyConstraints[0].topologyKey: must not be empty");
  Result<TopologyLevels> bad2 = TopologyLevels::FromTopologyKey("-x-/", "topologyKey");
  ASSERT_FALSE(bad2.ok());
  EXPECT_EQ(bad2.error().message.rfind("topologyKey: ", 0), 0u) << bad2.error().message;
}

}  // namespace
}  // namespace copse::topology
