#include "scheduler/victim_rules.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace copse::scheduler {

VictimRules::VictimRules(const Snapshot& snapshot, const GangTracker& gangs,
                         int32_t preemptor_priority, std::set<std::string> exclude)
    : priority_(preemptor_priority), exclude_(std::move(exclude)) {
  for (NodeIndex n = 0; n < snapshot.num_nodes(); ++n) {
    for (const PodRef& pod : snapshot.pods(n)) {
      if (pod->group_kind == PodInfo::GroupKind::kNone || pod->pod_group.empty()) continue;
      // Leaving anyway (terminating, or evicted by an earlier cycle and not
      // yet gone): counts for no minimum.
      if (pod->terminating || gangs.Evicting(pod->uid)) continue;
      auto [it, inserted] =
          by_member_.try_emplace(PodGroupRef{pod->group_kind, pod->namespace_name, pod->pod_group});
      if (inserted) {
        const queue::UnitKey key =
            GroupUnitKey(pod->group_kind, pod->namespace_name, pod->pod_group);
        Group& group = groups_[key.ToString()];
        group.spec = gangs.Spec(key);
        it->second = &group;
      }
      it->second->pods.emplace_back(n, pod);
    }
  }
  for (auto& [key, group] : groups_) {
    group.whole_allowed =
        group.spec != nullptr && group.spec->preemptibility == Preemptibility::kPreemptible &&
        std::all_of(group.pods.begin(), group.pods.end(), [&](const auto& entry) {
          return entry.second->priority < priority_ && !exclude_.contains(entry.second->uid);
        });
  }
}

const VictimRules::Group* VictimRules::Find(const std::string& key) const {
  auto it = groups_.find(key);
  return it == groups_.end() ? nullptr : &it->second;
}

const VictimRules::Group* VictimRules::FindOf(const PodInfo& pod) const {
  if (pod.group_kind == PodInfo::GroupKind::kNone || pod.pod_group.empty()) return nullptr;
  auto it = by_member_.find(PodGroupRef{pod.group_kind, pod.namespace_name, pod.pod_group});
  return it == by_member_.end() ? nullptr : it->second;
}

std::string VictimRules::GroupOf(const PodInfo& pod) const {
  if (pod.group_kind == PodInfo::GroupKind::kNone || pod.pod_group.empty()) return {};
  return GroupUnitKey(pod.group_kind, pod.namespace_name, pod.pod_group).ToString();
}

VictimRules::Unit VictimRules::UnitOf(const PodInfo& pod) const {
  if (pod.priority >= priority_ || exclude_.contains(pod.uid)) return Unit::kNever;
  const Group* group = FindOf(pod);
  if (group == nullptr || group->spec == nullptr) return Unit::kPod;
  const GangSpec& spec = *group->spec;
  if (spec.preemptibility == Preemptibility::kNonPreemptible) return Unit::kNever;
  if (spec.disruption_mode == DisruptionMode::kPodGroup) {
    return group->whole_allowed ? Unit::kWhole : Unit::kNever;
  }
  return Unit::kMember;
}

const std::vector<std::pair<NodeIndex, PodRef>>& VictimRules::GroupPods(
    const std::string& key) const {
  static const std::vector<std::pair<NodeIndex, PodRef>> kNone;
  const Group* group = Find(key);
  return group == nullptr ? kNone : group->pods;
}

bool VictimRules::WholeAllowed(const std::string& key) const {
  const Group* group = Find(key);
  return group != nullptr && group->whole_allowed;
}

bool VictimRules::SatisfiedWithout(const std::string& key,
                                   const std::set<std::string>& removed) const {
  const Group* group = Find(key);
  if (group == nullptr || group->spec == nullptr) return true;
  std::map<std::string, int32_t, std::less<>> counts;
  for (const auto& [node, pod] : group->pods) {
    if (!removed.contains(pod->uid)) ++counts[pod->sub_group];
  }
  return group->spec->IsSatisfied(kRootGroup, counts);
}

std::vector<PodRef> VictimRules::Removable(std::span<const PodRef> candidates) const {
  std::vector<PodRef> out;
  // Per Pod-mode group met so far: the pods it keeps per subgroup as its
  // candidates are taken (what SatisfiedWithout counts), and which pods
  // count at all. Kept as counts, since an attempt asks this for every pod
  // of the cluster.
  struct Left {
    std::map<std::string, int32_t, std::less<>> per_sub_group;
    std::unordered_set<const PodInfo*> counted;
  };
  std::unordered_map<const Group*, Left> left;
  for (const PodRef& pod : candidates) {
    switch (UnitOf(*pod)) {
      case Unit::kNever:
        continue;
      case Unit::kPod:
      case Unit::kWhole:
        out.push_back(pod);
        continue;
      case Unit::kMember: {
        const Group& group = *FindOf(*pod);  // a member has a group with a spec
        if (group.whole_allowed) {
          out.push_back(pod);
          continue;
        }
        auto [it, inserted] = left.try_emplace(&group);
        Left& l = it->second;
        if (inserted) {
          for (const auto& [node, member] : group.pods) {
            ++l.per_sub_group[member->sub_group];
            l.counted.insert(member.get());
          }
        }
        // A pod that counts for no minimum (leaving anyway) costs the group nothing.
        if (!l.counted.contains(pod.get())) {
          if (group.spec->IsSatisfied(kRootGroup, l.per_sub_group)) out.push_back(pod);
          continue;
        }
        int32_t& kept = l.per_sub_group[pod->sub_group];
        --kept;
        if (group.spec->IsSatisfied(kRootGroup, l.per_sub_group)) {
          out.push_back(pod);
        } else {
          ++kept;
        }
        continue;
      }
    }
  }
  return out;
}

bool VictimRules::Complete(std::vector<PodRef>& victims) const {
  std::map<std::string, std::set<std::string>> taken;  // group -> victim uids
  for (const PodRef& pod : victims) {
    if (const std::string key = GroupOf(*pod); Find(key) != nullptr) taken[key].insert(pod->uid);
  }
  for (const auto& [key, uids] : taken) {
    const Group& group = *Find(key);
    if (group.spec == nullptr) continue;
    const bool whole_only = group.spec->disruption_mode == DisruptionMode::kPodGroup;
    if (!whole_only && SatisfiedWithout(key, uids)) continue;
    if (!group.whole_allowed) return false;
    for (const auto& [node, pod] : group.pods) {
      if (!uids.contains(pod->uid)) victims.push_back(pod);
    }
  }
  return true;
}

}  // namespace copse::scheduler
