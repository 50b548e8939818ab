#include "apiserver/controllers/job_workload.h"

#include <nlohmann/json.hpp>

#include "core/log.h"
#include "kube/controller/objects.h"
#include "kube/controller/sync.h"

namespace copse::apiserver::controllers {

namespace kc = kube::controller;
using nlohmann::json;

namespace {

constexpr size_t kMaxNameLength = 253;  // a DNS subdomain

struct Found {
  json object;             // the object in the version the controllers watch
  bool ambiguous = false;  // more than one: fall back to pod-by-pod scheduling
};

// The Job's pods are scheduled pod by pod.
Result<std::optional<JobPodGroup>> NoGang() { return std::optional<JobPodGroup>(); }

bool ControlledBy(const json& obj, std::string_view uid) {
  auto meta = obj.find("metadata");
  if (meta == obj.end() || !meta->is_object()) return false;
  const json refs = meta->value("ownerReferences", json::array());
  if (!refs.is_array()) return false;
  for (const json& r : refs) {
    if (!r.is_object()) continue;
    if (r.value("controller", false) && r.value("uid", "") == uid) return true;
  }
  return false;
}

json Parse(const std::string& text) {
  json out = json::parse(text, nullptr, false);
  return out.is_object() ? out : json::object();
}

// The one object the index lists under `value` (or the object named `name`,
// which this controller may have just created and the cache not seen yet).
Result<Found> FindOne(const Context& ctx, const kube::Informer& informer,
                      const kube::ResourceRef& ref, std::string_view index,
                      const std::string& value, const std::string& ns, const std::string& name) {
  Found out;
  const std::vector<kube::ObjectPtr> cached = informer.store().ByIndex(index, value);
  if (cached.size() > 1) {
    out.ambiguous = true;
    return out;
  }
  if (cached.size() == 1) {
    out.object = Parse(cached.front()->raw);
    return out;
  }
  auto got = kc::Await(*ctx.client, ctx.client->Get(ref, ns, name));
  if (got.ok()) {
    out.object = Parse(*got);
  } else if (got.error().code != ErrorCode::kNotFound) {
    return std::move(got).error();
  }
  return out;
}

// Creates `body`; when the name is taken already (a create whose answer was
// lost, or another worker), reads the object instead.
Result<json> CreateOrGet(const Context& ctx, const kube::ResourceRef& ref, const std::string& ns,
                         const std::string& name, const json& body) {
  auto created = kc::Await(*ctx.client, ctx.client->Create(ref, ns, body.dump()));
  if (created.ok()) return Parse(*created);
  if (created.error().code != ErrorCode::kAlreadyExists) return std::move(created).error();
  auto got = kc::Await(*ctx.client, ctx.client->Get(ref, ns, name));
  if (!got.ok()) return std::move(got).error();
  return Parse(*got);
}

json JobOwner(const kube::Job& job) {
  return {{"apiVersion", kube::Job::kApiVersion},
          {"kind", kube::Job::kKind},
          {"name", job.meta.name},
          {"uid", job.meta.uid},
          {"controller", true},
          {"blockOwnerDeletion", true}};
}

}  // namespace

bool IsGangCandidate(const kube::Job& job) {
  const std::optional<int32_t> parallelism = job.spec.parallelism;
  if (!parallelism.has_value() || *parallelism <= 1) return false;
  if (job.spec.completion_mode != kube::kIndexedCompletion) return false;
  if (!job.spec.completions.has_value() || *job.spec.completions != *parallelism) return false;
  const json tmpl = Parse(job.spec.template_.json);
  const json& spec = tmpl.contains("spec") ? tmpl["spec"] : json::object();
  return !spec.is_object() || !spec.contains("schedulingGroup") ||
         spec["schedulingGroup"].is_null();
}

std::string JobWorkloadName(const kube::Job& job) {
  // hashutil.DeepHashObject writes the UID as spew's %#v does: "(types.UID)<uid>".
  const std::string hash = SafeEncodedFnv32a("(types.UID)" + job.meta.uid);
  const size_t max_prefix = kMaxNameLength - hash.size() - 1;
  return job.meta.name.substr(0, max_prefix) + "-" + hash;
}

std::string JobPodGroupName(std::string_view workload, std::string_view template_name) {
  const std::string hash = SafeEncodedFnv32a(std::string(workload) + std::string(template_name));
  const size_t max_available = kMaxNameLength - hash.size() - 2;
  std::string_view wl = workload;
  std::string_view tpl = template_name;
  if (wl.size() + tpl.size() > max_available) {
    const size_t half = max_available / 2;
    if (wl.size() <= half) {
      tpl = tpl.substr(0, max_available - wl.size());
    } else if (tpl.size() <= half) {
      wl = wl.substr(0, max_available - tpl.size());
    } else {
      wl = wl.substr(0, max_available - half);
      tpl = tpl.substr(0, half);
    }
  }
  return std::string(wl) + "-" + std::string(tpl) + "-" + hash;
}

Result<std::optional<JobPodGroup>> EnsureJobGang(const Context& ctx, const kube::Job& job,
                                                 bool new_job) {
  Caches& caches = *ctx.caches;
  if (!caches.workloads || !caches.podgroups || !IsGangCandidate(job)) return NoGang();
  const kube::ResourceRef& workloads = *caches.workloads_ref;
  const kube::ResourceRef& podgroups = *caches.podgroups_ref;
  const std::string& ns = job.meta.namespace_;

  // The Workload.
  const std::string workload_name = JobWorkloadName(job);
  auto found = FindOne(ctx, *caches.workloads, workloads, kIndexControllerJob,
                       kc::Key(ns, job.meta.name), ns, workload_name);
  if (!found.ok()) return std::move(found).error();
  if (found->ambiguous) {
    Log(1, "job",
        "more than one Workload names Job " + ns + "/" + job.meta.name +
            ": its pods are scheduled pod by pod");
    return NoGang();
  }
  json workload = std::move(found->object);
  if (workload.empty()) {
    if (!new_job) return NoGang();
    const std::string template_name = job.meta.name + "-pgt-0";
    const json body = {
        {"apiVersion", workloads.ApiVersion()},
        {"kind", "Workload"},
        {"metadata",
         {{"name", workload_name},
          {"namespace", ns},
          {"ownerReferences", json::array({JobOwner(job)})}}},
        {"spec",
         {{"controllerRef", {{"apiGroup", "batch"}, {"kind", "Job"}, {"name", job.meta.name}}},
          {"podGroupTemplates",
           json::array(
               {{{"name", template_name},
                 {"schedulingPolicy", {{"gang", {{"minCount", *job.spec.parallelism}}}}}}})}}}};
    auto created = CreateOrGet(ctx, workloads, ns, workload_name, body);
    if (!created.ok()) return std::move(created).error();
    workload = std::move(created).value();
    RecordEvent(ctx, job, kube::Job::kApiVersion, kube::Job::kKind, kube::kEventTypeNormal,
                "WorkloadCreated",
                "Created Workload " + workload_name + " for Job " + job.meta.name);
  }
  if (!ControlledBy(workload, job.meta.uid)) return NoGang();
  const json templates = workload["spec"].value("podGroupTemplates", json::array());
  if (!templates.is_array() || templates.size() != 1) return NoGang();
  const json& tmpl = templates[0];

  // The PodGroup.
  const std::string real_workload = workload["metadata"].value("name", workload_name);
  const std::string template_name = tmpl.value("name", "");
  const std::string group_name = JobPodGroupName(real_workload, template_name);
  auto group_found = FindOne(ctx, *caches.podgroups, podgroups, kIndexWorkload,
                             kc::Key(ns, real_workload), ns, group_name);
  if (!group_found.ok()) return std::move(group_found).error();
  if (group_found->ambiguous) return NoGang();
  json group = std::move(group_found->object);
  if (group.empty()) {
    json spec = {{"schedulingPolicy", tmpl.value("schedulingPolicy", json::object())}};
    if (podgroups.version == "v1alpha2") {
      spec["podGroupTemplateRef"] = {
          {"workload", {{"workloadName", real_workload}, {"podGroupTemplateName", template_name}}}};
    } else {
      spec["workloadRef"] = {{"workloadName", real_workload}, {"templateName", template_name}};
    }
    const json body = {
        {"apiVersion", podgroups.ApiVersion()},
        {"kind", "PodGroup"},
        {"metadata",
         {{"name", group_name},
          {"namespace", ns},
          {"ownerReferences", json::array({JobOwner(job),
                                           {{"apiVersion", workloads.ApiVersion()},
                                            {"kind", "Workload"},
                                            {"name", real_workload},
                                            {"uid", workload["metadata"].value("uid", "")}}})}}},
        {"spec", std::move(spec)}};
    auto created = CreateOrGet(ctx, podgroups, ns, group_name, body);
    if (!created.ok()) return std::move(created).error();
    group = std::move(created).value();
  }
  if (!ControlledBy(group, job.meta.uid)) return NoGang();
  JobPodGroup out;
  out.name = group["metadata"].value("name", group_name);
  out.owner.api_version = podgroups.ApiVersion();
  out.owner.kind = "PodGroup";
  out.owner.name = out.name;
  out.owner.uid = group["metadata"].value("uid", "");
  return std::optional<JobPodGroup>(std::move(out));
}

}  // namespace copse::apiserver::controllers
