#include "apiserver/workloads.h"

#include <nlohmann/json.hpp>

#include "kube/codec.h"

namespace copse::apiserver {

using nlohmann::json;

namespace {

bool Is(std::string_view group, std::string_view kind, std::string_view g, std::string_view k) {
  return group == g && kind == k;
}

json& Object(json& parent, const char* key) {
  json& child = parent[key];
  if (!child.is_object()) child = json::object();
  return child;
}

void SetIfMissing(json& obj, const char* key, json value) {
  if (!obj.contains(key) || obj[key].is_null()) obj[key] = std::move(value);
}

const json& At(const json& obj, std::initializer_list<const char*> path) {
  static const json kNull;
  const json* cur = &obj;
  for (const char* key : path) {
    if (!cur->is_object()) return kNull;
    auto it = cur->find(key);
    if (it == cur->end()) return kNull;
    cur = &*it;
  }
  return *cur;
}

// The value as upstream prints it in a field error: strings quoted, the rest as JSON.
std::string Repr(const json& v) {
  if (v.is_null()) return "null";
  return v.dump();
}

class Errors {
 public:
  void Required(const std::string& field, std::string_view detail = {}) {
    Add(field + ": Required value", detail);
  }
  void Invalid(const std::string& field, const json& value, std::string_view detail) {
    Add(field + ": Invalid value: " + Repr(value), detail);
  }
  void Unsupported(const std::string& field, const json& value,
                   std::initializer_list<std::string_view> valid) {
    std::string detail = "supported values: ";
    bool first = true;
    for (std::string_view v : valid) {
      if (!first) detail += ", ";
      first = false;
      detail += json(std::string(v)).dump();
    }
    Add(field + ": Unsupported value: " + Repr(value), detail);
  }
  void Forbidden(const std::string& field, std::string_view detail) {
    Add(field + ": Forbidden", detail);
  }
  std::vector<std::string> Take() { return std::move(messages_); }

 private:
  void Add(std::string body, std::string_view detail) {
    if (!detail.empty()) body += ": " + std::string(detail);
    messages_.push_back(std::move(body));
  }
  std::vector<std::string> messages_;
};

// A count that must be >= 0 when present.
void NonNegative(const json& obj, std::initializer_list<const char*> path, const std::string& field,
                 Errors& errs) {
  const json& v = At(obj, path);
  if (v.is_number_integer() && v.get<int64_t>() < 0) {
    errs.Invalid(field, v, "must be greater than or equal to 0");
  }
}

// IntOrString rules of ValidatePositiveIntOrPercent / IsNotMoreThan100Percent.
// Returns the value scaled to 100 (percent) or as an int; -1 when invalid.
int64_t IntOrPercent(const json& v, const std::string& field, Errors& errs) {
  if (v.is_null()) return 0;
  if (v.is_number_integer()) {
    if (v.get<int64_t>() < 0) {
      errs.Invalid(field, v, "must be greater than or equal to 0");
      return -1;
    }
    return v.get<int64_t>();
  }
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s.empty() || s.back() != '%' || s.find_first_not_of("0123456789") != s.size() - 1 ||
        s.size() == 1) {
      errs.Invalid(field, v,
                   "a valid percent string must be a numeric string followed by an ending '%' "
                   "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')");
      return -1;
    }
    const int64_t pct = std::stoll(s.substr(0, s.size() - 1));
    if (pct > 100) {
      errs.Invalid(field, v, "must not be greater than 100%");
      return -1;
    }
    return pct;
  }
  errs.Invalid(field, v, "must be an integer or percentage (e.g '5%')");
  return -1;
}

// spec.selector (required, non-empty, well formed) against the template's labels.
void ValidateSelector(const json& spec, bool required, std::string_view noun, Errors& errs) {
  const json& selector = At(spec, {"selector"});
  if (selector.is_null()) {
    if (required) errs.Required("spec.selector");
    return;
  }
  auto parsed = kube::DecodeLabelSelector(selector.dump());
  if (!parsed.ok()) {
    errs.Invalid("spec.selector", selector, parsed.error().message);
    return;
  }
  if (parsed->Empty()) {
    errs.Invalid("spec.selector", selector, "empty selector is invalid for " + std::string(noun));
    return;
  }
  Labels labels;
  const json& template_labels = At(spec, {"template", "metadata", "labels"});
  if (template_labels.is_object()) {
    for (const auto& [k, v] : template_labels.items()) {
      if (v.is_string()) labels[k] = v.get<std::string>();
    }
  }
  if (!parsed->Matches(labels)) {
    errs.Invalid("spec.template.metadata.labels",
                 template_labels.is_null() ? json::object() : template_labels,
                 "`selector` does not match template `labels`");
  }
}

// What every workload checks of its pod template.
void ValidateTemplate(const json& spec, std::initializer_list<std::string_view> restart_policies,
                      bool job, Errors& errs) {
  const json& tmpl = At(spec, {"template"});
  if (!tmpl.is_object()) {
    errs.Required("spec.template");
    return;
  }
  const json& containers = At(tmpl, {"spec", "containers"});
  if (!containers.is_array() || containers.empty()) {
    errs.Required("spec.template.spec.containers");
  }
  const json& restart = At(tmpl, {"spec", "restartPolicy"});
  const std::string policy = restart.is_string() ? restart.get<std::string>() : "";
  bool ok = false;
  for (std::string_view p : restart_policies) ok = ok || policy == p;
  if (job && !ok && (policy.empty() || policy == "Always")) {
    // The template's restartPolicy is defaulted to Always upstream, which a Job refuses.
    errs.Required("spec.template.spec.restartPolicy", "valid values: \"OnFailure\", \"Never\"");
  } else if (!ok && !policy.empty()) {
    errs.Unsupported("spec.template.spec.restartPolicy", restart, restart_policies);
  }
}

void ValidateDeploymentLike(const json& obj, bool deployment, Errors& errs) {
  const json& spec = At(obj, {"spec"});
  NonNegative(obj, {"spec", "replicas"}, "spec.replicas", errs);
  NonNegative(obj, {"spec", "minReadySeconds"}, "spec.minReadySeconds", errs);
  // Upstream's ReplicaSet validation says "deployment" too.
  ValidateSelector(spec, true, "deployment", errs);
  ValidateTemplate(spec, {"Always"}, false, errs);
  if (!deployment) return;
  NonNegative(obj, {"spec", "revisionHistoryLimit"}, "spec.revisionHistoryLimit", errs);
  const json& type = At(spec, {"strategy", "type"});
  const json& rolling = At(spec, {"strategy", "rollingUpdate"});
  if (type == "Recreate") {
    if (!rolling.is_null()) {
      errs.Forbidden("spec.strategy.rollingUpdate",
                     "may not be specified when strategy `type` is 'Recreate'");
    }
  } else if (type == "RollingUpdate") {
    const int64_t unavailable = IntOrPercent(At(rolling, {"maxUnavailable"}),
                                             "spec.strategy.rollingUpdate.maxUnavailable", errs);
    const int64_t surge =
        IntOrPercent(At(rolling, {"maxSurge"}), "spec.strategy.rollingUpdate.maxSurge", errs);
    if (unavailable == 0 && surge == 0) {
      errs.Invalid("spec.strategy.rollingUpdate.maxUnavailable", At(rolling, {"maxUnavailable"}),
                   "may not be 0 when `maxSurge` is 0");
    }
  } else if (!type.is_null()) {
    errs.Unsupported("spec.strategy.type", type, {"Recreate", "RollingUpdate"});
  }
  const json& deadline = At(spec, {"progressDeadlineSeconds"});
  if (deadline.is_number_integer()) {
    const int64_t min_ready = At(spec, {"minReadySeconds"}).is_number_integer()
                                  ? At(spec, {"minReadySeconds"}).get<int64_t>()
                                  : 0;
    if (deadline.get<int64_t>() <= min_ready) {
      errs.Invalid("spec.progressDeadlineSeconds", deadline,
                   "must be greater than minReadySeconds");
    }
  }
}

void ValidateStatefulSet(const json& obj, Errors& errs) {
  const json& spec = At(obj, {"spec"});
  NonNegative(obj, {"spec", "replicas"}, "spec.replicas", errs);
  NonNegative(obj, {"spec", "minReadySeconds"}, "spec.minReadySeconds", errs);
  NonNegative(obj, {"spec", "ordinals", "start"}, "spec.ordinals.start", errs);
  ValidateSelector(spec, true, "statefulset", errs);
  ValidateTemplate(spec, {"Always"}, false, errs);
  const json& policy = At(spec, {"podManagementPolicy"});
  if (!policy.is_null() && policy != "OrderedReady" && policy != "Parallel") {
    errs.Unsupported("spec.podManagementPolicy", policy, {"OrderedReady", "Parallel"});
  }
  const json& type = At(spec, {"updateStrategy", "type"});
  if (!type.is_null() && type != "RollingUpdate" && type != "OnDelete") {
    errs.Unsupported("spec.updateStrategy.type", type, {"OnDelete", "RollingUpdate"});
  }
  if (type == "OnDelete" && !At(spec, {"updateStrategy", "rollingUpdate"}).is_null()) {
    errs.Invalid("spec.updateStrategy.rollingUpdate", At(spec, {"updateStrategy", "rollingUpdate"}),
                 "only allowed for updateStrategy 'RollingUpdate'");
  }
  NonNegative(obj, {"spec", "updateStrategy", "rollingUpdate", "partition"},
              "spec.updateStrategy.rollingUpdate.partition", errs);
}

void ValidateDaemonSet(const json& obj, Errors& errs) {
  const json& spec = At(obj, {"spec"});
  NonNegative(obj, {"spec", "minReadySeconds"}, "spec.minReadySeconds", errs);
  ValidateSelector(spec, true, "daemonset", errs);
  ValidateTemplate(spec, {"Always"}, false, errs);
  const json& type = At(spec, {"updateStrategy", "type"});
  if (type == "RollingUpdate") {
    const json& rolling = At(spec, {"updateStrategy", "rollingUpdate"});
    const int64_t unavailable = IntOrPercent(
        At(rolling, {"maxUnavailable"}), "spec.updateStrategy.rollingUpdate.maxUnavailable", errs);
    const int64_t surge =
        IntOrPercent(At(rolling, {"maxSurge"}), "spec.updateStrategy.rollingUpdate.maxSurge", errs);
    if (unavailable == 0 && surge == 0) {
      errs.Invalid("spec.updateStrategy.rollingUpdate.maxUnavailable",
                   At(rolling, {"maxUnavailable"}), "may not be 0 when `maxSurge` is 0");
    }
  } else if (!type.is_null() && type != "OnDelete") {
    errs.Unsupported("spec.updateStrategy.type", type, {"OnDelete", "RollingUpdate"});
  }
}

void ValidateJob(const json& obj, Errors& errs) {
  const json& spec = At(obj, {"spec"});
  NonNegative(obj, {"spec", "parallelism"}, "spec.parallelism", errs);
  NonNegative(obj, {"spec", "completions"}, "spec.completions", errs);
  NonNegative(obj, {"spec", "backoffLimit"}, "spec.backoffLimit", errs);
  NonNegative(obj, {"spec", "ttlSecondsAfterFinished"}, "spec.ttlSecondsAfterFinished", errs);
  const json& deadline = At(spec, {"activeDeadlineSeconds"});
  if (deadline.is_number_integer() && deadline.get<int64_t>() <= 0) {
    errs.Invalid("spec.activeDeadlineSeconds", deadline, "must be greater than 0");
  }
  const bool manual = At(spec, {"manualSelector"}) == true;
  // Without manualSelector the server generates the selector (PrepareWorkloadForCreate).
  if (manual || !At(spec, {"selector"}).is_null()) ValidateSelector(spec, manual, "job", errs);
  ValidateTemplate(spec, {"OnFailure", "Never"}, true, errs);
  const json& mode = At(spec, {"completionMode"});
  if (!mode.is_null() && mode != "NonIndexed" && mode != "Indexed") {
    errs.Unsupported("spec.completionMode", mode, {"NonIndexed", "Indexed"});
  }
  if (mode == "Indexed") {
    const json& completions = At(spec, {"completions"});
    if (completions.is_null()) {
      errs.Required("spec.completions", "when completion mode is Indexed");
    } else if (completions.is_number_integer() && completions.get<int64_t>() > 100000) {
      errs.Invalid("spec.completions", completions, "must be less than or equal to 100000");
    }
  }
}

void Immutable(const json& new_obj, const json& old_obj, std::initializer_list<const char*> path,
               const std::string& field, Errors& errs) {
  const json& now = At(new_obj, path);
  if (now != At(old_obj, path)) errs.Invalid(field, now, "field is immutable");
}

}  // namespace

bool IsWorkloadKind(std::string_view group, std::string_view kind) {
  return Is(group, kind, "apps", "Deployment") || Is(group, kind, "apps", "ReplicaSet") ||
         Is(group, kind, "apps", "StatefulSet") || Is(group, kind, "apps", "DaemonSet") ||
         Is(group, kind, "batch", "Job");
}

void DefaultWorkload(std::string_view group, std::string_view kind, json& obj) {
  if (!IsWorkloadKind(group, kind) || !obj.is_object()) return;
  if (obj.contains("spec") && !obj["spec"].is_object()) return;  // validation reports it
  json& spec = Object(obj, "spec");
  if (Is(group, kind, "apps", "Deployment")) {
    SetIfMissing(spec, "replicas", 1);
    json& strategy = Object(spec, "strategy");
    SetIfMissing(strategy, "type", "RollingUpdate");
    if (strategy["type"] == "RollingUpdate") {
      json& rolling = Object(strategy, "rollingUpdate");
      SetIfMissing(rolling, "maxUnavailable", "25%");
      SetIfMissing(rolling, "maxSurge", "25%");
    }
    SetIfMissing(spec, "revisionHistoryLimit", 10);
    SetIfMissing(spec, "progressDeadlineSeconds", 600);
  } else if (Is(group, kind, "apps", "ReplicaSet")) {
    SetIfMissing(spec, "replicas", 1);
  } else if (Is(group, kind, "apps", "StatefulSet")) {
    SetIfMissing(spec, "replicas", 1);
    SetIfMissing(spec, "podManagementPolicy", "OrderedReady");
    json& strategy = Object(spec, "updateStrategy");
    if (!strategy.contains("type") || strategy["type"].is_null()) {
      strategy["type"] = "RollingUpdate";
      Object(strategy, "rollingUpdate");
    }
    if (strategy["type"] == "RollingUpdate" && strategy.contains("rollingUpdate") &&
        strategy["rollingUpdate"].is_object()) {
      SetIfMissing(strategy["rollingUpdate"], "partition", 0);
    }
    SetIfMissing(spec, "revisionHistoryLimit", 10);
    json& retention = Object(spec, "persistentVolumeClaimRetentionPolicy");
    SetIfMissing(retention, "whenDeleted", "Retain");
    SetIfMissing(retention, "whenScaled", "Retain");
  } else if (Is(group, kind, "apps", "DaemonSet")) {
    json& strategy = Object(spec, "updateStrategy");
    SetIfMissing(strategy, "type", "RollingUpdate");
    if (strategy["type"] == "RollingUpdate") {
      json& rolling = Object(strategy, "rollingUpdate");
      SetIfMissing(rolling, "maxUnavailable", 1);
      SetIfMissing(rolling, "maxSurge", 0);
    }
    SetIfMissing(spec, "revisionHistoryLimit", 10);
  } else if (Is(group, kind, "batch", "Job")) {
    const bool no_completions = !spec.contains("completions") || spec["completions"].is_null();
    const bool no_parallelism = !spec.contains("parallelism") || spec["parallelism"].is_null();
    if (no_completions && no_parallelism) spec["completions"] = 1;
    SetIfMissing(spec, "parallelism", 1);
    SetIfMissing(spec, "backoffLimit", 6);
    SetIfMissing(spec, "completionMode", "NonIndexed");
    SetIfMissing(spec, "suspend", false);
    SetIfMissing(spec, "podReplacementPolicy", "TerminatingOrFailed");
    const json& template_labels = At(spec, {"template", "metadata", "labels"});
    json& meta = Object(obj, "metadata");
    const json& labels = At(meta, {"labels"});
    if (template_labels.is_object() && !template_labels.empty() &&
        (!labels.is_object() || labels.empty())) {
      meta["labels"] = template_labels;
    }
  }
}

void PrepareWorkloadForCreate(std::string_view group, std::string_view kind, json& obj) {
  if (!Is(group, kind, "batch", "Job") || !obj.is_object()) return;
  json& spec = Object(obj, "spec");
  if (At(spec, {"manualSelector"}) == true) return;
  const json& meta = At(obj, {"metadata"});
  const std::string uid = At(meta, {"uid"}).is_string() ? meta["uid"].get<std::string>() : "";
  const std::string name = At(meta, {"name"}).is_string() ? meta["name"].get<std::string>() : "";
  json& tmpl_meta = Object(Object(spec, "template"), "metadata");
  json& labels = Object(tmpl_meta, "labels");
  const json template_labels_before = labels;
  SetIfMissing(labels, "job-name", name);
  SetIfMissing(labels, "batch.kubernetes.io/job-name", name);
  SetIfMissing(labels, "controller-uid", uid);
  SetIfMissing(labels, "batch.kubernetes.io/controller-uid", uid);
  json& selector = Object(spec, "selector");
  SetIfMissing(Object(selector, "matchLabels"), "batch.kubernetes.io/controller-uid", uid);
  // The Job's own labels default to its template's (now with the generated ones).
  json& obj_meta = Object(obj, "metadata");
  const json& own = At(obj_meta, {"labels"});
  if (!own.is_object() || own.empty() || own == template_labels_before) {
    obj_meta["labels"] = labels;
  }
}

std::vector<std::string> ValidateWorkload(std::string_view group, std::string_view kind,
                                          const json& obj) {
  Errors errs;
  if (!At(obj, {"spec"}).is_object()) {
    if (IsWorkloadKind(group, kind)) errs.Required("spec");
    return errs.Take();
  }
  if (Is(group, kind, "apps", "Deployment")) {
    ValidateDeploymentLike(obj, true, errs);
  } else if (Is(group, kind, "apps", "ReplicaSet")) {
    ValidateDeploymentLike(obj, false, errs);
  } else if (Is(group, kind, "apps", "StatefulSet")) {
    ValidateStatefulSet(obj, errs);
  } else if (Is(group, kind, "apps", "DaemonSet")) {
    ValidateDaemonSet(obj, errs);
  } else if (Is(group, kind, "batch", "Job")) {
    ValidateJob(obj, errs);
  }
  return errs.Take();
}

std::vector<std::string> ValidateWorkloadUpdate(std::string_view group, std::string_view kind,
                                                const json& new_obj, const json& old_obj) {
  Errors errs;
  if (!IsWorkloadKind(group, kind)) return errs.Take();
  if (!Is(group, kind, "apps", "StatefulSet")) {
    Immutable(new_obj, old_obj, {"spec", "selector"}, "spec.selector", errs);
  }
  if (Is(group, kind, "batch", "Job")) {
    Immutable(new_obj, old_obj, {"spec", "completionMode"}, "spec.completionMode", errs);
  }
  if (Is(group, kind, "apps", "StatefulSet")) {
    json a = At(new_obj, {"spec"});
    json b = At(old_obj, {"spec"});
    for (const char* mutable_field : {"replicas", "ordinals", "template", "updateStrategy",
                                      "persistentVolumeClaimRetentionPolicy", "minReadySeconds"}) {
      if (a.is_object()) a.erase(mutable_field);
      if (b.is_object()) b.erase(mutable_field);
    }
    if (a != b) {
      errs.Forbidden("spec",
                     "updates to statefulset spec for fields other than 'replicas', 'ordinals', "
                     "'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and "
                     "'minReadySeconds' are forbidden");
    }
  }
  return errs.Take();
}

}  // namespace copse::apiserver
