#pragma once
// The scheduler's configuration file, in the spirit of kube-scheduler's
// KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1).
//
// Accepted documents:
//   apiVersion: kubescheduler.config.k8s.io/v1   kind: KubeSchedulerConfiguration
//   apiVersion: copse.dev/v1alpha1               kind: CopseSchedulerConfiguration
// The copse kind accepts every kube field plus copse's own
// (podMaxInUnschedulablePodsDuration, podGroupInitialBackoffSeconds,
// podGroupMaxBackoffSeconds, gangBurstWindow, gangBurstMaxSkips, gangRecoveryTimeout, opsServer);
// under the kube kind those are unknown fields.
//
// Parsing (ParseSchedulerConfig):
//   1. YAML syntax: errors carry line and column.
//   2. Strict decoding (yaml_reader.h): unknown or repeated fields and
//      mistyped values are errors naming the field path.
//   3. Profiles: none given -> one profile "copse-scheduler". Each profile
//      starts from plugins::DefaultProfile(schedulerName) and merges the
//      user's plugins exactly as kube-scheduler's mergePlugins does, per
//      extension point (MergePlugins below). pluginConfig args are decoded
//      into the plugins' Args structs (plugin_args.h) and stored in
//      Profile::plugin_args. A profile without its own
//      percentageOfNodesToScore takes the top-level one.
//   4. Validation, reporting every problem as kube's field errors do
//      (field_errors.h), e.g.
//        profiles[1].schedulerName: Duplicate value: "copse-scheduler"
//        profiles[0].plugins.score.enabled[2].weight: Invalid value: 0:
//            must be in the range [1, 100]
//        percentageOfNodesToScore: Invalid value: 120: not in valid range [0-100]
//        profiles[0].plugins.filter.enabled[0].name: Not found: "Foo"
//      Plugin names are checked against the Registry; every pluginConfig
//      entry is run through its plugin's factory and every profile through
//      plugins::Framework::Create, so plugin-argument errors surface here
//      (e.g. "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: ...").
//
// Bad input changes nothing: on error no SchedulerConfig is produced.
//
// Thread-safety: the functions are reentrant; SchedulerConfig is a value type.

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "kube/kubeconfig.h"
#include "plugins/framework/profile.h"
#include "plugins/framework/registry.h"
#include "scheduler/config/field_errors.h"

namespace copse::scheduler::config {

class ArgsDecoders;  // plugin_args.h

inline constexpr std::string_view kKubeSchedulerApiVersion = "kubescheduler.config.k8s.io/v1";
inline constexpr std::string_view kKubeSchedulerKind = "KubeSchedulerConfiguration";
inline constexpr std::string_view kCopseApiVersion = "copse.dev/v1alpha1";
inline constexpr std::string_view kCopseKind = "CopseSchedulerConfiguration";
inline constexpr std::string_view kDefaultSchedulerName = "copse-scheduler";

// clientConnection: how the scheduler talks to the API server.
struct ClientConnection {
  std::string kubeconfig;  // empty: --kubeconfig / in-cluster
  std::string accept_content_types;
  std::string content_type = "application/json";
  // Client-side rate limit (kube/rate_limiter.h); <= 0: unlimited. kube's
  // default is 50/100; copse binds 20,000 pods/s, so it defaults far higher.
  double qps = 5000;
  int32_t burst = 10000;
  // copse extension: writes (binds, status patches, events) are pipelined
  // over at most this many connections (kube/client.h); 0 = off.
  int32_t pipelined_connections = static_cast<int32_t>(kube::kCopsePipelinedConnections);
};

// leaderElection (component-base LeaderElectionConfiguration; Lease lock only).
struct LeaderElection {
  bool leader_elect = true;
  std::chrono::nanoseconds lease_duration = std::chrono::seconds(15);
  std::chrono::nanoseconds renew_deadline = std::chrono::seconds(10);
  std::chrono::nanoseconds retry_period = std::chrono::seconds(2);
  std::string resource_lock = "leases";
  std::string resource_name = "copse-scheduler";
  std::string resource_namespace = "kube-system";
};

// opsServer.authentication: who a client of the ops port is, asked of the
// API server (delegated_auth.h); kube-scheduler's flag in brackets.
struct OpsAuthenticationConfig {
  // A kubeconfig allowed to create TokenReviews and read the client CA
  // ConfigMap [--authentication-kubeconfig]; empty: the scheduler's own
  // connection (kube-scheduler: the in-cluster one).
  std::string kubeconfig;
  // Client certificates are verified against this CA bundle
  // [--client-ca-file]; empty: against the cluster's client CA, from the
  // ConfigMap kube-system/extension-apiserver-authentication, unless
  // skip_lookup [--authentication-skip-lookup].
  std::string client_ca_file;
  bool skip_lookup = false;
  // Start even when that ConfigMap cannot be read (kube-scheduler's
  // default) [--authentication-tolerate-lookup-failure].
  bool tolerate_lookup_failure = true;
  // TokenReview answers are kept this long [--authentication-token-webhook-cache-ttl].
  std::chrono::nanoseconds token_cache_ttl = std::chrono::seconds(10);
};

// opsServer.authorization: what a client may read, asked of the API server.
struct OpsAuthorizationConfig {
  // A kubeconfig allowed to create SubjectAccessReviews
  // [--authorization-kubeconfig]; empty: the scheduler's own connection.
  std::string kubeconfig;
  // Paths served to anyone, even without credentials
  // [--authorization-always-allow-paths]; an entry ending in "*" is a prefix.
  std::vector<std::string> always_allow_paths = {"/healthz", "/readyz", "/livez"};
  // Groups allowed everything without asking (kube's system:masters).
  std::vector<std::string> always_allow_groups = {"system:masters"};
  // [--authorization-webhook-cache-authorized-ttl / -unauthorized-ttl]
  std::chrono::nanoseconds allow_cache_ttl = std::chrono::seconds(10);
  std::chrono::nanoseconds deny_cache_ttl = std::chrono::seconds(10);
};

// opsServer (copse kind only): /healthz, /livez, /readyz and /metrics, served
// as kube-scheduler serves its own (ops_server.h): HTTPS on securePort, with
// /metrics for those the API server says may get it; plain HTTP, without
// authentication, only when `port` is set.
struct OpsServerConfig {
  bool enabled = true;
  // HTTPS [--bind-address, --secure-port]; securePort 0 picks a free port
  // (kube-scheduler turns HTTPS off with 0; here `enabled: false` does).
  std::string bind_address = "0.0.0.0";
  uint16_t secure_port = 10259;
  // The serving certificate and key, PEM files [--tls-cert-file,
  // --tls-private-key-file], re-read when they change; both empty: a
  // self-signed certificate made in memory at start.
  std::string tls_cert_file;
  std::string tls_private_key_file;
  // Plain HTTP without authentication [--port, --address]: 0 is off.
  uint16_t port = 0;
  std::string address = "127.0.0.1";
  OpsAuthenticationConfig authentication;
  OpsAuthorizationConfig authorization;
};

// Checks an opsServer section (also after flags changed it): addresses,
// ports that differ, certificate and key given together, always-allowed
// paths, durations not negative. `name` spells a field ("securePort") in the
// errors; default "opsServer.securePort".
void ValidateOpsServerConfig(const OpsServerConfig& ops, FieldErrors& errors,
                             const std::function<std::string(std::string_view field)>& name = {});

struct SchedulerConfig {
  // As read (the copse ones when defaulted).
  std::string api_version = std::string(kCopseApiVersion);
  std::string kind = std::string(kCopseKind);

  // Fully merged profiles, ready for plugins::Framework::Create.
  std::vector<plugins::Profile> profiles;
  // 0: adaptive (kube's default). Profiles that set none carry this value.
  int32_t percentage_of_nodes_to_score = 0;
  // Worker threads for filtering and scoring.
  int32_t parallelism = 16;

  // Queue backoff (podInitialBackoffSeconds / podMaxBackoffSeconds; a max of
  // 0 disables backoff, as the queue documents).
  std::chrono::nanoseconds pod_initial_backoff = std::chrono::seconds(1);
  std::chrono::nanoseconds pod_max_backoff = std::chrono::seconds(10);
  // How long a pod may sit in the unschedulable pool before it is retried anyway.
  std::chrono::nanoseconds pod_max_in_unschedulable_pods = std::chrono::minutes(5);
  // Backoff of a whole pod group (gang) after a failed Workload Scheduling Cycle.
  std::chrono::nanoseconds pod_group_initial_backoff = std::chrono::seconds(1);
  std::chrono::nanoseconds pod_group_max_backoff = std::chrono::seconds(60);
  // Choosing among queued gangs (SchedulerOptions::gang_burst_window): 0 is off.
  std::chrono::nanoseconds gang_burst_window = std::chrono::nanoseconds::zero();
  int32_t gang_burst_max_skips = 3;
  // SchedulerOptions::gang_burst_plan_budget: 0 turns the exact plan off.
  std::chrono::nanoseconds gang_burst_plan_budget = std::chrono::milliseconds(5);
  // copse: a gang bound below its minimum this long is evicted and placed
  // again whole (gangRecoveryTimeout, a duration such as "60s"; 0: never).
  std::chrono::nanoseconds gang_recovery_timeout = std::chrono::seconds(60);

  ClientConnection client_connection;
  LeaderElection leader_election;
  OpsServerConfig ops_server;
  // kube's delayCacheUntilActive: start informers only once leader.
  bool delay_cache_until_active = false;
  // debuggingConfiguration, accepted for compatibility (copse serves no pprof).
  bool enable_profiling = true;
  bool enable_contention_profiling = true;

  // The profile serving `scheduler_name`, or null.
  const plugins::Profile* FindProfile(std::string_view scheduler_name) const noexcept;
};

// The configuration used when no file is given: every default above and one
// default profile named copse-scheduler.
SchedulerConfig DefaultSchedulerConfig();

// Parses and validates a configuration document; `registry` lists the plugins
// that exist (plugins::RegisterDefaultPlugins and any others). kInvalid with
// every problem found, each naming its field.
Result<SchedulerConfig> ParseSchedulerConfig(std::string_view yaml,
                                             const plugins::Registry& registry);
// The same with argument decoders for plugins beyond the in-tree ones.
Result<SchedulerConfig> ParseSchedulerConfig(std::string_view yaml,
                                             const plugins::Registry& registry,
                                             const ArgsDecoders& decoders);

// Reads `path` and parses it; kNotFound / kInvalid when the file cannot be
// read, with the path in the message; parse errors are prefixed "<path>: ".
Result<SchedulerConfig> LoadSchedulerConfigFile(const std::string& path,
                                                const plugins::Registry& registry);

// kube-scheduler's mergePlugins: per extension point, the user's disabled
// names (and "*") are kept, default entries not disabled stay in their order
// (an entry the user also enables is replaced in place by the user's, e.g.
// to change a weight), then the user's other entries are appended.
plugins::PluginsConfig MergePlugins(const plugins::PluginsConfig& defaults,
                                    const plugins::PluginsConfig& custom);

}  // namespace copse::scheduler::config
