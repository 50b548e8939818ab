#pragma once
// The embedded Kubernetes-compatible API server behind `copse local`, the
// integration tests and the benchmarks. Served by net::Server on loopback
// only, over HTTP and HTTPS (self-signed certificate generated at start-up),
// with an optional static bearer token.
//
// Limits, as kube-apiserver has them (each refusal is a Status naming it):
//   - request bodies above max_request_body_bytes: 413, refused while the
//     body arrives (it is never read whole);
//   - JSON nested deeper than kMaxJsonDepth levels: 400, found by an
//     iterative scan before anything parses the body, whatever its
//     Content-Type; bodies within the limit are handled on threads whose
//     stack holds the handler's recursion to that depth
//     (net::ServerOptions::thread_stack_bytes);
//   - a stored object above StoreOptions::max_object_bytes: 413 (ConfigMaps and Secrets
//     meet their own 1 MiB data limit first: 422);
//   - fields of ConfigMap, Secret, Node and Pod with the wrong JSON type: 400
//     naming the field, as kube-apiserver's decoder (Node's and Pod's spec
//     and status wherever the built-in OpenAPI schema describes them).
//
// Split in two, like kube-apiserver and etcd:
//   - Store: the data (objects as JSON text, resourceVersions, watch history,
//     the registry of served resources including CRDs). Thread-safe. Outlives
//     a server: a restarted ApiServer given the same Store serves the same
//     objects, as a restarted kube-apiserver serves what is in etcd.
//   - ApiServer: the HTTP(S) front end on a Store.
//
// This header is light (no Beast, no JSON); implementation in apiserver/*.cc.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/result.h"
#include "kube/object.h"

namespace copse::apiserver {

class Store;  // apiserver/store.h

struct StoreOptions {
  // Watch events kept for resuming watches; a watch from an older
  // resourceVersion gets 410 Gone (kube-apiserver's watch cache window).
  size_t watch_history = 200000;
  std::shared_ptr<const Clock> clock;  // default: RealClock
  // Writes whose stored JSON would exceed this are refused with 413: etcd's
  // default request limit (1.5 MiB) is where kube-apiserver stops.
  size_t max_object_bytes = 1536 * 1024;
  // Non-zero: object uids come from a generator seeded with this, in the
  // order objects are created, so a replay of the same writes gets the same
  // uids (copse replay). 0: random.
  uint64_t uid_seed = 0;
  // Served versions of built-in resources instead of the built-in ones, keyed
  // "resource.group" ("poddisruptionbudgets.policy"; core: "pods"). An empty
  // list stops serving the resource. For tests of servers that lack an API:
  // {{"poddisruptionbudgets.policy", {"v1beta1"}}} serves PDBs as v1.20 does
  // (and pods/eviction then takes only policy/v1beta1 Evictions).
  std::map<std::string, std::vector<std::string>> served_versions;
  // copse's rules for its own PodGroups (scheduling.copse.dev) on create and
  // update (see ValidateForCreate in apiserver/validation.h). False: only
  // their schema is checked, as on a kube-apiserver serving copse's CRDs,
  // where the scheduler itself reports a group it cannot schedule (tests of
  // that). The Workload API's rules (scheduling.k8s.io) always hold.
  bool gang_rules = true;
};

// Creates a Store with every built-in resource registered (core/v1 pods,
// nodes, namespaces, services, events, ...; events.k8s.io, coordination,
// scheduling, policy, apiextensions), the "default", "kube-system",
// "kube-public" and "kube-node-lease" namespaces, and upstream's two system
// PriorityClasses (system-node-critical, system-cluster-critical) with no
// global default. See apiserver/store.h for the Store itself.
std::shared_ptr<Store> NewStore(StoreOptions options = {});

struct Options {
  std::string address = "127.0.0.1";  // loopback only
  uint16_t http_port = 0;             // 0: pick a free port
  uint16_t https_port = 0;            // 0: pick a free port
  bool serve_http = true;
  bool serve_https = true;
  // Authentication, as kube-apiserver's authenticators: when `token` or
  // `client_ca_pem` is set, every request (health checks aside) must present
  // "Authorization: Bearer <token>" (or <component_token>) or, over HTTPS, a
  // client certificate `client_ca_pem` signs; anything else is anonymous and
  // gets 401 (there is no authorization for system:anonymous). With neither
  // set, every request is let in.
  std::string token;
  // PEM CA(s), as kube-apiserver's --client-ca-file: HTTPS clients are asked
  // for a certificate; one they sign authenticates, one they do not sign
  // fails the TLS handshake. Empty: client certificates are not asked for.
  std::string client_ca_pem;
  // A further accepted token that the kubeconfig never carries: copse
  // local's own components, when users must present certificates (a client
  // CA and no `token`).
  std::string component_token;
  int threads = 1;               // I/O threads
  std::shared_ptr<Store> store;  // default: NewStore()
  // Test flag: fraction of pods/binding requests that fail with a 500.
  double bind_failure_rate = 0.0;
  // Test flag: pods/binding requests for pods whose name starts with this
  // (non-empty) are always rejected (403), as a policy that forbids them
  // would: their binds fail for good.
  std::string bind_reject_prefix;
  // Test flag: fraction of pods/binding requests that are applied but answered
  // with a 500, as when the reply is lost after the write (the client cannot
  // tell whether the pod was bound).
  double bind_lost_reply_rate = 0.0;
  uint64_t seed = 1;
  // Watches with allowWatchBookmarks=true get a BOOKMARK this often.
  std::chrono::milliseconds bookmark_interval{5000};
  // Request bodies above this are refused with 413 (kube-apiserver: 3 MiB,
  // `copse local --max-request-body-bytes`).
  size_t max_request_body_bytes = size_t{3} << 20;
  // A watch stream that has just written waits this long before its next
  // write, so a burst of events goes out in a few chunks instead of one
  // write (and one wake-up of the client) per event or two. The first event
  // after a quiet spell is written at once. 0: write as soon as events come.
  std::chrono::microseconds watch_write_interval{2000};
};

class ApiServer {
 public:
  static Result<std::unique_ptr<ApiServer>> Start(Options options);
  ~ApiServer();  // Stop()
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  // Closes listeners and every connection (watch streams end); idempotent.
  void Stop();
  // Ends every open watch stream (clients see a clean end of stream), as
  // kube-apiserver does when its watch timeout expires.
  void CloseWatches();

  uint16_t http_port() const;
  uint16_t https_port() const;
  std::string http_url() const;   // "http://127.0.0.1:<port>"
  std::string https_url() const;  // "https://127.0.0.1:<port>"
  // PEM of the self-signed serving certificate, which is also its own CA.
  const std::string& ca_pem() const;
  // A kubeconfig (YAML) that kubectl v1.32 and copse's client use unchanged:
  // the HTTPS endpoint, certificate-authority-data, and the token if any.
  std::string Kubeconfig(std::string_view context_name = "copse-local") const;

  Store& store();

 private:
  struct Impl;
  explicit ApiServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace copse::apiserver
