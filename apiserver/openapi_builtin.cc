// The compact schema table of the built-in types the embedded server
// describes in its OpenAPI documents (apiserver/openapi.h). Field names, types
// and list semantics are API facts (the Kubernetes API reference: json names,
// `patchMergeKey`/`listType`/`listMapKeys`); descriptions are short, our own.
//
// Format (read by apiserver/openapi.cc):
//   @NAME [APIVERSION/KIND] description      a type; NAME as "core.v1.Pod"
//   FIELD TYPE description                   one of its fields
// TYPE: string, int32, int64, bool, number, quantity, int-or-string, time,
//   object (free-form), another table NAME, []TYPE (a list; atomic unless
//   followed by "/set" or "/key1,key2" for a map keyed by those fields), or
//   {}TYPE (a map from string). A "!" after FIELD marks it required.
// Types outside the table are not referenced: a field whose structure is not
// tabled is "object".

#include "apiserver/openapi_internal.h"

namespace copse::apiserver {

const char* const kBuiltinSchemaText = R"table(
@meta.v1.ObjectMeta ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.
name string Name must be unique within a namespace. Cannot be updated.
generateName string Optional prefix the server uses to generate a unique name when name is not set.
namespace string The namespace the object lives in; empty for cluster-scoped objects.
uid string The unique in time and space value for this object, set by the server.
resourceVersion string An opaque value that represents the internal version of this object, for optimistic concurrency.
generation int64 A sequence number representing a specific generation of the desired state.
creationTimestamp time When the object was created (RFC 3339, UTC), set by the server.
deletionTimestamp time When the object will be deleted, set by the server when a graceful deletion is requested.
deletionGracePeriodSeconds int64 Seconds allowed for the object to terminate gracefully before it is removed.
labels {}string Map of string keys and values used to organize and select objects.
annotations {}string Unstructured key value map for arbitrary metadata set by tools.
ownerReferences []meta.v1.OwnerReference/uid Objects this object depends on; garbage collected when all owners are gone.
finalizers []string/set Must be empty before the object is deleted from the registry.
managedFields []meta.v1.ManagedFieldsEntry Which field manager owns which fields (server-side apply); internal.
@meta.v1.OwnerReference OwnerReference identifies an owning object in the same namespace.
apiVersion! string API version of the referent.
kind! string Kind of the referent.
name! string Name of the referent.
uid! string UID of the referent.
controller bool If true, this reference points to the managing controller.
blockOwnerDeletion bool If true, the owner cannot be deleted from storage before this object is removed (foreground deletion).
@meta.v1.ManagedFieldsEntry ManagedFieldsEntry records the fields one manager owns and the operation that set them.
manager string The name of the workflow managing these fields.
operation string Apply or Update: the operation that set the fields.
apiVersion string The version of the resource the fields were set in.
time time When the fields were last changed by this manager.
fieldsType string The format of fieldsV1; always FieldsV1.
fieldsV1 object The set of fields, as a trie of "f:name", "k:{key}", "v:value" and "i:index" keys.
subresource string The subresource the operation was made on, if any.
@meta.v1.LabelSelector A label query over a set of objects; the requirements are ANDed.
matchLabels {}string Key=value pairs, each the same as a matchExpressions requirement with operator In.
matchExpressions []meta.v1.LabelSelectorRequirement Label selector requirements.
@meta.v1.LabelSelectorRequirement A selector with a key, an operator and values.
key! string The label key the selector applies to.
operator! string In, NotIn, Exists or DoesNotExist.
values []string Values for In and NotIn; empty for Exists and DoesNotExist.
@core.v1.Pod v1/Pod Pod is a collection of containers that can run on a host.
apiVersion string The versioned schema of this representation of an object.
kind string The REST resource this object represents.
metadata meta.v1.ObjectMeta Standard object's metadata.
spec core.v1.PodSpec Specification of the desired behavior of the pod.
status core.v1.PodStatus Most recently observed status of the pod, set by the system.
@core.v1.PodSpec PodSpec is the description of a pod.
containers! []core.v1.Container/name The containers of the pod; at least one.
initContainers []core.v1.Container/name Containers run to completion in order before the app containers start.
restartPolicy string Always, OnFailure or Never; default Always.
dnsPolicy string ClusterFirst, ClusterFirstWithHostNet, Default or None.
terminationGracePeriodSeconds int64 Seconds the pod is given to terminate gracefully.
activeDeadlineSeconds int64 Seconds the pod may be active before the system fails it.
nodeSelector {}string Labels a node must have for the pod to fit on it.
serviceAccountName string The name of the ServiceAccount the pod runs as.
nodeName string The node the pod is bound to; set by the scheduler's binding.
hostNetwork bool Use the host's network namespace.
schedulerName string The scheduler that dispatches the pod; default-scheduler when unset. copse schedules pods naming one of its profiles.
affinity core.v1.Affinity The pod's scheduling constraints.
tolerations []core.v1.Toleration The pod's tolerations of node taints.
priorityClassName string The pod's PriorityClass; gives its priority.
priority int32 The priority value resolved from priorityClassName.
preemptionPolicy string Never or PreemptLowerPriority; default PreemptLowerPriority.
topologySpreadConstraints []core.v1.TopologySpreadConstraint/topologyKey,whenUnsatisfiable How the pod's group spreads across topology domains.
volumes []core.v1.Volume/name Volumes that containers of the pod can mount.
schedulingGates []core.v1.PodSchedulingGate/name Gates that keep the pod from being scheduled while present.
overhead {}quantity Resources the pod's sandbox uses besides its containers.
resources core.v1.ResourceRequirements Pod-level resources, shared by its containers.
schedulingGroup core.v1.PodSchedulingGroup The gang the pod belongs to (scheduling.k8s.io PodGroup).
imagePullSecrets []core.v1.LocalObjectReference/name Secrets for pulling the pod's images.
hostname string The pod's hostname; default the pod's name.
subdomain string With a headless Service of that name, the pod's DNS subdomain.
@core.v1.Container A single application container in a pod.
name! string Name of the container, unique in the pod (a DNS label).
image string Container image name.
command []string Entrypoint array; the image's ENTRYPOINT when not given.
args []string Arguments to the entrypoint; the image's CMD when not given.
workingDir string The container's working directory.
ports []core.v1.ContainerPort/containerPort,protocol Ports the container exposes.
env []core.v1.EnvVar/name Environment variables set in the container.
resources core.v1.ResourceRequirements Compute resources the container requires.
volumeMounts []core.v1.VolumeMount/mountPath Volumes mounted into the container's filesystem.
imagePullPolicy string Always, Never or IfNotPresent.
restartPolicy string Always makes an init container a sidecar.
@core.v1.ContainerPort A network port in a single container.
name string An IANA_SVC_NAME for the port, unique in the pod.
containerPort! int32 The port number on the pod's IP address.
protocol string UDP, TCP or SCTP; default TCP.
hostPort int32 The port number on the host.
@core.v1.EnvVar An environment variable of a container.
name! string Name of the variable.
value string The variable's value; $(VAR) references are expanded.
valueFrom core.v1.EnvVarSource A source for the value (field, resource, ConfigMap or Secret key).
@core.v1.EnvVarSource A source for an environment variable's value; exactly one of the fields.
fieldRef object A field of the pod (metadata.name, status.podIP, ...).
resourceFieldRef object A resource limit or request of a container.
configMapKeyRef object A key of a ConfigMap in the pod's namespace.
secretKeyRef object A key of a Secret in the pod's namespace.
@core.v1.VolumeMount A volume mounted in a container.
name! string The volume's name.
mountPath! string The path in the container where the volume is mounted.
readOnly bool Mounted read-only when true.
subPath string The path within the volume to mount.
@core.v1.Volume A named volume in a pod that containers may mount.
name! string The volume's name, a DNS label unique in the pod.
emptyDir object A temporary directory that shares the pod's lifetime.
configMap object A ConfigMap to populate the volume.
secret object A Secret to populate the volume.
persistentVolumeClaim object A PersistentVolumeClaim in the pod's namespace.
projected object Items from several sources projected into one directory.
hostPath object A directory on the host.
@core.v1.ResourceRequirements Compute resource requirements.
limits {}quantity The maximum amount of compute resources allowed.
requests {}quantity The minimum amount of compute resources required; what the scheduler counts.
@core.v1.Toleration The pod this is attached to tolerates any taint that matches the triple key, value and effect.
key string The taint key the toleration applies to; empty matches all keys.
operator string Exists or Equal; default Equal.
value string The taint value the toleration matches.
effect string NoSchedule, PreferNoSchedule or NoExecute; empty matches all.
tolerationSeconds int64 How long a NoExecute taint is tolerated before eviction.
@core.v1.Affinity A group of affinity scheduling rules.
nodeAffinity core.v1.NodeAffinity Node affinity scheduling rules for the pod.
podAffinity core.v1.PodAffinity Rules to co-locate the pod with other pods.
podAntiAffinity core.v1.PodAntiAffinity Rules to keep the pod away from other pods.
@core.v1.NodeAffinity Node affinity scheduling rules.
requiredDuringSchedulingIgnoredDuringExecution core.v1.NodeSelector Terms a node must match for the pod to be scheduled onto it.
preferredDuringSchedulingIgnoredDuringExecution []core.v1.PreferredSchedulingTerm Weighted terms the scheduler prefers nodes to match.
@core.v1.NodeSelector A node matches when it matches any of the terms.
nodeSelectorTerms! []core.v1.NodeSelectorTerm The terms, ORed.
@core.v1.NodeSelectorTerm Requirements that are ANDed; an empty term matches no node.
matchExpressions []core.v1.NodeSelectorRequirement Requirements on the node's labels.
matchFields []core.v1.NodeSelectorRequirement Requirements on the node's fields (metadata.name).
@core.v1.NodeSelectorRequirement A selector with a key, an operator and values.
key! string The label key (or field) the selector applies to.
operator! string In, NotIn, Exists, DoesNotExist, Gt or Lt.
values []string Values for In and NotIn, one integer for Gt and Lt, none for Exists and DoesNotExist.
@core.v1.PreferredSchedulingTerm A node selector term with a weight.
weight! int32 Weight of the term, 1-100.
preference! core.v1.NodeSelectorTerm The term.
@core.v1.PodAffinity Rules to co-locate the pod with other pods.
requiredDuringSchedulingIgnoredDuringExecution []core.v1.PodAffinityTerm Terms that must hold on the node the pod is scheduled onto.
preferredDuringSchedulingIgnoredDuringExecution []core.v1.WeightedPodAffinityTerm Weighted terms the scheduler prefers to hold.
@core.v1.PodAntiAffinity Rules to keep the pod away from other pods.
requiredDuringSchedulingIgnoredDuringExecution []core.v1.PodAffinityTerm Terms that must not hold on the node the pod is scheduled onto.
preferredDuringSchedulingIgnoredDuringExecution []core.v1.WeightedPodAffinityTerm Weighted terms the scheduler prefers not to hold.
@core.v1.PodAffinityTerm Pods, matched by labelSelector in namespaces, with which the pod should (or should not) share a topology domain.
labelSelector meta.v1.LabelSelector The pods the term refers to.
namespaces []string Namespaces of those pods; the pod's own when empty and namespaceSelector is not set.
topologyKey! string The node label key whose values are the domains.
namespaceSelector meta.v1.LabelSelector Namespaces of those pods, by their labels.
matchLabelKeys []string Label keys of the incoming pod whose values are added to labelSelector.
mismatchLabelKeys []string Label keys of the incoming pod whose values are excluded by labelSelector.
@core.v1.WeightedPodAffinityTerm A pod affinity term with a weight.
weight! int32 Weight of the term, 1-100.
podAffinityTerm! core.v1.PodAffinityTerm The term.
@core.v1.TopologySpreadConstraint How to spread matching pods among the given topology.
maxSkew! int32 The degree to which pods may be unevenly distributed.
topologyKey! string The node label key of the topology domains.
whenUnsatisfiable! string DoNotSchedule or ScheduleAnyway.
labelSelector meta.v1.LabelSelector Finds the matching pods counted in each domain.
minDomains int32 The minimum number of eligible domains, with DoNotSchedule.
nodeAffinityPolicy string Honor or Ignore the pod's node affinity when counting domains.
nodeTaintsPolicy string Honor or Ignore node taints when counting domains.
matchLabelKeys []string Label keys of the incoming pod whose values are added to labelSelector.
@core.v1.PodSchedulingGroup The scheduling group of a pod.
podGroupName string The name of the PodGroup in the pod's namespace.
@core.v1.PodSchedulingGate A gate that keeps a pod from being scheduled.
name! string Name of the scheduling gate.
@core.v1.LocalObjectReference A reference to an object in the same namespace.
name string Name of the referent.
@core.v1.PodStatus The most recently observed status of a pod.
phase string Pending, Running, Succeeded, Failed or Unknown.
conditions []core.v1.PodCondition/type Current service state of the pod.
message string A human readable message on why the pod is in this condition.
reason string A brief CamelCase reason, e.g. Evicted.
nominatedNodeName string The node preemption made room on for this pod.
hostIP string The IP address of the pod's host.
podIP string The IP address allocated to the pod.
startTime time When the kubelet acknowledged the pod.
qosClass string Guaranteed, Burstable or BestEffort.
@core.v1.PodCondition The state of a pod's condition.
type! string PodScheduled, Ready, Initialized, ContainersReady, DisruptionTarget, ...
status! string True, False or Unknown.
reason string A unique, one-word CamelCase reason for the last transition.
message string A human readable message about the last transition.
lastProbeTime time Last time the condition was probed.
lastTransitionTime time Last time the condition changed status.
@core.v1.Node v1/Node Node is a worker node; each node has a unique name.
apiVersion string The versioned schema of this representation of an object.
kind string The REST resource this object represents.
metadata meta.v1.ObjectMeta Standard object's metadata.
spec core.v1.NodeSpec The behavior of the node.
status core.v1.NodeStatus Most recently observed status of the node.
@core.v1.NodeSpec NodeSpec describes the attributes a node is created with.
podCIDR string The pod IP range assigned to the node.
podCIDRs []string/set The pod IP ranges assigned to the node.
providerID string The node's ID in the cloud provider.
unschedulable bool Keeps new pods off the node (cordon).
taints []core.v1.Taint The node's taints.
@core.v1.Taint A taint repels pods that do not tolerate it.
key! string The taint key.
value string The taint value.
effect! string NoSchedule, PreferNoSchedule or NoExecute.
timeAdded time When a NoExecute taint was added.
@core.v1.NodeStatus The current status of a node.
capacity {}quantity The node's total resources.
allocatable {}quantity The node's resources available for scheduling.
phase string The node's lifecycle phase (deprecated).
conditions []core.v1.NodeCondition/type Conditions such as Ready.
addresses []core.v1.NodeAddress/type The node's addresses.
@core.v1.NodeCondition The state of a node's condition.
type! string Ready, MemoryPressure, DiskPressure, PIDPressure or NetworkUnavailable.
status! string True, False or Unknown.
reason string The reason for the last transition.
message string A human readable message about the last transition.
lastHeartbeatTime time Last time the condition was reported.
lastTransitionTime time Last time the condition changed status.
@core.v1.NodeAddress An address of a node.
type! string Hostname, ExternalIP, InternalIP, ExternalDNS or InternalDNS.
address! string The address.
@core.v1.PodTemplateSpec The description of the pods a workload creates.
metadata meta.v1.ObjectMeta Standard object's metadata of the pods.
spec core.v1.PodSpec The specification of the pods.
@apps.v1.Deployment apps/v1/Deployment Deployment enables declarative updates for Pods and ReplicaSets.
apiVersion string The versioned schema of this representation of an object.
kind string The REST resource this object represents.
metadata meta.v1.ObjectMeta Standard object's metadata.
spec apps.v1.DeploymentSpec The desired behavior of the Deployment.
status apps.v1.DeploymentStatus Most recently observed status of the Deployment.
@apps.v1.DeploymentSpec The desired state of a Deployment.
replicas int32 Number of desired pods; default 1.
selector! meta.v1.LabelSelector Label selector for the pods; must match the template's labels.
template! core.v1.PodTemplateSpec The pods the Deployment creates.
strategy apps.v1.DeploymentStrategy How existing pods are replaced by new ones.
minReadySeconds int32 Seconds a new pod must be ready to count as available.
revisionHistoryLimit int32 The number of old ReplicaSets kept for rollback; default 10.
paused bool Whether the Deployment is paused.
progressDeadlineSeconds int32 Seconds before a stalled rollout is reported as failed; default 600.
@apps.v1.DeploymentStrategy How to replace existing pods with new ones.
type string Recreate or RollingUpdate; default RollingUpdate.
rollingUpdate apps.v1.RollingUpdateDeployment Parameters of a rolling update.
@apps.v1.RollingUpdateDeployment Parameters of a rolling update.
maxUnavailable int-or-string Pods (number or percentage) that may be unavailable during the update; default 25%.
maxSurge int-or-string Pods (number or percentage) that may be created above the desired count; default 25%.
@apps.v1.DeploymentStatus The most recently observed status of a Deployment.
observedGeneration int64 The generation the controller observed.
replicas int32 Pods targeted by the Deployment.
updatedReplicas int32 Pods with the desired template.
readyReplicas int32 Pods with a Ready condition.
availableReplicas int32 Pods ready for at least minReadySeconds.
unavailableReplicas int32 Pods still needed for 100% availability.
conditions []apps.v1.DeploymentCondition/type The latest observations of the Deployment's state.
@apps.v1.DeploymentCondition The state of a Deployment at a point in time.
type! string Available, Progressing or ReplicaFailure.
status! string True, False or Unknown.
reason string The reason for the last transition.
message string A human readable message about the last transition.
lastUpdateTime time Last time the condition was updated.
lastTransitionTime time Last time the condition changed status.
@batch.v1.Job batch/v1/Job Job represents the configuration of a single job.
apiVersion string The versioned schema of this representation of an object.
kind string The REST resource this object represents.
metadata meta.v1.ObjectMeta Standard object's metadata.
spec batch.v1.JobSpec The desired behavior of the job.
status batch.v1.JobStatus The current status of the job.
@batch.v1.JobSpec The description of a job.
parallelism int32 The maximum number of pods running at any time.
completions int32 The number of successful pods the job needs.
completionMode string NonIndexed or Indexed; default NonIndexed.
backoffLimit int32 Retries before the job is marked failed; default 6.
activeDeadlineSeconds int64 Seconds the job may be active before the system terminates it.
ttlSecondsAfterFinished int32 Seconds after the job finishes before it is deleted.
selector meta.v1.LabelSelector A label query over the job's pods; generated by default.
manualSelector bool Whether the selector is set by the user.
suspend bool Whether the job's pods are deleted and no new pods created.
template! core.v1.PodTemplateSpec The pods the job runs.
@batch.v1.JobStatus The current state of a job.
conditions []batch.v1.JobCondition The latest observations of the job's state.
startTime time When the job controller started processing the job.
completionTime time When the job completed.
active int32 The number of pending and running pods.
succeeded int32 The number of pods that reached phase Succeeded.
failed int32 The number of pods that reached phase Failed.
completedIndexes string Completed indexes of an Indexed job, as a list of ranges.
@batch.v1.JobCondition An observation of a job's state.
type! string Complete, Failed, Suspended, FailureTarget or SuccessCriteriaMet.
status! string True, False or Unknown.
reason string The reason for the last transition.
message string A human readable message about the last transition.
lastProbeTime time Last time the condition was checked.
lastTransitionTime time Last time the condition changed status.
)table";

}  // namespace copse::apiserver
