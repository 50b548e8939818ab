#pragma once
// scheduling.k8s.io's Workload API (KEP-4671) as kube-apiserver serves it:
// Workload and PodGroup in v1alpha2 (Kubernetes 1.36), v1alpha3 and
// v1beta1; CompositePodGroup in v1alpha3. One stored form per kind (its hub:
// v1beta1 for Workload and PodGroup, v1alpha3 for CompositePodGroup) and
// every served version a codec onto it, so an object written through one
// version reads back through the others.
//
// Conversion (v1alpha2 <-> hub; v1alpha3 and v1beta1 are the same shape):
//   PodGroup spec.podGroupTemplateRef.workload.{workloadName,
//   podGroupTemplateName} <-> spec.workloadRef.{workloadName, templateName};
//   disruptionMode "Pod" <-> {"single": {}}, "PodGroup" <-> {"all": {}} (on
//   PodGroups and Workload templates); the status condition PodGroupScheduled
//   <-> PodGroupInitiallyScheduled. What v1alpha2 cannot express
//   (preemptionPolicy, parentCompositePodGroupName, composite templates) is
//   not shown through it and kept from the stored object when it writes.
//
// The write path (apiserver/store.cc calls these in this order):
//   create  DecodeSchedulingApi (400: a field of the wrong JSON type; unknown
//           fields dropped; the version's defaults: a PodGroup's
//           disruptionMode Pod / {"single": {}}), AdmitSchedulingApiCreate
//           (the Priority admission plugin: 403 when priorityClassName names
//           no PriorityClass or priority disagrees with it; priority,
//           priorityClassName and preemptionPolicy from the class or the
//           global default, AdmitSchedulingApiHub for what the request's
//           version cannot hold; a PodGroup gets the finalizer
//           scheduling.k8s.io/podgroup-protection; status is cleared), then
//           validation (apiserver/validation.h, which calls
//           ValidateSchedulingApi), then SchedulingToHub;
//   update  SchedulingFromHub (the stored object in the request's version),
//           the edit, DecodeSchedulingApi, validation against the old object
//           in the same version, SchedulingToHub.
//
// Validation (ValidateSchedulingApi): the version's declarative rules from
// the schema table (apiserver/scheduling_schema.cc, apiserver/schema_rules.h)
// plus upstream's hand-written ones: template names unique across a
// Workload's whole tree, a tree at most 4 levels deep (the pod groups' own
// level included), every composite template with a child, one priority and
// priorityClassName for the whole tree; a PodGroup's
// status.resourceClaimStatuses naming claims of its spec.
//
// Thread-safety: pure functions.

#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace copse::apiserver {

inline constexpr std::string_view kSchedulingGroup = "scheduling.k8s.io";
inline constexpr std::string_view kPodGroupProtectionFinalizer =
    "scheduling.k8s.io/podgroup-protection";

// Whether group/kind is Workload, PodGroup or CompositePodGroup of
// scheduling.k8s.io.
bool IsSchedulingApiKind(std::string_view group, std::string_view kind);

// The version a kind is stored in ("v1beta1"; "v1alpha3" for
// CompositePodGroup).
std::string_view SchedulingHubVersion(std::string_view kind);

// The body of a write in `version`, as the decoder leaves it: kInvalid/400
// BadRequest `PodGroup in version "v1beta1" cannot be handled as a PodGroup:
// json: cannot unmarshal ...` for a field of the wrong JSON type; unknown
// fields dropped; defaults applied.
Result<nlohmann::json> DecodeSchedulingApi(std::string_view kind, std::string_view version,
                                           nlohmann::json obj);

// The PriorityClasses the Priority admission plugin resolves names with.
struct PriorityClassInfo {
  int64_t value = 0;
  std::string preemption_policy;  // "" when the class leaves it unset
};
struct PriorityClasses {
  std::map<std::string, PriorityClassInfo, std::less<>> by_name;
  std::string global_default;  // "" when none
};

// The create-time admission of a decoded body in `version` (see above);
// kForbidden/403 with upstream's messages.
Status AdmitSchedulingApiCreate(std::string_view kind, std::string_view version,
                                nlohmann::json& obj, const PriorityClasses& classes);

// The part of that admission a version without the field leaves to the
// stored form: a PodGroup's or CompositePodGroup's preemptionPolicy when
// written through v1alpha2 (a no-op when the hub object has one).
void AdmitSchedulingApiHub(std::string_view kind, nlohmann::json& hub,
                           const PriorityClasses& classes);

// Stored form <-> `version`. `old_hub`, when given, is the stored object a
// write replaces: what `version` cannot express is kept from it.
nlohmann::json SchedulingToHub(std::string_view kind, std::string_view version,
                               const nlohmann::json& obj, const nlohmann::json* old_hub);
nlohmann::json SchedulingFromHub(std::string_view kind, std::string_view version,
                                 const nlohmann::json& hub);

// A stored object as served in `api_version` ("group/version"): a kind of
// the Workload API converted from its hub, any other object with its
// apiVersion rewritten (the store keeps one version of everything else).
nlohmann::json StoredObjectInVersion(nlohmann::json stored, std::string_view api_version);

// The field errors ("<field>: <message>") of `obj` in `version`: a create
// when `old_obj` is null, else an update from it (both decoded).
std::vector<std::string> ValidateSchedulingApi(std::string_view kind, std::string_view version,
                                               const nlohmann::json& obj,
                                               const nlohmann::json* old_obj);

// A pod's spec.schedulingGroup as kube validates it: podGroupName required
// ("must specify one of: `podGroupName`") and a DNS subdomain.
std::vector<std::string> ValidatePodSchedulingGroup(const nlohmann::json& pod_spec);

// The workload column of `kubectl get podgroups` / compositepodgroups:
// the referenced Workload's name in any version, or "<none>".
std::string PodGroupWorkloadName(const nlohmann::json& obj);
// The status column: "Pending", "Scheduled", "Unschedulable", or the
// DisruptionTarget condition's reason.
std::string PodGroupStatusText(const nlohmann::json& obj);

}  // namespace copse::apiserver
