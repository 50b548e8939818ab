#include "kube/api_access.h"

#include <algorithm>

namespace copse::kube {
namespace {

const std::vector<std::string> kRead = {"list", "watch"};

ApiAccessRule Rule(std::string group, std::string resource, std::string subresource,
                   std::vector<std::string> verbs, std::string why, std::string granted_by = {}) {
  return ApiAccessRule{std::move(group), std::move(resource), std::move(subresource),
                       std::move(verbs), std::move(why),      std::move(granted_by)};
}

// RBAC's bootstrap roles the ops port's delegation needs (as kube-scheduler's).
constexpr const char* kAuthDelegator = "ClusterRole system:auth-delegator";
constexpr const char* kAuthenticationReader =
    "Role kube-system/extension-apiserver-authentication-reader";

ApiAccessTable MakeSchedulerTable() {
  ApiAccessTable t;
  t.component = "copse run";
  t.rules = {
      Rule("", "pods", "", {"get", "list", "watch", "delete"},
           "pod informer; read back a bind of unknown outcome; delete preemption victims"),
      Rule("", "pods", "binding", {"create"}, "bind pods to nodes"),
      Rule("", "pods", "status", {"patch"},
           "PodScheduled condition, nominatedNodeName, victims' DisruptionTarget condition"),
      Rule("", "nodes", "", kRead, "node informer"),
      Rule("", "namespaces", "", kRead, "namespace labels for affinity namespace selectors"),
      Rule("", "events", "", {"create"}, "Scheduled, FailedScheduling and Preempted events"),
      Rule("policy", "poddisruptionbudgets", "", kRead,
           "preemption prefers victims whose PodDisruptionBudget allows it (policy/v1 or v1beta1)"),
      Rule("scheduling.k8s.io", "podgroups", "", {"list", "watch", "patch"},
           "KEP-4671 PodGroup informer (v1alpha2, when served); the scheduler's finalizer"),
      Rule("scheduling.k8s.io", "podgroups", "status", {"patch"}, "PodGroupScheduled condition"),
      Rule("scheduling.copse.dev", "podgroups", "", {"list", "watch", "patch"},
           "copse PodGroup informer; the scheduler's finalizer"),
      Rule("scheduling.copse.dev", "podgroups", "status", {"patch"},
           "PodGroupScheduled condition and phase"),
      Rule("scheduling.copse.dev", "topologies", "", kRead, "topology levels for gang packing"),
      Rule("coordination.k8s.io", "leases", "", {"get", "create", "update"},
           "leader election (Lease kube-system/copse-scheduler by default)"),
      Rule("authentication.k8s.io", "tokenreviews", "", {"create"},
           "ops port: who holds a bearer token (delegated authentication)", kAuthDelegator),
      Rule("authorization.k8s.io", "subjectaccessreviews", "", {"create"},
           "ops port: may that user get /metrics (delegated authorization)", kAuthDelegator),
      Rule("", "configmaps", "", {"get", "list", "watch"},
           "ops port: the cluster's client CA (ConfigMap "
           "kube-system/extension-apiserver-authentication)",
           kAuthenticationReader),
  };
  return t;
}

ApiAccessTable MakeGroveTable() {
  const std::vector<std::string> kOwned = {"list", "watch", "create", "update", "delete"};
  const std::vector<std::string> kGangObject = {"get", "create", "update", "delete"};
  ApiAccessTable t;
  t.component = "copse grove";
  t.rules = {
      Rule("grove.io", "podcliquesets", "", kRead, "PodCliqueSet informer"),
      Rule("grove.io", "podcliquesets", "status", {"update"}, "PodCliqueSet status"),
      Rule("grove.io", "podcliques", "", kOwned, "PodCliques of each PodCliqueSet"),
      Rule("grove.io", "podcliques", "status", {"update"}, "PodClique status"),
      Rule("grove.io", "podcliquescalinggroups", "", kOwned, "PodCliqueScalingGroups"),
      Rule("grove.io", "podcliquescalinggroups", "status", {"update"},
           "PodCliqueScalingGroup status"),
      Rule("grove.io", "clustertopologybindings", "", kRead, "topology bindings"),
      Rule("scheduler.grove.io", "podgangs", "", kOwned, "PodGangs"),
      Rule("scheduler.grove.io", "podgangs", "status", {"update"}, "PodGang status"),
      Rule("", "pods", "", {"get", "list", "watch", "create", "update", "patch", "delete"},
           "the cliques' pods (and lifting their scheduling gate); get: the operator's own "
           "Pod, for the init container's image"),
      Rule("", "services", "", kOwned, "headless Services of PodCliqueSet replicas"),
      Rule("scheduling.copse.dev", "podgroups", "", kGangObject, "copse backend: gang objects"),
      Rule("scheduling.copse.dev", "topologies", "", {"create"},
           "copse backend: Topology from a ClusterTopologyBinding"),
      Rule("scheduling.k8s.io", "workloads", "", kGangObject,
           "kube-scheduler backend: KEP-4671 Workloads"),
      Rule("scheduling.k8s.io", "podgroups", "", kGangObject,
           "kube-scheduler backend: KEP-4671 PodGroups"),
      Rule("scheduling.run.ai", "podgroups", "", kGangObject, "KAI backend: KAI PodGroups"),
      Rule("apiextensions.k8s.io", "customresourcedefinitions", "", {"create"},
           "--install-crds: create the Grove CRDs when missing"),
      Rule("admissionregistration.k8s.io", "validatingwebhookconfigurations", "",
           {"get", "list", "watch", "create", "update"},
           "the caBundle of the webhook configuration; create: --register-webhook"),
      Rule("", "secrets", "", {"get", "list", "watch", "create", "update"},
           "the webhook's certificate Secret (copse-system/copse-grove-webhook-cert)"),
      Rule("coordination.k8s.io", "leases", "", {"get", "create", "update"},
           "--leader-elect (Lease copse-system/copse-grove by default)"),
  };
  return t;
}

std::vector<std::string_view> SplitPath(std::string_view path) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > start) parts.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

// True when the query has `key` set to "1" or "true" (kube's watch parameter).
bool QueryFlag(std::string_view query, std::string_view key) {
  size_t start = 0;
  while (start < query.size()) {
    size_t amp = query.find('&', start);
    if (amp == std::string_view::npos) amp = query.size();
    std::string_view pair = query.substr(start, amp - start);
    const size_t eq = pair.find('=');
    if (pair.substr(0, eq) == key) {
      std::string_view value = eq == std::string_view::npos ? "" : pair.substr(eq + 1);
      return value == "1" || value == "true";
    }
    start = amp + 1;
  }
  return false;
}

}  // namespace

std::string ApiAccessRule::Name() const {
  std::string out = resource;
  if (!group.empty()) out += "." + group;
  if (!subresource.empty()) out += "/" + subresource;
  return out;
}

bool ApiAccessTable::Allows(std::string_view verb, std::string_view group,
                            std::string_view resource,
                            std::string_view subresource) const noexcept {
  for (const ApiAccessRule& rule : rules) {
    if (rule.group == group && rule.resource == resource && rule.subresource == subresource &&
        std::find(rule.verbs.begin(), rule.verbs.end(), verb) != rule.verbs.end()) {
      return true;
    }
  }
  return false;
}

const ApiAccessTable& SchedulerApiAccess() {
  static const ApiAccessTable kTable = MakeSchedulerTable();
  return kTable;
}

const ApiAccessTable& GroveApiAccess() {
  static const ApiAccessTable kTable = MakeGroveTable();
  return kTable;
}

ApiRequest ClassifyApiRequest(std::string_view method, std::string_view target) {
  ApiRequest r;
  const size_t q = target.find('?');
  const std::string_view path = target.substr(0, q);
  const std::string_view query = q == std::string_view::npos ? "" : target.substr(q + 1);
  std::vector<std::string_view> parts = SplitPath(path);
  size_t at = 0;
  if (parts.size() >= 3 && parts[0] == "api") {
    r.version = parts[1];
    at = 2;
  } else if (parts.size() >= 4 && parts[0] == "apis") {
    r.group = parts[1];
    r.version = parts[2];
    at = 3;
  } else {
    r.verb = method == "GET" || method == "HEAD" ? "get" : std::string(method);
    return r;  // /version, /api, /apis/<group>/<version>, ...: non-resource
  }
  r.resource_request = true;
  std::vector<std::string_view> rest(parts.begin() + static_cast<std::ptrdiff_t>(at), parts.end());
  // As kube's RequestInfo: namespaces/<ns>/<resource>/..., except the
  // namespace's own subresources (namespaces/<ns>/status, /finalize).
  if (rest.size() >= 2 && rest[0] == "namespaces") {
    r.namespace_ = rest[1];
    if (rest.size() > 2 && rest[2] != "status" && rest[2] != "finalize") {
      rest.erase(rest.begin(), rest.begin() + 2);
    }
  }
  if (!rest.empty()) r.resource = rest[0];
  if (rest.size() >= 2) r.name = rest[1];
  if (rest.size() >= 3) r.subresource = rest[2];
  if (r.resource == "namespaces") r.namespace_.clear();
  if (method == "GET" || method == "HEAD") {
    if (QueryFlag(query, "watch")) {
      r.verb = "watch";
    } else {
      r.verb = r.name.empty() ? "list" : "get";
    }
  } else if (method == "POST") {
    r.verb = "create";
  } else if (method == "PUT") {
    r.verb = "update";
  } else if (method == "PATCH") {
    r.verb = "patch";
  } else if (method == "DELETE") {
    r.verb = r.name.empty() ? "deletecollection" : "delete";
  } else {
    r.verb = std::string(method);
  }
  return r;
}

Status CheckApiAccess(const ApiAccessTable& table, std::string_view method,
                      std::string_view target) {
  const ApiRequest r = ClassifyApiRequest(method, target);
  if (!r.resource_request || table.Allows(r.verb, r.group, r.resource, r.subresource)) {
    return Status::Ok();
  }
  ApiAccessRule wanted{r.group, r.resource, r.subresource, {}, {}};
  const std::string path(target.substr(0, target.find('?')));
  return MakeError(ErrorCode::kForbidden,
                   table.component + " may not " + r.verb + " " + wanted.Name() + " (" +
                       std::string(method) + " " + path +
                       "): the call is not in its API access table. Add it to the table in "
                       "kube/api_access.cc and to the component's role in "
                       "deploy/manifests/base, or do not make it");
}

}  // namespace copse::kube
