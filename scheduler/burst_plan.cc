#include "scheduler/burst_plan.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <utility>

#include "core/resource_vector.h"
#include "topology/gang_packing.h"
#include "topology/levels.h"

namespace copse::scheduler {
namespace {

constexpr int64_t kMaxModelAmount = std::numeric_limits<int32_t>::max();

// The one extended resource `requests` asks a positive amount of, or nullopt.
std::optional<ResourceId> SoleExtendedResource(const ResourceVector& requests) {
  std::optional<ResourceId> found;
  for (size_t id = kNumBuiltinResources; id < requests.size(); ++id) {
    if (requests.Get(static_cast<ResourceId>(id)) <= 0) continue;
    if (found.has_value()) return std::nullopt;
    found = static_cast<ResourceId>(id);
  }
  return found;
}

// The node's domain at the required level: its label values from the
// outermost level down, '\0'-separated; nullopt when one is missing.
std::optional<std::string> DomainPath(const Snapshot& snapshot, NodeIndex n,
                                      const std::vector<std::string>& keys) {
  const Labels& labels = snapshot.node_labels(n);
  std::string path;
  for (const std::string& key : keys) {
    auto it = labels.find(key);
    if (it == labels.end()) return std::nullopt;
    path += it->second;
    path += '\0';
  }
  return path;
}

}  // namespace

std::optional<std::vector<std::string>> RequiredDomainLabels(const GangSpec& spec,
                                                             const TopologyCatalog& catalog) {
  const std::string& ref = spec.topology_constraint.required_level;
  if (ref.empty()) return std::nullopt;
  const std::string topology = spec.EffectiveTopology(kRootGroup);
  if (topology.empty()) {
    Result<topology::TopologyLevels> levels = topology::TopologyLevels::FromTopologyKey(ref);
    if (!levels.ok()) return std::nullopt;
    return std::vector<std::string>{levels->node_label(0)};
  }
  std::optional<topology::TopologyLevels> levels = catalog.Find(topology);
  if (!levels.has_value()) return std::nullopt;
  TopologyDefinition def;
  def.name = topology;
  for (size_t i = 0; i < levels->size(); ++i) def.levels.push_back(levels->node_label(i));
  std::optional<size_t> level = def.FindLevel(ref);
  if (!level.has_value()) return std::nullopt;
  def.levels.resize(*level + 1);
  return def.levels;
}

BurstPlan PlanBurst(const Snapshot& snapshot, const TopologyCatalog& catalog,
                    std::span<const BurstPlanGang> gangs, const BurstPlanOptions& options) {
  BurstPlan out;
  out.place.assign(gangs.size(), 0);
  out.nodes.resize(gangs.size());
  auto no_plan = [&](std::string reason) {
    out.reason = std::move(reason);
    return out;
  };
  if (options.budget <= Clock::Duration::zero()) return no_plan("no time budget");
  if (gangs.empty()) return no_plan("no gangs");
  if (gangs.size() > options.max_gangs) {
    return no_plan(std::to_string(gangs.size()) + " gangs, more than " +
                   std::to_string(options.max_gangs));
  }
  if (snapshot.num_nodes() > options.max_nodes) {
    return no_plan(std::to_string(snapshot.num_nodes()) + " nodes, more than " +
                   std::to_string(options.max_nodes));
  }

  // 1. The model's gangs.
  std::optional<ResourceId> resource;
  std::optional<std::vector<std::string>> domain_labels;
  std::vector<topology::PackingGang> model_gangs;
  for (size_t g = 0; g < gangs.size(); ++g) {
    const BurstPlanGang& gang = gangs[g];
    const std::string which = "gang " + std::to_string(g);
    if (gang.spec == nullptr) return no_plan(which + ": no spec");
    const GangSpec& spec = *gang.spec;
    if (!spec.IsGang() || !spec.sub_groups.empty() ||
        !spec.topology_constraint.preferred_level.empty()) {
      return no_plan(which + ": not a plain gang");
    }
    if (gang.bound > 0) return no_plan(which + ": members bound or in flight");
    if (gang.members.empty() || static_cast<int64_t>(gang.members.size()) != spec.min_member) {
      return no_plan(which + ": pending members differ from minMember");
    }
    const ResourceVector& requests = gang.members.front()->requests;
    for (const PodPtr& pod : gang.members) {
      if (!(pod->requests == requests)) return no_plan(which + ": members ask different requests");
    }
    const std::optional<ResourceId> id = SoleExtendedResource(requests);
    if (!id.has_value()) return no_plan(which + ": not exactly one extended resource");
    if (resource.has_value() && *resource != *id) return no_plan(which + ": another resource");
    resource = id;
    const int64_t per_pod = requests.Get(*id);
    if (per_pod > kMaxModelAmount) return no_plan(which + ": request too large");
    const bool required = !spec.topology_constraint.required_level.empty();
    if (required) {
      std::optional<std::vector<std::string>> labels = RequiredDomainLabels(spec, catalog);
      if (!labels.has_value()) return no_plan(which + ": required level not resolved");
      if (domain_labels.has_value() && *domain_labels != *labels) {
        return no_plan(which + ": another required level");
      }
      domain_labels = std::move(labels);
    }
    model_gangs.push_back(
        {static_cast<int32_t>(gang.members.size()), static_cast<int32_t>(per_pod), required});
  }

  // 2. The model's nodes: free amounts of the resource, domains at the level.
  std::vector<topology::PackingNode> model_nodes(snapshot.num_nodes());
  std::map<std::string, int32_t> domain_ids;
  for (NodeIndex n = 0; n < snapshot.num_nodes(); ++n) {
    topology::PackingNode& node = model_nodes[n];
    int64_t free = snapshot.allocatable(*resource, n) - snapshot.requested(*resource, n);
    if (snapshot.unschedulable(n)) free = 0;
    if (domain_labels.has_value()) {
      std::optional<std::string> path = DomainPath(snapshot, n, *domain_labels);
      if (!path.has_value()) {
        free = 0;
      } else {
        auto [it, added] =
            domain_ids.try_emplace(std::move(*path), static_cast<int32_t>(domain_ids.size()));
        node.rack = it->second;
      }
    }
    node.free = static_cast<int32_t>(std::clamp<int64_t>(free, 0, kMaxModelAmount));
  }

  // 3. Solve within the budget.
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(options.budget);
  const topology::PackingResult result = topology::OptimalGangs(
      model_nodes, model_gangs, std::numeric_limits<uint64_t>::max(), deadline);

  // 4. The plan, checked against the model (capacity, pod counts, one domain).
  std::vector<int64_t> free(model_nodes.size());
  for (size_t n = 0; n < model_nodes.size(); ++n) free[n] = model_nodes[n].free;
  for (size_t g = 0; g < gangs.size(); ++g) {
    if (!result.placed[g]) continue;
    int32_t pods = 0;
    std::optional<int32_t> rack;
    for (const topology::PodsOnNode& where : result.assignment[g]) {
      const auto n = static_cast<size_t>(where.node);
      free[n] -= int64_t{where.pods} * model_gangs[g].per_pod;
      pods += where.pods;
      if (free[n] < 0 || where.pods <= 0) return no_plan("the solver's plan is inconsistent");
      if (model_gangs[g].rack_required) {
        if (rack.has_value() && *rack != model_nodes[n].rack) {
          return no_plan("the solver's plan is inconsistent");
        }
        rack = model_nodes[n].rack;
      }
      out.nodes[g].push_back({snapshot.node_name(static_cast<NodeIndex>(n)), where.pods});
    }
    if (pods != model_gangs[g].pods) return no_plan("the solver's plan is inconsistent");
    out.place[g] = 1;
  }
  out.planned = true;
  out.proven = result.proven;
  return out;
}

GangPlacement PlaceGangOnNodes(const plugins::Framework& fw, Snapshot& snapshot,
                               std::span<const PodPtr> members, std::span<const NodePods> nodes,
                               const GangPlacementOptions& options, plugins::RandomSource& random,
                               plugins::Workspace& workspace) {
  GangPlacement out;
  size_t next = 0;
  bool ok = true;
  std::vector<NodeIndex> allowed(1);
  for (const NodePods& planned : nodes) {
    const std::optional<NodeIndex> node = snapshot.FindNode(planned.node);
    if (!node.has_value() || planned.pods <= 0 ||
        next + static_cast<size_t>(planned.pods) > members.size()) {
      out.failure = "the planned node " + planned.node + " is gone or the plan is wrong";
      ok = false;
      break;
    }
    allowed[0] = *node;
    GangPlacementOptions po = options;
    po.required = static_cast<size_t>(planned.pods);
    po.place_all = false;
    po.allowed_nodes = &allowed;
    po.reuse = nullptr;
    GangPlacement part =
        PlaceGang(fw, snapshot, members.subspan(next, po.required), po, random, workspace);
    out.evaluated_nodes += part.evaluated_nodes;
    out.unschedulable_plugins |= part.unschedulable_plugins;
    for (MemberPlacement& m : part.placed) out.placed.push_back(std::move(m));
    if (part.error) {
      out.error = true;
      out.failure = part.failure;
      ok = false;
      break;
    }
    if (!part.satisfied || part.placed.size() != po.required) {
      out.failure =
          part.failure.empty() ? "planned node " + planned.node + " did not fit" : part.failure;
      ok = false;
      break;
    }
    next += po.required;
  }
  out.satisfied = ok && next == members.size() && out.placed.size() == members.size();
  if (!out.satisfied) {
    for (const PodPtr& pod : members) {
      const bool placed = std::any_of(out.placed.begin(), out.placed.end(),
                                      [&](const MemberPlacement& m) { return m.pod == pod; });
      if (!placed) out.unplaced.push_back(pod);
    }
  }
  return out;
}

}  // namespace copse::scheduler
