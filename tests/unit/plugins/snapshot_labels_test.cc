// Snapshot rows rewritten by Sync keep their labels and interned label
// column ids right, whether the rewrite changed the labels or only the pods.
#include <gtest/gtest.h>

#include "tests/unit/plugins/test_util.h"

namespace copse::plugins::testing {
namespace {

std::string ZoneOf(const Snapshot& snapshot, NodeIndex n) {
  const LabelColumn* zone = snapshot.label_column(kLabelTopologyZone);
  EXPECT_NE(zone, nullptr);
  if (zone == nullptr) return "?";
  const uint32_t id = zone->id(n);
  return id == LabelColumn::kAbsent ? "" : zone->value(id);
}

TEST(SnapshotLabels, RowsFollowLabelChangesAndKeepThemAcrossPodChanges) {
  Cluster c;
  c.AddNode("a", {{"cpu", "4"}, {"pods", "10"}}, {{std::string(kLabelTopologyZone), "z1"}});
  c.AddNode("b", {{"cpu", "4"}, {"pods", "10"}}, {{std::string(kLabelTopologyZone), "z2"}});
  const NodeIndex a = c.index("a");
  const NodeIndex b = c.index("b");
  EXPECT_EQ(ZoneOf(c.snapshot(), a), "z1");
  EXPECT_EQ(ZoneOf(c.snapshot(), b), "z2");

  // A pod change rewrites the row; its labels stay.
  c.AddPod("a", PodBuilder("p").Requests(c.names, {{"cpu", "1"}}).Obj());
  const Snapshot& after_pod = c.snapshot();
  EXPECT_EQ(after_pod.pods(a).size(), 1u);
  EXPECT_EQ(ZoneOf(after_pod, a), "z1");
  EXPECT_EQ(after_pod.node_labels(a).at(std::string(kLabelTopologyZone)), "z1");

  // A label change is seen, in the labels and in the indexed column.
  c.node("a").SetLabels(
      {{std::string(kLabelHostname), "a"}, {std::string(kLabelTopologyZone), "z2"}});
  EXPECT_EQ(ZoneOf(c.snapshot(), a), "z2");
  c.node("b").SetLabels({{std::string(kLabelHostname), "b"}});
  EXPECT_EQ(ZoneOf(c.snapshot(), b), "");
  EXPECT_EQ(c.snapshot().node_labels(b).count(std::string(kLabelTopologyZone)), 0u);
}

}  // namespace
}  // namespace copse::plugins::testing
