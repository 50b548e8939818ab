#include "grove/components/pod.h"

#include <nlohmann/json.hpp>

#include "grove/api/names.h"

namespace copse::grove::components {

namespace {

using Json = nlohmann::json;

// The clique template (by name) the fully qualified PodClique name `fqn` ends with.
const api::PodCliqueTemplateSpec* TemplateFor(const api::PodCliqueSet& pcs, std::string_view fqn) {
  const api::PodCliqueTemplateSpec* best = nullptr;
  for (const auto& clique : pcs.spec.template_.cliques) {
    if (fqn.size() > clique.name.size() &&
        fqn.substr(fqn.size() - clique.name.size()) == clique.name &&
        fqn[fqn.size() - clique.name.size() - 1] == '-') {
      if (best == nullptr || clique.name.size() > best->name.size()) best = &clique;
    }
  }
  return best;
}

}  // namespace

void AddEnv(Json& pod_spec, const Json& vars) {
  for (const char* key : {"containers", "initContainers"}) {
    auto it = pod_spec.find(key);
    if (it == pod_spec.end() || !it->is_array()) continue;
    for (Json& container : *it) {
      Json& env = container["env"];
      if (!env.is_array()) env = Json::array();
      for (const Json& var : vars) {
        bool replaced = false;
        for (Json& existing : env) {
          if (existing.is_object() && existing.value("name", "") == var["name"]) {
            existing = var;
            replaced = true;
          }
        }
        if (!replaced) env.push_back(var);
      }
    }
  }
}

std::string InitContainerArg(const api::PodCliqueSet& pcs, const api::PodClique& pclq) {
  std::string arg = "--podcliques=";
  bool first = true;
  for (const auto& dep : pclq.spec.starts_after) {
    const auto* clique = TemplateFor(pcs, dep);
    int32_t min =
        clique != nullptr ? clique->spec.min_available.value_or(clique->spec.replicas) : 1;
    if (!first) arg += ',';
    first = false;
    arg += dep + ":" + std::to_string(min);
  }
  return arg;
}

Result<Json> BuildPod(const PodBuildInputs& in) {
  const api::PodCliqueSet& pcs = *in.pcs;
  const api::PodClique& pclq = *in.pclq;
  Json spec = Json::parse(pclq.spec.pod_spec.empty() ? "{}" : pclq.spec.pod_spec, nullptr, false);
  if (!spec.is_object()) {
    return MakeError(ErrorCode::kInvalid,
                     "PodClique " + pclq.meta.name + ": spec.podSpec is not an object");
  }
  const std::string& ns = pclq.meta.namespace_;
  auto gang = pclq.meta.labels.find(api::kLabelPodGang);
  if (gang == pclq.meta.labels.end()) {
    return MakeError(ErrorCode::kInvalid,
                     "PodClique " + pclq.meta.name + " has no grove.io/podgang label");
  }

  Json labels = Json::object();
  for (const auto& [k, v] : pclq.meta.labels) labels[k] = v;
  for (const auto& [k, v] : api::DefaultLabels(pcs.meta.name)) labels[k] = v;
  labels[std::string(api::kLabelPodClique)] = pclq.meta.name;
  labels[std::string(api::kLabelPcsReplicaIndex)] = std::to_string(in.pcs_replica);
  labels[std::string(api::kLabelPodGang)] = gang->second;
  labels[std::string(api::kLabelPodIndex)] = std::to_string(in.index);

  Json meta = {{"generateName", pclq.meta.name + "-"},
               {"namespace", ns},
               {"labels", labels},
               {"ownerReferences", Json::array({{{"apiVersion", api::PodClique::kApiVersion},
                                                 {"kind", api::PodClique::kKind},
                                                 {"name", pclq.meta.name},
                                                 {"uid", pclq.meta.uid},
                                                 {"controller", true},
                                                 {"blockOwnerDeletion", true}}})}};
  if (!pclq.meta.annotations.empty()) {
    Json annotations = Json::object();
    for (const auto& [k, v] : pclq.meta.annotations) annotations[k] = v;
    meta["annotations"] = annotations;
  }

  spec["schedulingGates"] = Json::array({{{"name", api::kPodGangSchedulingGate}}});
  spec["hostname"] = api::PodHostname(pclq.meta.name, in.index);
  spec["subdomain"] = api::HeadlessServiceName(pcs.meta.name, in.pcs_replica);

  if (!pclq.spec.starts_after.empty()) {
    Json initc = {
        {"name", kInitContainerName},
        {"image", in.initc_image},
        {"command", Json::array({"copse", "initc"})},
        {"args", Json::array({InitContainerArg(pcs, pclq)})},
        {"env",
         Json::array({{{"name", "GROVE_POD_NAMESPACE"},
                       {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.namespace"}}}}}}})},
        {"volumeMounts",
         Json::array(
             {{{"name", kPodInfoVolume}, {"readOnly", true}, {"mountPath", kPodInfoMountPath}}})}};
    Json& inits = spec["initContainers"];
    if (!inits.is_array()) inits = Json::array();
    inits.insert(inits.begin(), initc);
    Json& volumes = spec["volumes"];
    if (!volumes.is_array()) volumes = Json::array();
    Json items = Json::array();
    items.push_back({{"path", "namespace"}, {"fieldRef", {{"fieldPath", "metadata.namespace"}}}});
    items.push_back(
        {{"path", "podgang"},
         {"fieldRef",
          {{"fieldPath", "metadata.labels['" + std::string(api::kLabelPodGang) + "']"}}}});
    Json volume = Json::object();
    volume["name"] = kPodInfoVolume;
    volume["downwardAPI"] = {{"items", items}};
    volumes.push_back(volume);
  }

  Json vars = Json::array(
      {{{"name", api::kEnvPcsName}, {"value", pcs.meta.name}},
       {{"name", api::kEnvPcsIndex}, {"value", std::to_string(in.pcs_replica)}},
       {{"name", api::kEnvPclqName}, {"value", pclq.meta.name}},
       {{"name", api::kEnvHeadlessService},
        {"value", api::HeadlessServiceAddress(pcs.meta.name, in.pcs_replica, ns)}},
       {{"name", api::kEnvPodIndex},
        {"valueFrom",
         {{"fieldRef",
           {{"fieldPath", "metadata.labels['" + std::string(api::kLabelPodIndex) + "']"}}}}}}});
  AddEnv(spec, vars);

  return Json{{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", meta}, {"spec", spec}};
}

}  // namespace copse::grove::components
