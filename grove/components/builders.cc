#include "grove/components/builders.h"

#include <nlohmann/json.hpp>

#include "grove/api/names.h"
#include "grove/components/pod.h"
#include "kube/controller/objects.h"

namespace copse::grove::components {

namespace {

using Json = nlohmann::json;

Labels Merge(std::initializer_list<const Labels*> maps) {
  Labels out;
  for (const Labels* m : maps) {
    for (const auto& [k, v] : *m) out[k] = v;
  }
  return out;
}

// Fully qualified names of the PodCliques a clique of the base gang depends on
// when it waits for `parent` (upstream GenerateDependencyNamesForBasePodGang).
std::vector<std::string> BaseGangDependencies(const api::PodCliqueSet& pcs, int replica,
                                              const std::string& parent) {
  std::vector<std::string> out;
  const auto* group = pcs.spec.template_.ScalingGroupOf(parent);
  if (group != nullptr) {
    std::string pcsg = api::ScalingGroupName(pcs.meta.name, replica, group->name);
    for (int j = 0; j < group->min_available.value_or(1); ++j) {
      out.push_back(api::PodCliqueName(pcsg, j, parent));
    }
  } else {
    out.push_back(api::PodCliqueName(pcs.meta.name, replica, parent));
  }
  return out;
}

int CliqueIndex(const api::PodCliqueSet& pcs, std::string_view name) {
  const auto& cliques = pcs.spec.template_.cliques;
  for (size_t i = 0; i < cliques.size(); ++i) {
    if (cliques[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

std::string StartupType(const api::PodCliqueSet& pcs) {
  return pcs.spec.template_.startup_type.value_or(std::string(api::kStartupAnyOrder));
}

std::vector<std::string> StandaloneDependencies(const api::PodCliqueSet& pcs, int replica,
                                                const api::PodCliqueTemplateSpec& clique) {
  std::vector<std::string> out;
  std::string type = StartupType(pcs);
  if (type == api::kStartupInOrder) {
    int index = CliqueIndex(pcs, clique.name);
    if (index <= 0) return out;
    return BaseGangDependencies(pcs, replica, pcs.spec.template_.cliques[index - 1].name);
  }
  if (type == api::kStartupExplicit) {
    for (const auto& dep : clique.spec.starts_after) {
      for (auto& name : BaseGangDependencies(pcs, replica, dep)) out.push_back(std::move(name));
    }
  }
  return out;
}

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::vector<std::string> GroupDependencies(const api::PodCliqueSet& pcs, int pcs_replica,
                                           const std::string& pcsg_fqn,
                                           const api::PodCliqueScalingGroupConfig& config,
                                           int pcsg_replica,
                                           const api::PodCliqueTemplateSpec& clique) {
  std::vector<std::string> out;
  std::string type = StartupType(pcs);
  bool base = pcsg_replica < config.min_available.value_or(1);
  auto add = [&](const std::string& parent) {
    if (base) {
      for (auto& name : BaseGangDependencies(pcs, pcs_replica, parent))
        out.push_back(std::move(name));
    } else if (Contains(config.clique_names, parent)) {
      // Scaled gangs order only their own cliques.
      out.push_back(api::PodCliqueName(pcsg_fqn, pcsg_replica, parent));
    }
  };
  if (type == api::kStartupInOrder) {
    int index = CliqueIndex(pcs, clique.name);
    if (index > 0) add(pcs.spec.template_.cliques[index - 1].name);
  } else if (type == api::kStartupExplicit) {
    for (const auto& dep : clique.spec.starts_after) add(dep);
  }
  return out;
}

Json FieldRefEnv(std::string_view name, std::string_view label) {
  return Json{{"name", name},
              {"valueFrom",
               {{"fieldRef", {{"fieldPath", "metadata.labels['" + std::string(label) + "']"}}}}}};
}

std::optional<api::GangTopologyConstraint> Translate(
    const std::optional<api::TopologyConstraint>& tc, const api::ClusterTopologyBinding* binding) {
  if (!tc.has_value() || binding == nullptr) return std::nullopt;
  api::PackConstraint pack;
  if (std::string d = tc->RequiredDomain(); !d.empty()) {
    if (std::string key = binding->spec.KeyOf(d); !key.empty()) pack.required = key;
  }
  if (std::string d = tc->PreferredDomain(); !d.empty()) {
    if (std::string key = binding->spec.KeyOf(d); !key.empty()) pack.preferred = key;
  }
  if (!pack.required && !pack.preferred) return std::nullopt;
  api::GangTopologyConstraint out;
  out.pack_constraint = pack;
  return out;
}

void SetOwner(kube::ObjectMeta& meta, std::string_view api_version, std::string_view kind,
              const kube::ObjectMeta& owner) {
  meta.owner_references = {kube::controller::ControllerRef(api_version, kind, owner)};
}

}  // namespace

std::string PodTemplateHash(const api::PodCliqueTemplateSpec& clique,
                            std::string_view priority_class_name) {
  std::string data = clique.spec.pod_spec;
  data += '\0';
  data += priority_class_name;
  for (const auto& [k, v] : clique.labels) data += "\0" + k + "=" + v;
  return kube::controller::Fnv1aHex(data).substr(0, 10);
}

std::string TopologyName(const api::PodCliqueSet& pcs) {
  const auto& t = pcs.spec.template_;
  if (t.topology_constraint && !t.topology_constraint->topology_name.empty()) {
    return t.topology_constraint->topology_name;
  }
  for (const auto& g : t.scaling_groups) {
    if (g.topology_constraint && !g.topology_constraint->topology_name.empty()) {
      return g.topology_constraint->topology_name;
    }
  }
  for (const auto& c : t.cliques) {
    if (c.topology_constraint && !c.topology_constraint->topology_name.empty()) {
      return c.topology_constraint->topology_name;
    }
  }
  return {};
}

kube::Service BuildHeadlessService(const api::PodCliqueSet& pcs, int replica) {
  kube::Service svc;
  svc.api_version = "v1";
  svc.kind = "Service";
  svc.meta.name = api::HeadlessServiceName(pcs.meta.name, replica);
  svc.meta.namespace_ = pcs.meta.namespace_;
  Labels own = {{std::string(api::kLabelAppName), svc.meta.name},
                {std::string(api::kLabelComponent), std::string(api::kComponentHeadlessService)},
                {std::string(api::kLabelPcsReplicaIndex), std::to_string(replica)}};
  Labels defaults = api::DefaultLabels(pcs.meta.name);
  svc.meta.labels = Merge({&defaults, &own});
  SetOwner(svc.meta, api::PodCliqueSet::kApiVersion, api::PodCliqueSet::kKind, pcs.meta);
  Labels selector = {{std::string(api::kLabelPcsReplicaIndex), std::to_string(replica)}};
  svc.spec.selector = Merge({&defaults, &selector});
  svc.spec.cluster_ip = std::string(kube::kClusterIPNone);
  const auto& hs = pcs.spec.template_.headless_service_config;
  svc.spec.publish_not_ready_addresses = hs.has_value() && hs->publish_not_ready_addresses;
  return svc;
}

api::PodCliqueScalingGroup BuildScalingGroup(const api::PodCliqueSet& pcs, int replica,
                                             const api::PodCliqueScalingGroupConfig& config) {
  api::PodCliqueScalingGroup pcsg;
  pcsg.api_version = std::string(api::kApiVersion);
  pcsg.kind = std::string(api::PodCliqueScalingGroup::kKind);
  pcsg.meta.name = api::ScalingGroupName(pcs.meta.name, replica, config.name);
  pcsg.meta.namespace_ = pcs.meta.namespace_;
  Labels own = {{std::string(api::kLabelAppName), pcsg.meta.name},
                {std::string(api::kLabelComponent), std::string(api::kComponentPcsg)},
                {std::string(api::kLabelPcsReplicaIndex), std::to_string(replica)}};
  Labels defaults = api::DefaultLabels(pcs.meta.name);
  pcsg.meta.labels = Merge({&defaults, &own});
  pcsg.meta.annotations = config.annotations;
  SetOwner(pcsg.meta, api::PodCliqueSet::kApiVersion, api::PodCliqueSet::kKind, pcs.meta);
  pcsg.spec.replicas = config.replicas.value_or(1);
  pcsg.spec.min_available = config.min_available.value_or(1);
  pcsg.spec.clique_names = config.clique_names;
  return pcsg;
}

api::PodClique BuildStandalonePodClique(const api::PodCliqueSet& pcs, int replica,
                                        const api::PodCliqueTemplateSpec& clique) {
  api::PodClique pclq;
  pclq.api_version = std::string(api::kApiVersion);
  pclq.kind = std::string(api::PodClique::kKind);
  pclq.meta.name = api::PodCliqueName(pcs.meta.name, replica, clique.name);
  pclq.meta.namespace_ = pcs.meta.namespace_;
  Labels own = {{std::string(api::kLabelAppName), pclq.meta.name},
                {std::string(api::kLabelComponent), std::string(api::kComponentPcsPodClique)},
                {std::string(api::kLabelPodGang), api::BasePodGangName(pcs.meta.name, replica)},
                {std::string(api::kLabelPcsReplicaIndex), std::to_string(replica)},
                {std::string(api::kLabelPodTemplateHash),
                 PodTemplateHash(clique, pcs.spec.template_.priority_class_name)}};
  Labels defaults = api::DefaultLabels(pcs.meta.name);
  pclq.meta.labels = Merge({&clique.labels, &defaults, &own});
  pclq.meta.annotations = clique.annotations;
  SetOwner(pclq.meta, api::PodCliqueSet::kApiVersion, api::PodCliqueSet::kKind, pcs.meta);
  pclq.spec = clique.spec;
  pclq.spec.starts_after = StandaloneDependencies(pcs, replica, clique);
  return pclq;
}

api::PodClique BuildGroupPodClique(const api::PodCliqueSet& pcs, int pcs_replica,
                                   const api::PodCliqueScalingGroup& pcsg,
                                   const api::PodCliqueScalingGroupConfig& config, int pcsg_replica,
                                   const api::PodCliqueTemplateSpec& clique) {
  api::PodClique pclq;
  pclq.api_version = std::string(api::kApiVersion);
  pclq.kind = std::string(api::PodClique::kKind);
  pclq.meta.name = api::PodCliqueName(pcsg.meta.name, pcsg_replica, clique.name);
  pclq.meta.namespace_ = pcs.meta.namespace_;
  int min_available = config.min_available.value_or(1);
  std::string gang = api::PodGangNameForGroupReplica(pcs.meta.name, pcs_replica, pcsg.meta.name,
                                                     pcsg_replica, min_available);
  std::string base = api::BasePodGangName(pcs.meta.name, pcs_replica);
  Labels own = {{std::string(api::kLabelAppName), pclq.meta.name},
                {std::string(api::kLabelComponent), std::string(api::kComponentPcsgPodClique)},
                {std::string(api::kLabelPcsg), pcsg.meta.name},
                {std::string(api::kLabelPodGang), gang},
                {std::string(api::kLabelPcsReplicaIndex), std::to_string(pcs_replica)},
                {std::string(api::kLabelPcsgReplicaIndex), std::to_string(pcsg_replica)},
                {std::string(api::kLabelPodTemplateHash),
                 PodTemplateHash(clique, pcs.spec.template_.priority_class_name)}};
  if (gang != base) own[std::string(api::kLabelBasePodGang)] = base;
  Labels defaults = api::DefaultLabels(pcs.meta.name);
  pclq.meta.labels = Merge({&clique.labels, &defaults, &own});
  pclq.meta.annotations = clique.annotations;
  SetOwner(pclq.meta, api::PodCliqueScalingGroup::kApiVersion, api::PodCliqueScalingGroup::kKind,
           pcsg.meta);
  pclq.spec = clique.spec;

  // GROVE_PCSG_* env vars (upstream's PCSG PodClique component).
  int32_t template_pods = 0;
  for (const auto& name : config.clique_names) {
    if (const auto* c = pcs.spec.template_.FindClique(name)) template_pods += c->spec.replicas;
  }
  Json vars = Json::array(
      {FieldRefEnv(api::kEnvPcsgName, api::kLabelPcsg),
       Json{{"name", api::kEnvPcsgTemplateNumPods}, {"value", std::to_string(template_pods)}},
       FieldRefEnv(api::kEnvPcsgIndex, api::kLabelPcsgReplicaIndex)});
  Json spec = Json::parse(pclq.spec.pod_spec.empty() ? "{}" : pclq.spec.pod_spec, nullptr, false);
  if (spec.is_object()) {
    AddEnv(spec, vars);
    pclq.spec.pod_spec = spec.dump();
  }
  pclq.spec.starts_after =
      GroupDependencies(pcs, pcs_replica, pcsg.meta.name, config, pcsg_replica, clique);
  return pclq;
}

std::vector<ExpectedGang> ExpectedPodGangs(const api::PodCliqueSet& pcs, int replica,
                                           const ScalingGroupReplicas& pcsg_replicas,
                                           const PodCliqueReplicas& pclq_replicas,
                                           const api::ClusterTopologyBinding* binding,
                                           std::string_view backend_name) {
  const auto& t = pcs.spec.template_;
  std::string base_name = api::BasePodGangName(pcs.meta.name, replica);

  auto new_gang = [&](const std::string& name, bool base) {
    ExpectedGang gang;
    gang.name = name;
    gang.base = base;
    gang.base_name = base_name;
    api::PodGang& pg = gang.object;
    pg.api_version = std::string(api::kSchedulerApiVersion);
    pg.kind = std::string(api::PodGang::kKind);
    pg.meta.name = name;
    pg.meta.namespace_ = pcs.meta.namespace_;
    // Mirror the PodCliqueSet's own labels and annotations (not grove.io/ ones),
    // as upstream does; operator labels win.
    for (const auto& [k, v] : pcs.meta.labels) {
      if (k.rfind("grove.io/", 0) != 0) pg.meta.labels[k] = v;
    }
    for (const auto& [k, v] : pcs.meta.annotations) {
      if (k.rfind("grove.io/", 0) != 0 && k.rfind("kubectl.kubernetes.io/", 0) != 0) {
        pg.meta.annotations[k] = v;
      }
    }
    for (const auto& [k, v] : api::DefaultLabels(pcs.meta.name)) pg.meta.labels[k] = v;
    pg.meta.labels[std::string(api::kLabelComponent)] = std::string(api::kComponentPodGang);
    pg.meta.labels[std::string(api::kLabelPcsReplicaIndex)] = std::to_string(replica);
    pg.meta.labels[std::string(api::kLabelSchedulerName)] = std::string(backend_name);
    if (!base) pg.meta.labels[std::string(api::kLabelBasePodGang)] = base_name;
    std::string topology = TopologyName(pcs);
    if (!topology.empty() && binding != nullptr) {
      pg.meta.annotations[std::string(api::kAnnotationTopologyName)] = topology;
    }
    SetOwner(pg.meta, api::PodCliqueSet::kApiVersion, api::PodCliqueSet::kKind, pcs.meta);
    pg.spec.priority_class_name = t.priority_class_name;
    return gang;
  };
  auto add_group = [&](ExpectedGang& gang, const std::string& fqn,
                       const api::PodCliqueTemplateSpec& clique, bool standalone) {
    ExpectedGroup group;
    group.pclq = fqn;
    group.replicas = standalone ? pclq_replicas(fqn, clique) : clique.spec.replicas;
    group.min_replicas = clique.spec.min_available.value_or(clique.spec.replicas);
    gang.groups.push_back(group);
    api::PodGroup pg;
    pg.name = fqn;
    pg.min_replicas = group.min_replicas;
    pg.topology_constraint = Translate(clique.topology_constraint, binding);
    gang.object.spec.pod_groups.push_back(std::move(pg));
  };

  std::vector<ExpectedGang> out;
  ExpectedGang base = new_gang(base_name, true);
  base.object.spec.topology_constraint = Translate(t.topology_constraint, binding);
  for (const auto& clique : t.cliques) {
    if (t.ScalingGroupOf(clique.name) != nullptr) continue;
    std::string fqn = api::PodCliqueName(pcs.meta.name, replica, clique.name);
    if (pclq_replicas(fqn, clique) == 0) continue;
    add_group(base, fqn, clique, true);
  }
  std::vector<ExpectedGang> scaled;
  for (const auto& config : t.scaling_groups) {
    std::string pcsg = api::ScalingGroupName(pcs.meta.name, replica, config.name);
    int32_t replicas = pcsg_replicas(pcsg, config);
    int32_t min_available = config.min_available.value_or(1);
    int32_t base_replicas = replicas == 0 ? 0 : std::min(min_available, replicas);
    for (int j = 0; j < base_replicas; ++j) {
      api::TopologyConstraintGroupConfig group;
      group.name = pcsg + "-" + std::to_string(j);
      for (const auto& name : config.clique_names) {
        const auto* clique = t.FindClique(name);
        if (clique == nullptr) continue;
        std::string fqn = api::PodCliqueName(pcsg, j, name);
        add_group(base, fqn, *clique, false);
        group.pod_group_names.push_back(fqn);
      }
      group.topology_constraint = Translate(config.topology_constraint, binding);
      base.object.spec.topology_constraint_group_configs.push_back(std::move(group));
    }
    for (int j = base_replicas; j < replicas; ++j) {
      ExpectedGang gang = new_gang(api::ScaledPodGangName(pcsg, j - base_replicas), false);
      for (const auto& name : config.clique_names) {
        const auto* clique = t.FindClique(name);
        if (clique == nullptr) continue;
        add_group(gang, api::PodCliqueName(pcsg, j, name), *clique, false);
      }
      gang.object.spec.topology_constraint = config.topology_constraint
                                                 ? Translate(config.topology_constraint, binding)
                                                 : Translate(t.topology_constraint, binding);
      scaled.push_back(std::move(gang));
    }
  }
  out.push_back(std::move(base));
  for (auto& g : scaled) out.push_back(std::move(g));
  return out;
}

}  // namespace copse::grove::components
