// `copse run`: the scheduler against any API server, as a second scheduler
// next to kube-scheduler. Reads a kubeconfig (or the in-cluster service
// account) and an optional config file (scheduler/config/config.h), serves
// /healthz, /livez, /readyz and /metrics as kube-scheduler does (HTTPS on
// 10259, /metrics for whom the API server authorizes; kube-scheduler's flags
// for it, which override the config's opsServer section), and schedules
// only while it holds the leader Lease. Losing the lease exits with status 1
// (as kube-scheduler does) so that the Deployment restarts it as a follower.
#include <signal.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <thread>

#include "cmd/copse/commands.h"
#include "core/duration.h"
#include "core/log.h"
#include "kube/api_access.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "kube/leader_election.h"
#include "plugins/defaults/defaults.h"
#include "plugins/framework/registry.h"
#include "scheduler/config/config.h"
#include "scheduler/config/metrics.h"
#include "scheduler/config/ops_endpoint.h"
#include "scheduler/options_from_config.h"
#include "scheduler/scheduler.h"

namespace copse::cmd {
using namespace copse::scheduler;  // the commands wire the scheduler library together
namespace po = boost::program_options;

namespace {

// kube-scheduler's flags for the ops port, each the override of an
// opsServer field (config.h); errors about a field a flag set name the flag.
struct OpsFlags {
  std::map<std::string, std::string, std::less<>> flag_of_field;  // set by a flag

  std::string Name(std::string_view field) const {
    auto it = flag_of_field.find(field);
    return it != flag_of_field.end() ? it->second : "opsServer." + std::string(field);
  }
};

// Applies the ops port's flags given on the command line to `ops`.
Status ApplyOpsFlags(const po::variables_map& vm, config::OpsServerConfig& ops, OpsFlags& flags) {
  const auto port = [&](const char* flag, const char* field, uint16_t& out) -> Status {
    if (!vm.count(flag)) return Status::Ok();
    const int value = vm[flag].as<int>();
    if (value < 0 || value > 65535) {
      return MakeError(ErrorCode::kInvalid,
                       std::string("--") + flag + ": must be between 0 and 65535");
    }
    out = static_cast<uint16_t>(value);
    flags.flag_of_field[field] = std::string("--") + flag;
    return Status::Ok();
  };
  const auto text = [&](const char* flag, const char* field, std::string& out) {
    if (!vm.count(flag)) return;
    out = vm[flag].as<std::string>();
    flags.flag_of_field[field] = std::string("--") + flag;
  };
  const auto boolean = [&](const char* flag, const char* field, bool& out) {
    if (!vm.count(flag)) return;
    out = vm[flag].as<bool>();
    flags.flag_of_field[field] = std::string("--") + flag;
  };
  const auto duration = [&](const char* flag, const char* field,
                            std::chrono::nanoseconds& out) -> Status {
    if (!vm.count(flag)) return Status::Ok();
    auto parsed = ParseGoDuration(vm[flag].as<std::string>());
    if (!parsed.ok()) {
      return MakeError(ErrorCode::kInvalid,
                       std::string("--") + flag + ": " + parsed.error().message);
    }
    out = *parsed;
    flags.flag_of_field[field] = std::string("--") + flag;
    return Status::Ok();
  };
  if (Status s = port("secure-port", "securePort", ops.secure_port); !s.ok()) return s;
  if (Status s = port("port", "port", ops.port); !s.ok()) return s;
  text("bind-address", "bindAddress", ops.bind_address);
  text("address", "address", ops.address);
  text("tls-cert-file", "tlsCertFile", ops.tls_cert_file);
  text("tls-private-key-file", "tlsPrivateKeyFile", ops.tls_private_key_file);
  text("authentication-kubeconfig", "authentication.kubeconfig", ops.authentication.kubeconfig);
  text("client-ca-file", "authentication.clientCAFile", ops.authentication.client_ca_file);
  boolean("authentication-skip-lookup", "authentication.skipLookup",
          ops.authentication.skip_lookup);
  boolean("authentication-tolerate-lookup-failure", "authentication.tolerateLookupFailure",
          ops.authentication.tolerate_lookup_failure);
  if (Status s = duration("authentication-token-webhook-cache-ttl", "authentication.tokenCacheTTL",
                          ops.authentication.token_cache_ttl);
      !s.ok()) {
    return s;
  }
  text("authorization-kubeconfig", "authorization.kubeconfig", ops.authorization.kubeconfig);
  if (vm.count("authorization-always-allow-paths")) {
    // A comma-separated list, as kube's string slices; "" allows none.
    ops.authorization.always_allow_paths.clear();
    const std::string list = vm["authorization-always-allow-paths"].as<std::string>();
    for (size_t start = 0; start < list.size();) {
      size_t comma = list.find(',', start);
      if (comma == std::string::npos) comma = list.size();
      ops.authorization.always_allow_paths.push_back(list.substr(start, comma - start));
      start = comma + 1;
    }
    flags.flag_of_field["authorization.alwaysAllowPaths"] = "--authorization-always-allow-paths";
  }
  if (Status s = duration("authorization-webhook-cache-authorized-ttl",
                          "authorization.allowCacheTTL", ops.authorization.allow_cache_ttl);
      !s.ok()) {
    return s;
  }
  if (Status s = duration("authorization-webhook-cache-unauthorized-ttl",
                          "authorization.denyCacheTTL", ops.authorization.deny_cache_ttl);
      !s.ok()) {
    return s;
  }
  return Status::Ok();
}

}  // namespace

int RunRun(int argc, char** argv) {
  std::string kubeconfig;
  bool in_cluster = false;
  std::string config_path;
  bool no_leader_elect = false;
  int verbosity = 0;

  po::options_description desc("copse run (--kubeconfig FILE | --in-cluster) [flags]");
  desc.add_options()("help,h", "show this help")("kubeconfig", po::value(&kubeconfig),
                                                 "kubeconfig of the cluster to schedule")(
      "in-cluster", po::bool_switch(&in_cluster), "use the pod's service account")(
      "config", po::value(&config_path), "scheduler configuration file (YAML)")(
      "no-leader-elect", po::bool_switch(&no_leader_elect),
      "schedule without taking the leader Lease (a single replica only)")(
      "v,v", po::value(&verbosity)->default_value(verbosity),
      "log verbosity, as klog's -v (0 what an operator always wants, 1 actions, 2 details)");
  po::options_description ops_desc(
      "The ops port (/healthz, /livez, /readyz, /metrics), with kube-scheduler's flags; each "
      "overrides the config's opsServer field");
  ops_desc.add_options()("secure-port", po::value<int>(),
                         "HTTPS port (opsServer.securePort, default 10259; 0: a free port)")(
      "bind-address", po::value<std::string>(),
      "HTTPS address (opsServer.bindAddress, default 0.0.0.0)")(
      "tls-cert-file", po::value<std::string>(),
      "serving certificate, PEM (default: a self-signed one made at start)")(
      "tls-private-key-file", po::value<std::string>(), "its private key, PEM")(
      "port", po::value<int>(),
      "plain HTTP port without authentication (opsServer.port, default 0: off)")(
      "address", po::value<std::string>(),
      "plain HTTP address (opsServer.address, default 127.0.0.1)")(
      "authentication-kubeconfig", po::value<std::string>(),
      "kubeconfig for TokenReviews and the client CA (default: the scheduler's connection)")(
      "client-ca-file", po::value<std::string>(),
      "verify client certificates against this CA bundle instead of the cluster's")(
      "authentication-skip-lookup", po::value<bool>()->implicit_value(true),
      "do not read the cluster's client CA (ConfigMap kube-system/"
      "extension-apiserver-authentication)")(
      "authentication-tolerate-lookup-failure", po::value<bool>()->implicit_value(true),
      "start even if that ConfigMap cannot be read (default true)")(
      "authentication-token-webhook-cache-ttl", po::value<std::string>(),
      "how long TokenReview answers are kept (default 10s)")(
      "authorization-kubeconfig", po::value<std::string>(),
      "kubeconfig for SubjectAccessReviews (default: the scheduler's connection)")(
      "authorization-always-allow-paths", po::value<std::string>(),
      "paths anyone may get, comma-separated (default /healthz,/readyz,/livez)")(
      "authorization-webhook-cache-authorized-ttl", po::value<std::string>(),
      "how long allowed answers are kept (default 10s)")(
      "authorization-webhook-cache-unauthorized-ttl", po::value<std::string>(),
      "how long denied answers are kept (default 10s)");
  desc.add(ops_desc);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(desc).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "copse run: " << e.what() << "\n" << desc;
    return 2;
  }
  if (vm.count("help")) {
    std::cout << desc;
    return 0;
  }
  if (verbosity < 0) {
    std::cerr << "copse run: -v: must not be negative\n";
    return 2;
  }
  SetLogVerbosity(verbosity);
  if (kubeconfig.empty() == !in_cluster) {
    std::cerr << "copse run: give exactly one of --kubeconfig and --in-cluster\n";
    return 2;
  }

  plugins::Registry registry;
  if (Status s = plugins::RegisterDefaultPlugins(registry); !s.ok()) {
    std::cerr << "copse run: " << s.error().message << "\n";
    return 1;
  }
  config::SchedulerConfig cfg = config::DefaultSchedulerConfig();
  if (!config_path.empty()) {
    auto loaded = config::LoadSchedulerConfigFile(config_path, registry);
    if (!loaded.ok()) {
      std::cerr << "copse run: --config " << config_path << ": " << loaded.error().message << "\n";
      return 2;
    }
    cfg = std::move(loaded).value();
  }
  OpsFlags ops_flags;
  if (Status s = ApplyOpsFlags(vm, cfg.ops_server, ops_flags); !s.ok()) {
    std::cerr << "copse run: " << s.error().message << "\n";
    return 2;
  }
  const auto ops_name = [&ops_flags](std::string_view field) { return ops_flags.Name(field); };
  if (!ops_flags.flag_of_field.empty()) {
    // The flags' values get the config file's checks, naming the flags.
    config::FieldErrors errors;
    config::ValidateOpsServerConfig(cfg.ops_server, errors, ops_name);
    if (!errors.empty()) {
      std::cerr << "copse run: " << errors.ToError().message << "\n";
      return 2;
    }
  }
  auto client_config =
      in_cluster ? kube::LoadInClusterConfig() : kube::LoadKubeconfigFile(kubeconfig);
  if (!client_config.ok()) {
    std::cerr << "copse run: " << (in_cluster ? "--in-cluster" : "--kubeconfig") << ": "
              << client_config.error().message << "\n";
    return 2;
  }
  // Every call copse run makes is in its table (and so in its ClusterRole).
  client_config->api_access = &kube::SchedulerApiAccess();
  client_config->qps = cfg.client_connection.qps;
  client_config->burst = cfg.client_connection.burst;
  client_config->max_connections = 64;
  client_config->pipelined_connections =
      static_cast<size_t>(cfg.client_connection.pipelined_connections);

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  kube::IoThread io(2);
  auto client = kube::Client::Create(*client_config, io.executor());
  if (!client.ok()) {
    std::cerr << "copse run: " << client.error().ToString() << "\n";
    return 1;
  }
  std::vector<std::string> names;
  for (const auto& p : cfg.profiles) names.push_back(p.scheduler_name);
  config::SchedulerMetrics metrics(names);
  SchedulerOptions options = SchedulerOptionsFromConfig(cfg);
  options.metrics = &metrics;
  auto created = Scheduler::Create(*client, options);
  if (!created.ok()) {
    std::cerr << "copse run: " << created.error().ToString() << "\n";
    return 2;
  }
  std::unique_ptr<Scheduler> scheduler = std::move(created).value();

  // The elector exists before the ops server, whose readiness check reads it.
  std::atomic<bool> lost{false};
  std::unique_ptr<kube::LeaderElector> elector;
  kube::LeaderElectionOptions le;
  if (cfg.leader_election.leader_elect && !no_leader_elect) {
    char host[256] = {0};
    gethostname(host, sizeof(host) - 1);
    le.lease_namespace = cfg.leader_election.resource_namespace;
    le.lease_name = cfg.leader_election.resource_name;
    le.identity = std::string(host) + "_" + std::to_string(std::random_device{}());
    le.lease_duration =
        std::chrono::duration_cast<std::chrono::milliseconds>(cfg.leader_election.lease_duration);
    le.renew_deadline =
        std::chrono::duration_cast<std::chrono::milliseconds>(cfg.leader_election.renew_deadline);
    le.retry_period =
        std::chrono::duration_cast<std::chrono::milliseconds>(cfg.leader_election.retry_period);
    le.on_started_leading = [identity = le.identity, &scheduler] {
      std::cout << "copse run: leading as " << identity << "; scheduling" << std::endl;
      scheduler->Start();
    };
    le.on_stopped_leading = [&lost] {
      std::cerr << "copse run: lost the leader lease" << std::endl;
      lost = true;
      kill(getpid(), SIGTERM);
    };
    elector = std::make_unique<kube::LeaderElector>(*client, io, le);
  }

  std::unique_ptr<config::OpsEndpoint> ops;
  if (cfg.ops_server.enabled) {
    config::OpsEndpointOptions ops_options;
    ops_options.name = ops_name;
    auto started = config::OpsEndpoint::Start(cfg.ops_server, *client_config, io, ops_options);
    if (!started.ok()) {
      std::cerr << "copse run: ops server: " << started.error().message << "\n";
      return 1;
    }
    ops = std::move(started).value();
    (void)ops->AddHealthzCheck("ping", [] { return Status::Ok(); });
    (void)ops->AddReadyzCheck("informers-synced", [&scheduler, &elector]() -> Status {
      // A follower starts its informers when it takes the lease; until then
      // it is ready to take over (as kube-scheduler's followers are).
      if (elector && !elector->IsLeader()) return Status::Ok();
      if (scheduler->HasSynced()) return Status::Ok();
      std::string message = "informers have not synced:";
      for (const std::string& line : scheduler->UnsyncedInformers()) message += " [" + line + "]";
      return MakeError(ErrorCode::kUnavailable, message);
    });
    ops->SetMetricsHandler([&metrics] { return metrics.Serialize(); });
    std::cout << "copse run: ops server " << ops->secure_url() << std::endl;
    if (!ops->plain_url().empty()) {
      std::cout << "copse run: ops server without authentication " << ops->plain_url() << std::endl;
    }
  }

  std::thread election;
  if (elector) {
    election = std::thread([&] { elector->Run(); });
    std::cout << "copse run: waiting for the leader lease " << le.lease_namespace << "/"
              << le.lease_name << std::endl;
  } else {
    scheduler->Start();
    std::cout << "copse run: scheduling (no leader election)" << std::endl;
  }

  int sig = 0;
  sigwait(&signals, &sig);
  std::cout << "copse run: shutting down" << std::endl;
  scheduler->Stop();
  if (elector) elector->Stop();
  if (election.joinable()) election.join();
  if (ops) ops->Stop();
  return lost ? 1 : 0;
}

}  // namespace copse::cmd
