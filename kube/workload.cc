#include "kube/workload.h"

#include <set>

#include "core/labels.h"
#include "core/names.h"
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

// Codecs of the scheduling fields shared with the v1alpha2 PodGroup; also
// declared (and used) in kube/pod_group.cc.
namespace v1alpha2_codec {

bool ReadSchedulingPolicy(Reader& r, Element e, PodGroupSchedulingPolicy& out);
bool ReadSchedulingConstraints(Reader& r, Element e, PodGroupSchedulingConstraints& out);
void OverlaySchedulingPolicy(Json& j, const PodGroupSchedulingPolicy& now,
                             const PodGroupSchedulingPolicy* before);
void OverlaySchedulingConstraints(Json& j, const PodGroupSchedulingConstraints& now,
                                  const PodGroupSchedulingConstraints* before);

namespace {

bool ReadGang(Reader& r, Element e, GangSchedulingPolicy& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "minCount") return Read(r, v, out.min_count);
    return true;
  });
}

bool ReadTopologyConstraint(Reader& r, Element e, PodGroupTopologyConstraint& out,
                            std::string_view key_name) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == key_name) return Read(r, v, out.key);
    return true;
  });
}

void OverlayKey(Json& j, const char* key_name, const PodGroupTopologyConstraint& now,
                const PodGroupTopologyConstraint* before) {
  Put(j, key_name, now.key, Prev(before, &PodGroupTopologyConstraint::key), Emit::kAlways);
}

}  // namespace

bool ReadSchedulingPolicy(Reader& r, Element e, PodGroupSchedulingPolicy& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "basic") {
      if (v.is_null()) {
        out.basic = false;
        return true;
      }
      if (!v.is_object()) return r.TypeError(v, "object");
      out.basic = true;
      return true;
    }
    if (key == "gang") return ReadOpt(r, v, out.gang, ReadGang);
    return true;
  });
}

bool ReadSchedulingConstraints(Reader& r, Element e, PodGroupSchedulingConstraints& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "topologyConstraints") {
      return ReadArray(r, v, out.topology_constraints,
                       [](Reader& r2, Element e2, PodGroupTopologyConstraint& c) {
                         return ReadTopologyConstraint(r2, e2, c, "topologyKey");
                       });
    }
    if (key == "topology") {
      return ReadArray(r, v, out.topology,
                       [](Reader& r2, Element e2, PodGroupTopologyConstraint& c) {
                         return ReadTopologyConstraint(r2, e2, c, "key");
                       });
    }
    return true;
  });
}

void OverlaySchedulingPolicy(Json& j, const PodGroupSchedulingPolicy& now,
                             const PodGroupSchedulingPolicy* before) {
  if (before == nullptr || before->basic != now.basic) {
    if (now.basic) {
      auto it = j.find("basic");
      if (it == j.end() || !it->is_object()) j["basic"] = Json::object();
    } else {
      j.erase("basic");
    }
  }
  PutOptObject(j, "gang", now.gang, Prev(before, &PodGroupSchedulingPolicy::gang),
               [](Json& g, const GangSchedulingPolicy& n, const GangSchedulingPolicy* b) {
                 Put(g, "minCount", n.min_count, Prev(b, &GangSchedulingPolicy::min_count),
                     Emit::kAlways);
               });
}

void OverlaySchedulingConstraints(Json& j, const PodGroupSchedulingConstraints& now,
                                  const PodGroupSchedulingConstraints* before) {
  using C = PodGroupTopologyConstraint;
  PutArray(j, "topologyConstraints", now.topology_constraints,
           Prev(before, &PodGroupSchedulingConstraints::topology_constraints),
           [](Json& c, const C& n, const C* b) { OverlayKey(c, "topologyKey", n, b); });
  PutArray(j, "topology", now.topology, Prev(before, &PodGroupSchedulingConstraints::topology),
           [](Json& c, const C& n, const C* b) { OverlayKey(c, "key", n, b); });
}

}  // namespace v1alpha2_codec

namespace {

using v1alpha2_codec::OverlaySchedulingConstraints;
using v1alpha2_codec::OverlaySchedulingPolicy;
using v1alpha2_codec::ReadSchedulingConstraints;
using v1alpha2_codec::ReadSchedulingPolicy;

std::string QuotedValue(std::string_view s) { return "\"" + std::string(s) + "\""; }

bool ReadControllerRef(Reader& r, Element e, TypedLocalObjectReference& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "apiGroup") return Read(r, v, out.api_group);
    if (key == "kind") return Read(r, v, out.kind);
    if (key == "name") return Read(r, v, out.name);
    return true;
  });
}

bool ReadTemplate(Reader& r, Element e, PodGroupTemplate& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "name") return Read(r, v, out.name);
    if (key == "schedulingPolicy") return ReadSchedulingPolicy(r, v, out.scheduling_policy);
    if (key == "schedulingConstraints") {
      return ReadOpt(r, v, out.scheduling_constraints, ReadSchedulingConstraints);
    }
    if (key == "disruptionMode") return Read(r, v, out.disruption_mode);
    if (key == "priorityClassName") return Read(r, v, out.priority_class_name);
    if (key == "priority") return Read(r, v, out.priority);
    return true;
  });
}

bool ReadSpec(Reader& r, Element e, WorkloadSpec& out) {
  return ForEachField(r, e, [&](std::string_view key, Element v) {
    if (key == "controllerRef") return ReadOpt(r, v, out.controller_ref, ReadControllerRef);
    if (key == "podGroupTemplates") return ReadArray(r, v, out.pod_group_templates, ReadTemplate);
    return true;
  });
}

void OverlayControllerRef(Json& j, const TypedLocalObjectReference& now,
                          const TypedLocalObjectReference* before) {
  using T = TypedLocalObjectReference;
  Put(j, "apiGroup", now.api_group, Prev(before, &T::api_group));
  Put(j, "kind", now.kind, Prev(before, &T::kind), Emit::kAlways);
  Put(j, "name", now.name, Prev(before, &T::name), Emit::kAlways);
}

void OverlayTemplate(Json& j, const PodGroupTemplate& now, const PodGroupTemplate* before) {
  using T = PodGroupTemplate;
  Put(j, "name", now.name, Prev(before, &T::name), Emit::kAlways);
  PutObject(j, "schedulingPolicy", [&](Json& p) {
    OverlaySchedulingPolicy(p, now.scheduling_policy, Prev(before, &T::scheduling_policy));
  });
  PutOptObject(j, "schedulingConstraints", now.scheduling_constraints,
               Prev(before, &T::scheduling_constraints), OverlaySchedulingConstraints);
  PutOpt(j, "disruptionMode", now.disruption_mode, Prev(before, &T::disruption_mode));
  Put(j, "priorityClassName", now.priority_class_name, Prev(before, &T::priority_class_name));
  PutOpt(j, "priority", now.priority, Prev(before, &T::priority));
}

void OverlaySpec(Json& j, const WorkloadSpec& now, const WorkloadSpec* before) {
  PutOptObject(j, "controllerRef", now.controller_ref, Prev(before, &WorkloadSpec::controller_ref),
               OverlayControllerRef);
  PutArray(
      j, "podGroupTemplates", now.pod_group_templates,
      Prev(before, &WorkloadSpec::pod_group_templates), OverlayTemplate,
      [](const PodGroupTemplate& a, const PodGroupTemplate& b) { return a.name == b.name; },
      Emit::kAlways);
}

// Conversion errors of the shared scheduling fields; on success fills `out`.
std::vector<std::string> SchedulingFieldErrors(
    const PodGroupSchedulingPolicy& policy,
    const std::optional<PodGroupSchedulingConstraints>& constraints,
    const std::optional<std::string>& disruption_mode, GangSpec& out) {
  std::vector<std::string> errors;
  out.source = GangSource::kWorkloadPodGroup;
  if (policy.basic && policy.gang.has_value()) {
    errors.push_back(
        "spec.schedulingPolicy: Invalid value: {basic, gang}: exactly one of basic, gang may be "
        "set");
  } else if (policy.gang.has_value()) {
    out.policy = GangPolicy::kGang;
    out.min_member = policy.gang->min_count;
  } else if (policy.basic) {
    out.policy = GangPolicy::kBasic;
    out.min_member = 0;
  } else {
    errors.push_back(
        "spec.schedulingPolicy: Required value: exactly one of basic, gang must be set");
  }
  if (disruption_mode.has_value()) {
    Result<DisruptionMode> mode = ParseDisruptionMode(*disruption_mode);
    if (mode.ok()) {
      out.disruption_mode = *mode;
    } else {
      errors.push_back("spec.disruptionMode: " + mode.error().message);
    }
  }
  if (constraints.has_value()) {
    const bool old_spelling = !constraints->topology_constraints.empty();
    const char* list = old_spelling ? "spec.schedulingConstraints.topologyConstraints"
                                    : "spec.schedulingConstraints.topology";
    const char* key = old_spelling ? "topologyKey" : "key";
    if (!constraints->topology_constraints.empty() && !constraints->topology.empty()) {
      errors.push_back(
          "spec.schedulingConstraints: Invalid value: {topologyConstraints, topology}: set one "
          "of topologyConstraints, topology");
    }
    std::vector<std::string> keys = constraints->TopologyKeys();
    if (keys.size() > 1) {
      errors.push_back(std::string(list) + ": Too many: " + std::to_string(keys.size()) +
                       ": must have at most 1 items");
    } else if (keys.size() == 1) {
      const std::string path = std::string(list) + "[0]." + key;
      if (keys[0].empty()) {
        errors.push_back(path + ": Required value");
      } else if (Status valid = ValidateLabelKey(keys[0]); !valid.ok()) {
        errors.push_back(path + ": Invalid value: " + QuotedValue(keys[0]) +
                         ": must be a node label key (" + valid.error().message + ")");
      } else {
        out.topology_constraint.required_level = keys[0];
      }
    }
  }
  if (errors.empty()) errors = GangSpecErrors(out);
  return errors;
}

std::string JoinErrors(const std::vector<std::string>& errors) {
  std::string out;
  for (size_t i = 0; i < errors.size(); ++i) {
    if (i > 0) out += "; ";
    out += errors[i];
  }
  return out;
}

}  // namespace

std::vector<std::string> PodGroupSchedulingConstraints::TopologyKeys() const {
  const auto& list = topology_constraints.empty() ? topology : topology_constraints;
  std::vector<std::string> keys;
  keys.reserve(list.size());
  for (const PodGroupTopologyConstraint& constraint : list) keys.push_back(constraint.key);
  return keys;
}

Result<GangSpec> GangSpecFromSchedulingFields(
    const PodGroupSchedulingPolicy& policy,
    const std::optional<PodGroupSchedulingConstraints>& constraints,
    const std::optional<std::string>& disruption_mode, const std::string& priority_class_name,
    const std::optional<int32_t>& priority) {
  GangSpec spec;
  spec.priority_class_name = priority_class_name;
  spec.priority = priority;
  std::vector<std::string> errors =
      SchedulingFieldErrors(policy, constraints, disruption_mode, spec);
  if (!errors.empty()) return MakeError(ErrorCode::kInvalid, JoinErrors(errors));
  return spec;
}

const PodGroupTemplate* Workload::FindTemplate(std::string_view name) const noexcept {
  for (const PodGroupTemplate& t : spec.pod_group_templates) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

Status Workload::Validate() const {
  std::vector<std::string> errors;
  const auto& templates = spec.pod_group_templates;
  if (templates.empty()) errors.push_back("spec.podGroupTemplates: Required value");
  if (templates.size() > kWorkloadMaxPodGroupTemplates) {
    errors.push_back("spec.podGroupTemplates: Too many: " + std::to_string(templates.size()) +
                     ": must have at most " + std::to_string(kWorkloadMaxPodGroupTemplates) +
                     " items");
  }
  std::set<std::string_view> names;
  for (size_t i = 0; i < templates.size(); ++i) {
    const PodGroupTemplate& t = templates[i];
    const std::string prefix = "spec.podGroupTemplates[" + std::to_string(i) + "]";
    if (t.name.empty()) {
      errors.push_back(prefix + ".name: Required value");
    } else if (!ValidDns1123Label(t.name)) {
      errors.push_back(prefix + ".name: Invalid value: " + QuotedValue(t.name) +
                       ": must be a DNS label (lower case alphanumerics and '-', at most 63)");
    } else if (!names.insert(t.name).second) {
      errors.push_back(prefix + ".name: Duplicate value: " + QuotedValue(t.name));
    }
    GangSpec ignored;
    for (std::string& error : SchedulingFieldErrors(t.scheduling_policy, t.scheduling_constraints,
                                                    t.disruption_mode, ignored)) {
      // "spec.x: ..." -> "spec.podGroupTemplates[i].x: ..."
      errors.push_back(prefix + error.substr(4));
    }
  }
  if (errors.empty()) return Status::Ok();
  return MakeError(ErrorCode::kInvalid, JoinErrors(errors));
}

Result<Workload> Workload::Decode(std::string_view json) {
  return codec::DecodeObject<Workload>(
      json, kKind, [](Reader& r, std::string_view key, Element v, Workload& out) {
        if (key == "spec") return ReadSpec(r, v, out.spec);
        return true;
      });
}

std::string Workload::Encode() const {
  return codec::EncodeObject(
      *this, kApiVersion, kKind, [this](const Workload& before) { return spec == before.spec; },
      [this](Json& root, const Workload* before) {
        PutObject(root, "spec",
                  [&](Json& j) { OverlaySpec(j, spec, Prev(before, &Workload::spec)); });
      });
}

}  // namespace copse::kube
