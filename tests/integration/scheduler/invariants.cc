#include <algorithm>
#include <limits>
#include <set>

#include "tests/integration/scheduler/harness.h"

namespace copse::scheduler::testing {

std::vector<std::string> CheckInvariants(const std::vector<kube::Node>& nodes,
                                         const std::vector<kube::Pod>& pods) {
  std::vector<std::string> problems;
  ResourceNames names;
  std::map<std::string, const kube::Node*> by_name;
  std::map<std::string, ResourceVector> used;
  std::map<std::string, std::vector<std::shared_ptr<const PodInfo>>> on_node;
  for (const kube::Node& node : nodes) by_name[node.meta.name] = &node;

  for (const kube::Pod& pod : pods) {
    if (pod.spec.node_name.empty() || IsTerminal(pod)) continue;
    auto info = ToPodInfo(pod, names);
    if (!info.ok()) {
      problems.push_back(pod.meta.name + ": " + info.error().message);
      continue;
    }
    const std::string& node_name = pod.spec.node_name;
    auto it = by_name.find(node_name);
    if (it == by_name.end()) {
      problems.push_back(pod.meta.name + " bound to unknown node " + node_name);
      continue;
    }
    const kube::Node& node = *it->second;
    used[node_name] += (*info)->requests;
    on_node[node_name].push_back(*info);
    if (!(*info)->MatchesRequiredNodeAffinity(node.meta.labels, node_name)) {
      problems.push_back(pod.meta.name + " on " + node_name +
                         " violates its node selector/affinity");
    }
    for (const kube::Taint& taint : node.spec.taints) {
      if (taint.effect == "PreferNoSchedule") continue;
      auto effect = ParseTaintEffect(taint.effect);
      if (!effect.ok()) continue;
      if (!TolerationsTolerateTaint((*info)->tolerations, taint.key, taint.value, *effect)) {
        problems.push_back(pod.meta.name + " on " + node_name + " does not tolerate taint " +
                           taint.key);
      }
    }
  }

  for (const auto& [node_name, total] : used) {
    const kube::Node& node = *by_name[node_name];
    auto alloc = ResourceVector::FromResourceList(node.status.allocatable, names);
    if (!alloc.ok()) continue;
    for (size_t r = 0; r < names.size(); ++r) {
      const auto id = static_cast<ResourceId>(r);
      if (id == kResourceIdPods) continue;
      if (total.Get(id) > alloc->Get(id)) {
        problems.push_back(node_name + " over allocatable in " + std::string(names.Name(id)) +
                           ": " + std::to_string(total.Get(id)) + " > " +
                           std::to_string(alloc->Get(id)));
      }
    }
    const size_t count = on_node[node_name].size();
    if (static_cast<int64_t>(count) > alloc->Get(kResourceIdPods)) {
      problems.push_back(node_name + " holds " + std::to_string(count) + " pods");
    }
  }

  for (const auto& [node_name, list] : on_node) {
    std::vector<HostPort> ports;
    for (const auto& pod : list) {
      for (const HostPort& port : pod->host_ports) {
        if (HostPortConflicts(port, ports)) {
          problems.push_back(node_name + ": host port " + std::to_string(port.port) +
                             " used twice");
        }
        ports.push_back(port);
      }
      // Required anti-affinity on hostname: no other matching pod on the node.
      for (const PodAffinityTerm& term : pod->required_anti_affinity) {
        if (term.topology_key != "kubernetes.io/hostname") continue;
        for (const auto& other : list) {
          if (other->uid == pod->uid) continue;
          if (term.Matches(other->namespace_name, other->labels, nullptr)) {
            problems.push_back(pod->name + " and " + other->name + " share " + node_name +
                               " despite anti-affinity");
          }
        }
      }
    }
  }

  // Zone spread (DoNotSchedule): for each constraint owner label set, count
  // matching bound pods per zone among zones with eligible nodes.
  std::set<std::string> zones;
  for (const kube::Node& node : nodes) {
    auto z = node.meta.labels.find("topology.kubernetes.io/zone");
    if (z != node.meta.labels.end()) zones.insert(z->second);
  }
  std::set<std::string> checked;
  for (const auto& [node_name, list] : on_node) {
    for (const auto& pod : list) {
      for (const TopologySpreadConstraint& c : pod->topology_spread_constraints) {
        if (c.topology_key != "topology.kubernetes.io/zone" ||
            c.when_unsatisfiable != UnsatisfiableConstraintAction::kDoNotSchedule ||
            !c.label_selector.has_value()) {
          continue;
        }
        const std::string key = c.label_selector->ToString();
        if (!checked.insert(key).second) continue;
        std::map<std::string, int> per_zone;
        for (const std::string& zone : zones) per_zone[zone] = 0;
        for (const auto& [n2, list2] : on_node) {
          auto zone = by_name[n2]->meta.labels.find("topology.kubernetes.io/zone");
          if (zone == by_name[n2]->meta.labels.end()) continue;
          for (const auto& other : list2) {
            if (other->namespace_name == pod->namespace_name &&
                c.label_selector->Matches(other->labels)) {
              ++per_zone[zone->second];
            }
          }
        }
        int lo = std::numeric_limits<int>::max(), hi = 0;
        for (const auto& [zone, n] : per_zone) {
          lo = std::min(lo, n);
          hi = std::max(hi, n);
        }
        if (hi - lo > c.max_skew) {
          problems.push_back("spread " + key + " skew " + std::to_string(hi - lo) + " > " +
                             std::to_string(c.max_skew));
        }
      }
    }
  }
  return problems;
}

}  // namespace copse::scheduler::testing
