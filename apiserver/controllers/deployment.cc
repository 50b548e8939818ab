#include "apiserver/controllers/deployment.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "kube/controller/objects.h"
#include "kube/controller/sync.h"

namespace copse::apiserver::controllers {

namespace kc = kube::controller;
using kc::ReconcileResult;
using nlohmann::json;

namespace {

// kube-controller-manager's default --deployment-controller revision history length.
constexpr size_t kMaxRevisionHistoryChars = 500;
// How long a write may stay unseen in the cache before it is ignored (a lost
// watch event must not wedge a Deployment).
constexpr auto kWriteVisibleWithin = std::chrono::seconds(30);

constexpr std::string_view kProgressing = "Progressing";
constexpr std::string_view kAvailable = "Available";
constexpr std::string_view kNewRSCreated = "NewReplicaSetCreated";
constexpr std::string_view kFoundNewRS = "FoundNewReplicaSet";
constexpr std::string_view kRSUpdated = "ReplicaSetUpdated";
constexpr std::string_view kNewRSAvailable = "NewReplicaSetAvailable";
constexpr std::string_view kTimedOut = "ProgressDeadlineExceeded";
constexpr std::string_view kPaused = "DeploymentPaused";
constexpr std::string_view kResumed = "DeploymentResumed";

bool SkipCopyAnnotation(std::string_view key) {
  return key == "kubectl.kubernetes.io/last-applied-configuration" || key == kRevisionAnnotation ||
         key == kRevisionHistoryAnnotation || key == kDesiredReplicasAnnotation ||
         key == kMaxReplicasAnnotation || key == "deprecated.deployment.rollback.to";
}

int64_t IntAnnotation(const Labels& annotations, std::string_view key, int64_t if_absent) {
  auto it = annotations.find(key);
  if (it == annotations.end()) return if_absent;
  try {
    size_t used = 0;
    int64_t v = std::stoll(it->second, &used);
    return used == it->second.size() ? v : if_absent;
  } catch (...) {
    return if_absent;
  }
}

kube::DeploymentCondition* FindCondition(std::vector<kube::DeploymentCondition>& conditions,
                                         std::string_view type) {
  for (auto& c : conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

kube::DeploymentCondition NewCondition(std::string_view type, std::string_view status,
                                       std::string_view reason, std::string message,
                                       const std::string& now) {
  kube::DeploymentCondition c;
  c.type = std::string(type);
  c.status = std::string(status);
  c.reason = std::string(reason);
  c.message = std::move(message);
  c.last_update_time = now;
  c.last_transition_time = now;
  return c;
}

// kube's SetDeploymentCondition: nothing changes when status and reason are
// the same; lastTransitionTime is kept while the status is; the condition
// moves to the end.
void SetCondition(kube::DeploymentStatus& status, kube::DeploymentCondition condition) {
  kube::DeploymentCondition* current = FindCondition(status.conditions, condition.type);
  if (current != nullptr && current->status == condition.status &&
      current->reason == condition.reason) {
    return;
  }
  if (current != nullptr && current->status == condition.status) {
    condition.last_transition_time = current->last_transition_time;
  }
  std::erase_if(status.conditions,
                [&](const kube::DeploymentCondition& c) { return c.type == condition.type; });
  status.conditions.push_back(std::move(condition));
}

void RemoveCondition(kube::DeploymentStatus& status, std::string_view type) {
  std::erase_if(status.conditions,
                [&](const kube::DeploymentCondition& c) { return c.type == type; });
}

// One ReplicaSet as the pass sees it: its spec, and its pods in the cache.
struct RsView {
  std::shared_ptr<const kube::ReplicaSet> rs;
  int32_t spec = 0;
  int32_t live = 0;       // pods not terminating or finished
  int32_t available = 0;  // of those, available (minReadySeconds)
  int64_t revision = 0;

  // What the pass may count on: at most spec.replicas of its pods stay.
  int32_t AvailableKept() const { return std::min(available, spec); }
  int32_t Surge() const { return std::max(spec, live); }
};

}  // namespace

// ---------------------------------------------------------------- the pass

struct DeploymentReconciler::Pass {
  DeploymentReconciler& self;
  const Context& ctx;
  const std::string& key;
  std::shared_ptr<const kube::Deployment> d;
  kube::DeploymentStatus status;  // status being built (collision count, conditions)
  int32_t replicas = 0;
  int32_t max_surge = 0;
  int32_t max_unavailable = 0;
  std::vector<RsView> all;
  int new_index = -1;  // into `all`, or -1
  std::chrono::system_clock::time_point now;
  std::optional<std::chrono::milliseconds> requeue;

  bool rolling() const { return d->spec.strategy_type != kube::kRecreateDeploymentStrategy; }
  RsView* new_rs() { return new_index >= 0 ? &all[static_cast<size_t>(new_index)] : nullptr; }
  std::vector<RsView*> old_rs() {
    std::vector<RsView*> out;
    for (size_t i = 0; i < all.size(); ++i) {
      if (static_cast<int>(i) != new_index) out.push_back(&all[i]);
    }
    return out;
  }

  Status Load() {
    replicas = d->spec.replicas.value_or(1);
    status = d->status;
    if (rolling()) {
      auto surge =
          ScaledValue(d->spec.max_surge, replicas, true, 0, "spec.strategy.rollingUpdate.maxSurge");
      if (!surge.ok()) return surge.error();
      auto unavailable = ScaledValue(d->spec.max_unavailable, replicas, false, 0,
                                     "spec.strategy.rollingUpdate.maxUnavailable");
      if (!unavailable.ok()) return unavailable.error();
      max_surge = *surge;
      max_unavailable = *unavailable;
      // ResolveFenceposts: both rounding to 0 would block the rollout.
      if (max_surge == 0 && max_unavailable == 0) max_unavailable = 1;
      max_unavailable = std::min(max_unavailable, replicas);
    }
    const std::string& tmpl = d->spec.template_.json;
    for (auto& rs : ctx.caches->replicasets.ByIndex(kIndexOwner, d->meta.uid)) {
      if (kc::IsTerminating(rs->meta)) continue;
      RsView v;
      v.spec = rs->spec.replicas.value_or(1);
      v.revision = IntAnnotation(rs->meta.annotations, kRevisionAnnotation, 0);
      for (const auto& pod : ctx.caches->PodsOwnedBy(rs->meta.uid)) {
        if (!IsPodActive(*pod)) continue;
        ++v.live;
        if (IsPodAvailable(*pod, d->spec.min_ready_seconds, now, &requeue)) ++v.available;
      }
      v.rs = std::move(rs);
      all.push_back(std::move(v));
    }
    // Oldest first (kube's ReplicaSetsByCreationTimestamp), so the new
    // ReplicaSet is the oldest with the current template.
    std::sort(all.begin(), all.end(), [](const RsView& a, const RsView& b) {
      if (a.rs->meta.creation_timestamp != b.rs->meta.creation_timestamp) {
        return a.rs->meta.creation_timestamp < b.rs->meta.creation_timestamp;
      }
      return a.rs->meta.name < b.rs->meta.name;
    });
    for (size_t i = 0; i < all.size(); ++i) {
      if (TemplatesEqualIgnoring(all[i].rs->spec.template_.json, tmpl, kPodTemplateHashLabel)) {
        new_index = static_cast<int>(i);
        break;
      }
    }
    return Status::Ok();
  }

  int64_t MaxOldRevision() {
    int64_t max = 0;
    for (RsView* v : old_rs()) max = std::max(max, v->revision);
    return max;
  }

  // ---- writes

  // Sets spec.replicas and the desired/max-replicas annotations (kube's scaleReplicaSet).
  Status ScaleRs(RsView& v, int32_t to) {
    Labels annotations;
    {
      const std::string desired = std::to_string(replicas);
      const std::string max = std::to_string(replicas + max_surge);
      if (IntAnnotation(v.rs->meta.annotations, kDesiredReplicasAnnotation, -1) != replicas) {
        annotations[std::string(kDesiredReplicasAnnotation)] = desired;
      }
      if (IntAnnotation(v.rs->meta.annotations, kMaxReplicasAnnotation, -1) !=
          replicas + max_surge) {
        annotations[std::string(kMaxReplicasAnnotation)] = max;
      }
    }
    if (v.spec == to && annotations.empty()) return Status::Ok();
    auto patched = kc::Await(
        *ctx.client,
        ctx.client->Patch(kube::resources::kReplicaSets, v.rs->meta.namespace_, v.rs->meta.name,
                          kube::PatchType::kMerge, ReplicasPatch(v.rs->meta, to, annotations)));
    if (!patched.ok()) return patched.error();
    auto updated = kube::ReplicaSet::Decode(*patched);
    if (updated.ok()) self.RecordWrite(key, v.rs->meta.name, updated->meta.generation);
    if (v.spec != to) {
      const bool up = to > v.spec;
      RecordEvent(ctx, *d, kube::Deployment::kApiVersion, kube::Deployment::kKind,
                  kube::kEventTypeNormal, "ScalingReplicaSet",
                  std::string(up ? "Scaled up" : "Scaled down") + " replica set " +
                      v.rs->meta.name + " from " + std::to_string(v.spec) + " to " +
                      std::to_string(to));
    }
    v.spec = to;
    return Status::Ok();
  }

  // Annotations of an existing new ReplicaSet and the Deployment's revision
  // (kube's getNewReplicaSet for an existing one).
  Status SyncRevision() {
    RsView* n = new_rs();
    if (n == nullptr) return Status::Ok();
    const int64_t new_revision = MaxOldRevision() + 1;
    Labels annotations = n->rs->meta.annotations;
    const bool changed = NewRsAnnotations(annotations, new_revision, /*exists=*/true);
    const bool min_ready_changed = n->rs->spec.min_ready_seconds != d->spec.min_ready_seconds;
    if (changed || min_ready_changed) {
      json patch = {{"metadata", {{"resourceVersion", n->rs->meta.resource_version}}}};
      json a = json::object();
      for (const auto& [k, v] : annotations) a[k] = v;
      patch["metadata"]["annotations"] = std::move(a);
      patch["spec"] = {{"minReadySeconds", d->spec.min_ready_seconds}};
      auto patched = kc::Await(
          *ctx.client, ctx.client->Patch(kube::resources::kReplicaSets, n->rs->meta.namespace_,
                                         n->rs->meta.name, kube::PatchType::kMerge, patch.dump()));
      if (!patched.ok()) return patched.error();
      auto updated = kube::ReplicaSet::Decode(*patched);
      if (updated.ok()) {
        self.RecordWrite(key, n->rs->meta.name, updated->meta.generation);
        n->rs = std::make_shared<const kube::ReplicaSet>(std::move(updated).value());
        n->revision = IntAnnotation(n->rs->meta.annotations, kRevisionAnnotation, n->revision);
      }
    }
    if (Status s = SetDeploymentRevision(
            std::to_string(IntAnnotation(n->rs->meta.annotations, kRevisionAnnotation, 0)));
        !s.ok()) {
      return s;
    }
    if (HasProgressDeadline() && FindCondition(status.conditions, kProgressing) == nullptr) {
      SetCondition(status,
                   NewCondition(kProgressing, "True", kFoundNewRS,
                                "Found new replica set \"" + n->rs->meta.name + "\"", ctx.Now()));
    }
    return Status::Ok();
  }

  // kube's SetNewReplicaSetAnnotations.
  bool NewRsAnnotations(Labels& annotations, int64_t new_revision, bool exists) {
    bool changed = false;
    for (const auto& [k, v] : d->meta.annotations) {
      if (SkipCopyAnnotation(k)) continue;
      auto it = annotations.find(k);
      if (it != annotations.end() && it->second == v) continue;
      annotations[k] = v;
      changed = true;
    }
    auto old = annotations.find(kRevisionAnnotation);
    const bool had = old != annotations.end();
    const std::string old_text = had ? old->second : std::string();
    const int64_t old_revision = IntAnnotation(annotations, kRevisionAnnotation, 0);
    if (old_revision < new_revision) {
      annotations[std::string(kRevisionAnnotation)] = std::to_string(new_revision);
      changed = true;
      if (had) {
        // Rolled back to this ReplicaSet: its earlier revisions are kept.
        std::string history = annotations.count(kRevisionHistoryAnnotation)
                                  ? annotations[std::string(kRevisionHistoryAnnotation)]
                                  : std::string();
        std::vector<std::string> revisions;
        for (size_t pos = 0; !history.empty() && pos <= history.size();) {
          size_t comma = history.find(',', pos);
          if (comma == std::string::npos) comma = history.size();
          revisions.push_back(history.substr(pos, comma - pos));
          pos = comma + 1;
        }
        revisions.push_back(old_text);
        size_t total = 0;
        for (const auto& r : revisions) total += r.size() + 1;
        size_t start = 0;
        while (total - 1 > kMaxRevisionHistoryChars && start + 1 < revisions.size()) {
          total -= revisions[start].size() + 1;
          ++start;
        }
        std::string joined;
        for (size_t i = start; i < revisions.size(); ++i) {
          if (!joined.empty()) joined += ',';
          joined += revisions[i];
        }
        annotations[std::string(kRevisionHistoryAnnotation)] = joined;
      }
    }
    if (!exists) {
      annotations[std::string(kDesiredReplicasAnnotation)] = std::to_string(replicas);
      annotations[std::string(kMaxReplicasAnnotation)] = std::to_string(replicas + max_surge);
      changed = true;
    }
    return changed;
  }

  Status SetDeploymentRevision(const std::string& revision) {
    auto it = d->meta.annotations.find(kRevisionAnnotation);
    if (it != d->meta.annotations.end() && it->second == revision) return Status::Ok();
    // A /status write keeps metadata as it was: the annotation is a patch of its own.
    json patch = {{"metadata", {{"annotations", {{std::string(kRevisionAnnotation), revision}}}}}};
    auto patched = kc::Await(
        *ctx.client, ctx.client->Patch(kube::resources::kDeployments, d->meta.namespace_,
                                       d->meta.name, kube::PatchType::kMerge, patch.dump()));
    if (!patched.ok()) return patched.error();
    // The status write that follows needs the resourceVersion of this one.
    if (auto updated = kube::Deployment::Decode(*patched); updated.ok()) {
      kube::Deployment copy = *d;
      copy.meta = updated->meta;
      d = std::make_shared<const kube::Deployment>(std::move(copy));
    }
    return Status::Ok();
  }

  // The replicas a new ReplicaSet gets now (kube's NewRSNewReplicas).
  int32_t NewRsReplicas(int32_t new_spec) {
    if (!rolling()) return replicas;
    int32_t current = 0;
    for (const RsView& v : all) current += v.Surge();
    if (new_index < 0) current += new_spec;
    const int32_t max_total = replicas + max_surge;
    if (current >= max_total) return new_spec;
    const int32_t up = std::min(max_total - current, replicas - new_spec);
    return new_spec + std::max(up, 0);
  }

  // Creates the new ReplicaSet (kube's getNewReplicaSet with createIfNotExisted).
  Status CreateNewRs() {
    const std::string hash = TemplateHash(d->spec.template_.json, d->status.collision_count);
    const std::string name = d->meta.name + "-" + hash;
    const int64_t new_revision = MaxOldRevision() + 1;
    Labels annotations;
    NewRsAnnotations(annotations, new_revision, /*exists=*/false);
    const int32_t count = NewRsReplicas(0);

    json tmpl = json::parse(
        TemplateWithLabels(d->spec.template_.json, {{std::string(kPodTemplateHashLabel), hash}}));
    json selector =
        json::parse(d->spec.selector.has_value() ? kube::EncodeLabelSelector(*d->spec.selector)
                                                 : std::string("{}"));
    if (!selector.is_object()) selector = json::object();
    selector["matchLabels"][std::string(kPodTemplateHashLabel)] = hash;
    json labels = tmpl["metadata"]["labels"];
    json a = json::object();
    for (const auto& [k, v] : annotations) a[k] = v;
    json rs = {{"apiVersion", kube::ReplicaSet::kApiVersion},
               {"kind", kube::ReplicaSet::kKind},
               {"metadata",
                {{"name", name},
                 {"namespace", d->meta.namespace_},
                 {"labels", labels},
                 {"annotations", a},
                 {"ownerReferences", json::array({{{"apiVersion", kube::Deployment::kApiVersion},
                                                   {"kind", kube::Deployment::kKind},
                                                   {"name", d->meta.name},
                                                   {"uid", d->meta.uid},
                                                   {"controller", true},
                                                   {"blockOwnerDeletion", true}}})}}},
               {"spec",
                {{"replicas", count},
                 {"minReadySeconds", d->spec.min_ready_seconds},
                 {"selector", selector},
                 {"template", tmpl}}}};
    auto created = kc::Await(*ctx.client, ctx.client->Create(kube::resources::kReplicaSets,
                                                             d->meta.namespace_, rs.dump()));
    bool already_existed = false;
    std::shared_ptr<const kube::ReplicaSet> made;
    if (created.ok()) {
      auto decoded = kube::ReplicaSet::Decode(*created);
      if (!decoded.ok()) return decoded.error();
      made = std::make_shared<const kube::ReplicaSet>(std::move(decoded).value());
    } else if (created.error().code == ErrorCode::kAlreadyExists) {
      auto got = kc::Await(
          *ctx.client, ctx.client->Get(kube::resources::kReplicaSets, d->meta.namespace_, name));
      if (!got.ok()) return got.error();
      auto existing = kube::ReplicaSet::Decode(*got);
      if (!existing.ok()) return existing.error();
      if (kc::IsControlledBy(existing->meta, d->meta.uid) &&
          TemplatesEqualIgnoring(existing->spec.template_.json, d->spec.template_.json,
                                 kPodTemplateHashLabel)) {
        // Ours, from a pass whose write the cache has not shown yet.
        already_existed = true;
        made = std::make_shared<const kube::ReplicaSet>(std::move(existing).value());
      } else {
        // A hash collision: the next name comes from a bumped collisionCount.
        status.collision_count = status.collision_count.value_or(0) + 1;
        if (Status s = WriteStatus(); !s.ok()) return s;
        return MakeError(ErrorCode::kConflict, "replica set " + name +
                                                   " exists with another template; "
                                                   "collisionCount is now " +
                                                   std::to_string(*status.collision_count));
      }
    } else {
      if (HasProgressDeadline()) {
        SetCondition(status, NewCondition(kProgressing, "False", "ReplicaSetCreateError",
                                          "Failed to create new replica set \"" + name +
                                              "\": " + created.error().message,
                                          ctx.Now()));
        // Best effort: the create's error is the one to report.
        (void)WriteStatus();
      }
      RecordEvent(ctx, *d, kube::Deployment::kApiVersion, kube::Deployment::kKind,
                  kube::kEventTypeWarning, "FailedCreate",
                  "Failed to create new replica set \"" + name + "\": " + created.error().message);
      return created.error();
    }
    self.RecordWrite(key, made->meta.name, made->meta.generation);
    if (!already_existed && count > 0) {
      RecordEvent(ctx, *d, kube::Deployment::kApiVersion, kube::Deployment::kKind,
                  kube::kEventTypeNormal, "ScalingReplicaSet",
                  "Scaled up replica set " + name + " from 0 to " + std::to_string(count));
    }
    RsView v;
    v.rs = made;
    v.spec = made->spec.replicas.value_or(1);
    v.revision = IntAnnotation(made->meta.annotations, kRevisionAnnotation, new_revision);
    all.push_back(std::move(v));
    new_index = static_cast<int>(all.size()) - 1;
    if (Status s = SetDeploymentRevision(std::to_string(all.back().revision)); !s.ok()) return s;
    if (!already_existed && HasProgressDeadline()) {
      SetCondition(status, NewCondition(kProgressing, "True", kNewRSCreated,
                                        "Created new replica set \"" + name + "\"", ctx.Now()));
    }
    return Status::Ok();
  }

  bool HasProgressDeadline() const {
    return d->spec.progress_deadline_seconds.has_value() &&
           *d->spec.progress_deadline_seconds != std::numeric_limits<int32_t>::max();
  }

  // ---- rolling update

  // Scales the new ReplicaSet towards replicas within maxSurge; true if it wrote.
  Result<bool> ReconcileNewRs() {
    RsView* n = new_rs();
    if (n == nullptr || n->spec == replicas) return false;
    const int32_t to = n->spec > replicas ? replicas : NewRsReplicas(n->spec);
    if (to == n->spec) return false;
    if (Status s = ScaleRs(*n, to); !s.ok()) return s.error();
    return true;
  }

  // Scales old ReplicaSets down while availability stays above replicas -
  // maxUnavailable; true if it wrote.
  Result<bool> ReconcileOldRs() {
    std::vector<RsView*> old = old_rs();
    int32_t old_pods = 0;
    for (RsView* v : old) old_pods += v->spec;
    if (old_pods == 0) return false;
    int32_t all_pods = 0;
    for (const RsView& v : all) all_pods += v.spec;
    const int32_t min_available = replicas - max_unavailable;
    RsView* n = new_rs();
    const int32_t new_unavailable = n != nullptr ? n->spec - n->AvailableKept() : 0;
    const int32_t max_scaled_down = all_pods - min_available - new_unavailable;
    if (max_scaled_down <= 0) return false;
    std::sort(old.begin(), old.end(), [](const RsView* a, const RsView* b) {
      return a->rs->meta.creation_timestamp < b->rs->meta.creation_timestamp;
    });
    bool wrote = false;
    // Unhealthy old pods first: they do not count as available anyway.
    int32_t cleaned = 0;
    for (RsView* v : old) {
      if (cleaned >= max_scaled_down) break;
      if (v->spec == 0) continue;
      const int32_t unhealthy = v->spec - v->AvailableKept();
      if (unhealthy <= 0) continue;
      const int32_t down = std::min(max_scaled_down - cleaned, unhealthy);
      if (Status s = ScaleRs(*v, v->spec - down); !s.ok()) return s.error();
      cleaned += down;
      wrote = true;
    }
    // Then healthy ones, as far as availability allows.
    int32_t available = 0;
    for (const RsView& v : all) available += v.AvailableKept();
    if (available > min_available) {
      int32_t total_down = available - min_available;
      int32_t done = 0;
      for (RsView* v : old) {
        if (done >= total_down) break;
        if (v->spec == 0) continue;
        const int32_t down = std::min(v->spec, total_down - done);
        if (Status s = ScaleRs(*v, v->spec - down); !s.ok()) return s.error();
        done += down;
        wrote = true;
      }
    }
    return wrote;
  }

  // ---- scaling events (kube's isScalingEvent and scale)

  bool IsScalingEvent() {
    for (const RsView& v : all) {
      if (v.spec == 0) continue;
      const int64_t desired = IntAnnotation(v.rs->meta.annotations, kDesiredReplicasAnnotation, -1);
      if (desired >= 0 && desired != replicas) return true;
    }
    return false;
  }

  Status Scale() {
    std::vector<RsView*> active;
    for (RsView& v : all) {
      if (v.spec > 0) active.push_back(&v);
    }
    // One active (or none: the newest) ReplicaSet takes the whole count.
    RsView* target = nullptr;
    if (active.size() == 1) {
      target = active.front();
    } else if (active.empty() && !all.empty()) {
      target = new_rs() != nullptr ? new_rs() : &all.back();
    }
    if (target != nullptr) {
      return ScaleRs(*target, replicas);
    }
    RsView* n = new_rs();
    if (n != nullptr &&
        IntAnnotation(n->rs->meta.annotations, kDesiredReplicasAnnotation, -1) == replicas &&
        n->spec == replicas && n->AvailableKept() == replicas) {
      for (RsView* v : active) {
        if (v != n) {
          if (Status s = ScaleRs(*v, 0); !s.ok()) return s;
        }
      }
      return Status::Ok();
    }
    if (!rolling()) return Status::Ok();
    int32_t total = 0;
    for (RsView* v : active) total += v->spec;
    const int32_t allowed = replicas > 0 ? replicas + max_surge : 0;
    const int32_t to_add = allowed - total;
    if (to_add == 0) return Status::Ok();
    // Larger first; ties: newer first when adding, older first when removing.
    std::sort(active.begin(), active.end(), [&](const RsView* a, const RsView* b) {
      if (a->spec != b->spec) return a->spec > b->spec;
      if (to_add > 0) return a->rs->meta.creation_timestamp > b->rs->meta.creation_timestamp;
      return a->rs->meta.creation_timestamp < b->rs->meta.creation_timestamp;
    });
    std::map<const RsView*, int32_t> sizes;
    int32_t added = 0;
    for (RsView* v : active) {
      int32_t proportion = 0;
      if (v->spec != 0 && to_add != added) {
        int32_t fraction;
        if (replicas == 0) {
          fraction = -v->spec;
        } else {
          const int64_t annotated =
              IntAnnotation(v->rs->meta.annotations, kMaxReplicasAnnotation, d->status.replicas);
          const double size = annotated > 0
                                  ? static_cast<double>(v->spec) * (replicas + max_surge) /
                                        static_cast<double>(annotated)
                                  : static_cast<double>(v->spec);
          fraction = static_cast<int32_t>(std::lround(size)) - v->spec;
        }
        const int32_t left = to_add - added;
        proportion = to_add > 0 ? std::min(fraction, left) : std::max(fraction, left);
      }
      sizes[v] = v->spec + proportion;
      added += proportion;
    }
    for (size_t i = 0; i < active.size(); ++i) {
      RsView* v = active[i];
      int32_t size = sizes[v];
      if (i == 0) size = std::max(size + to_add - added, 0);
      if (Status s = ScaleRs(*v, size); !s.ok()) return s;
    }
    return Status::Ok();
  }

  // ---- cleanup

  Status Cleanup() {
    if (!d->spec.revision_history_limit.has_value()) return Status::Ok();
    std::vector<RsView*> old = old_rs();
    const int64_t diff = static_cast<int64_t>(old.size()) - *d->spec.revision_history_limit;
    if (diff <= 0) return Status::Ok();
    std::sort(old.begin(), old.end(),
              [](const RsView* a, const RsView* b) { return a->revision < b->revision; });
    for (int64_t i = 0; i < diff; ++i) {
      const RsView* v = old[static_cast<size_t>(i)];
      if (v->rs->status.replicas != 0 || v->spec != 0 ||
          v->rs->meta.generation > v->rs->status.observed_generation) {
        continue;
      }
      kube::DeleteOptions options;
      options.precondition_uid = v->rs->meta.uid;
      Status deleted = kc::Await(
          *ctx.client, ctx.client->Delete(kube::resources::kReplicaSets, v->rs->meta.namespace_,
                                          v->rs->meta.name, options));
      if (!deleted.ok() && deleted.error().code != ErrorCode::kNotFound) return deleted;
    }
    return Status::Ok();
  }

  // ---- status

  // kube's calculateStatus: counts from the ReplicaSets' statuses.
  void CalculateStatus() {
    int32_t spec_total = 0;
    status.replicas = 0;
    status.ready_replicas = 0;
    status.available_replicas = 0;
    status.updated_replicas = 0;
    for (const RsView& v : all) {
      spec_total += v.spec;
      status.replicas += v.rs->status.replicas;
      status.ready_replicas += v.rs->status.ready_replicas;
      status.available_replicas += v.rs->status.available_replicas;
    }
    if (RsView* n = new_rs()) status.updated_replicas = n->rs->status.replicas;
    status.unavailable_replicas = std::max(spec_total - status.available_replicas, 0);
    status.observed_generation = d->meta.generation;
    const std::string now_text = ctx.Now();
    if (status.available_replicas >= replicas - max_unavailable) {
      SetCondition(status, NewCondition(kAvailable, "True", "MinimumReplicasAvailable",
                                        "Deployment has minimum availability.", now_text));
    } else {
      SetCondition(status,
                   NewCondition(kAvailable, "False", "MinimumReplicasUnavailable",
                                "Deployment does not have minimum availability.", now_text));
    }
  }

  bool Complete() const {
    return status.updated_replicas == replicas && status.replicas == replicas &&
           status.available_replicas == replicas &&
           status.observed_generation >= d->meta.generation;
  }

  // kube's syncRolloutStatus: status plus the Progressing condition.
  Status SyncRolloutStatus() {
    CalculateStatus();
    if (!HasProgressDeadline()) RemoveCondition(status, kProgressing);
    kube::DeploymentCondition* current = FindCondition(status.conditions, kProgressing);
    const bool complete_before = status.replicas == status.updated_replicas && current != nullptr &&
                                 current->reason == kNewRSAvailable;
    RsView* n = new_rs();
    const std::string now_text = ctx.Now();
    if (HasProgressDeadline() && !complete_before) {
      const int32_t old_before = d->status.replicas - d->status.updated_replicas;
      const int32_t old_now = status.replicas - status.updated_replicas;
      if (Complete()) {
        SetCondition(status, NewCondition(kProgressing, "True", kNewRSAvailable,
                                          n != nullptr ? "ReplicaSet \"" + n->rs->meta.name +
                                                             "\" has successfully progressed."
                                                       : "Deployment \"" + d->meta.name +
                                                             "\" has successfully progressed.",
                                          now_text));
      } else if (status.updated_replicas > d->status.updated_replicas || old_now < old_before ||
                 status.ready_replicas > d->status.ready_replicas ||
                 status.available_replicas > d->status.available_replicas) {
        kube::DeploymentCondition c =
            NewCondition(kProgressing, "True", kRSUpdated,
                         n != nullptr ? "ReplicaSet \"" + n->rs->meta.name + "\" is progressing."
                                      : "Deployment \"" + d->meta.name + "\" is progressing.",
                         now_text);
        // A progressing deployment refreshes lastUpdateTime every time.
        if (current != nullptr && current->status == "True") {
          c.last_transition_time = current->last_transition_time;
        }
        RemoveCondition(status, kProgressing);
        status.conditions.push_back(std::move(c));
      } else if (TimedOut()) {
        SetCondition(
            status,
            NewCondition(kProgressing, "False", kTimedOut,
                         n != nullptr
                             ? "ReplicaSet \"" + n->rs->meta.name + "\" has timed out progressing."
                             : "Deployment \"" + d->meta.name + "\" has timed out progressing.",
                         now_text));
      }
    }
    // ReplicaSet failures surface as the Deployment's ReplicaFailure condition.
    const kube::Condition* failure = nullptr;
    for (const RsView& v : all) {
      if (const auto* c = kube::FindCondition(v.rs->status.conditions, "ReplicaFailure");
          c != nullptr && c->status == "True") {
        failure = c;
      }
    }
    if (failure != nullptr) {
      SetCondition(status, NewCondition("ReplicaFailure", "True", failure->reason, failure->message,
                                        now_text));
    } else {
      RemoveCondition(status, "ReplicaFailure");
    }
    RequeueIfStuck();
    return WriteStatus();
  }

  bool TimedOut() {
    if (!HasProgressDeadline()) return false;
    kube::DeploymentCondition* c = FindCondition(status.conditions, kProgressing);
    if (c == nullptr || c->reason == kNewRSAvailable) return false;
    if (c->reason == kTimedOut) return true;
    auto from = kc::ParseRfc3339(c->last_update_time);
    if (!from) return false;
    return *from + std::chrono::seconds(*d->spec.progress_deadline_seconds) < now;
  }

  // A rollout that stops progressing is looked at again when its deadline passes.
  void RequeueIfStuck() {
    if (!HasProgressDeadline() || Complete()) return;
    kube::DeploymentCondition* c = FindCondition(status.conditions, kProgressing);
    if (c == nullptr || c->reason == kTimedOut || c->reason == kNewRSAvailable) return;
    auto from = kc::ParseRfc3339(c->last_update_time);
    if (!from) return;
    auto due = *from + std::chrono::seconds(*d->spec.progress_deadline_seconds) - now;
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(due) + std::chrono::seconds(1);
    if (ms < std::chrono::milliseconds(0)) ms = std::chrono::milliseconds(0);
    if (!requeue || ms < *requeue) requeue = ms;
  }

  Status WriteStatus() {
    if (status == d->status) return Status::Ok();
    kube::Deployment updated = *d;
    updated.status = status;
    auto written = kc::Await(
        *ctx.client, ctx.client->UpdateStatus(kube::resources::kDeployments, d->meta.namespace_,
                                              d->meta.name, kc::StatusBody(updated)));
    if (!written.ok()) return written.error();
    return Status::Ok();
  }

  // kube's checkPausedConditions.
  void PausedConditions() {
    if (!HasProgressDeadline()) return;
    kube::DeploymentCondition* c = FindCondition(status.conditions, kProgressing);
    if (c != nullptr && c->reason == kTimedOut) return;
    const bool paused_cond = c != nullptr && c->reason == kPaused;
    if (d->spec.paused && !paused_cond) {
      SetCondition(status, NewCondition(kProgressing, "Unknown", kPaused, "Deployment is paused",
                                        ctx.Now()));
    } else if (!d->spec.paused && paused_cond) {
      SetCondition(status, NewCondition(kProgressing, "Unknown", kResumed, "Deployment is resumed",
                                        ctx.Now()));
    }
  }

  // ---- the strategies

  // Scaling and status only (paused, or a scaling event).
  Status Sync() {
    if (Status s = SyncRevision(); !s.ok()) return s;
    if (Status s = Scale(); !s.ok()) return s;
    if (d->spec.paused) {
      if (Status s = Cleanup(); !s.ok()) return s;
    }
    CalculateStatus();
    return WriteStatus();
  }

  Status RollingUpdate() {
    if (new_rs() == nullptr) {
      if (Status s = CreateNewRs(); !s.ok()) return s;
    } else if (Status s = SyncRevision(); !s.ok()) {
      return s;
    }
    auto up = ReconcileNewRs();
    if (!up.ok()) return up.error();
    if (*up) return SyncRolloutStatus();
    auto down = ReconcileOldRs();
    if (!down.ok()) return down.error();
    if (*down) return SyncRolloutStatus();
    CalculateStatus();
    if (Complete()) {
      if (Status s = Cleanup(); !s.ok()) return s;
    }
    return SyncRolloutStatus();
  }

  Status Recreate() {
    if (Status s = SyncRevision(); !s.ok()) return s;
    bool scaled_down = false;
    for (RsView* v : old_rs()) {
      if (v->spec == 0) continue;
      if (Status s = ScaleRs(*v, 0); !s.ok()) return s;
      scaled_down = true;
    }
    if (scaled_down) return SyncRolloutStatus();
    // No new pods while any old one is left (terminating ones included).
    for (RsView* v : old_rs()) {
      if (v->rs->status.replicas > 0) return SyncRolloutStatus();
      for (const auto& pod : ctx.caches->PodsOwnedBy(v->rs->meta.uid)) {
        if (!kc::IsPodTerminal(*pod)) return SyncRolloutStatus();
      }
    }
    if (new_rs() == nullptr) {
      if (Status s = CreateNewRs(); !s.ok()) return s;
    }
    if (RsView* n = new_rs(); n != nullptr && n->spec != replicas) {
      if (Status s = ScaleRs(*n, replicas); !s.ok()) return s;
    }
    CalculateStatus();
    if (Complete()) {
      if (Status s = Cleanup(); !s.ok()) return s;
    }
    return SyncRolloutStatus();
  }
};

// ---------------------------------------------------------------- reconciler

DeploymentReconciler::DeploymentReconciler(const Context& ctx) : ctx_(ctx) {}

void DeploymentReconciler::RecordWrite(const std::string& key, const std::string& rs_name,
                                       int64_t generation) {
  std::lock_guard<std::mutex> lock(mu_);
  written_[key][rs_name] = Written{generation, std::chrono::steady_clock::now()};
}

bool DeploymentReconciler::CacheCaughtUp(const std::string& key, const std::string& ns) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = written_.find(key);
  if (it == written_.end()) return true;
  const auto now = std::chrono::steady_clock::now();
  bool caught_up = true;
  for (auto w = it->second.begin(); w != it->second.end();) {
    auto rs = ctx_.caches->replicasets.Get(ns, w->first);
    const bool seen = rs != nullptr && rs->meta.generation >= w->second.generation;
    if (seen || now - w->second.at > kWriteVisibleWithin) {
      w = it->second.erase(w);
    } else {
      caught_up = false;
      ++w;
    }
  }
  if (it->second.empty()) written_.erase(it);
  return caught_up;
}

ReconcileResult DeploymentReconciler::Reconcile(const std::string& key) {
  auto d = ctx_.caches->deployments.Get(key);
  if (d == nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    written_.erase(key);
    return ReconcileResult::Done();
  }
  if (kc::IsTerminating(d->meta)) return ReconcileResult::Done();
  // Acting on a cache that does not show this controller's last writes could
  // scale twice; the ReplicaSet events that bring them requeue the key.
  if (!CacheCaughtUp(key, d->meta.namespace_)) return ReconcileResult::Done();

  Pass pass{*this, ctx_, key, d};
  pass.now = ctx_.clock->WallNow();
  Status s = pass.Load();
  if (s.ok()) {
    pass.PausedConditions();
    if (d->spec.paused || pass.IsScalingEvent()) {
      s = pass.Sync();
    } else if (pass.rolling()) {
      s = pass.RollingUpdate();
    } else {
      s = pass.Recreate();
    }
  }
  if (!s.ok()) {
    if (s.error().code == ErrorCode::kNotFound) return ReconcileResult::Done();
    return ReconcileResult::Failed(s.error());
  }
  if (pass.requeue) return ReconcileResult::RequeueAfter(*pass.requeue);
  return ReconcileResult::Done();
}

}  // namespace copse::apiserver::controllers
