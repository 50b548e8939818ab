#include "grove/operator.h"

#include "core/log.h"
#include "grove/api/crds.h"
#include "grove/api/defaults.h"
#include "grove/api/names.h"
#include "grove/api/validation.h"
#include "grove/podclique/controller.h"
#include "grove/podcliquescalinggroup/controller.h"
#include "grove/podcliqueset/controller.h"
#include "grove/podgang/controller.h"
#include "grove/runtime/caches.h"
#include "grove/runtime/context.h"
#include "kube/controller/controller.h"
#include "kube/controller/expectations.h"
#include "kube/controller/objects.h"
#include "kube/controller/sync.h"

namespace copse::grove {

namespace {

std::string LabelKey(const kube::ObjectMeta& meta, std::string_view label) {
  auto it = meta.labels.find(label);
  if (it == meta.labels.end() || it->second.empty()) return {};
  return kube::controller::Key(meta.namespace_, it->second);
}

// Named so CPU accounting (copse bench grove) can tell operator threads apart.
constexpr std::string_view kWorkerThreadName = "grove-worker";

std::string ObjKey(const kube::ObjectMeta& meta) {
  return kube::controller::Key(meta.namespace_, meta.name);
}

}  // namespace

struct Operator::Impl {
  std::shared_ptr<kube::Client> client;
  OperatorOptions options;
  std::shared_ptr<const Clock> clock;
  std::unique_ptr<runtime::Caches> caches;
  std::unique_ptr<backend::BackendManager> backends;
  kube::controller::Expectations expectations;
  runtime::GangSyncTracker synced;
  runtime::DefaultedCache defaulted;
  std::atomic<uint64_t> topology_generation{0};
  runtime::Context context;

  std::unique_ptr<podcliqueset::Reconciler> pcs_reconciler;
  std::unique_ptr<podcliquescalinggroup::Reconciler> pcsg_reconciler;
  std::unique_ptr<podclique::Reconciler> pclq_reconciler;
  std::unique_ptr<podgang::Reconciler> gang_reconciler;

  std::unique_ptr<kube::controller::Controller> pcs_controller;
  std::unique_ptr<kube::controller::Controller> pcsg_controller;
  std::unique_ptr<kube::controller::Controller> pclq_controller;
  std::unique_ptr<kube::controller::Controller> gang_controller;
  bool stopped = false;

  explicit Impl(std::shared_ptr<const Clock> c) : clock(c), expectations(c) {}

  void EnqueuePcs(const std::string& key) {
    if (!key.empty()) pcs_controller->Enqueue(key);
  }
  void EnqueuePcsg(const std::string& key) {
    if (!key.empty()) pcsg_controller->Enqueue(key);
  }
  void EnqueuePclq(const std::string& key) {
    if (!key.empty()) pclq_controller->Enqueue(key);
  }

  void EnqueueGangCliques(const api::PodGang& gang) {
    for (const auto& group : gang.spec.pod_groups) {
      EnqueuePclq(kube::controller::Key(gang.meta.namespace_, group.name));
    }
  }

  // Pod events reach the PodCliqueSet controller coalesced: one pass per
  // burst instead of one per pod transition.
  static constexpr std::chrono::milliseconds kPodBatch{20};
  // PodClique passes triggered by pod status transitions only refresh the
  // clique's status (gates and creations are driven by PodGang and PodClique
  // events): they may wait longer and batch more.
  static constexpr std::chrono::milliseconds kStatusBatch{100};

  void EnqueuePcsCoalesced(const std::string& key) {
    if (!key.empty()) pcs_controller->EnqueueCoalesced(key, kPodBatch);
  }
  void EnqueuePcsgCoalesced(const std::string& key) {
    if (!key.empty()) pcsg_controller->EnqueueCoalesced(key, kPodBatch);
  }
  void EnqueuePclqCoalesced(const std::string& key) {
    if (!key.empty()) pclq_controller->EnqueueCoalesced(key, kStatusBatch);
  }

  // The metadata a controller's desired state depends on (not resourceVersion).
  static bool SameMeta(const kube::ObjectMeta& a, const kube::ObjectMeta& b) {
    return a.uid == b.uid && a.generation == b.generation && a.labels == b.labels &&
           a.annotations == b.annotations &&
           a.deletion_timestamp.has_value() == b.deletion_timestamp.has_value();
  }

  // Whether a pod update changes anything grove looks at.
  static bool PodChanged(const kube::Pod& a, const kube::Pod& b) {
    return a.meta.labels != b.meta.labels || a.spec.node_name != b.spec.node_name ||
           a.spec.scheduling_gates != b.spec.scheduling_gates ||
           a.meta.deletion_timestamp.has_value() != b.meta.deletion_timestamp.has_value() ||
           a.status.phase != b.status.phase ||
           kube::controller::IsPodReady(a) != kube::controller::IsPodReady(b);
  }

  void RegisterHandlers() {
    // Status-only updates are our own writes: they change nothing a
    // controller's desired state depends on, so they are not re-enqueued.
    using Pcs = std::shared_ptr<const api::PodCliqueSet>;
    caches->pcs.AddEventHandler([this](const Pcs& o) { EnqueuePcs(ObjKey(o->meta)); },
                                [this](const Pcs& old, const Pcs& n) {
                                  if (!SameMeta(old->meta, n->meta)) EnqueuePcs(ObjKey(n->meta));
                                },
                                [this](const Pcs& o) {
                                  defaulted.Forget(ObjKey(o->meta));
                                  EnqueuePcs(ObjKey(o->meta));
                                });

    using Pclq = std::shared_ptr<const api::PodClique>;
    auto on_pclq = [this](const Pclq& o) {
      EnqueuePclq(ObjKey(o->meta));
      EnqueuePcs(LabelKey(o->meta, api::kLabelPartOf));
      EnqueuePcsg(LabelKey(o->meta, api::kLabelPcsg));
    };
    caches->pclq.AddEventHandler(
        on_pclq,
        [this](const Pclq& old, const Pclq& n) {
          bool meta_changed = !SameMeta(old->meta, n->meta);
          if (meta_changed) EnqueuePclq(ObjKey(n->meta));
          if (meta_changed || !(old->status == n->status)) {
            EnqueuePcsCoalesced(LabelKey(n->meta, api::kLabelPartOf));
            EnqueuePcsgCoalesced(LabelKey(n->meta, api::kLabelPcsg));
          }
        },
        on_pclq);

    using Pcsg = std::shared_ptr<const api::PodCliqueScalingGroup>;
    auto on_pcsg = [this](const Pcsg& o) {
      EnqueuePcsg(ObjKey(o->meta));
      EnqueuePcs(LabelKey(o->meta, api::kLabelPartOf));
    };
    caches->pcsg.AddEventHandler(
        on_pcsg,
        [this](const Pcsg& old, const Pcsg& n) {
          bool meta_changed = !SameMeta(old->meta, n->meta);
          if (meta_changed) EnqueuePcsg(ObjKey(n->meta));
          if (meta_changed || !(old->status == n->status)) {
            EnqueuePcsCoalesced(LabelKey(n->meta, api::kLabelPartOf));
          }
        },
        on_pcsg);

    using Gang = std::shared_ptr<const api::PodGang>;
    caches->podgang.AddEventHandler(
        [this](const Gang& o) {
          gang_controller->Enqueue(ObjKey(o->meta));
          EnqueuePcs(LabelKey(o->meta, api::kLabelPartOf));
          EnqueueGangCliques(*o);
        },
        [this](const Gang& old, const Gang& n) {
          bool spec_changed =
              old->meta.generation != n->meta.generation || old->meta.uid != n->meta.uid;
          // The backend controller ignores status-only updates (GREP-375).
          if (spec_changed) gang_controller->Enqueue(ObjKey(n->meta));
          if (!SameMeta(old->meta, n->meta)) EnqueuePcs(LabelKey(n->meta, api::kLabelPartOf));
          if (old->IsInitialized() != n->IsInitialized() || spec_changed) EnqueueGangCliques(*n);
        },
        [this](const Gang& o) {
          gang_reconciler->RecordDeleted(o);
          gang_controller->Enqueue(ObjKey(o->meta));
          EnqueuePcs(LabelKey(o->meta, api::kLabelPartOf));
          EnqueueGangCliques(*o);
        });

    using Pod = std::shared_ptr<const kube::Pod>;
    caches->pods.AddEventHandler(
        [this](const Pod& o) {
          std::string pclq = LabelKey(o->meta, api::kLabelPodClique);
          if (!pclq.empty()) expectations.CreationObserved(pclq);
          EnqueuePclq(pclq);
          EnqueuePcsCoalesced(LabelKey(o->meta, api::kLabelPartOf));
        },
        [this](const Pod& old, const Pod& n) {
          std::string pclq = LabelKey(n->meta, api::kLabelPodClique);
          if (!old->meta.deletion_timestamp && n->meta.deletion_timestamp && !pclq.empty()) {
            expectations.DeletionObserved(pclq);
          }
          if (!PodChanged(*old, *n)) return;
          // Scheduling and readiness transitions come in bursts (a gang is
          // bound at once): batch them into one pass per clique.
          EnqueuePclqCoalesced(pclq);
          EnqueuePcsCoalesced(LabelKey(n->meta, api::kLabelPartOf));
        },
        [this](const Pod& o) {
          std::string pclq = LabelKey(o->meta, api::kLabelPodClique);
          if (!o->meta.deletion_timestamp && !pclq.empty()) expectations.DeletionObserved(pclq);
          EnqueuePclq(pclq);
          EnqueuePcsCoalesced(LabelKey(o->meta, api::kLabelPartOf));
        });

    using Svc = std::shared_ptr<const kube::Service>;
    auto on_svc = [this](const Svc& o) { EnqueuePcs(LabelKey(o->meta, api::kLabelPartOf)); };
    caches->services.AddEventHandler(
        on_svc,
        [this](const Svc& old, const Svc& n) {
          if (!(old->spec == n->spec) || !SameMeta(old->meta, n->meta)) {
            EnqueuePcs(LabelKey(n->meta, api::kLabelPartOf));
          }
        },
        on_svc);

    using Ctb = std::shared_ptr<const api::ClusterTopologyBinding>;
    auto on_ctb = [this](const Ctb&) {
      topology_generation.fetch_add(1);
      for (const auto& pcs : caches->pcs.List()) EnqueuePcs(ObjKey(pcs->meta));
    };
    caches->topologies.AddEventHandler(
        on_ctb, [on_ctb](const Ctb&, const Ctb& n) { on_ctb(n); }, on_ctb);
  }

  api::ValidationContext MakeValidationContext() {
    api::ValidationContext v = backends->ValidationContext();
    runtime::Caches* c = caches.get();
    v.topology = [c](std::string_view name) -> std::optional<api::ClusterTopologyBindingSpec> {
      auto binding = c->topologies.Get(name);
      if (binding == nullptr) return std::nullopt;
      return binding->spec;
    };
    return v;
  }
};

Operator::Operator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Operator::~Operator() { Stop(); }

Result<std::unique_ptr<Operator>> Operator::Start(std::shared_ptr<kube::Client> client,
                                                  OperatorOptions options) {
  if (client == nullptr) return MakeError(ErrorCode::kInvalid, "grove::Operator: client is null");
  SetLogVerbosity(options.log_level);
  std::shared_ptr<const Clock> clock = options.clock;
  if (clock == nullptr)
    clock = std::shared_ptr<const Clock>(&RealClock::Get(), [](const Clock*) {});
  auto impl = std::make_unique<Impl>(clock);
  Impl* d = impl.get();
  d->client = client;
  d->options = options;

  if (options.install_crds) {
    Status s = kube::controller::Await(*client, api::InstallCrds(client, api::CrdManifests()));
    if (!s.ok()) {
      return MakeError(s.error().code, "installing grove CRDs: " + s.error().message);
    }
  }

  runtime::CacheOptions cache_options;
  cache_options.namespace_ = options.namespace_;
  // Informers back off on real time; the injected clock drives conditions and timers.
  cache_options.clock = nullptr;
  d->caches = std::make_unique<runtime::Caches>(client, cache_options);

  backend::BackendContext backend_context;
  backend_context.client = client;
  backend_context.clock = clock;
  runtime::Caches* caches = d->caches.get();
  backend_context.topology =
      [caches](std::string_view name) -> std::optional<api::ClusterTopologyBinding> {
    auto binding = caches->topologies.Get(name);
    if (binding == nullptr) return std::nullopt;
    return *binding;
  };
  backend::Registry registry;
  backend::RegisterBuiltinBackends(registry);
  if (options.register_backends) options.register_backends(registry);
  auto manager = backend::BackendManager::Initialize(options.scheduler, backend_context, registry);
  if (!manager.ok()) return manager.error();
  d->backends = std::move(manager).value();

  runtime::Context& ctx = d->context;
  ctx.client = client;
  ctx.clock = clock;
  ctx.caches = d->caches.get();
  ctx.backends = d->backends.get();
  ctx.expectations = &d->expectations;
  ctx.synced = &d->synced;
  ctx.defaulted = &d->defaulted;
  ctx.topology_generation = &d->topology_generation;
  ctx.initc_image = options.initc_image;
  ctx.validation = d->MakeValidationContext();
  ctx.enqueue_pcs = [d](const std::string& key) { d->EnqueuePcs(key); };
  ctx.enqueue_pcsg = [d](const std::string& key) { d->EnqueuePcsg(key); };
  ctx.enqueue_pclq = [d](const std::string& key) { d->EnqueuePclq(key); };

  d->pcs_reconciler = std::make_unique<podcliqueset::Reconciler>(ctx);
  d->pcsg_reconciler = std::make_unique<podcliquescalinggroup::Reconciler>(ctx);
  d->pclq_reconciler = std::make_unique<podclique::Reconciler>(ctx);
  d->gang_reconciler = std::make_unique<podgang::Reconciler>(ctx);
  int workers = std::max(options.workers, 1);
  d->pcs_controller = std::make_unique<kube::controller::Controller>(
      "podcliqueset", workers,
      [d](const std::string& k) { return d->pcs_reconciler->Reconcile(k); }, clock,
      std::string(kWorkerThreadName));
  d->pcsg_controller = std::make_unique<kube::controller::Controller>(
      "podcliquescalinggroup", workers,
      [d](const std::string& k) { return d->pcsg_reconciler->Reconcile(k); }, clock,
      std::string(kWorkerThreadName));
  d->pclq_controller = std::make_unique<kube::controller::Controller>(
      "podclique", workers, [d](const std::string& k) { return d->pclq_reconciler->Reconcile(k); },
      clock, std::string(kWorkerThreadName));
  d->gang_controller = std::make_unique<kube::controller::Controller>(
      "backend", workers, [d](const std::string& k) { return d->gang_reconciler->Reconcile(k); },
      clock, std::string(kWorkerThreadName));

  d->RegisterHandlers();
  d->caches->Start();
  auto op = std::unique_ptr<Operator>(new Operator(std::move(impl)));
  if (!d->caches->WaitForSync(options.sync_timeout)) {
    std::string which;
    if (!d->caches->pcs.HasSynced())
      which = "podcliquesets.grove.io";
    else if (!d->caches->pclq.HasSynced())
      which = "podcliques.grove.io";
    else if (!d->caches->pcsg.HasSynced())
      which = "podcliquescalinggroups.grove.io";
    else if (!d->caches->podgang.HasSynced())
      which = "podgangs.scheduler.grove.io";
    else if (!d->caches->topologies.HasSynced())
      which = "clustertopologybindings.grove.io";
    else if (!d->caches->pods.HasSynced())
      which = "pods";
    else
      which = "services";
    op->Stop();
    return MakeError(ErrorCode::kUnavailable,
                     "grove: the " + which + " informer did not sync within " +
                         std::to_string(options.sync_timeout.count()) +
                         "ms (are the grove CRDs installed? see deploy/crds/grove)");
  }
  d->pcs_controller->Start();
  d->pcsg_controller->Start();
  d->pclq_controller->Start();
  d->gang_controller->Start();
  Log(1, "operator", "started; backends: default " + std::string(d->backends->GetDefault().Name()));
  return op;
}

void Operator::Stop() {
  if (impl_ == nullptr || impl_->stopped) return;
  impl_->stopped = true;
  for (auto* c : {impl_->pcs_controller.get(), impl_->pcsg_controller.get(),
                  impl_->pclq_controller.get(), impl_->gang_controller.get()}) {
    if (c != nullptr) c->Stop();
  }
  if (impl_->caches) impl_->caches->Stop();
}

bool Operator::HasSynced() const { return impl_->caches->HasSynced(); }

bool Operator::Idle() const {
  return impl_->pcs_controller->Idle() && impl_->pcsg_controller->Idle() &&
         impl_->pclq_controller->Idle() && impl_->gang_controller->Idle();
}

OperatorStats Operator::stats() const {
  OperatorStats s;
  for (auto* c : {impl_->pcs_controller.get(), impl_->pcsg_controller.get(),
                  impl_->pclq_controller.get(), impl_->gang_controller.get()}) {
    s.reconciles += c->reconciles();
    s.errors += c->errors();
  }
  return s;
}

const backend::BackendManager& Operator::backends() const { return *impl_->backends; }

Result<backend::Admission> Operator::ValidatePodCliqueSet(std::string_view json,
                                                          std::string_view old_json) const {
  auto pcs = api::PodCliqueSet::Decode(json);
  if (!pcs.ok()) return pcs.error();
  api::PodCliqueSet defaulted = api::Defaulted(*pcs);
  const api::ValidationContext& v = impl_->context.validation;
  api::FieldErrors errors;
  if (old_json.empty()) {
    errors = api::ValidatePodCliqueSet(defaulted, v);
  } else {
    auto old = api::PodCliqueSet::Decode(old_json);
    if (!old.ok()) return old.error();
    errors = api::ValidatePodCliqueSetUpdate(defaulted, api::Defaulted(*old), v);
  }
  std::string name =
      defaulted.meta.name.empty() ? defaulted.meta.generate_name : defaulted.meta.name;
  if (!errors.empty()) return api::ToError(errors, "PodCliqueSet.grove.io", name);
  std::string scheduler =
      api::ResolvedSchedulerName(defaulted, impl_->backends->GetDefault().SchedulerName());
  backend::SchedulerBackend* b = impl_->backends->ForSchedulerName(scheduler);
  if (b == nullptr) {
    return api::ToError(
        {api::FieldError{
            api::FieldError::Type::kInvalid, "spec.template.cliques.spec.podSpec.schedulerName",
            "\"" + scheduler + "\"", "schedulerName must be an enabled scheduler backend"}},
        "PodCliqueSet.grove.io", name);
  }
  auto admission = b->ValidatePodCliqueSet(defaulted);
  if (!admission.ok()) {
    Error e = admission.error();
    e.message = "PodCliqueSet.grove.io \"" + name + "\" is invalid: " + e.message;
    e.http_status = 422;
    e.reason = "Invalid";
    return e;
  }
  return admission;
}

}  // namespace copse::grove
