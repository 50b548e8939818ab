#include "apiserver/controllers/daemonset.h"

#include <algorithm>
#include <map>
#include <set>

#include "kube/controller/objects.h"
#include "kube/controller/sync.h"

namespace copse::apiserver::controllers {

namespace kc = kube::controller;
using kc::ReconcileResult;

namespace {

// The tolerations kube's daemon controller adds to every daemon pod.
std::vector<kube::Toleration> DaemonTolerations() {
  auto exists = [](std::string key, std::string effect) {
    kube::Toleration t;
    t.key = std::move(key);
    t.op = "Exists";
    t.effect = std::move(effect);
    return t;
  };
  return {exists("node.kubernetes.io/not-ready", "NoExecute"),
          exists("node.kubernetes.io/unreachable", "NoExecute"),
          exists("node.kubernetes.io/disk-pressure", "NoSchedule"),
          exists("node.kubernetes.io/memory-pressure", "NoSchedule"),
          exists("node.kubernetes.io/pid-pressure", "NoSchedule"),
          exists("node.kubernetes.io/unschedulable", "NoSchedule")};
}

// The node a daemon pod is for: its nodeName, else the metadata.name its
// required node affinity pins it to.
std::string NodeOf(const kube::Pod& pod) {
  if (!pod.spec.node_name.empty()) return pod.spec.node_name;
  if (!pod.spec.affinity || !pod.spec.affinity->node_affinity ||
      !pod.spec.affinity->node_affinity->required) {
    return {};
  }
  for (const auto& term : pod.spec.affinity->node_affinity->required->terms) {
    for (const auto& req : term.match_fields) {
      if (req.key == "metadata.name" && req.op == SelectorOp::kIn && req.values.size() == 1) {
        return req.values.front();
      }
    }
  }
  return {};
}

}  // namespace

bool NodeShouldRunDaemonPod(const kube::PodSpec& spec, const kube::Node& node) {
  if (!spec.node_name.empty() && spec.node_name != node.meta.name) return false;
  for (const auto& [k, v] : spec.node_selector) {
    auto it = node.meta.labels.find(k);
    if (it == node.meta.labels.end() || it->second != v) return false;
  }
  if (spec.affinity && spec.affinity->node_affinity && spec.affinity->node_affinity->required &&
      !spec.affinity->node_affinity->required->Matches(node.meta.labels, node.meta.name)) {
    return false;
  }
  static const std::vector<kube::Toleration> kAdded = DaemonTolerations();
  for (const auto& taint : node.spec.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    bool tolerated = false;
    for (const auto& t : spec.tolerations) tolerated = tolerated || t.ToleratesTaint(taint);
    for (const auto& t : kAdded) tolerated = tolerated || t.ToleratesTaint(taint);
    if (!tolerated) return false;
  }
  return true;
}

DaemonSetReconciler::DaemonSetReconciler(const Context& ctx)
    : ctx_(ctx), expectations_(ctx.clock) {}

ReconcileResult DaemonSetReconciler::Reconcile(const std::string& key) {
  auto ds = ctx_.caches->daemonsets.Get(key);
  if (ds == nullptr) {
    expectations_.Forget(key);
    return ReconcileResult::Done();
  }
  const auto now = ctx_.clock->WallNow();
  const std::string hash = TemplateHash(ds->spec.template_.json, ds->status.collision_count);
  auto template_pod = kube::Pod::Decode(ds->spec.template_.json.empty() ? std::string("{}")
                                                                        : ds->spec.template_.json);
  if (!template_pod.ok()) {
    return ReconcileResult::Failed(
        MakeError(ErrorCode::kInvalid,
                  "daemonset " + key + ": spec.template: " + template_pod.error().message));
  }

  // Live daemon pods per node; pods to delete outright.
  std::map<std::string, std::vector<PodPtr>> by_node;
  std::vector<PodPtr> doomed;
  for (auto& pod : ctx_.caches->PodsOwnedBy(ds->meta.uid)) {
    if (kc::IsTerminating(pod->meta)) continue;
    if (pod->status.phase == kube::kPodFailed) {
      doomed.push_back(pod);
      continue;
    }
    if (pod->status.phase == kube::kPodSucceeded) continue;
    by_node[NodeOf(*pod)].push_back(pod);
  }
  struct NodeState {
    std::string name;
    std::vector<PodPtr> pods;  // live, oldest first
  };
  std::vector<NodeState> should_run;
  std::set<std::string> known_nodes;
  for (const auto& node : ctx_.caches->nodes.List()) {
    known_nodes.insert(node->meta.name);
    auto it = by_node.find(node->meta.name);
    std::vector<PodPtr> pods = it != by_node.end() ? it->second : std::vector<PodPtr>{};
    std::sort(pods.begin(), pods.end(), [](const PodPtr& a, const PodPtr& b) {
      return a->meta.creation_timestamp < b->meta.creation_timestamp;
    });
    if (NodeShouldRunDaemonPod(template_pod->spec, *node)) {
      should_run.push_back({node->meta.name, std::move(pods)});
    } else {
      for (auto& pod : pods) doomed.push_back(pod);
    }
  }
  for (const auto& [node, pods] : by_node) {
    if (known_nodes.count(node) == 0) doomed.insert(doomed.end(), pods.begin(), pods.end());
  }
  std::sort(should_run.begin(), should_run.end(),
            [](const NodeState& a, const NodeState& b) { return a.name < b.name; });
  const int32_t desired = static_cast<int32_t>(should_run.size());
  std::optional<std::chrono::milliseconds> available_in;
  auto available = [&](const kube::Pod& pod) {
    return IsPodAvailable(pod, ds->spec.min_ready_seconds, now, &available_in);
  };

  Status first_error;
  auto note = [&](const Status& s) {
    if (!s.ok() && first_error.ok()) first_error = s;
  };
  if (expectations_.Satisfied(key) && !kc::IsTerminating(ds->meta)) {
    std::vector<std::string> create_on;
    const bool rolling = ds->spec.update_strategy_type != kube::kOnDeleteStrategy;
    int32_t max_unavailable = 1;
    int32_t max_surge = 0;
    if (rolling) {
      auto u = ScaledValue(ds->spec.max_unavailable, desired, true, 1,
                           "spec.updateStrategy.rollingUpdate.maxUnavailable");
      auto s = ScaledValue(ds->spec.max_surge, desired, true, 0,
                           "spec.updateStrategy.rollingUpdate.maxSurge");
      if (!u.ok()) return ReconcileResult::Failed(u.error());
      if (!s.ok()) return ReconcileResult::Failed(s.error());
      max_unavailable = *u;
      max_surge = *s;
      if (max_unavailable == 0 && max_surge == 0) max_unavailable = 1;
    }
    int32_t unavailable = 0;
    for (const auto& n : should_run) {
      bool any_available = false;
      for (const auto& pod : n.pods) any_available = any_available || available(*pod);
      if (!any_available) ++unavailable;
    }
    int32_t surging = 0;
    for (const auto& n : should_run) {
      bool has_new = false;
      bool has_old = false;
      for (const auto& pod : n.pods) (PodRevision(*pod) == hash ? has_new : has_old) = true;
      if (has_new && has_old) ++surging;
    }
    for (auto& n : should_run) {
      if (n.pods.empty()) {
        create_on.push_back(n.name);
        continue;
      }
      std::vector<PodPtr> old_pods;
      std::vector<PodPtr> new_pods;
      for (const auto& pod : n.pods)
        (PodRevision(*pod) == hash ? new_pods : old_pods).push_back(pod);
      if (!rolling || old_pods.empty()) {
        // Extra pods on one node: the oldest stays.
        for (size_t i = 1; i < n.pods.size(); ++i) doomed.push_back(n.pods[i]);
        continue;
      }
      for (size_t i = 1; i < new_pods.size(); ++i) doomed.push_back(new_pods[i]);
      bool old_available = false;
      for (const auto& pod : old_pods) old_available = old_available || available(*pod);
      if (!new_pods.empty()) {
        // Surge in progress on this node: the old pods go once the new one is available.
        if (available(*new_pods.front()))
          doomed.insert(doomed.end(), old_pods.begin(), old_pods.end());
        continue;
      }
      if (!old_available) {
        // Not serving anyway: replace at once.
        doomed.insert(doomed.end(), old_pods.begin(), old_pods.end());
        continue;
      }
      if (max_surge > 0) {
        if (surging < max_surge) {
          create_on.push_back(n.name);
          ++surging;
        }
      } else if (unavailable < max_unavailable) {
        doomed.insert(doomed.end(), old_pods.begin(), old_pods.end());
        ++unavailable;
      }
    }
    if (!doomed.empty()) {
      note(DeletePods(ctx_, doomed, expectations_, key));
      RecordEvent(ctx_, *ds, kube::DaemonSet::kApiVersion, kube::DaemonSet::kKind,
                  kube::kEventTypeNormal, "SuccessfulDelete",
                  "Deleted " + std::to_string(doomed.size()) + " daemon pod(s)");
    }
    if (!create_on.empty()) {
      std::vector<std::string> bodies;
      PodOptions options;
      options.generate_name = ds->meta.name + "-";
      options.extra_labels["controller-revision-hash"] = hash;
      options.extra_labels[std::string(kPodTemplateGenerationLabel)] =
          std::to_string(ds->meta.generation);
      options.extra_tolerations = DaemonTolerations();
      for (const auto& node : create_on) {
        options.pin_to_node = node;
        auto body = BuildPod(ds->spec.template_, *ds, kube::DaemonSet::kApiVersion,
                             kube::DaemonSet::kKind, options);
        if (!body.ok()) {
          note(body.error());
          break;
        }
        bodies.push_back(std::move(body).value());
      }
      CreateOutcome outcome =
          CreatePods(ctx_, ds->meta.namespace_, std::move(bodies), expectations_, key);
      note(outcome.error);
      if (outcome.created > 0) {
        RecordEvent(ctx_, *ds, kube::DaemonSet::kApiVersion, kube::DaemonSet::kKind,
                    kube::kEventTypeNormal, "SuccessfulCreate",
                    "Created " + std::to_string(outcome.created) + " daemon pod(s)");
      }
      if (!outcome.error.ok()) {
        RecordEvent(ctx_, *ds, kube::DaemonSet::kApiVersion, kube::DaemonSet::kKind,
                    kube::kEventTypeWarning, "FailedCreate",
                    "Error creating: " + outcome.error.error().message);
      }
    }
  }

  // Status, from the pods as the cache shows them.
  kube::DaemonSetStatus status = ds->status;
  status.desired_number_scheduled = desired;
  status.current_number_scheduled = 0;
  status.number_ready = 0;
  status.number_available = 0;
  status.updated_number_scheduled = 0;
  for (const auto& n : should_run) {
    if (n.pods.empty()) continue;
    ++status.current_number_scheduled;
    bool ready = false;
    bool avail = false;
    bool updated = false;
    for (const auto& pod : n.pods) {
      ready = ready || IsPodReady(*pod);
      avail = avail || available(*pod);
      updated = updated || PodRevision(*pod) == hash;
    }
    status.number_ready += ready;
    status.number_available += avail;
    status.updated_number_scheduled += updated;
  }
  status.number_misscheduled = 0;
  for (const auto& entry : by_node) {
    // Not a structured binding: clang 14 (the sanitizer builds) cannot
    // capture one in a lambda.
    const auto& node = entry.first;
    const bool wanted = std::any_of(should_run.begin(), should_run.end(),
                                    [&](const NodeState& n) { return n.name == node; });
    if (!wanted && !entry.second.empty()) ++status.number_misscheduled;
  }
  status.number_unavailable = desired - status.number_available;
  status.observed_generation = ds->meta.generation;
  if (!(status == ds->status)) {
    kube::DaemonSet updated = *ds;
    updated.status = std::move(status);
    auto written = kc::Await(
        *ctx_.client, ctx_.client->UpdateStatus(kube::resources::kDaemonSets, ds->meta.namespace_,
                                                ds->meta.name, kc::StatusBody(updated)));
    if (!written.ok() && written.error().code != ErrorCode::kNotFound) {
      return ReconcileResult::Failed(written.error());
    }
  }
  if (!first_error.ok()) return ReconcileResult::Failed(first_error.error());
  if (available_in) return ReconcileResult::RequeueAfter(*available_in);
  return ReconcileResult::Done();
}

}  // namespace copse::apiserver::controllers
