#include "grove/api/validation.h"

#include <algorithm>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/labels.h"

namespace copse::grove::api {

namespace {

using Json = nlohmann::json;
using Type = FieldError::Type;

constexpr size_t kMaxCombinedNameLength = 45;

std::string Quote(std::string_view s) { return Json(std::string(s)).dump(); }

class Errors {
 public:
  void Invalid(std::string field, std::string value, std::string detail) {
    out_.push_back(
        FieldError{Type::kInvalid, std::move(field), std::move(value), std::move(detail)});
  }
  void Required(std::string field, std::string detail) {
    out_.push_back(FieldError{Type::kRequired, std::move(field), {}, std::move(detail)});
  }
  void Duplicate(std::string field, std::string value) {
    out_.push_back(FieldError{Type::kDuplicate, std::move(field), Quote(value), {}});
  }
  void Forbidden(std::string field, std::string detail) {
    out_.push_back(FieldError{Type::kForbidden, std::move(field), {}, std::move(detail)});
  }
  void Unsupported(std::string field, std::string_view value,
                   const std::vector<std::string_view>& supported) {
    std::string detail = "supported values: ";
    for (size_t i = 0; i < supported.size(); ++i) {
      if (i > 0) detail += ", ";
      detail += Quote(supported[i]);
    }
    out_.push_back(FieldError{Type::kUnsupported, std::move(field), Quote(value), detail});
  }
  void NotFound(std::string field, std::string_view value) {
    out_.push_back(FieldError{Type::kNotFound, std::move(field), Quote(value), {}});
  }
  FieldErrors Take() { return std::move(out_); }

 private:
  FieldErrors out_;
};

std::string Idx(std::string_view base, size_t i) {
  return std::string(base) + "[" + std::to_string(i) + "]";
}

void UniqueElements(const std::vector<std::string>& values, const std::string& field, Errors& e) {
  std::set<std::string> seen;
  for (const auto& v : values) {
    if (!seen.insert(v).second) e.Duplicate(field, v);
  }
}

void ValidateLabelsMap(const Labels& labels, const std::string& field, Errors& e) {
  for (const auto& [k, v] : labels) {
    if (Status s = ValidateLabelKey(k); !s.ok()) e.Invalid(field, Quote(k), s.error().message);
    if (Status s = ValidateLabelValue(v); !s.ok()) {
      e.Invalid(field + "." + k, Quote(v), s.error().message);
    }
  }
}

void ValidateAnnotationKeys(const Labels& annotations, const std::string& field, Errors& e) {
  for (const auto& [k, v] : annotations) {
    (void)v;
    if (Status s = ValidateLabelKey(k); !s.ok()) e.Invalid(field, Quote(k), s.error().message);
  }
}

void ValidateName(std::string_view name, const std::string& field, std::string_view what,
                  Errors& e) {
  if (name.empty()) {
    e.Required(field, std::string(what) + " name is required");
    return;
  }
  if (Status s = ValidateDns1123Subdomain(name); !s.ok()) {
    e.Invalid(field, Quote(name),
              "invalid " + std::string(what) + " name, must be a valid DNS subdomain");
  }
}

bool IsEnvVarName(std::string_view name) {
  if (name.empty()) return false;
  if (name[0] >= '0' && name[0] <= '9') return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

void ValidateContainers(const Json& spec, const char* key, const std::string& base, Errors& e) {
  auto it = spec.find(key);
  if (it == spec.end() || !it->is_array()) return;
  for (size_t i = 0; i < it->size(); ++i) {
    const Json& container = (*it)[i];
    if (!container.is_object()) continue;
    auto env = container.find("env");
    if (env == container.end() || !env->is_array()) continue;
    std::string env_field = Idx(base + "." + key, i) + ".env";
    std::vector<std::string> names;
    for (size_t j = 0; j < env->size(); ++j) {
      const Json& var = (*env)[j];
      std::string name = var.is_object() && var.contains("name") && var["name"].is_string()
                             ? var["name"].get<std::string>()
                             : std::string();
      if (!IsEnvVarName(name)) {
        e.Invalid(Idx(env_field, j) + ".name", Quote(name),
                  "a valid environment variable name must consist of alphabetic characters, "
                  "digits, '_', '-', or '.', and must not start with a digit");
      }
      names.push_back(name);
    }
    UniqueElements(names, env_field, e);
  }
}

void ValidatePodSpec(const std::string& pod_spec, const std::string& field, bool create,
                     Errors& e) {
  if (pod_spec.empty()) {
    e.Required(field, "podSpec is required");
    return;
  }
  Json spec = Json::parse(pod_spec, nullptr, /*allow_exceptions=*/false);
  if (!spec.is_object()) {
    e.Invalid(field, "", "must be an object");
    return;
  }
  if (auto it = spec.find("restartPolicy"); it != spec.end() && it->is_string()) {
    std::string policy = it->get<std::string>();
    if (!policy.empty() && policy != "Always" && policy != "Never") {
      e.Unsupported(field + ".restartPolicy", policy, {"Always", "Never"});
    }
  }
  if (create) {
    if (auto it = spec.find("topologySpreadConstraints"); it != spec.end() && !it->is_null()) {
      e.Invalid(field + ".topologySpreadConstraints", it->dump(), "must not be set");
    }
    if (auto it = spec.find("nodeName");
        it != spec.end() && it->is_string() && !it->get<std::string>().empty()) {
      e.Invalid(field + ".nodeName", it->dump(), "must not be set");
    }
  }
  auto containers = spec.find("containers");
  if (containers == spec.end() || !containers->is_array() || containers->empty()) {
    e.Required(field + ".containers", "at least one container is required");
  }
  ValidateContainers(spec, "containers", field, e);
  ValidateContainers(spec, "initContainers", field, e);
}

std::string SchedulerNameOf(const std::string& pod_spec) {
  if (pod_spec.empty()) return {};
  Json spec = Json::parse(pod_spec, nullptr, /*allow_exceptions=*/false);
  if (!spec.is_object()) return {};
  auto it = spec.find("schedulerName");
  if (it == spec.end() || !it->is_string()) return {};
  return it->get<std::string>();
}

// Strongly connected components with more than one member (or a self loop):
// Tarjan's algorithm over the startsAfter graph.
std::vector<std::vector<std::string>> Cycles(
    const std::map<std::string, std::vector<std::string>>& edges) {
  std::map<std::string, int> index, low;
  std::set<std::string> on_stack;
  std::vector<std::string> stack;
  std::vector<std::vector<std::string>> out;
  int counter = 0;
  std::function<void(const std::string&)> connect = [&](const std::string& v) {
    index[v] = low[v] = counter++;
    stack.push_back(v);
    on_stack.insert(v);
    auto it = edges.find(v);
    if (it != edges.end()) {
      for (const auto& w : it->second) {
        if (!edges.count(w)) continue;
        if (!index.count(w)) {
          connect(w);
          low[v] = std::min(low[v], low[w]);
        } else if (on_stack.count(w)) {
          low[v] = std::min(low[v], index[w]);
        }
      }
    }
    if (low[v] == index[v]) {
      std::vector<std::string> component;
      std::string w;
      do {
        w = stack.back();
        stack.pop_back();
        on_stack.erase(w);
        component.push_back(w);
      } while (w != v);
      bool self_loop = false;
      if (it != edges.end()) {
        self_loop = std::find(it->second.begin(), it->second.end(), v) != it->second.end();
      }
      if (component.size() > 1 || self_loop) {
        std::sort(component.begin(), component.end());
        out.push_back(std::move(component));
      }
    }
  };
  for (const auto& [v, _] : edges) {
    if (!index.count(v)) connect(v);
  }
  return out;
}

void ValidateStartsAfterGraph(const PodCliqueSetTemplateSpec& t, Errors& e) {
  std::map<std::string, std::vector<std::string>> edges;
  std::set<std::string> names;
  for (const auto& c : t.cliques) names.insert(c.name);
  std::vector<std::string> unknown;
  for (const auto& c : t.cliques) {
    edges[c.name] = c.spec.starts_after;
    for (const auto& dep : c.spec.starts_after) {
      if (!dep.empty() && !names.count(dep) &&
          std::find(unknown.begin(), unknown.end(), dep) == unknown.end()) {
        unknown.push_back(dep);
      }
    }
  }
  if (!unknown.empty()) {
    std::string joined;
    for (const auto& u : unknown) joined += (joined.empty() ? "" : ",") + u;
    e.Invalid("spec.template.cliques.startsAfter", Quote(joined),
              "unknown clique names found, all clique dependencies must be defined as cliques");
  }
  auto cycles = Cycles(edges);
  if (!cycles.empty()) {
    Json rendered = cycles;
    e.Invalid("spec.template.cliques", rendered.dump(),
              "clique must not have circular dependencies");
  }
}

bool IsKnownStartupType(std::string_view t) {
  return t == kStartupAnyOrder || t == kStartupInOrder || t == kStartupExplicit;
}

// Index of `domain` in the binding's levels (broadest first), or -1.
int LevelIndex(const ClusterTopologyBindingSpec& binding, std::string_view domain) {
  for (size_t i = 0; i < binding.levels.size(); ++i) {
    if (binding.levels[i].domain == domain) return static_cast<int>(i);
  }
  return -1;
}

struct TopologyScope {
  const TopologyConstraint* constraint = nullptr;
  std::string field;
};

void ValidateTopology(const PodCliqueSet& pcs, const ValidationContext& context, Errors& e) {
  const auto& t = pcs.spec.template_;
  std::vector<TopologyScope> scopes;
  if (t.topology_constraint) {
    scopes.push_back({&*t.topology_constraint, "spec.template.topologyConstraint"});
  }
  for (size_t i = 0; i < t.scaling_groups.size(); ++i) {
    if (t.scaling_groups[i].topology_constraint) {
      scopes.push_back({&*t.scaling_groups[i].topology_constraint,
                        Idx("spec.template.podCliqueScalingGroups", i) + ".topologyConstraint"});
    }
  }
  for (size_t i = 0; i < t.cliques.size(); ++i) {
    if (t.cliques[i].topology_constraint) {
      scopes.push_back({&*t.cliques[i].topology_constraint,
                        Idx("spec.template.cliques", i) + ".topologyConstraint"});
    }
  }
  if (scopes.empty()) return;

  // One topology name for the whole PodCliqueSet; children inherit it.
  std::string name;
  for (const auto& scope : scopes) {
    const auto* tc = scope.constraint;
    if (!tc->pack.has_value() && tc->pack_domain.empty()) {
      e.Required(scope.field + ".pack",
                 "topologyConstraint must specify pack or deprecated packDomain");
    } else if (tc->pack.has_value() && tc->pack->required.empty() && tc->pack->preferred.empty()) {
      e.Required(scope.field + ".pack", "pack must specify at least one of required or preferred");
    }
    if (tc->pack.has_value() && !tc->pack->required.empty() && !tc->pack_domain.empty()) {
      e.Invalid(scope.field + ".pack.required", Quote(tc->pack->required),
                "must not set both pack.required and deprecated packDomain");
    }
    if (tc->topology_name.empty()) continue;
    if (name.empty()) {
      name = tc->topology_name;
    } else if (name != tc->topology_name) {
      e.Invalid(scope.field + ".topologyName", Quote(tc->topology_name),
                "all topologyConstraint.topologyName values within a PodCliqueSet must match in "
                "the current implementation");
    }
  }
  if (name.empty()) {
    e.Required(scopes.front().field + ".topologyName",
               "topologyName is required when topologyConstraint is set and cannot be inherited");
    return;
  }
  if (!context.topology) return;
  std::optional<ClusterTopologyBindingSpec> binding = context.topology(name);
  if (!binding.has_value()) {
    e.Invalid(scopes.front().field + ".topologyName", Quote(name),
              "ClusterTopologyBinding " + Quote(name) + " not found");
    return;
  }
  auto check_domain = [&](const std::string& domain, const std::string& field) {
    if (domain.empty()) return -1;
    int index = LevelIndex(*binding, domain);
    if (index < 0) {
      e.Invalid(field, Quote(domain),
                "topology domain not defined in ClusterTopologyBinding " + Quote(name));
    }
    return index;
  };
  auto required_level = [&](const TopologyConstraint* tc, const std::string& field) {
    if (tc == nullptr) return -1;
    std::string path = tc->pack.has_value() && !tc->pack->required.empty()
                           ? field + ".pack.required"
                           : field + ".packDomain";
    int required = check_domain(tc->RequiredDomain(), path);
    int preferred = check_domain(tc->PreferredDomain(), field + ".pack.preferred");
    if (required >= 0 && preferred >= 0 && preferred < required) {
      e.Invalid(field + ".pack.preferred", Quote(tc->PreferredDomain()),
                "preferred domain must be equal to or narrower than the required domain");
    }
    return required;
  };
  const TopologyConstraint* pcs_tc = t.topology_constraint ? &*t.topology_constraint : nullptr;
  int pcs_level = required_level(pcs_tc, "spec.template.topologyConstraint");
  std::map<std::string, int> group_level;  // clique -> required level of its group
  for (size_t i = 0; i < t.scaling_groups.size(); ++i) {
    const auto& group = t.scaling_groups[i];
    if (!group.topology_constraint) continue;
    std::string field = Idx("spec.template.podCliqueScalingGroups", i) + ".topologyConstraint";
    int level = required_level(&*group.topology_constraint, field);
    if (level >= 0 && pcs_level >= 0 && level < pcs_level) {
      e.Invalid(field + ".pack.required", Quote(group.topology_constraint->RequiredDomain()),
                "must be equal to or stricter than the PodCliqueSet's required domain");
    }
    for (const auto& clique : group.clique_names) group_level[clique] = level;
  }
  for (size_t i = 0; i < t.cliques.size(); ++i) {
    const auto& clique = t.cliques[i];
    if (!clique.topology_constraint) continue;
    std::string field = Idx("spec.template.cliques", i) + ".topologyConstraint";
    int level = required_level(&*clique.topology_constraint, field);
    int parent = pcs_level;
    if (auto it = group_level.find(clique.name); it != group_level.end() && it->second >= 0) {
      parent = it->second;
    }
    if (level >= 0 && parent >= 0 && level < parent) {
      e.Invalid(field + ".pack.required", Quote(clique.topology_constraint->RequiredDomain()),
                "must be equal to or stricter than the parent's required domain");
    }
  }
}

void ValidateCliqueSpec(const PodCliqueSet& pcs, const PodCliqueTemplateSpec& clique,
                        const std::string& field, bool explicit_startup, bool create, Errors& e) {
  const PodCliqueSpec& spec = clique.spec;
  if (spec.replicas <= 0) {
    e.Invalid(field + ".replicas", std::to_string(spec.replicas), "must be greater than 0");
  }
  if (!spec.min_available.has_value()) {
    e.Required(field + ".minAvailable", "field is required");
  } else {
    if (*spec.min_available <= 0) {
      e.Invalid(field + ".minAvailable", std::to_string(*spec.min_available),
                "must be greater than 0");
    }
    if (*spec.min_available > spec.replicas) {
      e.Invalid(field + ".minAvailable", std::to_string(*spec.min_available),
                "minAvailable must not be greater than replicas");
    }
  }
  if (explicit_startup && !spec.starts_after.empty()) {
    for (const auto& dep : spec.starts_after) {
      if (dep.empty()) e.Required(field + ".startsAfter", "clique dependency must not be empty");
      if (dep == clique.name) {
        e.Invalid(field + ".startsAfter", Quote(dep), "clique dependency cannot refer to itself");
      }
    }
    UniqueElements(spec.starts_after, field + ".startsAfter", e);
  }
  if (spec.scale_config.has_value()) {
    const auto& sc = *spec.scale_config;
    std::string sc_field = field + ".autoScalingConfig";
    int32_t min_available = spec.min_available.value_or(spec.replicas);
    if (!sc.min_replicas.has_value()) {
      e.Required(sc_field + ".minReplicas", "field is required");
    } else {
      if (*sc.min_replicas < min_available) {
        e.Invalid(sc_field + ".minReplicas", std::to_string(*sc.min_replicas),
                  "must be greater than or equal to podCliqueSpec.minAvailable");
      }
      if (sc.max_replicas < *sc.min_replicas) {
        e.Invalid(sc_field + ".maxReplicas", std::to_string(sc.max_replicas),
                  "must be greater than or equal to podCliqueSpec.minReplicas");
      }
    }
    if (sc.max_replicas < spec.replicas) {
      e.Invalid(sc_field + ".maxReplicas", std::to_string(sc.max_replicas),
                "must be greater than or equal to replicas");
    }
  }
  ValidatePodSpec(spec.pod_spec, field + ".podSpec", create, e);
  (void)pcs;
}

void ValidateCombinedNameLength(const PodCliqueSet& pcs, std::string_view group,
                                std::string_view clique, const std::string& field, Errors& e) {
  size_t length = pcs.meta.name.size() + group.size() + clique.size();
  if (length > kMaxCombinedNameLength) {
    std::string detail = "combined resource name length " + std::to_string(length) +
                         " exceeds 45-character limit required for pod naming";
    e.Invalid(field, Quote(clique), detail);
    e.Invalid("metadata.name", Quote(pcs.meta.name), detail);
  }
}

void ValidateScalingGroups(const PodCliqueSet& pcs, Errors& e) {
  const auto& t = pcs.spec.template_;
  std::set<std::string> clique_names;
  for (const auto& c : t.cliques) clique_names.insert(c.name);
  std::vector<std::string> group_names;
  std::vector<std::string> grouped_cliques;
  for (size_t i = 0; i < t.scaling_groups.size(); ++i) {
    const auto& group = t.scaling_groups[i];
    std::string field = Idx("spec.template.podCliqueScalingGroups", i);
    ValidateName(group.name, field + ".name", "PodCliqueScalingGroupConfig", e);
    group_names.push_back(group.name);
    if (group.clique_names.empty()) {
      e.Required(field + ".cliqueNames", "at least one PodClique name is required");
    }
    std::string unknown;
    for (size_t j = 0; j < group.clique_names.size(); ++j) {
      const auto& name = group.clique_names[j];
      grouped_cliques.push_back(name);
      if (!clique_names.count(name)) unknown += (unknown.empty() ? "" : ",") + name;
      ValidateCombinedNameLength(pcs, group.name, name, Idx(field + ".cliqueNames", j), e);
    }
    if (!unknown.empty()) {
      e.Invalid(field + ".cliqueNames", Quote(unknown), "unidentified PodClique names found");
    }
    if (group.replicas.has_value() && *group.replicas <= 0) {
      e.Invalid(field + ".replicas", std::to_string(*group.replicas), "must be greater than 0");
    }
    if (group.min_available.has_value() && *group.min_available <= 0) {
      e.Invalid(field + ".minAvailable", std::to_string(*group.min_available),
                "must be greater than 0");
    }
    if (group.replicas.has_value() && group.min_available.has_value() &&
        *group.min_available > *group.replicas) {
      e.Invalid(field + ".minAvailable", std::to_string(*group.min_available),
                "minAvailable must not be greater than replicas");
    }
    if (group.scale_config.has_value() && group.min_available.has_value() &&
        group.scale_config->min_replicas.has_value() &&
        *group.scale_config->min_replicas < *group.min_available) {
      e.Invalid(field + ".scaleConfig.minReplicas",
                std::to_string(*group.scale_config->min_replicas),
                "scaleConfig.minReplicas must be greater than or equal to minAvailable");
    }
  }
  UniqueElements(group_names, "spec.template.podCliqueScalingGroups.name", e);
  UniqueElements(grouped_cliques, "spec.template.podCliqueScalingGroups.cliqueNames", e);
  for (const auto& clique : t.cliques) {
    if (clique.spec.scale_config.has_value() &&
        std::find(grouped_cliques.begin(), grouped_cliques.end(), clique.name) !=
            grouped_cliques.end()) {
      e.Invalid("spec.template.podCliqueScalingGroups", Quote(clique.name),
                "AutoScalingConfig is not allowed to be defined for PodClique that is part of "
                "scaling group");
    }
  }
}

void ValidateSpec(const PodCliqueSet& pcs, const ValidationContext& context, bool create,
                  Errors& e) {
  const auto& spec = pcs.spec;
  const auto& t = spec.template_;
  if (spec.replicas < 0) {
    e.Invalid("spec.replicas", std::to_string(spec.replicas), "must be greater than or equal to 0");
  }
  if (spec.update_strategy.has_value() && !spec.update_strategy->type.empty() &&
      spec.update_strategy->type != kRollingRecreate && spec.update_strategy->type != kOnDelete) {
    e.Unsupported("spec.updateStrategy.type", spec.update_strategy->type,
                  {kRollingRecreate, kOnDelete});
  }
  if (t.startup_type.has_value() && !IsKnownStartupType(*t.startup_type)) {
    e.Unsupported("spec.template.cliqueStartupType", *t.startup_type,
                  {kStartupAnyOrder, kStartupInOrder, kStartupExplicit});
  }
  bool explicit_startup = t.startup_type.has_value() && *t.startup_type == kStartupExplicit;
  if (t.cliques.empty()) {
    e.Required("spec.template.cliques", "at least one PodClique must be defined");
  }
  std::vector<std::string> names, roles, schedulers;
  for (size_t i = 0; i < t.cliques.size(); ++i) {
    const auto& clique = t.cliques[i];
    std::string field = Idx("spec.template.cliques", i);
    ValidateName(clique.name, field + ".name", "PodCliqueTemplateSpec", e);
    if (!clique.name.empty() && t.ScalingGroupOf(clique.name) == nullptr) {
      ValidateCombinedNameLength(pcs, "", clique.name, field + ".name", e);
    }
    ValidateLabelsMap(clique.labels, field + ".labels", e);
    ValidateAnnotationKeys(clique.annotations, field + ".annotations", e);
    ValidateCliqueSpec(pcs, clique, field + ".spec", explicit_startup, create, e);
    names.push_back(clique.name);
    roles.push_back(clique.spec.role_name);
    schedulers.push_back(SchedulerNameOf(clique.spec.pod_spec));
  }
  UniqueElements(names, "spec.template.cliques.name", e);
  UniqueElements(roles, "spec.template.cliques.roleName", e);

  // One scheduler for every pod, and an enabled one.
  std::vector<std::string> resolved;
  for (auto& s : schedulers) {
    std::string name = s.empty() ? context.default_scheduler_name : s;
    if (std::find(resolved.begin(), resolved.end(), name) == resolved.end()) {
      resolved.push_back(name);
    }
  }
  if (resolved.size() > 1) {
    std::string joined;
    for (const auto& r : resolved) joined += (joined.empty() ? "" : ", ") + r;
    e.Invalid("spec.template.cliques.spec.podSpec.schedulerName", Quote(joined),
              "the schedulerName for all pods have to be the same");
  }
  if (!resolved.empty() && context.scheduler_enabled && !context.scheduler_enabled(resolved[0])) {
    e.Invalid("spec.template.cliques.spec.podSpec.schedulerName", Quote(resolved[0]),
              "schedulerName must be an enabled scheduler backend; this scheduler is not enabled "
              "in OperatorConfiguration");
  }
  if (explicit_startup) ValidateStartsAfterGraph(t, e);
  ValidateScalingGroups(pcs, e);

  if (!t.termination_delay.has_value()) {
    e.Required("spec.template.terminationDelay", "terminationDelay is required");
  } else {
    auto delay = ParseDuration(*t.termination_delay);
    if (!delay.ok()) {
      e.Invalid("spec.template.terminationDelay", Quote(*t.termination_delay),
                "must be a duration such as \"4h\" or \"30m\"");
    } else if (delay->count() <= 0) {
      e.Invalid("spec.template.terminationDelay", Quote(*t.termination_delay),
                "terminationDelay must be greater than 0");
    }
  }
  ValidateTopology(pcs, context, e);
}

template <typename T>
void Immutable(const T& now, const T& old, const std::string& field, Errors& e) {
  if (!(now == old)) e.Forbidden(field, "field is immutable");
}

}  // namespace

std::string FieldError::ToString() const {
  switch (type) {
    case Type::kInvalid:
      return field + ": Invalid value: " + value + ": " + detail;
    case Type::kRequired:
      return field + ": Required value: " + detail;
    case Type::kDuplicate:
      return field + ": Duplicate value: " + value;
    case Type::kForbidden:
      return field + ": Forbidden: " + detail;
    case Type::kUnsupported:
      return field + ": Unsupported value: " + value + ": " + detail;
    case Type::kNotFound:
      return field + ": Not found: " + value;
  }
  return field + ": " + detail;
}

FieldErrors ValidatePodCliqueSet(const PodCliqueSet& pcs, const ValidationContext& context) {
  Errors e;
  if (pcs.meta.name.empty() && pcs.meta.generate_name.empty()) {
    e.Required("metadata.name", "name or generateName is required");
  } else if (!pcs.meta.name.empty()) {
    if (Status s = ValidateDns1123Subdomain(pcs.meta.name); !s.ok()) {
      e.Invalid("metadata.name", Quote(pcs.meta.name), s.error().message);
    }
  }
  ValidateSpec(pcs, context, /*create=*/true, e);
  return e.Take();
}

FieldErrors ValidatePodCliqueSetUpdate(const PodCliqueSet& now, const PodCliqueSet& old,
                                       const ValidationContext& context) {
  Errors e;
  ValidateSpec(now, context, /*create=*/false, e);
  const auto& t = now.spec.template_;
  const auto& o = old.spec.template_;
  Immutable(t.startup_type, o.startup_type, "spec.template.cliqueStartupType", e);

  if (t.cliques.size() != o.cliques.size()) {
    e.Forbidden("spec.template.cliques", "not allowed to change clique composition");
  }
  bool ordered = t.startup_type.has_value() &&
                 (*t.startup_type == kStartupInOrder || *t.startup_type == kStartupExplicit);
  for (size_t i = 0; i < t.cliques.size(); ++i) {
    const auto& clique = t.cliques[i];
    size_t old_index = o.cliques.size();
    for (size_t j = 0; j < o.cliques.size(); ++j) {
      if (o.cliques[j].name == clique.name) old_index = j;
    }
    if (old_index == o.cliques.size()) {
      e.Forbidden("spec.template.cliques.name",
                  "not allowed to change clique composition, new clique name '" + clique.name +
                      "' is not allowed");
      continue;
    }
    const auto& prev = o.cliques[old_index];
    if (ordered && old_index != i) {
      e.Invalid(
          "spec.template.cliques", Quote(clique.name),
          "clique order cannot be changed when StartupType is InOrder or Explicit. Expected '" +
              prev.name + "' at position " + std::to_string(i) + ", got '" + clique.name + "'");
    }
    std::string field = Idx("spec.template.cliques", i) + ".spec";
    Immutable(clique.spec.role_name, prev.spec.role_name, field + ".roleName", e);
    Immutable(clique.spec.min_available, prev.spec.min_available, field + ".minAvailable", e);
    Immutable(clique.spec.starts_after, prev.spec.starts_after, field + ".startsAfter", e);
    Immutable(SchedulerNameOf(clique.spec.pod_spec), SchedulerNameOf(prev.spec.pod_spec),
              field + ".podSpec.schedulerName", e);
    Immutable(clique.topology_constraint, prev.topology_constraint,
              Idx("spec.template.cliques", i) + ".topologyConstraint", e);
  }

  if (t.scaling_groups.size() != o.scaling_groups.size()) {
    e.Forbidden("spec.template.podCliqueScalingGroups",
                "not allowed to add or remove PodCliqueScalingGroupConfigs");
  } else {
    for (size_t i = 0; i < t.scaling_groups.size(); ++i) {
      const auto& group = t.scaling_groups[i];
      const PodCliqueScalingGroupConfig* prev = nullptr;
      for (const auto& g : o.scaling_groups) {
        if (g.name == group.name) prev = &g;
      }
      if (prev == nullptr) {
        e.Forbidden("spec.template.podCliqueScalingGroups.name",
                    "not allowed to change scaling group composition, new scaling group name '" +
                        group.name + "' is not allowed");
        continue;
      }
      std::string field = Idx("spec.template.podCliqueScalingGroups", i);
      Immutable(group.clique_names, prev->clique_names, field + ".cliqueNames", e);
      Immutable(group.min_available, prev->min_available, field + ".minAvailable", e);
      Immutable(group.topology_constraint, prev->topology_constraint, field + ".topologyConstraint",
                e);
    }
  }
  Immutable(t.topology_constraint, o.topology_constraint, "spec.template.topologyConstraint", e);
  return e.Take();
}

Error ToError(const FieldErrors& errors, std::string_view kind, std::string_view name) {
  std::string message = std::string(kind) + " \"" + std::string(name) + "\" is invalid: ";
  if (errors.size() == 1) {
    message += errors[0].ToString();
  } else {
    message += "[";
    for (size_t i = 0; i < errors.size(); ++i) {
      if (i > 0) message += ", ";
      message += errors[i].ToString();
    }
    message += "]";
  }
  Error error = MakeError(ErrorCode::kInvalid, std::move(message));
  error.http_status = 422;
  error.reason = "Invalid";
  return error;
}

std::string ResolvedSchedulerName(const PodCliqueSet& pcs, std::string_view default_name) {
  for (const auto& clique : pcs.spec.template_.cliques) {
    std::string name = SchedulerNameOf(clique.spec.pod_spec);
    return name.empty() ? std::string(default_name) : name;
  }
  return std::string(default_name);
}

}  // namespace copse::grove::api
