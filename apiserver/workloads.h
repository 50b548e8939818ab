#pragma once
// What kube-apiserver does to the built-in workload kinds (apps/v1
// Deployment, ReplicaSet, StatefulSet, DaemonSet; batch/v1 Job) before it
// stores them: the defaults of apps/v1 and batch/v1 (SetDefaults_*), the
// Job's generated selector, and the field checks their controllers rely on.
//
// Defaults (on create and on every update, as the decoder applies them):
//   Deployment   replicas 1; strategy RollingUpdate with maxUnavailable and
//                maxSurge 25%; revisionHistoryLimit 10;
//                progressDeadlineSeconds 600
//   ReplicaSet   replicas 1
//   StatefulSet  replicas 1; podManagementPolicy OrderedReady; updateStrategy
//                RollingUpdate with partition 0; revisionHistoryLimit 10;
//                persistentVolumeClaimRetentionPolicy Retain/Retain
//   DaemonSet    updateStrategy RollingUpdate with maxUnavailable 1 and
//                maxSurge 0; revisionHistoryLimit 10
//   Job          completions and parallelism 1 when both are unset, else
//                parallelism 1 when unset; backoffLimit 6; completionMode
//                NonIndexed; suspend false; podReplacementPolicy
//                TerminatingOrFailed; metadata.labels from the template's
//                when empty
// On create, a Job without manualSelector: true gets the labels
// batch.kubernetes.io/controller-uid, batch.kubernetes.io/job-name,
// controller-uid and job-name on its template and the selector
// {matchLabels: {batch.kubernetes.io/controller-uid: <uid>}}.
//
// Validation returns upstream's field errors ("spec.selector: Required
// value", "spec.template.metadata.labels: Invalid value: ...: `selector`
// does not match template `labels`", "spec.strategy.rollingUpdate.
// maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0", ...)
// for the fields the controllers read: replicas and counts, selectors and
// template labels, strategies, the template's restartPolicy and containers;
// on update the immutable fields (selectors; a StatefulSet's spec outside
// replicas/ordinals/template/updateStrategy/minReadySeconds/
// persistentVolumeClaimRetentionPolicy; a Job's completionMode). Where
// upstream prints a Go value, the JSON is printed.
//
// Thread-safety: pure functions.

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace copse::apiserver {

// Whether group/kind is one of the kinds above.
bool IsWorkloadKind(std::string_view group, std::string_view kind);

// Applies the defaults to `obj` (a no-op for other kinds).
void DefaultWorkload(std::string_view group, std::string_view kind, nlohmann::json& obj);

// The create-time part that needs metadata.uid and metadata.name (the Job's
// generated selector); call after they are set.
void PrepareWorkloadForCreate(std::string_view group, std::string_view kind, nlohmann::json& obj);

// Field errors of `obj` (empty when valid), each "<field>: <message>".
std::vector<std::string> ValidateWorkload(std::string_view group, std::string_view kind,
                                          const nlohmann::json& obj);
// The update checks (immutable fields) of `old_obj` -> `new_obj`.
std::vector<std::string> ValidateWorkloadUpdate(std::string_view group, std::string_view kind,
                                                const nlohmann::json& new_obj,
                                                const nlohmann::json& old_obj);

}  // namespace copse::apiserver
