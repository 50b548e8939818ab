#include "grove/api/types.h"

#include <cmath>
#include <cstdio>

#include "kube/codec_json.h"

namespace copse::grove::api {

using kube::Condition;
using kube::codec::Element;
using kube::codec::Emit;
using kube::codec::ForEachField;
using kube::codec::Json;
using kube::codec::Prev;
using kube::codec::Put;
using kube::codec::PutArray;
using kube::codec::PutConditions;
using kube::codec::PutObject;
using kube::codec::PutOpt;
using kube::codec::PutOptObject;
using kube::codec::Read;
using kube::codec::ReadArray;
using kube::codec::Reader;
using kube::codec::ReadOpt;

namespace {

struct ByName {
  template <typename T>
  bool operator()(const T& a, const T& b) const noexcept {
    return a.name == b.name;
  }
};

// ---------------------------------------------------------------- decoding

bool ReadPack(Reader& r, Element e, TopologyPackConstraint& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "required") return Read(r, v, out.required);
    if (key == "preferred") return Read(r, v, out.preferred);
    return true;
  });
}

bool ReadTopologyConstraint(Reader& r, Element e, TopologyConstraint& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "topologyName") return Read(r, v, out.topology_name);
    if (key == "pack") return ReadOpt(r, v, out.pack, ReadPack);
    if (key == "packDomain") return Read(r, v, out.pack_domain);
    return true;
  });
}

bool ReadScaleConfig(Reader& r, Element e, AutoScalingConfig& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "minReplicas") return Read(r, v, out.min_replicas);
    if (key == "maxReplicas") return Read(r, v, out.max_replicas);
    return true;
  });
}

bool ReadPodCliqueSpec(Reader& r, Element e, PodCliqueSpec& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "roleName") return Read(r, v, out.role_name);
    if (key == "podSpec") {
      if (v.is_null()) {
        out.pod_spec.clear();
        return true;
      }
      if (!v.is_object()) return r.TypeError(v, "object");
      return kube::codec::ReadRawJson(r, v, out.pod_spec);
    }
    if (key == "replicas") return Read(r, v, out.replicas);
    if (key == "minAvailable") return Read(r, v, out.min_available);
    if (key == "startsAfter") return Read(r, v, out.starts_after);
    if (key == "autoScalingConfig") return ReadOpt(r, v, out.scale_config, ReadScaleConfig);
    return true;
  });
}

bool ReadCliqueTemplate(Reader& r, Element e, PodCliqueTemplateSpec& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "name") return Read(r, v, out.name);
    if (key == "labels") return Read(r, v, out.labels);
    if (key == "annotations") return Read(r, v, out.annotations);
    if (key == "topologyConstraint") {
      return ReadOpt(r, v, out.topology_constraint, ReadTopologyConstraint);
    }
    if (key == "spec") return ReadPodCliqueSpec(r, v, out.spec);
    return true;
  });
}

bool ReadScalingGroup(Reader& r, Element e, PodCliqueScalingGroupConfig& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "name") return Read(r, v, out.name);
    if (key == "cliqueNames") return Read(r, v, out.clique_names);
    if (key == "annotations") return Read(r, v, out.annotations);
    if (key == "replicas") return Read(r, v, out.replicas);
    if (key == "minAvailable") return Read(r, v, out.min_available);
    if (key == "scaleConfig") return ReadOpt(r, v, out.scale_config, ReadScaleConfig);
    if (key == "topologyConstraint") {
      return ReadOpt(r, v, out.topology_constraint, ReadTopologyConstraint);
    }
    return true;
  });
}

bool ReadHeadless(Reader& r, Element e, HeadlessServiceConfig& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "publishNotReadyAddresses") return Read(r, v, out.publish_not_ready_addresses);
    return true;
  });
}

bool ReadTemplate(Reader& r, Element e, PodCliqueSetTemplateSpec& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "cliques") return ReadArray(r, v, out.cliques, ReadCliqueTemplate);
    if (key == "cliqueStartupType") return Read(r, v, out.startup_type);
    if (key == "priorityClassName") return Read(r, v, out.priority_class_name);
    if (key == "headlessServiceConfig") {
      return ReadOpt(r, v, out.headless_service_config, ReadHeadless);
    }
    if (key == "topologyConstraint") {
      return ReadOpt(r, v, out.topology_constraint, ReadTopologyConstraint);
    }
    if (key == "terminationDelay") return Read(r, v, out.termination_delay);
    if (key == "podCliqueScalingGroups") {
      return ReadArray(r, v, out.scaling_groups, ReadScalingGroup);
    }
    return true;
  });
}

bool ReadUpdateStrategy(Reader& r, Element e, UpdateStrategy& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "type") return Read(r, v, out.type);
    return true;
  });
}

bool ReadPcsSpec(Reader& r, Element e, PodCliqueSetSpec& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "replicas") return Read(r, v, out.replicas);
    if (key == "updateStrategy") return ReadOpt(r, v, out.update_strategy, ReadUpdateStrategy);
    if (key == "template") return ReadTemplate(r, v, out.template_);
    return true;
  });
}

bool ReadGangStatusEntry(Reader& r, Element e, PodGangStatusEntry& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "name") return Read(r, v, out.name);
    if (key == "phase") return Read(r, v, out.phase);
    if (key == "conditions") return Read(r, v, out.conditions);
    return true;
  });
}

bool ReadPcsStatus(Reader& r, Element e, PodCliqueSetStatus& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "observedGeneration") return Read(r, v, out.observed_generation);
    if (key == "conditions") return Read(r, v, out.conditions);
    if (key == "replicas") return Read(r, v, out.replicas);
    if (key == "updatedReplicas") return Read(r, v, out.updated_replicas);
    if (key == "availableReplicas") return Read(r, v, out.available_replicas);
    if (key == "hpaPodSelector") return Read(r, v, out.selector);
    if (key == "podGangStatuses") {
      return ReadArray(r, v, out.pod_gang_statuses, ReadGangStatusEntry);
    }
    if (key == "currentGenerationHash") return Read(r, v, out.current_generation_hash);
    return true;
  });
}

bool ReadPclqStatus(Reader& r, Element e, PodCliqueStatus& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "observedGeneration") return Read(r, v, out.observed_generation);
    if (key == "replicas") return Read(r, v, out.replicas);
    if (key == "readyReplicas") return Read(r, v, out.ready_replicas);
    if (key == "updatedReplicas") return Read(r, v, out.updated_replicas);
    if (key == "scheduleGatedReplicas") return Read(r, v, out.schedule_gated_replicas);
    if (key == "scheduledReplicas") return Read(r, v, out.scheduled_replicas);
    if (key == "hpaPodSelector") return Read(r, v, out.selector);
    if (key == "conditions") return Read(r, v, out.conditions);
    if (key == "currentPodCliqueSetGenerationHash") {
      return Read(r, v, out.current_pod_cliqueset_generation_hash);
    }
    if (key == "currentPodTemplateHash") return Read(r, v, out.current_pod_template_hash);
    return true;
  });
}

bool ReadPcsgSpec(Reader& r, Element e, PodCliqueScalingGroupSpec& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "replicas") return Read(r, v, out.replicas);
    if (key == "minAvailable") return Read(r, v, out.min_available);
    if (key == "cliqueNames") return Read(r, v, out.clique_names);
    return true;
  });
}

bool ReadPcsgStatus(Reader& r, Element e, PodCliqueScalingGroupStatus& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "replicas") return Read(r, v, out.replicas);
    if (key == "scheduledReplicas") return Read(r, v, out.scheduled_replicas);
    if (key == "availableReplicas") return Read(r, v, out.available_replicas);
    if (key == "updatedReplicas") return Read(r, v, out.updated_replicas);
    if (key == "selector") return Read(r, v, out.selector);
    if (key == "observedGeneration") return Read(r, v, out.observed_generation);
    if (key == "conditions") return Read(r, v, out.conditions);
    if (key == "currentPodCliqueSetGenerationHash") {
      return Read(r, v, out.current_pod_cliqueset_generation_hash);
    }
    return true;
  });
}

bool ReadLevel(Reader& r, Element e, TopologyLevel& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "domain") return Read(r, v, out.domain);
    if (key == "key") return Read(r, v, out.key);
    return true;
  });
}

bool ReadSchedulerBinding(Reader& r, Element e, SchedulerTopologyBinding& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "schedulerName") return Read(r, v, out.scheduler_name);
    if (key == "topologyReference") return Read(r, v, out.topology_reference);
    return true;
  });
}

bool ReadCtbSpec(Reader& r, Element e, ClusterTopologyBindingSpec& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "levels") return ReadArray(r, v, out.levels, ReadLevel);
    if (key == "schedulerTopologyBindings") {
      return ReadArray(r, v, out.scheduler_topology_bindings, ReadSchedulerBinding);
    }
    return true;
  });
}

bool ReadNamespacedName(Reader& r, Element e, NamespacedName& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "namespace") return Read(r, v, out.namespace_);
    if (key == "name") return Read(r, v, out.name);
    return true;
  });
}

bool ReadPackConstraint(Reader& r, Element e, PackConstraint& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "required") return Read(r, v, out.required);
    if (key == "preferred") return Read(r, v, out.preferred);
    return true;
  });
}

bool ReadGangTopology(Reader& r, Element e, GangTopologyConstraint& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "packConstraint") return ReadOpt(r, v, out.pack_constraint, ReadPackConstraint);
    return true;
  });
}

bool ReadPodGroup(Reader& r, Element e, PodGroup& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "name") return Read(r, v, out.name);
    if (key == "podReferences") return ReadArray(r, v, out.pod_references, ReadNamespacedName);
    if (key == "minReplicas") return Read(r, v, out.min_replicas);
    if (key == "topologyConstraint") {
      return ReadOpt(r, v, out.topology_constraint, ReadGangTopology);
    }
    return true;
  });
}

bool ReadGroupConfig(Reader& r, Element e, TopologyConstraintGroupConfig& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "name") return Read(r, v, out.name);
    if (key == "podGroupNames") return Read(r, v, out.pod_group_names);
    if (key == "topologyConstraint") {
      return ReadOpt(r, v, out.topology_constraint, ReadGangTopology);
    }
    return true;
  });
}

bool ReadPodGangSpec(Reader& r, Element e, PodGangSpec& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "podgroups") return ReadArray(r, v, out.pod_groups, ReadPodGroup);
    if (key == "topologyConstraint") {
      return ReadOpt(r, v, out.topology_constraint, ReadGangTopology);
    }
    if (key == "topologyConstraintGroupConfigs") {
      return ReadArray(r, v, out.topology_constraint_group_configs, ReadGroupConfig);
    }
    if (key == "priorityClassName") return Read(r, v, out.priority_class_name);
    if (key == "reuseReservationRef") {
      return ReadOpt(r, v, out.reuse_reservation_ref, ReadNamespacedName);
    }
    return true;
  });
}

bool ReadPodGangStatus(Reader& r, Element e, PodGangStatus& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "phase") return Read(r, v, out.phase);
    if (key == "conditions") return Read(r, v, out.conditions);
    return true;
  });
}

// ---------------------------------------------------------------- encoding

void OverlayPack(Json& j, const TopologyPackConstraint& now, const TopologyPackConstraint* before) {
  Put(j, "required", now.required, Prev(before, &TopologyPackConstraint::required));
  Put(j, "preferred", now.preferred, Prev(before, &TopologyPackConstraint::preferred));
}

void OverlayTopologyConstraint(Json& j, const TopologyConstraint& now,
                               const TopologyConstraint* before) {
  Put(j, "topologyName", now.topology_name, Prev(before, &TopologyConstraint::topology_name));
  PutOptObject(j, "pack", now.pack, Prev(before, &TopologyConstraint::pack), OverlayPack);
  Put(j, "packDomain", now.pack_domain, Prev(before, &TopologyConstraint::pack_domain));
}

void OverlayScaleConfig(Json& j, const AutoScalingConfig& now, const AutoScalingConfig* before) {
  PutOpt(j, "minReplicas", now.min_replicas, Prev(before, &AutoScalingConfig::min_replicas));
  Put(j, "maxReplicas", now.max_replicas, Prev(before, &AutoScalingConfig::max_replicas),
      Emit::kAlways);
}

void PutRawObject(Json& j, const char* key, const std::string& now, const std::string* before) {
  if (before != nullptr && *before == now) return;
  if (now.empty()) {
    j.erase(key);
    return;
  }
  Json parsed = Json::parse(now, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_object()) j[key] = std::move(parsed);
}

void OverlayPodCliqueSpec(Json& j, const PodCliqueSpec& now, const PodCliqueSpec* before) {
  Put(j, "roleName", now.role_name, Prev(before, &PodCliqueSpec::role_name), Emit::kAlways);
  PutRawObject(j, "podSpec", now.pod_spec, Prev(before, &PodCliqueSpec::pod_spec));
  Put(j, "replicas", now.replicas, Prev(before, &PodCliqueSpec::replicas), Emit::kAlways);
  PutOpt(j, "minAvailable", now.min_available, Prev(before, &PodCliqueSpec::min_available));
  Put(j, "startsAfter", now.starts_after, Prev(before, &PodCliqueSpec::starts_after));
  PutOptObject(j, "autoScalingConfig", now.scale_config, Prev(before, &PodCliqueSpec::scale_config),
               OverlayScaleConfig);
}

void OverlayCliqueTemplate(Json& j, const PodCliqueTemplateSpec& now,
                           const PodCliqueTemplateSpec* before) {
  Put(j, "name", now.name, Prev(before, &PodCliqueTemplateSpec::name), Emit::kAlways);
  Put(j, "labels", now.labels, Prev(before, &PodCliqueTemplateSpec::labels));
  Put(j, "annotations", now.annotations, Prev(before, &PodCliqueTemplateSpec::annotations));
  PutOptObject(j, "topologyConstraint", now.topology_constraint,
               Prev(before, &PodCliqueTemplateSpec::topology_constraint),
               OverlayTopologyConstraint);
  const PodCliqueSpec* spec_before = Prev(before, &PodCliqueTemplateSpec::spec);
  if (spec_before == nullptr || !(*spec_before == now.spec)) {
    PutObject(j, "spec", [&](Json& s) { OverlayPodCliqueSpec(s, now.spec, spec_before); });
  }
}

void OverlayScalingGroup(Json& j, const PodCliqueScalingGroupConfig& now,
                         const PodCliqueScalingGroupConfig* before) {
  using C = PodCliqueScalingGroupConfig;
  Put(j, "name", now.name, Prev(before, &C::name), Emit::kAlways);
  if (before == nullptr || before->clique_names != now.clique_names) {
    j["cliqueNames"] = Json(now.clique_names);
  }
  Put(j, "annotations", now.annotations, Prev(before, &C::annotations));
  PutOpt(j, "replicas", now.replicas, Prev(before, &C::replicas));
  PutOpt(j, "minAvailable", now.min_available, Prev(before, &C::min_available));
  PutOptObject(j, "scaleConfig", now.scale_config, Prev(before, &C::scale_config),
               OverlayScaleConfig);
  PutOptObject(j, "topologyConstraint", now.topology_constraint,
               Prev(before, &C::topology_constraint), OverlayTopologyConstraint);
}

void OverlayHeadless(Json& j, const HeadlessServiceConfig& now,
                     const HeadlessServiceConfig* before) {
  Put(j, "publishNotReadyAddresses", now.publish_not_ready_addresses,
      Prev(before, &HeadlessServiceConfig::publish_not_ready_addresses), Emit::kAlways);
}

void OverlayTemplate(Json& j, const PodCliqueSetTemplateSpec& now,
                     const PodCliqueSetTemplateSpec* before) {
  using T = PodCliqueSetTemplateSpec;
  PutArray(j, "cliques", now.cliques, Prev(before, &T::cliques), OverlayCliqueTemplate, ByName{},
           Emit::kAlways);
  PutOpt(j, "cliqueStartupType", now.startup_type, Prev(before, &T::startup_type));
  Put(j, "priorityClassName", now.priority_class_name, Prev(before, &T::priority_class_name));
  PutOptObject(j, "headlessServiceConfig", now.headless_service_config,
               Prev(before, &T::headless_service_config), OverlayHeadless);
  PutOptObject(j, "topologyConstraint", now.topology_constraint,
               Prev(before, &T::topology_constraint), OverlayTopologyConstraint);
  PutOpt(j, "terminationDelay", now.termination_delay, Prev(before, &T::termination_delay));
  PutArray(j, "podCliqueScalingGroups", now.scaling_groups, Prev(before, &T::scaling_groups),
           OverlayScalingGroup, ByName{});
}

void OverlayUpdateStrategy(Json& j, const UpdateStrategy& now, const UpdateStrategy* before) {
  Put(j, "type", now.type, Prev(before, &UpdateStrategy::type));
}

void OverlayPcsSpec(Json& j, const PodCliqueSetSpec& now, const PodCliqueSetSpec* before) {
  Put(j, "replicas", now.replicas, Prev(before, &PodCliqueSetSpec::replicas));
  PutOptObject(j, "updateStrategy", now.update_strategy,
               Prev(before, &PodCliqueSetSpec::update_strategy), OverlayUpdateStrategy);
  const PodCliqueSetTemplateSpec* t_before = Prev(before, &PodCliqueSetSpec::template_);
  if (t_before == nullptr || !(*t_before == now.template_)) {
    PutObject(j, "template", [&](Json& t) { OverlayTemplate(t, now.template_, t_before); });
  }
}

void OverlayGangStatusEntry(Json& j, const PodGangStatusEntry& now,
                            const PodGangStatusEntry* before) {
  Put(j, "name", now.name, Prev(before, &PodGangStatusEntry::name), Emit::kAlways);
  Put(j, "phase", now.phase, Prev(before, &PodGangStatusEntry::phase), Emit::kAlways);
  PutConditions(j, "conditions", now.conditions, Prev(before, &PodGangStatusEntry::conditions));
}

void OverlayPcsStatus(Json& j, const PodCliqueSetStatus& now, const PodCliqueSetStatus* before) {
  using S = PodCliqueSetStatus;
  PutOpt(j, "observedGeneration", now.observed_generation, Prev(before, &S::observed_generation));
  PutConditions(j, "conditions", now.conditions, Prev(before, &S::conditions));
  Put(j, "replicas", now.replicas, Prev(before, &S::replicas));
  Put(j, "updatedReplicas", now.updated_replicas, Prev(before, &S::updated_replicas),
      Emit::kAlways);
  Put(j, "availableReplicas", now.available_replicas, Prev(before, &S::available_replicas),
      Emit::kAlways);
  PutOpt(j, "hpaPodSelector", now.selector, Prev(before, &S::selector));
  PutArray(j, "podGangStatuses", now.pod_gang_statuses, Prev(before, &S::pod_gang_statuses),
           OverlayGangStatusEntry, ByName{});
  PutOpt(j, "currentGenerationHash", now.current_generation_hash,
         Prev(before, &S::current_generation_hash));
}

void OverlayPclqStatus(Json& j, const PodCliqueStatus& now, const PodCliqueStatus* before) {
  using S = PodCliqueStatus;
  PutOpt(j, "observedGeneration", now.observed_generation, Prev(before, &S::observed_generation));
  Put(j, "replicas", now.replicas, Prev(before, &S::replicas));
  Put(j, "readyReplicas", now.ready_replicas, Prev(before, &S::ready_replicas), Emit::kAlways);
  Put(j, "updatedReplicas", now.updated_replicas, Prev(before, &S::updated_replicas),
      Emit::kAlways);
  Put(j, "scheduleGatedReplicas", now.schedule_gated_replicas,
      Prev(before, &S::schedule_gated_replicas), Emit::kAlways);
  Put(j, "scheduledReplicas", now.scheduled_replicas, Prev(before, &S::scheduled_replicas),
      Emit::kAlways);
  PutOpt(j, "hpaPodSelector", now.selector, Prev(before, &S::selector));
  PutConditions(j, "conditions", now.conditions, Prev(before, &S::conditions));
  PutOpt(j, "currentPodCliqueSetGenerationHash", now.current_pod_cliqueset_generation_hash,
         Prev(before, &S::current_pod_cliqueset_generation_hash));
  PutOpt(j, "currentPodTemplateHash", now.current_pod_template_hash,
         Prev(before, &S::current_pod_template_hash));
}

void OverlayPcsgSpec(Json& j, const PodCliqueScalingGroupSpec& now,
                     const PodCliqueScalingGroupSpec* before) {
  using S = PodCliqueScalingGroupSpec;
  Put(j, "replicas", now.replicas, Prev(before, &S::replicas), Emit::kAlways);
  PutOpt(j, "minAvailable", now.min_available, Prev(before, &S::min_available));
  if (before == nullptr || before->clique_names != now.clique_names) {
    j["cliqueNames"] = Json(now.clique_names);
  }
}

void OverlayPcsgStatus(Json& j, const PodCliqueScalingGroupStatus& now,
                       const PodCliqueScalingGroupStatus* before) {
  using S = PodCliqueScalingGroupStatus;
  Put(j, "replicas", now.replicas, Prev(before, &S::replicas));
  Put(j, "scheduledReplicas", now.scheduled_replicas, Prev(before, &S::scheduled_replicas),
      Emit::kAlways);
  Put(j, "availableReplicas", now.available_replicas, Prev(before, &S::available_replicas),
      Emit::kAlways);
  Put(j, "updatedReplicas", now.updated_replicas, Prev(before, &S::updated_replicas),
      Emit::kAlways);
  PutOpt(j, "selector", now.selector, Prev(before, &S::selector));
  PutOpt(j, "observedGeneration", now.observed_generation, Prev(before, &S::observed_generation));
  PutConditions(j, "conditions", now.conditions, Prev(before, &S::conditions));
  PutOpt(j, "currentPodCliqueSetGenerationHash", now.current_pod_cliqueset_generation_hash,
         Prev(before, &S::current_pod_cliqueset_generation_hash));
}

void OverlayLevel(Json& j, const TopologyLevel& now, const TopologyLevel* before) {
  Put(j, "domain", now.domain, Prev(before, &TopologyLevel::domain), Emit::kAlways);
  Put(j, "key", now.key, Prev(before, &TopologyLevel::key), Emit::kAlways);
}

void OverlaySchedulerBinding(Json& j, const SchedulerTopologyBinding& now,
                             const SchedulerTopologyBinding* before) {
  Put(j, "schedulerName", now.scheduler_name,
      Prev(before, &SchedulerTopologyBinding::scheduler_name), Emit::kAlways);
  Put(j, "topologyReference", now.topology_reference,
      Prev(before, &SchedulerTopologyBinding::topology_reference), Emit::kAlways);
}

void OverlayCtbSpec(Json& j, const ClusterTopologyBindingSpec& now,
                    const ClusterTopologyBindingSpec* before) {
  PutArray(j, "levels", now.levels, Prev(before, &ClusterTopologyBindingSpec::levels), OverlayLevel,
           kube::codec::NoKey{}, Emit::kAlways);
  PutArray(j, "schedulerTopologyBindings", now.scheduler_topology_bindings,
           Prev(before, &ClusterTopologyBindingSpec::scheduler_topology_bindings),
           OverlaySchedulerBinding);
}

void OverlayNamespacedName(Json& j, const NamespacedName& now, const NamespacedName* before) {
  Put(j, "namespace", now.namespace_, Prev(before, &NamespacedName::namespace_), Emit::kAlways);
  Put(j, "name", now.name, Prev(before, &NamespacedName::name), Emit::kAlways);
}

void OverlayPackConstraint(Json& j, const PackConstraint& now, const PackConstraint* before) {
  PutOpt(j, "required", now.required, Prev(before, &PackConstraint::required));
  PutOpt(j, "preferred", now.preferred, Prev(before, &PackConstraint::preferred));
}

void OverlayGangTopology(Json& j, const GangTopologyConstraint& now,
                         const GangTopologyConstraint* before) {
  PutOptObject(j, "packConstraint", now.pack_constraint,
               Prev(before, &GangTopologyConstraint::pack_constraint), OverlayPackConstraint);
}

void OverlayPodGroup(Json& j, const PodGroup& now, const PodGroup* before) {
  Put(j, "name", now.name, Prev(before, &PodGroup::name), Emit::kAlways);
  PutArray(j, "podReferences", now.pod_references, Prev(before, &PodGroup::pod_references),
           OverlayNamespacedName, kube::codec::NoKey{}, Emit::kAlways);
  Put(j, "minReplicas", now.min_replicas, Prev(before, &PodGroup::min_replicas), Emit::kAlways);
  PutOptObject(j, "topologyConstraint", now.topology_constraint,
               Prev(before, &PodGroup::topology_constraint), OverlayGangTopology);
}

void OverlayGroupConfig(Json& j, const TopologyConstraintGroupConfig& now,
                        const TopologyConstraintGroupConfig* before) {
  using G = TopologyConstraintGroupConfig;
  Put(j, "name", now.name, Prev(before, &G::name), Emit::kAlways);
  if (before == nullptr || before->pod_group_names != now.pod_group_names) {
    j["podGroupNames"] = Json(now.pod_group_names);
  }
  PutOptObject(j, "topologyConstraint", now.topology_constraint,
               Prev(before, &G::topology_constraint), OverlayGangTopology);
}

void OverlayPodGangSpec(Json& j, const PodGangSpec& now, const PodGangSpec* before) {
  PutArray(j, "podgroups", now.pod_groups, Prev(before, &PodGangSpec::pod_groups), OverlayPodGroup,
           ByName{}, Emit::kAlways);
  PutOptObject(j, "topologyConstraint", now.topology_constraint,
               Prev(before, &PodGangSpec::topology_constraint), OverlayGangTopology);
  PutArray(j, "topologyConstraintGroupConfigs", now.topology_constraint_group_configs,
           Prev(before, &PodGangSpec::topology_constraint_group_configs), OverlayGroupConfig,
           ByName{});
  Put(j, "priorityClassName", now.priority_class_name,
      Prev(before, &PodGangSpec::priority_class_name));
  PutOptObject(j, "reuseReservationRef", now.reuse_reservation_ref,
               Prev(before, &PodGangSpec::reuse_reservation_ref), OverlayNamespacedName);
}

void OverlayPodGangStatus(Json& j, const PodGangStatus& now, const PodGangStatus* before) {
  Put(j, "phase", now.phase, Prev(before, &PodGangStatus::phase), Emit::kAlways);
  PutConditions(j, "conditions", now.conditions, Prev(before, &PodGangStatus::conditions));
}

// Writes `field` (spec or status) only when it differs from what raw held.
template <typename S, typename F>
void PutPart(Json& root, const char* key, const S& now, const S* before, F&& overlay) {
  if (before != nullptr && *before == now) return;
  PutObject(root, key, [&](Json& j) { overlay(j, now, before); });
}

}  // namespace

// ---------------------------------------------------------------- helpers

std::string TopologyConstraint::RequiredDomain() const {
  if (pack.has_value() && !pack->required.empty()) return pack->required;
  return pack_domain;
}

std::string TopologyConstraint::PreferredDomain() const {
  return pack.has_value() ? pack->preferred : std::string();
}

const PodCliqueTemplateSpec* PodCliqueSetTemplateSpec::FindClique(
    std::string_view name) const noexcept {
  for (const auto& clique : cliques) {
    if (clique.name == name) return &clique;
  }
  return nullptr;
}

const PodCliqueScalingGroupConfig* PodCliqueSetTemplateSpec::ScalingGroupOf(
    std::string_view clique) const noexcept {
  for (const auto& group : scaling_groups) {
    for (const auto& name : group.clique_names) {
      if (name == clique) return &group;
    }
  }
  return nullptr;
}

std::string ClusterTopologyBindingSpec::KeyOf(std::string_view domain) const {
  for (const auto& level : levels) {
    if (level.domain == domain) return level.key;
  }
  return {};
}

bool PodGang::IsInitialized() const {
  const Condition* c = kube::FindCondition(status.conditions, kConditionInitialized);
  return c != nullptr && c->status == "True";
}

// ---------------------------------------------------------------- objects

Result<PodCliqueSet> PodCliqueSet::Decode(std::string_view json) {
  return kube::codec::DecodeObject<PodCliqueSet>(
      json, kKind, [](Reader& r, std::string_view key, Element v, PodCliqueSet& out) {
        if (key == "spec") return ReadPcsSpec(r, v, out.spec);
        if (key == "status") return ReadPcsStatus(r, v, out.status);
        return true;
      });
}

std::string PodCliqueSet::Encode() const {
  auto same = [this](const PodCliqueSet& b) { return spec == b.spec && status == b.status; };
  return kube::codec::EncodeObject(
      *this, kApiVersion, kKind, same, [this](Json& root, const PodCliqueSet* before) {
        PutPart(root, "spec", spec, Prev(before, &PodCliqueSet::spec), OverlayPcsSpec);
        PutPart(root, "status", status, Prev(before, &PodCliqueSet::status), OverlayPcsStatus);
      });
}

Result<PodClique> PodClique::Decode(std::string_view json) {
  return kube::codec::DecodeObject<PodClique>(
      json, kKind, [](Reader& r, std::string_view key, Element v, PodClique& out) {
        if (key == "spec") return ReadPodCliqueSpec(r, v, out.spec);
        if (key == "status") return ReadPclqStatus(r, v, out.status);
        return true;
      });
}

std::string PodClique::Encode() const {
  auto same = [this](const PodClique& b) { return spec == b.spec && status == b.status; };
  return kube::codec::EncodeObject(
      *this, kApiVersion, kKind, same, [this](Json& root, const PodClique* before) {
        PutPart(root, "spec", spec, Prev(before, &PodClique::spec), OverlayPodCliqueSpec);
        PutPart(root, "status", status, Prev(before, &PodClique::status), OverlayPclqStatus);
      });
}

Result<PodCliqueScalingGroup> PodCliqueScalingGroup::Decode(std::string_view json) {
  return kube::codec::DecodeObject<PodCliqueScalingGroup>(
      json, kKind, [](Reader& r, std::string_view key, Element v, PodCliqueScalingGroup& out) {
        if (key == "spec") return ReadPcsgSpec(r, v, out.spec);
        if (key == "status") return ReadPcsgStatus(r, v, out.status);
        return true;
      });
}

std::string PodCliqueScalingGroup::Encode() const {
  using G = PodCliqueScalingGroup;
  auto same = [this](const G& b) { return spec == b.spec && status == b.status; };
  return kube::codec::EncodeObject(
      *this, kApiVersion, kKind, same, [this](Json& root, const G* before) {
        PutPart(root, "spec", spec, Prev(before, &G::spec), OverlayPcsgSpec);
        PutPart(root, "status", status, Prev(before, &G::status), OverlayPcsgStatus);
      });
}

Result<ClusterTopologyBinding> ClusterTopologyBinding::Decode(std::string_view json) {
  return kube::codec::DecodeObject<ClusterTopologyBinding>(
      json, kKind, [](Reader& r, std::string_view key, Element v, ClusterTopologyBinding& out) {
        if (key == "spec") return ReadCtbSpec(r, v, out.spec);
        return true;
      });
}

std::string ClusterTopologyBinding::Encode() const {
  using B = ClusterTopologyBinding;
  auto same = [this](const B& b) { return spec == b.spec; };
  return kube::codec::EncodeObject(
      *this, kApiVersion, kKind, same, [this](Json& root, const B* before) {
        PutPart(root, "spec", spec, Prev(before, &B::spec), OverlayCtbSpec);
      });
}

Result<PodGang> PodGang::Decode(std::string_view json) {
  return kube::codec::DecodeObject<PodGang>(
      json, kKind, [](Reader& r, std::string_view key, Element v, PodGang& out) {
        if (key == "spec") return ReadPodGangSpec(r, v, out.spec);
        if (key == "status") return ReadPodGangStatus(r, v, out.status);
        return true;
      });
}

std::string PodGang::Encode() const {
  auto same = [this](const PodGang& b) { return spec == b.spec && status == b.status; };
  return kube::codec::EncodeObject(
      *this, kApiVersion, kKind, same, [this](Json& root, const PodGang* before) {
        PutPart(root, "spec", spec, Prev(before, &PodGang::spec), OverlayPodGangSpec);
        PutPart(root, "status", status, Prev(before, &PodGang::status), OverlayPodGangStatus);
      });
}

// ---------------------------------------------------------------- durations

Result<std::chrono::nanoseconds> ParseDuration(std::string_view text) {
  auto invalid = [&]() -> Error {
    return MakeError(ErrorCode::kInvalid, "invalid duration \"" + std::string(text) + "\"");
  };
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return std::chrono::nanoseconds(0);
  if (s.empty()) return invalid();
  long double total = 0;
  while (!s.empty()) {
    size_t i = 0;
    long double value = 0;
    bool digits = false;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      value = value * 10 + (s[i] - '0');
      ++i;
      digits = true;
    }
    if (i < s.size() && s[i] == '.') {
      ++i;
      long double scale = 0.1L;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
        value += (s[i] - '0') * scale;
        scale /= 10;
        ++i;
        digits = true;
      }
    }
    if (!digits) return invalid();
    size_t unit_start = i;
    while (i < s.size() && !(s[i] >= '0' && s[i] <= '9') && s[i] != '.') ++i;
    std::string_view unit = s.substr(unit_start, i - unit_start);
    long double scale = 0;
    if (unit == "ns") {
      scale = 1;
    } else if (unit == "us" || unit == "\xc2\xb5s" || unit == "\xce\xbcs") {
      scale = 1e3L;
    } else if (unit == "ms") {
      scale = 1e6L;
    } else if (unit == "s") {
      scale = 1e9L;
    } else if (unit == "m") {
      scale = 60e9L;
    } else if (unit == "h") {
      scale = 3600e9L;
    } else {
      return invalid();
    }
    total += value * scale;
    s.remove_prefix(i);
  }
  if (total > 9.2e18L) return invalid();
  auto ns = static_cast<int64_t>(std::llround(static_cast<double>(total)));
  return std::chrono::nanoseconds(negative ? -ns : ns);
}

std::string FormatDuration(std::chrono::nanoseconds d) {
  int64_t ns = d.count();
  if (ns == 0) return "0s";
  std::string sign = ns < 0 ? "-" : "";
  uint64_t u = ns < 0 ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
  char buf[64];
  if (u < 1'000'000'000ULL) {
    // Sub-second: the largest unit that keeps an integer part.
    const char* unit = "ns";
    double value = static_cast<double>(u);
    if (u >= 1'000'000ULL) {
      unit = "ms";
      value /= 1e6;
    } else if (u >= 1'000ULL) {
      unit = "µs";
      value /= 1e3;
    }
    std::snprintf(buf, sizeof(buf), "%.9g%s", value, unit);
    return sign + buf;
  }
  uint64_t hours = u / 3'600'000'000'000ULL;
  u %= 3'600'000'000'000ULL;
  uint64_t minutes = u / 60'000'000'000ULL;
  u %= 60'000'000'000ULL;
  double seconds = static_cast<double>(u) / 1e9;
  std::string out = sign;
  if (hours > 0) out += std::to_string(hours) + "h";
  if (hours > 0 || minutes > 0) out += std::to_string(minutes) + "m";
  std::snprintf(buf, sizeof(buf), "%.9g", seconds);
  out += buf;
  out += "s";
  return out;
}

}  // namespace copse::grove::api
