#include "apiserver/scheduling_api.h"

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include "apiserver/field_error.h"
#include "apiserver/schema_rules.h"
#include "apiserver/selector.h"
#include "core/names.h"

namespace copse::apiserver {

using nlohmann::json;

namespace {

constexpr std::string_view kV1alpha2 = "v1alpha2";
constexpr std::string_view kScheduledV1alpha2 = "PodGroupScheduled";
constexpr std::string_view kScheduled = "PodGroupInitiallyScheduled";
constexpr std::string_view kPreemptLowerPriority = "PreemptLowerPriority";
// Upstream's WorkloadMaxTreeDepth: levels of a template tree, the pod groups'
// own level included.
constexpr int kMaxTemplateDepth = 4;

std::string SchemaTypeName(std::string_view kind, std::string_view version) {
  return "scheduling." + std::string(version) + "." + std::string(kind);
}

std::string SchedulingApiVersionOf(std::string_view version) {
  return std::string(kSchedulingGroup) + "/" + std::string(version);
}

// "podgroups.scheduling.k8s.io", as admission names the resource.
std::string AdmissionResourceName(std::string_view kind) {
  std::string out(kind);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out + "s." + std::string(kSchedulingGroup);
}

json& ObjectMember(json& obj, const char* key) {
  json& v = obj[key];
  if (!v.is_object()) v = json::object();
  return v;
}

const json& Member(const json& obj, std::string_view key) {
  static const json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

std::string MemberString(const json& obj, std::string_view key) {
  const json& v = Member(obj, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}

// The normalized form of a converted object in `version` (its shape is the
// version's already, so decoding cannot fail).
json Normalized(std::string_view kind, std::string_view version, json obj) {
  Status normalized = NormalizeAsGo(SchemaTypeName(kind, version), obj);
  (void)normalized;
  return obj;
}

// --------------------------------------------------------------- conversion

// disruptionMode: v1alpha2's enum <-> the hub's union. Values neither knows
// pass through (validation refused them already).
json DisruptionToHub(const json& mode) {
  if (mode == "Pod") return {{"single", json::object()}};
  if (mode == "PodGroup") return {{"all", json::object()}};
  return mode;
}
json DisruptionFromHub(const json& mode) {
  if (mode.is_object() && mode.contains("all")) return "PodGroup";
  if (mode.is_object() && mode.contains("single")) return "Pod";
  return mode;
}

void ConvertDisruption(json& obj, bool to_hub) {
  if (!obj.is_object()) return;
  auto it = obj.find("disruptionMode");
  if (it == obj.end() || it->is_null()) return;
  *it = to_hub ? DisruptionToHub(*it) : DisruptionFromHub(*it);
}

// Renames condition `from` to `to` unless a condition `to` exists already.
void RenameCondition(json& obj, std::string_view from, std::string_view to) {
  json& conditions = ObjectMember(obj, "status")["conditions"];
  if (!conditions.is_array()) return;
  for (const json& c : conditions) {
    if (c.is_object() && c.value("type", "") == to) return;
  }
  for (json& c : conditions) {
    if (c.is_object() && c.value("type", "") == from) c["type"] = to;
  }
}

// The template of `templates` (a list) named `name`, or null.
const json* TemplateNamed(const json& templates, const json& name) {
  if (!templates.is_array()) return nullptr;
  for (const json& t : templates) {
    if (t.is_object() && t.contains("name") && t["name"] == name) return &t;
  }
  return nullptr;
}

json WorkloadToHub(const json& view, const json* old_hub) {
  json hub = view;
  json& spec = ObjectMember(hub, "spec");
  const json& old_spec = old_hub == nullptr ? json() : Member(*old_hub, "spec");
  if (auto it = spec.find("podGroupTemplates"); it != spec.end() && it->is_array()) {
    for (json& t : *it) {
      ConvertDisruption(t, true);
      // preemptionPolicy exists only in the hub's versions.
      if (const json* old = TemplateNamed(Member(old_spec, "podGroupTemplates"), t["name"])) {
        if (Member(*old, "preemptionPolicy").is_string()) {
          t["preemptionPolicy"] = (*old)["preemptionPolicy"];
        }
      }
    }
  }
  if (Member(old_spec, "compositePodGroupTemplates").is_array()) {
    spec["compositePodGroupTemplates"] = old_spec["compositePodGroupTemplates"];
  }
  return hub;
}

json WorkloadFromHub(const json& hub) {
  json view = hub;
  json& spec = ObjectMember(view, "spec");
  if (auto it = spec.find("podGroupTemplates"); it != spec.end() && it->is_array()) {
    for (json& t : *it) ConvertDisruption(t, false);
  }
  return view;
}

json PodGroupToHub(const json& view, const json* old_hub) {
  json hub = view;
  json& spec = ObjectMember(hub, "spec");
  const json ref = Member(spec, "podGroupTemplateRef");
  spec.erase("podGroupTemplateRef");
  if (const json& workload = Member(ref, "workload"); workload.is_object()) {
    spec["workloadRef"] = {{"workloadName", Member(workload, "workloadName")},
                           {"templateName", Member(workload, "podGroupTemplateName")}};
  }
  ConvertDisruption(spec, true);
  if (old_hub != nullptr) {
    const json& old_spec = Member(*old_hub, "spec");
    for (const char* key : {"parentCompositePodGroupName", "preemptionPolicy"}) {
      if (!Member(old_spec, key).is_null()) spec[key] = old_spec[key];
    }
  }
  RenameCondition(hub, kScheduledV1alpha2, kScheduled);
  return hub;
}

json PodGroupFromHub(const json& hub) {
  json view = hub;
  json& spec = ObjectMember(view, "spec");
  const json ref = Member(spec, "workloadRef");
  spec.erase("workloadRef");
  if (ref.is_object()) {
    spec["podGroupTemplateRef"] = {{"workload",
                                    {{"workloadName", Member(ref, "workloadName")},
                                     {"podGroupTemplateName", Member(ref, "templateName")}}}};
  }
  ConvertDisruption(spec, false);
  RenameCondition(view, kScheduled, kScheduledV1alpha2);
  return view;
}

// ---------------------------------------------------------------- admission

Error Forbidden403(std::string_view kind, const json& obj, const std::string& why) {
  const std::string name = MemberString(Member(obj, "metadata"), "name");
  Error error = MakeError(ErrorCode::kForbidden, AdmissionResourceName(kind) + " " + GoQuote(name) +
                                                     " is forbidden: " + why);
  error.http_status = 403;
  error.reason = "Forbidden";
  return error;
}

struct Resolved {
  std::string class_name;
  int64_t value = 0;
  std::string preemption_policy;
};

// establishPriority: the named class, or the global default, or 0.
Result<Resolved> ResolvePriority(std::string_view kind, const json& obj, const std::string& name,
                                 const PriorityClasses& classes) {
  Resolved out;
  std::string wanted = name;
  if (wanted.empty()) {
    if (classes.global_default.empty()) {
      out.preemption_policy = std::string(kPreemptLowerPriority);
      return out;
    }
    wanted = classes.global_default;
  }
  auto it = classes.by_name.find(wanted);
  if (it == classes.by_name.end()) {
    return Forbidden403(kind, obj, "no PriorityClass with name " + wanted + " was found");
  }
  out.class_name = wanted;
  out.value = it->second.value;
  out.preemption_policy = it->second.preemption_policy.empty() ? std::string(kPreemptLowerPriority)
                                                               : it->second.preemption_policy;
  return out;
}

// A group's own priority (PodGroup, CompositePodGroup spec).
Status AdmitGroupPriority(std::string_view kind, std::string_view version, json& obj,
                          const PriorityClasses& classes) {
  json& spec = ObjectMember(obj, "spec");
  auto resolved = ResolvePriority(kind, obj, MemberString(spec, "priorityClassName"), classes);
  if (!resolved.ok()) return resolved.error();
  if (const json& p = Member(spec, "priority");
      p.is_number_integer() && p.get<int64_t>() != resolved->value) {
    return Forbidden403(
        kind, obj,
        "priority set in the pod group (" + p.dump() + ") must match the priority computed (" +
            std::to_string(resolved->value) + ") based on the priority class set in the spec");
  }
  spec["priority"] = resolved->value;
  if (!resolved->class_name.empty()) spec["priorityClassName"] = resolved->class_name;
  if (version != kV1alpha2) {
    if (const json& p = Member(spec, "preemptionPolicy");
        p.is_string() && p != resolved->preemption_policy) {
      return Forbidden403(kind, obj,
                          "preemptionPolicy set in the pod group (" + p.get<std::string>() +
                              ") must match the preemptionPolicy computed (" +
                              resolved->preemption_policy +
                              ") based on the priority class set in the spec");
    }
    spec["preemptionPolicy"] = resolved->preemption_policy;
  }
  return Status::Ok();
}

// A Workload's templates that name a priority class get its value.
Status AdmitTemplatePriorities(json& templates, const json& obj, const PriorityClasses& classes) {
  if (!templates.is_array()) return Status::Ok();
  for (json& t : templates) {
    if (!t.is_object()) continue;
    const std::string name = MemberString(t, "priorityClassName");
    if (!name.empty()) {
      auto resolved = ResolvePriority("Workload", obj, name, classes);
      if (!resolved.ok()) return resolved.error();
      if (const json& p = Member(t, "priority");
          p.is_number_integer() && p.get<int64_t>() != resolved->value) {
        return Forbidden403("Workload", obj,
                            "priority set in the pod group template " +
                                GoQuote(MemberString(t, "name")) + " (" + p.dump() +
                                ") must match the priority computed (" +
                                std::to_string(resolved->value) +
                                ") based on the priority class set in the template");
      }
      t["priority"] = resolved->value;
    }
    for (const char* children : {"podGroupTemplates", "compositePodGroupTemplates"}) {
      if (t.contains(children)) {
        if (Status s = AdmitTemplatePriorities(t[children], obj, classes); !s.ok()) return s;
      }
    }
  }
  return Status::Ok();
}

// --------------------------------------------------------------- validation

// validateWorkloadTemplateNamesUniqueness (hand-written upstream).
void CompositeListNames(const std::string& path, const json& templates,
                        std::set<std::string>& names, FieldErrorList& errs);

void CompositeNames(const json& composite, const std::string& path, std::set<std::string>& names,
                    FieldErrorList& errs) {
  std::set<std::string> list_names;
  const json& children = Member(composite, "podGroupTemplates");
  if (children.is_array()) {
    for (size_t i = 0; i < children.size(); ++i) {
      const std::string name = MemberString(children[i], "name");
      if (names.count(name)) {
        errs.push_back(FieldError::Duplicate(
            path + ".podGroupTemplates[" + std::to_string(i) + "].name", name));
      }
      list_names.insert(name);
    }
  }
  names.insert(list_names.begin(), list_names.end());
  CompositeListNames(path, Member(composite, "compositePodGroupTemplates"), names, errs);
}

void CompositeListNames(const std::string& path, const json& templates,
                        std::set<std::string>& names, FieldErrorList& errs) {
  if (!templates.is_array()) return;
  std::set<std::string> list_names;
  for (size_t i = 0; i < templates.size(); ++i) {
    const std::string name = MemberString(templates[i], "name");
    if (names.count(name)) {
      errs.push_back(FieldError::Duplicate(
          path + ".compositePodGroupTemplates[" + std::to_string(i) + "].name", name));
    }
    list_names.insert(name);
  }
  names.insert(list_names.begin(), list_names.end());
  for (size_t i = 0; i < templates.size(); ++i) {
    CompositeNames(templates[i], path + ".compositePodGroupTemplates[" + std::to_string(i) + "]",
                   names, errs);
  }
}

bool WithinDepth(const json& composite, int depth) {
  if (depth == kMaxTemplateDepth) return false;
  const json& children = Member(composite, "compositePodGroupTemplates");
  if (!children.is_array()) return true;
  for (const json& child : children) {
    if (!WithinDepth(child, depth + 1)) return false;
  }
  return true;
}

void ChildrenPresent(const json& composite, const std::string& path, FieldErrorList& errs) {
  const json& groups = Member(composite, "podGroupTemplates");
  const json& composites = Member(composite, "compositePodGroupTemplates");
  if ((!groups.is_array() || groups.empty()) && (!composites.is_array() || composites.empty())) {
    errs.push_back(FieldError::Invalid(
        path, MemberString(composite, "name"),
        "must have at least one child PodGroupTemplate or CompositePodGroupTemplate"));
  }
  if (!composites.is_array()) return;
  for (size_t i = 0; i < composites.size(); ++i) {
    ChildrenPresent(composites[i], path + ".compositePodGroupTemplates[" + std::to_string(i) + "]",
                    errs);
  }
}

void ValidateWorkloadTree(const json& hub, FieldErrorList& errs) {
  const json& spec = Member(hub, "spec");
  const json& groups = Member(spec, "podGroupTemplates");
  const json& composites = Member(spec, "compositePodGroupTemplates");
  std::set<std::string> names;
  if (groups.is_array()) {
    for (const json& t : groups) names.insert(MemberString(t, "name"));
  }
  CompositeListNames("spec", composites, names, errs);
  if (composites.is_array()) {
    for (size_t i = 0; i < composites.size(); ++i) {
      if (!WithinDepth(composites[i], 1)) {
        errs.push_back(FieldError::Invalid(
            "spec.compositePodGroupTemplates[" + std::to_string(i) + "]",
            Member(composites[i], "compositePodGroupTemplates"),
            "maximum template hierarchy depth is " + std::to_string(kMaxTemplateDepth)));
      }
    }
  }
  // One priority configuration for the whole tree.
  bool have_first = false;
  std::string first_class;
  json first_priority;
  const auto same = [&](const json& t) {
    const std::string cls = MemberString(t, "priorityClassName");
    const json& priority = Member(t, "priority");
    if (!have_first) {
      have_first = true;
      first_class = cls;
      first_priority = priority;
      return true;
    }
    return cls == first_class && priority == first_priority;
  };
  bool flat_ok = true;
  if (groups.is_array()) {
    for (const json& t : groups) flat_ok = flat_ok && same(t);
  }
  if (!flat_ok) {
    errs.push_back(
        FieldError::Invalid("spec", nullptr, "detected multiple priority configurations"));
  } else if (composites.is_array()) {
    std::function<bool(const json&)> tree_ok = [&](const json& c) {
      if (!same(c)) return false;
      const json& nested = Member(c, "compositePodGroupTemplates");
      if (nested.is_array()) {
        for (const json& n : nested) {
          if (!tree_ok(n)) return false;
        }
      }
      const json& leaves = Member(c, "podGroupTemplates");
      if (leaves.is_array()) {
        for (const json& l : leaves) {
          if (!same(l)) return false;
        }
      }
      return true;
    };
    for (const json& c : composites) {
      if (!tree_ok(c)) {
        errs.push_back(FieldError::Invalid(
            "spec", nullptr,
            "all priority and priorityClassName values must be identical, detected multiple "
            "values"));
        break;
      }
    }
  }
  if (composites.is_array()) {
    for (size_t i = 0; i < composites.size(); ++i) {
      ChildrenPresent(composites[i], "spec.compositePodGroupTemplates[" + std::to_string(i) + "]",
                      errs);
    }
  }
}

void ValidateClaimStatuses(const json& hub, FieldErrorList& errs) {
  const json& statuses = Member(Member(hub, "status"), "resourceClaimStatuses");
  if (!statuses.is_array()) return;
  const json& claims = Member(Member(hub, "spec"), "resourceClaims");
  for (size_t i = 0; i < statuses.size(); ++i) {
    const json& name = Member(statuses[i], "name");
    if (TemplateNamed(claims, name) == nullptr) {
      errs.push_back(
          FieldError::Invalid("status.resourceClaimStatuses[" + std::to_string(i) + "].name", name,
                              "must match the name of an entry in `spec.resourceClaims`"));
    }
  }
}

}  // namespace

bool IsSchedulingApiKind(std::string_view group, std::string_view kind) {
  return group == kSchedulingGroup &&
         (kind == "Workload" || kind == "PodGroup" || kind == "CompositePodGroup");
}

std::string_view SchedulingHubVersion(std::string_view kind) {
  return kind == "CompositePodGroup" ? "v1alpha3" : "v1beta1";
}

Result<json> DecodeSchedulingApi(std::string_view kind, std::string_view version, json obj) {
  const std::string type = SchemaTypeName(kind, version);
  if (Status decoded = NormalizeAsGo(type, obj); !decoded.ok()) {
    return BadRequest(std::string(kind) + " in version " + GoQuote(version) +
                      " cannot be handled as a " + std::string(kind) + ": " +
                      decoded.error().message);
  }
  ApplySchemaDefaults(type, obj);
  return obj;
}

Status AdmitSchedulingApiCreate(std::string_view kind, std::string_view version, json& obj,
                                const PriorityClasses& classes) {
  if (kind == "Workload") {
    json& spec = ObjectMember(obj, "spec");
    for (const char* list : {"podGroupTemplates", "compositePodGroupTemplates"}) {
      if (!spec.contains(list)) continue;
      if (Status s = AdmitTemplatePriorities(spec[list], obj, classes); !s.ok()) return s;
    }
    return Status::Ok();
  }
  if (Status s = AdmitGroupPriority(kind, version, obj, classes); !s.ok()) return s;
  // The strategies' PrepareForCreate: status is the server's.
  obj["status"] = json::object();
  if (kind == "PodGroup") {
    json& finalizers = ObjectMember(obj, "metadata")["finalizers"];
    if (!finalizers.is_array()) finalizers = json::array();
    if (std::find(finalizers.begin(), finalizers.end(), kPodGroupProtectionFinalizer) ==
        finalizers.end()) {
      finalizers.push_back(kPodGroupProtectionFinalizer);
    }
  }
  return Status::Ok();
}

void AdmitSchedulingApiHub(std::string_view kind, json& hub, const PriorityClasses& classes) {
  if (kind == "Workload") return;
  json& spec = ObjectMember(hub, "spec");
  if (Member(spec, "preemptionPolicy").is_string()) return;
  auto resolved = ResolvePriority(kind, hub, MemberString(spec, "priorityClassName"), classes);
  if (resolved.ok()) spec["preemptionPolicy"] = resolved->preemption_policy;
}

json SchedulingToHub(std::string_view kind, std::string_view version, const json& obj,
                     const json* old_hub) {
  const std::string_view hub_version = SchedulingHubVersion(kind);
  json hub;
  if (version != kV1alpha2) {
    hub = obj;
  } else if (kind == "Workload") {
    hub = WorkloadToHub(obj, old_hub);
  } else {
    hub = PodGroupToHub(obj, old_hub);
  }
  hub["apiVersion"] = SchedulingApiVersionOf(hub_version);
  return Normalized(kind, hub_version, std::move(hub));
}

json SchedulingFromHub(std::string_view kind, std::string_view version, const json& hub) {
  json view;
  if (version != kV1alpha2) {
    view = hub;
  } else if (kind == "Workload") {
    view = WorkloadFromHub(hub);
  } else {
    view = PodGroupFromHub(hub);
  }
  view["apiVersion"] = SchedulingApiVersionOf(version);
  return Normalized(kind, version, std::move(view));
}

json StoredObjectInVersion(json stored, std::string_view api_version) {
  const std::string kind = stored.is_object() ? MemberString(stored, "kind") : std::string();
  const std::string_view group = api_version.substr(0, api_version.find('/'));
  if (api_version.find('/') != std::string_view::npos && IsSchedulingApiKind(group, kind)) {
    return SchedulingFromHub(kind, api_version.substr(group.size() + 1), stored);
  }
  stored["apiVersion"] = api_version;
  return stored;
}

std::vector<std::string> ValidateSchedulingApi(std::string_view kind, std::string_view version,
                                               const json& obj, const json* old_obj) {
  FieldErrorList errs = ValidateBySchema(SchemaTypeName(kind, version), obj, old_obj);
  const json hub = SchedulingToHub(kind, version, obj, nullptr);
  if (kind == "Workload") {
    ValidateWorkloadTree(hub, errs);
  } else if (kind == "PodGroup") {
    ValidateClaimStatuses(hub, errs);
  }
  std::vector<std::string> out;
  out.reserve(errs.size());
  for (const FieldError& e : errs) out.push_back(e.Message());
  return out;
}

std::vector<std::string> ValidatePodSchedulingGroup(const json& pod_spec) {
  const json& group = Member(pod_spec, "schedulingGroup");
  if (group.is_null()) return {};
  const std::string path = "spec.schedulingGroup.podGroupName";
  const json& name = Member(group, "podGroupName");
  if (name.is_null()) {
    // One member today; upstream's message is the union's.
    return {FieldError::Invalid(path, nullptr, "must specify one of: `podGroupName`").Message()};
  }
  std::vector<std::string> out;
  if (name.is_string()) {
    for (const std::string& m : IsDns1123Subdomain(name.get_ref<const std::string&>())) {
      out.push_back(FieldError::Invalid(path, name, m).Message());
    }
  }
  return out;
}

std::string PodGroupWorkloadName(const json& obj) {
  const json& spec = Member(obj, "spec");
  const json& ref = Member(spec, "workloadRef");
  if (ref.is_object()) return MemberString(ref, "workloadName");
  const json& template_ref = Member(spec, "podGroupTemplateRef");
  if (template_ref.is_object())
    return MemberString(Member(template_ref, "workload"), "workloadName");
  return "<none>";
}

std::string PodGroupStatusText(const json& obj) {
  std::string status = "Pending";
  const json& conditions = Member(Member(obj, "status"), "conditions");
  if (!conditions.is_array()) return status;
  std::string disruption;
  for (const json& c : conditions) {
    const std::string type = MemberString(c, "type");
    if (type == kScheduled || type == kScheduledV1alpha2) {
      status = MemberString(c, "status") == "True" ? "Scheduled" : "Unschedulable";
    } else if (type == "DisruptionTarget") {
      disruption = MemberString(c, "reason");
    }
  }
  for (const json& c : conditions) {
    if (MemberString(c, "type") == "DisruptionTarget") return disruption;
  }
  return status;
}

}  // namespace copse::apiserver
