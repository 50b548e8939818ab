#pragma once
// Desired objects of a PodCliqueSet, built exactly as upstream Grove names and
// labels them (pure functions of a *defaulted* PodCliqueSet and the current
// state they depend on):
//   - the headless Service of a replica
//   - standalone PodCliques (owned by the PodCliqueSet) and scaling-group
//     PodCliques (owned by their PodCliqueScalingGroup), with startsAfter
//     resolved to fully qualified names and the PCSG env vars in the pod spec
//   - PodCliqueScalingGroups
//   - the PodGangs of a replica: the base gang <pcs>-<i> (standalone cliques
//     and scaling-group replicas below minAvailable) and one scaled gang
//     <pcsg>-<k> per scaling-group replica at or above minAvailable
//
// Thread-safety: pure functions.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "grove/api/types.h"
#include "kube/service.h"

namespace copse::grove::components {

// The hash of a clique template that grove.io/pod-template-hash carries: pods
// whose label differs from their PodClique's run an outdated template.
std::string PodTemplateHash(const api::PodCliqueTemplateSpec& clique,
                            std::string_view priority_class_name);

kube::Service BuildHeadlessService(const api::PodCliqueSet& pcs, int replica);

api::PodCliqueScalingGroup BuildScalingGroup(const api::PodCliqueSet& pcs, int replica,
                                             const api::PodCliqueScalingGroupConfig& config);

api::PodClique BuildStandalonePodClique(const api::PodCliqueSet& pcs, int replica,
                                        const api::PodCliqueTemplateSpec& clique);

// `pcsg` must exist (its UID becomes the owner).
api::PodClique BuildGroupPodClique(const api::PodCliqueSet& pcs, int pcs_replica,
                                   const api::PodCliqueScalingGroup& pcsg,
                                   const api::PodCliqueScalingGroupConfig& config, int pcsg_replica,
                                   const api::PodCliqueTemplateSpec& clique);

// One PodGroup of an expected gang: the PodClique and how many pods it should have.
struct ExpectedGroup {
  std::string pclq;
  int32_t replicas = 0;
  int32_t min_replicas = 0;
};

struct ExpectedGang {
  std::string name;
  bool base = true;
  std::string base_name;  // this gang's base gang (itself when base)
  std::vector<ExpectedGroup> groups;
  api::PodGang object;  // metadata + spec without podReferences
};

// Replicas of the scaling group `pcsg_fqn` (its object if it exists, else the template).
using ScalingGroupReplicas =
    std::function<int32_t(const std::string& pcsg_fqn, const api::PodCliqueScalingGroupConfig&)>;
// Replicas of the PodClique `pclq_fqn` (its object if it exists, else the template).
using PodCliqueReplicas =
    std::function<int32_t(const std::string& pclq_fqn, const api::PodCliqueTemplateSpec&)>;

// The gangs of PodCliqueSet replica `replica`, base first. `binding` resolves
// topology domains to node label keys (nullptr: constraints are dropped);
// `backend_name` labels each gang with grove.io/scheduler-name.
std::vector<ExpectedGang> ExpectedPodGangs(const api::PodCliqueSet& pcs, int replica,
                                           const ScalingGroupReplicas& pcsg_replicas,
                                           const PodCliqueReplicas& pclq_replicas,
                                           const api::ClusterTopologyBinding* binding,
                                           std::string_view backend_name);

// The topologyName a PodCliqueSet's constraints use ("" when none).
std::string TopologyName(const api::PodCliqueSet& pcs);

}  // namespace copse::grove::components
