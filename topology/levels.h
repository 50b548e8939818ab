#pragma once
// TopologyLevels: the ordered node label keys that define a cluster topology,
// outermost first (zone > block > rack > host), each with a short name.
//
// One model for the three ways topologies are written:
//   copse Topology (scheduling.copse.dev/v1alpha1)  spec.levels[]{nodeLabel}
//   Grove ClusterTopology (grove.io/v1alpha1)       spec.levels[]{domain, key}
//   KEP-4671 PodGroup topologyConstraints[]         topologyKey (one label key)
// A copse level has only a label key; its name is derived from the key (the
// part after the last '/', "copse.dev/rack" -> "rack") unless that would
// collide with another level's name, in which case the name is the full key.
// A Grove level's `domain` is its explicit name. PodGroups refer to a level by
// name ("rack") or by label key ("copse.dev/rack"): Find() accepts both.
//
//   Result<TopologyLevels> t = TopologyLevels::Create(
//       {{"", "topology.kubernetes.io/zone"}, {"", "copse.dev/rack"}}, {"spec.levels"});
//   t->Find("rack");             // 1
//   t->FindByLabel("copse.dev/rack");  // 1
//
// Validation errors are kInvalid and name the field, e.g.
// `spec.levels[2].nodeLabel: duplicate label key "copse.dev/rack" (also spec.levels[1])`.
//
// Thread-safety: an immutable value type once created; const methods are safe
// from many threads and allocation-free.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace copse::topology {

// Grove's ClusterTopology allows 7 levels; one spare.
inline constexpr size_t kMaxLevels = 8;

// Label keys of copse's synthetic topology (`copse local --topology`, README).
inline constexpr std::string_view kLabelBlock = "copse.dev/block";
inline constexpr std::string_view kLabelRack = "copse.dev/rack";

struct TopologyLevel {
  // Short name ("zone", "rack"). Empty in Create's input: derived from node_label.
  std::string name;
  // The node label key whose value names the level's domains.
  std::string node_label;

  bool operator==(const TopologyLevel&) const = default;
};

// How the fields are called in the object being validated (for error messages).
struct LevelFieldNames {
  std::string_view levels = "levels";         // e.g. "spec.levels"
  std::string_view node_label = "nodeLabel";  // Grove: "key"
  std::string_view name = "name";             // Grove: "domain"
};

class TopologyLevels {
 public:
  // No levels (only useful as a placeholder before Create).
  TopologyLevels() = default;

  // Validates and builds: 1..kMaxLevels levels; every node_label a valid,
  // distinct label key; explicit names non-empty valid label values, distinct,
  // and not equal to another level's label key. Empty names are derived.
  static Result<TopologyLevels> Create(std::vector<TopologyLevel> levels,
                                       const LevelFieldNames& fields = {});
  // A one-level topology for a KEP-4671 topologyKey (name derived from the key).
  static Result<TopologyLevels> FromTopologyKey(std::string_view key,
                                                std::string_view field = "topologyKey");
  // zone (topology.kubernetes.io/zone) > block (copse.dev/block) >
  // rack (copse.dev/rack) > host (kubernetes.io/hostname).
  static TopologyLevels Default();

  size_t size() const noexcept { return levels_.size(); }
  bool empty() const noexcept { return levels_.empty(); }
  const TopologyLevel& operator[](size_t i) const noexcept { return levels_[i]; }
  std::span<const TopologyLevel> levels() const noexcept { return levels_; }
  const std::string& name(size_t i) const noexcept { return levels_[i].name; }
  const std::string& node_label(size_t i) const noexcept { return levels_[i].node_label; }

  std::optional<uint32_t> FindByName(std::string_view name) const noexcept;
  std::optional<uint32_t> FindByLabel(std::string_view node_label) const noexcept;
  // A level reference as PodGroups write it: a name, else a label key.
  std::optional<uint32_t> Find(std::string_view name_or_label) const noexcept;
  // Find, or a kInvalid error naming `field`:
  // `spec.topologyConstraint.requiredTopologyLevel: unknown topology level "foo" (levels: zone,
  // rack)`.
  Result<uint32_t> Resolve(std::string_view name_or_label, std::string_view field) const;

  bool operator==(const TopologyLevels&) const = default;

 private:
  explicit TopologyLevels(std::vector<TopologyLevel> levels) : levels_(std::move(levels)) {}

  std::vector<TopologyLevel> levels_;
};

}  // namespace copse::topology
