#pragma once
// A pod of a PodClique, as upstream Grove builds it:
//   metadata.generateName   <pclq>-
//   metadata.labels         the PodClique's labels + grove.io/podclique,
//                           grove.io/podcliqueset-replica-index,
//                           grove.io/podgang, grove.io/podclique-pod-index
//   spec                    the PodClique's podSpec with
//     schedulingGates       [grove.io/podgang-pending-creation]
//     hostname/subdomain    <pclq>-<index> / <pcs>-<i> (the headless service)
//     env (every container) GROVE_PCS_NAME, GROVE_PCS_INDEX, GROVE_PCLQ_NAME,
//                           GROVE_HEADLESS_SERVICE, GROVE_PCLQ_POD_INDEX
//     initContainers        + grove-initc when the clique has startsAfter:
//                           `copse initc --podcliques=<fqn>:<minAvailable>,...`
// The scheduler backend's PreparePod is applied by the caller.
//
// Thread-safety: pure functions.

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "core/result.h"
#include "grove/api/types.h"

namespace copse::grove::components {

inline constexpr std::string_view kInitContainerName = "grove-initc";
inline constexpr std::string_view kPodInfoVolume = "pod-info-vol";
inline constexpr std::string_view kPodInfoMountPath = "/var/run/grove/pod-info";

struct PodBuildInputs {
  const api::PodCliqueSet* pcs = nullptr;  // defaulted
  const api::PodClique* pclq = nullptr;
  int pcs_replica = 0;
  int index = 0;
  std::string initc_image;  // copse's own image
};

Result<nlohmann::json> BuildPod(const PodBuildInputs& in);

// "--podcliques=<fqn>:<minAvailable>,..." for the clique's startsAfter.
std::string InitContainerArg(const api::PodCliqueSet& pcs, const api::PodClique& pclq);

// Adds `vars` (env vars, JSON) to every container and init container of the
// pod spec `pod_spec`; a var of the same name is replaced.
void AddEnv(nlohmann::json& pod_spec, const nlohmann::json& vars);

}  // namespace copse::grove::components
