#pragma once
// Synthetic clusters for `copse local` and the benchmarks: a topology spec
// ("zone=2,block=4,rack=8") and v1 Node objects spread evenly over it.
//
// Topology: counts per parent, outermost first. "zone=2,block=4,rack=8" is
// 2 zones, 4 blocks in each zone, 8 racks in each block (64 racks). Levels
// come from {zone, block, rack}, each at most once, in that order; a subset
// ("zone=2,rack=4") is allowed. Node labels carry values unique across the
// cluster: zone-1, block-1-2 (block 2 of zone 1), rack-1-2-7 (1-based).
//
// Thread-safety: pure functions.

#include <string>
#include <string_view>
#include <vector>

#include "core/quantity.h"
#include "core/result.h"

namespace copse::apiserver {

struct TopologyLevelSpec {
  std::string name;  // "zone", "block" or "rack"
  int count = 0;     // per parent domain, >= 1
  bool operator==(const TopologyLevelSpec&) const = default;
};

struct TopologySpec {
  std::vector<TopologyLevelSpec> levels;  // outermost first; may be empty
  bool operator==(const TopologySpec&) const = default;

  // Number of innermost domains (product of counts); 1 when empty.
  int64_t LeafDomains() const noexcept;
};

// Parses "zone=2,block=4,rack=8". Empty text (or only spaces) is the empty
// topology. Errors are kInvalid and name the entry, e.g.
//   topology entry "row=2": unknown level "row" (want zone, block or rack)
//   topology entry "zone=0": count must be a positive integer
//   topology entry "zone=2": level "zone" must come before "rack"
//   topology entry "rack=3": level "rack" given twice
Result<TopologySpec> ParseTopology(std::string_view text);

// "zone" -> "topology.kubernetes.io/zone", "block" -> "copse.dev/block",
// "rack" -> "copse.dev/rack"; "" for anything else.
std::string_view TopologyLabelKey(std::string_view level);

// `count` v1 Node objects as compact JSON texts, named `<prefix>-<k>` for
// k = 1..count. Node k lies in leaf domain floor((k-1) * L / count) (0-based,
// L = LeafDomains()), so nodes spread evenly and contiguously. Each node has:
//   - labels kubernetes.io/hostname=<name>, kubernetes.io/os=linux,
//     kubernetes.io/arch=amd64, node.kubernetes.io/instance-type=
//     copse-synthetic, and one label per topology level (TopologyLabelKey);
//   - status.capacity = status.allocatable = shape, plus "pods": "110"
//     unless the shape sets pods; quantities in canonical form;
//   - a Ready=True condition (reason KubeletReady), nodeInfo (kubeletVersion
//     "v1.32.0-copse", osImage, containerRuntimeVersion, architecture,
//     operatingSystem, kernelVersion), addresses InternalIP 10.x.y.z
//     (derived from k, unique up to 2^24 - 2 nodes) and Hostname.
// Errors (kInvalid): count < 0 or > 16777214, an empty shape, a negative
// quantity in the shape, a topology level name not in {zone, block, rack} or
// a count < 1, an empty or invalid name prefix.
Result<std::vector<std::string>> MakeSyntheticNodes(int count, const copse::ResourceList& shape,
                                                    const TopologySpec& topology,
                                                    std::string_view name_prefix = "node");

}  // namespace copse::apiserver
