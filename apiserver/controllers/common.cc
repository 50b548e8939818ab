#include "apiserver/controllers/common.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/log.h"
#include "kube/controller/informers.h"
#include "kube/controller/objects.h"
#include "kube/controller/sync.h"
#include "kube/event.h"

namespace copse::apiserver::controllers {

using nlohmann::json;
namespace kc = kube::controller;

namespace {

kube::InformerOptions Options(const kube::ResourceRef& resource, const std::string& ns,
                              bool owner_index) {
  kube::Indexers indexers;
  if (owner_index) indexers.emplace(std::string(kIndexOwner), kc::ControllerUidIndex());
  kube::InformerOptions options = kc::MakeInformerOptions(resource, ns, std::move(indexers));
  return options;
}

// The controllers never re-encode what they read: their caches drop the JSON.
template <typename T>
kube::InformerOptions Typed(kube::InformerOptions options) {
  options.decoder = kube::TypedDecoderWithoutRaw<T>();
  return options;
}

json ParseObject(const std::string& text) {
  if (text.empty()) return json::object();
  json out = json::parse(text, nullptr, false);
  if (!out.is_object()) return json::object();
  return out;
}

// kube's rand.SafeEncodeString alphabet (no vowels, no look-alikes).
std::string SafeEncode(std::string_view s) {
  static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  std::string out(s);
  for (auto& c : out) {
    c = kAlphabet[static_cast<unsigned char>(c) % (sizeof(kAlphabet) - 1)];
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------- Caches

namespace {

// The active pods of a PodGroup, by "namespace/podgroup".
kube::IndexFunction PodGroupIndex() {
  return [](const kube::KubeObject& object) -> std::vector<std::string> {
    const auto* pod = dynamic_cast<const kube::Pod*>(&object);
    if (pod == nullptr || !pod->spec.pod_group_name.has_value() || kc::IsPodTerminal(*pod)) {
      return {};
    }
    return {kc::Key(pod->meta.namespace_, *pod->spec.pod_group_name)};
  };
}

kube::InformerOptions PodInformerOptions(const std::string& ns) {
  kube::InformerOptions options = Typed<kube::Pod>(Options(kube::resources::kPods, ns, true));
  options.indexers.emplace(std::string(kIndexPodGroup), PodGroupIndex());
  return options;
}

json RawObject(const kube::KubeObject& object) {
  json out = json::parse(object.raw, nullptr, false);
  return out.is_object() ? out : json::object();
}

}  // namespace

std::string PodGroupWorkloadRef(const json& pod_group) {
  const json* spec = pod_group.contains("spec") ? &pod_group["spec"] : nullptr;
  if (spec == nullptr || !spec->is_object()) return {};
  if (const json* ref = spec->contains("workloadRef") ? &(*spec)["workloadRef"] : nullptr;
      ref != nullptr && ref->is_object()) {
    return ref->value("workloadName", "");
  }
  const json* old_ref =
      spec->contains("podGroupTemplateRef") ? &(*spec)["podGroupTemplateRef"] : nullptr;
  if (old_ref != nullptr && old_ref->is_object() && (*old_ref)["workload"].is_object()) {
    return (*old_ref)["workload"].value("workloadName", "");
  }
  return {};
}

namespace {

// A Workload's "namespace/job" when its spec.controllerRef names a Job.
kube::IndexFunction ControllerJobIndex() {
  return [](const kube::KubeObject& object) -> std::vector<std::string> {
    const json obj = RawObject(object);
    const json ref =
        obj.contains("spec") && obj["spec"].is_object() && obj["spec"].contains("controllerRef")
            ? obj["spec"]["controllerRef"]
            : json();
    if (!ref.is_object() || ref.value("apiGroup", "") != "batch" ||
        ref.value("kind", "") != "Job" || ref.value("name", "").empty()) {
      return {};
    }
    return {kc::Key(object.meta.namespace_, ref.value("name", ""))};
  };
}

kube::IndexFunction WorkloadIndex() {
  return [](const kube::KubeObject& object) -> std::vector<std::string> {
    const std::string workload = PodGroupWorkloadRef(RawObject(object));
    if (workload.empty()) return {};
    return {kc::Key(object.meta.namespace_, workload)};
  };
}

}  // namespace

Caches::Caches(std::shared_ptr<kube::Client> client, const std::string& ns)
    : pods(client, PodInformerOptions(ns)),
      replicasets(client,
                  Typed<kube::ReplicaSet>(Options(kube::resources::kReplicaSets, ns, true))),
      deployments(client,
                  Typed<kube::Deployment>(Options(kube::resources::kDeployments, ns, false))),
      jobs(client, Typed<kube::Job>(Options(kube::resources::kJobs, ns, false))),
      statefulsets(client,
                   Typed<kube::StatefulSet>(Options(kube::resources::kStatefulSets, ns, false))),
      daemonsets(client, Typed<kube::DaemonSet>(Options(kube::resources::kDaemonSets, ns, false))),
      nodes(client, Typed<kube::Node>(Options(kube::resources::kNodes, "", false))),
      client_(std::move(client)),
      namespace_(ns) {}

Caches::~Caches() { Stop(); }

void Caches::WatchSchedulingApi(const kube::ResourceRef& workloads_resource,
                                const kube::ResourceRef& podgroups_resource) {
  workloads_ref = workloads_resource;
  podgroups_ref = podgroups_resource;
  kube::Indexers by_job;
  by_job.emplace(std::string(kIndexControllerJob), ControllerJobIndex());
  workloads = std::make_unique<kube::Informer>(
      client_, kc::MakeInformerOptions(workloads_resource, namespace_, std::move(by_job)));
  kube::Indexers by_workload;
  by_workload.emplace(std::string(kIndexWorkload), WorkloadIndex());
  podgroups = std::make_unique<kube::Informer>(
      client_, kc::MakeInformerOptions(podgroups_resource, namespace_, std::move(by_workload)));
}

void Caches::Start() {
  pods.Start();
  replicasets.Start();
  deployments.Start();
  jobs.Start();
  statefulsets.Start();
  daemonsets.Start();
  nodes.Start();
  if (workloads) workloads->Start();
  if (podgroups) podgroups->Start();
}

void Caches::Stop() {
  pods.Stop();
  replicasets.Stop();
  deployments.Stop();
  jobs.Stop();
  statefulsets.Stop();
  daemonsets.Stop();
  nodes.Stop();
  if (workloads) workloads->Stop();
  if (podgroups) podgroups->Stop();
}

std::string Caches::WaitForSync(std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const kube::Informer* failed = kc::WaitForSync(
      {&pods.informer(), &replicasets.informer(), &deployments.informer(), &jobs.informer(),
       &statefulsets.informer(), &daemonsets.informer(), &nodes.informer()},
      timeout);
  if (failed == &pods.informer()) return "pods";
  if (failed == &replicasets.informer()) return "replicasets.apps";
  if (failed == &deployments.informer()) return "deployments.apps";
  if (failed == &jobs.informer()) return "jobs.batch";
  if (failed == &statefulsets.informer()) return "statefulsets.apps";
  if (failed == &daemonsets.informer()) return "daemonsets.apps";
  if (failed == &nodes.informer()) return "nodes";
  // The Workload API's informers, within the same deadline.
  const std::pair<const kube::Informer*, const char*> scheduling[] = {
      {workloads.get(), "workloads.scheduling.k8s.io"},
      {podgroups.get(), "podgroups.scheduling.k8s.io"}};
  for (const auto& [informer, name] : scheduling) {
    if (informer == nullptr) continue;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (!informer->WaitForSync(std::max(left, std::chrono::milliseconds(0)))) return name;
  }
  return {};
}

bool Caches::HasSynced() const {
  return pods.HasSynced() && replicasets.HasSynced() && deployments.HasSynced() &&
         jobs.HasSynced() && statefulsets.HasSynced() && daemonsets.HasSynced() &&
         nodes.HasSynced() && (!workloads || workloads->HasSynced()) &&
         (!podgroups || podgroups->HasSynced());
}

std::vector<PodPtr> Caches::PodsOwnedBy(std::string_view owner_uid) const {
  return pods.ByIndex(kIndexOwner, owner_uid);
}

// ---------------------------------------------------------------- pods

Result<std::string> BuildPod(const kube::PodTemplateSpec& tmpl, const kube::KubeObject& owner,
                             std::string_view owner_api_version, std::string_view owner_kind,
                             const PodOptions& options) {
  json t = json::parse(tmpl.json.empty() ? std::string("{}") : tmpl.json, nullptr, false);
  if (!t.is_object()) return MakeError(ErrorCode::kInvalid, "spec.template: expected an object");
  json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}};
  json meta = json::object();
  const json& tmeta =
      t.contains("metadata") && t["metadata"].is_object() ? t["metadata"] : json::object();
  json labels =
      tmeta.contains("labels") && tmeta["labels"].is_object() ? tmeta["labels"] : json::object();
  for (const auto& [k, v] : options.extra_labels) labels[k] = v;
  json annotations = tmeta.contains("annotations") && tmeta["annotations"].is_object()
                         ? tmeta["annotations"]
                         : json::object();
  for (const auto& [k, v] : options.extra_annotations) annotations[k] = v;
  if (!labels.empty()) meta["labels"] = std::move(labels);
  if (!annotations.empty()) meta["annotations"] = std::move(annotations);
  if (tmeta.contains("finalizers") && tmeta["finalizers"].is_array()) {
    meta["finalizers"] = tmeta["finalizers"];
  }
  meta["namespace"] = owner.meta.namespace_;
  if (!options.name.empty()) {
    meta["name"] = options.name;
  } else {
    meta["generateName"] = options.generate_name;
  }
  meta["ownerReferences"] = json::array({{{"apiVersion", owner_api_version},
                                          {"kind", owner_kind},
                                          {"name", owner.meta.name},
                                          {"uid", owner.meta.uid},
                                          {"controller", true},
                                          {"blockOwnerDeletion", true}}});
  for (const kube::OwnerReference& ref : options.extra_owners) {
    json r = {
        {"apiVersion", ref.api_version}, {"kind", ref.kind}, {"name", ref.name}, {"uid", ref.uid}};
    if (ref.controller) r["controller"] = true;
    if (ref.block_owner_deletion) r["blockOwnerDeletion"] = true;
    meta["ownerReferences"].push_back(std::move(r));
  }
  pod["metadata"] = std::move(meta);
  json spec = t.contains("spec") && t["spec"].is_object() ? t["spec"] : json::object();
  if (!options.hostname.empty()) spec["hostname"] = options.hostname;
  if (!options.pod_group_name.empty()) {
    spec["schedulingGroup"] = {{"podGroupName", options.pod_group_name}};
  }
  if (!options.subdomain.empty()) spec["subdomain"] = options.subdomain;
  if (!options.field_ref_env.empty()) {
    for (const char* list : {"initContainers", "containers"}) {
      auto it = spec.find(list);
      if (it == spec.end() || !it->is_array()) continue;
      for (auto& c : *it) {
        if (!c.is_object()) continue;
        json& env = c["env"];
        if (!env.is_array()) env = json::array();
        for (const auto& [name, path] : options.field_ref_env) {
          bool present = false;
          for (const auto& e : env)
            present = present || (e.is_object() && e.value("name", "") == name);
          if (!present) {
            env.push_back({{"name", name}, {"valueFrom", {{"fieldRef", {{"fieldPath", path}}}}}});
          }
        }
      }
    }
  }
  if (!options.pin_to_node.empty()) {
    json& affinity = spec["affinity"];
    if (!affinity.is_object()) affinity = json::object();
    json& node_affinity = affinity["nodeAffinity"];
    if (!node_affinity.is_object()) node_affinity = json::object();
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
        {"nodeSelectorTerms",
         json::array({{{"matchFields",
                        json::array({{{"key", "metadata.name"},
                                      {"operator", "In"},
                                      {"values", json::array({options.pin_to_node})}}})}}})}};
  }
  if (!options.extra_tolerations.empty()) {
    json& tolerations = spec["tolerations"];
    if (!tolerations.is_array()) tolerations = json::array();
    for (const auto& t2 : options.extra_tolerations) {
      bool present = false;
      for (const auto& have : tolerations) {
        present = present || (have.is_object() && have.value("key", "") == t2.key &&
                              have.value("effect", "") == t2.effect);
      }
      if (present) continue;
      json tol = {{"key", t2.key}, {"operator", t2.op.empty() ? "Equal" : t2.op}};
      if (!t2.value.empty()) tol["value"] = t2.value;
      if (!t2.effect.empty()) tol["effect"] = t2.effect;
      if (t2.toleration_seconds) tol["tolerationSeconds"] = *t2.toleration_seconds;
      tolerations.push_back(std::move(tol));
    }
  }
  pod["spec"] = std::move(spec);
  return pod.dump();
}

namespace {

// The template as a canonical JSON value (keys sorted by nlohmann), without `label`.
json CanonicalTemplate(const std::string& template_json, std::string_view label) {
  json t = ParseObject(template_json);
  if (!label.empty()) {
    if (auto meta = t.find("metadata"); meta != t.end() && meta->is_object()) {
      if (auto labels = meta->find("labels"); labels != meta->end() && labels->is_object()) {
        labels->erase(std::string(label));
        if (labels->empty()) meta->erase("labels");
      }
      if (meta->empty()) t.erase("metadata");
    }
  }
  return t;
}

}  // namespace

std::string TemplateHash(const std::string& template_json, std::optional<int32_t> collision_count,
                         std::string_view ignore_label) {
  std::string text = CanonicalTemplate(template_json, ignore_label).dump();
  if (collision_count.has_value()) text += "/" + std::to_string(*collision_count);
  return SafeEncodedFnv32a(text);
}

std::string SafeEncodedFnv32a(std::string_view text) {
  uint32_t hash = 2166136261u;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 16777619u;
  }
  return SafeEncode(std::to_string(hash));
}

bool TemplatesEqualIgnoring(const std::string& a, const std::string& b, std::string_view label) {
  return CanonicalTemplate(a, label) == CanonicalTemplate(b, label);
}

std::string TemplateWithLabels(const std::string& template_json, const Labels& labels) {
  json t = ParseObject(template_json);
  json& meta = t["metadata"];
  if (!meta.is_object()) meta = json::object();
  json& l = meta["labels"];
  if (!l.is_object()) l = json::object();
  for (const auto& [k, v] : labels) l[k] = v;
  return t.dump();
}

std::string PodRevision(const kube::Pod& pod) {
  auto it = pod.meta.labels.find(kControllerRevisionHashLabel);
  return it == pod.meta.labels.end() ? std::string() : it->second;
}

bool IsPodActive(const kube::Pod& pod) {
  return !kc::IsTerminating(pod.meta) && !kc::IsPodTerminal(pod);
}

bool IsPodReady(const kube::Pod& pod) { return kc::IsPodReady(pod); }

bool IsPodAvailable(const kube::Pod& pod, int32_t min_ready_seconds,
                    std::chrono::system_clock::time_point now,
                    std::optional<std::chrono::milliseconds>* available_in) {
  const kube::Condition* ready = kube::FindCondition(pod.status.conditions, "Ready");
  if (ready == nullptr || ready->status != "True") return false;
  if (min_ready_seconds <= 0) return true;
  auto since = kc::ParseRfc3339(ready->last_transition_time);
  if (!since) return false;
  const auto at = *since + std::chrono::seconds(min_ready_seconds);
  if (at <= now) return true;
  if (available_in != nullptr) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(at - now) +
                std::chrono::milliseconds(1);
    if (!available_in->has_value() || left < **available_in) *available_in = left;
  }
  return false;
}

void SortForDeletion(std::vector<PodPtr>& pods) {
  auto phase_rank = [](const kube::Pod& p) {
    if (p.status.phase == kube::kPodPending) return 0;
    if (p.status.phase == kube::kPodRunning) return 2;
    return 1;  // Unknown and anything else
  };
  auto ready_since = [](const kube::Pod& p) -> std::string {
    const kube::Condition* c = kube::FindCondition(p.status.conditions, "Ready");
    return c != nullptr ? c->last_transition_time : std::string();
  };
  std::stable_sort(pods.begin(), pods.end(), [&](const PodPtr& a, const PodPtr& b) {
    const bool a_bound = !a->spec.node_name.empty();
    const bool b_bound = !b->spec.node_name.empty();
    if (a_bound != b_bound) return !a_bound;
    if (phase_rank(*a) != phase_rank(*b)) return phase_rank(*a) < phase_rank(*b);
    const bool a_ready = IsPodReady(*a);
    const bool b_ready = IsPodReady(*b);
    if (a_ready != b_ready) return !a_ready;
    if (a_ready) {
      // Ready for less time first (a later transition), as kube.
      const std::string as = ready_since(*a);
      const std::string bs = ready_since(*b);
      if (as != bs) return as > bs;
    }
    // Newer first; RFC 3339 UTC timestamps sort as text.
    if (a->meta.creation_timestamp != b->meta.creation_timestamp) {
      return a->meta.creation_timestamp > b->meta.creation_timestamp;
    }
    return a->meta.name > b->meta.name;
  });
}

CreateOutcome CreatePods(const Context& ctx, const std::string& ns, std::vector<std::string> bodies,
                         kc::Expectations& expectations, const std::string& key) {
  CreateOutcome out;
  if (bodies.empty()) return out;
  expectations.ExpectCreations(key, static_cast<int>(bodies.size()));
  size_t next = 0;
  size_t batch = 1;
  while (next < bodies.size()) {
    const size_t n = std::min(batch, bodies.size() - next);
    std::vector<boost::asio::awaitable<Result<std::string>>> calls;
    calls.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      calls.push_back(ctx.client->Create(kube::resources::kPods, ns, std::move(bodies[next + i])));
    }
    next += n;
    bool failed = false;
    for (auto& r : kc::AwaitAll(*ctx.client, std::move(calls))) {
      if (r.ok()) {
        ++out.created;
        continue;
      }
      failed = true;
      expectations.CreationObserved(key);
      if (out.error.ok()) out.error = r.error();
    }
    if (failed) break;
    batch *= 2;
  }
  for (; next < bodies.size(); ++next) expectations.CreationObserved(key);
  return out;
}

Status DeletePods(const Context& ctx, const std::vector<PodPtr>& pods,
                  kc::Expectations& expectations, const std::string& key) {
  if (pods.empty()) return Status::Ok();
  expectations.ExpectDeletions(key, static_cast<int>(pods.size()));
  std::vector<boost::asio::awaitable<Status>> calls;
  calls.reserve(pods.size());
  for (const auto& pod : pods) {
    kube::DeleteOptions options;
    options.precondition_uid = pod->meta.uid;
    calls.push_back(
        ctx.client->Delete(kube::resources::kPods, pod->meta.namespace_, pod->meta.name, options));
  }
  Status first;
  for (auto& s : kc::AwaitAll(*ctx.client, std::move(calls))) {
    if (s.ok()) continue;
    // Gone already, or replaced (the UID precondition failed): nothing to wait for.
    expectations.DeletionObserved(key);
    if (s.error().code == ErrorCode::kNotFound || s.error().code == ErrorCode::kConflict) continue;
    if (first.ok()) first = s;
  }
  return first;
}

// ---------------------------------------------------------------- misc

Result<int32_t> ScaledValue(const std::optional<kube::IntOrString>& value, int32_t total,
                            bool round_up, int32_t if_unset, std::string_view field) {
  if (!value.has_value()) return if_unset;
  Result<int32_t> scaled = value->ScaledValue(total, round_up);
  if (!scaled.ok()) {
    return MakeError(ErrorCode::kInvalid, std::string(field) + ": " + scaled.error().message);
  }
  return *scaled;
}

void RecordEvent(const Context& ctx, const kube::KubeObject& object, std::string_view api_version,
                 std::string_view kind, std::string_view type, std::string_view reason,
                 std::string_view message) {
  if (!ctx.record_events) return;
  const std::string now = ctx.Now();
  kube::Event event;
  event.meta.namespace_ = object.meta.namespace_;
  event.meta.generate_name = object.meta.name + ".";
  event.involved_object.api_version = std::string(api_version);
  event.involved_object.kind = std::string(kind);
  event.involved_object.name = object.meta.name;
  event.involved_object.namespace_ = object.meta.namespace_;
  event.involved_object.uid = object.meta.uid;
  event.involved_object.resource_version = object.meta.resource_version;
  event.type = std::string(type);
  event.reason = std::string(reason);
  event.message = std::string(message);
  event.count = 1;
  event.first_timestamp = now;
  event.last_timestamp = now;
  event.source_component = ctx.component;
  event.reporting_controller = ctx.component;
  Result<std::string> created = kc::Await(
      *ctx.client,
      ctx.client->Create(kube::resources::kEvents, object.meta.namespace_, event.Encode()));
  if (!created.ok()) {
    Log(1, ctx.component,
        "recording event " + std::string(reason) + " for " + object.meta.namespace_ + "/" +
            object.meta.name + ": " + created.error().ToString());
  }
}

std::string ReplicasPatch(const kube::ObjectMeta& meta, int32_t replicas,
                          const Labels& annotations) {
  json patch = {{"metadata", {{"resourceVersion", meta.resource_version}}},
                {"spec", {{"replicas", replicas}}}};
  if (!annotations.empty()) {
    json a = json::object();
    for (const auto& [k, v] : annotations) a[k] = v;
    patch["metadata"]["annotations"] = std::move(a);
  }
  return patch.dump();
}

std::string FormatIndexes(const std::vector<int32_t>& sorted) {
  std::string out;
  size_t i = 0;
  while (i < sorted.size()) {
    size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(sorted[i]);
    if (j > i) out += "-" + std::to_string(sorted[j]);
    i = j + 1;
  }
  return out;
}

std::vector<int32_t> ParseIndexes(std::string_view text, int32_t limit) {
  std::vector<int32_t> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view part = text.substr(pos, comma - pos);
    pos = comma + 1;
    long first = -1;
    long last = -1;
    std::string p(part);
    if (std::sscanf(p.c_str(), "%ld-%ld", &first, &last) == 2) {
    } else if (std::sscanf(p.c_str(), "%ld", &first) == 1) {
      last = first;
    } else {
      continue;
    }
    for (long i = std::max(0L, first); i <= last && i < limit; ++i) {
      out.push_back(static_cast<int32_t>(i));
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace copse::apiserver::controllers
