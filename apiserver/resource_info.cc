#include "apiserver/resource_info.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <mutex>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "apiserver/selector.h"

namespace copse::apiserver {

using nlohmann::json;

std::string ResourceInfo::ApiVersion(std::string_view version) const {
  if (group.empty()) return std::string(version);
  return group + "/" + std::string(version);
}

std::string ResourceInfo::GroupResource() const {
  return group.empty() ? resource : resource + "." + group;
}

bool ResourceInfo::ServesVersion(std::string_view version) const {
  return std::find(versions.begin(), versions.end(), version) != versions.end();
}

int ResourceInfo::FieldIndex(std::string_view field) const {
  for (size_t i = 0; i < field_selectors.size(); ++i) {
    std::string_view name = field_selectors[i];
    name = name.substr(0, name.find(':'));
    if (name == field) return static_cast<int>(i);
  }
  return -1;
}

bool ResourceInfo::HasField(std::string_view field) const {
  if (field == "metadata.name") return true;
  if (field == "metadata.namespace") return true;
  return FieldIndex(field) >= 0;
}

namespace {

struct Builtin {
  const char* group;
  const char* version;  // served versions, preferred first, separated by ','
  const char* resource;
  const char* singular;
  const char* kind;
  bool namespaced;
  bool status;
  bool scale;
  std::vector<std::string> short_names;
  std::vector<std::string> fields;
  std::vector<std::string> categories = {};
};

std::shared_ptr<const ResourceInfo> Make(const Builtin& b) {
  auto info = std::make_shared<ResourceInfo>();
  info->group = b.group;
  for (std::string_view v = b.version; !v.empty();) {
    const size_t comma = v.find(',');
    info->versions.emplace_back(v.substr(0, comma));
    v = comma == std::string_view::npos ? std::string_view() : v.substr(comma + 1);
  }
  info->resource = b.resource;
  info->singular = b.singular;
  info->kind = b.kind;
  info->list_kind = std::string(b.kind) + "List";
  info->namespaced = b.namespaced;
  info->has_status = b.status;
  info->has_scale = b.scale;
  info->short_names = b.short_names;
  info->field_selectors = b.fields;
  info->categories = b.categories;
  if (info->resource == "pods") info->post_subresources = {"binding", "eviction"};
  return info;
}

// Kubernetes version priority: GA > beta > alpha, higher numbers first, then
// non-kube-like versions alphabetically.
struct KubeVersion {
  int major = 0;
  int stage = 0;  // 3 GA, 2 beta, 1 alpha, 0 not kube-like
  int minor = 0;
  std::string text;
};

KubeVersion ParseKubeVersion(std::string_view v) {
  KubeVersion out;
  out.text = std::string(v);
  if (v.size() < 2 || v[0] != 'v' || !std::isdigit(static_cast<unsigned char>(v[1]))) return out;
  size_t i = 1;
  while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) ++i;
  std::from_chars(v.data() + 1, v.data() + i, out.major);
  if (i == v.size()) {
    out.stage = 3;
    return out;
  }
  std::string_view rest = v.substr(i);
  int stage = 0;
  if (rest.starts_with("beta")) {
    stage = 2;
    rest.remove_prefix(4);
  } else if (rest.starts_with("alpha")) {
    stage = 1;
    rest.remove_prefix(5);
  } else {
    return out;
  }
  if (rest.empty() || !std::all_of(rest.begin(), rest.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) != 0;
      })) {
    return out;
  }
  std::from_chars(rest.data(), rest.data() + rest.size(), out.minor);
  out.stage = stage;
  return out;
}

}  // namespace

bool KubeVersionBefore(const std::string& a, const std::string& b) {
  const KubeVersion va = ParseKubeVersion(a);
  const KubeVersion vb = ParseKubeVersion(b);
  if (va.stage != vb.stage) return va.stage > vb.stage;
  if (va.stage == 0) return va.text < vb.text;
  if (va.major != vb.major) return va.major > vb.major;
  return va.minor > vb.minor;
}

namespace {

Error Invalid422(const std::string& name, const std::string& cause) {
  Error error = MakeError(ErrorCode::kInvalid, "CustomResourceDefinition.apiextensions.k8s.io \"" +
                                                   name + "\" is invalid: " + cause);
  error.http_status = 422;
  error.reason = "Invalid";
  return error;
}

std::string StringAt(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return {};
  return it->get<std::string>();
}

std::vector<std::string> StringsAt(const json& obj, const char* key) {
  std::vector<std::string> out;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_array()) return out;
  for (const auto& v : *it) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

}  // namespace

std::vector<std::shared_ptr<const ResourceInfo>> BuiltinResources() {
  const std::vector<std::string> kMeta;
  // One row per resource, as `kubectl api-resources` lists them; kept one resource per line.
  // clang-format off
  const std::vector<Builtin> builtins = {
      {"", "v1", "pods", "pod", "Pod", true, true, false, {"po"},
       {"spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
        "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName"},
       {"all"}},
      {"", "v1", "nodes", "node", "Node", false, true, false, {"no"}, {"spec.unschedulable"}},
      {"", "v1", "namespaces", "namespace", "Namespace", false, true, false, {"ns"},
       {"status.phase"}},
      {"", "v1", "services", "service", "Service", true, true, false, {"svc"}, kMeta, {"all"}},
      {"", "v1", "endpoints", "endpoints", "Endpoints", true, false, false, {"ep"}, kMeta},
      {"", "v1", "events", "event", "Event", true, false, false, {"ev"},
       {"involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
        "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
        "involvedObject.fieldPath", "reason", "reportingComponent", "source:source.component",
        "type"}},
      {"", "v1", "configmaps", "configmap", "ConfigMap", true, false, false, {"cm"}, kMeta},
      {"", "v1", "secrets", "secret", "Secret", true, false, false, {}, {"type"}},
      {"", "v1", "serviceaccounts", "serviceaccount", "ServiceAccount", true, false, false,
       {"sa"}, kMeta},
      {"", "v1", "persistentvolumeclaims", "persistentvolumeclaim", "PersistentVolumeClaim",
       true, true, false, {"pvc"}, kMeta},
      {"", "v1", "persistentvolumes", "persistentvolume", "PersistentVolume", false, true, false,
       {"pv"}, kMeta},
      {"", "v1", "replicationcontrollers", "replicationcontroller", "ReplicationController",
       true, true, true, {"rc"}, kMeta, {"all"}},
      {"", "v1", "resourcequotas", "resourcequota", "ResourceQuota", true, true, false,
       {"quota"}, kMeta},
      {"", "v1", "limitranges", "limitrange", "LimitRange", true, false, false, {"limits"},
       kMeta},
      {"", "v1", "podtemplates", "podtemplate", "PodTemplate", true, false, false, {}, kMeta},
      {"apps", "v1", "deployments", "deployment", "Deployment", true, true, true, {"deploy"},
       kMeta, {"all"}},
      {"apps", "v1", "replicasets", "replicaset", "ReplicaSet", true, true, true, {"rs"}, kMeta,
       {"all"}},
      {"apps", "v1", "statefulsets", "statefulset", "StatefulSet", true, true, true, {"sts"},
       kMeta, {"all"}},
      {"apps", "v1", "daemonsets", "daemonset", "DaemonSet", true, true, false, {"ds"}, kMeta,
       {"all"}},
      {"apps", "v1", "controllerrevisions", "controllerrevision", "ControllerRevision", true,
       false, false, {}, kMeta},
      {"batch", "v1", "jobs", "job", "Job", true, true, false, {}, kMeta, {"all"}},
      {"batch", "v1", "cronjobs", "cronjob", "CronJob", true, true, false, {"cj"}, kMeta,
       {"all"}},
      {"autoscaling", "v2", "horizontalpodautoscalers", "horizontalpodautoscaler",
       "HorizontalPodAutoscaler", true, true, false, {"hpa"}, kMeta, {"all"}},
      {"policy", "v1", "poddisruptionbudgets", "poddisruptionbudget", "PodDisruptionBudget",
       true, true, false, {"pdb"}, kMeta},
      {"coordination.k8s.io", "v1", "leases", "lease", "Lease", true, false, false, {}, kMeta},
      {"scheduling.k8s.io", "v1", "priorityclasses", "priorityclass", "PriorityClass", false,
       false, false, {"pc"}, kMeta},
      // The Workload API (apiserver/scheduling_api.h): 1.36's v1alpha2, 1.37's v1alpha3 and v1beta1.
      {"scheduling.k8s.io", "v1beta1,v1alpha3,v1alpha2", "workloads", "workload", "Workload", true,
       false, false, {}, kMeta},
      {"scheduling.k8s.io", "v1beta1,v1alpha3,v1alpha2", "podgroups", "podgroup", "PodGroup", true,
       true, false, {}, kMeta},
      {"scheduling.k8s.io", "v1alpha3", "compositepodgroups", "compositepodgroup",
       "CompositePodGroup", true, true, false, {}, kMeta},
      {"events.k8s.io", "v1", "events", "event", "Event", true, false, false, {"ev"},
       {"reason", "type", "reportingController", "regarding.kind", "regarding.namespace",
        "regarding.name", "regarding.uid"}},
      {"rbac.authorization.k8s.io", "v1", "roles", "role", "Role", true, false, false, {},
       kMeta},
      {"rbac.authorization.k8s.io", "v1", "rolebindings", "rolebinding", "RoleBinding", true,
       false, false, {}, kMeta},
      {"rbac.authorization.k8s.io", "v1", "clusterroles", "clusterrole", "ClusterRole", false,
       false, false, {}, kMeta},
      {"rbac.authorization.k8s.io", "v1", "clusterrolebindings", "clusterrolebinding",
       "ClusterRoleBinding", false, false, false, {}, kMeta},
      {"apiextensions.k8s.io", "v1", "customresourcedefinitions", "customresourcedefinition",
       "CustomResourceDefinition", false, true, false, {"crd", "crds"}, kMeta},
      {"storage.k8s.io", "v1", "storageclasses", "storageclass", "StorageClass", false, false,
       false, {"sc"}, kMeta},
      {"storage.k8s.io", "v1", "csinodes", "csinode", "CSINode", false, false, false, {}, kMeta},
      {"storage.k8s.io", "v1", "csidrivers", "csidriver", "CSIDriver", false, false, false, {},
       kMeta},
      {"storage.k8s.io", "v1", "csistoragecapacities", "csistoragecapacity",
       "CSIStorageCapacity", true, false, false, {}, kMeta},
      {"storage.k8s.io", "v1", "volumeattachments", "volumeattachment", "VolumeAttachment",
       false, true, false, {}, kMeta},
      {"discovery.k8s.io", "v1", "endpointslices", "endpointslice", "EndpointSlice", true, false,
       false, {}, kMeta},
      {"networking.k8s.io", "v1", "networkpolicies", "networkpolicy", "NetworkPolicy", true,
       false, false, {"netpol"}, kMeta},
      {"networking.k8s.io", "v1", "ingresses", "ingress", "Ingress", true, true, false, {"ing"},
       kMeta},
      {"networking.k8s.io", "v1", "ingressclasses", "ingressclass", "IngressClass", false, false,
       false, {}, kMeta},
      {"node.k8s.io", "v1", "runtimeclasses", "runtimeclass", "RuntimeClass", false, false,
       false, {}, kMeta},
  };
  // clang-format on
  std::vector<std::shared_ptr<const ResourceInfo>> out;
  out.reserve(builtins.size());
  for (const auto& b : builtins) out.push_back(Make(b));
  return out;
}

Result<std::shared_ptr<const ResourceInfo>> ResourceFromCrd(const json& crd) {
  const std::string name = crd.contains("metadata") && crd["metadata"].is_object()
                               ? StringAt(crd["metadata"], "name")
                               : std::string();
  auto spec_it = crd.find("spec");
  if (spec_it == crd.end() || !spec_it->is_object()) {
    return Invalid422(name, "spec: Required value");
  }
  const json& spec = *spec_it;
  auto info = std::make_shared<ResourceInfo>();
  info->crd = true;
  info->group = StringAt(spec, "group");
  if (info->group.empty()) return Invalid422(name, "spec.group: Required value");
  auto names_it = spec.find("names");
  if (names_it == spec.end() || !names_it->is_object()) {
    return Invalid422(name, "spec.names.plural: Required value");
  }
  const json& names = *names_it;
  info->resource = StringAt(names, "plural");
  info->kind = StringAt(names, "kind");
  info->singular = StringAt(names, "singular");
  info->list_kind = StringAt(names, "listKind");
  if (info->resource.empty()) return Invalid422(name, "spec.names.plural: Required value");
  if (info->kind.empty()) return Invalid422(name, "spec.names.kind: Required value");
  if (info->singular.empty()) {
    info->singular = info->kind;
    std::transform(info->singular.begin(), info->singular.end(), info->singular.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  }
  if (info->list_kind.empty()) info->list_kind = info->kind + "List";
  info->short_names = StringsAt(names, "shortNames");
  info->categories = StringsAt(names, "categories");
  if (name != info->resource + "." + info->group) {
    return Invalid422(name, "metadata.name: Invalid value: \"" + name +
                                "\": must be spec.names.plural+\".\"+spec.group");
  }
  const std::string scope = StringAt(spec, "scope");
  if (scope != "Namespaced" && scope != "Cluster") {
    return Invalid422(name, "spec.scope: Unsupported value: \"" + scope +
                                "\": supported values: \"Cluster\", \"Namespaced\"");
  }
  info->namespaced = scope == "Namespaced";
  auto versions_it = spec.find("versions");
  if (versions_it == spec.end() || !versions_it->is_array() || versions_it->empty()) {
    return Invalid422(name,
                      "spec.versions: Invalid value: null: must have exactly one version "
                      "marked as storage version");
  }
  std::vector<std::pair<std::string, const json*>> served;
  const json* storage = nullptr;
  for (const auto& v : *versions_it) {
    if (!v.is_object()) continue;
    const std::string vname = StringAt(v, "name");
    if (vname.empty()) return Invalid422(name, "spec.versions[].name: Required value");
    if (v.value("storage", false)) storage = &v;
    if (v.value("served", false)) served.emplace_back(vname, &v);
  }
  if (storage == nullptr) {
    return Invalid422(name, "spec.versions: Invalid value: " + versions_it->dump() +
                                ": must have exactly one version marked as storage version");
  }
  std::sort(served.begin(), served.end(),
            [](const auto& a, const auto& b) { return KubeVersionBefore(a.first, b.first); });
  for (const auto& [vname, v] : served) {
    info->versions.push_back(vname);
    info->crd_versions.push_back(v->dump());
  }
  const json* sub_version = served.empty() ? storage : served.front().second;
  if (auto sub = sub_version->find("subresources"); sub != sub_version->end() && sub->is_object()) {
    info->has_status = sub->contains("status");
    if (auto scale = sub->find("scale"); scale != sub->end() && scale->is_object()) {
      info->has_scale = true;
      info->spec_replicas_path = StringAt(*scale, "specReplicasPath");
      info->status_replicas_path = StringAt(*scale, "statusReplicasPath");
      info->label_selector_path = StringAt(*scale, "labelSelectorPath");
      if (info->spec_replicas_path.empty()) {
        return Invalid422(name,
                          "spec.versions[0].subresources.scale.specReplicasPath: Required "
                          "value");
      }
    }
  }
  return std::shared_ptr<const ResourceInfo>(std::move(info));
}

const json* FindPath(const json& obj, std::string_view path) {
  if (!path.empty() && path.front() == '.') path.remove_prefix(1);
  const json* cur = &obj;
  while (!path.empty()) {
    const size_t dot = path.find('.');
    std::string_view step = path.substr(0, dot);
    if (!cur->is_object()) return nullptr;
    auto it = cur->find(step);
    if (it == cur->end()) return nullptr;
    cur = &*it;
    if (dot == std::string_view::npos) break;
    path.remove_prefix(dot + 1);
  }
  return cur;
}

void SetPath(json& obj, std::string_view path, json value) {
  if (!path.empty() && path.front() == '.') path.remove_prefix(1);
  json* cur = &obj;
  while (true) {
    const size_t dot = path.find('.');
    std::string step(path.substr(0, dot));
    if (!cur->is_object()) *cur = json::object();
    if (dot == std::string_view::npos) {
      (*cur)[step] = std::move(value);
      return;
    }
    cur = &(*cur)[step];
    path.remove_prefix(dot + 1);
  }
}

std::shared_ptr<const nlohmann::json> CrdVersionSchema(const ResourceInfo& info,
                                                       std::string_view version) {
  // Bounded: cleared when it outgrows kMaxCached.
  constexpr size_t kMaxCached = 512;
  static std::mutex mu;
  static std::unordered_map<std::string, std::shared_ptr<const nlohmann::json>> cache;
  for (size_t i = 0; i < info.versions.size() && i < info.crd_versions.size(); ++i) {
    if (info.versions[i] != version) continue;
    const std::string& text = info.crd_versions[i];
    {
      std::lock_guard lock(mu);
      if (auto it = cache.find(text); it != cache.end()) return it->second;
    }
    std::shared_ptr<const nlohmann::json> schema;
    const nlohmann::json v = nlohmann::json::parse(text, nullptr, false);
    if (v.is_object()) {
      auto s = v.find("schema");
      if (s != v.end() && s->is_object()) {
        auto o = s->find("openAPIV3Schema");
        if (o != s->end() && o->is_object()) schema = std::make_shared<const nlohmann::json>(*o);
      }
    }
    std::lock_guard lock(mu);
    if (cache.size() >= kMaxCached) cache.clear();
    cache.emplace(text, schema);
    return schema;
  }
  return nullptr;
}

}  // namespace copse::apiserver
