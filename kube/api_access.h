#pragma once
// The API calls each copse component makes, as RBAC sees them: resource
// (group and plural; any version), subresource and verbs. One table per
// component: `copse run` (the scheduler) and `copse grove` (the Grove
// operator).
//
// The tables are authoritative:
//   - a Client given a table (ClientConfig::api_access) refuses every request
//     the table does not list, before sending it, with an error that names
//     the verb and resource and says where to add it;
//   - `copse run`, `copse grove` and their integration test harnesses set it,
//     so a new call without an entry fails the existing tests;
//   - deploy/manifests' ClusterRoles (and Roles) grant exactly the table:
//     tests/unit/deploy renders them and checks both directions. An entry
//     with `granted_by` is granted instead by a role every cluster has
//     (RBAC's bootstrap policy), which the manifests bind the component to.
// A new API call therefore needs a line here and a rule in the component's
// role in deploy/manifests/base/<component>/rbac.yaml (or a binding to the
// built-in role that grants it).
//
// Discovery (/api, /apis, /version, ...) is read by every component; RBAC
// grants it to every authenticated user (system:discovery), so it is not in
// the tables and not in the roles.
//
// Thread-safety: tables are immutable; the functions are pure.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace copse::kube {

struct ApiAccessRule {
  std::string group;        // "" for the core group
  std::string resource;     // plural, e.g. "pods"
  std::string subresource;  // "" or e.g. "status", "binding"
  std::vector<std::string>
      verbs;        // RBAC verbs: get list watch create update patch delete deletecollection
  std::string why;  // what the component does with it
  // "": a role of the component's own in deploy/manifests grants it; else
  // the built-in role that does, bound to the component by the manifests:
  // "ClusterRole system:auth-delegator" or
  // "Role kube-system/extension-apiserver-authentication-reader".
  std::string granted_by;

  // "pods/binding", "podgroups.scheduling.copse.dev/status": RBAC's resource
  // name with the group, as `kubectl auth can-i` spells it.
  std::string Name() const;
};

struct ApiAccessTable {
  std::string component;  // "copse run"
  std::vector<ApiAccessRule> rules;

  bool Allows(std::string_view verb, std::string_view group, std::string_view resource,
              std::string_view subresource) const noexcept;
};

// `copse run`: informers, binds, status, events, preemption, the Lease, and
// the ops port's delegated authentication and authorization.
const ApiAccessTable& SchedulerApiAccess();
// `copse grove`: the Grove controllers, every scheduler backend's gang
// objects, optional CRD installation and webhook registration.
const ApiAccessTable& GroveApiAccess();

// A request classified as kube-apiserver's RequestInfo does for RBAC.
struct ApiRequest {
  bool resource_request = false;  // false: a non-resource URL (/version, /api, /healthz)
  std::string verb;               // RBAC verb ("get", "list", "watch", "create", ...)
  std::string group;
  std::string version;
  std::string namespace_;
  std::string resource;
  std::string name;
  std::string subresource;
};

// `method` is the HTTP method ("GET", ...); `target` the path and query below
// the server URL ("/api/v1/namespaces/a/pods?watch=1"). Paths that are not
// under /api/v1 or /apis/<group>/<version>/... are non-resource requests.
ApiRequest ClassifyApiRequest(std::string_view method, std::string_view target);

// Ok when `table` lists the request (non-resource requests always pass);
// otherwise kForbidden naming the verb, resource and the table.
Status CheckApiAccess(const ApiAccessTable& table, std::string_view method,
                      std::string_view target);

}  // namespace copse::kube
