#include "kube/pod_group.h"

#include <utility>

#include "core/json_text.h"
#include "kube/codec_json.h"

namespace copse::kube {

using codec::Element;
using codec::Emit;
using codec::ForEachField;
using codec::Json;
using codec::Prev;
using codec::Put;
using codec::PutArray;
using codec::PutObject;
using codec::PutOpt;
using codec::PutOptObject;
using codec::Read;
using codec::ReadArray;
using codec::Reader;
using codec::ReadOpt;

// Defined in kube/workload.cc: the scheduling fields v1alpha2 PodGroup and
// PodGroupTemplate share.
namespace v1alpha2_codec {
bool ReadSchedulingPolicy(Reader& r, Element e, PodGroupSchedulingPolicy& out);
bool ReadSchedulingConstraints(Reader& r, Element e, PodGroupSchedulingConstraints& out);
void OverlaySchedulingPolicy(Json& j, const PodGroupSchedulingPolicy& now,
                             const PodGroupSchedulingPolicy* before);
void OverlaySchedulingConstraints(Json& j, const PodGroupSchedulingConstraints& now,
                                  const PodGroupSchedulingConstraints* before);
}  // namespace v1alpha2_codec

namespace {

// ------------------------------------------------------------ v1alpha2

bool ReadWorkloadRef(Reader& r, Element e, WorkloadPodGroupTemplateReference& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "workloadName") return Read(r, v, out.workload_name);
    if (key == "podGroupTemplateName") return Read(r, v, out.pod_group_template_name);
    return true;
  });
}

bool ReadTemplateRef(Reader& r, Element e, PodGroupTemplateReference& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "workload") return ReadOpt(r, v, out.workload, ReadWorkloadRef);
    return true;
  });
}

bool ReadPodGroupSpec(Reader& r, Element e, PodGroupSpec& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "podGroupTemplateRef") {
      return ReadOpt(r, v, out.pod_group_template_ref, ReadTemplateRef);
    }
    if (key == "schedulingPolicy") {
      return v1alpha2_codec::ReadSchedulingPolicy(r, v, out.scheduling_policy);
    }
    if (key == "schedulingConstraints") {
      return ReadOpt(r, v, out.scheduling_constraints, v1alpha2_codec::ReadSchedulingConstraints);
    }
    if (key == "disruptionMode") return Read(r, v, out.disruption_mode);
    if (key == "priorityClassName") return Read(r, v, out.priority_class_name);
    if (key == "priority") return Read(r, v, out.priority);
    return true;
  });
}

bool ReadPodGroupStatus(Reader& r, Element e, PodGroupStatus& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "conditions") return Read(r, v, out.conditions);
    return true;
  });
}

void OverlayWorkloadRef(Json& j, const WorkloadPodGroupTemplateReference& now,
                        const WorkloadPodGroupTemplateReference* before) {
  using T = WorkloadPodGroupTemplateReference;
  Put(j, "workloadName", now.workload_name, Prev(before, &T::workload_name), Emit::kAlways);
  Put(j, "podGroupTemplateName", now.pod_group_template_name,
      Prev(before, &T::pod_group_template_name), Emit::kAlways);
}

void OverlayTemplateRef(Json& j, const PodGroupTemplateReference& now,
                        const PodGroupTemplateReference* before) {
  PutOptObject(j, "workload", now.workload, Prev(before, &PodGroupTemplateReference::workload),
               OverlayWorkloadRef);
}

void OverlayPodGroupSpec(Json& j, const PodGroupSpec& now, const PodGroupSpec* before) {
  using S = PodGroupSpec;
  PutOptObject(j, "podGroupTemplateRef", now.pod_group_template_ref,
               Prev(before, &S::pod_group_template_ref), OverlayTemplateRef);
  PutObject(j, "schedulingPolicy", [&](Json& p) {
    v1alpha2_codec::OverlaySchedulingPolicy(p, now.scheduling_policy,
                                            Prev(before, &S::scheduling_policy));
  });
  PutOptObject(j, "schedulingConstraints", now.scheduling_constraints,
               Prev(before, &S::scheduling_constraints),
               v1alpha2_codec::OverlaySchedulingConstraints);
  PutOpt(j, "disruptionMode", now.disruption_mode, Prev(before, &S::disruption_mode));
  Put(j, "priorityClassName", now.priority_class_name, Prev(before, &S::priority_class_name));
  PutOpt(j, "priority", now.priority, Prev(before, &S::priority));
}

// ---------------------------------------------------------------- copse

bool ReadConstraint(Reader& r, Element e, CopseTopologyConstraint& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "topology") return Read(r, v, out.topology);
    if (key == "requiredTopologyLevel") return Read(r, v, out.required_topology_level);
    if (key == "preferredTopologyLevel") return Read(r, v, out.preferred_topology_level);
    return true;
  });
}

bool ReadSubGroup(Reader& r, Element e, CopseSubGroup& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "name") return Read(r, v, out.name);
    if (key == "parent") return Read(r, v, out.parent);
    if (key == "minMember") return Read(r, v, out.min_member);
    if (key == "minSubGroup") return Read(r, v, out.min_sub_group);
    if (key == "topologyConstraint") return ReadOpt(r, v, out.topology_constraint, ReadConstraint);
    return true;
  });
}

bool ReadCopseSpec(Reader& r, Element e, CopsePodGroupSpec& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "minMember") return Read(r, v, out.min_member);
    if (key == "minSubGroup") return Read(r, v, out.min_sub_group);
    if (key == "priorityClassName") return Read(r, v, out.priority_class_name);
    if (key == "preemptibility") return Read(r, v, out.preemptibility);
    if (key == "disruptionMode") return Read(r, v, out.disruption_mode);
    if (key == "topologyConstraint") return ReadOpt(r, v, out.topology_constraint, ReadConstraint);
    if (key == "subGroups") return ReadArray(r, v, out.sub_groups, ReadSubGroup);
    return true;
  });
}

bool ReadSubGroupStatus(Reader& r, Element e, CopseSubGroupStatus& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "name") return Read(r, v, out.name);
    if (key == "scheduled") return Read(r, v, out.scheduled);
    if (key == "ready") return Read(r, v, out.ready);
    return true;
  });
}

bool ReadCopseStatus(Reader& r, Element e, CopsePodGroupStatus& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "phase") return Read(r, v, out.phase);
    if (key == "conditions") return Read(r, v, out.conditions);
    if (key == "scheduled") return Read(r, v, out.scheduled);
    if (key == "ready") return Read(r, v, out.ready);
    if (key == "subGroups") return ReadArray(r, v, out.sub_groups, ReadSubGroupStatus);
    if (key == "observedGeneration") return Read(r, v, out.observed_generation);
    if (key == "allocatedNonPreemptible") return Read(r, v, out.allocated_non_preemptible);
    return true;
  });
}

void OverlayConstraint(Json& j, const CopseTopologyConstraint& now,
                       const CopseTopologyConstraint* before) {
  using C = CopseTopologyConstraint;
  Put(j, "topology", now.topology, Prev(before, &C::topology));
  Put(j, "requiredTopologyLevel", now.required_topology_level,
      Prev(before, &C::required_topology_level));
  Put(j, "preferredTopologyLevel", now.preferred_topology_level,
      Prev(before, &C::preferred_topology_level));
}

void OverlaySubGroup(Json& j, const CopseSubGroup& now, const CopseSubGroup* before) {
  using G = CopseSubGroup;
  Put(j, "name", now.name, Prev(before, &G::name), Emit::kAlways);
  Put(j, "parent", now.parent, Prev(before, &G::parent));
  Put(j, "minMember", now.min_member, Prev(before, &G::min_member));
  PutOpt(j, "minSubGroup", now.min_sub_group, Prev(before, &G::min_sub_group));
  PutOptObject(j, "topologyConstraint", now.topology_constraint,
               Prev(before, &G::topology_constraint), OverlayConstraint);
}

void OverlaySubGroupStatus(Json& j, const CopseSubGroupStatus& now,
                           const CopseSubGroupStatus* before, Emit emit) {
  using G = CopseSubGroupStatus;
  Put(j, "name", now.name, Prev(before, &G::name), Emit::kAlways);
  Put(j, "scheduled", now.scheduled, Prev(before, &G::scheduled), emit);
  Put(j, "ready", now.ready, Prev(before, &G::ready), emit);
}

template <typename T>
bool SameName(const T& a, const T& b) {
  return a.name == b.name;
}

void OverlayCopseSpec(Json& j, const CopsePodGroupSpec& now, const CopsePodGroupSpec* before) {
  using S = CopsePodGroupSpec;
  Put(j, "minMember", now.min_member, Prev(before, &S::min_member), Emit::kAlways);
  PutOpt(j, "minSubGroup", now.min_sub_group, Prev(before, &S::min_sub_group));
  Put(j, "priorityClassName", now.priority_class_name, Prev(before, &S::priority_class_name));
  Put(j, "preemptibility", now.preemptibility, Prev(before, &S::preemptibility));
  Put(j, "disruptionMode", now.disruption_mode, Prev(before, &S::disruption_mode));
  PutOptObject(j, "topologyConstraint", now.topology_constraint,
               Prev(before, &S::topology_constraint), OverlayConstraint);
  PutArray(j, "subGroups", now.sub_groups, Prev(before, &S::sub_groups), OverlaySubGroup,
           SameName<CopseSubGroup>);
}

void OverlayCopseStatus(Json& j, const CopsePodGroupStatus& now,
                        const CopsePodGroupStatus* before) {
  using S = CopsePodGroupStatus;
  Put(j, "phase", now.phase, Prev(before, &S::phase));
  codec::PutConditions(j, "conditions", now.conditions, Prev(before, &S::conditions));
  Put(j, "scheduled", now.scheduled, Prev(before, &S::scheduled));
  Put(j, "ready", now.ready, Prev(before, &S::ready));
  PutArray(
      j, "subGroups", now.sub_groups, Prev(before, &S::sub_groups),
      [](Json& g, const CopseSubGroupStatus& n, const CopseSubGroupStatus* b) {
        OverlaySubGroupStatus(g, n, b, Emit::kOmitEmpty);
      },
      SameName<CopseSubGroupStatus>);
  PutOpt(j, "observedGeneration", now.observed_generation, Prev(before, &S::observed_generation));
  Put(j, "allocatedNonPreemptible", now.allocated_non_preemptible,
      Prev(before, &S::allocated_non_preemptible));
}

TopologyConstraint ToConstraint(const std::optional<CopseTopologyConstraint>& c) {
  if (!c.has_value()) return {};
  return TopologyConstraint{c->topology, c->required_topology_level, c->preferred_topology_level};
}

// Status patches are written as text (one per scheduled gang, so a hot
// path): the fields codec::OverlayCondition writes, empty ones left out.
void AppendField(std::string& out, std::string_view key, std::string_view value) {
  if (value.empty()) return;
  out += ",\"";
  out += key;
  out += "\":";
  AppendJsonString(out, value);
}

void AppendConditions(std::string& out, const std::vector<Condition>& conditions) {
  out += "\"conditions\":[";
  for (size_t i = 0; i < conditions.size(); ++i) {
    const Condition& c = conditions[i];
    if (i > 0) out += ',';
    out += "{\"type\":";
    AppendJsonString(out, c.type);
    out += ",\"status\":";
    AppendJsonString(out, c.status);
    if (c.observed_generation.has_value()) {
      out += ",\"observedGeneration\":";
      out += std::to_string(*c.observed_generation);
    }
    AppendField(out, "lastProbeTime", c.last_probe_time);
    AppendField(out, "lastHeartbeatTime", c.last_heartbeat_time);
    AppendField(out, "lastTransitionTime", c.last_transition_time);
    AppendField(out, "reason", c.reason);
    AppendField(out, "message", c.message);
    out += '}';
  }
  out += ']';
}

// {"metadata":{"resourceVersion":...},"status":{<fields>}}
std::string StatusPatchHead(std::string_view resource_version) {
  std::string out;
  out.reserve(512);
  out += '{';
  if (!resource_version.empty()) {
    out += "\"metadata\":{\"resourceVersion\":";
    AppendJsonString(out, resource_version);
    out += "},";
  }
  out += "\"status\":{";
  return out;
}

std::string JoinErrors(const std::vector<std::string>& errors) {
  std::string out;
  for (size_t i = 0; i < errors.size(); ++i) {
    if (i > 0) out += "; ";
    out += errors[i];
  }
  return out;
}

void FillMeta(const KubeObject& object, GangSpec& spec) {
  spec.namespace_ = object.meta.namespace_;
  spec.name = object.meta.name;
  spec.uid = object.meta.uid;
  spec.generation = object.meta.generation;
}

}  // namespace

// ------------------------------------------------------------ PodGroup

Result<GangSpec> PodGroup::ToGangSpec() const {
  Result<GangSpec> spec_or =
      GangSpecFromSchedulingFields(spec.scheduling_policy, spec.scheduling_constraints,
                                   spec.disruption_mode, spec.priority_class_name, spec.priority);
  if (!spec_or.ok()) return std::move(spec_or).error();
  GangSpec gang = std::move(spec_or).value();
  FillMeta(*this, gang);
  return gang;
}

std::string PodGroup::StatusPatch(const PodGroupStatus& status, std::string_view resource_version) {
  std::string out = StatusPatchHead(resource_version);
  AppendConditions(out, status.conditions);
  out += "}}";
  return out;
}

Result<PodGroup> PodGroup::Decode(std::string_view json) {
  return codec::DecodeObject<PodGroup>(
      json, kKind, [](Reader& r, std::string_view key, Element v, PodGroup& out) {
        if (key == "spec") return ReadPodGroupSpec(r, v, out.spec);
        if (key == "status") return ReadPodGroupStatus(r, v, out.status);
        return true;
      });
}

std::string PodGroup::Encode() const {
  return codec::EncodeObject(
      *this, kApiVersion, kKind,
      [this](const PodGroup& before) { return spec == before.spec && status == before.status; },
      [this](Json& root, const PodGroup* before) {
        PutObject(root, "spec",
                  [&](Json& j) { OverlayPodGroupSpec(j, spec, Prev(before, &PodGroup::spec)); });
        PutObject(root, "status", [&](Json& j) {
          codec::PutConditions(j, "conditions", status.conditions,
                               before != nullptr ? &before->status.conditions : nullptr);
        });
      });
}

Result<PodGroup> PodGroupFromTemplate(const Workload& workload, std::string_view template_name,
                                      std::string name) {
  const PodGroupTemplate* t = workload.FindTemplate(template_name);
  if (t == nullptr) {
    return MakeError(ErrorCode::kNotFound, "workload " + workload.meta.Key() +
                                               " has no podGroupTemplate \"" +
                                               std::string(template_name) + "\"");
  }
  PodGroup group;
  group.api_version = std::string(PodGroup::kApiVersion);
  group.kind = std::string(PodGroup::kKind);
  group.meta.name = std::move(name);
  group.meta.namespace_ = workload.meta.namespace_;
  OwnerReference owner;
  owner.api_version = std::string(Workload::kApiVersion);
  owner.kind = std::string(Workload::kKind);
  owner.name = workload.meta.name;
  owner.uid = workload.meta.uid;
  owner.controller = true;
  owner.block_owner_deletion = true;
  group.meta.owner_references.push_back(std::move(owner));
  group.spec.pod_group_template_ref.emplace();
  group.spec.pod_group_template_ref->workload =
      WorkloadPodGroupTemplateReference{workload.meta.name, t->name};
  group.spec.scheduling_policy = t->scheduling_policy;
  group.spec.scheduling_constraints = t->scheduling_constraints;
  group.spec.disruption_mode = t->disruption_mode;
  group.spec.priority_class_name = t->priority_class_name;
  group.spec.priority = t->priority;
  return group;
}

// ------------------------------------------------------------ CopsePodGroup

Result<GangSpec> CopsePodGroup::ToGangSpec() const {
  std::vector<std::string> errors;
  GangSpec gang;
  FillMeta(*this, gang);
  gang.source = GangSource::kCopsePodGroup;
  gang.policy = GangPolicy::kGang;
  gang.min_member = spec.min_member;
  gang.min_sub_group = spec.min_sub_group;
  gang.priority_class_name = spec.priority_class_name;
  Result<Preemptibility> preemptibility = ParsePreemptibility(spec.preemptibility);
  if (preemptibility.ok()) {
    gang.preemptibility = *preemptibility;
  } else {
    errors.push_back("spec.preemptibility: " + preemptibility.error().message);
  }
  Result<DisruptionMode> disruption = ParseDisruptionMode(spec.disruption_mode);
  if (disruption.ok()) {
    gang.disruption_mode = *disruption;
  } else {
    errors.push_back("spec.disruptionMode: " + disruption.error().message);
  }
  gang.topology_constraint = ToConstraint(spec.topology_constraint);
  gang.sub_groups.reserve(spec.sub_groups.size());
  for (const CopseSubGroup& group : spec.sub_groups) {
    SubGroupSpec sub;
    sub.name = group.name;
    sub.parent = group.parent;
    sub.min_member = group.min_member;
    sub.min_sub_group = group.min_sub_group;
    sub.topology_constraint = ToConstraint(group.topology_constraint);
    gang.sub_groups.push_back(std::move(sub));
  }
  for (std::string& error : GangSpecErrors(gang)) errors.push_back(std::move(error));
  if (!errors.empty()) return MakeError(ErrorCode::kInvalid, JoinErrors(errors));
  return gang;
}

std::string CopsePodGroup::StatusPatch(const CopsePodGroupStatus& status,
                                       std::string_view resource_version) {
  // Every field is written (null clears one): a merge patch leaves out what
  // it does not name, and this patch carries the whole status.
  std::string out = StatusPatchHead(resource_version);
  out += "\"phase\":";
  if (status.phase.empty()) {
    out += "null";
  } else {
    AppendJsonString(out, status.phase);
  }
  out += ',';
  AppendConditions(out, status.conditions);
  out += ",\"scheduled\":" + std::to_string(status.scheduled);
  out += ",\"ready\":" + std::to_string(status.ready);
  out += ",\"subGroups\":[";
  for (size_t i = 0; i < status.sub_groups.size(); ++i) {
    const CopseSubGroupStatus& group = status.sub_groups[i];
    if (i > 0) out += ',';
    out += "{\"name\":";
    AppendJsonString(out, group.name);
    out += ",\"scheduled\":" + std::to_string(group.scheduled);
    out += ",\"ready\":" + std::to_string(group.ready) + "}";
  }
  out += "],\"observedGeneration\":";
  out += status.observed_generation.has_value() ? std::to_string(*status.observed_generation)
                                                : std::string("null");
  out += ",\"allocatedNonPreemptible\":";
  if (status.allocated_non_preemptible.empty()) {
    out += "null";
  } else {
    out += '{';
    bool first = true;
    for (const auto& [resource, quantity] : status.allocated_non_preemptible) {
      if (!first) out += ',';
      first = false;
      AppendJsonString(out, resource);
      out += ':';
      AppendJsonString(out, quantity);
    }
    out += '}';
  }
  out += "}}";
  return out;
}

Result<CopsePodGroup> CopsePodGroup::Decode(std::string_view json) {
  return codec::DecodeObject<CopsePodGroup>(
      json, kKind, [](Reader& r, std::string_view key, Element v, CopsePodGroup& out) {
        if (key == "spec") return ReadCopseSpec(r, v, out.spec);
        if (key == "status") return ReadCopseStatus(r, v, out.status);
        return true;
      });
}

std::string CopsePodGroup::Encode() const {
  return codec::EncodeObject(
      *this, kApiVersion, kKind,
      [this](const CopsePodGroup& before) {
        return spec == before.spec && status == before.status;
      },
      [this](Json& root, const CopsePodGroup* before) {
        PutObject(root, "spec",
                  [&](Json& j) { OverlayCopseSpec(j, spec, Prev(before, &CopsePodGroup::spec)); });
        PutObject(root, "status", [&](Json& j) {
          OverlayCopseStatus(j, status, Prev(before, &CopsePodGroup::status));
        });
      });
}

// ------------------------------------------------------------ conditions

bool SetCondition(std::vector<Condition>& conditions, const Condition& condition) {
  Condition* existing = FindCondition(conditions, condition.type);
  if (existing == nullptr) {
    conditions.push_back(condition);
    return true;
  }
  Condition updated = condition;
  if (existing->status == condition.status) {
    updated.last_transition_time = existing->last_transition_time;
  }
  if (*existing == updated) return false;
  *existing = std::move(updated);
  return true;
}

bool SetPodGroupScheduled(std::vector<Condition>& conditions, bool scheduled, std::string reason,
                          std::string message, std::string now,
                          std::optional<int64_t> observed_generation) {
  const Condition* existing = FindCondition(conditions, kPodGroupScheduled);
  if (!scheduled && existing != nullptr && existing->status == "True") return false;
  Condition condition;
  condition.type = std::string(kPodGroupScheduled);
  condition.status = scheduled ? "True" : "False";
  condition.reason = std::move(reason);
  condition.message = std::move(message);
  condition.last_transition_time = std::move(now);
  condition.observed_generation = observed_generation;
  return SetCondition(conditions, condition);
}

}  // namespace copse::kube
