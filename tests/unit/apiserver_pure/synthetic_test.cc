#include "apiserver/synthetic.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

namespace copse::apiserver {
namespace {

using json = nlohmann::json;

std::string ErrorOf(std::string_view text) {
  Result<TopologySpec> r = ParseTopology(text);
  return r.ok() ? std::string("<ok>") : r.error().message;
}

ResourceList Shape(std::string_view text) {
  Result<ResourceList> r = ParseResourceList(text);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : ResourceList{};
}

std::vector<json> Nodes(int count, std::string_view shape, std::string_view topology) {
  Result<TopologySpec> t = ParseTopology(topology);
  EXPECT_TRUE(t.ok());
  Result<std::vector<std::string>> r = MakeSyntheticNodes(count, Shape(shape), *t);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  std::vector<json> out;
  if (r.ok()) {
    for (const std::string& text : *r) out.push_back(json::parse(text));
  }
  return out;
}

TEST(ParseTopology, ValidSpecs) {
  Result<TopologySpec> full = ParseTopology("zone=2,block=4,rack=8");
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->levels, (std::vector<TopologyLevelSpec>{{"zone", 2}, {"block", 4}, {"rack", 8}}));
  EXPECT_EQ(full->LeafDomains(), 64);

  Result<TopologySpec> subset = ParseTopology(" zone = 2 , rack=4 ");
  ASSERT_TRUE(subset.ok());
  EXPECT_EQ(subset->levels, (std::vector<TopologyLevelSpec>{{"zone", 2}, {"rack", 4}}));

  Result<TopologySpec> empty = ParseTopology("");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->levels.empty());
  EXPECT_EQ(empty->LeafDomains(), 1);
}

TEST(ParseTopology, ErrorsNameTheEntry) {
  EXPECT_EQ(ErrorOf("zone=2,row=3"),
            "topology entry \"row=3\": unknown level \"row\" (want zone, block or rack)");
  EXPECT_EQ(
      ErrorOf("rack=8,zone=2"),
      "topology entry \"zone=2\": level \"zone\" must come before \"rack\" (levels go outermost "
      "first: zone, block, rack)");
  EXPECT_EQ(ErrorOf("zone=2,zone=3"), "topology entry \"zone=3\": level \"zone\" given twice");
  EXPECT_EQ(ErrorOf("zone=0"),
            "topology entry \"zone=0\": count must be an integer between 1 and 1000000");
  EXPECT_EQ(ErrorOf("block=x"),
            "topology entry \"block=x\": count must be an integer between 1 and 1000000");
  EXPECT_EQ(ErrorOf("zone=-1"),
            "topology entry \"zone=-1\": count must be an integer between 1 and 1000000");
  EXPECT_EQ(ErrorOf("zone"), "topology entry \"zone\": expected <level>=<count>, e.g. zone=2");
  EXPECT_EQ(ErrorOf("zone=2,"), "topology entry \"\": expected <level>=<count>, e.g. zone=2");
  EXPECT_EQ(ParseTopology("zone=2,block=0").error().code, ErrorCode::kInvalid);
}

TEST(TopologyLabelKey, KnownLevels) {
  EXPECT_EQ(TopologyLabelKey("zone"), "topology.kubernetes.io/zone");
  EXPECT_EQ(TopologyLabelKey("block"), "copse.dev/block");
  EXPECT_EQ(TopologyLabelKey("rack"), "copse.dev/rack");
  EXPECT_EQ(TopologyLabelKey("row"), "");
}

TEST(SyntheticNodes, ShapeLabelsAndStatus) {
  std::vector<json> nodes = Nodes(3, "cpu=64,memory=512Gi,nvidia.com/gpu=8", "zone=1");
  ASSERT_EQ(nodes.size(), 3u);
  const json& n = nodes[0];
  EXPECT_EQ(n["apiVersion"], "v1");
  EXPECT_EQ(n["kind"], "Node");
  EXPECT_EQ(n["metadata"]["name"], "node-1");
  EXPECT_EQ(nodes[2]["metadata"]["name"], "node-3");
  const json& labels = n["metadata"]["labels"];
  EXPECT_EQ(labels["kubernetes.io/hostname"], "node-1");
  EXPECT_EQ(labels["kubernetes.io/os"], "linux");
  EXPECT_EQ(labels["kubernetes.io/arch"], "amd64");
  EXPECT_EQ(labels["node.kubernetes.io/instance-type"], "copse-synthetic");
  EXPECT_EQ(labels["topology.kubernetes.io/zone"], "zone-1");
  const json want =
      json::parse(R"({"cpu":"64","memory":"512Gi","nvidia.com/gpu":"8","pods":"110"})");
  EXPECT_EQ(n["status"]["capacity"], want);
  EXPECT_EQ(n["status"]["allocatable"], want);
  EXPECT_EQ(n["status"]["conditions"][0]["type"], "Ready");
  EXPECT_EQ(n["status"]["conditions"][0]["status"], "True");
  EXPECT_EQ(n["status"]["nodeInfo"]["kubeletVersion"], "v1.32.0-copse");
  EXPECT_EQ(n["status"]["addresses"][0],
            json::parse(R"({"type":"InternalIP","address":"10.0.0.1"})"));
  EXPECT_EQ(n["status"]["addresses"][1], json::parse(R"({"type":"Hostname","address":"node-1"})"));

  std::vector<json> with_pods = Nodes(1, "cpu=8,pods=250", "");
  EXPECT_EQ(with_pods[0]["status"]["capacity"]["pods"], "250");
  EXPECT_FALSE(with_pods[0]["metadata"]["labels"].contains("topology.kubernetes.io/zone"));
}

TEST(SyntheticNodes, UniqueTopologyValuesAndEvenSpread) {
  // 2 zones x 2 blocks x 4 racks = 16 racks, 64 nodes: 4 per rack.
  std::vector<json> nodes = Nodes(64, "cpu=4", "zone=2,block=2,rack=4");
  ASSERT_EQ(nodes.size(), 64u);
  std::map<std::string, int> per_rack;
  std::set<std::string> blocks;
  std::set<std::string> ips;
  std::set<std::string> names;
  for (const json& n : nodes) {
    const json& labels = n["metadata"]["labels"];
    const std::string zone = labels["topology.kubernetes.io/zone"];
    const std::string block = labels["copse.dev/block"];
    const std::string rack = labels["copse.dev/rack"];
    // Values nest: rack-1-2-3 lies in block-1-2, which lies in zone-1.
    EXPECT_EQ(block.substr(6, 1), zone.substr(5, 1));
    EXPECT_EQ(rack.rfind("rack-" + block.substr(6), 0), 0u) << rack << " " << block;
    ++per_rack[rack];
    blocks.insert(block);
    ips.insert(n["status"]["addresses"][0]["address"].get<std::string>());
    names.insert(n["metadata"]["name"].get<std::string>());
  }
  EXPECT_EQ(per_rack.size(), 16u);
  for (const auto& [rack, count] : per_rack) EXPECT_EQ(count, 4) << rack;
  EXPECT_EQ(blocks, (std::set<std::string>{"block-1-1", "block-1-2", "block-2-1", "block-2-2"}));
  EXPECT_EQ(ips.size(), 64u);
  EXPECT_EQ(names.size(), 64u);
  // Contiguous: the first four nodes share the first rack, the last the last.
  EXPECT_EQ(nodes[0]["metadata"]["labels"]["copse.dev/rack"], "rack-1-1-1");
  EXPECT_EQ(nodes[3]["metadata"]["labels"]["copse.dev/rack"], "rack-1-1-1");
  EXPECT_EQ(nodes[4]["metadata"]["labels"]["copse.dev/rack"], "rack-1-1-2");
  EXPECT_EQ(nodes[63]["metadata"]["labels"]["copse.dev/rack"], "rack-2-2-4");
}

TEST(SyntheticNodes, UnevenCountsDifferByAtMostOne) {
  std::vector<json> nodes = Nodes(10, "cpu=4", "zone=2,rack=2");
  std::map<std::string, int> per_rack;
  for (const json& n : nodes)
    ++per_rack[n["metadata"]["labels"]["copse.dev/rack"].get<std::string>()];
  EXPECT_EQ(per_rack, (std::map<std::string, int>{
                          {"rack-1-1", 3}, {"rack-1-2", 2}, {"rack-2-1", 3}, {"rack-2-2", 2}}));

  // Fewer nodes than racks: each used rack gets one node, spread out.
  std::vector<json> sparse = Nodes(2, "cpu=4", "zone=2,rack=4");
  EXPECT_EQ(sparse[0]["metadata"]["labels"]["copse.dev/rack"], "rack-1-1");
  EXPECT_EQ(sparse[1]["metadata"]["labels"]["copse.dev/rack"], "rack-2-1");
}

TEST(SyntheticNodes, IpsBeyond256) {
  std::vector<json> nodes = Nodes(300, "cpu=1", "");
  EXPECT_EQ(nodes[255]["status"]["addresses"][0]["address"], "10.0.1.0");
  EXPECT_EQ(nodes[299]["status"]["addresses"][0]["address"], "10.0.1.44");
}

TEST(SyntheticNodes, Errors) {
  const ResourceList shape = Shape("cpu=4");
  EXPECT_FALSE(MakeSyntheticNodes(-1, shape, {}).ok());
  EXPECT_FALSE(MakeSyntheticNodes(1, ResourceList{}, {}).ok());
  EXPECT_FALSE(MakeSyntheticNodes(1, shape, TopologySpec{{{"row", 2}}}).ok());
  EXPECT_FALSE(MakeSyntheticNodes(1, shape, TopologySpec{{{"rack", 2}, {"zone", 2}}}).ok());
  EXPECT_FALSE(MakeSyntheticNodes(1, shape, TopologySpec{{{"zone", 0}}}).ok());
  EXPECT_FALSE(MakeSyntheticNodes(1, shape, {}, "Bad_Prefix").ok());
  ResourceList negative{{"cpu", Quantity::FromInt(-1)}};
  EXPECT_FALSE(MakeSyntheticNodes(1, negative, {}).ok());
  Result<std::vector<std::string>> none = MakeSyntheticNodes(0, shape, {});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  Result<std::vector<std::string>> prefixed = MakeSyntheticNodes(1, shape, {}, "gpu");
  ASSERT_TRUE(prefixed.ok());
  EXPECT_EQ(json::parse((*prefixed)[0])["metadata"]["name"], "gpu-1");
}

}  // namespace
}  // namespace copse::apiserver
