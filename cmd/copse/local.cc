// `copse local`: the embedded default. An API server on loopback (HTTPS and
// HTTP), synthetic nodes, the node simulator, the scheduler (for
// copse-scheduler and, unless --no-default-scheduler, default-scheduler), the
// built-in workload controllers and the Grove operator, in one process;
// writes a kubeconfig that kubectl uses unchanged and runs until
// SIGINT/SIGTERM.
#include <signal.h>
#include <sys/stat.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>

#include "apiserver/admission.h"
#include "apiserver/apiserver.h"
#include "apiserver/commit_log.h"
#include "apiserver/controllers/manager.h"
#include "apiserver/node_simulator.h"
#include "apiserver/store.h"
#include "apiserver/synthetic.h"
#include "cmd/copse/commands.h"
#include "core/log.h"
#include "core/quantity.h"
#include "deploy/crds.h"
#include "grove/operator.h"
#include "grove/webhook/webhook.h"
#include "kube/client.h"
#include "kube/yaml.h"
#include "plugins/defaults/defaults.h"
#include "plugins/framework/registry.h"
#include "replay/recorder.h"
#include "scheduler/config/config.h"
#include "scheduler/options_from_config.h"
#include "scheduler/scheduler.h"

namespace copse::cmd {
using namespace copse::scheduler;  // the commands wire the scheduler library together
namespace po = boost::program_options;
namespace api = copse::apiserver;

namespace {

std::string RandomToken() {
  std::random_device rd;
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string token;
  for (int i = 0; i < 32; ++i) token += kAlphabet[rd() % (sizeof(kAlphabet) - 1)];
  return token;
}

Status WriteFileMode0600(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) return MakeError(ErrorCode::kInvalid, "--kubeconfig-out: cannot write " + path);
  out << content;
  out.close();
  if (!out) return MakeError(ErrorCode::kInvalid, "--kubeconfig-out: cannot write " + path);
  ::chmod(path.c_str(), 0600);
  return Status::Ok();
}

// Serves copse's and Grove's custom resources. The Kubernetes ones
// (scheduling.k8s.io v1alpha2, v1alpha3, v1beta1) are built into the
// embedded server.
Status InstallCrds(api::Store& store) {
  for (const deploy::EmbeddedFile& file : deploy::BuiltinCrds()) {
    if (!file.path.starts_with("crds/copse/") && !file.path.starts_with("crds/grove/")) continue;
    Result<std::vector<std::string>> docs = kube::YamlDocumentsToJson(file.content);
    if (!docs.ok())
      return MakeError(docs.error().code, std::string(file.path) + ": " + docs.error().message);
    for (const std::string& json : *docs) {
      auto created = store.Create(kube::resources::kCustomResourceDefinitions, "", json);
      if (!created.ok() && created.error().code != ErrorCode::kAlreadyExists) {
        return MakeError(created.error().code,
                         std::string(file.path) + ": " + created.error().message);
      }
    }
  }
  return Status::Ok();
}

}  // namespace

int RunLocal(int argc, char** argv) {
  int port = 6443;
  int http_port = 0;
  std::string kubeconfig_out = "copse.kubeconfig";
  int nodes = 8;
  std::string node_shape = "cpu=32,memory=256Gi";
  std::string topology_text;
  std::string token;
  bool no_token = false;
  std::string client_ca_file;
  int64_t pod_ready_delay_ms = 500;
  int64_t watch_history = 200000;
  int threads = 1;
  int64_t max_request_body_bytes = int64_t{3} << 20;
  std::string data_dir;
  bool no_scheduler = false;
  bool no_grove = false;
  bool no_controllers = false;
  bool no_job_gangs = false;
  bool no_default_scheduler = false;
  std::string config_path;
  int scheduler_parallelism = 0;
  std::string record_path;
  int verbosity = 0;

  po::options_description desc("copse local [flags]");
  desc.add_options()("help,h", "show this help")("port", po::value(&port)->default_value(port),
                                                 "HTTPS port on 127.0.0.1 (0 picks a free port)")(
      "http-port", po::value(&http_port)->default_value(http_port),
      "plain HTTP port on 127.0.0.1 (0 picks a free port)")(
      "kubeconfig-out", po::value(&kubeconfig_out)->default_value(kubeconfig_out),
      "where to write the kubeconfig for kubectl")("nodes", po::value(&nodes)->default_value(nodes),
                                                   "number of synthetic nodes")(
      "node-shape", po::value(&node_shape)->default_value(node_shape),
      "allocatable of each node, e.g. cpu=64,memory=512Gi,nvidia.com/gpu=8")(
      "topology", po::value(&topology_text),
      "domains per parent, outermost first, e.g. zone=2,block=4,rack=8")(
      "token", po::value(&token), "bearer token clients must send (default: random)")(
      "no-token", po::bool_switch(&no_token),
      "no bearer token: serve without authentication, or with --client-ca-file require a "
      "client certificate")(
      "client-ca-file", po::value(&client_ca_file),
      "PEM CA bundle (kube-apiserver's --client-ca-file): HTTPS clients presenting a "
      "certificate it signs need no token; other certificates fail the handshake; a request "
      "with neither a valid certificate nor the token gets 401 (with --no-token: every request "
      "without such a certificate, plain HTTP included)")(
      "pod-ready-delay-ms", po::value(&pod_ready_delay_ms)->default_value(pod_ready_delay_ms),
      "delay before a bound pod becomes Running and Ready")(
      "watch-history", po::value(&watch_history)->default_value(watch_history),
      "watch events kept for resuming watches (older versions get 410 Gone)")(
      "threads", po::value(&threads)->default_value(threads),
      "API server I/O threads (8 with --data-dir, so writers waiting for an fsync do not hold "
      "up other requests)")(
      "data-dir", po::value(&data_dir),
      "keep the cluster here across restarts: a log of writes, fsync'd before they are "
      "acknowledged, and snapshots (default: in memory, lost at exit)")(
      "max-request-body-bytes",
      po::value(&max_request_body_bytes)->default_value(max_request_body_bytes),
      "request bodies above this are refused with 413, as kube-apiserver's 3 MiB limit")(
      "no-scheduler", po::bool_switch(&no_scheduler),
      "do not run the scheduler (pods with schedulerName copse-scheduler stay pending)")(
      "no-grove", po::bool_switch(&no_grove),
      "do not run the Grove operator (PodCliqueSets are stored but not reconciled)")(
      "no-controllers", po::bool_switch(&no_controllers),
      "do not run the workload controllers (Deployments, ReplicaSets, Jobs, StatefulSets and "
      "DaemonSets are stored but make no pods)")(
      "no-job-gangs", po::bool_switch(&no_job_gangs),
      "the Job controller makes no Workload and PodGroup for an Indexed Job whose parallelism "
      "equals its completions (Kubernetes 1.36's WorkloadWithJob, on by default): its pods are "
      "scheduled pod by pod")(
      "no-default-scheduler", po::bool_switch(&no_default_scheduler),
      "schedule only pods with schedulerName copse-scheduler (pods with the default "
      "schedulerName stay pending)")("config", po::value(&config_path),
                                     "scheduler configuration file (YAML), as for copse run")(
      "parallelism", po::value(&scheduler_parallelism)->default_value(0),
      "scheduler threads for parallel Filter/Score (0: one per core)")(
      "record", po::value(&record_path),
      "record the cluster's history to this trace file for copse replay (as copse record), "
      "until shutdown")(
      "v,v", po::value(&verbosity)->default_value(verbosity),
      "log verbosity, as klog's -v (0 what an operator always wants, 1 actions, 2 details)");

  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(desc).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "copse local: " << e.what() << "\n" << desc;
    return 2;
  }
  if (vm.count("help")) {
    std::cout << desc;
    return 0;
  }
  auto bad_flag = [](const std::string& msg) {
    std::cerr << "copse local: " << msg << "\n";
    return 2;
  };
  if (verbosity < 0) return bad_flag("-v: must not be negative");
  SetLogVerbosity(verbosity);
  if (port < 0 || port > 65535) return bad_flag("--port: must be between 0 and 65535");
  if (http_port < 0 || http_port > 65535)
    return bad_flag("--http-port: must be between 0 and 65535");
  if (nodes < 0) return bad_flag("--nodes: must not be negative");
  if (pod_ready_delay_ms < 0) return bad_flag("--pod-ready-delay-ms: must not be negative");
  if (watch_history < 16) return bad_flag("--watch-history: must be at least 16");
  if (threads < 1 || threads > 64) return bad_flag("--threads: must be between 1 and 64");
  if (max_request_body_bytes < 1024) {
    return bad_flag("--max-request-body-bytes: must be at least 1024");
  }
  if (!data_dir.empty() && vm["threads"].defaulted()) threads = 8;
  SchedulerOptions scheduler_options;
  size_t pipelined_connections = config::ClientConnection{}.pipelined_connections;
  if (!config_path.empty()) {
    plugins::Registry registry;
    if (Status s = plugins::RegisterDefaultPlugins(registry); !s.ok())
      return bad_flag(s.error().message);
    auto cfg = config::LoadSchedulerConfigFile(config_path, registry);
    if (!cfg.ok()) return bad_flag("--config " + config_path + ": " + cfg.error().message);
    scheduler_options = SchedulerOptionsFromConfig(*cfg);
    pipelined_connections = static_cast<size_t>(cfg->client_connection.pipelined_connections);
  }
  if (vm.count("parallelism") && !vm["parallelism"].defaulted()) {
    scheduler_options.parallelism = scheduler_parallelism;
  }
  // Locally nobody else schedules: the scheduler also answers default-scheduler,
  // with kube's default plugins, so `kubectl run` and plain Deployments start.
  if (!no_default_scheduler) {
    if (scheduler_options.profiles.empty()) {
      scheduler_options.profiles.push_back(plugins::DefaultProfile("copse-scheduler"));
    }
    bool have_default = false;
    for (const auto& profile : scheduler_options.profiles) {
      have_default = have_default || profile.scheduler_name == "default-scheduler";
    }
    if (!have_default) {
      scheduler_options.profiles.push_back(plugins::KubeDefaultProfile("default-scheduler"));
    }
  }
  auto shape = ParseResourceList(node_shape);
  if (!shape.ok()) return bad_flag("--node-shape: " + shape.error().message);
  auto topology = api::ParseTopology(topology_text);
  if (!topology.ok()) return bad_flag("--topology: " + topology.error().message);
  auto node_objects = api::MakeSyntheticNodes(nodes, *shape, *topology);
  if (!node_objects.ok()) return bad_flag("--nodes/--node-shape: " + node_objects.error().message);
  std::string client_ca_pem;
  if (!client_ca_file.empty()) {
    std::ifstream in(client_ca_file);
    std::stringstream text;
    text << in.rdbuf();
    if (!in || text.str().find("-----BEGIN CERTIFICATE-----") == std::string::npos) {
      return bad_flag("--client-ca-file " + client_ca_file +
                      ": not a readable PEM certificate file");
    }
    client_ca_pem = text.str();
  }
  if (token.empty() && !no_token) token = RandomToken();
  if (no_token) token.clear();
  // What copse local's own components (scheduler, controllers, Grove,
  // recorder) present: the token, or, when users must bring a certificate
  // (--client-ca-file with --no-token), a random one the kubeconfig never
  // carries.
  std::string component_token = token;
  if (token.empty() && !client_ca_pem.empty()) component_token = RandomToken();

  // Block the signals we wait for before any thread starts, so they reach sigwait.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  api::StoreOptions store_options;
  store_options.watch_history = static_cast<size_t>(watch_history);
  std::shared_ptr<api::Store> store;
  bool restored = false;
  if (data_dir.empty()) {
    store = api::NewStore(store_options);
  } else {
    api::CommitLogOptions log_options;
    log_options.dir = data_dir;
    api::RecoveryReport report;
    auto opened = api::OpenPersistentStore(store_options, log_options, &report);
    if (!opened.ok()) {
      std::cerr << "copse local: " << opened.error().message << "\n";
      return 1;
    }
    store = std::move(opened).value();
    restored = !report.fresh;
    std::cout << "copse local: data dir " << data_dir << ": "
              << (restored
                      ? "restored " + std::to_string(report.objects) +
                            " objects, resourceVersion " + std::to_string(report.resource_version) +
                            (report.dropped_log_bytes != 0
                                 ? " (dropped a torn log tail of " +
                                       std::to_string(report.dropped_log_bytes) + " bytes)"
                                 : "")
                      : std::string("new"))
              << std::endl;
  }
  if (Status st = InstallCrds(*store); !st.ok()) {
    std::cerr << "copse local: installing CRDs: " << st.error().message << "\n";
    return 1;
  }
  // ValidatingWebhookConfigurations are served and called on writes, as by a real API server.
  if (Status st = api::InstallAdmissionRegistration(*store); !st.ok()) {
    std::cerr << "copse local: admission registration: " << st.error().message << "\n";
    return 1;
  }
  api::NodeSimulatorOptions sim_options;
  sim_options.pod_start_delay = std::chrono::milliseconds(pod_ready_delay_ms);
  sim_options.node_heartbeat_interval = std::chrono::seconds(10);
  api::NodeSimulator simulator(store, sim_options);
  if (restored) {
    // A restored cluster keeps its nodes; only nodes it lacks are added.
    for (const std::string& node : *node_objects) {
      auto created = store->Create(kube::resources::kNodes, "", node);
      if (!created.ok() && created.error().code != ErrorCode::kAlreadyExists) {
        std::cerr << "copse local: creating synthetic nodes: " << created.error().ToString()
                  << "\n";
        return 1;
      }
    }
  } else if (Status st = simulator.CreateNodes(*node_objects); !st.ok()) {
    std::cerr << "copse local: creating synthetic nodes: " << st.error().ToString() << "\n";
    return 1;
  }
  // A restored registration points at the webhook of a previous run.
  if (restored) {
    auto removed = store->Delete(api::kValidatingWebhookConfigurations, "", "copse-grove");
    if (!removed.ok() && removed.error().code != ErrorCode::kNotFound) {
      std::cerr << "copse local: removing the old grove webhook: " << removed.error().ToString()
                << "\n";
      return 1;
    }
  }
  simulator.Start();

  api::Options options;
  options.https_port = static_cast<uint16_t>(port);
  options.http_port = static_cast<uint16_t>(http_port);
  options.token = token;
  options.client_ca_pem = client_ca_pem;
  if (component_token != token) options.component_token = component_token;
  options.threads = threads;
  options.max_request_body_bytes = static_cast<size_t>(max_request_body_bytes);
  options.store = store;
  auto server = api::ApiServer::Start(options);
  if (!server.ok()) {
    std::cerr << "copse local: starting the API server: " << server.error().ToString() << "\n";
    return 1;
  }
  if (Status st = WriteFileMode0600(kubeconfig_out, (*server)->Kubeconfig()); !st.ok()) {
    std::cerr << "copse local: " << st.error().message << "\n";
    return 1;
  }

  // The recorder starts before the components that write: what they do is
  // in the trace, and the nodes are its initial state.
  std::unique_ptr<kube::IoThread> record_io;
  std::unique_ptr<replay::Recorder> recorder;
  if (!record_path.empty()) {
    record_io = std::make_unique<kube::IoThread>(1);
    kube::ClientConfig config;
    config.server = (*server)->http_url();
    config.token = component_token;
    auto client = kube::Client::Create(config, record_io->executor());
    if (!client.ok()) {
      std::cerr << "copse local: recorder client: " << client.error().ToString() << "\n";
      return 1;
    }
    replay::RecorderOptions record_options;
    record_options.out = record_path;
    record_options.log = [](const std::string& line) {
      std::cerr << "copse local: record: " << line << std::endl;
    };
    auto started = replay::Recorder::Start(*client, record_options);
    if (!started.ok()) {
      std::cerr << "copse local: --record " << record_path << ": " << started.error().message
                << "\n";
      return started.error().code == ErrorCode::kInvalid ? 2 : 1;
    }
    recorder = std::move(started).value();
  }

  // The scheduler talks to the API server like any client, over loopback HTTP.
  std::unique_ptr<kube::IoThread> scheduler_io;
  std::unique_ptr<Scheduler> scheduler;
  if (!no_scheduler) {
    scheduler_io = std::make_unique<kube::IoThread>(2);
    kube::ClientConfig config;
    config.server = (*server)->http_url();
    config.token = component_token;
    config.max_connections = 64;
    config.pipelined_connections = pipelined_connections;
    auto client = kube::Client::Create(config, scheduler_io->executor());
    if (!client.ok()) {
      std::cerr << "copse local: scheduler client: " << client.error().ToString() << "\n";
      return 1;
    }
    auto created = Scheduler::Create(*client, scheduler_options);
    if (!created.ok()) {
      std::cerr << "copse local: scheduler: " << created.error().ToString() << "\n";
      return 1;
    }
    scheduler = std::move(created).value();
    scheduler->Start();
    if (!scheduler->WaitForSync(std::chrono::seconds(30))) {
      std::cerr << "copse local: scheduler informers did not sync within 30s\n";
      return 1;
    }
  }

  // The workload controllers (kube-controller-manager's part), a plain client too.
  std::unique_ptr<kube::IoThread> controllers_io;
  std::unique_ptr<api::controllers::WorkloadControllers> controllers;
  if (!no_controllers) {
    controllers_io = std::make_unique<kube::IoThread>(1);
    kube::ClientConfig config;
    config.server = (*server)->http_url();
    config.token = component_token;
    config.max_connections = 32;
    config.pipelined_connections = kube::kCopsePipelinedConnections;
    auto client = kube::Client::Create(config, controllers_io->executor());
    if (!client.ok()) {
      std::cerr << "copse local: controllers client: " << client.error().ToString() << "\n";
      return 1;
    }
    api::controllers::ControllerOptions controller_options;
    controller_options.job.gang_scheduling = !no_job_gangs;
    auto started = api::controllers::WorkloadControllers::Start(*client, controller_options);
    if (!started.ok()) {
      std::cerr << "copse local: workload controllers: " << started.error().ToString() << "\n";
      return 1;
    }
    controllers = std::move(started).value();
  }

  // The Grove operator, also a plain client of the API server.
  std::unique_ptr<kube::IoThread> grove_io;
  std::unique_ptr<grove::Operator> grove_operator;
  std::unique_ptr<grove::webhook::Server> grove_webhook;
  if (!no_grove) {
    grove_io = std::make_unique<kube::IoThread>(1);
    kube::ClientConfig config;
    config.server = (*server)->http_url();
    config.token = component_token;
    // As `copse grove` does: many pods at once, their writes pipelined.
    config.max_connections = 64;
    config.pipelined_connections = kube::kCopsePipelinedConnections;
    auto client = kube::Client::Create(config, grove_io->executor());
    if (!client.ok()) {
      std::cerr << "copse local: grove client: " << client.error().ToString() << "\n";
      return 1;
    }
    grove::OperatorOptions operator_options;
    operator_options.log_level = verbosity;  // the operator sets the process's verbosity
    auto started = grove::Operator::Start(*client, operator_options);
    if (!started.ok()) {
      std::cerr << "copse local: grove: " << started.error().ToString() << "\n";
      return 1;
    }
    grove_operator = std::move(started).value();
    // Grove's validating webhook, registered with the embedded API server the
    // way a real cluster registers it, so kubectl apply of an invalid
    // PodCliqueSet is refused through the same path.
    grove::Operator* validator = grove_operator.get();
    auto webhook = grove::webhook::Server::Start(
        [validator](std::string_view object, std::string_view old) {
          return validator->ValidatePodCliqueSet(object, old);
        },
        grove::webhook::ServerOptions());
    if (!webhook.ok()) {
      std::cerr << "copse local: grove webhook: " << webhook.error().ToString() << "\n";
      return 1;
    }
    grove_webhook = std::move(webhook).value();
    auto registered =
        store->Create(api::kValidatingWebhookConfigurations, "",
                      grove::webhook::ValidatingWebhookConfiguration(
                          "copse-grove", grove_webhook->url(), grove_webhook->ca_pem()));
    if (!registered.ok()) {
      std::cerr << "copse local: registering the grove webhook: " << registered.error().ToString()
                << "\n";
      return 1;
    }
  }

  kubeconfig_out = std::filesystem::absolute(kubeconfig_out).string();
  std::cout << "copse local: API server " << (*server)->https_url() << " (plain HTTP "
            << (*server)->http_url() << "), " << nodes << " synthetic nodes"
            << (topology_text.empty() ? "" : " in topology " + topology_text)
            << (scheduler ? (no_default_scheduler ? ", scheduler copse-scheduler"
                                                  : ", scheduler copse-scheduler and "
                                                    "default-scheduler")
                          : ", no scheduler")
            << (controllers ? ", workload controllers" : "")
            << (grove_operator ? ", Grove operator" : "")
            << (recorder ? ", recording to " + record_path : std::string()) << "\n"
            << "  export KUBECONFIG=" << kubeconfig_out << "\n"
            << "  kubectl get nodes -L copse.dev/rack\n"
            << "copse local: ready" << std::endl;

  int sig = 0;
  sigwait(&signals, &sig);
  std::cout << "copse local: shutting down (signal " << sig << ")" << std::endl;
  // First, so that the trace ends with the cluster as it was when asked to stop.
  int exit_code = 0;
  if (recorder) {
    if (Status s = recorder->Stop(); !s.ok()) {
      std::cerr << "copse local: --record: " << s.error().message << "\n";
      exit_code = 1;
    } else {
      const replay::RecorderStats st = recorder->stats();
      std::cout << "copse local: recorded " << record_path << ": " << st.init << " init, "
                << st.create << " create, " << st.bound << " bound, " << st.end << " end, "
                << st.deleted << " delete" << std::endl;
    }
    recorder.reset();
    record_io.reset();
  }
  if (grove_webhook) grove_webhook->Stop();
  if (grove_operator) grove_operator->Stop();
  grove_operator.reset();
  grove_io.reset();
  if (controllers) controllers->Stop();
  controllers.reset();
  controllers_io.reset();
  if (scheduler) scheduler->Stop();
  scheduler.reset();
  scheduler_io.reset();
  (*server)->Stop();
  simulator.Stop();
  return exit_code;
}

}  // namespace copse::cmd
