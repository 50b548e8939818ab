#include "apiserver/synthetic.h"

#include <array>
#include <charconv>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <utility>

namespace copse::apiserver {
namespace {

using json = nlohmann::json;

struct LevelInfo {
  std::string_view name;
  std::string_view label_key;
};

// Outermost first; a topology lists a subset of these, in this order.
constexpr std::array<LevelInfo, 3> kLevels = {{
    {"zone", "topology.kubernetes.io/zone"},
    {"block", "copse.dev/block"},
    {"rack", "copse.dev/rack"},
}};

constexpr int kMaxCountPerLevel = 1'000'000;
constexpr int64_t kMaxLeafDomains = 1'000'000'000;
constexpr int kMaxNodes = (1 << 24) - 2;  // InternalIPs 10.0.0.1 .. 10.255.255.254

int LevelRank(std::string_view name) {
  for (size_t i = 0; i < kLevels.size(); ++i) {
    if (kLevels[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

Error Invalid(std::string message) { return MakeError(ErrorCode::kInvalid, std::move(message)); }

std::string Quote(std::string_view s) { return json(std::string(s)).dump(); }

// Validates a spec built in code (ParseTopology output passes trivially).
Status CheckTopology(const TopologySpec& topology) {
  int last_rank = -1;
  int64_t leaves = 1;
  for (const TopologyLevelSpec& level : topology.levels) {
    const int rank = LevelRank(level.name);
    if (rank < 0) {
      return Invalid("topology level " + Quote(level.name) +
                     " is unknown (want zone, block or rack)");
    }
    if (rank <= last_rank) {
      return Invalid("topology level " + Quote(level.name) +
                     " is out of order or repeated (levels go zone, block, rack)");
    }
    if (level.count < 1 || level.count > kMaxCountPerLevel) {
      return Invalid("topology level " + Quote(level.name) + " has count " +
                     std::to_string(level.count) + "; want 1.." +
                     std::to_string(kMaxCountPerLevel));
    }
    leaves *= level.count;
    if (leaves > kMaxLeafDomains) {
      return Invalid("topology has more than " + std::to_string(kMaxLeafDomains) + " domains");
    }
    last_rank = rank;
  }
  return Status::Ok();
}

// DNS-1123 label characters, for the name prefix.
bool ValidPrefix(std::string_view prefix) {
  if (prefix.empty() || prefix.size() > 240) return false;
  for (char c : prefix) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
    if (!ok) return false;
  }
  const char first = prefix.front();
  return (first >= 'a' && first <= 'z') || (first >= '0' && first <= '9');
}

}  // namespace

int64_t TopologySpec::LeafDomains() const noexcept {
  int64_t leaves = 1;
  for (const TopologyLevelSpec& level : levels) leaves *= level.count;
  return leaves;
}

std::string_view TopologyLabelKey(std::string_view level) {
  const int rank = LevelRank(level);
  return rank < 0 ? std::string_view() : kLevels[static_cast<size_t>(rank)].label_key;
}

Result<TopologySpec> ParseTopology(std::string_view text) {
  TopologySpec spec;
  if (Trim(text).empty()) return spec;
  int last_rank = -1;
  std::string_view last_name;
  int64_t leaves = 1;
  while (true) {
    const size_t comma = text.find(',');
    const std::string_view entry = Trim(text.substr(0, comma));
    const std::string prefix = "topology entry " + Quote(entry) + ": ";
    const size_t eq = entry.find('=');
    if (eq == std::string_view::npos) {
      return Invalid(prefix + "expected <level>=<count>, e.g. zone=2");
    }
    const std::string_view name = Trim(entry.substr(0, eq));
    const std::string_view count_text = Trim(entry.substr(eq + 1));
    const int rank = LevelRank(name);
    if (rank < 0) {
      return Invalid(prefix + "unknown level " + Quote(name) + " (want zone, block or rack)");
    }
    if (rank == last_rank) {
      return Invalid(prefix + "level " + Quote(name) + " given twice");
    }
    if (rank < last_rank) {
      return Invalid(prefix + "level " + Quote(name) + " must come before " + Quote(last_name) +
                     " (levels go outermost first: zone, block, rack)");
    }
    int count = 0;
    auto [ptr, ec] =
        std::from_chars(count_text.data(), count_text.data() + count_text.size(), count);
    if (count_text.empty() || ec != std::errc() || ptr != count_text.data() + count_text.size() ||
        count < 1 || count > kMaxCountPerLevel) {
      return Invalid(prefix + "count must be an integer between 1 and " +
                     std::to_string(kMaxCountPerLevel));
    }
    leaves *= count;
    if (leaves > kMaxLeafDomains) {
      return Invalid(prefix + "the topology would have more than " +
                     std::to_string(kMaxLeafDomains) + " domains");
    }
    spec.levels.push_back(TopologyLevelSpec{std::string(name), count});
    last_rank = rank;
    last_name = kLevels[static_cast<size_t>(rank)].name;
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return spec;
}

Result<std::vector<std::string>> MakeSyntheticNodes(int count, const copse::ResourceList& shape,
                                                    const TopologySpec& topology,
                                                    std::string_view name_prefix) {
  if (count < 0 || count > kMaxNodes) {
    return Invalid("node count " + std::to_string(count) + " is out of range (0.." +
                   std::to_string(kMaxNodes) + ")");
  }
  if (shape.empty()) return Invalid("node shape is empty: give at least one resource, e.g. cpu=64");
  for (const auto& [name, quantity] : shape) {
    if (name.empty()) return Invalid("node shape has a resource with an empty name");
    if (quantity.Sign() < 0) {
      return Invalid("node shape resource " + Quote(name) + " is negative (" + quantity.ToString() +
                     ")");
    }
  }
  if (Status s = CheckTopology(topology); !s.ok()) return s.error();
  if (!ValidPrefix(name_prefix)) {
    return Invalid("node name prefix " + Quote(name_prefix) +
                   " must be lower case alphanumerics, '-' or '.', starting with an alphanumeric");
  }

  json resources = json::object();
  for (const auto& [name, quantity] : shape) resources[name] = quantity.CanonicalString();
  if (!resources.contains(kResourcePods)) resources[std::string(kResourcePods)] = "110";

  const int64_t leaves = topology.LeafDomains();
  std::vector<std::string> nodes;
  nodes.reserve(static_cast<size_t>(count));
  std::vector<int64_t> index(topology.levels.size());
  for (int k = 1; k <= count; ++k) {
    const std::string name = std::string(name_prefix) + "-" + std::to_string(k);
    json labels = {{"kubernetes.io/hostname", name},
                   {"kubernetes.io/os", "linux"},
                   {"kubernetes.io/arch", "amd64"},
                   {"node.kubernetes.io/instance-type", "copse-synthetic"}};
    // Leaf domain of node k, then its per-level indices (mixed radix,
    // innermost level fastest).
    int64_t leaf = (static_cast<int64_t>(k) - 1) * leaves / count;
    for (size_t i = topology.levels.size(); i-- > 0;) {
      index[i] = leaf % topology.levels[i].count;
      leaf /= topology.levels[i].count;
    }
    std::string suffix;
    for (size_t i = 0; i < topology.levels.size(); ++i) {
      suffix += "-" + std::to_string(index[i] + 1);
      labels[std::string(TopologyLabelKey(topology.levels[i].name))] =
          topology.levels[i].name + suffix;
    }
    const std::string ip = "10." + std::to_string((k >> 16) & 0xff) + "." +
                           std::to_string((k >> 8) & 0xff) + "." + std::to_string(k & 0xff);
    json node = {{"apiVersion", "v1"},
                 {"kind", "Node"},
                 {"metadata", {{"name", name}, {"labels", std::move(labels)}}},
                 {"spec", json::object()},
                 {"status",
                  {{"capacity", resources},
                   {"allocatable", resources},
                   {"conditions", json::array({{{"type", "Ready"},
                                                {"status", "True"},
                                                {"reason", "KubeletReady"},
                                                {"message", "kubelet is posting ready status"}}})},
                   {"addresses", json::array({{{"type", "InternalIP"}, {"address", ip}},
                                              {{"type", "Hostname"}, {"address", name}}})},
                   {"nodeInfo",
                    {{"kubeletVersion", "v1.32.0-copse"},
                     {"kubeProxyVersion", "v1.32.0-copse"},
                     {"osImage", "copse synthetic node"},
                     {"containerRuntimeVersion", "copse://1.0.0"},
                     {"kernelVersion", "6.1.0-copse"},
                     {"operatingSystem", "linux"},
                     {"architecture", "amd64"},
                     {"machineID", ""},
                     {"systemUUID", ""},
                     {"bootID", ""}}}}}};
    nodes.push_back(node.dump());
  }
  return nodes;
}

}  // namespace copse::apiserver
