// `copse run`: the scheduler against any API server, as a second scheduler
// next to kube-scheduler. Reads a kubeconfig (or the in-cluster service
// account) and an optional config file (scheduler/config/config.h), serves
// /healthz, /livez, /readyz and /metrics, and schedules only while it holds
// the leader Lease. Losing the lease exits with status 1 (as kube-scheduler
// does) so that the Deployment restarts it as a follower.
#include <signal.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <iostream>
#include <random>
#include <string>
#include <thread>

#include "cmd/copse/commands.h"
#include "core/log.h"
#include "kube/api_access.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "kube/leader_election.h"
#include "plugins/defaults/defaults.h"
#include "plugins/framework/registry.h"
#include "scheduler/config/config.h"
#include "scheduler/config/metrics.h"
#include "scheduler/config/ops_server.h"
#include "scheduler/options_from_config.h"
#include "scheduler/scheduler.h"

namespace copse::cmd {
using namespace copse::scheduler;  // the commands wire the scheduler library together
namespace po = boost::program_options;

int RunRun(int argc, char** argv) {
  std::string kubeconfig;
  bool in_cluster = false;
  std::string config_path;
  int ops_port = -1;
  bool no_leader_elect = false;
  int verbosity = 0;

  po::options_description desc("copse run (--kubeconfig FILE | --in-cluster) [flags]");
  desc.add_options()("help,h", "show this help")("kubeconfig", po::value(&kubeconfig),
                                                 "kubeconfig of the cluster to schedule")(
      "in-cluster", po::bool_switch(&in_cluster), "use the pod's service account")(
      "config", po::value(&config_path), "scheduler configuration file (YAML)")(
      "ops-port", po::value(&ops_port),
      "port of /healthz, /readyz and /metrics (default: the config's opsServer.port)")(
      "no-leader-elect", po::bool_switch(&no_leader_elect),
      "schedule without taking the leader Lease (a single replica only)")(
      "v,v", po::value(&verbosity)->default_value(verbosity),
      "log verbosity, as klog's -v (0 what an operator always wants, 1 actions, 2 details)");
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
  if (vm.count("ops-port") && (ops_port < 0 || ops_port > 65535)) {
    std::cerr << "copse run: --ops-port: must be between 0 and 65535\n";
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

  std::unique_ptr<config::OpsServer> ops;
  if (cfg.ops_server.enabled || vm.count("ops-port")) {
    config::OpsServerOptions ops_options;
    ops_options.address = cfg.ops_server.bind_address;
    ops_options.port = vm.count("ops-port") ? static_cast<uint16_t>(ops_port) : cfg.ops_server.port;
    auto started = config::OpsServer::Start(ops_options);
    if (!started.ok()) {
      std::cerr << "copse run: ops server: " << started.error().ToString() << "\n";
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
    std::cout << "copse run: ops server " << ops->url() << std::endl;
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
