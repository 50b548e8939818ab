#include "scheduler/config/config.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include "core/duration.h"
#include "core/yaml_documents.h"
#include "plugins/defaults/defaults.h"
#include "plugins/framework/framework.h"
#include "scheduler/config/plugin_args.h"
#include "scheduler/config/yaml_reader.h"

namespace copse::scheduler::config {
namespace {

using plugins::PluginRef;
using plugins::PluginsConfig;
using plugins::PluginSet;

constexpr std::string_view kCopseOnlyHint =
    "only copse.dev/v1alpha1 CopseSchedulerConfiguration has this field";

template <typename T>
bool Implements(const plugins::Plugin& plugin) {
  return dynamic_cast<const T*>(&plugin) != nullptr;
}

// The extension points in the order of kube's Plugins struct.
struct PointSpec {
  std::string_view yaml_name;
  std::string_view display_name;  // for "does not extend <X>"
  PluginSet PluginsConfig::*member;
  bool (*implements)(const plugins::Plugin&);  // null: multiPoint
};

constexpr PointSpec kPoints[] = {
    {"multiPoint", "MultiPoint", &PluginsConfig::multi_point, nullptr},
    {"preEnqueue", "PreEnqueue", &PluginsConfig::pre_enqueue,
     &Implements<plugins::PreEnqueuePlugin>},
    {"queueSort", "QueueSort", &PluginsConfig::queue_sort, &Implements<plugins::QueueSortPlugin>},
    {"preFilter", "PreFilter", &PluginsConfig::pre_filter, &Implements<plugins::PreFilterPlugin>},
    {"filter", "Filter", &PluginsConfig::filter, &Implements<plugins::FilterPlugin>},
    {"postFilter", "PostFilter", &PluginsConfig::post_filter,
     &Implements<plugins::PostFilterPlugin>},
    {"preScore", "PreScore", &PluginsConfig::pre_score, &Implements<plugins::PreScorePlugin>},
    {"score", "Score", &PluginsConfig::score, &Implements<plugins::ScorePlugin>},
    {"reserve", "Reserve", &PluginsConfig::reserve, &Implements<plugins::ReservePlugin>},
    {"permit", "Permit", &PluginsConfig::permit, &Implements<plugins::PermitPlugin>},
    {"preBind", "PreBind", &PluginsConfig::pre_bind, &Implements<plugins::PreBindPlugin>},
    {"bind", "Bind", &PluginsConfig::bind, &Implements<plugins::BindPlugin>},
    {"postBind", "PostBind", &PluginsConfig::post_bind, &Implements<plugins::PostBindPlugin>},
};

// A user-enabled plugin at a specific point, remembered for the interface check.
struct EnabledAt {
  const PointSpec* point;
  std::string name;
  std::string path;  // profiles[i].plugins.<point>.enabled[j]
};

struct PluginConfigEntry {
  std::string name;
  std::string path;  // profiles[i].pluginConfig[j]
  std::optional<std::any> args;
  std::string kind;  // the decoder's kind ("" when none)
};

struct DecodedProfile {
  std::string path;  // profiles[i]
  std::optional<std::string> scheduler_name;
  PluginsConfig plugins;
  std::vector<EnabledAt> enabled_at;
  std::vector<PluginConfigEntry> plugin_config;
  std::optional<int32_t> percentage_of_nodes_to_score;
};

struct Decoded {
  SchedulerConfig config;
  std::vector<DecodedProfile> profiles;
  // As written, for messages ("Invalid value: 0").
  int64_t pod_initial_backoff_seconds = 1;
  int64_t pod_max_backoff_seconds = 10;
  int64_t pod_group_initial_backoff_seconds = 1;
  int64_t pod_group_max_backoff_seconds = 60;
};

class Parser {
 public:
  Parser(const plugins::Registry& registry, const ArgsDecoders& decoders)
      : registry_(registry), decoders_(decoders) {}

  Result<SchedulerConfig> Parse(std::string_view yaml);

 private:
  void DecodeTop(const YAML::Node& root, bool copse_kind);
  void DecodeClientConnection(const YAML::Node& node, const std::string& path);
  void DecodeLeaderElection(const YAML::Node& node, const std::string& path);
  void DecodeOpsServer(const YAML::Node& node, const std::string& path);
  DecodedProfile DecodeProfile(const YAML::Node& node, const std::string& path);
  void DecodePlugins(const YAML::Node& node, const std::string& path, DecodedProfile& out);
  void DecodePluginSet(const YAML::Node& node, const std::string& path, const PointSpec& point,
                       PluginSet& out, DecodedProfile& profile);
  void DecodePluginConfig(const YAML::Node& node, const std::string& path, DecodedProfile& out);
  void ValidateArgs(const PluginConfigEntry& entry);

  void Validate();
  void BuildProfiles();

  const plugins::Registry& registry_;
  const ArgsDecoders& decoders_;
  FieldErrors errors_;
  Decoded d_;
};

// "NodeResourcesFitArgs.scoringStrategy.x: msg" -> "<args path>.scoringStrategy.x: msg".
std::string ArgsErrorMessage(const std::string& args_path, std::string_view kind,
                             const std::string& message) {
  if (!kind.empty() && message.size() > kind.size() && message.compare(0, kind.size(), kind) == 0 &&
      (message[kind.size()] == '.' || message[kind.size()] == ':')) {
    return args_path + message.substr(kind.size());
  }
  return args_path + ": " + message;
}

bool ValidIp(const std::string& address) {
  unsigned char buf[sizeof(struct in6_addr)];
  return inet_pton(AF_INET, address.c_str(), buf) == 1 ||
         inet_pton(AF_INET6, address.c_str(), buf) == 1;
}

Result<SchedulerConfig> Parser::Parse(std::string_view yaml) {
  std::vector<YAML::Node> docs;
  try {
    docs = LoadYamlDocuments(yaml);
  } catch (const YAML::Exception& e) {
    std::string m = "yaml: ";
    if (!e.mark.is_null()) {
      m += "line " + std::to_string(e.mark.line + 1) + ", column " +
           std::to_string(e.mark.column + 1) + ": ";
    }
    m += e.msg;
    return MakeError(ErrorCode::kInvalid, std::move(m));
  }
  if (docs.size() > 1) {
    return MakeError(ErrorCode::kInvalid,
                     "yaml: expected one document, found " + std::to_string(docs.size()));
  }
  const YAML::Node root = docs.empty() ? YAML::Node() : docs.front();
  if (root.IsDefined() && !root.IsNull() && !root.IsMap()) {
    return MakeError(ErrorCode::kInvalid,
                     "yaml: the document must be an object" + PositionSuffix(root));
  }

  // apiVersion and kind decide which fields exist.
  std::string api_version;
  std::string kind;
  if (root.IsMap()) {
    if (YAML::Node v = root["apiVersion"]; v.IsDefined() && !v.IsNull()) {
      if (auto s = ReadString(v, "apiVersion", errors_)) api_version = *s;
    }
    if (YAML::Node k = root["kind"]; k.IsDefined() && !k.IsNull()) {
      if (auto s = ReadString(k, "kind", errors_)) kind = *s;
    }
  }
  if (!errors_.empty()) return errors_.ToError();
  bool copse_kind = false;
  if (api_version.empty()) {
    errors_.Required("apiVersion", "must be \"" + std::string(kCopseApiVersion) + "\" or \"" +
                                       std::string(kKubeSchedulerApiVersion) + "\"");
  } else if (api_version == kCopseApiVersion) {
    copse_kind = true;
    if (kind != kCopseKind) {
      if (kind.empty()) {
        errors_.Required("kind", "must be \"" + std::string(kCopseKind) + "\"");
      } else {
        errors_.NotSupported("kind", Quote(kind), {kCopseKind});
      }
    }
  } else if (api_version == kKubeSchedulerApiVersion) {
    if (kind != kKubeSchedulerKind) {
      if (kind.empty()) {
        errors_.Required("kind", "must be \"" + std::string(kKubeSchedulerKind) + "\"");
      } else {
        errors_.NotSupported("kind", Quote(kind), {kKubeSchedulerKind});
      }
    }
  } else {
    errors_.NotSupported("apiVersion", Quote(api_version),
                         {kCopseApiVersion, kKubeSchedulerApiVersion});
  }
  if (!errors_.empty()) return errors_.ToError();
  d_.config.api_version = api_version;
  d_.config.kind = kind;

  DecodeTop(root, copse_kind);
  if (!errors_.empty()) return errors_.ToError();
  Validate();
  if (!errors_.empty()) return errors_.ToError();
  BuildProfiles();
  if (!errors_.empty()) return errors_.ToError();
  return std::move(d_.config);
}

void Parser::DecodeTop(const YAML::Node& root, bool copse_kind) {
  MapReader r(root, "", errors_);
  SchedulerConfig& c = d_.config;
  r.Get("apiVersion");
  r.Get("kind");
  r.Int32("parallelism", c.parallelism);
  r.Int32("percentageOfNodesToScore", c.percentage_of_nodes_to_score);
  if (r.Int64("podInitialBackoffSeconds", d_.pod_initial_backoff_seconds)) {
    c.pod_initial_backoff = std::chrono::seconds(d_.pod_initial_backoff_seconds);
  }
  if (r.Int64("podMaxBackoffSeconds", d_.pod_max_backoff_seconds)) {
    c.pod_max_backoff = std::chrono::seconds(d_.pod_max_backoff_seconds);
  }
  if (std::optional<YAML::Node> n = r.Get("clientConnection"))
    DecodeClientConnection(*n, "clientConnection");
  if (std::optional<YAML::Node> n = r.Get("leaderElection"))
    DecodeLeaderElection(*n, "leaderElection");
  if (std::optional<YAML::Node> n = r.Get("debuggingConfiguration")) {
    MapReader dbg(*n, "debuggingConfiguration", errors_);
    dbg.Bool("enableProfiling", c.enable_profiling);
    dbg.Bool("enableContentionProfiling", c.enable_contention_profiling);
    dbg.Finish();
  }
  r.Bool("delayCacheUntilActive", c.delay_cache_until_active);
  if (std::optional<YAML::Node> n = r.Get("extenders")) {
    if (!ReadList(*n, "extenders", errors_).empty()) {
      errors_.Forbidden("extenders", "scheduler extenders are not supported by copse");
    }
  }
  if (std::optional<YAML::Node> n = r.Get("profiles")) {
    const std::vector<YAML::Node> items = ReadList(*n, "profiles", errors_);
    for (size_t i = 0; i < items.size(); ++i) {
      d_.profiles.push_back(DecodeProfile(items[i], IndexPath("profiles", i)));
    }
  }
  if (copse_kind) {
    r.Duration("podMaxInUnschedulablePodsDuration", c.pod_max_in_unschedulable_pods);
    if (r.Int64("podGroupInitialBackoffSeconds", d_.pod_group_initial_backoff_seconds)) {
      c.pod_group_initial_backoff = std::chrono::seconds(d_.pod_group_initial_backoff_seconds);
    }
    if (r.Int64("podGroupMaxBackoffSeconds", d_.pod_group_max_backoff_seconds)) {
      c.pod_group_max_backoff = std::chrono::seconds(d_.pod_group_max_backoff_seconds);
    }
    r.Duration("gangBurstWindow", c.gang_burst_window);
    r.Int32("gangBurstMaxSkips", c.gang_burst_max_skips);
    r.Duration("gangBurstPlanBudget", c.gang_burst_plan_budget);
    r.Duration("gangRecoveryTimeout", c.gang_recovery_timeout);
    if (std::optional<YAML::Node> n = r.Get("opsServer")) DecodeOpsServer(*n, "opsServer");
  } else {
    for (std::string_view key :
         {"podMaxInUnschedulablePodsDuration", "podGroupInitialBackoffSeconds",
          "podGroupMaxBackoffSeconds", "gangBurstWindow", "gangBurstMaxSkips",
          "gangBurstPlanBudget", "gangRecoveryTimeout", "opsServer"}) {
      r.Reject(key, kCopseOnlyHint);
    }
  }
  r.Finish();
}

void Parser::DecodeClientConnection(const YAML::Node& node, const std::string& path) {
  MapReader r(node, path, errors_);
  ClientConnection& cc = d_.config.client_connection;
  r.String("kubeconfig", cc.kubeconfig);
  r.String("acceptContentTypes", cc.accept_content_types);
  r.String("contentType", cc.content_type);
  r.Double("qps", cc.qps);
  r.Int32("burst", cc.burst);
  r.Int32("pipelinedConnections", cc.pipelined_connections);
  r.Finish();
}

void Parser::DecodeLeaderElection(const YAML::Node& node, const std::string& path) {
  MapReader r(node, path, errors_);
  LeaderElection& le = d_.config.leader_election;
  r.Bool("leaderElect", le.leader_elect);
  r.Duration("leaseDuration", le.lease_duration);
  r.Duration("renewDeadline", le.renew_deadline);
  r.Duration("retryPeriod", le.retry_period);
  r.String("resourceLock", le.resource_lock);
  r.String("resourceName", le.resource_name);
  r.String("resourceNamespace", le.resource_namespace);
  r.Finish();
}

void Parser::DecodeOpsServer(const YAML::Node& node, const std::string& path) {
  MapReader r(node, path, errors_);
  OpsServerConfig& ops = d_.config.ops_server;
  const auto port = [&](std::string_view key, uint16_t& out) {
    if (std::optional<YAML::Node> n = r.Get(key)) {
      if (auto value = ReadInt(*n, r.Path(key), errors_, 0, 65535)) {
        out = static_cast<uint16_t>(*value);
      }
    }
  };
  r.Bool("enabled", ops.enabled);
  r.String("bindAddress", ops.bind_address);
  port("securePort", ops.secure_port);
  r.String("tlsCertFile", ops.tls_cert_file);
  r.String("tlsPrivateKeyFile", ops.tls_private_key_file);
  port("port", ops.port);
  r.String("address", ops.address);
  if (std::optional<YAML::Node> n = r.Get("authentication")) {
    MapReader a(*n, r.Path("authentication"), errors_);
    OpsAuthenticationConfig& authn = ops.authentication;
    a.String("kubeconfig", authn.kubeconfig);
    a.String("clientCAFile", authn.client_ca_file);
    a.Bool("skipLookup", authn.skip_lookup);
    a.Bool("tolerateLookupFailure", authn.tolerate_lookup_failure);
    a.Duration("tokenCacheTTL", authn.token_cache_ttl);
    a.Finish();
  }
  if (std::optional<YAML::Node> n = r.Get("authorization")) {
    MapReader a(*n, r.Path("authorization"), errors_);
    OpsAuthorizationConfig& authz = ops.authorization;
    a.String("kubeconfig", authz.kubeconfig);
    a.StringList("alwaysAllowPaths", authz.always_allow_paths);
    a.StringList("alwaysAllowGroups", authz.always_allow_groups);
    a.Duration("allowCacheTTL", authz.allow_cache_ttl);
    a.Duration("denyCacheTTL", authz.deny_cache_ttl);
    a.Finish();
  }
  r.Finish();
}

DecodedProfile Parser::DecodeProfile(const YAML::Node& node, const std::string& path) {
  DecodedProfile out;
  out.path = path;
  MapReader r(node, path, errors_);
  std::string name;
  if (r.String("schedulerName", name)) out.scheduler_name = name;
  int32_t percentage = 0;
  if (r.Int32("percentageOfNodesToScore", percentage))
    out.percentage_of_nodes_to_score = percentage;
  if (std::optional<YAML::Node> n = r.Get("plugins")) DecodePlugins(*n, r.Path("plugins"), out);
  if (std::optional<YAML::Node> n = r.Get("pluginConfig"))
    DecodePluginConfig(*n, r.Path("pluginConfig"), out);
  r.Finish();
  return out;
}

void Parser::DecodePlugins(const YAML::Node& node, const std::string& path, DecodedProfile& out) {
  MapReader r(node, path, errors_);
  for (const PointSpec& point : kPoints) {
    if (std::optional<YAML::Node> n = r.Get(point.yaml_name)) {
      DecodePluginSet(*n, r.Path(point.yaml_name), point, out.plugins.*point.member, out);
    }
  }
  r.Finish();
}

void Parser::DecodePluginSet(const YAML::Node& node, const std::string& path,
                             const PointSpec& point, PluginSet& out, DecodedProfile& profile) {
  MapReader r(node, path, errors_);
  if (std::optional<YAML::Node> n = r.Get("enabled")) {
    const std::string list_path = r.Path("enabled");
    const std::vector<YAML::Node> items = ReadList(*n, list_path, errors_);
    std::set<std::string, std::less<>> seen;
    for (size_t i = 0; i < items.size(); ++i) {
      const std::string item_path = IndexPath(list_path, i);
      MapReader e(items[i], item_path, errors_);
      PluginRef ref;
      const bool has_name = e.String("name", ref.name) && !ref.name.empty();
      int32_t weight = 0;
      if (e.Int32("weight", weight)) {
        if (weight < 1 || weight > 100) {
          errors_.Invalid(e.Path("weight"), weight, "must be in the range [1, 100]");
        } else {
          ref.weight = weight;
        }
      }
      e.Finish();
      if (!has_name) {
        errors_.Required(e.Path("name"));
        continue;
      }
      if (ref.name == "*") {
        errors_.Invalid(e.Path("name"), Quote(ref.name), "\"*\" is only allowed in disabled");
        continue;
      }
      if (registry_.Find(ref.name) == nullptr) {
        errors_.NotFound(e.Path("name"), Quote(ref.name));
        continue;
      }
      if (!seen.insert(ref.name).second) {
        errors_.Duplicate(e.Path("name"), Quote(ref.name));
        continue;
      }
      if (point.implements != nullptr) profile.enabled_at.push_back({&point, ref.name, item_path});
      out.enabled.push_back(std::move(ref));
    }
  }
  if (std::optional<YAML::Node> n = r.Get("disabled")) {
    const std::string list_path = r.Path("disabled");
    const std::vector<YAML::Node> items = ReadList(*n, list_path, errors_);
    for (size_t i = 0; i < items.size(); ++i) {
      MapReader e(items[i], IndexPath(list_path, i), errors_);
      std::string name;
      const bool has_name = e.String("name", name) && !name.empty();
      int32_t ignored_weight = 0;
      e.Int32("weight", ignored_weight);  // kube's Plugin type has it; meaningless here
      e.Finish();
      if (!has_name) {
        errors_.Required(e.Path("name"));
        continue;
      }
      if (name != "*" && registry_.Find(name) == nullptr) {
        errors_.NotFound(e.Path("name"), Quote(name));
        continue;
      }
      out.disabled.push_back(std::move(name));
    }
  }
  r.Finish();
}

void Parser::DecodePluginConfig(const YAML::Node& node, const std::string& path,
                                DecodedProfile& out) {
  const std::vector<YAML::Node> items = ReadList(node, path, errors_);
  std::set<std::string, std::less<>> seen;
  for (size_t i = 0; i < items.size(); ++i) {
    PluginConfigEntry entry;
    entry.path = IndexPath(path, i);
    MapReader r(items[i], entry.path, errors_);
    const bool has_name = r.String("name", entry.name) && !entry.name.empty();
    std::optional<YAML::Node> args = r.Get("args");
    r.Finish();
    if (!has_name) {
      errors_.Required(r.Path("name"));
      continue;
    }
    if (registry_.Find(entry.name) == nullptr) {
      errors_.NotFound(r.Path("name"), Quote(entry.name));
      continue;
    }
    if (!seen.insert(entry.name).second) {
      errors_.Duplicate(entry.path, Quote(entry.name));
      continue;
    }
    const std::string args_path = r.Path("args");
    const ArgsDecoders::Entry* decoder = decoders_.Find(entry.name);
    if (decoder == nullptr) {
      if (args && !(args->IsMap() && args->size() == 0)) {
        errors_.Invalid(args_path, NodeRepr(*args), "plugin " + entry.name + " takes no arguments");
      }
      continue;
    }
    entry.kind = decoder->kind;
    if (!args) {
      out.plugin_config.push_back(std::move(entry));
      continue;
    }
    const size_t before = errors_.size();
    MapReader a(*args, args_path, errors_);
    std::string api_version;
    if (a.String("apiVersion", api_version) && api_version != kKubeSchedulerApiVersion &&
        api_version != kCopseApiVersion) {
      errors_.NotSupported(a.Path("apiVersion"), Quote(api_version),
                           {kKubeSchedulerApiVersion, kCopseApiVersion});
    }
    std::string kind;
    if (a.String("kind", kind) && kind != decoder->kind) {
      errors_.NotSupported(a.Path("kind"), Quote(kind), {decoder->kind});
    }
    std::any value = decoder->decode(a);
    a.Finish();
    if (errors_.size() != before) continue;
    entry.args = std::move(value);
    ValidateArgs(entry);
    out.plugin_config.push_back(std::move(entry));
  }
}

// Runs the plugin's factory on the decoded args so that its validation
// errors are reported against this pluginConfig entry.
void Parser::ValidateArgs(const PluginConfigEntry& entry) {
  const plugins::PluginFactory* factory = registry_.Find(entry.name);
  if (factory == nullptr || !entry.args) return;
  Result<std::unique_ptr<plugins::Plugin>> plugin = (*factory)(&*entry.args);
  if (!plugin.ok()) {
    errors_.Add(ArgsErrorMessage(entry.path + ".args", entry.kind, plugin.error().message));
  }
}

void Parser::Validate() {
  const SchedulerConfig& c = d_.config;
  if (c.parallelism <= 0) {
    errors_.Invalid("parallelism", c.parallelism, "should be an integer value greater than zero");
  }
  if (c.percentage_of_nodes_to_score < 0 || c.percentage_of_nodes_to_score > 100) {
    errors_.Invalid("percentageOfNodesToScore", c.percentage_of_nodes_to_score,
                    "not in valid range [0-100]");
  }
  if (d_.pod_initial_backoff_seconds <= 0) {
    errors_.Invalid("podInitialBackoffSeconds", d_.pod_initial_backoff_seconds,
                    "must be greater than 0");
  }
  if (d_.pod_max_backoff_seconds != 0 &&
      d_.pod_max_backoff_seconds < d_.pod_initial_backoff_seconds) {
    errors_.Invalid("podMaxBackoffSeconds", d_.pod_max_backoff_seconds,
                    "must be greater than or equal to PodInitialBackoffSeconds");
  }
  if (d_.pod_group_initial_backoff_seconds <= 0) {
    errors_.Invalid("podGroupInitialBackoffSeconds", d_.pod_group_initial_backoff_seconds,
                    "must be greater than 0");
  }
  if (d_.pod_group_max_backoff_seconds < d_.pod_group_initial_backoff_seconds) {
    errors_.Invalid("podGroupMaxBackoffSeconds", d_.pod_group_max_backoff_seconds,
                    "must be greater than or equal to podGroupInitialBackoffSeconds");
  }
  if (c.gang_recovery_timeout < std::chrono::nanoseconds::zero()) {
    errors_.Invalid("gangRecoveryTimeout", Quote(FormatGoDuration(c.gang_recovery_timeout)),
                    "must be greater than or equal to 0");
  }
  if (c.pod_max_in_unschedulable_pods <= std::chrono::nanoseconds::zero()) {
    errors_.Invalid("podMaxInUnschedulablePodsDuration",
                    Quote(FormatGoDuration(c.pod_max_in_unschedulable_pods)),
                    "must be greater than 0");
  }
  if (c.gang_burst_window < std::chrono::nanoseconds::zero()) {
    errors_.Invalid("gangBurstWindow", Quote(FormatGoDuration(c.gang_burst_window)),
                    "must be greater than or equal to 0");
  }
  if (c.gang_burst_plan_budget < std::chrono::nanoseconds::zero()) {
    errors_.Invalid("gangBurstPlanBudget", Quote(FormatGoDuration(c.gang_burst_plan_budget)),
                    "must be greater than or equal to 0");
  }
  if (c.gang_burst_max_skips < 0) {
    errors_.Invalid("gangBurstMaxSkips", c.gang_burst_max_skips,
                    "must be greater than or equal to 0");
  }
  if (c.client_connection.burst < 0) {
    errors_.Invalid("clientConnection.burst", c.client_connection.burst,
                    "must be greater than or equal to 0");
  }
  if (c.client_connection.pipelined_connections < 0) {
    errors_.Invalid("clientConnection.pipelinedConnections",
                    c.client_connection.pipelined_connections,
                    "must be greater than or equal to 0");
  }

  // component-base ValidateLeaderElectionConfiguration.
  const LeaderElection& le = c.leader_election;
  if (le.leader_elect) {
    const auto positive = [&](std::string_view field, std::chrono::nanoseconds d) {
      if (d <= std::chrono::nanoseconds::zero()) {
        errors_.Invalid("leaderElection." + std::string(field), Quote(FormatGoDuration(d)),
                        "must be greater than zero");
      }
    };
    positive("leaseDuration", le.lease_duration);
    positive("renewDeadline", le.renew_deadline);
    positive("retryPeriod", le.retry_period);
    if (le.lease_duration <= le.renew_deadline) {
      errors_.Invalid("leaderElection.leaseDuration", Quote(FormatGoDuration(le.lease_duration)),
                      "LeaseDuration must be greater than RenewDeadline");
    }
    // client-go: RenewDeadline must exceed JitterFactor (1.2) * RetryPeriod.
    if (le.renew_deadline.count() * 10 <= le.retry_period.count() * 12) {
      errors_.Invalid("leaderElection.renewDeadline", Quote(FormatGoDuration(le.renew_deadline)),
                      "must be greater than retryPeriod*1.2");
    }
    if (le.resource_lock != "leases") {
      errors_.NotSupported("leaderElection.resourceLock", Quote(le.resource_lock), {"leases"});
    }
    if (le.resource_name.empty()) {
      errors_.Invalid("leaderElection.resourceName", Quote(le.resource_name),
                      "resourceName is required");
    }
    if (le.resource_namespace.empty()) {
      errors_.Invalid("leaderElection.resourceNamespace", Quote(le.resource_namespace),
                      "resourceNamespace is required");
    }
  }

  if (c.ops_server.enabled) ValidateOpsServerConfig(c.ops_server, errors_);

  // Profiles: names present and unique, percentages in range.
  if (d_.profiles.size() == 1 && !d_.profiles[0].scheduler_name) {
    d_.profiles[0].scheduler_name = std::string(kDefaultSchedulerName);
  }
  std::map<std::string, size_t, std::less<>> names;
  for (size_t i = 0; i < d_.profiles.size(); ++i) {
    const DecodedProfile& p = d_.profiles[i];
    if (!p.scheduler_name || p.scheduler_name->empty()) {
      errors_.Required(p.path + ".schedulerName");
    } else if (!names.emplace(*p.scheduler_name, i).second) {
      errors_.Duplicate(p.path + ".schedulerName", Quote(*p.scheduler_name));
    }
    if (p.percentage_of_nodes_to_score &&
        (*p.percentage_of_nodes_to_score < 0 || *p.percentage_of_nodes_to_score > 100)) {
      errors_.Invalid(p.path + ".percentageOfNodesToScore", *p.percentage_of_nodes_to_score,
                      "not in valid range [0-100]");
    }
  }
}

void Parser::BuildProfiles() {
  SchedulerConfig& c = d_.config;
  if (d_.profiles.empty()) {
    DecodedProfile p;
    p.path = "profiles[0]";
    p.scheduler_name = std::string(kDefaultSchedulerName);
    d_.profiles.push_back(std::move(p));
  }
  std::vector<std::string> queue_sorts;
  for (size_t i = 0; i < d_.profiles.size(); ++i) {
    DecodedProfile& dp = d_.profiles[i];
    plugins::Profile profile = plugins::DefaultProfile(*dp.scheduler_name);
    profile.plugins = MergePlugins(profile.plugins, dp.plugins);
    for (PluginConfigEntry& e : dp.plugin_config) {
      if (e.args) profile.plugin_args[e.name] = std::move(*e.args);
    }
    profile.percentage_of_nodes_to_score =
        dp.percentage_of_nodes_to_score.value_or(c.percentage_of_nodes_to_score);

    // Each explicitly enabled plugin must implement its extension point.
    const size_t before = errors_.size();
    std::map<std::string, std::unique_ptr<plugins::Plugin>, std::less<>> instances;
    for (const EnabledAt& e : dp.enabled_at) {
      auto it = instances.find(e.name);
      if (it == instances.end()) {
        const plugins::PluginFactory* factory = registry_.Find(e.name);
        const std::any* args = nullptr;
        if (auto a = profile.plugin_args.find(e.name); a != profile.plugin_args.end())
          args = &a->second;
        Result<std::unique_ptr<plugins::Plugin>> created =
            factory != nullptr ? (*factory)(args)
                               : Result<std::unique_ptr<plugins::Plugin>>(
                                     MakeError(ErrorCode::kNotFound, "no factory"));
        it = instances.emplace(e.name, created.ok() ? std::move(*created) : nullptr).first;
      }
      if (it->second && !e.point->implements(*it->second)) {
        errors_.Invalid(e.path + ".name", Quote(e.name),
                        "plugin does not extend " + std::string(e.point->display_name));
      }
    }
    if (errors_.size() == before) {
      Result<std::unique_ptr<plugins::Framework>> fw =
          plugins::Framework::Create(registry_, profile);
      if (!fw.ok()) {
        errors_.Add(dp.path + ": " + fw.error().message);
      } else {
        std::string qs;
        for (const std::string& n : (*fw)->PluginNames(plugins::ExtensionPoint::kQueueSort)) {
          if (!qs.empty()) qs += ",";
          qs += n;
        }
        queue_sorts.push_back(qs);
        // kube's validateCommonQueueSort: one queue for all profiles.
        if (queue_sorts.size() > 1 && qs != queue_sorts.front()) {
          errors_.Invalid(dp.path + ".plugins.queueSort", Quote(qs),
                          "must be the same for all profiles");
        }
      }
    }
    c.profiles.push_back(std::move(profile));
  }
}

// kube-scheduler's mergePluginSet.
PluginSet MergePluginSet(const PluginSet& defaults, const PluginSet& custom) {
  PluginSet out;
  std::set<std::string, std::less<>> disabled;
  for (const std::string& name : custom.disabled) {
    out.disabled.push_back(name);
    disabled.insert(name);
  }
  for (const std::string& name : defaults.disabled) {
    if (disabled.insert(name).second) out.disabled.push_back(name);
  }
  std::map<std::string, size_t, std::less<>> custom_index;
  for (size_t i = 0; i < custom.enabled.size(); ++i)
    custom_index.emplace(custom.enabled[i].name, i);
  std::set<size_t> replaced;
  if (disabled.count("*") == 0) {
    for (const PluginRef& ref : defaults.enabled) {
      if (disabled.count(ref.name) != 0) continue;
      if (auto it = custom_index.find(ref.name); it != custom_index.end()) {
        out.enabled.push_back(custom.enabled[it->second]);
        replaced.insert(it->second);
      } else {
        out.enabled.push_back(ref);
      }
    }
  }
  for (size_t i = 0; i < custom.enabled.size(); ++i) {
    if (replaced.count(i) == 0) out.enabled.push_back(custom.enabled[i]);
  }
  return out;
}

}  // namespace

const plugins::Profile* SchedulerConfig::FindProfile(
    std::string_view scheduler_name) const noexcept {
  for (const plugins::Profile& p : profiles) {
    if (p.scheduler_name == scheduler_name) return &p;
  }
  return nullptr;
}

SchedulerConfig DefaultSchedulerConfig() {
  SchedulerConfig c;
  c.profiles.push_back(plugins::DefaultProfile(std::string(kDefaultSchedulerName)));
  c.profiles.back().percentage_of_nodes_to_score = c.percentage_of_nodes_to_score;
  return c;
}

plugins::PluginsConfig MergePlugins(const plugins::PluginsConfig& defaults,
                                    const plugins::PluginsConfig& custom) {
  PluginsConfig out;
  for (const PointSpec& point : kPoints) {
    out.*point.member = MergePluginSet(defaults.*point.member, custom.*point.member);
  }
  return out;
}

Result<SchedulerConfig> ParseSchedulerConfig(std::string_view yaml,
                                             const plugins::Registry& registry) {
  return ParseSchedulerConfig(yaml, registry, DefaultArgsDecoders());
}

Result<SchedulerConfig> ParseSchedulerConfig(std::string_view yaml,
                                             const plugins::Registry& registry,
                                             const ArgsDecoders& decoders) {
  Parser parser(registry, decoders);
  return parser.Parse(yaml);
}

Result<SchedulerConfig> LoadSchedulerConfigFile(const std::string& path,
                                                const plugins::Registry& registry) {
  std::error_code fs_error;
  if (std::filesystem::is_directory(path, fs_error)) {
    return MakeError(ErrorCode::kInvalid, "config file " + path + ": is a directory");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    return MakeError(err == ENOENT ? ErrorCode::kNotFound : ErrorCode::kInvalid,
                     "config file " + path + ": " + std::strerror(err));
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) {
    return MakeError(ErrorCode::kInvalid, "config file " + path + ": read error");
  }
  Result<SchedulerConfig> parsed = ParseSchedulerConfig(buf.str(), registry);
  if (!parsed.ok()) {
    Error e = std::move(parsed).error();
    e.message = path + ": " + e.message;
    return e;
  }
  return parsed;
}

void ValidateOpsServerConfig(const OpsServerConfig& ops, FieldErrors& errors,
                             const std::function<std::string(std::string_view field)>& name) {
  const auto field = [&](std::string_view f) {
    return name ? name(f) : "opsServer." + std::string(f);
  };
  for (auto [key, address] :
       {std::pair<std::string_view, const std::string*>{"bindAddress", &ops.bind_address},
        {"address", &ops.address}}) {
    if (key == "address" && ops.port == 0) continue;  // plain HTTP is off
    if (!ValidIp(*address)) {
      errors.Invalid(field(key), Quote(*address), "must be an IPv4 or IPv6 address");
    }
  }
  if (ops.port != 0 && ops.port == ops.secure_port) {
    errors.Invalid(field("port"), ops.port,
                   "must differ from " + field("securePort") + " (plain HTTP and HTTPS)");
  }
  if (ops.tls_cert_file.empty() != ops.tls_private_key_file.empty()) {
    const bool key_missing = ops.tls_private_key_file.empty();
    errors.Required(field(key_missing ? "tlsPrivateKeyFile" : "tlsCertFile"),
                    std::string("must be given with ") +
                        field(key_missing ? "tlsCertFile" : "tlsPrivateKeyFile"));
  }
  const std::vector<std::string>& paths = ops.authorization.always_allow_paths;
  for (size_t i = 0; i < paths.size(); ++i) {
    const size_t star = paths[i].find('*');
    if (paths[i].empty()) {
      errors.Invalid(IndexPath(field("authorization.alwaysAllowPaths"), i), Quote(paths[i]),
                     "must not be empty");
    } else if (star != std::string::npos && star + 1 != paths[i].size()) {
      errors.Invalid(IndexPath(field("authorization.alwaysAllowPaths"), i), Quote(paths[i]),
                     "only a trailing * is allowed");
    }
  }
  for (auto [key, ttl] : {std::pair<std::string_view, std::chrono::nanoseconds>{
                              "authentication.tokenCacheTTL", ops.authentication.token_cache_ttl},
                          {"authorization.allowCacheTTL", ops.authorization.allow_cache_ttl},
                          {"authorization.denyCacheTTL", ops.authorization.deny_cache_ttl}}) {
    if (ttl < std::chrono::nanoseconds::zero()) {
      errors.Invalid(field(key), Quote(FormatGoDuration(ttl)), "must not be negative");
    }
  }
}

}  // namespace copse::scheduler::config
