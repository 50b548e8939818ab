#pragma once
// Where and how to reach an API server: the connection and credential part of
// client-go's rest.Config, loaded from a kubeconfig (YAML) or from the
// in-cluster service-account files, plus the client's transport tuning.
//
//   auto config = LoadKubeconfig(yaml_text);                 // current-context
//   auto config = LoadKubeconfigFile("/path/kubeconfig", {.context = "prod"});
//   auto config = LoadDefaultKubeconfig();                   // $KUBECONFIG or ~/.kube/config
//   auto config = LoadInClusterConfig();                     // pod service account
//
// Supported kubeconfig fields: current-context; clusters[].cluster.{server,
// certificate-authority, certificate-authority-data, insecure-skip-tls-verify,
// tls-server-name}; users[].user.{token, tokenFile, client-certificate,
// client-certificate-data, client-key, client-key-data, username, password,
// exec}; contexts[].context.{cluster, user, namespace}. Relative file paths
// (and an exec command with a '/') are resolved against the kubeconfig's
// directory, as kubectl does. users[].user.exec is a client-go credential
// plugin (kube/exec_credential.h); the legacy auth-provider is rejected with
// kInvalid.
//
// Errors are kInvalid and name the field, e.g. `kubeconfig: context "x" not
// found`, `users[0].user.client-key-data: invalid base64`; unreadable files
// are kNotFound (missing) or kInvalid, naming the field and the path.
//
// Thread-safety: pure functions of their inputs (and the files they read).

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/result.h"

namespace copse::kube {

struct ApiAccessTable;  // kube/api_access.h

// The pipelined connections copse's own components (the scheduler, by
// default, and the Grove operator) use for their writes.
inline constexpr size_t kCopsePipelinedConnections = 2;

// users[].user.exec: a client-go credential plugin, run to obtain a bearer
// token (kube/exec_credential.h runs it). Field names follow kubeconfig's.
struct ExecConfig {
  std::string command;  // a name looked up in $PATH, or a path
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  // added to copse's environment
  // client.authentication.k8s.io/v1 or v1beta1: what the plugin is asked
  // for and must answer with.
  std::string api_version;
  std::string install_hint;  // shown when the command cannot be run
  // Pass the cluster (server, CA, TLS settings) to the plugin in
  // KUBERNETES_EXEC_INFO, as GKE's and AKS's plugins may ask for.
  bool provide_cluster_info = false;
  // Never or IfAvailable (copse never has a terminal to offer, so both run
  // the plugin non-interactively); Always is rejected when loading. Required
  // for v1, IfAvailable by default for v1beta1.
  std::string interactive_mode = "IfAvailable";
  std::string user;  // the kubeconfig user's name, for error messages
};

struct ClientConfig {
  // "https://host:port" or "http://host:port", optionally with a path prefix
  // ("https://proxy/k8s/cluster1"). IPv6 hosts in brackets.
  std::string server;

  // TLS. An empty ca_pem with TLS verification on uses the system trust store.
  std::string ca_pem;           // one or more PEM certificates
  std::string client_cert_pem;  // client-certificate authentication (chain allowed)
  std::string client_key_pem;
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;  // overrides SNI and the name the certificate must carry

  // Authentication (at most one of token and username/password is used; a
  // token wins). When token_file is set the token is read from it and re-read
  // every token_file_refresh, as client-go does for rotated service-account tokens.
  std::string token;
  std::string token_file;
  std::chrono::seconds token_file_refresh{60};
  std::string username;
  std::string password;
  // A credential plugin that supplies the bearer token (then token,
  // token_file, username and password are empty).
  std::optional<ExecConfig> exec;

  // The context's namespace ("default" when it names none).
  std::string namespace_ = "default";

  // Transport tuning (not from kubeconfig).
  double qps = 0;  // client-side rate limit: requests per second; 0 = unlimited
  int burst = 0;   // token-bucket depth; treated as 1 when qps > 0 and burst < 1
  std::chrono::milliseconds timeout{30'000};  // default deadline of every request
  size_t max_connections =
      16;  // pooled keep-alive connections (watches not counted); 0 = unlimited
  std::chrono::seconds idle_connection_timeout{
      60};  // idle pooled connections older than this are closed
  // Writes (every verb but GET) are pipelined (HTTP/1.1) over at most this
  // many pooled connections at once: whatever is queued goes out in one
  // write and the responses are read back in order. 0 = off (one request
  // per connection at a time).
  size_t pipelined_connections = 0;
  std::string user_agent = "copse";
  // Expiry of exec plugin credentials is judged on this clock's WallNow().
  // Default (null): RealClock.
  std::shared_ptr<const Clock> clock;
  // When set, the client refuses (kForbidden, before sending) every request
  // the component's table does not list (kube/api_access.h). Not owned: the
  // tables there are static.
  const ApiAccessTable* api_access = nullptr;
};

struct KubeconfigOptions {
  std::string context;   // empty: current-context
  std::string base_dir;  // relative paths resolve against it (LoadKubeconfigFile sets it)
};

// Parses kubeconfig YAML text and resolves the selected context.
Result<ClientConfig> LoadKubeconfig(std::string_view yaml, const KubeconfigOptions& options = {});

// Reads and parses a kubeconfig file; relative paths in it resolve against its directory.
Result<ClientConfig> LoadKubeconfigFile(const std::string& path,
                                        const KubeconfigOptions& options = {});

// Environment lookup used by the loaders (default: std::getenv). Returns
// nullopt for unset variables.
using GetEnvFunction = std::function<std::optional<std::string>(const char* name)>;

// $KUBECONFIG if set (for a colon-separated list, the first non-empty entry),
// else $HOME/.kube/config.
Result<ClientConfig> LoadDefaultKubeconfig(const KubeconfigOptions& options = {},
                                           const GetEnvFunction& getenv = {});

// The pod's service account: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT,
// the token (re-read periodically, see ClientConfig::token_file), the CA and
// the pod's namespace. Paths and the environment are injectable for tests.
struct InClusterOptions {
  std::string token_path = "/var/run/secrets/kubernetes.io/serviceaccount/token";
  std::string ca_path = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
  std::string namespace_path = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";
  GetEnvFunction getenv;  // default: std::getenv
};
Result<ClientConfig> LoadInClusterConfig(const InClusterOptions& options = {});

// Standard base64 (RFC 4648, padding optional, whitespace ignored). Errors are
// kInvalid "invalid base64".
Result<std::string> DecodeBase64(std::string_view text);
std::string EncodeBase64(std::string_view data);

}  // namespace copse::kube
