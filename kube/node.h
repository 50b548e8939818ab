#pragma once
// core/v1 Node: allocatable/capacity, labels (meta.labels), taints,
// unschedulable, conditions and addresses; the rest stays in `raw`.
//
// Thread-safety: value types.

#include <string>
#include <string_view>
#include <vector>

#include "core/quantity.h"
#include "core/result.h"
#include "kube/codec.h"
#include "kube/object.h"

namespace copse::kube {

inline constexpr std::string_view kTaintEffectNoSchedule = "NoSchedule";
inline constexpr std::string_view kTaintEffectPreferNoSchedule = "PreferNoSchedule";
inline constexpr std::string_view kTaintEffectNoExecute = "NoExecute";

struct Taint {
  std::string key;
  std::string value;
  std::string effect;
  std::string time_added;  // RFC 3339; NoExecute taints only
  bool operator==(const Taint&) const = default;
};

struct NodeAddress {
  std::string type;  // "InternalIP", "ExternalIP", "Hostname", ...
  std::string address;
  bool operator==(const NodeAddress&) const = default;
};

struct NodeSpec {
  bool unschedulable = false;
  std::vector<Taint> taints;
  bool operator==(const NodeSpec&) const = default;
};

struct NodeStatus {
  ResourceList capacity;
  ResourceList allocatable;
  std::vector<Condition> conditions;
  std::vector<NodeAddress> addresses;
  bool operator==(const NodeStatus&) const = default;
};

class Node : public KubeObject {
 public:
  static constexpr std::string_view kApiVersion = "v1";
  static constexpr std::string_view kKind = "Node";

  NodeSpec spec;
  NodeStatus status;

  const Labels& labels() const noexcept { return meta.labels; }
  // Condition Ready is "True".
  bool IsReady() const noexcept;

  static Result<Node> Decode(std::string_view json);
  std::string Encode() const;
};

}  // namespace copse::kube
