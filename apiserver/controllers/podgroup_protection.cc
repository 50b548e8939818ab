#include "apiserver/controllers/podgroup_protection.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "kube/controller/objects.h"
#include "kube/controller/sync.h"

namespace copse::apiserver::controllers {

namespace kc = kube::controller;
using kc::ReconcileResult;
using nlohmann::json;

namespace {

constexpr std::string_view kFinalizer = "scheduling.k8s.io/podgroup-protection";

}  // namespace

bool PodGroupProtectionReconciler::IsDeletionCandidate(const kube::KubeObject& pod_group) {
  const auto& finalizers = pod_group.meta.finalizers;
  return pod_group.meta.deletion_timestamp.has_value() &&
         std::find(finalizers.begin(), finalizers.end(), kFinalizer) != finalizers.end();
}

ReconcileResult PodGroupProtectionReconciler::Reconcile(const std::string& key) {
  if (!ctx_.caches->podgroups) return ReconcileResult::Done();
  const kube::ObjectPtr group = ctx_.caches->podgroups->store().Get(key);
  if (group == nullptr || !IsDeletionCandidate(*group)) return ReconcileResult::Done();
  // A pod event enqueues the group again when the last user goes.
  if (!ctx_.caches->pods.ByIndex(kIndexPodGroup, key).empty()) return ReconcileResult::Done();
  json finalizers = json::array();
  for (const std::string& f : group->meta.finalizers) {
    if (f != kFinalizer) finalizers.push_back(f);
  }
  // The resourceVersion makes this a precondition: a group changed since
  // the cache saw it is read again.
  const json patch = {
      {"metadata",
       {{"finalizers", std::move(finalizers)}, {"resourceVersion", group->meta.resource_version}}}};
  auto patched = kc::Await(
      *ctx_.client, ctx_.client->Patch(*ctx_.caches->podgroups_ref, group->meta.namespace_,
                                       group->meta.name, kube::PatchType::kMerge, patch.dump()));
  if (!patched.ok() && patched.error().code != ErrorCode::kNotFound) {
    return ReconcileResult::Failed(patched.error());
  }
  return ReconcileResult::Done();
}

}  // namespace copse::apiserver::controllers
