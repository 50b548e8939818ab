#pragma once
// Upstream Grove's naming rules, label keys, env vars and other constants
// (operator/api/common: labels.go, namegen.go, constants.go), so that objects
// copse creates carry exactly the names and labels Grove's tools expect.
//
//   headless service   <pcs>-<i>
//   standalone clique  <pcs>-<i>-<clique>
//   scaling group      <pcs>-<i>-<sg>
//   group clique       <pcs>-<i>-<sg>-<j>-<clique>
//   base PodGang       <pcs>-<i>
//   scaled PodGang     <pcs>-<i>-<sg>-<k>   (k = j - minAvailable)
//   pod                generateName <pclq>-, hostname <pclq>-<index>
//
// Thread-safety: pure functions.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/labels.h"

namespace copse::grove::api {

// Label keys.
inline constexpr std::string_view kLabelAppName = "app.kubernetes.io/name";
inline constexpr std::string_view kLabelManagedBy = "app.kubernetes.io/managed-by";
inline constexpr std::string_view kLabelPartOf = "app.kubernetes.io/part-of";
inline constexpr std::string_view kLabelComponent = "app.kubernetes.io/component";
inline constexpr std::string_view kManagedByValue = "grove-operator";
inline constexpr std::string_view kLabelPodClique = "grove.io/podclique";
inline constexpr std::string_view kLabelPodGang = "grove.io/podgang";
inline constexpr std::string_view kLabelBasePodGang = "grove.io/base-podgang";
inline constexpr std::string_view kLabelPcsReplicaIndex = "grove.io/podcliqueset-replica-index";
inline constexpr std::string_view kLabelPcsg = "grove.io/podcliquescalinggroup";
inline constexpr std::string_view kLabelPcsgReplicaIndex =
    "grove.io/podcliquescalinggroup-replica-index";
inline constexpr std::string_view kLabelPodIndex = "grove.io/podclique-pod-index";
inline constexpr std::string_view kLabelPodTemplateHash = "grove.io/pod-template-hash";
inline constexpr std::string_view kLabelSchedulerName = "grove.io/scheduler-name";
// Annotation on PodGangs naming the ClusterTopologyBinding their constraints use.
inline constexpr std::string_view kAnnotationTopologyName = "grove.io/topology-name";

// app.kubernetes.io/component values.
inline constexpr std::string_view kComponentHeadlessService = "pcs-headless-service";
inline constexpr std::string_view kComponentPcsg = "pcs-podcliquescalinggroup";
inline constexpr std::string_view kComponentPodGang = "podgang";
inline constexpr std::string_view kComponentPcsPodClique = "pcs-podclique";
inline constexpr std::string_view kComponentPcsgPodClique = "pcsg-podclique";

// The scheduling gate pods carry until their PodGang is Initialized.
inline constexpr std::string_view kPodGangSchedulingGate = "grove.io/podgang-pending-creation";

// Pod environment variables.
inline constexpr std::string_view kEnvPcsName = "GROVE_PCS_NAME";
inline constexpr std::string_view kEnvPcsIndex = "GROVE_PCS_INDEX";
inline constexpr std::string_view kEnvPclqName = "GROVE_PCLQ_NAME";
inline constexpr std::string_view kEnvHeadlessService = "GROVE_HEADLESS_SERVICE";
inline constexpr std::string_view kEnvPodIndex = "GROVE_PCLQ_POD_INDEX";
inline constexpr std::string_view kEnvPcsgName = "GROVE_PCSG_NAME";
inline constexpr std::string_view kEnvPcsgIndex = "GROVE_PCSG_INDEX";
inline constexpr std::string_view kEnvPcsgTemplateNumPods = "GROVE_PCSG_TEMPLATE_NUM_PODS";

// Status condition types and reasons on PodClique / PodCliqueScalingGroup / PodCliqueSet.
inline constexpr std::string_view kConditionMinAvailableBreached = "MinAvailableBreached";
inline constexpr std::string_view kConditionPodCliqueScheduled = "PodCliqueScheduled";
inline constexpr std::string_view kReasonInsufficientReadyPods = "InsufficientReadyPods";
inline constexpr std::string_view kReasonSufficientReadyPods = "SufficientReadyPods";
inline constexpr std::string_view kReasonInsufficientScheduledPods = "InsufficientScheduledPods";
inline constexpr std::string_view kReasonNeverAvailable = "NeverAvailable";
inline constexpr std::string_view kReasonUpdateInProgress = "UpdateInProgress";
inline constexpr std::string_view kReasonSufficientScheduledPods = "SufficientScheduledPods";
inline constexpr std::string_view kReasonInsufficientAvailablePcsgReplicas =
    "InsufficientAvailablePodCliqueScalingGroupReplicas";
inline constexpr std::string_view kReasonSufficientAvailablePcsgReplicas =
    "SufficientAvailablePodCliqueScalingGroupReplicas";
inline constexpr std::string_view kReasonInsufficientScheduledPcsgReplicas =
    "InsufficientScheduledPodCliqueScalingGroupReplicas";
// copse: a backend passed a PodCliqueSet through while ignoring features it lacks.
inline constexpr std::string_view kConditionSchedulingFeaturesIgnored = "SchedulingFeaturesIgnored";

std::string HeadlessServiceName(std::string_view pcs, int replica);
// "<service>.<namespace>.svc.cluster.local"
std::string HeadlessServiceAddress(std::string_view pcs, int replica, std::string_view ns);
std::string PodCliqueName(std::string_view owner, int replica, std::string_view clique);
std::string ScalingGroupName(std::string_view pcs, int replica, std::string_view group);
std::string BasePodGangName(std::string_view pcs, int replica);
std::string ScaledPodGangName(std::string_view pcsg_fqn, int scaled_index);
// The PodGang of a scaling-group clique replica: base below minAvailable, else scaled.
std::string PodGangNameForGroupReplica(std::string_view pcs, int pcs_replica,
                                       std::string_view pcsg_fqn, int group_replica,
                                       int min_available);
std::string PodHostname(std::string_view pclq, int index);

// {managed-by: grove-operator, part-of: <pcs>}, on everything copse creates for a PodCliqueSet.
Labels DefaultLabels(std::string_view pcs);

// Parses a non-negative decimal integer ("0", "12"); nullopt for anything else.
std::optional<int> ParseIndex(std::string_view text);
// The pod index encoded in a hostname "<pclq>-<index>"; nullopt when the
// hostname does not have that form.
std::optional<int> IndexFromHostname(std::string_view hostname, std::string_view pclq);

}  // namespace copse::grove::api
