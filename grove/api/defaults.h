#pragma once
// Upstream Grove's defaulting of a PodCliqueSet (the mutating webhook and the
// kubebuilder defaults), applied in memory: controllers and validation always
// work on the defaulted object, so a PodCliqueSet written without defaults
// (as `kubectl create` against copse's embedded API server does) behaves
// exactly as upstream's defaulted one.
//
//   metadata.namespace                     "default" when empty
//   spec.updateStrategy.type               RollingRecreate
//   spec.template.cliqueStartupType        CliqueStartupTypeAnyOrder
//   spec.template.terminationDelay         4h0m0s
//   spec.template.headlessServiceConfig    {publishNotReadyAddresses: true}
//   cliques[].spec.replicas                1 when 0/absent
//   cliques[].spec.minAvailable            = replicas
//   cliques[].spec.autoScalingConfig.minReplicas   = replicas
//   podCliqueScalingGroups[].replicas      1
//   podCliqueScalingGroups[].minAvailable  1
//   podCliqueScalingGroups[].scaleConfig.minReplicas = replicas
//
// Thread-safety: pure functions.

#include <chrono>

#include "grove/api/types.h"

namespace copse::grove::api {

inline constexpr std::chrono::hours kDefaultTerminationDelay{4};

void DefaultPodCliqueSet(PodCliqueSet& pcs);
// A defaulted copy.
PodCliqueSet Defaulted(const PodCliqueSet& pcs);

// spec.template.terminationDelay of a defaulted PodCliqueSet (4h when it does
// not parse; validation rejects such objects before controllers see them).
std::chrono::nanoseconds TerminationDelay(const PodCliqueSet& pcs);

}  // namespace copse::grove::api
