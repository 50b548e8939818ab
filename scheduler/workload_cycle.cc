#include "scheduler/workload_cycle.h"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

namespace copse::scheduler {

bool WorkloadCycle::AddNominatedPods(const std::set<std::string>& members, int32_t priority) {
  bool added = false;
  Snapshot& snapshot = env_.snapshot();
  for (const auto& [node_name, other] : queue_.NominatedPods()) {
    if (members.contains(other->uid) || other->priority < priority) continue;
    // A nominated pod already assumed or bound is counted on its node by
    // the cache; adding it again would hide free room from this cycle.
    if (cache_.Knows(other->uid)) continue;
    std::optional<NodeIndex> node = snapshot.FindNode(node_name);
    if (!node.has_value()) continue;
    snapshot.AddPod(*node, other);
    added = true;
  }
  return added;
}

std::string WorkloadCycle::TopologyErrors(const GangSpec& spec) const {
  bool names_levels = !spec.topology_constraint.empty();
  for (const SubGroupSpec& group : spec.sub_groups) {
    names_levels = names_levels || !group.topology_constraint.empty();
  }
  if (!names_levels) return {};
  const std::vector<TopologyDefinition> known = topologies_.Definitions();
  GangValidationOptions validation;
  validation.topologies = &known;
  Status valid = ValidateGangSpec(spec, validation);
  return valid.ok() ? std::string() : valid.error().message;
}

bool WorkloadCycle::InOneRequiredDomain(const GangSpec& spec,
                                        std::span<const NodePods> steer) const {
  if (spec.topology_constraint.required_level.empty()) return true;
  const std::optional<std::vector<std::string>> keys = RequiredDomainLabels(spec, topologies_);
  if (!keys.has_value()) return false;
  const Snapshot& snapshot = env_.snapshot();
  std::optional<std::vector<std::string>> domain;
  for (const NodePods& planned : steer) {
    const std::optional<NodeIndex> node = snapshot.FindNode(planned.node);
    if (!node.has_value()) return false;
    const Labels& labels = snapshot.node_labels(*node);
    std::vector<std::string> values;
    for (const std::string& key : *keys) {
      auto it = labels.find(key);
      if (it == labels.end()) return false;
      values.push_back(it->second);
    }
    if (domain.has_value() && *domain != values) return false;
    domain = std::move(values);
  }
  return true;
}

BurstPlan WorkloadCycle::PlanBurst(std::span<const queue::PoppedUnit> units,
                                   const BurstPlanOptions& options) {
  std::vector<std::shared_ptr<const GangSpec>> specs;  // kept alive for the plan
  std::vector<std::vector<PodPtr>> members(units.size());
  std::vector<BurstPlanGang> gangs(units.size());
  for (size_t i = 0; i < units.size(); ++i) {
    const GangTracker::GroupInfo info = gangs_.Info(units[i].key());
    if (info.ownership != GangTracker::Ownership::kOurs) continue;  // no spec: no plan
    specs.push_back(info.spec);
    gangs[i].spec = info.spec.get();
    gangs[i].bound = info.bound;
    for (const PodPtr& pod : units[i].pods) {
      if (pod->terminating) continue;
      if (cache_.Knows(pod->uid)) {
        ++gangs[i].bound;
        continue;
      }
      members[i].push_back(pod);
    }
    gangs[i].members = members[i];
  }
  // The plan is made on the current cluster; the passes kept from before
  // were made on an older snapshot than the next cycle's sync will suggest.
  Snapshot& snapshot = env_.snapshot();
  cache_.UpdateSnapshot(snapshot);
  env_.gang_batch().Invalidate();
  env_.pod_batch().Invalidate();
  env_.set_gang_batch_rows(0);
  return scheduler::PlanBurst(snapshot, topologies_, gangs, options);
}

CycleOutcome WorkloadCycle::Run(const queue::PoppedUnit& unit, std::span<const NodePods> steer) {
  CycleOutcome out;
  const queue::UnitKey& key = unit.key();
  const GangTracker::GroupInfo info = gangs_.Info(key);
  // 1. The members to place.
  if (!info.spec || info.ownership != GangTracker::Ownership::kOurs) return out;
  const GangSpec& spec = *info.spec;
  const std::string group = spec.namespace_ + "/" + spec.name;
  std::vector<PodPtr> members;
  std::set<std::string> member_uids;
  size_t in_flight = 0;
  int32_t priority = std::numeric_limits<int32_t>::max();
  for (const PodPtr& pod : unit.pods) {
    if (pod->terminating) continue;
    if (cache_.Knows(pod->uid)) {
      ++in_flight;
      continue;
    }
    members.push_back(pod);
    member_uids.insert(pod->uid);
    priority = std::min(priority, pod->priority);
  }
  if (members.empty()) return out;
  const std::optional<size_t> profile = profiles_.IndexOf(members.front()->scheduler_name);
  if (!profile.has_value()) return out;
  out.profile = *profile;
  plugins::Framework& fw = profiles_.at(*profile);
  Snapshot& snapshot = env_.snapshot();
  plugins::Workspace& workspace = env_.workspace();
  const bool batching = env_.options().batch_pod_classes;
  env_.pod_batch().Invalidate();  // the single pods' pass; the gang pass is checked below
  auto fail = [&](CycleOutcome::Kind kind, std::string reason, std::string message) {
    out.kind = kind;
    out.reason = std::move(reason);
    out.message = std::move(message);
    for (const PodPtr& pod : members) out.failed.push_back({pod, std::nullopt});
    return std::move(out);
  };

  // 2. The spec against the Topologies known (e.g. one that does not exist
  // yet): retried after backoff.
  if (const std::string invalid = TopologyErrors(spec); !invalid.empty()) {
    out.invalid_spec = invalid;
    return fail(CycleOutcome::Kind::kUnschedulable, "Unschedulable",
                "pod group " + group + " is invalid: " + invalid);
  }

  // 3. Snapshot and nominated pods.
  const size_t already = info.bound + in_flight;
  const size_t required_total =
      spec.IsGang() ? static_cast<size_t>(std::max(0, spec.RequiredPods(kRootGroup))) : 0;
  const size_t required = required_total > already ? required_total - already : 0;
  const size_t num_nodes_before = snapshot.num_nodes();
  const size_t copied = cache_.UpdateSnapshot(snapshot);
  const bool nominated = AddNominatedPods(member_uids, priority);
  const bool topology_aware = NeedsTopologyPlacement(spec);

  // 4. Place. The previous gang's pass still holds when the sync only
  // rewrote the rows that gang's placement changed (with the same pods).
  PodClassReuse& gang_batch = env_.gang_batch();
  const bool reuse_gang_pass = batching && !topology_aware && !nominated &&
                               snapshot.num_nodes() == num_nodes_before &&
                               copied <= env_.gang_batch_rows();
  if (!reuse_gang_pass) gang_batch.Invalidate();
  env_.set_gang_batch_rows(0);
  GangPlacementOptions po;
  po.required = required;
  po.place_all = true;
  po.chunk_size = env_.options().filter_chunk_size;
  po.parallel_for = env_.parallel_for();
  po.start_index = env_.start_index();
  po.now = clock_.WallNow();
  // Topology constraints or subgroups: domains and the subgroup tree decide
  // (scheduler/topology_placement.h); members already bound pin the domains.
  TopologyPlacementOptions to;
  to.placement = po;
  // Nominated pods added to the snapshot are dropped by the next sync: a
  // pass made with them is not kept.
  if (batching && !topology_aware && !nominated) {
    po.reuse = &gang_batch;
    po.labels_matter = cache_.PodsWithAffinity() > 0;
  }
  to.find_bound_members = already > 0;
  to.workspace = &topology_workspace_;
  // A BurstPlan's nodes first (a plain gang placed whole, inside one domain
  // of its required level); when they do not hold, the usual placement.
  std::optional<GangPlacement> steered;
  if (!steer.empty() && already == 0 && required == members.size() && spec.sub_groups.empty() &&
      spec.topology_constraint.preferred_level.empty() && InOneRequiredDomain(spec, steer)) {
    gang_batch.Invalidate();
    GangPlacementOptions on_nodes = po;
    on_nodes.reuse = nullptr;
    steered = PlaceGangOnNodes(fw, snapshot, members, steer, on_nodes, env_.random(), workspace);
    if (steered->error || !steered->satisfied) {
      env_.Advance(steered->evaluated_nodes);
      steered.reset();
      cache_.UpdateSnapshot(snapshot);  // drop the failed attempt's edits
      if (nominated) AddNominatedPods(member_uids, priority);
    }
  }
  out.steered = steered.has_value();
  out.steer_failed = !steer.empty() && !steered.has_value();
  GangPlacement placement = steered.has_value() ? std::move(*steered)
                            : topology_aware
                                ? PlaceGangWithTopology(fw, snapshot, members, spec, topologies_,
                                                        to, env_.random(), workspace)
                                      .placement
                                : PlaceGang(fw, snapshot, members, po, env_.random(), workspace);
  po.reuse = nullptr;  // preemption dry runs place on edited snapshots: never kept
  out.batched = placement.reused;
  env_.Advance(placement.evaluated_nodes);
  out.rejection.unschedulable = queue::PluginSet::FromMask(placement.unschedulable_plugins);
  if (placement.error || !placement.satisfied || placement.placed.empty()) {
    gang_batch.Invalidate();  // the next sync drops this attempt's snapshot edits
  }

  if (placement.error) {
    out.rejection = {};
    return fail(CycleOutcome::Kind::kError, "SchedulerError", placement.failure);
  }

  // 5. All-or-nothing holds: at least `required` members have a node. The
  // snapshot rows edited by the placement are rewritten by the next sync.
  if (placement.satisfied && !placement.placed.empty()) {
    out.kind = CycleOutcome::Kind::kPlaced;
    std::set<NodeIndex> rows;
    for (const MemberPlacement& m : placement.placed) {
      rows.insert(m.node);
      out.placed.push_back({m.pod, snapshot.node_name(m.node), m.state});
    }
    if (!placement.unplaced.empty()) {
      gang_batch.Invalidate();
      out.reason = "Unschedulable";
      out.message = placement.failure;
      for (const PodPtr& pod : placement.unplaced) out.failed.push_back({pod, std::nullopt});
    } else {
      env_.set_gang_batch_rows(rows.size());
    }
    return out;
  }

  // 6. Nothing is assumed; nominations of members are cleared unless a
  // preemption below nominates them again.
  out.kind = CycleOutcome::Kind::kUnschedulable;
  out.reason = "Unschedulable";
  const size_t wanted = spec.IsGang() ? required_total : members.size() + already;
  out.message = "pod group " + group + ": " + std::to_string(placement.placed.size() + already) +
                "/" + std::to_string(wanted) + " pods fit";
  if (!placement.failure.empty()) out.message += "; " + placement.failure;
  std::map<std::string, std::string> nominations;  // uid -> node
  const bool may_preempt =
      spec.IsGang() && std::all_of(members.begin(), members.end(), [](const PodPtr& p) {
        return p->preemption_policy != PreemptionPolicy::kNever;
      });
  if (may_preempt) {
    size_t waiting = 0;
    for (const std::string& uid : gangs_.PendingVictims(key)) waiting += cache_.Knows(uid) ? 1 : 0;
    if (waiting > 0) {
      // The nominated placement is still being made room for: no new preemption.
      out.message +=
          " preemption: waiting for " + std::to_string(waiting) + " preempted pod(s) to terminate";
      for (const PodPtr& pod : members) {
        if (auto node = queue_.NominatedNodeOf(pod->uid)) nominations[pod->uid] = *node;
      }
    } else {
      cache_.UpdateSnapshot(snapshot);  // drop the failed placement's edits
      // Room nominated to other pods of at least this priority (other gangs'
      // pending preemptions) is not free: without them the dry run finds
      // that room, evicts nobody, and two gangs nominated onto the same
      // nodes wait for each other forever (as kube's preemption, which runs
      // its filters with the nominated pods added).
      AddNominatedPods(member_uids, priority);
      out.preemption_attempted = true;
      GangPlaceFn place;  // victims inside the domains the gang can be packed into
      if (topology_aware) {
        place = [&](Snapshot& scratch, std::span<const PodPtr> group_members) {
          return PlaceGangWithTopology(fw, scratch, group_members, spec, topologies_, to,
                                       env_.random(), workspace)
              .placement;
        };
      }
      const VictimRules rules(snapshot, gangs_, priority, member_uids);
      GangPreemption gp =
          SelectGangVictims(fw, snapshot, members, po, rules, env_.random(), workspace, place);
      if (gp.found && !gp.victims.empty()) {
        PreemptionPlan plan;
        plan.scheduler_name = fw.scheduler_name();
        plan.group = group;
        plan.victims = std::move(gp.victims);
        for (const MemberPlacement& m : gp.placement) {
          const std::string node = snapshot.node_name(m.node);
          plan.nominations.emplace_back(m.pod, node);
          nominations[m.pod->uid] = node;
        }
        out.message += " preemption: evicting " + std::to_string(plan.victims.size()) +
                       " lower-priority pod(s) to place the group";
        out.preemption = std::move(plan);
      } else if (!gp.found) {
        out.message += " " + gp.message;
      }
    }
  }
  for (const PodPtr& pod : members) {
    std::optional<std::string> node;
    if (auto it = nominations.find(pod->uid); it != nominations.end()) {
      node = it->second;
    } else {
      out.drop_nominations.push_back(pod);
      if (!pod->nominated_node_name.empty()) node = std::string();
    }
    out.failed.push_back({pod, std::move(node)});
  }
  return out;
}

}  // namespace copse::scheduler
