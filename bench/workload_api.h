#pragma once
// The upstream Workload API (scheduling.k8s.io Workload, PodGroup and the
// pod's scheduling group) in the shapes `copse bench workload-gang` writes,
// one entry per served version: the one place that knows them. The scenario
// asks discovery which version the server serves and builds every object
// through the chosen entry, so a new version (v1alpha3, v1beta1) is one more
// row of WorkloadApis().
//
// Thread-safety: immutable values.

#include <span>
#include <string>
#include <string_view>

#include "core/result.h"
#include "kube/object.h"

namespace copse::kube {
class Discovery;
}  // namespace copse::kube

namespace copse::bench {

// One gang as the scenario creates it: a Workload with one gang template, a
// PodGroup made from that template, and `min_count` pods that join it.
struct GangObjects {
  std::string ns;
  std::string workload;   // the Workload's name
  std::string pod_group;  // the PodGroup's name
  int min_count = 0;      // gang minCount: every member
  // A node label key every member must share (the gang's rack), or "" for none.
  std::string topology_key;
};

struct WorkloadApi {
  std::string_view version;  // e.g. "v1alpha2"
  // The PodGroup condition whose status False says the scheduler could not
  // place the gang.
  std::string_view scheduled_condition;
  std::string (*workload_json)(const GangObjects& gang);
  std::string (*pod_group_json)(const GangObjects& gang);
  // The pod spec's fields that make the pod a member of the gang's PodGroup,
  // as JSON members without braces (`"schedulingGroup":{...}`).
  std::string (*pod_membership)(const GangObjects& gang);

  kube::ResourceRef workloads() const;
  kube::ResourceRef pod_groups() const;
};

// Every version this benchmark writes, newest first.
std::span<const WorkloadApi> WorkloadApis();

// The newest entry of WorkloadApis() whose workloads and podgroups the server
// serves. kInvalid otherwise, naming the scheduling.k8s.io versions it does
// serve and how a kube-apiserver turns the API on.
Result<const WorkloadApi*> ChooseWorkloadApi(const kube::Discovery& discovery);

}  // namespace copse::bench
