#include "bench/workload_api.h"

#include <array>
#include <nlohmann/json.hpp>

#include "kube/discovery.h"

namespace copse::bench {
namespace {

using json = nlohmann::json;

constexpr std::string_view kGroup = "scheduling.k8s.io";
constexpr std::string_view kTemplateName = "workers";

// ---------------------------------------------------------------- v1alpha2
// As a real v1.36 kube-apiserver takes them (KEP-4671): the template and the
// PodGroup carry the gang policy and the topology constraint; pods join with
// spec.schedulingGroup.podGroupName.

json V1alpha2SchedulingFields(const GangObjects& gang) {
  json fields = {{"schedulingPolicy", {{"gang", {{"minCount", gang.min_count}}}}}};
  if (!gang.topology_key.empty()) {
    fields["schedulingConstraints"] = {{"topology", json::array({{{"key", gang.topology_key}}})}};
  }
  return fields;
}

std::string V1alpha2Workload(const GangObjects& gang) {
  json tmpl = V1alpha2SchedulingFields(gang);
  tmpl["name"] = kTemplateName;
  return json{{"apiVersion", "scheduling.k8s.io/v1alpha2"},
              {"kind", "Workload"},
              {"metadata", {{"name", gang.workload}, {"namespace", gang.ns}}},
              {"spec", {{"podGroupTemplates", json::array({tmpl})}}}}
      .dump();
}

std::string V1alpha2PodGroup(const GangObjects& gang) {
  json spec = V1alpha2SchedulingFields(gang);
  spec["podGroupTemplateRef"] = {
      {"workload", {{"workloadName", gang.workload}, {"podGroupTemplateName", kTemplateName}}}};
  return json{{"apiVersion", "scheduling.k8s.io/v1alpha2"},
              {"kind", "PodGroup"},
              {"metadata", {{"name", gang.pod_group}, {"namespace", gang.ns}}},
              {"spec", spec}}
      .dump();
}

std::string V1alpha2Membership(const GangObjects& gang) {
  return R"("schedulingGroup":)" + json{{"podGroupName", gang.pod_group}}.dump();
}

constexpr std::array<WorkloadApi, 1> kApis{{
    {"v1alpha2", "PodGroupScheduled", &V1alpha2Workload, &V1alpha2PodGroup, &V1alpha2Membership},
}};

}  // namespace

kube::ResourceRef WorkloadApi::workloads() const {
  return {std::string(kGroup), std::string(version), "workloads", true};
}

kube::ResourceRef WorkloadApi::pod_groups() const {
  return {std::string(kGroup), std::string(version), "podgroups", true};
}

std::span<const WorkloadApi> WorkloadApis() { return kApis; }

Result<const WorkloadApi*> ChooseWorkloadApi(const kube::Discovery& discovery) {
  for (const WorkloadApi& api : kApis) {
    if (discovery.Serves(api.workloads()) && discovery.Serves(api.pod_groups())) return &api;
  }
  std::string served;
  const std::string prefix = std::string(kGroup) + "/";
  for (const std::string& gv : discovery.group_versions()) {
    if (!gv.starts_with(prefix)) continue;
    const std::string version = gv.substr(prefix.size());
    std::string resources;
    for (const char* r : {"workloads", "podgroups"}) {
      if (discovery.Find(kGroup, version, r) != nullptr) {
        resources += std::string(resources.empty() ? "" : ", ") + r;
      }
    }
    served += (served.empty() ? "" : "; ") + version +
              (resources.empty() ? " (no workloads or podgroups)" : " (" + resources + ")");
  }
  std::string known;
  for (const WorkloadApi& api : kApis) {
    known += std::string(known.empty() ? "" : ", ") + std::string(api.version);
  }
  return MakeError(
      ErrorCode::kInvalid,
      "the server does not serve the Workload API: scheduling.k8s.io serves " +
          (served.empty() ? std::string("no version") : served) + "; this benchmark writes " +
          "Workloads and PodGroups of " + known +
          " (kube-apiserver v1.36: --feature-gates=GenericWorkload=true,GangScheduling=true "
          "--runtime-config=scheduling.k8s.io/v1alpha2=true)");
}

}  // namespace copse::bench
