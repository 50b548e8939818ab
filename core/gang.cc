#include "core/gang.h"

#include <algorithm>
#include <utility>

#include "core/labels.h"

namespace copse {

namespace {

std::string Quote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
  return out;
}

std::string JoinParts(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

std::string_view NamePart(std::string_view key) noexcept {
  size_t slash = key.rfind('/');
  return slash == std::string_view::npos ? key : key.substr(slash + 1);
}

// Where the fields of a node live in the source object.
class FieldPaths {
 public:
  explicit FieldPaths(GangSource source) : source_(source) {}

  // "spec" for the root, "spec.subGroups[3]" for a subgroup.
  static std::string Node(std::optional<size_t> index) {
    if (!index.has_value()) return "spec";
    return "spec.subGroups[" + std::to_string(*index) + "]";
  }
  std::string MinMember(std::optional<size_t> index) const {
    if (!index.has_value() && source_ == GangSource::kWorkloadPodGroup) {
      return "spec.schedulingPolicy.gang.minCount";
    }
    return Node(index) + ".minMember";
  }
  std::string MinSubGroup(std::optional<size_t> index) const {
    return Node(index) + ".minSubGroup";
  }
  // field: 0 topology, 1 required level, 2 preferred level.
  std::string Constraint(std::optional<size_t> index, int field) const {
    if (!index.has_value() && source_ == GangSource::kWorkloadPodGroup) {
      // v1alpha2 has only a required level: the topologyKey.
      return field == 1 ? "spec.schedulingConstraints.topologyConstraints[0].topologyKey"
                        : "spec.schedulingConstraints.topologyConstraints[0]";
    }
    static constexpr const char* kFields[] = {".topology", ".requiredTopologyLevel",
                                              ".preferredTopologyLevel"};
    return Node(index) + ".topologyConstraint" + kFields[field];
  }

 private:
  GangSource source_;
};

const TopologyDefinition* FindTopology(const std::vector<TopologyDefinition>& topologies,
                                       std::string_view name) noexcept {
  for (const TopologyDefinition& topology : topologies) {
    if (topology.name == name) return &topology;
  }
  return nullptr;
}

std::string LevelList(const TopologyDefinition& topology) {
  std::vector<std::string> quoted;
  quoted.reserve(topology.levels.size());
  for (const std::string& level : topology.levels) quoted.push_back(Quote(level));
  return quoted.empty() ? "no levels" : "levels " + JoinParts(quoted, ", ");
}

// The error for a level that does not resolve in `topology`, or "".
std::string LevelError(const TopologyDefinition& topology, std::string_view level) {
  if (topology.FindLevel(level).has_value()) return {};
  std::vector<std::string> matches;
  for (const std::string& candidate : topology.levels) {
    if (NamePart(candidate) == level) matches.push_back(Quote(candidate));
  }
  if (matches.size() > 1) {
    return "Invalid value: " + Quote(level) + ": matches more than one level of topology " +
           Quote(topology.name) + ": " + JoinParts(matches, ", ");
  }
  return "Not found: " + Quote(level) + ": topology " + Quote(topology.name) + " has " +
         LevelList(topology);
}

}  // namespace

std::string_view GangSourceName(GangSource source) noexcept {
  switch (source) {
    case GangSource::kWorkloadPodGroup:
      return "scheduling.k8s.io/v1alpha2 PodGroup";
    case GangSource::kCopsePodGroup:
      return "scheduling.copse.dev/v1alpha1 PodGroup";
  }
  return "unknown";
}

std::string_view GangPolicyName(GangPolicy policy) noexcept {
  return policy == GangPolicy::kBasic ? "basic" : "gang";
}

std::string_view PreemptibilityName(Preemptibility value) noexcept {
  switch (value) {
    case Preemptibility::kPreemptible:
      return "preemptible";
    case Preemptibility::kNonPreemptible:
      return "non-preemptible";
    case Preemptibility::kSemiPreemptible:
      return "semi-preemptible";
  }
  return "unknown";
}

Result<Preemptibility> ParsePreemptibility(std::string_view text) {
  if (text.empty() || text == "preemptible") return Preemptibility::kPreemptible;
  if (text == "non-preemptible") return Preemptibility::kNonPreemptible;
  if (text == "semi-preemptible") return Preemptibility::kSemiPreemptible;
  return MakeError(ErrorCode::kInvalid,
                   "Unsupported value: " + Quote(text) +
                       ": supported values: \"preemptible\", \"non-preemptible\", "
                       "\"semi-preemptible\"");
}

std::string_view DisruptionModeName(DisruptionMode mode) noexcept {
  return mode == DisruptionMode::kPod ? "Pod" : "PodGroup";
}

Result<DisruptionMode> ParseDisruptionMode(std::string_view text) {
  if (text.empty() || text == "Pod") return DisruptionMode::kPod;
  if (text == "PodGroup") return DisruptionMode::kPodGroup;
  return MakeError(ErrorCode::kInvalid, "Unsupported value: " + Quote(text) +
                                            ": supported values: \"Pod\", \"PodGroup\"");
}

// ---------------------------------------------------------------- the tree

std::string GangSpec::Key() const {
  if (namespace_.empty()) return name;
  return namespace_ + "/" + name;
}

std::optional<size_t> GangSpec::FindSubGroup(std::string_view node) const noexcept {
  if (node.empty()) return std::nullopt;
  for (size_t i = 0; i < sub_groups.size(); ++i) {
    if (sub_groups[i].name == node) return i;
  }
  return std::nullopt;
}

std::vector<size_t> GangSpec::Children(std::string_view node) const {
  std::vector<size_t> out;
  for (size_t i = 0; i < sub_groups.size(); ++i) {
    // A subgroup that names itself as parent is not its own child.
    if (sub_groups[i].parent == node && sub_groups[i].name != node) out.push_back(i);
  }
  return out;
}

int32_t GangSpec::MinSubGroup(std::string_view node) const {
  std::vector<size_t> children = Children(node);
  const std::optional<int32_t>* value = &min_sub_group;
  if (!node.empty()) {
    std::optional<size_t> index = FindSubGroup(node);
    if (!index.has_value()) return 0;
    value = &sub_groups[*index].min_sub_group;
  }
  if (!value->has_value()) return static_cast<int32_t>(children.size());
  return **value;
}

std::vector<size_t> GangSpec::Subtree(std::string_view node) const {
  std::vector<size_t> out;
  std::vector<bool> seen(sub_groups.size(), false);
  // Explicit stack of (index) in reverse child order so pre-order comes out right.
  std::vector<size_t> stack;
  auto push_children = [&](std::string_view parent) {
    std::vector<size_t> children = Children(parent);
    for (auto it = children.rbegin(); it != children.rend(); ++it) stack.push_back(*it);
  };
  if (node.empty()) {
    push_children(node);
  } else {
    std::optional<size_t> index = FindSubGroup(node);
    if (!index.has_value()) return out;
    stack.push_back(*index);
  }
  while (!stack.empty()) {
    size_t index = stack.back();
    stack.pop_back();
    if (seen[index]) continue;  // a cycle (or a duplicate name): cut it
    seen[index] = true;
    out.push_back(index);
    push_children(sub_groups[index].name);
  }
  return out;
}

std::vector<size_t> GangSpec::DepthFirstOrder() const { return Subtree(kRootGroup); }

std::vector<size_t> GangSpec::Leaves() const {
  std::vector<size_t> out;
  for (size_t index : DepthFirstOrder()) {
    if (Children(sub_groups[index].name).empty()) out.push_back(index);
  }
  return out;
}

int32_t GangSpec::MinMember(std::string_view node) const noexcept {
  if (node.empty()) return min_member;
  std::optional<size_t> index = FindSubGroup(node);
  return index.has_value() ? sub_groups[*index].min_member : 0;
}

namespace {

struct ChildCost {
  size_t index = 0;  // into sub_groups
  int64_t pods = 0;  // RequiredPods of the child
};

int64_t RequiredPodsAt(const GangSpec& spec, std::string_view node, size_t depth);

// The MinSubGroup(node) children needing the fewest pods (ties in list
// order), in list order, with what each needs.
std::vector<ChildCost> CheapestChildren(const GangSpec& spec, std::string_view node, size_t depth) {
  std::vector<ChildCost> children;
  for (size_t child : spec.Children(node)) {
    children.push_back({child, RequiredPodsAt(spec, spec.sub_groups[child].name, depth + 1)});
  }
  const size_t required = static_cast<size_t>(std::max(0, spec.MinSubGroup(node)));
  if (required >= children.size()) return children;
  std::stable_sort(children.begin(), children.end(),
                   [](const ChildCost& a, const ChildCost& b) { return a.pods < b.pods; });
  children.resize(required);
  std::sort(children.begin(), children.end(),
            [](const ChildCost& a, const ChildCost& b) { return a.index < b.index; });
  return children;
}

int64_t RequiredPodsAt(const GangSpec& spec, std::string_view node, size_t depth) {
  if (depth > spec.sub_groups.size()) return 0;  // a cycle: cut it
  int64_t own = spec.MinMember(node);
  int64_t children = 0;
  for (const ChildCost& child : CheapestChildren(spec, node, depth)) children += child.pods;
  return std::max(own, children);
}

}  // namespace

std::vector<size_t> GangSpec::RequiredChildren(std::string_view node) const {
  std::vector<size_t> out;
  for (const ChildCost& child : CheapestChildren(*this, node, 0)) out.push_back(child.index);
  return out;
}

namespace {

// What the children of `node` hold (spec 002 Option 2): a leaf holds its
// min_member pods, an inner subgroup max(its min_member, what its children
// hold). 0 for a node without children.
int64_t HeldBelow(const GangSpec& spec, std::string_view node, size_t depth) {
  if (depth > spec.sub_groups.size()) return 0;  // a cycle: cut it
  int64_t held = 0;
  for (size_t child : spec.Children(node)) {
    const SubGroupSpec& group = spec.sub_groups[child];
    const int64_t below = HeldBelow(spec, group.name, depth + 1);
    held += std::max<int64_t>(std::max(0, group.min_member), below);
  }
  return held;
}

}  // namespace

int32_t GangSpec::RequiredPods(std::string_view node) const {
  if (node.empty() && !IsGang()) return 0;
  int64_t pods = RequiredPodsAt(*this, node, 0);
  return static_cast<int32_t>(std::min<int64_t>(pods, INT32_MAX));
}

namespace {

int64_t PodsBelow(const GangSpec& spec, std::string_view node,
                  const std::map<std::string, int32_t, std::less<>>& pods) {
  int64_t total = 0;
  if (node.empty()) {
    for (const auto& [name, count] : pods) total += count;
    return total;
  }
  for (size_t index : spec.Subtree(node)) {
    auto it = pods.find(spec.sub_groups[index].name);
    if (it != pods.end()) total += it->second;
  }
  return total;
}

bool SatisfiedAt(const GangSpec& spec, std::string_view node,
                 const std::map<std::string, int32_t, std::less<>>& pods, size_t depth) {
  if (depth > spec.sub_groups.size()) return true;  // a cycle: cut it
  if (PodsBelow(spec, node, pods) < spec.MinMember(node)) return false;
  int32_t satisfied = 0;
  for (size_t child : spec.Children(node)) {
    satisfied += SatisfiedAt(spec, spec.sub_groups[child].name, pods, depth + 1) ? 1 : 0;
  }
  return satisfied >= spec.MinSubGroup(node);
}

}  // namespace

bool GangSpec::IsSatisfied(
    std::string_view node,
    const std::map<std::string, int32_t, std::less<>>& pods_by_sub_group) const {
  if (node.empty() && !IsGang()) return true;
  return SatisfiedAt(*this, node, pods_by_sub_group, 0);
}

const TopologyConstraint& GangSpec::ConstraintOf(std::string_view node) const {
  if (node.empty()) return topology_constraint;
  std::optional<size_t> index = FindSubGroup(node);
  if (!index.has_value()) {
    static const TopologyConstraint kNone;
    return kNone;
  }
  return sub_groups[*index].topology_constraint;
}

std::string GangSpec::EffectiveTopology(std::string_view node) const {
  std::string_view current = node;
  for (size_t steps = 0; steps <= sub_groups.size() + 1; ++steps) {
    if (current.empty()) return topology_constraint.topology;
    std::optional<size_t> index = FindSubGroup(current);
    if (!index.has_value()) return {};
    const SubGroupSpec& group = sub_groups[*index];
    if (!group.topology_constraint.topology.empty()) return group.topology_constraint.topology;
    current = group.parent;
  }
  return {};  // a cycle
}

std::optional<size_t> TopologyDefinition::FindLevel(std::string_view level) const noexcept {
  if (level.empty()) return std::nullopt;
  for (size_t i = 0; i < levels.size(); ++i) {
    if (levels[i] == level) return i;
  }
  std::optional<size_t> found;
  for (size_t i = 0; i < levels.size(); ++i) {
    if (NamePart(levels[i]) != level) continue;
    if (found.has_value()) return std::nullopt;  // ambiguous
    found = i;
  }
  return found;
}

// ---------------------------------------------------------------- validation

namespace {

class Validator {
 public:
  Validator(const GangSpec& spec, const GangValidationOptions& options)
      : spec_(spec), options_(options), paths_(spec.source) {}

  std::vector<std::string> Run() {
    CheckRoot();
    CheckNames();
    CheckParents();
    for (size_t i = 0; i < spec_.sub_groups.size(); ++i) CheckSubGroup(i);
    CheckHeld();
    CheckPodCounts();
    CheckTopology(std::nullopt);
    for (size_t i = 0; i < spec_.sub_groups.size(); ++i) CheckTopology(i);
    return std::move(errors_);
  }

 private:
  void Add(const std::string& path, const std::string& message) {
    errors_.push_back(path + ": " + message);
  }

  void CheckRoot() {
    const std::string path = paths_.MinMember(std::nullopt);
    if (spec_.IsGang()) {
      if (spec_.min_member < 1) {
        Add(path, "Invalid value: " + std::to_string(spec_.min_member) + ": must be >= 1");
      }
    } else {
      if (spec_.min_member != 0) {
        Add(path, "Invalid value: " + std::to_string(spec_.min_member) +
                      ": must be 0 with the basic scheduling policy");
      }
      if (spec_.disruption_mode == DisruptionMode::kPodGroup) {
        Add("spec.disruptionMode",
            "Invalid value: \"PodGroup\": a basic (non-gang) group can only be disrupted per Pod");
      }
    }
    CheckMinSubGroup(std::nullopt, spec_.min_sub_group, spec_.Children(kRootGroup).size());
  }

  void CheckMinSubGroup(std::optional<size_t> index, const std::optional<int32_t>& value,
                        size_t children) {
    if (!value.has_value()) return;
    const std::string path = paths_.MinSubGroup(index);
    if (*value < 0) {
      Add(path, "Invalid value: " + std::to_string(*value) + ": must be >= 0");
      return;
    }
    if (static_cast<size_t>(*value) > children) {
      Add(path, "Invalid value: " + std::to_string(*value) + ": must be <= " +
                    std::to_string(children) + " (the number of direct child subgroups)");
    }
  }

  void CheckNames() {
    std::map<std::string_view, size_t, std::less<>> seen;
    for (size_t i = 0; i < spec_.sub_groups.size(); ++i) {
      const std::string& name = spec_.sub_groups[i].name;
      const std::string path = FieldPaths::Node(i) + ".name";
      if (name.empty()) {
        Add(path, "Required value");
        continue;
      }
      if (Status valid = ValidateLabelValue(name); !valid.ok()) {
        Add(path, "Invalid value: " + Quote(name) + ": must be a valid label value (" +
                      valid.error().message + ")");
      }
      if (!seen.emplace(name, i).second) Add(path, "Duplicate value: " + Quote(name));
    }
  }

  void CheckParents() {
    const size_t n = spec_.sub_groups.size();
    std::vector<bool> parent_known(n, true);
    for (size_t i = 0; i < n; ++i) {
      const SubGroupSpec& group = spec_.sub_groups[i];
      if (group.parent.empty()) continue;
      if (group.parent == group.name) {
        Add(FieldPaths::Node(i) + ".parent", "Invalid value: " + Quote(group.parent) +
                                                 ": parent cycle: " + group.name + " -> " +
                                                 group.name);
        parent_known[i] = false;
        continue;
      }
      if (!spec_.FindSubGroup(group.parent).has_value()) {
        Add(FieldPaths::Node(i) + ".parent", "Not found: " + Quote(group.parent));
        parent_known[i] = false;
      }
    }
    // Longer cycles: follow parents from every subgroup; a cycle is reported
    // once, at its member with the smallest index.
    for (size_t i = 0; i < n; ++i) {
      if (!parent_known[i]) continue;
      std::vector<size_t> path{i};
      size_t current = i;
      bool cycle = false;
      for (size_t steps = 0; steps < n; ++steps) {
        const std::string& parent = spec_.sub_groups[current].parent;
        if (parent.empty() || !parent_known[current]) break;
        std::optional<size_t> next = spec_.FindSubGroup(parent);
        if (!next.has_value()) break;
        if (*next == i) {
          cycle = true;
          break;
        }
        if (std::find(path.begin(), path.end(), *next) != path.end()) break;  // not i's cycle
        path.push_back(*next);
        current = *next;
      }
      if (!cycle || *std::min_element(path.begin(), path.end()) != i) continue;
      std::string chain;
      for (size_t member : path) chain += spec_.sub_groups[member].name + " -> ";
      chain += spec_.sub_groups[i].name;
      Add(FieldPaths::Node(i) + ".parent",
          "Invalid value: " + Quote(spec_.sub_groups[i].parent) + ": parent cycle: " + chain);
    }
  }

  void CheckSubGroup(size_t i) {
    const SubGroupSpec& group = spec_.sub_groups[i];
    // A subgroup without a name cannot have children (CheckNames reported it).
    const size_t children = group.name.empty() ? 0 : spec_.Children(group.name).size();
    const bool leaf = children == 0;
    const int32_t minimum = leaf ? 1 : 0;
    if (group.min_member < minimum) {
      Add(paths_.MinMember(i), "Invalid value: " + std::to_string(group.min_member) +
                                   ": must be >= " + std::to_string(minimum) +
                                   (leaf ? " (a subgroup without subgroups needs pods)" : ""));
    }
    CheckMinSubGroup(i, group.min_sub_group, children);
  }

  // Spec 002 Option 2: a node's minMember counts descendant pods, which
  // (below a node with subgroups) are its subgroups' pods; a subgroup holds
  // its minMember pods, or with subgroups of its own what they hold. A
  // minMember above that cannot be met by the subgroups' minimums: the group
  // would wait forever. Only on trees without cycles or unknown parents
  // (CheckParents reported those).
  void CheckHeld() {
    // A broken tree or a bad minMember below has no meaningful sum (and
    // was reported); the checks before this one are exactly those.
    if (!errors_.empty()) return;
    const size_t root_children = spec_.Children(kRootGroup).size();
    if (spec_.IsGang() && root_children > 0) {
      CheckHeldBy(std::nullopt, spec_.min_member, HeldBelow(spec_, kRootGroup, 0), root_children);
    }
    for (size_t i = 0; i < spec_.sub_groups.size(); ++i) {
      const std::string& name = spec_.sub_groups[i].name;
      const size_t children = spec_.Children(name).size();
      if (children > 0) {
        CheckHeldBy(i, spec_.sub_groups[i].min_member, HeldBelow(spec_, name, 0), children);
      }
    }
  }

  void CheckHeldBy(std::optional<size_t> index, int32_t min_member, int64_t held, size_t children) {
    if (min_member <= held) return;
    Add(paths_.MinMember(index),
        "Invalid value: " + std::to_string(min_member) + ": must be <= " + std::to_string(held) +
            " (the pods its " + std::to_string(children) + " subgroup" +
            (children == 1 ? "" : "s") + " hold: the sum of their minMember)");
  }

  void CheckPodCounts() {
    if (options_.pod_counts == nullptr) return;
    const GangPodCounts& counts = *options_.pod_counts;
    int64_t sum = 0;
    for (const auto& [name, count] : counts.by_sub_group) sum += count;
    int64_t total = counts.total.has_value() ? *counts.total : sum;
    if (spec_.IsGang() && spec_.min_member > total) {
      Add(paths_.MinMember(std::nullopt), "Invalid value: " + std::to_string(spec_.min_member) +
                                              ": must be <= " + std::to_string(total) +
                                              " (the member pods that exist)");
    }
    for (size_t i = 0; i < spec_.sub_groups.size(); ++i) {
      const SubGroupSpec& group = spec_.sub_groups[i];
      if (group.name.empty()) continue;
      int64_t below = 0;
      for (size_t member : spec_.Subtree(group.name)) {
        auto it = counts.by_sub_group.find(spec_.sub_groups[member].name);
        if (it != counts.by_sub_group.end()) below += it->second;
      }
      if (group.min_member > below) {
        Add(paths_.MinMember(i), "Invalid value: " + std::to_string(group.min_member) +
                                     ": must be <= " + std::to_string(below) +
                                     " (the pods that exist below it)");
      }
    }
  }

  void CheckTopology(std::optional<size_t> index) {
    const TopologyConstraint& constraint = index.has_value()
                                               ? spec_.sub_groups[*index].topology_constraint
                                               : spec_.topology_constraint;
    if (constraint.empty()) return;
    const TopologyDefinition* topology = nullptr;
    const std::vector<TopologyDefinition>* known = options_.topologies;
    if (!constraint.topology.empty() && known != nullptr &&
        FindTopology(*known, constraint.topology) == nullptr) {
      Add(paths_.Constraint(index, 0), "Not found: " + Quote(constraint.topology));
      return;
    }
    std::string effective;
    if (index.has_value()) {
      // An unknown parent breaks the chain; CheckParents reported it.
      effective = spec_.sub_groups[*index].name.empty()
                      ? constraint.topology
                      : spec_.EffectiveTopology(spec_.sub_groups[*index].name);
    } else {
      effective = constraint.topology;
    }
    if (!effective.empty()) {
      if (known == nullptr) return;  // named levels cannot be resolved here
      topology = FindTopology(*known, effective);
      if (topology == nullptr) return;  // reported where the name is written
    }
    CheckLevel(index, 1, constraint.required_level, topology);
    CheckLevel(index, 2, constraint.preferred_level, topology);
  }

  void CheckLevel(std::optional<size_t> index, int field, const std::string& level,
                  const TopologyDefinition* topology) {
    if (level.empty()) return;
    if (topology == nullptr) {
      if (Status valid = ValidateLabelKey(level); !valid.ok()) {
        Add(paths_.Constraint(index, field), "Invalid value: " + Quote(level) +
                                                 ": must be a node label key (" +
                                                 valid.error().message + ")");
      }
      return;
    }
    if (std::string error = LevelError(*topology, level); !error.empty()) {
      Add(paths_.Constraint(index, field), error);
    }
  }

  const GangSpec& spec_;
  const GangValidationOptions& options_;
  FieldPaths paths_;
  std::vector<std::string> errors_;
};

}  // namespace

std::vector<std::string> GangSpecErrors(const GangSpec& spec,
                                        const GangValidationOptions& options) {
  return Validator(spec, options).Run();
}

Status ValidateGangSpec(const GangSpec& spec, const GangValidationOptions& options) {
  std::vector<std::string> errors = GangSpecErrors(spec, options);
  if (errors.empty()) return Status::Ok();
  return MakeError(ErrorCode::kInvalid, JoinParts(errors, "; "));
}

std::vector<std::string> GangSpecWarnings(const GangSpec& spec,
                                          const std::vector<TopologyDefinition>* topologies) {
  std::vector<std::string> warnings;
  FieldPaths paths(spec.source);

  auto check_node = [&](std::optional<size_t> index, std::string_view node) {
    if (!index.has_value() && !spec.IsGang()) return;
    std::vector<size_t> required = spec.RequiredChildren(node);
    if (spec.Children(node).empty()) return;
    int64_t need = 0;
    for (size_t child : required) need += spec.RequiredPods(spec.sub_groups[child].name);
    int32_t min_member = spec.MinMember(node);
    if (min_member <= need) return;
    // More than all the children hold is an error (GangSpecErrors), not a warning.
    if (min_member > HeldBelow(spec, node, 0)) return;
    warnings.push_back(paths.MinMember(index) + ": " + std::to_string(min_member) +
                       " is more than the " + std::to_string(need) + " pods its " +
                       std::to_string(required.size()) + " required subgroups need (minSubGroup " +
                       std::to_string(spec.MinSubGroup(node)) +
                       " × their minMember): it needs pods beyond its subgroups' minimums");
  };
  check_node(std::nullopt, kRootGroup);
  for (size_t index : spec.DepthFirstOrder()) check_node(index, spec.sub_groups[index].name);

  if (topologies != nullptr) {
    auto check_levels = [&](std::optional<size_t> index, std::string_view node) {
      const TopologyConstraint& constraint = spec.ConstraintOf(node);
      if (constraint.required_level.empty() || constraint.preferred_level.empty()) return;
      std::string name = node.empty() ? constraint.topology : spec.EffectiveTopology(node);
      const TopologyDefinition* topology = FindTopology(*topologies, name);
      if (topology == nullptr) return;
      std::optional<size_t> required = topology->FindLevel(constraint.required_level);
      std::optional<size_t> preferred = topology->FindLevel(constraint.preferred_level);
      if (!required.has_value() || !preferred.has_value() || *preferred >= *required) return;
      warnings.push_back(paths.Constraint(index, 2) + ": " + Quote(constraint.preferred_level) +
                         " is above the required level " + Quote(constraint.required_level) +
                         ", so it has no effect");
    };
    check_levels(std::nullopt, kRootGroup);
    for (size_t index : spec.DepthFirstOrder()) check_levels(index, spec.sub_groups[index].name);
  }
  return warnings;
}

}  // namespace copse
