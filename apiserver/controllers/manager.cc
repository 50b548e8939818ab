#include "apiserver/controllers/manager.h"

#include "apiserver/controllers/common.h"
#include "apiserver/controllers/daemonset.h"
#include "apiserver/controllers/deployment.h"
#include "apiserver/controllers/podgroup_protection.h"
#include "apiserver/controllers/replicaset.h"
#include "apiserver/controllers/statefulset.h"
#include "core/log.h"
#include "kube/controller/controller.h"
#include "kube/controller/objects.h"
#include "kube/discovery.h"

namespace copse::apiserver::controllers {

namespace kc = kube::controller;

namespace {

// Names the worker threads (CPU accounting tells them from the scheduler's and Grove's).
constexpr std::string_view kThreadName = "workload-ctrl";

std::string ObjKey(const kube::ObjectMeta& meta) { return kc::Key(meta.namespace_, meta.name); }

// The metadata a controller's desired state depends on (not resourceVersion).
bool SameMeta(const kube::ObjectMeta& a, const kube::ObjectMeta& b) {
  return a.uid == b.uid && a.generation == b.generation && a.labels == b.labels &&
         a.annotations == b.annotations &&
         a.deletion_timestamp.has_value() == b.deletion_timestamp.has_value() &&
         a.owner_references == b.owner_references;
}

// Whether a pod update matters to its controller.
bool PodChanged(const kube::Pod& a, const kube::Pod& b) {
  return a.meta.labels != b.meta.labels || a.meta.owner_references != b.meta.owner_references ||
         a.spec.node_name != b.spec.node_name ||
         a.meta.deletion_timestamp.has_value() != b.meta.deletion_timestamp.has_value() ||
         a.status.phase != b.status.phase || a.status.conditions != b.status.conditions;
}

}  // namespace

struct WorkloadControllers::Impl {
  std::shared_ptr<kube::Client> client;
  ControllerOptions options;
  Context ctx;
  std::unique_ptr<Caches> caches;
  std::unique_ptr<ReplicaSetReconciler> rs_reconciler;
  std::unique_ptr<DeploymentReconciler> deploy_reconciler;
  std::unique_ptr<JobReconciler> job_reconciler;
  std::unique_ptr<StatefulSetReconciler> sts_reconciler;
  std::unique_ptr<DaemonSetReconciler> ds_reconciler;
  std::unique_ptr<PodGroupProtectionReconciler> pg_protection_reconciler;
  std::unique_ptr<kc::Controller> rs_controller;
  std::unique_ptr<kc::Controller> deploy_controller;
  std::unique_ptr<kc::Controller> job_controller;
  std::unique_ptr<kc::Controller> sts_controller;
  std::unique_ptr<kc::Controller> ds_controller;
  std::unique_ptr<kc::Controller> pg_protection_controller;  // when PodGroups are served
  bool stopped = false;

  std::vector<kc::Controller*> controllers() const {
    std::vector<kc::Controller*> out = {rs_controller.get(), deploy_controller.get(),
                                        job_controller.get(), sts_controller.get(),
                                        ds_controller.get()};
    if (pg_protection_controller) out.push_back(pg_protection_controller.get());
    return out;
  }

  // A pod stopped using its PodGroup (it finished, or is gone): the group's
  // protection may be lifted.
  void OnPodGroupUser(const kube::Pod& pod) {
    if (!pg_protection_controller || !pod.spec.pod_group_name.has_value()) return;
    pg_protection_controller->Enqueue(kc::Key(pod.meta.namespace_, *pod.spec.pod_group_name));
  }

  // The Deployment that controls a ReplicaSet, as a key ("" when none).
  static std::string OwnerKey(const kube::ObjectMeta& meta, std::string_view kind) {
    const kube::OwnerReference* ref = meta.ControllerRef();
    if (ref == nullptr || ref->kind != kind) return {};
    return kc::Key(meta.namespace_, ref->name);
  }

  // Routes a pod event to the controller that owns the pod. `observed`
  // lowers that controller's expectations (a creation or deletion seen).
  enum class Seen : uint8_t { kNothing, kCreation, kDeletion };
  void OnPod(const kube::Pod& pod, Seen seen) {
    const kube::OwnerReference* ref = pod.meta.ControllerRef();
    if (ref == nullptr || ref->api_version.empty()) return;
    const std::string key = kc::Key(pod.meta.namespace_, ref->name);
    kc::Controller* controller = nullptr;
    kc::Expectations* expectations = nullptr;
    if (ref->kind == kube::ReplicaSet::kKind && ref->api_version == kube::ReplicaSet::kApiVersion) {
      controller = rs_controller.get();
      expectations = &rs_reconciler->expectations();
    } else if (ref->kind == kube::Job::kKind && ref->api_version == kube::Job::kApiVersion) {
      controller = job_controller.get();
      expectations = &job_reconciler->expectations();
    } else if (ref->kind == kube::StatefulSet::kKind &&
               ref->api_version == kube::StatefulSet::kApiVersion) {
      controller = sts_controller.get();
      expectations = &sts_reconciler->expectations();
    } else if (ref->kind == kube::DaemonSet::kKind &&
               ref->api_version == kube::DaemonSet::kApiVersion) {
      controller = ds_controller.get();
      expectations = &ds_reconciler->expectations();
    } else {
      return;
    }
    if (seen == Seen::kCreation) expectations->CreationObserved(key);
    if (seen == Seen::kDeletion) expectations->DeletionObserved(key);
    controller->Enqueue(key);
    // The Deployment counts its ReplicaSets' pods (surge and availability).
    if (controller == rs_controller.get()) {
      if (auto rs = caches->replicasets.Get(key)) {
        std::string d = OwnerKey(rs->meta, kube::Deployment::kKind);
        if (!d.empty()) deploy_controller->Enqueue(d);
      }
    }
  }

  template <typename T>
  void EnqueueOnChange(kube::TypedInformer<T>& informer, kc::Controller* controller) {
    using Ptr = std::shared_ptr<const T>;
    informer.AddEventHandler([controller](const Ptr& o) { controller->Enqueue(ObjKey(o->meta)); },
                             [controller](const Ptr& old, const Ptr& n) {
                               // Status-only updates are the controller's own writes.
                               if (!SameMeta(old->meta, n->meta))
                                 controller->Enqueue(ObjKey(n->meta));
                             },
                             [controller](const Ptr& o) { controller->Enqueue(ObjKey(o->meta)); });
  }

  void RegisterHandlers() {
    using Pod = std::shared_ptr<const kube::Pod>;
    caches->pods.AddEventHandler(
        [this](const Pod& o) { OnPod(*o, Seen::kCreation); },
        [this](const Pod& old, const Pod& n) {
          if (kc::IsPodTerminal(*n) && !kc::IsPodTerminal(*old)) OnPodGroupUser(*n);
          const bool deleting = !old->meta.deletion_timestamp && n->meta.deletion_timestamp;
          if (!deleting && !PodChanged(*old, *n)) return;
          if (old->meta.owner_references != n->meta.owner_references) OnPod(*old, Seen::kNothing);
          OnPod(*n, deleting ? Seen::kDeletion : Seen::kNothing);
        },
        [this](const Pod& o) {
          OnPod(*o, o->meta.deletion_timestamp ? Seen::kNothing : Seen::kDeletion);
          OnPodGroupUser(*o);
        });

    if (pg_protection_controller) {
      auto on_group = [this](const kube::ObjectPtr& o) {
        if (PodGroupProtectionReconciler::IsDeletionCandidate(*o)) {
          pg_protection_controller->Enqueue(o->meta.Key());
        }
      };
      kube::EventHandler groups;
      groups.on_add = on_group;
      groups.on_update = [on_group](const kube::ObjectPtr&, const kube::ObjectPtr& n) {
        on_group(n);
      };
      caches->podgroups->AddEventHandler(std::move(groups));
    }

    using Rs = std::shared_ptr<const kube::ReplicaSet>;
    auto rs_owner = [this](const kube::ReplicaSet& rs) {
      std::string d = OwnerKey(rs.meta, kube::Deployment::kKind);
      if (!d.empty()) deploy_controller->Enqueue(d);
    };
    caches->replicasets.AddEventHandler(
        [this, rs_owner](const Rs& o) {
          rs_controller->Enqueue(ObjKey(o->meta));
          rs_owner(*o);
        },
        [this, rs_owner](const Rs& old, const Rs& n) {
          if (!SameMeta(old->meta, n->meta)) rs_controller->Enqueue(ObjKey(n->meta));
          // The Deployment reads ReplicaSet status.
          rs_owner(*n);
          if (old->meta.owner_references != n->meta.owner_references) rs_owner(*old);
        },
        [this, rs_owner](const Rs& o) {
          rs_controller->Enqueue(ObjKey(o->meta));
          rs_owner(*o);
        });

    EnqueueOnChange(caches->deployments, deploy_controller.get());
    EnqueueOnChange(caches->jobs, job_controller.get());
    EnqueueOnChange(caches->statefulsets, sts_controller.get());
    EnqueueOnChange(caches->daemonsets, ds_controller.get());

    using Node = std::shared_ptr<const kube::Node>;
    auto all_daemonsets = [this](const Node&) {
      for (const auto& ds : caches->daemonsets.List()) ds_controller->Enqueue(ObjKey(ds->meta));
    };
    caches->nodes.AddEventHandler(
        all_daemonsets,
        [all_daemonsets](const Node& old, const Node& n) {
          if (old->meta.labels != n->meta.labels || !(old->spec == n->spec)) all_daemonsets(n);
        },
        all_daemonsets);
  }
};

WorkloadControllers::WorkloadControllers(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

WorkloadControllers::~WorkloadControllers() { Stop(); }

Result<std::unique_ptr<WorkloadControllers>> WorkloadControllers::Start(
    std::shared_ptr<kube::Client> client, ControllerOptions options) {
  if (client == nullptr) {
    return MakeError(ErrorCode::kInvalid, "WorkloadControllers: client is null");
  }
  std::shared_ptr<const Clock> clock = options.clock;
  if (clock == nullptr)
    clock = std::shared_ptr<const Clock>(&RealClock::Get(), [](const Clock*) {});
  auto impl = std::make_unique<Impl>();
  Impl* d = impl.get();
  d->client = client;
  d->options = options;
  d->caches = std::make_unique<Caches>(client, options.namespace_);
  d->ctx.client = client;
  d->ctx.clock = clock;
  d->ctx.caches = d->caches.get();
  d->ctx.component = "copse-controller-manager";
  d->ctx.record_events = options.record_events;

  // The Workload API in the newest version served (v1beta1, v1alpha3,
  // v1alpha2): the Job controller's gangs and the PodGroup protection.
  if (auto discovery =
          kube::Discovery::ReadBlocking(client, {"scheduling.k8s.io"}, options.sync_timeout);
      discovery.ok()) {
    for (const char* version : {"v1beta1", "v1alpha3", "v1alpha2"}) {
      const kube::ResourceRef workloads{"scheduling.k8s.io", version, "workloads", true};
      const kube::ResourceRef podgroups{"scheduling.k8s.io", version, "podgroups", true};
      if (discovery->Serves(workloads) && discovery->Serves(podgroups)) {
        d->caches->WatchSchedulingApi(workloads, podgroups);
        break;
      }
    }
  } else {
    Log(1, "controllers",
        "discovery of scheduling.k8s.io failed (" + discovery.error().message +
            "): no Workload API controllers");
  }
  d->rs_reconciler = std::make_unique<ReplicaSetReconciler>(d->ctx);
  d->deploy_reconciler = std::make_unique<DeploymentReconciler>(d->ctx);
  d->job_reconciler = std::make_unique<JobReconciler>(d->ctx, options.job);
  d->sts_reconciler = std::make_unique<StatefulSetReconciler>(d->ctx);
  d->ds_reconciler = std::make_unique<DaemonSetReconciler>(d->ctx);
  const int workers = std::max(options.workers, 1);
  const std::string thread(kThreadName);
  d->rs_controller = std::make_unique<kc::Controller>(
      "replicaset", workers, [d](const std::string& k) { return d->rs_reconciler->Reconcile(k); },
      clock, thread);
  d->deploy_controller = std::make_unique<kc::Controller>(
      "deployment", workers,
      [d](const std::string& k) { return d->deploy_reconciler->Reconcile(k); }, clock, thread);
  d->job_controller = std::make_unique<kc::Controller>(
      "job", workers, [d](const std::string& k) { return d->job_reconciler->Reconcile(k); }, clock,
      thread);
  d->sts_controller = std::make_unique<kc::Controller>(
      "statefulset", workers, [d](const std::string& k) { return d->sts_reconciler->Reconcile(k); },
      clock, thread);
  d->ds_controller = std::make_unique<kc::Controller>(
      "daemonset", workers, [d](const std::string& k) { return d->ds_reconciler->Reconcile(k); },
      clock, thread);
  if (d->caches->podgroups) {
    d->pg_protection_reconciler = std::make_unique<PodGroupProtectionReconciler>(d->ctx);
    d->pg_protection_controller = std::make_unique<kc::Controller>(
        "podgroup-protection", workers,
        [d](const std::string& k) { return d->pg_protection_reconciler->Reconcile(k); }, clock,
        thread);
  }

  d->RegisterHandlers();
  d->caches->Start();
  auto out = std::unique_ptr<WorkloadControllers>(new WorkloadControllers(std::move(impl)));
  const std::string unsynced = d->caches->WaitForSync(options.sync_timeout);
  if (!unsynced.empty()) {
    out->Stop();
    return MakeError(ErrorCode::kUnavailable,
                     "workload controllers: the " + unsynced + " informer did not sync within " +
                         std::to_string(options.sync_timeout.count()) + "ms");
  }
  for (kc::Controller* c : d->controllers()) c->Start();
  Log(1, "controllers",
      std::string("started: deployment, replicaset, job, statefulset, daemonset") +
          (d->pg_protection_controller
               ? ", podgroup-protection (" + d->caches->podgroups_ref->version + ")"
               : ""));
  return out;
}

void WorkloadControllers::Stop() {
  if (impl_ == nullptr || impl_->stopped) return;
  impl_->stopped = true;
  for (kc::Controller* c : impl_->controllers()) {
    if (c != nullptr) c->Stop();
  }
  if (impl_->caches) impl_->caches->Stop();
}

bool WorkloadControllers::HasSynced() const { return impl_->caches->HasSynced(); }

bool WorkloadControllers::Idle() const {
  for (kc::Controller* c : impl_->controllers()) {
    if (!c->Idle()) return false;
  }
  return true;
}

ControllerStats WorkloadControllers::stats() const {
  ControllerStats s;
  for (kc::Controller* c : impl_->controllers()) {
    s.reconciles += c->reconciles();
    s.errors += c->errors();
  }
  return s;
}

}  // namespace copse::apiserver::controllers
