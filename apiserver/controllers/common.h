#pragma once
// What the built-in workload controllers share: the informer caches they
// read, the context they write through (kube::Client only, as a separate
// kube-controller-manager would), and helpers that follow kube's controller
// utilities: pods from templates, template hashes, pod ranking, readiness
// and availability, events.
//
// Thread-safety: Caches as kube::Informer (stores readable from any thread);
// the helpers are pure except RecordEvent (a client write; call it from a
// worker thread, never from an informer handler).

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/labels.h"
#include "core/result.h"
#include "kube/apps.h"
#include "kube/client.h"
#include "kube/controller/expectations.h"
#include "kube/event.h"
#include "kube/informer.h"
#include "kube/node.h"
#include "kube/pod.h"

namespace copse::apiserver::controllers {

// Index of pods and ReplicaSets by the UID of their controller owner.
inline constexpr std::string_view kIndexOwner = "owner";
// Index of pods that are not Succeeded or Failed by the PodGroup they join
// (spec.schedulingGroup.podGroupName), as "namespace/podgroup".
inline constexpr std::string_view kIndexPodGroup = "podgroup";
// Index of Workloads by the Job their spec.controllerRef names
// ("namespace/job"), and of PodGroups by the Workload they were made from
// ("namespace/workload").
inline constexpr std::string_view kIndexControllerJob = "controller-job";
inline constexpr std::string_view kIndexWorkload = "workload";

class Caches {
 public:
  // `namespace_` "" watches every namespace.
  Caches(std::shared_ptr<kube::Client> client, const std::string& namespace_);
  ~Caches();

  kube::TypedInformer<kube::Pod> pods;
  kube::TypedInformer<kube::ReplicaSet> replicasets;
  kube::TypedInformer<kube::Deployment> deployments;
  kube::TypedInformer<kube::Job> jobs;
  kube::TypedInformer<kube::StatefulSet> statefulsets;
  kube::TypedInformer<kube::DaemonSet> daemonsets;
  kube::TypedInformer<kube::Node> nodes;
  // scheduling.k8s.io Workloads and PodGroups (kube::Unstructured, in the
  // version they are watched in), when WatchSchedulingApi was called.
  std::unique_ptr<kube::Informer> workloads;
  std::unique_ptr<kube::Informer> podgroups;
  std::optional<kube::ResourceRef> workloads_ref;
  std::optional<kube::ResourceRef> podgroups_ref;

  // Watches Workloads and PodGroups in these versions (the newest the server
  // serves). Call before Start.
  void WatchSchedulingApi(const kube::ResourceRef& workloads_resource,
                          const kube::ResourceRef& podgroups_resource);
  void Start();
  void Stop();
  // The plural resource name of the first informer that did not sync within
  // `timeout`, or "" when all did.
  std::string WaitForSync(std::chrono::milliseconds timeout) const;
  bool HasSynced() const;

  // Pods (terminating and finished ones included) whose controller owner
  // has `owner_uid`.
  std::vector<std::shared_ptr<const kube::Pod>> PodsOwnedBy(std::string_view owner_uid) const;

 private:
  std::shared_ptr<kube::Client> client_;
  std::string namespace_;
};

// The fields of a Workload API object (JSON in any served version) the
// controllers read: the Workload a PodGroup was made from ("" when none).
std::string PodGroupWorkloadRef(const nlohmann::json& pod_group);

struct Context {
  std::shared_ptr<kube::Client> client;
  std::shared_ptr<const Clock> clock;
  Caches* caches = nullptr;
  // Written as the Event source / reportingComponent.
  std::string component;
  bool record_events = true;

  std::string Now() const { return FormatRfc3339(clock->WallNow()); }
};

using PodPtr = std::shared_ptr<const kube::Pod>;

// ---------------------------------------------------------------- pods

// What a controller adds to a pod made from its template.
struct PodOptions {
  std::string name;           // fixed name (StatefulSet); else generate_name is used
  std::string generate_name;  // "<owner>-"
  Labels extra_labels;
  Labels extra_annotations;
  std::string hostname;   // spec.hostname when set
  std::string subdomain;  // spec.subdomain when set
  // Env vars added to every container and init container: name -> fieldRef path.
  std::vector<std::pair<std::string, std::string>> field_ref_env;
  // spec.affinity.nodeAffinity's required terms replaced by one that selects
  // this node by metadata.name (the DaemonSet controller's pinning).
  std::string pin_to_node;
  // Tolerations added unless one with the same key and effect exists.
  std::vector<kube::Toleration> extra_tolerations;
  // spec.schedulingGroup.podGroupName when set (the Job controller's gangs).
  std::string pod_group_name;
  // ownerReferences after the controller's (a PodGroup's, not a controller).
  std::vector<kube::OwnerReference> extra_owners;
};

// The pod (JSON) made from `tmpl` for `owner`, as kube's GetPodFromTemplate:
// labels, annotations and finalizers from the template (plus the extras),
// namespace of the owner, a controller ownerReference (blockOwnerDeletion),
// spec from the template. kInvalid when the template is not an object.
Result<std::string> BuildPod(const kube::PodTemplateSpec& tmpl, const kube::KubeObject& owner,
                             std::string_view owner_api_version, std::string_view owner_kind,
                             const PodOptions& options);

// The hash kube writes as pod-template-hash / controller-revision-hash: FNV-32a
// of the template (canonical JSON, `ignore_label` removed from its labels)
// and the collision count, written with kube's SafeEncodeString alphabet.
std::string TemplateHash(const std::string& template_json,
                         std::optional<int32_t> collision_count = std::nullopt,
                         std::string_view ignore_label = {});

// kube's short hashes: the decimal FNV-32a of `text`, written with
// rand.SafeEncodeString's alphabet (what TemplateHash and the Job
// controller's Workload names use).
std::string SafeEncodedFnv32a(std::string_view text);

// Whether two templates are equal once `label` is removed from both (the
// Deployment's EqualIgnoreHash).
bool TemplatesEqualIgnoring(const std::string& a, const std::string& b, std::string_view label);

// The template JSON with `labels` added to metadata.labels.
std::string TemplateWithLabels(const std::string& template_json, const Labels& labels);

// The label of a DaemonSet's or StatefulSet's pods naming the revision they
// were made from.
inline constexpr std::string_view kControllerRevisionHashLabel = "controller-revision-hash";
// The pod's controller-revision-hash label, or "" without one.
std::string PodRevision(const kube::Pod& pod);

bool IsPodActive(const kube::Pod& pod);  // not terminating, not Succeeded/Failed
bool IsPodReady(const kube::Pod& pod);
// Ready for at least `min_ready_seconds` by `now`. When ready but not yet
// available, `*available_in` (if given) is set to the time left.
bool IsPodAvailable(const kube::Pod& pod, int32_t min_ready_seconds,
                    std::chrono::system_clock::time_point now,
                    std::optional<std::chrono::milliseconds>* available_in = nullptr);

// Sorts pods so the ones to delete first come first (kube's ActivePods
// order): unassigned before assigned, Pending before Running, not ready
// before ready, ready for less time before ready for longer, newer before older.
void SortForDeletion(std::vector<PodPtr>& pods);

// Creates the pods (JSON bodies) in slow-start batches of 1, 2, 4, ... as
// kube's slowStartBatch: a batch with a failure stops the batches after it.
// Creations are expected under `key` up front; each one that failed or was
// never sent is taken back. Returns how many were created and the first error.
struct CreateOutcome {
  int created = 0;
  Status error;
};
CreateOutcome CreatePods(const Context& ctx, const std::string& ns, std::vector<std::string> bodies,
                         kube::controller::Expectations& expectations, const std::string& key);

// Deletes the pods at once (each with its UID as precondition), expecting
// the deletions under `key`; a pod already gone counts as deleted. Returns
// the first error.
Status DeletePods(const Context& ctx, const std::vector<PodPtr>& pods,
                  kube::controller::Expectations& expectations, const std::string& key);

// ---------------------------------------------------------------- misc

// The count `value` (an int, or "N%" of `total`) rounded as asked; a bad
// value is kInvalid naming `field`.
Result<int32_t> ScaledValue(const std::optional<kube::IntOrString>& value, int32_t total,
                            bool round_up, int32_t if_unset, std::string_view field);

// Records a core/v1 Event about `object` (best effort; failures are logged).
void RecordEvent(const Context& ctx, const kube::KubeObject& object, std::string_view api_version,
                 std::string_view kind, std::string_view type, std::string_view reason,
                 std::string_view message);

// A JSON merge patch body that sets spec.replicas (and annotations, when
// given) with the object's resourceVersion as precondition.
std::string ReplicasPatch(const kube::ObjectMeta& meta, int32_t replicas,
                          const Labels& annotations = {});

// "0-2,4,6-7" for a sorted set of indexes (kube's completedIndexes form), and back.
std::string FormatIndexes(const std::vector<int32_t>& sorted);
std::vector<int32_t> ParseIndexes(std::string_view text, int32_t limit);

}  // namespace copse::apiserver::controllers
