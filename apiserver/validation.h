#pragma once
// Object validation on create and update, with kube-apiserver's messages.
//
// Status codes (Error::code / http_status / reason):
//   - kInvalid / 400 / "BadRequest": what kube-apiserver rejects while
//     decoding the body, before validation:
//       `the API version in the data (v1) does not match the expected API
//        version (apps/v1)`;
//       a built-in body of another kind than the URL's:
//       `Service in version "v1" cannot be handled as a Pod: converting
//        (v1.Service) to (core.Pod): unknown conversion`;
//       fields of the wrong JSON type (metadata, labels, ...; the fields of
//       ConfigMap, Secret, Node and Pod that copse reads: ConfigMap data
//       values must be strings, binaryData and Secret data valid base64,
//       integers in range), with encoding/json's message:
//       `ConfigMap in version "v1" cannot be handled as a ConfigMap: json:
//        cannot unmarshal array into Go struct field ConfigMap.data of type
//        string`, `... illegal base64 data at input byte 4`; and resource
//       quantities that do not parse (pod resources, node capacity):
//       `Pod in version "v1" cannot be handled as a Pod: quantities must
//        match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`;
//   - kInvalid / 422 / "Invalid": field errors, aggregated as upstream's
//     StatusError for an Invalid error (duplicates dropped):
//       `Pod "Foo" is invalid: metadata.name: Invalid value: "Foo": a lowercase
//        RFC 1123 subdomain must consist of ...`
//       `Pod "x" is invalid: [spec.containers[0].image: Required value, ...]`.
//     The kind is qualified by the group for non-core kinds
//     (`PriorityClass.scheduling.k8s.io "x" is invalid: ...`); the name is
//     metadata.name (empty when only generateName is set). For custom
//     resources a body kind other than the URL's is a field error, as
//     upstream: `Foo.example.com "x" is invalid: kind: Invalid value: "Foo":
//     must be Bar`.
// Where upstream prints a Go struct with %#v as the bad value (e.g. a CRD's
// versions list), copse prints the JSON instead.
//
// What is checked:
//   - metadata: name or generateName present (a missing name with a
//     generateName is accepted: the server generates the name); the name is
//     a DNS-1123 label for namespaces, an RFC 1035 label for services and a
//     DNS-1123 subdomain for everything else (nodes, pods, ...); CRDs must
//     be named <plural>.<group>; namespace present for namespaced resources
//     and absent for cluster-scoped ones (call EnsureNamespaceMatchesRequest
//     first, which fills or clears it as upstream does); labels (keys and
//     values) and annotations (keys, total size <= 256 KiB); finalizers are
//     qualified names (and, for core kinds, standard names when not
//     prefixed); ownerReferences have apiVersion/kind/name/uid and at most
//     one controller;
//   - Pod: spec.containers required; container names DNS-1123 labels and
//     unique across containers/initContainers; image required; resource
//     names and quantities (non-negative, integer for extended resources);
//     requests <= limits (== for extended resources, whose limits are
//     required); ports in range; restartPolicy / dnsPolicy /
//     imagePullPolicy / preemptionPolicy values; tolerations; nodeSelector
//     labels; schedulingGates names; nodeName not set together with
//     schedulingGates on create;
//   - Node: spec.taints keys, values, effects, no duplicate key/effect
//     (reported under "metadata.taints" as upstream does); quantities in
//     status.capacity/allocatable; duplicate addresses and podCIDRs changes
//     on update;
//   - ConfigMap: data/binaryData keys ([-._a-zA-Z0-9]+), no key in both,
//     at most 1 MiB of values (`[]: Too long: may not be more than 1048576
//     bytes`); Secret: data/stringData keys, at most 1 MiB (`data: Too long`);
//   - Namespace (spec.finalizers), Service (type, ports, selector), Lease
//     (durations), PriorityClass (reserved "system-" names, value limit,
//     preemptionPolicy), PodDisruptionBudget (minAvailable xor
//     maxUnavailable, int or percent);
//   - CustomResourceDefinition: spec.group (subdomain with a dot), scope
//     Namespaced|Cluster, version names, exactly one storage version,
//     unique version names, additionalPrinterColumns (name, type, format,
//     jsonPath), names.plural/kind required and plural/singular/kind/
//     listKind/shortNames/categories DNS-1035, metadata.name ==
//     <plural>.<group>.
//   - the workload kinds (apps/v1 Deployment, ReplicaSet, StatefulSet,
//     DaemonSet; batch/v1 Job): see apiserver/workloads.h;
//   - the Workload API and a pod's spec.schedulingGroup: see
//     apiserver/scheduling_api.h;
//   - Pod annotations of the node simulator (copse.dev/simulate-run-for,
//     copse.dev/simulate-exit-code): see apiserver/simulated_lifetime.h.
// Other kinds get the metadata checks only (custom resources included:
// kinds outside the built-in API groups).
//
// Thread-safety: pure functions.

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/names.h"
#include "core/result.h"

namespace copse::apiserver {

// Validates `obj` as it is about to be stored by a create under the URL's
// group ("" for core), version, kind ("Pod"), resource ("pods"), and scope.
// apiVersion/kind missing from `obj` are accepted (the server fills them);
// metadata.namespace must already be filled from the URL for namespaced
// resources (the server does this before calling).
//
// The Workload API (scheduling.k8s.io Workload, PodGroup, CompositePodGroup,
// every version) is checked by its own rules, as kube-apiserver does: see
// apiserver/scheduling_api.h (ValidateSchedulingApi); `obj` must be decoded
// in `version` (DecodeSchedulingApi).
//
// `gang_rules`: a copse PodGroup (scheduling.copse.dev) is checked by its
// gang model, naming the field, so a group copse could never schedule is
// refused at the door. False checks only the schema, as a kube-apiserver
// serving copse's CRDs does.
Status ValidateForCreate(const nlohmann::json& obj, std::string_view group,
                         std::string_view version, std::string_view kind, std::string_view resource,
                         bool namespaced, bool gang_rules = true);

// Validates an update (PUT, PATCH result, or status update) of `old_obj` to
// `new_obj`: everything ValidateForCreate checks on `new_obj`, plus the
// immutable fields, with upstream's messages:
//   - metadata.name, metadata.namespace, metadata.uid (when set in
//     `new_obj`): `field is immutable`; generation may not decrease; no new
//     finalizers once deletionTimestamp is set. The server copies
//     resourceVersion/creationTimestamp from the stored object as upstream
//     does; they are not checked here;
//   - Pod spec: only containers[*].image, initContainers[*].image,
//     activeDeadlineSeconds (set, or decreased when already set),
//     tolerations (additions only), schedulingGates (removals only) may
//     change; spec.nodeName only via pods/binding (changing it here is
//     rejected with upstream's "pod updates may not change fields other
//     than ..." message);
//   - Node: spec.podCIDRs once set; Service: spec.clusterIP once set;
//     CustomResourceDefinition: spec.scope, spec.names.plural... keep as
//     upstream (scope is immutable once set; group too).
// `subresource` is "" for the main resource, "status" for /status: then only
// metadata (and pod status.nominatedNodeName, node capacity) is checked, as
// upstream status strategies keep the stored spec (the server must do so).
Status ValidateForUpdate(const nlohmann::json& old_obj, const nlohmann::json& new_obj,
                         std::string_view group, std::string_view version, std::string_view kind,
                         std::string_view resource, bool namespaced,
                         std::string_view subresource = {}, bool gang_rules = true);

// Upstream's name validators (IsDns1123Label, IsQualifiedName, ...) are
// core/names.h's.

// A 422 Invalid error in upstream's format for one field error, e.g.
// InvalidError("Pod", "Foo", "metadata.name: Invalid value: \"Foo\": ...").
// `kind` is the qualified kind ("Pod", "Lease.coordination.k8s.io").
Error InvalidError(std::string_view kind, std::string_view name, std::string_view cause);

// rest.EnsureObjectNamespaceMatchesRequestNamespace: fills an empty
// metadata.namespace from the request, clears it for cluster-scoped
// resources, and otherwise requires equality: 400 BadRequest `the namespace
// of the provided object does not match the namespace sent on the request`.
Status EnsureNamespaceMatchesRequest(nlohmann::json& obj, std::string_view request_namespace,
                                     bool namespaced);

// PUT's checkName: 400 BadRequest `the name of the object (a) does not match
// the name on the URL (b)` / `the namespace of the object (a) does not match
// the namespace on the request (b)`.
Status CheckRequestName(const nlohmann::json& obj, std::string_view url_name,
                        std::string_view url_namespace);

}  // namespace copse::apiserver
