// The schema table of scheduling.k8s.io's Workload API (KEP-4671) in every
// version the embedded server serves: v1alpha2 (Kubernetes 1.36), v1alpha3
// (Workload, PodGroup, CompositePodGroup) and v1beta1 (Workload, PodGroup).
// Field names, Go encodings and validation tags are API facts of
// k8s.io/api/scheduling/<version>/types.go (its `json:` tags and
// `+k8s:` declarative validation tags); descriptions are short, our own.
// v1alpha3 and v1beta1 have the same Workload and PodGroup, so that part of
// the table is written once with "$V" for the version.
//
// The format is openapi_builtin.cc's (`@NAME [APIVERSION/KIND] [+tags]
// description`, `FIELD[!] TYPE [+tags] description`), read by
// apiserver/openapi.cc for the OpenAPI documents. The tags are read by
// apiserver/schema_rules.h, which says what each one means; in short:
//   ptr        the Go field is a pointer (absent and zero differ)
//   emit       the json tag has no omitempty (absent encodes as null or zero)
//   required / optional / immutable / noset / nounset / noadd / noremove /
//   member (of the type's +union) / maxitems=N / min=N / max=N /
//   maxbytes=N / format=NAME / enum=A,B / default=JSON /
//   dependent-required=FIELD
//                     the +k8s: tag of the same name

#include "apiserver/openapi_internal.h"

namespace copse::apiserver {

namespace {

const char* const kMetaConditionTable = R"table(
@meta.v1.Condition One aspect of the current state of an object.
type! string +emit +required +format=k8s-label-key The condition's type, CamelCase or example.com/CamelCase.
status! string +emit +required +enum=False,True,Unknown True, False or Unknown.
observedGeneration int64 +optional +min=0 The metadata.generation the condition was set from.
lastTransitionTime! time +emit +required When the condition last changed status.
reason! string +emit +required +format=condition-reason +maxbytes=1024 A CamelCase word saying why the condition is as it is.
message! string +emit +maxbytes=32768 A human readable message about the transition.
)table";

const char* const kV1alpha2Table = R"table(
@scheduling.v1alpha2.Workload scheduling.k8s.io/v1alpha2/Workload A Workload describes the pod groups of an application for workload-aware scheduling.
apiVersion string The versioned schema of this representation of an object.
kind string The REST resource this object represents.
metadata meta.v1.ObjectMeta Standard object's metadata.
spec! scheduling.v1alpha2.WorkloadSpec The pod group templates of the Workload.
@scheduling.v1alpha2.WorkloadSpec The desired state of a Workload.
controllerRef scheduling.v1alpha2.TypedLocalObjectReference +ptr +immutable +optional The object that manages the Workload, such as a Job; fixed once set.
podGroupTemplates! []scheduling.v1alpha2.PodGroupTemplate/name +emit +immutable +maxitems=8 +required The pod group templates, 1 to 8, unique by name; fixed once created.
@scheduling.v1alpha2.TypedLocalObjectReference A typed reference to an object in the same namespace.
apiGroup string +optional +format=k8s-long-name The API group of the referent; empty for the core group.
kind! string +emit +required +format=k8s-path-segment-name The kind of the referent.
name! string +emit +required +format=k8s-path-segment-name The name of the referent.
@scheduling.v1alpha2.PodGroupTemplate A template of the PodGroups made for the Workload.
name! string +emit +required +format=k8s-short-name The template's name, unique in the Workload (a DNS label).
schedulingPolicy! scheduling.v1alpha2.PodGroupSchedulingPolicy How the pods of a group are scheduled: basic or gang.
schedulingConstraints scheduling.v1alpha2.PodGroupSchedulingConstraints +ptr +emit +optional Topology constraints of the groups.
resourceClaims []scheduling.v1alpha2.PodGroupResourceClaim/name +immutable +maxitems=4 +optional ResourceClaims shared by the pods of a group, at most 4.
disruptionMode string +ptr +optional +enum=Pod,PodGroup How a group may be disrupted: Pod (pods one by one) or PodGroup (all together).
priorityClassName string +optional +format=k8s-long-name The PriorityClass of the groups.
priority int32 +ptr +optional +max=1000000000 The priority of the groups.
@scheduling.v1alpha2.PodGroupSchedulingPolicy +union How the pods of a group are scheduled: exactly one of basic and gang.
basic scheduling.v1alpha2.BasicSchedulingPolicy +ptr +optional +member Standard pod-by-pod scheduling.
gang scheduling.v1alpha2.GangSchedulingPolicy +ptr +optional +member All-or-nothing scheduling of at least minCount pods.
@scheduling.v1alpha2.BasicSchedulingPolicy Standard pod-by-pod scheduling; no fields.
@scheduling.v1alpha2.GangSchedulingPolicy All-or-nothing scheduling of a group's pods.
minCount! int32 +emit +required +min=1 The fewest pods that must be schedulable together before any is bound.
@scheduling.v1alpha2.PodGroupSchedulingConstraints Scheduling constraints of a pod group.
topology []scheduling.v1alpha2.TopologyConstraint +optional +maxitems=1 At most one topology level all the group's pods share.
@scheduling.v1alpha2.TopologyConstraint A topology level whose one domain holds all the group's pods.
key! string +emit +required +format=k8s-label-key The node label naming the domain, such as topology.kubernetes.io/rack.
@scheduling.v1alpha2.PodGroupResourceClaim +union A ResourceClaim shared by the pods of a group.
name! string +emit +required +format=k8s-short-name The claim's name in the group (a DNS label).
resourceClaimName string +ptr +optional +member +format=k8s-long-name An existing ResourceClaim reserved for the group.
resourceClaimTemplateName string +ptr +optional +member +format=k8s-long-name A ResourceClaimTemplate the group's claim is made from.
@scheduling.v1alpha2.PodGroup scheduling.k8s.io/v1alpha2/PodGroup A PodGroup is a group of pods the scheduler places together.
apiVersion string The versioned schema of this representation of an object.
kind string The REST resource this object represents.
metadata meta.v1.ObjectMeta Standard object's metadata.
spec! scheduling.v1alpha2.PodGroupSpec The desired state of the group.
status scheduling.v1alpha2.PodGroupStatus The observed state of the group, written by the scheduler.
@scheduling.v1alpha2.PodGroupSpec The desired state of a PodGroup.
podGroupTemplateRef scheduling.v1alpha2.PodGroupTemplateReference +ptr +emit +immutable +optional The Workload template the group was made from.
schedulingPolicy! scheduling.v1alpha2.PodGroupSchedulingPolicy +immutable How the group's pods are scheduled; fixed once created.
schedulingConstraints scheduling.v1alpha2.PodGroupSchedulingConstraints +ptr +immutable +optional Topology constraints of the group; fixed once created.
resourceClaims []scheduling.v1alpha2.PodGroupResourceClaim/name +immutable +maxitems=4 +optional ResourceClaims shared by the group's pods, at most 4.
disruptionMode string +ptr +immutable +required +enum=Pod,PodGroup +default="Pod" How the group may be disrupted; default Pod.
priorityClassName string +immutable +optional +format=k8s-long-name The group's PriorityClass.
priority int32 +ptr +immutable +optional +max=1000000000 The group's priority, resolved from priorityClassName by admission.
@scheduling.v1alpha2.PodGroupTemplateReference +union The template a PodGroup was made from.
workload scheduling.v1alpha2.WorkloadPodGroupTemplateReference +ptr +emit +optional +member A pod group template of a Workload.
@scheduling.v1alpha2.WorkloadPodGroupTemplateReference A pod group template of a Workload.
workloadName! string +emit +required +format=k8s-long-name The Workload's name.
podGroupTemplateName! string +emit +required +format=k8s-short-name The template's name in the Workload.
@scheduling.v1alpha2.PodGroupStatus The observed state of a PodGroup.
conditions []meta.v1.Condition/type +optional The latest observations: PodGroupScheduled, DisruptionTarget.
resourceClaimStatuses []scheduling.v1alpha2.PodGroupResourceClaimStatus/name +maxitems=4 +optional The ResourceClaims made for the group's claims.
@scheduling.v1alpha2.PodGroupResourceClaimStatus The ResourceClaim made for one of a group's claims.
name! string +emit The claim's name in spec.resourceClaims.
resourceClaimName string +ptr +optional +format=k8s-long-name The ResourceClaim made for it; unset when none was needed.
)table";

// Workload and PodGroup of v1alpha3 and v1beta1 ("$V").
const char* const kWorkloadAndPodGroupTable = R"table(
@scheduling.$V.Workload scheduling.k8s.io/$V/Workload A Workload describes the pod groups of an application for workload-aware scheduling.
apiVersion string The versioned schema of this representation of an object.
kind string The REST resource this object represents.
metadata meta.v1.ObjectMeta Standard object's metadata.
spec! scheduling.$V.WorkloadSpec The pod group templates of the Workload.
@scheduling.$V.WorkloadSpec +union The desired state of a Workload: exactly one of podGroupTemplates and compositePodGroupTemplates.
controllerRef scheduling.$V.TypedLocalObjectReference +ptr +immutable +optional The object that manages the Workload, such as a Job; fixed once set.
podGroupTemplates []scheduling.$V.PodGroupTemplate/name +emit +maxitems=8 +optional +noadd +noremove +member The pod group templates, at most 8; none may be added or removed.
compositePodGroupTemplates []scheduling.$V.CompositePodGroupTemplate/name +maxitems=8 +optional +noadd +noremove +member The composite templates (a tree of groups), at most 8; none may be added or removed.
@scheduling.$V.TypedLocalObjectReference A typed reference to an object in the same namespace.
apiGroup string +optional +format=k8s-long-name The API group of the referent; empty for the core group.
kind! string +emit +required +format=k8s-path-segment-name The kind of the referent.
name! string +emit +required +format=k8s-path-segment-name The name of the referent.
@scheduling.$V.PodGroupTemplate A template of the PodGroups made for the Workload.
name! string +emit +required +format=k8s-short-name The template's name, unique in the Workload (a DNS label).
schedulingPolicy! scheduling.$V.PodGroupSchedulingPolicy How the pods of a group are scheduled: basic or gang.
schedulingConstraints scheduling.$V.PodGroupSchedulingConstraints +ptr +emit +immutable +optional Topology constraints of the groups; fixed once created.
resourceClaims []scheduling.$V.PodGroupResourceClaim/name +immutable +maxitems=4 +optional ResourceClaims shared by the pods of a group, at most 4.
disruptionMode scheduling.$V.DisruptionMode +ptr +immutable +optional How a group may be disrupted: single (pods one by one) or all (together).
priorityClassName string +immutable +optional +format=k8s-long-name The PriorityClass of the groups.
priority int32 +ptr +immutable +optional +max=1000000000 The priority of the groups, resolved from priorityClassName by admission.
preemptionPolicy string +ptr +immutable +optional +enum=Never,PreemptLowerPriority Whether the groups may preempt lower priority ones.
@scheduling.$V.CompositePodGroupTemplate A template of the CompositePodGroups made for the Workload: a group of groups.
name! string +emit +required +format=k8s-short-name The template's name, unique in the Workload's tree (a DNS label).
schedulingPolicy! scheduling.$V.CompositePodGroupSchedulingPolicy How the children are scheduled: basic, or gang with minGroupCount.
schedulingConstraints scheduling.$V.CompositePodGroupSchedulingConstraints +ptr +immutable +optional Topology constraints that hold for all the children.
disruptionMode scheduling.$V.CompositeDisruptionMode +ptr +immutable +optional How the children may be disrupted: single or all.
priorityClassName string +immutable +optional +format=k8s-long-name The PriorityClass of the composite groups.
priority int32 +ptr +immutable +optional +max=1000000000 The priority of the composite groups, resolved by admission.
preemptionPolicy string +ptr +immutable +optional +enum=Never,PreemptLowerPriority Whether the composite groups may preempt lower priority ones.
podGroupTemplates []scheduling.$V.PodGroupTemplate/name +maxitems=8 +optional +noadd +noremove The child pod group templates, at most 8.
compositePodGroupTemplates []scheduling.$V.CompositePodGroupTemplate/name +maxitems=8 +optional +noadd +noremove The child composite templates, at most 8.
@scheduling.$V.PodGroupSchedulingPolicy +union How the pods of a group are scheduled: exactly one of basic and gang.
basic scheduling.$V.BasicSchedulingPolicy +ptr +immutable +optional +member Standard pod-by-pod scheduling; fixed once created.
gang scheduling.$V.GangSchedulingPolicy +ptr +optional +noset +nounset +member All-or-nothing scheduling; cannot be set or unset, minCount may change.
@scheduling.$V.BasicSchedulingPolicy Standard pod-by-pod scheduling; no fields.
@scheduling.$V.GangSchedulingPolicy All-or-nothing scheduling of a group's pods.
minCount! int32 +emit +required +min=1 The fewest pods that must be schedulable together before any is bound; may change.
@scheduling.$V.CompositePodGroupSchedulingPolicy +union How the children of a composite group are scheduled: exactly one of basic and gang.
basic scheduling.$V.CompositeBasicSchedulingPolicy +ptr +immutable +optional +member The children are scheduled independently.
gang scheduling.$V.CompositeGangSchedulingPolicy +ptr +optional +noset +nounset +member At least minGroupCount children are scheduled together or none.
@scheduling.$V.CompositeBasicSchedulingPolicy Independent children; no fields.
@scheduling.$V.CompositeGangSchedulingPolicy All-or-nothing scheduling of a composite group's children.
minGroupCount! int32 +emit +required +min=1 The fewest children that must be schedulable together.
@scheduling.$V.DisruptionMode +union How a group may be disrupted: exactly one of single and all.
single scheduling.$V.SingleDisruptionMode +ptr +optional +member Pods may be disrupted one by one.
all scheduling.$V.AllDisruptionMode +ptr +optional +member The pods are disrupted together.
@scheduling.$V.SingleDisruptionMode Pods may be disrupted one by one; no fields.
@scheduling.$V.AllDisruptionMode The pods are disrupted together; no fields.
@scheduling.$V.CompositeDisruptionMode +union How a composite group's children may be disrupted: exactly one of single and all.
single scheduling.$V.SingleCompositeDisruptionMode +ptr +optional +member Children may be disrupted one by one.
all scheduling.$V.AllCompositeDisruptionMode +ptr +optional +member The children are disrupted together.
@scheduling.$V.SingleCompositeDisruptionMode Children may be disrupted one by one; no fields.
@scheduling.$V.AllCompositeDisruptionMode The children are disrupted together; no fields.
@scheduling.$V.PodGroupSchedulingConstraints Scheduling constraints of a pod group.
topology []scheduling.$V.TopologyConstraint +optional +maxitems=1 At most one topology level all the group's pods share.
@scheduling.$V.CompositePodGroupSchedulingConstraints Scheduling constraints of a composite group.
topology []scheduling.$V.TopologyConstraint +optional +maxitems=1 At most one topology level all the children's pods share.
@scheduling.$V.TopologyConstraint A topology level whose one domain holds all of a group's pods.
key! string +emit +required +format=k8s-label-key The node label naming the domain, such as topology.kubernetes.io/rack.
@scheduling.$V.PodGroupResourceClaim +union A ResourceClaim shared by the pods of a group.
name! string +emit +required +format=k8s-short-name The claim's name in the group (a DNS label).
resourceClaimName string +ptr +optional +member +format=k8s-long-name An existing ResourceClaim reserved for the group.
resourceClaimTemplateName string +ptr +optional +member +format=k8s-long-name A ResourceClaimTemplate the group's claim is made from.
@scheduling.$V.PodGroup scheduling.k8s.io/$V/PodGroup A PodGroup is a group of pods the scheduler places together.
apiVersion string The versioned schema of this representation of an object.
kind string The REST resource this object represents.
metadata meta.v1.ObjectMeta Standard object's metadata.
spec! scheduling.$V.PodGroupSpec The desired state of the group.
status scheduling.$V.PodGroupStatus The observed state of the group, written by the scheduler.
@scheduling.$V.PodGroupSpec The desired state of a PodGroup.
parentCompositePodGroupName string +ptr +immutable +optional +format=k8s-long-name +dependent-required=workloadRef The CompositePodGroup this group is a child of; unset for a root group.
workloadRef scheduling.$V.WorkloadReference +ptr +immutable +optional The Workload template the group was made from.
schedulingPolicy! scheduling.$V.PodGroupSchedulingPolicy How the group's pods are scheduled; the variant is fixed, gang.minCount may change.
schedulingConstraints scheduling.$V.PodGroupSchedulingConstraints +ptr +immutable +optional Topology constraints of the group; fixed once created.
resourceClaims []scheduling.$V.PodGroupResourceClaim/name +immutable +maxitems=4 +optional ResourceClaims shared by the group's pods, at most 4.
disruptionMode scheduling.$V.DisruptionMode +ptr +immutable +required +default={"single":{}} How the group may be disrupted; default single.
priorityClassName string +immutable +optional +format=k8s-long-name The group's PriorityClass.
priority int32 +ptr +immutable +optional +max=1000000000 The group's priority, resolved from priorityClassName by admission.
preemptionPolicy string +ptr +immutable +optional +enum=Never,PreemptLowerPriority Whether the group may preempt lower priority ones; set by admission.
@scheduling.$V.WorkloadReference The Workload template a group was made from.
workloadName! string +emit +required +format=k8s-long-name The Workload's name.
templateName! string +emit +required +format=k8s-short-name The template's name in the Workload.
@scheduling.$V.PodGroupStatus The observed state of a PodGroup.
conditions []meta.v1.Condition/type +optional The latest observations: PodGroupInitiallyScheduled, DisruptionTarget.
resourceClaimStatuses []scheduling.$V.PodGroupResourceClaimStatus/name +maxitems=4 +optional The ResourceClaims made for the group's claims.
@scheduling.$V.PodGroupResourceClaimStatus The ResourceClaim made for one of a group's claims.
name! string +emit The claim's name in spec.resourceClaims.
resourceClaimName string +ptr +optional +format=k8s-long-name The ResourceClaim made for it; unset when none was needed.
)table";

// v1alpha3 alone serves CompositePodGroup.
const char* const kCompositePodGroupTable = R"table(
@scheduling.v1alpha3.CompositePodGroup scheduling.k8s.io/v1alpha3/CompositePodGroup A CompositePodGroup is a group of PodGroups (or of CompositePodGroups) scheduled as one.
apiVersion string The versioned schema of this representation of an object.
kind string The REST resource this object represents.
metadata meta.v1.ObjectMeta Standard object's metadata.
spec! scheduling.v1alpha3.CompositePodGroupSpec The desired state of the composite group.
status scheduling.v1alpha3.CompositePodGroupStatus The observed state of the composite group.
@scheduling.v1alpha3.CompositePodGroupSpec The desired state of a CompositePodGroup.
parentCompositePodGroupName string +ptr +immutable +optional +format=k8s-long-name The CompositePodGroup this one is a child of; unset for a root.
workloadRef! scheduling.v1alpha3.WorkloadReference +ptr +emit +immutable +required The Workload template the composite group was made from.
schedulingPolicy! scheduling.v1alpha3.CompositePodGroupSchedulingPolicy +immutable How the children are scheduled; fixed once created.
schedulingConstraints scheduling.v1alpha3.CompositePodGroupSchedulingConstraints +ptr +immutable +optional Topology constraints that hold for all the children.
disruptionMode scheduling.v1alpha3.CompositeDisruptionMode +ptr +immutable +required +default={"single":{}} How the children may be disrupted; default single.
priorityClassName string +immutable +optional +format=k8s-long-name The composite group's PriorityClass.
priority int32 +ptr +immutable +optional +max=1000000000 The composite group's priority, resolved by admission.
preemptionPolicy string +ptr +immutable +optional +enum=Never,PreemptLowerPriority Whether the composite group may preempt lower priority ones.
@scheduling.v1alpha3.CompositePodGroupStatus The observed state of a CompositePodGroup.
conditions []meta.v1.Condition/type +optional The latest observations of the composite group.
)table";

std::string TableForVersion(std::string_view text, std::string_view version) {
  std::string out;
  out.reserve(text.size() + 256);
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '$' && i + 1 < text.size() && text[i + 1] == 'V') {
      out += version;
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace

const std::string& SchedulingSchemaText() {
  static const std::string kText = std::string(kMetaConditionTable) + kV1alpha2Table +
                                   TableForVersion(kWorkloadAndPodGroupTable, "v1alpha3") +
                                   TableForVersion(kWorkloadAndPodGroupTable, "v1beta1") +
                                   kCompositePodGroupTable;
  return kText;
}

}  // namespace copse::apiserver
