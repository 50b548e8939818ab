#pragma once
// Test helpers for topology/: a cluster of NodeInfos with a synced Snapshot,
// synthetic zone/block/rack clusters, pods with given requests, and a
// canonical dump of a DomainTree to compare an incrementally refreshed tree
// with a fresh build.

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/labels.h"
#include "core/node_info.h"
#include "core/pod_info.h"
#include "core/resource_vector.h"
#include "core/scheduling_types.h"
#include "core/snapshot.h"
#include "topology/domain_tree.h"
#include "topology/levels.h"

namespace copse::topology::testing {

struct Shape {
  int64_t cpu = 0;     // milli
  int64_t memory = 0;  // bytes
  int64_t gpu = 0;
  int64_t pods = 0;
};

class TestCluster {
 public:
  // index_keys: make the snapshot index these label keys (others are read
  // from the label maps).
  explicit TestCluster(std::vector<std::string> index_keys = {std::string(kLabelBlock),
                                                              std::string(kLabelRack)})
      : snapshot_(names) {
    gpu = *names.Intern("nvidia.com/gpu");
    for (const std::string& key : index_keys) snapshot_.IndexLabelKey(key);
  }

  ResourceVector Vector(const Shape& s) const {
    ResourceVector v;
    v.Set(kResourceIdCpu, s.cpu);
    v.Set(kResourceIdMemory, s.memory);
    v.Set(gpu, s.gpu);
    v.Set(kResourceIdPods, s.pods);
    return v;
  }

  NodeInfo& AddNode(const std::string& name, Labels labels, const Shape& allocatable) {
    auto node = std::make_unique<NodeInfo>(name);
    labels[std::string(kLabelHostname)] = name;
    node->SetLabels(std::move(labels));
    node->SetAllocatable(Vector(allocatable));
    nodes_.push_back(std::move(node));
    return *nodes_.back();
  }
  void RemoveNode(size_t i) { nodes_.erase(nodes_.begin() + static_cast<std::ptrdiff_t>(i)); }

  std::shared_ptr<const PodInfo> MakePod(const Shape& requests) {
    auto pod = std::make_shared<PodInfo>();
    pod->namespace_name = "default";
    pod->name = "p" + std::to_string(next_pod_);
    pod->uid = "uid-" + std::to_string(next_pod_);
    ++next_pod_;
    Shape s = requests;
    s.pods = 0;
    pod->requests = Vector(s);
    EXPECT_TRUE(pod->Finalize().ok());
    return pod;
  }

  NodeInfo& node(size_t i) { return *nodes_[i]; }
  size_t size() const { return nodes_.size(); }

  const Snapshot& Sync() {
    std::vector<const NodeInfo*> ptrs;
    for (const auto& n : nodes_) ptrs.push_back(n.get());
    snapshot_.Sync(ptrs);
    return snapshot_;
  }
  Snapshot& snapshot() { return snapshot_; }

  ResourceNames names;
  ResourceId gpu = 0;

 private:
  std::vector<std::unique_ptr<NodeInfo>> nodes_;
  Snapshot snapshot_;
  int next_pod_ = 0;
};

inline Labels TopologyLabels(int zone, int block, int rack) {
  const std::string z = std::to_string(zone);
  const std::string b = z + "-" + std::to_string(block);
  return Labels{{std::string(kLabelTopologyZone), "zone-" + z},
                {std::string(kLabelBlock), "block-" + b},
                {std::string(kLabelRack), "rack-" + b + "-" + std::to_string(rack)}};
}

// zones x blocks x racks x nodes_per_rack nodes named node-<z>-<b>-<r>-<i>,
// labelled like `copse local --topology` (values unique across the cluster).
inline void AddSyntheticNodes(TestCluster& cluster, int zones, int blocks, int racks,
                              int nodes_per_rack, const Shape& allocatable) {
  for (int z = 1; z <= zones; ++z)
    for (int b = 1; b <= blocks; ++b)
      for (int r = 1; r <= racks; ++r)
        for (int i = 1; i <= nodes_per_rack; ++i) {
          const std::string name = "node-" + std::to_string(z) + "-" + std::to_string(b) + "-" +
                                   std::to_string(r) + "-" + std::to_string(i);
          cluster.AddNode(name, TopologyLabels(z, b, r), allocatable);
        }
}

inline TopologyLevels ZoneBlockRack() {
  Result<TopologyLevels> levels = TopologyLevels::Create({{"", std::string(kLabelTopologyZone)},
                                                          {"", std::string(kLabelBlock)},
                                                          {"", std::string(kLabelRack)}});
  EXPECT_TRUE(levels.ok());
  return *levels;
}

// Everything observable about a tree, as text (domain ids included: they are
// canonical, so a refreshed tree must equal a rebuilt one exactly).
inline std::string Dump(const DomainTree& tree) {
  std::ostringstream out;
  out << "nodes " << tree.num_nodes() << " resources " << tree.num_resources() << "\n";
  out << "order";
  for (NodeIndex n : tree.node_order()) out << " " << n;
  out << "\noutside";
  for (NodeIndex n : tree.nodes_outside()) out << " " << n;
  out << "\n";
  for (size_t r = 0; r < tree.num_resources(); ++r) {
    const auto rid = static_cast<ResourceId>(r);
    out << "total " << r << " free " << tree.total_free(rid) << " alloc "
        << tree.total_allocatable(rid) << "\n";
  }
  for (NodeIndex n = 0; n < tree.num_nodes(); ++n) {
    out << "node " << n << " depth " << tree.depth(n) << " pos " << tree.position_of(n) << " dom";
    for (uint32_t l = 0; l < tree.num_levels(); ++l) {
      const DomainId d = tree.domain_of(n, l);
      out << " " << (d == kNoDomain ? std::string("-") : std::to_string(d));
    }
    out << " free";
    for (size_t r = 0; r < tree.num_resources(); ++r)
      out << " " << tree.node_free(n, static_cast<ResourceId>(r));
    out << "\n";
  }
  for (uint32_t l = 0; l < tree.num_levels(); ++l) {
    for (DomainId d : tree.domains(l)) {
      const PositionRange p = tree.positions(l, d);
      const DomainRange c = tree.children(l, d);
      out << "L" << l << " d" << d << " " << tree.Path(l, d) << " parent "
          << (tree.parent(l, d) == kNoDomain ? std::string("-") : std::to_string(tree.parent(l, d)))
          << " pos [" << p.begin << "," << p.end << ") children [" << c.first << "," << c.last
          << ") free";
      for (int64_t f : tree.free_vector(l, d)) out << " " << f;
      out << "\n";
    }
  }
  return out.str();
}

// Free capacity of every domain recomputed from the tree's per-node values and
// domain_of (independent of the tree's own sums and ranges).
inline std::vector<std::vector<std::vector<int64_t>>> BruteForceDomainFree(const DomainTree& tree) {
  std::vector<std::vector<std::vector<int64_t>>> free(tree.num_levels());
  for (uint32_t l = 0; l < tree.num_levels(); ++l) {
    free[l].assign(tree.num_domains(l), std::vector<int64_t>(tree.num_resources(), 0));
  }
  for (NodeIndex n = 0; n < tree.num_nodes(); ++n) {
    for (uint32_t l = 0; l < tree.num_levels(); ++l) {
      const DomainId d = tree.domain_of(n, l);
      if (d == kNoDomain) continue;
      for (size_t r = 0; r < tree.num_resources(); ++r)
        free[l][d][r] += tree.node_free(n, static_cast<ResourceId>(r));
    }
  }
  return free;
}

}  // namespace copse::topology::testing
