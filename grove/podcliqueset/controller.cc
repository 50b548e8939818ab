#include "grove/podcliqueset/controller.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/log.h"
#include "grove/api/defaults.h"
#include "grove/api/names.h"
#include "grove/api/validation.h"
#include "grove/components/builders.h"
#include "grove/runtime/lookups.h"
#include "kube/controller/objects.h"
#include "kube/controller/sync.h"

namespace copse::grove::podcliqueset {

namespace {

using kube::controller::Await;
using kube::controller::ReconcileResult;

constexpr std::string_view kLog = "podcliqueset";

bool ConditionIs(const std::vector<kube::Condition>& conditions, std::string_view type,
                 std::string_view status) {
  const kube::Condition* c = kube::FindCondition(conditions, type);
  return c != nullptr && c->status == status;
}

kube::Condition MakeCondition(std::string_view type, std::string_view status,
                              std::string_view reason, std::string message) {
  kube::Condition c;
  c.type = type;
  c.status = status;
  c.reason = reason;
  c.message = std::move(message);
  return c;
}

// One reconcile pass over one PodCliqueSet.
class Pass {
 public:
  Pass(runtime::Context& ctx, std::shared_ptr<const api::PodCliqueSet> raw)
      : ctx_(ctx),
        client_(*ctx.client),
        raw_(std::move(raw)),
        pcs_ptr_(ctx.defaulted->Get(raw_)),
        pcs_(*pcs_ptr_) {
    ns_ = pcs_.meta.namespace_;
  }

  // Admission of this generation (defaulting, validation, the backend's
  // check); invalid objects are left alone (the webhook normally keeps them out).
  Reconciler::Admitted Admit() const {
    Reconciler::Admitted out;
    out.uid = raw_->meta.uid;
    out.generation = raw_->meta.generation;
    out.labels = raw_->meta.labels;
    out.topology_generation = ctx_.topology_generation->load();
    auto errors = api::ValidatePodCliqueSet(pcs_, ctx_.validation);
    if (!errors.empty()) {
      LogError(kLog, api::ToError(errors, "PodCliqueSet.grove.io", pcs_.meta.name).message);
      return out;
    }
    std::string scheduler =
        api::ResolvedSchedulerName(pcs_, ctx_.backends->GetDefault().SchedulerName());
    out.backend = ctx_.backends->ForSchedulerName(scheduler);
    if (out.backend == nullptr) {
      LogError(kLog,
               Key() + ": no enabled scheduler backend for schedulerName \"" + scheduler + "\"");
      return out;
    }
    auto admission = out.backend->ValidatePodCliqueSet(pcs_);
    if (!admission.ok()) {
      LogError(kLog, Key() + ": rejected by " + std::string(out.backend->Name()) + ": " +
                         admission.error().message);
      return out;
    }
    out.ignored = admission->ignored;
    out.ok = true;
    return out;
  }

  ReconcileResult Run(const Reconciler::Admitted& admitted) {
    if (!admitted.ok) return ReconcileResult::Done();
    backend_ = admitted.backend;
    ignored_ = admitted.ignored;
    if (std::string topology = components::TopologyName(pcs_); !topology.empty()) {
      binding_ = ctx_.caches->topologies.Get(topology);
    }

    std::set<int> terminated = TerminateBreachedReplicas();
    for (int i = 0; i < pcs_.spec.replicas; ++i) {
      if (terminated.count(i)) continue;
      Record(EnsureService(i));
      auto gangs = components::ExpectedPodGangs(
          pcs_, i,
          [&](const std::string& fqn, const api::PodCliqueScalingGroupConfig& config) {
            auto existing = ctx_.caches->pcsg.Get(ns_, fqn);
            return existing != nullptr ? existing->spec.replicas : config.replicas.value_or(1);
          },
          [&](const std::string& fqn, const api::PodCliqueTemplateSpec& clique) {
            return PodCliqueReplicas(fqn, clique);
          },
          binding_.get(), backend_->Name());
      bool base_scheduled = false;
      for (auto& gang : gangs) {
        expected_gangs_.insert(gang.name);
        Record(EnsureGang(gang));
        if (gang.base) {
          auto cached = ctx_.caches->podgang.Get(ns_, gang.name);
          base_scheduled = cached != nullptr && runtime::IsGangScheduled(*ctx_.caches, *cached);
        } else if (base_scheduled) {
          // Pods of scaled gangs wait for the base gang: nudge them now it is scheduled.
          for (const auto& group : gang.groups)
            ctx_.enqueue_pclq(kube::controller::Key(ns_, group.pclq));
        }
      }
      Record(EnsureStandalonePodCliques(i));
      Record(EnsureScalingGroups(i));
    }
    Record(DeleteExcess(terminated));
    Record(UpdateStatus());
    if (!first_error_.ok()) return ReconcileResult::Failed(first_error_.error());
    if (!terminated.empty()) return ReconcileResult::RequeueAfter(std::chrono::milliseconds(200));
    if (requeue_.has_value()) return ReconcileResult::RequeueAfter(*requeue_);
    return ReconcileResult::Done();
  }

 private:
  std::string Key() const { return kube::controller::Key(ns_, pcs_.meta.name); }

  void Record(Status s) {
    if (!s.ok() && first_error_.ok()) first_error_ = s;
  }

  // The template sets replicas when the PodClique is created; afterwards they
  // belong to its scale subresource (kubectl scale, HPA, KEDA), as upstream.
  int32_t PodCliqueReplicas(const std::string& fqn, const api::PodCliqueTemplateSpec& clique) {
    if (auto existing = ctx_.caches->pclq.Get(ns_, fqn)) return existing->spec.replicas;
    return clique.spec.replicas;
  }

  bool OwnedByMe(const kube::ObjectMeta& meta) const {
    return kube::controller::IsControlledBy(meta, raw_->meta.uid);
  }

  // ------------------------------------------------------------ termination

  // Replicas whose standalone PodCliques or scaling groups have been
  // MinAvailableBreached for terminationDelay are deleted (children are
  // recreated by later passes). Returns the replicas terminated now.
  std::set<int> TerminateBreachedReplicas() {
    std::set<int> out;
    auto delay = api::TerminationDelay(pcs_);
    auto now = ctx_.clock->WallNow();
    std::map<int, std::chrono::system_clock::time_point> breached_since;
    auto consider = [&](const kube::ObjectMeta& meta, const std::vector<kube::Condition>& conds) {
      const kube::Condition* c = kube::FindCondition(conds, api::kConditionMinAvailableBreached);
      if (c == nullptr || c->status != "True") return;
      int replica = runtime::IntLabel(meta, api::kLabelPcsReplicaIndex);
      if (replica < 0) return;
      auto since = kube::controller::ParseRfc3339(c->last_transition_time).value_or(now);
      auto it = breached_since.find(replica);
      if (it == breached_since.end() || since < it->second) breached_since[replica] = since;
    };
    for (const auto& pclq : ctx_.caches->pclq.ByIndex(runtime::kIndexPcs, PcsIndex())) {
      if (pclq->meta.labels.count(api::kLabelPcsg) || kube::controller::IsTerminating(pclq->meta))
        continue;
      consider(pclq->meta, pclq->status.conditions);
    }
    for (const auto& pcsg : ctx_.caches->pcsg.ByIndex(runtime::kIndexPcs, PcsIndex())) {
      if (kube::controller::IsTerminating(pcsg->meta)) continue;
      consider(pcsg->meta, pcsg->status.conditions);
    }
    for (const auto& [replica, since] : breached_since) {
      auto elapsed = now - since;
      if (elapsed >= delay) {
        Log(1, kLog,
            Key() + ": gang-terminating replica " + std::to_string(replica) +
                " (MinAvailableBreached for " +
                api::FormatDuration(std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed)) +
                ")");
        Record(DeleteReplica(replica));
        out.insert(replica);
      } else {
        auto left = std::chrono::duration_cast<Clock::Duration>(delay - elapsed);
        if (!requeue_.has_value() || left < *requeue_) requeue_ = left;
      }
    }
    return out;
  }

  Status DeleteReplica(int replica) {
    std::string index = std::to_string(replica);
    auto matches = [&](const kube::ObjectMeta& meta) {
      auto it = meta.labels.find(api::kLabelPcsReplicaIndex);
      return it != meta.labels.end() && it->second == index && OwnedByMe(meta) &&
             !kube::controller::IsTerminating(meta);
    };
    for (const auto& pclq : ctx_.caches->pclq.ByIndex(runtime::kIndexPcs, PcsIndex())) {
      if (matches(pclq->meta)) Record(Delete(api::resources::kPodCliques, pclq->meta.name));
    }
    for (const auto& pcsg : ctx_.caches->pcsg.ByIndex(runtime::kIndexPcs, PcsIndex())) {
      if (matches(pcsg->meta))
        Record(Delete(api::resources::kPodCliqueScalingGroups, pcsg->meta.name));
    }
    for (const auto& gang : ctx_.caches->podgang.ByIndex(runtime::kIndexPcs, PcsIndex())) {
      if (matches(gang->meta)) Record(Delete(api::resources::kPodGangs, gang->meta.name));
    }
    return Status::Ok();
  }

  Status Delete(const kube::ResourceRef& resource, const std::string& name) {
    Log(1, kLog, "delete " + resource.resource + " " + ns_ + "/" + name);
    kube::DeleteOptions options;
    options.propagation_policy = "Background";
    Status s = Await(client_, client_.Delete(resource, ns_, name, options));
    if (!s.ok() && s.error().code != ErrorCode::kNotFound) return s;
    return Status::Ok();
  }

  std::string PcsIndex() const { return kube::controller::IndexValue(ns_, pcs_.meta.name); }

  // ------------------------------------------------------------ ensure

  Status Create(const kube::ResourceRef& resource, const std::string& body,
                std::string* created = nullptr) {
    Result<std::string> result = Await(client_, client_.Create(resource, ns_, body));
    if (!result.ok()) {
      if (result.error().code == ErrorCode::kAlreadyExists) return Status::Ok();
      return result.error();
    }
    if (created != nullptr) *created = std::move(result).value();
    return Status::Ok();
  }

  Status Update(const kube::ResourceRef& resource, const std::string& name, const std::string& body,
                std::string* updated = nullptr) {
    Result<std::string> result = Await(client_, client_.Update(resource, ns_, name, body));
    if (!result.ok()) return result.error();
    if (updated != nullptr) *updated = std::move(result).value();
    return Status::Ok();
  }

  Status UpdateStatusOf(const kube::ResourceRef& resource, const std::string& name,
                        const std::string& body, std::string* updated = nullptr) {
    Result<std::string> result = Await(client_, client_.UpdateStatus(resource, ns_, name, body));
    if (!result.ok()) return result.error();
    if (updated != nullptr) *updated = std::move(result).value();
    return Status::Ok();
  }

  Status EnsureService(int replica) {
    kube::Service desired = components::BuildHeadlessService(pcs_, replica);
    auto existing = ctx_.caches->services.Get(ns_, desired.meta.name);
    if (existing == nullptr) return Create(kube::resources::kServices, desired.Encode());
    if (existing->spec.selector == desired.spec.selector &&
        existing->spec.publish_not_ready_addresses == desired.spec.publish_not_ready_addresses &&
        kube::controller::LabelsContain(existing->meta.labels, desired.meta.labels)) {
      return Status::Ok();
    }
    kube::Service updated = *existing;
    updated.spec.selector = desired.spec.selector;
    updated.spec.publish_not_ready_addresses = desired.spec.publish_not_ready_addresses;
    for (const auto& [k, v] : desired.meta.labels) updated.meta.labels[k] = v;
    return Update(kube::resources::kServices, updated.meta.name, updated.Encode());
  }

  Status EnsureStandalonePodCliques(int replica) {
    const auto& t = pcs_.spec.template_;
    for (const auto& clique : t.cliques) {
      if (t.ScalingGroupOf(clique.name) != nullptr) continue;
      api::PodClique desired = components::BuildStandalonePodClique(pcs_, replica, clique);
      desired.spec.replicas = PodCliqueReplicas(desired.meta.name, clique);
      auto existing = ctx_.caches->pclq.Get(ns_, desired.meta.name);
      if (existing == nullptr) {
        Log(1, kLog, "create PodClique " + ns_ + "/" + desired.meta.name);
        Record(Create(api::resources::kPodCliques, desired.Encode()));
        continue;
      }
      if (kube::controller::IsTerminating(existing->meta) || !OwnedByMe(existing->meta)) continue;
      Record(SyncPodClique(*existing, desired));
    }
    return Status::Ok();
  }

  Status SyncPodClique(const api::PodClique& existing, const api::PodClique& desired) {
    if (existing.spec == desired.spec &&
        kube::controller::LabelsContain(existing.meta.labels, desired.meta.labels)) {
      return Status::Ok();
    }
    api::PodClique updated = existing;
    updated.spec = desired.spec;
    for (const auto& [k, v] : desired.meta.labels) updated.meta.labels[k] = v;
    return Update(api::resources::kPodCliques, updated.meta.name, updated.Encode());
  }

  Status EnsureScalingGroups(int replica) {
    for (const auto& config : pcs_.spec.template_.scaling_groups) {
      api::PodCliqueScalingGroup desired = components::BuildScalingGroup(pcs_, replica, config);
      auto existing = ctx_.caches->pcsg.Get(ns_, desired.meta.name);
      if (existing == nullptr) {
        Log(1, kLog, "create PodCliqueScalingGroup " + ns_ + "/" + desired.meta.name);
        Record(Create(api::resources::kPodCliqueScalingGroups, desired.Encode()));
        continue;
      }
      if (kube::controller::IsTerminating(existing->meta) || !OwnedByMe(existing->meta)) continue;
      api::PodCliqueScalingGroup updated = *existing;
      // Replicas are the template's only at creation; afterwards the scale
      // subresource owns them (kubectl scale, HPA, KEDA), as upstream.
      updated.spec.min_available = desired.spec.min_available;
      updated.spec.clique_names = desired.spec.clique_names;
      for (const auto& [k, v] : desired.meta.labels) updated.meta.labels[k] = v;
      if (updated.spec == existing->spec && updated.meta.labels == existing->meta.labels) continue;
      Record(Update(api::resources::kPodCliqueScalingGroups, updated.meta.name, updated.Encode()));
    }
    return Status::Ok();
  }

  // ------------------------------------------------------------ PodGangs

  Status EnsureGang(components::ExpectedGang& expected) {
    const std::string& name = expected.name;
    auto cached = ctx_.caches->podgang.Get(ns_, name);
    if (cached == nullptr) {
      Log(1, kLog, "create PodGang " + ns_ + "/" + name);
      std::string body;
      Status s = Create(api::resources::kPodGangs, expected.object.Encode(), &body);
      if (!s.ok() || body.empty()) return s;
      auto created = api::PodGang::Decode(body);
      if (!created.ok()) return created.error();
      created->status.phase = std::string(api::kPodGangPending);
      kube::controller::SetCondition(
          created->status.conditions,
          MakeCondition(api::kConditionInitialized, "False", api::kReasonPodsPending,
                        "Not all constituent pods have been created yet"),
          ctx_.Now());
      return UpdateStatusOf(api::resources::kPodGangs, name,
                            kube::controller::StatusBody(*created));
    }
    if (kube::controller::IsTerminating(cached->meta) || !OwnedByMe(cached->meta))
      return Status::Ok();

    // Which pods exist and point back at this gang?
    bool all_exist = true;
    std::map<std::string, std::vector<api::NamespacedName>> refs;
    std::map<std::string, std::pair<int32_t, int32_t>> bound_ready;  // per group
    for (const auto& group : expected.groups) {
      auto pclq = ctx_.caches->pclq.Get(ns_, group.pclq);
      std::vector<runtime::PodPtr> pods;
      if (pclq != nullptr) pods = runtime::ActivePodsOf(*ctx_.caches, *pclq);
      int32_t labelled = 0;
      auto& list = refs[group.pclq];
      for (const auto& pod : pods) {
        auto it = pod->meta.labels.find(api::kLabelPodGang);
        if (it == pod->meta.labels.end() || it->second != name) continue;
        ++labelled;
        list.push_back({pod->meta.namespace_, pod->meta.name});
        if (kube::controller::IsPodScheduled(*pod)) ++bound_ready[group.pclq].first;
        if (kube::controller::IsPodReady(*pod)) ++bound_ready[group.pclq].second;
      }
      std::sort(list.begin(), list.end());
      if (pclq == nullptr || labelled < group.replicas) all_exist = false;
    }

    api::PodGang gang = *cached;
    bool initialized = cached->IsInitialized();
    bool synced = ctx_.synced->IsSynced(kube::controller::Key(ns_, name), cached->meta.uid);

    // Desired spec: podReferences stay empty until every pod exists, then
    // they track the pods that exist.
    api::PodGangSpec spec = expected.object.spec;
    for (auto& group : spec.pod_groups) {
      if (initialized || all_exist) {
        group.pod_references = refs[group.name];
      } else {
        group.pod_references.clear();
      }
    }
    bool meta_changed = false;
    for (const auto& [k, v] : expected.object.meta.labels) {
      auto it = gang.meta.labels.find(k);
      if (it == gang.meta.labels.end() || it->second != v) {
        gang.meta.labels[k] = v;
        meta_changed = true;
      }
    }
    for (const auto& [k, v] : expected.object.meta.annotations) {
      auto it = gang.meta.annotations.find(k);
      if (it == gang.meta.annotations.end() || it->second != v) {
        gang.meta.annotations[k] = v;
        meta_changed = true;
      }
    }

    std::string now = ctx_.Now();
    if (!initialized && all_exist && !(gang.spec == spec)) {
      // Pods exist; references are being written.
      if (Status s = SetInitialized(gang, "False", api::kReasonRefsSyncing,
                                    "All pods exist; pod references are being synced", now);
          !s.ok()) {
        return s;
      }
    }
    if (!(gang.spec == spec) || meta_changed) {
      gang.spec = spec;
      std::string body;
      if (Status s = Update(api::resources::kPodGangs, name, gang.Encode(), &body); !s.ok())
        return s;
      auto decoded = api::PodGang::Decode(body);
      if (!decoded.ok()) return decoded.error();
      gang = std::move(decoded).value();
    }

    // Status: Initialized, phase, Scheduled.
    api::PodGangStatus status = gang.status;
    if (!initialized) {
      if (!all_exist) {
        kube::controller::SetCondition(
            status.conditions,
            MakeCondition(api::kConditionInitialized, "False", api::kReasonPodsPending,
                          "Not all constituent pods have been created yet"),
            now);
      } else if (synced) {
        kube::controller::SetCondition(
            status.conditions,
            MakeCondition(api::kConditionInitialized, "True", api::kReasonReady,
                          "PodGang is fully initialized"),
            now);
        Log(1, kLog, "PodGang " + ns_ + "/" + name + " Initialized");
      }
    }
    bool scheduled = true, running = true, starting = false;
    for (const auto& group : expected.groups) {
      auto [bound, ready] = bound_ready[group.pclq];
      if (bound < group.min_replicas) scheduled = false;
      if (ready < group.min_replicas) running = false;
      if (bound > 0) starting = true;
    }
    status.phase = std::string(running && scheduled ? api::kPodGangRunning
                               : starting           ? api::kPodGangStarting
                                                    : api::kPodGangPending);
    if (gang.IsInitialized() ||
        kube::FindCondition(status.conditions, api::kConditionInitialized)) {
      kube::controller::SetCondition(
          status.conditions,
          MakeCondition(api::kConditionScheduled, scheduled ? "True" : "False",
                        scheduled ? api::kReasonSufficientScheduledPods
                                  : api::kReasonInsufficientScheduledPods,
                        scheduled ? "every PodGroup has minReplicas pods scheduled"
                                  : "not every PodGroup has minReplicas pods scheduled"),
          now);
    }
    if (status == gang.status) return Status::Ok();
    gang.status = std::move(status);
    return UpdateStatusOf(api::resources::kPodGangs, name, kube::controller::StatusBody(gang));
  }

  // Writes Initialized=<status>/<reason> now (a separate status update, so
  // the watch history shows each step), updating `gang` in place.
  Status SetInitialized(api::PodGang& gang, std::string_view status, std::string_view reason,
                        std::string message, const std::string& now) {
    api::PodGang next = gang;
    if (!kube::controller::SetCondition(
            next.status.conditions,
            MakeCondition(api::kConditionInitialized, status, reason, std::move(message)), now)) {
      return Status::Ok();
    }
    std::string body;
    if (Status s = UpdateStatusOf(api::resources::kPodGangs, gang.meta.name,
                                  kube::controller::StatusBody(next), &body);
        !s.ok()) {
      return s;
    }
    auto decoded = api::PodGang::Decode(body);
    if (!decoded.ok()) return decoded.error();
    gang = std::move(decoded).value();
    return Status::Ok();
  }

  // ------------------------------------------------------------ cleanup

  Status DeleteExcess(const std::set<int>& terminated) {
    int replicas = pcs_.spec.replicas;
    const auto& t = pcs_.spec.template_;
    auto replica_of = [](const kube::ObjectMeta& meta) {
      return runtime::IntLabel(meta, api::kLabelPcsReplicaIndex);
    };
    for (const auto& svc : ctx_.caches->services.ByIndex(runtime::kIndexPcs, PcsIndex())) {
      if (OwnedByMe(svc->meta) && replica_of(svc->meta) >= replicas) {
        Record(Delete(kube::resources::kServices, svc->meta.name));
      }
    }
    for (const auto& pclq : ctx_.caches->pclq.ByIndex(runtime::kIndexPcs, PcsIndex())) {
      if (!OwnedByMe(pclq->meta) || kube::controller::IsTerminating(pclq->meta)) continue;
      int replica = replica_of(pclq->meta);
      bool known = false;
      for (const auto& clique : t.cliques) {
        if (t.ScalingGroupOf(clique.name) == nullptr &&
            api::PodCliqueName(pcs_.meta.name, replica, clique.name) == pclq->meta.name) {
          known = true;
        }
      }
      if (replica >= replicas || !known)
        Record(Delete(api::resources::kPodCliques, pclq->meta.name));
    }
    for (const auto& pcsg : ctx_.caches->pcsg.ByIndex(runtime::kIndexPcs, PcsIndex())) {
      if (!OwnedByMe(pcsg->meta) || kube::controller::IsTerminating(pcsg->meta)) continue;
      int replica = replica_of(pcsg->meta);
      bool known = false;
      for (const auto& config : t.scaling_groups) {
        if (api::ScalingGroupName(pcs_.meta.name, replica, config.name) == pcsg->meta.name) {
          known = true;
        }
      }
      if (replica >= replicas || !known) {
        Record(Delete(api::resources::kPodCliqueScalingGroups, pcsg->meta.name));
      }
    }
    for (const auto& gang : ctx_.caches->podgang.ByIndex(runtime::kIndexPcs, PcsIndex())) {
      if (!OwnedByMe(gang->meta) || kube::controller::IsTerminating(gang->meta)) continue;
      if (terminated.count(replica_of(gang->meta))) continue;
      if (!expected_gangs_.count(gang->meta.name)) {
        Record(Delete(api::resources::kPodGangs, gang->meta.name));
      }
    }
    return Status::Ok();
  }

  // ------------------------------------------------------------ status

  Status UpdateStatus() {
    api::PodCliqueSetStatus status = raw_->status;
    status.observed_generation = raw_->meta.generation;
    status.replicas = pcs_.spec.replicas;
    status.selector = kube::controller::SelectorString(api::DefaultLabels(pcs_.meta.name));
    const auto& t = pcs_.spec.template_;

    int32_t available = 0, updated = 0;
    auto pclqs = ctx_.caches->pclq.ByIndex(runtime::kIndexPcs, PcsIndex());
    auto pcsgs = ctx_.caches->pcsg.ByIndex(runtime::kIndexPcs, PcsIndex());
    for (int i = 0; i < pcs_.spec.replicas; ++i) {
      bool ok = true, current = true;
      int found = 0;
      for (const auto& pclq : pclqs) {
        if (runtime::IntLabel(pclq->meta, api::kLabelPcsReplicaIndex) != i) continue;
        bool standalone = pclq->meta.labels.count(api::kLabelPcsg) == 0;
        if (standalone) {
          ++found;
          if (!ConditionIs(pclq->status.conditions, api::kConditionMinAvailableBreached, "False")) {
            ok = false;
          }
        }
        // The clique's template hash now vs. the pods' (updatedReplicas).
        std::string clique_name;
        for (const auto& c : t.cliques) {
          if (pclq->meta.name.size() > c.name.size() &&
              pclq->meta.name.compare(pclq->meta.name.size() - c.name.size(), c.name.size(),
                                      c.name) == 0) {
            clique_name = c.name;
          }
        }
        const auto* clique = t.FindClique(clique_name);
        auto hash = pclq->meta.labels.find(api::kLabelPodTemplateHash);
        if (clique == nullptr || hash == pclq->meta.labels.end() ||
            hash->second != components::PodTemplateHash(*clique, t.priority_class_name) ||
            pclq->status.updated_replicas < pclq->spec.replicas) {
          current = false;
        }
      }
      size_t standalone_expected = 0;
      for (const auto& c : t.cliques) standalone_expected += t.ScalingGroupOf(c.name) == nullptr;
      if (static_cast<size_t>(found) < standalone_expected) ok = false;
      int groups = 0;
      for (const auto& pcsg : pcsgs) {
        if (runtime::IntLabel(pcsg->meta, api::kLabelPcsReplicaIndex) != i) continue;
        ++groups;
        if (!ConditionIs(pcsg->status.conditions, api::kConditionMinAvailableBreached, "False")) {
          ok = false;
        }
      }
      if (static_cast<size_t>(groups) < t.scaling_groups.size()) ok = false;
      available += ok;
      updated += current && ok;
    }
    status.available_replicas = available;
    status.updated_replicas = updated;

    status.pod_gang_statuses.clear();
    std::vector<std::string> names(expected_gangs_.begin(), expected_gangs_.end());
    for (const auto& name : names) {
      auto gang = ctx_.caches->podgang.Get(ns_, name);
      if (gang == nullptr) continue;
      api::PodGangStatusEntry entry;
      entry.name = name;
      entry.phase =
          gang->status.phase.empty() ? std::string(api::kPodGangPending) : gang->status.phase;
      entry.conditions = gang->status.conditions;
      status.pod_gang_statuses.push_back(std::move(entry));
    }

    std::string now = ctx_.Now();
    if (!ignored_.empty()) {
      std::string message;
      for (const auto& note : ignored_) message += (message.empty() ? "" : "; ") + note;
      kube::controller::SetCondition(
          status.conditions,
          MakeCondition(api::kConditionSchedulingFeaturesIgnored, "True", "UnsupportedByBackend",
                        std::string(backend_->Name()) + ": " + message),
          now);
    } else {
      auto& c = status.conditions;
      c.erase(std::remove_if(c.begin(), c.end(),
                             [](const kube::Condition& x) {
                               return x.type == api::kConditionSchedulingFeaturesIgnored;
                             }),
              c.end());
    }
    if (status == raw_->status) return Status::Ok();
    api::PodCliqueSet next = *raw_;
    next.status = std::move(status);
    Status s = UpdateStatusOf(api::resources::kPodCliqueSets, next.meta.name,
                              kube::controller::StatusBody(next));
    if (!s.ok() && s.error().code == ErrorCode::kNotFound) return Status::Ok();
    return s;
  }

  runtime::Context& ctx_;
  kube::Client& client_;
  std::shared_ptr<const api::PodCliqueSet> raw_;
  std::shared_ptr<const api::PodCliqueSet> pcs_ptr_;
  const api::PodCliqueSet& pcs_;
  std::string ns_;
  backend::SchedulerBackend* backend_ = nullptr;
  std::vector<std::string> ignored_;
  std::shared_ptr<const api::ClusterTopologyBinding> binding_;
  std::set<std::string> expected_gangs_;
  Status first_error_;
  std::optional<Clock::Duration> requeue_;
};

}  // namespace

ReconcileResult Reconciler::Reconcile(const std::string& key) {
  auto raw = ctx_.caches->pcs.Get(key);
  if (raw == nullptr || kube::controller::IsTerminating(raw->meta)) {
    std::lock_guard<std::mutex> lock(mu_);
    admitted_.erase(key);
    return ReconcileResult::Done();
  }
  Pass pass(ctx_, raw);
  Admitted admitted;
  bool known = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = admitted_.find(key);
    if (it != admitted_.end() && it->second.uid == raw->meta.uid &&
        it->second.generation == raw->meta.generation &&
        it->second.topology_generation == ctx_.topology_generation->load() &&
        it->second.labels == raw->meta.labels) {
      admitted = it->second;
      known = true;
    }
  }
  if (!known) {
    admitted = pass.Admit();
    std::lock_guard<std::mutex> lock(mu_);
    admitted_[key] = admitted;
  }
  return pass.Run(admitted);
}

}  // namespace copse::grove::podcliqueset
