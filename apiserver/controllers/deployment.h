#pragma once
// The Deployment controller (kube's DeploymentController), reconciling one
// Deployment per pass:
//   1. Its ReplicaSets are those it controls (ownerReference). The new one is
//      the oldest whose template equals the Deployment's (the
//      pod-template-hash label aside); the others are old.
//   2. Paused: only scaling and status (condition Progressing=Unknown,
//      DeploymentPaused). A change of spec.replicas while ReplicaSets carry
//      another deployment.kubernetes.io/desired-replicas is a scaling event:
//      the one active ReplicaSet takes it all, or it is spread over the
//      active ones in proportion to their size (kube's proportional scaling).
//   3. RollingUpdate: create the new ReplicaSet `<name>-<pod-template-hash>`
//      (revision = highest old revision + 1; a hash collision bumps
//      status.collisionCount), scale it up while the pods of all ReplicaSets
//      stay within replicas + maxSurge, then scale old ones down while the
//      available pods stay at least replicas - maxUnavailable (unhealthy old
//      pods first). Recreate: scale every old ReplicaSet to 0, wait until no
//      old pod is left, then create the new one at full size.
//   4. Once complete, old ReplicaSets beyond revisionHistoryLimit (scaled to
//      0, oldest revision first) are deleted.
//   5. Status as kube computes it from the ReplicaSets (replicas,
//      updatedReplicas, readyReplicas, availableReplicas,
//      unavailableReplicas, observedGeneration) with the conditions Available
//      (MinimumReplicasAvailable / MinimumReplicasUnavailable) and
//      Progressing (NewReplicaSetCreated, FoundNewReplicaSet,
//      ReplicaSetUpdated, NewReplicaSetAvailable, ProgressDeadlineExceeded).
// Surge and availability are counted from the pods in the cache (a
// ReplicaSet counts for max(spec.replicas, its live pods); its available
// pods for at most spec.replicas), so a lagging ReplicaSet status never lets
// a rollout exceed maxSurge or maxUnavailable; and after it scales a
// ReplicaSet the controller waits until its cache shows that write (by
// generation) before it acts on the Deployment again.
//
// Thread-safety: Reconcile may run on several workers for different keys.

#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include "apiserver/controllers/common.h"
#include "kube/controller/controller.h"

namespace copse::apiserver::controllers {

inline constexpr std::string_view kRevisionAnnotation = "deployment.kubernetes.io/revision";
inline constexpr std::string_view kRevisionHistoryAnnotation =
    "deployment.kubernetes.io/revision-history";
inline constexpr std::string_view kDesiredReplicasAnnotation =
    "deployment.kubernetes.io/desired-replicas";
inline constexpr std::string_view kMaxReplicasAnnotation = "deployment.kubernetes.io/max-replicas";
inline constexpr std::string_view kPodTemplateHashLabel = "pod-template-hash";

class DeploymentReconciler {
 public:
  explicit DeploymentReconciler(const Context& ctx);
  kube::controller::ReconcileResult Reconcile(const std::string& key);

 private:
  struct Pass;
  // The generation each ReplicaSet written for a Deployment must reach in
  // the cache before that Deployment is reconciled again.
  struct Written {
    int64_t generation = 0;
    std::chrono::steady_clock::time_point at;
  };
  bool CacheCaughtUp(const std::string& key, const std::string& ns);
  void RecordWrite(const std::string& key, const std::string& rs_name, int64_t generation);

  const Context& ctx_;
  std::mutex mu_;
  std::map<std::string, std::map<std::string, Written>> written_;  // deployment key -> RS name
};

}  // namespace copse::apiserver::controllers
