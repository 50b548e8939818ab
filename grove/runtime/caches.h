#pragma once
// The informer caches the Grove controllers read from: every kind grove
// manages, indexed by the labels that tie them together. Pods and Services
// are watched only when they carry app.kubernetes.io/managed-by=grove-operator.
//
// Indexes (values are "namespace/<label value>"):
//   kIndexPcs   app.kubernetes.io/part-of   (PodCliques, scaling groups, PodGangs, pods, services)
//   kIndexPclq  grove.io/podclique          (pods)
//   kIndexPcsg  grove.io/podcliquescalinggroup (PodCliques)
//   kIndexGang  grove.io/podgang            (pods)
//
// Thread-safety: as kube::Informer (stores readable from any thread).

#include <chrono>
#include <memory>
#include <string>

#include "grove/api/types.h"
#include "kube/client.h"
#include "kube/controller/informers.h"
#include "kube/informer.h"
#include "kube/pod.h"
#include "kube/service.h"

namespace copse::grove::runtime {

inline constexpr std::string_view kIndexPcs = "pcs";
inline constexpr std::string_view kIndexPclq = "pclq";
inline constexpr std::string_view kIndexPcsg = "pcsg";
inline constexpr std::string_view kIndexGang = "podgang";

struct CacheOptions {
  std::string namespace_;  // "": all namespaces
  std::shared_ptr<const Clock> clock;
};

class Caches {
 public:
  Caches(std::shared_ptr<kube::Client> client, const CacheOptions& options);

  kube::TypedInformer<api::PodCliqueSet> pcs;
  kube::TypedInformer<api::PodClique> pclq;
  kube::TypedInformer<api::PodCliqueScalingGroup> pcsg;
  kube::TypedInformer<api::PodGang> podgang;
  kube::TypedInformer<kube::Pod> pods;
  kube::TypedInformer<kube::Service> services;
  kube::TypedInformer<api::ClusterTopologyBinding> topologies;

  void Start();
  void Stop();
  bool HasSynced() const;
  bool WaitForSync(std::chrono::milliseconds timeout) const;
};

using kube::controller::IndexValue;

}  // namespace copse::grove::runtime
